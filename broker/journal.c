/* journal.c: the journal of journal.h. One file of ~800 lines because its
 * parts share one record framing and one file: the writers of each record
 * kind, compaction (which rewrites live jobs with those writers), the bounded
 * read-back of a delivered feedback, and the replay at open (which reads
 * records back through the same job_table functions the broker uses). Split,
 * each part would need the framing and the file's state made public. */
#include "journal.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "crc32.h"
#include "journal_sync.h"
#include "pf_log.h"
#include "profiler.h"
#include "wire.h"

#define LOG "journal"
#define MAGIC "PFJ1"
#define HEADER_LEN 12

struct journal_t {
    char path[PATH_MAX];
    char dir[PATH_MAX];
    journal_options_t opts;
    job_table_t *jobs; /* borrowed */
    int fd;
    uint64_t size;         /* bytes in the file */
    uint64_t compacted;    /* bytes after the last compaction */
    uint64_t mark;         /* bytes appended since open, compactions aside (journal_sync.h) */
    journal_sync_t *syncer; /* with opts.sync; NULL: no record is synced but by compaction */
};

void journal_options_default(journal_options_t *opts)
{
    assert(opts);
    opts->sync = true;
    opts->max_record = WIRE_MAX_MSG + 1024 * 1024;
    opts->compact_min = 64u * 1024 * 1024;
}

/* ------------------------------------------------------------------------
 * Clocks: deadlines are monotonic in the table, wall-clock on disk. */

static int64_t s_clock_ms(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int64_t s_to_unix(int64_t mono_ms)
{
    return mono_ms - s_clock_ms(CLOCK_MONOTONIC) + s_clock_ms(CLOCK_REALTIME);
}

static int64_t s_to_mono(int64_t unix_ms)
{
    return unix_ms - s_clock_ms(CLOCK_REALTIME) + s_clock_ms(CLOCK_MONOTONIC);
}

/* ------------------------------------------------------------------------
 * Writing */

static void s_put_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t) (v >> (8 * i));
}

static uint32_t s_get_u32(const uint8_t *p)
{
    return (uint32_t) p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16 | (uint32_t) p[3] << 24;
}

/* Writes all of iov to fd; false with errno on failure. */
static bool s_write_all(int fd, struct iovec *iov, int n)
{
    while (n > 0) {
        ssize_t done = writev(fd, iov, n);
        if (done < 0 && errno == EINTR)
            continue;
        if (done < 0)
            return false;
        while (n > 0 && (size_t) done >= iov->iov_len) {
            done -= (ssize_t) iov->iov_len;
            iov++;
            n--;
        }
        if (n > 0) {
            iov->iov_base = (uint8_t *) iov->iov_base + done;
            iov->iov_len -= (size_t) done;
        }
    }
    return true;
}

/* Packs and appends one record to `fd`; on failure the caller cuts the file
 * back to where it was. */
static pf_status_t s_write_record(int fd, const Profeed__JournalRecord *rec, size_t max_record, size_t *len_p,
                                  pf_error_t *err)
{
    size_t len = 0;
    uint8_t *payload = wire_journal_record_pack(rec, max_record, &len, err);
    if (!payload)
        return err ? err->code : PF_EBADINPUT;
    uint8_t header[HEADER_LEN];
    memcpy(header, MAGIC, 4);
    s_put_u32(header + 4, (uint32_t) len);
    s_put_u32(header + 8, crc32_update(0, payload, len));
    struct iovec iov[2] = {{header, sizeof header}, {payload, len}};
    bool ok = s_write_all(fd, iov, 2);
    int saved = errno;
    free(payload);
    if (!ok)
        return pf_error_set(err, PF_EIO, "cannot write: %s", strerror(saved));
    *len_p = HEADER_LEN + len;
    return PF_OK;
}

/* Where compaction wrote a job's finished record, for job_table_stored once
 * the new file has replaced the old (until then the old places hold); len 0:
 * the record could not be read back, and the job is forgotten. */
typedef struct {
    job_t *job;
    uint64_t at;
    size_t len;
} moved_t;

typedef struct {
    moved_t *items;
    size_t len, cap;
} moves_t;

