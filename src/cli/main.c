/* wavewarp, the command-line tool: argument parsing, help texts, and dispatch to the subcommands
 * of commands.c. Uses only the public API of wavewarp.h. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "cli.h"
#include "progress.h"

typedef struct command_info {
    const char *name;
    const char *usage;   /* after "wavewarp NAME " */
    const char *summary; /* one line, for the command list */
    const char *details; /* paragraph shown by NAME --help */
    int min_positional, max_positional;
} command_info;

static const command_info commands[CLI_CMD_COUNT] = {
    [CLI_CMD_DISTANCE] = {"distance", "A B [options]", "distance between two series (TWED or DTW)",
                          "Prints the distance between series A and series B with 17 significant digits.\n"
                          "A and B are files holding one series each (one row, or one value per line; read\n"
                          "without a label column unless --labels), or dataset files with --row/--row-b\n"
                          "picking the series (0-based).",
                          2, 2},
    [CLI_CMD_PAIRWISE] = {"pairwise", "X [Y] -o OUT [options]", "distance matrix of X against itself or Y",
                          "Writes the matrix of distances between every series of X and every series of Y\n"
                          "(rows: X, columns: Y). Without Y, X against itself: each unordered pair is\n"
                          "computed once, the diagonal is 0. OUT is .npy (float64; float32 with --precision\n"
                          "float), .csv, .tsv or .txt (17 significant digits). A matrix larger than\n"
                          "--max-memory is computed in blocks of rows, each appended to OUT as it is done,\n"
                          "so it may be larger than the memory; X against itself then computes the pairs\n"
                          "that straddle two blocks twice, once in each.",
                          1, 2},
    [CLI_CMD_KNN] = {"knn", "QUERIES X -o OUT [-k K] [options]", "k nearest series of X for each query",
                     "Finds the K nearest series of X for each series of QUERIES (nearest first, ties to\n"
                     "the smaller index). OUT .csv/.tsv/.txt: a table with a header line and columns\n"
                     "query,rank,index,distance (query and index 0-based, rank 1..K). OUT .npy: the\n"
                     "indices as int64, shape (queries, K); --distances FILE.npy adds the distances.",
                     2, 2},
    [CLI_CMD_CLASSIFY] = {"classify", "TRAIN TEST [options]", "1-NN classification accuracy",
                          "Classifies every series of TEST by its nearest neighbour in TRAIN under the measure\n"
                          "(TWED unless --measure) and prints the accuracy, error rate, time, cells per second,\n"
                          "backend and measure. Both files need a class label in their first column (UCR\n"
                          "layout). With -o, writes one line per test series:\n"
                          "test,label,predicted,nearest,distance.",
                          2, 2},
    [CLI_CMD_DEMO] = {"demo", "[options]", "1-NN on generated synthetic control charts",
                      "Generates the synthetic control chart data set (Alcock & Manolopoulos 1999; six\n"
                      "classes: normal, cyclic, increasing/decreasing trend, upward/downward shift) with\n"
                      "different seeds for a train and a test set, classifies the test set by 1-NN under\n"
                      "the measure (TWED unless --measure), and prints accuracy, time, cells per second,\n"
                      "the backend and the measure. Nothing is downloaded.",
                      0, 0},
    [CLI_CMD_GENERATE] = {"generate", "-o FILE [options]", "write the synthetic control chart data set",
                          "Writes the synthetic control chart data set in class blocks, labels 1..6 (normal,\n"
                          "cyclic, increasing trend, decreasing trend, upward shift, downward shift).\n"
                          "FILE .tsv/.txt (tab-separated) or .csv: UCR layout, label first; .npy: values\n"
                          "only, float64 (count, length). The same seed gives the same file everywhere.",
                          0, 0},
    [CLI_CMD_CALIBRATE] = {"calibrate", "[-o FILE] [options]", "measure the GPU cost model and store it",
                           "Times each strategy of the GPU matrix engine on short runs (a few seconds), fits\n"
                           "the cost model's machine variables (time per cell, per warp step, per pair and\n"
                           "per synchronisation of the whole GPU) and the thresholds derived from them, prints\n"
                           "them and stores them in FILE (default: the per-user cache file,\n"
                           "$XDG_CACHE_HOME/wavewarp/calibration-<gpu>.txt or ~/.cache/..., which every later\n"
                           "run on that GPU loads; WW_CALIBRATION=FILE names another). Needs a CUDA GPU.",
                           0, 0},
    [CLI_CMD_TED] = {"ted", "A B [options]", "tree edit distance between two trees",
                     "Prints the tree edit distance (Zhang and Shasha; APTED's value) between trees A and B\n"
                     "with 17 significant digits. A and B are trees in bracket notation, e.g. '{a{b}{c}}'\n"
                     "(an argument starting with '{'), or files holding one such tree. --mapping also\n"
                     "prints an optimal edit mapping, one line per edit: the node of A and the node of B\n"
                     "(preorder numbers from 0; -1: inserted or deleted).",
                     2, 2},
    [CLI_CMD_TED_PAIRWISE] = {"ted-pairwise", "TREES [TREES2] -o OUT [options]",
                              "tree edit distance matrix of TREES against itself or TREES2",
                              "Writes the matrix of tree edit distances between every tree of TREES and every\n"
                              "tree of TREES2 (without TREES2: TREES against itself, each unordered pair once\n"
                              "when --insert-cost equals --delete-cost, zero diagonal). A tree file holds one\n"
                              "bracket tree per line (blank lines skipped), or is X-TED's labels file\n"
                              "NAME_nodes_N.txt, read with its adjacency file NAME_nodes_adj_N.txt beside it.\n"
                              "Labels are matched as strings across both files. OUT is .npy (float64), .csv,\n"
                              ".tsv or .txt.",
                              1, 2},
    [CLI_CMD_IMAGE_DISTANCE] = {"image-distance", "A B [options]", "elastic distance between two images",
                                "Prints the elastic image distance (the approximate 2D DP of elastic image\n"
                                "matching: a 1D DP between every pair of rows, then one over the rows) between\n"
                                "images A and B with 17 significant digits; inf when no path exists (one image\n"
                                "more than about twice as high or wide as the other). A and B are PGM/PPM files\n"
                                "(P2, P3, P5, P6) or .npy arrays (height, width[, channels]) of uint8, float32 or\n"
                                "float64. PNG: convert to PGM, or use the Python package.",
                                2, 2},
    [CLI_CMD_IMAGE_PAIRWISE] = {"image-pairwise", "X [Y] -o OUT [options]", "image distance matrix of X against X or Y",
                                "Writes the matrix of elastic image distances between every image of X and every\n"
                                "image of Y (rows: X, columns: Y; without Y, X against itself, each pair once).\n"
                                "X and Y are folders of PGM/PPM/.npy images (sub-folders included, in name\n"
                                "order), .npy stacks (count, height, width[, channels]) or single image files;\n"
                                "sizes may differ. OUT is .npy (float64), .csv, .tsv or .txt.",
                                1, 2},
    [CLI_CMD_IMAGE_CLASSIFY] = {"image-classify", "TRAIN TEST [options]", "1-NN image classification accuracy",
                                "Classifies every image of TEST by its nearest image of TRAIN under the elastic\n"
                                "image distance and prints the accuracy. Labels: the name of the sub-folder an\n"
                                "image is in, or for a .npy stack NAME.npy the lines of NAME.labels.txt. With -o,\n"
                                "writes one line per test image: test,label,predicted,nearest,distance.",
                                2, 2},
};

