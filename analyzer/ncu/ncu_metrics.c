#include "ncu_metrics.h"

#include <assert.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#define SOL "GPU Speed Of Light Throughput"
#define MWA "Memory Workload Analysis"
#define LS "Launch Statistics"
#define OCC "Occupancy"
#define SCHED "Scheduler Statistics"
#define WSS "Warp State Statistics"
#define CWA "Compute Workload Analysis"
#define IS "Instruction Statistics"

#define STALL(id, reason)                                                                     \
    [id] = {"smsp__average_warps_issue_stalled_" reason "_per_issue_active.ratio", NULL, NULL, \
            NULL, "cycles/issue", reason " stall", NM_AGG_WMEAN}

/* Names and labels verified against ncu 2025.3.1 on GH100 (H200); see
 * tests/fixtures/ncu/h200/ and the label map in docs/ncu.md. */
static const ncu_metric_info_t s_metrics[NM__COUNT] = {
    [NM_DURATION] = {"gpu__time_duration.sum", NULL, SOL, "Duration", "ns", "duration", NM_AGG_SUM},
    [NM_SM_PCT] = {"sm__throughput.avg.pct_of_peak_sustained_elapsed", NULL, SOL,
                   "Compute (SM) Throughput", "%", "SM throughput", NM_AGG_WMEAN},
    [NM_MEM_PCT] = {"gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", NULL, SOL,
                    "Memory Throughput", "%", "memory throughput", NM_AGG_WMEAN},
    [NM_DRAM_PCT] = {"gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
                     "dram__throughput.avg.pct_of_peak_sustained_elapsed", SOL, "DRAM Throughput", "%",
                     "DRAM throughput", NM_AGG_WMEAN},
    [NM_L1_PCT] = {"l1tex__throughput.avg.pct_of_peak_sustained_active", NULL, SOL,
                   "L1/TEX Cache Throughput", "%", "L1/TEX throughput", NM_AGG_WMEAN},
    [NM_L2_PCT] = {"lts__throughput.avg.pct_of_peak_sustained_elapsed", NULL, SOL,
                   "L2 Cache Throughput", "%", "L2 throughput", NM_AGG_WMEAN},
    [NM_SM_FREQ] = {"sm__cycles_elapsed.avg.per_second", "gpc__cycles_elapsed.avg.per_second", SOL,
                    "SM Frequency", "hz", "SM clock", NM_AGG_WMEAN},
    [NM_DRAM_FREQ] = {"dram__cycles_elapsed.avg.per_second", NULL, SOL, "DRAM Frequency", "hz",
                      "DRAM clock", NM_AGG_WMEAN},
    [NM_ELAPSED_CYCLES] = {"gpc__cycles_elapsed.max", NULL, SOL, "Elapsed Cycles", "cycle",
                           "elapsed cycles", NM_AGG_SUM},
    [NM_SM_ACTIVE_CYCLES] = {"sm__cycles_active.avg", NULL, SOL, "SM Active Cycles", "cycle",
                             "SM active cycles", NM_AGG_SUM},

    [NM_MEM_BUSY] = {"gpu__compute_memory_access_throughput.avg.pct_of_peak_sustained_elapsed", NULL,
                     MWA, "Mem Busy", "%", "memory busy", NM_AGG_WMEAN},
    [NM_MAX_BW] = {"gpu__compute_memory_request_throughput.avg.pct_of_peak_sustained_elapsed", NULL,
                   MWA, "Max Bandwidth", "%", "max bandwidth", NM_AGG_WMEAN},
    [NM_MEM_PIPES] = {"sm__memory_throughput.avg.pct_of_peak_sustained_elapsed", NULL, MWA,
                      "Mem Pipes Busy", "%", "memory pipes busy", NM_AGG_WMEAN},
    [NM_DRAM_BYTES_PER_S] = {"dram__bytes.sum.per_second", NULL, MWA, "Memory Throughput", "byte/s",
                             "DRAM bandwidth", NM_AGG_WMEAN},
    [NM_L1_HIT] = {"l1tex__t_sector_hit_rate.pct", NULL, MWA, "L1/TEX Hit Rate", "%", "L1 hit rate",
                   NM_AGG_WMEAN},
    [NM_L2_HIT] = {"lts__t_sector_hit_rate.pct", NULL, MWA, "L2 Hit Rate", "%", "L2 hit rate",
                   NM_AGG_WMEAN},
    [NM_SPILL_REQUESTS] = {"derived__local_spilling_requests", NULL, MWA,
                           "Local Memory Spilling Requests", "", "local spill requests", NM_AGG_SUM},
    [NM_SPILL_INST] = {"sass__inst_executed_register_spilling", NULL, NULL, NULL, "inst",
                       "spill instructions", NM_AGG_SUM},
    [NM_DRAM_READ] = {"dram__bytes_read.sum", NULL, NULL, NULL, "byte", "DRAM bytes read", NM_AGG_SUM},
    [NM_DRAM_WRITE] = {"dram__bytes_write.sum", NULL, NULL, NULL, "byte", "DRAM bytes written",
                       NM_AGG_SUM},
    [NM_LD_BYTES_PER_SECTOR] = {"smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio",
                                NULL, NULL, NULL, "byte/sector", "bytes used per 32-byte load sector",
                                NM_AGG_WMEAN},
    [NM_ST_BYTES_PER_SECTOR] = {"smsp__sass_average_data_bytes_per_sector_mem_global_op_st.ratio",
                                NULL, NULL, NULL, "byte/sector", "bytes used per 32-byte store sector",
                                NM_AGG_WMEAN},
    [NM_LD_SECTOR_PCT] = {"smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct", NULL,
                          NULL, NULL, "%", "load sector utilisation", NM_AGG_WMEAN},
    [NM_SECTORS_EXCESSIVE] = {"derived__memory_l2_theoretical_sectors_global_excessive", NULL, NULL,
                              NULL, "sector", "excessive global sectors", NM_AGG_SUM},
    [NM_SECTORS_GLOBAL] = {"memory_l2_theoretical_sectors_global", NULL, NULL, NULL, "sector",
                           "global sectors", NM_AGG_SUM},
    [NM_BANK_CONFLICTS] = {"l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum", NULL, NULL, NULL, "",
                           "shared-memory bank conflicts", NM_AGG_SUM},
    [NM_BANK_CONFLICTS_LD] = {"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", NULL, NULL,
                              NULL, "", "shared-load bank conflicts", NM_AGG_SUM},
    [NM_BANK_CONFLICTS_ST] = {"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", NULL, NULL,
                              NULL, "", "shared-store bank conflicts", NM_AGG_SUM},
    [NM_SHARED_WAVEFRONTS] = {"l1tex__data_pipe_lsu_wavefronts_mem_shared.sum", NULL, NULL, NULL, "",
                              "shared-memory wavefronts", NM_AGG_SUM},
    [NM_SHARED_WAVEFRONTS_LD] = {"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", NULL, NULL,
                                 NULL, "", "shared-load wavefronts", NM_AGG_SUM},
    [NM_SHARED_WAVEFRONTS_ST] = {"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum", NULL, NULL,
                                 NULL, "", "shared-store wavefronts", NM_AGG_SUM},
    [NM_SHARED_EXCESSIVE] = {"derived__memory_l1_wavefronts_shared_excessive", NULL, NULL, NULL, "",
                             "excessive shared wavefronts", NM_AGG_SUM},
    [NM_L1_WAVEFRONTS_PCT] = {"l1tex__data_pipe_lsu_wavefronts.avg.pct_of_peak_sustained_elapsed",
                              NULL, NULL, NULL, "%", "L1 data-pipe wavefronts", NM_AGG_WMEAN},
    [NM_L1_REQUESTS_PCT] = {"l1tex__lsuin_requests.avg.pct_of_peak_sustained_elapsed", NULL, NULL,
                            NULL, "%", "L1 LSU requests", NM_AGG_WMEAN},
    [NM_L2_TAG_PCT] = {"lts__t_tag_requests.avg.pct_of_peak_sustained_elapsed", NULL, NULL, NULL, "%",
                       "L2 tag lookups", NM_AGG_WMEAN},
    [NM_L2_SECTORS_PCT] = {"lts__t_sectors.avg.pct_of_peak_sustained_elapsed", NULL, NULL, NULL, "%",
                           "L2 sector traffic", NM_AGG_WMEAN},
    /* The sectors the SMs read from L2, whichever way they ask: the LSU's loads
     * that miss L1, TMA copies and texture fetches alike (on the H200, cuBLAS's
     * TMA GEMM read 3.5 GB through it against 0.48 GB from DRAM, corpus v54). */
    [NM_L2_READ_SECTORS_SM] = {"lts__t_sectors_srcunit_tex_op_read.sum", NULL, NULL, NULL, "sector",
                               "L2 sectors read by the SMs", NM_AGG_SUM},
    [NM_L2_ATOMIC_PCT] = {"lts__d_atomic_input_cycles_active.avg.pct_of_peak_sustained_elapsed", NULL,
                          NULL, NULL, "%", "L2 atomic unit busy", NM_AGG_WMEAN},
    [NM_GLOBAL_RED] = {"smsp__inst_executed_op_global_red.sum", NULL, NULL, NULL, "inst",
                       "global reduction (atomic) instructions", NM_AGG_SUM},
    [NM_GLOBAL_ATOM] = {"l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum",
                        "smsp__inst_executed_op_global_atom.sum", NULL, NULL, "request",
                        "global atomic requests", NM_AGG_SUM},
    [NM_SHARED_ATOM] = {"smsp__inst_executed_op_shared_atom.sum", NULL, NULL, NULL, "inst",
                        "shared-memory atomic instructions", NM_AGG_SUM},
    /* The atomics L2 receives, a request a lane (corpus v64's row sums: 262,144
     * REDG instructions of 32 lanes, 8,388,608 requests): what its slices serve
     * one at a time where the lanes share an address (ncu_atomics.c). */
    [NM_L2_RED_REQUESTS] = {"lts__t_requests_srcunit_tex_op_red.sum", NULL, NULL, NULL, "request",
                            "L2 reduction requests from the SMs", NM_AGG_SUM},
    [NM_L2_ATOM_REQUESTS] = {"lts__t_requests_srcunit_tex_op_atom_dot_alu.sum", NULL, NULL, NULL, "request",
                             "L2 atomic requests from the SMs", NM_AGG_SUM},
    [NM_L2_CAS_REQUESTS] = {"lts__t_requests_srcunit_tex_op_atom_dot_cas.sum", NULL, NULL, NULL, "request",
                            "L2 compare-and-swap requests from the SMs", NM_AGG_SUM},
    [NM_SECTORS_GLOBAL_LD] = {"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", NULL, NULL, NULL,
                              "sector", "global load sectors", NM_AGG_SUM},
    [NM_SECTORS_GLOBAL_ST] = {"l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", NULL, NULL, NULL,
                              "sector", "global store sectors", NM_AGG_SUM},
    [NM_SECTORS_LOCAL_LD] = {"l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum", NULL, NULL, NULL,
                             "sector", "local load sectors", NM_AGG_SUM},
    [NM_SECTORS_LOCAL_ST] = {"l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum", NULL, NULL, NULL,
                             "sector", "local store sectors", NM_AGG_SUM},
    [NM_REQUESTS_GLOBAL_LD] = {"l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", NULL, NULL, NULL,
                               "request", "global load requests", NM_AGG_SUM},
    [NM_WAVEFRONTS_GLOBAL_LD] = {"l1tex__t_output_wavefronts_pipe_lsu_mem_global_op_ld.sum", NULL, NULL,
                                 NULL, "wavefront", "L1 output wavefronts of global loads", NM_AGG_SUM},

    [NM_BLOCK_SIZE] = {"launch__block_size", NULL, LS, "Block Size", "", "block size", NM_AGG_WMEAN},
    [NM_GRID_SIZE] = {"launch__grid_size", NULL, LS, "Grid Size", "", "grid size", NM_AGG_WMEAN},
    [NM_REGISTERS] = {"launch__registers_per_thread", NULL, LS, "Registers Per Thread",
                      "register/thread", "registers per thread", NM_AGG_WMEAN},
    [NM_SMEM_STATIC] = {"launch__shared_mem_per_block_static", NULL, LS,
                        "Static Shared Memory Per Block", "byte/block", "static shared memory",
                        NM_AGG_WMEAN},
    [NM_SMEM_DYNAMIC] = {"launch__shared_mem_per_block_dynamic", NULL, LS,
                         "Dynamic Shared Memory Per Block", "byte/block", "dynamic shared memory",
                         NM_AGG_WMEAN},
    [NM_SM_COUNT] = {"launch__sm_count", "device__attribute_multiprocessor_count", LS, "# SMs", "SM",
                     "SMs", NM_AGG_WMEAN},
    [NM_WAVES] = {"launch__waves_per_multiprocessor", NULL, LS, "Waves Per SM", "", "waves per SM",
                  NM_AGG_WMEAN},
    [NM_THREADS] = {"launch__thread_count", NULL, LS, "Threads", "thread", "threads", NM_AGG_WMEAN},

    [NM_OCC_THEORETICAL] = {"sm__maximum_warps_per_active_cycle_pct", NULL, OCC,
                            "Theoretical Occupancy", "%", "theoretical occupancy", NM_AGG_WMEAN},
    [NM_OCC_ACHIEVED] = {"sm__warps_active.avg.pct_of_peak_sustained_active", NULL, OCC,
                         "Achieved Occupancy", "%", "achieved occupancy", NM_AGG_WMEAN},
    [NM_OCC_LIMIT_BLOCKS] = {"launch__occupancy_limit_blocks", NULL, OCC, "Block Limit SM", "block",
                             "block limit (blocks per SM)", NM_AGG_WMEAN},
    [NM_OCC_LIMIT_REGISTERS] = {"launch__occupancy_limit_registers", NULL, OCC,
                                "Block Limit Registers", "block", "block limit (registers)",
                                NM_AGG_WMEAN},
    [NM_OCC_LIMIT_SMEM] = {"launch__occupancy_limit_shared_mem", NULL, OCC, "Block Limit Shared Mem",
                           "block", "block limit (shared memory)", NM_AGG_WMEAN},
    [NM_OCC_LIMIT_WARPS] = {"launch__occupancy_limit_warps", NULL, OCC, "Block Limit Warps", "block",
                            "block limit (warps)", NM_AGG_WMEAN},
    [NM_OCC_LIMIT_BARRIERS] = {"launch__occupancy_limit_barriers", NULL, OCC, "Block Limit Barriers",
                               "block", "block limit (barriers)", NM_AGG_WMEAN},

    [NM_ISSUE_ACTIVE] = {"smsp__issue_active.avg.per_cycle_active", NULL, SCHED,
                         "Issued Warp Per Scheduler", "", "instructions issued per scheduler cycle",
                         NM_AGG_WMEAN},
    [NM_ISSUE_PCT] = {"smsp__issue_active.avg.pct_of_peak_sustained_active", NULL, NULL, NULL, "%",
                      "issue slots busy", NM_AGG_WMEAN},
    /* The details page of --set detailed (KernelFoundry's capture) has the
     * issue slots only as instructions a cycle per SM: Scheduler Statistics
     * is not in that set. */
    [NM_ISSUED_IPC] = {"sm__inst_issued.avg.per_cycle_active", NULL, CWA, "Issued Ipc Active",
                       "inst/cycle", "instructions issued per active SM cycle", NM_AGG_WMEAN},
    [NM_WARP_CYCLES_PER_ISSUE] = {"smsp__average_warp_latency_per_inst_issued.ratio", NULL, WSS,
                                  "Warp Cycles Per Issued Instruction", "cycle",
                                  "warp cycles per issued instruction", NM_AGG_WMEAN},
    [NM_THREADS_PER_WARP] = {"smsp__thread_inst_executed_per_inst_executed.ratio", NULL, WSS,
                             "Avg. Active Threads Per Warp", "", "active threads per warp",
                             NM_AGG_WMEAN},
    [NM_THREADS_PER_WARP_PRED] = {"smsp__thread_inst_executed_pred_on_per_inst_executed.ratio", NULL,
                                  WSS, "Avg. Not Predicated Off Threads Per Warp", "",
                                  "predicated-on threads per warp", NM_AGG_WMEAN},
    STALL(NM_STALL_BARRIER, "barrier"),
    STALL(NM_STALL_BRANCH, "branch_resolving"),
    STALL(NM_STALL_DISPATCH, "dispatch_stall"),
    STALL(NM_STALL_DRAIN, "drain"),
    STALL(NM_STALL_GMMA, "gmma"),
    STALL(NM_STALL_IMC_MISS, "imc_miss"),
    STALL(NM_STALL_LG_THROTTLE, "lg_throttle"),
    STALL(NM_STALL_LONG_SCOREBOARD, "long_scoreboard"),
    STALL(NM_STALL_MATH_THROTTLE, "math_pipe_throttle"),
    STALL(NM_STALL_MEMBAR, "membar"),
    STALL(NM_STALL_MIO_THROTTLE, "mio_throttle"),
    STALL(NM_STALL_MISC, "misc"),
    STALL(NM_STALL_NO_INSTRUCTION, "no_instruction"),
    STALL(NM_STALL_NOT_SELECTED, "not_selected"),
    STALL(NM_STALL_SHORT_SCOREBOARD, "short_scoreboard"),
    STALL(NM_STALL_SLEEPING, "sleeping"),
    STALL(NM_STALL_TEX_THROTTLE, "tex_throttle"),
    STALL(NM_STALL_WAIT, "wait"),

    [NM_PIPE_FMA] = {"sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active",
                     "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_elapsed", NULL, NULL, "%",
                     "FMA pipe busy", NM_AGG_WMEAN},
    /* The FMA pipe's heavy half: FP32 and integer multiply-add (IMAD, IMUL,
     * IDP) issue there; FP32 alone also to the light half. The core plan and
     * --set full have it. */
    [NM_PIPE_FMAHEAVY] = {"sm__pipe_fmaheavy_cycles_active.avg.pct_of_peak_sustained_active",
                          "sm__pipe_fmaheavy_cycles_active.avg.pct_of_peak_sustained_elapsed", NULL, NULL,
                          "%", "FMA pipe heavy half busy", NM_AGG_WMEAN},
    [NM_PIPE_ALU] = {"sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active",
                     "sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_elapsed", NULL, NULL, "%",
                     "ALU pipe busy", NM_AGG_WMEAN},
    [NM_PIPE_FP64] = {"sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_active",
                      "sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_elapsed", NULL, NULL, "%",
                      "FP64 pipe busy", NM_AGG_WMEAN},
    [NM_PIPE_TENSOR] = {"sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active",
                        "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed", NULL, NULL,
                        "%", "tensor pipe busy", NM_AGG_WMEAN},
    [NM_PIPE_HMMA] = {"sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
                      "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed", NULL,
                      NULL, "%", "tensor pipe (HMMA/HGMMA) busy", NM_AGG_WMEAN},
    [NM_PIPE_XU] = {"sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active",
                    "sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_elapsed", NULL, NULL, "%",
                    "XU pipe busy", NM_AGG_WMEAN},
    [NM_PIPE_ADU] = {"sm__inst_executed_pipe_adu.avg.pct_of_peak_sustained_active",
                     "sm__inst_executed_pipe_adu.avg.pct_of_peak_sustained_elapsed", NULL, NULL, "%",
                     "ADU pipe busy", NM_AGG_WMEAN},
    [NM_PIPE_CBU] = {"sm__inst_executed_pipe_cbu.avg.pct_of_peak_sustained_active",
                     "sm__inst_executed_pipe_cbu.avg.pct_of_peak_sustained_elapsed", NULL, NULL, "%",
                     "CBU pipe busy", NM_AGG_WMEAN},
    [NM_PIPE_UNIFORM] = {"sm__inst_executed_pipe_uniform.avg.pct_of_peak_sustained_active",
                         "sm__inst_executed_pipe_uniform.avg.pct_of_peak_sustained_elapsed", NULL, NULL,
                         "%", "uniform pipe busy", NM_AGG_WMEAN},
    [NM_PIPE_TEX] = {"sm__inst_executed_pipe_tex.avg.pct_of_peak_sustained_active",
                     "sm__inst_executed_pipe_tex.avg.pct_of_peak_sustained_elapsed", NULL, NULL, "%",
                     "TEX pipe busy", NM_AGG_WMEAN},
    [NM_PIPE_LSU] = {"sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_active",
                     "sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_elapsed", NULL, NULL, "%",
                     "LSU pipe busy", NM_AGG_WMEAN},
    [NM_INST_EXECUTED] = {"smsp__inst_executed.sum", "inst_executed", IS, "Executed Instructions",
                          "inst", "executed warp instructions", NM_AGG_SUM},
    /* The same count as the SMs sum it: KernelAgent's list has this one. */
    [NM_INST_EXECUTED_SM] = {"sm__inst_executed.sum", NULL, NULL, NULL, "inst",
                             "executed warp instructions", NM_AGG_SUM},
    /* Useful lanes per pipe: predicated-off lanes take the issue slot and the
     * pipe as idle ones do, but the overall ratio cannot say on which pipe
     * (a transcendental's guarded fix-ups are predicated off on the FMA pipe
     * while its XU pipe runs every lane). */
#define PIPE_LANES(inst, lanes, pipe)                                                                  \
    [inst] = {"smsp__inst_executed_pipe_" pipe ".sum", NULL, NULL, NULL, "inst",                       \
              pipe " pipe warp instructions", NM_AGG_SUM},                                            \
    [lanes] = {"smsp__thread_inst_executed_pipe_" pipe "_pred_on.sum", NULL, NULL, NULL, "inst",        \
               pipe " pipe thread instructions predicated on", NM_AGG_SUM}
    PIPE_LANES(NM_INST_PIPE_FMA, NM_LANES_PIPE_FMA, "fma"),
    PIPE_LANES(NM_INST_PIPE_ALU, NM_LANES_PIPE_ALU, "alu"),
    PIPE_LANES(NM_INST_PIPE_FP64, NM_LANES_PIPE_FP64, "fp64"),
    PIPE_LANES(NM_INST_PIPE_XU, NM_LANES_PIPE_XU, "xu"),
#undef PIPE_LANES

    [NM_FADD] = {"smsp__sass_thread_inst_executed_op_fadd_pred_on.sum", NULL, NULL, NULL, "inst",
                 "FP32 adds", NM_AGG_SUM},
    [NM_FMUL] = {"smsp__sass_thread_inst_executed_op_fmul_pred_on.sum", NULL, NULL, NULL, "inst",
                 "FP32 multiplies", NM_AGG_SUM},
    [NM_FFMA] = {"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", NULL, NULL, NULL, "inst",
                 "FP32 FMAs", NM_AGG_SUM},
    [NM_DADD] = {"smsp__sass_thread_inst_executed_op_dadd_pred_on.sum", NULL, NULL, NULL, "inst",
                 "FP64 adds", NM_AGG_SUM},
    [NM_DMUL] = {"smsp__sass_thread_inst_executed_op_dmul_pred_on.sum", NULL, NULL, NULL, "inst",
                 "FP64 multiplies", NM_AGG_SUM},
    [NM_DFMA] = {"smsp__sass_thread_inst_executed_op_dfma_pred_on.sum", NULL, NULL, NULL, "inst",
                 "FP64 FMAs", NM_AGG_SUM},
    [NM_HADD] = {"smsp__sass_thread_inst_executed_op_hadd_pred_on.sum", NULL, NULL, NULL, "inst",
                 "FP16 adds", NM_AGG_SUM},
    [NM_HMUL] = {"smsp__sass_thread_inst_executed_op_hmul_pred_on.sum", NULL, NULL, NULL, "inst",
                 "FP16 multiplies", NM_AGG_SUM},
    [NM_HFMA] = {"smsp__sass_thread_inst_executed_op_hfma_pred_on.sum", NULL, NULL, NULL, "inst",
                 "FP16 FMAs", NM_AGG_SUM},
    /* The full set carries FP32 rates per elapsed cycle instead of counts. */
    [NM_FADD_RATE] = {"smsp__sass_thread_inst_executed_op_fadd_pred_on.sum.per_cycle_elapsed", NULL,
                      NULL, NULL, "inst/cycle", "FP32 adds per cycle", NM_AGG_WMEAN},
    [NM_FMUL_RATE] = {"smsp__sass_thread_inst_executed_op_fmul_pred_on.sum.per_cycle_elapsed", NULL,
                      NULL, NULL, "inst/cycle", "FP32 multiplies per cycle", NM_AGG_WMEAN},
    [NM_FFMA_RATE] = {"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum.per_cycle_elapsed", NULL,
                      NULL, NULL, "inst/cycle", "FP32 FMAs per cycle", NM_AGG_WMEAN},
    [NM_FFMA_PEAK] = {"sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained", NULL, NULL,
                      NULL, "inst/cycle", "peak FP32 FMAs per cycle", NM_AGG_WMEAN},
    [NM_DFMA_PEAK] = {"sm__sass_thread_inst_executed_op_dfma_pred_on.sum.peak_sustained", NULL, NULL,
                      NULL, "inst/cycle", "peak FP64 FMAs per cycle", NM_AGG_WMEAN},
    [NM_DRAM_BYTES_PEAK] = {"dram__bytes.sum.peak_sustained", NULL, NULL, NULL, "byte/cycle",
                            "peak DRAM bytes per cycle", NM_AGG_WMEAN},

    [NM_DEV_CLOCK_KHZ] = {"device__attribute_clock_rate", NULL, NULL, NULL, "khz", "max SM clock",
                          NM_AGG_WMEAN},
    [NM_DEV_MEM_CLOCK_KHZ] = {"device__attribute_max_mem_frequency_khz", NULL, NULL, NULL, "khz",
                              "max memory clock", NM_AGG_WMEAN},
    [NM_DEV_BUS_WIDTH] = {"device__attribute_global_memory_bus_width", NULL, NULL, NULL, "bit",
                          "memory bus width", NM_AGG_WMEAN},
};

