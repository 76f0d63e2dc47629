/* profeed-broker: the farm's broker process. See broker.h and docs/protocol.md;
 * its settings (flags, config file, environment) are docs/config.md's. */

#include <signal.h>

#include "broker.h"
#include "config.h"
#include "pf_memory.h"

#define PROG "profeed-broker"

static const char s_about[] =
    "usage: " PROG " [options]\n"
    "\n"
    "Accepts jobs from agents, hands them to collectors that have the GPU and profiler\n"
    "they need (least loaded first), pins each job's pass outputs to one analyzer, and\n"
    "returns the feedback. Heartbeats both ways; a dead collector's jobs are requeued,\n"
    "a dead analyzer's jobs move with their passes to another. Settings come from flags,\n"
    "the environment and a --config file (deploy/config/profeed-broker.cfg is a sample).\n";

/* The defaults are broker_config_default()'s; tests/test_config.c checks them. */
static const config_key_t s_keys[] = {
    {.name = "agents", .type = CONFIG_STRING, .fallback = "tcp://127.0.0.1:5555", .arg = "ENDPOINT",
     .help = "bind for agents; port * = any"},
    {.name = "workers", .type = CONFIG_STRING, .fallback = "tcp://127.0.0.1:5556", .arg = "ENDPOINT",
     .help = "bind for collectors and analyzers"},
    {.name = "metrics", .type = CONFIG_STRING, .arg = "ENDPOINT",
     .help = "serve Prometheus metrics over HTTP there (tcp://0.0.0.0:9556); empty: off"},
    {.name = "endpoints-file", .type = CONFIG_STRING, .arg = "PATH",
     .help = "write the bound endpoints there (agent=..., worker=...)"},
    {.name = "bind-retry-ms", .type = CONFIG_INT, .fallback = "5000", .arg = "N",
     .help = "a TCP port still in use at start is tried again this long before giving up", .min = 0,
     .max = 600000},
    {.name = "heartbeat-ms", .type = CONFIG_INT, .fallback = "1000", .arg = "N", .help = "heartbeat interval",
     .min = 10, .max = 600000},
    {.name = "liveness", .type = CONFIG_INT, .fallback = "3", .arg = "N",
     .help = "missed heartbeats before a peer is dead", .min = 1, .max = 100},
    {.name = "max-attempts", .type = CONFIG_INT, .fallback = "3", .arg = "N", .help = "collection attempts per job",
     .min = 1, .max = 100},
    {.name = "timeout-s", .type = CONFIG_INT, .fallback = "600", .arg = "N", .help = "default job time limit",
     .min = 1, .max = 86400},
    {.name = "retain-s", .type = CONFIG_INT, .fallback = "600", .arg = "N",
     .help = "how long finished jobs are remembered", .min = 0, .max = 7 * 86400},
    {.name = "max-finished", .type = CONFIG_INT, .fallback = "10000", .arg = "N",
     .help = "finished jobs remembered at most (their feedback is kept); the oldest go first", .min = 0,
     .max = 10000000},
    {.name = "max-msg-mb", .type = CONFIG_INT, .fallback = "64", .arg = "N", .help = "largest message accepted",
     .min = 1, .max = 1024},
    {.name = "state-dir", .type = CONFIG_STRING, .arg = "DIR",
     .help = "keep jobs in a journal there, so they survive a broker restart; empty: memory only"},
    {.name = "journal-fsync", .type = CONFIG_BOOL, .fallback = "true",
     .help = "sync the journal before acknowledging a job or pass (off: faster, a power loss can lose jobs)"},
    {.name = "max-retained-mb", .type = CONFIG_INT, .fallback = "256", .arg = "N",
     .help = "MiB of feedback finished jobs may hold; beyond it the oldest delivered are forgotten first", .min = 1,
     .max = 1048576},
    {.name = "chunk-kb", .type = CONFIG_INT, .fallback = "4096", .arg = "N",
     .help = "passes bigger than this stream in zstd chunks of at most this many KiB (collectors that speak chunks)",
     .min = 4, .max = 32768},
    {.name = "max-capture-mb", .type = CONFIG_INT, .fallback = "8192", .arg = "N",
     .help = "MiB of profiler output one job may stream; beyond it the job fails naming this limit", .min = 1,
     .max = 16777216},
    {.name = "stream-memory-mb", .type = CONFIG_INT, .fallback = "1024", .arg = "N",
     .help = "MiB the chunks of streams in flight may hold (4 chunks of chunk-kb each); a stream beyond it waits",
     .min = 1, .max = 16777216},
    {.name = "max-queued", .type = CONFIG_INT, .fallback = "10000", .arg = "N",
     .help = "jobs waiting for a collector; beyond it agents are told to retry later", .min = 1, .max = 10000000},
    {.name = "max-agent-jobs", .type = CONFIG_INT, .fallback = "1000", .arg = "N",
     .help = "unfinished jobs per agent; beyond it the agent is told to retry later", .min = 1, .max = 10000000},
    {.name = "curve-secret", .type = CONFIG_STRING, .arg = "FILE",
     .help = "the broker's certificate (NAME.key_secret from profeed keygen): CURVE on both endpoints"},
    {.name = "agent-keys", .type = CONFIG_STRING, .arg = "DIR",
     .help = "with CURVE: public keys (NAME.key) of the agents allowed to submit"},
    {.name = "collector-keys", .type = CONFIG_STRING, .arg = "DIR",
     .help = "with CURVE: public keys of the collectors allowed to register"},
    {.name = "operator-keys", .type = CONFIG_STRING, .arg = "DIR",
     .help = "with CURVE: public keys of operators, agents whose status lists every job (not only theirs)"},
    {.name = "analyzer-keys", .type = CONFIG_STRING, .arg = "DIR",
     .help = "with CURVE: public keys of the analyzers allowed to register"},
    {.name = "insecure", .type = CONFIG_BOOL, .fallback = "false",
     .help = "allow plaintext on endpoints that leave this machine (logged as a warning)"},
    CONFIG_LOG_KEYS,
};

