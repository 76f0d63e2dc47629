/* The wire layer's contract: every message survives pack -> unpack unchanged,
 * and whatever bytes arrive, each unpacker returns either a valid message or
 * NULL with an error naming the field, never a crash or a leak (ASan checks). */
#include "test_util.h"
#include "wire.h"
#include "wire_elide.h"
#include "wire_path.h"
#include "wire_scan.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FIXTURE(name) PF_FIXTURE_DIR "/ncu/h200/" name

/* ---------------------------------------------------------------------------
 * Helpers */

/* The four doors of wire.h, chosen by descriptor, so one loop can drive them all. */
static ProtobufCMessage *s_unpack(const ProtobufCMessageDescriptor *desc, const uint8_t *data,
                                  size_t size, size_t max, pf_error_t *err)
{
    if (desc == &profeed__envelope__descriptor)
        return (ProtobufCMessage *) wire_envelope_unpack(data, size, max, err);
    if (desc == &profeed__job_request__descriptor)
        return (ProtobufCMessage *) wire_job_request_unpack(data, size, max, err);
    if (desc == &profeed__pass_output__descriptor)
        return (ProtobufCMessage *) wire_pass_output_unpack(data, size, max, err);
    cr_assert_eq(desc, &profeed__feedback__descriptor);
    return (ProtobufCMessage *) wire_feedback_unpack(data, size, max, err);
}

static uint8_t *s_pack(const ProtobufCMessage *msg, size_t max, size_t *size_p, pf_error_t *err)
{
    const ProtobufCMessageDescriptor *desc = msg->descriptor;
    if (desc == &profeed__envelope__descriptor)
        return wire_envelope_pack((const Profeed__Envelope *) msg, max, size_p, err);
    if (desc == &profeed__job_request__descriptor)
        return wire_job_request_pack((const Profeed__JobRequest *) msg, max, size_p, err);
    if (desc == &profeed__pass_output__descriptor)
        return wire_pass_output_pack((const Profeed__PassOutput *) msg, max, size_p, err);
    cr_assert_eq(desc, &profeed__feedback__descriptor);
    return wire_feedback_pack((const Profeed__Feedback *) msg, max, size_p, err);
}

static void s_destroy(ProtobufCMessage **msg_p)
{
    const ProtobufCMessageDescriptor *desc = (*msg_p)->descriptor;
    if (desc == &profeed__envelope__descriptor) {
        Profeed__Envelope *m = (Profeed__Envelope *) *msg_p;
        wire_envelope_destroy(&m);
        cr_assert_null(m);
    } else if (desc == &profeed__job_request__descriptor) {
        Profeed__JobRequest *m = (Profeed__JobRequest *) *msg_p;
        wire_job_request_destroy(&m);
    } else if (desc == &profeed__pass_output__descriptor) {
        Profeed__PassOutput *m = (Profeed__PassOutput *) *msg_p;
        wire_pass_output_destroy(&m);
    } else {
        Profeed__Feedback *m = (Profeed__Feedback *) *msg_p;
        wire_feedback_destroy(&m);
    }
    *msg_p = NULL;
}

/* Packs with protobuf-c directly, skipping wire's checks: how a buggy or
 * hostile peer produces bytes our packers would refuse to make. */
static uint8_t *s_raw_pack(const ProtobufCMessage *msg, size_t *size_p)
{
    size_t size = protobuf_c_message_get_packed_size(msg);
    uint8_t *bytes = malloc(size + 1);
    cr_assert_not_null(bytes);
    cr_assert_eq(protobuf_c_message_pack(msg, bytes), size);
    *size_p = size;
    return bytes;
}

/* Packs `msg` with wire, asserting success. */
static uint8_t *s_pack_ok(const ProtobufCMessage *msg, size_t *size_p)
{
    pf_error_t err = {0};
    uint8_t *bytes = s_pack(msg, WIRE_MAX_MSG, size_p, &err);
    cr_assert_not_null(bytes, "packing a valid %s failed: %s", msg->descriptor->short_name, err.msg);
    return bytes;
}

/* Asserts that `msg` is refused on both sides: wire's packer will not make it,
 * and its raw encoding does not get through the unpacker, with status `code`
 * and an error that contains every needle. */
static void s_expect_refused(const ProtobufCMessage *msg, pf_status_t code, const char *needle1,
                             const char *needle2)
{
    pf_error_t err = {0};
    size_t size = 0;
    uint8_t *bytes = s_pack(msg, WIRE_MAX_MSG, &size, &err);
    cr_assert_null(bytes, "wire packed an invalid %s", msg->descriptor->short_name);
    cr_assert_eq(size, 0);
    cr_assert_eq(err.code, code, "pack: expected \"%s\", got \"%s\": %s", pf_status_name(code),
                 pf_status_name(err.code), err.msg);

    bytes = s_raw_pack(msg, &size);
    pf_error_t uerr = {0};
    ProtobufCMessage *out = s_unpack(msg->descriptor, bytes, size, WIRE_MAX_MSG, &uerr);
    free(bytes);
    if (out)
        s_destroy(&out);
    cr_assert_null(out, "unpack accepted an invalid %s", msg->descriptor->short_name);
    cr_assert_eq(uerr.code, code, "unpack: expected \"%s\", got \"%s\": %s", pf_status_name(code),
                 pf_status_name(uerr.code), uerr.msg);
    cr_assert_not_null(strstr(uerr.msg, needle1), "error \"%s\" does not mention \"%s\"", uerr.msg, needle1);
    if (needle2)
        cr_assert_not_null(strstr(uerr.msg, needle2), "error \"%s\" does not mention \"%s\"", uerr.msg, needle2);
}

/* Expects `size` bytes to be refused by the `desc` unpacker with `code`, the
 * error mentioning `needle`. */
static void s_expect_bytes_refused(const ProtobufCMessageDescriptor *desc, const uint8_t *bytes,
                                   size_t size, size_t max, pf_status_t code, const char *needle)
{
    pf_error_t err = {0};
    ProtobufCMessage *out = s_unpack(desc, bytes, size, max, &err);
    if (out)
        s_destroy(&out);
    cr_assert_null(out, "unpack accepted bytes it should refuse");
    cr_assert_eq(err.code, code, "expected \"%s\", got \"%s\": %s", pf_status_name(code),
                 pf_status_name(err.code), err.msg);
    cr_assert_not_null(strstr(err.msg, needle), "error \"%s\" does not mention \"%s\"", err.msg, needle);
}

static const uint8_t *s_find(const uint8_t *hay, size_t hay_len, const char *needle)
{
    size_t n = strlen(needle);
    for (size_t i = 0; i + n <= hay_len; i++) {
        if (memcmp(hay + i, needle, n) == 0)
            return hay + i;
    }
    return NULL;
}

/* ---------------------------------------------------------------------------
 * Realistic messages: the H200 capture bundled in tests/fixtures. Each
 * fixture struct owns every part of its message; *_fini frees what was read. */

static void s_worker_init(Profeed__WorkerInfo *w)
{
    profeed__worker_info__init(w);
    w->host = "gpu-node-07";
    w->gpu_name = "NVIDIA H200";
    w->arch = "sm_90";
    w->compute_capability = "9.0";
    w->has_device_id = 1, w->device_id = 0;
    w->has_sm_count = 1, w->sm_count = 132;
    w->has_sm_clock_mhz = 1, w->sm_clock_mhz = 1980;
    w->has_mem_clock_mhz = 1, w->mem_clock_mhz = 3201;
    w->has_memory_bytes = 1, w->memory_bytes = UINT64_C(150754820096);
    w->driver_version = "580.159.04";
    w->profiler_version = "Nsight Compute 2025.3.1.0 (build 36398880)";
    w->cpu_model = "INTEL(R) XEON(R) PLATINUM 8568Y+";
}

typedef struct {
    Profeed__JobRequest job;
    Profeed__KernelProblem kernel;
    Profeed__Command command;
    char *argv[4];
    Profeed__File kernel_file, problem_file;
    Profeed__PassSpec spec[3];
    Profeed__PassSpec *passes[3];
    char *sol_args[2], *mem_args[2], *warp_args[4];
    Profeed__JobMetadata meta;
    Profeed__KeyValue kv[2];
    Profeed__KeyValue *extra[2];
    uint8_t *source;
} job_fixture_t;

static const char s_problem_py[] =
    "import torch\n"
    "def get_inputs():\n"
    "    return [torch.randn(1 << 24, device='cuda'), torch.randn(1 << 24, device='cuda')]\n";

/* A KernelFoundry-style request: kernels.cu plus a problem file (or, with
 * `command`, an argv), a three-pass Nsight Compute plan and the agent's metadata. */
static void s_job_init(job_fixture_t *f, bool command)
{
    memset(f, 0, sizeof *f);
    Profeed__JobRequest *job = &f->job;
    profeed__job_request__init(job);
    job->job_id = "3f2c9a1e-7b4d-4e8a-9c55-0d1e2f3a4b5c";
    job->agent_id = "kernel-agent-2";
    job->has_language = 1, job->language = PROFEED__LANGUAGE__LANGUAGE_CUDA;
    job->gpu_arch = "sm_90";
    job->has_profiler = 1, job->profiler = PROFEED__PROFILER__PROFILER_NCU;
    if (command) {
        profeed__command__init(&f->command);
        f->argv[0] = "./kernels";
        f->argv[1] = "all";
        f->argv[2] = "--iterations=3";
        f->command.n_argv = 3;
        f->command.argv = f->argv;
        job->target_case = PROFEED__JOB_REQUEST__TARGET_COMMAND;
        job->command = &f->command;
    } else {
        size_t len;
        f->source = (uint8_t *) test_read_file(FIXTURE("kernels.cu"), &len);
        profeed__file__init(&f->kernel_file);
        f->kernel_file.name = "kernels.cu";
        f->kernel_file.has_content = 1;
        f->kernel_file.content.data = f->source;
        f->kernel_file.content.len = len;
        profeed__file__init(&f->problem_file);
        f->problem_file.name = "problem/vec_add.py";
        f->problem_file.has_content = 1;
        f->problem_file.content.data = (uint8_t *) s_problem_py;
        f->problem_file.content.len = sizeof s_problem_py - 1;
        profeed__kernel_problem__init(&f->kernel);
        f->kernel.kernel_file = &f->kernel_file;
        f->kernel.problem_file = &f->problem_file;
        job->target_case = PROFEED__JOB_REQUEST__TARGET_KERNEL;
        job->kernel = &f->kernel;
    }
    f->sol_args[0] = "--section";
    f->sol_args[1] = "SpeedOfLight";
    f->mem_args[0] = "--section";
    f->mem_args[1] = "MemoryWorkloadAnalysis";
    f->warp_args[0] = "--section";
    f->warp_args[1] = "WarpStateStats";
    f->warp_args[2] = "--section";
    f->warp_args[3] = "Occupancy";
    const char *names[3] = {"sol", "memory", "warps_occupancy"};
    char **args[3] = {f->sol_args, f->mem_args, f->warp_args};
    size_t n_args[3] = {2, 2, 4};
    for (int i = 0; i < 3; i++) {
        profeed__pass_spec__init(&f->spec[i]);
        f->spec[i].name = (char *) names[i];
        f->spec[i].args = args[i];
        f->spec[i].n_args = n_args[i];
        f->passes[i] = &f->spec[i];
    }
    job->n_passes = 3;
    job->passes = f->passes;
    job->has_timeout_s = 1, job->timeout_s = 600;
    profeed__job_metadata__init(&f->meta);
    f->meta.kernel_file_name = "kernels.cu";
    f->meta.has_round = 1, f->meta.round = 4;
    for (int i = 0; i < 2; i++) {
        profeed__key_value__init(&f->kv[i]);
        f->extra[i] = &f->kv[i];
    }
    f->kv[0].key = "task";
    f->kv[0].value = "level1/vec_add";
    f->kv[1].key = "note";
    f->kv[1].value = "tried float4 loads; \xc3\xa9 UTF-8 survives";
    f->meta.n_extra = 2;
    f->meta.extra = f->extra;
    job->metadata = &f->meta;
}

