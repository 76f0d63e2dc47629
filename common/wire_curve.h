/* wire_curve: CURVE encryption and authentication on the farm's sockets
 * (ZeroMQ RFC 26 with CZMQ certificates; docs/security.md).
 *
 * Every process has a certificate made by `profeed keygen NAME`: NAME.key
 * (public, shareable) and NAME.key_secret (keep private). The broker is the
 * CURVE server on both of its endpoints; agents, collectors and analyzers are
 * clients that know the broker's public key. Which client keys the broker
 * admits, and in which role, is broker/broker_auth.h's business.
 *
 * Without certificates a process speaks plaintext, which is allowed only on
 * endpoints that do not leave the machine (loopback TCP, ipc, inproc) unless
 * the user says --insecure; wire_curve_check_plaintext() enforces that. */
#ifndef WIRE_CURVE_H
#define WIRE_CURVE_H

#include <czmq.h>
#include <stdbool.h>

#include "config.h"
#include "pf_error.h"

typedef struct wire_curve_t wire_curve_t;

/* A client: its own certificate (the secret file) and the broker's public
 * certificate file. NULL with `err` naming the file and the problem. */
wire_curve_t *wire_curve_client_new(const char *secret_path, const char *broker_key_path, pf_error_t *err);

/* The broker: its own certificate (the secret file). */
wire_curve_t *wire_curve_server_new(const char *secret_path, pf_error_t *err);

void wire_curve_destroy(wire_curve_t **self_p);

/* Makes `sock` a CURVE client of the broker; call before connecting. */
void wire_curve_apply_client(const wire_curve_t *self, zsock_t *sock);

/* Makes `sock` a CURVE server whose peers are judged by the ZAP handler under
 * `domain`; call before binding. */
void wire_curve_apply_server(const wire_curve_t *self, zsock_t *sock, const char *domain);

/* This process's public key, Z85 (40 characters), for logs. */
const char *wire_curve_public_txt(const wire_curve_t *self);

/* Whether `endpoint` stays on this machine: tcp:// on 127.0.0.0/8, ::1 or
 * localhost, ipc:// and inproc://. */
bool wire_endpoint_is_local(const char *endpoint);

/* Plaintext on `endpoint`: PF_OK when it is local, or when `insecure` (then
 * logged as a warning under `component`); else PF_EBADINPUT saying how to
 * secure it. */
pf_status_t wire_curve_check_plaintext(const char *endpoint, bool insecure, const char *component,
                                       pf_error_t *err);

/* A client's CURVE settings, as collectors, analyzers and agents take them. */
typedef struct {
    const char *secret;      /* this process's certificate (NAME.key_secret); NULL: plaintext */
    const char *broker_key;  /* the broker's public certificate (its NAME.key) */
    bool insecure;           /* allow plaintext to a broker off this machine */
} wire_curve_client_t;

/* The keys that set them, for the end of a program's key table, and how
 * they are read back. */
#define CONFIG_CURVE_CLIENT_KEYS                                                                        \
    {.name = "curve-secret", .type = CONFIG_STRING, .arg = "FILE",                                      \
     .help = "this process's certificate (NAME.key_secret from profeed keygen): CURVE to the broker"}, \
    {.name = "broker-key", .type = CONFIG_STRING, .arg = "FILE",                                        \
     .help = "with --curve-secret: the broker's public certificate (its NAME.key)"},                     \
    {.name = "insecure", .type = CONFIG_BOOL, .fallback = "false",                                      \
     .help = "allow plaintext to a broker on another machine (logged as a warning)"}
void wire_curve_client_read(const config_t *settings, wire_curve_client_t *out);

/* A client's security from its settings: with a secret (and then a broker
 * key, required), *curve_p is the CURVE client; without, *curve_p is NULL
 * and plaintext to `endpoint` is checked as wire_curve_check_plaintext()
 * does. */
pf_status_t wire_curve_client_setup(const wire_curve_client_t *settings, const char *endpoint, const char *component,
                                    wire_curve_t **curve_p, pf_error_t *err);

/* Writes a new certificate: <dir>/<name>.key and <dir>/<name>.key_secret
 * (mode 0600), refusing to overwrite either. */
pf_status_t wire_curve_keygen(const char *dir, const char *name, pf_error_t *err);

#endif
