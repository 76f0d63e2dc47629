/* profeed-analyzer: turns a job's pass outputs into feedback for the broker. */
#include <getopt.h>
#include <stdio.h>

#include "cli_util.h"
#include "pf_log.h"
#include "worker.h"

#define PROG "profeed-analyzer"

static void s_help(FILE *out)
{
    fprintf(out,
            "usage: " PROG " [options]\n"
            "\n"
            "Registers with the broker as an analyzer, collates each job's pass outputs (all\n"
            "of a job come to one analyzer) and returns the feedback: text, JSON and the\n"
            "findings as data. Run as many as analysis needs. Configuration is by flags only.\n"
            "\n"
            "options:\n"
            "  --broker ENDPOINT      the broker's worker endpoint (default tcp://127.0.0.1:5556)\n"
            "  --worker-id ID         stable id (default analyzer-<host>-<pid>)\n"
            "  --max-jobs N           jobs with passes held at once (default 256)\n"
            "  --heartbeat-ms N       heartbeat interval (default 1000)\n"
            "  --liveness N           missed heartbeats before the broker is presumed gone (default 3)\n"
            "  --log-level LEVEL      debug|info|warn|error|off (default info)\n"
            "  --log-json             log JSON objects\n"
            "  -h, --help             this text\n");
}

int main(int argc, char **argv)
{
    enum { O_BROKER = 256, O_ID, O_MAXJOBS, O_HB, O_LIVE, O_LEVEL, O_JSON };
    static const struct option longopts[] = {
        {"broker", required_argument, NULL, O_BROKER},
        {"worker-id", required_argument, NULL, O_ID},
        {"max-jobs", required_argument, NULL, O_MAXJOBS},
        {"heartbeat-ms", required_argument, NULL, O_HB},
        {"liveness", required_argument, NULL, O_LIVE},
        {"log-level", required_argument, NULL, O_LEVEL},
        {"log-json", no_argument, NULL, O_JSON},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    worker_config_t config;
    worker_config_default(&config);
    int opt;
    long long v;
    while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (opt) {
        case O_BROKER: config.broker_endpoint = optarg; break;
        case O_ID: config.worker_id = optarg; break;
        case O_MAXJOBS:
            if (!cli_parse_int(PROG, "--max-jobs", optarg, 1, 1024, &v))
                return 2;
            config.max_jobs = (uint32_t) v;
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
        case 'h': s_help(stdout); return 0;
        default: s_help(stderr); return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, PROG ": unexpected argument \"%s\"\n", argv[optind]);
        return 2;
    }
    return worker_run(&config, NULL) == 0 ? 0 : 1;
}
