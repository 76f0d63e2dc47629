/* worker_pool: the collectors and analyzers the broker knows, and routing.
 *
 * A worker is known by its routing id (as hex, its key) and by the worker_id
 * it announced in Ready. It stays known while it is heard from: each message
 * moves its expiry to now + interval x liveness (Paranoid Pirate). A Ready
 * with a worker_id already known under another routing id replaces the old
 * entry (the worker restarted or reconnected). Routing: a job goes to the
 * least-loaded collector (busy / slots) that has a GPU of the job's arch and
 * announces the capability its profiler stands for; passes go to the analyzer
 * with the fewest jobs among those that announce it. Capabilities are strings
 * matched as they are (Ready.capabilities): the pool knows no profiler, so a
 * new one is a table entry (common/profiler.c) and no change here. */
#ifndef WORKER_POOL_H
#define WORKER_POOL_H

#include <czmq.h>
#include <stdbool.h>
#include <stdint.h>

#include "job_table.h"
#include "profeed.pb-c.h"

typedef struct {
    char key[JOB_WORKER_KEY_LEN];
    zframe_t *routing_id;       /* owned */
    Profeed__WorkerRole role;
    Profeed__Ready *ready;      /* as announced, owned (an unpacked Envelope's body) */
    Profeed__Envelope *ready_env;
    /* What it offers: its Ready.capabilities, or those its Ready.profilers
     * stand for (worker_pool_ready). Strings in `ready` or the profiler
     * table's names, not owned. */
    const char *caps[WIRE_MAX_CAPABILITIES];
    size_t n_caps;
    uint32_t slots;
    uint32_t busy;              /* jobs collecting here, or pinned here (analyzers) */
    /* Collectors: the job ids it said it runs, in its last Ready or
     * Heartbeat (owned strings). The broker's own count cannot know of
     * attempts from before its restart, nor see a slot it thinks free but the
     * collector still fills; the report can. */
    char **held;
    size_t held_len;
    int64_t expiry_ms;
    int64_t last_heard_ms;
} worker_t;

typedef struct worker_pool_t worker_pool_t;

worker_pool_t *worker_pool_new(void);
void worker_pool_destroy(worker_pool_t **self_p);

/* Registers the worker of `ready_env` (taken over, *ready_env_p set NULL) at
 * `routing_id` (copied). If its worker_id was known under another key, that
 * key is written to `replaced` (else "") so the caller can treat the old entry
 * as dead before removing it with worker_pool_remove(). */
worker_t *worker_pool_ready(worker_pool_t *self, zframe_t *routing_id, const char *key,
                            Profeed__Envelope **ready_env_p, int64_t expiry_ms, char *replaced,
                            size_t replaced_cap);

worker_t *worker_pool_find(worker_pool_t *self, const char *key);
void worker_pool_remove(worker_pool_t *self, const char *key);

/* The first worker whose expiry is before `now_ms`, or NULL. */
worker_t *worker_pool_expired(worker_pool_t *self, int64_t now_ms);

/* The capability a worker must announce to serve a job of `profiler` (a
 * wire value; profiler_field() reads an optional one): the profiler table's
 * name for it, the string workers announce. NULL when it names none
 * (UNSPECIFIED): any worker serves the job. */
const char *worker_pool_capability(Profeed__Profiler profiler);

/* Whether worker `w` announces `capability` (NULL: any matches). */
bool worker_pool_offers(const worker_t *w, const char *capability);

/* Whether any known collector offers a profiler that suits `language` (the
 * job names none), as the profiler table orders them per language. When
 * none, `reason` says what the language needs and what is offered. */
bool worker_pool_offers_language(worker_pool_t *self, Profeed__Language language, char *reason, size_t cap);

/* Whether any known collector could ever serve (arch, capability): "" or
 * NULL match anything. When none, `reason` says what is offered. */
bool worker_pool_can_serve(worker_pool_t *self, const char *arch, const char *capability, char *reason,
                           size_t cap);

/* Replaces the collector's reported jobs with `ids` (copied). False when out
 * of memory (the report is then empty). */
bool worker_pool_set_held(worker_t *w, char *const *ids, size_t n);
/* Whether the collector's last report named `job_id`. */
bool worker_pool_holds(const worker_t *w, const char *job_id);

/* A worker's busy count, changed only here: one job more (dispatched to a
 * collector, or pinned to an analyzer), one fewer (never below 0: the
 * collector's report may have counted it out already), the count a
 * collector's report makes it (true when that frees a slot), and full (the
 * collector refused a job as OVERLOADED: full by its own word until its next
 * report). */
void worker_pool_claim(worker_t *w);
void worker_pool_release(worker_t *w);
bool worker_pool_set_busy(worker_t *w, uint32_t busy);
void worker_pool_fill(worker_t *w);

/* The worker was heard from at `now_ms`: it is alive until `expiry_ms`. */
void worker_pool_heard(worker_t *w, int64_t now_ms, int64_t expiry_ms);
/* The worker cannot be reached (its connection is gone): it is dead now,
 * and the next sweep (worker_pool_expired) finds it. */
void worker_pool_unreachable(worker_t *w);

/* The least-loaded collector with a free slot that can serve the job, or
 * NULL; one other than `avoid` (a key, or NULL) when there is one. A job
 * that names no profiler (`capability` NULL) goes only to a collector that
 * offers a profiler for its `language` (UNSPECIFIED: any). */
worker_t *worker_pool_pick_collector(worker_pool_t *self, const char *arch, const char *capability,
                                     Profeed__Language language, const char *avoid);

/* The least-loaded analyzer that announces `capability` (NULL: any; and,
 * with `chunks`, speaks streamed passes: Ready.chunks), or NULL. */
worker_t *worker_pool_pick_analyzer(worker_pool_t *self, const char *capability, bool chunks);

size_t worker_pool_size(worker_pool_t *self);
/* Registered workers of one role. */
size_t worker_pool_count(worker_pool_t *self, Profeed__WorkerRole role);
worker_t *worker_pool_first(worker_pool_t *self);
worker_t *worker_pool_next(worker_pool_t *self);


#endif
