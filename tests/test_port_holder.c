/* The broker's port_holder (broker/port_holder.h): the process named in a
 * bind error. A socket this test holds must be found as this process; a port
 * nobody uses must be said so, not guessed; endpoints that are not TCP with a
 * numeric port have no port to look up. */
#include "port_holder.h"

#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* A TCP socket bound to 127.0.0.1 on a port the kernel picks; *port_p is it.
 * With `self`, the socket connects to its own address (TCP simultaneous
 * open), as a client that dialled its own local port does; else it listens. */
static int s_hold(bool self, int *port_p)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    cr_assert_geq(fd, 0);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    cr_assert_eq(bind(fd, (struct sockaddr *) &addr, sizeof addr), 0);
    socklen_t len = sizeof addr;
    cr_assert_eq(getsockname(fd, (struct sockaddr *) &addr, &len), 0);
    if (self)
        cr_assert_eq(connect(fd, (struct sockaddr *) &addr, sizeof addr), 0, "a socket connects to itself");
    else
        cr_assert_eq(listen(fd, 1), 0);
    *port_p = ntohs(addr.sin_port);
    return fd;
}

static void s_expect_this_process(bool self)
{
    int port = 0;
    int fd = s_hold(self, &port);
    char text[256], want[64];
    cr_expect(port_holder_describe(port, text, sizeof text), "%s", text);
    snprintf(want, sizeof want, "held by pid %ld (", (long) getpid());
    cr_expect(strncmp(text, want, strlen(want)) == 0, "got \"%s\", want \"%s...\"", text, want);
    close(fd);
}

Test(port_holder, a_listening_socket_is_found_in_its_process)
{
    s_expect_this_process(false);
}

Test(port_holder, a_socket_connected_to_itself_is_found_in_its_process)
{
    s_expect_this_process(true);
}

Test(port_holder, a_port_nobody_uses_is_said_so)
{
    int port = 0;
    int fd = s_hold(false, &port);
    close(fd); /* a listener closed at once leaves no socket behind */
    char text[256];
    cr_expect_not(port_holder_describe(port, text, sizeof text));
    cr_expect(strstr(text, "could not tell") != NULL, "%s", text);
}

Test(port_holder, a_cut_buffer_still_ends_in_nul)
{
    int port = 0;
    int fd = s_hold(false, &port);
    char text[8];
    port_holder_describe(port, text, sizeof text);
    cr_expect_eq(strlen(text), sizeof text - 1);
    close(fd);
}

Test(port_holder, only_tcp_endpoints_with_a_numeric_port_have_one)
{
    cr_expect_eq(port_holder_endpoint_port("tcp://127.0.0.1:5555"), 5555);
    cr_expect_eq(port_holder_endpoint_port("tcp://[::1]:7"), 7);
    cr_expect_eq(port_holder_endpoint_port("tcp://*:65535"), 65535);
    cr_expect_eq(port_holder_endpoint_port("tcp://127.0.0.1:*"), 0);
    cr_expect_eq(port_holder_endpoint_port("tcp://127.0.0.1:65536"), 0);
    cr_expect_eq(port_holder_endpoint_port("tcp://127.0.0.1:0"), 0);
    cr_expect_eq(port_holder_endpoint_port("tcp://127.0.0.1:55x"), 0);
    cr_expect_eq(port_holder_endpoint_port("tcp://127.0.0.1"), 0);
    cr_expect_eq(port_holder_endpoint_port("ipc:///tmp/x:5"), 0);
    cr_expect_eq(port_holder_endpoint_port("inproc://a:1"), 0);
    cr_expect_eq(port_holder_endpoint_port(NULL), 0);
}