typedef enum option_id {
    OPT_MEASURE,
    OPT_WINDOW,
    OPT_WINDOW_FRACTION,
    OPT_NU,
    OPT_LAMBDA,
    OPT_DEGREE,
    OPT_BACKEND,
    OPT_THREADS,
    OPT_PRECISION,
    OPT_LABELS,
    OPT_NO_LABELS,
    OPT_ROW,
    OPT_ROW_B,
    OPT_K,
    OPT_OUTPUT,
    OPT_DISTANCES,
    OPT_MAX_MEMORY,
    OPT_PER_CLASS,
    OPT_TRAIN_PER_CLASS,
    OPT_TEST_PER_CLASS,
    OPT_LENGTH,
    OPT_SEED,
    OPT_DEVICES,
    OPT_QUIET,
    OPT_PROGRESS,
    OPT_HELP,
    OPT_DELETE_COST,
    OPT_INSERT_COST,
    OPT_RELABEL_COST,
    OPT_MAPPING,
    OPT_SQUARED,
    OPT_GAMMA,
    OPT_DIVERGENCE
} option_id;

#define ON(c) (1u << (c))
#define ALL_COMMANDS (ON(CLI_CMD_COUNT) - 1u)
#define TREES (ON(CLI_CMD_TED) | ON(CLI_CMD_TED_PAIRWISE))
#define IMAGE_COMMANDS (ON(CLI_CMD_IMAGE_DISTANCE) | ON(CLI_CMD_IMAGE_PAIRWISE) | ON(CLI_CMD_IMAGE_CLASSIFY))
#define COMPUTING (ALL_COMMANDS & ~ON(CLI_CMD_GENERATE) & ~ON(CLI_CMD_CALIBRATE) & ~TREES & ~IMAGE_COMMANDS)
#define READING (ON(CLI_CMD_DISTANCE) | ON(CLI_CMD_PAIRWISE) | ON(CLI_CMD_KNN) | ON(CLI_CMD_CLASSIFY))
#define LONG_RUNS                                                                                                      \
    (ON(CLI_CMD_PAIRWISE) | ON(CLI_CMD_KNN) | ON(CLI_CMD_CLASSIFY) | ON(CLI_CMD_DEMO) | ON(CLI_CMD_TED_PAIRWISE) |    \
     ON(CLI_CMD_IMAGE_PAIRWISE) | ON(CLI_CMD_IMAGE_CLASSIFY))

typedef struct option_spec {
    option_id id;
    const char *name;       /* after "--" */
    char short_name;        /* after "-", or 0 */
    const char *value_name; /* NULL: a flag without value */
    unsigned commands;      /* where it is accepted */
    const char *help;
} option_spec;

