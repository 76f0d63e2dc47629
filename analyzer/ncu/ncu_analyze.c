/* ncu_analyze: one kernel at a time, top-down (docs/ncu.md).
 *
 * 1. Measure how busy every unit was (ncu_units.c).
 * 2. Run every cause model (ncu_causes.c): each estimates the share of the
 *    kernel's time its fix would save.
 * 3. Name the bound (ncu_bound.c): the busiest unit and its headroom, or
 *    latency when nothing is busy and no cause explains why.
 * 4. Rank: the finding with the largest estimated gain is the primary one.
 * 5. Fold NCU's own rule results in (ncu_rules.c): as evidence on the finding
 *    they confirm, with their estimate quoted; rules profeed has no model for
 *    become findings of their own, ranked by NCU's estimate. */
#include "ncu_analyze.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis.h"
#include "close_call.h"
#include "ncu_advice.h"
#include "ncu_ctx.h"
#include "ncu_kernel.h"
#include "ncu_noise.h"
#include "ncu_rules.h"
#include "ncu_summary.h"
#include "ncu_atomics.h"
#include "roofs.h"


static void s_kernel_metrics(const ncu_ctx_t *c)
{
    static const ncu_metric_t keys[] = {
        NM_DURATION, NM_SM_PCT, NM_MEM_PCT, NM_DRAM_PCT, NM_L1_PCT, NM_L2_PCT, NM_L1_HIT, NM_L2_HIT,
        NM_OCC_THEORETICAL, NM_OCC_ACHIEVED, NM_REGISTERS, NM_WAVES, NM_WARP_CYCLES_PER_ISSUE,
        NM_LD_BYTES_PER_SECTOR, NM_ST_BYTES_PER_SECTOR, NM_BANK_CONFLICTS, NM_ISSUE_PCT,
        NM_THREADS_PER_WARP,
    };
    fb_kernel_t *kernel = feedback_kernel(c->fb, c->index);
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (analysis_has(c->k->v[keys[i]]))
            feedback_kernel_metric(kernel,
                                   keys[i] == NM_SM_PCT ? ncu_summary_sm_name(c->k) : ncu_metric_info(keys[i])->name,
                                   c->k->v[keys[i]]);
}

/* Cycles per issued instruction over every stall reason: the denominator of
 * each reason's share. With only a few reasons measured, ncu's own total. */
static double s_stall_total(const ncu_kernel_t *k)
{
    double sum = 0;
    int n = 0;
    for (int m = NM_STALL_FIRST; m < NM_STALL_END; m++)
        if (analysis_has(k->v[m])) {
            sum += k->v[m];
            n++;
        }
    double total = k->v[NM_WARP_CYCLES_PER_ISSUE];
    if (n >= 12 && sum > 0)
        return sum;
    if (analysis_has(total) && total > 0)
        return fmax(total, sum);
    return n > 0 && sum > 0 ? sum : NAN;
}

/* Whether DRAM serves most of the bytes the kernel loads: DRAM read half
 * its 32-byte load sectors or more. A capture without the sector counts (the
 * MemoryWorkloadAnalysis section without its tables) still has both caches'
 * hit rates: loads that mostly miss L1 and L2 alike come from DRAM (L2's rate
 * counts the stores' sectors too, which hit it, so a stream that writes as
 * much as it reads shows about 50% and is not taken: the test errs towards
 * the launch rate's lower floor). Corpus v15's block sums under the three
 * sections: 0.4% and 3.9% hits. */
#define NCU_MOSTLY_MISSED 50.0
static bool s_loads_from_dram(const ncu_ctx_t *c)
{
    double dram = c->k->v[NM_DRAM_READ], sectors = c->k->v[NM_SECTORS_GLOBAL_LD];
    if (analysis_has(dram) && analysis_has(sectors))
        return sectors > 0 && dram >= 0.5 * 32 * sectors;
    double l1 = c->k->v[NM_L1_HIT], l2 = c->k->v[NM_L2_HIT];
    return analysis_has(l1) && analysis_has(l2) && l1 < NCU_MOSTLY_MISSED && l2 < NCU_MOSTLY_MISSED;
}

