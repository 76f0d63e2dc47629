/* profeed-collector: runs profilers (or replays captures) for the broker. Its
 * settings (flags, config file, environment) are docs/config.md's. */
#include <stdio.h>

#include "collector.h"
#include "config.h"
#include "pf_memory.h"
#include "pass_plan.h"
#include "profiler.h"

#define PROG "profeed-collector"

static const char s_about[] =
    "usage: " PROG " [options]\n"
    "\n"
    "Offers this machine's GPUs (nvidia-smi) and profilers (ncu on PATH) to the broker\n"
    "and runs the passes of the jobs it is given: fork + execve, never a shell; each pass\n"
    "with a time limit, killed as a process group, its output capped; each pass output\n"
    "sent as soon as the pass ends. With --replay it serves recorded captures instead\n"
    "(no GPU needed) and the feedback says so. Settings come from flags, the environment\n"
    "and a --config file (deploy/config/profeed-collector.cfg is a sample).\n";

/* The defaults are collector_config_default()'s; tests/test_config.c checks them. */
static const config_key_t s_keys[] = {
    {.name = "broker", .type = CONFIG_STRING, .fallback = "tcp://127.0.0.1:5556", .arg = "ENDPOINT",
     .help = "the broker's worker endpoint"},
    {.name = "worker-id", .type = CONFIG_STRING, .arg = "ID", .help = "stable id (default collector-<host>-<pid>)"},
    {.name = "replay", .type = CONFIG_STRING, .arg = "MAP",
     .help = "replay the captures listed in MAP (see docs/protocol.md)"},
    {.name = "gpu", .type = CONFIG_STRING, .arg = "NAME:ARCH[:N]",
     .help = "advertise this GPU (default: nvidia-smi; replay: NVIDIA H200:sm_90)"},
    {.name = "slots", .type = CONFIG_INT, .fallback = "1", .arg = "N", .help = "jobs at once", .min = 1, .max = 1024},
    {.name = "workdir", .type = CONFIG_STRING, .arg = "DIR",
     .help = "run commands there (default: the current directory)"},
    {.name = "pass-timeout-s", .type = CONFIG_INT, .fallback = "600", .arg = "N",
     .help = "per pass when a job sets no timeout", .min = 1, .max = 86400},
    {.name = "max-output-mb", .type = CONFIG_INT, .fallback = "48", .arg = "N",
     .help = "profiler output kept per pass", .min = 1, .max = 1024},
    {.name = "pass-delay-ms", .type = CONFIG_INT, .fallback = "0", .arg = "N",
     .help = "replay: each pass takes this long", .min = 0, .max = 3600000},
    {.name = "attempts", .type = CONFIG_INT, .fallback = "2", .arg = "N",
     .help = "tries per pass; timeouts and failures without an ==ERROR==\nline are retried", .min = 1, .max = 10},
    {.name = "retry-backoff-ms", .type = CONFIG_INT, .fallback = "2000", .arg = "N",
     .help = "wait before the second try, doubling after", .min = 0, .max = 600000},
    /* The older variables keep working: collector.c itself still reads
     * PROFEED_NCU_SUDO and PROFEED_PYTHON, for `profeed submit --local`. */
    {.name = "ncu-sudo", .type = CONFIG_BOOL, .fallback = "false",
     .help = "run profiling steps through `sudo -n -E` (never the default;\nalso PROFEED_NCU_SUDO=1)",
     .env_alias = "PROFEED_NCU_SUDO"},
    {.name = "python", .type = CONFIG_STRING, .arg = "PATH",
     .help = "the Python that runs kernel + problem jobs (default python3;\nalso PROFEED_PYTHON)",
     .env_alias = "PROFEED_PYTHON"},
    {.name = "job-root", .type = CONFIG_STRING, .arg = "DIR",
     .help = "job folders go below DIR (default $TMPDIR or /tmp)"},
    {.name = "keep-job-dirs", .type = CONFIG_BOOL, .fallback = "false",
     .help = "leave job folders in place after the job"},
    {.name = "heartbeat-ms", .type = CONFIG_INT, .fallback = "1000", .arg = "N", .help = "heartbeat interval",
     .min = 10, .max = 600000},
    {.name = "liveness", .type = CONFIG_INT, .fallback = "3", .arg = "N",
     .help = "missed heartbeats before the broker is presumed gone", .min = 1, .max = 100},
    {.name = "allow-programs", .type = CONFIG_STRING, .fallback = "*", .arg = "LIST",
     .help = "programs command jobs may run: names or paths, comma-separated; * = any"},
    {.name = "keep-env", .type = CONFIG_STRING, .fallback = COLLECTOR_KEEP_ENV, .arg = "LIST",
     .help = "environment variables jobs see (NAME or PREFIX*, comma-separated); * = all"},
    {.name = "cpu-limit-s", .type = CONFIG_INT, .fallback = "3600", .arg = "N",
     .help = "CPU seconds per process of a job; 0 = none", .min = 0, .max = 86400 * 7},
    {.name = "file-limit-mb", .type = CONFIG_INT, .fallback = "4096", .arg = "N",
     .help = "largest file a job's process may write, MiB; 0 = none", .min = 0, .max = 1048576},
    {.name = "max-procs", .type = CONFIG_INT, .fallback = "4096", .arg = "N",
     .help = "processes of the job's user at once (not for root); 0 = none", .min = 0, .max = 1048576},
    {.name = "memory-limit-mb", .type = CONFIG_INT, .fallback = "0", .arg = "N",
     .help = "address space per process, MiB; 0 = none (CUDA maps far more than it uses)", .min = 0,
     .max = 1048576 * 64},
    {.name = "run-as", .type = CONFIG_STRING, .arg = "USER",
     .help = "run jobs as this user; required when started as root (root: accept running jobs as root)"},
    CONFIG_CURVE_CLIENT_KEYS,
    CONFIG_LOG_KEYS,
};

