/* slot: the threads that run jobs, one per slot, so the collector's loop
 * keeps heartbeating while profilers run. */
#include "job.h"

#include "pf_tsan.h"

/* Runs one job on the calling slot thread; its messages go out on `pipe`. */
static void s_job_run(zsock_t *pipe, job_run_t *run)
{
    if (run->info->replay)
        job_run_replay(pipe, run, run->request);
    else
        job_run_real(pipe, run, run->request);
    pf_tsan_handed_over(run);
    zstr_send(pipe, "DONE");
}

/* A slot's thread: started at the slot's first job and kept, so a job costs a
 * message to a waiting thread rather than a thread and a socket pair of its
 * own (about 80 us here, a third of the collector's time per replayed job).
 * Runs each job it is handed ("RUN" + the job_run_t, which stays the loop's
 * until "DONE" comes back) until $TERM. */
void slot_actor(zsock_t *pipe, void *args)
{
    (void) args;
    zsock_signal(pipe, 0);
    while (true) {
        char *command = NULL;
        void *run = NULL;
        if (zsock_recv(pipe, "sp", &command, &run) != 0 || !command || streq(command, "$TERM")) {
            zstr_free(&command);
            break;
        }
        bool is_run = streq(command, "RUN");
        zstr_free(&command);
        if (is_run && run) {
            pf_tsan_taken_over(run);
            s_job_run(pipe, run);
        }
    }
}
