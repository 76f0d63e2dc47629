/* slow_sync: an LD_PRELOAD library for bench/slow_disk.sh. fsync and
 * fdatasync take SLOW_SYNC_MS milliseconds longer than the disk does, as on
 * a network volume or a busy SSD, so the broker's journal can be measured
 * where syncs are slow without such a disk. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <time.h>

static void s_wait(void)
{
    const char *ms = getenv("SLOW_SYNC_MS");
    long v = ms ? strtol(ms, NULL, 10) : 0;
    if (v <= 0)
        return;
    struct timespec left = {v / 1000, (v % 1000) * 1000000L};
    while (nanosleep(&left, &left) != 0 && errno == EINTR) {
    }
}

int fdatasync(int fd)
{
    int (*real)(int) = (int (*)(int)) dlsym(RTLD_NEXT, "fdatasync");
    s_wait();
    return real ? real(fd) : 0;
}

int fsync(int fd)
{
    int (*real)(int) = (int (*)(int)) dlsym(RTLD_NEXT, "fsync");
    s_wait();
    return real ? real(fd) : 0;
}
