/* config: settings from defaults, a ZPL file, the environment and flags.
 * See config.h; docs/config.md lists the programs' keys.
 *
 * One file of ~800 lines because every source (file, environment, flags)
 * goes through the same key table, parse and check (s_check, s_assign), so a
 * value's precedence and its error message are decided in one place; the
 * help and printing at the end read that same table. */
#include "config.h"


#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <czmq.h>

#include "file_read.h"
#include "pf_log.h"

#define CONFIG_MAX_PROGRAM 32
#define CONFIG_MAX_WHERE 512
/* zconfig copies at most 1024 bytes of a line and drops the rest silently. */
#define CONFIG_MAX_LINE 1024

typedef struct {
    const config_key_t *key;
    char *text;                   /* the value as given; NULL: unset (optional strings) */
    long long i;
    double d;
    bool b;
    config_source_t from;
    char where[CONFIG_MAX_WHERE]; /* "default", "--slots", "PROFEED_X", "file.cfg:3" */
    char env[CONFIG_MAX_PROGRAM + CONFIG_MAX_NAME + 16];
    int file_line;                /* during config_load_file: the line that set it, to spot repeats */
} entry_t;

struct config_t {
    char program[CONFIG_MAX_PROGRAM]; /* "broker" */
    char prog[CONFIG_MAX_PROGRAM + 8]; /* "profeed-broker", for messages */
    entry_t *entries;
    size_t count;
};

/* snprintf that marks a cut with "..." instead of failing: for labels and
 * messages, where the start is what a reader needs. */
static void s_format(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void s_format(char *buf, size_t size, const char *fmt, ...)
{
    assert(size >= 4);
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, size, fmt, ap);
    va_end(ap);
    if (n < 0)
        buf[0] = '\0';
    else if ((size_t) n >= size)
        memcpy(buf + size - 4, "...", 4);
}

static bool s_name_valid(const char *name)
{
    size_t len = strlen(name);
    if (len == 0 || len > CONFIG_MAX_NAME)
        return false;
    for (const char *p = name; *p; p++)
        if (!(islower((unsigned char) *p) || isdigit((unsigned char) *p) || *p == '-'))
            return false;
    return true;
}

bool config_env_name(const char *program, const char *key, char *buf, size_t size)
{
    int n = snprintf(buf, size, "PROFEED_%s_%s", program, key);
    if (n < 0 || (size_t) n >= size)
        return false;
    for (char *p = buf; *p; p++)
        *p = *p == '-' ? '_' : (char) toupper((unsigned char) *p);
    return true;
}

static entry_t *s_find(const config_t *self, const char *name)
{
    for (size_t i = 0; i < self->count; i++)
        if (strcmp(self->entries[i].key->name, name) == 0)
            return &self->entries[i];
    return NULL;
}

/* What a key's value must be, for messages and --help. */
static void s_expected(const config_key_t *key, char *buf, size_t size)
{
    switch (key->type) {
    case CONFIG_INT: s_format(buf, size, "a whole number in %lld..%lld", key->min, key->max); break;
    case CONFIG_DOUBLE: s_format(buf, size, "a number in %g..%g", key->dmin, key->dmax); break;
    case CONFIG_BOOL: s_format(buf, size, "true or false (or yes/no, on/off, 1/0)"); break;
    case CONFIG_STRING:
        if (key->choices) {
            /* "a|b|c" -> "a, b, c" */
            char list[256];
            size_t used = 0;
            for (const char *p = key->choices; *p && used + 3 < sizeof list; p++) {
                if (*p == '|') {
                    list[used++] = ',';
                    list[used++] = ' ';
                } else {
                    list[used++] = *p;
                }
            }
            list[used] = '\0';
            s_format(buf, size, "one of %s", list);
        } else {
            s_format(buf, size, "text of at most %d printable ASCII bytes", CONFIG_MAX_VALUE);
        }
        break;
    }
}

static bool s_choice_ok(const char *choices, const char *text)
{
    size_t len = strlen(text);
    const char *p = choices;
    while (*p) {
        const char *bar = strchr(p, '|');
        size_t n = bar ? (size_t) (bar - p) : strlen(p);
        if (n == len && strncmp(p, text, n) == 0)
            return true;
        p += n + (bar ? 1 : 0);
    }
    return false;
}

typedef struct {
    long long i;
    double d;
    bool b;
} value_t;

