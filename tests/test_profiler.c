/* profiler: the one table of profilers (common/profiler.h), and that the
 * places which used to keep their own lists agree with it. */
#include "profiler.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "analyzer.h"
#include "feedback_wire.h"
#include "pass_plan.h"
#include "select.h"

Test(profiler, every_wire_profiler_is_in_the_table_and_every_entry_is_complete)
{
    const ProtobufCEnumDescriptor *d = &profeed__profiler__descriptor;
    for (unsigned i = 0; i < d->n_values; i++) {
        Profeed__Profiler id = (Profeed__Profiler) d->values[i].value;
        if (id == PROFEED__PROFILER__PROFILER_UNSPECIFIED)
            continue;
        const profiler_t *p = profiler_by_id(id);
        cr_assert_not_null(p, "%s is on the wire but not in the profiler table", d->values[i].name);
        cr_expect(p->name && *p->name && p->display && *p->display && p->tool && *p->tool, "%s", p->name);
        cr_expect(strcmp(p->vendor, "nvidia") == 0 || strcmp(p->vendor, "intel") == 0, "%s: %s", p->name, p->vendor);
        cr_expect_not_null(p->plans[0], "%s has a default plan", p->name);
        cr_expect_not_null(p->build_plan, "%s builds its plans", p->name);
        cr_expect_eq(profiler_by_name(p->name), p);
        cr_expect(analyzer_handles(id), "%s has an analyzer backend", p->name);
        cr_expect_eq(feedback_wire_profiler(p->name), id);
        for (size_t k = 0; p->plans[k]; k++)
            cr_expect_eq(pass_plan_check_name(id, p->plans[k], NULL), PF_OK, "%s:%s", p->name, p->plans[k]);
    }
    cr_expect_null(profiler_by_id(PROFEED__PROFILER__PROFILER_UNSPECIFIED));
    cr_expect_null(profiler_by_name("rocprof"));
    cr_expect_null(profiler_by_name("NCU"), "exact names on command lines");
    cr_expect_eq(profiler_by_name_nocase("VTune"), profiler_by_name("vtune"), "KernelFoundry's spelling");
}

Test(profiler, the_lists_for_messages_are_the_tables)
{
    cr_expect_str_eq(profiler_names(), "ncu, unitrace, vtune");
    cr_expect_str_eq(analyzer_profilers(), profiler_names());
    cr_expect_str_eq(profiler_language_names(), "cuda, triton, pytorch, sycl, ocl");
    const ProtobufCEnumDescriptor *d = &profeed__language__descriptor;
    for (unsigned i = 0; i < d->n_values; i++) {
        Profeed__Language id = (Profeed__Language) d->values[i].value;
        if (id == PROFEED__LANGUAGE__LANGUAGE_UNSPECIFIED)
            continue;
        const char *name = profiler_language_name(id);
        cr_assert_not_null(name, "%s is on the wire but not in the language table", d->values[i].name);
        cr_expect_eq(profiler_language_by_name(name), id);
        const profiler_t *order[PROFILER_MAX];
        cr_expect_gt(profiler_for_language(id, order, PROFILER_MAX), 0, "%s has a profiler", name);
    }
}

/* One default per language: the offline analysis (select.c) and the farm's
 * collector (the first of profiler_for_language it has) read the same entry.
 * OpenCL's is VTune, as KernelFoundry's table says; the collector used to try
 * unitrace first. */
Test(profiler, one_default_per_language_for_the_analysis_and_the_collector)
{
    const profiler_t *order[PROFILER_MAX];
    const char *analyzer = NULL;
    cr_assert_eq(profiler_for_language(PROFEED__LANGUAGE__LANGUAGE_OCL, order, PROFILER_MAX), 2);
    cr_expect_str_eq(order[0]->name, "vtune");
    cr_assert_eq(select_analyzer("ocl", "bmg", NULL, &analyzer, NULL), PF_OK);
    cr_expect_str_eq(analyzer, order[0]->name);
    cr_assert_eq(profiler_for_language(PROFEED__LANGUAGE__LANGUAGE_SYCL, order, PROFILER_MAX), 2);
    cr_assert_eq(select_analyzer("sycl", "bmg", NULL, &analyzer, NULL), PF_OK);
    cr_expect_str_eq(analyzer, order[0]->name);
    cr_expect_str_eq(profiler_default(PROFEED__LANGUAGE__LANGUAGE_PYTORCH, "nvidia")->name, "ncu");
    cr_expect_str_eq(profiler_default(PROFEED__LANGUAGE__LANGUAGE_PYTORCH, "intel")->name, "unitrace");
    cr_expect_str_eq(profiler_default(PROFEED__LANGUAGE__LANGUAGE_CUDA, "intel")->name, "ncu", "CUDA is ncu's");
    cr_expect(!profiler_serves(profiler_by_name("vtune"), PROFEED__LANGUAGE__LANGUAGE_CUDA));
    cr_expect(profiler_serves(profiler_by_name("vtune"), PROFEED__LANGUAGE__LANGUAGE_UNSPECIFIED));
}

