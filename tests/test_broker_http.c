/* broker_http: the broker's metrics page server (broker/broker_http.h), fed
 * real connections: a stream socket on an ipc:// endpoint of this test's
 * own, written to and read from the way a scraper (or an attacker) would. */
#include "broker_http.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define PAGE "# HELP profeed_jobs_total Jobs.\nprofeed_jobs_total 3\n"

typedef struct {
    char dir[4096];
    char path[4200];
    broker_http_t *http;
    int renders;
    bool fail_render;
    int64_t now_ms;
} server_t;

static char *s_render(void *arg)
{
    server_t *s = arg;
    s->renders++;
    return s->fail_render ? NULL : strdup(PAGE);
}

static void s_start(server_t *s)
{
    memset(s, 0, sizeof *s);
    const char *tmp = getenv("TMPDIR");
    snprintf(s->dir, sizeof s->dir, "%s/profeed-http-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    cr_assert_not_null(mkdtemp(s->dir));
    snprintf(s->path, sizeof s->path, "%s/metrics.sock", s->dir);
    char endpoint[4300];
    snprintf(endpoint, sizeof endpoint, "ipc://%s", s->path);
    pf_error_t err;
    s->http = broker_http_new(endpoint, s_render, s, &err);
    cr_assert_not_null(s->http, "%s", err.msg);
    s->now_ms = 1000000;
}

static void s_stop(server_t *s)
{
    broker_http_destroy(&s->http);
    unlink(s->path); /* libzmq may have removed it already */
    cr_expect_eq(rmdir(s->dir), 0, "%s: %s", s->dir, strerror(errno));
}

/* Serves what arrives until the socket has been quiet for `quiet_ms`. */
static void s_pump(server_t *s, int quiet_ms)
{
    zpoller_t *poller = zpoller_new(broker_http_socket(s->http), NULL);
    while (zpoller_wait(poller, quiet_ms))
        broker_http_handle(s->http, s->now_ms);
    zpoller_destroy(&poller);
}

static int s_connect(server_t *s)
{
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    cr_assert_geq(fd, 0);
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    cr_assert_lt(strlen(s->path), sizeof addr.sun_path);
    memcpy(addr.sun_path, s->path, strlen(s->path) + 1);
    cr_assert_eq(connect(fd, (struct sockaddr *) &addr, sizeof addr), 0, "%s", strerror(errno));
    s_pump(s, 100); /* the connect notice */
    return fd;
}

static void s_write(int fd, const void *data, size_t len)
{
    const char *p = data;
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        cr_assert_gt(n, 0, "%s", strerror(errno));
        p += n;
        len -= (size_t) n;
    }
}

/* Everything the server sends until it closes the connection (or `ms`
 * pass without a byte: then *closed is false). Caller frees. */
static char *s_read(int fd, int ms, bool *closed)
{
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap + 1);
    cr_assert_not_null(buf);
    *closed = false;
    for (;;) {
        struct pollfd p = {.fd = fd, .events = POLLIN};
        if (poll(&p, 1, ms) <= 0)
            break;
        ssize_t n = read(fd, buf + len, cap - len);
        if (n <= 0) {
            *closed = true;
            break;
        }
        len += (size_t) n;
        cr_assert_lt(len, cap, "an answer this size is not the server's");
    }
    buf[len] = '\0';
    return buf;
}

/* One request on a fresh connection, and the whole answer. */
static char *s_exchange(server_t *s, const char *request, size_t len)
{
    int fd = s_connect(s);
    s_write(fd, request, len);
    s_pump(s, 100);
    bool closed;
    char *answer = s_read(fd, 2000, &closed);
    cr_expect(closed, "every answer closes its connection (Connection: close)");
    close(fd);
    s_pump(s, 50); /* the disconnect notice */
    return answer;
}

static char *s_get(server_t *s, const char *request)
{
    return s_exchange(s, request, strlen(request));
}

/* The status line's code, "200". */
static void s_status(const char *answer, char out[4])
{
    cr_assert_eq(strncmp(answer, "HTTP/1.1 ", 9), 0, "%s", answer);
    memcpy(out, answer + 9, 3);
    out[3] = '\0';
}

static const char *s_body(const char *answer)
{
    const char *b = strstr(answer, "\r\n\r\n");
    cr_assert_not_null(b, "%s", answer);
    return b + 4;
}

