/* port_holder: which process holds a local TCP port, for the message of a
 * bind that failed with "Address already in use".
 *
 * Linux only in effect: it reads /proc/net/tcp and /proc/net/tcp6 for a
 * socket whose local port is the one asked about, then looks for that
 * socket's inode among the descriptors of /proc/PID/fd. Elsewhere, or when
 * the holder belongs to a user whose /proc entries this process cannot read,
 * it says it could not tell. */
#ifndef PORT_HOLDER_H
#define PORT_HOLDER_H

#include <stdbool.h>
#include <stddef.h>

/* Writes a phrase for the log into buf: "held by pid 123 (python3)", or why
 * it could not tell ("no socket on port 5555 is listed in /proc/net/tcp",
 * "held by a socket of no process this user can see (inode 4711)", ...).
 * Returns true when it named a process. `port` is 1..65535. */
bool port_holder_describe(int port, char *buf, size_t size);

/* The port of a "tcp://HOST:PORT" endpoint, or 0 when it is not TCP or its
 * port is not a number (port * binds a free one and is never busy). */
int port_holder_endpoint_port(const char *endpoint);

#endif
