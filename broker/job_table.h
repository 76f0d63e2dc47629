/* job_table: every job the broker knows, and the only place a job changes
 * state.
 *
 *            submit            dispatched           all passes in
 *   (new) ----------> QUEUED ------------> COLLECTING ------------> ANALYZING
 *                       ^                      |                       |
 *                       +--- collector lost ---+                       | feedback
 *                            (attempts left)   |                       v
 *                                              +-- no attempts left -> FINISHED
 *   any state but FINISHED -- timed out / refused by a worker ------> FINISHED
 *   ANALYZING --- a streamed job's analyzer lost ---> QUEUED (attempts left)
 *
 * The analyzer a job is pinned to is not a state: it is chosen when the first
 * pass arrives, dropped when that analyzer dies, and chosen again (the
 * retained pass outputs are sent again) in COLLECTING or ANALYZING.
 *
 * Sockets feed the table events (job_table_* calls) and send what it decided;
 * the table itself does no I/O, so a durable journal can log each call of the
 * transition functions here and replay them on start. A finished job is
 * remembered for `retain_ms`, so resubmitting its id gets the same answer
 * without running it again: its packed Feedback stays in memory until the
 * agent acknowledged it; after that only where the journal holds it
 * (job_table_stored), when a journal does. */
#ifndef JOB_TABLE_H
#define JOB_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <czmq.h>

#include "pf_error.h"
#include "profeed.pb-c.h"
#include "wire_check.h"

/* A worker key: its routing id in hex (at most 255 bytes). */
#define JOB_WORKER_KEY_LEN 512
/* A job's owner: "key:" and a Z85 CURVE public key, or "peer:" and a routing
 * id in hex. */
#define JOB_OWNER_LEN (JOB_WORKER_KEY_LEN + 8)

typedef enum { JOB_QUEUED, JOB_COLLECTING, JOB_ANALYZING, JOB_FINISHED } job_state_t;

/* One retained pass output, packed as it came from the collector. */
typedef struct {
    char pass_key[WIRE_MAX_ID_LEN + 1];
    const uint8_t *bytes; /* inside `frame` when it is set, else malloc'd here */
    size_t len;
    zframe_t *frame;      /* the message the pass came in, kept instead of a copy */
} job_pass_t;

typedef struct job {
    char id[WIRE_MAX_ID_LEN + 1];
    job_state_t state;
    uint64_t seq;                       /* submission order: queued jobs go first-in first-out */
    struct job *queue_prev, *queue_next; /* the table's queue of QUEUED jobs, in seq order */
    Profeed__JobRequest *request;       /* owned, valid */
    uint8_t *request_bytes;             /* packed, to tell a resubmission from a new request */
    size_t request_len;
    uint8_t agent[256];                 /* routing id of the agent to answer */
    size_t agent_len;
    char collector[JOB_WORKER_KEY_LEN];   /* worker key while COLLECTING */
    char analyzer[JOB_WORKER_KEY_LEN];    /* pinned analyzer, "" when none */
    uint32_t attempt;                   /* collection attempts started */
    uint32_t refusals;                  /* dispatches refused as OVERLOADED (backoff grows with it) */
    int64_t retry_ms;                   /* QUEUED: not dispatched before then (after a refusal) */
    char refused_by[JOB_WORKER_KEY_LEN];  /* the collector that refused it last, "" when none */
    uint32_t pass_count;                /* announced by the collector; 0 until then */
    job_pass_t *passes;                 /* of the current attempt */
    /* A streamed pass (issue 20): its chunks went through to the analyzer
     * and are not kept here, so losing the analyzer means collecting again. */
    bool streamed;                      /* a chunk of this attempt was forwarded */
    uint64_t stream_raw;                /* raw bytes streamed in this attempt */
    char stream_last[WIRE_MAX_ID_LEN + 1]; /* the pass whose last chunk awaits the analyzer's receipt */
    uint32_t stream_last_seq;
    Profeed__Profiler stream_profiler;
    size_t pass_len;
    Profeed__Profiler profiler;         /* of the passes, once one arrived */
    int64_t deadline_ms;                /* the job times out then */
    int64_t submitted_ms;               /* set by the broker, for latency metrics only */
    int64_t stage_ms;                   /* attempt start or last pass in (metrics only) */
    int64_t dispatched_ms;              /* set by the broker when the attempt was sent */
    int64_t finished_ms;
    uint8_t *feedback;                  /* packed Feedback once FINISHED; NULL again once it is
                                         * delivered and the journal holds it (stored_len) */
    size_t feedback_len;                /* its length, also once only the journal holds it */
    uint64_t stored_at;                 /* where the journal's FINISHED record of it starts ... */
    size_t stored_len;                  /* ... and its length, header included; 0: not stored */
    bool delivered;                     /* the agent acknowledged the feedback */
    /* Who the job counts against for backpressure: the request's agent_id,
     * else the agent's routing id in hex (first 64 bytes). */
    char agent_key[WIRE_MAX_ID_LEN + 8];
    /* Who submitted it, set by the broker: only they hear of it (status,
     * heartbeats, feedback). "" for a job stored before owners were. */
    char owner[JOB_OWNER_LEN];
} job_t;

