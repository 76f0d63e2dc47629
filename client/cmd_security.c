#include "cmd_security.h"

#include <stdlib.h>
#include <string.h>

static const char *s_env(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? v : NULL;
}

void cmd_security_from_env(profeed_security_t *security)
{
    memset(security, 0, sizeof *security);
    security->curve_secret = s_env("PROFEED_CURVE_SECRET");
    security->broker_key = s_env("PROFEED_BROKER_KEY");
    const char *insecure = s_env("PROFEED_INSECURE");
    security->insecure = insecure && strcmp(insecure, "0") != 0 && strcmp(insecure, "false") != 0;
}
