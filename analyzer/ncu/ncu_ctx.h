/* ncu_ctx: what the analysis of one kernel knows while it runs, shared by the
 * bound (ncu_bound.c) and the cause models (ncu_causes.c). Private to
 * analyzer/ncu.
 *
 * Every finding carries an estimated gain: the share of the kernel's time the
 * change it names would save, from a model of its own (docs/ncu.md, "Models").
 * Findings are ranked by it; importance is the gain in percent. */
#ifndef NCU_CTX_H
#define NCU_CTX_H

#include <stdbool.h>
#include <stddef.h>

#include "feedback.h"
#include "ncu_kernel.h"
#include "ncu_rules.h"
#include "ncu_units.h"
#include "roofs.h"

/* NCU's SOLBottleneck rule (SpeedOfLight.py, Nsight Compute 2025.3.1): below
 * 60% of peak on every unit the kernel is latency-bound; a 10-point gap makes
 * one side dominant; 80% is high throughput. */
#define NCU_SOL_LATENCY 60.0
#define NCU_SOL_GAP 10.0
#define NCU_SOL_HIGH 80.0

/* At this share of the elapsed cycles or more, starting blocks is most of the
 * kernel's time (ncu_analyze.c, s_launch_share): the blocks are too short. */
#define NCU_LAUNCH_SHARE 0.7

/* A cause is worth a finding when it could save this share of the time. */
#define NCU_GAIN_REPORT 0.03

/* Whether a cause's finding claims the idle time of a latency-bound kernel:
 * its estimate, as ncu_ctx_finding left it (after the SMs' block launch floor
 * capped what a fix that keeps the grid can save), at least a fifth of the
 * time. The estimate before the cap does not count: corpus v52's layer norm
 * runs 4.2 M blocks at the launch floor, its barrier stalls (est. 0% after
 * the cap) had hidden the latency finding that carries the floor's lever, and
 * fewer, longer blocks ran 5.0x. */
#define NCU_EXPLAINS 0.2

/* The ADU pipe's utilization over the issue slots' from which its work is
 * constant-bank loads replayed one address at a time (ncu_causes.c,
 * s_constant_replays); under it, barriers and branches. */
#define NCU_ADU_REPLAY_RATIO 8.0
static inline bool ncu_ctx_explains(const fb_finding_t *f) { return f && f->speedup >= 100 * NCU_EXPLAINS; }

typedef struct {
    const ncu_kernel_t *k;
    const ncu_rule_shown_t *rules; /* k's rule results as shown (ncu_rules_show), k->rule_count of
                                      them; NULL: none */
    size_t index;          /* the kernel's index in the feedback */
    feedback_t *fb;
    double sm_clock_hz;    /* from the capture, else the device attribute; NAN */
    const roof_t *roof;    /* published peaks, or NULL */
    ncu_units_t units;     /* measured utilizations, busiest first */
    double busiest;        /* highest utilization measured (units, SM%, memory%); NAN */
    bool latency;          /* no memory level, pipe or ncu summary at NCU_SOL_LATENCY */
    const ncu_unit_t *latency_unit; /* the busiest unit that test counted (the issue slots
                               count through the SM summary where it was measured), or NULL */
    double idle;           /* share of elapsed time the SMs had no work, 0..1; NAN */
    double block_floor_cycles;   /* the fewest cycles between blocks an SM finishes (ncu_analyze.c,
                                    s_block_floor); NAN without a measured launch rate */
    double block_floor_resident; /* resident blocks behind it when their DRAM round trip sets it; NAN */
    double launch_share;   /* share of the elapsed cycles the SMs' block launch rate alone
                              accounts for (ncu_analyze.c, s_launch_share), 0..1; NAN */
    double stall_total;    /* cycles per issue over every stall reason; NAN */
    double atomic_floor;   /* share of the time the contended atomics take at the least
                              (ncu_atomics_floor); NAN where they do not contend */
    bool latency_explained; /* a cause model claimed the idle time of a latency-bound kernel
                               (ncu_ctx_explains) */
    const ncu_unit_t *bound; /* the unit the bound finding named, or NULL */
    double latency_speedup; /* the largest speedup a cause that adds warps or blocks estimates
                               (occupancy, launch size); 1 when none: the bound finding claims
                               only the headroom those leave, so one gain is not counted twice */
    const char *judged[16]; /* categories a model had the counters to judge */
    size_t judged_count;
} ncu_ctx_t;

/* Records that a model had what it needs to judge `category` (static string). */
static inline void ncu_ctx_judged(ncu_ctx_t *c, const char *category)
{
    if (c->judged_count < sizeof c->judged / sizeof c->judged[0])
        c->judged[c->judged_count++] = category;
}

static inline double ncu_ctx_v(const ncu_ctx_t *c, ncu_metric_t m) { return c->k->v[m]; }