static void s_job_fini(job_fixture_t *f) { free(f->source); }

#define PASS_MAX_FILES 3

typedef struct {
    Profeed__PassOutput pass;
    Profeed__File file[PASS_MAX_FILES];
    Profeed__File *files[PASS_MAX_FILES];
    uint8_t *data[PASS_MAX_FILES];
    Profeed__WorkerInfo worker;
} pass_fixture_t;

/* A pass output carrying real files: the three per-section CSVs of the H200
 * capture (`big`), or the small stdout of ncu runs that failed. */
static void s_pass_init(pass_fixture_t *f, bool big)
{
    memset(f, 0, sizeof *f);
    static const char *const big_files[] = {"pass1_sol.csv", "pass2_memory.csv", "pass3_warps_occupancy.csv"};
    static const char *const small_files[] = {"err_nokernel_stdout.txt", "err_noexe_stdout.txt"};
    const char *const *names = big ? big_files : small_files;
    size_t n = big ? 3 : 2;
    Profeed__PassOutput *p = &f->pass;
    profeed__pass_output__init(p);
    p->job_id = "3f2c9a1e-7b4d-4e8a-9c55-0d1e2f3a4b5c";
    p->pass_key = "ncu.000";
    p->has_profiler = 1, p->profiler = PROFEED__PROFILER__PROFILER_NCU;
    for (size_t i = 0; i < n; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/ncu/h200/%s", PF_FIXTURE_DIR, names[i]);
        size_t len;
        f->data[i] = (uint8_t *) test_read_file(path, &len);
        profeed__file__init(&f->file[i]);
        f->file[i].name = (char *) names[i];
        f->file[i].has_content = 1;
        f->file[i].content.data = f->data[i];
        f->file[i].content.len = len;
        f->files[i] = &f->file[i];
    }
    p->n_files = n;
    p->files = f->files;
    p->has_exit_status = 1, p->exit_status = big ? 0 : 1;
    p->stderr_tail = big ? "" : "==ERROR== './does_not_exist' does not exist or is not an executable.\n";
    p->has_duration_ms = 1, p->duration_ms = big ? 10680 : 412;
    s_worker_init(&f->worker);
    p->worker = &f->worker;
}

static void s_pass_fini(pass_fixture_t *f)
{
    for (size_t i = 0; i < PASS_MAX_FILES; i++)
        free(f->data[i]);
}

/* Packs Envelope{pass_output: the fixture's pass}, as a collector sends it. */
static uint8_t *s_pack_pass_envelope(pass_fixture_t *f, size_t *size_p)
{
    Profeed__Envelope env;
    wire_envelope_init(&env);
    env.body_case = PROFEED__ENVELOPE__BODY_PASS_OUTPUT;
    env.pass_output = &f->pass;
    return s_pack_ok(&env.base, size_p);
}

typedef struct {
    Profeed__Feedback fb;
    Profeed__Finding finding[2];
    Profeed__Finding *findings[2];
    Profeed__Evidence ev[4];
    Profeed__Evidence *ev0[2], *ev1[2];
    Profeed__KernelSummary ks[3];
    Profeed__KernelSummary *kernels[3];
    char *notes[1];
    char *errors[1];
    char *missing[1];
    Profeed__WorkerInfo worker;
} feedback_fixture_t;

static void s_evidence(Profeed__Evidence *e, const char *metric, double value, const char *unit,
                       const char *text)
{
    profeed__evidence__init(e);
    e->metric = (char *) metric;
    e->has_value = 1, e->value = value;
    e->unit = (char *) unit;
    e->text = (char *) text;
}

/* Feedback as the README's ground truth wants it for two of the nine kernels. */
static void s_feedback_init(feedback_fixture_t *f)
{
    memset(f, 0, sizeof *f);
    Profeed__Feedback *fb = &f->fb;
    profeed__feedback__init(fb);
    fb->job_id = "3f2c9a1e-7b4d-4e8a-9c55-0d1e2f3a4b5c";
    fb->has_status = 1, fb->status = PROFEED__FEEDBACK_STATUS__FEEDBACK_STATUS_OK;
    fb->text = "## strided_copy (12.1% of GPU time)\n"
               "1. Uncoalesced global loads waste 78% of fetched sectors. Make adjacent threads read "
               "adjacent addresses.\n";
    fb->json = "{\"kernels\":[{\"name\":\"strided_copy\",\"findings\":[{\"category\":\"uncoalesced-global\"}]}]}";

    s_evidence(&f->ev[0], "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct", 12.5, "%",
               "only 4 of 32 bytes per sector are used");
    s_evidence(&f->ev[1], "lts__t_sectors_srcunit_tex_op_read.sum", 4.3e8, "sector",
               "L2 read sectors");
    s_evidence(&f->ev[2], "dram__throughput.avg.pct_of_peak_sustained_elapsed", 72.4, "%",
               "DRAM throughput near the memory roof");
    s_evidence(&f->ev[3], "sm__throughput.avg.pct_of_peak_sustained_elapsed", 24.0, "%", "");
    f->ev0[0] = &f->ev[0], f->ev0[1] = &f->ev[1];
    f->ev1[0] = &f->ev[2], f->ev1[1] = &f->ev[3];

    for (int i = 0; i < 2; i++) {
        profeed__finding__init(&f->finding[i]);
        f->findings[i] = &f->finding[i];
    }
    Profeed__Finding *a = &f->finding[0];
    a->kernel = "strided_copy(const float *, float *, int, int)";
    a->category = "uncoalesced-global";
    a->has_importance = 1, a->importance = 0.78;
    a->has_estimated_speedup = 1, a->estimated_speedup = 0.78;
    a->n_evidence = 2, a->evidence = f->ev0;
    a->action = "Index so that threadIdx.x walks the contiguous dimension.";
    a->source = "ncu:UncoalescedGlobalAccess";
    a->title = "Uncoalesced global loads: 4 of 32 bytes per sector used";
    a->has_primary = 1, a->primary = 1;
    Profeed__Finding *b = &f->finding[1];
    b->kernel = "vec_add(const float *, const float *, float *, int)";
    b->category = "memory-bound";
    b->has_importance = 1, b->importance = 0.4;
    b->n_evidence = 2, b->evidence = f->ev1;
    b->action = "Already near the DRAM roof: fuse with neighbouring kernels to save traffic.";
    b->source = "speed-of-light";
    fb->n_findings = 2, fb->findings = f->findings;

    static const char *const names[] = {"atomic_hist", "pointer_chase", "strided_copy"};
    static const double shares[] = {0.61, 0.17, 0.121};
    for (int i = 0; i < 3; i++) {
        profeed__kernel_summary__init(&f->ks[i]);
        f->ks[i].name = (char *) names[i];
        f->ks[i].has_launches = 1, f->ks[i].launches = 1;
        f->ks[i].has_time_ns = 1, f->ks[i].time_ns = (uint64_t) (shares[i] * 17.7e6);
        f->ks[i].has_time_share = 1, f->ks[i].time_share = shares[i];
        f->ks[i].bottleneck = i == 0 ? "atomics" : i == 1 ? "latency" : "memory";
        f->ks[i].block = "(256, 1, 1)";
        f->ks[i].grid = i == 1 ? "(1, 1, 1)" : "(262144, 1, 1)";
        f->kernels[i] = &f->ks[i];
    }
    fb->n_kernels = 3, fb->kernels = f->kernels;
    f->notes[0] = "Clocks were not locked (--clock-control none): timings vary run to run.";
    fb->n_notes = 1, fb->notes = f->notes;
    f->errors[0] = "metric not__a_metric.sum: not reported by ncu; its rule was skipped";
    fb->n_errors = 1, fb->errors = f->errors;
    f->missing[0] = "smsp__pcsamp_warps_issue_stalled_long_scoreboard (add --section WarpStateStats)";
    fb->n_missing = 1, fb->missing = f->missing;
    fb->has_profiler = 1, fb->profiler = PROFEED__PROFILER__PROFILER_NCU;
    s_worker_init(&f->worker);
    fb->worker = &f->worker;
}

/* Every Envelope body the broker protocol has, each in a realistic form. */
typedef struct {
    Profeed__Envelope env[10];
    const char *what[10];
    size_t n;
    Profeed__Ready ready;
    Profeed__GpuCapability gpu;
    Profeed__GpuCapability *gpus[1];
    Profeed__Profiler profilers[2];
    char *capabilities[2];
    Profeed__Heartbeat heartbeat;
    char *hb_jobs[1];
    Profeed__Dispatch dispatch_job, dispatch_pass;
    Profeed__Ack ack;
    Profeed__Progress progress;
    Profeed__Error error;
    job_fixture_t job, job2;
    pass_fixture_t pass, pass2;
    feedback_fixture_t feedback;
} envelopes_t;

static Profeed__Envelope *s_next_env(envelopes_t *e, const char *what)
{
    Profeed__Envelope *env = &e->env[e->n];
    e->what[e->n++] = what;
    wire_envelope_init(env);
    return env;
}

