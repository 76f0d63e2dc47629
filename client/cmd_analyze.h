/* cmd_analyze: `profeed analyze`, argument handling around profeed_analyze_files(). */
#ifndef CMD_ANALYZE_H
#define CMD_ANALYZE_H

/* Runs the command; argv[0] is "analyze". Returns the process exit code. */
int cmd_analyze(int argc, char **argv);

#endif
