/*
 * source.c - the command's binary input (raw samples or .npy data) streamed through the
 * library in chunks, with bounded memory.
 *
 * Mechanism: regular files are read with pread() by several threads at once, each filling a
 * slice of a staging buffer lent by the stream (page-locked on CUDA), which is then submitted:
 * on CUDA the copy to the device and the counting run while the threads read the next chunk.
 * On the CPU backend a regular file is read by counting threads: each has a one-thread context
 * and stream of its own, claims 2 MiB pieces in turn, reads them with pread into its own buffer
 * and counts them while they are still in its L2 cache; the streams' results are added at the
 * end. A copy into cache costs about half the page-table work of mapping the page cache, and
 * no thread competes with the counting for the cores. The auto range's first pass works the
 * same way (512 KiB pieces, min and max). Histograms whose copies on every thread would take
 * more than COUNT_THREADS_MAX_BYTES, and weighted streams: the file is mapped window by window
 * and each window fed in place, the next one mapped by a second thread meanwhile.
 * Pipes and standard input are read with read() into the lent buffers; bytes of a pixel split
 * across reads are carried to the next chunk. Big-endian .npy data is byte-swapped in the
 * staging buffer.
 * Weights (--weights): a weighted stream takes no lent buffers, so its data is read into one
 * buffer of its own (or fed from the mapping in place); each piece of pixels is fed with its
 * weights, read in step from the weights file by weights.c.
 * A share (cli_stream_input_share, an MPI rank's range of pixels) only moves the start and the
 * size of the data: every reader above then reads that range alone.
 * The handover (a run that starts on the CPU while the device starts, hybrid.c): the counting
 * threads publish their shared cursor; a device that becomes ready exchanges it for a piece
 * number past the last one, so the threads claim nothing more and finish the pieces they hold,
 * and counts the pieces from the old cursor on with the pread reader above, into its own
 * stream. Only the cursor is shared; a forced split (tests) replaces it by a fixed piece.
 * Limits: memory is a few chunks (CHUNK_BYTES each) whatever the input size. A file that
 * shrinks while being read, or a read error, fails with a message and nothing is counted; a
 * mapped window of a file that shrinks while it is counted is guarded by a SIGBUS handler
 * (its missing pages read as zeros, noted, and the run fails).
 * Before a device's stream begins, cli_stream_prepare allocates its staging buffers and loads
 * its kernels, so that the timed read and count pays neither.
 */
#define _GNU_SOURCE
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define CHUNK_BYTES cli_chunk_bytes()
#define MAX_READERS 16
/* Staging buffers a device stream lends (GPUHIST_STREAM_SLOTS in the library). */
#define PREPARE_BUFFERS 4

typedef struct reader_slice {
    int fd;
    unsigned char *dst;
    uint64_t offset;
    size_t len;
    int err;      /* errno of a failed read */
    int short_read;
} reader_slice;

/* Fault injection for the tests: GPUHIST_FAULT_READ_AT=N makes the read covering byte N of the
 * file fail with EIO, as a failing disk would. */
static uint64_t g_fault_read_at = UINT64_MAX;

/* GPUHIST_FAULT_SHRINK_AT=N: when a reader reaches the part of the file holding byte N, the file
 * is cut to N bytes just before that part is read (or, mapped, counted), as another process
 * truncating it would. */
static uint64_t g_fault_shrink_at = UINT64_MAX;

static void fault_from_env(void)
{
    const char *fault = getenv("GPUHIST_FAULT_READ_AT");
    if (fault && *fault)
        g_fault_read_at = strtoull(fault, NULL, 10);
    fault = getenv("GPUHIST_FAULT_SHRINK_AT");
    if (fault && *fault)
        g_fault_shrink_at = strtoull(fault, NULL, 10);
}

/* GPUHIST_FAULT_SHRINK_AT: cut the file when [at, at + len) holds that byte. */
static void shrink_for_test(const char *path, uint64_t at, uint64_t len)
{
    if (g_fault_shrink_at < at || g_fault_shrink_at - at >= len)
        return;
    int fd = open(path, O_WRONLY);
    if (fd >= 0) {
        if (ftruncate(fd, (off_t)g_fault_shrink_at) != 0)
            perror("gpuhist: GPUHIST_FAULT_SHRINK_AT");
        close(fd);
    }
}

static void *read_slice(void *arg)
{
    reader_slice *s = arg;
    if (g_fault_read_at >= s->offset && g_fault_read_at - s->offset < s->len) {
        s->err = EIO;
        return NULL;
    }
    size_t done = 0;
    while (done < s->len) {
        ssize_t n = pread(s->fd, s->dst + done, s->len - done, (off_t)(s->offset + done));
        if (n < 0) {
            if (errno == EINTR)
                continue;
            s->err = errno;
            return NULL;
        }
        if (n == 0) {
            s->short_read = 1;
            return NULL;
        }
        done += (size_t)n;
    }
    return NULL;
}

/* Readers that stay for the whole input: each chunk is cut into one slice per reader, started
 * and collected with two barriers (a thread start per chunk cost as much as the reading). */
typedef struct reader_pool reader_pool;

typedef struct pool_seat {
    reader_pool *pool;
    int index;
} pool_seat;

struct reader_pool {
    int n; /* readers, the calling thread included */
    pthread_t tid[MAX_READERS];
    pthread_mutex_t gate; /* held while the pool is being built */
    pthread_barrier_t start, done;
    reader_slice s[MAX_READERS];
    pool_seat seat[MAX_READERS]; /* what each reader thread is given: its pool and slice */
    int quit;
};

static void *pool_worker(void *arg)
{
    pool_seat *seat = arg;
    reader_pool *p = seat->pool;
    /* the barriers exist, sized for the threads that did start, once the gate opens */
    pthread_mutex_lock(&p->gate);
    pthread_mutex_unlock(&p->gate);
    for (;;) {
        pthread_barrier_wait(&p->start);
        if (p->quit)
            return NULL;
        read_slice(&p->s[seat->index]);
        pthread_barrier_wait(&p->done);
    }
}

/* Start up to threads - 1 readers beside the calling thread (fewer if thread creation fails). */
static void pool_start(reader_pool *p, int threads)
{
    memset(p, 0, sizeof *p);
    int want = threads < 1 ? 1 : threads > MAX_READERS ? MAX_READERS : threads;
    p->n = 1;
    if (want == 1)
        return;
    pthread_mutex_init(&p->gate, NULL);
    pthread_mutex_lock(&p->gate);
    for (int i = 1; i < want; ++i) {
        p->seat[i] = (pool_seat){p, i};
        if (pthread_create(&p->tid[i], NULL, pool_worker, &p->seat[i]) != 0)
            break;
        p->n = i + 1;
    }
    pthread_barrier_init(&p->start, NULL, (unsigned)p->n);
    pthread_barrier_init(&p->done, NULL, (unsigned)p->n);
    pthread_mutex_unlock(&p->gate);
}

static void pool_stop(reader_pool *p)
{
    if (p->n <= 1)
        return;
    p->quit = 1;
    pthread_barrier_wait(&p->start);
    for (int i = 1; i < p->n; ++i)
        pthread_join(p->tid[i], NULL);
    pthread_barrier_destroy(&p->start);
    pthread_barrier_destroy(&p->done);
    pthread_mutex_destroy(&p->gate);
    p->n = 1;
}

/* Read [offset, offset + len) of fd into dst, a slice per reader. @return CLI_EXIT_*. */
static int pool_read(reader_pool *p, const char *name, int fd, unsigned char *dst,
                     uint64_t offset, size_t len)
{
    shrink_for_test(name, offset, len);
    size_t per = (len + (size_t)p->n - 1) / (size_t)p->n;
    per = (per + 4095u) & ~(size_t)4095u;
    for (int i = 0; i < p->n; ++i) {
        size_t at = (size_t)i * per < len ? (size_t)i * per : len;
        p->s[i] = (reader_slice){fd, dst + at, offset + at, len - at < per ? len - at : per, 0, 0};
    }
    if (p->n > 1)
        pthread_barrier_wait(&p->start);
    read_slice(&p->s[0]);
    if (p->n > 1)
        pthread_barrier_wait(&p->done);
    for (int i = 0; i < p->n; ++i) {
        if (p->s[i].err)
            return cli_error(CLI_EXIT_FAIL, "%s: read error: %s", name, strerror(p->s[i].err));
        if (p->s[i].short_read)
            return cli_error(CLI_EXIT_FAIL,
                             "%s: the file became shorter while being read (at byte %llu)", name,
                             (unsigned long long)p->s[i].offset);
    }
    return CLI_EXIT_OK;
}

