/* json_string: the one writer of JSON strings (the feedback's JSON, the log's
 * JSON lines).
 *
 * Appends `text` to `tb` as a quoted JSON string (RFC 8259): '"' and '\\'
 * escaped, \n \t \r as such, other control characters as \u00XX, and each
 * byte that is not part of valid UTF-8 (utf8.h) as '?', since the text comes
 * from files and peers and a JSON reader must refuse invalid UTF-8. NULL is
 * the empty string. */
#ifndef JSON_STRING_H
#define JSON_STRING_H

#include "textbuf.h"

void json_string_append(textbuf_t *tb, const char *text);

#endif
