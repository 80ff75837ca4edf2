/*
 * replay.c - main() for a fuzz harness built without libFuzzer: runs LLVMFuzzerTestOneInput
 * once on each file named on the command line, or on each file of a named directory (in name
 * order), so that every build checks the seed corpus. Each input is copied into a buffer of
 * exactly its size, as libFuzzer does, so that a sanitizer build catches reads beyond it.
 * Exit status: 0 when every input ran (a failed check aborts), 1 when an input cannot be read
 * or no input was found.
 */
#define _POSIX_C_SOURCE 200809L
#include "fuzz_common.h"

#include <dirent.h>
#include <sys/stat.h>

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: cannot open %s\n", path);
        return 0;
    }
    size_t cap = 4096, len = 0;
    unsigned char *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + len, 1, cap - len, f)) > 0) {
        len += got;
        if (len == cap) {
            unsigned char *nb = realloc(buf, cap *= 2);
            if (!nb)
                free(buf);
            buf = nb;
        }
    }
    int bad = !buf || ferror(f);
    fclose(f);
    if (bad) {
        fprintf(stderr, "replay: cannot read %s\n", path);
        free(buf);
        return 0;
    }
    /* Exactly `len` bytes (malloc(0) may return NULL: keep one byte then). */
    unsigned char *exact = malloc(len ? len : 1);
    if (!exact) {
        free(buf);
        return 0;
    }
    memcpy(exact, buf, len);
    free(buf);
    LLVMFuzzerTestOneInput(exact, len);
    free(exact);
    return 1;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
    unsigned long inputs = 0;
    for (int i = 1; i < argc; ++i) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "replay: no such file or directory: %s\n", argv[i]);
            return 1;
        }
        if (!S_ISDIR(st.st_mode)) {
            if (!run_file(argv[i]))
                return 1;
            ++inputs;
            continue;
        }
        DIR *d = opendir(argv[i]);
        if (!d) {
            fprintf(stderr, "replay: cannot open directory %s\n", argv[i]);
            return 1;
        }
        char **names = NULL;
        size_t n = 0, cap = 0;
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (e->d_name[0] == '.')
                continue;
            if (n == cap) {
                char **nn = realloc(names, (cap = cap ? 2 * cap : 64) * sizeof *names);
                if (!nn)
                    return 1;
                names = nn;
            }
            size_t l = strlen(argv[i]) + strlen(e->d_name) + 2;
            names[n] = malloc(l);
            if (!names[n])
                return 1;
            snprintf(names[n++], l, "%s/%s", argv[i], e->d_name);
        }
        closedir(d);
        qsort(names, n, sizeof *names, by_name);
        for (size_t k = 0; k < n; ++k) {
            if (!run_file(names[k]))
                return 1;
            ++inputs;
            free(names[k]);
        }
        free(names);
    }
    if (inputs == 0) {
        fprintf(stderr, "replay: no inputs\n");
        return 1;
    }
    printf("%s: %lu inputs replayed, all checks passed\n", argv[0], inputs);
    return 0;
}