/* One read of [offset, offset + len) by the calling thread. */
static int read_once(const char *name, int fd, unsigned char *dst, uint64_t offset, size_t len)
{
    reader_pool p;
    pool_start(&p, 1);
    return pool_read(&p, name, fd, dst, offset, len);
}

static void swap_samples(unsigned char *p, size_t bytes, size_t size)
{
    for (size_t i = 0; i + size <= bytes; i += size)
        for (size_t a = 0, b = size - 1; a < b; ++a, --b) {
            unsigned char t = p[i + a];
            p[i + a] = p[i + b];
            p[i + b] = t;
        }
}

static int stream_status(const char *name, gpuhist_stream *st)
{
    return cli_error(CLI_EXIT_FAIL, "%s: %s", name, gpuhist_stream_error(st));
}

/* CPU threads that read and count (or find the min and max): -j, else one per core; at most
 * MAX_CPU_THREADS. */
#define MAX_CPU_THREADS 256

static int cpu_threads_wanted(const cli_stream_input *in)
{
    long n = in->cpu_threads > 0 ? in->cpu_threads : sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > MAX_CPU_THREADS ? MAX_CPU_THREADS : (int)n;
}

/* Reader threads: one per core, at most MAX_READERS; GPUHIST_READERS overrides it for
 * measurements. */
static int threads_wanted(void)
{
    const char *e = getenv("GPUHIST_READERS");
    long n = e && *e ? strtol(e, NULL, 10) : sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > MAX_READERS ? MAX_READERS : (int)n;
}

/* A window of the file mapped read-only: bytes [at, at + len) at `data`. */
typedef struct window {
    void *map;
    size_t map_len;
    const unsigned char *data;
} window;

/* Map [at, at + len) of the file (the mapping starts on a page boundary), and check the file
 * still holds those bytes: a file that shrank would fault on access instead. */
static int map_window(const cli_stream_input *in, uint64_t at, uint64_t len, window *w)
{
    const uint64_t lead = at % (uint64_t)sysconf(_SC_PAGESIZE);
    w->map_len = (size_t)(len + lead);
    w->map = mmap(NULL, w->map_len, PROT_READ, MAP_SHARED | MAP_POPULATE, in->fd,
                  (off_t)(at - lead));
    if (w->map == MAP_FAILED)
        return cli_error(CLI_EXIT_FAIL, "%s: cannot map the file: %s", in->name, strerror(errno));
    w->data = (const unsigned char *)w->map + lead;
    struct stat sb;
    if (fstat(in->fd, &sb) != 0 || (uint64_t)sb.st_size < at + len) {
        munmap(w->map, w->map_len);
        return cli_error(CLI_EXIT_FAIL,
                         "%s: the file became shorter while being read (at byte %llu)", in->name,
                         (unsigned long long)at);
    }
    if (g_fault_read_at >= at && g_fault_read_at - at < len) {
        munmap(w->map, w->map_len);
        return cli_error(CLI_EXIT_FAIL, "%s: read error: %s", in->name, strerror(EIO));
    }
    return CLI_EXIT_OK;
}

/* A file that shrinks while a window of it is counted would raise SIGBUS at the first access
 * past its new end (on whichever thread touches it, the backend's included). While a window is
 * counted, a SIGBUS handler replaces a faulting page of that window with a page of zeros and
 * notes the fault; the window's count then fails the run ("became shorter"), so nothing counted
 * from those zeros is written. A SIGBUS anywhere else takes its default action. */
static struct {
    _Atomic uintptr_t lo, hi; /* the window being counted; empty: the handler takes nothing */
    uintptr_t page;           /* the page size, read before the handler is installed */
    atomic_int hit;           /* a page of the window faulted */
    struct sigaction old;
    int installed;
} g_bus;

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    const uintptr_t a = (uintptr_t)si->si_addr;
    if (a >= atomic_load(&g_bus.lo) && a < atomic_load(&g_bus.hi)) {
        void *page = (void *)(a & ~(g_bus.page - 1));
        if (mmap(page, g_bus.page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) !=
            MAP_FAILED) {
            atomic_store(&g_bus.hit, 1);
            return; /* the access is retried and reads zeros */
        }
    }
    signal(sig, SIG_DFL); /* not ours: the access faults again and takes the default action */
}

static void bus_guard_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigbus;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    g_bus.page = (uintptr_t)sysconf(_SC_PAGESIZE);
    atomic_store(&g_bus.lo, 0);
    atomic_store(&g_bus.hi, 0);
    atomic_store(&g_bus.hit, 0);
    g_bus.installed = sigaction(SIGBUS, &sa, &g_bus.old) == 0;
}

static void bus_guard_remove(void)
{
    atomic_store(&g_bus.hi, 0);
    atomic_store(&g_bus.lo, 0);
    if (g_bus.installed)
        sigaction(SIGBUS, &g_bus.old, NULL);
    g_bus.installed = 0;
}

/* Mapping the next window while the current one is counted: a thread maps (and populates)
 * [at, at + len) and keeps the status. */
typedef struct window_job {
    const cli_stream_input *in;
    uint64_t at, len;
    window w;
    int rc;
} window_job;

static void *map_window_job(void *arg)
{
    window_job *j = arg;
    j->rc = map_window(j->in, j->at, j->len, &j->w);
    return NULL;
}

/* Call fn(arg, data, bytes) on the file's data, window after window of at most `span` bytes
 * (rounded down to whole pixels), each mapped only while fn runs. The next window is mapped by
 * a second thread while fn runs on the current one: setting up the page tables of a mapping
 * costs about half as much as counting u8 data on two cores, and overlaps with it. */
static int each_window_guarded(const cli_stream_input *in, size_t span, cli_progress *bar,
                               int (*fn)(void *arg, const unsigned char *data, uint64_t bytes),
                               void *arg)
{
    span = span / in->pixel_bytes * in->pixel_bytes;
    window_job cur, next;
    pthread_t tid;
    int rc = CLI_EXIT_OK, pending = 0;
    uint64_t done = 0;
    if (in->data_bytes == 0)
        return CLI_EXIT_OK;
    cur = (window_job){in, in->data_offset, in->data_bytes < span ? in->data_bytes : span,
                       {NULL, 0, NULL}, 0};
    map_window_job(&cur);
    while (cur.rc == CLI_EXIT_OK) {
        const uint64_t after = done + cur.len;
        if (after < in->data_bytes) {
            uint64_t left = in->data_bytes - after;
            next = (window_job){in, in->data_offset + after, left < span ? left : span,
                                {NULL, 0, NULL}, 0};
            pending = pthread_create(&tid, NULL, map_window_job, &next) == 0;
            if (!pending)
                map_window_job(&next); /* no thread: mapped here, before this window is counted */
        }
        shrink_for_test(in->name, cur.at, cur.len);
        atomic_store(&g_bus.lo, (uintptr_t)cur.w.map);
        atomic_store(&g_bus.hi, (uintptr_t)cur.w.map + cur.w.map_len);
        rc = fn(arg, cur.w.data, cur.len);
        atomic_store(&g_bus.hi, 0);
        atomic_store(&g_bus.lo, 0);
        if (atomic_exchange(&g_bus.hit, 0) && rc == CLI_EXIT_OK)
            rc = cli_error(CLI_EXIT_FAIL,
                           "%s: the file became shorter while being read (at byte %llu)",
                           in->name, (unsigned long long)cur.at);
        munmap(cur.w.map, cur.w.map_len);
        if (pending) {
            pthread_join(tid, NULL);
            pending = 0;
        }
        done = after;
        if (bar)
            cli_progress_update(bar, (double)done);
        if (rc || done >= in->data_bytes) {
            if (done < in->data_bytes && next.rc == CLI_EXIT_OK)
                munmap(next.w.map, next.w.map_len);
            return rc;
        }
        cur = next;
    }
    return cur.rc;
}

/* each_window_guarded with the SIGBUS guard installed: a file that shrinks fails the run. */
static int each_window(const cli_stream_input *in, size_t span, cli_progress *bar,
                       int (*fn)(void *arg, const unsigned char *data, uint64_t bytes),
                       void *arg)
{
    bus_guard_install();
    const int rc = each_window_guarded(in, span, bar, fn, arg);
    bus_guard_remove();
    return rc;
}

/* Count `pixels` whole pixels at `data`; a weighted stream gets their weights with them. */
static int feed_pixels(const cli_stream_input *in, gpuhist_stream *st, const void *data,
                       uint64_t pixels)
{
    if (in->weights)
        return cli_weights_feed(in->weights, st, data, pixels, in->pixel_bytes, in->name);
    if (gpuhist_stream_feed(st, data, pixels) != GPUHIST_OK)
        return stream_status(in->name, st);
    return CLI_EXIT_OK;
}

