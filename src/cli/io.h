/* Readers and writers of the command-line tool: UCR/UEA text files (.tsv, .txt), CSV, .ts (UEA/aeon)
 * and .npy;
 * distance matrices and k-NN tables out; outputs written to a temporary file and renamed at the
 * end, so a failed or cancelled run never leaves a partial file under the output's name.
 * Errors come back as a sentence in `err` (CLI_ERR_SIZE bytes), "file:line: what went wrong". */
#ifndef WW_CLI_IO_H
#define WW_CLI_IO_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define CLI_ERR_SIZE 1024

typedef enum cli_format {
    CLI_FORMAT_UNKNOWN = 0,
    CLI_FORMAT_WHITESPACE, /* .tsv, .txt, .data, anything else: fields split by tabs/spaces */
    CLI_FORMAT_CSV,        /* .csv: fields split by commas */
    CLI_FORMAT_NPY,        /* .npy: NumPy array file */
    CLI_FORMAT_TS          /* .ts: the UEA/UCR archive's and aeon's format (input only) */
} cli_format;

/* Format of an input file from its name: .npy, .csv, .ts, else whitespace-separated text. */
cli_format cli_input_format(const char *path);
/* Format of an output file from its name: .npy, .csv, .tsv/.txt (tab-separated), else UNKNOWN. */
cli_format cli_output_format(const char *path);

typedef enum cli_label_mode {
    CLI_LABELS_AUTO = 0, /* first column is a label column iff all its values are integers */
    CLI_LABELS_FIRST,    /* first column is the class label (UCR layout) */
    CLI_LABELS_NONE      /* no label column */
} cli_label_mode;

typedef struct cli_read_options {
    cli_label_mode labels;
    /* For files meant to hold one series (the distance command): a file of one row, or of one
     * value per line, is one unlabelled series unless labels == CLI_LABELS_FIRST. */
    int single_series;
} cli_read_options;

/* A dataset in memory: series i is samples [offsets[i], offsets[i+1]) of values, each sample
 * `dim` numbers (values[t*dim + k]). Trailing NaN padding (UCR variable-length sets) is cut off,
 * so series may differ in length (ragged). */
typedef struct cli_dataset {
    double *values;
    size_t *offsets; /* count + 1 entries */
    double *labels;  /* count entries, or NULL when the file has no label column */
    size_t count;
    size_t dim;
    int ragged;      /* not all series have the same length */
    int label_guess; /* CLI_LABELS_AUTO only: 1 label column detected, 0 none detected */
    int one_column;  /* text files: every line holds one value (so no label column to detect) */
    /* .ts files with named classes: label k is class_names[k] (NULL, 0 for other files) */
    char **class_names;
    size_t class_count;
} cli_dataset;

int cli_read_dataset(const char *path, const cli_read_options *opt, cli_dataset *out, char *err);
/* The same for a file's bytes in memory (the fuzzers, fuzz/): `name` stands for the path in
 * messages; `format` is what cli_input_format would say of the file's name. */
int cli_parse_dataset(const char *name, cli_format format, const void *data, size_t size,
                      const cli_read_options *opt, cli_dataset *out, char *err);
void cli_dataset_free(cli_dataset *d);
/* When both datasets have named classes (.ts files), renumbers `other`'s labels into `reference`'s
 * numbering by name (a class `reference` does not have gets a number of its own), so that the
 * labels of a training and a test file agree whatever order their @classLabel lines list the
 * classes in. Nothing to do otherwise. Returns -1 (err set) only for want of memory. */
int cli_align_class_labels(const cli_dataset *reference, cli_dataset *other, char *err);
size_t cli_series_length(const cli_dataset *d, size_t i);
size_t cli_max_length(const cli_dataset *d);

/* An output file under construction: written to a hidden temporary name in the same directory,
 * renamed over `path` by commit, deleted by discard. */
typedef struct cli_output {
    FILE *fp;
    char *path;
    char *temp_path;
} cli_output;

int cli_output_open(cli_output *o, const char *path, char *err);
int cli_output_commit(cli_output *o, char *err); /* cli_output_finish, then cli_output_publish */
int cli_output_finish(cli_output *o, char *err);  /* flush, sync, close (on failure: discarded) */
int cli_output_publish(cli_output *o, char *err); /* rename into place */
void cli_output_discard(cli_output *o);          /* safe to call twice, or after commit */

/* .npy pieces: a version 1.0 header (2.0 when it would not fit) and little-endian data. */
int cli_write_npy_header(FILE *fp, const char *descr, const size_t *shape, int ndim);
int cli_write_f64_le(FILE *fp, const double *v, size_t n);
int cli_write_f32_le(FILE *fp, const float *v, size_t n);
int cli_write_i64_le(FILE *fp, const int64_t *v, size_t n);

/* A rows x cols matrix written a block of rows at a time, so that it never has to be in memory
 * whole: begin writes the .npy header with the full shape ('<f8' doubles, or '<f4' floats when
 * float32; text takes doubles only), each append adds the next rows right after what is there.
 * Every append is flushed, so a full disk stops the run at the block that hits it, not at the end. */
typedef struct cli_matrix_writer {
    cli_output *out;
    cli_format format;
    size_t rows, cols, rows_written;
    int float32;
} cli_matrix_writer;

int cli_matrix_begin(cli_matrix_writer *w, cli_output *o, cli_format format, size_t rows, size_t cols,
                     int float32, char *err);
/* block: block_rows rows of cols doubles (floats when float32), row-major. */
int cli_matrix_append(cli_matrix_writer *w, const void *block, size_t block_rows, char *err);

/* A rows x cols matrix (row-major), as .npy float64, or text with 17 significant digits. */
int cli_write_matrix(cli_output *o, cli_format format, const double *m, size_t rows, size_t cols, char *err);
/* `count` series of `length` samples with optional labels (label first in text; .npy holds the
 * values only). */
int cli_write_dataset(cli_output *o, cli_format format, const double *values, const double *labels,
                      size_t count, size_t length, char *err);

/* For the image commands (image_io.c): a whole file in memory (NUL-terminated; free it), and the
 * header of a .npy file's bytes: dtype string, order, shape (at most 8 dimensions) and where the
 * data start. */
int cli_read_file(const char *path, char **data, size_t *size, char *err);
int cli_npy_header(const char *path, const void *data, size_t size, char *descr, size_t descr_cap, int *fortran,
                   size_t *shape, int *ndim, size_t *data_start, char *err);

#endif