/* An SM starts a block at most every roof->block_launch_cycles cycles,
 * whatever the block does (measured with blocks that do nothing: 160 cycles
 * on the H200 for 32 to 512 threads; 226 at 1024, for which the 512-thread
 * floor is used, understating the share). And it holds at most R blocks at
 * once (the occupancy limiters): blocks whose threads wait on DRAM live at
 * least roof->block_life_dram_cycles each (a one-float copy in 256-thread
 * blocks, 8 resident: 198 cycles a block, 1,584 a life), so such an SM gets
 * through at most R per life, whatever the block does with its data: Little's
 * law on the block slots. The floor is the larger of the two, the second
 * counted where DRAM serves most of the bytes loaded. A grid of G blocks on S
 * SMs takes at least G/S x the floor: the share of the elapsed cycles it
 * accounts for is time no fix that keeps the grid can save (corpus v15's
 * block sums: 3.4% left, their shuffle lever measured 3%; corpus v20's
 * stride-2 complex reads: 10% left, the plane of real parts measured 10%;
 * with the launch rate alone the caps were 22% and 27%). NAN without the
 * grid, the SM count, the elapsed cycles or a measured floor for the GPU. */
static double s_block_floor(const ncu_ctx_t *c, double *resident_out)
{
    double launch = c->roof ? c->roof->block_launch_cycles : 0;
    *resident_out = NAN;
    if (launch <= 0)
        return NAN;
    double resident = ncu_ctx_blocks_per_sm(c), life = c->roof->block_life_dram_cycles;
    if (life > 0 && analysis_has(resident) && resident > 0 && s_loads_from_dram(c) && life / resident > launch) {
        *resident_out = resident;
        return life / resident;
    }
    return launch;
}

static double s_launch_share(const ncu_ctx_t *c)
{
    double grid = c->k->v[NM_GRID_SIZE], sms = c->k->v[NM_SM_COUNT], elapsed = c->k->v[NM_ELAPSED_CYCLES];
    if (!analysis_has(grid) || !analysis_has(sms) || !analysis_has(elapsed) || sms <= 0 || elapsed <= 0 ||
        !analysis_has(c->block_floor_cycles))
        return NAN;
    return fmin(grid / sms * c->block_floor_cycles / elapsed, 1);
}