/* A stall reason's share of the stall cycles, 0..1, or NAN when unmeasured. */
double ncu_ctx_stall_share(const ncu_ctx_t *c, ncu_metric_t stall);

/* The summed share of stall cycles of these reasons, at most 1; NAN when
 * none was measured. */
double ncu_ctx_stall_sum(const ncu_ctx_t *c, const ncu_metric_t *reasons, size_t n);

/* The share of stall cycles spent waiting on the memory system beyond L1:
 * results of global and local loads, stores draining at exit, the LSU queue
 * (long scoreboard, drain, LG throttle); NAN when none was measured. */
double ncu_ctx_memory_wait_share(const ncu_ctx_t *c);

/* The sectors the LSU's global and local loads and stores moved (those
 * measured; 0 where none was). */
double ncu_ctx_lsu_sectors(const ncu_ctx_t *c);

/* DRAM sectors (32 bytes) that the LSU's sectors cannot account for: each
 * LSU sector causes at most 64 bytes of DRAM traffic (a missed scattered
 * read's fetch granule, or a partly written sector's fill and write-back), so
 * DRAM bytes beyond that came another way: TMA bulk copies, texture fetches.
 * `reads` counts DRAM's reads alone, else reads and writes; 0 where DRAM was
 * not measured. Corpus v51: cuDNN's sm90 data-gradient kernels write one
 * sector through the LSU against 49 M DRAM sectors, and on the LSU counters
 * alone had been "Uncoalesced global stores ... 100% of the global sectors". */
double ncu_ctx_unseen_sectors(const ncu_ctx_t *c, bool reads);

/* Blocks that fit on one SM at once, from the occupancy limiters
 * (ncu_causes.c); NAN when none was measured. */
double ncu_ctx_blocks_per_sm(const ncu_ctx_t *c);

/* Whether the kernel is a DRAM stream below its roof: warps mostly wait on
 * memory, DRAM (10% or more) serves the requests, mostly global ones
 * (ncu_bound.c, where the DRAM bound's latency variant is decided). */
bool ncu_ctx_dram_stream(const ncu_ctx_t *c);

/* Whether the L1/shared pipe's traffic is mostly shared memory: its shared
 * wavefronts at least its global sectors, or, without wavefront counts, shared
 * memory allocated (ncu_bound.c: the "Shared-memory bound" reading of L1). */
bool ncu_ctx_shared_traffic(const ncu_ctx_t *c);

/* Adds a finding whose gain (0..1, the share of the kernel's time it would
 * save; NAN when no model applies) comes from `model`, a short name shown as
 * its source ("profeed:<model>"). Returns NULL when memory ran out. */
fb_finding_t *ncu_ctx_finding(ncu_ctx_t *c, const char *category, double gain, const char *model,
                              const char *title, const char *action);

/* Evidence for a percentage metric, if measured, clamped to 0..100. */
void ncu_ctx_pct(fb_finding_t *f, const ncu_ctx_t *c, ncu_metric_t m);

/* Adds the capture's missing-metric line. */
void ncu_ctx_missing(ncu_ctx_t *c, const char *what);

/* Runs every cause model (waste on the bound unit, idle SMs, parallelism,
 * contention, stalls); sets c->latency_explained. */
void ncu_causes_add(ncu_ctx_t *c);

/* The traffic causes (ncu_traffic.c: uncoalesced access, bank conflicts,
 * local memory), run by ncu_causes_add. */
void ncu_traffic_add(ncu_ctx_t *c);

/* The most a change that keeps the global load requests, each then touching
 * `after` sectors, can save (ncu_traffic.c's round-trip floor): the warps'
 * memory waits keep at least an idle round trip a request. NAN where the
 * floor does not apply; else *wait_p gets the stall cycles a request waits
 * now and *trip_p its idle round trip, in cycles. */
double ncu_traffic_floor_gain(const ncu_ctx_t *c, double after, double *wait_p, double *trip_p);

/* The shares of L1's and L2's work that would remain if the global loads were
 * coalesced (ncu_traffic.c's model: L1 keeps a wavefront a request, L2 sees the
 * waste beyond L1's hits); 1 and 1 when unmeasured. The reuse estimates of the
 * L1 and L2 bounds act on what coalescing leaves, its own finding estimating
 * the rest. */
void ncu_traffic_coalesced_keep(const ncu_ctx_t *c, double *l1, double *l2);

/* Thread efficiency (ncu_lanes.c: divergence, predicated-off lanes by pipe),
 * run by ncu_causes_add. */
void ncu_lanes_add(ncu_ctx_t *c);

/* Adds the bound finding: the unit that limits the kernel and its headroom,
 * or, when no unit is busy and no cause explained why, latency. */
void ncu_bound_add(ncu_ctx_t *c);

#endif
