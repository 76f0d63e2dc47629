#include "broker_http.h"

#include <assert.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pf_log.h"
#include "wire_zmq.h"

#define LOG "broker"

/* One connection's request so far. */
typedef struct {
    char request[BROKER_HTTP_MAX_REQUEST + 1];
    size_t len;
    int64_t since_ms;
    uint8_t id[256];        /* the STREAM socket's routing id */
    size_t id_len;
} conn_t;

/* A connection the server dropped, whose disconnect notice may still come. */
typedef struct {
    uint8_t id[16];         /* libzmq's STREAM ids are 5 bytes; longer ones are not kept */
    size_t id_len;
} dropped_t;

/* Connections dropped lately: a STREAM socket tells of a disconnect with the
 * same empty message it tells of a connect, so a notice for a connection
 * already dropped would otherwise take a slot as a new one. */
#define S_DROPPED 1024

struct broker_http_t {
    zsock_t *sock;
    broker_http_render_fn *render;
    void *arg;
    zhashx_t *conns;        /* hex routing id -> conn_t (owned) */
    dropped_t dropped[S_DROPPED]; /* a ring, the newest at dropped_next - 1 */
    size_t dropped_next;
};

static void s_conn_free(void **item)
{
    free(*item);
    *item = NULL;
}

broker_http_t *broker_http_new(const char *endpoint, broker_http_render_fn *render, void *arg,
                               pf_error_t *err)
{
    assert(endpoint && render);
    broker_http_t *self = calloc(1, sizeof *self);
    if (!self || !(self->sock = zsock_new(ZMQ_STREAM)) || !(self->conns = zhashx_new())) {
        broker_http_destroy(&self);
        pf_error_set(err, PF_ENOMEM, "out of memory making the metrics socket");
        return NULL;
    }
    zhashx_set_destructor(self->conns, s_conn_free);
    self->render = render;
    self->arg = arg;
    zsock_set_linger(self->sock, 0);
    zsock_set_maxmsgsize(self->sock, BROKER_HTTP_MAX_REQUEST);
    if (zsock_bind(self->sock, "%s", endpoint) < 0) {
        pf_error_set(err, PF_EIO, "cannot bind the metrics endpoint %s: %s", endpoint, zmq_strerror(zmq_errno()));
        broker_http_destroy(&self);
        return NULL;
    }
    return self;
}

void broker_http_destroy(broker_http_t **self_p)
{
    assert(self_p);
    broker_http_t *self = *self_p;
    if (!self)
        return;
    zhashx_destroy(&self->conns);
    zsock_destroy(&self->sock);
    free(self);
    *self_p = NULL;
}

zsock_t *broker_http_socket(broker_http_t *self)
{
    return self->sock;
}

const char *broker_http_endpoint(broker_http_t *self)
{
    return zsock_endpoint(self->sock);
}

/* Sends `len` bytes to the connection `id`; len 0 closes it (STREAM sockets).
 * Never blocks: the broker's one loop serves agents and workers too, and a
 * peer that reset its connection, or reads nothing, would hold a blocking
 * send forever (libzmq waits for a pipe that never drains). A send that
 * cannot go now fails; the caller forgets the connection either way, and the
 * kernel's socket goes when libzmq sees the peer gone. */