const ncu_metric_info_t *ncu_metric_info(ncu_metric_t metric)
{
    assert(metric >= 0 && metric < NM__COUNT);
    return &s_metrics[metric];
}

/* Name -> metric index, built once: a --set full header has 2,238 columns,
 * each looked up here. Open addressing over twice the names (with alts). */
#define NAME_SLOTS 512
static int16_t s_slots[NAME_SLOTS]; /* metric + 1, 0 = empty */
static pthread_once_t s_slots_once = PTHREAD_ONCE_INIT;

static size_t s_name_hash(const char *name)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (const unsigned char *p = (const unsigned char *) name; *p; p++)
        h = (h ^ *p) * 16777619u;
    return h & (NAME_SLOTS - 1);
}

static void s_slot_put(const char *name, int metric)
{
    size_t slot = s_name_hash(name);
    while (s_slots[slot])
        slot = (slot + 1) & (NAME_SLOTS - 1);
    s_slots[slot] = (int16_t) (metric + 1);
}

static void s_slots_build(void)
{
    static_assert(2 * NM__COUNT < NAME_SLOTS, "the name table must stay under half full");
    for (int m = 0; m < NM__COUNT; m++) {
        s_slot_put(s_metrics[m].name, m);
        if (s_metrics[m].alt)
            s_slot_put(s_metrics[m].alt, m);
    }
}

int ncu_metric_by_name(const char *name)
{
    pthread_once(&s_slots_once, s_slots_build);
    for (size_t slot = s_name_hash(name); s_slots[slot]; slot = (slot + 1) & (NAME_SLOTS - 1)) {
        const ncu_metric_info_t *info = &s_metrics[s_slots[slot] - 1];
        if (strcmp(info->name, name) == 0 || (info->alt && strcmp(info->alt, name) == 0))
            return s_slots[slot] - 1;
    }
    return -1;
}

int ncu_metric_by_label(const char *section, const char *label)
{
    for (int m = 0; m < NM__COUNT; m++) {
        const ncu_metric_info_t *info = &s_metrics[m];
        if (info->label && strcmp(info->label, label) == 0 && section &&
            strcmp(info->section, section) == 0)
            return m;
    }
    return ncu_metric_by_name(label);
}