static void s_envelopes_init(envelopes_t *e)
{
    memset(e, 0, sizeof *e);
    s_job_init(&e->job, false);
    s_job_init(&e->job2, true);
    s_pass_init(&e->pass, false);
    s_pass_init(&e->pass2, false);
    s_feedback_init(&e->feedback);

    profeed__ready__init(&e->ready);
    e->ready.has_role = 1, e->ready.role = PROFEED__WORKER_ROLE__WORKER_ROLE_COLLECTOR;
    e->ready.worker_id = "collector-gpu-node-07-0";
    e->ready.host = "gpu-node-07";
    profeed__gpu_capability__init(&e->gpu);
    e->gpu.name = "NVIDIA H200";
    e->gpu.arch = "sm_90";
    e->gpu.has_count = 1, e->gpu.count = 8;
    e->gpus[0] = &e->gpu;
    e->ready.n_gpus = 1, e->ready.gpus = e->gpus;
    e->profilers[0] = PROFEED__PROFILER__PROFILER_NCU;
    e->profilers[1] = PROFEED__PROFILER__PROFILER_UNITRACE;
    e->ready.n_profilers = 2, e->ready.profilers = e->profilers;
    e->capabilities[0] = "ncu";
    e->capabilities[1] = "unitrace";
    e->ready.n_capabilities = 2, e->ready.capabilities = e->capabilities;
    e->ready.has_slots = 1, e->ready.slots = 8;
    Profeed__Envelope *env = s_next_env(e, "ready");
    env->body_case = PROFEED__ENVELOPE__BODY_READY, env->ready = &e->ready;

    profeed__heartbeat__init(&e->heartbeat);
    e->heartbeat.worker_id = "collector-gpu-node-07-0";
    e->hb_jobs[0] = "3f2c9a1e-7b4d-4e8a-9c55-0d1e2f3a4b5c";
    e->heartbeat.n_job_ids = 1, e->heartbeat.job_ids = e->hb_jobs;
    env = s_next_env(e, "heartbeat");
    env->body_case = PROFEED__ENVELOPE__BODY_HEARTBEAT, env->heartbeat = &e->heartbeat;

    env = s_next_env(e, "submit");
    env->body_case = PROFEED__ENVELOPE__BODY_SUBMIT, env->submit = &e->job2.job;

    profeed__dispatch__init(&e->dispatch_job);
    e->dispatch_job.has_attempt = 1, e->dispatch_job.attempt = 1;
    e->dispatch_job.work_case = PROFEED__DISPATCH__WORK_JOB;
    e->dispatch_job.job = &e->job.job;
    env = s_next_env(e, "dispatch of a job");
    env->body_case = PROFEED__ENVELOPE__BODY_DISPATCH, env->dispatch = &e->dispatch_job;

    profeed__dispatch__init(&e->dispatch_pass);
    e->dispatch_pass.has_attempt = 1, e->dispatch_pass.attempt = 2;
    e->dispatch_pass.work_case = PROFEED__DISPATCH__WORK_PASS_OUTPUT;
    e->dispatch_pass.pass_output = &e->pass.pass;
    e->dispatch_pass.has_pass_count = 1, e->dispatch_pass.pass_count = 3;
    e->dispatch_pass.metadata = &e->job.meta;
    e->dispatch_pass.has_language = 1, e->dispatch_pass.language = PROFEED__LANGUAGE__LANGUAGE_CUDA;
    env = s_next_env(e, "dispatch of a pass");
    env->body_case = PROFEED__ENVELOPE__BODY_DISPATCH, env->dispatch = &e->dispatch_pass;

    env = s_next_env(e, "pass_output");
    env->body_case = PROFEED__ENVELOPE__BODY_PASS_OUTPUT, env->pass_output = &e->pass2.pass;

    profeed__ack__init(&e->ack);
    e->ack.job_id = "3f2c9a1e-7b4d-4e8a-9c55-0d1e2f3a4b5c";
    e->ack.pass_key = "ncu.000";
    e->ack.has_duplicate = 1, e->ack.duplicate = 0;
    env = s_next_env(e, "ack");
    env->body_case = PROFEED__ENVELOPE__BODY_ACK, env->ack = &e->ack;

    profeed__progress__init(&e->progress);
    e->progress.job_id = "3f2c9a1e-7b4d-4e8a-9c55-0d1e2f3a4b5c";
    e->progress.has_passes_done = 1, e->progress.passes_done = 2;
    e->progress.has_pass_count = 1, e->progress.pass_count = 3;
    e->progress.state = "collecting";
    env = s_next_env(e, "progress");
    env->body_case = PROFEED__ENVELOPE__BODY_PROGRESS, env->progress = &e->progress;

    env = s_next_env(e, "feedback");
    env->body_case = PROFEED__ENVELOPE__BODY_FEEDBACK, env->feedback = &e->feedback.fb;

    profeed__error__init(&e->error);
    e->error.has_code = 1, e->error.code = PROFEED__ERROR_CODE__ERROR_CODE_NO_CAPABLE_WORKER;
    e->error.text = "no collector offers gpu_arch xe-hpc with profiler unitrace";
    e->error.job_id = "3f2c9a1e-7b4d-4e8a-9c55-0d1e2f3a4b5c";
    env = s_next_env(e, "error");
    env->body_case = PROFEED__ENVELOPE__BODY_ERROR, env->error = &e->error;
}

static void s_envelopes_fini(envelopes_t *e)
{
    s_job_fini(&e->job);
    s_job_fini(&e->job2);
    s_pass_fini(&e->pass);
    s_pass_fini(&e->pass2);
}

/* Packs, unpacks with the tightest limit that fits, re-packs: the bytes must
 * be identical. Returns the unpacked message for field checks. */
static ProtobufCMessage *s_round_trip(const ProtobufCMessage *msg)
{
    size_t size;
    uint8_t *bytes = s_pack_ok(msg, &size);
    pf_error_t err = {0};
    ProtobufCMessage *out = s_unpack(msg->descriptor, bytes, size, size, &err);
    cr_assert_not_null(out, "unpacking a valid %s failed: %s", msg->descriptor->short_name, err.msg);
    cr_assert_eq(err.code, PF_OK);
    size_t size2;
    uint8_t *bytes2 = s_pack_ok(out, &size2);
    cr_assert_eq(size2, size);
    cr_assert_eq(memcmp(bytes, bytes2, size), 0, "re-packed %s differs", msg->descriptor->short_name);
    free(bytes);
    free(bytes2);
    return out;
}

/* ---------------------------------------------------------------------------
 * Round trips */

/* Sets every field of a WorkerInfo from its descriptor, so a field added to
 * the schema is set here too without this test changing (and a field of a
 * new type stops it, naming the field). */
static void s_set_every_field(ProtobufCMessage *msg, char strings[][32])
{
    const ProtobufCMessageDescriptor *d = msg->descriptor;
    for (unsigned i = 0; i < d->n_fields; i++) {
        const ProtobufCFieldDescriptor *f = &d->fields[i];
        char *at = (char *) msg + f->offset;
        cr_assert_eq(f->label, PROTOBUF_C_LABEL_OPTIONAL, "%s.%s: only optional fields are set here", d->name, f->name);
        if (f->type != PROTOBUF_C_TYPE_STRING)
            *(protobuf_c_boolean *) ((char *) msg + f->quantifier_offset) = 1;
        switch (f->type) {
        case PROTOBUF_C_TYPE_STRING:
            snprintf(strings[i], 32, "%s-%u", f->name, i);
            *(char **) at = strings[i];
            break;
        case PROTOBUF_C_TYPE_UINT32: *(uint32_t *) at = 1000u + i; break;
        case PROTOBUF_C_TYPE_UINT64: *(uint64_t *) at = ((uint64_t) 1 << 40) + i; break;
        default: cr_assert_fail("%s.%s: a field type this test does not set yet", d->name, f->name);
        }
    }
}

Test(wire_copy, a_worker_info_copy_has_every_field_of_the_schema)
{
    Profeed__WorkerInfo info;
    profeed__worker_info__init(&info);
    char strings[64][32];
    cr_assert_leq(profeed__worker_info__descriptor.n_fields, 64);
    s_set_every_field(&info.base, strings);
    Profeed__WorkerInfo *copy = (Profeed__WorkerInfo *) wire_message_copy(&info.base);
    cr_assert_not_null(copy);
    size_t a = protobuf_c_message_get_packed_size(&info.base), b = protobuf_c_message_get_packed_size(&copy->base);
    cr_assert_eq(a, b);
    uint8_t *pa = malloc(a), *pb = malloc(b);
    cr_assert(pa && pb);
    protobuf_c_message_pack(&info.base, pa);
    protobuf_c_message_pack(&copy->base, pb);
    cr_assert_eq(memcmp(pa, pb, a), 0, "the copy packs to other bytes: a field was not copied");
    cr_assert_neq((void *) copy->host, (void *) info.host, "a deep copy, not shared strings");
    free(pa);
    free(pb);
    protobuf_c_message_free_unpacked(&copy->base, NULL);
}

Test(wire_roundtrip, job_request_with_kernel_and_problem_files_survives)
{
    job_fixture_t f;
    s_job_init(&f, false);
    Profeed__JobRequest *out = (Profeed__JobRequest *) s_round_trip(&f.job.base);

    cr_assert_str_eq(out->job_id, "3f2c9a1e-7b4d-4e8a-9c55-0d1e2f3a4b5c");
    cr_assert_str_eq(out->agent_id, "kernel-agent-2");
    cr_assert_eq(out->language, PROFEED__LANGUAGE__LANGUAGE_CUDA);
    cr_assert_eq(out->profiler, PROFEED__PROFILER__PROFILER_NCU);
    cr_assert_eq(out->target_case, PROFEED__JOB_REQUEST__TARGET_KERNEL);
    cr_assert_str_eq(out->kernel->kernel_file->name, "kernels.cu");
    cr_assert_eq(out->kernel->kernel_file->content.len, f.kernel_file.content.len);
    cr_assert_eq(memcmp(out->kernel->kernel_file->content.data, f.source, f.kernel_file.content.len), 0);
    cr_assert_str_eq(out->kernel->problem_file->name, "problem/vec_add.py");
    cr_assert_eq(out->n_passes, 3);
    cr_assert_str_eq(out->passes[2]->name, "warps_occupancy");
    cr_assert_eq(out->passes[2]->n_args, 4);
    cr_assert_str_eq(out->passes[2]->args[3], "Occupancy");
    cr_assert(out->has_timeout_s && out->timeout_s == 600);
    cr_assert_eq(out->metadata->round, 4);
    cr_assert_str_eq(out->metadata->extra[1]->value, "tried float4 loads; \xc3\xa9 UTF-8 survives");

    wire_job_request_destroy(&out);
    cr_assert_null(out);
    wire_job_request_destroy(&out); /* no-op on NULL */
    s_job_fini(&f);
}

Test(wire_roundtrip, job_request_with_a_command_line_survives)
{
    job_fixture_t f;
    s_job_init(&f, true);
    Profeed__JobRequest *out = (Profeed__JobRequest *) s_round_trip(&f.job.base);
    cr_assert_eq(out->target_case, PROFEED__JOB_REQUEST__TARGET_COMMAND);
    cr_assert_eq(out->command->n_argv, 3);
    cr_assert_str_eq(out->command->argv[0], "./kernels");
    cr_assert_str_eq(out->command->argv[2], "--iterations=3");
    wire_job_request_destroy(&out);
    s_job_fini(&f);
}

