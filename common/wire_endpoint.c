#include "wire_endpoint.h"

#include <errno.h>
#include <stdbool.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

/* The host of HOST:PORT (brackets of [v6] removed) into `host`; the port
 * text after the last ':' into *port. False when there is no ':'. */
static bool s_split(const char *hostport, char *host, size_t cap, const char **port)
{
    const char *colon = strrchr(hostport, ':');
    if (!colon)
        return false;
    const char *start = hostport, *end = colon;
    if (*start == '[' && end > start && end[-1] == ']') {
        start++;
        end--;
    }
    size_t len = (size_t) (end - start);
    if (len >= cap)
        return false;
    memcpy(host, start, len);
    host[len] = '\0';
    *port = colon + 1;
    return true;
}

static pf_status_t s_check_tcp(const char *endpoint, const char *flag, pf_error_t *err)
{
    const char *hostport = endpoint + strlen("tcp://");
    /* A connect endpoint may name a source first: tcp://src;dest. */
    const char *semi = strchr(hostport, ';');
    if (semi)
        hostport = semi + 1;
    char host[256];
    const char *port = NULL;
    if (!s_split(hostport, host, sizeof host, &port) || !*host)
        return pf_error_set(err, PF_EBADINPUT, "%s \"%s\": a tcp endpoint is tcp://HOST:PORT, e.g. tcp://127.0.0.1:5555",
                            flag, endpoint);
    char *end = NULL;
    errno = 0;
    long n = strtol(port, &end, 10);
    if (end == port || *end || errno || n < 1 || n > 65535)
        return pf_error_set(err, PF_EBADINPUT, "%s \"%s\": the port must be a number 1..65535, got \"%s\"", flag,
                            endpoint, port);
    if (strcmp(host, "*") == 0)
        return pf_error_set(err, PF_EBADINPUT,
                            "%s \"%s\": \"*\" is for binding; to connect, name the broker's host (tcp://HOST:%ld)",
                            flag, endpoint, n);
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
    struct addrinfo *found = NULL;
    int rc = getaddrinfo(host, NULL, &hints, &found);
    if (rc != 0)
        return pf_error_set(err, PF_EBADINPUT, "%s \"%s\": cannot resolve host \"%s\": %s", flag, endpoint, host,
                            gai_strerror(rc));
    freeaddrinfo(found);
    return PF_OK;
}

pf_status_t wire_endpoint_check_connect(const char *endpoint, const char *flag, pf_error_t *err)
{
    if (!flag)
        flag = "endpoint";
    if (!endpoint || !*endpoint)
        return pf_error_set(err, PF_EBADINPUT, "%s is empty: give the broker's endpoint, e.g. tcp://127.0.0.1:5555",
                            flag);
    const char *scheme_end = strstr(endpoint, "://");
    if (!scheme_end)
        return pf_error_set(err, PF_EBADINPUT,
                            "%s \"%s\" has no transport: write tcp://%s (or ipc://PATH, inproc://NAME)", flag,
                            endpoint, endpoint);
    size_t scheme_len = (size_t) (scheme_end - endpoint);
    if (scheme_len == 3 && strncmp(endpoint, "tcp", 3) == 0)
        return s_check_tcp(endpoint, flag, err);
    if ((scheme_len == 3 && strncmp(endpoint, "ipc", 3) == 0) ||
        (scheme_len == 6 && strncmp(endpoint, "inproc", 6) == 0)) {
        if (!scheme_end[3])
            return pf_error_set(err, PF_EBADINPUT, "%s \"%s\" names no %s", flag, endpoint,
                                endpoint[0] == 'i' && endpoint[1] == 'p' ? "path" : "name");
        return PF_OK;
    }
    if ((scheme_len == 4 && strncmp(endpoint, "http", 4) == 0) ||
        (scheme_len == 5 && strncmp(endpoint, "https", 5) == 0))
        return pf_error_set(err, PF_EBADINPUT,
                            "%s \"%s\": the farm speaks ZeroMQ, not HTTP: write tcp://%s (only the broker's "
                            "--metrics endpoint answers HTTP)",
                            flag, endpoint, scheme_end + 3);
    return pf_error_set(err, PF_EBADINPUT, "%s \"%s\": unknown transport \"%.*s\" (tcp://HOST:PORT, ipc://PATH or "
                                           "inproc://NAME)",
                        flag, endpoint, (int) (scheme_len > 32 ? 32 : scheme_len), endpoint);
}
