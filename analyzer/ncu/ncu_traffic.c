/* ncu_traffic: the causes that waste memory traffic, each with its
 * estimated gain: sectors fetched and not used (uncoalesced access),
 * shared-memory bank-conflict replays, and local memory (spills, or arrays
 * indexed at run time). What removing traffic saves is one model for all of
 * them (s_traffic_saved): the roofline, or Little's law when warps wait on
 * memory below every unit's ceiling. docs/ncu.md ("Models") gives each
 * formula and why it holds. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "analysis.h"
#include "ncu_advice.h"
#include "ncu_ctx.h"

#define SECTOR_BYTES 32.0

/* The tensor pipes' utilization (percent) from which a kernel's loads are
 * taken to feed them, and the least share of the busiest FP32/integer pipe it
 * must reach as well. On GH100 the tensor counters also count the shared FP16
 * datapath: kernels with no MMA instruction show 1%-10% there (corpus v7's
 * IMAD hash 10.5%, an eighth of its FMA heavy half; v18's warp-per-row SpMV
 * 1.5%), never over a tenth of that pipe, where every kernel that issues MMAs
 * is over half (v15's WMMA from global memory: 4.4%, 0.65 of its ALU pipe). */
#define NCU_TENSOR_FED 1.0
#define NCU_TENSOR_FED_SHARE 0.25

static double V(const ncu_ctx_t *c, ncu_metric_t m) { return ncu_ctx_v(c, m); }
static double s_or0(double x) { return analysis_has(x) ? x : 0; }

/* The share of the kernel's time the memory system is busy: the busiest
 * memory level's utilization. Traffic that a fix removes shortens that part. */
static double s_memory_busy(const ncu_ctx_t *c)
{
    const ncu_unit_t *m = ncu_units_busiest(&c->units, NCU_UNIT_MEMORY);
    if (m)
        return m->pct / 100;
    double mem = V(c, NM_MEM_PCT);
    return analysis_has(mem) ? fmin(mem, 100) / 100 : NAN;
}

/* Below this achieved occupancy (16 warps per SM of 64) each warp's own chain
 * of dependent requests sets the time, not the requests the SM can keep in
 * flight: a request of 32 sectors then takes about as long as one of 4
 * (kernels.cu's pointer_chase: 2 warps, each load waiting on the last). */
#define NCU_LITTLE_MIN_OCCUPANCY 25.0

/* The share of the stall cycles on memory from which a congested memory
 * system (see s_traffic_saved) is taken to set the kernel's time. */
#define NCU_STREAM_AFTER_WAIT 0.5

/* The round trip of a warp's load request through an idle memory system, in
 * SM cycles, by the sectors it touches: the GPU's roof entry where it was
 * measured (roof_t, bench/gpu/latency_probe.cu; the H200: from L2 300 cycles
 * for one sector, 305 for four, 355 for 32, from DRAM 690, 708 and 1134, the
 * last of 32 scattered sectors setting the time, each flat until its level's
 * bandwidth is nearly used up), NAN elsewhere. */
static double s_round_trip(const ncu_ctx_t *c, bool dram, double sectors)
{
    const roof_t *r = c->roof;
    double base = r ? (dram ? r->dram_trip_cycles : r->l2_trip_cycles) : 0;
    if (base <= 0)
        return NAN;
    return base + (dram ? r->dram_trip_cycles_per_sector : r->l2_trip_cycles_per_sector) * (fmax(sectors, 1) - 1);
}

/* What a load fix leaves of the warps' memory waits at the least: the
 * requests stay, only their sectors shrink (to `after` a request), and each
 * still costs a round trip of an idle system. The waits now are the long-
 * scoreboard stall cycles over the load requests. Only where the waits are
 * each request's own is that a bound. The counters do not say how many
 * requests a warp keeps in flight, so three signs stand for one at a time:
 * the warps wait on load results for most of their stall cycles (where they
 * also wait to issue loads, a full LSU queue, they issue several in a row:
 * corpus v46's eight gathers a thread, 34% long scoreboard and 28% LSU queue,
 * whose coalesced loads ran 5.4x where the floor said 1.3x); at least an L2
 * round trip a request (a warp with several in flight waits less a request);
 * and L1 serving under a fifth of the sectors (where it serves most, the
 * waits are L1's: corpus v9's and v18's thread-per-row sums, 86% hits, whose
 * coalesced reads ran 4.3x and 4.1x). The requests that still reach
 * DRAM are its read sectors in requests of the new size. Corpus v10's
 * L2-resident gather: 1417 cycles a request, 54% of the coalesced requests
 * from DRAM, 534 cycles at the floor: the waits keep 38%, where the sectors
 * kept alone say 27%. */
#define NCU_FLOOR_L1_HIT 20.0
#define NCU_FLOOR_LSB_SHARE 0.8
/* A request waiting a tenth less than an idle round trip still waits its own:
 * the stall counters move by a few percent between profiles and the round
 * trips are measured to about as much (corpus v41's pointer chase within L2:
 * 356 cycles a request against 355, which noise put either side). Read at
 * the round trip itself, the floor does not jump with the noise. */
#define NCU_FLOOR_TRIP_SLACK 0.9

typedef struct {
    double wait;       /* stall cycles a load request now */
    double after;      /* sectors a request after the fix */
    double dram_share; /* of the requests after the fix, those DRAM serves */
    double trip;       /* their round trip through an idle system, cycles */
    double keep;       /* trip / wait: NAN where the floor does not apply */
} s_floor_t;