static const option_spec options[] = {
    {OPT_OUTPUT, "output", 'o', "FILE",
     ON(CLI_CMD_PAIRWISE) | ON(CLI_CMD_KNN) | ON(CLI_CMD_CLASSIFY) | ON(CLI_CMD_GENERATE) | ON(CLI_CMD_CALIBRATE) |
         ON(CLI_CMD_TED_PAIRWISE) | ON(CLI_CMD_IMAGE_PAIRWISE) | ON(CLI_CMD_IMAGE_CLASSIFY),
     "output file; its extension picks the format (calibrate: any name)"},
    {OPT_K, "k", 'k', "K", ON(CLI_CMD_KNN), "neighbours per query, 1..count of X (default 1)"},
    {OPT_DISTANCES, "distances", 0, "FILE", ON(CLI_CMD_KNN),
     "with -o OUT.npy: also write the distances (float64 .npy)"},
    {OPT_MAX_MEMORY, "max-memory", 0, "BYTES", ON(CLI_CMD_PAIRWISE),
     "matrix memory, suffix K, M or G; more: blocks of rows (default: half the RAM)"},
    {OPT_ROW, "row", 0, "I", ON(CLI_CMD_DISTANCE), "take series I (0-based) of A"},
    {OPT_ROW_B, "row-b", 0, "J", ON(CLI_CMD_DISTANCE), "take series J (0-based) of B"},
    {OPT_MEASURE, "measure", 0, "M", COMPUTING, "twed, dtw or softdtw, any case (default twed)"},
    {OPT_WINDOW, "window", 0, "R", COMPUTING,
     "Sakoe-Chiba window: radius in samples, integer >= 0 (default: none)"},
    {OPT_WINDOW_FRACTION, "window-fraction", 0, "F", COMPUTING,
     "window as aeon's fraction, 0..1: radius floor(F * min(n, m)) per pair"},
    {OPT_NU, "nu", 0, "X", COMPUTING, "twed only: stiffness, >= 0 (default 0.001)"},
    {OPT_LAMBDA, "lambda", 0, "X", COMPUTING, "twed only: deletion penalty, >= 0 (default 1)"},
    {OPT_DEGREE, "degree", 0, "P", COMPUTING, "twed only: L_p norm between samples, integer >= 1 (default 2)"},
    {OPT_GAMMA, "gamma", 0, "X", COMPUTING, "softdtw only: smoothing, > 0 (default 1)"},
    {OPT_DIVERGENCE, "divergence", 0, NULL, COMPUTING,
     "softdtw only: the divergence sdtw(x, y) - (sdtw(x, x) + sdtw(y, y)) / 2"},
    {OPT_BACKEND, "backend", 0, "B", COMPUTING | TREES | ON(CLI_CMD_IMAGE_PAIRWISE) | ON(CLI_CMD_IMAGE_CLASSIFY),
     "auto, cpu or cuda (default auto: a GPU when one is usable)"},
    {OPT_THREADS, "threads", 0, "N", COMPUTING | TREES | IMAGE_COMMANDS, "CPU threads, 0 = all cores (default 0)"},
    {OPT_DELETE_COST, "delete-cost", 0, "X", TREES, "cost of deleting a node, >= 0 (default 1)"},
    {OPT_INSERT_COST, "insert-cost", 0, "X", TREES, "cost of inserting a node, >= 0 (default 1)"},
    {OPT_RELABEL_COST, "relabel-cost", 0, "X", TREES,
     "cost of relabelling a node to a different label, >= 0 (default 1)"},
    {OPT_MAPPING, "mapping", 0, NULL, ON(CLI_CMD_TED), "also print an optimal edit mapping"},
    {OPT_PRECISION, "precision", 0, "P", COMPUTING,
     "double or float (float: data go to the library as float32)"},
    {OPT_LABELS, "labels", 0, NULL, READING, "the first column of text files is the class label"},
    {OPT_NO_LABELS, "no-labels", 0, NULL, (READING & ~ON(CLI_CMD_CLASSIFY)) | ON(CLI_CMD_GENERATE),
     "no label column (generate: write none)"},
    {OPT_PER_CLASS, "per-class", 0, "N", ON(CLI_CMD_GENERATE), "series per class (default 100)"},
    {OPT_TRAIN_PER_CLASS, "train-per-class", 0, "N", ON(CLI_CMD_DEMO),
     "training series per class (default 50)"},
    {OPT_TEST_PER_CLASS, "test-per-class", 0, "N", ON(CLI_CMD_DEMO), "test series per class (default 50)"},
    {OPT_LENGTH, "length", 0, "N", ON(CLI_CMD_DEMO) | ON(CLI_CMD_GENERATE), "samples per series (default 60)"},
    {OPT_SEED, "seed", 0, "S", ON(CLI_CMD_DEMO) | ON(CLI_CMD_GENERATE),
     "random seed (default 1; demo: train S, test S+1)"},
    {OPT_DEVICES, "devices", 0, "LIST", ON(CLI_CMD_PAIRWISE) | ON(CLI_CMD_KNN) | ON(CLI_CMD_CLASSIFY),
     "GPUs to spread the matrix over: 0,1,... or all (implies --backend cuda)"},
    {OPT_QUIET, "quiet", 'q', NULL, ALL_COMMANDS, "no progress bar, notes or summary line"},
    {OPT_PROGRESS, "progress", 0, NULL, LONG_RUNS, "show the progress bar even when stderr is not a terminal"},
    {OPT_HELP, "help", 'h', NULL, ALL_COMMANDS, "show this help"},
    {OPT_SQUARED, "squared", 0, NULL, IMAGE_COMMANDS, "squared Euclidean distance between pixels"},
};
#define OPTION_COUNT (sizeof options / sizeof options[0])

static const char *program = "wavewarp";

static void print_error(const char *fmt, va_list ap)
{
    fprintf(stderr, "%s: error: ", program);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

void cli_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    print_error(fmt, ap);
    va_end(ap);
}

int cli_usage_error(const cli_settings *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    print_error(fmt, ap);
    va_end(ap);
    if (s && (int)s->command < CLI_CMD_COUNT)
        fprintf(stderr, "Try '%s %s --help'.\n", program, commands[s->command].name);
    else
        fprintf(stderr, "Try '%s --help'.\n", program);
    return CLI_EXIT_USAGE;
}

/* ---------------------------------------------------------------- help */