static void s_context(ncu_ctx_t *c)
{
    ncu_units_measure(c->k, c->roof ? c->roof->dram_scattered_pct : 0, &c->units);
    double busiest = c->units.count ? c->units.unit[0].pct : NAN;
    double sm = c->k->v[NM_SM_PCT], mem = c->k->v[NM_MEM_PCT];
    if (analysis_has(sm))
        busiest = analysis_has(busiest) ? fmax(busiest, fmin(sm, 100)) : fmin(sm, 100);
    if (analysis_has(mem))
        busiest = analysis_has(busiest) ? fmax(busiest, fmin(mem, 100)) : fmin(mem, 100);
    c->busiest = busiest;
    /* Latency: no memory level or pipe at 60%, and neither of ncu's summaries.
     * The issue slots count through the SM summary, over the elapsed cycles,
     * where ncu weighs them; their own counter is over active cycles, a few
     * points higher (corpus v14's 5x5 pool: issue 60.5% active, SM 58.9%,
     * L1 59.3%; 4 outputs per thread, a fifth of the loads, ran 1.09x).
     * DRAM reading scattered sectors counts against its own ceiling, as the
     * bound ranks it (s_ceiling): at 44% of peak it is 80% of the 55% such
     * reads reach, not idle (corpus v50's random rows, whose lever model had
     * switched with L2 crossing 60%; bench/sweep.py). */
    c->latency_unit = NULL; /* the units are sorted busiest first */
    for (size_t u = 0; u < c->units.count && !c->latency_unit; u++)
        if (strcmp(c->units.unit[u].key, "issue") != 0 || !analysis_has(sm))
            c->latency_unit = &c->units.unit[u];
    double latency_max = c->latency_unit ? c->latency_unit->pct : NAN;
    if (analysis_has(sm))
        latency_max = analysis_has(latency_max) ? fmax(latency_max, fmin(sm, 100)) : fmin(sm, 100);
    if (analysis_has(mem))
        latency_max = analysis_has(latency_max) ? fmax(latency_max, fmin(mem, 100)) : fmin(mem, 100);
    for (size_t u = 0; u < c->units.count; u++)
        if (c->units.unit[u].scattered && c->units.unit[u].attain > 0)
            latency_max = fmax(analysis_has(latency_max) ? latency_max : 0,
                               fmin(100 * c->units.unit[u].pct / c->units.unit[u].attain, 100));
    c->latency = analysis_has(latency_max) && latency_max < NCU_SOL_LATENCY;
    double active = c->k->v[NM_SM_ACTIVE_CYCLES], elapsed = c->k->v[NM_ELAPSED_CYCLES];
    c->idle = analysis_has(active) && analysis_has(elapsed) && elapsed > 0 ? fmin(fmax(1 - active / elapsed, 0), 1) : NAN;
    c->block_floor_cycles = s_block_floor(c, &c->block_floor_resident);
    c->launch_share = s_launch_share(c);
    c->stall_total = s_stall_total(c->k);
    c->atomic_floor = ncu_atomics_floor(c->k);
}

/* The finding with the largest estimated gain leads; on equal estimates the
 * first found, and the causes are found before the bound (s_analyze_kernel),
 * so a cause that accounts for all of the bound's headroom leads it: it names
 * what to change. Except that a cause
 * estimated under NCU_GAIN_LEAD does not displace the bound: such estimates are
 * within the models' own error (on tail_wave the equal-blocks tail model and
 * the measured idle time differ by 17 points), while the bound is a
 * measurement. */
#define NCU_GAIN_LEAD 0.10

/* A compute bound's headroom is what running its pipe or issue slots at the
 * attainable ceiling would buy, but its action is to do less work, and no
 * lever the finding names claims the headroom (a memory bound's does: more
 * bytes in flight, measured on corpus v7's v7_regbound, est. 21%, measured
 * 21%, and the agent loop's round 2, est. 1.63x, measured 1.49x). Divergence
 * is that action made specific, with a measured waste: at NCU_GAIN_LEAD or
 * more it leads over a compute bound even where the headroom is larger (corpus
 * v7's v7_divmem: 21 of 32 lanes active on a stream at 69% issue, est. 15%,
 * measured 14%, over a compute headroom of 27%). */
static bool s_refines_compute_bound(const fb_finding_t *divergence, const fb_finding_t *bound)
{
    return strcmp(bound->category, "compute_bound") == 0 && divergence->importance >= 100 * NCU_GAIN_LEAD;
}

/* Makes `f` the kernel's primary finding and names it the bottleneck. */
static void s_lead_with(ncu_ctx_t *c, fb_finding_t *f)
{
    f->primary = true;
    fb_kernel_t *kernel = feedback_kernel(c->fb, c->index);
    snprintf(kernel->bottleneck, sizeof kernel->bottleneck, "%s", f->category);
    snprintf(kernel->bottleneck_unit, sizeof kernel->bottleneck_unit, "%s", f->unit);
}

