/*
 * output.c - where the gpuhist command writes its result (-o PATH), without destroying anything
 * it should not.
 *
 * A regular file, or a path that does not exist yet, is written to a temporary file beside it and
 * renamed over it only once complete and on disk: a reader of PATH sees the old content or the
 * whole new one, and a failed or interrupted run never leaves a half-written file there. A
 * symbolic link is followed to its final target: the temporary goes beside the target and the
 * rename replaces the target, so the link stays a link. Anything else (a terminal, /dev/null,
 * a FIFO, a device, a socket) is written straight to: renaming a file over it would replace the
 * device node, or leave the FIFO's reader waiting for a writer that never comes. A name of
 * standard output itself (/dev/stdout, /proc/self/fd/1) means standard output, as "-" does.
 *
 * Refused before anything is written: a directory, and the files the input and the weights are
 * read from (the same device and inode, so also through symbolic and hard links), which the
 * output would otherwise silently replace.
 *
 * The temporary files of every open output sit in a static table. SIGINT, SIGTERM, SIGHUP and
 * SIGPIPE remove them (unlink() is async-signal-safe) and then end the process with the signal's
 * default action, so the exit status still says which signal it was. Signals that were ignored
 * when the command started (nohup, background jobs) stay ignored.
 */
#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/* ---- temporary files removed on a signal ----------------------------------------------------- */

enum { MAX_OUTPUTS = 12, TMP_PATH_SIZE = 4096, MAX_LINKS = 40 };

/* cleanup_used[i] says cleanup_path[i] names a temporary file of ours; both are changed only
 * while the signals below are blocked, so the handler never sees half a path. */
static char cleanup_path[MAX_OUTPUTS][TMP_PATH_SIZE];
static volatile sig_atomic_t cleanup_used[MAX_OUTPUTS];
static const int cleanup_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
enum { N_SIGNALS = sizeof cleanup_signals / sizeof cleanup_signals[0] };
static int handlers_installed;

static void remove_temporaries(int sig)
{
    for (int i = 0; i < MAX_OUTPUTS; ++i)
        if (cleanup_used[i])
            unlink(cleanup_path[i]);
    /* The signal is blocked while its handler runs: it is delivered, now with the default
     * action, as soon as the handler returns. */
    signal(sig, SIG_DFL);
    raise(sig);
}

static void block_signals(sigset_t *old)
{
    sigset_t set;
    sigemptyset(&set);
    for (int i = 0; i < N_SIGNALS; ++i)
        sigaddset(&set, cleanup_signals[i]);
    sigprocmask(SIG_BLOCK, &set, old);
}

static void restore_signals(const sigset_t *old)
{
    sigprocmask(SIG_SETMASK, old, NULL);
}

