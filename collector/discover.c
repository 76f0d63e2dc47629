/* discover: what this host offers the broker, found once at start. GPUs
 * (--gpu, else each vendor's probe in s_gpu_probes: nvidia-smi today; an
 * Intel or AMD probe is one more entry there), the profilers of the table
 * found on PATH (or, with --replay, the map's), their versions, the CPU,
 * python for kernel jobs, the job folders' root and sudo. */
#include "job.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pf_log.h"
#include "proc_run.h"

#define LOG "collector"

const char *discover_profiler_path(const collector_info_t *info, Profeed__Profiler p)
{
    for (size_t i = 0; i < profiler_count() && i < PROFILER_MAX; i++) {
        if (profiler_at(i)->id == p)
            return info->profiler_paths[i][0] ? info->profiler_paths[i] : NULL;
    }
    return NULL;
}

/* Runs a host tool and returns what it printed (caller frees), or NULL. */
static char *s_tool_output(char **argv)
{
    proc_spec_t spec = {.argv = argv, .timeout_ms = 20000, .max_output = 65536, .cancel_fd = -1};
    proc_result_t r;
    pf_error_t err;
    if (proc_run(&spec, &r, &err) != PF_OK)
        return NULL;
    if (r.exit_status != 0) {
        free(r.output);
        return NULL;
    }
    return r.output;
}

/* NVIDIA's GPUs from nvidia-smi: one kind per name, counted. */
static void s_probe_nvidia(collector_info_t *info)
{
    char *argv[] = {"nvidia-smi", HOST_INFO_NVIDIA_SMI_QUERY, "--format=csv,noheader", NULL};
    char *text = s_tool_output(argv);
    if (!text)
        return;
    host_gpu_t gpus[MAX_GPU_KINDS * 8];
    size_t n = host_info_parse_nvidia_smi(text, gpus, sizeof gpus / sizeof gpus[0]);
    free(text);
    for (size_t i = 0; i < n; i++) {
        size_t k = 0;
        for (; k < info->gpu_count; k++) {
            if (streq(info->gpu_names[k], gpus[i].name)) {
                info->gpus[k].count++;
                break;
            }
        }
        if (k == info->gpu_count && k < MAX_GPU_KINDS) {
            /* Both fields are as long as their source fields. */
            memcpy(info->gpu_names[k], gpus[i].name, sizeof info->gpu_names[k]);
            memcpy(info->gpu_archs[k], gpus[i].arch, sizeof info->gpu_archs[k]);
            profeed__gpu_capability__init(&info->gpus[k]);
            info->gpus[k].name = info->gpu_names[k];
            info->gpus[k].arch = info->gpu_archs[k];
            info->gpus[k].has_count = 1;
            info->gpus[k].count = 1;
            info->gpu_count++;
        }
    }
    if (n > 0) {
        info->gpu = gpus[0];
        if (!host_info_cuda_sm_count(0, &info->gpu.sm_count))
            info->gpu.sm_count = 0;
        snprintf(info->compute_capability, sizeof info->compute_capability, "%s", gpus[0].compute_capability);
    }
}

/* Each vendor's GPU probe, asked in this order; a probe whose tool is not
 * there adds nothing. A non-NVIDIA host's probe (xpu-smi, rocm-smi) goes
 * here, with the vendor name the profiler table uses. */
static const struct {
    const char *vendor;
    void (*probe)(collector_info_t *info);
} s_gpu_probes[] = {{"nvidia", s_probe_nvidia}};
#define S_GPU_PROBES (sizeof s_gpu_probes / sizeof s_gpu_probes[0])

bool discover_can_profile(void)
{
    char path[4096];
    for (size_t i = 0; i < profiler_count(); i++) {
        for (size_t v = 0; v < S_GPU_PROBES; v++) {
            const profiler_t *p = profiler_at(i);
            if (streq(p->vendor, s_gpu_probes[v].vendor) && proc_find(p->tool, path, sizeof path))
                return true;
        }
    }
    return false;
}

static void s_discover_gpus(collector_info_t *info)
{
    for (size_t i = 0; i < S_GPU_PROBES; i++)
        s_gpu_probes[i].probe(info);
}

static bool s_env_true(const char *name)
{
    const char *v = getenv(name);
    return v && (streq(v, "1") || streq(v, "yes") || streq(v, "true"));
}

