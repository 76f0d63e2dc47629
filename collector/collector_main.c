/* profeed-collector: runs profilers (or replays captures) for the broker. */
#include <getopt.h>
#include <stdio.h>

#include "cli_util.h"
#include "collector.h"
#include "pf_log.h"

#define PROG "profeed-collector"

static void s_help(FILE *out)
{
    fprintf(out,
            "usage: " PROG " [options]\n"
            "\n"
            "Offers this machine's GPUs (nvidia-smi) and profilers (ncu on PATH) to the broker\n"
            "and runs the passes of the jobs it is given: fork + execve, never a shell; each pass\n"
            "with a time limit, killed as a process group, its output capped; each pass output\n"
            "sent as soon as the pass ends. With --replay it serves recorded captures instead\n"
            "(no GPU needed) and the feedback says so. Configuration is by flags only.\n"
            "\n"
            "options:\n"
            "  --broker ENDPOINT      the broker's worker endpoint (default tcp://127.0.0.1:5556)\n"
            "  --worker-id ID         stable id (default collector-<host>-<pid>)\n"
            "  --replay MAP           replay the captures listed in MAP (see docs/protocol.md)\n"
            "  --gpu NAME:ARCH[:N]    advertise this GPU (default: nvidia-smi; replay: NVIDIA H200:sm_90)\n"
            "  --slots N              jobs at once (default 1)\n"
            "  --workdir DIR          run commands there (default: the current directory)\n"
            "  --pass-timeout-s N     per pass when a job sets no timeout (default 600)\n"
            "  --max-output-mb N      profiler output kept per pass (default 48)\n"
            "  --pass-delay-ms N      replay: each pass takes this long (default 0)\n"
            "  --attempts N           tries per pass; timeouts and failures without an ==ERROR==\n"
            "                         line are retried (default 2)\n"
            "  --retry-backoff-ms N   wait before the second try, doubling after (default 2000)\n"
            "  --ncu-sudo             run profiling steps through `sudo -n -E` (never the default;\n"
            "                         also PROFEED_NCU_SUDO=1)\n"
            "  --python PATH          the Python that runs kernel + problem jobs (default python3;\n"
            "                         also PROFEED_PYTHON)\n"
            "  --job-root DIR         job folders go below DIR (default $TMPDIR or /tmp)\n"
            "  --keep-job-dirs        leave job folders in place after the job\n"
            "  --print-plan P[:PLAN]  print the commands of a pass plan (ncu:core|sol|full,\n"
            "                         unitrace, vtune) and exit\n"
            "  --print-metrics PLAN   print the ncu plan's --metrics list (core) and exit\n"
            "  --heartbeat-ms N       heartbeat interval (default 1000)\n"
            "  --liveness N           missed heartbeats before the broker is presumed gone (default 3)\n"
            "  --log-level LEVEL      debug|info|warn|error|off (default info)\n"
            "  --log-json             log JSON objects\n"
            "  -h, --help             this text\n");
}

