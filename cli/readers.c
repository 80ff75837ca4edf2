/*
 * readers.c - input of the gpuhist command read whole: raw typed samples, .npy files (their
 * header: npy.c), text numbers (text.c); and the table of these formats (name, signature, file
 * name ending) that says which one an input is.
 *
 * The whole input goes into one host buffer and then into one gpuhist_histogram() call: the
 * library splits work for devices itself, and one call is what makes counts exact and the
 * reported time honest. Reading is done in large chunks (16 MiB) so a progress bar can be drawn
 * for big files; a regular file is read straight into a buffer of its size.
 *
 * Byte order: raw input is little-endian (swapped on a big-endian host). .npy files carry their
 * byte order in the dtype; big-endian arrays ('>i4', '>f8', ...) are byte-swapped after reading,
 * so any .npy NumPy writes with a supported dtype is read.
 */
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define CHUNK ((size_t)16 << 20)

static const char npy_magic[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};

static int is_stdin(const char *path)
{
    return path == NULL || strcmp(path, "-") == 0;
}

/* Give up a read that cli_slurp started: free the buffer, close the file (never stdin) and end
 * the progress bar, so the caller's message starts on a clean line. */
static void slurp_abandon(FILE *f, char *buf, cli_progress *bar)
{
    free(buf);
    if (f != stdin)
        fclose(f);
    cli_progress_end(bar);
}

static int slurp_read_error(FILE *f, char *buf, cli_progress *bar, const char *name)
{
    const int e = errno;
    slurp_abandon(f, buf, bar);
    return cli_error(CLI_EXIT_FAIL, "%s: read error: %s", name, e ? strerror(e) : "I/O error");
}

int cli_slurp(const char *path, const char *what, int progress, char **buf_out, size_t *len_out)
{
    const char *name = is_stdin(path) ? "standard input" : path;
    FILE *f = is_stdin(path) ? stdin : fopen(path, "rb");
    if (!f)
        return cli_error(CLI_EXIT_FAIL, "%s: cannot open: %s", name, strerror(errno));

    size_t cap = CHUNK;
    double total = 0;
    struct stat st;
    if (fstat(fileno(f), &st) == 0) {
        if (S_ISDIR(st.st_mode)) {
            if (f != stdin)
                fclose(f);
            return cli_error(CLI_EXIT_FAIL, "%s: is a directory", name);
        }
        if (S_ISREG(st.st_mode) && st.st_size > 0) {
            if ((unsigned long long)st.st_size >= (unsigned long long)SIZE_MAX) {
                if (f != stdin)
                    fclose(f);
                return cli_error(CLI_EXIT_FAIL, "%s: too large for this machine", name);
            }
            /* Exactly the file plus the NUL terminator, so big files are never copied. */
            cap = (size_t)st.st_size + 1;
            total = (double)st.st_size;
        }
    }

    char *buf = malloc(cap);
    if (!buf) {
        char sz[32];
        cli_format_bytes(sz, sizeof sz, (double)cap);
        if (f != stdin)
            fclose(f);
        return cli_error(CLI_EXIT_FAIL, "%s: out of memory reading %s (%s)", name, what, sz);
    }
    char label[96];
    snprintf(label, sizeof label, "reading %.60s", name);
    cli_progress bar;
    cli_progress_start(&bar, progress, label, total);

    size_t len = 0;
    for (;;) {
        if (cap - len < 2) {
            /* Full: at the end of a regular file of the size fstat gave, or a pipe. Look one
             * byte ahead so a file read exactly to its end is never copied into a bigger
             * buffer. */
            int c = fgetc(f);
            if (c == EOF) {
                if (ferror(f))
                    return slurp_read_error(f, buf, &bar, name);
                break;
            }
            ungetc(c, f);
            /* More data (a pipe, or a file that grew): double the buffer. */
            size_t ncap = cap * 2;
            char *nb = ncap > cap ? realloc(buf, ncap) : NULL;
            if (!nb) {
                slurp_abandon(f, buf, &bar);
                return cli_error(CLI_EXIT_FAIL, "%s: out of memory reading %s", name, what);
            }
            buf = nb;
            cap = ncap;
        }
        size_t want = cap - 1 - len;
        if (want > CHUNK)
            want = CHUNK;
        size_t got = fread(buf + len, 1, want, f);
        len += got;
        cli_progress_update(&bar, (double)len);
        if (got < want) {
            if (ferror(f))
                return slurp_read_error(f, buf, &bar, name);
            break; /* end of file */
        }
    }
    cli_progress_end(&bar);
    if (f != stdin)
        fclose(f);
    buf[len] = 0;
    *buf_out = buf;
    *len_out = len;
    return CLI_EXIT_OK;
}

static void swap_bytes(void *data, uint64_t n, size_t size)
{
    unsigned char *p = data;
    if (size < 2)
        return;
    for (uint64_t i = 0; i < n; ++i, p += size)
        for (size_t a = 0, b = size - 1; a < b; ++a, --b) {
            unsigned char t = p[a];
            p[a] = p[b];
            p[b] = t;
        }
}