static pf_status_t s_moved(moves_t *moves, job_t *job, uint64_t at, size_t len, pf_error_t *err)
{
    if (moves->len == moves->cap) {
        size_t cap = moves->cap ? 2 * moves->cap : 64;
        moved_t *grown = realloc(moves->items, cap * sizeof *grown);
        if (!grown)
            return pf_error_set(err, PF_ENOMEM, "out of memory noting where finished records go");
        moves->items = grown;
        moves->cap = cap;
    }
    moves->items[moves->len++] = (moved_t) {.job = job, .at = at, .len = len};
    return PF_OK;
}

/* The records that restore one job as it is now (for compaction). */
static pf_status_t s_write_job(journal_t *self, int fd, job_t *job, uint64_t *size, moves_t *moves,
                               pf_error_t *err);

/* Rewrites the file with only the live jobs: to <path>.new, synced, renamed
 * over the old one, and the folder synced so the rename lasts. The old file
 * is read (self->fd) for the delivered feedbacks only it holds. */
static pf_status_t s_compact(journal_t *self, pf_error_t *err)
{
    char tmp[PATH_MAX + 8];
    snprintf(tmp, sizeof tmp, "%s.new", self->path);
    /* Read too: delivered feedbacks are read back from it. */
    int fd = open(tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return pf_error_set(err, PF_EIO, "%s: cannot create: %s", tmp, strerror(errno));
    int64_t started_ms = s_clock_ms(CLOCK_MONOTONIC);
    uint64_t size = 0;
    pf_status_t rc = PF_OK;
    moves_t moves = {0};
    for (job_t *job = job_table_first(self->jobs); job && rc == PF_OK; job = job_table_next(self->jobs))
        rc = s_write_job(self, fd, job, &size, &moves, err);
    if (rc == PF_OK && fsync(fd) != 0)
        rc = pf_error_set(err, PF_EIO, "%s: cannot sync: %s", tmp, strerror(errno));
    if (rc == PF_OK && rename(tmp, self->path) != 0)
        rc = pf_error_set(err, PF_EIO, "cannot rename %s: %s", tmp, strerror(errno));
    /* Unreadable records are gone either way (journal_feedback_read would
     * refuse them too); the moved ones count only in the new file. Not
     * forgotten inside the loop above: it walks the table. */
    for (size_t i = 0; i < moves.len; i++) {
        moved_t *m = &moves.items[i];
        if (m->len == 0)
            job_table_forget(self->jobs, m->job);
        else if (rc == PF_OK)
            job_table_stored(self->jobs, m->job, m->at, m->len);
    }
    free(moves.items);
    if (rc != PF_OK) {
        close(fd);
        unlink(tmp);
        return rc;
    }
    int dirfd = open(self->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dirfd >= 0) {
        fsync(dirfd);
        close(dirfd);
    }
    /* The new file holds every live record, synced: what promises waited
     * for is on disk. The thread leaves the old descriptor before it closes. */
    if (self->syncer)
        journal_sync_replace(self->syncer, fd, self->mark);
    if (self->fd >= 0)
        close(self->fd);
    self->fd = fd;
    /* The time is the pause of the broker's loop (docs/reliability.md). */
    pf_log_info(LOG, "%s: rewritten with the jobs it keeps (%zu): %llu -> %llu bytes in %lld ms", self->path,
                job_table_count(self->jobs, JOB_QUEUED) + job_table_count(self->jobs, JOB_COLLECTING) +
                    job_table_count(self->jobs, JOB_ANALYZING) + job_table_count(self->jobs, JOB_FINISHED),
                (unsigned long long) self->size, (unsigned long long) size,
                (long long) (s_clock_ms(CLOCK_MONOTONIC) - started_ms));
    self->size = self->compacted = size;
    return PF_OK;
}

/* Appends a record (at byte *at_p, `*len_p` bytes long, when not NULL);
 * when it backs a promise, asks the sync thread for a sync (the promise
 * waits for journal_mark(), journal.h). */
static pf_status_t s_write(journal_t *self, const Profeed__JournalRecord *rec, bool sync, uint64_t *at_p,
                           size_t *len_p, pf_error_t *err)
{
    size_t len = 0;
    pf_status_t rc = s_write_record(self->fd, rec, self->opts.max_record, &len, err);
    if (rc != PF_OK) {
        /* Leave no partial record behind for the next one to follow. */
        if (ftruncate(self->fd, (off_t) self->size) != 0)
            pf_log_error(LOG, "%s: cannot cut a failed record off: %s", self->path, strerror(errno));
        lseek(self->fd, 0, SEEK_END);
        pf_error_prefix(err, "%s", self->path);
        return rc;
    }
    if (at_p)
        *at_p = self->size;
    if (len_p)
        *len_p = len;
    self->size += len;
    self->mark += len;
    if (self->syncer)
        journal_sync_written(self->syncer, self->mark, sync);
    return PF_OK;
}

/* Compacts when the file has doubled. */
static void s_grown(journal_t *self)
{
    if (self->size >= self->opts.compact_min && self->size >= 2 * self->compacted) {
        pf_error_t cerr;
        if (s_compact(self, &cerr) != PF_OK)
            pf_log_warn(LOG, "compaction failed, the journal keeps growing: %s", cerr.msg);
    }
}

/* Appends a record; syncs when it backs a promise; compacts when the file
 * has doubled. */
static pf_status_t s_append(journal_t *self, const Profeed__JournalRecord *rec, bool sync, pf_error_t *err)
{
    if (!self)
        return PF_OK;
    pf_status_t rc = s_write(self, rec, sync, NULL, NULL, err);
    if (rc == PF_OK)
        s_grown(self);
    return rc;
}

/* ------------------------------------------------------------------------
 * Reading one record back */

/* Reads the record of `len` bytes (header included) at byte `at` of the
 * file with one pread, and checks its frame and checksum; the raw bytes (the
 * caller frees them), or NULL with `err`. The broker's loop waits for this
 * read: it is one record of a known, bounded length (a feedback, tens of KB;
 * at most max_record) from a file this broker wrote, mostly still in the page
 * cache; a scan of the journal would not be bounded so. */
static uint8_t *s_read_raw(journal_t *self, uint64_t at, size_t len, pf_error_t *err)
{
    if (len < HEADER_LEN || len - HEADER_LEN > self->opts.max_record || at > self->size || len > self->size - at) {
        pf_error_set(err, PF_EBADINPUT, "%s: no record of %zu bytes can be at byte %llu (the file has %llu)",
                     self->path, len, (unsigned long long) at, (unsigned long long) self->size);
        return NULL;
    }
    uint8_t *raw = malloc(len);
    if (!raw) {
        pf_error_set(err, PF_ENOMEM, "out of memory reading a record of %zu bytes", len);
        return NULL;
    }
    size_t got = 0;
    while (got < len) {
        ssize_t n = pread(self->fd, raw + got, len - got, (off_t) (at + got));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            pf_error_set(err, PF_EIO, "%s: cannot read the record at byte %llu: %s", self->path,
                         (unsigned long long) at, n < 0 ? strerror(errno) : "the file ends before it");
            free(raw);
            return NULL;
        }
        got += (size_t) n;
    }
    const char *why = NULL;
    if (memcmp(raw, MAGIC, 4) != 0 || s_get_u32(raw + 4) != len - HEADER_LEN)
        why = "bytes that are not the record expected";
    else if (crc32_update(0, raw + HEADER_LEN, len - HEADER_LEN) != s_get_u32(raw + 8))
        why = "a record whose checksum does not match";
    if (why) {
        pf_error_set(err, PF_EBADINPUT, "%s: %s at byte %llu", self->path, why, (unsigned long long) at);
        free(raw);
        return NULL;
    }
    return raw;
}

