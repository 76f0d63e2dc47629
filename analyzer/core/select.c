#include "select.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* KernelFoundry's table (profiler_feedback.py, see the reference notes
 * §1.3): (language, profiler) -> analyzer. */
static const struct {
    const char *language;
    const char *profiler;
    const char *analyzer;
} s_table[] = {
    {"sycl", "unitrace", "unitrace"},   {"sycl", "vtune", "vtune"},
    {"ocl", "unitrace", "unitrace_sampling"}, {"ocl", "vtune", "vtune"},
    {"cuda", "ncu", "ncu"},             {"pytorch", "ncu", "ncu"},
    {"triton", "ncu", "ncu"},           {"pytorch", "unitrace", "unitrace"},
    {"triton", "unitrace", "unitrace"},
};

bool select_is_cuda_arch(const char *gpu_arch)
{
    static const char *const names[] = {"maxwell", "pascal", "volta", "turing", "ampere", "hopper",
                                        "ada", "blackwell", "native", "a100", "a6000", "l40s", "l4",
                                        "h100", "h200", "b200", "gb200", "rtx"};
    if (!gpu_arch || !*gpu_arch)
        return false;
    if (strncasecmp(gpu_arch, "sm_", 3) == 0 || strncasecmp(gpu_arch, "compute_", 8) == 0)
        return true;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcasecmp(gpu_arch, names[i]) == 0 || (strlen(names[i]) > 2 && strncasecmp(gpu_arch, names[i], strlen(names[i])) == 0))
            return true;
    return false;
}

pf_status_t select_analyzer(const char *language, const char *gpu_arch, const char *profiler,
                            const char **analyzer, pf_error_t *err)
{
    *analyzer = NULL;
    if (!language || !*language)
        return pf_error_set(err, PF_EBADINPUT, "no language given (cuda, triton, pytorch, sycl, ocl)");
    if (!profiler || !*profiler) {
        if (strcasecmp(language, "pytorch") == 0 || strcasecmp(language, "triton") == 0)
            profiler = select_is_cuda_arch(gpu_arch) ? "ncu" : "unitrace";
        else if (strcasecmp(language, "sycl") == 0)
            profiler = "unitrace";
        else if (strcasecmp(language, "ocl") == 0)
            profiler = "vtune";
        else if (strcasecmp(language, "cuda") == 0)
            profiler = "ncu";
        else
            return pf_error_set(err, PF_EBADINPUT, "unknown language '%s' (cuda, triton, pytorch, "
                                "sycl, ocl)", language);
    }
    char available[128] = "";
    size_t used = 0;
    for (size_t i = 0; i < sizeof s_table / sizeof s_table[0]; i++) {
        if (strcasecmp(s_table[i].language, language) != 0)
            continue;
        if (strcasecmp(s_table[i].profiler, profiler) == 0) {
            *analyzer = s_table[i].analyzer;
            return PF_OK;
        }
        used += (size_t) snprintf(available + used, sizeof available - used, "%s'%s'", used ? ", " : "",
                                  s_table[i].profiler);
        if (used >= sizeof available)
            used = sizeof available - 1;
    }
    if (!available[0])
        return pf_error_set(err, PF_EBADINPUT, "unknown language '%s' (cuda, triton, pytorch, sycl, "
                            "ocl)", language);
    return pf_error_set(err, PF_EBADINPUT, "unknown profiler '%s' for language '%s'. Available "
                        "profilers for '%s': [%s]", profiler, language, language, available);
}

const char *select_reference_language(const char *language, const char *reference_language)
{
    if (reference_language && *reference_language)
        return reference_language;
    static const char *const known[] = {"cuda", "triton", "pytorch", "sycl", "ocl"};
    for (size_t i = 0; language && i < sizeof known / sizeof known[0]; i++)
        if (strcasecmp(language, known[i]) == 0)
            return "pytorch";
    return NULL;
}

bool select_pass_is_reference(const char *pass_key)
{
    if (!pass_key)
        return false;
    const char *dot = strchr(pass_key, '.');
    size_t len = dot ? (size_t) (dot - pass_key) : strlen(pass_key);
    return len > 4 && strncmp(pass_key + len - 4, "_ref", 4) == 0;
}
