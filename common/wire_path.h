/* wire_path: where a walk over a message is, for error messages only.
 *
 * wire_scan() and wire_check() visit every field of every message a process
 * receives or sends. Formatting "Envelope.feedback.findings[3].title" for each
 * field visited cost more than the checks themselves, and the string is only
 * read when a check fails. So a walk keeps its position as a chain of frames
 * on the C stack, one per level, and formats it on failure. */
#ifndef WIRE_PATH_H
#define WIRE_PATH_H

#include <stddef.h>

typedef struct wire_path {
    const struct wire_path *parent; /* NULL at the root */
    const char *name;               /* the root's name, or a field's name */
    long index;                     /* the element of a repeated field, or -1 */
} wire_path_t;

/* Writes the path ("Envelope.ready.profilers[1]") to `buf`, always
 * NUL-terminated; a path too long for `buf` is cut short. Returns `buf`. */
const char *wire_path_format(const wire_path_t *at, char *buf, size_t size);

#endif