/* Checks `text` against the key's type; fills *out. Whole text only: "5x",
 * "" and out-of-range numbers are refused, never read as a prefix or clamped. */
static bool s_parse(const config_key_t *key, const char *text, value_t *out)
{
    memset(out, 0, sizeof *out);
    char *end = NULL;
    switch (key->type) {
    case CONFIG_INT:
        errno = 0;
        out->i = strtoll(text, &end, 10);
        return end != text && *end == '\0' && errno == 0 && out->i >= key->min && out->i <= key->max;
    case CONFIG_DOUBLE:
        errno = 0;
        out->d = strtod(text, &end);
        return end != text && *end == '\0' && errno == 0 && isfinite(out->d) && out->d >= key->dmin &&
               out->d <= key->dmax;
    case CONFIG_BOOL:
        if (!strcasecmp(text, "true") || !strcasecmp(text, "yes") || !strcasecmp(text, "on") || !strcmp(text, "1"))
            out->b = true;
        else if (!strcasecmp(text, "false") || !strcasecmp(text, "no") || !strcasecmp(text, "off") ||
                 !strcmp(text, "0"))
            out->b = false;
        else
            return false;
        return true;
    case CONFIG_STRING: return !key->choices || s_choice_ok(key->choices, text);
    }
    return false;
}

/* Everything config_set() checks, without changing anything, so a file is
 * checked whole before any of it is applied. */
static pf_status_t s_check(const config_t *self, const entry_t *entry, const char *text, config_source_t from,
                           const char *where, value_t *value, pf_error_t *err)
{
    const config_key_t *key = entry->key;
    /* In messages a flag names itself; a file line or a variable is followed by the key. */
    char subject[CONFIG_MAX_WHERE + CONFIG_MAX_NAME + 4];
    if (from == CONFIG_FROM_FLAG)
        s_format(subject, sizeof subject, "%s", where);
    else
        s_format(subject, sizeof subject, "%s: %s", where, key->name);
    size_t len = strlen(text);
    if (len > CONFIG_MAX_VALUE)
        return pf_error_set(err, PF_ETOOBIG, "%s: a value of %zu bytes; at most %d", subject, len, CONFIG_MAX_VALUE);
    bool has_dquote = false, has_squote = false;
    for (const char *p = text; *p; p++) {
        unsigned char c = (unsigned char) *p;
        if (c < 0x20 || c >= 0x7f)
            return pf_error_set(err, PF_EBADINPUT, "%s: byte 0x%02x at offset %zu; values are printable ASCII",
                                subject, c, (size_t) (p - text));
        has_dquote |= c == '"';
        has_squote |= c == '\'';
    }
    /* ZPL quotes have no escapes: such a value could not be printed back. */
    if (has_dquote && has_squote)
        return pf_error_set(err, PF_EBADINPUT, "%s: a value cannot hold both ' and \" (ZPL has no escapes)", subject);
    if (len == 0 && key->type == CONFIG_STRING) {
        if (!key->fallback)
            return PF_OK; /* empty: unset */
        return pf_error_set(err, PF_EBADINPUT, "%s needs a value (%s's default is \"%s\")", subject, self->prog,
                            key->fallback);
    }
    if (!s_parse(key, text, value)) {
        char expected[300];
        s_expected(key, expected, sizeof expected);
        return pf_error_set(err, PF_EBADINPUT, "%s needs %s, got \"%.64s%s\"", subject, expected, text,
                            len > 64 ? "..." : "");
    }
    return PF_OK;
}

static void s_assign(entry_t *entry, const char *text, const value_t *value, config_source_t from, const char *where)
{
    char *copy = NULL;
    if (*text || entry->key->type != CONFIG_STRING || entry->key->fallback) {
        copy = strdup(text);
        assert(copy); /* a short string at start-up: nothing sensible to do without memory */
    }
    free(entry->text);
    entry->text = copy;
    entry->i = value->i;
    entry->d = value->d;
    entry->b = value->b;
    entry->from = from;
    s_format(entry->where, sizeof entry->where, "%s", where);
}

pf_status_t config_set(config_t *self, const char *name, const char *text, config_source_t from,
                       const char *where, pf_error_t *err)
{
    assert(self && name && text && where);
    entry_t *entry = s_find(self, name);
    if (!entry)
        return pf_error_set(err, PF_EBADINPUT, "%s: unknown key \"%.64s\"", where, name);
    value_t value;
    pf_status_t rc = s_check(self, entry, text, from, where, &value, err);
    if (rc == PF_OK)
        s_assign(entry, text, &value, from, where);
    return rc;
}

