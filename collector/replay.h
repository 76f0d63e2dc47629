/* replay: recorded profiler captures served as if a profiler had just run.
 *
 * For machines without a GPU (demos, CI, load tests). A map file names, for
 * each program, the passes of its recorded capture, one line per pass:
 *
 *     # program   pass key   [exit=N]  files (relative to the map's folder)
 *     kernels     ncu.000    ../ncu/h200/full_raw.csv ../ncu/h200/full_details.csv
 *     crash       ncu.000    exit=9    ../ncu/h200/err_crash_stdout.txt
 *     corpus_v2   ncu.001    source    ../ncu/h200-v2/source_aos_float3_x.csv
 *
 * A pass marked `source` is a recorded source pass: it is replayed only for
 * jobs that ask for one (JobRequest.source), as a real collector adds it.
 *
 * A pass key names its profiler, as a real pass's does ("ncu.000",
 * "unitrace.000", "vtune.000": common/profiler.h); the pass is sent as that
 * profiler's output, and the collector offers the profilers its map records.
 *
 * A job is matched by the base name of its command's argv[0]; a program named
 * `*` matches any command. The pass outputs carry `replay_source` (the map and
 * the files), so the feedback says the profile was replayed and from where. */
#ifndef REPLAY_H
#define REPLAY_H

#include <stdbool.h>
#include <stddef.h>

#include "pf_error.h"
#include "profeed.pb-c.h"

#define REPLAY_MAX_FILES 16

typedef struct {
    char program[128];
    char pass_key[129];
    Profeed__Profiler profiler;       /* the one the pass key names */
    int exit_status;
    bool source;                      /* a recorded source pass: replayed only for jobs that ask
                                         for one (JobRequest.source), as a real collector runs it */
    char *files[REPLAY_MAX_FILES];    /* resolved paths, owned */
    size_t file_count;
} replay_pass_t;

typedef struct replay_t replay_t;

/* Loads a map; NULL with `err` naming the file, line and problem. Every file
 * it names must be readable now. */
replay_t *replay_load(const char *map_path, pf_error_t *err);
void replay_destroy(replay_t **self_p);

const char *replay_path(const replay_t *self);

/* The passes recorded for `program` (a base name), else those of `*`, in
 * map order: writes at most `cap` into `out` and returns how many. Safe to
 * call from several job threads at once. */
/* The profilers the map's passes record, each once, in map order: writes at
 * most `cap` into `out` and returns how many. */
size_t replay_profilers(const replay_t *self, Profeed__Profiler *out, size_t cap);

size_t replay_find(const replay_t *self, const char *program, const replay_pass_t **out, size_t cap);

#endif
