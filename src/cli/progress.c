/* Progress bar and interruption; see progress.h. */
#define _POSIX_C_SOURCE 200809L

#include "progress.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t interrupt_flag;
static int handlers_installed;

/* Temporary output files that a second signal removes before the process exits (cli_output_open
 * registers them before it creates them, so no signal finds a file that is not registered). Only
 * pointers are stored; the handler only calls unlink() and _exit(), both async-signal-safe. */
#define MAX_TEMP_FILES 8
static const char *volatile temp_files[MAX_TEMP_FILES];

/* The test hook (WW_CLI_INTERRUPT_AT): raise SIGINT at the N-th checkpoint, twice with a '+'. */
static long checkpoint_count, interrupt_at = -1;
static int interrupt_twice;
double cli_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void on_interrupt(int sig)
{
    (void)sig;
    if (interrupt_flag) { /* the second signal: stop now, leaving no temporary file behind */
        for (int i = 0; i < MAX_TEMP_FILES; i++)
            if (temp_files[i])
                unlink(temp_files[i]);
        _exit(130);
    }
    interrupt_flag = 1; /* the first: the command stops at its next check and discards its outputs */
}

void cli_interrupt_install(void)
{
    if (handlers_installed)
        return;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_interrupt;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL); /* the terminal went away */
    handlers_installed = 1;
    const char *at = getenv("WW_CLI_INTERRUPT_AT");
    if (at && *at) {
        char *end = NULL;
        interrupt_at = strtol(at, &end, 10);
        interrupt_twice = end && *end == '+';
    }
}

int cli_interrupted(void) { return interrupt_flag != 0; }

void cli_checkpoint(void)
{
    if (++checkpoint_count != interrupt_at)
        return;
    raise(SIGINT);
    if (interrupt_twice)
        raise(SIGINT);
}

int cli_temp_register(const char *path)
{
    for (int i = 0; i < MAX_TEMP_FILES; i++)
        if (temp_files[i] == NULL) {
            temp_files[i] = path;
            return 0;
        }
    return -1;
}

void cli_temp_unregister(const char *path)
{
    for (int i = 0; i < MAX_TEMP_FILES; i++)
        if (temp_files[i] == path)
            temp_files[i] = NULL;
}

void cli_progress_start(cli_progress *p, const char *label, cli_progress_mode mode, uint64_t expected_total)
{
    memset(p, 0, sizeof *p);
    p->label = label;
    p->enabled = mode == CLI_PROGRESS_ALWAYS || (mode == CLI_PROGRESS_AUTO && isatty(STDERR_FILENO));
    p->start = cli_now();
    p->expected_total = expected_total;
}

static void format_seconds(char *buf, size_t size, double s)
{
    if (s < 60)
        snprintf(buf, size, "%.0fs", s);
    else if (s < 3600)
        snprintf(buf, size, "%dm%02ds", (int)(s / 60), (int)s % 60);
    else
        snprintf(buf, size, "%dh%02dm", (int)(s / 3600), (int)(s / 60) % 60);
}

int cli_progress_callback(uint64_t done_cells, uint64_t total_cells, void *user)
{
    cli_progress *p = (cli_progress *)user;
    if (interrupt_flag)
        return 1;
    if (!p->enabled)
        return 0;
    /* A count that goes backwards is a new call (k-NN works in chunks of queries): keep adding. */
    if (done_cells < p->last_done)
        p->base += p->last_done;
    p->last_done = done_cells;
    uint64_t done = p->base + done_cells;
    uint64_t total = total_cells > p->expected_total ? total_cells : p->expected_total;
    if (done > total)
        total = done;

    double now = cli_now(), elapsed = now - p->start;
    /* short runs draw nothing: wait half a second, then redraw at most ten times a second */
    if (elapsed < 0.5 || now - p->last_draw < 0.1)
        return 0;
    p->last_draw = now;
    double fraction = total ? (double)done / (double)total : 0.0;
    enum { width = 30 };
    char bar[width + 1];
    int full = (int)(fraction * width);
    for (int i = 0; i < width; i++)
        bar[i] = i < full ? '#' : '-';
    bar[width] = '\0';
    char eta[32] = "?";
    if (fraction > 0.001)
        format_seconds(eta, sizeof eta, elapsed * (1.0 - fraction) / fraction);
    double rate = (double)done / elapsed;
    fprintf(stderr, "\r%s [%s] %5.1f%%  %.3g Gcells/s  ETA %s   ", p->label, bar, 100.0 * fraction, rate / 1e9,
            eta);
    fflush(stderr);
    p->drawn = 1;
    return 0;
}

void cli_progress_next_part(cli_progress *p, uint64_t cells_before)
{
    p->base = cells_before;
    p->last_done = 0;
}

void cli_progress_finish(cli_progress *p)
{
    if (p->drawn) {
        fprintf(stderr, "\r%*s\r", 80, "");
        fflush(stderr);
    }
    p->drawn = 0;
}
