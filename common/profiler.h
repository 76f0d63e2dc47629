/* profiler: the one table of the profilers profeed knows.
 *
 * For each: its wire id, the name every command line, pass key and feedback
 * uses ("ncu"), the name a report shows ("Nsight Compute"), the program the
 * collector runs, the GPU vendor it measures, its pass plans (names, the
 * default first, and their builders in its folder), how the collector asks
 * its version, how its plans set the clocks, and, per language,
 * which profilers serve it in the order they are tried. Every place that maps
 * a name to an id, picks a default for a language or checks that a profiler
 * suits a language reads this table; what a profiler's output looks like and
 * how it is analysed is its analyzer backend's (analyzer/core/analyzer.c).
 * Adding a profiler: docs/architecture.md. */
#ifndef PROFILER_H
#define PROFILER_H

#include <stdbool.h>
#include <stddef.h>

#include "pass_plan.h"
#include "pf_error.h"
#include "profeed.pb-c.h"

/* Builds a profiler's passes into `plan`: a named plan (`named`; `name` NULL
 * for the default) or the input's custom pass specs (pass_plan_build.h). */
typedef bool (*profiler_plan_fn)(pass_plan_t *plan, const pass_plan_input_t *in, bool named, const char *name,
                                 pf_error_t *err);
/* Adds the source pass (JobRequest.source) after the plan's. */
typedef bool (*profiler_source_fn)(pass_plan_t *plan, const pass_plan_input_t *in);
/* The metrics a named plan asks for by name, NULL-terminated; NULL: none. */
typedef const char *const *(*profiler_metrics_fn)(const char *plan);

typedef struct {
    Profeed__Profiler id;
    const char *name;               /* "ncu" */
    const char *display;            /* "Nsight Compute" */
    const char *tool;               /* the program the collector finds on PATH */
    const char *vendor;             /* "nvidia", "intel": the GPUs it measures */
    const char *const *plans;       /* its pass plans' names, the default first, NULL-terminated */
    const char *plans_text;         /* the same for messages, with what the default holds */
    /* Its plans, built in its folder (analyzer/<name>/<name>_plan.c). */
    profiler_plan_fn build_plan;
    profiler_source_fn build_source; /* NULL: it has no source pass */
    profiler_metrics_fn plan_metrics; /* NULL: no plan asks for metrics by name */
    /* A language whose output the profiler's backend reads as a variant with
     * an analyzer name of its own (KernelFoundry's: unitrace on OpenCL is
     * "unitrace_sampling"); UNSPECIFIED (0) and NULL: none. */
    Profeed__Language variant_language;
    const char *variant_name;
    /* How the collector learns the tool's version (WorkerInfo's
     * profiler_version): the flag it runs the tool with, and the word its
     * output puts before the version ("Version 2025.3.1.0"); NULL: not asked. */
    const char *version_flag;
    const char *version_marker;
    /* The options its plans set the GPU's clocks with, for the manifest;
     * NULL: its plans leave the clocks alone and say nothing. */
    const char *clock_options;
    /* Whose estimates a finding from the profiler's own rules carries (its
     * source is "<name>:Rule"): "NCU" shows "NCU's estimate". */
    const char *rules_by;
} profiler_t;

/* Each profiler's plan builders, as the table names them
 * (analyzer/<name>/<name>_plan.c). */
bool ncu_plan_build(pass_plan_t *plan, const pass_plan_input_t *in, bool named, const char *name, pf_error_t *err);
bool ncu_plan_source(pass_plan_t *plan, const pass_plan_input_t *in);
const char *const *ncu_plan_metrics(const char *plan);
bool unitrace_plan_build(pass_plan_t *plan, const pass_plan_input_t *in, bool named, const char *name,
                         pf_error_t *err);
bool vtune_plan_build(pass_plan_t *plan, const pass_plan_input_t *in, bool named, const char *name,
                      pf_error_t *err);

/* At most this many profilers: callers may size arrays by it. */
#define PROFILER_MAX 8

/* Every profiler, in the table's order (i < profiler_count()). */
size_t profiler_count(void);
const profiler_t *profiler_at(size_t i);

/* The profiler of a wire id, or of a name ("ncu"; _nocase also takes
 * "VTune", as KernelFoundry's table writes it); NULL for UNSPECIFIED or a
 * name not in the table. */
const profiler_t *profiler_by_id(Profeed__Profiler id);
const profiler_t *profiler_by_name(const char *name);
const profiler_t *profiler_by_name_nocase(const char *name);

/* The profiler a pass key names: "unitrace.000", "ncu_ref.001" (the name,
 * then '.' or '_'); NULL when it names none. */
const profiler_t *profiler_by_pass_key(const char *pass_key);

/* The analyzer name of `profiler`'s output for `language`: its variant's
 * when the language is the variant's, else its own name. */
const char *profiler_analyzer_name(const profiler_t *profiler, Profeed__Language language);

/* The profiler an analyzer name belongs to: a profiler's name or its
 * variant's ("unitrace_sampling" is unitrace's); NULL when none. */
const profiler_t *profiler_by_analyzer_name(const char *name);

/* An optional Profiler field's value: `value` when `has`, else UNSPECIFIED
 * (none). Code that carries the wire's profilers without knowing them (the
 * broker) reads them through this and names none itself. */
Profeed__Profiler profiler_field(bool has, Profeed__Profiler value);

/* The profiler's name, or `unknown` for an id not in the table. */
const char *profiler_name_or(Profeed__Profiler id, const char *unknown);

/* Every name, for messages: "ncu, unitrace, vtune". */
const char *profiler_names(void);

/* A language's wire id from its name ("cuda", "OCL"), UNSPECIFIED when
 * unknown; and its name, NULL when unknown. */
Profeed__Language profiler_language_by_name(const char *name);
const char *profiler_language_name(Profeed__Language language);

/* Every language's name, for messages: "cuda, triton, pytorch, sycl, ocl". */
const char *profiler_language_names(void);

/* The profilers whose output has an analysis for `language`, in the order
 * they are tried when a job names none (KernelFoundry's table: OpenCL is
 * VTune's first, SYCL unitrace's). Writes up to `cap` into `out`, returns
 * how many there are (0: an unknown language). */
size_t profiler_for_language(Profeed__Language language, const profiler_t **out, size_t cap);

/* Whether `profiler` serves `language`; any profiler serves UNSPECIFIED. */
bool profiler_serves(const profiler_t *profiler, Profeed__Language language);

/* The default profiler for a language on a GPU of `vendor` ("nvidia",
 * "intel"; NULL: any): the first of profiler_for_language() that measures
 * that vendor's GPUs, else the language's first (CUDA is ncu's, whatever the
 * architecture says). NULL for an unknown language. */
const profiler_t *profiler_default(Profeed__Language language, const char *vendor);

#endif