static const char formats_help[] =
    "Input files (the extension picks the reader):\n"
    "  .tsv .txt, others  UCR/UEA text: one series per line, values split by tabs or spaces\n"
    "  .csv               one series per line, values split by commas\n"
    "  .npy               float64 or float32, shape (count, length), (count, length, dim)\n"
    "                     or (length,); holds no labels\n"
    "  .ts                the UEA/UCR archive's and aeon's format: @ header, one case a line,\n"
    "                     dimensions split by ':', the label last (class names numbered 0, 1,\n"
    "                     ... in @classLabel order unless they are numbers); any lengths\n"
    "  Text files: a first column holding only integers is read as the class label (UCR\n"
    "  layout), any other first column as data (UCI synthetic_control.data), and a note on\n"
    "  stderr says which (not with -q); --labels or --no-labels decide explicitly. Blank\n"
    "  lines and lines starting with '#' are skipped.\n"
    "  Variable-length series are padded with trailing NaN (UCR convention); NaN inside a\n"
    "  series, infinite values and rows of different field counts are errors.\n";

static const char measures_help[] =
    "Measures (--measure):\n"
    "  twed  Time Warp Edit Distance (Marteau 2009), the default; --nu, --lambda and --degree\n"
    "        set its parameters (defaults 0.001, 1 and 2, aeon's)\n"
    "  dtw   dynamic time warping with the squared Euclidean cost between samples and no\n"
    "        square root at the end (aeon's dtw_distance; tslearn and dtaidistance report its\n"
    "        square root); it has no parameters: --nu, --lambda, --degree are errors with it\n"
    "  softdtw  soft-DTW (Cuturi and Blondel 2017), squared Euclidean cost, smoothed by --gamma\n"
    "        (default 1; as gamma -> 0 it tends to dtw); --divergence gives the soft-DTW\n"
    "        divergence instead (0 for equal series). Values may be negative. Computed on the CPU.\n"
    "  Each takes a Sakoe-Chiba window: --window R keeps the cells within R samples of the\n"
    "  diagonal (0 still leaves a path from corner to corner; series of different lengths\n"
    "  follow the stretched diagonal, as aeon 1.6 does), --window-fraction F the radius\n"
    "  floor(F * shorter length) for each pair (aeon's window=F; 1 is no window). Only the\n"
    "  band's cells are computed, and counted in cells/s. The two options exclude each other.\n";

static const char exit_help[] =
    "Exit status: 0 success, 1 data or runtime error (bad file, no GPU, ...), 2 usage error,\n"
    "130 interrupted by Ctrl-C (no output file is left behind).\n";

static void print_main_help(FILE *fp)
{
    fprintf(fp, "Usage: %s COMMAND [options] [files]\n\n", program);
    fprintf(fp, "Exact elastic distances between time series (TWED, DTW; --measure), in linear memory,\n"
                "on CPUs and NVIDIA GPUs.\n\nCommands:\n");
    for (int c = 0; c < CLI_CMD_COUNT; c++) {
        char head[64];
        snprintf(head, sizeof head, "%s %s", commands[c].name, commands[c].usage);
        char *opts = strstr(head, " [options]");
        if (opts)
            *opts = '\0';
        fprintf(fp, "  %-34s %s\n", head, commands[c].summary);
    }
    fprintf(fp,
            "\nRun '%s COMMAND --help' for the options of a command; '%s --version' for the\n"
            "version. Try '%s demo' or '%s demo --measure dtw --window 6'.\n\n%s\n%s\n%s",
            program, program, program, program, measures_help, formats_help, exit_help);
}

static void print_command_help(cli_command c)
{
    const command_info *info = &commands[c];
    printf("Usage: %s %s %s\n\n%s\n\nOptions:\n", program, info->name, info->usage, info->details);
    for (size_t i = 0; i < OPTION_COUNT; i++) {
        const option_spec *o = &options[i];
        if (!(o->commands & ON(c)))
            continue;
        char head[64];
        if (o->short_name)
            snprintf(head, sizeof head, "-%c, --%s%s%s", o->short_name, o->name, o->value_name ? " " : "",
                     o->value_name ? o->value_name : "");
        else
            snprintf(head, sizeof head, "    --%s%s%s", o->name, o->value_name ? " " : "",
                     o->value_name ? o->value_name : "");
        printf("  %-24s %s\n", head, o->help);
    }
    if (ON(c) & COMPUTING)
        printf("\n%s", measures_help);
    if (c != CLI_CMD_GENERATE && c != CLI_CMD_DEMO && c != CLI_CMD_CALIBRATE && !(ON(c) & (TREES | IMAGE_COMMANDS)))
        printf("\n%s", formats_help);
    if (ON(c) & LONG_RUNS)
        printf("\nA progress bar appears on stderr when it is a terminal and the run takes over half a\n"
               "second; Ctrl-C stops the run cleanly.\n");
    printf("\n%s", exit_help);
}

/* ---------------------------------------------------------------- option values */

/* `name` is the option as typed: "--nu", "-k". */
static int parse_double_value(const cli_settings *s, const char *name, const char *text, double *out)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(text, &end); /* an underflow (1e-400) reads as 0 or a subnormal, as in Python */
    if (*text == '\0' || *end != '\0' || !isfinite(v))
        return cli_usage_error(s, "%s: '%s' is not a finite number", name, text);
    if (v < 0)
        return cli_usage_error(s, "%s must be >= 0 (got %s)", name, text);
    *out = v;
    return CLI_EXIT_OK;
}

/* A fraction in [0, 1]. */
static int parse_fraction_value(const cli_settings *s, const char *name, const char *text, double *out)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(text, &end); /* an underflow (1e-400) reads as 0 or a subnormal, as in Python */
    if (*text == '\0' || *end != '\0' || !isfinite(v))
        return cli_usage_error(s, "%s: '%s' is not a finite number", name, text);
    if (v < 0 || v > 1)
        return cli_usage_error(s, "%s must be between 0 and 1 (got %s)", name, text);
    *out = v;
    return CLI_EXIT_OK;
}

