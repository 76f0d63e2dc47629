/* profeed status: the broker's workers, queue depth and jobs in flight. */
#ifndef CMD_STATUS_H
#define CMD_STATUS_H

int cmd_status(int argc, char **argv);

#endif