Test(profiler, a_pass_key_names_its_profiler)
{
    cr_expect_str_eq(profiler_by_pass_key("unitrace.000")->name, "unitrace");
    cr_expect_str_eq(profiler_by_pass_key("ncu_ref.001")->name, "ncu");
    cr_expect_str_eq(profiler_by_pass_key("vtune.000")->name, "vtune");
    cr_expect_null(profiler_by_pass_key("ncuX.000"));
    cr_expect_null(profiler_by_pass_key("sol"));
    cr_expect_null(profiler_by_pass_key(NULL));
}

Test(profiler, a_variant_analyzer_name_is_its_profilers_and_only_for_its_language)
{
    const profiler_t *unitrace = profiler_by_id(PROFEED__PROFILER__PROFILER_UNITRACE);
    cr_assert_not_null(unitrace);
    cr_expect_str_eq(profiler_analyzer_name(unitrace, PROFEED__LANGUAGE__LANGUAGE_OCL), "unitrace_sampling");
    cr_expect_str_eq(profiler_analyzer_name(unitrace, PROFEED__LANGUAGE__LANGUAGE_SYCL), "unitrace");
    cr_expect_str_eq(profiler_analyzer_name(unitrace, PROFEED__LANGUAGE__LANGUAGE_UNSPECIFIED), "unitrace");
    cr_expect_eq(profiler_by_analyzer_name("unitrace_sampling"), unitrace);
    cr_expect_eq(profiler_by_analyzer_name("unitrace"), unitrace);
    cr_expect_eq(profiler_by_analyzer_name("vtune"), profiler_by_id(PROFEED__PROFILER__PROFILER_VTUNE));
    cr_expect_null(profiler_by_analyzer_name("ncu_sampling"));
    cr_expect_null(profiler_by_analyzer_name(NULL));
    for (size_t i = 0; i < profiler_count(); i++) /* every variant names a language */
        cr_expect(!profiler_at(i)->variant_name || profiler_at(i)->variant_language, "%s", profiler_at(i)->name);
}

/* What used to be written as `== "ncu"` beside the table (the version probe,
 * the clock note, whose estimates, the metrics list, streamed pages) is now
 * the entry's, and the places that read it agree. */
Test(profiler, version_probe_clocks_metrics_and_pages_come_from_the_entry)
{
    for (size_t i = 0; i < profiler_count(); i++) {
        const profiler_t *p = profiler_at(i);
        cr_expect_eq(p->version_flag != NULL, p->version_marker != NULL, "%s: flag and marker together", p->name);
        for (size_t k = 0; p->plans[k]; k++)
            cr_expect_eq(pass_plan_metrics(p->id, p->plans[k]), p->plan_metrics ? p->plan_metrics(p->plans[k]) : NULL,
                         "%s:%s", p->name, p->plans[k]);
    }
    const profiler_t *ncu = profiler_by_name("ncu");
    cr_assert_str_eq(ncu->version_flag, "--version");
    cr_expect_not_null(pass_plan_metrics(ncu->id, "core"));
    cr_expect_null(pass_plan_metrics(ncu->id, "sol"));
    cr_expect_null(pass_plan_metrics(PROFEED__PROFILER__PROFILER_VTUNE, "gpu-hotspots"));
    cr_expect(analyzer_parses_pages(ncu->id), "ncu's CSV pages parse as they stream");
    cr_expect_not(analyzer_parses_pages(PROFEED__PROFILER__PROFILER_VTUNE));
    cr_expect_not(analyzer_parses_pages(PROFEED__PROFILER__PROFILER_UNSPECIFIED));
}

static void s_clock_note(const char *path, char *out, size_t cap)
{
    analyzer_file_t files[1] = {{.path = path}};
    analyzer_input_t input = {.files = files, .count = 1};
    analysis_options_t options;
    analysis_options_default(&options);
    feedback_t *fb = NULL;
    pf_error_t err;
    cr_assert_eq(analyzer_run(&input, &options, &fb, &err), PF_OK, "%s: %s", path, err.msg);
    snprintf(out, cap, "%s", feedback_manifest(fb)->clock_control);
    feedback_destroy(&fb);
}

Test(profiler, the_offline_clock_note_names_the_clock_options_of_the_profilers_plans)
{
    char note[256];
    s_clock_note(PF_FIXTURE_DIR "/ncu/h200/full_raw.csv", note, sizeof note);
    cr_expect_str_eq(note, "unknown: the files do not record it (profeed's collector runs ncu with --clock-control "
                           "none)");
    s_clock_note(PF_FIXTURE_DIR "/intel/vtune/low_occupancy.tsv", note, sizeof note);
    cr_expect_str_eq(note, "unknown: the files do not record it", "VTune's plans leave the clocks alone");
}
