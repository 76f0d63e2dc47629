#include "pass_spool.h"

#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "wire_check.h"

/* A file of a streamed pass, as the spool keeps it: a page parsed as its
 * chunks came by its profiler's backend (`page`), or a file on disk (`page`
 * NULL). */
typedef struct spool_file_t {
    char pass[WIRE_MAX_ID_LEN + 1];
    char name[WIRE_MAX_FILE_PART_LEN + 1];
    analyzer_page_t *page;
    bool parsing;    /* the page is being fed: not finished yet */
    pf_status_t rc;  /* its parse's outcome */
    pf_error_t err;
    struct spool_file_t *next;
} spool_file_t;

struct pass_spool_t {
    char job_id[WIRE_MAX_ID_LEN + 1];
    char dir[4096];                      /* "" until the first chunk */
    char pass[WIRE_MAX_ID_LEN + 1];      /* the pass being written, "" between passes */
    uint32_t next_seq;
    char file[WIRE_MAX_FILE_PART_LEN + 1]; /* the file being written */
    uint64_t offset;                     /* bytes written to it */
    int fd;
    Profeed__Profiler parse_next;        /* pass_spool_set_parse(), for the next pass */
    bool keep_raw_next;
    bool once;                           /* pass_spool_set_once() */
    analysis_budget_t *budget;           /* pass_spool_set_budget(), or NULL */
    Profeed__Profiler parse;             /* the pass being written: whose pages parse as they come */
    bool keep_raw;
    spool_file_t *current;               /* the page being parsed, or NULL */
    spool_file_t *files;                 /* the parsed pages and files on disk, newest first */
};

void pass_spool_set_once(pass_spool_t *self, bool once)
{
    assert(self);
    self->once = once;
}

void pass_spool_set_budget(pass_spool_t *self, analysis_budget_t *budget)
{
    assert(self);
    self->budget = budget;
}

void pass_spool_set_parse(pass_spool_t *self, Profeed__Profiler parse, bool keep_raw)
{
    assert(self);
    self->parse_next = parse;
    self->keep_raw_next = keep_raw;
}

/* Ends the page being parsed: its last row, and its outcome recorded. */
static void s_end_page(pass_spool_t *self)
{
    if (self->current && self->current->parsing && self->current->rc == PF_OK)
        self->current->rc = analyzer_page_finish(self->current->page, &self->current->err);
    if (self->current)
        self->current->parsing = false;
    self->current = NULL;
}

/* Forgets what the spool kept of `pass` (every pass: NULL). */
static void s_drop_files(pass_spool_t *self, const char *pass)
{
    spool_file_t **at = &self->files;
    while (*at) {
        spool_file_t *f = *at;
        if (pass && strcmp(f->pass, pass) != 0) {
            at = &f->next;
            continue;
        }
        *at = f->next;
        analyzer_page_destroy(&f->page);
        free(f);
    }
}

pass_spool_t *pass_spool_new(const char *job_id)
{
    assert(job_id);
    pass_spool_t *self = calloc(1, sizeof *self);
    if (!self)
        return NULL;
    snprintf(self->job_id, sizeof self->job_id, "%s", job_id);
    self->fd = -1;
    return self;
}

/* Removes a folder of plain files (what a spool holds), one level of
 * subfolders deep. */
static void s_remove(const char *dir, int depth)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char path[4096 + 2 * 256];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode) && depth < 1)
            s_remove(path, depth + 1);
        else
            unlink(path);
    }
    closedir(d);
    rmdir(dir);
}

void pass_spool_destroy(pass_spool_t **self_p)
{
    assert(self_p);
    pass_spool_t *self = *self_p;
    if (!self)
        return;
    if (self->fd >= 0)
        close(self->fd);
    s_drop_files(self, NULL);
    if (self->dir[0])
        s_remove(self->dir, 0);
    free(self);
    *self_p = NULL;
}

const char *pass_spool_path(const pass_spool_t *self, const char *pass_key, const char *name, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s/%s/%s", self->dir, pass_key, name);
    return buf;
}

static pf_status_t s_write_all(int fd, const uint8_t *data, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, data, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return PF_EIO;
        data += n;
        len -= (size_t) n;
    }
    return PF_OK;
}

