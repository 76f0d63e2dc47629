#define _DEFAULT_SOURCE /* realpath() */
#include "cmd_submit.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <czmq.h>

#include "broker.h"
#include "cli_util.h"
#include "file_read.h"
#include "cmd_security.h"
#include "collector.h"
#include "pf_log.h"
#include "profeed_client.h"
#include "worker.h"

static void s_help(FILE *out)
{
    fprintf(out,
            "usage: profeed submit --language LANG [options] -- COMMAND [ARGS...]\n"
            "       profeed submit --language LANG [options] --kernel FILE --problem FILE\n"
            "\n"
            "Runs COMMAND under a profiler on the farm (a collector with a matching GPU),\n"
            "has its output analyzed, and prints the feedback. Progress goes to stderr when\n"
            "it is a terminal.\n"
            "\n"
            "options:\n"
            "  --language LANG      cuda, triton, pytorch, sycl or ocl (required)\n"
            "  --arch ARCH          the GPU architecture wanted, e.g. sm_90 (default: any)\n"
            "  --profiler NAME      ncu, unitrace or vtune (default: the collector picks)\n"
            "  --format text|json|markdown\n"
            "                       text for an LLM prompt (default), JSON for programs,\n"
            "                       Markdown for people; --json is --format json\n"
            "  --max-chars N        text: keep the most important findings within N characters\n"
            "                       (at least 200; not with json or markdown, which are not cut)\n"
            "  --max-tokens N       text: the same within N estimated tokens (at least 64)\n"
            "  --source             ncu: add a source pass (--import-source yes, the source page per\n"
            "                       kernel) so findings name their CUDA lines (build with -lineinfo)\n"
            "  --top N              analyze at most N kernels (default: all above --min-share)\n"
            "  --min-share PCT      analyze kernels taking at least PCT%% of profiled time\n"
            "                       (default 5, where the busiest kernel is analyzed anyway)\n"
            "  --collated           JSON: include the collated per-launch metrics (left out,\n"
            "                       with a note, when they would pass the message limit)\n"
            "  --endpoint E         the broker's agent endpoint (default tcp://127.0.0.1:5555)\n"
            "  --job-id ID          a job id of your own (default: a new UUID); submitting the\n"
            "                       same id again returns the same feedback\n"
            "  --timeout-s N        the job's time limit (default: the broker's)\n"
            "  --wait-s N           give up waiting after N seconds (default: wait for the job)\n"
            "  --local              run broker, collector and analyzer in this process (inproc);\n"
            "                       the collector profiles for real when a profiler for the\n"
            "                       host's GPUs is on PATH (ncu), else --replay\n"
            "  --replay MAP         with --local: replay recorded captures (default, without ncu:\n"
            "                       the bundled H200 map, share/profeed/replay/h200.map)\n"
            "  --pass-delay-ms N    with --local --replay: each replayed pass takes N ms\n"
            "  --kernel FILE        a kernel + problem job instead of a command: FILE defines\n"
            "                       kernel_function (Triton, PyTorch, CUDA via PyTorch)\n"
            "  --problem FILE       ... and FILE defines Model, get_inputs(), get_init_inputs();\n"
            "                       the collector's wrapper profiles one launch after warm-up\n"
            "  --plan NAME          a named pass plan: ncu core (default), sol, full\n"
            "  --round N            the optimisation round, kept in the feedback's metadata\n"
            "  --baseline-job ID    compare with this earlier job of yours (finished, still\n"
            "                       retained by the broker): the feedback opens with the change\n"
            "                       since it; a baseline that cannot be used is said in a note\n"
            "                       and the job still gets its plain feedback (docs/baselines.md)\n"
            "  --agent-id ID        who the job is for (the broker's backpressure counts by it;\n"
            "                       without CURVE keys, a baseline must have the same agent id)\n"
            "  --kernel-regex RE    profile only kernels whose names match RE\n"
            "  --nvtx-range R       profile only launches in NVTX range R (\"name/\" for push/pop)\n"
            "  --launch-skip N      skip the first N launches\n"
            "  --launch-count N     profile at most N launches\n"
            CMD_SECURITY_HELP
            "  -h, --help           this text\n"
            "\n"
            "\n"
            "waiting: the broker must answer within 3 s, else \"no answer from the broker\";\n"
            "then submit waits until the job ends (the broker ends every job within its time\n"
            "limit, --timeout-s or the broker's default of 600 s) or --wait-s. A broker that\n"
            "answered and then falls silent is reconnected to and sent the job again, said on\n"
            "stderr, for up to 30 s.\n"
            "\n"
            "exit status:\n"
            "  0    the feedback is printed (also when no kernel was profiled)\n"
            "  1    another failure (out of memory; --local: the in-process farm did not start)\n"
            "  2    bad input: an option, the endpoint (not an endpoint, a host that does not\n"
            "       resolve, the broker's worker endpoint), the request, or profiler output that\n"
            "       cannot be read\n"
            "  3    the profiler reported an error (the feedback quotes it)\n"
            "  4    refused or no answer: no collector offers the language, GPU arch or\n"
            "       profiler (the message lists what is offered), the broker did not answer\n"
            "       within 3 s, or no feedback came within --wait-s\n"
            "  5    the job did not finish within its time limit, or failed after its retries\n"
            "  130  interrupted (Ctrl-C)\n");
}

