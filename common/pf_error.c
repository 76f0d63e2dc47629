#include "pf_error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

pf_status_t pf_error_set(pf_error_t *err, pf_status_t code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        err->code = code;
    }
    return code;
}

void pf_error_prefix(pf_error_t *err, const char *fmt, ...)
{
    if (!err)
        return;
    char joined[PF_ERROR_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(joined, sizeof joined, fmt, ap);
    va_end(ap);
    if (n < 0)
        return; /* an encoding error in our own format: keep the message as it was */
    size_t used = (size_t) n < sizeof joined ? (size_t) n : sizeof joined - 1;
    int m = snprintf(joined + used, sizeof joined - used, ": %s", err->msg);
    /* Too long for the buffer: the context and the start of the cause are what a
     * reader needs; mark the cut so nobody mistakes it for the whole message. */
    if (m < 0 || (size_t) m >= sizeof joined - used)
        memcpy(joined + sizeof joined - 4, "...", 4);
    memcpy(err->msg, joined, sizeof err->msg);
}

void pf_error_clear(pf_error_t *err)
{
    if (err) {
        err->code = PF_OK;
        err->msg[0] = '\0';
    }
}

const char *pf_status_name(pf_status_t code)
{
    static const char *const names[PF__ECOUNT] = {
        [PF_OK] = "ok",
        [PF_EBADINPUT] = "bad input",
        [PF_ETOOBIG] = "too big",
        [PF_EIO] = "i/o error",
        [PF_ENOMEM] = "out of memory",
        [PF_EPROFILER] = "profiler error",
        [PF_EPROTO] = "protocol error",
        [PF_ENOTFOUND] = "not found",
    };
    if ((int) code < 0 || code >= PF__ECOUNT)
        return "unknown";
    return names[code];
}
