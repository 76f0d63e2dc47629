#include "select.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "profiler.h"

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

/* KernelFoundry's table (profiler_feedback.py, see the reference notes
 * §1.3) is common/profiler.h's: which profilers serve a language and which
 * is its default. The analyzer is the profiler's, or its variant's for
 * the language the table gives one (unitrace on OpenCL: its sampling output). */
pf_status_t select_analyzer(const char *language, const char *gpu_arch, const char *profiler,
                            const char **analyzer, pf_error_t *err)
{
    *analyzer = NULL;
    if (!language || !*language)
        return pf_error_set(err, PF_EBADINPUT, "no language given (%s)", profiler_language_names());
    Profeed__Language lang = profiler_language_by_name(language);
    if (lang == PROFEED__LANGUAGE__LANGUAGE_UNSPECIFIED)
        return pf_error_set(err, PF_EBADINPUT, "unknown language '%s' (%s)", language, profiler_language_names());
    const profiler_t *chosen = NULL;
    if (!profiler || !*profiler) {
        chosen = profiler_default(lang, select_is_cuda_arch(gpu_arch) ? "nvidia" : "intel");
    } else {
        chosen = profiler_by_name_nocase(profiler);
        if (chosen && !profiler_serves(chosen, lang))
            chosen = NULL;
    }
    if (chosen) {
        *analyzer = profiler_analyzer_name(chosen, lang);
        return PF_OK;
    }
    char available[128] = "";
    size_t used = 0;
    for (size_t i = 0; i < profiler_count(); i++) {
        if (!profiler_serves(profiler_at(i), lang))
            continue;
        used += (size_t) snprintf(available + used, sizeof available - used, "%s'%s'", used ? ", " : "",
                                  profiler_at(i)->name);
        if (used >= sizeof available)
            used = sizeof available - 1;
    }
    return pf_error_set(err, PF_EBADINPUT, "unknown profiler '%s' for language '%s'. Available "
                        "profilers for '%s': [%s]", profiler ? profiler : "", language, language, available);
}

const char *select_reference_language(const char *language, const char *reference_language)
{
    if (reference_language && *reference_language)
        return reference_language;
    return profiler_language_by_name(language) != PROFEED__LANGUAGE__LANGUAGE_UNSPECIFIED ? "pytorch" : NULL;
}

bool select_pass_is_reference(const char *pass_key)
{
    if (!pass_key)
        return false;
    const char *dot = strchr(pass_key, '.');
    size_t len = dot ? (size_t) (dot - pass_key) : strlen(pass_key);
    return len > 4 && strncmp(pass_key + len - 4, "_ref", 4) == 0;
}
