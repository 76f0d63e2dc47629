#include "worker_pool.h"

#include <assert.h>
#include <stdio.h>
#include <string.h>

#include "profiler.h"
#include "wire.h"

struct worker_pool_t {
    zhashx_t *workers; /* key -> worker_t, owned */
};

static void s_held_clear(worker_t *w)
{
    for (size_t i = 0; i < w->held_len; i++)
        free(w->held[i]);
    free(w->held);
    w->held = NULL;
    w->held_len = 0;
}

static void s_worker_destructor(void **item)
{
    worker_t *w = *item;
    if (!w)
        return;
    s_held_clear(w);
    zframe_destroy(&w->routing_id);
    wire_envelope_destroy(&w->ready_env);
    free(w);
    *item = NULL;
}

worker_pool_t *worker_pool_new(void)
{
    worker_pool_t *self = calloc(1, sizeof *self);
    if (!self)
        return NULL;
    self->workers = zhashx_new();
    zhashx_set_destructor(self->workers, s_worker_destructor);
    return self;
}

void worker_pool_destroy(worker_pool_t **self_p)
{
    assert(self_p);
    if (!*self_p)
        return;
    zhashx_destroy(&(*self_p)->workers);
    free(*self_p);
    *self_p = NULL;
}

const char *worker_pool_capability(Profeed__Profiler profiler)
{
    /* Every wire value but UNSPECIFIED is in the table (test_profiler), so
     * NULL means the job names none. */
    return profiler_name_or(profiler, NULL);
}

/* What worker `w` offers, from its Ready. A worker from before
 * Ready.capabilities (issue 17) announces none: its Ready.profilers stand
 * for them, by the table's names, which are the strings newer workers
 * announce, so old and new peers serve the same jobs while a farm upgrades.
 * wire_check bounds both lists. */
static void s_capabilities(worker_t *w)
{
    const Profeed__Ready *r = w->ready;
    w->n_caps = 0;
    if (r->n_capabilities > 0) {
        assert(r->n_capabilities <= WIRE_MAX_CAPABILITIES);
        for (size_t i = 0; i < r->n_capabilities; i++)
            w->caps[w->n_caps++] = r->capabilities[i];
        return;
    }
    _Static_assert(WIRE_MAX_PROFILERS <= WIRE_MAX_CAPABILITIES, "a worker's profilers fit in its caps");
    assert(r->n_profilers <= WIRE_MAX_PROFILERS);
    for (size_t i = 0; i < r->n_profilers; i++) {
        const char *name = profiler_name_or(r->profilers[i], NULL);
        if (name)
            w->caps[w->n_caps++] = name;
    }
}

worker_t *worker_pool_ready(worker_pool_t *self, zframe_t *routing_id, const char *key,
                            Profeed__Envelope **ready_env_p, int64_t expiry_ms, char *replaced,
                            size_t replaced_cap)
{
    assert(self && routing_id && key && ready_env_p && *ready_env_p);
    Profeed__Ready *ready = (*ready_env_p)->ready;
    replaced[0] = '\0';
    for (worker_t *w = zhashx_first(self->workers); w; w = zhashx_next(self->workers)) {
        if (strcmp(w->key, key) != 0 && strcmp(w->ready->worker_id, ready->worker_id) == 0) {
            snprintf(replaced, replaced_cap, "%s", w->key);
            break;
        }
    }
    worker_t *w = zhashx_lookup(self->workers, key);
    if (w) {
        /* A second Ready on one connection: the worker restarted its state
         * (a new announcement replaces the old one). */
        wire_envelope_destroy(&w->ready_env);
    } else {
        w = calloc(1, sizeof *w);
        if (!w)
            return NULL;
        snprintf(w->key, sizeof w->key, "%s", key);
        w->routing_id = zframe_dup(routing_id);
        zhashx_insert(self->workers, w->key, w);
    }
    w->ready_env = *ready_env_p;
    *ready_env_p = NULL;
    w->ready = w->ready_env->ready;
    w->role = w->ready->role;
    s_capabilities(w);
    w->slots = w->ready->has_slots ? w->ready->slots : 1;
    w->expiry_ms = expiry_ms;
    return w;
}

worker_t *worker_pool_find(worker_pool_t *self, const char *key)
{
    return zhashx_lookup(self->workers, key);
}

void worker_pool_remove(worker_pool_t *self, const char *key)
{
    char copy[JOB_WORKER_KEY_LEN];
    snprintf(copy, sizeof copy, "%s", key); /* `key` may live in the worker */
    zhashx_delete(self->workers, copy);
}

