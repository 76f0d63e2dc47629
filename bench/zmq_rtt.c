/* zmq_rtt: libzmq's plain round-trip latency on this machine, the messaging
 * floor of bench/pipeline.sh.
 *
 *     zmq_rtt [--size BYTES] [--count N] [--endpoint tcp://127.0.0.1:PORT]
 *
 * One DEALER and one ROUTER, as the farm connects agents and workers to the
 * broker, over TCP loopback: the DEALER sends one frame of BYTES, the ROUTER
 * receives it (identity + frame) and sends it back. Both sockets live in one
 * thread on purpose: the transfer is done by libzmq's I/O thread either way,
 * and a second application thread would add a wake-up, which the farm's
 * single-threaded loops do not have per hop. Prints the median, p99 and mean
 * of N round trips after 1,000 warm-up trips, in microseconds, on one line:
 *
 *     size=64 count=20000 p50_us=41.2 p99_us=63.0 mean_us=42.7
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zmq.h>

#include "cli_util.h"

#define PROG "zmq_rtt"
#define WARMUP 1000

static double s_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec * 1e6 + (double) ts.tv_nsec / 1e3;
}

static int s_cmp_double(const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

/* Nearest-rank percentile of a sorted array. */
static double s_percentile(const double *sorted, size_t n, double p)
{
    size_t rank = (size_t) (p / 100.0 * (double) n + 0.999999);
    if (rank < 1)
        rank = 1;
    if (rank > n)
        rank = n;
    return sorted[rank - 1];
}

static int s_fail(const char *what)
{
    fprintf(stderr, "%s: %s: %s\n", PROG, what, zmq_strerror(errno));
    return 1;
}

/* One round trip of `len` bytes in `buf`; 0 or -1 with errno. */
static int s_trip(void *dealer, void *router, uint8_t *buf, size_t len)
{
    uint8_t id[256];
    if (zmq_send(dealer, buf, len, 0) < 0)
        return -1;
    int idlen = zmq_recv(router, id, sizeof id, 0);
    if (idlen < 0 || (size_t) idlen > sizeof id)
        return -1;
    if (zmq_recv(router, buf, len, 0) < 0)
        return -1;
    if (zmq_send(router, id, (size_t) idlen, ZMQ_SNDMORE) < 0 || zmq_send(router, buf, len, 0) < 0)
        return -1;
    return zmq_recv(dealer, buf, len, 0) < 0 ? -1 : 0;
}

int main(int argc, char **argv)
{
    long long size = 64, count = 20000;
    const char *endpoint = "tcp://127.0.0.1:*";
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--size") == 0 && i + 1 < argc) {
            if (!cli_parse_int(PROG, "--size", argv[++i], 1, 64LL * 1024 * 1024, &size))
                return 2;
        } else if (strcmp(argv[i], "--count") == 0 && i + 1 < argc) {
            if (!cli_parse_int(PROG, "--count", argv[++i], 1, 10000000, &count))
                return 2;
        } else if (strcmp(argv[i], "--endpoint") == 0 && i + 1 < argc) {
            endpoint = argv[++i];
        } else {
            fprintf(stderr, "usage: %s [--size BYTES] [--count N] [--endpoint tcp://127.0.0.1:PORT]\n", PROG);
            return strcmp(argv[i], "--help") == 0 ? 0 : 2;
        }
    }

    int rc = 1;
    void *ctx = zmq_ctx_new();
    void *router = zmq_socket(ctx, ZMQ_ROUTER);
    void *dealer = zmq_socket(ctx, ZMQ_DEALER);
    uint8_t *buf = calloc((size_t) size, 1);
    double *rtt = calloc((size_t) count, sizeof *rtt);
    char bound[256];
    size_t bound_len = sizeof bound;
    int linger = 0;
    if (!ctx || !router || !dealer || !buf || !rtt) {
        fprintf(stderr, "%s: out of memory or no ZeroMQ context\n", PROG);
        goto cleanup;
    }
    zmq_setsockopt(router, ZMQ_LINGER, &linger, sizeof linger);
    zmq_setsockopt(dealer, ZMQ_LINGER, &linger, sizeof linger);
    if (zmq_bind(router, endpoint) != 0) {
        rc = s_fail("bind");
        goto cleanup;
    }
    if (zmq_getsockopt(router, ZMQ_LAST_ENDPOINT, bound, &bound_len) != 0 || zmq_connect(dealer, bound) != 0) {
        rc = s_fail("connect");
        goto cleanup;
    }
    for (int i = 0; i < WARMUP; i++) {
        if (s_trip(dealer, router, buf, (size_t) size) != 0) {
            rc = s_fail("warm-up round trip");
            goto cleanup;
        }
    }
    double sum = 0;
    for (long long i = 0; i < count; i++) {
        double t0 = s_now_us();
        if (s_trip(dealer, router, buf, (size_t) size) != 0) {
            rc = s_fail("round trip");
            goto cleanup;
        }
        rtt[i] = s_now_us() - t0;
        sum += rtt[i];
    }
    qsort(rtt, (size_t) count, sizeof *rtt, s_cmp_double);
    printf("size=%lld count=%lld p50_us=%.1f p99_us=%.1f mean_us=%.1f\n", size, count,
           s_percentile(rtt, (size_t) count, 50), s_percentile(rtt, (size_t) count, 99), sum / (double) count);
    rc = 0;
cleanup:
    free(buf);
    free(rtt);
    if (dealer)
        zmq_close(dealer);
    if (router)
        zmq_close(router);
    if (ctx)
        zmq_ctx_term(ctx);
    return rc;
}
