#include "replay.h"

#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "profiler.h"
#include "wire_check.h"

struct replay_t {
    char path[4096];
    replay_pass_t *passes;
    size_t count;
};

static void s_free_pass(replay_pass_t *p)
{
    for (size_t i = 0; i < p->file_count; i++)
        free(p->files[i]);
}

void replay_destroy(replay_t **self_p)
{
    assert(self_p);
    replay_t *self = *self_p;
    if (!self)
        return;
    for (size_t i = 0; i < self->count; i++)
        s_free_pass(&self->passes[i]);
    free(self->passes);
    free(self);
    *self_p = NULL;
}

const char *replay_path(const replay_t *self) { return self->path; }

/* Splits a line at spaces and tabs in place; returns the token count. */
static size_t s_split(char *line, char **tokens, size_t max)
{
    size_t n = 0;
    char *p = line;
    while (*p && n < max) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (!*p)
            break;
        tokens[n++] = p;
        while (*p && *p != ' ' && *p != '\t')
            p++;
        if (*p)
            *p++ = '\0';
    }
    return n;
}

static pf_status_t s_parse_line(replay_t *self, char *line, const char *dir, size_t lineno, pf_error_t *err)
{
    char *tokens[REPLAY_MAX_FILES + 4];
    size_t n = s_split(line, tokens, sizeof tokens / sizeof tokens[0]);
    if (n == 0 || tokens[0][0] == '#')
        return PF_OK;
    if (n < 3)
        return pf_error_set(err, PF_EBADINPUT, "%s: line %zu: expected \"program pass-key [exit=N] [source] file...\"",
                            self->path, lineno);
    replay_pass_t pass = {0};
    if (snprintf(pass.program, sizeof pass.program, "%s", tokens[0]) >= (int) sizeof pass.program)
        return pf_error_set(err, PF_ETOOBIG, "%s: line %zu: program name too long", self->path, lineno);
    if (wire_check_id(tokens[1], "pass key", err) != PF_OK) {
        pf_error_prefix(err, "%s: line %zu", self->path, lineno);
        return err ? err->code : PF_EBADINPUT;
    }
    snprintf(pass.pass_key, sizeof pass.pass_key, "%s", tokens[1]);
    const profiler_t *profiler = profiler_by_pass_key(pass.pass_key);
    if (!profiler)
        return pf_error_set(err, PF_EBADINPUT, "%s: line %zu: pass key \"%.64s\" names no profiler (it starts "
                            "with one of %s, then '.' or '_')", self->path, lineno, pass.pass_key, profiler_names());
    pass.profiler = profiler->id;
    size_t first = 2;
    if (strncmp(tokens[2], "exit=", 5) == 0) {
        char *end = NULL;
        errno = 0;
        long v = strtol(tokens[2] + 5, &end, 10);
        if (end == tokens[2] + 5 || *end || errno || v < 0 || v > 255)
            return pf_error_set(err, PF_EBADINPUT, "%s: line %zu: exit= needs 0..255", self->path, lineno);
        pass.exit_status = (int) v;
        first = 3;
    }
    if (first < n && strcmp(tokens[first], "source") == 0) {
        pass.source = true;
        first++;
    }
    if (first >= n)
        return pf_error_set(err, PF_EBADINPUT, "%s: line %zu: no files for the pass", self->path, lineno);
    if (n - first > REPLAY_MAX_FILES)
        return pf_error_set(err, PF_ETOOBIG, "%s: line %zu: more than %d files", self->path, lineno, REPLAY_MAX_FILES);
    for (size_t i = first; i < n; i++) {
        char full[4096];
        int len = tokens[i][0] == '/' ? snprintf(full, sizeof full, "%s", tokens[i])
                                      : snprintf(full, sizeof full, "%s/%s", dir, tokens[i]);
        if (len < 0 || (size_t) len >= sizeof full) {
            s_free_pass(&pass);
            return pf_error_set(err, PF_ETOOBIG, "%s: line %zu: path too long", self->path, lineno);
        }
        if (access(full, R_OK) != 0) { /* banned-ok: refuses a wrong map at start; each job opens again */
            s_free_pass(&pass);
            return pf_error_set(err, PF_ENOTFOUND, "%s: line %zu: cannot read %s: %s", self->path, lineno,
                                full, strerror(errno));
        }
        pass.files[pass.file_count] = strdup(full);
        if (!pass.files[pass.file_count]) {
            s_free_pass(&pass);
            return pf_error_set(err, PF_ENOMEM, "out of memory");
        }
        pass.file_count++;
    }
    replay_pass_t *grown = realloc(self->passes, (self->count + 1) * sizeof *grown);
    if (!grown) {
        s_free_pass(&pass);
        return pf_error_set(err, PF_ENOMEM, "out of memory");
    }
    self->passes = grown;
    self->passes[self->count++] = pass;
    return PF_OK;
}

replay_t *replay_load(const char *map_path, pf_error_t *err)
{
    assert(map_path);
    replay_t *self = calloc(1, sizeof *self);
    if (!self) {
        pf_error_set(err, PF_ENOMEM, "out of memory");
        return NULL;
    }
    snprintf(self->path, sizeof self->path, "%s", map_path);
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", map_path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    else
        snprintf(dir, sizeof dir, ".");
    FILE *f = fopen(map_path, "r");
    if (!f) {
        pf_error_set(err, PF_ENOTFOUND, "%s: cannot open: %s", map_path, strerror(errno));
        replay_destroy(&self);
        return NULL;
    }
    char line[8192];
    size_t lineno = 0;
    pf_status_t rc = PF_OK;
    while (rc == PF_OK && fgets(line, sizeof line, f)) {
        lineno++;
        size_t len = strlen(line);
        if (len && line[len - 1] == '\n')
            line[--len] = '\0';
        else if (!feof(f))
            rc = pf_error_set(err, PF_ETOOBIG, "%s: line %zu: longer than %zu bytes", map_path, lineno, sizeof line);
        if (rc == PF_OK)
            rc = s_parse_line(self, line, dir, lineno, err);
    }
    fclose(f);
    if (rc == PF_OK && self->count == 0)
        rc = pf_error_set(err, PF_EBADINPUT, "%s: no passes in the map", map_path);
    if (rc != PF_OK)
        replay_destroy(&self);
    return self;
}

size_t replay_find(const replay_t *self, const char *program, const replay_pass_t **out, size_t cap)
{
    assert(self && program && out);
    size_t count = 0;
    for (int wildcard = 0; wildcard < 2 && count == 0; wildcard++) {
        for (size_t i = 0; i < self->count && count < cap; i++) {
            const char *name = self->passes[i].program;
            if (wildcard ? strcmp(name, "*") == 0 : strcmp(name, program) == 0)
                out[count++] = &self->passes[i];
        }
    }
    return count;
}

size_t replay_profilers(const replay_t *self, Profeed__Profiler *out, size_t cap)
{
    assert(self && out);
    size_t count = 0;
    for (size_t i = 0; i < self->count; i++) {
        size_t k = 0;
        while (k < count && out[k] != self->passes[i].profiler)
            k++;
        if (k == count && count < cap)
            out[count++] = self->passes[i].profiler;
    }
    return count;
}