/* Staging buffers of `bytes`: lent by the stream, or `own` (the caller's one buffer) for a
 * weighted stream, which takes no lent buffers. */
static int take_buffer(const cli_stream_input *in, gpuhist_stream *st, size_t bytes,
                       unsigned char *own, unsigned char **buf)
{
    void *b = own;
    if (!own && gpuhist_stream_buffer(st, bytes, &b) != GPUHIST_OK)
        return stream_status(in->name, st);
    *buf = b;
    return CLI_EXIT_OK;
}

/* Count the first `pixels` pixels of a buffer from take_buffer (0: only hand it back). */
static int give_buffer(const cli_stream_input *in, gpuhist_stream *st, unsigned char *own,
                       unsigned char *buf, uint64_t pixels)
{
    if (own)
        return pixels ? feed_pixels(in, st, buf, pixels) : CLI_EXIT_OK;
    if (gpuhist_stream_submit(st, buf, pixels) != GPUHIST_OK)
        return stream_status(in->name, st);
    return CLI_EXIT_OK;
}

/* The own staging buffer of a weighted stream; NULL (lent buffers) for an unweighted one.
 * @return CLI_EXIT_*. */
static int own_buffer(const cli_stream_input *in, size_t bytes, unsigned char **own)
{
    *own = NULL;
    if (in->weights && !(*own = malloc(bytes)))
        return cli_error(CLI_EXIT_FAIL, "%s: out of memory for a staging buffer", in->name);
    return CLI_EXIT_OK;
}

typedef struct feed_job {
    const cli_stream_input *in;
    gpuhist_stream *st;
} feed_job;

static int feed_window(void *arg, const unsigned char *data, uint64_t bytes)
{
    feed_job *j = arg;
    return feed_pixels(j->in, j->st, data, bytes / j->in->pixel_bytes);
}

/* A regular file on the CPU backend: windows of the mapping fed in place. Windows of four chunks:
 * the mapped pages count as resident (two windows at a time), and each feed starts the
 * counting threads once. */
static int feed_mapped(const cli_stream_input *in, gpuhist_stream *st, cli_progress *bar)
{
    feed_job j = {in, st};
    return each_window(in, CHUNK_BYTES * 4, bar, feed_window, &j);
}

/* ---- counting threads (the CPU backend) ----------------------------------------------------- */

typedef struct count_job {
    cli_stream_input *in;
    size_t piece;              /* bytes of a piece, whole pixels */
    uint64_t pieces;           /* pieces of the data */
    uint64_t cpu_pieces;       /* the threads claim pieces below this one (a forced handover) */
    atomic_uint_fast64_t next; /* the next piece to claim (a device taking over sets it past the
                                  last piece: cli_handover_take) */
    atomic_uint_fast64_t done; /* bytes counted, for the progress bar */
    atomic_int stop;           /* a thread failed: the others claim no more */
    cli_progress *bar;         /* drawn by the calling thread only */
    int hold;                  /* tests: the handover's hold_at applies */
} count_job;

/* ---- the handover to a device ------------------------------------------------------------------ */

/* States of a handover: no counting yet, the threads counting (the cursor may be taken), closed. */
enum { HANDOVER_IDLE, HANDOVER_COUNTING, HANDOVER_CLOSED };

struct cli_handover {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int state;
    uint64_t forced_split;    /* UINT64_MAX: the device takes the cursor when it is ready */
    uint64_t hold_at;         /* tests: the threads claim no piece from this one on until the
                                 device took the cursor or gave up (UINT64_MAX: never hold) */
    int released;             /* the device took the cursor or gave up: nobody holds */
    count_job *job;           /* while COUNTING: the threads' job (its cursor) */
    cli_stream_input in;      /* while COUNTING: a copy of the input */
    gpuhist_samples layout;   /* and of its layout and bins */
    gpuhist_bin_spec spec;
    size_t piece;             /* the job's piece (bytes) */
    int taken;                /* the device took pieces [split, pieces) */
    uint64_t split;
};

cli_handover *cli_handover_new(uint64_t forced_split, uint64_t hold_at)
{
    cli_handover *h = calloc(1, sizeof *h);
    if (!h)
        return NULL;
    pthread_mutex_init(&h->mu, NULL);
    pthread_cond_init(&h->cv, NULL);
    h->state = HANDOVER_IDLE;
    h->forced_split = forced_split;
    h->hold_at = hold_at;
    return h;
}

void cli_handover_release(cli_handover *h)
{
    pthread_mutex_lock(&h->mu);
    h->released = 1;
    pthread_cond_broadcast(&h->cv);
    pthread_mutex_unlock(&h->mu);
}

/* Tests (hold_at): a counting thread about to claim piece hold_at or later waits until the
 * device has taken the cursor or given up, so that the device takes it while the threads are
 * still counting. */
static void handover_hold(cli_handover *h, count_job *j)
{
    pthread_mutex_lock(&h->mu);
    while (!h->released && h->state == HANDOVER_COUNTING &&
           atomic_load(&j->next) >= h->hold_at)
        pthread_cond_wait(&h->cv, &h->mu);
    pthread_mutex_unlock(&h->mu);
}

void cli_handover_free(cli_handover *h)
{
    if (!h)
        return;
    pthread_mutex_destroy(&h->mu);
    pthread_cond_destroy(&h->cv);
    free(h);
}

/* The threads start counting: the device may take the cursor from now on. With a forced split
 * the tail is the device's from the start (it counts it once ready, whenever that is). */
static void handover_post(cli_handover *h, count_job *j)
{
    pthread_mutex_lock(&h->mu);
    if (h->state == HANDOVER_IDLE) {
        h->job = j;
        h->piece = j->piece;
        h->in = *j->in;
        h->layout = *j->in->layout;
        h->spec = *j->in->spec;
        h->in.layout = &h->layout;
        h->in.spec = &h->spec;
        h->in.handover = NULL;
        h->in.side_counts = NULL;
        h->state = HANDOVER_COUNTING;
        if (h->forced_split != UINT64_MAX && h->forced_split < j->pieces) {
            h->taken = 1;
            h->split = h->forced_split;
        }
        pthread_cond_broadcast(&h->cv);
    }
    pthread_mutex_unlock(&h->mu);
}

int cli_handover_wait(cli_handover *h, cli_stream_input *in, gpuhist_samples *layout,
                      gpuhist_bin_spec *spec)
{
    pthread_mutex_lock(&h->mu);
    while (h->state == HANDOVER_IDLE)
        pthread_cond_wait(&h->cv, &h->mu);
    /* a forced split's tail is the device's even when the threads are done first */
    const int counting = h->state == HANDOVER_COUNTING || h->taken;
    if (counting) {
        *in = h->in;
        *layout = h->layout;
        *spec = h->spec;
        in->layout = NULL;
        in->spec = NULL;
    }
    pthread_mutex_unlock(&h->mu);
    return counting;
}

int cli_handover_take(cli_handover *h, cli_stream_input *tail)
{
    pthread_mutex_lock(&h->mu);
    if (h->state == HANDOVER_COUNTING && h->forced_split == UINT64_MAX) {
        /* Every later claim gets a piece number past the last one: the threads stop claiming
         * and finish the pieces they hold; the pieces from the old cursor on are the device's. */
        count_job *j = h->job;
        uint64_t split = atomic_exchange(&j->next, j->pieces);
        if (split < j->pieces) {
            h->taken = 1;
            h->split = split;
        }
        h->released = 1;
        pthread_cond_broadcast(&h->cv);
    }
    const int took = h->state != HANDOVER_IDLE && h->taken;
    if (took) {
        const uint64_t from = h->split * h->piece;
        *tail = h->in;
        tail->layout = NULL;
        tail->spec = NULL;
        tail->data_offset += from;
        tail->data_bytes -= from;
    }
    pthread_mutex_unlock(&h->mu);
    return took;
}

int cli_handover_close(cli_handover *h, uint64_t *from)
{
    pthread_mutex_lock(&h->mu);
    const int took = h->state != HANDOVER_IDLE && h->taken;
    if (took && from)
        *from = h->split * h->piece;
    h->state = HANDOVER_CLOSED;
    h->job = NULL;
    pthread_cond_broadcast(&h->cv);
    pthread_mutex_unlock(&h->mu);
    return took;
}

