/* pf_error: the one small error type used across profeed.
 *
 * A function that can fail on bad input takes a `pf_error_t *err` (may be NULL),
 * returns a status, and on failure fills `err` with a code and a message that
 * names the input, the place and what was expected. Programming mistakes are
 * asserts, never pf_error_t. */
#ifndef PF_ERROR_H
#define PF_ERROR_H

#include <stddef.h>

typedef enum {
    PF_OK = 0,
    PF_EBADINPUT,   /* malformed file, message or argument from outside */
    PF_ETOOBIG,     /* a size from outside exceeds a limit */
    PF_EIO,         /* reading or writing a file or socket failed */
    PF_ENOMEM,      /* allocation failed */
    PF_EPROFILER,   /* the profiler itself reported an error */
    PF_EPROTO,      /* a peer broke the wire protocol (version, sequence) */
    PF_ENOTFOUND,   /* a named thing does not exist */
    PF__ECOUNT
} pf_status_t;

#define PF_ERROR_MSG_MAX 512

typedef struct {
    pf_status_t code;
    char msg[PF_ERROR_MSG_MAX];
} pf_error_t;

/* Records `code` and a printf-style message in `err` (no-op when err is NULL).
 * Returns `code` so callers can write `return pf_error_set(err, ...)`. */
pf_status_t pf_error_set(pf_error_t *err, pf_status_t code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Prepends "<prefix>: " to an already set message, to add context on the way up. */
void pf_error_prefix(pf_error_t *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Clears `err` to PF_OK with an empty message. */
void pf_error_clear(pf_error_t *err);

/* A short, stable name for a status ("bad input", "too big", ...). */
const char *pf_status_name(pf_status_t code);

#endif
