/* pirate: a worker's side of Paranoid Pirate liveness (ZeroMQ guide, ch. 4),
 * shared by the collector and the analyzer worker.
 *
 * The worker heartbeats the broker every interval. Each interval in which the
 * broker says nothing costs one unit of liveness; at zero the broker is
 * presumed gone and the worker reconnects, after a pause that doubles from one
 * interval up to 32. Anything heard from the broker restores full liveness and
 * the shortest pause. Pure bookkeeping on a millisecond clock the caller
 * passes in, so it is tested without sockets or sleeps. */
#ifndef PIRATE_H
#define PIRATE_H

#include <stdint.h>

/* The longest pause between reconnects, in intervals (the guide's 32 of
 * 1000 ms). A broker waiting for its workers to come back waits this long. */
#define PIRATE_BACKOFF_MAX_INTERVALS 32

typedef struct {
    int interval_ms;
    int liveness_max;
    int liveness;
    int backoff_ms;
    int64_t next_ms; /* when the next heartbeat is due */
} pirate_t;

typedef enum {
    PIRATE_NOTHING,   /* not yet time */
    PIRATE_HEARTBEAT, /* send a heartbeat */
    PIRATE_RECONNECT, /* the broker is presumed gone: pause pirate_backoff(), reconnect */
} pirate_due_t;

void pirate_start(pirate_t *self, int interval_ms, int liveness, int64_t now_ms);

/* The broker said something. */
void pirate_heard(pirate_t *self);

/* A new connection was made: full liveness, but the pause keeps growing
 * until the broker answers. */
void pirate_connected(pirate_t *self);

/* How long to wait for the broker before pirate_tick() has something due. */
int pirate_wait_ms(const pirate_t *self, int64_t now_ms);

/* What is due at `now_ms`; call after every wait. */
pirate_due_t pirate_tick(pirate_t *self, int64_t now_ms);

/* The pause before reconnecting; each call doubles the next one, up to 32
 * intervals. */
int pirate_backoff(pirate_t *self);

#endif
