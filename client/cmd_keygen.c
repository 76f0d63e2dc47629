#include "cmd_keygen.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "pf_error.h"
#include "wire_curve.h"

static void s_help(FILE *out)
{
    fprintf(out, "usage: profeed keygen NAME [--dir DIR]\n"
                 "\n"
                 "Makes a CURVE certificate for one farm process (the broker, a collector, an\n"
                 "analyzer or an agent): DIR/NAME.key, the public half, and DIR/NAME.key_secret,\n"
                 "the secret half (mode 0600; it never leaves the machine that uses it).\n"
                 "Existing files are never overwritten.\n"
                 "\n"
                 "Then: give the broker's NAME.key to every process that connects to it\n"
                 "(--broker-key), and copy each client's NAME.key into the broker's folder for\n"
                 "its role (--agent-keys, --collector-keys, --analyzer-keys). docs/security.md.\n"
                 "\n"
                 "  --dir DIR   where to write them (default: the current folder)\n"
                 "exit status: 0 written, 2 bad arguments or the files exist, 1 cannot write.\n");
}

int cmd_keygen(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"dir", required_argument, NULL, 'd'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *dir = ".";
    optind = 1;
    int opt;
    while ((opt = getopt_long(argc, argv, "hd:", longopts, NULL)) != -1) {
        switch (opt) {
        case 'd': dir = optarg; break;
        case 'h': s_help(stdout); return 0;
        default: s_help(stderr); return 2;
        }
    }
    if (optind != argc - 1) {
        s_help(stderr);
        return 2;
    }
    const char *name = argv[optind];
    pf_error_t err;
    pf_status_t rc = wire_curve_keygen(dir, name, &err);
    if (rc != PF_OK) {
        fprintf(stderr, "profeed keygen: %s\n", err.msg);
        return rc == PF_EBADINPUT ? 2 : 1;
    }
    printf("wrote %s/%s.key (public: share it) and %s/%s.key_secret (secret: keep it here)\n", dir, name, dir,
           name);
    return 0;
}