/* Versions, the CPU, python for kernel jobs, the job folders, sudo. */
static void s_discover_tools(collector_info_t *info, const collector_config_t *config)
{
    /* WorkerInfo has one profiler_version: the first profiler found that the
     * table says how to ask. */
    for (size_t i = 0; i < profiler_count(); i++) {
        const profiler_t *p = profiler_at(i);
        const char *path = discover_profiler_path(info, p->id);
        if (!path || !p->version_flag)
            continue;
        char *argv[] = {(char *) path, (char *) p->version_flag, NULL};
        char *text = s_tool_output(argv);
        if (text && !host_info_parse_version(text, p->version_marker, info->profiler_version,
                                             sizeof info->profiler_version))
            pf_log_warn(LOG, "%s %s printed no \"%sN\" line", p->tool, p->version_flag, p->version_marker);
        free(text);
        break;
    }
    char *cpuinfo = NULL;
    size_t len = 0;
    char why[256];
    if (job_read_file("/proc/cpuinfo", 1 << 22, (uint8_t **) &cpuinfo, &len, why, sizeof why)) {
        char *text = realloc(cpuinfo, len + 1);
        if (text) {
            text[len] = '\0';
            host_info_parse_cpu_model(text, info->cpu_model, sizeof info->cpu_model);
            cpuinfo = text;
        }
        free(cpuinfo);
    }
    const char *python = config->python ? config->python : getenv("PROFEED_PYTHON");
    if (!proc_find(python ? python : "python3", info->python_path, sizeof info->python_path)) {
        info->python_path[0] = '\0';
        pf_log_warn(LOG, "%s not found: kernel + problem jobs will be refused", python ? python : "python3");
    }
    const char *root = config->job_root ? config->job_root : getenv("TMPDIR");
    snprintf(info->job_root, sizeof info->job_root, "%s", root && *root ? root : "/tmp");
    /* sudo is never the default: the operator opts in by flag or environment. */
    info->sudo = config->sudo || s_env_true("PROFEED_NCU_SUDO");
    if (info->sudo)
        pf_log_info(LOG, "profiling steps run through sudo -n -E (opted in)");
}

/* GPUs from --gpu, or the probes; profilers from PATH, or the replay map. */
int discover_host(collector_info_t *info, const collector_config_t *config)
{
    if (gethostname(info->host, sizeof info->host) != 0)
        snprintf(info->host, sizeof info->host, "unknown");
    info->host[sizeof info->host - 1] = '\0';
    if (config->worker_id)
        snprintf(info->worker_id, sizeof info->worker_id, "%s", config->worker_id);
    else
        snprintf(info->worker_id, sizeof info->worker_id, "collector-%.64s-%ld", info->host, (long) getpid());
    pf_error_t err;
    if (wire_check_id(info->worker_id, "--worker-id", &err) != PF_OK) {
        pf_log_error(LOG, "%s", err.msg);
        return -1;
    }
    if (config->gpu) {
        char spec[256];
        snprintf(spec, sizeof spec, "%s", config->gpu);
        char *arch = strchr(spec, ':');
        if (!arch) {
            pf_log_error(LOG, "--gpu needs NAME:ARCH[:COUNT], got \"%s\"", config->gpu);
            return -1;
        }
        *arch++ = '\0';
        char *count = strchr(arch, ':');
        long n = 1;
        if (count) {
            *count++ = '\0';
            char *end = NULL;
            n = strtol(count, &end, 10);
            if (end == count || *end || n < 1 || n > 1024) {
                pf_log_error(LOG, "--gpu: COUNT must be 1..1024, got \"%s\"", count);
                return -1;
            }
        }
        snprintf(info->gpu_names[0], sizeof info->gpu_names[0], "%s", spec);
        snprintf(info->gpu_archs[0], sizeof info->gpu_archs[0], "%s", arch);
        profeed__gpu_capability__init(&info->gpus[0]);
        info->gpus[0].name = info->gpu_names[0];
        info->gpus[0].arch = info->gpu_archs[0];
        info->gpus[0].has_count = 1;
        info->gpus[0].count = (uint32_t) n;
        info->gpu_count = 1;
    } else if (!config->replay_map) {
        s_discover_gpus(info);
    }
    if (config->replay_map) {
        info->replay = replay_load(config->replay_map, &err);
        if (!info->replay) {
            pf_log_error(LOG, "replay map: %s", err.msg);
            return -1;
        }
        if (info->gpu_count == 0) {
            /* The bundled captures come from an H200. */
            snprintf(info->gpu_names[0], sizeof info->gpu_names[0], "NVIDIA H200");
            snprintf(info->gpu_archs[0], sizeof info->gpu_archs[0], "sm_90");
            profeed__gpu_capability__init(&info->gpus[0]);
            info->gpus[0].name = info->gpu_names[0];
            info->gpus[0].arch = info->gpu_archs[0];
            info->gpus[0].has_count = 1;
            info->gpus[0].count = 1;
            info->gpu_count = 1;
        }
        info->profiler_count = replay_profilers(info->replay, info->profilers, PROFILER_MAX);
    } else {
        /* A profiler that is not installed is not offered, so the broker
         * never routes a job here that would fail for want of it. */
        for (size_t i = 0; i < profiler_count() && i < PROFILER_MAX; i++) {
            if (proc_find(profiler_at(i)->tool, info->profiler_paths[i], sizeof info->profiler_paths[i]))
                info->profilers[info->profiler_count++] = profiler_at(i)->id;
            else
                info->profiler_paths[i][0] = '\0';
        }
        if (info->profiler_count == 0) {
            pf_log_error(LOG, "no profiler this collector can run (%s) is on PATH; use --replay "
                              "MAP to serve recorded captures", profiler_names());
            return -1;
        }
        s_discover_tools(info, config);
        if (info->gpu_count == 0) {
            pf_log_error(LOG, "no GPU found (nvidia-smi); name one with --gpu NAME:ARCH or use --replay MAP");
            return -1;
        }
    }
    info->config = config;
    return 0;
}
