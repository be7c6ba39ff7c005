/* The image commands of the command-line tool (issue 11): image-distance, image-pairwise and
 * image-classify, on PGM/PPM/.npy files and folders (image_io.h). Outputs are atomic and Ctrl-C
 * stops cleanly, as in commands.c. Uses only the public API of wavewarp.h. */
#define _POSIX_C_SOURCE 200809L

#include "cli.h"
#include "image_io.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The context of --backend (image-distance: the CPU, where one pair runs anyway). */
static int open_image_context(const cli_settings *s, ww_ctx **ctx)
{
    ww_ctx_options o = ww_ctx_options_default();
    o.backend = s->command == CLI_CMD_IMAGE_DISTANCE ? WW_BACKEND_CPU : s->backend;
    o.num_threads = s->threads;
    ww_status st = ww_ctx_create(ctx, &o);
    if (st != WW_OK) {
        cli_error("cannot use the %s backend: %s", o.backend == WW_BACKEND_CUDA ? "cuda" : "requested",
                  ww_strerror(st));
        *ctx = NULL;
        return CLI_EXIT_RUNTIME;
    }
    return CLI_EXIT_OK;
}

static int image_failure(ww_status st, const char *what)
{
    if (st == WW_ERR_CANCELLED) {
        fprintf(stderr, "wavewarp: interrupted; no output written\n");
        return CLI_EXIT_INTERRUPTED;
    }
    cli_error("%s: %s", what, ww_strerror(st));
    return CLI_EXIT_RUNTIME;
}

/* Every image of both sets has the channel count of the first. */
static int same_channels(const cli_image_set *a, const cli_image_set *b)
{
    const size_t c = a->images[0].channels;
    for (int side = 0; side < 2; side++) {
        const cli_image_set *set = side ? b : a;
        for (size_t k = 0; set && k < set->count; k++)
            if (set->images[k].channels != c) {
                cli_error("%s has %zu channel%s but %s has %zu: images must share their number of channels",
                          set->names[k], set->images[k].channels, set->images[k].channels == 1 ? "" : "s",
                          a->names[0], c);
                return CLI_EXIT_RUNTIME;
            }
    }
    return CLI_EXIT_OK;
}

/* Writes out and closes the output, then renames it into place unless Ctrl-C came meanwhile. */
static int commit_unless_interrupted(cli_output *o, char *err)
{
    if (cli_output_finish(o, err) != 0)
        return -1;
    if (cli_interrupted()) {
        snprintf(err, CLI_ERR_SIZE, "interrupted");
        return -1;
    }
    return cli_output_publish(o, err);
}

static uint64_t pair_cells(const ww_image *a, const ww_image *b)
{
    const uint64_t rows = (uint64_t)a->height * b->height;
    return rows * a->width * b->width + rows;
}

int cli_cmd_image_distance(const cli_settings *s)
{
    cli_image_set a = {0}, b = {0};
    char err[CLI_ERR_SIZE];
    int rc = CLI_EXIT_OK;
    if (cli_read_image(s->positional[0], &a, err) != 0 || cli_read_image(s->positional[1], &b, err) != 0) {
        cli_error("%s", err);
        rc = CLI_EXIT_RUNTIME;
    }
    for (int side = 0; rc == CLI_EXIT_OK && side < 2; side++)
        if (ww_image_check(&(side ? b : a).images[0]) == WW_ERR_NONFINITE) {
            cli_error("%s: has a NaN or infinite pixel", s->positional[side]);
            rc = CLI_EXIT_RUNTIME;
        }
    if (rc == CLI_EXIT_OK)
        rc = same_channels(&a, &b);
    ww_ctx *ctx = NULL;
    if (rc == CLI_EXIT_OK)
        rc = open_image_context(s, &ctx);
    if (rc == CLI_EXIT_OK) {
        ww_image_params p = ww_image_params_default();
        p.squared = s->squared;
        double d = 0;
        ww_status st = ww_image_distance(ctx, &a.images[0], &b.images[0], &p, &d);
        if (st != WW_OK)
            rc = image_failure(st, "image-distance");
        else
            printf("%.17g\n", d);
    }
    ww_ctx_destroy(ctx);
    cli_image_set_free(&a);
    cli_image_set_free(&b);
    return rc;
}

