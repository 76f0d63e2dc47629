/* profeed-analyzer: turns a job's pass outputs into feedback for the broker.
 * Its settings (flags, config file, environment) are docs/config.md's. */

#include "config.h"
#include "pf_memory.h"
#include "worker.h"

#define PROG "profeed-analyzer"

static const char s_about[] =
    "usage: " PROG " [options]\n"
    "\n"
    "Registers with the broker as an analyzer, collates each job's pass outputs (all\n"
    "of a job come to one analyzer) and returns the feedback: text, JSON and the\n"
    "findings as data. Run as many as analysis needs. Settings come from flags, the\n"
    "environment and a --config file (deploy/config/profeed-analyzer.cfg is a sample).\n";

/* The defaults are worker_config_default()'s; tests/test_config.c checks them. */
static const config_key_t s_keys[] = {
    {.name = "broker", .type = CONFIG_STRING, .fallback = "tcp://127.0.0.1:5556", .arg = "ENDPOINT",
     .help = "the broker's worker endpoint"},
    {.name = "worker-id", .type = CONFIG_STRING, .arg = "ID", .help = "stable id (default analyzer-<host>-<pid>)"},
    {.name = "max-jobs", .type = CONFIG_INT, .fallback = "256", .arg = "N",
     .help = "jobs with passes held at once", .min = 1, .max = 1024},
    {.name = "heartbeat-ms", .type = CONFIG_INT, .fallback = "1000", .arg = "N", .help = "heartbeat interval",
     .min = 10, .max = 600000},
    {.name = "liveness", .type = CONFIG_INT, .fallback = "3", .arg = "N",
     .help = "missed heartbeats before the broker is presumed gone", .min = 1, .max = 100},
    {.name = "memory-mb", .type = CONFIG_INT, .fallback = "1024", .arg = "MB",
     .help = "memory one job's analysis may hold (its collated data), in MiB; a job past it gets an error feedback",
     .min = 1, .max = 1048576},
    CONFIG_CURVE_CLIENT_KEYS,
    CONFIG_LOG_KEYS,
};

int main(int argc, char **argv)
{
    int exit_code;
    config_t *settings = config_start("analyzer", s_keys, sizeof s_keys / sizeof s_keys[0], argc, argv, s_about, NULL, 0,
                                      NULL, &exit_code);
    if (!settings)
        return exit_code;
    worker_config_t config;
    worker_config_default(&config);
    config.broker_endpoint = config_str(settings, "broker");
    wire_curve_client_read(settings, &config.curve);
    config.worker_id = config_str(settings, "worker-id");
    config.max_jobs = (uint32_t) config_int(settings, "max-jobs");
    config.heartbeat_ms = (int) config_int(settings, "heartbeat-ms");
    config.liveness = (int) config_int(settings, "liveness");
    config.memory_limit = (size_t) config_int(settings, "memory-mb") * 1024 * 1024;
    pf_memory_keep_large_buffers();
    int rc = worker_run(&config, NULL) == 0 ? 0 : 1;
    config_destroy(&settings);
    return rc;
}