static void s_mark_primary(ncu_ctx_t *c, size_t first)
{
    fb_finding_t *best = NULL, *bound = NULL, *divergence = NULL;
    for (size_t i = first; i < feedback_finding_count(c->fb); i++) {
        fb_finding_t *f = feedback_finding_mut(c->fb, i);
        if (f->kernel != c->index)
            continue;
        if (strcmp(f->source, "profeed:headroom") == 0 || strcmp(f->source, "profeed:latency") == 0)
            bound = f;
        if (strcmp(f->category, "divergence") == 0)
            divergence = f;
        if (!best || f->importance > best->importance)
            best = f;
    }
    if (bound && best && best != bound && best->importance < 100 * NCU_GAIN_LEAD)
        best = bound;
    if (bound && best == bound && divergence && s_refines_compute_bound(divergence, bound))
        best = divergence;
    if (best)
        s_lead_with(c, best);
}

/* NCU's estimates never displace a bound profeed measured (docs/ncu.md, "NCU's
 * own rules"), with two exceptions where the capture lacks the counters
 * profeed's own models need (KernelFoundry's `--set detailed` page has no
 * sector counts by direction and no shared-memory wavefront counts) and NCU
 * counted a waste of its own (excessive global sectors or shared wavefronts,
 * idle lanes):
 * - a latency verdict names no cause: a waste that accounts for half the time
 *   or more is the cause of the latency, and leads (corpus v63's softmax a
 *   thread a row, latency-bound at L2 50%, where UncoalescedGlobalAccess counts
 *   88% of its sectors excessive; a warp a row ran 24x);
 * - a shared-memory bound names the unit, not what wastes it: conflict
 *   replays, counted by NCU as excessive wavefronts of that very pipe, are
 *   work its fix removes, and lead from a tenth of the time (corpus v64's
 *   tiled SGEMM, the L1/shared pipe 96% busy, a third of its wavefronts
 *   conflicts: padding ran 1.43x, NCU est. 31%).
 * A global-sector count does not displace a DRAM or L1 bound: sectors a
 * neighbour's load uses from L1 are "excessive" to NCU and cost DRAM nothing
 * (v64's 2x2 max pool: est. 43%, float2 loads ran 1.08x). */
#define NCU_RULE_NAMES_LATENCY 50.0

static bool s_rule_names_cause(const ncu_ctx_t *c, const fb_finding_t *primary, const fb_finding_t *rule)
{
    if (strncmp(primary->source, "profeed:latency", 15) == 0)
        return rule->speedup >= NCU_RULE_NAMES_LATENCY &&
               (strcmp(rule->category, "uncoalesced_access") == 0 || strcmp(rule->category, "bank_conflicts") == 0 ||
                strcmp(rule->category, "divergence") == 0);
    return strncmp(primary->source, "profeed:headroom", 16) == 0 && strcmp(primary->category, "l1_bound") == 0 &&
           ncu_ctx_shared_traffic(c) && strcmp(rule->category, "bank_conflicts") == 0 &&
           rule->speedup >= 100 * NCU_GAIN_LEAD && rule->speedup > primary->speedup;
}

static void s_rule_names_the_cause(ncu_ctx_t *c, size_t first)
{
    fb_finding_t *primary = NULL, *best = NULL;
    for (size_t i = first; i < feedback_finding_count(c->fb); i++) {
        fb_finding_t *f = feedback_finding_mut(c->fb, i);
        if (f->kernel == c->index && f->primary)
            primary = f;
    }
    if (!primary)
        return;
    for (size_t i = first; i < feedback_finding_count(c->fb); i++) {
        fb_finding_t *f = feedback_finding_mut(c->fb, i);
        if (f->kernel != c->index || strncmp(f->source, "ncu:", 4) != 0 || !analysis_has(f->speedup))
            continue;
        if (s_rule_names_cause(c, primary, f) && (!best || f->speedup > best->speedup))
            best = f;
    }
    if (!best)
        return;
    primary->primary = false;
    /* The page does not say which shared accesses replay: loads and stores a
     * layout conflicts, or atomics on few addresses (corpus v3's 4-bin
     * histogram: 91% of its wavefronts "excessive"), whose fix is not padding. */
    if (strcmp(best->category, "bank_conflicts") == 0)
        finding_set_action(best, ncu_advice_action("bank_conflicts_unsplit"));
    finding_add_evidence(best, best->source + 4, best->speedup, "%",
                         "NCU %s (est. global speedup %.0f%%) names the waste behind the %s: %s", best->source + 4,
                         best->speedup, strcmp(primary->category, "latency_bound") == 0 ? "latency" : "bound",
                         primary->title);
    s_lead_with(c, best);
}

