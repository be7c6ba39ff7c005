/* Progress bar on stderr and Ctrl-C handling for long runs: the API's progress callback draws the
 * bar and returns non-zero once SIGINT, SIGTERM or SIGHUP arrived, so the library stops cleanly and
 * the CLI can delete its temporary output before exiting. */
#ifndef WW_CLI_PROGRESS_H
#define WW_CLI_PROGRESS_H

#include <stdint.h>

typedef enum cli_progress_mode {
    CLI_PROGRESS_AUTO = 0, /* a bar when stderr is a terminal and the run lasts over 0.5 s */
    CLI_PROGRESS_NEVER,    /* --quiet */
    CLI_PROGRESS_ALWAYS    /* --progress: draw even when stderr is not a terminal */
} cli_progress_mode;

typedef struct cli_progress {
    const char *label;
    int enabled;
    int drawn; /* something is on the line and must be cleared */
    double start, last_draw;
    uint64_t expected_total;  /* cells the caller expects; the callback's total when larger */
    uint64_t base, last_done; /* to keep counting when a call restarts its count (knn chunks) */
} cli_progress;

/* Seconds on a monotonic clock. */
double cli_now(void);

void cli_progress_start(cli_progress *p, const char *label, cli_progress_mode mode, uint64_t expected_total);
/* A ww_progress_fn: user must point to a cli_progress. Returns non-zero after Ctrl-C. */
int cli_progress_callback(uint64_t done_cells, uint64_t total_cells, void *user);
/* The next call's counts start after `cells_before` cells of earlier calls (a matrix computed in
 * blocks): explicit, where the count going backwards could not be told from a larger block. */
void cli_progress_next_part(cli_progress *p, uint64_t cells_before);
/* Clears the bar's line. */
void cli_progress_finish(cli_progress *p);

/* Installed once, before a command runs, for the whole process: the first SIGINT, SIGTERM or SIGHUP
 * sets a flag that the command checks (it then discards its outputs and exits 130); a second one
 * removes every registered temporary file and exits 130 at once. */
void cli_interrupt_install(void);
int cli_interrupted(void);
/* Temporary output files for the second signal to remove (at most 8 at a time; -1 when full). The
 * path's storage must stay valid until it is unregistered. */
int cli_temp_register(const char *path);
void cli_temp_unregister(const char *path);
/* A point where the test hook may interrupt: with WW_CLI_INTERRUPT_AT=N in the environment, the
 * N-th call raises SIGINT (twice with N+), so tests interrupt at every point instead of by timing. */
void cli_checkpoint(void);

#endif
