#include "pf_log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "json_string.h"
#include "textbuf.h"

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

    /* One stdio call per line (stdio locks each) keeps lines whole across threads. */
    if (s_json) {
        textbuf_t line;
        textbuf_init(&line);
        textbuf_printf(&line, "{\"ts\":\"%s\",\"level\":\"%s\",\"component\":", stamp, names[level]);
        json_string_append(&line, component ? component : "");
        textbuf_append(&line, ",\"msg\":");
        json_string_append(&line, msg);
        textbuf_append(&line, "}\n");
        char *text = textbuf_take(&line);
        if (text)
            fputs(text, stderr);
        else /* no memory for the line: one that needs none says so */
            fprintf(stderr, "{\"ts\":\"%s\",\"level\":\"ERROR\",\"component\":\"log\",\"msg\":\"out of memory\"}\n",
                    stamp);
        free(text);
    } else {
        fprintf(stderr, "%s %-5s %s: %s\n", stamp, names[level], component ? component : "-", msg);
    }
}