/* An unsigned integer in [min, max]. */
static int parse_size_value(const cli_settings *s, const char *name, const char *text, uint64_t min,
                            uint64_t max, uint64_t *out)
{
    if (text[0] == '-')
        return cli_usage_error(s, "%s must be at least %llu (got %s)", name, (unsigned long long)min, text);
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (text[0] < '0' || text[0] > '9' || *end != '\0')
        return cli_usage_error(s, "%s: '%s' is not a whole number", name, text);
    if (errno == ERANGE)
        return cli_usage_error(s, "%s: '%s' is too large", name, text);
    if (v < min)
        return cli_usage_error(s, "%s must be at least %llu (got %s)", name, (unsigned long long)min, text);
    if (v > max)
        return cli_usage_error(s, "%s must be at most %llu (got %s)", name, (unsigned long long)max, text);
    *out = v;
    return CLI_EXIT_OK;
}

/* A positive number of bytes: digits, then optionally K, M or G (powers of 1024, either case). */
static int parse_bytes_value(const cli_settings *s, const char *name, const char *text, uint64_t *out)
{
    if (text[0] == '-')
        return cli_usage_error(s, "%s must be a positive number of bytes (got %s)", name, text);
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    int shift = 0;
    if (end != text && *end != '\0' && end[1] == '\0') {
        const char *suffix = strchr("KkMmGg", *end);
        if (suffix != NULL) {
            shift = 10 * (int)(1 + (suffix - "KkMmGg") / 2);
            end++;
        }
    }
    if (text[0] < '0' || text[0] > '9' || *end != '\0')
        return cli_usage_error(s, "%s: '%s' is not a number of bytes (digits, then optionally K, M or G)", name,
                               text);
    if (errno == ERANGE || v > (UINT64_MAX >> shift))
        return cli_usage_error(s, "%s: '%s' is too large", name, text);
    if (v == 0)
        return cli_usage_error(s, "%s must be a positive number of bytes (got %s)", name, text);
    *out = (uint64_t)v << shift;
    return CLI_EXIT_OK;
}

/* "all", or GPU ordinals separated by commas ("0,1"; one may repeat, which tests use). */
static int parse_devices_value(cli_settings *s, const char *name, const char *text)
{
    s->device_count = 0;
    s->all_devices = strcmp(text, "all") == 0;
    if (s->all_devices)
        return CLI_EXIT_OK;
    const char *p = text;
    for (;;) {
        char *end = NULL;
        errno = 0;
        long v = strtol(p, &end, 10);
        if (p[0] < '0' || p[0] > '9' || end == p || errno == ERANGE || v > 1000000 || (*end != ',' && *end != '\0'))
            return cli_usage_error(s, "%s: '%s' is not 'all' or a list of GPU numbers such as 0,1", name, text);
        if (s->device_count == (int)(sizeof s->devices / sizeof s->devices[0]))
            return cli_usage_error(s, "%s: more than %d GPUs", name, s->device_count);
        s->devices[s->device_count++] = (int)v;
        if (*end == '\0')
            return CLI_EXIT_OK;
        p = end + 1;
    }
}

/* The option as a user would type it: "-k", "--nu". */
static const char *option_flag(const option_spec *o, char *buf, size_t size)
{
    snprintf(buf, size, "%s%s", strlen(o->name) == 1 ? "-" : "--", o->name);
    return buf;
}

