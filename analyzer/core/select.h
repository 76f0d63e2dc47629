/* select: which analyzer reads a job's profile, from its language, GPU
 * architecture and (optional) profiler, as KernelFoundry's
 * get_profiler_feedback_class(language, gpu_arch, profiler) decides it, and
 * which language a task's reference implementation is profiled in
 * (get_reference_language_for_profiling). */
#ifndef SELECT_H
#define SELECT_H

#include <stdbool.h>

#include "pf_error.h"

/* The analyzer for (language, gpu_arch, profiler): "ncu", "unitrace" (metric
 * query), "unitrace_sampling" (OpenCL) or "vtune". `profiler` NULL or "" takes
 * the language's default: cuda -> ncu, sycl -> unitrace, ocl -> vtune, and
 * pytorch/triton -> ncu on a CUDA architecture, else unitrace. An unknown
 * pair is PF_EBADINPUT with a message listing the profilers of that language. */
pf_status_t select_analyzer(const char *language, const char *gpu_arch, const char *profiler,
                            const char **analyzer, pf_error_t *err);

/* Whether `gpu_arch` names an NVIDIA GPU: the seed's list (Maxwell ... Ada,
 * native, A100, A6000, L40S, L4) plus sm_NN / compute_NN and current parts
 * (H100, H200, B200, ...). Case does not matter. */
bool select_is_cuda_arch(const char *gpu_arch);

/* The language a task's reference implementation is profiled in: the job's
 * own choice when given, else PyTorch (KernelBench-style tasks ship a PyTorch
 * Model as the reference), else NULL for an unknown language. */
const char *select_reference_language(const char *language, const char *reference_language);

/* The profiler name a pass key starts with ("ncu.000" -> "ncu"), and whether
 * the pass belongs to the reference implementation ("ncu_ref.000"). */
bool select_pass_is_reference(const char *pass_key);

#endif