config_t *config_new(const char *program, const config_key_t *keys, size_t count)
{
    /* The program name and the table are ours: a bad one is a programming mistake. */
    bool valid = program && s_name_valid(program) && strlen(program) < CONFIG_MAX_PROGRAM;
    assert(valid && keys && count > 0);
    (void) valid;
    config_t *self = calloc(1, sizeof *self);
    if (!self)
        return NULL;
    self->entries = calloc(count, sizeof *self->entries);
    if (!self->entries) {
        free(self);
        return NULL;
    }
    s_format(self->program, sizeof self->program, "%s", program);
    s_format(self->prog, sizeof self->prog, "profeed-%s", program);
    self->count = count;
    for (size_t i = 0; i < count; i++) {
        const config_key_t *key = &keys[i];
        entry_t *entry = &self->entries[i];
        entry->key = key;
        valid = s_name_valid(key->name);
        assert(valid);
        assert(key->help);
        assert(key->fallback || key->type == CONFIG_STRING);
        for (size_t j = 0; j < i; j++)
            assert(strcmp(keys[j].name, key->name) != 0);
        bool fits = config_env_name(program, key->name, entry->env, sizeof entry->env);
        assert(fits);
        (void) fits;
        value_t value = {0};
        if (key->fallback) {
            bool ok = s_parse(key, key->fallback, &value);
            assert(ok);
            (void) ok;
        }
        s_assign(entry, key->fallback ? key->fallback : "", &value, CONFIG_FROM_DEFAULT, "default");
    }
    return self;
}

void config_destroy(config_t **self_p)
{
    assert(self_p);
    config_t *self = *self_p;
    if (!self)
        return;
    for (size_t i = 0; i < self->count; i++)
        free(self->entries[i].text);
    free(self->entries);
    free(self);
    *self_p = NULL;
}

/* ------------------------------------------------------------------------
 * The file */

/* zconfig reports a syntax error only by printing "(LINE) reason" on stdout
 * (zclock_log) and returning NULL. Parsing with stdout pointed at a
 * temporary file keeps --print-config's output clean and lets our message
 * name the line and the reason. This runs at start-up, before any thread
 * exists, so borrowing file descriptor 1 for a moment is safe. */
static zconfig_t *s_zpl_parse(const char *text, int *bad_line, char *why, size_t why_size)
{
    *bad_line = 0;
    s_format(why, why_size, "not valid ZPL");
    fflush(stdout);
    FILE *capture = tmpfile();
    int saved = capture ? dup(STDOUT_FILENO) : -1;
    bool redirected = saved >= 0 && dup2(fileno(capture), STDOUT_FILENO) >= 0;
    zconfig_t *root = zconfig_str_load(text);
    fflush(stdout);
    if (redirected)
        dup2(saved, STDOUT_FILENO);
    if (saved >= 0)
        close(saved);
    if (!root && capture) {
        char line[CONFIG_MAX_LINE + 128];
        rewind(capture);
        while (fgets(line, sizeof line, capture)) {
            const char *mark = strstr(line, "(zconfig): (");
            if (!mark)
                continue;
            mark += strlen("(zconfig): (");
            char *end = NULL;
            long n = strtol(mark, &end, 10);
            if (end == mark || *end != ')' || n < 1 || n > INT32_MAX)
                continue;
            *bad_line = (int) n;
            const char *reason = end + 1;
            while (*reason == ' ')
                reason++;
            size_t len = strcspn(reason, "\r\n");
            s_format(why, why_size, "%.*s", (int) (len < 200 ? len : 200), reason);
            break;
        }
    }
    if (capture)
        fclose(capture);
    return root;
}

/* A line that zconfig turns into a node: after its indentation, a name
 * character (zconfig's s_is_namechar). Comments and blank lines make none. */
static bool s_zpl_named_line(const char *line)
{
    while (*line == ' ')
        line++;
    unsigned char c = (unsigned char) *line;
    return c && (isalnum(c) || strchr("$-_@.&+/", c));
}

/* Reads at most CONFIG_MAX_FILE bytes of `path` into a NUL-terminated
 * buffer (caller frees), refusing what zconfig would misread silently: NUL
 * bytes, non-ASCII bytes and over-long lines. */
