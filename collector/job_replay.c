/* job_replay: a job served from recorded captures (replay.h's map) as if a
 * profiler had just run: the plan size, then each recorded pass, whole or
 * streamed, after --pass-delay-ms. */
#include "job.h"

#include <stdio.h>
#include <string.h>

#include "pass_plan.h"

void job_run_replay(zsock_t *pipe, job_run_t *run, const Profeed__JobRequest *req)
{
    const collector_info_t *info = run->info;
    const collector_config_t *config = info->config;
    /* Commands are matched by program, kernel jobs by their kernel file. */
    const char *program = req->target_case == PROFEED__JOB_REQUEST__TARGET_COMMAND
                              ? job_basename(req->command->argv[0])
                              : job_basename(req->kernel->kernel_file->name);
    const replay_pass_t *passes[64];
    size_t found = replay_find(info->replay, program, passes, 64), count = 0;
    /* A recorded source pass stands in for the one a real run adds only
     * when the job asks for it. */
    bool want_source = req->has_source && req->source;
    for (size_t i = 0; i < found; i++)
        if (!passes[i]->source || want_source)
            passes[count++] = passes[i];
    if (count == 0) {
        char text[512];
        snprintf(text, sizeof text, "replay: %s records no capture for program \"%.128s\"",
                 replay_path(info->replay), program);
        job_send_error(pipe, text);
        return;
    }
    /* A named plan must exist, as it must for a real run: the recorded
     * passes stand in for it, and a typo should not pass unnoticed. */
    if (req->n_passes == 1 && req->passes[0]->n_args == 0) {
        Profeed__Profiler profiler = req->has_profiler && req->profiler != PROFEED__PROFILER__PROFILER_UNSPECIFIED
                                         ? req->profiler
                                         : passes[0]->profiler;
        pf_error_t err;
        if (pass_plan_check_name(profiler, req->passes[0]->name, &err) != PF_OK) {
            job_send_error(pipe, err.msg);
            return;
        }
    }
    job_send_plan(pipe, run, (uint32_t) count, config->max_msg);
    for (size_t i = 0; i < count; i++) {
        if (!job_sleep(run, config->pass_delay_ms))
            return;
        const replay_pass_t *rp = passes[i];
        Profeed__PassOutput pass;
        profeed__pass_output__init(&pass);
        Profeed__File files[REPLAY_MAX_FILES], *file_ptrs[REPLAY_MAX_FILES];
        uint8_t *datas[REPLAY_MAX_FILES] = {0};
        char source[2048];
        size_t used = (size_t) snprintf(source, sizeof source, "%s:", replay_path(info->replay));
        bool ok = true;
        char why[512];
        /* A streamed pass reads its files a chunk at a time, so the
         * whole-pass limit (max-output-mb) is not what bounds it. */
        bool stream = job_should_stream(run, rp->files, rp->file_count);
        char *names[REPLAY_MAX_FILES];
        for (size_t f = 0; stream && f < rp->file_count; f++) {
            profeed__file__init(&files[f]);
            files[f].name = names[f] = (char *) job_basename(rp->files[f]);
            file_ptrs[f] = &files[f];
            if (used < sizeof source) {
                int n = snprintf(source + used, sizeof source - used, " %s", rp->files[f]);
                used = n > 0 ? used + (size_t) n : sizeof source;
            }
        }
        for (size_t f = 0; !stream && f < rp->file_count; f++) {
            size_t len = 0;
            if (!job_read_file(rp->files[f], config->max_output, &datas[f], &len, why, sizeof why)) {
                ok = false;
                break;
            }
            profeed__file__init(&files[f]);
            files[f].name = (char *) job_basename(rp->files[f]);
            files[f].has_content = 1;
            files[f].content.data = datas[f];
            files[f].content.len = len;
            file_ptrs[f] = &files[f];
            if (used < sizeof source) {
                int n = snprintf(source + used, sizeof source - used, " %s", rp->files[f]);
                used = n > 0 ? used + (size_t) n : sizeof source;
            }
        }
        if (ok) {
            Profeed__WorkerInfo worker;
            job_fill_worker(info, &worker);
            pass.job_id = run->job_id;
            pass.pass_key = (char *) rp->pass_key;
            pass.has_profiler = 1;
            pass.profiler = rp->profiler;
            pass.files = file_ptrs;
            pass.n_files = rp->file_count;
            pass.has_exit_status = 1;
            pass.exit_status = rp->exit_status;
            pass.has_duration_ms = 1;
            pass.duration_ms = (uint64_t) config->pass_delay_ms;
            pass.worker = &worker;
            pass.replay_source = source;
            if (stream) {
                if (job_stream_pass(pipe, run, &pass, names, rp->files, rp->file_count) != 0)
                    return;
            } else {
                job_send_pass(pipe, run, &pass, config->max_msg);
            }
        }
        for (size_t f = 0; f < rp->file_count; f++)
            free(datas[f]);
        if (!ok) {
            job_send_error(pipe, why);
            return;
        }
    }
}