static s_floor_t s_floor(const ncu_ctx_t *c, double after)
{
    s_floor_t fl = {.keep = NAN};
    double lsb = V(c, NM_STALL_LONG_SCOREBOARD), inst = V(c, NM_INST_EXECUTED), l1_hit = V(c, NM_L1_HIT);
    double req = V(c, NM_REQUESTS_GLOBAL_LD), sec = V(c, NM_SECTORS_GLOBAL_LD), rd = V(c, NM_DRAM_READ);
    double lsb_share = ncu_ctx_stall_share(c, NM_STALL_LONG_SCOREBOARD);
    if (!analysis_has(lsb) || !analysis_has(inst) || !analysis_has(req) || !analysis_has(sec) ||
        !analysis_has(rd) || !analysis_has(l1_hit) || !analysis_has(after) || !analysis_has(lsb_share) ||
        req <= 0 || sec <= 0 || l1_hit >= NCU_FLOOR_L1_HIT || lsb_share < NCU_FLOOR_LSB_SHARE)
        return fl;
    fl.wait = lsb * inst / req; /* issue-active cycles ~ instructions issued */
    double least = s_round_trip(c, false, sec / req);
    if (!analysis_has(least) || fl.wait < NCU_FLOOR_TRIP_SLACK * least)
        return fl;
    fl.wait = fmax(fl.wait, least); /* a hair under it is the counters' noise */
    fl.after = fmax(after, 1);
    fl.dram_share = fmin(rd / SECTOR_BYTES / fl.after / req, 1);
    fl.trip = fl.dram_share * s_round_trip(c, true, fl.after) + (1 - fl.dram_share) * s_round_trip(c, false, fl.after);
    fl.keep = fmin(fl.trip / fl.wait, 1);
    return fl;
}

/* The most a fix bounded by `fl` can save: the warps' memory waits keep at
 * least the floor's share of them. NAN where the floor does not apply. */
static double s_floor_saved(const ncu_ctx_t *c, const s_floor_t *fl)
{
    double wait = ncu_ctx_memory_wait_share(c);
    return analysis_has(fl->keep) && analysis_has(wait) ? wait * (1 - fl->keep) : NAN;
}

double ncu_traffic_floor_gain(const ncu_ctx_t *c, double after, double *wait_p, double *trip_p)
{
    s_floor_t fl = s_floor(c, after);
    double saved = s_floor_saved(c, &fl);
    if (analysis_has(saved)) {
        *wait_p = fl.wait;
        *trip_p = fl.trip;
    }
    return saved;
}

/* The share of the time a change that removes memory traffic saves, by the
 * better of two models (ncu_units_saved_or). The roofline: time follows the
 * unit nearest its ceiling. And Little's law, for a kernel whose warps wait on
 * memory with warps enough to fill the SM's requests in flight: each request
 * costs about the same latency, so the time spent waiting follows the number
 * of sectors requested beyond L1; a change that keeps a share of them (L2's,
 * and DRAM's for the L2 misses, weighted by the L2 hit rate) saves the rest
 * of the memory-wait share of the stall cycles, up to the next ceiling.
 *
 * Where the waste congests the memory system (`congested`: every partly
 * written sector a read-modify-write of its own in DRAM) with warps enough
 * to load it (the same occupancy as Little's law's) the latency is not
 * the same per request: each of the kernel's requests, the whole ones too,
 * queues behind the fills, so the waits are the congestion's and go with it.
 * The change then saves all but the time the busiest unit left needs at its
 * ceiling: the kernel streams what it uses.
 * *latency_model says which model gave the estimate. */
static double s_traffic_saved(const ncu_ctx_t *c, const ncu_relief_t *relief, bool congested, bool *latency_model)
{
    double wait = ncu_ctx_memory_wait_share(c), occupancy = V(c, NM_OCC_ACHIEVED);
    double little = NAN;
    bool loaded = analysis_has(wait) && analysis_has(occupancy) && occupancy >= NCU_LITTLE_MIN_OCCUPANCY;
    if (congested && loaded && wait >= NCU_STREAM_AFTER_WAIT) {
        /* The waste was the memory system's congestion, not a share of its
         * requests: without it the kernel streams, at the ceiling of the
         * busiest unit left (ncu_units_saved_or's cap). */
        little = 1;
    } else if (loaded) {
        /* The requests the waits are for: L2's where L2 serves them, DRAM's
         * where they miss it (a partly written sector's fill read is a DRAM
         * request L2 alone would not show). */
        double hit = V(c, NM_L2_HIT);
        hit = analysis_has(hit) ? fmin(fmax(hit, 0), 100) / 100 : 1;
        double keep = hit * fmin(fmax(relief->l2, 0), 1) + (1 - hit) * fmin(fmax(relief->dram, 0), 1);
        little = wait * (1 - keep);
    }
    return ncu_units_saved_or(&c->units, relief, little, latency_model);
}

/* Says why a traffic finding's estimate exceeds what the busiest unit's
 * utilization suggests: Little's law, or (congested) the read-modify-writes
 * of partly written sectors. */
static void s_latency_model_evidence(fb_finding_t *f, const ncu_ctx_t *c, bool congested)
{
    double wait = ncu_ctx_memory_wait_share(c);
    if (congested)
        finding_add_evidence(f, "model", 100 * wait, "%",
                             "warps wait on memory %.0f%% of their stall cycles, queued behind the partly "
                             "written sectors' read-modify-writes: written whole, the kernel streams what "
                             "it uses", 100 * wait);
    else
        finding_add_evidence(f, "model", 100 * wait, "%",
                             "warps wait on memory %.0f%% of their stall cycles: the time follows the "
                             "sectors requested (Little's law), not only the bandwidth used", 100 * wait);
}

