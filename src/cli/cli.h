/* Shared between the command-line parser (main.c) and the subcommands (commands.c). */
#ifndef WW_CLI_CLI_H
#define WW_CLI_CLI_H

#include <stddef.h>
#include <stdint.h>

#include "io.h"
#include "progress.h"
#include "wavewarp.h"

/* Exit codes, documented in --help. */
enum {
    CLI_EXIT_OK = 0,
    CLI_EXIT_RUNTIME = 1,      /* bad data, missing file, I/O error, no GPU, ... */
    CLI_EXIT_USAGE = 2,        /* bad command line or option value */
    CLI_EXIT_INTERRUPTED = 130 /* Ctrl-C (128 + SIGINT, as shells report it) */
};

typedef enum cli_command {
    CLI_CMD_DISTANCE = 0,
    CLI_CMD_PAIRWISE,
    CLI_CMD_KNN,
    CLI_CMD_CLASSIFY,
    CLI_CMD_DEMO,
    CLI_CMD_GENERATE,
    CLI_CMD_CALIBRATE,
    CLI_CMD_TED,          /* tree edit distance (issue 13), src/cli/ted_commands.c */
    CLI_CMD_TED_PAIRWISE,
    CLI_CMD_IMAGE_DISTANCE, /* image_commands.c */
    CLI_CMD_IMAGE_PAIRWISE,
    CLI_CMD_IMAGE_CLASSIFY,
    CLI_CMD_COUNT
} cli_command;

#define CLI_MAX_POSITIONAL 2

/* Everything the command line can say, with defaults filled in by main. */
typedef struct cli_settings {
    cli_command command;
    /* --measure, --nu/--lambda/--degree, --window/--window-fraction as typed; main turns them into
     * `measure` (cli_build_measure), the one descriptor every command computes with */
    ww_measure_kind measure_kind;
    ww_twed_params twed;
    const char *twed_option;   /* the first TWED-only option given ("--nu"), or NULL */
    double gamma;              /* --gamma (soft-DTW), default 1 */
    int divergence;            /* --divergence (soft-DTW) */
    const char *softdtw_option; /* the first soft-DTW-only option given, or NULL */
    size_t window;             /* --window radius; WW_NO_WINDOW when not given */
    double window_fraction;    /* --window-fraction; negative when not given */
    ww_measure measure;
    ww_backend backend;
    int threads;   /* 0: all cores */
    int use_float; /* --precision float */
    int quiet;
    cli_progress_mode progress;
    cli_label_mode labels;
    const char *output;           /* -o */
    const char *distances_output; /* knn --distances */
    size_t k;
    uint64_t max_memory; /* pairwise --max-memory in bytes; 0: half the physical memory */
    size_t row_a, row_b; /* distance --row / --row-b; SIZE_MAX when not given */
    size_t per_class, train_per_class, test_per_class, length;
    uint64_t seed;
    /* --devices: GPU ordinals, or all_devices for every visible one; device_count 0: not given */
    int devices[64];
    int device_count;
    int all_devices;
    const char *positional[CLI_MAX_POSITIONAL];
    int positional_count;
    /* tree edit distance: --delete-cost, --insert-cost, --relabel-cost; ted --mapping */
    ww_ted_params ted;
    int ted_mapping;
    int squared; /* image commands: --squared */
} cli_settings;

/* Prints "wavewarp: error: ..." on stderr. */
void cli_error(const char *fmt, ...);
/* Prints a usage error and the hint to run --help; returns CLI_EXIT_USAGE. */
int cli_usage_error(const cli_settings *s, const char *fmt, ...);

/* The subcommands; each returns an exit code. */
int cli_cmd_distance(const cli_settings *s);
int cli_cmd_pairwise(const cli_settings *s);
int cli_cmd_knn(const cli_settings *s);
int cli_cmd_classify(const cli_settings *s);
int cli_cmd_demo(const cli_settings *s);
int cli_cmd_generate(const cli_settings *s);
int cli_cmd_calibrate(const cli_settings *s);
int cli_cmd_ted(const cli_settings *s);
int cli_cmd_ted_pairwise(const cli_settings *s);
int cli_cmd_image_distance(const cli_settings *s);
int cli_cmd_image_pairwise(const cli_settings *s);
int cli_cmd_image_classify(const cli_settings *s);

#endif
