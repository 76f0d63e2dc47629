#include "cmd_status.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_util.h"
#include "cmd_security.h"
#include "profeed_client.h"

static void s_help(FILE *out)
{
    fprintf(out, "usage: profeed status [--endpoint tcp://HOST:PORT] [--json] [--wait-ms N]\n"
                 "                      [--curve-secret FILE --broker-key FILE | --insecure]\n"
                 "\n"
                 "Shows the broker's workers (collectors with their GPUs, analyzers), how busy\n"
                 "each is, the queue depth and the jobs in flight.\n"
                 "\n"
                 "  --endpoint E   the broker's agent endpoint (default tcp://127.0.0.1:5555)\n"
                 "  --json         JSON instead of text\n"
                 "  --wait-ms N    how long to wait for the answer (default 3000)\n"
                 "%s"
                 "\n"
                 "exit status:\n"
                 "  0    the broker answered; its status is printed\n"
                 "  2    bad input: an option, the endpoint (not an endpoint, a host that does\n"
                 "       not resolve), or the broker refused the request (its worker endpoint)\n"
                 "  4    no answer from the broker within --wait-ms\n"
                 "  130  interrupted (Ctrl-C)\n",
            CMD_SECURITY_HELP);
}

int cmd_status(int argc, char **argv)
{
    enum { O_ENDPOINT = 256, O_JSON, O_WAIT, O_SECRET, O_BROKER_KEY, O_INSECURE };
    static const struct option longopts[] = {
        {"curve-secret", required_argument, NULL, O_SECRET},
        {"broker-key", required_argument, NULL, O_BROKER_KEY},
        {"insecure", no_argument, NULL, O_INSECURE},
        {"endpoint", required_argument, NULL, O_ENDPOINT},
        {"json", no_argument, NULL, O_JSON},
        {"wait-ms", required_argument, NULL, O_WAIT},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *endpoint = "tcp://127.0.0.1:5555";
    profeed_security_t security;
    cmd_security_from_env(&security);
    int json = 0;
    long long wait_ms = 3000;
    optind = 1;
    int opt;
    while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        switch (opt) {
        case O_ENDPOINT: endpoint = optarg; break;
        case O_JSON: json = 1; break;
        case O_SECRET: security.curve_secret = optarg; break;
        case O_BROKER_KEY: security.broker_key = optarg; break;
        case O_INSECURE: security.insecure = 1; break;
        case O_WAIT:
            if (!cli_parse_int("profeed status", "--wait-ms", optarg, 1, 3600000, &wait_ms))
                return 2;
            break;
        case 'h': s_help(stdout); return 0;
        default: s_help(stderr); return 2;
        }
    }
    char *why = NULL;
    profeed_farm_t *farm = profeed_farm_open(endpoint, 0, 0, &security, &why);
    if (!farm) {
        fprintf(stderr, "profeed status: %s\n", why ? why : "cannot connect");
        free(why);
        return 2;
    }
    char *output = NULL, *error = NULL;
    profeed_result_t rc = profeed_farm_status(farm, (int) wait_ms, json, &output, &error);
    profeed_farm_destroy(&farm);
    if (output) {
        fputs(output, stdout);
        if (json)
            fputc('\n', stdout);
    }
    if (error)
        fprintf(stderr, "profeed status: %s\n", error);
    free(output);
    free(error);
    return (int) rc;
}
