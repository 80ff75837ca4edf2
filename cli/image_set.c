/*
 * image_set.c - the image files of one run of the command: the paths (a directory's regular
 * files) checked for an image signature, and the threads that decode them ahead of the counting.
 *
 * Mechanism: the paths (files, directories expanded to their regular files sorted by name) are
 * checked for an image signature up front, so a stray file fails before anything is counted.
 * Up to 4 worker threads then decode whole files in order (a file is mapped, or read whole when
 * it is not a regular file, and handed to its format's library: image_png.c, image_jpeg.c,
 * image_tiff.c, image_pnm.c), at most `window` files ahead of the reader, which takes the pages
 * one by one while the next files decode: decoding overlaps the counting, and memory is a few
 * decoded files. Errors are reported in file order when the reader reaches the file, so the
 * message is the same on every run.
 * Limits: a page is at most CLI_IMAGE_MAX_PIXELS pixels and must fit in the memory available;
 * directories are not read recursively (a subdirectory is an error) and names starting with '.'
 * are left out; all pages of a run must have one sample type and channel count.
 */

#include "image.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_DECODERS 4

/* The first bytes of a regular file. @return how many were read, -1 when it cannot be read. */
static ssize_t read_head(const char *path, unsigned char *buf, size_t n)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t got = pread(fd, buf, n, 0);
    close(fd);
    return got;
}

int cli_image_path_is_image(const char *path)
{
    struct stat st;
    if (!path || strcmp(path, "-") == 0 || stat(path, &st) != 0)
        return 0;
    if (S_ISDIR(st.st_mode))
        return 1;
    if (!S_ISREG(st.st_mode))
        return 0;
    unsigned char head[16];
    ssize_t got = read_head(path, head, sizeof head);
    return got > 0 && cli_image_sniff(head, (size_t)got) != CLI_IMG_NONE;
}

/* ---- loading a file -------------------------------------------------------------------------- */

/* The whole file: mapped when regular, else read (standard input for "-"). *unmap says which.
 * @return CLI_EXIT_* (message in err). */
static int load_file(const char *path, const char *name, unsigned char **buf, size_t *len,
                     int *mapped, char *err, size_t errlen)
{
    int is_stdin = strcmp(path, "-") == 0;
    int fd = is_stdin ? 0 : open(path, O_RDONLY | O_CLOEXEC);
    *buf = NULL;
    *len = 0;
    *mapped = 0;
    if (fd < 0) {
        snprintf(err, errlen, "%s: %s", name, strerror(errno));
        return CLI_EXIT_FAIL;
    }
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
        void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m != MAP_FAILED) {
            if (!is_stdin)
                close(fd);
            *buf = m;
            *len = (size_t)st.st_size;
            *mapped = 1;
            return CLI_EXIT_OK;
        }
    }
    size_t cap = 1 << 16, n = 0;
    unsigned char *b = malloc(cap);
    for (;;) {
        if (!b) {
            snprintf(err, errlen, "%s: out of memory", name);
            break;
        }
        if (n == cap) {
            unsigned char *nb = realloc(b, cap * 2);
            if (!nb) {
                free(b);
                b = NULL;
                continue;
            }
            b = nb;
            cap *= 2;
        }
        ssize_t got = read(fd, b + n, cap - n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            snprintf(err, errlen, "%s: read error: %s", name, strerror(errno));
            free(b);
            b = NULL;
            break;
        }
        if (got == 0)
            break;
        n += (size_t)got;
    }
    if (!is_stdin)
        close(fd);
    if (!b)
        return CLI_EXIT_FAIL;
    *buf = b;
    *len = n;
    return CLI_EXIT_OK;
}

static void unload_file(unsigned char *buf, size_t len, int mapped)
{
    if (mapped)
        munmap(buf, len);
    else
        free(buf);
}

/* ---- the set ---------------------------------------------------------------------------------- */

typedef struct file_slot {
    int state; /* 0 free, 1 decoding, 2 done */
    int rc;
    char err[768];
    cli_image_pages pages;
    double bytes, seconds;
} file_slot;

