/* broker_http: a minimal HTTP/1.x server for the broker's metrics, on a
 * ZeroMQ STREAM socket so it is one more socket in the broker's poll loop:
 * no thread, no extra library.
 *
 * It answers `GET /metrics` (Prometheus text) and `GET /` (a pointer to it);
 * other paths get 404, other methods 405, and closes each connection after
 * one answer (Connection: close). Everything from the network is untrusted:
 * requests larger than BROKER_HTTP_MAX_REQUEST get 431, at most
 * BROKER_HTTP_MAX_CONNS connections are held (a new one past that closes the
 * one that has waited longest), one that has not sent a whole request within
 * BROKER_HTTP_IDLE_MS is closed, and no send ever blocks: a connection that
 * cannot take its answer now is dropped. */
#ifndef BROKER_HTTP_H
#define BROKER_HTTP_H

#include <czmq.h>
#include <stdint.h>

#include "pf_error.h"

#define BROKER_HTTP_MAX_REQUEST 8192
#define BROKER_HTTP_MAX_CONNS 64
/* A scraper sends its request within milliseconds of connecting; 2 s is
 * generous for one across a WAN and short for a connection left open. */
#define BROKER_HTTP_IDLE_MS 2000

typedef struct broker_http_t broker_http_t;

/* Renders the metrics page: a heap string the server frees, or NULL (500). */
typedef char *(broker_http_render_fn)(void *arg);

/* Binds `endpoint` ("tcp://0.0.0.0:9556", "tcp://127.0.0.1:*"). NULL with
 * `err` set when it cannot. */
broker_http_t *broker_http_new(const char *endpoint, broker_http_render_fn *render, void *arg,
                               pf_error_t *err);
void broker_http_destroy(broker_http_t **self_p);

zsock_t *broker_http_socket(broker_http_t *self);
const char *broker_http_endpoint(broker_http_t *self);

/* Reads one message from the socket (it is readable) and answers a request
 * when one is complete. */
void broker_http_handle(broker_http_t *self, int64_t now_ms);

/* Closes connections idle for longer than BROKER_HTTP_IDLE_MS. */
void broker_http_expire(broker_http_t *self, int64_t now_ms);

#endif