/* What the wait ran into (the broker silent, the farm busy): said always,
 * terminal or not, so a caller never waits without knowing why. */
static void s_notice(const char *message, void *arg)
{
    (void) arg;
    fprintf(stderr, "profeed submit: %s\n", message);
}

static void s_progress(const char *job_id, const char *state, unsigned done, unsigned count, void *arg)
{
    (void) arg;
    if (count)
        fprintf(stderr, "profeed: job %s: %s (%u of %u passes)\n", job_id, state, done, count);
    else
        fprintf(stderr, "profeed: job %s: %s\n", job_id, state);
}

/* The bundled replay map into `out`: the source tree's when this program
 * runs from its build folder, else the one installed beside it
 * (PREFIX/share/profeed/replay/h200.map for PREFIX/bin/profeed-farm). An
 * installed copy never reads the clone it was built from. False when the
 * program cannot tell where it is. */
static bool s_default_replay(char *out, size_t cap)
{
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return false;
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    if (!slash)
        return false;
    *slash = '\0';
    char build[4096];
    bool in_build = realpath(PROFEED_BUILD_BIN_DIR, build) && strcmp(self, build) == 0;
    int w = in_build
                ? snprintf(out, cap, "%s", PROFEED_SOURCE_REPLAY)
                : snprintf(out, cap, "%s/../%s", self, PROFEED_INSTALL_REPLAY);
    return w > 0 && (size_t) w < cap;
}

/* The three roles in this process, over inproc endpoints. */
typedef struct {
    broker_config_t broker;
    collector_config_t collector;
    worker_config_t worker;
    char agents[64], workers[64];
    char default_replay[4096];
    zactor_t *broker_actor, *collector_actor, *worker_actor;
} local_farm_t;

static void s_local_stop(local_farm_t *farm)
{
    zactor_destroy(&farm->collector_actor);
    zactor_destroy(&farm->worker_actor);
    zactor_destroy(&farm->broker_actor);
}

static int s_local_start(local_farm_t *farm, const char *replay, int pass_delay_ms)
{
    snprintf(farm->agents, sizeof farm->agents, "inproc://profeed-agents-%ld", (long) getpid());
    snprintf(farm->workers, sizeof farm->workers, "inproc://profeed-workers-%ld", (long) getpid());
    broker_config_default(&farm->broker);
    farm->broker.agent_endpoint = farm->agents;
    farm->broker.worker_endpoint = farm->workers;
    /* inproc peers die only with the process: short heartbeats are cheap. */
    farm->broker.heartbeat_ms = 250;
    collector_config_default(&farm->collector);
    farm->collector.broker_endpoint = farm->workers;
    farm->collector.worker_id = "local-collector";
    farm->collector.heartbeat_ms = 250;
    farm->collector.pass_delay_ms = pass_delay_ms;
    /* In-process, the job runs as whoever runs it, as the program would
     * without profeed: there is no other user to drop to. */
    farm->collector.run_as = COLLECTOR_RUN_AS_SELF;
    if (replay || !discover_can_profile()) {
        if (!replay && !s_default_replay(farm->default_replay, sizeof farm->default_replay)) {
            fprintf(stderr, "profeed: --local: cannot tell where the bundled replay map is; give --replay MAP\n");
            return -1;
        }
        farm->collector.replay_map = replay ? replay : farm->default_replay;
        fprintf(stderr, "profeed: --local: no GPU profiling; replaying recorded captures from %s\n",
                farm->collector.replay_map);
    }
    worker_config_default(&farm->worker);
    farm->worker.broker_endpoint = farm->workers;
    farm->worker.worker_id = "local-analyzer";
    farm->worker.heartbeat_ms = 250;
    farm->broker_actor = zactor_new(broker_actor, &farm->broker);
    if (!farm->broker_actor)
        return -1;
    farm->collector_actor = zactor_new(collector_actor, &farm->collector);
    farm->worker_actor = zactor_new(worker_actor, &farm->worker);
    if (!farm->collector_actor || !farm->worker_actor)
        return -1;
    return 0;
}

