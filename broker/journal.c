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
#include "pf_log.h"
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

static pf_status_t s_sync(int fd, const char *path, pf_error_t *err)
{
    if (fdatasync(fd) != 0)
        return pf_error_set(err, PF_EIO, "%s: cannot sync: %s", path, strerror(errno));
    return PF_OK;
}

/* The records that restore one job as it is now (for compaction). */
static pf_status_t s_write_job(int fd, const job_t *job, size_t max_record, uint64_t *size, pf_error_t *err);

/* Rewrites the file with only the live jobs: to <path>.new, synced, renamed
 * over the old one, and the folder synced so the rename lasts. */
static pf_status_t s_compact(journal_t *self, pf_error_t *err)
{
    char tmp[PATH_MAX + 8];
    snprintf(tmp, sizeof tmp, "%s.new", self->path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return pf_error_set(err, PF_EIO, "%s: cannot create: %s", tmp, strerror(errno));
    uint64_t size = 0;
    pf_status_t rc = PF_OK;
    for (job_t *job = job_table_first(self->jobs); job && rc == PF_OK; job = job_table_next(self->jobs))
        rc = s_write_job(fd, job, self->opts.max_record, &size, err);
    if (rc == PF_OK && fsync(fd) != 0)
        rc = pf_error_set(err, PF_EIO, "%s: cannot sync: %s", tmp, strerror(errno));
    if (rc == PF_OK && rename(tmp, self->path) != 0)
        rc = pf_error_set(err, PF_EIO, "cannot rename %s: %s", tmp, strerror(errno));
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
    if (self->fd >= 0)
        close(self->fd);
    self->fd = fd;
    pf_log_info(LOG, "%s: rewritten with the jobs it keeps (%zu): %llu -> %llu bytes", self->path,
                job_table_count(self->jobs, JOB_QUEUED) + job_table_count(self->jobs, JOB_COLLECTING) +
                    job_table_count(self->jobs, JOB_ANALYZING) + job_table_count(self->jobs, JOB_FINISHED),
                (unsigned long long) self->size, (unsigned long long) size);
    self->size = self->compacted = size;
    return PF_OK;
}

/* Appends a record; syncs when it backs a promise; compacts when the file
 * has doubled. */
static pf_status_t s_append(journal_t *self, const Profeed__JournalRecord *rec, bool sync, pf_error_t *err)
{
    if (!self)
        return PF_OK;
    size_t len = 0;
    pf_status_t rc = s_write_record(self->fd, rec, self->opts.max_record, &len, err);
    if (rc == PF_OK && sync && self->opts.sync)
        rc = s_sync(self->fd, self->path, err);
    if (rc != PF_OK) {
        /* Leave no partial record behind for the next one to follow. */
        if (ftruncate(self->fd, (off_t) self->size) != 0)
            pf_log_error(LOG, "%s: cannot cut a failed record off: %s", self->path, strerror(errno));
        lseek(self->fd, 0, SEEK_END);
        pf_error_prefix(err, "%s", self->path);
        return rc;
    }
    self->size += len;
    if (self->size >= self->opts.compact_min && self->size >= 2 * self->compacted) {
        pf_error_t cerr;
        if (s_compact(self, &cerr) != PF_OK)
            pf_log_warn(LOG, "compaction failed, the journal keeps growing: %s", cerr.msg);
    }
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

static pf_status_t s_write_job(int fd, const job_t *job, size_t max_record, uint64_t *size, pf_error_t *err)
{
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
    if (job->state == JOB_FINISHED && job->feedback) {
        s_finished_record(&rec, job);
        rc = s_put(fd, &rec, max_record, size, rc, err);
        if (job->delivered) {
            s_record_init(&rec, PROFEED__JOURNAL_EVENT__JOURNAL_EVENT_DELIVERED, job->id);
            rc = s_put(fd, &rec, max_record, size, rc, err);
        }
    }
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

pf_status_t journal_finished(journal_t *self, const job_t *job, pf_error_t *err)
{
    if (!job->feedback)
        return PF_OK; /* out of memory keeping it: a resubmission runs the job again */
    Profeed__JournalRecord rec;
    s_finished_record(&rec, job);
    return s_append(self, &rec, true, err);
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
static void s_apply(journal_t *self, const Profeed__JournalRecord *rec, size_t max_msg)
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
        if (added && rec->owner && strlen(rec->owner) < sizeof added->owner)
            snprintf(added->owner, sizeof added->owner, "%s", rec->owner);
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
        if (job->state == JOB_QUEUED) {
            job->attempt = rec->attempt - 1;
            job_table_dispatched(jobs, job, rec->collector);
        }
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
        Profeed__Profiler profiler = rec->has_profiler ? rec->profiler : PROFEED__PROFILER__PROFILER_UNSPECIFIED;
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
        s_apply(self, rec, self->opts.max_record);
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
    if (s_compact(self, err) != PF_OK) {
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
    if (self->fd >= 0)
        close(self->fd);
    free(self);
    *self_p = NULL;
}