worker_t *worker_pool_expired(worker_pool_t *self, int64_t now_ms)
{
    for (worker_t *w = zhashx_first(self->workers); w; w = zhashx_next(self->workers)) {
        if (w->expiry_ms < now_ms)
            return w;
    }
    return NULL;
}

bool worker_pool_offers(const worker_t *w, const char *capability)
{
    if (!capability)
        return true;
    for (size_t i = 0; i < w->n_caps; i++) {
        if (strcmp(w->caps[i], capability) == 0)
            return true;
    }
    return false;
}

static bool s_has_arch(const worker_t *w, const char *arch)
{
    if (!arch || !*arch)
        return true;
    for (size_t i = 0; i < w->ready->n_gpus; i++) {
        const char *have = w->ready->gpus[i]->arch;
        if (have && strcmp(have, arch) == 0)
            return true;
    }
    return false;
}

/* Appends what collector `w` offers (its GPUs with their arch, its
 * capabilities, then ';') to `reason` from `used`; returns the new length, always < cap. */
static size_t s_offered(const worker_t *w, char *reason, size_t used, size_t cap)
{
    int n;
    for (size_t i = 0; i < w->ready->n_gpus && used + 1 < cap; i++) {
        n = snprintf(reason + used, cap - used, " %s (%s)", w->ready->gpus[i]->name,
                     w->ready->gpus[i]->arch ? w->ready->gpus[i]->arch : "?");
        used = n > 0 && used + (size_t) n < cap ? used + (size_t) n : cap - 1;
    }
    for (size_t i = 0; i < w->n_caps && used + 1 < cap; i++) {
        n = snprintf(reason + used, cap - used, " %s", w->caps[i]);
        used = n > 0 && used + (size_t) n < cap ? used + (size_t) n : cap - 1;
    }
    if (used + 2 < cap) {
        reason[used++] = ';';
        reason[used] = '\0';
    }
    return used;
}

bool worker_pool_can_serve(worker_pool_t *self, const char *arch, const char *capability, char *reason,
                           size_t cap)
{
    size_t used = 0;
    int n = snprintf(reason, cap, "no collector has a GPU of arch \"%s\" with profiler %s; offered:",
                     arch && *arch ? arch : "any", capability ? capability : "any");
    used = n > 0 && (size_t) n < cap ? (size_t) n : cap - 1;
    size_t collectors = 0;
    for (worker_t *w = zhashx_first(self->workers); w; w = zhashx_next(self->workers)) {
        if (w->role != PROFEED__WORKER_ROLE__WORKER_ROLE_COLLECTOR)
            continue;
        if (s_has_arch(w, arch) && worker_pool_offers(w, capability))
            return true;
        collectors++;
        used = s_offered(w, reason, used, cap);
    }
    if (collectors == 0)
        snprintf(reason, cap, "no collector is registered with the broker");
    return false;
}

bool worker_pool_set_held(worker_t *w, char *const *ids, size_t n)
{
    s_held_clear(w);
    if (n == 0)
        return true;
    w->held = calloc(n, sizeof *w->held);
    if (!w->held)
        return false;
    for (size_t i = 0; i < n; i++) {
        if (!(w->held[i] = strdup(ids[i]))) {
            s_held_clear(w);
            return false;
        }
        w->held_len++;
    }
    return true;
}

bool worker_pool_holds(const worker_t *w, const char *job_id)
{
    for (size_t i = 0; i < w->held_len; i++) {
        if (strcmp(w->held[i], job_id) == 0)
            return true;
    }
    return false;
}

void worker_pool_claim(worker_t *w)
{
    assert(w);
    w->busy++;
}

void worker_pool_release(worker_t *w)
{
    assert(w);
    if (w->busy > 0)
        w->busy--;
}

bool worker_pool_set_busy(worker_t *w, uint32_t busy)
{
    assert(w);
    bool freed = busy < w->busy;
    w->busy = busy;
    return freed;
}

void worker_pool_fill(worker_t *w)
{
    assert(w);
    w->busy = w->slots;
}

void worker_pool_heard(worker_t *w, int64_t now_ms, int64_t expiry_ms)
{
    assert(w);
    w->last_heard_ms = now_ms;
    w->expiry_ms = expiry_ms;
}

void worker_pool_unreachable(worker_t *w)
{
    assert(w);
    w->expiry_ms = 0;
}

static bool s_suits(Profeed__Language language, const char *capability);

