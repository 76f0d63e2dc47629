/* broker_keys: one role's folder of public certificates (NAME.key files from
 * `profeed keygen`), as the broker's ZAP handler asks it: is this key one of
 * the folder's, and under what name.
 *
 * The folder is read at start and read again at a lookup after it changed (a
 * file added, removed, replaced or rewritten), so keys take effect for new
 * connections without a restart. Only its top level is read, and names that
 * start with '.' are skipped (editors' swap files; a Kubernetes Secret's
 * ..data links, whose files appear at the top level too). A file that is not
 * a certificate is skipped with a warning naming it and why, once a reading:
 * a stray file costs the operator a log line, not a key. */
#ifndef BROKER_KEYS_H
#define BROKER_KEYS_H

#include <stddef.h>

#include "pf_error.h"

/* A folder holds at most this many entries; past it the rest are skipped
 * with a warning. */
#define BROKER_KEYS_MAX_FILES 10000

typedef struct broker_keys_t broker_keys_t;

/* Reads the folder `dir` of `role` ("agent", ...: for messages). NULL, with
 * `err` saying why, when `dir` is not a readable folder. */
broker_keys_t *broker_keys_new(const char *dir, const char *role, pf_error_t *err);
void broker_keys_destroy(broker_keys_t **self_p);

/* The name of the key whose public half is `public_txt` (40 Z85 characters):
 * its certificate's "name" metadata, else the key itself; NULL when the
 * folder holds no such key. The string is the store's, valid until the next
 * lookup. */
const char *broker_keys_lookup(broker_keys_t *self, const char *public_txt);

/* How many keys the last reading found. */
size_t broker_keys_count(const broker_keys_t *self);

#endif
