/* The broker's worker pool routes on the capability strings workers announce
 * (Ready.capabilities, issue 17), not on the profilers it knows: a job goes
 * to a collector, and its passes to an analyzer, that announces the string
 * the job's profiler stands for. A worker from before the strings announces
 * none, and its Ready.profilers stand for them. Each Ready here went through
 * the wire, packed and unpacked, as the broker receives it. */
#include "worker_pool.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "profiler.h"
#include "wire.h"

#define EXPIRY_MS 1000

typedef struct {
    Profeed__WorkerRole role;
    const char *worker_id;
    const char *arch;                 /* of its one GPU (collectors) */
    const char *caps[4];              /* Ready.capabilities, NULL-terminated */
    Profeed__Profiler profilers[4];   /* Ready.profilers, UNSPECIFIED-terminated */
    uint32_t slots;
} ready_t;

/* Registers the worker `r` describes under routing id `key`. */
static worker_t *s_register(worker_pool_t *pool, const char *key, const ready_t *r)
{
    Profeed__GpuCapability gpu;
    profeed__gpu_capability__init(&gpu);
    gpu.name = (char *) "NVIDIA H200";
    gpu.arch = (char *) r->arch;
    Profeed__GpuCapability *gpus[] = {&gpu};
    Profeed__Ready ready;
    profeed__ready__init(&ready);
    ready.has_role = 1;
    ready.role = r->role;
    ready.worker_id = (char *) r->worker_id;
    ready.host = (char *) "gpu-node-07";
    if (r->role == PROFEED__WORKER_ROLE__WORKER_ROLE_COLLECTOR) {
        ready.gpus = gpus;
        ready.n_gpus = 1;
    }
    Profeed__Profiler profilers[4];
    while (ready.n_profilers < 4 && r->profilers[ready.n_profilers])
        profilers[ready.n_profilers] = r->profilers[ready.n_profilers], ready.n_profilers++;
    ready.profilers = profilers;
    char *caps[4];
    while (ready.n_capabilities < 4 && r->caps[ready.n_capabilities])
        caps[ready.n_capabilities] = (char *) r->caps[ready.n_capabilities], ready.n_capabilities++;
    ready.capabilities = caps;
    ready.has_slots = 1;
    ready.slots = r->slots ? r->slots : 1;
    ready.has_chunks = ready.chunks = 1;
    Profeed__Envelope env;
    wire_envelope_init(&env);
    env.body_case = PROFEED__ENVELOPE__BODY_READY;
    env.ready = &ready;
    pf_error_t err;
    size_t size;
    uint8_t *bytes = wire_envelope_pack(&env, WIRE_MAX_MSG, &size, &err);
    cr_assert_not_null(bytes, "packing %s's Ready: %s", r->worker_id, err.msg);
    Profeed__Envelope *in = wire_envelope_unpack(bytes, size, WIRE_MAX_MSG, &err);
    free(bytes);
    cr_assert_not_null(in, "unpacking %s's Ready: %s", r->worker_id, err.msg);
    zframe_t *routing_id = zframe_new(key, strlen(key));
    char replaced[JOB_WORKER_KEY_LEN];
    worker_t *w = worker_pool_ready(pool, routing_id, key, &in, EXPIRY_MS, replaced, sizeof replaced);
    zframe_destroy(&routing_id);
    cr_assert_not_null(w);
    cr_assert_null(in, "the pool owns the Ready");
    return w;
}

static const ready_t s_ncu_collector = {
    PROFEED__WORKER_ROLE__WORKER_ROLE_COLLECTOR, "collector-h200", "sm_90", {"ncu"},
    {PROFEED__PROFILER__PROFILER_NCU}, 2};

/* A job that names no profiler leaves the choice to the collector, which
 * picks one for the job's language: a collector that offers none for it is
 * not given the job (it would fail it with "unknown profiler"), however
 * free it is. */
Test(worker_pool, a_job_without_a_profiler_goes_only_to_a_collector_of_its_language)
{
    worker_pool_t *pool = worker_pool_new();
    worker_t *c = s_register(pool, "c1", &s_ncu_collector);
    cr_expect_null(worker_pool_pick_collector(pool, NULL, NULL, PROFEED__LANGUAGE__LANGUAGE_SYCL, NULL));
    cr_expect_eq(worker_pool_pick_collector(pool, NULL, NULL, PROFEED__LANGUAGE__LANGUAGE_CUDA, NULL), c);
    static const ready_t intel = {PROFEED__WORKER_ROLE__WORKER_ROLE_COLLECTOR, "collector-b580", "xe2", {"unitrace"},
                                  {PROFEED__PROFILER__PROFILER_UNITRACE}, 1};
    worker_t *i = s_register(pool, "c2", &intel);
    cr_expect_eq(worker_pool_pick_collector(pool, NULL, NULL, PROFEED__LANGUAGE__LANGUAGE_SYCL, NULL), i);
    worker_pool_destroy(&pool);
}

