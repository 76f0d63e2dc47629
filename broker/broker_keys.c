#include "broker_keys.h"

#include <assert.h>
#include <czmq.h>
#include <dirent.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "fnv1a.h"
#include "pf_log.h"
#include "wire_cert.h"

#define LOG "auth"

struct broker_keys_t {
    char *dir;
    char *role;
    zhashx_t *names;  /* public key (Z85) -> name, both owned */
    uint64_t state;   /* the folder as last read (s_state) */
};

/* Calls `each` for every entry of the folder that is read: at the top level,
 * not starting with '.', at most BROKER_KEYS_MAX_FILES of them. False when
 * the folder cannot be opened (errno set). */
static bool s_walk(const broker_keys_t *self, bool warn, void (*each)(const char *path, const char *name, void *arg),
                   void *arg)
{
    DIR *d = opendir(self->dir);
    if (!d)
        return false;
    size_t seen = 0;
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.')
            continue;
        if (++seen > BROKER_KEYS_MAX_FILES) {
            if (warn)
                pf_log_warn(LOG, "%s keys folder %s: over %d entries; the rest are not read", self->role, self->dir,
                            BROKER_KEYS_MAX_FILES);
            break;
        }
        char path[4096];
        if ((size_t) snprintf(path, sizeof path, "%s/%s", self->dir, e->d_name) >= sizeof path)
            continue; /* a name no file of this folder can be opened by */
        each(path, e->d_name, arg);
    }
    closedir(d);
    return true;
}

/* Adds an entry's name, size, modification time and inode to the folder's
 * state; a sum, so the order readdir gives does not matter. */
static void s_state_one(const char *path, const char *name, void *arg)
{
    struct stat st;
    uint64_t h = fnv1a_update_str(FNV1A_BASIS, name);
    if (stat(path, &st) == 0) { /* stat, not lstat: a Secret's files are links into ..data */
        long long fields[] = {(long long) st.st_size, (long long) st.st_mtim.tv_sec, (long long) st.st_mtim.tv_nsec,
                              (long long) st.st_ino, (long long) st.st_dev};
        h = fnv1a_update(h, fields, sizeof fields);
    }
    *(uint64_t *) arg += h;
}

/* The folder's state: what changes when a file in it is added, removed,
 * replaced or rewritten. 0 when it cannot be read. */
static uint64_t s_state(const broker_keys_t *self)
{
    uint64_t sum = 0;
    if (!s_walk(self, false, s_state_one, &sum))
        return 0;
    return sum ? sum : 1;
}

static void s_free_str(void **item)
{
    free(*item);
    *item = NULL;
}

typedef struct {
    const broker_keys_t *self;
    zhashx_t *names;
} reading_t;

static void s_read_one(const char *path, const char *name, void *arg)
{
    (void) name;
    reading_t *r = arg;
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return; /* a subfolder, a socket, or gone since readdir */
    pf_error_t err;
    zcert_t *cert = wire_cert_load(path, &err);
    if (!cert) {
        pf_log_warn(LOG, "%s keys: skipped a file that is not a key: %s", r->self->role, err.msg);
        return;
    }
    const char *meta = zcert_meta(cert, "name");
    char *label = strdup(meta && *meta ? meta : zcert_public_txt(cert));
    if (label && zhashx_insert(r->names, zcert_public_txt(cert), label) != 0)
        free(label); /* the same key twice: the first file's name stands */
    zcert_destroy(&cert);
}

/* Reads the folder into a new table, which replaces the last one; false when
 * the folder cannot be opened, and then the table is empty: a folder taken
 * away admits nobody. */
static bool s_read(broker_keys_t *self, pf_error_t *err)
{
    reading_t r = {self, zhashx_new()};
    if (!r.names) {
        pf_error_set(err, PF_ENOMEM, "out of memory reading the %s keys", self->role);
        return false;
    }
    zhashx_set_destructor(r.names, s_free_str);
    bool ok = s_walk(self, true, s_read_one, &r); /* false: r.names stays empty */
    if (!ok)
        pf_error_set(err, PF_EIO, "%s keys folder %s: %s", self->role, self->dir, strerror(errno));
    zhashx_destroy(&self->names);
    self->names = r.names;
    if (!ok)
        return false;
    pf_log_info(LOG, "%s keys: %zu in %s", self->role, zhashx_size(r.names), self->dir);
    return true;
}

broker_keys_t *broker_keys_new(const char *dir, const char *role, pf_error_t *err)
{
    assert(dir && role);
    struct stat st;
    if (stat(dir, &st) != 0) {
        pf_error_set(err, PF_EIO, "%s keys folder %s: %s", role, dir, strerror(errno));
        return NULL;
    }
    if (!S_ISDIR(st.st_mode)) { /* errno says nothing here: stat succeeded */
        pf_error_set(err, PF_EIO, "%s keys folder %s: not a folder", role, dir);
        return NULL;
    }
    broker_keys_t *self = calloc(1, sizeof *self);
    if (self) {
        self->dir = strdup(dir);
        self->role = strdup(role);
    }
    if (!self || !self->dir || !self->role) {
        broker_keys_destroy(&self);
        pf_error_set(err, PF_ENOMEM, "out of memory");
        return NULL;
    }
    self->state = s_state(self);
    if (!s_read(self, err))
        broker_keys_destroy(&self);
    return self;
}

void broker_keys_destroy(broker_keys_t **self_p)
{
    assert(self_p);
    broker_keys_t *self = *self_p;
    if (!self)
        return;
    zhashx_destroy(&self->names);
    free(self->dir);
    free(self->role);
    free(self);
    *self_p = NULL;
}

const char *broker_keys_lookup(broker_keys_t *self, const char *public_txt)
{
    assert(self && public_txt);
    uint64_t state = s_state(self);
    if (state != self->state) {
        pf_error_t err;
        if (s_read(self, &err))
            self->state = state;
        else
            pf_log_warn(LOG, "%s: no %s is admitted until it can be read", err.msg, self->role);
    }
    return zhashx_lookup(self->names, public_txt);
}

size_t broker_keys_count(const broker_keys_t *self)
{
    assert(self);
    return zhashx_size(self->names);
}