static pf_status_t s_read_file(const char *path, char **text_p, pf_error_t *err)
{
    *text_p = NULL;
    char *text = NULL;
    size_t len = 0;
    pf_status_t rc = file_read(path, "config file", CONFIG_MAX_FILE, &text, &len, err);
    if (rc == PF_ENOTFOUND || rc == PF_EIO) {
        /* A config that cannot be read is bad input, as a malformed one is. */
        if (err)
            err->code = PF_EBADINPUT;
        return PF_EBADINPUT;
    }
    if (rc != PF_OK)
        return rc;
    int line = 1;
    size_t line_start = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char) text[i];
        if (c == '\n') {
            line++;
            line_start = i + 1;
            continue;
        }
        if (c == 0 || c >= 0x80 || (c < 0x20 && c != '\t' && c != '\r')) {
            rc = pf_error_set(err, PF_EBADINPUT, "%s:%d: byte 0x%02x; ZPL files are ASCII text", path, line, c);
            goto cleanup;
        }
        if (i - line_start >= CONFIG_MAX_LINE) {
            rc = pf_error_set(err, PF_ETOOBIG, "%s:%d: line longer than %d bytes", path, line, CONFIG_MAX_LINE);
            goto cleanup;
        }
    }
    *text_p = text;
    text = NULL;
cleanup:
    free(text);
    return rc;
}

pf_status_t config_load_file(config_t *self, const char *path, pf_error_t *err)
{
    assert(self && path);
    char *text = NULL;
    int *lines = NULL;
    zconfig_t *root = NULL;
    value_t *values = NULL;
    const char **texts = NULL; /* owned by root */
    entry_t **targets = NULL;
    pf_status_t rc = s_read_file(path, &text, err);
    if (rc != PF_OK)
        goto cleanup;

    int bad_line;
    char why[256];
    root = s_zpl_parse(text, &bad_line, why, sizeof why);
    if (!root) {
        if (bad_line > 0)
            rc = pf_error_set(err, PF_EBADINPUT, "%s:%d: malformed ZPL: %s (expected `name = value`, indented by"
                              " 4 spaces per level, quotes closed)", path, bad_line, why);
        else
            rc = pf_error_set(err, PF_EBADINPUT, "%s: malformed ZPL: %s", path, why);
        goto cleanup;
    }

    /* zconfig keeps no line numbers. It makes one node per named line, in
     * file order, and appends each to its parent's children, so the k-th
     * node met depth-first is the k-th named line. */
    size_t n_lines = 1;
    for (const char *p = text; *p; p++)
        n_lines += *p == '\n';
    lines = calloc(n_lines, sizeof *lines);
    values = calloc(self->count, sizeof *values);
    texts = calloc(self->count, sizeof *texts);
    targets = calloc(self->count, sizeof *targets);
    if (!lines || !values || !texts || !targets) {
        rc = pf_error_set(err, PF_ENOMEM, "%s: no memory to read it", path);
        goto cleanup;
    }
    size_t named = 0;
    int line_no = 1;
    for (char *line = text; line; line_no++) {
        char *eol = strchr(line, '\n');
        if (eol)
            *eol = '\0';
        if (s_zpl_named_line(line))
            lines[named++] = line_no;
        line = eol ? eol + 1 : NULL;
    }

    for (size_t i = 0; i < self->count; i++)
        self->entries[i].file_line = 0;
    size_t node = 0, set = 0;
    for (zconfig_t *item = zconfig_child(root); item; item = zconfig_next(item)) {
        const char *name = zconfig_name(item);
        const char *value = zconfig_value(item);
        int line = node < named ? lines[node] : 0;
        node++;
        char where[CONFIG_MAX_WHERE];
        s_format(where, sizeof where, "%s:%d", path, line);
        if (zconfig_child(item)) {
            rc = pf_error_set(err, PF_EBADINPUT, "%s: \"%.64s\" has indented lines below it; %s's config has"
                              " top-level keys only", where, name, self->prog);
            goto cleanup;
        }
        entry_t *entry = s_find(self, name);
        if (!entry) {
            char known[300] = "";
            size_t used = 0;
            for (size_t i = 0; i < self->count && used < sizeof known; i++) {
                int n = snprintf(known + used, sizeof known - used, "%s%s", i ? ", " : "", self->entries[i].key->name);
                if (n < 0 || (size_t) n >= sizeof known - used) {
                    memcpy(known + sizeof known - 4, "...", 4);
                    break;
                }
                used += (size_t) n;
            }
            rc = pf_error_set(err, PF_EBADINPUT, "%s: unknown key \"%.64s\"; %s's keys are %s", where, name,
                              self->prog, known);
            goto cleanup;
        }
        if (entry->file_line) {
            rc = pf_error_set(err, PF_EBADINPUT, "%s: %s is set twice (first on line %d)", where, name,
                              entry->file_line);
            goto cleanup;
        }
        entry->file_line = line;
        size_t index = (size_t) (entry - self->entries);
        texts[index] = value ? value : "";
        rc = s_check(self, entry, texts[index], CONFIG_FROM_FILE, where, &values[index], err);
        if (rc != PF_OK)
            goto cleanup;
        targets[set++] = entry;
    }
    /* Every line checked: now apply them all. */
    for (size_t k = 0; k < set; k++) {
        entry_t *entry = targets[k];
        size_t index = (size_t) (entry - self->entries);
        char where[CONFIG_MAX_WHERE];
        s_format(where, sizeof where, "%s:%d", path, entry->file_line);
        s_assign(entry, texts[index], &values[index], CONFIG_FROM_FILE, where);
    }
cleanup:
    zconfig_destroy(&root);
    free(targets);
    free(texts);
    free(values);
    free(lines);
    free(text);
    return rc;
}