/* Waits until the local broker lists both local workers, so the job is not
 * refused for want of a collector that is still registering. */
static int s_local_wait(profeed_farm_t *farm)
{
    for (int i = 0; i < 50; i++) {
        char *out = NULL;
        if (profeed_farm_status(farm, 1000, 0, &out, NULL) == PROFEED_OK && out &&
            strstr(out, "collector") && strstr(out, "analyzer")) {
            free(out);
            return 0;
        }
        free(out);
        zclock_sleep(50);
    }
    return -1;
}

/* Reads a job file whole, up to 16 MiB (a kernel or problem source is far
 * smaller; the limit keeps a wrong path from filling the message). */
static char *s_read_source(const char *path, size_t *len)
{
    char *buf = NULL;
    pf_error_t err;
    if (file_read(path, NULL, (size_t) 16 * 1024 * 1024, &buf, len, &err) != PF_OK) {
        fprintf(stderr, "profeed submit: %s\n", err.msg);
        return NULL;
    }
    return buf;
}

static const char *s_base(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

int cmd_submit(int argc, char **argv)
{
    enum { O_LANG = 256, O_ARCH, O_PROFILER, O_JSON, O_ENDPOINT, O_JOBID, O_TIMEOUT, O_WAIT, O_LOCAL, O_REPLAY,
           O_DELAY, O_KERNEL, O_PROBLEM, O_PLAN, O_ROUND, O_REGEX, O_NVTX, O_SKIP, O_COUNT, O_SECRET, O_BROKER_KEY,
           O_INSECURE, O_FORMAT, O_MAX_CHARS, O_TOP, O_MIN_SHARE, O_MAX_TOKENS, O_SOURCE, O_BASELINE_JOB, O_AGENT_ID,
           O_COLLATED };
    static const struct option longopts[] = {
        {"language", required_argument, NULL, O_LANG},
        {"arch", required_argument, NULL, O_ARCH},
        {"profiler", required_argument, NULL, O_PROFILER},
        {"json", no_argument, NULL, O_JSON},
        {"format", required_argument, NULL, O_FORMAT},
        {"max-chars", required_argument, NULL, O_MAX_CHARS},
        {"max-tokens", required_argument, NULL, O_MAX_TOKENS},
        {"source", no_argument, NULL, O_SOURCE},
        {"top", required_argument, NULL, O_TOP},
        {"min-share", required_argument, NULL, O_MIN_SHARE},
        {"baseline-job", required_argument, NULL, O_BASELINE_JOB},
        {"agent-id", required_argument, NULL, O_AGENT_ID},
        {"collated", no_argument, NULL, O_COLLATED},
        {"endpoint", required_argument, NULL, O_ENDPOINT},
        {"job-id", required_argument, NULL, O_JOBID},
        {"timeout-s", required_argument, NULL, O_TIMEOUT},
        {"wait-s", required_argument, NULL, O_WAIT},
        {"local", no_argument, NULL, O_LOCAL},
        {"replay", required_argument, NULL, O_REPLAY},
        {"pass-delay-ms", required_argument, NULL, O_DELAY},
        {"kernel", required_argument, NULL, O_KERNEL},
        {"problem", required_argument, NULL, O_PROBLEM},
        {"plan", required_argument, NULL, O_PLAN},
        {"round", required_argument, NULL, O_ROUND},
        {"kernel-regex", required_argument, NULL, O_REGEX},
        {"nvtx-range", required_argument, NULL, O_NVTX},
        {"launch-skip", required_argument, NULL, O_SKIP},
        {"launch-count", required_argument, NULL, O_COUNT},
        {"curve-secret", required_argument, NULL, O_SECRET},
        {"broker-key", required_argument, NULL, O_BROKER_KEY},
        {"insecure", no_argument, NULL, O_INSECURE},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    profeed_job_t job = {0};
    const char *endpoint = "tcp://127.0.0.1:5555";
    profeed_security_t security;
    cmd_security_from_env(&security);
    const char *replay = NULL, *kernel_path = NULL, *problem_path = NULL;
    profeed_format_t format = PROFEED_FORMAT_TEXT;
    int local = 0;
    long long v, wait_s = 0, delay_ms = 0;
    optind = 1;
    int opt;
    /* '+': stop at the first non-option, so the command's own flags stay its. */
    while ((opt = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
        switch (opt) {
        case O_LANG: job.language = optarg; break;
        case O_ARCH: job.gpu_arch = optarg; break;
        case O_PROFILER: job.profiler = optarg; break;
        case O_JSON: format = PROFEED_FORMAT_JSON; break;
        case O_FORMAT:
            if (strcmp(optarg, "text") == 0)
                format = PROFEED_FORMAT_TEXT;
            else if (strcmp(optarg, "json") == 0)
                format = PROFEED_FORMAT_JSON;
            else if (strcmp(optarg, "markdown") == 0 || strcmp(optarg, "md") == 0)
                format = PROFEED_FORMAT_MARKDOWN;
            else {
                fprintf(stderr, "profeed submit: --format must be text, json or markdown, got \"%s\"\n", optarg);
                return 2;
            }
            break;
        case O_MAX_CHARS:
            if (!cli_parse_int("profeed submit", "--max-chars", optarg, 200, 1 << 30, &v))
                return 2;
            job.max_chars = (size_t) v;
            break;
        case O_SOURCE: job.source = 1; break;
        case O_MAX_TOKENS:
            if (!cli_parse_int("profeed submit", "--max-tokens", optarg, 64, 1 << 30, &v))
                return 2;
            job.max_tokens = (size_t) v;
            break;
        case O_TOP:
            if (!cli_parse_int("profeed submit", "--top", optarg, 1, 1000000, &v))
                return 2;
            job.top = (unsigned) v;
            break;
        case O_MIN_SHARE: {
            char *end = NULL;
            double pct = strtod(optarg, &end);
            if (end == optarg || *end || !(pct >= 0 && pct <= 100)) {
                fprintf(stderr, "profeed submit: --min-share needs a percentage 0..100, got \"%s\"\n", optarg);
                return 2;
            }
            job.min_share = pct / 100;
            job.min_share_given = 1;
            break;
        }
        case O_COLLATED: job.collated = 1; break;
        case O_ENDPOINT: endpoint = optarg; break;
        case O_JOBID: job.job_id = optarg; break;
        case O_BASELINE_JOB: job.baseline_job_id = optarg; break;
        case O_AGENT_ID: job.agent_id = optarg; break;
        case O_TIMEOUT:
            if (!cli_parse_int("profeed submit", "--timeout-s", optarg, 1, 86400, &v))
                return 2;
            job.timeout_s = (unsigned) v;
            break;
        case O_WAIT:
            if (!cli_parse_int("profeed submit", "--wait-s", optarg, 1, 7 * 86400, &wait_s))
                return 2;
            break;
        case O_LOCAL: local = 1; break;
        case O_REPLAY: replay = optarg; break;
        case O_DELAY:
            if (!cli_parse_int("profeed submit", "--pass-delay-ms", optarg, 0, 3600000, &delay_ms))
                return 2;
            break;
        case O_KERNEL: kernel_path = optarg; break;
        case O_PROBLEM: problem_path = optarg; break;
        case O_PLAN: job.plan = optarg; break;
        case O_ROUND:
            if (!cli_parse_int("profeed submit", "--round", optarg, 1, 1000000, &v))
                return 2;
            job.round = (unsigned) v;
            break;
        case O_REGEX: job.kernel_regex = optarg; break;
        case O_SECRET: security.curve_secret = optarg; break;
        case O_BROKER_KEY: security.broker_key = optarg; break;
        case O_INSECURE: security.insecure = 1; break;
        case O_NVTX: job.nvtx_range = optarg; break;
        case O_SKIP:
            if (!cli_parse_int("profeed submit", "--launch-skip", optarg, 0, 1000000000, &v))
                return 2;
            job.launch_skip = (unsigned) v;
            break;
        case O_COUNT:
            if (!cli_parse_int("profeed submit", "--launch-count", optarg, 1, 1000000000, &v))
                return 2;
            job.launch_count = (unsigned) v;
            break;
        case 'h': s_help(stdout); return 0;
        default: s_help(stderr); return 2;
        }
    }
    if ((job.max_chars || job.max_tokens) && format != PROFEED_FORMAT_TEXT) {
        fprintf(stderr, "profeed submit: --%s bounds the text format only; JSON and Markdown are never cut\n",
                job.max_chars ? "max-chars" : "max-tokens");
        return 2;
    }
    if (!job.language) {
        fprintf(stderr, "profeed submit: --language is required\n");
        s_help(stderr);
        return 2;
    }
    if (!kernel_path != !problem_path) {
        fprintf(stderr, "profeed submit: --kernel and --problem go together\n");
        return 2;
    }
    char *kernel_src = NULL, *problem_src = NULL;
    if (kernel_path) {
        if (optind < argc) {
            fprintf(stderr, "profeed submit: give a command or --kernel/--problem, not both\n");
            return 2;
        }
        kernel_src = s_read_source(kernel_path, &job.kernel_len);
        problem_src = kernel_src ? s_read_source(problem_path, &job.problem_len) : NULL;
        if (!problem_src) {
            free(kernel_src);
            return 2;
        }
        job.kernel_name = s_base(kernel_path);
        job.kernel_source = kernel_src;
        job.problem_name = s_base(problem_path);
        job.problem_source = problem_src;
    } else if (optind >= argc) {
        fprintf(stderr, "profeed submit: no command to profile (after --)\n");
        return 2;
    } else {
        job.argv = (const char *const *) argv + optind;
        job.argc = (size_t) (argc - optind);
    }

    local_farm_t lf;
    memset(&lf, 0, sizeof lf);
    if (local) {
        /* Quiet roles: their log lines would bury the feedback. */
        if (pf_log_level() < PF_LOG_WARN)
            pf_log_set_level(PF_LOG_WARN);
        if (s_local_start(&lf, replay, (int) delay_ms) != 0) {
            fprintf(stderr, "profeed submit: --local: the in-process farm did not start\n");
            s_local_stop(&lf);
            free(kernel_src);
            free(problem_src);
            return 1;
        }
        endpoint = lf.agents;
    }
    char *why = NULL;
    profeed_farm_t *farm = profeed_farm_open(endpoint, local ? 250 : 0, 0, local ? NULL : &security, &why);
    if (!farm) {
        fprintf(stderr, "profeed submit: %s\n", why ? why : "cannot connect");
        free(why);
        s_local_stop(&lf);
        free(kernel_src);
        free(problem_src);
        return 2;
    }
    if (local && s_local_wait(farm) != 0) {
        fprintf(stderr, "profeed submit: --local: the in-process workers did not register\n");
        profeed_farm_destroy(&farm);
        s_local_stop(&lf);
        free(kernel_src);
        free(problem_src);
        return 1;
    }
    profeed_farm_set_notice(farm, s_notice, NULL);
    char *output = NULL, *error = NULL;
    char job_id[129];
    profeed_result_t rc = profeed_farm_run(farm, &job, (int) (wait_s * 1000),
                                           format,
                                           isatty(STDERR_FILENO) ? s_progress : NULL, NULL, &output, &error, job_id);
    profeed_farm_destroy(&farm);
    s_local_stop(&lf);
    free(kernel_src);
    free(problem_src);
    if (output) {
        fputs(output, stdout);
        size_t len = strlen(output);
        if (len == 0 || output[len - 1] != '\n')
            fputc('\n', stdout);
    }
    if (error)
        fprintf(stderr, "profeed submit: job %s: %s\n", job_id, error);
    free(output);
    free(error);
    return (int) rc;
}