static int apply_option(cli_settings *s, const option_spec *o, const char *value)
{
    char flag[32];
    option_flag(o, flag, sizeof flag);
    uint64_t n = 0;
    int rc = CLI_EXIT_OK;
    switch (o->id) {
    case OPT_MEASURE:
        /* any case, as Python's measure names */
        if (strcasecmp(value, "twed") == 0)
            s->measure_kind = WW_MEASURE_TWED;
        else if (strcasecmp(value, "dtw") == 0)
            s->measure_kind = WW_MEASURE_DTW;
        else if (strcasecmp(value, "softdtw") == 0)
            s->measure_kind = WW_MEASURE_SOFTDTW;
        else
            return cli_usage_error(s, "--measure: unknown measure '%s' (expected twed, dtw or softdtw)", value);
        return CLI_EXIT_OK;
    case OPT_WINDOW:
        /* a radius of 2^32 or more is no window for any series the library can window */
        if ((rc = parse_size_value(s, flag, value, 0, UINT32_MAX, &n)) == CLI_EXIT_OK)
            s->window = (size_t)n;
        return rc;
    case OPT_WINDOW_FRACTION: return parse_fraction_value(s, flag, value, &s->window_fraction);
    case OPT_GAMMA:
    case OPT_DIVERGENCE:
        if (s->softdtw_option == NULL)
            s->softdtw_option = o->name;
        if (o->id == OPT_DIVERGENCE) {
            s->divergence = 1;
            return CLI_EXIT_OK;
        }
        {
            char *end = NULL;
            errno = 0;
            const double v = strtod(value, &end); /* an underflow reads as 0: "greater than 0" */
            if (*value == '\0' || *end != '\0' || !isfinite(v))
                return cli_usage_error(s, "%s: '%s' is not a finite number", flag, value);
            if (!(v > 0))
                return cli_usage_error(s, "%s must be greater than 0 (got %s)", flag, value);
            s->gamma = v;
            return CLI_EXIT_OK;
        }
    case OPT_NU:
    case OPT_LAMBDA:
    case OPT_DEGREE:
        if (s->twed_option == NULL)
            s->twed_option = o->name;
        if (o->id == OPT_NU)
            return parse_double_value(s, flag, value, &s->twed.nu);
        if (o->id == OPT_LAMBDA)
            return parse_double_value(s, flag, value, &s->twed.lambda);
        if ((rc = parse_size_value(s, flag, value, 1, 1000000, &n)) == CLI_EXIT_OK)
            s->twed.degree = (int)n;
        return rc;
    case OPT_BACKEND:
        if (strcasecmp(value, "auto") == 0) /* any case, as --measure */
            s->backend = WW_BACKEND_AUTO;
        else if (strcasecmp(value, "cpu") == 0)
            s->backend = WW_BACKEND_CPU;
        else if (strcasecmp(value, "cuda") == 0) /* "gpu" is no alias: Python says "cuda" too */
            s->backend = WW_BACKEND_CUDA;
        else
            return cli_usage_error(s, "--backend: unknown backend '%s' (expected auto, cpu or cuda)", value);
        return CLI_EXIT_OK;
    case OPT_THREADS:
        if ((rc = parse_size_value(s, flag, value, 0, 4096, &n)) == CLI_EXIT_OK)
            s->threads = (int)n;
        return rc;
    case OPT_PRECISION:
        if (strcmp(value, "double") == 0 || strcmp(value, "float64") == 0)
            s->use_float = 0;
        else if (strcmp(value, "float") == 0 || strcmp(value, "float32") == 0)
            s->use_float = 1;
        else
            return cli_usage_error(s, "--precision: '%s' is neither double nor float", value);
        return CLI_EXIT_OK;
    case OPT_LABELS: s->labels = CLI_LABELS_FIRST; return CLI_EXIT_OK;
    case OPT_NO_LABELS: s->labels = CLI_LABELS_NONE; return CLI_EXIT_OK;
    case OPT_ROW:
        if ((rc = parse_size_value(s, flag, value, 0, SIZE_MAX - 1, &n)) == CLI_EXIT_OK)
            s->row_a = (size_t)n;
        return rc;
    case OPT_ROW_B:
        if ((rc = parse_size_value(s, flag, value, 0, SIZE_MAX - 1, &n)) == CLI_EXIT_OK)
            s->row_b = (size_t)n;
        return rc;
    case OPT_K:
        if ((rc = parse_size_value(s, flag, value, 1, SIZE_MAX, &n)) == CLI_EXIT_OK)
            s->k = (size_t)n;
        return rc;
    case OPT_OUTPUT: s->output = value; return CLI_EXIT_OK;
    case OPT_DISTANCES: s->distances_output = value; return CLI_EXIT_OK;
    case OPT_MAX_MEMORY: return parse_bytes_value(s, flag, value, &s->max_memory);
    case OPT_PER_CLASS:
    case OPT_TRAIN_PER_CLASS:
    case OPT_TEST_PER_CLASS:
    case OPT_LENGTH:
        if ((rc = parse_size_value(s, flag, value, 1, 100000000, &n)) != CLI_EXIT_OK)
            return rc;
        if (o->id == OPT_PER_CLASS)
            s->per_class = (size_t)n;
        else if (o->id == OPT_TRAIN_PER_CLASS)
            s->train_per_class = (size_t)n;
        else if (o->id == OPT_TEST_PER_CLASS)
            s->test_per_class = (size_t)n;
        else
            s->length = (size_t)n;
        return CLI_EXIT_OK;
    case OPT_SEED:
        if ((rc = parse_size_value(s, flag, value, 0, UINT64_MAX, &n)) == CLI_EXIT_OK)
            s->seed = n;
        return rc;
    case OPT_DEVICES: return parse_devices_value(s, flag, value);
    case OPT_QUIET:
        s->quiet = 1;
        s->progress = CLI_PROGRESS_NEVER;
        return CLI_EXIT_OK;
    case OPT_PROGRESS:
        if (!s->quiet)
            s->progress = CLI_PROGRESS_ALWAYS;
        return CLI_EXIT_OK;
    case OPT_HELP: return CLI_EXIT_OK; /* handled by the caller */
    case OPT_DELETE_COST: return parse_double_value(s, flag, value, &s->ted.delete_cost);
    case OPT_INSERT_COST: return parse_double_value(s, flag, value, &s->ted.insert_cost);
    case OPT_RELABEL_COST: return parse_double_value(s, flag, value, &s->ted.relabel_cost);
    case OPT_MAPPING: s->ted_mapping = 1; return CLI_EXIT_OK;
    case OPT_SQUARED: s->squared = 1; return CLI_EXIT_OK;
    }
    return CLI_EXIT_OK;
}

static const option_spec *find_long_option(const char *name, size_t len)
{
    for (size_t i = 0; i < OPTION_COUNT; i++)
        if (strlen(options[i].name) == len && strncmp(options[i].name, name, len) == 0)
            return &options[i];
    return NULL;
}

static const option_spec *find_short_option(char c)
{
    for (size_t i = 0; i < OPTION_COUNT; i++)
        if (options[i].short_name == c)
            return &options[i];
    return NULL;
}

static void default_settings(cli_settings *s, cli_command c)
{
    memset(s, 0, sizeof *s);
    s->command = c;
    s->measure_kind = WW_MEASURE_TWED;
    s->twed = ww_twed_params_default();
    s->gamma = 1.0;
    s->window = WW_NO_WINDOW;
    s->window_fraction = -1.0;
    s->measure = ww_measure_twed(s->twed.nu, s->twed.lambda, s->twed.degree);
    s->backend = WW_BACKEND_AUTO;
    s->progress = CLI_PROGRESS_AUTO;
    s->labels = CLI_LABELS_AUTO;
    s->k = 1;
    s->row_a = s->row_b = SIZE_MAX;
    s->per_class = 100;
    s->train_per_class = 50;
    s->test_per_class = 50;
    s->length = 60;
    s->seed = 1;
    s->ted = ww_ted_params_default();
}

