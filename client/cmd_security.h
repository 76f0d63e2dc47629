/* cmd_security: the CURVE options `profeed submit` and `profeed status`
 * share, and their environment variables (so an agent's wrapper can set them
 * once): PROFEED_CURVE_SECRET, PROFEED_BROKER_KEY, PROFEED_INSECURE=1. */
#ifndef CMD_SECURITY_H
#define CMD_SECURITY_H

#include "profeed_client.h"

#define CMD_SECURITY_HELP                                                                          \
    "  --curve-secret FILE  this agent's certificate (NAME.key_secret from profeed keygen);\n"     \
    "                       env PROFEED_CURVE_SECRET\n"                                           \
    "  --broker-key FILE    the broker's public certificate (its NAME.key); env\n"                \
    "                       PROFEED_BROKER_KEY. Both: CURVE encryption and authentication\n"      \
    "  --insecure           plaintext to a broker on another machine (warned); env\n"             \
    "                       PROFEED_INSECURE=1. Without it or a certificate, only a local\n"      \
    "                       broker (loopback, ipc) is reached in plaintext\n"

/* Fills `security` from the environment; flags then override it. */
void cmd_security_from_env(profeed_security_t *security);

#endif