struct cli_image_set {
    char **paths;            /* file paths in order */
    size_t nfiles;
    int threads;
    pthread_t tid[MAX_DECODERS];
    int running;             /* threads started */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    size_t next_claim;       /* the next file a worker takes */
    size_t current;          /* the file the reader holds (its slot is not reused) */
    size_t window;
    file_slot *slots;        /* window of them: file i in slots[i % window] */
    int stop;
    /* the reader */
    int holding;             /* the reader holds file `current` */
    size_t page;             /* the next page of it */
    int have_first;
    gpuhist_dtype dtype;
    uint32_t channels;
    char first_name[600];
    size_t pages_out;
    double bytes, decode_seconds;
    int kept;                /* one file: its pages are kept for a rewind */
};

static void *decoder_main(void *arg)
{
    cli_image_set *s = arg;
    pthread_mutex_lock(&s->mu);
    for (;;) {
        while (!s->stop && s->next_claim < s->nfiles && s->next_claim >= s->current + s->window)
            pthread_cond_wait(&s->cv, &s->mu);
        if (s->stop || s->next_claim >= s->nfiles)
            break;
        size_t i = s->next_claim++;
        file_slot *slot = &s->slots[i % s->window];
        slot->state = 1;
        pthread_mutex_unlock(&s->mu);

        double t0 = cli_now();
        const char *path = s->paths[i];
        const char *name = strcmp(path, "-") == 0 ? "standard input" : path;
        unsigned char *buf;
        size_t len;
        int mapped;
        cli_image_pages pages = {NULL, 0};
        char err[768] = "";
        int rc = load_file(path, name, &buf, &len, &mapped, err, sizeof err);
        if (rc == CLI_EXIT_OK) {
            rc = cli_decode_image(name, buf, len, &pages, err, sizeof err);
            unload_file(buf, len, mapped);
        }

        pthread_mutex_lock(&s->mu);
        slot->rc = rc;
        memcpy(slot->err, err, sizeof err);
        slot->pages = pages;
        slot->bytes = (double)len;
        slot->seconds = cli_now() - t0;
        slot->state = 2;
        pthread_cond_broadcast(&s->cv);
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

static void stop_decoders(cli_image_set *s)
{
    pthread_mutex_lock(&s->mu);
    s->stop = 1;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
    for (int t = 0; t < s->running; ++t)
        pthread_join(s->tid[t], NULL);
    s->running = 0;
    for (size_t i = 0; i < s->window; ++i) {
        cli_image_pages_free(&s->slots[i].pages);
        s->slots[i].state = 0;
    }
}

static int start_decoders(cli_image_set *s)
{
    s->stop = 0;
    s->next_claim = 0;
    s->current = 0;
    s->holding = 0;
    s->page = 0;
    s->pages_out = 0;
    for (int t = 0; t < s->threads; ++t) {
        if (pthread_create(&s->tid[t], NULL, decoder_main, s) != 0) {
            if (t == 0) {
                stop_decoders(s);
                return cli_error(CLI_EXIT_FAIL, "cannot start a thread to decode images");
            }
            break; /* fewer threads, still correct */
        }
        s->running = t + 1;
    }
    return CLI_EXIT_OK;
}

static int add_path(cli_image_set *s, size_t *cap, const char *path)
{
    if (s->nfiles == *cap) {
        size_t nc = *cap ? *cap * 2 : 16;
        char **np = realloc(s->paths, nc * sizeof *np);
        if (!np)
            return cli_error(CLI_EXIT_FAIL, "out of memory");
        s->paths = np;
        *cap = nc;
    }
    if (!(s->paths[s->nfiles] = strdup(path)))
        return cli_error(CLI_EXIT_FAIL, "out of memory");
    ++s->nfiles;
    return CLI_EXIT_OK;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A file of the set must carry an image signature (a format not built in is refused when its
 * turn comes, with the package to install). */
static int check_signature(const char *path)
{
    unsigned char head[16];
    ssize_t got = read_head(path, head, sizeof head);
    if (got < 0)
        return cli_error(CLI_EXIT_FAIL, "%s: %s", path, strerror(errno));
    if (got == 0)
        return cli_error(CLI_EXIT_FAIL, "%s: empty file, not an image", path);
    if (cli_image_sniff(head, (size_t)got) == CLI_IMG_NONE)
        return cli_error(CLI_EXIT_FAIL,
                         "%s: not an image (no PNG, JPEG, TIFF or PNM signature; --raw reads "
                         "raw samples)",
                         path);
    return CLI_EXIT_OK;
}

static int expand_directory(cli_image_set *s, size_t *cap, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return cli_error(CLI_EXIT_FAIL, "%s: %s", dir, strerror(errno));
    size_t first = s->nfiles;
    int rc = CLI_EXIT_OK;
    struct dirent *e;
    size_t dl = strlen(dir);
    while (rc == CLI_EXIT_OK && (e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue; /* ".", "..", hidden files */
        size_t n = dl + 1 + strlen(e->d_name) + 1;
        char *p = malloc(n);
        if (!p) {
            rc = cli_error(CLI_EXIT_FAIL, "out of memory");
            break;
        }
        snprintf(p, n, "%s%s%s", dir, dl && dir[dl - 1] == '/' ? "" : "/", e->d_name);
        struct stat st;
        if (stat(p, &st) != 0)
            rc = cli_error(CLI_EXIT_FAIL, "%s: %s", p, strerror(errno));
        else if (S_ISDIR(st.st_mode))
            rc = cli_error(CLI_EXIT_FAIL,
                           "%s: a directory inside %s (directories are not read recursively)", p,
                           dir);
        else if (!S_ISREG(st.st_mode))
            rc = cli_error(CLI_EXIT_FAIL, "%s: not a regular file", p);
        else
            rc = add_path(s, cap, p);
        free(p);
    }
    closedir(d);
    if (rc)
        return rc;
    qsort(s->paths + first, s->nfiles - first, sizeof *s->paths, by_name);
    size_t images = 0;
    for (size_t i = first; i < s->nfiles; ++i) {
        unsigned char head[16];
        ssize_t got = read_head(s->paths[i], head, sizeof head);
        images += got > 0 && cli_image_sniff(head, (size_t)got) != CLI_IMG_NONE;
    }
    if (images == 0)
        return cli_error(CLI_EXIT_FAIL,
                         "%s: is a directory with no image files (PNG, JPEG, TIFF, PNM)", dir);
    for (size_t i = first; i < s->nfiles; ++i)
        if ((rc = check_signature(s->paths[i])))
            return rc;
    return CLI_EXIT_OK;
}

int cli_image_set_open(const char *const *paths, size_t npaths, int threads, cli_image_set **out)
{
    *out = NULL;
    cli_image_set *s = calloc(1, sizeof *s);
    if (!s)
        return cli_error(CLI_EXIT_FAIL, "out of memory");
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    size_t cap = 0;
    int rc = CLI_EXIT_OK;
    for (size_t i = 0; rc == CLI_EXIT_OK && i < npaths; ++i) {
        struct stat st;
        if (strcmp(paths[i], "-") == 0)
            rc = add_path(s, &cap, "-");
        else if (stat(paths[i], &st) != 0)
            rc = cli_error(CLI_EXIT_FAIL, "%s: %s", paths[i], strerror(errno));
        else if (S_ISDIR(st.st_mode))
            rc = expand_directory(s, &cap, paths[i]);
        else if (S_ISREG(st.st_mode) && (rc = check_signature(paths[i])) != CLI_EXIT_OK)
            ;
        else
            rc = add_path(s, &cap, paths[i]);
    }
    if (rc == CLI_EXIT_OK && s->nfiles == 0)
        rc = cli_error(CLI_EXIT_USAGE, "no image files");
    if (rc) {
        cli_image_set_close(s);
        return rc;
    }
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int t = threads > 0 ? threads : (int)(cores > 0 ? cores : 1);
    if (t > MAX_DECODERS)
        t = MAX_DECODERS;
    if ((size_t)t > s->nfiles)
        t = (int)s->nfiles;
    s->threads = t;
    s->window = (size_t)t + 1; /* the file being read and one ahead per decoder */
    s->kept = s->nfiles == 1;
    s->slots = calloc(s->window, sizeof *s->slots);
    if (!s->slots) {
        cli_image_set_close(s);
        return cli_error(CLI_EXIT_FAIL, "out of memory");
    }
    if ((rc = start_decoders(s))) {
        cli_image_set_close(s);
        return rc;
    }
    *out = s;
    return CLI_EXIT_OK;
}

/* The reader is done with file `current`: free its slot (unless kept) and let the decoders on. */
static void release_current(cli_image_set *s)
{
    pthread_mutex_lock(&s->mu);
    file_slot *slot = &s->slots[s->current % s->window];
    if (!s->kept) {
        cli_image_pages_free(&slot->pages);
        slot->state = 0;
    }
    ++s->current;
    s->holding = 0;
    s->page = 0;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

int cli_image_set_next(cli_image_set *s, const cli_image **img)
{
    *img = NULL;
    for (;;) {
        if (s->holding) {
            file_slot *slot = &s->slots[s->current % s->window];
            if (s->page < slot->pages.count)
                break;
            release_current(s);
        }
        if (s->current >= s->nfiles)
            return CLI_EXIT_OK;
        pthread_mutex_lock(&s->mu);
        file_slot *slot = &s->slots[s->current % s->window];
        while (slot->state != 2)
            pthread_cond_wait(&s->cv, &s->mu);
        pthread_mutex_unlock(&s->mu);
        if (slot->rc) {
            stop_decoders(s);
            s->current = s->nfiles;
            return cli_error(slot->rc, "%s", slot->err);
        }
        if (!s->holding) {
            s->bytes += slot->bytes;
            s->decode_seconds += slot->seconds;
        }
        s->holding = 1;
        s->page = 0;
    }
    file_slot *slot = &s->slots[s->current % s->window];
    const cli_image *p = &slot->pages.page[s->page++];
    if (!s->have_first) {
        s->have_first = 1;
        s->dtype = p->dtype;
        s->channels = p->channels;
        snprintf(s->first_name, sizeof s->first_name, "%s", p->name);
    } else if (p->dtype != s->dtype || p->channels != s->channels) {
        int rc = cli_error(CLI_EXIT_FAIL,
                           "%s: %u channel(s) of %s, but %s has %u channel(s) of %s (all images "
                           "of a run must agree)",
                           p->name, p->channels, gpuhist_dtype_name(p->dtype), s->first_name,
                           s->channels, gpuhist_dtype_name(s->dtype));
        stop_decoders(s);
        s->current = s->nfiles;
        return rc;
    }
    ++s->pages_out;
    *img = p;
    return CLI_EXIT_OK;
}

int cli_image_set_rewind(cli_image_set *s)
{
    if (s->kept && s->current >= 1 && s->slots[0].state == 2 && s->slots[0].rc == 0) {
        s->current = 0;
        s->holding = 1;
        s->page = 0;
        s->pages_out = 0;
        return CLI_EXIT_OK;
    }
    stop_decoders(s);
    s->bytes = 0;
    s->decode_seconds = 0;
    return start_decoders(s);
}

size_t cli_image_set_files(const cli_image_set *s) { return s->nfiles; }
size_t cli_image_set_pages(const cli_image_set *s) { return s->pages_out; }
double cli_image_set_bytes(const cli_image_set *s) { return s->bytes; }
double cli_image_set_decode_seconds(const cli_image_set *s) { return s->decode_seconds; }
int cli_image_set_threads(const cli_image_set *s) { return s->threads; }

void cli_image_set_close(cli_image_set *s)
{
    if (!s)
        return;
    if (s->slots)
        stop_decoders(s);
    for (size_t i = 0; i < s->nfiles; ++i)
        free(s->paths[i]);
    free(s->paths);
    free(s->slots);
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv);
    free(s);
}