pf_status_t config_load_env(config_t *self, pf_error_t *err)
{
    assert(self);
    for (size_t i = 0; i < self->count; i++) {
        entry_t *entry = &self->entries[i];
        const char *where = entry->env;
        const char *value = getenv(where);
        if ((!value || !*value) && entry->key->env_alias) {
            where = entry->key->env_alias;
            value = getenv(where);
        }
        if (!value || !*value)
            continue;
        pf_status_t rc = config_set(self, entry->key->name, value, CONFIG_FROM_ENV, where, err);
        if (rc != PF_OK)
            return rc;
    }
    return PF_OK;
}

/* ------------------------------------------------------------------------
 * Reading values */

static const entry_t *s_get(const config_t *self, const char *name, config_type_t type)
{
    assert(self && name);
    const entry_t *entry = s_find(self, name);
    assert(entry && entry->key->type == type);
    (void) type;
    return entry;
}

const char *config_str(const config_t *self, const char *name)
{
    return s_get(self, name, CONFIG_STRING)->text;
}

long long config_int(const config_t *self, const char *name)
{
    return s_get(self, name, CONFIG_INT)->i;
}

double config_double(const config_t *self, const char *name)
{
    return s_get(self, name, CONFIG_DOUBLE)->d;
}

bool config_bool(const config_t *self, const char *name)
{
    return s_get(self, name, CONFIG_BOOL)->b;
}

config_source_t config_source(const config_t *self, const char *name)
{
    assert(self && name);
    const entry_t *entry = s_find(self, name);
    assert(entry);
    return entry->from;
}

/* ------------------------------------------------------------------------
 * Printing */

static const char *s_source_name(config_source_t from)
{
    switch (from) {
    case CONFIG_FROM_DEFAULT: return "default";
    case CONFIG_FROM_FILE: return "file";
    case CONFIG_FROM_ENV: return "environment";
    case CONFIG_FROM_FLAG: return "flag";
    }
    return "?";
}

void config_print(const config_t *self, FILE *out)
{
    assert(self && out);
    fprintf(out, "#   %s: effective configuration (flag > environment > file > default)\n", self->prog);
    for (size_t i = 0; i < self->count; i++) {
        const entry_t *entry = &self->entries[i];
        char line[CONFIG_MAX_NAME + CONFIG_MAX_VALUE + 16];
        switch (entry->key->type) {
        case CONFIG_INT: s_format(line, sizeof line, "%s = %lld", entry->key->name, entry->i); break;
        case CONFIG_BOOL: s_format(line, sizeof line, "%s = %s", entry->key->name, entry->b ? "true" : "false"); break;
        case CONFIG_DOUBLE: s_format(line, sizeof line, "%s = %s", entry->key->name, entry->text); break;
        case CONFIG_STRING: {
            /* Always quoted, so spaces and '#' survive; s_check refused values
             * holding both kinds of quote. */
            const char *text = entry->text ? entry->text : "";
            char quote = strchr(text, '"') ? '\'' : '"';
            s_format(line, sizeof line, "%s = %c%s%c", entry->key->name, quote, text, quote);
            break;
        }
        }
        fprintf(out, "%-40s # %s", line, s_source_name(entry->from));
        if (entry->from != CONFIG_FROM_DEFAULT)
            fprintf(out, " %s", entry->where);
        else if (!entry->text)
            fprintf(out, " (unset)");
        fputc('\n', out);
    }
}

