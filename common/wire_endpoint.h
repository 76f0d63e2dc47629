/* wire_endpoint: is a string an endpoint a farm process can connect to?
 *
 * libzmq accepts some wrong endpoints silently: "tcp://nosuch.host:5555"
 * connects (it resolves later and retries forever), so a caller that waits
 * for an answer waits for nothing. And a user who types "localhost:5555" or
 * "http://..." gets an error about something else. This check runs before a
 * connect and says what is wrong with the endpoint itself. */
#ifndef WIRE_ENDPOINT_H
#define WIRE_ENDPOINT_H

#include "pf_error.h"

/* PF_OK when `endpoint` is tcp://HOST:PORT (HOST resolves, PORT 1..65535; an
 * optional "SOURCE;" before HOST is allowed), ipc://PATH or inproc://NAME.
 * Otherwise PF_EBADINPUT with a message that quotes the endpoint, says what
 * is wrong and what was expected. `flag` names where it came from
 * ("--endpoint") for the message. */
pf_status_t wire_endpoint_check_connect(const char *endpoint, const char *flag, pf_error_t *err);

#endif
