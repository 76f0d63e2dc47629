/* Paranoid Pirate bookkeeping on a fake clock: heartbeats every interval,
 * liveness lost to silence, reconnect with a pause that doubles to 32
 * intervals, and everything restored when the broker speaks. */
#include <criterion/criterion.h>

#include "pirate.h"

Test(pirate, heartbeats_every_interval_while_the_broker_answers)
{
    pirate_t p;
    pirate_start(&p, 1000, 3, 0);
    cr_expect_eq(pirate_wait_ms(&p, 0), 1000);
    cr_expect_eq(pirate_wait_ms(&p, 400), 600);
    cr_expect_eq(pirate_tick(&p, 999), PIRATE_NOTHING);
    for (int i = 1; i <= 10; i++) {
        cr_expect_eq(pirate_tick(&p, i * 1000), PIRATE_HEARTBEAT, "interval %d", i);
        pirate_heard(&p);
    }
}

Test(pirate, silence_for_liveness_intervals_means_reconnect)
{
    pirate_t p;
    pirate_start(&p, 100, 3, 0);
    cr_expect_eq(pirate_tick(&p, 100), PIRATE_HEARTBEAT);
    cr_expect_eq(pirate_tick(&p, 200), PIRATE_HEARTBEAT);
    cr_expect_eq(pirate_tick(&p, 300), PIRATE_RECONNECT, "third silent interval");
}

Test(pirate, the_pause_doubles_to_32_intervals_until_the_broker_answers)
{
    pirate_t p;
    pirate_start(&p, 100, 1, 0);
    int expected[] = {100, 200, 400, 800, 1600, 3200, 3200, 3200};
    for (int i = 0; i < 8; i++) {
        cr_expect_eq(pirate_tick(&p, (i + 1) * 10000), PIRATE_RECONNECT);
        cr_expect_eq(pirate_backoff(&p), expected[i], "attempt %d", i);
        pirate_connected(&p);
    }
    pirate_heard(&p);
    cr_expect_eq(pirate_backoff(&p), 100, "an answer resets the pause");
}

Test(pirate, a_late_wake_never_waits_negative_or_longer_than_an_interval)
{
    pirate_t p;
    pirate_start(&p, 50, 3, 1000);
    cr_expect_eq(pirate_wait_ms(&p, 5000), 0);
    cr_expect_eq(pirate_wait_ms(&p, 0), 50);
}
