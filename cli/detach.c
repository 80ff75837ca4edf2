/*
 * detach.c - the command returns when its output is complete, not when the GPU is released.
 *
 * Mechanism. A process that used a GPU spends about 0.1 s after its last output closing the
 * device: the driver's teardown when the process's device files are released, which _exit does
 * not avoid (bench/e2e/exit_probe.c). So before a run that may use a GPU the command forks. The
 * parent closes its standard input and output and waits for one status byte on a pipe; the
 * child runs the command and, once its output is flushed and its files are closed (its status
 * known), points its standard streams at /dev/null, sends the status and exits. The parent
 * exits with that status at once; the child's exit releases the device behind it.
 *   Nothing is lost or reported early: the status is sent only after the run returned, every
 * output written and closed. A child that ends without sending it (a crash) is waited for and
 * its end passed on (the same signal, or its exit status). The child dies with the parent
 * (PR_SET_PDEATHSIG), so a signal that ends the parent early (a timeout, a kill of its pid)
 * ends the run too; the terminal's Ctrl-C reaches both.
 *
 * When: not for the CPU backend (-B cpu), not under MPI, not on a machine without an NVIDIA
 * device node (/dev/nvidiactl: no GPU whose release could cost anything), and never when
 * GPUHIST_DETACH=0; GPUHIST_DETACH=1 detaches every run (the tests use it on machines without a
 * GPU). Linux only (elsewhere the command runs in one process).
 */
#include "command.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__linux__)
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

/* In the child: the write end of the status pipe; -1 in a run that did not detach. */
static int g_status_fd = -1;

/* Standard streams 0 .. last pointed at /dev/null (left as they are if it cannot be opened). */
static void streams_to_null(int last)
{
    const int null_fd = open("/dev/null", O_RDWR);
    if (null_fd < 0)
        return;
    for (int fd = STDIN_FILENO; fd <= last; ++fd)
        dup2(null_fd, fd);
    if (null_fd > last)
        close(null_fd);
}

/* The parent's end: the child's status byte, else how the child ended. Never returns. */
static void parent_wait(pid_t child, int fd)
{
    unsigned char status;
    ssize_t n;
    do
        n = read(fd, &status, 1);
    while (n < 0 && errno == EINTR);
    if (n == 1)
        _exit(status);
    int ws = 0;
    while (waitpid(child, &ws, 0) < 0) {
        if (errno != EINTR) {
            fprintf(stderr, "gpuhist: lost the run's process: %s\n", strerror(errno));
            _exit(CLI_EXIT_FAIL);
        }
    }
    if (WIFEXITED(ws))
        _exit(WEXITSTATUS(ws));
    if (WIFSIGNALED(ws)) {
        const int sig = WTERMSIG(ws);
        signal(sig, SIG_DFL);
        raise(sig); /* the shell sees the same end (e.g. "Segmentation fault") */
        _exit(128 + sig);
    }
    _exit(CLI_EXIT_FAIL);
}

static int wanted(const cli_options *o)
{
    const char *e = getenv("GPUHIST_DETACH");
    if (e && strcmp(e, "0") == 0)
        return 0;
    if (o->mpi || cli_mpi_launched())
        return 0;
    if (e && strcmp(e, "1") == 0)
        return 1;
    return o->backend != GPUHIST_BACKEND_CPU && access("/dev/nvidiactl", F_OK) == 0;
}

void cli_detach_start(const cli_options *o)
{
    if (!wanted(o))
        return;
    int p[2];
    if (pipe(p) != 0)
        return; /* run in one process */
    /* with a standard stream closed at start the pipe could take its number: keep both ends
     * above 2, clear of the streams that are pointed at /dev/null later */
    for (int k = 0; k < 2; ++k) {
        if (p[k] > STDERR_FILENO)
            continue;
        const int moved = fcntl(p[k], F_DUPFD, STDERR_FILENO + 1);
        close(p[k]);
        p[k] = moved;
    }
    if (p[0] < 0 || p[1] < 0) {
        if (p[0] >= 0)
            close(p[0]);
        if (p[1] >= 0)
            close(p[1]);
        return;
    }
    fflush(stdout);
    fflush(stderr);
    const pid_t parent = getpid();
    const pid_t child = fork();
    if (child < 0) {
        close(p[0]);
        close(p[1]);
        return;
    }
    if (child > 0) {
        close(p[1]);
        /* the run's readers see the end of its output when the child closes it (standard
         * error stays, for a crashed child's end) */
        streams_to_null(STDOUT_FILENO);
        parent_wait(child, p[0]);
    }
    close(p[0]);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) /* the parent ended before the line above */
        _exit(CLI_EXIT_FAIL);
    fcntl(p[1], F_SETFD, FD_CLOEXEC);
    g_status_fd = p[1];
}

int cli_detach_end(int rc)
{
    if (g_status_fd < 0)
        return rc;
    fflush(stdout);
    fflush(stderr);
    streams_to_null(STDERR_FILENO);
    const unsigned char status = (unsigned char)rc;
    ssize_t n;
    do
        n = write(g_status_fd, &status, 1);
    while (n < 0 && errno == EINTR);
    close(g_status_fd);
    g_status_fd = -1;
    return rc;
}

#else

void cli_detach_start(const cli_options *o)
{
    (void)o;
}

int cli_detach_end(int rc)
{
    return rc;
}

#endif