/* ----- uncoalesced global access ------------------------------------------- */

/* The share of L1's work that coalescing removes. L1 returns a global load
 * request's sectors in wavefronts, at least one per request: where lanes share
 * a few addresses (a broadcast, or a row read a column at a time by a block
 * whose other warps and later iterations hit the rest of each sector) a
 * request of a few sectors takes one wavefront, and fewer sectors would not
 * take less (corpus v13's naive matmul: 2 sectors, 1.00 wavefront a request,
 * L1 99% busy; shared-memory tiles ran 1.49x faster, which is the L1 bound's
 * lever, not coalescing's; a thread per row, 32 sectors in 8.1 wavefronts,
 * is L1 time that coalescing removes). So L1 keeps at least one wavefront per
 * request: max(kept, 1 / wavefronts per request) of the loads' share. Fewer
 * wavefronts than requests is the two counters' run-to-run noise (they may
 * come from different replay passes), read as one a request. Without
 * request and wavefront counts, L1 is taken to scale with sectors. */
static double s_l1_waste(const ncu_ctx_t *c, bool load, double kept, double share)
{
    double req = V(c, NM_REQUESTS_GLOBAL_LD), wf = V(c, NM_WAVEFRONTS_GLOBAL_LD);
    if (load && analysis_has(req) && analysis_has(wf) && req > 0 && wf > 0)
        kept = fmax(kept, fmin(req / wf, 1));
    return (1 - kept) * share;
}

/* The share of the sectors coalescing keeps: the bytes used of each, and at
 * least one sector per active lane's access however it is laid out (with a
 * lanes active, at least 1/a: one thread chasing pointers has nothing to
 * coalesce). */
static double s_kept(const ncu_ctx_t *c, double bytes)
{
    double kept = bytes / SECTOR_BYTES, lanes = V(c, NM_THREADS_PER_WARP);
    if (analysis_has(lanes) && lanes >= 1)
        kept = fmax(kept, 1 / lanes);
    return kept;
}

/* L1's hit rate as a share, 0 when unmeasured. */
static double s_l1_hit(const ncu_ctx_t *c)
{
    double hit = V(c, NM_L1_HIT);
    return analysis_has(hit) ? fmin(fmax(hit, 0), 100) / 100 : 0;
}

/* The share of L2's sectors from the SMs that coalescing one side removes.
 * The unused bytes of a partly used sector are what later requests hit (the
 * next iteration's element, a neighbour's, a broadcast value read again), so
 * a load's waste reaches L2 only beyond L1's hits: corpus v14's 1x1
 * convolution wastes its sectors on weights every warp reads (one address, an
 * L1 hit) while its input loads, whole sectors, are the misses.
 *
 * Where every access of the side can be coalesced (`whole`), its L2 sectors,
 * its L1 sectors less L1's hits (stores write through: all of them), shrink to
 * the sectors its used bytes fill, `kept` of its L1 sectors, each fetched
 * once: the side keeps min(1, kept / (1 - hit)) of them, as a share of L2's
 * sectors. v63's softmax a thread a row (4 bytes of each sector on both sides,
 * 15% L1 hits: a warp's 32 lines times 64 warps thrash L1) keeps a seventh;
 * a warp a row ran 24x. But the counters do not tell a layout's stride from a
 * data-dependent gather, which no layout coalesces: v15's CSR SpMV a thread a
 * row, whose random reads of x are a third of its 4-byte loads, kept them when
 * a warp a row coalesced the rest (measured 1.33x, where the share of L2 said
 * 3.9x). So one side alone is priced by the smaller L1 share, the waste less
 * L1's hit rate (v15: 1.67x), and the L2 share is taken where loads and stores
 * both waste alike (s_both_waste): a thread's own rows, read and written. */
static double s_l2_waste(const ncu_ctx_t *c, bool load, double kept, double share, bool whole)
{
    double hit = load ? s_l1_hit(c) : 0; /* stores write through */
    double sec_ld = V(c, NM_SECTORS_GLOBAL_LD), sec_st = V(c, NM_SECTORS_GLOBAL_ST);
    if (!whole || !analysis_has(sec_ld) || !analysis_has(sec_st))
        return fmax(0, (1 - kept) * share - hit);
    /* L2 also serves what bypasses the LSU (TMA, texture) */
    double all = sec_ld * (1 - s_l1_hit(c)) + sec_st + ncu_ctx_unseen_sectors(c, false);
    double side = load ? sec_ld : sec_st;
    return all > 0 ? fmax(0, side * (1 - hit) - kept * side) / all : 0;
}

void ncu_traffic_coalesced_keep(const ncu_ctx_t *c, double *l1, double *l2)
{
    *l1 = *l2 = 1;
    double ld = V(c, NM_LD_BYTES_PER_SECTOR), sec_ld = V(c, NM_SECTORS_GLOBAL_LD), sec_st = V(c, NM_SECTORS_GLOBAL_ST);
    if (!analysis_has(ld) || ld <= 0 || ld >= SECTOR_BYTES || !analysis_has(sec_ld) || sec_ld <= 0)
        return;
    double kept = s_kept(c, ld), share = sec_ld / (sec_ld + s_or0(sec_st));
    *l1 = 1 - s_l1_waste(c, true, kept, share);
    *l2 = 1 - s_l2_waste(c, true, kept, share, false);
}