/* Checks that `raw` (from s_read_raw) is `job`'s finished record with a
 * Feedback of the length the table knows. With bytes_p (a feedback about to
 * be sent) the Feedback is decoded and validated too, and copied to
 * *bytes_p; without (compaction copying the record) the checksum and the
 * record's own fields are the check: those bytes were validated when they
 * were stored, and decoding every retained feedback would lengthen the
 * rewrite's pause. `err` must not be NULL. */
static pf_status_t s_check_finished(journal_t *self, const job_t *job, const uint8_t *raw, uint8_t **bytes_p,
                                    pf_error_t *err)
{
    size_t len = job->stored_len - HEADER_LEN;
    Profeed__JournalRecord *rec = wire_journal_record_unpack(raw + HEADER_LEN, len, self->opts.max_record, err);
    if (!rec) {
        pf_error_prefix(err, "%s: the record at byte %llu", self->path, (unsigned long long) job->stored_at);
        return err->code;
    }
    pf_status_t rc = PF_OK;
    if (rec->event != PROFEED__JOURNAL_EVENT__JOURNAL_EVENT_FINISHED || strcmp(rec->job_id, job->id) != 0 ||
        !rec->has_feedback || rec->feedback.len != job->feedback_len) {
        rc = pf_error_set(err, PF_EBADINPUT, "%s: the record at byte %llu is not job %s's feedback of %zu bytes",
                          self->path, (unsigned long long) job->stored_at, job->id, job->feedback_len);
        goto cleanup;
    }
    if (bytes_p) {
        Profeed__Feedback *fb = wire_feedback_unpack(rec->feedback.data, rec->feedback.len, self->opts.max_record, err);
        if (!fb) {
            pf_error_prefix(err, "%s: job %s's stored feedback", self->path, job->id);
            rc = err->code;
            goto cleanup;
        }
        wire_feedback_destroy(&fb);
        *bytes_p = malloc(rec->feedback.len ? rec->feedback.len : 1);
        if (!*bytes_p) {
            rc = pf_error_set(err, PF_ENOMEM, "out of memory for job %s's feedback", job->id);
            goto cleanup;
        }
        memcpy(*bytes_p, rec->feedback.data, rec->feedback.len);
    }
cleanup:
    wire_journal_record_destroy(&rec);
    return rc;
}

