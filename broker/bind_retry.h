/* bind_retry: the broker's bind of its endpoints, riding over a port that is
 * still busy for a moment.
 *
 * A broker restarted by systemd or Kubernetes can find its TCP port still
 * held: by the old process not yet gone, or by a client that, while the
 * broker was down, dialled the port from the same local port and connected to
 * itself (TCP simultaneous open). Such a hold is usually brief, so a busy TCP
 * endpoint is tried again for a bounded time before the broker gives up; the
 * error then names the endpoint and, when it can tell, the process holding
 * the port (port_holder.h). Other errors, and other transports, fail at once. */
#ifndef BIND_RETRY_H
#define BIND_RETRY_H

#include <czmq.h>

/* Binds `sock` to `endpoint`; `what` names it for the log ("agent", "worker").
 * While the bind fails with EADDRINUSE it is retried every 100 ms for up to
 * retry_ms (0: once), stopping early on SIGINT/SIGTERM. Returns 0, or -1
 * after logging the reason. */
int bind_retry_bind(zsock_t *sock, const char *endpoint, const char *what, int retry_ms);

#endif