/* Partly written sectors congest DRAM when most of them were filled from it
 * and the fills and wasted write-backs are most of its traffic: each is a
 * read-modify-write of a row of its own, whose rate, not DRAM's bytes, sets
 * the time (corpus v7's 4-byte scatter: DRAM at 24% of its peak in bytes,
 * warps waiting on memory 77% of their stall cycles, the loads, coalesced,
 * among them; the identity permutation ran 17.5x). */
#define NCU_FILL_CONGESTS 0.5

/* Sectors fetched and not used are traffic a coalesced layout would not move,
 * but only at the levels the waste reaches: every wasted sector passes L1;
 * only L1 misses reach L2 (stores always do); and DRAM carries waste only
 * when it moves more than the kernel used (bytes read > sectors x bytes used:
 * when neighbouring requests use the rest of a sector, L2 serves it again and
 * DRAM reads it once). A store sector written in part also costs DRAM a read:
 * L2 fills it from DRAM before writing it back (HBM's ECC covers whole
 * sectors; corpus v7's v7_scatter, 4-byte stores to scattered sectors, read
 * 2.15 GB besides the 0.54 GB its loads needed): the reads the loads cannot
 * account for, even if each of their sectors missed L2, are the stores'
 * fills, at most a sector per store sector. Model: scale each level's work by
 * what the waste is of it; the gain is s_traffic_saved's. Wide vector
 * accesses (float2, float4) use whole sectors and score zero. */
typedef struct {
    bool latency_model; /* Little's law (or the congestion) priced it, not the roofline */
    bool congested;     /* the partly written sectors' read-modify-writes */
    bool floored;       /* the round-trip floor bounded it */
    s_floor_t floor;
} s_priced_t;

/* What coalescing one side (loads or stores) removes at each level, as shares
 * of that level's work. */
typedef struct {
    double l1, l2, dram; /* the shares of each level's work removed */
    double mem;          /* the side's waste as a share of the traffic (no unit table) */
    double excess_rd, excess_wr; /* the bytes DRAM moved that the side did not use */
    bool congested;      /* the partly written sectors' read-modify-writes */
} s_waste_t;

static s_waste_t s_side_waste(const ncu_ctx_t *c, bool load, double bytes, double share, double sectors,
                              double load_sectors, bool whole)
{
    double kept = s_kept(c, bytes);
    s_waste_t w = {.l1 = s_l1_waste(c, load, kept, share), .l2 = s_l2_waste(c, load, kept, share, whole),
                   .mem = (1 - kept) * share};
    double rd = V(c, NM_DRAM_READ), wr = V(c, NM_DRAM_WRITE);
    w.dram = w.l2;
    if (analysis_has(rd) && analysis_has(wr) && rd + wr > 0 && analysis_has(sectors)) {
        double used = sectors * bytes, excess, excess_fill = 0;
        if (load) {
            /* L2 fetches 64 bytes for each scattered sector it misses (ncu_units.h):
             * of what DRAM read, the loads used at least bytes / 64. */
            const ncu_unit_t *dram = ncu_units_find(&c->units, "dram");
            double granule = dram && dram->scattered ? 2 * SECTOR_BYTES : SECTOR_BYTES;
            /* ... and no more than the 64 bytes a missed sector can cost
             * (ncu_ctx_unseen_sectors): DRAM's other reads are someone else's. */
            excess = fmin(fmin(fmax(0, rd - used), rd * (1 - bytes / granule)), sectors * 2 * SECTOR_BYTES - used);
            w.excess_rd = excess;
        } else {
            excess_fill = analysis_has(load_sectors)
                              ? fmin(fmax(0, rd - load_sectors * SECTOR_BYTES), sectors * SECTOR_BYTES)
                              : 0;
            /* A side wastes no more than the sectors it moves: DRAM's other
             * writes are someone else's (ncu_ctx_unseen_sectors). */
            w.excess_wr = fmin(fmin(fmax(0, wr - used), wr * (1 - bytes / SECTOR_BYTES)), sectors * SECTOR_BYTES - used);
            w.excess_rd = excess_fill;
            excess = w.excess_wr + excess_fill;
        }
        w.dram = fmin(excess / (rd + wr), 1);
        w.congested = !load && excess_fill >= NCU_FILL_CONGESTS * sectors * SECTOR_BYTES &&
                      w.dram >= NCU_FILL_CONGESTS;
    }
    return w;
}

/* The share of the time removing `w` saves, and how it was priced. `floor_after`
 * is the sectors a load request keeps (the round-trip floor, s_floor): NAN
 * where the requests are not the loads'. */
static double s_waste_gain(const ncu_ctx_t *c, const s_waste_t *w, double floor_after, s_priced_t *how)
{
    ncu_relief_t relief = {.l1 = 1 - fmin(w->l1, 1), .l2 = 1 - fmin(w->l2, 1), .dram = 1 - fmin(w->dram, 1),
                           .compute = 1};
    how->floor = analysis_has(floor_after) ? s_floor(c, floor_after) : (s_floor_t){.keep = NAN};
    double gain = s_traffic_saved(c, &relief, w->congested, &how->latency_model);
    how->congested = w->congested && how->latency_model;
    /* Whichever model priced it, no request waits less than a round trip: the
     * warps' memory waits keep at least the floor's share of them (s_floor). */
    double floor = s_floor_saved(c, &how->floor);
    how->floored = analysis_has(gain) && analysis_has(floor) && gain > floor;
    if (how->floored)
        gain = floor;
    if (!analysis_has(gain)) /* no unit table: the memory summary alone */
        gain = analysis_has(V(c, NM_MEM_PCT)) ? fmin(w->mem, 1) * fmin(V(c, NM_MEM_PCT), 100) / 100 : NAN;
    return gain;
}