/* One option of --help: the flag, then its help from column 25; further
 * lines of the help indented to that column. */
static void s_help_line(FILE *out, const char *flag, const char *arg, const char *help, const char *fallback)
{
    char left[CONFIG_MAX_NAME + 64];
    s_format(left, sizeof left, "%s%s%s", flag, arg ? " " : "", arg ? arg : "");
    fprintf(out, "  %-22s ", left);
    for (const char *p = help; *p; p++) {
        fputc(*p, out);
        if (*p == '\n')
            fprintf(out, "%25s", "");
    }
    if (fallback)
        fprintf(out, " (default %s)", fallback);
    fputc('\n', out);
}

void config_print_help(const config_t *self, FILE *out)
{
    assert(self && out);
    for (size_t i = 0; i < self->count; i++) {
        const config_key_t *key = self->entries[i].key;
        char flag[CONFIG_MAX_NAME + 3];
        s_format(flag, sizeof flag, "--%s", key->name);
        /* A bool's default "false" says nothing a reader needs. */
        const char *fallback = key->type == CONFIG_BOOL && key->fallback && !strcmp(key->fallback, "false")
                                   ? NULL
                                   : key->fallback;
        s_help_line(out, flag, key->arg, key->help, fallback);
    }
}

/* ------------------------------------------------------------------------
 * The command line */

enum { O_CONFIG = 256, O_PRINT_CONFIG, O_KEY = 1024, O_ACTION = 8192 };

static void s_usage(const config_t *self, const char *about, const config_action_t *actions, size_t action_count,
                    FILE *out)
{
    fprintf(out, "%s\noptions:\n", about);
    config_print_help(self, out);
    for (size_t i = 0; i < action_count; i++) {
        char flag[CONFIG_MAX_NAME + 3];
        s_format(flag, sizeof flag, "--%s", actions[i].name);
        s_help_line(out, flag, actions[i].arg, actions[i].help, NULL);
    }
    s_help_line(out, "--config", "FILE", "read settings from FILE (ZPL: `key = value` lines, keys named\n"
                "as these options; see docs/config.md)", NULL);
    s_help_line(out, "--print-config", NULL, "print the effective settings as ZPL, each with where it came\n"
                "from, and exit", NULL);
    s_help_line(out, "-h, --help", NULL, "this text", NULL);
    char upper[CONFIG_MAX_PROGRAM];
    s_format(upper, sizeof upper, "%s", self->program);
    for (char *p = upper; *p; p++)
        *p = *p == '-' ? '_' : (char) toupper((unsigned char) *p);
    fprintf(out,
            "\nEvery option is also a key of the --config file and an environment variable,\n"
            "PROFEED_%s_<OPTION> (upper case, '-' as '_'; set but empty counts as unset).\n"
            "A flag beats the environment, which beats the file, which beats the default.\n"
            "Booleans take --flag or --flag=true|false.\n",
            upper);
}