Test(broker_http, get_metrics_answers_the_rendered_page_with_its_length_and_closes)
{
    server_t s;
    s_start(&s);
    char *a = s_get(&s, "GET /metrics HTTP/1.1\r\nHost: broker\r\nUser-Agent: prometheus\r\n\r\n");
    char code[4];
    s_status(a, code);
    cr_expect_str_eq(code, "200");
    cr_expect(strstr(a, "\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"), "%s", a);
    char length[64];
    snprintf(length, sizeof length, "\r\nContent-Length: %zu\r\n", strlen(PAGE));
    cr_expect(strstr(a, length), "%s", a);
    cr_expect(strstr(a, "\r\nConnection: close\r\n"), "%s", a);
    cr_expect_str_eq(s_body(a), PAGE);
    cr_expect_eq(s.renders, 1);
    free(a);
    s_stop(&s);
}

Test(broker_http, head_has_get_s_headers_and_no_body)
{
    server_t s;
    s_start(&s);
    char *a = s_get(&s, "HEAD /metrics HTTP/1.0\r\n\r\n");
    char code[4], length[64];
    s_status(a, code);
    cr_expect_str_eq(code, "200");
    snprintf(length, sizeof length, "\r\nContent-Length: %zu\r\n", strlen(PAGE));
    cr_expect(strstr(a, length), "the length GET's body would have: %s", a);
    cr_expect_str_eq(s_body(a), "");
    free(a);
    s_stop(&s);
}

Test(broker_http, paths_other_than_metrics_and_the_root_are_404_and_a_query_is_ignored)
{
    server_t s;
    s_start(&s);
    struct {
        const char *request, *code, *body;
    } cases[] = {
        {"GET / HTTP/1.1\r\n\r\n", "200", "profeed-broker: metrics at /metrics\n"},
        {"GET /metrics?name[]=jobs HTTP/1.1\r\n\r\n", "200", PAGE},
        {"GET /metrics/ HTTP/1.1\r\n\r\n", "404", "no such page; metrics are at /metrics\n"},
        {"GET /../etc/passwd HTTP/1.1\r\n\r\n", "404", "no such page; metrics are at /metrics\n"},
        {"GET /metrics HTTP/1.1\n\n", "200", PAGE}, /* bare LF line ends, as some clients send */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *a = s_get(&s, cases[i].request);
        char code[4];
        s_status(a, code);
        cr_expect_str_eq(code, cases[i].code, "%s", cases[i].request);
        cr_expect_str_eq(s_body(a), cases[i].body, "%s", cases[i].request);
        free(a);
    }
    s_stop(&s);
}

Test(broker_http, methods_other_than_get_and_head_are_405)
{
    server_t s;
    s_start(&s);
    const char *requests[] = {"POST /metrics HTTP/1.1\r\nContent-Length: 2\r\n\r\nhi",
                              "DELETE /metrics HTTP/1.1\r\n\r\n", "OPTIONS / HTTP/1.1\r\n\r\n"};
    for (size_t i = 0; i < sizeof requests / sizeof requests[0]; i++) {
        char *a = s_get(&s, requests[i]);
        char code[4];
        s_status(a, code);
        cr_expect_str_eq(code, "405", "%s", requests[i]);
        free(a);
    }
    cr_expect_eq(s.renders, 0, "nothing rendered for a refused method");
    s_stop(&s);
}

Test(broker_http, what_is_not_an_http_request_line_is_400)
{
    server_t s;
    s_start(&s);
    const char *requests[] = {
        "hello\r\n\r\n",
        "GET metrics HTTP/1.1\r\n\r\n", /* not an absolute path */
        "GET / HTTP/2.0\r\n\r\n",       /* only HTTP/1.0 and 1.1 */
        "get / HTTP/1.1\r\n\r\n",       /* methods are capitals */
        "GET /\r\n\r\n",                /* HTTP/0.9 */
        "\r\n\r\n",
    };
    for (size_t i = 0; i < sizeof requests / sizeof requests[0]; i++) {
        char *a = s_get(&s, requests[i]);
        char code[4];
        s_status(a, code);
        cr_expect_str_eq(code, "400", "%s", requests[i]);
        cr_expect_str_eq(s_body(a), "not an HTTP request\n");
        free(a);
    }
    /* A NUL would hide the head's end from the search for it. */
    static const char nul[] = "GET /metrics HTTP/1.1\r\n\0\r\n\r\n";
    char *a = s_exchange(&s, nul, sizeof nul - 1);
    char code[4];
    s_status(a, code);
    cr_expect_str_eq(code, "400");
    free(a);
    cr_expect_eq(s.renders, 0);
    s_stop(&s);
}