/* The sectors a load request keeps once coalesced (`kept` of them); the
 * requests themselves stay. NAN without the counts. */
static double s_load_floor_after(const ncu_ctx_t *c, double bytes, double sectors)
{
    double req = V(c, NM_REQUESTS_GLOBAL_LD);
    return analysis_has(sectors) && analysis_has(req) && req > 0 ? sectors / req * s_kept(c, bytes) : NAN;
}

static double s_uncoalesced_gain(const ncu_ctx_t *c, bool load, double bytes, double share,
                                 double sectors, double load_sectors, s_priced_t *how)
{
    s_waste_t w = s_side_waste(c, load, bytes, share, sectors, load_sectors, false);
    /* Whole-sector stores leave the loads' requests as they are: where the
     * warps wait on those, the waits shrink at most to their idle round trip
     * (corpus v57's strided stores from half the SMs: DRAM 53%, a load
     * waiting 943 cycles against 732 idle; packed stores ran 1.14x, where
     * "the kernel streams what it uses" said 3.3x). */
    double req = V(c, NM_REQUESTS_GLOBAL_LD);
    double after = load                                                       ? s_load_floor_after(c, bytes, sectors)
                   : analysis_has(load_sectors) && analysis_has(req) && req > 0 ? load_sectors / req
                                                                                : NAN;
    return s_waste_gain(c, &w, after, how);
}

/* Loads and stores that both waste most of each sector are most often one
 * indexing (a thread a row reading and writing its row: corpus v63's softmax,
 * 4 bytes of each sector on both sides) that one change coalesces: their
 * wastes add at L1 and L2; DRAM's excess reads are the loads' (which already
 * count the stores' fill reads, DRAM's reads beyond what the loads used) or
 * the fills', whichever is larger, and its excess writes the stores'. */
#define NCU_BOTH_SHARE 0.20

static s_waste_t s_both_waste(const ncu_ctx_t *c, const s_waste_t *ld, const s_waste_t *st)
{
    s_waste_t w = {.l1 = ld->l1 + st->l1, .l2 = ld->l2 + st->l2, .mem = ld->mem + st->mem,
                   .congested = st->congested};
    double rd = V(c, NM_DRAM_READ), wr = V(c, NM_DRAM_WRITE);
    w.dram = analysis_has(rd) && analysis_has(wr) && rd + wr > 0
                 ? (fmax(ld->excess_rd, st->excess_rd) + st->excess_wr) / (rd + wr)
                 : ld->dram + st->dram;
    return w;
}