static bool s_send(broker_http_t *self, const uint8_t *id, size_t id_len, const void *data, size_t len)
{
    void *raw = zsock_resolve(self->sock);
    if (zmq_send(raw, id, id_len, ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0 || zmq_send(raw, data, len, ZMQ_DONTWAIT) < 0) {
        pf_log_debug(LOG, "metrics: send failed, connection dropped: %s", zmq_strerror(zmq_errno()));
        return false;
    }
    return true;
}

/* Closes the connection `id` and forgets it (`key`: its table entry, if it
 * has one). `id` may point into that entry. */
static void s_close(broker_http_t *self, const uint8_t *id, size_t id_len, const char *key)
{
    s_send(self, id, id_len, "", 0);
    if (id_len <= sizeof self->dropped[0].id) {
        dropped_t *d = &self->dropped[self->dropped_next++ % S_DROPPED];
        memcpy(d->id, id, id_len);
        d->id_len = id_len;
    }
    if (key)
        zhashx_delete(self->conns, key);
}

/* True once for a connection s_close() dropped: its disconnect notice. */
static bool s_was_dropped(broker_http_t *self, const uint8_t *id, size_t id_len)
{
    for (size_t i = 0; i < S_DROPPED; i++) {
        dropped_t *d = &self->dropped[i];
        if (d->id_len == id_len && id_len > 0 && memcmp(d->id, id, id_len) == 0) {
            d->id_len = 0;
            return true;
        }
    }
    return false;
}

/* The table is full: the connection that has waited longest for its request
 * goes, so that connections opened and left idle cannot keep every slot
 * (a client that connects now is served; a slow attacker's oldest go). */
static void s_evict_oldest(broker_http_t *self)
{
    const char *oldest_key = NULL;
    int64_t oldest_ms = INT64_MAX;
    for (conn_t *c = zhashx_first(self->conns); c; c = zhashx_next(self->conns)) {
        if (c->since_ms < oldest_ms) {
            oldest_ms = c->since_ms;
            oldest_key = zhashx_cursor(self->conns);
        }
    }
    if (!oldest_key)
        return;
    char key[WIRE_ZMQ_PEER_LEN];
    snprintf(key, sizeof key, "%s", oldest_key);
    conn_t *c = zhashx_lookup(self->conns, key);
    s_close(self, c->id, c->id_len, key);
}

/* HEAD answers carry GET's headers, Content-Length included, and no body. */
static void s_answer(broker_http_t *self, const uint8_t *id, size_t id_len, const char *status,
                     const char *type, const char *body, size_t body_len, bool head)
{
    char top[256];
    int n = snprintf(top, sizeof top,
                     "HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n",
                     status, type, body_len);
    assert(n > 0 && (size_t) n < sizeof top);
    size_t sent = head ? 0 : body_len;
    char *msg = malloc((size_t) n + sent);
    if (!msg)
        return;
    memcpy(msg, top, (size_t) n);
    memcpy(msg + n, body, sent);
    s_send(self, id, id_len, msg, (size_t) n + sent);
    free(msg);
}

static void s_answer_text(broker_http_t *self, const uint8_t *id, size_t id_len, const char *status,
                          const char *body)
{
    s_answer(self, id, id_len, status, "text/plain; charset=utf-8", body, strlen(body), false);
}

/* A whole request head is in `c`: answer it. */
static void s_serve(broker_http_t *self, conn_t *c)
{
    char method[16], path[256], minor[2];
    /* The request line: METHOD SP PATH SP HTTP/1.x, methods in capitals and
     * paths absolute. Widths bound the copies. */
    if (sscanf(c->request, "%15[A-Z] %255[^ \r\n] HTTP/1.%1[01]", method, path, minor) != 3 || path[0] != '/') {
        s_answer_text(self, c->id, c->id_len, "400 Bad Request", "not an HTTP request\n");
        return;
    }
    char *query = strchr(path, '?');
    if (query)
        *query = '\0';
    bool get = strcmp(method, "GET") == 0, head = strcmp(method, "HEAD") == 0;
    if (!get && !head) {
        s_answer_text(self, c->id, c->id_len, "405 Method Not Allowed", "only GET\n");
    } else if (strcmp(path, "/metrics") == 0) {
        char *body = self->render(self->arg);
        if (!body) {
            s_answer_text(self, c->id, c->id_len, "500 Internal Server Error", "out of memory\n");
            return;
        }
        s_answer(self, c->id, c->id_len, "200 OK", "text/plain; version=0.0.4; charset=utf-8", body,
                 strlen(body), head);
        free(body);
    } else if (strcmp(path, "/") == 0) {
        s_answer_text(self, c->id, c->id_len, "200 OK", "profeed-broker: metrics at /metrics\n");
    } else {
        s_answer_text(self, c->id, c->id_len, "404 Not Found", "no such page; metrics are at /metrics\n");
    }
}

void broker_http_handle(broker_http_t *self, int64_t now_ms)
{
    zframe_t *id = zframe_recv(self->sock);
    if (!id)
        return;
    if (!zframe_more(id)) {
        zframe_destroy(&id); /* STREAM messages are [id][data]; never alone */
        return;
    }
    zframe_t *data = zframe_recv(self->sock);
    if (!data) {
        zframe_destroy(&id);
        return;
    }
    char key[WIRE_ZMQ_PEER_LEN];
    wire_zmq_peer_name(id, key, sizeof key);
    conn_t *c = zhashx_lookup(self->conns, key);
    if (zframe_size(data) == 0) {
        /* Connected (new id) or disconnected (known id, or one dropped). */
        if (c) {
            zhashx_delete(self->conns, key);
        } else if (zframe_size(id) > sizeof c->id) {
            s_send(self, zframe_data(id), zframe_size(id), "", 0);
        } else if (s_was_dropped(self, zframe_data(id), zframe_size(id))) {
            /* its disconnect notice */
        } else {
            if (zhashx_size(self->conns) >= BROKER_HTTP_MAX_CONNS)
                s_evict_oldest(self);
            if ((c = calloc(1, sizeof *c)) == NULL)
                goto done;
            memcpy(c->id, zframe_data(id), zframe_size(id));
            c->id_len = zframe_size(id);
            c->since_ms = now_ms;
            if (zhashx_insert(self->conns, key, c) != 0)
                free(c);
        }
        goto done;
    }
    if (!c) { /* data from a connection we refused or already answered */
        s_close(self, zframe_data(id), zframe_size(id), NULL);
        goto done;
    }
    if (zframe_size(data) > BROKER_HTTP_MAX_REQUEST - c->len) {
        s_answer_text(self, c->id, c->id_len, "431 Request Header Fields Too Large", "request too large\n");
        s_close(self, c->id, c->id_len, key);
        goto done;
    }
    memcpy(c->request + c->len, zframe_data(data), zframe_size(data));
    c->len += zframe_size(data);
    c->request[c->len] = '\0';
    /* A NUL inside the head would hide its end from strstr: refuse it. */
    if (memchr(c->request, '\0', c->len)) {
        s_answer_text(self, c->id, c->id_len, "400 Bad Request", "not an HTTP request\n");
        s_close(self, c->id, c->id_len, key);
    } else if (strstr(c->request, "\r\n\r\n") || strstr(c->request, "\n\n")) {
        s_serve(self, c);
        s_close(self, c->id, c->id_len, key);
    }
done:
    zframe_destroy(&id);
    zframe_destroy(&data);
}

void broker_http_expire(broker_http_t *self, int64_t now_ms)
{
    zlistx_t *keys = zhashx_keys(self->conns);
    if (!keys)
        return;
    for (const char *key = zlistx_first(keys); key; key = zlistx_next(keys)) {
        conn_t *c = zhashx_lookup(self->conns, key);
        if (c && now_ms - c->since_ms > BROKER_HTTP_IDLE_MS) {
            s_answer_text(self, c->id, c->id_len, "408 Request Timeout", "request not received in time\n");
            s_close(self, c->id, c->id_len, key);
        }
    }
    zlistx_destroy(&keys);
}
