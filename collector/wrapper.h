/* wrapper: the Python program that runs a kernel + problem job under a profiler.
 *
 * A KernelProblem job carries a kernel file (defines `kernel_function`) and a
 * problem file (KernelBench style: `Model`, `get_inputs()`,
 * `get_init_inputs()`). The collector writes both into the job's folder and
 * fills collector/wrapper_template.py.in (compiled into the binary) with their
 * names and one of three call forms, the cases of KernelAgent's NCU wrapper:
 *
 *   plain        kernel_function(*inputs)
 *   model        kernel_function(inputs[0], layer.weight, layer.bias, ...)
 *                for Conv/Linear kernels: the weights come from a
 *                Model(*init_inputs) instance (its first layer with a weight)
 *   init_inputs  kernel_function(*inputs, *init_inputs), e.g. RMSNorm's
 *                features and eps
 *
 * The wrapper warms up, then runs the measured launch inside an NVTX range
 * that the pass plan profiles. No template engine: @NAME@ placeholders. */
#ifndef WRAPPER_H
#define WRAPPER_H

#include <stddef.h>

#include "pf_error.h"

typedef enum {
    WRAPPER_PLAIN,
    WRAPPER_MODEL,
    WRAPPER_INIT_INPUTS,
} wrapper_case_t;

/* The default NVTX range around the measured launch; ncu's include filter
 * for a push/pop range is the name followed by '/'. */
#define WRAPPER_NVTX_RANGE "profeed"
#define WRAPPER_WARMUP 3

typedef struct {
    const char *kernel_file;   /* relative to the wrapper's folder */
    const char *problem_file;
    wrapper_case_t call;
    unsigned warmup;           /* launches before the measured one, 0..100 */
    const char *nvtx_range;    /* [A-Za-z0-9_.:-], 1..64 bytes */
} wrapper_params_t;

/* The template compiled into the binary (from wrapper_template.py.in). */
extern const char wrapper_template[];
extern const size_t wrapper_template_len;

/* Picks the call form from the sources (NUL-terminated): `model` when
 * kernel_function has a parameter named `weight`, `init_inputs` when the
 * problem's get_init_inputs() returns something other than an empty list,
 * else `plain`. */
wrapper_case_t wrapper_detect(const char *kernel_src, const char *problem_src);

/* "plain", "model", "init_inputs"; parse returns -1 for anything else. */
const char *wrapper_case_name(wrapper_case_t call);
int wrapper_case_parse(const char *name, wrapper_case_t *call);

/* Fills `tmpl` (length `len`). Returns the program (caller frees), or NULL
 * with `err` for a bad parameter or an unknown placeholder in the template. */
char *wrapper_render(const char *tmpl, size_t len, const wrapper_params_t *params, pf_error_t *err);

#endif
