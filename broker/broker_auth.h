/* broker_auth: who may talk to the broker, and in which role.
 *
 * The broker's ZAP handler (ZeroMQ RFC 27) for its CURVE endpoints. Each role
 * has a folder of public certificates (NAME.key files from `profeed keygen`):
 * a key in the agents' folder may connect to the agent endpoint (submit,
 * status); a key in the collectors' or analyzers' folder may connect to the
 * worker endpoint and register in that role only (broker.c checks Ready's
 * role against the User-Id this handler gives the connection:
 * "collector:NAME", "analyzer:NAME", "agent:NAME"). A key in the operators'
 * folder connects to the agent endpoint as "operator:NAME": an agent that
 * may see every job in a status answer, not only its own. Every other key is
 * refused during the handshake, before any message is read. Adding or
 * removing a file takes effect for new connections without a restart
 * (broker_keys.h rereads a folder that changed). */
#ifndef BROKER_AUTH_H
#define BROKER_AUTH_H

#include <czmq.h>
#include <stdbool.h>

#include "pf_error.h"

#define BROKER_AUTH_AGENTS "agents"   /* ZAP domain of the agent endpoint */
#define BROKER_AUTH_WORKERS "workers" /* ZAP domain of the worker endpoint */
/* The message property (zframe_meta) holding the connection's CURVE public
 * key, Z85-encoded: 40 characters. */
#define BROKER_AUTH_KEY "X-Curve-Key"

typedef struct broker_auth_t broker_auth_t;

/* Loads the four folders (a NULL or empty path: nobody in that role) and
 * binds the ZAP handler in this process's ZeroMQ context: call before the
 * CURVE sockets bind. */
broker_auth_t *broker_auth_new(const char *agent_dir, const char *collector_dir, const char *analyzer_dir,
                               const char *operator_dir, pf_error_t *err);
void broker_auth_destroy(broker_auth_t **self_p);

/* The handler's socket, to poll; and one request answered when it is ready. */
zsock_t *broker_auth_socket(broker_auth_t *self);
void broker_auth_handle(broker_auth_t *self);

/* The role in a User-Id this handler gave ("collector:c1" -> "collector"),
 * compared with `role`. */
bool broker_auth_user_is(const char *user_id, const char *role);

#endif
