/* profeed-farm: the farm subcommands of the profeed command.
 *
 * `profeed submit` and `profeed status` run this program (with the same
 * arguments): the farm's calls need ZeroMQ, which `profeed analyze` must not
 * pay for at start-up. It can also be run directly. */
#include <stdio.h>
#include <string.h>

#include "cmd_status.h"
#include "cmd_submit.h"

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "submit") == 0)
        return cmd_submit(argc - 1, argv + 1);
    if (argc >= 2 && strcmp(argv[1], "status") == 0)
        return cmd_status(argc - 1, argv + 1);
    fprintf(stderr, "usage: profeed-farm submit|status [options] (run by `profeed submit` and "
                    "`profeed status`)\n");
    return 2;
}
