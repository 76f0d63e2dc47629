/* outbox_held: what the broker's outbox (broker/outbox.h) costs while the
 * journal's disk is stalled and it holds many promises, run by hand:
 *
 *   outbox_held [HELD [PEERS [ROUNDS]]]     defaults 20000 1000 5
 *
 * Holds HELD messages spread over PEERS peers in turn (each peer's first
 * message waits for a mark not yet synced, and the rest are held behind it,
 * as a stalled disk holds an ack and the progress that follows it), then
 * times
 *   - a send to a peer with nothing held (it goes at once: the question is
 *     how long it takes to learn that nothing is held for it), and
 *   - a release that frees nothing (the mark is still not synced: each
 *     held message is checked against the peers already blocked).
 * Prints the median of ROUNDS, in microseconds. The peers are routing ids
 * only: nothing is connected but the one peer the sends go to, a DEALER on
 * inproc, so the times are the outbox's own bookkeeping and one inproc send. */
#include <czmq.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "outbox.h"
#include "wire_zmq.h"

static int s_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double s_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, s_cmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static long s_arg(int argc, char **argv, int i, long dflt)
{
    if (argc <= i)
        return dflt;
    char *end;
    long v = strtol(argv[i], &end, 10);
    if (*end || v < 1 || v > 10000000) {
        fprintf(stderr, "outbox_held: '%s' is not a count from 1 to 10000000 (--help: see the source's head)\n",
                argv[i]);
        exit(2);
    }
    return v;
}

int main(int argc, char **argv)
{
    if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        puts("usage: outbox_held [HELD [PEERS [ROUNDS]]]   (defaults 20000 1000 5)");
        return 0;
    }
    long held = s_arg(argc, argv, 1, 20000), peers = s_arg(argc, argv, 2, 1000);
    int rounds = (int)s_arg(argc, argv, 3, 5);
    if (rounds > 1000)
        rounds = 1000;
    zsys_init();
    zsock_t *router = zsock_new(ZMQ_ROUTER);
    wire_zmq_configure(router, 1 << 20, 100);
    if (zsock_bind(router, "inproc://outbox-held") != 0)
        return 1;
    zsock_t *dealer = zsock_new_dealer("inproc://outbox-held");
    zstr_send(dealer, "hello");
    zmsg_t *hello = zmsg_recv(router);
    zframe_t *live = zmsg_pop(hello);
    zmsg_destroy(&hello);

    double send_us[1000], release_us[1000];
    for (int r = 0; r < rounds; r++) {
        outbox_t *out = outbox_new(router, NULL, NULL);
        for (long i = 0; i < held; i++) {
            char id[32];
            snprintf(id, sizeof id, "peer%08ld", i % peers);
            zframe_t *peer = zframe_new(id, strlen(id));
            zframe_t *body = zframe_new("x", 1);
            pf_error_t err;
            /* A peer's first message waits for mark 2, never synced here. */
            uint64_t mark = i < peers ? 2 : 0;
            if (outbox_send(out, peer, &body, mark, 1, OUTBOX_PLAIN, "job", &err) != PF_OK) {
                fprintf(stderr, "outbox_held: %s\n", err.msg);
                return 1;
            }
            zframe_destroy(&peer);
        }
        int64_t t0 = zclock_usecs();
        zframe_t *body = zframe_new("y", 1);
        pf_error_t err;
        if (outbox_send(out, live, &body, 0, 1, OUTBOX_PLAIN, "job", &err) != PF_OK) {
            fprintf(stderr, "outbox_held: %s\n", err.msg);
            return 1;
        }
        int64_t t1 = zclock_usecs();
        outbox_release(out, 1);
        int64_t t2 = zclock_usecs();
        if ((long)outbox_held(out) != held) {
            fprintf(stderr, "outbox_held: %zu held after the release, not %ld\n", outbox_held(out), held);
            return 1;
        }
        send_us[r] = (double)(t1 - t0);
        release_us[r] = (double)(t2 - t1);
        outbox_destroy(&out);
        zframe_t *got = zframe_recv(dealer);
        zframe_destroy(&got);
    }
    printf("held %ld over %ld peers, %d rounds: a send to an idle peer %.1f us, a release freeing nothing %.1f us"
           " (medians)\n",
           held, peers, rounds, s_median(send_us, rounds), s_median(release_us, rounds));
    zframe_destroy(&live);
    zsock_destroy(&dealer);
    zsock_destroy(&router);
    return 0;
}
