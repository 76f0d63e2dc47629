/* profeed: the command agents and people run.
 *
 *   profeed analyze [options] FILE...   offline feedback from profiler output
 *
 *   profeed submit [options] -- CMD...  profile a command on the farm
 *   profeed status                     the farm's workers and jobs
 *   profeed keygen NAME                a CURVE certificate for a farm process
 *   profeed mcp                        a Model Context Protocol server on stdio */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd_analyze.h"
#include "profeed_client.h"

/* Runs profeed-farm with our arguments: beside this program first (the build
 * tree and an installed bin/ both keep them together), then on PATH. Returns
 * only when neither could be run. */
static int s_exec_farm(char **argv)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
        self[n] = '\0';
        char *slash = strrchr(self, '/');
        if (slash && (size_t) (slash - self) + sizeof "/profeed-farm" <= sizeof self) {
            memcpy(slash, "/profeed-farm", sizeof "/profeed-farm");
            argv[0] = self;
            execv(self, argv);
        }
    }
    argv[0] = "profeed-farm";
    execvp("profeed-farm", argv);
    fprintf(stderr, "profeed: the farm commands need profeed-farm beside profeed or on PATH: %s\n",
            strerror(errno));
    return 1;
}

/* Runs the MCP server, which is the Python package's (python/profeed/mcp.py):
 * Debian's python3 with the package installed beside this program
 * (bin/../PROFEED_PYTHON_RELDIR) first on its path. Returns only on failure. */
static int s_exec_mcp(int argc, char **argv)
{
#ifdef PROFEED_PYTHON3
    char self[PATH_MAX], pythonpath[PATH_MAX + 64];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
        self[n] = '\0';
        char *slash = strrchr(self, '/');
        if (slash) {
            *slash = '\0';
            const char *old = getenv("PYTHONPATH");
            int len = snprintf(pythonpath, sizeof pythonpath, "%s/%s%s%s", self, PROFEED_PYTHON_RELDIR,
                               old && *old ? ":" : "", old && *old ? old : "");
            if (len > 0 && (size_t) len < sizeof pythonpath)
                setenv("PYTHONPATH", pythonpath, 1);
        }
    }
    char **args = calloc((size_t) argc + 4, sizeof *args);
    if (!args)
        return 1;
    args[0] = PROFEED_PYTHON3;
    args[1] = "-m";
    args[2] = "profeed";
    for (int i = 1; i < argc; i++) /* argv[1] is "mcp" */
        args[2 + i] = argv[i];
    execv(PROFEED_PYTHON3, args);
    fprintf(stderr, "profeed mcp: cannot run %s: %s\n", PROFEED_PYTHON3, strerror(errno));
    free(args);
#else
    (void) argc;
    (void) argv;
    fprintf(stderr, "profeed mcp: this build has no Python package (configured with -DPROFEED_PYTHON=OFF)\n");
#endif
    return 1;
}

static void s_usage(FILE *out)
{
    fprintf(out,
            "usage: profeed <command> [options]\n"
            "\n"
            "commands:\n"
            "  analyze FILE...   turn profiler output into optimization feedback (offline)\n"
            "  submit -- CMD...  profile a command on the farm and print the feedback\n"
            "  status            the farm's workers, queue and jobs in flight\n"
            "  keygen NAME       a CURVE certificate for a farm process (docs/security.md)\n"
            "  mcp               a Model Context Protocol server on stdio (docs/python.md)\n"
            "  version           print the version\n"
            "  help              this text; 'profeed <command> --help' for a command\n"
            "\n"
            "exit status: 0 done, 2 an unknown command or no command; otherwise the command's,\n"
            "which its --help lists (1 other failure, 2 bad input, 3 profiler error, 4 refused\n"
            "or no answer, 5 timed out or failed, 130 interrupted).\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        s_usage(stderr);
        return 2;
    }
    const char *command = argv[1];
    if (strcmp(command, "analyze") == 0)
        return cmd_analyze(argc - 1, argv + 1);
    if (strcmp(command, "submit") == 0 || strcmp(command, "status") == 0 || strcmp(command, "keygen") == 0)
        return s_exec_farm(argv);
    if (strcmp(command, "mcp") == 0)
        return s_exec_mcp(argc, argv);
    if (strcmp(command, "version") == 0 || strcmp(command, "--version") == 0) {
        printf("profeed %s\n", PROFEED_VERSION);
        return 0;
    }
    if (strcmp(command, "help") == 0 || strcmp(command, "--help") == 0 || strcmp(command, "-h") == 0) {
        s_usage(stdout);
        return 0;
    }
    fprintf(stderr, "profeed: unknown command \"%s\"\n", command);
    s_usage(stderr);
    return 2;
}