pf_status_t journal_feedback_read(journal_t *self, const job_t *job, uint8_t **bytes_p, size_t *len_p,
                                  pf_error_t *err)
{
    assert(job && bytes_p && len_p);
    *bytes_p = NULL;
    *len_p = 0;
    if (!self || job->state != JOB_FINISHED || job->stored_len == 0)
        return pf_error_set(err, PF_ENOTFOUND, "job %s: no stored feedback", job->id);
    pf_error_t why;
    uint8_t *raw = s_read_raw(self, job->stored_at, job->stored_len, &why);
    pf_status_t rc = raw ? s_check_finished(self, job, raw, bytes_p, &why) : why.code;
    free(raw);
    if (rc != PF_OK)
        return pf_error_set(err, rc, "%s", why.msg);
    *len_p = job->feedback_len;
    return PF_OK;
}

static void s_record_init(Profeed__JournalRecord *rec, Profeed__JournalEvent event, const char *job_id)
{
    profeed__journal_record__init(rec);
    rec->has_event = 1;
    rec->event = event;
    rec->job_id = (char *) job_id;
}

static void s_submitted_record(Profeed__JournalRecord *rec, const job_t *job)
{
    s_record_init(rec, PROFEED__JOURNAL_EVENT__JOURNAL_EVENT_SUBMITTED, job->id);
    rec->has_request = 1;
    rec->request.data = job->request_bytes;
    rec->request.len = job->request_len;
    rec->has_agent = 1;
    rec->agent.data = (uint8_t *) job->agent;
    rec->agent.len = job->agent_len;
    rec->has_deadline_unix_ms = 1;
    rec->deadline_unix_ms = s_to_unix(job->deadline_ms);
    rec->owner = job->owner[0] ? (char *) job->owner : NULL;
}

static void s_dispatched_record(Profeed__JournalRecord *rec, const job_t *job)
{
    s_record_init(rec, PROFEED__JOURNAL_EVENT__JOURNAL_EVENT_DISPATCHED, job->id);
    rec->has_attempt = 1;
    rec->attempt = job->attempt;
    rec->collector = (char *) job->collector;
}

static void s_planned_record(Profeed__JournalRecord *rec, const job_t *job)
{
    s_record_init(rec, PROFEED__JOURNAL_EVENT__JOURNAL_EVENT_PLANNED, job->id);
    rec->has_pass_count = 1;
    rec->pass_count = job->pass_count;
}

static void s_pass_record(Profeed__JournalRecord *rec, const job_t *job, const job_pass_t *pass)
{
    s_record_init(rec, PROFEED__JOURNAL_EVENT__JOURNAL_EVENT_PASS, job->id);
    rec->pass_key = (char *) pass->pass_key;
    rec->has_profiler = 1;
    rec->profiler = job->profiler;
    rec->has_pass_output = 1;
    rec->pass_output.data = (uint8_t *) pass->bytes; /* only read: packed into the record */
    rec->pass_output.len = pass->len;
}

static void s_finished_record(Profeed__JournalRecord *rec, const job_t *job)
{
    s_record_init(rec, PROFEED__JOURNAL_EVENT__JOURNAL_EVENT_FINISHED, job->id);
    rec->has_feedback = 1;
    rec->feedback.data = job->feedback;
    rec->feedback.len = job->feedback_len;
}