typedef struct job_table_t job_table_t;

job_table_t *job_table_new(void);
void job_table_destroy(job_table_t **self_p);

const char *job_state_name(job_state_t state);

/* Result of a submission. */
typedef enum {
    JOB_SUBMIT_NEW,       /* a new job, now QUEUED */
    JOB_SUBMIT_SAME,      /* the same request again: nothing redone */
    JOB_SUBMIT_CONFLICT,  /* the id is taken by a different request */
    JOB_SUBMIT_NOMEM,     /* out of memory; nothing was kept */
} job_submit_t;

/* Submits `request` (packed as `bytes`; the table takes ownership of the
 * unpacked request when the job is new, else destroys it) from the agent with
 * routing id `agent`. A resubmission also moves the answer to that agent (it
 * may have reconnected). *job_p is the job in every case but a conflict. */
job_submit_t job_table_submit(job_table_t *self, Profeed__JobRequest **request_p,
                              const uint8_t *bytes, size_t len, const uint8_t *agent,
                              size_t agent_len, int64_t deadline_ms, job_t **job_p);

job_t *job_table_find(job_table_t *self, const char *id);

/* The QUEUED jobs in submission order, for the dispatcher: the oldest (NULL
 * when none), and the one after `job` (which must be QUEUED; NULL after the
 * last). Both are O(1): the table keeps its queued jobs in a list of their own
 * rather than searching every job it retains (10,000 finished ones by default)
 * each time a worker frees up. */
job_t *job_table_first_queued(job_table_t *self);
job_t *job_table_queued_after(job_table_t *self, const job_t *job);

/* QUEUED -> COLLECTING on `collector`; starts attempt attempt+1. */
void job_table_dispatched(job_table_t *self, job_t *job, const char *collector);

/* QUEUED -> COLLECTING on `collector` as attempt `attempt` (>= 1): a
 * journal's DISPATCHED record read back, which says which attempt it was. */
void job_table_dispatched_as(job_table_t *self, job_t *job, const char *collector, uint32_t attempt);

/* The attempt's Dispatch was sent at `now_ms`: its clocks start (the
 * collector's report does not count a job missing from it before it had the
 * time to arrive; the pass latency counts from here). */
void job_table_sent(job_table_t *self, job_t *job, int64_t now_ms);

/* A pass came in at `now_ms`: the next pass's latency counts from here. */
void job_table_stage(job_table_t *self, job_t *job, int64_t now_ms);

/* The collector announced how many passes this attempt has. */
pf_status_t job_table_plan(job_table_t *self, job_t *job, uint32_t pass_count, pf_error_t *err);

/* Result of a pass output. */
typedef enum { JOB_PASS_NEW, JOB_PASS_DUPLICATE, JOB_PASS_REFUSED } job_pass_result_t;

/* Retains one pass output of the current attempt: `len` bytes at `bytes`,
 * which lie inside *frame_p when frame_p is not NULL. NEW takes *frame_p
 * (setting it NULL) and keeps the bytes where they are; without a frame they
 * are copied. When the pass was the last, COLLECTING -> ANALYZING. REFUSED
 * (with `err`) when the job is not collecting, or the pass comes from another
 * collector than the job's. */
job_pass_result_t job_table_pass(job_table_t *self, job_t *job, const char *collector,
                                 const char *pass_key, Profeed__Profiler profiler,
                                 const uint8_t *bytes, size_t len, zframe_t **frame_p, pf_error_t *err);

/* A chunk of `raw_size` raw bytes of a streamed pass of this attempt came
 * in; returns the raw bytes streamed in the attempt so far. */
uint64_t job_table_chunk_in(job_table_t *self, job_t *job, uint64_t raw_size);

/* A chunk of the attempt is passed through to the analyzer: the job is
 * streamed (its passes are not kept), and `profiler` (a wire value;
 * UNSPECIFIED: the chunk names none) is the job's when it had none yet. */
void job_table_streaming(job_table_t *self, job_t *job, Profeed__Profiler profiler);

/* The last chunk `seq` of streamed pass `pass_key` (of `profiler`, or the
 * job's when UNSPECIFIED) went to the analyzer: the pass is in once the
 * analyzer's receipt for it comes (job_table_stream_received). */
void job_table_stream_sent(job_table_t *self, job_t *job, const char *pass_key, uint32_t seq,
                           Profeed__Profiler profiler);

/* The analyzer's receipt for chunk `seq` of `pass_key`: when it is the one
 * job_table_stream_sent() awaits, the pass is in, as job_table_pass() takes it
 * without bytes (nothing of a streamed pass is kept), and the result is
 * written to *result; false (nothing changed) when it is another chunk's. */