/* Starts the pass over: its folder emptied (or made). */
static pf_status_t s_begin_pass(pass_spool_t *self, const char *pass_key, pf_error_t *err)
{
    if (!self->dir[0]) {
        const char *tmp = getenv("TMPDIR");
        snprintf(self->dir, sizeof self->dir, "%s/profeed-spool-%.64s.XXXXXX", tmp && *tmp ? tmp : "/tmp", self->job_id);
        if (!mkdtemp(self->dir)) {
            int e = errno;
            self->dir[0] = '\0';
            return pf_error_set(err, PF_EIO, "job %s: cannot make a spool folder in %s: %s", self->job_id,
                                tmp && *tmp ? tmp : "/tmp", strerror(e));
        }
    }
    if (self->fd >= 0)
        close(self->fd);
    self->fd = -1;
    self->current = NULL;
    s_drop_files(self, pass_key);
    self->parse = self->parse_next;
    self->keep_raw = self->keep_raw_next;
    char path[4096 + 256];
    snprintf(path, sizeof path, "%s/%s", self->dir, pass_key);
    s_remove(path, 1);
    if (mkdir(path, 0700) != 0)
        return pf_error_set(err, PF_EIO, "job %s: cannot make %s: %s", self->job_id, path, strerror(errno));
    snprintf(self->pass, sizeof self->pass, "%s", pass_key);
    self->next_seq = 0;
    self->file[0] = '\0';
    self->offset = 0;
    return PF_OK;
}

/* Starts a file of the pass at its first chunk (`head`, its first bytes):
 * an ncu page of a pass that parses goes to a parser of its own; anything
 * else (a source page, read whole later) to a file on disk. */
static pf_status_t s_begin_file(pass_spool_t *self, const char *pass, const char *name, const char *head,
                                size_t head_len, unsigned seq, pf_error_t *err)
{
    for (const spool_file_t *g = self->files; g; g = g->next)
        if (strcmp(g->pass, pass) == 0 && strcmp(g->name, name) == 0)
            return pf_error_set(err, PF_EBADINPUT, "job %s pass %s chunk %u: file %s comes a second time",
                                self->job_id, pass, seq, name);
    /* The pass's page parsed last (files are newest first), which this one
     * may parse into when it parsed without error. */
    analyzer_page_t *follows = NULL;
    for (const spool_file_t *g = self->files; self->once && g && !follows; g = g->next)
        if (strcmp(g->pass, pass) == 0 && g->page)
            follows = g->rc == PF_OK ? g->page : NULL;
    spool_file_t *f = calloc(1, sizeof *f);
    if (!f)
        return pf_error_set(err, PF_ENOMEM, "job %s pass %s chunk %u: out of memory", self->job_id, pass, seq);
    snprintf(f->pass, sizeof f->pass, "%s", pass);
    snprintf(f->name, sizeof f->name, "%s", name);
    f->next = self->files;
    self->files = f;
    /* The sniff sees what the analysis's would: a chunk holds at least
     * PASS_CHUNK_MIN_RAW bytes, as many as it reads of a file's head. */
    if (self->parse != PROFEED__PROFILER__PROFILER_UNSPECIFIED) {
        char source[2 * WIRE_MAX_FILE_PART_LEN + 16];
        snprintf(source, sizeof source, "pass %s: %s", pass, name);
        pf_error_t e;
        f->page = analyzer_page_begin(self->parse, source, head, head_len, self->keep_raw, self->once, follows,
                                      self->budget, &e);
        if (!f->page && e.code != PF_OK)
            return pf_error_set(err, e.code, "job %s pass %s chunk %u: %s", self->job_id, pass, seq, e.msg);
        if (f->page) {
            f->parsing = true;
            self->current = f;
            return PF_OK;
        }
    }
    char path[4096 + 512];
    pass_spool_path(self, pass, name, path, sizeof path);
    self->fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (self->fd < 0)
        return pf_error_set(err, PF_EIO, "job %s pass %s chunk %u: cannot create %s: %s", self->job_id, pass, seq,
                            path, strerror(errno));
    return PF_OK;
}

