/* wire_cert: reads one CURVE certificate file, as `profeed keygen` (CZMQ's
 * zcert_save) writes it: ZPL with a "curve" section holding public-key and,
 * in NAME.key_secret, secret-key, each 40 Z85 characters, and a "metadata"
 * section (name = "...").
 *
 * Read here rather than by zcert_load, which reads a file of any size, logs
 * CZMQ's own error on a file that is not ZPL and leaks its zfile then: the
 * broker reads every file of its keys folders, where a stray file is an
 * operator's slip, not an attack to survive by restarting. */
#ifndef WIRE_CERT_H
#define WIRE_CERT_H

#include <czmq.h>

#include "pf_error.h"

/* The most a certificate file may hold; keygen's are under 400 bytes. */
#define WIRE_CERT_MAX_BYTES (64 * 1024)

/* The certificate in the file at `path` (the caller's to destroy): its keys
 * (a public file's secret key reads as 32 zero bytes, as zcert_load gives it)
 * and its metadata. NULL, with `err` naming the file, when it cannot be read
 * (PF_EIO, PF_ENOTFOUND), is over WIRE_CERT_MAX_BYTES (PF_ETOOBIG), or is not
 * a certificate (PF_EBADINPUT). */
zcert_t *wire_cert_load(const char *path, pf_error_t *err);

#endif