static bool s_judged(const ncu_ctx_t *c, const char *category)
{
    for (size_t i = 0; i < c->judged_count; i++)
        if (strcmp(c->judged[i], category) == 0)
            return true;
    return false;
}

/* The causes that could refine this kernel's bound but could not be judged
 * for lack of counters: named, with what measures them, so a capture that
 * says less says why. */
static void s_unjudged(ncu_ctx_t *c)
{
    static const struct {
        const char *category, *what;
    } causes[] = {
        {"uncoalesced_access", "sector use (smsp__sass_average_data_bytes_per_sector_mem_global_op_ld/st."
                               "ratio): the core plan or --section MemoryWorkloadAnalysis_Tables"},
        {"bank_conflicts", "bank conflicts (l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld/st.sum): "
                           "the core plan or --section MemoryWorkloadAnalysis_Tables"},
        {"local_memory", "local-memory sectors (l1tex__t_sectors_pipe_lsu_mem_local_op_ld/st.sum): the core "
                         "plan or --section MemoryWorkloadAnalysis_Tables"},
        {"divergence", "thread efficiency (smsp__thread_inst_executed_per_inst_executed.ratio): the core plan "
                       "or --section WarpStateStats"},
        {"contention", "atomic traffic (smsp__inst_executed_op_global_red.sum, "
                       "l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum): the core plan"},
        {"warp_stall", "warp stall reasons (smsp__average_warps_issue_stalled_*): the core plan or --section "
                       "WarpStateStats"},
    };
    for (size_t i = 0; i < sizeof causes / sizeof causes[0]; i++)
        if (!s_judged(c, causes[i].category))
            ncu_ctx_missing(c, causes[i].what);
}

/* The kernel's ceiling (ceiling.h): the unit the memory bound named (DRAM
 * whose stream keeps L2 busy, ncu_bound.c), else the unit nearest what it
 * attains (DRAM reading scattered sectors at 52% of its peak is nearer its
 * 55% than L2 at 80% is to its 95%), or ncu's SM and memory throughput
 * summaries where they are higher, the same maximum the bound is judged on
 * (s_context). */
static void s_ceiling(const ncu_ctx_t *c)
{
    fb_kernel_t *kernel = feedback_kernel(c->fb, c->index);
    kernel->launch_sd_ns = c->k->duration_sd;
    kernel->launch_order = c->k->launch_order;
    snprintf(kernel->launch_ids, sizeof kernel->launch_ids, "%s", c->k->launch_ids);
    const char *name = NULL;
    double pct = NAN, attain = 100;
    if (c->bound) { /* DRAM whose traffic keeps L2 busy is the ceiling, not L2 */
        feedback_kernel_ceiling(kernel, c->bound->name, c->bound->pct, c->bound->attain);
        return;
    }
    for (size_t i = 0; i < c->units.count; i++) { /* the nearest its own ceiling */
        const ncu_unit_t *u = &c->units.unit[i];
        if (!name || u->pct / u->attain > pct / attain) {
            name = u->name;
            pct = u->pct;
            attain = u->attain;
        }
    }
    double sm = c->k->v[NM_SM_PCT], mem = c->k->v[NM_MEM_PCT];
    if (analysis_has(sm) && (!analysis_has(pct) || fmin(sm, 100) > pct)) {
        name = "SM throughput";
        pct = fmin(sm, 100);
        attain = NCU_ATTAIN_ONCHIP;
    }
    if (analysis_has(mem) && (!analysis_has(pct) || fmin(mem, 100) > pct)) {
        name = "memory throughput";
        pct = fmin(mem, 100);
        attain = NCU_ATTAIN_ONCHIP;
    }
    if (name)
        feedback_kernel_ceiling(kernel, name, pct, attain);
}