int cli_size_error(const char *name, uint64_t bytes, gpuhist_dtype dtype, uint32_t channels)
{
    size_t size = gpuhist_dtype_size(dtype);
    if (channels <= 1)
        return cli_error(CLI_EXIT_FAIL,
                         "%s: size %llu bytes is not a multiple of the sample size %zu (%s; "
                         "choose the type with -t)",
                         name, (unsigned long long)bytes, size, gpuhist_dtype_name(dtype));
    return cli_error(CLI_EXIT_FAIL,
                     "%s: size %llu bytes is not a multiple of the pixel size %zu (%u channels "
                     "of %s)",
                     name, (unsigned long long)bytes, size * channels, channels,
                     gpuhist_dtype_name(dtype));
}

static int read_npy(const cli_read_options *opt, cli_input *in, char *buf, size_t len)
{
    const char *name = in->name;
    cli_npy_info h;
    int rc = cli_npy_parse_header(name, (const unsigned char *)buf, len, &h);
    if (rc || (rc = cli_npy_check(opt, name, &h, (uint64_t)(len - h.data_offset))))
        return rc;
    size_t size = gpuhist_dtype_size(h.dtype);
    /* Data after the array (np.save called repeatedly on one file) is ignored, as np.load does. */
    in->data = buf + h.data_offset;
    in->samples = h.count;
    in->dtype = h.dtype;
    if (h.swap)
        swap_bytes(in->data, in->samples, size);
    return CLI_EXIT_OK;
}

/* ---- the input ------------------------------------------------------------------------------- */


/* ---- the formats of samples --------------------------------------------------------------------- */

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* One row per format of samples: its name in messages and -v lines, its signature (the bytes a
 * file of it starts with; none for raw and text) and the file name ending that claims it even
 * without its signature (so that its header parser says what is wrong, rather than the bytes
 * being read as raw samples). A format is chosen by its option (--npy, --text, --raw) or found
 * here; raw when nothing claims the input. */
static const struct input_format {
    cli_input_format id;
    const char *name;
    const char *signature;
    size_t signature_len;
    const char *extension;
} input_formats[] = {
    {CLI_IN_NPY, ".npy", npy_magic, sizeof npy_magic, ".npy"},
    {CLI_IN_TEXT, "text", NULL, 0, NULL},
    {CLI_IN_RAW, "raw", NULL, 0, NULL},
};
#define N_INPUT_FORMATS (sizeof input_formats / sizeof input_formats[0])

const char *cli_input_format_name(cli_input_format f)
{
    for (size_t i = 0; i < N_INPUT_FORMATS; ++i)
        if (input_formats[i].id == f)
            return input_formats[i].name;
    return "raw";
}

int cli_input_format_signed(cli_input_format f, const unsigned char *head, size_t len)
{
    for (size_t i = 0; i < N_INPUT_FORMATS; ++i)
        if (input_formats[i].id == f && input_formats[i].signature)
            return len >= input_formats[i].signature_len &&
                   memcmp(head, input_formats[i].signature, input_formats[i].signature_len) == 0;
    return 0;
}

cli_input_format cli_input_format_detect(cli_input_format forced, const char *path,
                                         const unsigned char *head, size_t len)
{
    if (forced != CLI_IN_AUTO)
        return forced;
    for (size_t i = 0; i < N_INPUT_FORMATS; ++i)
        if (cli_input_format_signed(input_formats[i].id, head, len))
            return input_formats[i].id;
    for (size_t i = 0; i < N_INPUT_FORMATS; ++i)
        if (input_formats[i].extension && !is_stdin(path) &&
            ends_with(path, input_formats[i].extension))
            return input_formats[i].id;
    return CLI_IN_RAW;
}

/* ---- whole inputs -------------------------------------------------------------------------------- */

void cli_input_free(cli_input *in)
{
    free(in->block);
    in->block = NULL;
    in->data = NULL;
}

int cli_read_input(const cli_read_options *opt, cli_input *in)
{
    memset(in, 0, sizeof *in);
    snprintf(in->name, sizeof in->name, "%s", is_stdin(opt->path) ? "standard input" : opt->path);
    double t0 = cli_now();
    char *buf;
    size_t len;
    int rc = cli_slurp(opt->path, "the input", opt->progress, &buf, &len);
    if (rc)
        return rc;
    in->bytes_read = (double)len;

    /* named .npy but without the magic: the parser says so rather than junk being read */
    cli_input_format fmt =
        cli_input_format_detect(opt->format, opt->path, (const unsigned char *)buf, len);
    in->format = fmt;

    if (fmt == CLI_IN_NPY) {
        rc = read_npy(opt, in, buf, len);
        if (rc) {
            free(buf);
            return rc;
        }
        in->block = buf;
    } else if (fmt == CLI_IN_TEXT) {
        in->dtype = opt->have_type ? opt->type : GPUHIST_F64;
        void *vals;
        rc = cli_parse_text(in->name, buf, len, in->dtype, opt->progress, CLI_EXIT_FAIL, &vals,
                            &in->samples);
        free(buf);
        if (rc)
            return rc;
        in->block = in->data = vals;
    } else {
        in->dtype = opt->have_type ? opt->type : GPUHIST_U8;
        size_t size = gpuhist_dtype_size(in->dtype);
        size_t pixel = size * (opt->channels ? opt->channels : 1);
        if (len % pixel) {
            free(buf);
            return cli_size_error(in->name, len, in->dtype, opt->channels);
        }
        in->block = in->data = buf;
        in->samples = len / size;
        if (!cli_host_little_endian())
            swap_bytes(in->data, in->samples, size);
    }
    in->seconds = cli_now() - t0;
    return CLI_EXIT_OK;
}
