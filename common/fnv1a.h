/* fnv1a: the 64-bit FNV-1a hash, for stable, cheap hashes of names and
 * bytes (string pools, the manifest's metrics hash, noise seeds). Not for
 * anything an adversary could aim at. */
#ifndef FNV1A_H
#define FNV1A_H

#include <stddef.h>
#include <stdint.h>

/* The offset basis: the hash of nothing, where every hash starts. */
#define FNV1A_BASIS 14695981039346656037ULL /* 0xcbf29ce484222325 */

/* Continues `h` over `len` bytes. */
uint64_t fnv1a_update(uint64_t h, const void *data, size_t len);

/* Continues `h` over a NUL-terminated string, the NUL not included. */
uint64_t fnv1a_update_str(uint64_t h, const char *text);

#endif