typedef struct count_seat {
    count_job *job;
    int first;                 /* the calling thread (draws the bar) */
    gpuhist_ctx *ctx;
    gpuhist_stream *st;
    uint64_t failed_at;        /* the first byte of the failed piece (UINT64_MAX: none) */
    char msg[1024];
} count_seat;

static void count_fail(count_seat *s, uint64_t at)
{
    s->failed_at = at;
    atomic_store(&s->job->stop, 1);
}

/* A counting thread: a one-thread CPU context and a stream of its own; pieces claimed in turn
 * (a thread slowed by another process takes fewer), each read with pread into the thread's own
 * buffer and fed to its stream while still in cache. */
static void *count_run(void *arg)
{
    count_seat *s = arg;
    count_job *j = s->job;
    cli_stream_input *in = j->in;
    unsigned char *buf = malloc(j->piece);
    if (!buf) {
        snprintf(s->msg, sizeof s->msg, "%s: out of memory for a read buffer", in->name);
        count_fail(s, 0);
        return NULL;
    }
    if (gpuhist_create(&s->ctx, GPUHIST_BACKEND_CPU) != GPUHIST_OK ||
        gpuhist_set_threads(s->ctx, 1) != GPUHIST_OK ||
        (in->strategy && strcmp(in->strategy, "auto") != 0 &&
         gpuhist_set_strategy(s->ctx, in->strategy) != GPUHIST_OK) ||
        gpuhist_stream_begin(s->ctx, in->layout, in->spec, GPUHIST_MEMORY_HOST, &s->st) !=
            GPUHIST_OK) {
        snprintf(s->msg, sizeof s->msg, "%s: %.400s", in->name, gpuhist_last_error(s->ctx));
        count_fail(s, 0);
        free(buf);
        return NULL;
    }
    while (!atomic_load(&j->stop)) {
        if (j->hold)
            handover_hold(in->handover, j);
        const uint64_t k = atomic_fetch_add(&j->next, 1);
        if (k >= j->cpu_pieces)
            break;
        const uint64_t at = k * j->piece;
        const uint64_t left = in->data_bytes - at;
        const size_t len = left < j->piece ? (size_t)left : j->piece;
        shrink_for_test(in->name, in->data_offset + at, len);
        reader_slice r = {in->fd, buf, in->data_offset + at, len, 0, 0};
        read_slice(&r);
        if (r.err) {
            snprintf(s->msg, sizeof s->msg, "%s: read error: %s", in->name, strerror(r.err));
            count_fail(s, at);
            break;
        }
        if (r.short_read) {
            snprintf(s->msg, sizeof s->msg,
                     "%s: the file became shorter while being read (at byte %llu)", in->name,
                     (unsigned long long)(in->data_offset + at));
            count_fail(s, at);
            break;
        }
        if (gpuhist_stream_feed(s->st, buf, len / in->pixel_bytes) != GPUHIST_OK) {
            snprintf(s->msg, sizeof s->msg, "%s: %.400s", in->name, gpuhist_stream_error(s->st));
            count_fail(s, at);
            break;
        }
        const uint64_t done = atomic_fetch_add(&j->done, len) + len;
        if (s->first)
            cli_progress_update(j->bar, (double)done);
    }
    free(buf);
    return NULL;
}

/* Bytes of a piece: 2 MiB, which stays in a core's L2 cache until it is counted (a smaller
 * GPUHIST_CHUNK_MIB for the tests; all threads' pieces together at most 128 MiB). */
static size_t count_piece(const cli_stream_input *in, int threads)
{
    size_t piece = CHUNK_BYTES < ((size_t)2 << 20) ? CHUNK_BYTES : (size_t)2 << 20;
    if (piece * (size_t)threads > ((size_t)128 << 20))
        piece = ((size_t)128 << 20) / (size_t)threads;
    piece = piece / in->pixel_bytes * in->pixel_bytes;
    return piece ? piece : in->pixel_bytes;
}

/* The counting threads each keep the whole histogram in a context of their own: 64-bit counters
 * and cpu-serial's 32-bit sub-counters, 12 bytes an entry, which stay unflushed from one piece to
 * the next (cpu_kernels.h), so a 2 MiB piece pays no pass over 2^20 counters. Histograms whose
 * copies on every thread would take more than this stay on the mapped path (f32 with 2^20 bins
 * on 2 cores: 0.16-0.21 s on the threads against 0.28-0.30 s mapped, docs/PERFORMANCE.md). */
#define COUNT_THREADS_MAX_BYTES ((uint64_t)256 << 20)

/* A regular file on the CPU backend: counted by threads that each read pieces into a buffer of
 * their own and count them there (reading by copy into cache costs about half the page-table
 * work of mapping, and the counting then reads the cache), into streams of their own, whose
 * results are added into in->side. @return CLI_EXIT_*. */
static int feed_threads(cli_stream_input *in, cli_progress *bar)
{
    count_job j;
    memset(&j, 0, sizeof j);
    j.in = in;
    j.bar = bar;
    int threads = cpu_threads_wanted(in);
    j.piece = count_piece(in, threads);
    j.pieces = (in->data_bytes + j.piece - 1) / j.piece;
    j.cpu_pieces = j.pieces;
    uint64_t forced = UINT64_MAX;
    if (in->handover) {
        pthread_mutex_lock(&in->handover->mu);
        forced = in->handover->forced_split;
        j.hold = in->handover->hold_at != UINT64_MAX;
        pthread_mutex_unlock(&in->handover->mu);
    }
    if (forced < j.cpu_pieces)
        j.cpu_pieces = forced;
    if ((uint64_t)threads > j.cpu_pieces)
        threads = j.cpu_pieces ? (int)j.cpu_pieces : 1;
    atomic_init(&j.next, 0);
    atomic_init(&j.done, 0);
    atomic_init(&j.stop, 0);
    if (in->handover)
        handover_post(in->handover, &j);
    count_seat *seat = calloc((size_t)threads, sizeof *seat);
    pthread_t *tid = calloc((size_t)threads, sizeof *tid);
    int *started = calloc((size_t)threads, sizeof *started);
    if (!seat || !tid || !started) {
        free(seat), free(tid), free(started);
        return cli_error(CLI_EXIT_FAIL, "%s: out of memory for the counting threads", in->name);
    }
    for (int t = 0; t < threads; ++t)
        seat[t] = (count_seat){&j, t == 0, NULL, NULL, UINT64_MAX, ""};
    for (int t = 1; t < threads; ++t)
        started[t] = pthread_create(&tid[t], NULL, count_run, &seat[t]) == 0;
    count_run(&seat[0]); /* threads that did not start leave their pieces to the others */
    const count_seat *failed = NULL;
    for (int t = 1; t < threads; ++t)
        if (started[t])
            pthread_join(tid[t], NULL);
    /* every piece is counted or the device's: the job (its cursor) goes away */
    if (in->handover)
        cli_handover_close(in->handover, NULL);
    for (int t = 0; t < threads; ++t)
        if ((t == 0 || started[t]) && seat[t].failed_at != UINT64_MAX &&
            (!failed || seat[t].failed_at < failed->failed_at))
            failed = &seat[t];
    int rc = CLI_EXIT_OK;
    if (failed) /* the failure nearest the start, as a reading in order would meet it */
        rc = cli_error(CLI_EXIT_FAIL, "%s", failed->msg);
    const size_t n = (size_t)in->spec->bins * in->layout->active_channels;
    if (rc == CLI_EXIT_OK && !(in->side_counts = calloc(n ? n : 1, sizeof *in->side_counts)))
        rc = cli_error(CLI_EXIT_FAIL, "%s: out of memory for the counts", in->name);
    if (rc == CLI_EXIT_OK) {
        in->side = gpuhist_result_host(in->side_counts);
        in->side.accumulate = 1;
    }
    for (int t = 0; t < threads; ++t) {
        if (seat[t].st && rc == CLI_EXIT_OK) {
            if (gpuhist_stream_finish(seat[t].st, &in->side) != GPUHIST_OK)
                rc = cli_error(CLI_EXIT_FAIL, "%s: %s", in->name, gpuhist_last_error(seat[t].ctx));
        } else if (seat[t].st) {
            gpuhist_stream_abort(seat[t].st);
        }
        if (seat[t].ctx)
            gpuhist_destroy(seat[t].ctx);
    }
    if (rc != CLI_EXIT_OK) {
        free(in->side_counts);
        in->side_counts = NULL;
    }
    free(seat), free(tid), free(started);
    return rc;
}

uint32_t cli_stream_input_histograms(const cli_stream_input *in)
{
    const gpuhist_samples *l = in->layout;
    if (l->channel_mask)
        return (uint32_t)__builtin_popcount(l->channel_mask);
    return l->active_channels ? l->active_channels : l->channels ? l->channels : 1u;
}