Test(wire_roundtrip, pass_output_with_real_ncu_csvs_survives_byte_for_byte)
{
    pass_fixture_t f;
    s_pass_init(&f, true);
    Profeed__PassOutput *out = (Profeed__PassOutput *) s_round_trip(&f.pass.base);
    cr_assert_str_eq(out->pass_key, "ncu.000");
    cr_assert_eq(out->n_files, 3);
    for (size_t i = 0; i < 3; i++) {
        cr_assert_str_eq(out->files[i]->name, f.file[i].name);
        cr_assert_eq(out->files[i]->content.len, f.file[i].content.len);
        cr_assert_gt(out->files[i]->content.len, 30000, "fixture %s looks truncated", f.file[i].name);
        cr_assert_eq(memcmp(out->files[i]->content.data, f.data[i], f.file[i].content.len), 0,
                     "%s changed on the way", f.file[i].name);
    }
    cr_assert_eq(out->exit_status, 0);
    cr_assert_eq(out->duration_ms, 10680);
    cr_assert_str_eq(out->worker->gpu_name, "NVIDIA H200");
    cr_assert_eq(out->worker->sm_count, 132);
    cr_assert_eq(out->worker->memory_bytes, UINT64_C(150754820096));
    wire_pass_output_destroy(&out);
    s_pass_fini(&f);
}

Test(wire_roundtrip, feedback_with_findings_evidence_and_kernels_survives)
{
    feedback_fixture_t f;
    s_feedback_init(&f);
    Profeed__Feedback *out = (Profeed__Feedback *) s_round_trip(&f.fb.base);
    cr_assert_eq(out->status, PROFEED__FEEDBACK_STATUS__FEEDBACK_STATUS_OK);
    cr_assert_str_eq(out->text, f.fb.text);
    cr_assert_str_eq(out->json, f.fb.json);
    cr_assert_eq(out->n_findings, 2);
    cr_assert_str_eq(out->findings[0]->category, "uncoalesced-global");
    cr_assert_str_eq(out->findings[0]->title, f.finding[0].title);
    cr_assert(out->findings[0]->has_primary && out->findings[0]->primary);
    cr_assert_not(out->findings[1]->has_primary);
    cr_assert_eq(out->findings[0]->importance, 0.78);
    cr_assert(out->findings[0]->has_estimated_speedup);
    cr_assert_not(out->findings[1]->has_estimated_speedup, "absent stays absent");
    cr_assert_eq(out->findings[1]->evidence[0]->value, 72.4);
    cr_assert_str_eq(out->findings[1]->evidence[0]->unit, "%");
    cr_assert_eq(out->n_kernels, 3);
    cr_assert_str_eq(out->kernels[0]->name, "atomic_hist");
    cr_assert_eq(out->kernels[0]->time_share, 0.61);
    cr_assert_str_eq(out->kernels[1]->grid, "(1, 1, 1)");
    cr_assert_eq(out->n_missing, 1);
    cr_assert_eq(out->profiler, PROFEED__PROFILER__PROFILER_NCU);
    cr_assert_eq(out->n_errors, 1);
    cr_assert_eq(out->n_notes, 1);
    cr_assert_str_eq(out->worker->driver_version, "580.159.04");
    wire_feedback_destroy(&out);
}

Test(wire_roundtrip, envelope_of_every_body_type_survives)
{
    envelopes_t e;
    s_envelopes_init(&e);
    cr_assert_eq(e.n, 10);
    for (size_t i = 0; i < e.n; i++) {
        Profeed__Envelope *out = (Profeed__Envelope *) s_round_trip(&e.env[i].base);
        cr_assert_eq(out->protocol_version, WIRE_PROTOCOL_VERSION);
        cr_assert_eq(out->body_case, e.env[i].body_case, "%s: body changed", e.what[i]);
        wire_envelope_destroy(&out);
    }
    s_envelopes_fini(&e);
}

Test(wire_roundtrip, unknown_fields_from_a_newer_peer_are_accepted_and_kept)
{
    job_fixture_t f;
    s_job_init(&f, true);
    size_t size;
    uint8_t *bytes = s_pack_ok(&f.job.base, &size);
    /* Field 100, varint 42: what a future schema might add. */
    uint8_t *longer = malloc(size + 3);
    memcpy(longer, bytes, size);
    longer[size] = 0xa0, longer[size + 1] = 0x06, longer[size + 2] = 42;
    pf_error_t err = {0};
    Profeed__JobRequest *out = wire_job_request_unpack(longer, size + 3, WIRE_MAX_MSG, &err);
    cr_assert_not_null(out, "an unknown field was refused: %s", err.msg);
    cr_assert_eq(out->base.n_unknown_fields, 1);
    cr_assert_eq(out->base.unknown_fields[0].tag, 100);
    size_t size2;
    uint8_t *again = s_pack_ok(&out->base, &size2);
    cr_assert_eq(size2, size + 3, "the unknown field is passed on when re-packed");
    free(again);
    free(longer);
    free(bytes);
    wire_job_request_destroy(&out);
    s_job_fini(&f);
}

Test(wire_roundtrip, bytes_fields_carry_any_bytes)
{
    pass_fixture_t f;
    s_pass_init(&f, false);
    static const uint8_t binary[] = {0x00, 0xff, 0x00, 0xfe, '.', '.', '/', 0x80, 0x00};
    f.file[0].content.data = (uint8_t *) binary;
    f.file[0].content.len = sizeof binary;
    Profeed__PassOutput *out = (Profeed__PassOutput *) s_round_trip(&f.pass.base);
    cr_assert_eq(out->files[0]->content.len, sizeof binary);
    cr_assert_eq(memcmp(out->files[0]->content.data, binary, sizeof binary), 0);
    wire_pass_output_destroy(&out);
    s_pass_fini(&f);
}

/* ---------------------------------------------------------------------------
 * Hostile bytes: each case must end in a valid message or a clear error. */

typedef struct {
    const ProtobufCMessageDescriptor *desc;
    const char *what;
    uint8_t *bytes;
    size_t size;
} sample_t;

typedef struct {
    envelopes_t env;
    job_fixture_t job;
    pass_fixture_t pass;
    feedback_fixture_t feedback;
    sample_t s[16];
    size_t n;
} samples_t;

/* One packed sample of every message type and every Envelope body. */
static void s_samples_init(samples_t *all)
{
    memset(all, 0, sizeof *all);
    s_envelopes_init(&all->env);
    s_job_init(&all->job, false);
    s_pass_init(&all->pass, false);
    s_feedback_init(&all->feedback);
    const ProtobufCMessage *msgs[16];
    const char *whats[16];
    size_t n = 0;
    for (size_t i = 0; i < all->env.n; i++) {
        msgs[n] = &all->env.env[i].base;
        whats[n++] = all->env.what[i];
    }
    msgs[n] = &all->job.job.base, whats[n++] = "JobRequest";
    msgs[n] = &all->pass.pass.base, whats[n++] = "PassOutput";
    msgs[n] = &all->feedback.fb.base, whats[n++] = "Feedback";
    for (size_t i = 0; i < n; i++) {
        all->s[i].desc = msgs[i]->descriptor;
        all->s[i].what = whats[i];
        all->s[i].bytes = s_pack_ok(msgs[i], &all->s[i].size);
    }
    all->n = n;
}

static void s_samples_fini(samples_t *all)
{
    for (size_t i = 0; i < all->n; i++)
        free(all->s[i].bytes);
    s_envelopes_fini(&all->env);
    s_job_fini(&all->job);
    s_pass_fini(&all->pass);
}

typedef struct {
    size_t accepted;
    size_t refused;
} tally_t;

/* The oracle: NULL comes with a status and a message; a message that comes
 * back passes its own check and packs again. */
static void s_feed(const ProtobufCMessageDescriptor *desc, const uint8_t *data, size_t size,
                   tally_t *tally, const char *what, size_t at)
{
    pf_error_t err = {0};
    ProtobufCMessage *msg = s_unpack(desc, data, size, WIRE_MAX_MSG, &err);
    if (!msg) {
        if (err.code == PF_OK || !err.msg[0])
            cr_assert_fail("%s, case %zu: refused without a clear error", what, at);
        tally->refused++;
        return;
    }
    if (err.code != PF_OK)
        cr_assert_fail("%s, case %zu: accepted but err set: %s", what, at, err.msg);
    pf_error_t again = {0};
    if (wire_check(msg, &again) != PF_OK)
        cr_assert_fail("%s, case %zu: accepted a message failing its check: %s", what, at, again.msg);
    size_t size2;
    uint8_t *bytes = s_pack(msg, WIRE_MAX_MSG, &size2, &again);
    if (!bytes)
        cr_assert_fail("%s, case %zu: accepted but cannot re-pack: %s", what, at, again.msg);
    free(bytes);
    s_destroy(&msg);
    tally->accepted++;
}

Test(wire_fuzz, every_truncation_gives_a_valid_message_or_a_clear_error, .timeout = 240)
{
    samples_t all;
    s_samples_init(&all);
    for (size_t i = 0; i < all.n; i++) {
        sample_t *s = &all.s[i];
        tally_t tally = {0};
        for (size_t len = 0; len < s->size; len++) {
            /* A copy of exactly `len` bytes, so ASan sees any read past the end. */
            uint8_t *prefix = malloc(len ? len : 1);
            memcpy(prefix, s->bytes, len);
            s_feed(s->desc, prefix, len, &tally, s->what, len);
            free(prefix);
        }
        cr_assert_gt(tally.refused, 0, "%s: no truncation was refused", s->what);
    }
    s_samples_fini(&all);
}

Test(wire_fuzz, every_bit_flip_gives_a_valid_message_or_a_clear_error, .timeout = 240)
{
    samples_t all;
    s_samples_init(&all);
    for (size_t i = 0; i < all.n; i++) {
        sample_t *s = &all.s[i];
        tally_t tally = {0};
        uint8_t *copy = malloc(s->size);
        for (size_t bit = 0; bit < s->size * 8; bit++) {
            memcpy(copy, s->bytes, s->size);
            copy[bit / 8] ^= (uint8_t) (1u << (bit % 8));
            s_feed(s->desc, copy, s->size, &tally, s->what, bit);
        }
        free(copy);
        cr_assert_gt(tally.refused, 0, "%s: no bit flip was refused", s->what);
    }
    s_samples_fini(&all);
}

/* xorshift64*: a fixed seed makes every failure reproducible. */
static uint64_t s_rand(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * UINT64_C(0x2545F4914F6CDD1D);
}