/* Writes one record and counts its bytes; a no-op after an earlier error. */
static pf_status_t s_put(int fd, const Profeed__JournalRecord *rec, size_t max_record, uint64_t *size,
                         pf_status_t rc, pf_error_t *err)
{
    if (rc != PF_OK)
        return rc;
    size_t len = 0;
    rc = s_write_record(fd, rec, max_record, &len, err);
    *size += len;
    return rc;
}

static pf_status_t s_write_job(journal_t *self, int fd, job_t *job, uint64_t *size, moves_t *moves,
                               pf_error_t *err)
{
    size_t max_record = self->opts.max_record;
    /* A delivered feedback only the old file holds is copied as it is there,
     * once read back and its frame, checksum and record checked; one that
     * fails is no longer believed, and its job goes. */
    uint8_t *raw = NULL;
    if (job->state == JOB_FINISHED && !job->feedback && job->stored_len > 0) {
        pf_error_t why;
        raw = s_read_raw(self, job->stored_at, job->stored_len, &why);
        if (raw && s_check_finished(self, job, raw, NULL, &why) != PF_OK) {
            free(raw);
            raw = NULL;
        }
        if (!raw) {
            pf_log_error(LOG, "job %s: its delivered feedback cannot be read back (%s); the job is forgotten "
                              "(submitted again, it runs again)",
                         job->id, why.msg);
            return s_moved(moves, job, 0, 0, err);
        }
    }
    Profeed__JournalRecord rec;
    s_submitted_record(&rec, job);
    pf_status_t rc = s_put(fd, &rec, max_record, size, PF_OK, err);
    if (job->state == JOB_QUEUED && job->attempt > 0) {
        /* Requeued: the attempts it used still count. */
        s_dispatched_record(&rec, job);
        rec.collector = "restored";
        rc = s_put(fd, &rec, max_record, size, rc, err);
        s_record_init(&rec, PROFEED__JOURNAL_EVENT__JOURNAL_EVENT_REQUEUED, job->id);
        rc = s_put(fd, &rec, max_record, size, rc, err);
    }
    if (job->state == JOB_COLLECTING || job->state == JOB_ANALYZING) {
        /* An analyzing job's collector key is gone; any key restores it. */
        s_dispatched_record(&rec, job);
        if (!job->collector[0])
            rec.collector = "restored";
        rc = s_put(fd, &rec, max_record, size, rc, err);
        if (job->pass_count) {
            s_planned_record(&rec, job);
            rc = s_put(fd, &rec, max_record, size, rc, err);
        }
        /* A streamed job's passes were never kept (issue 20): it is
         * collected again after a restart, so none is written. */
        for (size_t i = 0; !job->streamed && i < job->pass_len; i++) {
            s_pass_record(&rec, job, &job->passes[i]);
            rc = s_put(fd, &rec, max_record, size, rc, err);
        }
    }
    /* A finished job keeps its feedback; its passes end here (the feedback
     * is what an agent that comes back asks for). */
    if (job->state == JOB_FINISHED && (job->feedback || raw)) {
        uint64_t at = *size;
        if (raw) {
            if (rc == PF_OK) {
                struct iovec iov[1] = {{raw, job->stored_len}};
                if (s_write_all(fd, iov, 1))
                    *size += job->stored_len;
                else
                    rc = pf_error_set(err, PF_EIO, "cannot write: %s", strerror(errno));
            }
        } else {
            s_finished_record(&rec, job);
            rc = s_put(fd, &rec, max_record, size, rc, err);
        }
        if (rc == PF_OK)
            rc = s_moved(moves, job, at, (size_t) (*size - at), err);
        if (job->delivered) {
            s_record_init(&rec, PROFEED__JOURNAL_EVENT__JOURNAL_EVENT_DELIVERED, job->id);
            rc = s_put(fd, &rec, max_record, size, rc, err);
        }
    }
    free(raw);
    return rc;
}

pf_status_t journal_submitted(journal_t *self, const job_t *job, pf_error_t *err)
{
    Profeed__JournalRecord rec;
    s_submitted_record(&rec, job);
    return s_append(self, &rec, true, err);
}

pf_status_t journal_dispatched(journal_t *self, const job_t *job, pf_error_t *err)
{
    Profeed__JournalRecord rec;
    s_dispatched_record(&rec, job);
    return s_append(self, &rec, false, err);
}