Test(worker_pool, a_job_goes_to_the_collector_that_announces_its_profilers_capability)
{
    worker_pool_t *pool = worker_pool_new();
    worker_t *c = s_register(pool, "c1", &s_ncu_collector);
    const char *need = worker_pool_capability(PROFEED__PROFILER__PROFILER_NCU);
    cr_assert_str_eq(need, "ncu", "the profiler table's name is the string workers announce");
    cr_expect(worker_pool_offers(c, need));
    cr_expect_eq(worker_pool_pick_collector(pool, "sm_90", need, PROFEED__LANGUAGE__LANGUAGE_UNSPECIFIED, NULL), c);
    char reason[512] = "";
    cr_expect(worker_pool_can_serve(pool, "sm_90", need, reason, sizeof reason), "%s", reason);
    worker_pool_destroy(&pool);
}

Test(worker_pool, a_job_no_collector_announces_a_capability_for_is_refused_naming_what_is_offered)
{
    worker_pool_t *pool = worker_pool_new();
    s_register(pool, "c1", &s_ncu_collector);
    const char *need = worker_pool_capability(PROFEED__PROFILER__PROFILER_VTUNE);
    cr_expect_null(worker_pool_pick_collector(pool, NULL, need, PROFEED__LANGUAGE__LANGUAGE_UNSPECIFIED, NULL));
    char reason[512] = "";
    cr_assert_not(worker_pool_can_serve(pool, NULL, need, reason, sizeof reason));
    cr_expect_str_eq(reason,
                     "no collector has a GPU of arch \"any\" with profiler vtune; offered: NVIDIA H200 (sm_90) ncu;");
    /* An analyzer announcing it is no collector. */
    const ready_t analyzer = {PROFEED__WORKER_ROLE__WORKER_ROLE_ANALYZER, "analyzer-0", NULL, {"vtune"},
                              {PROFEED__PROFILER__PROFILER_VTUNE}, 4};
    worker_t *a = s_register(pool, "a1", &analyzer);
    cr_expect_null(worker_pool_pick_collector(pool, NULL, need, PROFEED__LANGUAGE__LANGUAGE_UNSPECIFIED, NULL));
    cr_expect_eq(worker_pool_pick_analyzer(pool, need, true), a);
    cr_expect_null(worker_pool_pick_analyzer(pool, worker_pool_capability(PROFEED__PROFILER__PROFILER_NCU), true));
    worker_pool_destroy(&pool);
}

Test(worker_pool, a_collector_announcing_several_capabilities_serves_each_of_them)
{
    worker_pool_t *pool = worker_pool_new();
    const ready_t intel = {PROFEED__WORKER_ROLE__WORKER_ROLE_COLLECTOR, "collector-b580", "xe2", {"unitrace", "vtune"},
                           {PROFEED__PROFILER__PROFILER_UNITRACE, PROFEED__PROFILER__PROFILER_VTUNE}, 1};
    worker_t *c = s_register(pool, "c1", &intel);
    s_register(pool, "c2", &s_ncu_collector);
    cr_expect_eq(worker_pool_pick_collector(pool, NULL, "unitrace", PROFEED__LANGUAGE__LANGUAGE_UNSPECIFIED, NULL), c);
    cr_expect_eq(worker_pool_pick_collector(pool, NULL, "vtune", PROFEED__LANGUAGE__LANGUAGE_UNSPECIFIED, NULL), c);
    cr_expect_neq(worker_pool_pick_collector(pool, NULL, "ncu", PROFEED__LANGUAGE__LANGUAGE_UNSPECIFIED, NULL), c);
    char reason[512] = "";
    cr_assert_not(worker_pool_can_serve(pool, "sm_90", "vtune", reason, sizeof reason));
    cr_expect(strstr(reason, "(xe2) unitrace vtune;"), "every capability is offered in the refusal: %s", reason);
    worker_pool_destroy(&pool);
}

Test(worker_pool, a_collector_from_before_capabilities_is_matched_by_its_profilers)
{
    worker_pool_t *pool = worker_pool_new();
    const ready_t old = {PROFEED__WORKER_ROLE__WORKER_ROLE_COLLECTOR, "collector-old", "sm_90", {NULL},
                         {PROFEED__PROFILER__PROFILER_NCU, PROFEED__PROFILER__PROFILER_UNITRACE}, 1};
    worker_t *c = s_register(pool, "c1", &old);
    cr_assert_eq(c->n_caps, 2, "its profilers stand for its capabilities");
    cr_expect_str_eq(c->caps[0], "ncu");
    cr_expect_str_eq(c->caps[1], "unitrace");
    cr_expect_eq(worker_pool_pick_collector(pool, NULL, worker_pool_capability(PROFEED__PROFILER__PROFILER_NCU),
                                            PROFEED__LANGUAGE__LANGUAGE_UNSPECIFIED, NULL),
                 c);
    cr_expect_eq(worker_pool_pick_collector(pool, NULL, worker_pool_capability(PROFEED__PROFILER__PROFILER_UNITRACE),
                                            PROFEED__LANGUAGE__LANGUAGE_UNSPECIFIED, NULL),
                 c);
    cr_expect_null(worker_pool_pick_collector(pool, NULL, worker_pool_capability(PROFEED__PROFILER__PROFILER_VTUNE),
                                              PROFEED__LANGUAGE__LANGUAGE_UNSPECIFIED, NULL));
    /* An old analyzer the same way. */
    const ready_t old_analyzer = {PROFEED__WORKER_ROLE__WORKER_ROLE_ANALYZER, "analyzer-old", NULL, {NULL},
                                  {PROFEED__PROFILER__PROFILER_NCU}, 4};
    worker_t *a = s_register(pool, "a1", &old_analyzer);
    cr_expect_eq(worker_pool_pick_analyzer(pool, "ncu", false), a);
    cr_expect_null(worker_pool_pick_analyzer(pool, "unitrace", false));
    worker_pool_destroy(&pool);
}