Test(wire_fuzz, random_bytes_give_a_valid_message_or_a_clear_error, .timeout = 240)
{
    static const ProtobufCMessageDescriptor *const descs[] = {
        &profeed__envelope__descriptor, &profeed__job_request__descriptor,
        &profeed__pass_output__descriptor, &profeed__feedback__descriptor};
    uint64_t state = UINT64_C(0x9e3779b97f4a7c15);
    uint8_t buf[512];
    for (size_t d = 0; d < 4; d++) {
        tally_t tally = {0};
        for (size_t i = 0; i < 3000; i++) {
            size_t len = (size_t) (s_rand(&state) % sizeof buf);
            for (size_t k = 0; k < len; k++)
                buf[k] = (uint8_t) s_rand(&state);
            uint8_t *exact = malloc(len ? len : 1);
            memcpy(exact, buf, len);
            s_feed(descs[d], exact, len, &tally, descs[d]->short_name, i);
            free(exact);
        }
        cr_assert_gt(tally.refused, 2000, "%s: random bytes were mostly accepted?", descs[d]->short_name);
    }
}

Test(wire_fuzz, random_byte_overwrites_give_a_valid_message_or_a_clear_error, .timeout = 240)
{
    samples_t all;
    s_samples_init(&all);
    uint64_t state = UINT64_C(0x243f6a8885a308d3);
    for (size_t i = 0; i < all.n; i++) {
        sample_t *s = &all.s[i];
        tally_t tally = {0};
        uint8_t *copy = malloc(s->size);
        for (size_t round = 0; round < 1000; round++) {
            memcpy(copy, s->bytes, s->size);
            size_t writes = 1 + (size_t) (s_rand(&state) % 4);
            for (size_t w = 0; w < writes; w++)
                copy[s_rand(&state) % s->size] = (uint8_t) s_rand(&state);
            /* s_feed's checks are this test's assertions: each case is a
             * valid message or a clear error. */
            s_feed(s->desc, copy, s->size, &tally, s->what, round);
        }
        free(copy);
    }
    s_samples_fini(&all);
}

/* The fuzz target's seed corpus, tests/fixtures/wire/ (tests/fuzz/fuzz_wire.c):
 * one file per sample, whose first byte picks the unpacker. Run this suite
 * with PROFEED_WRITE_WIRE_CORPUS=1 to rewrite it after a schema change. */
Test(wire_fuzz, seed_corpus_holds_a_valid_message_of_every_sample)
{
    static const ProtobufCMessageDescriptor *const doors[] = {
        &profeed__envelope__descriptor, &profeed__job_request__descriptor,
        &profeed__pass_output__descriptor, &profeed__feedback__descriptor};
    samples_t all;
    s_samples_init(&all);
    bool write = getenv("PROFEED_WRITE_WIRE_CORPUS") != NULL;
    for (size_t i = 0; i < all.n; i++) {
        sample_t *s = &all.s[i];
        uint8_t door = 0;
        while (doors[door] != s->desc)
            door++;
        char path[512];
        int n = snprintf(path, sizeof path, "%s/wire/%s%s.bin", PF_FIXTURE_DIR,
                         door == 0 ? "Envelope-" : "", s->what);
        cr_assert(n > 0 && (size_t) n < sizeof path);
        for (char *c = path + strlen(PF_FIXTURE_DIR); *c; c++)
            *c = *c == ' ' ? '-' : *c;
        if (write) {
            FILE *f = fopen(path, "wb");
            cr_assert_not_null(f, "cannot write %s", path);
            cr_assert_eq(fwrite(&door, 1, 1, f), 1);
            cr_assert_eq(fwrite(s->bytes, 1, s->size, f), s->size);
            cr_assert_eq(fclose(f), 0);
        }
        size_t size;
        uint8_t *seed = (uint8_t *) test_read_file(path, &size);
        cr_assert_gt(size, 1, "%s is empty", path);
        cr_assert_eq(seed[0], door, "%s: first byte should pick the %s unpacker", path,
                     s->desc->short_name);
        pf_error_t err = {0};
        ProtobufCMessage *msg = s_unpack(doors[door], seed + 1, size - 1, WIRE_MAX_MSG, &err);
        cr_assert_not_null(msg, "%s is no longer a valid %s (%s); rewrite the corpus", path,
                           s->desc->short_name, err.msg);
        s_destroy(&msg);
        free(seed);
    }
    s_samples_fini(&all);
}

/* ---------------------------------------------------------------------------
 * Limits */

Test(wire_limits, input_over_the_default_limit_is_refused_unread)
{
    size_t size = WIRE_MAX_MSG + 1;
    uint8_t *big = calloc(size, 1);
    cr_assert_not_null(big);
    s_expect_bytes_refused(&profeed__envelope__descriptor, big, size, WIRE_MAX_MSG, PF_ETOOBIG, "limit");
    s_expect_bytes_refused(&profeed__pass_output__descriptor, big, size, WIRE_MAX_MSG, PF_ETOOBIG, "limit");
    free(big);
}

Test(wire_limits, input_over_the_callers_limit_is_refused)
{
    pass_fixture_t f;
    s_pass_init(&f, true);
    size_t size;
    uint8_t *bytes = s_pack_ok(&f.pass.base, &size);
    s_expect_bytes_refused(&profeed__pass_output__descriptor, bytes, size, size - 1, PF_ETOOBIG,
                           "over the");
    free(bytes);
    s_pass_fini(&f);
}

Test(wire_limits, pack_refuses_to_make_a_message_over_the_limit)
{
    pass_fixture_t f;
    s_pass_init(&f, true);
    pf_error_t err = {0};
    size_t size = 123;
    uint8_t *bytes = wire_pass_output_pack(&f.pass, 100000, &size, &err);
    cr_assert_null(bytes);
    cr_assert_eq(size, 0);
    cr_assert_eq(err.code, PF_ETOOBIG, "%s", err.msg);
    cr_assert_not_null(strstr(err.msg, "100000-byte limit"), "%s", err.msg);
    s_pass_fini(&f);
}

Test(wire_limits, many_tiny_submessages_are_refused_before_decoding)
{
    /* 60000 empty Feedback.findings (field 5): 120 kB on the wire, but each
     * decodes to a whole Finding struct plus protobuf-c's bookkeeping. */
    size_t n = 60000, size = 2 * n, max = 128 * 1024;
    uint8_t *bytes = malloc(size);
    for (size_t i = 0; i < n; i++)
        bytes[2 * i] = 0x2a, bytes[2 * i + 1] = 0x00;
    s_expect_bytes_refused(&profeed__feedback__descriptor, bytes, size, max, PF_ETOOBIG, "decode");
    free(bytes);
}

Test(wire_limits, too_many_files_are_refused)
{
    pass_fixture_t f;
    s_pass_init(&f, false);
    size_t n = WIRE_MAX_FILES + 1;
    Profeed__File *files = calloc(n, sizeof *files);
    Profeed__File **ptrs = calloc(n, sizeof *ptrs);
    char(*names)[16] = calloc(n, sizeof *names);
    for (size_t i = 0; i < n; i++) {
        profeed__file__init(&files[i]);
        snprintf(names[i], sizeof names[i], "part%03zu.csv", i);
        files[i].name = names[i];
        ptrs[i] = &files[i];
    }
    f.pass.n_files = n;
    f.pass.files = ptrs;
    s_expect_refused(&f.pass.base, PF_ETOOBIG, "PassOutput.files", "257 entries, at most 256");
    f.pass.n_files = WIRE_MAX_FILES; /* exactly at the limit is fine */
    Profeed__PassOutput *out = (Profeed__PassOutput *) s_round_trip(&f.pass.base);
    cr_assert_eq(out->n_files, WIRE_MAX_FILES);
    wire_pass_output_destroy(&out);
    free(names);
    free(ptrs);
    free(files);
    s_pass_fini(&f);
}

Test(wire_limits, overlong_id_is_refused)
{
    job_fixture_t f;
    s_job_init(&f, true);
    char id[WIRE_MAX_ID_LEN + 2];
    memset(id, 'a', sizeof id - 1);
    id[sizeof id - 1] = '\0';
    f.job.job_id = id;
    s_expect_refused(&f.job.base, PF_ETOOBIG, "JobRequest.job_id", "129 bytes");
    s_job_fini(&f);
}

/* ---------------------------------------------------------------------------
 * Validation: what a well-formed encoding may still not say. */

Test(wire_reject, envelope_from_another_protocol_version_is_refused)
{
    envelopes_t e;
    s_envelopes_init(&e);
    e.env[6].protocol_version = WIRE_PROTOCOL_VERSION + 1;
    s_expect_refused(&e.env[6].base, PF_EPROTO, "Envelope.protocol_version", "peer speaks version 2");
    s_envelopes_fini(&e);
}

Test(wire_reject, envelope_without_protocol_version_is_refused)
{
    envelopes_t e;
    s_envelopes_init(&e);
    e.env[6].has_protocol_version = 0;
    s_expect_refused(&e.env[6].base, PF_EPROTO, "Envelope.protocol_version", "missing");
    s_envelopes_fini(&e);
}

Test(wire_reject, envelope_without_a_body_is_refused)
{
    Profeed__Envelope env;
    wire_envelope_init(&env);
    s_expect_refused(&env.base, PF_EBADINPUT, "Envelope.body", "newer than this build");
}

Test(wire_reject, envelope_with_a_body_type_from_a_newer_build_is_refused_clearly)
{
    /* protocol_version 1, then field 50 (an Envelope body this build lacks). */
    static const uint8_t bytes[] = {0x08, 0x01, 0x92, 0x03, 0x02, 0x08, 0x01};
    s_expect_bytes_refused(&profeed__envelope__descriptor, bytes, sizeof bytes, WIRE_MAX_MSG,
                           PF_EBADINPUT, "Envelope.body");
}

Test(wire_reject, enum_value_this_build_does_not_know_is_refused)
{
    job_fixture_t f;
    s_job_init(&f, true);
    f.job.language = (Profeed__Language) 99;
    s_expect_refused(&f.job.base, PF_EBADINPUT, "JobRequest.language", "99 is not a Language value");
    s_job_fini(&f);
}

Test(wire_reject, unknown_enum_value_deep_in_an_envelope_is_refused)
{
    envelopes_t e;
    s_envelopes_init(&e);
    e.profilers[1] = (Profeed__Profiler) 42;
    s_expect_refused(&e.env[0].base, PF_EBADINPUT, "Envelope.ready.profilers[1]", "42");
    e.profilers[1] = PROFEED__PROFILER__PROFILER_NCU;
    e.feedback.fb.status = (Profeed__FeedbackStatus) -3;
    s_expect_refused(&e.env[8].base, PF_EBADINPUT, "Envelope.feedback.status", "-3");
    s_envelopes_fini(&e);
}

Test(wire_reject, empty_or_missing_job_id_is_refused)
{
    job_fixture_t f;
    s_job_init(&f, true);
    f.job.job_id = "";
    s_expect_refused(&f.job.base, PF_EBADINPUT, "JobRequest.job_id", "missing or empty");
    f.job.job_id = NULL;
    s_expect_refused(&f.job.base, PF_EBADINPUT, "JobRequest.job_id", "missing or empty");
    s_job_fini(&f);
}