pf_status_t pass_spool_file(const pass_spool_t *self, const char *pass_key, const char *name, analyzer_file_t *file,
                            char *path, size_t cap, pf_error_t *err)
{
    assert(self && pass_key && name && file && path);
    for (const spool_file_t *f = self->files; f; f = f->next) {
        if (strcmp(f->pass, pass_key) != 0 || strcmp(f->name, name) != 0)
            continue;
        if (f->rc != PF_OK) {
            if (err)
                *err = f->err;
            return f->rc;
        }
        if (f->page) {
            file->parsed = f->page;
            return PF_OK;
        }
        break;
    }
    file->path = pass_spool_path(self, pass_key, name, path, cap);
    return PF_OK;
}

pf_status_t pass_spool_add(pass_spool_t *self, pass_chunk_codec_t *codec, const Profeed__PassChunk *chunk,
                           pass_spool_result_t *result, pf_error_t *err)
{
    assert(self && codec && chunk && result);
    const char *job = self->job_id, *pass = chunk->pass_key;
    unsigned seq = (unsigned) chunk->seq;
    if (chunk->seq == 0 && s_begin_pass(self, pass, err) != PF_OK)
        return err ? err->code : PF_EIO;
    if (strcmp(self->pass, pass) != 0 || chunk->seq > self->next_seq) {
        return pf_error_set(err, PF_EPROTO, "job %s pass %s chunk %u: out of order (expected %s chunk %u)", job, pass,
                            seq, self->pass[0] ? self->pass : "a chunk 0 of", (unsigned) self->next_seq);
    }
    if (chunk->seq < self->next_seq) {
        *result = PASS_SPOOL_DUPLICATE;
        return PF_OK;
    }
    if (chunk->file_name && *chunk->file_name) {
        /* Names are checked on the wire (relative, no ".."); a plain name
         * keeps the spool one level deep. */
        if (strchr(chunk->file_name, '/') || strlen(chunk->file_name) > WIRE_MAX_FILE_PART_LEN) {
            return pf_error_set(err, PF_EBADINPUT, "job %s pass %s chunk %u: file name \"%.64s\" is not a plain name",
                                job, pass, seq, chunk->file_name);
        }
        if (strcmp(self->file, chunk->file_name) != 0 && chunk->offset != 0) {
            return pf_error_set(err, PF_EPROTO, "job %s pass %s chunk %u: file %s starts at offset %llu, not 0", job,
                                pass, seq, chunk->file_name, (unsigned long long) chunk->offset);
        }
        if (strcmp(self->file, chunk->file_name) == 0 && chunk->offset != self->offset) {
            return pf_error_set(err, PF_EPROTO, "job %s pass %s chunk %u: offset %llu in %s, expected %llu", job, pass,
                                seq, (unsigned long long) chunk->offset, chunk->file_name,
                                (unsigned long long) self->offset);
        }
        const uint8_t *raw;
        size_t raw_len;
        pf_status_t rc = pass_chunk_codec_unpack(codec, chunk, &raw, &raw_len, err);
        if (rc != PF_OK)
            return rc;
        if (strcmp(self->file, chunk->file_name) != 0) {
            if (self->fd >= 0)
                close(self->fd);
            self->fd = -1;
            s_end_page(self);
            rc = s_begin_file(self, pass, chunk->file_name, (const char *) raw, raw_len, seq, err);
            if (rc != PF_OK)
                return rc;
            snprintf(self->file, sizeof self->file, "%s", chunk->file_name);
            self->offset = 0;
        }
        if (self->current) {
            /* A page that cannot be parsed keeps its error for the analysis
             * and its later bytes are taken without a look. */
            if (self->current->rc == PF_OK)
                self->current->rc = analyzer_page_feed(self->current->page, (const char *) raw, raw_len,
                                                       &self->current->err);
        } else if (s_write_all(self->fd, raw, raw_len) != PF_OK) {
            return pf_error_set(err, PF_EIO, "job %s pass %s chunk %u: cannot write %s: %s", job, pass, seq,
                                chunk->file_name, strerror(errno));
        }
        self->offset += raw_len;
    } else if (chunk->raw_size > 0) {
        return pf_error_set(err, PF_EBADINPUT, "job %s pass %s chunk %u: data without a file name", job, pass, seq);
    }
    self->next_seq++;
    *result = PASS_SPOOL_STORED;
    if (chunk->last) {
        if (self->fd >= 0)
            close(self->fd);
        self->fd = -1;
        s_end_page(self);
        self->pass[0] = '\0';
        *result = PASS_SPOOL_PASS_DONE;
    }
    return PF_OK;
}