int main(int argc, char **argv)
{
    enum { O_BROKER = 256, O_ID, O_REPLAY, O_GPU, O_SLOTS, O_WORKDIR, O_TIMEOUT, O_MAXOUT, O_DELAY, O_HB, O_LIVE,
           O_LEVEL, O_JSON, O_ATTEMPTS, O_BACKOFF, O_SUDO, O_PYTHON, O_JOBROOT, O_KEEP, O_PRINT_PLAN,
           O_PRINT_METRICS };
    static const struct option longopts[] = {
        {"broker", required_argument, NULL, O_BROKER},
        {"worker-id", required_argument, NULL, O_ID},
        {"replay", required_argument, NULL, O_REPLAY},
        {"gpu", required_argument, NULL, O_GPU},
        {"slots", required_argument, NULL, O_SLOTS},
        {"workdir", required_argument, NULL, O_WORKDIR},
        {"pass-timeout-s", required_argument, NULL, O_TIMEOUT},
        {"max-output-mb", required_argument, NULL, O_MAXOUT},
        {"pass-delay-ms", required_argument, NULL, O_DELAY},
        {"heartbeat-ms", required_argument, NULL, O_HB},
        {"liveness", required_argument, NULL, O_LIVE},
        {"log-level", required_argument, NULL, O_LEVEL},
        {"log-json", no_argument, NULL, O_JSON},
        {"attempts", required_argument, NULL, O_ATTEMPTS},
        {"retry-backoff-ms", required_argument, NULL, O_BACKOFF},
        {"ncu-sudo", no_argument, NULL, O_SUDO},
        {"python", required_argument, NULL, O_PYTHON},
        {"job-root", required_argument, NULL, O_JOBROOT},
        {"keep-job-dirs", no_argument, NULL, O_KEEP},
        {"print-plan", required_argument, NULL, O_PRINT_PLAN},
        {"print-metrics", required_argument, NULL, O_PRINT_METRICS},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    collector_config_t config;
    collector_config_default(&config);
    int opt;
    long long v;
    while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (opt) {
        case O_BROKER: config.broker_endpoint = optarg; break;
        case O_ID: config.worker_id = optarg; break;
        case O_REPLAY: config.replay_map = optarg; break;
        case O_GPU: config.gpu = optarg; break;
        case O_WORKDIR: config.workdir = optarg; break;
        case O_SLOTS:
            if (!cli_parse_int(PROG, "--slots", optarg, 1, 1024, &v))
                return 2;
            config.slots = (uint32_t) v;
            break;
        case O_TIMEOUT:
            if (!cli_parse_int(PROG, "--pass-timeout-s", optarg, 1, 86400, &v))
                return 2;
            config.pass_timeout_s = (uint32_t) v;
            break;
        case O_MAXOUT:
            if (!cli_parse_int(PROG, "--max-output-mb", optarg, 1, 1024, &v))
                return 2;
            config.max_output = (size_t) v * 1024 * 1024;
            break;
        case O_DELAY:
            if (!cli_parse_int(PROG, "--pass-delay-ms", optarg, 0, 3600000, &v))
                return 2;
            config.pass_delay_ms = (int) v;
            break;
        case O_HB:
            if (!cli_parse_int(PROG, "--heartbeat-ms", optarg, 10, 600000, &v))
                return 2;
            config.heartbeat_ms = (int) v;
            break;
        case O_LIVE:
            if (!cli_parse_int(PROG, "--liveness", optarg, 1, 100, &v))
                return 2;
            config.liveness = (int) v;
            break;
        case O_LEVEL: {
            pf_log_level_t level;
            if (!pf_log_parse_level(optarg, &level)) {
                fprintf(stderr, PROG ": --log-level must be debug, info, warn, error or off\n");
                return 2;
            }
            pf_log_set_level(level);
            break;
        }
        case O_JSON: pf_log_set_json(true); break;
        case O_ATTEMPTS:
            if (!cli_parse_int(PROG, "--attempts", optarg, 1, 10, &v))
                return 2;
            config.attempts = (uint32_t) v;
            break;
        case O_BACKOFF:
            if (!cli_parse_int(PROG, "--retry-backoff-ms", optarg, 0, 600000, &v))
                return 2;
            config.retry_backoff_ms = (int) v;
            break;
        case O_SUDO: config.sudo = true; break;
        case O_PYTHON: config.python = optarg; break;
        case O_JOBROOT: config.job_root = optarg; break;
        case O_KEEP: config.keep_job_dirs = true; break;
        case O_PRINT_PLAN: return collector_print_plan(optarg, false, stdout);
        case O_PRINT_METRICS: {
            char spec[128];
            int n = snprintf(spec, sizeof spec, "ncu:%s", optarg);
            if (n < 0 || (size_t) n >= sizeof spec) {
                fprintf(stderr, PROG ": --print-metrics: no plan has so long a name\n");
                return 2;
            }
            return collector_print_plan(spec, true, stdout);
        }
        case 'h': s_help(stdout); return 0;
        default: s_help(stderr); return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, PROG ": unexpected argument \"%s\"\n", argv[optind]);
        return 2;
    }
    return collector_run(&config, NULL) == 0 ? 0 : 1;
}