/* What is matched is the strings: announced, they stand instead of the
 * profilers (which old brokers read), and a string the broker has never
 * heard of (a profiler newer than it) is routed like any other. */
Test(worker_pool, announced_capabilities_are_what_is_matched_even_one_no_table_knows)
{
    worker_pool_t *pool = worker_pool_new();
    const ready_t newer = {PROFEED__WORKER_ROLE__WORKER_ROLE_COLLECTOR, "collector-mi300", "gfx942", {"rocprof"},
                           {PROFEED__PROFILER__PROFILER_NCU}, 1};
    worker_t *c = s_register(pool, "c1", &newer);
    cr_expect_eq(worker_pool_pick_collector(pool, "gfx942", "rocprof", PROFEED__LANGUAGE__LANGUAGE_UNSPECIFIED, NULL),
                 c);
    cr_expect_null(worker_pool_pick_collector(pool, NULL, "ncu", PROFEED__LANGUAGE__LANGUAGE_UNSPECIFIED, NULL),
                   "announced strings replace the profilers");
    cr_expect_not(worker_pool_offers(c, "rocprof2"), "exact strings, not prefixes");
    cr_expect_not(worker_pool_offers(c, "ROCPROF"), "exact strings, not case-folded");
    worker_pool_destroy(&pool);
}

Test(worker_pool, a_job_naming_no_profiler_needs_no_capability)
{
    worker_pool_t *pool = worker_pool_new();
    worker_t *c = s_register(pool, "c1", &s_ncu_collector);
    cr_expect_null(worker_pool_capability(PROFEED__PROFILER__PROFILER_UNSPECIFIED));
    cr_expect_null(worker_pool_capability(profiler_field(false, PROFEED__PROFILER__PROFILER_NCU)),
                   "an absent field names none, whatever its value");
    cr_expect(worker_pool_offers(c, NULL));
    cr_expect_eq(worker_pool_pick_collector(pool, "sm_90", NULL, PROFEED__LANGUAGE__LANGUAGE_UNSPECIFIED, NULL), c);
    /* The language still decides whether any collector suits the job. */
    char reason[512] = "";
    cr_expect(worker_pool_offers_language(pool, PROFEED__LANGUAGE__LANGUAGE_CUDA, reason, sizeof reason), "%s",
              reason);
    cr_expect_not(worker_pool_offers_language(pool, PROFEED__LANGUAGE__LANGUAGE_SYCL, reason, sizeof reason));
    cr_expect(strstr(reason, "no collector offers sycl (it needs unitrace or vtune); offered:"), "%s", reason);
    worker_pool_destroy(&pool);
}

/* The broker changes a worker's busy count only through the pool (issue 17
 * step 4). */
Test(worker_pool, busy_counts_change_through_the_pool_and_never_fall_below_zero)
{
    worker_pool_t *pool = worker_pool_new();
    worker_t *c = s_register(pool, "c1", &s_ncu_collector);
    worker_pool_claim(c);
    worker_pool_claim(c);
    cr_expect_eq(c->busy, 2);
    cr_expect_null(worker_pool_pick_collector(pool, NULL, "ncu", PROFEED__LANGUAGE__LANGUAGE_UNSPECIFIED, NULL),
                   "both slots are taken");
    worker_pool_release(c);
    cr_expect_eq(worker_pool_pick_collector(pool, NULL, "ncu", PROFEED__LANGUAGE__LANGUAGE_UNSPECIFIED, NULL), c);
    worker_pool_release(c);
    worker_pool_release(c);
    cr_expect_eq(c->busy, 0, "a release the report already counted out");
    worker_pool_fill(c);
    cr_expect_eq(c->busy, c->slots, "full by its own word");
    cr_expect(worker_pool_set_busy(c, 1), "its report frees a slot");
    cr_expect_not(worker_pool_set_busy(c, 2), "a report of more frees none");
    cr_expect_eq(c->busy, 2);
    worker_pool_heard(c, 500, 4000);
    cr_expect_eq(c->last_heard_ms, 500);
    cr_expect_null(worker_pool_expired(pool, 3999));
    worker_pool_unreachable(c);
    cr_expect_eq(worker_pool_expired(pool, 1), c, "unreachable: dead now");
    worker_pool_destroy(&pool);
}