Test(wire_reject, job_id_with_path_characters_is_refused)
{
    job_fixture_t f;
    s_job_init(&f, true);
    f.job.job_id = "../../etc/passwd";
    s_expect_refused(&f.job.base, PF_EBADINPUT, "JobRequest.job_id", "must start with a letter or digit");
    f.job.job_id = "job/../../x";
    s_expect_refused(&f.job.base, PF_EBADINPUT, "JobRequest.job_id", "[A-Za-z0-9._:-]");
    s_job_fini(&f);
}

Test(wire_reject, file_name_with_a_dotdot_component_is_refused)
{
    pass_fixture_t f;
    s_pass_init(&f, false);
    f.file[1].name = "ncu/../../../etc/cron.d/x";
    s_expect_refused(&f.pass.base, PF_EBADINPUT, "PassOutput.files[1].name", "\"..\" component");
    s_pass_fini(&f);
}

Test(wire_reject, file_name_in_a_nested_envelope_names_its_whole_path)
{
    envelopes_t e;
    s_envelopes_init(&e);
    e.job.kernel_file.name = "..";
    s_expect_refused(&e.env[3].base, PF_EBADINPUT, "Envelope.dispatch.job.kernel.kernel_file.name", "..");
    s_envelopes_fini(&e);
}

Test(wire_reject, absolute_empty_or_control_character_file_names_are_refused)
{
    pass_fixture_t f;
    s_pass_init(&f, false);
    f.file[0].name = "/etc/passwd";
    s_expect_refused(&f.pass.base, PF_EBADINPUT, "files[0].name", "absolute");
    f.file[0].name = "";
    s_expect_refused(&f.pass.base, PF_EBADINPUT, "files[0].name", "missing or empty");
    f.file[0].name = "report\n==PROF== forged line.csv";
    s_expect_refused(&f.pass.base, PF_EBADINPUT, "files[0].name", "control character 0x0a");
    f.file[0].name = "dir//report.csv";
    s_expect_refused(&f.pass.base, PF_EBADINPUT, "files[0].name", "empty");
    f.file[0].name = "dir/";
    s_expect_refused(&f.pass.base, PF_EBADINPUT, "files[0].name", "ends with '/'");
    s_pass_fini(&f);
}

Test(wire_reject, two_files_of_one_name_are_refused)
{
    pass_fixture_t f;
    s_pass_init(&f, false);
    f.file[1].name = f.file[0].name;
    s_expect_refused(&f.pass.base, PF_EBADINPUT, "PassOutput.files[1].name", "repeats files[0].name");
    s_pass_fini(&f);
}

Test(wire_reject, string_with_an_embedded_nul_is_refused)
{
    job_fixture_t f;
    s_job_init(&f, true);
    f.job.job_id = "job-AAAA";
    size_t size;
    uint8_t *bytes = s_pack_ok(&f.job.base, &size);
    uint8_t *at = (uint8_t *) s_find(bytes, size, "job-AAAA");
    cr_assert_not_null(at);
    at[5] = '\0'; /* protobuf-c alone would hand back "job-A" */
    s_expect_bytes_refused(&profeed__job_request__descriptor, bytes, size, WIRE_MAX_MSG, PF_EBADINPUT,
                           "JobRequest.job_id: string contains a NUL byte");
    free(bytes);
    s_job_fini(&f);
}

Test(wire_reject, embedded_nul_deep_in_an_envelope_names_the_field)
{
    envelopes_t e;
    s_envelopes_init(&e);
    e.job.kv[0].key = "task-KEY";
    size_t size;
    uint8_t *bytes = s_pack_ok(&e.env[3].base, &size);
    uint8_t *at = (uint8_t *) s_find(bytes, size, "task-KEY");
    cr_assert_not_null(at);
    at[4] = '\0';
    s_expect_bytes_refused(&profeed__envelope__descriptor, bytes, size, WIRE_MAX_MSG, PF_EBADINPUT,
                           "Envelope.dispatch.job.metadata.extra.key");
    free(bytes);
    s_envelopes_fini(&e);
}

Test(wire_reject, invalid_utf8_in_a_string_is_refused)
{
    pass_fixture_t f;
    s_pass_init(&f, false);
    static const char *const bad[] = {
        "\xff\xfe",               /* not UTF-8 at all */
        "ok \xc0\xaf",            /* overlong '/' */
        "\xed\xa0\x80 surrogate", /* U+D800 */
        "cut \xe2\x82",           /* truncated sequence */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        f.pass.stderr_tail = (char *) bad[i];
        s_expect_refused(&f.pass.base, PF_EBADINPUT, "PassOutput.stderr_tail", "not valid UTF-8");
    }
    s_pass_fini(&f);
}

Test(wire_reject, job_that_says_nothing_to_run_is_refused)
{
    job_fixture_t f;
    s_job_init(&f, true);
    f.job.target_case = PROFEED__JOB_REQUEST__TARGET__NOT_SET;
    f.job.command = NULL;
    s_expect_refused(&f.job.base, PF_EBADINPUT, "JobRequest.target", "what to run");
    s_job_fini(&f);
}

Test(wire_reject, command_with_an_empty_argv_is_refused)
{
    job_fixture_t f;
    s_job_init(&f, true);
    f.command.n_argv = 0;
    s_expect_refused(&f.job.base, PF_EBADINPUT, "JobRequest.command.argv", "argv[0]");
    f.command.n_argv = 1;
    f.argv[0] = "";
    s_expect_refused(&f.job.base, PF_EBADINPUT, "JobRequest.command.argv", "argv[0]");
    s_job_fini(&f);
}

Test(wire_reject, job_without_a_language_is_refused)
{
    job_fixture_t f;
    s_job_init(&f, true);
    f.job.language = PROFEED__LANGUAGE__LANGUAGE_UNSPECIFIED;
    s_expect_refused(&f.job.base, PF_EBADINPUT, "JobRequest.language", "missing");
    s_job_fini(&f);
}

Test(wire_reject, kernel_job_without_a_problem_file_is_refused)
{
    job_fixture_t f;
    s_job_init(&f, false);
    f.kernel.problem_file = NULL;
    s_expect_refused(&f.job.base, PF_EBADINPUT, "JobRequest.kernel.problem_file", "missing");
    s_job_fini(&f);
}

Test(wire_reject, timeout_outside_one_second_to_a_day_is_refused)
{
    job_fixture_t f;
    s_job_init(&f, true);
    f.job.timeout_s = 0;
    s_expect_refused(&f.job.base, PF_EBADINPUT, "JobRequest.timeout_s", "out of range");
    f.job.timeout_s = WIRE_MAX_TIMEOUT_S + 1;
    s_expect_refused(&f.job.base, PF_EBADINPUT, "JobRequest.timeout_s", "out of range");
    s_job_fini(&f);
}

Test(wire_reject, non_finite_or_negative_importance_is_refused)
{
    feedback_fixture_t f;
    s_feedback_init(&f);
    f.finding[1].importance = NAN;
    s_expect_refused(&f.fb.base, PF_EBADINPUT, "Feedback.findings[1].importance", "finite");
    f.finding[1].importance = -0.5;
    s_expect_refused(&f.fb.base, PF_EBADINPUT, "Feedback.findings[1].importance", "negative");
    f.finding[1].importance = 0.4;
    f.ev[3].value = INFINITY;
    s_expect_refused(&f.fb.base, PF_EBADINPUT, "Feedback.findings[1].evidence[1].value", "finite");
}

Test(wire_reject, kernel_time_share_outside_zero_to_one_is_refused)
{
    feedback_fixture_t f;
    s_feedback_init(&f);
    f.ks[2].time_share = 1.5;
    s_expect_refused(&f.fb.base, PF_EBADINPUT, "Feedback.kernels[2].time_share", "outside 0..1");
}

Test(wire_reject, feedback_without_a_status_is_refused)
{
    feedback_fixture_t f;
    s_feedback_init(&f);
    f.fb.has_status = 0;
    s_expect_refused(&f.fb.base, PF_EBADINPUT, "Feedback.status", "missing");
}

Test(wire_reject, collector_offering_no_gpu_is_refused)
{
    envelopes_t e;
    s_envelopes_init(&e);
    e.ready.n_gpus = 0;
    s_expect_refused(&e.env[0].base, PF_EBADINPUT, "Envelope.ready.gpus", "at least one GPU");
    /* An analyzer needs none. */
    e.ready.role = PROFEED__WORKER_ROLE__WORKER_ROLE_ANALYZER;
    Profeed__Envelope *out = (Profeed__Envelope *) s_round_trip(&e.env[0].base);
    wire_envelope_destroy(&out);
    s_envelopes_fini(&e);
}

/* The broker matches capabilities as they are and prints them in its
 * refusals: one id-like word each, and a bounded number of them. */
Test(wire_reject, ready_capability_that_is_not_one_word_or_too_many_is_refused)
{
    envelopes_t e;
    s_envelopes_init(&e);
    e.capabilities[1] = "unitrace\nvtune";
    s_expect_refused(&e.env[0].base, PF_EBADINPUT, "Envelope.ready.capabilities[1]", "0x0a");
    e.capabilities[1] = "";
    s_expect_refused(&e.env[0].base, PF_EBADINPUT, "Envelope.ready.capabilities[1]", "missing or empty");
    e.capabilities[1] = "unitrace";
    char *many[WIRE_MAX_CAPABILITIES + 1];
    for (size_t i = 0; i < WIRE_MAX_CAPABILITIES + 1; i++)
        many[i] = "ncu";
    e.ready.capabilities = many;
    e.ready.n_capabilities = WIRE_MAX_CAPABILITIES + 1;
    s_expect_refused(&e.env[0].base, PF_ETOOBIG, "Envelope.ready.capabilities", "at most 64");
    e.ready.n_capabilities = WIRE_MAX_CAPABILITIES;
    Profeed__Envelope *out = (Profeed__Envelope *) s_round_trip(&e.env[0].base);
    cr_expect_eq(out->ready->n_capabilities, WIRE_MAX_CAPABILITIES);
    wire_envelope_destroy(&out);
    s_envelopes_fini(&e);
}

Test(wire_reject, pass_dispatched_to_an_analyzer_without_pass_count_is_refused)
{
    envelopes_t e;
    s_envelopes_init(&e);
    e.dispatch_pass.has_pass_count = 0;
    s_expect_refused(&e.env[4].base, PF_EBADINPUT, "Envelope.dispatch.pass_count", "how many passes");
    s_envelopes_fini(&e);
}