int cli_cmd_image_pairwise(const cli_settings *s)
{
    const char *path_x = s->positional[0], *path_y = s->positional_count > 1 ? s->positional[1] : NULL;
    if (s->output == NULL)
        return cli_usage_error(s, "missing the output file (-o FILE)");
    const cli_format format = cli_output_format(s->output);
    if (format == CLI_FORMAT_UNKNOWN)
        return cli_usage_error(s, "%s: unknown output format; use .npy, .csv, .tsv or .txt", s->output);
    cli_image_set x = {0}, y = {0};
    char err[CLI_ERR_SIZE];
    int rc = CLI_EXIT_OK;
    if (cli_read_image_set(path_x, 0, &x, err) != 0 || (path_y && cli_read_image_set(path_y, 0, &y, err) != 0)) {
        cli_error("%s", err);
        rc = CLI_EXIT_RUNTIME;
    }
    if (rc == CLI_EXIT_OK)
        rc = same_channels(&x, path_y ? &y : NULL);
    const size_t rows = x.count, cols = path_y ? y.count : x.count;
    double *m = NULL;
    if (rc == CLI_EXIT_OK && (cols > SIZE_MAX / sizeof(double) / rows || (m = malloc(rows * cols * sizeof(double))) == NULL)) {
        cli_error("out of memory for the %zu x %zu matrix", rows, cols);
        rc = CLI_EXIT_RUNTIME;
    }
    ww_ctx *ctx = NULL;
    if (rc == CLI_EXIT_OK)
        rc = open_image_context(s, &ctx);
    cli_output out = {0};
    if (rc == CLI_EXIT_OK && cli_output_open(&out, s->output, err) != 0) { /* unwritable: fail before computing */
        cli_error("%s", err);
        rc = CLI_EXIT_RUNTIME;
    }
    if (rc == CLI_EXIT_OK) {
        uint64_t cells = 0;
        for (size_t i = 0; i < rows; i++)
            for (size_t j = path_y ? 0 : i + 1; j < cols; j++)
                cells += pair_cells(&x.images[i], path_y ? &y.images[j] : &x.images[j]);
        cli_progress progress;
        cli_progress_start(&progress, "image-pairwise", s->progress, cells);
        ww_pairwise_options o = ww_pairwise_options_default();
        o.progress = cli_progress_callback;
        o.progress_user = &progress;
        ww_image_params p = ww_image_params_default();
        p.squared = s->squared;
        const double t0 = cli_now();
        ww_status st = ww_image_pairwise(ctx, x.images, rows, path_y ? y.images : NULL, cols, &p, m, &o);
        const double seconds = cli_now() - t0;
        cli_progress_finish(&progress);
        if (st != WW_OK) {
            rc = image_failure(st, "image-pairwise");
        } else if (cli_write_matrix(&out, format, m, rows, cols, err) != 0 || commit_unless_interrupted(&out, err) != 0) {
            if (cli_interrupted()) {
                fprintf(stderr, "wavewarp: interrupted; no output written\n");
                rc = CLI_EXIT_INTERRUPTED;
            } else {
                cli_error("%s", err);
                rc = CLI_EXIT_RUNTIME;
            }
        } else if (!s->quiet) {
            fprintf(stderr, "wavewarp: %zu x %zu image distances in %.3f s (%llu cells, %.3g cells/s, %s) -> %s\n",
                    rows, cols, seconds, (unsigned long long)cells, (double)cells / (seconds > 0 ? seconds : 1e-9),
                    ww_ctx_describe(ctx), s->output);
        }
    }
    cli_output_discard(&out);
    ww_ctx_destroy(ctx);
    free(m);
    cli_image_set_free(&x);
    cli_image_set_free(&y);
    return rc;
}