static void s_uncoalesced(ncu_ctx_t *c)
{
    double ld = V(c, NM_LD_BYTES_PER_SECTOR), st = V(c, NM_ST_BYTES_PER_SECTOR);
    if (!analysis_has(ld) && analysis_has(V(c, NM_LD_SECTOR_PCT)))
        ld = V(c, NM_LD_SECTOR_PCT) / 100 * SECTOR_BYTES;
    double sec_ld = V(c, NM_SECTORS_GLOBAL_LD), sec_st = V(c, NM_SECTORS_GLOBAL_ST);
    bool shares = analysis_has(sec_ld) && analysis_has(sec_st) && sec_ld + sec_st > 0;
    double all = s_or0(sec_ld) + s_or0(sec_st) + ncu_ctx_unseen_sectors(c, false);
    struct {
        const char *side, *metric;
        double bytes, share, sectors;
    } sides[2] = {
        {"loads", "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio", ld,
         shares ? sec_ld / all : NAN, sec_ld},
        {"stores", "smsp__sass_average_data_bytes_per_sector_mem_global_op_st.ratio", st,
         shares ? sec_st / all : NAN, sec_st},
    };
    if (analysis_has(ld) || analysis_has(st))
        ncu_ctx_judged(c, "uncoalesced_access");
    int best = -1;
    double best_gain = 0;
    s_priced_t best_how = {0};
    for (int i = 0; i < 2; i++) {
        double b = sides[i].bytes;
        if (!analysis_has(b) || b <= 0 || b >= SECTOR_BYTES)
            continue; /* zero: no such access */
        /* Without sector counts the side's share of traffic is unknown: only a
         * gross waste (under half of each sector) is judged, as if it were all
         * of the traffic, and the finding says so. */
        double share = sides[i].share;
        if (!analysis_has(share)) {
            if (b >= SECTOR_BYTES / 2)
                continue;
            share = 1;
        }
        s_priced_t how;
        double gain = s_uncoalesced_gain(c, i == 0, b, share, sides[i].sectors, sec_ld, &how);
        if (analysis_has(gain) && gain > best_gain) {
            best_gain = gain;
            best = i;
            best_how = how;
        }
    }
    /* Both sides under half of each sector, each a fifth of the sectors or
     * more: the change that coalesces one most often coalesces both
     * (s_both_waste). A warp's one-lane store of its row's result (4 bytes a
     * sector) is no part of the loads' layout: v18's SpMV a warp a row of 1-7
     * nonzeros, stores 10% of its sectors. */
    bool both = false;
    if (analysis_has(sides[0].share) && analysis_has(sides[1].share) && sides[0].share >= NCU_BOTH_SHARE &&
        sides[1].share >= NCU_BOTH_SHARE && analysis_has(ld) && analysis_has(st) && ld > 0 &&
        ld < SECTOR_BYTES / 2 && st > 0 && st < SECTOR_BYTES / 2) {
        s_waste_t wl = s_side_waste(c, true, ld, sides[0].share, sec_ld, sec_ld, true);
        s_waste_t ws = s_side_waste(c, false, st, sides[1].share, sec_st, sec_ld, true);
        s_waste_t w = s_both_waste(c, &wl, &ws);
        s_priced_t how;
        double gain = s_waste_gain(c, &w, s_load_floor_after(c, ld, sec_ld), &how);
        if (analysis_has(gain) && gain > best_gain) {
            best_gain = gain;
            best = 0;
            best_how = how;
            both = true;
        }
    }
    if (best < 0 || best_gain < NCU_GAIN_REPORT)
        return;
    char title[320];
    double b = sides[best].bytes;
    /* At least 24 of 32 bytes used: most sectors are used whole, as when a
     * warp's 128 bytes start off a 32-byte boundary (5 sectors for 4: 25.6
     * bytes each; corpus v11's 64-tap sliding window, 26.3), skip small gaps,
     * or a few narrow loads sit among whole-sector ones (v11's CAS loop reads
     * one float per warp beside a coalesced stream: 26.4 on average). Strided
     * and scattered layouts use half a sector or less. Swapping index roles is
     * no fix there; aligning, reusing loads or loading once per warp is. */
    bool nearly = b >= 24;
    const char *kind = nearly ? " (mostly whole sectors)" : "";
    if (both)
        snprintf(title, sizeof title,
                 "Uncoalesced global loads and stores: %.1f and %.1f of every 32 bytes fetched are used, and "
                 "they are %.0f%% of the %s sectors", ld, st, 100 * (sides[0].share + sides[1].share),
                 all > s_or0(sec_ld) + s_or0(sec_st) ? "kernel's memory" : "global");
    else if (analysis_has(sides[best].share))
        snprintf(title, sizeof title,
                 "Uncoalesced global %s%s: %.1f of every 32 bytes fetched are used, and %s are %.0f%% "
                 "of the %s sectors", sides[best].side, kind, b, sides[best].side, 100 * sides[best].share,
                 all > s_or0(sec_ld) + s_or0(sec_st) ? "kernel's memory" : "global");
    else
        snprintf(title, sizeof title,
                 "Uncoalesced global %s%s: %.1f of every 32 bytes fetched are used, so the memory "
                 "system moves %.1fx the data the kernel uses", sides[best].side, kind, b, SECTOR_BYTES / b);
    /* Loads that feed tensor cores (the MMA pipes measurably busy) are fragment
     * loads: their layout is the MMA's, so the lever is a shared-memory stage,
     * not swapped indices (corpus v15's WMMA fed from global memory: 4-byte
     * loads over 8 sectors a request; 64x64 shared-memory tiles ran 2.87x). */
    double tensor = fmax(s_or0(V(c, NM_PIPE_TENSOR)), s_or0(V(c, NM_PIPE_HMMA)));
    double math = fmax(fmax(s_or0(V(c, NM_PIPE_FMA)), s_or0(V(c, NM_PIPE_FMAHEAVY))), s_or0(V(c, NM_PIPE_ALU)));
    bool fed = tensor >= NCU_TENSOR_FED && tensor >= NCU_TENSOR_FED_SHARE * math;
    /* Loads whose lanes each take a sector of their own (16 or more sectors a
     * request) with L1 hitting under a fifth of them: nothing nearby is read
     * later, so the waste is a stride's or a scatter's, and the action gives
     * the lever of each. */
    double req = V(c, NM_REQUESTS_GLOBAL_LD), hit = V(c, NM_L1_HIT);
    bool scattered = best == 0 && analysis_has(req) && req > 0 && analysis_has(sec_ld) && sec_ld / req >= 16 &&
                     analysis_has(hit) && hit < 20;
    const char *advice = nearly               ? "uncoalesced_misaligned"
                         : best == 0 && fed   ? "uncoalesced_fragments"
                         : scattered          ? "uncoalesced_scattered"
                         : best_how.congested ? "uncoalesced_partial_stores"
                                              : "uncoalesced_access";
    fb_finding_t *f = ncu_ctx_finding(c, "uncoalesced_access", best_gain, "sectors", title,
                                      ncu_advice_action(advice));
    if (!f)
        return;
    finding_add_evidence(f, sides[best].metric, b, "byte/sector", "%s use %.1f of 32 bytes per sector",
                         sides[best].side, b);
    if (both)
        finding_add_evidence(f, sides[1].metric, st, "byte/sector", "stores use %.1f of 32 bytes per sector", st);
    if (analysis_has(sides[best].share))
        finding_add_evidence(f, best == 0 ? "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
                                          : "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
                             sides[best].sectors, "sector", "%.3g %s sectors of %.3g global sectors%s",
                             sides[best].sectors, best == 0 ? "load" : "store", sec_ld + sec_st,
                             all > sec_ld + sec_st ? " (DRAM moved more than the LSU's sectors account for: "
                                                     "TMA or texture traffic)" : "");
    else
        ncu_ctx_missing(c, "global sectors by direction (l1tex__t_sectors_pipe_lsu_mem_global_op_ld/"
                           "st.sum): the core plan or --section MemoryWorkloadAnalysis_Tables");
    /* The fill reads and the model first: the text shows the first few. */
    if (best == 1 && analysis_has(V(c, NM_DRAM_READ)) && analysis_has(sec_ld) &&
        V(c, NM_DRAM_READ) > sec_ld * SECTOR_BYTES * 1.5)
        finding_add_evidence(f, "dram__bytes_read.sum", V(c, NM_DRAM_READ), "byte",
                             "DRAM read %.3g bytes where the loads need at most %.3g: partly written "
                             "sectors are read before they are written back", V(c, NM_DRAM_READ),
                             sec_ld * SECTOR_BYTES);
    if (best_how.floored)
        finding_add_evidence(f, "model", 100 * best_how.floor.keep, "%",
                             "a load request waits %.0f cycles; %s (%.1f sectors, %.0f%% of requests "
                             "from DRAM) it still takes an idle round trip of %.0f cycles: the waits keep at "
                             "least %.0f%%",
                             best_how.floor.wait, best == 0 ? "coalesced" : "with whole-sector stores",
                             best_how.floor.after, 100 * best_how.floor.dram_share, best_how.floor.trip,
                             100 * best_how.floor.keep);
    else if (best_how.latency_model)
        s_latency_model_evidence(f, c, best_how.congested);
    ncu_ctx_pct(f, c, NM_L2_PCT);
    ncu_ctx_pct(f, c, NM_DRAM_PCT);
    ncu_ctx_pct(f, c, NM_L1_PCT);
    /* The latency a cause explains is not left to the latency-bound finding. */
    c->latency_explained = c->latency_explained || ncu_ctx_explains(f);
    if (analysis_has(V(c, NM_L1_HIT)) && best == 0)
        finding_add_evidence(f, ncu_metric_info(NM_L1_HIT)->name, fmin(V(c, NM_L1_HIT), 100), "%",
                             "L1 hit rate %.1f%%", fmin(V(c, NM_L1_HIT), 100));
}