static void s_analyze_kernel(ncu_ctx_t *c)
{
    size_t first = feedback_finding_count(c->fb);
    s_context(c);
    s_kernel_metrics(c);
    ncu_causes_add(c);
    ncu_bound_add(c);
    s_unjudged(c);
    if (analysis_has(c->k->v[NM_OCC_ACHIEVED]) == false)
        ncu_ctx_missing(c, "occupancy (sm__warps_active, sm__maximum_warps_per_active_cycle_pct): "
                           "--section Occupancy");
    s_mark_primary(c, first);
    ncu_rules_merge(c->fb, c->index, c->rules, c->rules ? c->k->rule_count : 0, c->judged, c->judged_count);
    s_rule_names_the_cause(c, first);
    s_ceiling(c);
}

static ncu_ctx_t s_ctx(const ncu_kernel_t *k, const ncu_rule_shown_t *rules, size_t index, feedback_t *fb,
                       const roof_t *roof)
{
    ncu_ctx_t c = {.k = k, .rules = rules, .index = index, .fb = fb, .roof = roof, .latency_speedup = 1};
    c.sm_clock_hz = analysis_has(k->v[NM_SM_FREQ]) ? k->v[NM_SM_FREQ]
                    : analysis_has(k->v[NM_DEV_CLOCK_KHZ]) ? k->v[NM_DEV_CLOCK_KHZ] * 1e3 : NAN;
    return c;
}

/* One noisy reading of the kernel (ncu_noise.h), analyzed into `scratch`
 * for its close call (close_call.h). */
static void s_reanalyze(void *arg, unsigned reading, double sigma, feedback_t *scratch, size_t index)
{
    const ncu_ctx_t *c = arg;
    ncu_kernel_t noisy;
    ncu_noise_apply(c->k, reading, sigma, &noisy);
    ncu_ctx_t t = s_ctx(&noisy, c->rules, index, scratch, c->roof);
    s_analyze_kernel(&t);
}

json_t *ncu_analyze_collated(const ncu_data_t *data)
{
    json_t *launches = json_array();
    json_t *root = json_object();
    if (!launches || !root || json_object_set_new(root, "launches", launches) != 0) {
        json_decref(launches);
        json_decref(root);
        return NULL;
    }
    for (size_t i = 0; i < ncu_data_count(data); i++) {
        const ncu_launch_t *l = ncu_data_at_const(data, i);
        json_t *launch = json_object(), *metrics = json_object();
        if (!launch || !metrics || json_array_append_new(launches, launch) != 0) {
            json_decref(metrics);
            json_decref(root);
            return NULL;
        }
        json_object_set_new(launch, "id", json_integer(l->id));
        json_object_set_new(launch, "kernel", analysis_json_text(l->kernel));
        json_object_set_new(launch, "block", analysis_json_text(l->block));
        json_object_set_new(launch, "grid", analysis_json_text(l->grid));
        for (int m = 0; m < NM__COUNT; m++)
            if (analysis_has(l->v[m]))
                json_object_set_new(metrics, ncu_metric_info((ncu_metric_t) m)->name, json_real(l->v[m]));
        json_object_set_new(launch, "metrics", metrics);
        json_object_set_new(launch, "rule_results", json_integer((json_int_t) l->rule_count));
        if (l->raw)
            json_object_set(launch, "raw", l->raw);
    }
    if (ncu_data_raw_units(data))
        json_object_set(root, "raw_units", ncu_data_raw_units(data));
    return root;
}

