/* cmd_keygen: `profeed keygen`, a CURVE certificate for one farm process. */
#ifndef CMD_KEYGEN_H
#define CMD_KEYGEN_H

int cmd_keygen(int argc, char **argv);

#endif