/* ----- shared-memory bank conflicts --------------------------------------- */

/* A conflict replays a shared-memory wavefront. Model: the L1/shared pipe's
 * work shrinks by replays / wavefronts x shared memory's share of its traffic
 * (wavefronts against global and local sectors); the gain is how far the
 * busiest unit drops. */
static void s_bank_conflicts(ncu_ctx_t *c)
{
    double ld = V(c, NM_BANK_CONFLICTS_LD), st = V(c, NM_BANK_CONFLICTS_ST);
    double conflicts = analysis_has(ld) || analysis_has(st) ? s_or0(ld) + s_or0(st) : V(c, NM_BANK_CONFLICTS);
    double wld = V(c, NM_SHARED_WAVEFRONTS_LD), wst = V(c, NM_SHARED_WAVEFRONTS_ST);
    double wavefronts = analysis_has(wld) || analysis_has(wst) ? s_or0(wld) + s_or0(wst) : V(c, NM_SHARED_WAVEFRONTS);
    double l1 = V(c, NM_L1_PCT);
    if (!analysis_has(conflicts) || !analysis_has(l1) || c->units.count == 0)
        return;
    ncu_ctx_judged(c, "bank_conflicts");
    if (conflicts <= 0)
        return;
    double rate;
    if (analysis_has(wavefronts) && wavefronts > 0) {
        rate = fmin(conflicts / wavefronts, 1);
    } else {
        /* Without wavefront counts: each replay holds the SM's shared-memory
         * data path for a cycle, so replays per SM cycle are its share. */
        double t = V(c, NM_DURATION), sms = V(c, NM_SM_COUNT);
        if (!analysis_has(t) || !analysis_has(sms) || !analysis_has(c->sm_clock_hz) || t <= 0)
            return;
        rate = fmin(conflicts / (t * 1e-9 * c->sm_clock_hz * sms), 1);
        wavefronts = NAN;
    }
    double other = s_or0(V(c, NM_SECTORS_GLOBAL_LD)) + s_or0(V(c, NM_SECTORS_GLOBAL_ST)) +
                   s_or0(V(c, NM_SECTORS_LOCAL_LD)) + s_or0(V(c, NM_SECTORS_LOCAL_ST));
    double shared_share = analysis_has(wavefronts) ? wavefronts / (wavefronts + other) : 1;
    ncu_relief_t relief = {.l1 = 1 - rate * shared_share, .l2 = 1, .dram = 1, .compute = 1};
    double gain = ncu_units_saved(&c->units, &relief);
    if (!analysis_has(gain) || gain < NCU_GAIN_REPORT)
        return;
    char title[300];
    if (analysis_has(wavefronts))
        snprintf(title, sizeof title,
                 "Shared-memory bank conflicts: %.0f%% of shared-memory wavefronts are conflict replays "
                 "(%.1f-way on average), on an L1/shared pipe %.0f%% busy", 100 * rate,
                 rate < 0.97 ? 1 / (1 - rate) : 32.0, fmin(l1, 100));
    else
        snprintf(title, sizeof title,
                 "Shared-memory bank conflicts: replays take %.0f%% of the SMs' cycles on an L1/shared "
                 "pipe %.0f%% busy", 100 * rate, fmin(l1, 100));
    fb_finding_t *f = ncu_ctx_finding(c, "bank_conflicts", gain, "replays", title,
                                      ncu_advice_action("bank_conflicts"));
    if (!f)
        return;
    finding_add_evidence(f, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum", conflicts, "",
                         "%.3g bank conflicts, %.2f per %s", conflicts, rate,
                         analysis_has(wavefronts) ? "shared-memory wavefront" : "SM cycle");
    ncu_ctx_pct(f, c, NM_L1_PCT);
}