/* Whether `w` offers a profiler for `language`. */
static bool s_offers_language(const worker_t *w, Profeed__Language language)
{
    if (language == PROFEED__LANGUAGE__LANGUAGE_UNSPECIFIED)
        return true;
    for (size_t i = 0; i < w->n_caps; i++)
        if (s_suits(language, w->caps[i]))
            return true;
    return false;
}

worker_t *worker_pool_pick_collector(worker_pool_t *self, const char *arch, const char *capability,
                                     Profeed__Language language, const char *avoid)
{
    worker_t *best = NULL, *avoided = NULL;
    for (worker_t *w = zhashx_first(self->workers); w; w = zhashx_next(self->workers)) {
        if (w->role != PROFEED__WORKER_ROLE__WORKER_ROLE_COLLECTOR || w->busy >= w->slots)
            continue;
        if (!s_has_arch(w, arch) || !worker_pool_offers(w, capability))
            continue;
        if (!capability && !s_offers_language(w, language))
            continue; /* the collector would pick a profiler for it and find none */
        if (avoid && strcmp(w->key, avoid) == 0) {
            avoided = w;
            continue;
        }
        /* Compare busy/slots without division: a/b < c/d <=> a*d < c*b. */
        if (!best || (uint64_t) w->busy * best->slots < (uint64_t) best->busy * w->slots)
            best = w;
    }
    return best ? best : avoided;
}

worker_t *worker_pool_pick_analyzer(worker_pool_t *self, const char *capability, bool chunks)
{
    worker_t *best = NULL;
    for (worker_t *w = zhashx_first(self->workers); w; w = zhashx_next(self->workers)) {
        if (w->role != PROFEED__WORKER_ROLE__WORKER_ROLE_ANALYZER || !worker_pool_offers(w, capability))
            continue;
        if (chunks && !w->ready->chunks)
            continue; /* an analyzer from before streamed passes (issue 20) */
        if (!best || (uint64_t) w->busy * best->slots < (uint64_t) best->busy * w->slots)
            best = w;
    }
    return best;
}

size_t worker_pool_size(worker_pool_t *self) { return zhashx_size(self->workers); }

size_t worker_pool_count(worker_pool_t *self, Profeed__WorkerRole role)
{
    size_t n = 0;
    for (worker_t *w = zhashx_first(self->workers); w; w = zhashx_next(self->workers))
        n += w->role == role;
    return n;
}
worker_t *worker_pool_first(worker_pool_t *self) { return zhashx_first(self->workers); }
worker_t *worker_pool_next(worker_pool_t *self) { return zhashx_next(self->workers); }

/* Whether a capability suits the language: the profiler table says which
 * profilers' output has an analysis for it (common/profiler.h), which the
 * analysis reads too. A capability the table does not know (a newer
 * collector's profiler) is not refused here. */
static bool s_suits(Profeed__Language language, const char *capability)
{
    const profiler_t *p = profiler_by_name(capability);
    return !p || profiler_serves(p, language);
}

/* "<language> (it needs <the table's profilers for it>)", for the refusal. */
static void s_language_needs(Profeed__Language language, char *out, size_t cap)
{
    const profiler_t *order[8];
    size_t n = profiler_for_language(language, order, sizeof order / sizeof order[0]);
    const char *name = profiler_language_name(language);
    if (!name || n == 0) {
        snprintf(out, cap, "this language");
        return;
    }
    int used = snprintf(out, cap, "%s (it needs", name);
    for (size_t i = 0; i < n && used > 0 && (size_t) used < cap; i++)
        used += snprintf(out + used, cap - (size_t) used, "%s%s", i == 0 ? " " : i + 1 == n ? " or " : ", ",
                         order[i]->name);
    if (used > 0 && (size_t) used < cap)
        snprintf(out + used, cap - (size_t) used, ")");
}

bool worker_pool_offers_language(worker_pool_t *self, Profeed__Language language, char *reason, size_t cap)
{
    char needs[128];
    s_language_needs(language, needs, sizeof needs);
    int n = snprintf(reason, cap, "no collector offers %s; offered:", needs);
    size_t used = n > 0 && (size_t) n < cap ? (size_t) n : cap - 1;
    size_t collectors = 0;
    for (worker_t *w = zhashx_first(self->workers); w; w = zhashx_next(self->workers)) {
        if (w->role != PROFEED__WORKER_ROLE__WORKER_ROLE_COLLECTOR)
            continue;
        collectors++;
        for (size_t i = 0; i < w->n_caps; i++) {
            if (s_suits(language, w->caps[i]))
                return true;
        }
        used = s_offered(w, reason, used, cap);
    }
    if (collectors == 0)
        snprintf(reason, cap, "no collector is registered with the broker");
    return false;
}
