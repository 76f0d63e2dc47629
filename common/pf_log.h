/* pf_log: one line per event on stderr, with a level and a component name.
 *
 *   2026-11-29T18:40:01.123Z INFO  broker: job 1f3a... queued (agent=a1)
 *
 * The level threshold and the format (text or json) are process-wide and set
 * once at start-up from flags; logging is safe to call from any thread. */
#ifndef PF_LOG_H
#define PF_LOG_H

#include <stdbool.h>

typedef enum { PF_LOG_DEBUG, PF_LOG_INFO, PF_LOG_WARN, PF_LOG_ERROR, PF_LOG_OFF } pf_log_level_t;

void pf_log_set_level(pf_log_level_t level);
pf_log_level_t pf_log_level(void);
/* Emit JSON objects ({"ts":..,"level":..,"component":..,"msg":..}) instead of text. */
void pf_log_set_json(bool json);
/* Parses "debug|info|warn|error|off"; returns false on anything else. */
bool pf_log_parse_level(const char *text, pf_log_level_t *level);

void pf_log(pf_log_level_t level, const char *component, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#define pf_log_debug(comp, ...) pf_log(PF_LOG_DEBUG, comp, __VA_ARGS__)
#define pf_log_info(comp, ...) pf_log(PF_LOG_INFO, comp, __VA_ARGS__)
#define pf_log_warn(comp, ...) pf_log(PF_LOG_WARN, comp, __VA_ARGS__)
#define pf_log_error(comp, ...) pf_log(PF_LOG_ERROR, comp, __VA_ARGS__)

#endif