int cli_stream_input_on_threads(const cli_stream_input *in)
{
    if (!(in->is_regular && !in->swap && !in->weights && in->layout && in->spec &&
          in->spec->bins))
        return 0;
    const uint64_t entries = ((uint64_t)in->spec->bins + 3u) * cli_stream_input_histograms(in);
    return entries * 12u * (uint64_t)cpu_threads_wanted(in) <= COUNT_THREADS_MAX_BYTES;
}

void cli_stream_input_add_side(cli_stream_input *in, gpuhist_result *r)
{
    if (!in->side_counts)
        return;
    const size_t n = (size_t)r->bins * r->channels;
    for (size_t i = 0; i < n; ++i)
        r->counts[i] += in->side_counts[i];
    for (uint32_t k = 0; k < r->channels; ++k) {
        r->underflow[k] += in->side.underflow[k];
        r->overflow[k] += in->side.overflow[k];
        r->nan[k] += in->side.nan[k];
        r->total[k] += in->side.total[k];
    }
    free(in->side_counts);
    in->side_counts = NULL;
}

/* A regular file: parallel pread into lent staging buffers (a weighted stream: into one buffer
 * of its own). */
static int feed_pread(const cli_stream_input *in, gpuhist_stream *st, cli_progress *bar)
{
    const size_t pb = in->pixel_bytes;
    size_t chunk = CHUNK_BYTES / pb * pb;
    unsigned char *own;
    int rc = own_buffer(in, chunk, &own);
    if (rc)
        return rc;
    reader_pool pool;
    pool_start(&pool, threads_wanted());
    uint64_t done = 0;
    while (done < in->data_bytes && rc == CLI_EXIT_OK) {
        size_t want = in->data_bytes - done < chunk ? (size_t)(in->data_bytes - done) : chunk;
        unsigned char *buf = NULL;
        if ((rc = take_buffer(in, st, chunk, own, &buf)))
            break;
        rc = pool_read(&pool, in->name, in->fd, buf, in->data_offset + done, want);
        if (rc) {
            give_buffer(in, st, own, buf, 0);
            break;
        }
        if (in->swap)
            swap_samples(buf, want, in->sample_size);
        rc = give_buffer(in, st, own, buf, want / pb);
        done += want;
        cli_progress_update(bar, (double)done);
    }
    pool_stop(&pool);
    free(own);
    return rc;
}

/* A pipe: read() until each buffer is full; a partial pixel moves to the next buffer. Bytes
 * sniffed by cli_stream_input_open come first; a .npy pipe ends after its data_bytes (trailing
 * bytes are ignored, as in a file) and fails when it ends before. `own`: as for take_buffer. */
static int feed_pipe_into(cli_stream_input *in, gpuhist_stream *st, cli_progress *bar,
                          size_t chunk, unsigned char *own)
{
    const size_t pb = in->pixel_bytes;
    unsigned char carry[64];
    size_t ncarry = in->nprefix;
    memcpy(carry, in->prefix, in->nprefix); /* fewer than 16 bytes: within carry */
    const uint64_t limit = in->bounded ? in->data_bytes : UINT64_MAX;
    uint64_t total = 0;
    int eof = 0;
    while (!eof && total < limit) {
        unsigned char *buf = NULL;
        int rc = take_buffer(in, st, chunk, own, &buf);
        if (rc)
            return rc;
        size_t have = ncarry, room = chunk;
        if (limit - total < room)
            room = (size_t)(limit - total);
        memcpy(buf, carry, ncarry);
        ssize_t n = have < room ? cli_read_full(in->fd, buf + have, room - have, &eof) : 0;
        if (n < 0) {
            int e = errno;
            give_buffer(in, st, own, buf, 0);
            return cli_error(CLI_EXIT_FAIL, "%s: read error: %s", in->name, strerror(e));
        }
        have += (size_t)n;
        size_t whole = have / pb * pb;
        ncarry = have - whole;
        memcpy(carry, buf + whole, ncarry);
        total += whole;
        if (in->swap)
            swap_samples(buf, whole, in->sample_size);
        if ((rc = give_buffer(in, st, own, buf, whole / pb)))
            return rc;
        cli_progress_update(bar, (double)total);
        if (whole == 0 && !eof && have >= room)
            break; /* the bound left less than a pixel: reported below */
    }
    if (in->bounded && total + ncarry < limit)
        return cli_error(CLI_EXIT_FAIL,
                         "%s: truncated .npy: the header's shape needs %llu bytes of data, the "
                         "input has %llu",
                         in->name, (unsigned long long)limit,
                         (unsigned long long)(total + ncarry));
    if (!in->bounded)
        in->data_bytes = total + ncarry;
    if (ncarry)
        return cli_size_error(in->name, total + ncarry, in->dtype,
                              (uint32_t)(in->pixel_bytes / in->sample_size));
    return CLI_EXIT_OK;
}

static int feed_pipe(cli_stream_input *in, gpuhist_stream *st, cli_progress *bar)
{
    const size_t pb = in->pixel_bytes;
    size_t chunk = CHUNK_BYTES / pb * pb + pb; /* room for a carried partial pixel */
    unsigned char *own;
    int rc = own_buffer(in, chunk, &own);
    if (rc == CLI_EXIT_OK)
        rc = feed_pipe_into(in, st, bar, chunk, own);
    free(own);
    return rc;
}

int cli_stream_input_count_tail(const cli_stream_input *tail, gpuhist_stream *st)
{
    cli_progress bar;
    cli_progress_start(&bar, 0, "reading", 0.0);
    int rc = feed_pread(tail, st, &bar);
    cli_progress_end(&bar);
    return rc;
}

/* ---- preparing a device's stream ----------------------------------------------------------- */

int cli_stream_prepare(gpuhist_ctx *ctx, const cli_stream_input *in,
                       const gpuhist_samples *layout, const gpuhist_bin_spec *spec,
                       double *seconds)
{
    const double t0 = cli_now();
    *seconds = 0;
    if (!in->pixel_bytes || layout->weights || in->format == CLI_IN_TEXT ||
        gpuhist_context_backend(ctx) == GPUHIST_BACKEND_CPU ||
        gpuhist_context_device_count(ctx) != 1)
        return 0;
    const size_t pb = in->pixel_bytes;
    /* the buffer sizes the feeds ask for: feed_pread's chunk, feed_pipe's with room for a
     * carried pixel */
    const size_t chunk = CHUNK_BYTES / pb * pb + (in->is_regular ? 0 : pb);
    const uint64_t data = in->is_regular ? in->data_bytes : UINT64_MAX;
    const uint64_t chunks = in->is_regular ? (data + chunk - 1) / chunk : PREPARE_BUFFERS;
    const size_t first = data < chunk ? (size_t)data / pb * pb : chunk / pb * pb;
    const size_t n = (size_t)spec->bins * layout->active_channels;
    uint64_t *counts = calloc(n ? n : 1, sizeof *counts);
    gpuhist_stream *gs = NULL;
    if (!counts || gpuhist_stream_begin(ctx, layout, spec, GPUHIST_MEMORY_HOST, &gs) != GPUHIST_OK) {
        free(counts);
        return 0;
    }
    void *buf[PREPARE_BUFFERS];
    int lent = 0, ok = 1;
    while (lent < PREPARE_BUFFERS && (uint64_t)lent < chunks &&
           (ok = gpuhist_stream_buffer(gs, chunk, &buf[lent]) == GPUHIST_OK))
        ++lent;
    /* the first buffer a whole first chunk (the kernels that chunk runs), the others a pixel
     * each (their copy's event and the copy made once) */
    for (int i = 0; ok && i < lent; ++i)
        memset(buf[i], 0, i == 0 ? first : pb);
    for (int i = 0; i < lent; ++i) {
        const uint64_t pixels = !ok ? 0 : i == 0 ? first / pb : first ? 1 : 0;
        if (gpuhist_stream_submit(gs, buf[i], pixels) != GPUHIST_OK)
            ok = 0;
    }
    gpuhist_result r = gpuhist_result_host(counts);
    if (ok)
        ok = gpuhist_stream_finish(gs, &r) == GPUHIST_OK;
    else
        gpuhist_stream_abort(gs);
    free(counts);
    *seconds = cli_now() - t0;
    return ok;
}

/* ---- text ----------------------------------------------------------------------------------- */

/* Parsed values that do not fill a whole pixel wait here for the next block. */
typedef struct text_feed {
    cli_stream_input *in;
    gpuhist_stream *st;
    unsigned char carry[8 * 64];
    size_t ncarry; /* samples */
    uint64_t samples;
} text_feed;