pf_status_t journal_planned(journal_t *self, const job_t *job, pf_error_t *err)
{
    Profeed__JournalRecord rec;
    s_planned_record(&rec, job);
    return s_append(self, &rec, false, err);
}

pf_status_t journal_pass(journal_t *self, const job_t *job, const job_pass_t *pass, pf_error_t *err)
{
    Profeed__JournalRecord rec;
    s_pass_record(&rec, job, pass);
    return s_append(self, &rec, true, err);
}

pf_status_t journal_requeued(journal_t *self, const job_t *job, pf_error_t *err)
{
    Profeed__JournalRecord rec;
    s_record_init(&rec, PROFEED__JOURNAL_EVENT__JOURNAL_EVENT_REQUEUED, job->id);
    return s_append(self, &rec, false, err);
}

pf_status_t journal_finished(journal_t *self, job_t *job, pf_error_t *err)
{
    if (!self || !job->feedback)
        return PF_OK; /* out of memory keeping it: a resubmission runs the job again */
    Profeed__JournalRecord rec;
    s_finished_record(&rec, job);
    uint64_t at = 0;
    size_t len = 0;
    pf_status_t rc = s_write(self, &rec, true, &at, &len, err);
    if (rc != PF_OK)
        return rc;
    /* Before a compaction moves it (it then says where to). */
    job_table_stored(self->jobs, job, at, len);
    s_grown(self);
    return PF_OK;
}

pf_status_t journal_delivered(journal_t *self, const job_t *job, pf_error_t *err)
{
    Profeed__JournalRecord rec;
    s_record_init(&rec, PROFEED__JOURNAL_EVENT__JOURNAL_EVENT_DELIVERED, job->id);
    return s_append(self, &rec, false, err);
}

pf_status_t journal_forgotten(journal_t *self, const char *job_id, pf_error_t *err)
{
    Profeed__JournalRecord rec;
    s_record_init(&rec, PROFEED__JOURNAL_EVENT__JOURNAL_EVENT_FORGOTTEN, job_id);
    return s_append(self, &rec, false, err);
}

/* ------------------------------------------------------------------------
 * Reading back */

/* Applies one record to the table. Records come in the order the table
 * changed, so each finds the job in the state it left it; anything else is
 * skipped with a note (a damaged but checksummed file is not expected, and a
 * skipped record costs at most a job run again). */
