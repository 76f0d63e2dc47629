/* profeed-broker: the farm's broker process. See broker.h and docs/protocol.md. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "broker.h"
#include "cli_util.h"
#include "pf_log.h"

#define PROG "profeed-broker"

static void s_help(FILE *out)
{
    fprintf(out,
            "usage: " PROG " [options]\n"
            "\n"
            "Accepts jobs from agents, hands them to collectors that have the GPU and profiler\n"
            "they need (least loaded first), pins each job's pass outputs to one analyzer, and\n"
            "returns the feedback. Heartbeats both ways; a dead collector's jobs are requeued,\n"
            "a dead analyzer's jobs move with their passes to another. Configuration is by\n"
            "flags only (no config file yet).\n"
            "\n"
            "options:\n"
            "  --agents ENDPOINT      bind for agents (default tcp://127.0.0.1:5555; port * = any)\n"
            "  --workers ENDPOINT     bind for collectors and analyzers (default tcp://127.0.0.1:5556)\n"
            "  --endpoints-file PATH  write the bound endpoints there (agent=..., worker=...)\n"
            "  --heartbeat-ms N       heartbeat interval (default 1000)\n"
            "  --liveness N           missed heartbeats before a peer is dead (default 3)\n"
            "  --max-attempts N       collection attempts per job (default 3)\n"
            "  --timeout-s N          default job time limit (default 600)\n"
            "  --retain-s N           how long finished jobs are remembered (default 600)\n"
            "  --max-msg-mb N         largest message accepted (default 64)\n"
            "  --log-level LEVEL      debug|info|warn|error|off (default info)\n"
            "  --log-json             log JSON objects\n"
            "  -h, --help             this text\n");
}

int main(int argc, char **argv)
{
    enum { O_AGENTS = 256, O_WORKERS, O_EPFILE, O_HB, O_LIVE, O_ATTEMPTS, O_TIMEOUT, O_RETAIN, O_MAXMSG,
           O_LEVEL, O_JSON };
    static const struct option longopts[] = {
        {"agents", required_argument, NULL, O_AGENTS},
        {"workers", required_argument, NULL, O_WORKERS},
        {"endpoints-file", required_argument, NULL, O_EPFILE},
        {"heartbeat-ms", required_argument, NULL, O_HB},
        {"liveness", required_argument, NULL, O_LIVE},
        {"max-attempts", required_argument, NULL, O_ATTEMPTS},
        {"timeout-s", required_argument, NULL, O_TIMEOUT},
        {"retain-s", required_argument, NULL, O_RETAIN},
        {"max-msg-mb", required_argument, NULL, O_MAXMSG},
        {"log-level", required_argument, NULL, O_LEVEL},
        {"log-json", no_argument, NULL, O_JSON},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    broker_config_t config;
    broker_config_default(&config);
    int opt;
    long long v;
    while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (opt) {
        case O_AGENTS: config.agent_endpoint = optarg; break;
        case O_WORKERS: config.worker_endpoint = optarg; break;
        case O_EPFILE: config.endpoints_file = optarg; break;
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
        case O_ATTEMPTS:
            if (!cli_parse_int(PROG, "--max-attempts", optarg, 1, 100, &v))
                return 2;
            config.max_attempts = (uint32_t) v;
            break;
        case O_TIMEOUT:
            if (!cli_parse_int(PROG, "--timeout-s", optarg, 1, 86400, &v))
                return 2;
            config.default_timeout_s = (uint32_t) v;
            break;
        case O_RETAIN:
            if (!cli_parse_int(PROG, "--retain-s", optarg, 0, 7 * 86400, &v))
                return 2;
            config.retain_ms = v * 1000;
            break;
        case O_MAXMSG:
            if (!cli_parse_int(PROG, "--max-msg-mb", optarg, 1, 1024, &v))
                return 2;
            config.max_msg = (size_t) v * 1024 * 1024;
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
    return broker_run(&config, NULL) == 0 ? 0 : 1;
}