int main(int argc, char **argv)
{
    int exit_code;
    config_t *settings = config_start("broker", s_keys, sizeof s_keys / sizeof s_keys[0], argc, argv, s_about, NULL, 0,
                                      NULL, &exit_code);
    if (!settings)
        return exit_code;
    broker_config_t config;
    broker_config_default(&config);
    config.agent_endpoint = config_str(settings, "agents");
    config.worker_endpoint = config_str(settings, "workers");
    config.endpoints_file = config_str(settings, "endpoints-file");
    config.metrics_endpoint = config_str(settings, "metrics");
    config.bind_retry_ms = (int) config_int(settings, "bind-retry-ms");
    config.heartbeat_ms = (int) config_int(settings, "heartbeat-ms");
    config.liveness = (int) config_int(settings, "liveness");
    config.max_attempts = (uint32_t) config_int(settings, "max-attempts");
    config.default_timeout_s = (uint32_t) config_int(settings, "timeout-s");
    config.retain_ms = config_int(settings, "retain-s") * 1000;
    config.max_finished = (uint32_t) config_int(settings, "max-finished");
    config.max_msg = (size_t) config_int(settings, "max-msg-mb") * 1024 * 1024;
    config.state_dir = config_str(settings, "state-dir");
    config.journal_sync = config_bool(settings, "journal-fsync");
    config.max_retained_bytes = (size_t) config_int(settings, "max-retained-mb") * 1024 * 1024;
    config.chunk_bytes = (uint32_t) config_int(settings, "chunk-kb") * 1024;
    config.max_capture_bytes = (uint64_t) config_int(settings, "max-capture-mb") * 1024 * 1024;
    config.stream_memory_bytes = (uint64_t) config_int(settings, "stream-memory-mb") * 1024 * 1024;
    config.max_queued = (uint32_t) config_int(settings, "max-queued");
    config.max_agent_jobs = (uint32_t) config_int(settings, "max-agent-jobs");
    config.curve_secret = config_str(settings, "curve-secret");
    config.agent_keys = config_str(settings, "agent-keys");
    config.collector_keys = config_str(settings, "collector-keys");
    config.analyzer_keys = config_str(settings, "analyzer-keys");
    config.operator_keys = config_str(settings, "operator-keys");
    config.insecure = config_bool(settings, "insecure");
    pf_memory_keep_large_buffers();
    /* Past a file-size limit (ulimit -f, RLIMIT_FSIZE) a write raises
     * SIGXFSZ, which ends the process by default. Ignored, the write fails
     * with EFBIG instead, and the journal takes that as it takes a full disk:
     * the record is cut off and refused, and the broker keeps serving
     * (docs/reliability.md). */
    signal(SIGXFSZ, SIG_IGN);
    int rc = broker_run(&config, NULL) == 0 ? 0 : 1;
    config_destroy(&settings);
    return rc;
}
