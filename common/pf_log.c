#include "pf_log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

static pf_log_level_t s_level = PF_LOG_INFO;
static bool s_json = false;

void pf_log_set_level(pf_log_level_t level) { s_level = level; }
pf_log_level_t pf_log_level(void) { return s_level; }
void pf_log_set_json(bool json) { s_json = json; }

bool pf_log_parse_level(const char *text, pf_log_level_t *level)
{
    static const char *const names[] = {"debug", "info", "warn", "error", "off"};
    for (int i = 0; i < (int) (sizeof names / sizeof names[0]); i++) {
        if (text && strcasecmp(text, names[i]) == 0) {
            *level = (pf_log_level_t) i;
            return true;
        }
    }
    return false;
}

/* Writes `text` as the body of a JSON string (quotes not included). */
static void s_json_escape(FILE *out, const char *text)
{
    for (const unsigned char *p = (const unsigned char *) text; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(out, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(out, "\\u%04x", *p);
        else
            fputc(*p, out);
    }
}

void pf_log(pf_log_level_t level, const char *component, const char *fmt, ...)
{
    static const char *const names[] = {"DEBUG", "INFO", "WARN", "ERROR"};
    if (level < s_level || level >= PF_LOG_OFF)
        return;

    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);

    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    struct tm tm;
    gmtime_r(&now.tv_sec, &tm);
    char stamp[40];
    size_t n = strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(stamp + n, sizeof stamp - n, ".%03ldZ", now.tv_nsec / 1000000L);

    /* One fprintf per line under the stdio lock keeps lines whole across threads. */
    flockfile(stderr);
    if (s_json) {
        fprintf(stderr, "{\"ts\":\"%s\",\"level\":\"%s\",\"component\":\"", stamp, names[level]);
        s_json_escape(stderr, component ? component : "");
        fputs("\",\"msg\":\"", stderr);
        s_json_escape(stderr, msg);
        fputs("\"}\n", stderr);
    } else {
        fprintf(stderr, "%s %-5s %s: %s\n", stamp, names[level], component ? component : "-", msg);
    }
    funlockfile(stderr);
}
