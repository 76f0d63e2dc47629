/* profiler: the table (see profiler.h). */
#include "profiler.h"

#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static const char *const s_ncu_plans[] = {"core", "sol", "full", NULL};
static const char *const s_unitrace_plans[] = {"groups", "compute", NULL};
static const char *const s_vtune_plans[] = {"gpu-hotspots", NULL};

static const profiler_t s_profilers[] = {
    {
        .id = PROFEED__PROFILER__PROFILER_NCU,
        .name = "ncu",
        .display = "Nsight Compute",
        .tool = "ncu",
        .vendor = "nvidia",
        .plans = s_ncu_plans,
        .plans_text = "core (default), sol, full",
        .build_plan = ncu_plan_build,
        .build_source = ncu_plan_source,
        .plan_metrics = ncu_plan_metrics,
        .version_flag = "--version",
        .version_marker = "Version ",
        .clock_options = "--clock-control none",
        .rules_by = "NCU",
    },
    {
        .id = PROFEED__PROFILER__PROFILER_UNITRACE,
        .name = "unitrace",
        .display = "Intel unitrace",
        .tool = "unitrace",
        .vendor = "intel",
        .plans = s_unitrace_plans,
        .plans_text = "groups (default: ComputeBasic, MemoryProfile, VectorEngineProfile; OpenCL: ComputeBasic "
                      "sampling), compute",
        .build_plan = unitrace_plan_build,
        .variant_language = PROFEED__LANGUAGE__LANGUAGE_OCL,
        .variant_name = "unitrace_sampling",
    },
    {
        .id = PROFEED__PROFILER__PROFILER_VTUNE,
        .name = "vtune",
        .display = "Intel VTune",
        .tool = "vtune",
        .vendor = "intel",
        .plans = s_vtune_plans,
        .plans_text = "gpu-hotspots (default)",
        .build_plan = vtune_plan_build,
    },
};
#define S_PROFILERS (sizeof s_profilers / sizeof s_profilers[0])
_Static_assert(S_PROFILERS <= PROFILER_MAX, "PROFILER_MAX holds every profiler");

/* Per language, the profilers with an analysis for it, in the order they
 * are tried: KernelFoundry's selection table (profiler_feedback.py; the
 * reference notes §1.3), which the offline analysis, the collector's choice
 * and the broker's routing all follow. */
#define S_MAX_PER_LANGUAGE 3
static const struct {
    Profeed__Language id;
    const char *name;
    Profeed__Profiler order[S_MAX_PER_LANGUAGE]; /* UNSPECIFIED (0) ends it */
} s_languages[] = {
    {PROFEED__LANGUAGE__LANGUAGE_CUDA, "cuda", {PROFEED__PROFILER__PROFILER_NCU}},
    {PROFEED__LANGUAGE__LANGUAGE_TRITON, "triton", {PROFEED__PROFILER__PROFILER_NCU, PROFEED__PROFILER__PROFILER_UNITRACE}},
    {PROFEED__LANGUAGE__LANGUAGE_PYTORCH, "pytorch", {PROFEED__PROFILER__PROFILER_NCU, PROFEED__PROFILER__PROFILER_UNITRACE}},
    {PROFEED__LANGUAGE__LANGUAGE_SYCL, "sycl", {PROFEED__PROFILER__PROFILER_UNITRACE, PROFEED__PROFILER__PROFILER_VTUNE}},
    {PROFEED__LANGUAGE__LANGUAGE_OCL, "ocl", {PROFEED__PROFILER__PROFILER_VTUNE, PROFEED__PROFILER__PROFILER_UNITRACE}},
};
#define S_LANGUAGES (sizeof s_languages / sizeof s_languages[0])

size_t profiler_count(void)
{
    return S_PROFILERS;
}

const profiler_t *profiler_at(size_t i)
{
    assert(i < S_PROFILERS);
    return &s_profilers[i];
}

const profiler_t *profiler_by_id(Profeed__Profiler id)
{
    for (size_t i = 0; i < S_PROFILERS; i++) {
        if (s_profilers[i].id == id)
            return &s_profilers[i];
    }
    return NULL;
}

const profiler_t *profiler_by_name(const char *name)
{
    for (size_t i = 0; name && i < S_PROFILERS; i++) {
        if (strcmp(s_profilers[i].name, name) == 0)
            return &s_profilers[i];
    }
    return NULL;
}

const char *profiler_analyzer_name(const profiler_t *profiler, Profeed__Language language)
{
    assert(profiler);
    if (profiler->variant_name && language != PROFEED__LANGUAGE__LANGUAGE_UNSPECIFIED &&
        language == profiler->variant_language)
        return profiler->variant_name;
    return profiler->name;
}

