/* config: a program's settings as one table of keys, filled in rising
 * precedence from the key's default, a ZPL file (RFC 4, read with CZMQ's
 * zconfig), environment variables and command-line flags:
 *
 *     flag > environment > file > default
 *
 * Every key has one name used everywhere: `heartbeat-ms` is the line
 * `heartbeat-ms = 500` in the file, the flag `--heartbeat-ms 500` and the
 * variable PROFEED_BROKER_HEARTBEAT_MS=500 (PROFEED_<PROGRAM>_<KEY>, upper
 * case, '-' as '_'). Files hold top-level keys only, no sections.
 *
 * A program declares a static config_key_t table, makes a config_t from it,
 * and calls config_parse_args(), which handles --config, --print-config and
 * --help too. docs/config.md lists every program's keys. */
#ifndef CONFIG_H
#define CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "pf_error.h"

/* Limits on what comes from outside: zconfig cuts lines at 1024 bytes without
 * saying so, so longer values and lines are refused before it sees them. */
#define CONFIG_MAX_FILE (64 * 1024)
#define CONFIG_MAX_VALUE 1000
#define CONFIG_MAX_NAME 64

typedef enum { CONFIG_STRING, CONFIG_INT, CONFIG_DOUBLE, CONFIG_BOOL } config_type_t;

typedef enum { CONFIG_FROM_DEFAULT, CONFIG_FROM_FILE, CONFIG_FROM_ENV, CONFIG_FROM_FLAG } config_source_t;

/* One setting. Its flag is "--" + name and its variable is derived from the
 * program and the name (config_env_name()), so the three never drift apart. */
typedef struct {
    const char *name;         /* [a-z0-9-]+, at most CONFIG_MAX_NAME bytes */
    config_type_t type;
    const char *fallback;     /* the default as text; NULL (strings only): unset */
    const char *arg;          /* the value's name in --help ("N", "ENDPOINT"); NULL for bools */
    const char *help;         /* for --help; lines after the first start with '\n' */
    long long min, max;       /* CONFIG_INT: inclusive range */
    double dmin, dmax;        /* CONFIG_DOUBLE: inclusive range */
    const char *choices;      /* CONFIG_STRING: "a|b|c", or NULL for any text */
    const char *env_alias;    /* an older variable read when the new one is not set, or NULL */
} config_key_t;

typedef struct config_t config_t;

/* A config with every key at its default. `program` is the short name
 * ("broker": PROFEED_BROKER_*, messages say "profeed-broker"); `keys` must
 * outlive the config. Asserts on a malformed table (our own mistake). */
config_t *config_new(const char *program, const config_key_t *keys, size_t count);
void config_destroy(config_t **self_p);

/* Reads a ZPL file of `key = value` lines. A missing or unreadable file,
 * malformed ZPL, a section, an unknown or repeated key, or a value of the
 * wrong type is PF_EBADINPUT (PF_ETOOBIG past the limits) with a message
 * naming the file, the line and the key; then nothing of the file is kept.
 * An empty value leaves an optional string key unset. */
pf_status_t config_load_file(config_t *self, const char *path, pf_error_t *err);

/* Reads PROFEED_<PROGRAM>_<KEY> (then the key's env_alias) for every key; a
 * variable that is set but empty counts as not set. */
pf_status_t config_load_env(config_t *self, pf_error_t *err);

/* Sets one key from text, checked against its type; `where` names the
 * origin in messages and --print-config (a flag, a variable, "file:line"). */
pf_status_t config_set(config_t *self, const char *name, const char *text, config_source_t from,
                       const char *where, pf_error_t *err);

/* The effective values. Asking for a key the table lacks, or with the wrong
 * type, is a programming error (assert). config_str() is NULL when unset. */
const char *config_str(const config_t *self, const char *name);
long long config_int(const config_t *self, const char *name);
double config_double(const config_t *self, const char *name);
bool config_bool(const config_t *self, const char *name);
config_source_t config_source(const config_t *self, const char *name);

/* "PROFEED_BROKER_HEARTBEAT_MS" for ("broker", "heartbeat-ms"); false when
 * it does not fit in `size` bytes. */
bool config_env_name(const char *program, const char *key, char *buf, size_t size);

/* Writes the effective values as ZPL that config_load_file() reads back,
 * each line ending in a comment that says where its value came from. */
void config_print(const config_t *self, FILE *out);

/* Writes the "options:" lines of --help for the table's keys. */
void config_print_help(const config_t *self, FILE *out);

/* The logging keys every farm program has, for the end of its key table,
 * and how they take effect: config_apply_logging() sets pf_log's level and
 * format from them. */
#define CONFIG_LOG_KEYS                                                                                 \
    {.name = "log-level", .type = CONFIG_STRING, .fallback = "info", .arg = "LEVEL",                    \
     .help = "debug|info|warn|error|off", .choices = "debug|info|warn|error|off"},                     \
    {.name = "log-format", .type = CONFIG_STRING, .fallback = "text", .arg = "FORMAT",                  \
     .help = "text|json (one JSON object a line, for log shippers)", .choices = "text|json"}
void config_apply_logging(const config_t *self);

/* A flag that does something instead of running (`--print-plan ncu:full`). */
typedef struct {
    const char *name;         /* without "--" */
    const char *arg;          /* the value's name in --help, or NULL when it takes none */
    const char *help;
} config_action_t;

typedef enum {
    CONFIG_RUN,               /* settings are complete: run the program */
    CONFIG_EXIT_OK,           /* --help or --print-config was printed: exit 0 */
    CONFIG_EXIT_USAGE,        /* a bad flag, file, variable or value was reported: exit 2 */
    CONFIG_ACTION             /* an action flag: *action and *action_arg say which */
} config_outcome_t;

/* The command line of a program: flags named after the keys, the actions,
 * --config FILE, --print-config and -h/--help. `about` is the start of
 * --help (usage line and what the program does). Settings are applied in
 * precedence order whatever the flags' order: the file, then the
 * environment, then the flags. --help and an action act as soon as they are
 * met, as before config files existed. Errors go to stderr, prefixed with
 * "profeed-<program>: ". */
config_outcome_t config_parse_args(config_t *self, int argc, char **argv, const char *about,
                                   const config_action_t *actions, size_t action_count, size_t *action,
                                   const char **action_arg);

/* The start of every farm program's main: its settings from the key table
 * and the command line, with logging set from them. Returns the settings to
 * run with (the caller destroys them), or NULL when the program is done, with
 * *exit_code 0 (--help, --print-config), 2 (a bad flag, file or value, already
 * reported), 1 (out of memory) or what `act` returned for an action flag. */
config_t *config_start(const char *program, const config_key_t *keys, size_t count, int argc, char **argv,
                       const char *about, const config_action_t *actions, size_t action_count,
                       int (*act)(size_t action, const char *arg), int *exit_code);

#endif