static void s_apply(journal_t *self, const Profeed__JournalRecord *rec, uint64_t at, size_t len, size_t max_msg)
{
    job_table_t *jobs = self->jobs;
    job_t *job = job_table_find(jobs, rec->job_id);
    pf_error_t err;
    if (rec->event == PROFEED__JOURNAL_EVENT__JOURNAL_EVENT_SUBMITTED) {
        Profeed__JobRequest *request = wire_job_request_unpack(rec->request.data, rec->request.len, max_msg, &err);
        if (!request || strcmp(request->job_id, rec->job_id) != 0) {
            pf_log_warn(LOG, "job %s: its stored request is not valid (%s); dropped", rec->job_id,
                        request ? "another job's id" : err.msg);
            wire_job_request_destroy(&request);
            return;
        }
        size_t agent_len = rec->has_agent && rec->agent.len <= sizeof job->agent ? rec->agent.len : 0;
        job_t *added = NULL;
        job_table_submit(jobs, &request, rec->request.data, rec->request.len, rec->agent.data, agent_len,
                         s_to_mono(rec->deadline_unix_ms), &added);
        wire_job_request_destroy(&request);
        /* An owner too long for the table is damage: the job is then
         * claimed only by resubmitting its exact request. */
        if (added && rec->owner)
            job_table_set_owner(jobs, added, rec->owner);
        return;
    }
    if (!job) {
        pf_log_debug(LOG, "job %s: a %s record for a job not read before; skipped", rec->job_id,
                     protobuf_c_enum_descriptor_get_value(&profeed__journal_event__descriptor, rec->event)->name);
        return;
    }
    switch (rec->event) {
    case PROFEED__JOURNAL_EVENT__JOURNAL_EVENT_DISPATCHED:
        if (job->state == JOB_COLLECTING)
            job_table_requeue(jobs, job, UINT32_MAX);
        if (job->state == JOB_QUEUED)
            job_table_dispatched_as(jobs, job, rec->collector, rec->attempt);
        break;
    case PROFEED__JOURNAL_EVENT__JOURNAL_EVENT_PLANNED:
        if (job->state == JOB_COLLECTING && job_table_plan(jobs, job, rec->pass_count, &err) != PF_OK)
            pf_log_warn(LOG, "job %s: %s", job->id, err.msg);
        break;
    case PROFEED__JOURNAL_EVENT__JOURNAL_EVENT_PASS: {
        if (job->state != JOB_COLLECTING)
            break;
        Profeed__PassOutput *pass = wire_pass_output_unpack(rec->pass_output.data, rec->pass_output.len, max_msg, &err);
        if (!pass) {
            pf_log_warn(LOG, "job %s: stored pass %s is not valid (%s); the job will collect again", job->id,
                        rec->pass_key, err.msg);
            break;
        }
        wire_pass_output_destroy(&pass);
        Profeed__Profiler profiler = profiler_field(rec->has_profiler, rec->profiler);
        if (job_table_pass(jobs, job, job->collector, rec->pass_key, profiler, rec->pass_output.data,
                           rec->pass_output.len, NULL, &err) == JOB_PASS_REFUSED)
            pf_log_warn(LOG, "job %s: stored pass %s: %s", job->id, rec->pass_key, err.msg);
        break;
    }
    case PROFEED__JOURNAL_EVENT__JOURNAL_EVENT_REQUEUED:
        if (job->state == JOB_COLLECTING)
            job_table_requeue(jobs, job, UINT32_MAX);
        break;
    case PROFEED__JOURNAL_EVENT__JOURNAL_EVENT_FINISHED: {
        if (job->state == JOB_FINISHED)
            break;
        Profeed__Feedback *fb = wire_feedback_unpack(rec->feedback.data, rec->feedback.len, max_msg, &err);
        if (!fb) {
            pf_log_warn(LOG, "job %s: stored feedback is not valid (%s); the job runs again", job->id, err.msg);
            break;
        }
        wire_feedback_destroy(&fb);
        job_table_finish(jobs, job, rec->feedback.data, rec->feedback.len, s_clock_ms(CLOCK_MONOTONIC));
        if (job->feedback)
            job_table_stored(jobs, job, at, len); /* a DELIVERED record after it drops the copy */
        break;
    }
    case PROFEED__JOURNAL_EVENT__JOURNAL_EVENT_DELIVERED:
        if (job->state == JOB_FINISHED)
            job_table_delivered(jobs, job);
        break;
    case PROFEED__JOURNAL_EVENT__JOURNAL_EVENT_FORGOTTEN: job_table_forget(jobs, job); break;
    default: break;
    }
}

/* Reads every record of the open file into the table; returns the offset
 * after the last good one (the rest is damage). */
static uint64_t s_replay(journal_t *self, FILE *in, size_t *count)
{
    uint64_t good = 0;
    uint8_t header[HEADER_LEN];
    uint8_t *buf = NULL;
    const char *why = NULL;
    for (;;) {
        size_t got = fread(header, 1, HEADER_LEN, in);
        if (got == 0 && feof(in))
            break;
        if (got < HEADER_LEN) {
            why = "a record header cut short";
            break;
        }
        uint32_t len = s_get_u32(header + 4);
        if (memcmp(header, MAGIC, 4) != 0 || len > self->opts.max_record) {
            why = "bytes that are not a record";
            break;
        }
        uint8_t *grown = realloc(buf, len ? len : 1);
        if (!grown) {
            why = "a record too large for memory";
            break;
        }
        buf = grown;
        if (fread(buf, 1, len, in) < len) {
            why = "a record cut short";
            break;
        }
        if (crc32_update(0, buf, len) != s_get_u32(header + 8)) {
            why = "a record whose checksum does not match";
            break;
        }
        pf_error_t err;
        Profeed__JournalRecord *rec = wire_journal_record_unpack(buf, len, self->opts.max_record, &err);
        if (!rec) {
            pf_log_warn(LOG, "%s: record at byte %llu is not valid: %s", self->path, (unsigned long long) good,
                        err.msg);
            why = "an invalid record";
            break;
        }
        s_apply(self, rec, good, HEADER_LEN + len, self->opts.max_record);
        wire_journal_record_destroy(&rec);
        good += HEADER_LEN + len;
        (*count)++;
    }
    free(buf);
    if (why)
        pf_log_warn(LOG, "%s: %s at byte %llu; reading stops there and the rest of the file is dropped "
                         "(a crash in the middle of a write leaves this)",
                    self->path, why, (unsigned long long) good);
    return good;
}

