#include "pirate.h"

#include <assert.h>

/* The guide's constants: liveness 3-5, pause from one interval doubling to
 * 32 (INTERVAL_INIT 1000 ms, INTERVAL_MAX 32000 ms). */
#define BACKOFF_MAX_INTERVALS PIRATE_BACKOFF_MAX_INTERVALS

void pirate_start(pirate_t *self, int interval_ms, int liveness, int64_t now_ms)
{
    assert(interval_ms > 0 && liveness > 0);
    self->interval_ms = interval_ms;
    self->liveness_max = liveness;
    self->liveness = liveness;
    self->backoff_ms = interval_ms;
    self->next_ms = now_ms + interval_ms;
}

void pirate_heard(pirate_t *self)
{
    self->liveness = self->liveness_max;
    self->backoff_ms = self->interval_ms;
}

void pirate_connected(pirate_t *self) { self->liveness = self->liveness_max; }

int pirate_wait_ms(const pirate_t *self, int64_t now_ms)
{
    int64_t wait = self->next_ms - now_ms;
    return wait < 0 ? 0 : wait > self->interval_ms ? self->interval_ms : (int) wait;
}

pirate_due_t pirate_tick(pirate_t *self, int64_t now_ms)
{
    if (now_ms < self->next_ms)
        return PIRATE_NOTHING;
    self->next_ms = now_ms + self->interval_ms;
    return --self->liveness <= 0 ? PIRATE_RECONNECT : PIRATE_HEARTBEAT;
}

int pirate_backoff(pirate_t *self)
{
    int pause = self->backoff_ms;
    if (self->backoff_ms < BACKOFF_MAX_INTERVALS * self->interval_ms)
        self->backoff_ms *= 2;
    return pause;
}
