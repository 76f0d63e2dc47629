/* journal: the broker's durable record of its jobs.
 *
 * One append-only file, <dir>/journal, with one record per job state change
 * (proto JournalRecord: submitted, dispatched, planned, pass, requeued,
 * finished, delivered, forgotten). Each record is framed as
 *
 *     "PFJ1" | payload length (u32 LE) | CRC-32 of the payload (u32 LE) | payload
 *
 * On open the records are read back into the job table in order. A torn or
 * damaged tail (the broker died mid-write, a disk error) ends the reading
 * there: those bytes are cut off and logged, never believed. Then jobs that
 * were being collected go back to the queue (their collectors' connections
 * died with the old broker), jobs being analyzed keep their passes and wait
 * for an analyzer, finished jobs keep their feedback for the agent. Finally
 * the file is rewritten with only the live jobs; it is rewritten so again
 * whenever it has grown to twice that size (and at least `compact_min`).
 *
 * Delivered feedback lives in the file only: the table keeps where each
 * job's finished record is (job_table_stored: on append, on reading back, and
 * as compaction moves it), and journal_feedback_read reads it back when a
 * resubmission or a heartbeat asks for it again.
 *
 * Durability: the records that back a promise to a peer are written and
 * fdatasync'ed before the promise is made (submitted: before the agent's ack;
 * pass: before the collector's ack; finished: before the feedback is sent).
 * The loop only writes (a failed write is an error at once, leaving nothing
 * in the file); a sync thread (journal_sync.h) fdatasyncs, and a promise
 * waits for journal_mark() to be synced (the broker's outbox.h holds it,
 * journal_progress says when it may go, or that the sync failed). Records
 * written while one sync runs share the next one. A compaction syncs its new
 * file, so everything written before it counts as synced. The other records
 * are written without a sync of their own: losing them makes the broker
 * redo work after a crash (collect a job again), never lose one.
 * Why a journal of our own and not SQLite: docs/reliability.md.
 *
 * A NULL journal (no state folder configured) keeps nothing and every call
 * succeeds; with sync off there is no thread and nothing waits. The journal's
 * only socket is its thread's inproc signal (journal_socket). */
#ifndef JOURNAL_H
#define JOURNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "job_table.h"
#include "journal_sync.h"
#include "pf_error.h"

typedef struct journal_t journal_t;

typedef struct {
    bool sync;            /* fdatasync (on the sync thread) before promises (default true) */
    size_t max_record;    /* a longer record on disk is damage (the message limit + slack) */
    size_t compact_min;   /* never rewrite a file smaller than this (bytes) */
} journal_options_t;

void journal_options_default(journal_options_t *opts);

/* Opens or creates <dir>/journal (and `dir`), reads it into `jobs` (borrowed;
 * must outlive the journal; empty on entry), and compacts it. *replayed_p gets
 * the number of records read. NULL with `err` when the folder or file cannot
 * be created, read or written. */
journal_t *journal_open(const char *dir, const journal_options_t *opts, job_table_t *jobs,
                        size_t *replayed_p, pf_error_t *err);
void journal_close(journal_t **self_p);

/* One call per job_table transition, made after it. Each returns PF_OK, or
 * the error of a write that failed (PF_EIO: disk full, permissions, ...);
 * after a failure nothing of the record is left in the file. */
pf_status_t journal_submitted(journal_t *self, const job_t *job, pf_error_t *err);
pf_status_t journal_dispatched(journal_t *self, const job_t *job, pf_error_t *err);
pf_status_t journal_planned(journal_t *self, const job_t *job, pf_error_t *err);
pf_status_t journal_pass(journal_t *self, const job_t *job, const job_pass_t *pass, pf_error_t *err);
pf_status_t journal_requeued(journal_t *self, const job_t *job, pf_error_t *err);
/* Also tells the table where the record is (job_table_stored). */
pf_status_t journal_finished(journal_t *self, job_t *job, pf_error_t *err);
pf_status_t journal_delivered(journal_t *self, const job_t *job, pf_error_t *err);
pf_status_t journal_forgotten(journal_t *self, const char *job_id, pf_error_t *err);

/* The packed Feedback of a FINISHED job that only the journal holds
 * (job->stored_len > 0, job->feedback NULL), read back into *bytes_p (the
 * caller frees; *len_p its length). The record is read with one pread of its
 * known length (at most max_record), its frame, checksum, job id and feedback
 * checked as on start: a record that fails any of them is refused with `err`
 * (PF_EIO, PF_EBADINPUT), and the caller forgets the job (it runs again if
 * resubmitted). PF_ENOTFOUND without a journal or a stored record.
 *
 * Compaction (when a record appended grows the file) copies each such
 * record into the new file the same way; a job whose record cannot be read
 * then is forgotten, with an error logged. */
pf_status_t journal_feedback_read(journal_t *self, const job_t *job, uint8_t **bytes_p, size_t *len_p,
                                  pf_error_t *err);

/* Promises and the sync thread (journal_sync.h). journal_mark is what a
 * promise made now waits for: every record written so far is covered once
 * the thread's synced mark reaches it, and a sync that covers it is asked
 * for. 0 when nothing waits (a NULL journal, or sync off). */
uint64_t journal_mark(journal_t *self);
/* The socket the loop polls for the thread's progress; NULL when none. */
zsock_t *journal_socket(journal_t *self);
/* The thread's progress (journal_sync_take); without a thread everything is
 * synced (UINT64_MAX) and nothing failed. */
void journal_progress(journal_t *self, journal_sync_progress_t *progress);
/* The sync thread, for tests (journal_sync_count, journal_sync_set_fn); NULL
 * when none. */
journal_sync_t *journal_syncer(journal_t *self);

#endif