int cli_cmd_image_classify(const cli_settings *s)
{
    cli_format format = CLI_FORMAT_UNKNOWN;
    if (s->output) {
        format = cli_output_format(s->output);
        if (format == CLI_FORMAT_UNKNOWN || format == CLI_FORMAT_NPY)
            return cli_usage_error(s, "%s: unknown output format; use .csv, .tsv or .txt", s->output);
    }
    cli_image_set train = {0}, test = {0};
    char err[CLI_ERR_SIZE];
    int rc = CLI_EXIT_OK;
    if (cli_read_image_set(s->positional[0], 1, &train, err) != 0 ||
        cli_read_image_set(s->positional[1], 1, &test, err) != 0) {
        cli_error("%s", err);
        rc = CLI_EXIT_RUNTIME;
    }
    if (rc == CLI_EXIT_OK)
        rc = same_channels(&train, &test);
    size_t *nearest = rc == CLI_EXIT_OK ? malloc(test.count * sizeof(size_t)) : NULL;
    double *distance = rc == CLI_EXIT_OK ? malloc(test.count * sizeof(double)) : NULL;
    if (rc == CLI_EXIT_OK && (nearest == NULL || distance == NULL)) {
        cli_error("out of memory");
        rc = CLI_EXIT_RUNTIME;
    }
    ww_ctx *ctx = NULL;
    if (rc == CLI_EXIT_OK)
        rc = open_image_context(s, &ctx);
    cli_output out = {0};
    if (rc == CLI_EXIT_OK && s->output && cli_output_open(&out, s->output, err) != 0) {
        cli_error("%s", err);
        rc = CLI_EXIT_RUNTIME;
    }
    double seconds = 0;
    if (rc == CLI_EXIT_OK) {
        uint64_t cells = 0;
        for (size_t i = 0; i < test.count; i++)
            for (size_t j = 0; j < train.count; j++)
                cells += pair_cells(&test.images[i], &train.images[j]);
        cli_progress progress;
        cli_progress_start(&progress, "image-classify", s->progress, cells);
        ww_pairwise_options o = ww_pairwise_options_default();
        o.progress = cli_progress_callback;
        o.progress_user = &progress;
        ww_image_params p = ww_image_params_default();
        p.squared = s->squared;
        const double t0 = cli_now();
        ww_status st = ww_image_knn(ctx, test.images, test.count, train.images, train.count, &p, 1, nearest, distance, &o);
        seconds = cli_now() - t0;
        cli_progress_finish(&progress);
        if (st != WW_OK)
            rc = image_failure(st, "image-classify");
    }
    size_t correct = 0;
    for (size_t i = 0; rc == CLI_EXIT_OK && i < test.count; i++)
        correct += strcmp(test.labels[i], train.labels[nearest[i]]) == 0;
    if (rc == CLI_EXIT_OK && s->output) {
        const char sep = format == CLI_FORMAT_CSV ? ',' : '\t';
        int bad = fprintf(out.fp, "test%clabel%cpredicted%cnearest%cdistance\n", sep, sep, sep, sep) < 0;
        for (size_t i = 0; i < test.count && !bad; i++)
            bad = fprintf(out.fp, "%zu%c%s%c%s%c%zu%c%.17g\n", i, sep, test.labels[i], sep, train.labels[nearest[i]],
                          sep, nearest[i], sep, distance[i]) < 0;
        if (bad)
            snprintf(err, sizeof err, "%s: write error", s->output);
        if (bad || commit_unless_interrupted(&out, err) != 0) {
            if (cli_interrupted()) {
                fprintf(stderr, "wavewarp: interrupted; no output written\n");
                rc = CLI_EXIT_INTERRUPTED;
            } else {
                cli_error("%s", err);
                rc = CLI_EXIT_RUNTIME;
            }
        }
    }
    if (rc == CLI_EXIT_OK) {
        printf("accuracy %.4f (%zu of %zu test images), error rate %.4f\n", (double)correct / (double)test.count,
               correct, test.count, 1 - (double)correct / (double)test.count);
        if (!s->quiet)
            fprintf(stderr, "wavewarp: 1-NN of %zu test images among %zu training images in %.3f s (%s)\n",
                    test.count, train.count, seconds, ww_ctx_describe(ctx));
    }
    cli_output_discard(&out);
    ww_ctx_destroy(ctx);
    free(nearest);
    free(distance);
    cli_image_set_free(&train);
    cli_image_set_free(&test);
    return rc;
}
