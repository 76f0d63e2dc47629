/* replay: a map's pass keys name their profiler; the collector offers the
 * profilers its map records (issue 17: Intel captures cross the farm). */
#include "replay.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

static replay_t *s_load(const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/replay/%s", PF_FIXTURE_DIR, name);
    pf_error_t err = {0};
    replay_t *replay = replay_load(path, &err);
    cr_assert_not_null(replay, "%s: %s", path, err.msg);
    return replay;
}

Test(replay, the_intel_map_offers_unitrace_and_vtune_and_its_passes_say_so)
{
    replay_t *replay = s_load("intel.map");
    Profeed__Profiler offered[8];
    cr_assert_eq(replay_profilers(replay, offered, 8), 2);
    cr_expect_eq(offered[0], PROFEED__PROFILER__PROFILER_UNITRACE);
    cr_expect_eq(offered[1], PROFEED__PROFILER__PROFILER_VTUNE);
    cr_expect_eq(replay_profilers(replay, offered, 1), 1, "bounded by cap");
    const replay_pass_t *passes[8];
    cr_assert_eq(replay_find(replay, "b580", passes, 8), 3);
    for (size_t i = 0; i < 3; i++)
        cr_expect_eq(passes[i]->profiler, PROFEED__PROFILER__PROFILER_UNITRACE, "pass %zu", i);
    cr_assert_eq(replay_find(replay, "kf_hotspots", passes, 8), 1);
    cr_expect_eq(passes[0]->profiler, PROFEED__PROFILER__PROFILER_VTUNE);
    replay_destroy(&replay);
}

Test(replay, the_h200_map_offers_ncu_alone)
{
    replay_t *replay = s_load("h200.map");
    Profeed__Profiler offered[8];
    cr_assert_eq(replay_profilers(replay, offered, 8), 1);
    cr_expect_eq(offered[0], PROFEED__PROFILER__PROFILER_NCU);
    replay_destroy(&replay);
}

Test(replay, a_pass_key_naming_no_profiler_is_refused_with_file_and_line)
{
    char dir[] = "/tmp/profeed-replay.XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char map[1100], data[1100];
    snprintf(map, sizeof map, "%s/bad.map", dir);
    snprintf(data, sizeof data, "%s/out.csv", dir);
    FILE *f = fopen(data, "w");
    cr_assert_not_null(f);
    fputs("x\n", f);
    fclose(f);
    f = fopen(map, "w");
    cr_assert_not_null(f);
    fputs("# a comment\nprog ncu.000 out.csv\nprog rocprof.000 out.csv\n", f);
    fclose(f);
    pf_error_t err = {0};
    replay_t *replay = replay_load(map, &err);
    cr_expect_null(replay);
    cr_expect(strstr(err.msg, "line 3") && strstr(err.msg, "\"rocprof.000\" names no profiler"), "%s", err.msg);
    replay_destroy(&replay);
    unlink(data);
    unlink(map);
    rmdir(dir);
}