Test(wire_reject, pass_output_without_worker_or_exit_status_is_refused)
{
    pass_fixture_t f;
    s_pass_init(&f, false);
    f.pass.worker = NULL;
    s_expect_refused(&f.pass.base, PF_EBADINPUT, "PassOutput.worker", "missing");
    f.pass.worker = &f.worker;
    f.pass.has_exit_status = 0;
    s_expect_refused(&f.pass.base, PF_EBADINPUT, "PassOutput.exit_status", "missing");
    s_pass_fini(&f);
}

Test(wire_reject, progress_past_its_pass_count_is_refused)
{
    envelopes_t e;
    s_envelopes_init(&e);
    e.progress.passes_done = 4;
    s_expect_refused(&e.env[7].base, PF_EBADINPUT, "Envelope.progress.passes_done", "more than pass_count 3");
    s_envelopes_fini(&e);
}

Test(wire_reject, one_line_field_with_a_newline_is_refused)
{
    envelopes_t e;
    s_envelopes_init(&e);
    e.progress.state = "collecting\n2026-01-01T00:00:00Z INFO broker: forged";
    s_expect_refused(&e.env[7].base, PF_EBADINPUT, "Envelope.progress.state", "control character 0x0a");
    s_envelopes_fini(&e);
}

Test(wire_reject, field_with_the_wrong_wire_type_is_refused)
{
    /* JobRequest.job_id (field 1, a string) sent as a varint. */
    static const uint8_t bytes[] = {0x08, 0x05};
    s_expect_bytes_refused(&profeed__job_request__descriptor, bytes, sizeof bytes, WIRE_MAX_MSG,
                           PF_EBADINPUT, "not a valid protobuf encoding");
}

Test(wire_reject, group_wire_types_are_refused)
{
    static const uint8_t bytes[] = {0x0b, 0x0c};
    s_expect_bytes_refused(&profeed__feedback__descriptor, bytes, sizeof bytes, WIRE_MAX_MSG,
                           PF_EBADINPUT, "unsupported wire type");
}

Test(wire_reject, empty_input_is_an_empty_message_and_is_refused_for_its_missing_fields)
{
    s_expect_bytes_refused(&profeed__envelope__descriptor, NULL, 0, WIRE_MAX_MSG, PF_EPROTO,
                           "protocol_version");
    s_expect_bytes_refused(&profeed__job_request__descriptor, (const uint8_t *) "", 0, WIRE_MAX_MSG,
                           PF_EBADINPUT, "job_id");
}

/* ---------------------------------------------------------------------------
 * The shared name rules, as other modules call them. */

Test(wire_names, ids_accept_uuids_and_keys_and_refuse_the_rest)
{
    static const char *const good[] = {"3f2c9a1e-7b4d-4e8a-9c55-0d1e2f3a4b5c", "ncu.000",
                                       "unitrace.001", "agent_7:run-2", "A"};
    static const char *const bad[] = {"", ".hidden", "-rf", "a b", "a/b", "ü", "a\tb"};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        pf_error_t err = {0};
        cr_assert_eq(wire_check_id(good[i], "id", &err), PF_OK, "%s refused: %s", good[i], err.msg);
    }
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        pf_error_t err = {0};
        cr_assert_neq(wire_check_id(bad[i], "Ack.job_id", &err), PF_OK, "\"%s\" accepted", bad[i]);
        cr_assert_not_null(strstr(err.msg, "Ack.job_id: "), "%s", err.msg);
    }
    cr_assert_neq(wire_check_id(NULL, "id", NULL), PF_OK, "NULL id accepted (and err may be NULL)");
}

Test(wire_names, file_names_stay_inside_their_directory)
{
    static const char *const good[] = {"report.csv", "ncu/pass1_sol.csv", "a/b/c.d", "..hidden", "x..y",
                                       "with space.txt"};
    static const char *const bad[] = {"", "/abs", "..", "../x", "a/../b", "a/..", ".", "./a",
                                      "a//b", "a/", "tab\there"};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        pf_error_t err = {0};
        cr_assert_eq(wire_check_file_name(good[i], "name", &err), PF_OK, "%s refused: %s", good[i], err.msg);
    }
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        pf_error_t err = {0};
        cr_assert_neq(wire_check_file_name(bad[i], "File.name", &err), PF_OK, "\"%s\" accepted", bad[i]);
        cr_assert_not_null(strstr(err.msg, "File.name: "), "%s", err.msg);
    }
    char long_part[WIRE_MAX_FILE_PART_LEN + 2];
    memset(long_part, 'p', sizeof long_part - 1);
    long_part[sizeof long_part - 1] = '\0';
    pf_error_t err = {0};
    cr_assert_eq(wire_check_file_name(long_part, "File.name", &err), PF_ETOOBIG);
    cr_assert_not_null(strstr(err.msg, "256-byte component"), "%s", err.msg);
}

Test(wire_reject, farm_counters_with_an_empty_or_multiline_name_are_refused)
{
    Profeed__NamedCount n;
    profeed__named_count__init(&n);
    n.name = "ok";
    n.has_value = 1;
    n.value = 3;
    Profeed__NamedCount *list[] = {&n};
    Profeed__FarmCounters c;
    profeed__farm_counters__init(&c);
    c.finished = list;
    c.n_finished = 1;
    Profeed__FarmStatus st;
    profeed__farm_status__init(&st);
    st.counters = &c;
    Profeed__Envelope env;
    wire_envelope_init(&env);
    env.body_case = PROFEED__ENVELOPE__BODY_STATUS;
    env.status = &st;
    pf_error_t err;
    size_t size = 0;
    uint8_t *bytes = wire_envelope_pack(&env, WIRE_MAX_MSG, &size, &err);
    cr_assert_not_null(bytes, "%s", err.msg);
    free(bytes);
    n.name = "";
    s_expect_refused(&env.base, PF_EBADINPUT, "Envelope.status", "missing or empty");
    n.name = "ok\nINJECTED";
    s_expect_refused(&env.base, PF_EBADINPUT, "Envelope.status", "control character");
}

/* ---------------------------------------------------------------------------
 * wire_splice: the broker forwards passes and feedbacks without packing them
 * again. What it splices must decode to exactly what was received. */
#include "wire_splice.h"

/* Packs an Envelope around `body` the ordinary way and finds it again. */
Test(wire_splice, find_returns_the_packed_body_of_an_envelope)
{
    pass_fixture_t f;
    s_pass_init(&f, true);
    size_t pass_len, env_len;
    uint8_t *pass = s_pack_ok(&f.pass.base, &pass_len);
    uint8_t *bytes = s_pack_pass_envelope(&f, &env_len);
    const uint8_t *body = NULL;
    size_t body_len = 0;
    cr_assert(wire_splice_find(bytes, env_len, PROFEED__ENVELOPE__BODY_PASS_OUTPUT, &body, &body_len));
    cr_assert_eq(body_len, pass_len);
    cr_assert_eq(memcmp(body, pass, pass_len), 0);
    cr_expect_not(wire_splice_find(bytes, env_len, PROFEED__ENVELOPE__BODY_FEEDBACK, &body, &body_len),
                  "a field that is not there");
    for (size_t cut = 0; cut < env_len; cut += 1 + cut / 3)
        cr_expect_not(wire_splice_find(bytes, cut, PROFEED__ENVELOPE__BODY_PASS_OUTPUT, &body, &body_len),
                      "truncated at %zu", cut);
    free(bytes);
    free(pass);
    s_pass_fini(&f);
}

/* A field sent twice is merged by protobuf: its bytes alone are not what was
 * decoded, so find refuses and the broker packs the decoded message. */
Test(wire_splice, find_refuses_a_field_that_appears_twice)
{
    const uint8_t twice[] = {0x08, 0x01, 0x3a, 0x02, 0x0a, 0x00, 0x3a, 0x02, 0x12, 0x00};
    const uint8_t *body;
    size_t len;
    cr_expect_not(wire_splice_find(twice, sizeof twice, 7, &body, &len));
    cr_expect(wire_splice_find(twice, 6, 7, &body, &len));
}

Test(wire_splice, dispatch_around_a_packed_pass_decodes_to_the_same_pass)
{
    pass_fixture_t f;
    s_pass_init(&f, true);
    size_t pass_len;
    uint8_t *pass = s_pack_ok(&f.pass.base, &pass_len);
    Profeed__JobMetadata meta;
    profeed__job_metadata__init(&meta);
    meta.kernel_file_name = "kernel.cu";
    Profeed__Dispatch head;
    profeed__dispatch__init(&head);
    head.has_attempt = head.has_pass_count = head.has_language = 1;
    head.attempt = 2;
    head.pass_count = 3;
    head.language = PROFEED__LANGUAGE__LANGUAGE_TRITON;
    head.metadata = &meta;

    size_t size = wire_splice_envelope(NULL, PROFEED__ENVELOPE__BODY_DISPATCH, &head.base,
                                       PROFEED__DISPATCH__WORK_PASS_OUTPUT, pass, pass_len);
    uint8_t *bytes = malloc(size);
    cr_assert_eq(wire_splice_envelope(bytes, PROFEED__ENVELOPE__BODY_DISPATCH, &head.base,
                                      PROFEED__DISPATCH__WORK_PASS_OUTPUT, pass, pass_len),
                 size);
    pf_error_t err;
    Profeed__Envelope *env = wire_envelope_unpack(bytes, size, WIRE_MAX_MSG, &err);
    cr_assert(env, "%s", err.msg);
    cr_assert_eq(env->body_case, PROFEED__ENVELOPE__BODY_DISPATCH);
    const Profeed__Dispatch *d = env->dispatch;
    cr_assert_eq(d->work_case, PROFEED__DISPATCH__WORK_PASS_OUTPUT);
    cr_expect_eq(d->attempt, 2);
    cr_expect_eq(d->pass_count, 3);
    cr_expect_eq(d->language, PROFEED__LANGUAGE__LANGUAGE_TRITON);
    cr_expect_str_eq(d->metadata->kernel_file_name, "kernel.cu");
    size_t again_len;
    uint8_t *again = s_pack_ok(&d->pass_output->base, &again_len);
    cr_expect_eq(again_len, pass_len);
    cr_expect_eq(memcmp(again, pass, pass_len), 0, "the pass changed on the way");
    free(again);
    wire_envelope_destroy(&env);
    free(bytes);
    free(pass);
    s_pass_fini(&f);
}

Test(wire_splice, envelope_around_a_packed_feedback_equals_packing_it)
{
    feedback_fixture_t f;
    s_feedback_init(&f);
    size_t fb_len, env_len;
    uint8_t *fb = s_pack_ok(&f.fb.base, &fb_len);
    Profeed__Envelope env;
    wire_envelope_init(&env);
    env.body_case = PROFEED__ENVELOPE__BODY_FEEDBACK;
    env.feedback = &f.fb;
    uint8_t *packed = s_pack_ok(&env.base, &env_len);
    size_t size = wire_splice_envelope(NULL, PROFEED__ENVELOPE__BODY_FEEDBACK, NULL, 0, fb, fb_len);
    uint8_t *spliced = malloc(size);
    wire_splice_envelope(spliced, PROFEED__ENVELOPE__BODY_FEEDBACK, NULL, 0, fb, fb_len);
    /* Field order is the same here, so the bytes are too. */
    cr_assert_eq(size, env_len);
    cr_expect_eq(memcmp(spliced, packed, size), 0);
    free(spliced);
    free(packed);
    free(fb);
}