/* The measure of the command line, built in this one place from --measure, the TWED parameters
 * and the window; every computing command uses s->measure. Options that do not fit together are
 * usage errors, whatever their order: TWED parameters with another measure (never silently
 * ignored), and --window with --window-fraction. */
static int build_measure(cli_settings *s)
{
    if (s->window != WW_NO_WINDOW && s->window_fraction >= 0)
        return cli_usage_error(s, "--window and --window-fraction exclude each other (a radius in samples, or a "
                                  "fraction of the shorter series)");
    if (s->measure_kind != WW_MEASURE_SOFTDTW && s->softdtw_option != NULL)
        return cli_usage_error(s, "--%s is a soft-DTW parameter; --measure %s does not take it (drop --%s, or use "
                                  "--measure softdtw)",
                               s->softdtw_option, s->measure_kind == WW_MEASURE_TWED ? "twed" : "dtw",
                               s->softdtw_option);
    if (s->measure_kind == WW_MEASURE_TWED) {
        s->measure = ww_measure_twed(s->twed.nu, s->twed.lambda, s->twed.degree);
    } else {
        if (s->twed_option != NULL)
            return cli_usage_error(s, "--%s is a TWED parameter; --measure %s takes %s (drop --%s, or use "
                                      "--measure twed)",
                                   s->twed_option, s->measure_kind == WW_MEASURE_DTW ? "dtw" : "softdtw",
                                   s->measure_kind == WW_MEASURE_DTW ? "none" : "--gamma and --divergence",
                                   s->twed_option);
        if (s->measure_kind == WW_MEASURE_DTW) {
            s->measure = ww_measure_dtw();
        } else {
            s->measure = ww_measure_softdtw(s->gamma);
            if (s->divergence && ww_measure_set_divergence(&s->measure, 1) != WW_OK)
                return cli_usage_error(s, "--divergence: not available");
        }
    }
    ww_status st = s->window_fraction >= 0 ? ww_measure_set_window_fraction(&s->measure, s->window_fraction)
                                           : ww_measure_set_window(&s->measure, s->window);
    if (st == WW_OK)
        st = ww_measure_check(&s->measure);
    if (st != WW_OK) /* the parsers above refuse every value the library would */
        return cli_usage_error(s, "invalid measure: %s", ww_strerror(st));
    return CLI_EXIT_OK;
}

/* Non-zero when paths a and b name the same file: the same file when both exist (links
 * included), else the same name in the same directory. */
static int same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    int a_exists = stat(a, &sa) == 0, b_exists = stat(b, &sb) == 0;
    if (a_exists || b_exists)
        return a_exists && b_exists && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    /* neither exists yet: the same name in the same directory, so that "nn.npy" is "./nn.npy" */
    const char *slash_a = strrchr(a, '/'), *slash_b = strrchr(b, '/');
    const char *base_a = slash_a ? slash_a + 1 : a, *base_b = slash_b ? slash_b + 1 : b;
    if (strcmp(base_a, base_b) != 0)
        return 0;
    char *dir_a = strndup(a, slash_a ? (size_t)(slash_a - a) + 1 : 0);
    char *dir_b = strndup(b, slash_b ? (size_t)(slash_b - b) + 1 : 0);
    int same;
    if (dir_a && dir_b && stat(*dir_a ? dir_a : ".", &sa) == 0 && stat(*dir_b ? dir_b : ".", &sb) == 0)
        same = sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    else /* a directory that is not there fails when the output is opened; until then, the names */
        same = strcmp(a, b) == 0;
    free(dir_a);
    free(dir_b);
    return same;
}

/* Refuses outputs that would overwrite each other (knn -o X.npy --distances X.npy) or an input
 * of the command (pairwise train.tsv -o train.tsv): the rename at the end would replace it. Done
 * before anything is read or created, so nothing is left behind. */
static int check_output_paths(const cli_settings *s)
{
    const char *outputs[2] = {s->output, s->distances_output};
    const char *names[2] = {"-o", "--distances"};
    for (int i = 0; i < 2; i++) {
        if (outputs[i] == NULL)
            continue;
        if (i == 1 && outputs[0] != NULL && same_file(outputs[0], outputs[1]))
            return cli_usage_error(s, "-o and --distances name the same file (%s); give two different files",
                                   outputs[1]);
        for (int p = 0; p < s->positional_count; p++)
            if (same_file(outputs[i], s->positional[p]))
                return cli_usage_error(s, "%s %s names an input file of the command, which the output would "
                                          "replace; choose another output file",
                                       names[i], outputs[i]);
    }
    return CLI_EXIT_OK;
}

