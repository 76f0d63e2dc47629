/* journal_sync.c: the sync thread of journal_sync.h. Every field the two
 * threads share is under `lock`; the thread holds no lock while it syncs. */
#include "journal_sync.h"

#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pf_log.h"

#define LOG "journal"

struct journal_sync_t {
    char path[PATH_MAX];
    pthread_t thread;
    zsock_t *loop_end;    /* the loop's end of the PAIR: polled, drained */
    zsock_t *thread_end;  /* the thread's end: only the thread sends on it */
    pthread_mutex_t lock;
    pthread_cond_t wake;  /* the thread: work or stop; the loop: a sync ended */
    /* Under lock: */
    int fd;
    uint64_t written;     /* the loop has written up to this mark */
    uint64_t wanted;      /* a promise waits for this mark */
    uint64_t synced;      /* every mark up to this is resolved: synced, or failed below */
    uint64_t failed_from, failed_to; /* an untaken failure, (from, to]; to 0: none */
    char why[PF_ERROR_MSG_MAX];
    bool syncing;         /* the thread is in fdatasync (of fd) */
    bool told;            /* a message is in the pipe that the loop has not taken */
    bool stop;
    uint64_t count;
    journal_sync_fn fn;
    void *fn_arg;
};

/* Tells the loop there is progress to take, once until it takes it. Called
 * with the lock held; zsock_signal on a PAIR with room does not block (at
 * most two messages are ever in the pipe: see journal_sync_take). */
static void s_tell(journal_sync_t *self)
{
    if (self->told)
        return;
    self->told = true;
    zsock_signal(self->thread_end, 0);
}

static void *s_run(void *arg)
{
    journal_sync_t *self = arg;
    pthread_mutex_lock(&self->lock);
    while (true) {
        /* Nothing wanted, or a failure the loop has not seen: wait. */
        while (!self->stop && (self->wanted <= self->synced || self->failed_to != 0))
            pthread_cond_wait(&self->wake, &self->lock);
        if (self->stop)
            break;
        uint64_t target = self->written;
        int fd = self->fd;
        journal_sync_fn fn = self->fn;
        void *fn_arg = self->fn_arg;
        self->syncing = true;
        pthread_mutex_unlock(&self->lock);
        int rc;
        do
            rc = fn ? fn(fd, fn_arg) : fdatasync(fd);
        while (rc != 0 && errno == EINTR);
        int saved = errno;
        pthread_mutex_lock(&self->lock);
        self->syncing = false;
        self->count++;
        /* target > synced: wanted is, and a compaction (journal_sync_replace)
         * waits for this sync to end before it moves synced. */
        if (rc != 0) {
            self->failed_from = self->synced;
            self->failed_to = target;
            snprintf(self->why, sizeof self->why, "%.400s: cannot sync: %s", self->path, strerror(saved));
        }
        self->synced = target;
        s_tell(self);
        pthread_cond_broadcast(&self->wake);
    }
    pthread_mutex_unlock(&self->lock);
    return NULL;
}

journal_sync_t *journal_sync_new(int fd, const char *path, pf_error_t *err)
{
    journal_sync_t *self = calloc(1, sizeof *self);
    if (!self) {
        pf_error_set(err, PF_ENOMEM, "out of memory");
        return NULL;
    }
    snprintf(self->path, sizeof self->path, "%s", path);
    self->fd = fd;
    /* The address makes the endpoint unique in this process (tests open
     * several journals). */
    char endpoint[64];
    snprintf(endpoint, sizeof endpoint, "inproc://journal-sync-%p", (void *) self);
    self->loop_end = zsock_new(ZMQ_PAIR);
    self->thread_end = zsock_new(ZMQ_PAIR);
    if (!self->loop_end || !self->thread_end || zsock_bind(self->loop_end, "%s", endpoint) != 0 ||
        zsock_connect(self->thread_end, "%s", endpoint) != 0) {
        pf_error_set(err, PF_EIO, "cannot make the journal's sync socket: %s", zmq_strerror(zmq_errno()));
        goto fail;
    }
    pthread_mutex_init(&self->lock, NULL);
    pthread_cond_init(&self->wake, NULL);
    int rc = pthread_create(&self->thread, NULL, s_run, self);
    if (rc != 0) {
        pf_error_set(err, PF_EIO, "cannot start the journal's sync thread: %s", strerror(rc));
        pthread_cond_destroy(&self->wake);
        pthread_mutex_destroy(&self->lock);
        goto fail;
    }
    return self;
fail:
    zsock_destroy(&self->thread_end);
    zsock_destroy(&self->loop_end);
    free(self);
    return NULL;
}

void journal_sync_destroy(journal_sync_t **self_p)
{
    assert(self_p);
    journal_sync_t *self = *self_p;
    if (!self)
        return;
    pthread_mutex_lock(&self->lock);
    self->stop = true;
    pthread_cond_broadcast(&self->wake);
    pthread_mutex_unlock(&self->lock);
    pthread_join(self->thread, NULL);
    pthread_cond_destroy(&self->wake);
    pthread_mutex_destroy(&self->lock);
    zsock_destroy(&self->thread_end);
    zsock_destroy(&self->loop_end);
    free(self);
    *self_p = NULL;
}

void journal_sync_written(journal_sync_t *self, uint64_t mark, bool wanted)
{
    pthread_mutex_lock(&self->lock);
    assert(mark >= self->written);
    self->written = mark;
    if (wanted) {
        self->wanted = mark;
        pthread_cond_broadcast(&self->wake);
    }
    pthread_mutex_unlock(&self->lock);
}

void journal_sync_replace(journal_sync_t *self, int fd, uint64_t mark)
{
    pthread_mutex_lock(&self->lock);
    while (self->syncing)
        pthread_cond_wait(&self->wake, &self->lock);
    self->fd = fd;
    self->written = mark;
    if (mark > self->synced)
        self->synced = mark;
    self->failed_from = self->failed_to = 0;
    pthread_mutex_unlock(&self->lock);
}

void journal_sync_take(journal_sync_t *self, journal_sync_progress_t *progress)
{
    /* Drained first: a message sent after this drain stays in the pipe and
     * wakes the loop again, so no news is missed (at worst a wakeup finds
     * nothing new). */
    void *sock = zsock_resolve(self->loop_end);
    char buf[16];
    while (zmq_recv(sock, buf, sizeof buf, ZMQ_DONTWAIT) >= 0)
        ;
    pthread_mutex_lock(&self->lock);
    self->told = false;
    progress->synced = self->synced;
    progress->failed_from = self->failed_from;
    progress->failed_to = self->failed_to;
    snprintf(progress->why, sizeof progress->why, "%s", self->failed_to ? self->why : "");
    if (self->failed_to) {
        self->failed_from = self->failed_to = 0;
        pthread_cond_broadcast(&self->wake); /* it may sync again */
    }
    pthread_mutex_unlock(&self->lock);
}

zsock_t *journal_sync_socket(journal_sync_t *self)
{
    return self->loop_end;
}

uint64_t journal_sync_count(journal_sync_t *self)
{
    pthread_mutex_lock(&self->lock);
    uint64_t count = self->count;
    pthread_mutex_unlock(&self->lock);
    return count;
}

void journal_sync_set_fn(journal_sync_t *self, journal_sync_fn fn, void *arg)
{
    pthread_mutex_lock(&self->lock);
    self->fn = fn;
    self->fn_arg = arg;
    pthread_mutex_unlock(&self->lock);
}
