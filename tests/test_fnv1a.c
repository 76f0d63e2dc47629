/* fnv1a: the published FNV-1a 64 test vectors (Fowler, Noll and Vo's
 * reference set), so the manifest's metrics hash is the one docs/baselines.md
 * names. */
#include <criterion/criterion.h>
#include <string.h>

#include "fnv1a.h"

Test(fnv1a, the_published_vectors)
{
    static const struct {
        const char *text;
        uint64_t hash;
    } cases[] = {{"", 0xcbf29ce484222325ULL}, {"a", 0xaf63dc4c8601ec8cULL}, {"foobar", 0x85944171f73967e8ULL}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cr_assert_eq(fnv1a_update_str(FNV1A_BASIS, cases[i].text), cases[i].hash, "\"%s\"", cases[i].text);
        cr_assert_eq(fnv1a_update(FNV1A_BASIS, cases[i].text, strlen(cases[i].text)), cases[i].hash, "\"%s\"",
                     cases[i].text);
    }
}

Test(fnv1a, a_hash_continues_over_its_parts)
{
    cr_assert_eq(fnv1a_update_str(fnv1a_update_str(FNV1A_BASIS, "foo"), "bar"),
                 fnv1a_update_str(FNV1A_BASIS, "foobar"));
    cr_assert_eq(fnv1a_update(FNV1A_BASIS, "a\0b", 3), fnv1a_update_str(fnv1a_update(FNV1A_BASIS, "a", 2), "b"),
                 "a NUL is a byte like any other");
}