enum { A_PRINT_PLAN, A_PRINT_METRICS };
static const config_action_t s_actions[] = {
    [A_PRINT_PLAN] = {.name = "print-plan", .arg = "P[:PLAN]",
                      .help = "print the commands of a pass plan (ncu:core|sol|full,\nunitrace, vtune) and exit"},
    [A_PRINT_METRICS] = {.name = "print-metrics", .arg = "[P:]PLAN",
                         .help = "print the metrics a plan asks for by name (core) and exit"},
};

/* Prints the pass plan of PROFILER[:PLAN] for a placeholder program, one
 * argv per line (`profeed-collector --print-plan ncu:full`), or with
 * `metrics_only` the plan's --metrics list, comma-separated (what
 * bench/ncu_plans.sh measures). Returns 0, or 2 for an unknown plan. */
static int s_print_plan(const char *spec, bool metrics_only, FILE *out)
{
    char buf[128];
    snprintf(buf, sizeof buf, "%s", spec);
    char *name = strchr(buf, ':');
    if (name)
        *name++ = '\0';
    const profiler_t *known = profiler_by_name(buf);
    if (!known) {
        fprintf(stderr, "profeed-collector: --print-plan PROFILER[:PLAN]: PROFILER is one of %s\n", profiler_names());
        return 2;
    }
    Profeed__Profiler profiler = known->id;
    if (metrics_only) {
        const char *const *metrics = pass_plan_metrics(profiler, name ? name : known->plans[0]);
        if (!metrics) {
            fprintf(stderr, "profeed-collector: plan %s does not ask for metrics by name\n", spec);
            return 2;
        }
        for (size_t i = 0; metrics[i]; i++)
            fprintf(out, "%s%s", i ? "," : "", metrics[i]);
        fputc('\n', out);
        return 0;
    }
    char *command[] = {"PROGRAM", "ARGS...", NULL};
    Profeed__PassSpec one, *specs[1] = {&one};
    profeed__pass_spec__init(&one);
    one.name = name;
    pass_plan_input_t input = {
        .language = PROFEED__LANGUAGE__LANGUAGE_CUDA,
        .profiler = profiler,
        .profiler_path = buf,
        .dir = "JOBDIR",
        .command = command,
        .command_len = 2,
        .passes = specs,
        .n_passes = name ? 1 : 0,
    };
    pf_error_t err;
    pass_plan_t *plan = pass_plan_new(&input, &err);
    if (!plan) {
        fprintf(stderr, "profeed-collector: %s\n", err.msg);
        return 2;
    }
    fprintf(out, "# plan %s:%s, %zu passes; environment:", buf, pass_plan_name(plan), pass_plan_count(plan));
    for (char *const *e = pass_plan_env(plan); *e; e++)
        fprintf(out, " %s", *e);
    fputc('\n', out);
    for (size_t i = 0; i < pass_plan_count(plan); i++) {
        const pass_plan_pass_t *pp = pass_plan_pass(plan, i);
        for (size_t st = 0; st < pp->step_count; st++) {
            fprintf(out, "%s (%s)", pp->key, pp->name);
            for (char **a = pp->steps[st].argv; *a; a++)
                fprintf(out, " %s", *a);
            if (pp->steps[st].stdout_name)
                fprintf(out, " > %s/%s", pp->dir, pp->steps[st].stdout_name);
            fputc('\n', out);
        }
    }
    pass_plan_destroy(&plan);
    return 0;
}

