#include "bind_retry.h"

#include <assert.h>
#include <errno.h>

#include "pf_log.h"
#include "port_holder.h"
#include "wire_zmq.h"

#define LOG "broker"
/* Often enough to come up soon after the port is freed, rarely enough to be
 * idle while waiting. */
#define S_RETRY_EVERY_MS 100

int bind_retry_bind(zsock_t *sock, const char *endpoint, const char *what, int retry_ms)
{
    assert(sock && endpoint && what);
    int64_t deadline = wire_zmq_now_ms() + (retry_ms > 0 ? retry_ms : 0);
    int port = port_holder_endpoint_port(endpoint);
    bool warned = false;
    int err = 0;
    while (true) {
        if (zsock_bind(sock, "%s", endpoint) >= 0) {
            if (warned)
                pf_log_info(LOG, "the %s endpoint %s is free again: bound", what, endpoint);
            return 0;
        }
        err = zmq_errno();
        bool busy = err == EADDRINUSE && port > 0;
        if (!busy || wire_zmq_now_ms() >= deadline || zsys_interrupted)
            break;
        if (!warned) {
            char holder[256];
            port_holder_describe(port, holder, sizeof holder);
            pf_log_warn(LOG, "the %s endpoint %s is in use (%s); trying again for up to %d ms (bind-retry-ms)", what,
                        endpoint, holder, retry_ms);
            warned = true;
        }
        zclock_sleep(S_RETRY_EVERY_MS);
    }
    if (err == EADDRINUSE && port > 0) {
        char holder[256];
        port_holder_describe(port, holder, sizeof holder);
        pf_log_error(LOG, "cannot bind the %s endpoint %s: %s after %d ms of retries (bind-retry-ms); %s", what,
                     endpoint, zmq_strerror(err), retry_ms, holder);
    } else {
        pf_log_error(LOG, "cannot bind the %s endpoint %s: %s", what, endpoint, zmq_strerror(err));
    }
    return -1;
}
