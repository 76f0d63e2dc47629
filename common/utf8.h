/* utf8: the one UTF-8 decoder profeed has.
 *
 * Text from profilers and peers must be valid UTF-8 before it goes into a
 * protobuf `string` or a JSON document (other languages' decoders reject it
 * otherwise). Valid means RFC 3629: no overlong forms, no surrogates
 * (U+D800..U+DFFF), nothing past U+10FFFF, no truncated sequences. */
#ifndef UTF8_H
#define UTF8_H

#include <stddef.h>

/* Length (1..4) of the valid sequence that starts at `p`, or 0 when it is not
 * valid. `p` points into a NUL-terminated string and must not be at its end;
 * the terminator ends a truncated sequence, so nothing past it is read. */
size_t utf8_sequence_len(const char *p);

/* Byte offset of the first invalid sequence in the NUL-terminated `s`, or -1
 * when all of it is valid. */
long utf8_invalid_at(const char *s);

#endif
