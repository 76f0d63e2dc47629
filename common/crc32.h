/* crc32: the CRC-32 of zlib and PNG (reflected polynomial 0xEDB88320), for
 * checksums on data we write to disk ourselves (the broker's journal). */
#ifndef CRC32_H
#define CRC32_H

#include <stddef.h>
#include <stdint.h>

/* Continues `crc` (0 to start) over `len` bytes. */
uint32_t crc32_update(uint32_t crc, const void *data, size_t len);

#endif
