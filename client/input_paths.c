#include "input_paths.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct {
    char **items;
    size_t count, cap;
} s_list_t;

static int s_push(s_list_t *list, const char *path)
{
    if (list->count == list->cap) {
        size_t cap = list->cap ? 2 * list->cap : 16;
        char **items = realloc(list->items, cap * sizeof *items);
        if (!items)
            return -1;
        list->items = items;
        list->cap = cap;
    }
    if ((list->items[list->count] = strdup(path)) == NULL)
        return -1;
    list->count++;
    return 0;
}

static int s_by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *) a, *(char *const *) b);
}

/* Appends the regular files of folder `dir`, sorted by name. */
static int s_folder(s_list_t *list, const char *dir, char *why, size_t why_len)
{
    DIR *d = opendir(dir);
    if (!d) {
        snprintf(why, why_len, "%s: %s", dir, strerror(errno));
        return -1;
    }
    size_t first = list->count;
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char path[4096];
        int n = snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        if (n < 0 || (size_t) n >= sizeof path || stat(path, &st) != 0 || !S_ISREG(st.st_mode))
            continue; /* a name too long to open, gone, or not a file: not an input */
        if (list->count >= INPUT_PATHS_MAX) {
            snprintf(why, why_len, "%s: more than %d files in the folder; name the files", dir, INPUT_PATHS_MAX);
            rc = -1;
        } else if (s_push(list, path) != 0) {
            snprintf(why, why_len, "out of memory");
            rc = -1;
        }
    }
    closedir(d);
    if (rc == 0 && list->count == first) {
        snprintf(why, why_len, "%s: a folder with no file in it", dir);
        rc = -1;
    }
    if (rc == 0)
        qsort(list->items + first, list->count - first, sizeof *list->items, s_by_name);
    return rc;
}

int input_paths_expand(const char *const *in, size_t count, char ***out, size_t *out_count, char *why,
                     size_t why_len)
{
    s_list_t list = {0};
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < count; i++) {
        struct stat st;
        if (strcmp(in[i], "-") != 0 && stat(in[i], &st) == 0 && S_ISDIR(st.st_mode))
            rc = s_folder(&list, in[i], why, why_len);
        else if (s_push(&list, in[i]) != 0) {
            snprintf(why, why_len, "out of memory");
            rc = -1;
        }
    }
    if (rc != 0) {
        input_paths_free(&list.items, list.count);
        return -1;
    }
    *out = list.items;
    *out_count = list.count;
    return 0;
}

void input_paths_free(char ***paths, size_t count)
{
    if (!*paths)
        return;
    for (size_t i = 0; i < count; i++)
        free((*paths)[i]);
    free(*paths);
    *paths = NULL;
}