Test(wire_path, formats_the_chain_and_cuts_a_long_one_short)
{
    const wire_path_t root = {.parent = NULL, .name = "Envelope", .index = -1};
    const wire_path_t ready = {.parent = &root, .name = "ready", .index = -1};
    const wire_path_t prof = {.parent = &ready, .name = "profilers", .index = 12};
    char buf[64];
    cr_assert_str_eq(wire_path_format(&prof, buf, sizeof buf), "Envelope.ready.profilers[12]");
    cr_assert_str_eq(wire_path_format(NULL, buf, sizeof buf), "");
    char small[12];
    cr_assert_str_eq(wire_path_format(&prof, small, sizeof small), "Envelope.re");
    char one[1];
    cr_assert_str_eq(wire_path_format(&prof, one, sizeof one), "");
}

/* The broker's decode (wire_envelope_unpack_no_files): the same message as a
 * whole decode, except that pass output files come without their contents.
 * Re-packing both must give the same bytes for every other envelope (a kernel
 * job's source files included), and for pass outputs once contents are set
 * aside. */
Test(wire_no_files, decodes_everything_but_pass_file_contents)
{
    envelopes_t e;
    s_envelopes_init(&e);
    for (size_t i = 0; i < e.n; i++) {
        size_t size;
        uint8_t *bytes = s_pack_ok(&e.env[i].base, &size);
        pf_error_t err = {0};
        Profeed__Envelope *whole = wire_envelope_unpack(bytes, size, WIRE_MAX_MSG, &err);
        Profeed__Envelope *light = wire_envelope_unpack_no_files(bytes, size, WIRE_MAX_MSG, &err);
        cr_assert_not_null(whole, "%s: %s", e.what[i], err.msg);
        cr_assert_not_null(light, "%s: %s", e.what[i], err.msg);
        const Profeed__PassOutput *pass = whole->body_case == PROFEED__ENVELOPE__BODY_PASS_OUTPUT ? whole->pass_output
                                          : whole->body_case == PROFEED__ENVELOPE__BODY_DISPATCH &&
                                                    whole->dispatch->work_case == PROFEED__DISPATCH__WORK_PASS_OUTPUT
                                              ? whole->dispatch->pass_output
                                              : NULL;
        const Profeed__PassOutput *light_pass = light->body_case == PROFEED__ENVELOPE__BODY_PASS_OUTPUT
                                                    ? light->pass_output
                                                : light->body_case == PROFEED__ENVELOPE__BODY_DISPATCH
                                                    ? light->dispatch->pass_output
                                                    : NULL;
        size_t elided = wire_elide(&profeed__envelope__descriptor, &profeed__pass_output__descriptor, bytes, size, NULL);
        if (pass)
            cr_assert_lt(elided, size, "%s: its file contents are left out", e.what[i]);
        else
            cr_assert_eq(elided, size, "%s: nothing to leave out", e.what[i]);
        if (pass) {
            cr_assert_not_null(light_pass, "%s", e.what[i]);
            cr_assert_eq(light_pass->n_files, pass->n_files, "%s", e.what[i]);
            for (size_t f = 0; f < pass->n_files; f++) {
                cr_assert_gt(pass->files[f]->content.len, 0, "%s: the fixture has contents", e.what[i]);
                cr_assert_str_eq(light_pass->files[f]->name, pass->files[f]->name, "%s", e.what[i]);
                cr_assert_eq(light_pass->files[f]->content.len, 0, "%s: contents were decoded", e.what[i]);
                pass->files[f]->content.len = 0; /* set aside for the comparison below */
            }
        }
        size_t whole_size, light_size;
        uint8_t *whole_bytes = s_pack_ok(&whole->base, &whole_size);
        uint8_t *light_bytes = s_pack_ok(&light->base, &light_size);
        cr_assert_eq(light_size, whole_size, "%s", e.what[i]);
        cr_assert_eq(memcmp(light_bytes, whole_bytes, whole_size), 0, "%s decodes differently", e.what[i]);
        free(whole_bytes);
        free(light_bytes);
        wire_envelope_destroy(&whole);
        wire_envelope_destroy(&light);
        free(bytes);
    }
    s_envelopes_fini(&e);
}

Test(wire_no_files, a_big_pass_costs_its_headers_only_and_is_still_checked)
{
    pass_fixture_t f;
    s_pass_init(&f, true);
    size_t size;
    uint8_t *bytes = s_pack_pass_envelope(&f, &size);
    cr_assert_gt(size, 100000);
    size_t elided = wire_elide(&profeed__envelope__descriptor, &profeed__pass_output__descriptor, bytes, size, NULL);
    cr_assert_lt(elided, 1000, "elided to %zu bytes", elided);

    /* A file name the checks refuse, same length: "pass1_sol.csv" -> "../s1_sol.csv". */
    uint8_t *at = (uint8_t *) s_find(bytes, size, "pass1_sol.csv");
    cr_assert_not_null(at);
    memcpy(at, "../s1_sol.csv", 13);
    pf_error_t err = {0};
    Profeed__Envelope *out = wire_envelope_unpack_no_files(bytes, size, WIRE_MAX_MSG, &err);
    cr_assert_null(out);
    cr_assert_eq(err.code, PF_EBADINPUT, "%s", err.msg);
    cr_assert_not_null(strstr(err.msg, "files[0].name"), "%s", err.msg);
    /* And over the limit is over the limit, elided or not. */
    memcpy(at, "pass1_sol.csv", 13);
    out = wire_envelope_unpack_no_files(bytes, size, size - 1, &err);
    cr_assert_null(out);
    cr_assert_eq(err.code, PF_ETOOBIG, "%s", err.msg);
    free(bytes);
    s_pass_fini(&f);
}

/* protobuf-c reads at most 5 bytes of a tag or a length. wire_scan refuses
 * longer (padded) ones itself, so that the broker's decode, which rewrites
 * lengths (wire_elide), cannot take what protobuf-c refuses: the fuzz target
 * found that one (tests/fixtures/wire/regress_padded_length.bin). */
Test(wire_reject, tags_and_lengths_over_five_bytes_are_refused_by_every_decoder)
{
    /* Envelope{protocol_version 1, pass_output: length 0 written in 6 bytes}. */
    static const uint8_t padded_length[] = {0x08, 0x01, 0x32, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00};
    /* Envelope{protocol_version 1} with its tag padded to 6 bytes. */
    static const uint8_t padded_tag[] = {0x88, 0x80, 0x80, 0x80, 0x80, 0x00, 0x01};
    const struct {
        const uint8_t *bytes;
        size_t size;
        const char *needle;
    } cases[] = {{padded_length, sizeof padded_length, "length longer than 5 bytes"},
                 {padded_tag, sizeof padded_tag, "field tag longer than 5 bytes"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cr_assert_null(protobuf_c_message_unpack(&profeed__envelope__descriptor, NULL, cases[i].size, cases[i].bytes),
                       "protobuf-c itself refuses case %zu", i);
        pf_error_t err = {0};
        cr_assert_null(wire_envelope_unpack(cases[i].bytes, cases[i].size, WIRE_MAX_MSG, &err));
        cr_assert_not_null(strstr(err.msg, cases[i].needle), "%s", err.msg);
        cr_assert_null(wire_envelope_unpack_no_files(cases[i].bytes, cases[i].size, WIRE_MAX_MSG, &err));
        cr_assert_not_null(strstr(err.msg, cases[i].needle), "%s", err.msg);
    }
    /* Five bytes are still read: a pass_output of length 0 as 80 80 80 80 00. */
    static const uint8_t five[] = {0x08, 0x01, 0x32, 0x80, 0x80, 0x80, 0x80, 0x00};
    pf_error_t err = {0};
    cr_assert_eq(wire_scan(&profeed__envelope__descriptor, five, sizeof five, WIRE_MAX_MSG, &err), PF_OK, "%s",
                 err.msg);
    ProtobufCMessage *m = protobuf_c_message_unpack(&profeed__envelope__descriptor, NULL, sizeof five, five);
    cr_assert_not_null(m, "protobuf-c reads five bytes too");
    protobuf_c_message_free_unpacked(m, NULL);
}

Test(wire_reject, a_feedback_shape_outside_its_ranges_is_refused)
{
    job_fixture_t f;
    s_job_init(&f, true);
    Profeed__FeedbackShape shape;
    profeed__feedback_shape__init(&shape);
    f.job.shape = &shape;
    shape.has_min_share = 1, shape.min_share = 1.5;
    s_expect_refused(&f.job.base, PF_EBADINPUT, "JobRequest.shape.min_share", "share of time in 0..1");
    shape.min_share = 0.2;
    shape.has_max_chars = 1, shape.max_chars = 1;
    s_expect_refused(&f.job.base, PF_EBADINPUT, "JobRequest.shape.max_chars", "too small");
    shape.max_chars = 2000;
    shape.has_text_format = 1, shape.text_format = PROFEED__TEXT_FORMAT__TEXT_FORMAT_MARKDOWN;
    s_expect_refused(&f.job.base, PF_EBADINPUT, "JobRequest.shape.max_chars", "Markdown is never cut");
    shape.has_max_chars = 0;
    shape.has_max_tokens = 1, shape.max_tokens = 63;
    s_expect_refused(&f.job.base, PF_EBADINPUT, "JobRequest.shape.max_tokens", "at least 64 tokens");
    shape.max_tokens = 500;
    s_expect_refused(&f.job.base, PF_EBADINPUT, "JobRequest.shape.max_tokens", "Markdown is never cut");
    shape.has_max_chars = 1;
    /* In range: packs, and comes back whole. */
    shape.text_format = PROFEED__TEXT_FORMAT__TEXT_FORMAT_PLAIN;
    shape.has_top = 1, shape.top = 3;
    pf_error_t err = {0};
    size_t size = 0;
    uint8_t *bytes = wire_job_request_pack(&f.job, WIRE_MAX_MSG, &size, &err);
    cr_assert_not_null(bytes, "%s", err.msg);
    Profeed__JobRequest *out = wire_job_request_unpack(bytes, size, WIRE_MAX_MSG, &err);
    cr_assert_not_null(out, "%s", err.msg);
    cr_expect(out->shape && out->shape->max_chars == 2000 && out->shape->top == 3 && out->shape->min_share == 0.2);
    cr_expect(out->shape->has_max_tokens && out->shape->max_tokens == 500);
    wire_job_request_destroy(&out);
    free(bytes);
    s_job_fini(&f);
}
