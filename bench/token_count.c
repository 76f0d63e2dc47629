/* token_count: prints, per file, token_estimate()'s count, its byte count and
 * its path, tab-separated; bench/tokens.sh sets it beside a real tokenizer's. */
#include <stdio.h>
#include <stdlib.h>

#include "token_estimate.h"

int main(int argc, char **argv)
{
    int rc = 0;
    for (int i = 1; i < argc; i++) {
        FILE *f = fopen(argv[i], "rb");
        if (!f) {
            perror(argv[i]);
            rc = 2;
            continue;
        }
        size_t cap = 1 << 16, len = 0;
        char *text = malloc(cap);
        size_t got;
        while (text && (got = fread(text + len, 1, cap - len - 1, f)) > 0) {
            len += got;
            if (cap - len - 1 == 0) {
                char *grown = cap < ((size_t) 1 << 30) ? realloc(text, cap * 2) : NULL;
                if (!grown) {
                    free(text);
                    text = NULL;
                    break;
                }
                text = grown;
                cap *= 2;
            }
        }
        fclose(f);
        if (!text) {
            fprintf(stderr, "%s: too large or out of memory\n", argv[i]);
            rc = 1;
            continue;
        }
        text[len] = '\0';
        printf("%zu\t%zu\t%s\n", token_estimate(text, len), len, argv[i]);
        free(text);
    }
    return rc;
}