/* ----- local memory ---------------------------------------------------------- */

/* Local memory is per-thread global memory: register spills, or a private
 * array indexed at run time (or too large for registers). Model: kept in
 * registers, its sectors leave L1 and L2 (local / (local + global) of their
 * traffic), and DRAM keeps no more than the global sectors could need; the
 * gain is how far the busiest unit drops. */
static void s_local_memory(ncu_ctx_t *c)
{
    double lld = V(c, NM_SECTORS_LOCAL_LD), lst = V(c, NM_SECTORS_LOCAL_ST);
    double spills = V(c, NM_SPILL_INST), spill_req = V(c, NM_SPILL_REQUESTS);
    if (!analysis_has(lld) && !analysis_has(lst)) {
        /* Without sector counts, a measured spill is still worth saying. */
        double n = analysis_has(spill_req) ? spill_req : spills;
        if (analysis_has(n) && n > 0) {
            char title[200];
            snprintf(title, sizeof title, "Register spills: %.0f local-memory spill %s", n,
                     analysis_has(spill_req) ? "requests" : "instructions");
            fb_finding_t *f = ncu_ctx_finding(c, "register_spill", NAN, "none", title,
                                              ncu_advice_action("register_spill"));
            if (f)
                finding_add_evidence(f, analysis_has(spill_req) ? ncu_metric_info(NM_SPILL_REQUESTS)->name
                                                       : ncu_metric_info(NM_SPILL_INST)->name,
                                     n, "", "%.0f spill %s", n, analysis_has(spill_req) ? "requests" : "instructions");
            ncu_ctx_missing(c, "local-memory sectors (l1tex__t_sectors_pipe_lsu_mem_local_op_ld/st.sum): "
                               "the core plan or --section MemoryWorkloadAnalysis_Tables");
        }
        return;
    }
    ncu_ctx_judged(c, "local_memory");
    ncu_ctx_judged(c, "register_spill");
    double local = s_or0(lld) + s_or0(lst);
    double global = s_or0(V(c, NM_SECTORS_GLOBAL_LD)) + s_or0(V(c, NM_SECTORS_GLOBAL_ST));
    double busy = s_memory_busy(c);
    if (local <= 0 || !analysis_has(busy))
        return;
    double unseen = ncu_ctx_unseen_sectors(c, false);
    double share = local / (local + global + unseen);
    /* DRAM keeps at most what the global accesses could need (each global
     * sector read or written once); the L2 hit rate alone misses the
     * write-backs of dirty local lines that spill stores cause. */
    double l2_hit = analysis_has(V(c, NM_L2_HIT)) ? fmin(fmax(V(c, NM_L2_HIT), 0), 100) / 100 : 0;
    double dram_keep = 1 - share * (1 - l2_hit);
    double dram_bytes = s_or0(V(c, NM_DRAM_READ)) + s_or0(V(c, NM_DRAM_WRITE));
    if (dram_bytes > 0)
        dram_keep = fmin(dram_keep, fmin(1, (global + unseen) * SECTOR_BYTES / dram_bytes));
    ncu_relief_t relief = {.l1 = 1 - share, .l2 = 1 - share, .dram = dram_keep, .compute = 1};
    bool latency_model = false;
    double gain = c->units.count ? s_traffic_saved(c, &relief, false, &latency_model) : share * busy;
    if (!analysis_has(gain) || gain < NCU_GAIN_REPORT)
        return;
    bool spilled = analysis_has(spills) && spills > 0;
    char title[320];
    const char *category = spilled ? "register_spill" : "local_memory";
    if (spilled)
        snprintf(title, sizeof title,
                 "Register spills: local memory carries %.0f%% of the kernel's memory sectors, from "
                 "%.3g spill instructions", 100 * share, spills);
    else if (analysis_has(spills))
        snprintf(title, sizeof title,
                 "Local memory, not spills: a per-thread array indexed at run time (or too large for "
                 "registers) lives in local memory and carries %.0f%% of the memory sectors",
                 100 * share);
    else
        snprintf(title, sizeof title,
                 "Local memory carries %.0f%% of the kernel's memory sectors (register spills or a "
                 "per-thread array indexed at run time; the spill counter was not measured)",
                 100 * share);
    fb_finding_t *f = ncu_ctx_finding(c, category, gain, "local_sectors", title,
                                      ncu_advice_action(category));
    if (!f)
        return;
    finding_add_evidence(f, "l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum", local, "sector",
                         "%.3g local sectors against %.3g global sectors%s", local, global,
                         unseen > 0 ? " and DRAM traffic the LSU's sectors do not account for" : "");
    if (analysis_has(spills))
        finding_add_evidence(f, ncu_metric_info(NM_SPILL_INST)->name, spills, "inst",
                             "%.3g register-spill instructions", spills);
    if (analysis_has(V(c, NM_REGISTERS)))
        finding_add_evidence(f, ncu_metric_info(NM_REGISTERS)->name, V(c, NM_REGISTERS),
                             "register/thread", "%.0f registers per thread", V(c, NM_REGISTERS));
    if (latency_model)
        s_latency_model_evidence(f, c, false);
    ncu_ctx_pct(f, c, NM_L2_PCT);
    ncu_ctx_pct(f, c, NM_L1_PCT);
    c->latency_explained = c->latency_explained || ncu_ctx_explains(f);
}

void ncu_traffic_add(ncu_ctx_t *c)
{
    s_uncoalesced(c);
    s_bank_conflicts(c);
    s_local_memory(c);
}