const profiler_t *profiler_by_analyzer_name(const char *name)
{
    for (size_t i = 0; name && i < S_PROFILERS; i++) {
        if (s_profilers[i].variant_name && strcmp(s_profilers[i].variant_name, name) == 0)
            return &s_profilers[i];
    }
    return profiler_by_name(name);
}

const profiler_t *profiler_by_name_nocase(const char *name)
{
    for (size_t i = 0; name && i < S_PROFILERS; i++) {
        if (strcasecmp(s_profilers[i].name, name) == 0)
            return &s_profilers[i];
    }
    return NULL;
}

const profiler_t *profiler_by_pass_key(const char *pass_key)
{
    for (size_t i = 0; pass_key && i < S_PROFILERS; i++) {
        size_t n = strlen(s_profilers[i].name);
        if (strncmp(pass_key, s_profilers[i].name, n) == 0 && (pass_key[n] == '.' || pass_key[n] == '_'))
            return &s_profilers[i];
    }
    return NULL;
}

Profeed__Profiler profiler_field(bool has, Profeed__Profiler value)
{
    return has ? value : PROFEED__PROFILER__PROFILER_UNSPECIFIED;
}

const char *profiler_name_or(Profeed__Profiler id, const char *unknown)
{
    const profiler_t *p = profiler_by_id(id);
    return p ? p->name : unknown;
}

/* The name lists for messages, made once from the tables. */
static char s_profiler_list[128], s_language_list[128];
static pthread_once_t s_lists_once = PTHREAD_ONCE_INIT;

static void s_lists_build(void)
{
    size_t used = 0;
    for (size_t i = 0; i < S_PROFILERS; i++)
        used += (size_t) snprintf(s_profiler_list + used, sizeof s_profiler_list - used, "%s%s", i ? ", " : "",
                                  s_profilers[i].name);
    assert(used < sizeof s_profiler_list);
    used = 0;
    for (size_t i = 0; i < S_LANGUAGES; i++)
        used += (size_t) snprintf(s_language_list + used, sizeof s_language_list - used, "%s%s", i ? ", " : "",
                                  s_languages[i].name);
    assert(used < sizeof s_language_list);
}

const char *profiler_names(void)
{
    pthread_once(&s_lists_once, s_lists_build);
    return s_profiler_list;
}

Profeed__Language profiler_language_by_name(const char *name)
{
    for (size_t i = 0; name && i < S_LANGUAGES; i++) {
        if (strcasecmp(s_languages[i].name, name) == 0)
            return s_languages[i].id;
    }
    return PROFEED__LANGUAGE__LANGUAGE_UNSPECIFIED;
}

const char *profiler_language_name(Profeed__Language language)
{
    for (size_t i = 0; i < S_LANGUAGES; i++) {
        if (s_languages[i].id == language)
            return s_languages[i].name;
    }
    return NULL;
}

const char *profiler_language_names(void)
{
    pthread_once(&s_lists_once, s_lists_build);
    return s_language_list;
}

size_t profiler_for_language(Profeed__Language language, const profiler_t **out, size_t cap)
{
    for (size_t i = 0; i < S_LANGUAGES; i++) {
        if (s_languages[i].id != language)
            continue;
        size_t n = 0;
        for (; n < S_MAX_PER_LANGUAGE && s_languages[i].order[n] != PROFEED__PROFILER__PROFILER_UNSPECIFIED; n++) {
            if (n < cap)
                out[n] = profiler_by_id(s_languages[i].order[n]);
        }
        return n;
    }
    return 0;
}

bool profiler_serves(const profiler_t *profiler, Profeed__Language language)
{
    assert(profiler);
    if (language == PROFEED__LANGUAGE__LANGUAGE_UNSPECIFIED)
        return true;
    const profiler_t *order[S_MAX_PER_LANGUAGE];
    size_t n = profiler_for_language(language, order, S_MAX_PER_LANGUAGE);
    for (size_t i = 0; i < n; i++) {
        if (order[i] == profiler)
            return true;
    }
    return profiler_language_name(language) == NULL; /* a language this table does not know limits nothing */
}

const profiler_t *profiler_default(Profeed__Language language, const char *vendor)
{
    const profiler_t *order[S_MAX_PER_LANGUAGE];
    size_t n = profiler_for_language(language, order, S_MAX_PER_LANGUAGE);
    for (size_t i = 0; i < n; i++) {
        if (!vendor || strcmp(order[i]->vendor, vendor) == 0)
            return order[i];
    }
    return n > 0 ? order[0] : NULL;
}
