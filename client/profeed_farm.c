/* profeed-farm: the farm subcommands of the profeed command.
 *
 * `profeed submit`, `profeed status` and `profeed keygen` run this program (with the same
 * arguments): the farm's calls need ZeroMQ, which `profeed analyze` must not
 * pay for at start-up. It can also be run directly. */
#include <stdio.h>
#include <string.h>

#include "cmd_keygen.h"
#include "cmd_status.h"
#include "cmd_submit.h"

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "submit") == 0)
        return cmd_submit(argc - 1, argv + 1);
    if (argc >= 2 && strcmp(argv[1], "status") == 0)
        return cmd_status(argc - 1, argv + 1);
    if (argc >= 2 && strcmp(argv[1], "keygen") == 0)
        return cmd_keygen(argc - 1, argv + 1);
    fprintf(stderr, "usage: profeed-farm submit|status|keygen [options] (run by `profeed submit`, "
                    "`profeed status` and `profeed keygen`)\n");
    return 2;
}