static int feed_values(text_feed *t, const unsigned char *vals, uint64_t n)
{
    const size_t size = t->in->sample_size, per = t->in->pixel_bytes / size;
    int rc;
    if (t->ncarry) { /* complete the carried pixel first */
        size_t take = per - t->ncarry < n ? per - t->ncarry : (size_t)n;
        memcpy(t->carry + t->ncarry * size, vals, take * size);
        t->ncarry += take;
        vals += take * size;
        n -= take;
        if (t->ncarry < per)
            return CLI_EXIT_OK;
        if ((rc = feed_pixels(t->in, t->st, t->carry, 1)))
            return rc;
        t->ncarry = 0;
    }
    uint64_t pixels = n / per;
    if (pixels && (rc = feed_pixels(t->in, t->st, vals, pixels)))
        return rc;
    t->ncarry = (size_t)(n - pixels * per);
    memcpy(t->carry, vals + pixels * per * size, t->ncarry * size);
    return CLI_EXIT_OK;
}

static int is_text_sep(char c)
{
    return c == ' ' || c == '\t' || c == '\r' || c == ',' || c == '\f' || c == '\v';
}

/* Text, read in order from a file or a pipe in blocks: each block is cut after its last line end
 * (in a line longer than a block: after its last separator, or at a '#' whose comment is then
 * skipped to its line end), parsed in parallel pieces with the line number it starts on, and
 * fed; the uncut tail moves to the next block. Memory: a block and its values. */
static int feed_text(cli_stream_input *in, gpuhist_stream *st, cli_progress *bar)
{
    const size_t block = 4 * CHUNK_BYTES;
    unsigned char *buf = malloc(block);
    if (!buf)
        return cli_error(CLI_EXIT_FAIL, "%s: out of memory for the text buffer", in->name);
    text_feed t;
    memset(&t, 0, sizeof t);
    t.in = in;
    t.st = st;
    size_t have = 0;
    unsigned long line = 1;
    int eof = 0, in_comment = 0, rc = CLI_EXIT_OK;
    while (rc == CLI_EXIT_OK && (!eof || have)) {
        if (!eof) {
            ssize_t n = cli_read_full(in->fd, buf + have, block - have, &eof);
            if (n < 0) {
                rc = cli_error(CLI_EXIT_FAIL, "%s: read error: %s", in->name, strerror(errno));
                break;
            }
            have += (size_t)n;
            in->text_bytes += (uint64_t)n;
            cli_progress_update(bar, (double)in->text_bytes);
        }
        if (in_comment) { /* a comment from the previous block: skip to its line end */
            unsigned char *nl = memchr(buf, '\n', have);
            if (!nl) {
                have = 0;
                continue;
            }
            have -= (size_t)(nl - buf);
            memmove(buf, nl, have);
            in_comment = 0;
        }
        size_t cut = have, next = have; /* parse [0, cut), keep [next, have) */
        if (!eof) {
            unsigned char *nl = memrchr(buf, '\n', have);
            unsigned char *hash = nl ? NULL : memchr(buf, '#', have);
            if (nl) {
                cut = next = (size_t)(nl - buf) + 1;
            } else if (hash) {
                cut = (size_t)(hash - buf);
                in_comment = 1; /* the rest of the block is comment */
            } else {
                size_t i = have;
                while (i > 0 && !is_text_sep((char)buf[i - 1]))
                    --i;
                if (i > 0) /* else one token fills the block: the parser names it */
                    cut = next = i;
            }
        }
        void *vals = NULL;
        uint64_t n = 0;
        rc = cli_parse_text_at(in->name, (const char *)buf, cut, line, in->dtype, 0,
                               CLI_EXIT_FAIL, &vals, &n);
        if (rc == CLI_EXIT_OK) {
            rc = feed_values(&t, vals, n);
            t.samples += n;
        }
        free(vals);
        for (const unsigned char *q = buf; (q = memchr(q, '\n', (size_t)(buf + cut - q))) != NULL;
             ++q)
            ++line;
        memmove(buf, buf + next, have - next);
        have -= next;
    }
    free(buf);
    in->data_bytes = t.samples * in->sample_size;
    if (rc == CLI_EXIT_OK && t.ncarry)
        rc = cli_error(CLI_EXIT_FAIL, "%s: %llu samples is not a multiple of %zu channels",
                       in->name, (unsigned long long)t.samples, in->pixel_bytes / in->sample_size);
    return rc;
}

int cli_stream_input_run(cli_stream_input *in, gpuhist_stream *st, int cpu_backend,
                         int progress)
{
    fault_from_env();
    cli_progress bar;
    double size = !in->is_regular ? 0 : in->format == CLI_IN_TEXT ? (double)in->text_bytes
                                                                   : (double)in->data_bytes;
    in->text_bytes = 0;
    cli_progress_start(&bar, progress, "reading", size);
    double t0 = cli_now();
    int rc;
    if (in->format == CLI_IN_TEXT)
        rc = feed_text(in, st, &bar);
    /* a file of one piece or less: the stream counts it, without a thread's context and
     * copy of the histogram to add afterwards (a handover keeps the threads) */
    else if (cpu_backend && cli_stream_input_on_threads(in) &&
             (in->handover || in->data_bytes > count_piece(in, 1)))
        rc = feed_threads(in, &bar);
    else if (in->is_regular && cpu_backend && !in->swap)
        rc = feed_mapped(in, st, &bar);
    else if (in->is_regular)
        rc = feed_pread(in, st, &bar);
    else
        rc = feed_pipe(in, st, &bar);
    cli_progress_end(&bar);
    in->seconds = cli_now() - t0;
    return rc;
}

/* ---- opening ----------------------------------------------------------------------------------- */

void cli_stream_input_close(cli_stream_input *in)
{
    free(in->side_counts);
    in->side_counts = NULL;
    if (in->fd >= 0 && in->owns_fd)
        close(in->fd);
    in->fd = -1;
}

/* A pipe that starts with the .npy magic is a .npy stream: read and check its header, the data
 * follows; anything else is raw, its first bytes kept as samples. */
static int sniff_pipe(const cli_read_options *opt, cli_stream_input *in)
{
    static const unsigned char magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
    int eof = 0;
    ssize_t got = cli_read_full(in->fd, in->prefix, 12, &eof);
    if (got < 0)
        return cli_error(CLI_EXIT_FAIL, "%s: read error: %s", in->name, strerror(errno));
    in->nprefix = (size_t)got;
    in->format = CLI_IN_RAW;
    if (got < 6 || memcmp(in->prefix, magic, 6) != 0)
        return CLI_EXIT_OK;
    in->format = CLI_IN_NPY;
    size_t hsize = cli_npy_header_size(in->prefix, in->nprefix);
    if (hsize < in->nprefix)
        hsize = in->nprefix; /* malformed or short: the parser names the problem */
    unsigned char *h = malloc(hsize);
    if (!h)
        return cli_error(CLI_EXIT_FAIL, "%s: out of memory for the .npy header", in->name);
    memcpy(h, in->prefix, in->nprefix);
    ssize_t more = cli_read_full(in->fd, h + in->nprefix, hsize - in->nprefix, &eof);
    if (more < 0) {
        free(h);
        return cli_error(CLI_EXIT_FAIL, "%s: read error: %s", in->name, strerror(errno));
    }
    cli_npy_info info;
    int rc = cli_npy_parse_header(in->name, h, in->nprefix + (size_t)more, &info);
    free(h);
    if (rc == CLI_EXIT_OK)
        rc = cli_npy_check(opt, in->name, &info, UINT64_MAX);
    if (rc)
        return rc;
    size_t channels = opt->channels ? opt->channels : 1;
    in->nprefix = 0; /* the data starts right after the header */
    in->dtype = info.dtype;
    in->swap = info.swap;
    in->sample_size = gpuhist_dtype_size(info.dtype);
    in->pixel_bytes = in->sample_size * channels;
    in->data_bytes = info.count * in->sample_size;
    in->bounded = 1;
    if (info.count % channels)
        return cli_error(CLI_EXIT_FAIL, "%s: %llu samples is not a multiple of %zu channels",
                         in->name, (unsigned long long)info.count, channels);
    return CLI_EXIT_OK;
}

