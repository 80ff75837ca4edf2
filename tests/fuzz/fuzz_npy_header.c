/*
 * fuzz_npy_header.c - the .npy header parser of the gpuhist command.
 *
 * The input is the start of a file. cli_npy_parse_header() must never read outside it, and when
 * it accepts a header: the data offset is the one cli_npy_header_size() announces and lies
 * inside the buffer, the dtype is a known one, and the same header parsed from a buffer holding
 * only the header gives the same answer (how a streaming reader calls it), while one byte less
 * is refused. Then the whole input goes through cli_read_input() from a temporary file, which
 * must accept it exactly when the header is good and the file holds count * size bytes of data,
 * and must return those samples (byte-swapped when the header says so).
 */
#include "cli.h"
#include "fuzz_common.h"

#include <unistd.h>

static char g_path[64];
static int g_fd = -1;

static void remove_temp(void)
{
    if (g_path[0])
        unlink(g_path);
}

/* The temporary file cli_read_input() reads, created once per process: in memory (/dev/shm)
 * where there is one, as rewriting a disk file for every input is a hundred times slower. */
static const char *temp_file(const uint8_t *data, size_t size)
{
    if (g_fd < 0) {
        const char *tmp = getenv("TMPDIR");
        const char *dirs[2] = {"/dev/shm", tmp && *tmp ? tmp : "/tmp"};
        for (int i = 0; i < 2 && g_fd < 0; ++i) {
            snprintf(g_path, sizeof g_path, "%.30s/gpuhist-fuzz-XXXXXX", dirs[i]);
            g_fd = mkstemp(g_path);
        }
        FUZZ_CHECK(g_fd >= 0);
        atexit(remove_temp);
    }
    FUZZ_CHECK(ftruncate(g_fd, 0) == 0);
    size_t done = 0;
    while (done < size) {
        ssize_t n = pwrite(g_fd, data + done, size - done, (off_t)done);
        FUZZ_CHECK(n > 0);
        done += (size_t)n;
    }
    return g_path;
}

static int same_info(const cli_npy_info *a, const cli_npy_info *b)
{
    return a->dtype == b->dtype && a->swap == b->swap && a->count == b->count &&
           a->count_overflow == b->count_overflow && a->data_offset == b->data_offset &&
           a->fortran == b->fortran && a->ndim == b->ndim && a->version == b->version &&
           strcmp(a->descr, b->descr) == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cli_npy_info info;
    const size_t announced = cli_npy_header_size(data, size);
    const int rc = cli_npy_parse_header("fuzz.npy", data, size, &info);
    FUZZ_CHECK(rc == CLI_EXIT_OK || rc == CLI_EXIT_FAIL);
    if (rc == CLI_EXIT_OK) {
        FUZZ_CHECK(announced == info.data_offset);
        FUZZ_CHECK(info.data_offset >= 10 && info.data_offset <= size);
        FUZZ_CHECK(info.version >= 1 && info.version <= 3);
        FUZZ_CHECK(gpuhist_dtype_size(info.dtype) > 0);
        FUZZ_CHECK(info.ndim >= 0);
        FUZZ_CHECK(memchr(info.descr, 0, sizeof info.descr) != NULL);
        /* The header alone is enough, and necessary. */
        cli_npy_info again;
        FUZZ_CHECK(cli_npy_parse_header("fuzz.npy", data, info.data_offset, &again) ==
                   CLI_EXIT_OK);
        FUZZ_CHECK(same_info(&info, &again));
        FUZZ_CHECK(cli_npy_parse_header("fuzz.npy", data, info.data_offset - 1, &again) ==
                   CLI_EXIT_FAIL);
    }

    /* The whole reader, with a channel count from the input's length (the Fortran-order rule
     * depends on it). */
    cli_read_options opt;
    memset(&opt, 0, sizeof opt);
    opt.path = temp_file(data, size);
    opt.format = CLI_IN_NPY;
    opt.channels = 1 + (uint32_t)(size % 3);
    cli_input in;
    const int read_rc = cli_read_input(&opt, &in);
    int expect_ok = rc == CLI_EXIT_OK && !(info.fortran && info.ndim > 1 && opt.channels > 1);
    size_t sample_size = 0;
    if (expect_ok) {
        sample_size = gpuhist_dtype_size(info.dtype);
        expect_ok = !info.count_overflow && info.count <= (size - info.data_offset) / sample_size;
    }
    FUZZ_CHECK((read_rc == CLI_EXIT_OK) == expect_ok);
    if (read_rc == CLI_EXIT_OK) {
        FUZZ_CHECK(in.format == CLI_IN_NPY);
        FUZZ_CHECK(in.dtype == info.dtype && in.samples == info.count);
        const uint8_t *file_data = data + info.data_offset;
        const uint8_t *got = in.data;
        for (uint64_t i = 0; i < in.samples && i < 64; ++i)
            for (size_t k = 0; k < sample_size; ++k) {
                size_t from = info.swap ? sample_size - 1 - k : k;
                FUZZ_CHECK(got[i * sample_size + k] == file_data[i * sample_size + from]);
            }
        cli_input_free(&in);
    }
    return 0;
}