bool job_table_stream_received(job_table_t *self, job_t *job, const char *pass_key, uint32_t seq,
                               job_pass_result_t *result, pf_error_t *err);

/* Pins a COLLECTING or ANALYZING job to an analyzer; "" unpins any
 * unfinished job (the analyzer died; a requeued job keeps its pin). */
void job_table_set_analyzer(job_table_t *self, job_t *job, const char *analyzer);

/* The job's collector died or gave up: COLLECTING -> QUEUED with the retained
 * passes dropped, or, after `max_attempts`, false (the caller finishes it).
 * A broker restart requeues with max_attempts UINT32_MAX: not the job's fault.
 * A streamed job may be requeued from ANALYZING too: its passes were never
 * kept, so a lost analyzer means collecting them again. */
bool job_table_requeue(job_table_t *self, job_t *job, uint32_t max_attempts);

/* The collector refused the attempt as OVERLOADED (its slots were full,
 * unknown to the broker): COLLECTING -> QUEUED without spending the attempt
 * (the next dispatch reuses its number), not before `retry_ms`, and
 * preferably elsewhere than on the refusing collector. */
void job_table_refused(job_table_t *self, job_t *job, int64_t retry_ms);

/* Any state but FINISHED -> FINISHED with this packed Feedback (copied). The
 * pass outputs are dropped: a finished job holds only its feedback, which is
 * all a resubmission or a missed delivery needs. */
void job_table_finish(job_table_t *self, job_t *job, const uint8_t *feedback, size_t len,
                      int64_t now_ms);

/* FINISHED: the agent acknowledged the feedback. When the journal holds it
 * (job_table_stored), the bytes in memory are dropped: a resubmission or a
 * late heartbeat reads it back from there (journal_feedback_read). */
void job_table_delivered(job_table_t *self, job_t *job);

/* FINISHED: the journal holds this job's feedback in the record of `len`
 * bytes at byte `at` of its file (a finished record appended, a record moved
 * by compaction or read back on start). A delivered job's bytes in memory go
 * now. */
void job_table_stored(job_table_t *self, job_t *job, uint64_t at, size_t len);

/* Forgets the oldest FINISHED jobs beyond the newest `keep`, appending their
 * ids to `gone` (as job_table_expire does); returns how many. A bound on the
 * broker's memory that holds whatever the job rate. */
size_t job_table_trim_finished(job_table_t *self, size_t keep, zlistx_t *gone);

/* Bytes held in memory: the feedback of FINISHED jobs (not that of the
 * delivered ones only the journal holds), the passes of the others. Kept as
 * jobs move: O(1). */
size_t job_table_feedback_bytes(job_table_t *self);
size_t job_table_pass_bytes(job_table_t *self);

/* Forgets FINISHED jobs until the feedback they hold in memory takes at
 * most `max_bytes`: delivered ones first, then the others, each oldest
 * finished first, and never one that holds none (only the journal has its
 * feedback: forgetting it frees nothing); their ids are appended to `gone` as
 * job_table_expire does. Returns how many. A bound on the broker's memory
 * that holds whatever the feedback sizes. */
size_t job_table_trim_bytes(job_table_t *self, size_t max_bytes, zlistx_t *gone);

/* Who submitted the job (job_t.owner): false, and the owner unchanged,
 * when `owner` is longer than the table keeps (a damaged journal record). */
bool job_table_set_owner(job_table_t *self, job_t *job, const char *owner);

/* The agent to answer is now at routing id `agent` (it reconnected). */
void job_table_set_agent(job_table_t *self, job_t *job, const uint8_t *agent, size_t agent_len);

/* The job was accepted at `now_ms` (its latency counts from then). */
void job_table_accepted(job_table_t *self, job_t *job, int64_t now_ms);

/* Removes a job whatever its state (a submission the journal could not keep,
 * or a FORGOTTEN record read back). */
void job_table_forget(job_table_t *self, job_t *job);

/* Forgets jobs FINISHED before `before_ms`; their ids are appended to `gone`
 * (when not NULL, a zlistx of strings the caller frees) so the journal can
 * record them. Returns how many. */
size_t job_table_expire(job_table_t *self, int64_t before_ms, zlistx_t *gone);

/* Counts by state (kept as jobs move: O(1)), unfinished jobs of one agent
 * key (see job_t.agent_key), and iteration over all jobs (order unspecified). */
size_t job_table_count(job_table_t *self, job_state_t state);
size_t job_table_agent_unfinished(job_table_t *self, const char *agent_key);
/* The agent key a request from routing id `agent` would count against. */
void job_table_agent_key(const Profeed__JobRequest *request, const uint8_t *agent, size_t agent_len, char *out,
                         size_t cap);
job_t *job_table_first(job_table_t *self);
job_t *job_table_next(job_table_t *self);

#endif