int cli_stream_input_open(const cli_read_options *opt, cli_stream_input *in)
{
    memset(in, 0, sizeof *in);
    in->fd = -1;
    int from_stdin = !opt->path || strcmp(opt->path, "-") == 0;
    snprintf(in->name, sizeof in->name, "%s", from_stdin ? "standard input" : opt->path);
    in->format = opt->format;
    if (from_stdin) {
        in->fd = 0;
    } else {
        in->fd = open(opt->path, O_RDONLY | O_CLOEXEC);
        if (in->fd < 0)
            return cli_error(CLI_EXIT_FAIL, "%s: cannot open: %s", in->name, strerror(errno));
        in->owns_fd = 1;
    }
    struct stat sb;
    if (fstat(in->fd, &sb) != 0)
        return cli_error(CLI_EXIT_FAIL, "%s: cannot stat: %s", in->name, strerror(errno));
    if (S_ISDIR(sb.st_mode))
        return cli_error(CLI_EXIT_FAIL, "%s: is a directory", in->name);
    in->is_regular = S_ISREG(sb.st_mode);
    size_t channels = opt->channels ? opt->channels : 1;
    if (opt->format == CLI_IN_TEXT) { /* parsed as it is read (feed_text) */
        in->dtype = opt->have_type ? opt->type : GPUHIST_F64;
        in->sample_size = gpuhist_dtype_size(in->dtype);
        in->pixel_bytes = in->sample_size * channels;
        in->text_bytes = in->is_regular ? (uint64_t)sb.st_size : 0;
        return CLI_EXIT_OK;
    }
    if (!in->is_regular) {
        /* A pipe is read once, in order: streamed when it is declared raw (--raw) or when the
         * caller streams it whatever its format (sniffed here), else read whole by the caller. */
        in->format = opt->format == CLI_IN_RAW ? CLI_IN_RAW : CLI_IN_AUTO;
        in->dtype = opt->have_type ? opt->type : GPUHIST_U8;
        in->sample_size = gpuhist_dtype_size(in->dtype);
        in->pixel_bytes = in->sample_size * channels;
        in->swap = !cli_host_little_endian() && in->sample_size > 1;
        if (in->format == CLI_IN_AUTO && opt->sniff_pipe)
            return sniff_pipe(opt, in);
        return CLI_EXIT_OK;
    }
    uint64_t size = (uint64_t)sb.st_size;
    unsigned char first[16];
    ssize_t got = size ? pread(in->fd, first, sizeof first, 0) : 0;
    if (got < 0)
        return cli_error(CLI_EXIT_FAIL, "%s: read error: %s", in->name, strerror(errno));
    static const unsigned char magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
    cli_input_format fmt = opt->format;
    if (fmt == CLI_IN_AUTO) {
        size_t n = strlen(opt->path);
        if (got >= 6 && memcmp(first, magic, 6) == 0)
            fmt = CLI_IN_NPY;
        else if (n >= 4 && strcmp(opt->path + n - 4, ".npy") == 0)
            fmt = CLI_IN_NPY; /* named .npy without the magic: the parser says so */
        else
            fmt = CLI_IN_RAW;
    }
    in->format = fmt;
    if (fmt == CLI_IN_NPY) {
        size_t hsize = cli_npy_header_size(first, (size_t)got);
        if (hsize == 0 || hsize > size)
            hsize = (size_t)(size < 16 ? size : 16); /* let the parser name the problem */
        unsigned char *h = malloc(hsize ? hsize : 1);
        if (!h)
            return cli_error(CLI_EXIT_FAIL, "%s: out of memory for the .npy header", in->name);
        int rc = read_once(in->name, in->fd, h, 0, hsize);
        cli_npy_info info;
        if (rc == CLI_EXIT_OK)
            rc = cli_npy_parse_header(in->name, h, hsize, &info);
        free(h);
        if (rc)
            return rc;
        if ((rc = cli_npy_check(opt, in->name, &info, size - info.data_offset)))
            return rc;
        in->dtype = info.dtype;
        in->swap = info.swap;
        in->sample_size = gpuhist_dtype_size(info.dtype);
        in->data_offset = info.data_offset;
        in->data_bytes = info.count * in->sample_size;
        in->pixel_bytes = in->sample_size * channels;
        if ((in->data_bytes / in->sample_size) % channels)
            return cli_error(CLI_EXIT_FAIL, "%s: %llu samples is not a multiple of %zu channels",
                             in->name, (unsigned long long)(in->data_bytes / in->sample_size),
                             channels);
        return CLI_EXIT_OK;
    }
    in->dtype = opt->have_type ? opt->type : GPUHIST_U8;
    in->sample_size = gpuhist_dtype_size(in->dtype);
    in->pixel_bytes = in->sample_size * channels;
    in->swap = !cli_host_little_endian() && in->sample_size > 1;
    in->data_bytes = size;
    if (size % in->pixel_bytes)
        return cli_size_error(in->name, size, in->dtype, (uint32_t)channels);
    return CLI_EXIT_OK;
}

void cli_stream_input_share(cli_stream_input *in, uint64_t first, uint64_t pixels)
{
    if (!in->shared)
        in->whole_bytes = in->data_bytes;
    in->shared = 1;
    in->share_first = first;
    in->data_offset += first * in->pixel_bytes;
    in->data_bytes = pixels * in->pixel_bytes;
}

/* ---- readahead while the device starts ------------------------------------------------------ */

/* Bytes of a file's start read ahead (what a disk reads in a CUDA start, about 0.2-0.3 s). */
#define READAHEAD_BYTES ((off_t)512 << 20)

/* The path read ahead (one per process: a static copy, so that the detached thread owns no
 * memory the process could exit before freeing). */
static char readahead_path[4096];

static void *readahead_job(void *arg)
{
    (void)arg;
    /* regular files only, and never a blocking open: opening a named pipe here would wait for
     * its writer, and closing it again could leave the writer without a reader */
    struct stat sb;
    if (stat(readahead_path, &sb) != 0 || !S_ISREG(sb.st_mode))
        return NULL;
    int fd = open(readahead_path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd >= 0 && fstat(fd, &sb) == 0 && S_ISREG(sb.st_mode)) {
        (void)posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
        (void)posix_fadvise(fd, 0, sb.st_size < READAHEAD_BYTES ? sb.st_size : READAHEAD_BYTES,
                            POSIX_FADV_WILLNEED);
    }
    if (fd >= 0)
        close(fd);
    return NULL;
}

void cli_readahead(const char *path)
{
    if (!path || strcmp(path, "-") == 0 || readahead_path[0] ||
        strlen(path) >= sizeof readahead_path)
        return;
    memcpy(readahead_path, path, strlen(path) + 1);
    pthread_t t;
    pthread_attr_t at;
    if (pthread_attr_init(&at) != 0)
        return;
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    (void)pthread_create(&t, &at, readahead_job, NULL);
    pthread_attr_destroy(&at);
}

/* ---- a first pass for the auto range ------------------------------------------------------------ */

/* The running result of the first pass. */
typedef struct minmax_pass {
    const cli_stream_input *in;
    gpuhist_ctx *ctx;
    uint32_t channels, active;
    double lo, hi;
    int found;
} minmax_pass;

/* Add one part of the data (whole pixels) to the pass. */
static int minmax_part(void *arg, const unsigned char *data, uint64_t bytes)
{
    minmax_pass *m = arg;
    gpuhist_samples s = gpuhist_samples_1d(data, m->in->dtype, bytes / m->in->pixel_bytes);
    s.channels = m->channels;
    s.active_channels = m->active;
    s.location = GPUHIST_MEMORY_HOST;
    double a, b;
    int f;
    if (gpuhist_minmax(m->ctx, &s, &a, &b, &f) != GPUHIST_OK)
        return cli_error(CLI_EXIT_FAIL, "%s: %s", m->in->name, gpuhist_last_error(m->ctx));
    if (f)
        cli_minmax_take(&m->lo, &m->hi, &m->found, a, b);
    return CLI_EXIT_OK;
}

/* One part of the first pass on a thread of its own, so that the device's min/max of one staging
 * buffer overlaps the reading of the next. */
typedef struct minmax_job {
    minmax_pass *m;
    const unsigned char *data;
    uint64_t bytes;
    int rc;
} minmax_job;

static void *minmax_job_run(void *arg)
{
    minmax_job *j = arg;
    j->rc = minmax_part(j->m, j->data, j->bytes);
    return NULL;
}

/* ---- the first pass on the CPU backend ---------------------------------------------------- */

/* Bytes a thread reads at a time: small enough to be still in the core's L2 cache when its min
 * and max are found, large enough that the fixed cost of a pread is small against the copy. */
#define PASS_PIECE ((size_t)512 << 10)

typedef struct cpu_pass {
    const cli_stream_input *in;
    uint32_t channels, active;
    size_t piece;               /* bytes of a piece, whole pixels */
    uint64_t pieces;            /* pieces of the data */
    atomic_uint_fast64_t next;  /* the next piece to claim */
    atomic_int stop;            /* a thread failed: the others claim no more */
} cpu_pass;