static void install_handlers(void)
{
    if (handlers_installed)
        return;
    handlers_installed = 1;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = remove_temporaries;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < N_SIGNALS; ++i)
        sigaddset(&sa.sa_mask, cleanup_signals[i]); /* one cleanup at a time */
    for (int i = 0; i < N_SIGNALS; ++i) {
        struct sigaction old;
        if (sigaction(cleanup_signals[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
            continue;
        sigaction(cleanup_signals[i], &sa, NULL);
    }
}

/* ---- the input, which no output may replace -------------------------------------------------- */

/* The input and the weights: regular files the rename would replace. */
enum { MAX_PROTECTED = 2 };
static int n_protected;
static struct protected_file {
    dev_t dev;
    ino_t ino;
    char name[512];  /* "" for standard input */
    char what[16];   /* "input", "weights" */
} protected_files[MAX_PROTECTED];

void cli_output_protect(const char *path, const char *what)
{
    int from_stdin = path == NULL || strcmp(path, "-") == 0;
    struct stat st;
    /* Only a regular file can be replaced by the rename; a missing input fails on its own. */
    if (n_protected == MAX_PROTECTED ||
        (from_stdin ? fstat(STDIN_FILENO, &st) : stat(path, &st)) != 0 || !S_ISREG(st.st_mode))
        return;
    struct protected_file *p = &protected_files[n_protected++];
    p->dev = st.st_dev;
    p->ino = st.st_ino;
    snprintf(p->name, sizeof p->name, "%s", from_stdin ? "" : path);
    snprintf(p->what, sizeof p->what, "%s", what);
}

void cli_output_set_input(const char *input_path)
{
    n_protected = 0;
    cli_output_protect(input_path, "input");
}

/* ---- opening --------------------------------------------------------------------------------- */

static char *copy_string(const char *s)
{
    size_t n = strlen(s) + 1;
    char *c = malloc(n);
    if (c)
        memcpy(c, s, n);
    return c;
}

static void free_output(cli_output *o)
{
    free(o->path);
    free(o->target);
    memset(o, 0, sizeof *o);
    o->slot = -1;
}

/* The file `path` finally names: symbolic links followed, a relative link read from the link's
 * directory, as the kernel does (the last name need not exist: a dangling link names the file
 * that writing through it would create). @return 0 with *out malloc'd, or an errno value. */
static int resolve_links(const char *path, char **out)
{
    char *cur = copy_string(path);
    for (int hops = 0; cur; ++hops) {
        struct stat st;
        if (lstat(cur, &st) != 0 || !S_ISLNK(st.st_mode)) {
            *out = cur;
            return 0;
        }
        if (hops == MAX_LINKS) {
            free(cur);
            return ELOOP;
        }
        char link[PATH_MAX];
        ssize_t n = readlink(cur, link, sizeof link);
        if (n < 0 || (size_t)n >= sizeof link) {
            int e = n < 0 ? errno : ENAMETOOLONG;
            free(cur);
            return e;
        }
        link[n] = 0;
        const char *slash = strrchr(cur, '/');
        size_t dir = link[0] == '/' || !slash ? 0 : (size_t)(slash - cur) + 1;
        char *next = malloc(dir + (size_t)n + 1);
        if (next) {
            memcpy(next, cur, dir);
            memcpy(next + dir, link, (size_t)n + 1);
        }
        free(cur);
        cur = next;
    }
    return ENOMEM;
}

/* A stream connection to the Unix socket at `path` (open() cannot open a socket). */
static int connect_socket(const char *path)
{
    struct sockaddr_un addr;
    memset(&addr, 0, sizeof addr);
    addr.sun_family = AF_UNIX;
    if (strlen(path) >= sizeof addr.sun_path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    strcpy(addr.sun_path, path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    if (connect(fd, (const struct sockaddr *)&addr, sizeof addr) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

/* Write straight to a device, FIFO or socket: no temporary file, no O_CREAT or O_TRUNC. A FIFO
 * blocks here until a reader opens it, as a shell's redirection does. */
static int open_direct(cli_output *o, const struct stat *st)
{
    int fd = S_ISSOCK(st->st_mode) ? connect_socket(o->path)
                                   : open(o->path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        int rc = cli_error(CLI_EXIT_FAIL, "%s: cannot open for writing: %s", o->path, strerror(e));
        free_output(o);
        return rc;
    }
    o->f = fdopen(fd, "w");
    if (!o->f) {
        int e = errno;
        close(fd);
        int rc = cli_error(CLI_EXIT_FAIL, "%s: cannot write: %s", o->path, strerror(e));
        free_output(o);
        return rc;
    }
    return CLI_EXIT_OK;
}

/* Write to a temporary file beside o->target, renamed over it by cli_output_commit. `st` is the
 * existing target (its permissions are kept), or NULL for a new file. */
static int open_temporary(cli_output *o, const struct stat *st)
{
    int slot = -1;
    for (int i = 0; i < MAX_OUTPUTS && slot < 0; ++i)
        if (!cleanup_used[i])
            slot = i;
    if (slot < 0) {
        int rc = cli_error(CLI_EXIT_FAIL, "%s: more than %d output files at once", o->path,
                           MAX_OUTPUTS);
        free_output(o);
        return rc;
    }
    static const char suffix[] = ".tmp.XXXXXX";
    if (strlen(o->target) + sizeof suffix > TMP_PATH_SIZE) {
        int rc = cli_error(CLI_EXIT_FAIL, "%s: cannot create the output file: %s", o->path,
                           strerror(ENAMETOOLONG));
        free_output(o);
        return rc;
    }
    install_handlers();

    /* mkstemp fills in the name in the handler's own table while the signals wait, so there is
     * no moment when the file exists and the handler does not know it. */
    sigset_t old;
    block_signals(&old);
    snprintf(cleanup_path[slot], TMP_PATH_SIZE, "%s%s", o->target, suffix);
    int fd = mkstemp(cleanup_path[slot]);
    int e = errno;
    if (fd >= 0)
        cleanup_used[slot] = 1;
    restore_signals(&old);
    if (fd < 0) {
        int rc = cli_error(CLI_EXIT_FAIL, "%s: cannot create the output file: %s", o->path,
                           strerror(e));
        free_output(o);
        return rc;
    }
    o->slot = slot;
    o->tmp = cleanup_path[slot];
    /* mkstemp makes the file 0600 and ours: give it the owner (where allowed: root, or a group
     * of ours) and mode of the file it replaces, or the mode a plain fopen() would have given a
     * new file. */
    mode_t mode;
    if (st) {
        /* A failure leaves the file ours, as rewriting it by hand would. */
        int owned = fchown(fd, st->st_uid, st->st_gid) == 0 ||
                    fchown(fd, (uid_t)-1, st->st_gid) == 0;
        (void)owned;
        mode = st->st_mode & 0777;
    } else {
        mode_t mask = umask(0);
        umask(mask);
        mode = 0666 & ~mask;
    }
    fchmod(fd, mode);
    o->f = fdopen(fd, "w");
    if (!o->f) {
        e = errno;
        close(fd);
        int rc = cli_error(CLI_EXIT_FAIL, "%s: cannot write: %s", o->path, strerror(e));
        cli_output_abort(o);
        return rc;
    }
    return CLI_EXIT_OK;
}

static int same_file(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

int cli_output_open(cli_output *o, const char *path)
{
    memset(o, 0, sizeof *o);
    o->slot = -1;
    if (path == NULL || strcmp(path, "-") == 0) {
        o->f = stdout;
        return CLI_EXIT_OK;
    }
    struct stat st, out_st;
    int exists = stat(path, &st) == 0;
    if (!exists && errno != ENOENT)
        return cli_error(CLI_EXIT_FAIL, "%s: cannot create the output file: %s", path,
                         strerror(errno));
    if (exists && fstat(STDOUT_FILENO, &out_st) == 0 && same_file(&st, &out_st)) {
        o->f = stdout;
        return CLI_EXIT_OK;
    }
    if (exists && S_ISDIR(st.st_mode))
        return cli_error(CLI_EXIT_FAIL, "%s: is a directory", path);
    for (int i = 0; exists && S_ISREG(st.st_mode) && i < n_protected; ++i) {
        const struct protected_file *p = &protected_files[i];
        if (st.st_dev != p->dev || st.st_ino != p->ino)
            continue;
        if (p->name[0])
            return cli_error(CLI_EXIT_USAGE,
                             "%s: the output would overwrite the %s %s (the same file)", path,
                             p->what, p->name);
        return cli_error(CLI_EXIT_USAGE,
                         "%s: the output would overwrite standard input (the same file)", path);
    }

    o->path = copy_string(path);
    if (!o->path)
        return cli_error(CLI_EXIT_FAIL, "%s: out of memory", path);
    if (exists && !S_ISREG(st.st_mode))
        return open_direct(o, &st);

    int e = resolve_links(path, &o->target);
    if (e) {
        free_output(o);
        return cli_error(CLI_EXIT_FAIL, "%s: cannot create the output file: %s", path,
                         strerror(e));
    }
    if (exists) {
        /* The links must lead to the file stat() found (a /proc/PID/fd link to a deleted file
         * reads as a name that is not it). */
        struct stat target_st;
        if (lstat(o->target, &target_st) != 0 || !same_file(&st, &target_st)) {
            int rc = cli_error(CLI_EXIT_FAIL, "%s: cannot find the file the link leads to", path);
            free_output(o);
            return rc;
        }
        /* The rename needs only the directory to be writable; a file the user cannot write is
         * refused, as writing it in place would be. */
        if (access(o->target, W_OK) != 0) {
            e = errno;
            int rc = cli_error(CLI_EXIT_FAIL, "%s: cannot write: %s", path, strerror(e));
            free_output(o);
            return rc;
        }
    }
    return open_temporary(o, exists ? &st : NULL);
}

/* ---- closing --------------------------------------------------------------------------------- */

void cli_output_abort(cli_output *o)
{
    if (o->f && o->f != stdout)
        fclose(o->f);
    if (o->tmp) {
        sigset_t old;
        block_signals(&old);
        unlink(o->tmp);
        cleanup_used[o->slot] = 0;
        restore_signals(&old);
    }
    free_output(o);
}

int cli_output_commit(cli_output *o)
{
    if (o->f == stdout) {
        o->f = NULL;
        return cli_flush_stdout();
    }
    errno = 0;
    int e = fflush(o->f) != 0 ? errno : 0;
    if (!e && ferror(o->f))
        e = EIO;
    /* On disk before the rename: after a crash the path holds the old file or the new one,
     * never an empty one. (EINVAL: a file system that cannot sync, nothing to wait for.) */
    if (!e && o->tmp && fsync(fileno(o->f)) != 0 && errno != EINVAL)
        e = errno;
    if (fclose(o->f) != 0 && !e)
        e = errno;
    o->f = NULL;
    if (!e && o->tmp) {
        sigset_t old;
        block_signals(&old);
        if (rename(o->tmp, o->target) == 0) {
            cleanup_used[o->slot] = 0;
            o->tmp = NULL;
        } else {
            e = errno;
        }
        restore_signals(&old);
    }
    if (e) {
        int rc = cli_error(CLI_EXIT_FAIL, "%s: write error: %s", o->path, strerror(e));
        cli_output_abort(o);
        return rc;
    }
    free_output(o);
    return CLI_EXIT_OK;
}