static void s_status(const ncu_data_t *data, feedback_t *fb)
{
    size_t errors = ncu_data_message_count(data, NCU_MSG_ERROR);
    for (size_t i = 0; i < errors; i++)
        feedback_add_error(fb, "ncu: %s", ncu_data_message(data, NCU_MSG_ERROR, i));
    for (size_t i = 0; i < ncu_data_message_count(data, NCU_MSG_WARNING); i++)
        feedback_add_note(fb, "ncu warning: %s", ncu_data_message(data, NCU_MSG_WARNING, i));
    for (size_t i = 0; i < ncu_data_message_count(data, NCU_MSG_NOTE); i++)
        feedback_add_note(fb, "%s", ncu_data_message(data, NCU_MSG_NOTE, i));
    if (errors > 0)
        feedback_set_status(fb, FB_PROFILER_ERROR);
    else if (ncu_data_count(data) == 0)
        feedback_set_status(fb, FB_NO_KERNELS);
    else
        feedback_set_status(fb, FB_OK);
}

feedback_t *ncu_analyze(const ncu_data_t *data, const analysis_options_t *options,
                        const char *device_hint)
{
    assert(data && options);
    feedback_t *fb = feedback_new("ncu");
    if (!fb)
        return NULL;
    const char *device = ncu_data_device(data)[0] ? ncu_data_device(data) : device_hint;
    feedback_set_device(fb, device);
    s_status(data, fb);

    ncu_kernels_t *kernels = ncu_kernels_group(data);
    if (!kernels) {
        feedback_destroy(&fb);
        return NULL;
    }
    size_t total_kernels = ncu_kernels_count(kernels);
    double total_time = ncu_kernels_total_time(kernels);
    feedback_set_totals(fb, total_kernels, ncu_data_count(data), total_time);
    if (total_kernels > 0 && !analysis_has(total_time))
        feedback_add_note(fb, "no kernel duration was measured (gpu__time_duration.sum): kernels "
                              "are listed in launch order, not by their share of time");

    const roof_t *roof = roofs_lookup(device);
    size_t analyzed = 0, skipped = 0;
    double skipped_time = 0;
    for (size_t i = 0; i < total_kernels; i++) {
        const ncu_kernel_t *k = ncu_kernels_at(kernels, i);
        double share = analysis_has(total_time) && total_time > 0 && analysis_has(k->v[NM_DURATION])
                           ? k->v[NM_DURATION] / total_time : NAN;
        bool wanted = (analyzed == 0 && !options->min_share_strict) || !analysis_has(share) || share >= options->min_share;
        if (options->top > 0 && analyzed >= options->top)
            wanted = false;
        if (!wanted) {
            skipped++;
            if (analysis_has(k->v[NM_DURATION]))
                skipped_time += k->v[NM_DURATION];
            continue;
        }
        size_t index = feedback_add_kernel(fb, k->name, k->block, k->grid, k->launches,
                                           k->v[NM_DURATION], share);
        if (index == (size_t) -1)
            break;
        ncu_rule_shown_t *rules = ncu_rules_show(k->rules, k->rule_count);
        if (k->rule_count > 0 && !rules)
            feedback_add_note(fb, "memory ran out: NCU's rule results for %s were left out", k->name);
        ncu_ctx_t c = s_ctx(k, rules, index, fb, roof);
        size_t first = feedback_finding_count(fb);
        s_analyze_kernel(&c);
        close_call_judge(c.fb, c.index, first, s_reanalyze, &c);
        free(rules);
        analyzed++;
    }
    if (skipped > 0) {
        if (analysis_has(total_time) && total_time > 0)
            feedback_add_note(fb, "%zu more kernel%s (%.1f%% of profiled time) below the %.0f%% "
                                  "threshold%s were not analyzed", skipped, skipped == 1 ? "" : "s",
                              100 * skipped_time / total_time, 100 * options->min_share,
                              options->top ? " or past --top" : "");
        else
            feedback_add_note(fb, "%zu more kernels were not analyzed (--top)", skipped);
    }
    if (!roof && device && *device)
        feedback_add_note(fb, "no published peaks for \"%s\"; rooflines use the capture's own "
                              "peak metrics where present", device);
    ncu_kernels_destroy(&kernels);
    feedback_sort(fb);
    return fb;
}
