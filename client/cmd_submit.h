/* profeed submit: run a command under a profiler on the farm, print the feedback. */
#ifndef CMD_SUBMIT_H
#define CMD_SUBMIT_H

int cmd_submit(int argc, char **argv);

#endif
