# cmake -DIN=FILE -DOUT=FILE.c -DNAME=symbol -P embed.cmake: FILE's bytes as a
# NUL-terminated C array `NAME` and its length `NAME_len`, so a binary carries
# its templates and runs from a folder without the source tree.
file(READ ${IN} hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
file(WRITE ${OUT} "/* Generated from ${IN} at build time; do not edit. */\n#include <stddef.h>\n"
     "extern const char ${NAME}[];\nextern const size_t ${NAME}_len;\n"
     "const char ${NAME}[] = {${bytes} 0x00};\nconst size_t ${NAME}_len = sizeof ${NAME} - 1;\n")