static int s_action(size_t action, const char *arg)
{
    if (action == A_PRINT_PLAN)
        return s_print_plan(arg, false, stdout);
    /* A bare PLAN is the plan of that name of the first profiler in the
     * table that has one (core: ncu's). */
    const char *owner = NULL;
    for (size_t i = 0; !owner && !strchr(arg, ':') && i < profiler_count(); i++) {
        for (size_t k = 0; !owner && profiler_at(i)->plans[k]; k++)
            owner = strcmp(profiler_at(i)->plans[k], arg) == 0 ? profiler_at(i)->name : NULL;
    }
    if (!owner && !strchr(arg, ':')) {
        fprintf(stderr, PROG ": --print-metrics: no profiler has a plan \"%.64s\"\n", arg);
        return 2;
    }
    char spec[128];
    int n = owner ? snprintf(spec, sizeof spec, "%s:%s", owner, arg) : snprintf(spec, sizeof spec, "%s", arg);
    if (n < 0 || (size_t) n >= sizeof spec) {
        fprintf(stderr, PROG ": --print-metrics: no plan has so long a name\n");
        return 2;
    }
    return s_print_plan(spec, true, stdout);
}

int main(int argc, char **argv)
{
    int exit_code;
    config_t *settings = config_start("collector", s_keys, sizeof s_keys / sizeof s_keys[0], argc, argv, s_about,
                                      s_actions, sizeof s_actions / sizeof s_actions[0], s_action, &exit_code);
    if (!settings)
        return exit_code;
    collector_config_t config;
    collector_config_default(&config);
    config.broker_endpoint = config_str(settings, "broker");
    config.allow_programs = config_str(settings, "allow-programs");
    config.keep_env = config_str(settings, "keep-env");
    config.cpu_limit_s = (uint32_t) config_int(settings, "cpu-limit-s");
    config.file_limit_mb = (uint32_t) config_int(settings, "file-limit-mb");
    config.max_procs = (uint32_t) config_int(settings, "max-procs");
    config.memory_limit_mb = (uint32_t) config_int(settings, "memory-limit-mb");
    config.run_as = config_str(settings, "run-as");
    wire_curve_client_read(settings, &config.curve);
    config.worker_id = config_str(settings, "worker-id");
    config.replay_map = config_str(settings, "replay");
    config.gpu = config_str(settings, "gpu");
    config.workdir = config_str(settings, "workdir");
    config.slots = (uint32_t) config_int(settings, "slots");
    config.pass_timeout_s = (uint32_t) config_int(settings, "pass-timeout-s");
    config.max_output = (size_t) config_int(settings, "max-output-mb") * 1024 * 1024;
    config.pass_delay_ms = (int) config_int(settings, "pass-delay-ms");
    config.attempts = (uint32_t) config_int(settings, "attempts");
    config.retry_backoff_ms = (int) config_int(settings, "retry-backoff-ms");
    config.sudo = config_bool(settings, "ncu-sudo");
    config.python = config_str(settings, "python");
    config.job_root = config_str(settings, "job-root");
    config.keep_job_dirs = config_bool(settings, "keep-job-dirs");
    config.heartbeat_ms = (int) config_int(settings, "heartbeat-ms");
    config.liveness = (int) config_int(settings, "liveness");
    pf_memory_keep_large_buffers();
    int rc = collector_run(&config, NULL) == 0 ? 0 : 1;
    config_destroy(&settings);
    return rc;
}