/* Parses argv[first..] for command c. Returns -1 to go on, or an exit code (after --help: 0). */
static int parse_command_line(cli_settings *s, int argc, char **argv, int first)
{
    int only_positional = 0, want_help = 0;
    /* each option's value, to refuse a second one: letting the last win would hide a typo */
    const char *given[OPTION_COUNT] = {0};
    for (int i = first; i < argc; i++) {
        const char *arg = argv[i];
        if (only_positional || arg[0] != '-' || arg[1] == '\0') {
            if (s->positional_count == CLI_MAX_POSITIONAL)
                return cli_usage_error(s, "too many arguments ('%s')", arg);
            s->positional[s->positional_count++] = arg;
            continue;
        }
        if (strcmp(arg, "--") == 0) {
            only_positional = 1;
            continue;
        }
        const option_spec *o;
        const char *value = NULL;
        char flag[32];
        if (arg[1] == '-') {
            const char *name = arg + 2, *eq = strchr(name, '=');
            o = find_long_option(name, eq ? (size_t)(eq - name) : strlen(name));
            if (o == NULL)
                return cli_usage_error(s, "unknown option '%s'", arg);
            if (eq) {
                if (o->value_name == NULL)
                    return cli_usage_error(s, "option '%s' takes no value", option_flag(o, flag, sizeof flag));
                value = eq + 1;
            }
        } else {
            o = find_short_option(arg[1]);
            if (o == NULL)
                return cli_usage_error(s, "unknown option '%s'", arg);
            if (arg[2] != '\0') {
                if (o->value_name == NULL)
                    return cli_usage_error(s, "unknown option '%s'", arg);
                value = arg + 2; /* -oFILE, -k5 */
            }
        }
        if (!(o->commands & ON(s->command)))
            return cli_usage_error(s, "option '%s' does not apply to '%s'", option_flag(o, flag, sizeof flag),
                                   commands[s->command].name);
        if (o->value_name && value == NULL) {
            if (i + 1 >= argc)
                return cli_usage_error(s, "option '%s' needs a value (%s)", option_flag(o, flag, sizeof flag),
                                       o->value_name);
            value = argv[++i];
        }
        if (o->value_name) {
            size_t at = (size_t)(o - options);
            if (given[at] != NULL) {
                char typed[40]; /* as on the command line: "-o" or "--output" */
                if (arg[1] == '-')
                    snprintf(typed, sizeof typed, "--%s", o->name);
                else
                    snprintf(typed, sizeof typed, "-%c", o->short_name);
                return cli_usage_error(s, "%s given twice ('%s', then '%s'); give it once", typed, given[at], value);
            }
            given[at] = value;
        }
        if (o->id == OPT_HELP)
            want_help = 1;
        int rc = apply_option(s, o, value);
        if (rc != CLI_EXIT_OK)
            return rc;
    }
    if (want_help) {
        print_command_help(s->command);
        return CLI_EXIT_OK;
    }
    const command_info *info = &commands[s->command];
    if (s->positional_count < info->min_positional)
        return cli_usage_error(s, "missing file argument (usage: %s %s %s)", program, info->name, info->usage);
    if (s->positional_count > info->max_positional)
        return cli_usage_error(s, "too many arguments ('%s')", s->positional[info->max_positional]);
    if ((ON(s->command) & COMPUTING) && build_measure(s) != CLI_EXIT_OK)
        return CLI_EXIT_USAGE;
    if (check_output_paths(s) != CLI_EXIT_OK)
        return CLI_EXIT_USAGE;
    return -1;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        print_main_help(stderr);
        return CLI_EXIT_USAGE;
    }
    const char *name = argv[1];
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) {
        print_main_help(stdout);
        return CLI_EXIT_OK;
    }
    if (strcmp(name, "--version") == 0 || strcmp(name, "-V") == 0) {
        printf("%s %s\n", program, ww_version());
        return CLI_EXIT_OK;
    }
    int first = 2;
    if (strcmp(name, "help") == 0) { /* "wavewarp help CMD" = "wavewarp CMD --help" */
        if (argc < 3) {
            print_main_help(stdout);
            return CLI_EXIT_OK;
        }
        name = argv[2];
        first = argc; /* nothing else to parse */
    }
    cli_command c = CLI_CMD_COUNT;
    for (int i = 0; i < CLI_CMD_COUNT; i++)
        if (strcmp(name, commands[i].name) == 0)
            c = (cli_command)i;
    if (c == CLI_CMD_COUNT)
        return cli_usage_error(NULL, "unknown command '%s'", name);
    if (first == argc && strcmp(argv[1], "help") == 0) {
        print_command_help(c);
        return CLI_EXIT_OK;
    }

    cli_settings s;
    default_settings(&s, c);
    int rc = parse_command_line(&s, argc, argv, first);
    if (rc >= 0)
        return rc;
    /* Past a file-size limit (ulimit -f) a write then fails with EFBIG, which the writers report
     * and answer by deleting the temporary output, instead of SIGXFSZ killing the process and
     * leaving the partial temporary file behind. */
    signal(SIGXFSZ, SIG_IGN);
    /* Ctrl-C from here on: no command is ever without its handler (progress.h) */
    cli_interrupt_install();
    switch (c) {
    case CLI_CMD_DISTANCE: return cli_cmd_distance(&s);
    case CLI_CMD_PAIRWISE: return cli_cmd_pairwise(&s);
    case CLI_CMD_KNN: return cli_cmd_knn(&s);
    case CLI_CMD_CLASSIFY: return cli_cmd_classify(&s);
    case CLI_CMD_DEMO: return cli_cmd_demo(&s);
    case CLI_CMD_GENERATE: return cli_cmd_generate(&s);
    case CLI_CMD_CALIBRATE: return cli_cmd_calibrate(&s);
    case CLI_CMD_TED: return cli_cmd_ted(&s);
    case CLI_CMD_TED_PAIRWISE: return cli_cmd_ted_pairwise(&s);
    case CLI_CMD_IMAGE_DISTANCE: return cli_cmd_image_distance(&s);
    case CLI_CMD_IMAGE_PAIRWISE: return cli_cmd_image_pairwise(&s);
    case CLI_CMD_IMAGE_CLASSIFY: return cli_cmd_image_classify(&s);
    case CLI_CMD_COUNT: break;
    }
    return CLI_EXIT_USAGE;
}