Test(broker_http, a_request_larger_than_the_bound_is_431)
{
    server_t s;
    s_start(&s);
    size_t len = BROKER_HTTP_MAX_REQUEST + 100;
    char *big = malloc(len);
    memcpy(big, "GET /metrics HTTP/1.1\r\nX-Pad: ", 30);
    memset(big + 30, 'a', len - 30); /* never ends its head */
    char *a = s_exchange(&s, big, len);
    char code[4];
    s_status(a, code);
    cr_expect_str_eq(code, "431");
    cr_expect_str_eq(s_body(a), "request too large\n");
    cr_expect_eq(s.renders, 0);
    free(a);
    free(big);
    s_stop(&s);
}

Test(broker_http, a_render_failure_is_500)
{
    server_t s;
    s_start(&s);
    s.fail_render = true;
    char *a = s_get(&s, "GET /metrics HTTP/1.1\r\n\r\n");
    char code[4];
    s_status(a, code);
    cr_expect_str_eq(code, "500");
    cr_expect_eq(s.renders, 1);
    free(a);
    s_stop(&s);
}

/* A head that comes in pieces is answered once, when it is whole. */
Test(broker_http, a_request_in_pieces_is_answered_when_its_head_is_whole)
{
    server_t s;
    s_start(&s);
    int fd = s_connect(&s);
    const char *pieces[] = {"GET /met", "rics HTTP/1.1\r\nHost: b", "\r\n\r\n"};
    bool closed;
    for (size_t i = 0; i < 2; i++) {
        s_write(fd, pieces[i], strlen(pieces[i]));
        s_pump(&s, 100);
        char *early = s_read(fd, 100, &closed);
        cr_expect_str_eq(early, "", "no answer to a part of a head");
        cr_expect_not(closed);
        free(early);
    }
    s_write(fd, pieces[2], strlen(pieces[2]));
    s_pump(&s, 100);
    char *a = s_read(fd, 2000, &closed);
    cr_expect(closed);
    cr_expect_str_eq(s_body(a), PAGE);
    cr_expect_eq(s.renders, 1);
    free(a);
    close(fd);
    s_pump(&s, 50);
    s_stop(&s);
}

Test(broker_http, a_connection_idle_past_the_limit_gets_408_and_is_closed)
{
    server_t s;
    s_start(&s);
    int fd = s_connect(&s); /* connected at now_ms */
    s_write(fd, "GET /metrics HTTP/1.1\r\n", 23);
    s_pump(&s, 100);
    broker_http_expire(s.http, s.now_ms + BROKER_HTTP_IDLE_MS);
    bool closed;
    char *a = s_read(fd, 200, &closed);
    cr_expect_str_eq(a, "", "at the limit it may still finish");
    cr_expect_not(closed);
    free(a);
    broker_http_expire(s.http, s.now_ms + BROKER_HTTP_IDLE_MS + 1);
    s_pump(&s, 100); /* the loop goes on, as the broker's does: libzmq closes the connection on its turn */
    a = s_read(fd, 2000, &closed);
    char code[4];
    s_status(a, code);
    cr_expect_str_eq(code, "408");
    cr_expect(closed);
    cr_expect_eq(s.renders, 0);
    free(a);
    close(fd);
    s_pump(&s, 50);
    s_stop(&s);
}

/* Past BROKER_HTTP_MAX_CONNS held connections, a new one closes the one
 * that has waited longest, and is served itself. */
Test(broker_http, past_the_connection_bound_the_longest_waiting_one_goes)
{
    server_t s;
    s_start(&s);
    int fds[BROKER_HTTP_MAX_CONNS + 1];
    for (size_t i = 0; i <= BROKER_HTTP_MAX_CONNS; i++) {
        s.now_ms++;
        fds[i] = s_connect(&s);
    }
    bool closed;
    char *a = s_read(fds[0], 2000, &closed);
    cr_expect(closed, "the oldest was closed");
    cr_expect_str_eq(a, "", "without an answer");
    free(a);
    a = s_read(fds[1], 100, &closed);
    cr_expect_not(closed, "the second oldest is still held");
    free(a);
    s_write(fds[BROKER_HTTP_MAX_CONNS], "GET /metrics HTTP/1.1\r\n\r\n", 25);
    s_pump(&s, 100);
    a = s_read(fds[BROKER_HTTP_MAX_CONNS], 2000, &closed);
    cr_expect_str_eq(s_body(a), PAGE, "the newest is served");
    free(a);
    for (size_t i = 0; i <= BROKER_HTTP_MAX_CONNS; i++)
        close(fds[i]);
    s_pump(&s, 50);
    s_stop(&s);
}
