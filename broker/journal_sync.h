/* journal_sync: the thread that fdatasyncs the journal, off the broker's loop.
 *
 * The loop writes records (journal.c) and says how far it has written with a
 * mark: a count of the bytes appended since the journal opened, which only
 * grows (a compaction does not reset it). A record's mark is the count after
 * it. When the loop asks for a sync (a record that backs a promise), the
 * thread fdatasyncs the file and then counts every byte written before that
 * sync began as synced: group commit, the records written while one sync runs
 * share the next one.
 *
 * The thread tells the loop through an inproc PAIR socket that the loop
 * polls (journal_sync_socket): one message while the loop has not yet taken
 * the news (journal_sync_take), so the pipe never fills and the thread never
 * waits on it. The loop never waits on the thread, except at a compaction or
 * a close (journal_sync_replace, journal_sync_destroy), which wait out a sync
 * in flight so that no sync touches a file descriptor being closed.
 *
 * A failed fdatasync is reported once, as the range of marks it covered; the
 * thread starts no other sync until the loop has taken that report, so a take
 * sees at most one failure, and it is the last range synced. The next sync
 * covers what was written after that failed one began (later syncs retry). */
#ifndef JOURNAL_SYNC_H
#define JOURNAL_SYNC_H

#include <czmq.h>
#include <stdbool.h>
#include <stdint.h>

#include "pf_error.h"

typedef struct journal_sync_t journal_sync_t;

/* What the thread did since the loop last asked. */
typedef struct {
    uint64_t synced;       /* records whose mark is at most this are on disk, but for those failed below */
    uint64_t failed_from;  /* a sync failed for the marks in (failed_from, failed_to]; 0, 0: none */
    uint64_t failed_to;
    char why[PF_ERROR_MSG_MAX];
} journal_sync_progress_t;

/* Instead of fdatasync(fd), for tests only (tests/test_journal.c: to hold a
 * sync in flight, or make it fail): 0, or -1 with errno set. Called on the
 * sync thread. */
typedef int (*journal_sync_fn)(int fd, void *arg);

/* Starts the thread syncing `fd` (borrowed: the caller closes it, after
 * journal_sync_replace or journal_sync_destroy) of the file `path` (for
 * messages). NULL with `err` when the thread or its socket cannot start. */
journal_sync_t *journal_sync_new(int fd, const char *path, pf_error_t *err);
/* Stops and joins the thread; a sync in flight ends first. What was written
 * and not synced stays so (journal_close syncs it). */
void journal_sync_destroy(journal_sync_t **self_p);

/* The loop has written up to `mark`; with `wanted` a record that backs a
 * promise is among them, and a sync is started for it. */
void journal_sync_written(journal_sync_t *self, uint64_t mark, bool wanted);

/* After a compaction: waits out a sync in flight, then syncs `fd` from now
 * on (the old descriptor is the caller's to close once this returns), and
 * counts everything up to `mark` as synced, a pending failure too (the new
 * file, synced by the caller, holds every live record). */
void journal_sync_replace(journal_sync_t *self, int fd, uint64_t mark);

/* Takes the thread's progress: drains the socket, then reads it, and clears a
 * failure it reports (the thread may sync again). */
void journal_sync_take(journal_sync_t *self, journal_sync_progress_t *progress);

/* Polled by the loop: readable when there is progress to take. */
zsock_t *journal_sync_socket(journal_sync_t *self);

/* Tests: the syncs the thread has made (failed ones too), and `fn` in place
 * of fdatasync (NULL: fdatasync again). */
uint64_t journal_sync_count(journal_sync_t *self);
void journal_sync_set_fn(journal_sync_t *self, journal_sync_fn fn, void *arg);

#endif