typedef struct cpu_pass_seat {
    cpu_pass *pass;
    double lo, hi;
    int found;
    uint64_t failed_at;         /* the first byte of the failed piece (UINT64_MAX: none) */
    char msg[1024];             /* what failed there, for the one message of the pass */
} cpu_pass_seat;

/* The piece at `at` failed (s->msg says how): the other threads claim no more. */
static void pass_fail(cpu_pass_seat *s, uint64_t at)
{
    s->failed_at = at;
    atomic_store(&s->pass->stop, 1);
}

/* A thread of the pass: a one-thread CPU context of its own; pieces claimed in turn from the
 * shared counter (a thread slowed by another process takes fewer), each read with pread into
 * the thread's own buffer and scanned there by gpuhist_minmax. */
static void *cpu_pass_run(void *arg)
{
    cpu_pass_seat *s = arg;
    cpu_pass *p = s->pass;
    const cli_stream_input *in = p->in;
    gpuhist_ctx *ctx = NULL;
    unsigned char *buf = malloc(p->piece);
    if (!buf) {
        snprintf(s->msg, sizeof s->msg, "%s: out of memory for the first pass", in->name);
        pass_fail(s, 0);
        goto done;
    }
    if (gpuhist_create(&ctx, GPUHIST_BACKEND_CPU) != GPUHIST_OK ||
        gpuhist_set_threads(ctx, 1) != GPUHIST_OK) {
        snprintf(s->msg, sizeof s->msg, "%s: the first pass: %.400s", in->name,
                 gpuhist_last_error(ctx));
        pass_fail(s, 0);
        goto done;
    }
    while (!atomic_load(&p->stop)) {
        const uint64_t k = atomic_fetch_add(&p->next, 1);
        if (k >= p->pieces)
            break;
        const uint64_t at = k * p->piece;
        const uint64_t left = in->data_bytes - at;
        const size_t len = left < p->piece ? (size_t)left : p->piece;
        reader_slice r = {in->fd, buf, in->data_offset + at, len, 0, 0};
        read_slice(&r);
        if (r.err) {
            snprintf(s->msg, sizeof s->msg, "%s: read error: %s", in->name, strerror(r.err));
            pass_fail(s, at);
            break;
        }
        if (r.short_read) {
            snprintf(s->msg, sizeof s->msg,
                     "%s: the file became shorter while being read (at byte %llu)", in->name,
                     (unsigned long long)(in->data_offset + at));
            pass_fail(s, at);
            break;
        }
        gpuhist_samples smp = gpuhist_samples_1d(buf, in->dtype, len / in->pixel_bytes);
        smp.channels = p->channels;
        smp.active_channels = p->active;
        smp.location = GPUHIST_MEMORY_HOST;
        double a, b;
        int f;
        if (gpuhist_minmax(ctx, &smp, &a, &b, &f) != GPUHIST_OK) {
            snprintf(s->msg, sizeof s->msg, "%s: %.400s", in->name, gpuhist_last_error(ctx));
            pass_fail(s, at);
            break;
        }
        if (f)
            cli_minmax_take(&s->lo, &s->hi, &s->found, a, b);
    }
done:
    if (ctx)
        gpuhist_destroy(ctx);
    free(buf);
    return NULL;
}

/* The first pass on the CPU backend: threads that each read pieces of the file into a buffer of
 * their own that stays in cache (reading the page cache by copy costs about half the page-table
 * work of mapping it) and find their min and max there. */
static int cpu_first_pass(const cli_stream_input *in, uint32_t channels, uint32_t active,
                          double *lo, double *hi, int *found)
{
    cpu_pass p;
    memset(&p, 0, sizeof p);
    p.in = in;
    p.channels = channels;
    p.active = active;
    p.piece = PASS_PIECE / in->pixel_bytes * in->pixel_bytes;
    if (p.piece == 0)
        p.piece = in->pixel_bytes;
    p.pieces = (in->data_bytes + p.piece - 1) / p.piece;
    atomic_init(&p.next, 0);
    atomic_init(&p.stop, 0);
    int threads = cpu_threads_wanted(in);
    if ((uint64_t)threads > p.pieces)
        threads = p.pieces ? (int)p.pieces : 1;
    cpu_pass_seat *seat = calloc((size_t)threads, sizeof *seat);
    pthread_t *tid = calloc((size_t)threads, sizeof *tid);
    int *started = calloc((size_t)threads, sizeof *started);
    if (!seat || !tid || !started) {
        free(seat), free(tid), free(started);
        return cli_error(CLI_EXIT_FAIL, "%s: out of memory for the first pass", in->name);
    }
    for (int t = 0; t < threads; ++t)
        seat[t] = (cpu_pass_seat){&p, 0.0, 0.0, 0, UINT64_MAX, ""};
    for (int t = 1; t < threads; ++t)
        started[t] = pthread_create(&tid[t], NULL, cpu_pass_run, &seat[t]) == 0;
    cpu_pass_run(&seat[0]); /* threads that did not start leave their pieces to the others */
    cpu_pass_seat all = {&p, 0.0, 0.0, 0, UINT64_MAX, ""};
    const cpu_pass_seat *first_failure = NULL;
    for (int t = 0; t < threads; ++t) {
        if (t > 0 && started[t])
            pthread_join(tid[t], NULL);
        if (t > 0 && !started[t])
            continue;
        if (seat[t].failed_at != UINT64_MAX &&
            (!first_failure || seat[t].failed_at < first_failure->failed_at))
            first_failure = &seat[t];
        if (seat[t].found)
            cli_minmax_take(&all.lo, &all.hi, &all.found, seat[t].lo, seat[t].hi);
    }
    int rc = CLI_EXIT_OK;
    if (first_failure) /* the failure nearest the start, as a reading in order would meet it */
        rc = cli_error(CLI_EXIT_FAIL, "%s", first_failure->msg);
    else
        *lo = all.lo, *hi = all.hi, *found = all.found;
    free(seat), free(tid), free(started);
    return rc;
}

/* The first pass. On the CPU backend: cpu_first_pass; on a device backend the reader pool fills
 * one of two page-locked staging buffers (so the device reads it by DMA at full speed) while
 * the device finds the min and max of the other. */
int cli_stream_input_minmax(const cli_stream_input *in, gpuhist_ctx *ctx, uint32_t channels,
                            uint32_t active, double *lo, double *hi, int *found)
{
    const size_t pb = in->pixel_bytes;
    minmax_pass m = {in, ctx, channels, active, 0.0, 0.0, 0};
    int rc = CLI_EXIT_OK;
    fault_from_env();
    *found = 0;
    if (gpuhist_context_backend(ctx) == GPUHIST_BACKEND_CPU)
        return in->data_bytes ? cpu_first_pass(in, channels, active, lo, hi, found)
                              : CLI_EXIT_OK;
    const size_t span = CHUNK_BYTES * 2 / pb * pb;
    void *buf;
    if (gpuhist_host_alloc(ctx, 2 * span, &buf) != GPUHIST_OK)
        return cli_error(CLI_EXIT_FAIL, "%s: %.400s", in->name, gpuhist_last_error(ctx));
    reader_pool pool;
    pool_start(&pool, threads_wanted());
    minmax_job job = {&m, NULL, 0, CLI_EXIT_OK};
    pthread_t worker;
    int busy = 0; /* a job on `worker` is running */
    for (uint64_t done = 0, k = 0; done < in->data_bytes && rc == CLI_EXIT_OK; ++k) {
        size_t want = in->data_bytes - done < span ? (size_t)(in->data_bytes - done) : span;
        unsigned char *part = (unsigned char *)buf + (k & 1) * span;
        rc = pool_read(&pool, in->name, in->fd, part, in->data_offset + done, want);
        if (busy) {
            pthread_join(worker, NULL);
            busy = 0;
            if (rc == CLI_EXIT_OK)
                rc = job.rc;
        }
        if (rc != CLI_EXIT_OK)
            break;
        job.data = part, job.bytes = want;
        if (pthread_create(&worker, NULL, minmax_job_run, &job) == 0)
            busy = 1;
        else
            rc = minmax_part(&m, part, want); /* no thread: the same work, not overlapped */
        done += want;
    }
    if (busy) {
        pthread_join(worker, NULL);
        if (rc == CLI_EXIT_OK)
            rc = job.rc;
    }
    pool_stop(&pool);
    gpuhist_host_free(ctx, buf);
    *lo = m.lo, *hi = m.hi, *found = m.found;
    return rc;
}