static pf_status_t s_mkdir_p(const char *dir, pf_error_t *err)
{
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s", dir) >= (int) sizeof path)
        return pf_error_set(err, PF_EBADINPUT, "state folder path too long");
    for (char *p = path + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(path, 0700) != 0 && errno != EEXIST)
            return pf_error_set(err, PF_EIO, "cannot create %s: %s", path, strerror(errno));
        *p = '/';
    }
    if (mkdir(path, 0700) != 0 && errno != EEXIST)
        return pf_error_set(err, PF_EIO, "cannot create %s: %s", path, strerror(errno));
    return PF_OK;
}

journal_t *journal_open(const char *dir, const journal_options_t *opts, job_table_t *jobs,
                        size_t *replayed_p, pf_error_t *err)
{
    assert(dir && opts && jobs);
    if (replayed_p)
        *replayed_p = 0;
    if (s_mkdir_p(dir, err) != PF_OK)
        return NULL;
    journal_t *self = calloc(1, sizeof *self);
    if (!self) {
        pf_error_set(err, PF_ENOMEM, "out of memory");
        return NULL;
    }
    self->opts = *opts;
    self->jobs = jobs;
    self->fd = -1;
    snprintf(self->dir, sizeof self->dir, "%s", dir);
    if (snprintf(self->path, sizeof self->path, "%s/journal", dir) >= (int) sizeof self->path) {
        pf_error_set(err, PF_EBADINPUT, "state folder path too long");
        free(self);
        return NULL;
    }
    size_t count = 0;
    FILE *in = fopen(self->path, "rb");
    if (in) {
        self->size = s_replay(self, in, &count);
        fclose(in);
        /* Compaction reads the delivered feedbacks the old file holds. */
        self->fd = open(self->path, O_RDONLY | O_CLOEXEC);
        if (self->fd < 0) {
            pf_error_set(err, PF_EIO, "%s: cannot read: %s", self->path, strerror(errno));
            free(self);
            return NULL;
        }
    } else if (errno != ENOENT) {
        pf_error_set(err, PF_EIO, "%s: cannot read: %s", self->path, strerror(errno));
        free(self);
        return NULL;
    }
    /* Collections in flight died with the old broker's connections. */
    for (job_t *job = job_table_first(jobs); job; job = job_table_next(jobs))
        if (job->state == JOB_COLLECTING)
            job_table_requeue(jobs, job, UINT32_MAX);
    if (replayed_p)
        *replayed_p = count;
    /* Compacting now also proves the folder is writable, before any agent is
     * told its job is safe. */
    if (s_compact(self, err) != PF_OK ||
        (opts->sync && !(self->syncer = journal_sync_new(self->fd, self->path, err)))) {
        if (self->fd >= 0)
            close(self->fd);
        free(self);
        return NULL;
    }
    return self;
}

void journal_close(journal_t **self_p)
{
    assert(self_p);
    journal_t *self = *self_p;
    if (!self)
        return;
    /* The thread first: it may be syncing the descriptor. Then what it had
     * not synced is, so a clean stop leaves every record on disk (the
     * broker drops the promises still held: outbox.h). */
    journal_sync_destroy(&self->syncer);
    if (self->fd >= 0) {
        if (self->opts.sync && fdatasync(self->fd) != 0)
            pf_log_error(LOG, "%s: cannot sync at close: %s", self->path, strerror(errno));
        close(self->fd);
    }
    free(self);
    *self_p = NULL;
}

uint64_t journal_mark(journal_t *self)
{
    if (!self || !self->syncer)
        return 0;
    /* What was written last may not back a promise of its own (a dispatched
     * record before a feedback sent again): a sync is asked for all the same. */
    journal_sync_written(self->syncer, self->mark, true);
    return self->mark;
}

zsock_t *journal_socket(journal_t *self)
{
    return self && self->syncer ? journal_sync_socket(self->syncer) : NULL;
}

void journal_progress(journal_t *self, journal_sync_progress_t *progress)
{
    if (self && self->syncer) {
        journal_sync_take(self->syncer, progress);
        return;
    }
    progress->synced = UINT64_MAX; /* nothing waits (journal_mark is 0) */
    progress->failed_from = progress->failed_to = 0;
    progress->why[0] = '\0';
}

journal_sync_t *journal_syncer(journal_t *self)
{
    return self ? self->syncer : NULL;
}
