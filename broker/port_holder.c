#include "port_holder.h"

#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* /proc/net/tcp's `st` column: 0A is LISTEN, 06 TIME_WAIT (include/net/tcp_states.h). */
#define S_TCP_LISTEN 0x0A

int port_holder_endpoint_port(const char *endpoint)
{
    if (!endpoint || strncmp(endpoint, "tcp://", 6) != 0)
        return 0;
    const char *colon = strrchr(endpoint + 6, ':');
    if (!colon || colon[1] < '0' || colon[1] > '9')
        return 0;
    char *end = NULL;
    errno = 0;
    long port = strtol(colon + 1, &end, 10);
    if (errno || *end != '\0' || port < 1 || port > 65535)
        return 0;
    return (int) port;
}

/* The inode of a socket on local `port` in one /proc/net/tcp* table: a
 * listener's first, else any other socket's with an inode (a connection
 * whose local port it is, e.g. a client that connected to itself). 0 when
 * none has one; *seen says whether any socket used the port at all (one in
 * TIME_WAIT has inode 0). */
static unsigned long s_inode_in(const char *table, int port, bool *seen)
{
    FILE *f = fopen(table, "r");
    if (!f)
        return 0;
    char line[512];
    unsigned long listener = 0, other = 0;
    bool header = true;
    while (fgets(line, sizeof line, f)) {
        if (header) {
            header = false;
            continue;
        }
        char local[128];
        unsigned state = 0;
        unsigned long inode = 0;
        /* sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode */
        if (sscanf(line, " %*s %127s %*s %x %*s %*s %*s %*s %*s %lu", local, &state, &inode) != 3)
            continue;
        const char *colon = strrchr(local, ':');
        if (!colon)
            continue;
        char *end = NULL;
        unsigned long p = strtoul(colon + 1, &end, 16);
        if (*end != '\0' || p != (unsigned long) port)
            continue;
        *seen = true;
        if (inode == 0)
            continue;
        if (state == S_TCP_LISTEN && !listener)
            listener = inode;
        else if (!other)
            other = inode;
    }
    fclose(f);
    return listener ? listener : other;
}

/* The pid whose descriptors include socket `inode`, or 0; its name in comm. */
static long s_pid_of(unsigned long inode, char *comm, size_t size)
{
    char want[64];
    snprintf(want, sizeof want, "socket:[%lu]", inode);
    DIR *proc = opendir("/proc");
    if (!proc)
        return 0;
    long found = 0;
    struct dirent *entry;
    while (!found && (entry = readdir(proc))) {
        char *end = NULL;
        long pid = strtol(entry->d_name, &end, 10);
        if (*end != '\0' || pid <= 0)
            continue;
        char path[64];
        snprintf(path, sizeof path, "/proc/%ld/fd", pid);
        DIR *fds = opendir(path);
        if (!fds)
            continue; /* gone, or another user's */
        struct dirent *fd;
        while (!found && (fd = readdir(fds))) {
            char link[96], target[64];
            if (fd->d_name[0] == '.')
                continue;
            int n = snprintf(link, sizeof link, "/proc/%ld/fd/%s", pid, fd->d_name);
            if (n < 0 || (size_t) n >= sizeof link)
                continue;
            ssize_t len = readlink(link, target, sizeof target - 1);
            if (len <= 0)
                continue;
            target[len] = '\0';
            if (strcmp(target, want) == 0)
                found = pid;
        }
        closedir(fds);
    }
    closedir(proc);
    if (!found)
        return 0;
    snprintf(comm, size, "?");
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/comm", found);
    FILE *f = fopen(path, "r");
    if (f) {
        if (fgets(comm, (int) size, f))
            comm[strcspn(comm, "\n")] = '\0';
        fclose(f);
    }
    return found;
}

bool port_holder_describe(int port, char *buf, size_t size)
{
    assert(buf && size > 0);
    assert(port >= 1 && port <= 65535);
    bool seen = false;
    unsigned long inode = s_inode_in("/proc/net/tcp", port, &seen);
    if (!inode)
        inode = s_inode_in("/proc/net/tcp6", port, &seen);
    if (!inode) {
        if (seen)
            snprintf(buf, size, "could not tell which process holds it: the sockets on port %d have no owner "
                     "(connections closing, in TIME_WAIT)", port);
        else
            snprintf(buf, size, "could not tell which process holds it: no socket on port %d is listed in "
                     "/proc/net/tcp or /proc/net/tcp6", port);
        return false;
    }
    char comm[64];
    long pid = s_pid_of(inode, comm, sizeof comm);
    if (!pid) {
        snprintf(buf, size, "could not tell which process holds it: socket inode %lu is not among the "
                 "processes this user can see", inode);
        return false;
    }
    snprintf(buf, size, "held by pid %ld (%s)", pid, comm);
    return true;
}
