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

/* The one text sanitizer: replaces, in place, each byte of the NUL-terminated
 * `text` that is not part of a valid sequence with '?' (one byte for one, so
 * the length stays); valid multi-byte text is kept. With UTF8_CLEAN_CONTROLS
 * each control character but \n, \t and \r becomes '?' too (a profiler's
 * stderr on its way to an agent's terminal). */
#define UTF8_CLEAN_CONTROLS 1u
void utf8_clean(char *text, unsigned flags);

/* A copy of `text` cleaned as utf8_clean(copy, 0) does (caller frees), or
 * NULL when out of memory. */
char *utf8_clean_dup(const char *text);

#endif