config_outcome_t config_parse_args(config_t *self, int argc, char **argv, const char *about,
                                   const config_action_t *actions, size_t action_count, size_t *action,
                                   const char **action_arg)
{
    assert(self && argv && about && action && action_arg);
    assert(self->count < O_ACTION - O_KEY && action_count < 1024);
    config_outcome_t outcome = CONFIG_EXIT_USAGE;
    struct option *longopts = calloc(self->count + action_count + 4, sizeof *longopts);
    /* Flags are applied after the file and the environment, whatever their
     * place on the line, so they are kept until then. */
    size_t *flag_key = calloc((size_t) argc + 1, sizeof *flag_key);
    const char **flag_value = calloc((size_t) argc + 1, sizeof *flag_value);
    if (!longopts || !flag_key || !flag_value) {
        fprintf(stderr, "%s: no memory to read the command line\n", self->prog);
        goto cleanup;
    }
    size_t n = 0;
    for (size_t i = 0; i < self->count; i++) {
        const config_key_t *key = self->entries[i].key;
        longopts[n++] = (struct option){key->name, key->type == CONFIG_BOOL ? optional_argument : required_argument,
                                        NULL, (int) (O_KEY + i)};
    }
    for (size_t i = 0; i < action_count; i++)
        longopts[n++] = (struct option){actions[i].name, actions[i].arg ? required_argument : no_argument, NULL,
                                        (int) (O_ACTION + i)};
    longopts[n++] = (struct option){"config", required_argument, NULL, O_CONFIG};
    longopts[n++] = (struct option){"print-config", no_argument, NULL, O_PRINT_CONFIG};
    longopts[n++] = (struct option){"help", no_argument, NULL, 'h'};

    const char *config_file = NULL;
    bool print_config = false;
    size_t flags = 0;
    int opt;
    optind = 0; /* glibc: 0 also resets getopt's internal state, for a second parse in one process */
    while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
        if (opt >= O_ACTION && opt < O_ACTION + (int) action_count) {
            *action = (size_t) (opt - O_ACTION);
            *action_arg = optarg;
            outcome = CONFIG_ACTION;
            goto cleanup;
        }
        if (opt >= O_KEY && opt < O_KEY + (int) self->count) {
            assert(flags < (size_t) argc);
            flag_key[flags] = (size_t) (opt - O_KEY);
            flag_value[flags] = optarg ? optarg : "true"; /* a bool given as --flag */
            flags++;
            continue;
        }
        switch (opt) {
        case O_CONFIG: config_file = optarg; break;
        case O_PRINT_CONFIG: print_config = true; break;
        case 'h':
            s_usage(self, about, actions, action_count, stdout);
            outcome = CONFIG_EXIT_OK;
            goto cleanup;
        default: s_usage(self, about, actions, action_count, stderr); goto cleanup;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "%s: unexpected argument \"%s\"\n", self->prog, argv[optind]);
        goto cleanup;
    }
    pf_error_t err;
    pf_error_clear(&err);
    if (config_file && config_load_file(self, config_file, &err) != PF_OK) {
        fprintf(stderr, "%s: %s\n", self->prog, err.msg);
        goto cleanup;
    }
    if (config_load_env(self, &err) != PF_OK) {
        fprintf(stderr, "%s: %s\n", self->prog, err.msg);
        goto cleanup;
    }
    for (size_t i = 0; i < flags; i++) {
        const entry_t *entry = &self->entries[flag_key[i]];
        char where[CONFIG_MAX_NAME + 3];
        s_format(where, sizeof where, "--%s", entry->key->name);
        if (config_set(self, entry->key->name, flag_value[i], CONFIG_FROM_FLAG, where, &err) != PF_OK) {
            fprintf(stderr, "%s: %s\n", self->prog, err.msg);
            goto cleanup;
        }
    }
    if (print_config) {
        config_print(self, stdout);
        outcome = CONFIG_EXIT_OK;
        goto cleanup;
    }
    outcome = CONFIG_RUN;
cleanup:
    free(flag_value);
    free(flag_key);
    free(longopts);
    return outcome;
}

void config_apply_logging(const config_t *self)
{
    pf_log_level_t level = PF_LOG_INFO;
    pf_log_parse_level(config_str(self, "log-level"), &level); /* a choice the key allows */
    pf_log_set_level(level);
    pf_log_set_json(strcmp(config_str(self, "log-format"), "json") == 0);
}

config_t *config_start(const char *program, const config_key_t *keys, size_t count, int argc, char **argv,
                       const char *about, const config_action_t *actions, size_t action_count,
                       int (*act)(size_t action, const char *arg), int *exit_code)
{
    assert(exit_code && (!action_count || act));
    config_t *settings = config_new(program, keys, count);
    if (!settings) {
        fprintf(stderr, "profeed-%s: out of memory\n", program);
        *exit_code = 1;
        return NULL;
    }
    size_t action;
    const char *action_arg;
    config_outcome_t outcome = config_parse_args(settings, argc, argv, about, actions, action_count, &action,
                                                 &action_arg);
    if (outcome == CONFIG_RUN) {
        config_apply_logging(settings);
        return settings;
    }
    config_destroy(&settings);
    *exit_code = outcome == CONFIG_ACTION ? act(action, action_arg) : outcome == CONFIG_EXIT_OK ? 0 : 2;
    return NULL;
}
