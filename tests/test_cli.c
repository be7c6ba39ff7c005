/* The command-line tool, driven as a user would (through the shell, in a temporary directory), and
 * its readers and generator called directly. Results are compared with the library's own. */
#define _POSIX_C_SOURCE 200809L

#include "ww_test.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/io.h"
#include "cli/synth.h"
#include "measures/window.h"

/* ---------------------------------------------------------------- scaffolding */

/* A scratch place: `work` is where the CLI runs (checked for leftovers), `root` also holds the
 * captured stdout/stderr. */
typedef struct sandbox {
    char root[256];
    char work[300];
} sandbox;

static int sandbox_open(sandbox *b)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(b->root, sizeof b->root, "%s/ww_cli_test_XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (mkdtemp(b->root) == NULL)
        return -1;
    snprintf(b->work, sizeof b->work, "%s/work", b->root);
    return mkdir(b->work, 0700);
}

static void remove_tree(const char *path)
{
    DIR *d = opendir(path);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            char child[1024];
            snprintf(child, sizeof child, "%s/%s", path, e->d_name);
            struct stat st;
            if (lstat(child, &st) == 0 && S_ISDIR(st.st_mode))
                remove_tree(child);
            else
                unlink(child);
        }
        closedir(d);
    }
    rmdir(path);
}

static void sandbox_close(sandbox *b) { remove_tree(b->root); }

static char *slurp(const char *path, size_t *size)
{
    FILE *fp = fopen(path, "rb");
    if (fp == NULL)
        return NULL;
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + len, 1, cap - len - 1, fp)) > 0) {
        len += got;
        if (cap - len < 2) {
            char *grown = realloc(buf, cap *= 2);
            if (grown == NULL)
                free(buf);
            buf = grown;
        }
    }
    fclose(fp);
    if (buf)
        buf[len] = '\0';
    if (size)
        *size = len;
    return buf;
}

/* WW_FUZZ_SEEDS=DIR: every input file a test writes is also kept as a seed of the fuzzers (fuzz/),
 * in DIR/text, csv, ts or npy by its extension, named by a hash of its bytes, after the harness's
 * options byte (0: labels detected, a dataset file). fuzz/make_corpus.sh runs the tests so. */
static void save_fuzz_seed(const char *name, const void *data, size_t size)
{
    const char *dir = getenv("WW_FUZZ_SEEDS");
    if (dir == NULL || *dir == '\0' || size > 4096)
        return;
    cli_format f = cli_input_format(name);
    const char *kind = f == CLI_FORMAT_NPY ? "npy" : f == CLI_FORMAT_CSV ? "csv" : f == CLI_FORMAT_TS ? "ts" : "text";
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (size_t i = 0; i < size; i++)
        h = (h ^ ((const unsigned char *)data)[i]) * 1099511628211ULL;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, kind);
    mkdir(dir, 0755);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/%s/test-%016llx", dir, kind, (unsigned long long)h);
    FILE *fp = fopen(path, "wb");
    if (fp) {
        fputc(0, fp);
        fwrite(data, 1, size, fp);
        fclose(fp);
    }
}

static void write_file(const sandbox *b, const char *name, const void *data, size_t size)
{
    save_fuzz_seed(name, data, size);
    char path[512];
    snprintf(path, sizeof path, "%s/%s", b->work, name);
    FILE *fp = fopen(path, "wb");
    CHECK(fp != NULL);
    if (fp) {
        CHECK(fwrite(data, 1, size, fp) == size);
        fclose(fp);
    }
}

static void write_text(const sandbox *b, const char *name, const char *text)
{
    write_file(b, name, text, strlen(text));
}

static void path_in(const sandbox *b, const char *name, char *out, size_t size)
{
    snprintf(out, size, "%s/%s", b->work, name);
}

/* One run of the CLI: exit code (or -1 when it did not exit normally) and its output. */
typedef struct cli_result {
    int code;
    char *out;
    char *err;
} cli_result;

static void cli_result_free(cli_result *r)
{
    free(r->out);
    free(r->err);
    r->out = r->err = NULL;
}

/* file_limit > 0: the CLI runs under that file-size limit (ulimit -f), as on a nearly full disk. */
static cli_result run_cli_args(const sandbox *b, long file_limit, const char *args)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "cd '%s' && '%s' %s >'%s/stdout' 2>'%s/stderr' </dev/null", b->work, WW_CLI_PATH,
             args, b->root, b->root);
    int status = -1;
    if (file_limit <= 0) {
        status = system(cmd);
    } else {
        pid_t pid = fork();
        if (pid == 0) {
            struct rlimit limit = {(rlim_t)file_limit, (rlim_t)file_limit};
            setrlimit(RLIMIT_FSIZE, &limit);
            execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
            _exit(127);
        }
        if (pid < 0 || waitpid(pid, &status, 0) != pid)
            status = -1;
    }
    cli_result r;
    r.code = status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    char path[512];
    snprintf(path, sizeof path, "%s/stdout", b->root);
    r.out = slurp(path, NULL);
    snprintf(path, sizeof path, "%s/stderr", b->root);
    r.err = slurp(path, NULL);
    if (r.out == NULL)
        r.out = calloc(1, 1);
    if (r.err == NULL)
        r.err = calloc(1, 1);
    /* under -fsanitize the CLI reports leaks and undefined behaviour on stderr, maybe with the
     * very exit code a failing case expects: look for the reports themselves */
    if (strstr(r.err, "Sanitizer") != NULL || strstr(r.err, "runtime error:") != NULL) {
        fprintf(stderr, "  sanitizer report from wavewarp %s:\n%s", args, r.err);
        CHECK(0);
    }
    return r;
}

static cli_result run_cli(const sandbox *b, const char *fmt, ...)
{
    char args[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    return run_cli_args(b, 0, args);
}

/* Runs, expects exit code 0, prints stderr when not. */
static int run_ok(const sandbox *b, const char *fmt, ...)
{
    char args[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    cli_result r = run_cli(b, "%s", args);
    if (r.code != 0)
        fprintf(stderr, "  wavewarp %s -> exit %d:\n%s", args, r.code, r.err);
    CHECK(r.code == 0);
    int code = r.code;
    cli_result_free(&r);
    return code;
}

/* Non-zero when the work directory holds exactly the given names (NULL-terminated). */
static int work_holds_only(const sandbox *b, const char *const *names)
{
    DIR *d = opendir(b->work);
    if (d == NULL)
        return 0;
    int ok = 1;
    size_t expected = 0, seen = 0;
    while (names[expected])
        expected++;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        int known = 0;
        for (size_t i = 0; i < expected; i++)
            known |= strcmp(e->d_name, names[i]) == 0;
        if (!known) {
            fprintf(stderr, "  unexpected file left in the work directory: %s\n", e->d_name);
            ok = 0;
        }
        seen += known;
    }
    closedir(d);
    return ok && seen == expected;
}

/* Removes every file of the work directory but `keep`. */
static void sandbox_clear_except(const sandbox *b, const char *const *keep)
{
    DIR *d = opendir(b->work);
    if (d == NULL)
        return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        int kept = strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0;
        for (size_t i = 0; keep[i] && !kept; i++)
            kept = strcmp(e->d_name, keep[i]) == 0;
        if (!kept) {
            char path[1024];
            snprintf(path, sizeof path, "%s/%s", b->work, e->d_name);
            unlink(path);
        }
    }
    closedir(d);
}

static int read_dataset(const sandbox *b, const char *name, cli_label_mode labels, cli_dataset *d)
{
    char path[512], err[CLI_ERR_SIZE];
    path_in(b, name, path, sizeof path);
    cli_read_options ro = {labels, 0};
    int rc = cli_read_dataset(path, &ro, d, err);
    if (rc != 0)
        fprintf(stderr, "  reading %s: %s\n", name, err);
    return rc;
}

/* A dataset file read back as a matrix: rows x cols values, or NULL. */
static double *read_matrix(const sandbox *b, const char *name, size_t rows, size_t cols)
{
    cli_dataset d;
    if (read_dataset(b, name, CLI_LABELS_NONE, &d) != 0)
        return NULL;
    int shape_ok = d.count == rows && !d.ragged && d.dim == 1 && cli_series_length(&d, 0) == cols;
    CHECK(shape_ok);
    double *m = shape_ok ? d.values : NULL;
    if (shape_ok)
        d.values = NULL;
    cli_dataset_free(&d);
    return m;
}

static ww_dataset describe(const cli_dataset *d)
{
    return ww_dataset_f64(d->values, NULL, d->ragged ? d->offsets : NULL, d->count, cli_series_length(d, 0),
                          d->dim);
}

/* Value after "key" in text, e.g. find_number(out, "accuracy:"). NaN when absent. */
static double find_number(const char *text, const char *key)
{
    const char *p = strstr(text, key);
    return p ? strtod(p + strlen(key), NULL) : NAN;
}

/* ---------------------------------------------------------------- help, version, usage */

void test_cli_help_and_usage(void)
{
    sandbox b;
    if (sandbox_open(&b) != 0)
        SKIP("cannot create a temporary directory");
    cli_result r = run_cli(&b, "--help");
    CHECK(r.code == 0);
    CHECK(strstr(r.out, "Usage: wavewarp") != NULL);
    CHECK(strstr(r.out, "Exit status") != NULL);
    cli_result_free(&r);
    const char *commands[] = {"distance", "pairwise", "knn", "classify", "demo", "generate"};
    for (size_t i = 0; i < 6; i++) {
        char want[64];
        snprintf(want, sizeof want, "Usage: wavewarp %s", commands[i]);
        r = run_cli(&b, "%s --help", commands[i]);
        CHECK(r.code == 0);
        CHECK(strstr(r.out, want) != NULL);
        cli_result_free(&r);
        r = run_cli(&b, "help %s", commands[i]);
        CHECK(r.code == 0);
        CHECK(strstr(r.out, want) != NULL);
        cli_result_free(&r);
    }
    r = run_cli(&b, "--version");
    CHECK(r.code == 0);
    CHECK(strstr(r.out, ww_version()) != NULL);
    cli_result_free(&r);

    struct {
        const char *args, *phrase;
    } usage[] = {
        {"", "Usage"},
        {"frobnicate", "unknown command"},
        {"pairwise x.tsv -o d.npy --frobnicate", "unknown option"},
        {"generate --nu 1 -o g.tsv", "does not apply"},
        {"pairwise", "missing file argument"},
        {"distance a b c", "too many arguments"},
        {"pairwise x.tsv -o", "needs a value"},
        {"demo --quiet=yes", "takes no value"},
    };
    for (size_t i = 0; i < sizeof usage / sizeof usage[0]; i++) {
        r = run_cli(&b, "%s", usage[i].args);
        if (r.code != 2 || strstr(r.err, usage[i].phrase) == NULL)
            fprintf(stderr, "  wavewarp %s -> exit %d, stderr: %s", usage[i].args, r.code, r.err);
        CHECK(r.code == 2);
        CHECK(strstr(r.err, usage[i].phrase) != NULL);
        cli_result_free(&r);
    }
    const char *none[] = {NULL};
    CHECK(work_holds_only(&b, none));
    sandbox_close(&b);
}

/* ---------------------------------------------------------------- pairwise against the API */

static void compare_matrix(const sandbox *b, const char *name, const double *want, size_t rows, size_t cols)
{
    double *got = read_matrix(b, name, rows, cols);
    CHECK(got != NULL);
    for (size_t i = 0; got && i < rows * cols; i++)
        CHECK_CLOSE(got[i], want[i], 1e-12);
    free(got);
}

/* Non-zero when the .npy file's header names this dtype. */
static int npy_descr_is(const sandbox *b, const char *name, const char *descr)
{
    char path[512], want[64];
    path_in(b, name, path, sizeof path);
    snprintf(want, sizeof want, "'descr': '%s'", descr);
    char *raw = slurp(path, NULL);
    int ok = raw != NULL && strncmp(raw, "\x93NUMPY", 6) == 0 && strstr(raw + 10, want) != NULL;
    free(raw);
    return ok;
}

void test_cli_pairwise_matches_api(void)
{
    sandbox b;
    if (sandbox_open(&b) != 0)
        SKIP("cannot create a temporary directory");
    run_ok(&b, "generate -o sc.tsv --per-class 4 --length 40 --seed 7");
    run_ok(&b, "generate -o other.csv --per-class 2 --length 33 --seed 8 --quiet");
    run_ok(&b, "pairwise sc.tsv -o d.npy");
    run_ok(&b, "pairwise sc.tsv -o p.csv --nu 0.5 --lambda 0.25 --degree 1 --threads 1 --backend cpu");
    run_ok(&b, "pairwise sc.tsv other.csv -o xy.tsv --quiet");
    run_ok(&b, "pairwise sc.tsv -o f.npy --precision float --backend cpu"); /* float: CPU against CPU */

    cli_dataset x, y;
    CHECK(read_dataset(&b, "sc.tsv", CLI_LABELS_AUTO, &x) == 0);
    CHECK(read_dataset(&b, "other.csv", CLI_LABELS_AUTO, &y) == 0);
    CHECK(x.count == 24 && x.labels != NULL && cli_series_length(&x, 0) == 40 && !x.ragged);
    CHECK(y.count == 12 && y.labels != NULL && cli_series_length(&y, 0) == 33);
    ww_ctx *ctx = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_AUTO, 0);
    ww_dataset dx = describe(&x), dy = describe(&y);
    double *want = malloc(24 * 24 * sizeof(double));

    CHECK_STATUS(ww_twed_pairwise(ctx, &dx, NULL, NULL, want, NULL), WW_OK);
    compare_matrix(&b, "d.npy", want, 24, 24);

    ww_twed_params p = {0.5, 0.25, 1};
    CHECK_STATUS(ww_twed_pairwise(ctx, &dx, NULL, &p, want, NULL), WW_OK);
    compare_matrix(&b, "p.csv", want, 24, 24);

    CHECK_STATUS(ww_twed_pairwise(ctx, &dx, &dy, NULL, want, NULL), WW_OK);
    compare_matrix(&b, "xy.tsv", want, 24, 12);

    /* --precision float: the .npy holds the library's float32 output, '<f4' */
    float *xf = malloc(24 * 40 * sizeof(float)), *want_f32 = malloc(24 * 24 * sizeof(float));
    for (size_t i = 0; i < 24 * 40; i++)
        xf[i] = (float)x.values[i];
    ww_dataset dxf = ww_dataset_f32(xf, NULL, NULL, 24, 40, 1);
    ww_pairwise_options f32_out = ww_pairwise_options_default();
    f32_out.out_dtype = WW_F32;
    CHECK_STATUS(ww_twed_pairwise(ctx, &dxf, NULL, NULL, want_f32, &f32_out), WW_OK);
    for (size_t i = 0; i < 24 * 24; i++)
        want[i] = want_f32[i];
    compare_matrix(&b, "f.npy", want, 24, 24);
    CHECK(npy_descr_is(&b, "f.npy", "<f4") && npy_descr_is(&b, "d.npy", "<f8"));
    free(want_f32);

    const char *files[] = {"sc.tsv", "other.csv", "d.npy", "p.csv", "xy.tsv", "f.npy", NULL};
    CHECK(work_holds_only(&b, files));
    free(xf);
    free(want);
    ww_ctx_destroy(ctx);
    cli_dataset_free(&x);
    cli_dataset_free(&y);
    sandbox_close(&b);
}

/* ---------------------------------------------------------------- distance */

void test_cli_distance(void)
{
    sandbox b;
    if (sandbox_open(&b) != 0)
        SKIP("cannot create a temporary directory");
    write_text(&b, "a.txt", "1 2 3 4.5\n");       /* one row: a series, no label */
    write_text(&b, "b.csv", "1\n3\n\n2.5\n");     /* one value per line */
    write_text(&b, "c.npy.txt", "0.5 NaN NaN\n"); /* trailing NaN: a series of length 1 */
    const double av[] = {1, 2, 3, 4.5}, bv[] = {1, 3, 2.5}, cv[] = {0.5};
    ww_ctx *ctx = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_AUTO, 0);
    ww_series sa = ww_series_f64(av, NULL, 4, 1), sb = ww_series_f64(bv, NULL, 3, 1),
              sc = ww_series_f64(cv, NULL, 1, 1);
    ww_twed_params p = {0.25, 0.5, 2};
    double want = 0;

    cli_result r = run_cli(&b, "distance a.txt b.csv");
    CHECK(r.code == 0);
    CHECK_STATUS(ww_twed(ctx, &sa, &sb, NULL, &want), WW_OK);
    CHECK_CLOSE(strtod(r.out, NULL), want, 1e-15);
    cli_result_free(&r);

    r = run_cli(&b, "distance b.csv c.npy.txt --nu 0.25 --lambda 0.5");
    CHECK(r.code == 0);
    CHECK_STATUS(ww_twed(ctx, &sb, &sc, &p, &want), WW_OK);
    CHECK_CLOSE(strtod(r.out, NULL), want, 1e-15);
    cli_result_free(&r);

    /* rows of a dataset file */
    run_ok(&b, "generate -o sc.tsv --per-class 2 --length 25 --quiet");
    cli_dataset x;
    CHECK(read_dataset(&b, "sc.tsv", CLI_LABELS_AUTO, &x) == 0);
    ww_series s3 = ww_series_f64(x.values + 3 * 25, NULL, 25, 1),
              s10 = ww_series_f64(x.values + 10 * 25, NULL, 25, 1);
    r = run_cli(&b, "distance sc.tsv sc.tsv --row 3 --row-b 10 --degree 1");
    CHECK(r.code == 0);
    ww_twed_params p1 = {0.001, 1, 1};
    CHECK_STATUS(ww_twed(ctx, &s3, &s10, &p1, &want), WW_OK);
    CHECK_CLOSE(strtod(r.out, NULL), want, 1e-15);
    cli_result_free(&r);

    r = run_cli(&b, "distance sc.tsv a.txt --row 3");
    CHECK(r.code == 0);
    CHECK_STATUS(ww_twed(ctx, &s3, &sa, NULL, &want), WW_OK);
    CHECK_CLOSE(strtod(r.out, NULL), want, 1e-15);
    cli_result_free(&r);

    r = run_cli(&b, "distance sc.tsv a.txt");
    CHECK(r.code == 2);
    CHECK(strstr(r.err, "pick one with --row") != NULL);
    cli_result_free(&r);
    ww_ctx_destroy(ctx);
    cli_dataset_free(&x);
    sandbox_close(&b);
}

/* ---------------------------------------------------------------- knn and classify */

/* The .npy int64 matrix written by knn -o X.npy. */
static int64_t *read_npy_i64(const sandbox *b, const char *name, size_t count)
{
    char path[512];
    path_in(b, name, path, sizeof path);
    size_t size = 0;
    unsigned char *raw = (unsigned char *)slurp(path, &size);
    if (raw == NULL || size < 10 || memcmp(raw, "\x93NUMPY\x01\x00", 8) != 0) {
        free(raw);
        return NULL;
    }
    size_t header = 10 + (size_t)(raw[8] | raw[9] << 8);
    CHECK(strstr((const char *)raw + 10, "'descr': '<i8'") != NULL);
    int64_t *v = NULL;
    if (size == header + count * 8) {
        v = malloc(count * sizeof(int64_t));
        for (size_t i = 0; i < count; i++) {
            uint64_t bits = 0;
            for (int k = 7; k >= 0; k--)
                bits = bits << 8 | raw[header + i * 8 + (size_t)k];
            v[i] = (int64_t)bits;
        }
    }
    free(raw);
    return v;
}

void test_cli_knn_and_classify(void)
{
    sandbox b;
    if (sandbox_open(&b) != 0)
        SKIP("cannot create a temporary directory");
    run_ok(&b, "generate -o train.tsv --per-class 10 --seed 1 --quiet");
    run_ok(&b, "generate -o test.tsv --per-class 10 --seed 2 --quiet");
    run_ok(&b, "knn test.tsv train.tsv -k 3 -o k.csv --lambda 0.5");
    run_ok(&b, "knn test.tsv train.tsv -k 4 -o k.npy --distances kd.npy --quiet");

    cli_dataset train, test;
    CHECK(read_dataset(&b, "train.tsv", CLI_LABELS_AUTO, &train) == 0);
    CHECK(read_dataset(&b, "test.tsv", CLI_LABELS_AUTO, &test) == 0);
    ww_ctx *ctx = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_AUTO, 0);
    ww_dataset dtrain = describe(&train), dtest = describe(&test);
    size_t idx[60 * 4];
    double dist[60 * 4];

    /* k.csv: header, then query,rank,index,distance */
    ww_twed_params p = {0.001, 0.5, 2};
    CHECK_STATUS(ww_twed_knn(ctx, &dtest, &dtrain, &p, 3, idx, dist, NULL), WW_OK);
    char path[512];
    path_in(&b, "k.csv", path, sizeof path);
    FILE *fp = fopen(path, "r");
    CHECK(fp != NULL);
    char line[256];
    CHECK(fp && fgets(line, sizeof line, fp) && strcmp(line, "query,rank,index,distance\n") == 0);
    size_t rows = 0;
    while (fp && fgets(line, sizeof line, fp)) {
        size_t q, rank, index;
        double d;
        CHECK(sscanf(line, "%zu,%zu,%zu,%lf", &q, &rank, &index, &d) == 4);
        CHECK(q == rows / 3 && rank == rows % 3 + 1);
        CHECK(index == idx[rows]);
        CHECK_CLOSE(d, dist[rows], 1e-12);
        rows++;
    }
    if (fp)
        fclose(fp);
    CHECK(rows == 60 * 3);

    CHECK_STATUS(ww_twed_knn(ctx, &dtest, &dtrain, NULL, 4, idx, dist, NULL), WW_OK);
    int64_t *got_idx = read_npy_i64(&b, "k.npy", 60 * 4);
    double *got_dist = read_matrix(&b, "kd.npy", 60, 4);
    CHECK(got_idx != NULL && got_dist != NULL);
    for (size_t i = 0; got_idx && got_dist && i < 60 * 4; i++) {
        CHECK(got_idx[i] == (int64_t)idx[i]);
        CHECK_CLOSE(got_dist[i], dist[i], 1e-12);
    }
    free(got_idx);
    free(got_dist);

    /* 1-NN accuracy on the synthetic control charts is high; predictions match knn */
    cli_result r = run_cli(&b, "classify train.tsv test.tsv -o pred.csv");
    CHECK(r.code == 0);
    double accuracy = find_number(r.out, "accuracy:");
    CHECK(accuracy > 0.9 && accuracy <= 1.0);
    CHECK_CLOSE(find_number(r.out, "error rate:"), 1.0 - accuracy, 1e-3);
    CHECK(strstr(r.out, "time:") && strstr(r.out, "cells/s:") && strstr(r.out, "backend:"));
    cli_result_free(&r);
    CHECK_STATUS(ww_twed_knn(ctx, &dtest, &dtrain, NULL, 1, idx, dist, NULL), WW_OK);
    path_in(&b, "pred.csv", path, sizeof path);
    fp = fopen(path, "r");
    CHECK(fp && fgets(line, sizeof line, fp) && strcmp(line, "test,label,predicted,nearest,distance\n") == 0);
    rows = 0;
    size_t correct = 0;
    while (fp && fgets(line, sizeof line, fp)) {
        size_t t, nearest;
        double label, predicted, d;
        CHECK(sscanf(line, "%zu,%lf,%lf,%zu,%lf", &t, &label, &predicted, &nearest, &d) == 5);
        CHECK(t == rows && nearest == idx[rows] && label == test.labels[rows] &&
              predicted == train.labels[nearest]);
        CHECK_CLOSE(d, dist[rows], 1e-12);
        correct += label == predicted;
        rows++;
    }
    if (fp)
        fclose(fp);
    CHECK(rows == 60);
    CHECK_CLOSE(accuracy, (double)correct / 60.0, 1e-4);

    /* float precision and one thread give a high accuracy too */
    r = run_cli(&b, "classify train.tsv test.tsv --precision float --threads 1 --nu 0.01");
    CHECK(r.code == 0);
    CHECK(find_number(r.out, "accuracy:") > 0.9);
    cli_result_free(&r);

    const char *files[] = {"train.tsv", "test.tsv", "k.csv", "k.npy", "kd.npy", "pred.csv", NULL};
    CHECK(work_holds_only(&b, files));
    ww_ctx_destroy(ctx);
    cli_dataset_free(&train);
    cli_dataset_free(&test);
    sandbox_close(&b);
}

/* ---------------------------------------------------------------- the demo (the main job) */

void test_cli_demo(void)
{
    sandbox b;
    if (sandbox_open(&b) != 0)
        SKIP("cannot create a temporary directory");
    cli_result r = run_cli(&b, "demo");
    if (r.code != 0)
        fprintf(stderr, "%s%s", r.out, r.err);
    CHECK(r.code == 0);
    CHECK(find_number(r.out, "accuracy:") > 0.95);
    CHECK(strstr(r.out, "train: 300 series") && strstr(r.out, "test: 300 series"));
    CHECK(find_number(r.out, "cells/s:") > 0);
    CHECK(strstr(r.out, "backend: cpu") != NULL || strstr(r.out, "backend: cuda") != NULL);
    CHECK(strstr(r.out, "per class:") != NULL);
    cli_result_free(&r);

    r = run_cli(&b, "demo --train-per-class 5 --test-per-class 7 --length 40 --seed 11 --precision float "
                    "--threads 1 --backend cpu");
    CHECK(r.code == 0);
    CHECK(strstr(r.out, "test: 42 series") != NULL);
    CHECK(find_number(r.out, "accuracy:") > 0.8);
    CHECK(strstr(r.out, "backend: cpu") != NULL);
    cli_result_free(&r);
    const char *none[] = {NULL};
    CHECK(work_holds_only(&b, none));
    sandbox_close(&b);
}

/* ---------------------------------------------------------------- the generator */

static double mean(const double *v, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++)
        s += v[i];
    return s / (double)n;
}

void test_cli_synthetic_generator(void)
{
    enum { per = 20, len = 60 };
    double *v = malloc(6 * per * len * sizeof(double)), *w = malloc(6 * per * len * sizeof(double));
    double labels[6 * per], one[len];
    ww_synth_dataset(5, per, len, v, labels);
    ww_synth_dataset(5, per, len, w, labels);
    CHECK(memcmp(v, w, 6 * per * len * sizeof(double)) == 0); /* deterministic */
    ww_synth_dataset(6, per, len, w, labels);
    CHECK(memcmp(v, w, 6 * per * len * sizeof(double)) != 0); /* the seed matters */
    ww_synth_series(5, 4, 7, len, one);                       /* series 7 of class 4 whatever the set's size */
    CHECK(memcmp(one, v + (3 * per + 7) * len, sizeof one) == 0);
    for (int c = 1; c <= 6; c++)
        for (size_t i = 0; i < per; i++) {
            const double *s = v + ((size_t)(c - 1) * per + i) * len;
            CHECK(labels[(c - 1) * per + i] == c);
            double head = mean(s, 10), tail = mean(s + len - 10, 10), lo = s[0], hi = s[0];
            for (size_t t = 0; t < len; t++) {
                lo = s[t] < lo ? s[t] : lo;
                hi = s[t] > hi ? s[t] : hi;
            }
            /* m = 30, noise within +-6; the classes' shapes on top of it */
            if (c == WW_SYNTH_NORMAL)
                CHECK(lo >= 24 && hi <= 36);
            if (c == WW_SYNTH_CYCLIC)
                CHECK(hi - lo > 16 && fabs(tail - head) < 15);
            if (c == WW_SYNTH_INCREASING)
                CHECK(tail - head > 0.2 * 50 - 6 && tail - head < 0.5 * 50 + 6);
            if (c == WW_SYNTH_DECREASING)
                CHECK(head - tail > 0.2 * 50 - 6 && head - tail < 0.5 * 50 + 6);
            if (c == WW_SYNTH_UPWARD_SHIFT)
                CHECK(tail - head > 7.5 - 6 && tail - head < 20 + 6 && mean(s, 19) < 36);
            if (c == WW_SYNTH_DOWNWARD_SHIFT)
                CHECK(head - tail > 7.5 - 6 && head - tail < 20 + 6);
        }
    CHECK(strcmp(ww_synth_class_name(2), "cyclic") == 0 && strcmp(ww_synth_class_name(9), "?") == 0);

    /* generate writes the same numbers in every format; --no-labels drops the label column */
    sandbox b;
    if (sandbox_open(&b) != 0) {
        free(v), free(w);
        SKIP("cannot create a temporary directory");
    }
    ww_synth_dataset(3, 2, 30, v, labels);
    run_ok(&b, "generate -o g.tsv --per-class 2 --length 30 --seed 3");
    run_ok(&b, "generate -o g.npy --per-class 2 --length 30 --seed 3");
    run_ok(&b, "generate -o g.csv --per-class 2 --length 30 --seed 3 --no-labels");
    run_ok(&b, "generate -o again.tsv --per-class 2 --length 30 --seed 3");
    const char *names[] = {"g.tsv", "g.npy", "g.csv"};
    for (size_t f = 0; f < 3; f++) {
        cli_dataset d;
        CHECK(read_dataset(&b, names[f], CLI_LABELS_AUTO, &d) == 0);
        CHECK(d.count == 12 && cli_series_length(&d, 0) == 30 && !d.ragged);
        CHECK((d.labels != NULL) == (f == 0));
        CHECK(d.count == 12 && memcmp(d.values, v, 12 * 30 * sizeof(double)) == 0); /* 17 digits: exact */
        for (size_t i = 0; d.labels && i < 12; i++)
            CHECK(d.labels[i] == labels[i]);
        cli_dataset_free(&d);
    }
    char p1[512], p2[512];
    path_in(&b, "g.tsv", p1, sizeof p1);
    path_in(&b, "again.tsv", p2, sizeof p2);
    char *t1 = slurp(p1, NULL), *t2 = slurp(p2, NULL);
    CHECK(t1 && t2 && strcmp(t1, t2) == 0);
    free(t1), free(t2);
    free(v), free(w);
    sandbox_close(&b);
}

/* ---------------------------------------------------------------- readers */

/* A hand-made .npy: any header text, raw little-endian data. */
static void write_npy(const sandbox *b, const char *name, int major, const char *dict, const void *data,
                      size_t bytes)
{
    size_t prefix = major == 1 ? 10 : 12;
    size_t len = strlen(dict);
    size_t total = (prefix + len + 1 + 63) / 64 * 64, header_len = total - prefix;
    unsigned char *buf = calloc(1, total + bytes);
    memcpy(buf, "\x93NUMPY", 6);
    buf[6] = (unsigned char)major;
    for (size_t i = 0; i < prefix - 8; i++)
        buf[8 + i] = (unsigned char)(header_len >> (8 * i));
    memcpy(buf + prefix, dict, len);
    memset(buf + prefix + len, ' ', total - prefix - len - 1);
    buf[total - 1] = '\n';
    memcpy(buf + total, data, bytes);
    write_file(b, name, buf, total + bytes);
    free(buf);
}

void test_cli_readers_round_trip(void)
{
    sandbox b;
    if (sandbox_open(&b) != 0)
        SKIP("cannot create a temporary directory");
    enum { n = 4, len = 6 };
    double v[n * len];
    float vf[n * len];
    ww_rng rng = {12345};
    for (size_t i = 0; i < n * len; i++) {
        v[i] = (ww_rng_uniform(&rng) - 0.5) * 1e3;
        vf[i] = (float)v[i];
    }
    const double labels[n] = {1, -1, 2, 1};

    /* every text layout, written with 17 digits, reads back exactly */
    char tsv[4096] = "", txt[4096] = "# a comment line\n\n", csv[4096] = "";
    for (size_t i = 0; i < n; i++) {
        size_t a = strlen(tsv), c = strlen(txt), e = strlen(csv);
        a += (size_t)snprintf(tsv + a, sizeof tsv - a, "%g", labels[i]);
        c += (size_t)snprintf(txt + c, sizeof txt - c, "  %.7e", labels[i]); /* old UCR: 1.0000000e+00 */
        e += (size_t)snprintf(csv + e, sizeof csv - e, "%g", labels[i]);
        for (size_t t = 0; t < len; t++) {
            a += (size_t)snprintf(tsv + a, sizeof tsv - a, "\t%.17g", v[i * len + t]);
            c += (size_t)snprintf(txt + c, sizeof txt - c, "  %.17e", v[i * len + t]);
            e += (size_t)snprintf(csv + e, sizeof csv - e, ", %.17g", v[i * len + t]);
        }
        snprintf(tsv + a, sizeof tsv - a, "\n");
        snprintf(txt + c, sizeof txt - c, "\r\n"); /* CRLF line ends */
        snprintf(csv + e, sizeof csv - e, "\n");
    }
    write_text(&b, "x.tsv", tsv);
    write_text(&b, "x.txt", txt);
    write_text(&b, "x.csv", csv);
    write_npy(&b, "x.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (4, 6), }", v, sizeof v);
    write_npy(&b, "x2.npy", 2, "{\"descr\": \"<f8\", \"shape\": (4, 6), \"fortran_order\": False}", v,
              sizeof v);
    write_npy(&b, "x3.npy", 3, "{'descr': '<f4', 'fortran_order': False, 'shape': (4, 6), }", vf, sizeof vf);
    double vt[n * len]; /* Fortran order: column-major */
    for (size_t i = 0; i < n; i++)
        for (size_t t = 0; t < len; t++)
            vt[t * n + i] = v[i * len + t];
    write_npy(&b, "xt.npy", 1, "{'descr': '<f8', 'fortran_order': True, 'shape': (4, 6), }", vt, sizeof vt);
    const char *names[] = {"x.tsv", "x.txt", "x.csv", "x.npy", "x2.npy", "x3.npy", "xt.npy"};
    for (size_t f = 0; f < 7; f++) {
        cli_dataset d;
        CHECK(read_dataset(&b, names[f], CLI_LABELS_AUTO, &d) == 0);
        CHECK(d.count == n && d.dim == 1 && !d.ragged && cli_series_length(&d, 0) == len);
        int is_text = f < 3;
        CHECK((d.labels != NULL) == is_text);
        for (size_t i = 0; d.count == n && i < n * len; i++)
            CHECK(d.values[i] == (f == 5 ? (double)vf[i] : v[i]));
        for (size_t i = 0; d.labels && i < n; i++)
            CHECK(d.labels[i] == labels[i]);
        cli_dataset_free(&d);
    }
    /* the CLI agrees across formats */
    run_ok(&b, "pairwise x.tsv -o a.npy --quiet");
    run_ok(&b, "pairwise x.npy -o b.npy --quiet");
    run_ok(&b, "pairwise xt.npy x.csv -o c.npy --quiet");
    double *ma = read_matrix(&b, "a.npy", n, n), *mb = read_matrix(&b, "b.npy", n, n),
           *mc = read_matrix(&b, "c.npy", n, n);
    for (size_t i = 0; ma && mb && mc && i < n * n; i++)
        CHECK(ma[i] == mb[i] && ma[i] == mc[i]);
    free(ma), free(mb), free(mc);

    /* multivariate npy (count, length, dim) and a one-dimensional npy (one series) */
    double mv[2 * 3 * 2] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
    write_npy(&b, "mv.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3, 2), }", mv, sizeof mv);
    write_npy(&b, "one.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", mv,
              3 * sizeof(double));
    cli_dataset d;
    CHECK(read_dataset(&b, "mv.npy", CLI_LABELS_AUTO, &d) == 0);
    CHECK(d.count == 2 && d.dim == 2 && cli_series_length(&d, 1) == 3 && d.values[11] == 12);
    cli_dataset_free(&d);
    CHECK(read_dataset(&b, "one.npy", CLI_LABELS_AUTO, &d) == 0);
    CHECK(d.count == 1 && d.dim == 1 && cli_series_length(&d, 0) == 3);
    cli_dataset_free(&d);
    ww_ctx *ctx = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_AUTO, 0);
    ww_series s0 = ww_series_f64(mv, NULL, 3, 2), s1 = ww_series_f64(mv + 6, NULL, 3, 2);
    double want = 0;
    CHECK_STATUS(ww_twed(ctx, &s0, &s1, NULL, &want), WW_OK);
    cli_result r = run_cli(&b, "distance mv.npy mv.npy --row 0 --row-b 1");
    CHECK(r.code == 0);
    CHECK_CLOSE(strtod(r.out, NULL), want, 1e-15);
    cli_result_free(&r);
    ww_ctx_destroy(ctx);

    /* labels: integers in the first column are labels, anything else is data; flags decide */
    write_text(&b, "nolab.txt", "28.5 30 31\n29 30.5 27\n");
    CHECK(read_dataset(&b, "nolab.txt", CLI_LABELS_AUTO, &d) == 0);
    CHECK(d.labels == NULL && d.label_guess == 0 && cli_series_length(&d, 0) == 3);
    cli_dataset_free(&d);
    CHECK(read_dataset(&b, "nolab.txt", CLI_LABELS_FIRST, &d) == 0);
    CHECK(d.labels != NULL && d.labels[0] == 28.5 && cli_series_length(&d, 0) == 2);
    cli_dataset_free(&d);
    CHECK(read_dataset(&b, "x.tsv", CLI_LABELS_NONE, &d) == 0);
    CHECK(d.labels == NULL && cli_series_length(&d, 0) == len + 1);
    cli_dataset_free(&d);

    /* the UCI file itself: 600 series of 60, no label column */
    const char *shared = ww_test_shared_dir();
    if (shared) {
        char path[1024], err[CLI_ERR_SIZE];
        snprintf(path, sizeof path, "%s/data/synthetic_control.data", shared);
        cli_read_options ro = {CLI_LABELS_AUTO, 0};
        if (cli_read_dataset(path, &ro, &d, err) == 0) {
            CHECK(d.count == 600 && d.labels == NULL && !d.ragged && cli_series_length(&d, 0) == 60);
            CHECK(d.values[0] == 28.7812);
            cli_dataset_free(&d);
        } else {
            fprintf(stderr, "  %s\n", err);
            CHECK(0);
        }
    }
    sandbox_close(&b);
}

/* ---------------------------------------------------------------- ragged (variable-length) sets */

void test_cli_ragged_ucr(void)
{
    sandbox b;
    if (sandbox_open(&b) != 0)
        SKIP("cannot create a temporary directory");
    /* UCR variable-length layout: shorter series padded with trailing NaN */
    write_text(&b, "r.tsv",
               "1\t1\t2\t3\tNaN\tNaN\n"
               "2\t4\t5\t6\t7\t8\n"
               "1\t2\t3\tNaN\tNaN\tnan\n");
    write_text(&b, "r.csv", "1,1,2,3,,\n2,4,5,6,7,8\n1,2,3,,,\n"); /* trailing empty fields pad too */
    double padded[3 * 5] = {1, 2, 3, NAN, NAN, 4, 5, 6, 7, 8, 2, 3, NAN, NAN, NAN};
    write_npy(&b, "r.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 5), }", padded,
              sizeof padded);
    const double values[] = {1, 2, 3, 4, 5, 6, 7, 8, 2, 3};
    const size_t offsets[] = {0, 3, 8, 10};
    const char *names[] = {"r.tsv", "r.csv", "r.npy"};
    for (size_t f = 0; f < 3; f++) {
        cli_dataset d;
        CHECK(read_dataset(&b, names[f], CLI_LABELS_AUTO, &d) == 0);
        CHECK(d.count == 3 && d.ragged);
        for (size_t i = 0; d.count == 3 && i <= 3; i++)
            CHECK(d.offsets[i] == offsets[i]);
        for (size_t i = 0; d.count == 3 && i < 10; i++)
            CHECK(d.values[i] == values[i]);
        cli_dataset_free(&d);
    }
    ww_ctx *ctx = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_AUTO, 0);
    ww_dataset x = ww_dataset_f64(values, NULL, offsets, 3, 0, 1);
    double want[9];
    CHECK_STATUS(ww_twed_pairwise(ctx, &x, NULL, NULL, want, NULL), WW_OK);
    run_ok(&b, "pairwise r.tsv -o d.csv --quiet");
    compare_matrix(&b, "d.csv", want, 3, 3);
    run_ok(&b, "pairwise r.npy r.csv -o e.npy --quiet");
    CHECK_STATUS(ww_twed_pairwise(ctx, &x, &x, NULL, want, NULL), WW_OK);
    compare_matrix(&b, "e.npy", want, 3, 3);
    cli_result r = run_cli(&b, "classify r.tsv r.csv");
    CHECK(r.code == 0);
    CHECK(find_number(r.out, "accuracy:") == 1.0);
    cli_result_free(&r);
    ww_ctx_destroy(ctx);
    sandbox_close(&b);
}

/* ---------------------------------------------------------------- bad input */

typedef struct bad_case {
    const char *file, *content; /* an input to create first (content NULL: none) */
    const char *args;
    int code;
    const char *phrase;
} bad_case;

void test_cli_bad_inputs(void)
{
    sandbox b;
    if (sandbox_open(&b) != 0)
        SKIP("cannot create a temporary directory");
    /* inputs every case may use */
    write_text(&b, "ok.tsv", "1\t1\t2\t3\n2\t4\t5\t6\n");
    write_text(&b, "nolab.txt", "0.5 1 2\n0.25 3 4\n");
    write_text(&b, "big.txt", "1 1e300 2\n");
    double mv[2 * 3 * 2] = {0};
    write_npy(&b, "mv.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3, 2), }", mv, sizeof mv);
    char sub[512];
    path_in(&b, "taken.npy", sub, sizeof sub);
    CHECK(mkdir(sub, 0700) == 0); /* an output name that is a directory */
    char cuda_phrase[256];
    snprintf(cuda_phrase, sizeof cuda_phrase, "%s", ww_strerror(WW_ERR_NO_CUDA));

    int64_t ints[4] = {1, 2, 3, 4};
    const bad_case cases[] = {
        {NULL, NULL, "pairwise missing.tsv -o o.npy", 1, "cannot open"},
        {"empty.tsv", "", "pairwise empty.tsv -o o.npy", 1, "empty"},
        {"blank.tsv", "\n  \n\t\n", "pairwise blank.tsv -o o.npy", 1, "empty"},
        {"num.tsv", "1\t1\t2x\t3\n", "pairwise num.tsv -o o.npy", 1,
         "num.tsv:1: column 3: malformed number '2x'"},
        {"lab.tsv", "1\t1\t2\nabc\t3\t4\n", "knn lab.tsv ok.tsv -o o.csv", 1,
         "lab.tsv:2: non-numeric label 'abc'"},
        {"rows.csv", "1,1,2,3\n2,4,5\n", "pairwise rows.csv -o o.npy", 1, "rows.csv:2: row has 3 fields"},
        {"mid.tsv", "1\t1\tNaN\t3\n", "pairwise mid.tsv -o o.npy", 1, "mid.tsv:1: column 3: missing value"},
        {"mid.csv", "1,2,3,4\n1,1,,3\n", "pairwise mid.csv -o o.npy", 1, "mid.csv:2: column 3: missing value"},
        {"inf.tsv", "1\t1\tinf\t3\n", "pairwise inf.tsv -o o.npy", 1, "not finite"},
        {"allnan.tsv", "1\tNaN\tNaN\n", "pairwise allnan.tsv -o o.npy", 1, "no values"},
        {"flags.tsv", "1\t1\t2\n2\t3\t4\n", "pairwise flags.tsv -o o.npy --labels --no-labels --labels", 0, ""},
        {"onlylabel.tsv", "1\n2\n", "pairwise onlylabel.tsv -o o.npy --labels", 1, "only its label"},
        {NULL, NULL, "classify nolab.txt ok.tsv", 1, "no label column"},
        {NULL, NULL, "classify mv.npy ok.tsv", 1, "hold no labels"},
        {NULL, NULL, "pairwise mv.npy -o o.npy --labels", 1, "hold no labels"},
        {NULL, NULL, "pairwise mv.npy ok.tsv -o o.npy", 1, "dimension"},
        {NULL, NULL, "knn ok.tsv mv.npy -o o.csv", 1, "dimension"},
        {NULL, NULL, "pairwise big.txt -o o.npy --precision float", 1, "float32"},
        {NULL, NULL, "pairwise ok.tsv -o nowhere/o.npy", 1, "cannot create"},
        /* an output that is a directory is refused before anything is computed */
        {NULL, NULL, "pairwise ok.tsv -o taken.npy", 1, "the output name is a directory"},
        {NULL, NULL, "knn ok.tsv ok.tsv -o taken.npy", 1, "the output name is a directory"},
        {NULL, NULL, "knn ok.tsv ok.tsv -o nn.npy --distances taken.npy", 1, "the output name is a directory"},
        {NULL, NULL, "generate -o taken.npy", 1, "the output name is a directory"},
        {NULL, NULL, "pairwise ok.tsv -o o.xyz", 2, "unknown output format"},
        {NULL, NULL, "pairwise ok.tsv", 2, "missing the output"},
        {NULL, NULL, "knn ok.tsv ok.tsv -o o.csv --distances d.npy", 2, "--distances goes with"},
        {NULL, NULL, "classify ok.tsv ok.tsv -o o.npy", 2, "unknown output format"},
        {NULL, NULL, "pairwise ok.tsv -o o.npy --nu -1", 2, "--nu must be >= 0"},
        {NULL, NULL, "pairwise ok.tsv -o o.npy --lambda -0.5", 2, "--lambda must be >= 0"},
        {NULL, NULL, "pairwise ok.tsv -o o.npy --nu abc", 2, "not a finite number"},
        {NULL, NULL, "pairwise ok.tsv -o o.npy --lambda inf", 2, "not a finite number"},
        {NULL, NULL, "pairwise ok.tsv -o o.npy --degree 0", 2, "--degree must be at least 1"},
        {NULL, NULL, "pairwise ok.tsv -o o.npy --degree 1.5", 2, "not a whole number"},
        {NULL, NULL, "pairwise ok.tsv -o o.npy --threads -2", 2, "--threads must be at least 0"},
        {NULL, NULL, "pairwise ok.tsv -o o.npy --precision half", 2, "neither double nor float"},
        {NULL, NULL, "pairwise ok.tsv -o o.npy --backend tpu", 2, "unknown backend"},
        /* one rule with Python: "gpu" is not a backend name (issue 12) */
        {NULL, NULL, "pairwise ok.tsv -o o.npy --backend gpu", 2, "unknown backend 'gpu' (expected auto, cpu or cuda)"},
        {NULL, NULL, "knn ok.tsv ok.tsv -o o.csv -k 0", 2, "-k must be at least 1"},
        {NULL, NULL, "knn ok.tsv ok.tsv -o o.csv -k 3", 2, "larger than the 2 series"},
        {NULL, NULL, "distance ok.tsv ok.tsv --row 2 --row-b 0", 2, "out of range"},
        {NULL, NULL, "generate -o o.tsv --per-class 0", 2, "--per-class must be at least 1"},
        {NULL, NULL, "demo --length 0", 2, "--length must be at least 1"},
    };
    const char *inputs[] = {"ok.tsv", "nolab.txt", "big.txt", "mv.npy", "taken.npy", NULL, NULL};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const bad_case *c = &cases[i];
        if (c->file)
            write_text(&b, c->file, c->content);
        inputs[5] = c->file;
        cli_result r = run_cli(&b, "%s", c->args);
        int ok = r.code == c->code && strstr(r.err, c->phrase) != NULL && (c->code == 0 || r.out[0] == '\0');
        if (c->code == 0) {
            char out[512];
            path_in(&b, "o.npy", out, sizeof out);
            unlink(out);
        }
        if (!ok)
            fprintf(stderr, "  wavewarp %s -> exit %d (expected %d, '%s'), stderr:\n%s", c->args, r.code,
                    c->code, c->phrase, r.err);
        CHECK(ok);
        CHECK(work_holds_only(&b, inputs)); /* no output, no temporary file */
        if (c->file) {
            char path[512];
            path_in(&b, c->file, path, sizeof path);
            unlink(path);
        }
        cli_result_free(&r);
    }

    /* malformed .npy files */
    const struct {
        const char *dict;
        int major;
        size_t bytes;
        const char *phrase;
    } npy_cases[] = {
        {"{'descr': '<i8', 'fortran_order': False, 'shape': (2, 2), }", 1, 32, "unsupported .npy dtype '<i8'"},
        {"{'descr': '>f8', 'fortran_order': False, 'shape': (2, 2), }", 1, 32, "unsupported .npy dtype '>f8'"},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }", 1, 24, "truncated"},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (1, 1, 2, 2), }", 1, 32, "unsupported .npy shape"},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (0, 4), }", 1, 0, "empty"},
        {"{'descr': '<f8', 'fortran_order': False, }", 1, 32, "malformed .npy header"},
        {"{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), }", 4, 32,
         "unsupported .npy format version 4"},
    };
    inputs[5] = "bad.npy";
    for (size_t i = 0; i < sizeof npy_cases / sizeof npy_cases[0]; i++) {
        write_npy(&b, "bad.npy", npy_cases[i].major, npy_cases[i].dict, ints, npy_cases[i].bytes);
        cli_result r = run_cli(&b, "pairwise bad.npy -o o.npy");
        int ok = r.code == 1 && strstr(r.err, npy_cases[i].phrase) != NULL;
        if (!ok)
            fprintf(stderr, "  npy case %zu -> exit %d, stderr:\n%s", i, r.code, r.err);
        CHECK(ok);
        CHECK(work_holds_only(&b, inputs));
        cli_result_free(&r);
    }
    write_text(&b, "bad.npy", "not numpy at all");
    cli_result r = run_cli(&b, "pairwise bad.npy -o o.npy");
    CHECK(r.code == 1 && strstr(r.err, "not a .npy file") != NULL);
    cli_result_free(&r);
    double mid_nan[4] = {1, NAN, 2, 3};
    write_npy(&b, "bad.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1, 4), }", mid_nan,
              sizeof mid_nan);
    r = run_cli(&b, "pairwise bad.npy -o o.npy");
    CHECK(r.code == 1 && strstr(r.err, "series 0 (0-based), sample 1: missing value") != NULL);
    cli_result_free(&r);
    CHECK(work_holds_only(&b, inputs));

    /* the cuda backend without a GPU: the library's own explanation */
    if (!ww_cuda_available()) {
        r = run_cli(&b, "pairwise ok.tsv -o o.npy --backend cuda");
        CHECK(r.code == 1);
        CHECK(strstr(r.err, ww_strerror(WW_ERR_NO_CUDA)) != NULL ||
              strstr(r.err, ww_strerror(WW_ERR_NO_DEVICE)) != NULL);
        cli_result_free(&r);
        CHECK(work_holds_only(&b, inputs));
    }
    sandbox_close(&b);
}

/* ---------------------------------------------------------------- matrices larger than the memory */

/* The library's matrix of a dataset (against y, or itself when y is NULL) under measure `measure`
 * as the CLI asks for it: with use_float, float32 data and float32 output, widened here to doubles. */
static double *api_matrix_of(ww_ctx *ctx, const ww_measure *measure, const cli_dataset *x, const cli_dataset *y,
                             int use_float)
{
    size_t rows = x->count, cols = y ? y->count : x->count;
    double *m = malloc(rows * cols * sizeof(double));
    ww_dataset dx = describe(x), dy = y ? describe(y) : dx;
    if (!use_float) {
        CHECK_STATUS(ww_pairwise(ctx, measure, &dx, y ? &dy : NULL, m, NULL), WW_OK);
        return m;
    }
    const cli_dataset *sets[2] = {x, y};
    float *copies[2] = {NULL, NULL};
    ww_dataset f32[2];
    for (int k = 0; k < 2 && sets[k]; k++) {
        const cli_dataset *d = sets[k];
        size_t n = d->offsets[d->count] * d->dim;
        copies[k] = malloc(n * sizeof(float));
        for (size_t i = 0; i < n; i++)
            copies[k][i] = (float)d->values[i];
        f32[k] = ww_dataset_f32(copies[k], NULL, d->ragged ? d->offsets : NULL, d->count,
                                cli_series_length(d, 0), d->dim);
    }
    float *out = malloc(rows * cols * sizeof(float));
    ww_pairwise_options o = ww_pairwise_options_default();
    o.out_dtype = WW_F32;
    CHECK_STATUS(ww_pairwise(ctx, measure, &f32[0], y ? &f32[1] : NULL, out, &o), WW_OK);
    for (size_t i = 0; i < rows * cols; i++)
        m[i] = out[i];
    free(out);
    free(copies[0]);
    free(copies[1]);
    return m;
}

/* The same with TWED's defaults, what the CLI computes without --measure. */
static double *api_matrix(ww_ctx *ctx, const cli_dataset *x, const cli_dataset *y, int use_float)
{
    ww_twed_params p = ww_twed_params_default();
    ww_measure twed = ww_measure_twed(p.nu, p.lambda, p.degree);
    return api_matrix_of(ctx, &twed, x, y, use_float);
}

/* Non-zero when two files in the work directory hold the same bytes. */
static int same_bytes(const sandbox *b, const char *name_a, const char *name_b)
{
    char path_a[512], path_b[512];
    path_in(b, name_a, path_a, sizeof path_a);
    path_in(b, name_b, path_b, sizeof path_b);
    size_t size_a = 0, size_b = 0;
    char *a = slurp(path_a, &size_a), *bb = slurp(path_b, &size_b);
    int same = a && bb && size_a == size_b && memcmp(a, bb, size_a) == 0;
    free(a);
    free(bb);
    return same;
}

void test_cli_pairwise_streamed(void)
{
    sandbox b;
    if (sandbox_open(&b) != 0)
        SKIP("cannot create a temporary directory");
    run_ok(&b, "generate -o sc.tsv --per-class 4 --length 40 --seed 7 --quiet");    /* 24 series */
    run_ok(&b, "generate -o other.csv --per-class 2 --length 33 --seed 8 --quiet"); /* 12 series */
    /* 7 series of 3 to 17 samples, NaN-padded (the library groups columns by length) */
    char ragged[4096] = "";
    ww_rng rng = {777};
    for (size_t i = 0; i < 7; i++) {
        size_t used = strlen(ragged), length = 3 + ww_rng_below(&rng, 15);
        used += (size_t)snprintf(ragged + used, sizeof ragged - used, "%zu", i % 2 + 1);
        for (size_t t = 0; t < 17; t++)
            used += t < length ? (size_t)snprintf(ragged + used, sizeof ragged - used, "\t%.17g",
                                                  ww_rng_uniform(&rng) * 10 - 5)
                               : (size_t)snprintf(ragged + used, sizeof ragged - used, "\tNaN");
        snprintf(ragged + used, sizeof ragged - used, "\n");
    }
    write_text(&b, "r.tsv", ragged);
    cli_dataset sc, other, r;
    CHECK(read_dataset(&b, "sc.tsv", CLI_LABELS_AUTO, &sc) == 0);
    CHECK(read_dataset(&b, "other.csv", CLI_LABELS_AUTO, &other) == 0);
    CHECK(read_dataset(&b, "r.tsv", CLI_LABELS_AUTO, &r) == 0);
    CHECK(r.ragged);
    ww_ctx *ctx = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_AUTO, 0);

    /* block heights that divide the row count and that do not, one row (a budget under a row's
     * size), float32 (4 bytes an entry) and double, X against itself and against Y */
    const struct {
        const char *inputs;
        const cli_dataset *x, *y;
        int use_float;
        const char *budget;
        size_t block_rows;
    } cases[] = {
        {"sc.tsv", &sc, NULL, 0, "960", 5},           /* 192 bytes a row: 24 = 4 x 5 + 4 */
        {"sc.tsv", &sc, NULL, 0, "1", 1},             /* less than a row: one row a block */
        {"sc.tsv", &sc, NULL, 0, "1152", 6},          /* 24 = 4 x 6 */
        {"sc.tsv", &sc, NULL, 1, "1K", 10},           /* 96 bytes a row: 24 = 2 x 10 + 4 */
        {"sc.tsv other.csv", &sc, &other, 0, "1k", 10}, /* 96 bytes a row */
        {"sc.tsv other.csv", &sc, &other, 1, "1000", 20}, /* 48 bytes a row: 24 = 20 + 4 */
        {"r.tsv", &r, NULL, 0, "112", 2},             /* 56 bytes a row: 7 = 3 x 2 + 1 */
        {"r.tsv", &r, NULL, 1, "100", 3},             /* 28 bytes a row: 7 = 2 x 3 + 1 */
        {"r.tsv sc.tsv", &r, &sc, 1, "96", 1},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const char *precision = cases[c].use_float ? "--precision float" : "";
        size_t rows = cases[c].x->count, cols = cases[c].y ? cases[c].y->count : rows;
        run_ok(&b, "pairwise %s -o whole.npy --backend cpu %s", cases[c].inputs, precision);
        cli_result run = run_cli(&b, "pairwise %s -o part.npy --backend cpu --max-memory %s %s", cases[c].inputs,
                                 cases[c].budget, precision);
        char plan[64];
        snprintf(plan, sizeof plan, "blocks of %zu row", cases[c].block_rows);
        int ok = run.code == 0 && strstr(run.err, plan) != NULL && same_bytes(&b, "whole.npy", "part.npy") &&
                 npy_descr_is(&b, "part.npy", cases[c].use_float ? "<f4" : "<f8");
        if (!ok)
            fprintf(stderr, "  case %zu: pairwise %s --max-memory %s %s -> exit %d, stderr:\n%s", c,
                    cases[c].inputs, cases[c].budget, precision, run.code, run.err);
        CHECK(ok);
        cli_result_free(&run);
        double *want = api_matrix(ctx, cases[c].x, cases[c].y, cases[c].use_float);
        double *got = read_matrix(&b, "part.npy", rows, cols);
        CHECK(got != NULL);
        for (size_t i = 0; got && i < rows * cols; i++)
            CHECK(got[i] == want[i]);
        free(got);
        free(want);
        if (!cases[c].use_float) { /* text is streamed the same way (doubles: the same blocks) */
            run_ok(&b, "pairwise %s -o whole.csv --backend cpu --quiet", cases[c].inputs);
            run_ok(&b, "pairwise %s -o part.csv --backend cpu --quiet --max-memory %s", cases[c].inputs,
                   cases[c].budget);
            CHECK(same_bytes(&b, "whole.csv", "part.csv"));
        }
    }
    /* a budget above the matrix: one block, no note */
    cli_result run = run_cli(&b, "pairwise sc.tsv -o part.npy --max-memory 17179869183G");
    CHECK(run.code == 0 && strstr(run.err, "blocks") == NULL);
    cli_result_free(&run);

    /* bad budgets are usage errors */
    const struct {
        const char *value, *phrase;
    } bad[] = {
        {"0", "must be a positive number of bytes"},
        {"-1", "must be a positive number of bytes"},
        {"-2M", "must be a positive number of bytes"},
        {"abc", "is not a number of bytes"},
        {"12X", "is not a number of bytes"},
        {"1.5G", "is not a number of bytes"},
        {"1KB", "is not a number of bytes"},
        {"G", "is not a number of bytes"},
        {"''", "is not a number of bytes"},
        {"99999999999999999999", "is too large"},
        {"17179869184G", "is too large"}, /* 2^64 bytes */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        run = run_cli(&b, "pairwise sc.tsv -o bad.npy --max-memory %s", bad[i].value);
        int ok = run.code == 2 && strstr(run.err, "--max-memory") != NULL && strstr(run.err, bad[i].phrase) != NULL;
        if (!ok)
            fprintf(stderr, "  --max-memory %s -> exit %d, stderr:\n%s", bad[i].value, run.code, run.err);
        CHECK(ok);
        cli_result_free(&run);
    }
    run = run_cli(&b, "knn sc.tsv sc.tsv -o bad.csv --max-memory 1M");
    CHECK(run.code == 2 && strstr(run.err, "does not apply") != NULL);
    cli_result_free(&run);

    /* a write that fails part way (a file-size limit, as a full disk): a clear message, exit 1, and
     * neither the output nor the temporary file; streamed, in one block, and as text */
    const char *limited[] = {"-o full.npy --max-memory 960", "-o full.npy", "-o full.csv --max-memory 960"};
    for (size_t i = 0; i < sizeof limited / sizeof limited[0]; i++) {
        char args[256];
        snprintf(args, sizeof args, "pairwise sc.tsv %s --quiet", limited[i]);
        run = run_cli_args(&b, 2048, args);
        int ok = run.code == 1 && strstr(run.err, "write error") != NULL && strstr(run.err, strerror(EFBIG)) != NULL;
        if (!ok)
            fprintf(stderr, "  %s under a 2048-byte file limit -> exit %d, stderr:\n%s", args, run.code, run.err);
        CHECK(ok);
        cli_result_free(&run);
    }
    const char *files[] = {"sc.tsv", "other.csv", "r.tsv", "whole.npy", "part.npy", "whole.csv", "part.csv", NULL};
    CHECK(work_holds_only(&b, files));
    ww_ctx_destroy(ctx);
    cli_dataset_free(&sc);
    cli_dataset_free(&other);
    cli_dataset_free(&r);
    sandbox_close(&b);
}

/* ---------------------------------------------------------------- Ctrl-C */

/* Size of the temporary file of output `name` in the work directory, or -1 when there is none. */
static long long temp_file_size(const sandbox *b, const char *name)
{
    char prefix[256];
    snprintf(prefix, sizeof prefix, ".%s.tmp-", name);
    long long size = -1;
    DIR *d = opendir(b->work);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        char path[1024];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", b->work, e->d_name);
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0 && stat(path, &st) == 0)
            size = (long long)st.st_size;
    }
    if (d)
        closedir(d);
    return size;
}

/* Runs "pairwise big.tsv -o d.npy" on one CPU thread (with --max-memory when given) and sends it
 * SIGINT once under way: when the progress bar first draws, or, with streamed_bytes > 0, when the
 * temporary file holds more than that many bytes (blocks already written). Then expects exit 130,
 * "interrupted" on stderr, and nothing in the work directory but big.tsv. */
static void interrupt_pairwise(const sandbox *b, const char *max_memory, long long streamed_bytes)
{
    int err_pipe[2];
    CHECK(pipe(err_pipe) == 0);
    pid_t pid = fork();
    if (pid == 0) {
        if (chdir(b->work) != 0)
            _exit(99);
        dup2(err_pipe[1], STDERR_FILENO);
        close(err_pipe[0]);
        close(err_pipe[1]);
        int null = open("/dev/null", O_WRONLY);
        dup2(null, STDOUT_FILENO);
        if (max_memory)
            execl(WW_CLI_PATH, "wavewarp", "pairwise", "big.tsv", "-o", "d.npy", "--progress", "--backend", "cpu",
                  "--threads", "1", "--max-memory", max_memory, (char *)NULL);
        else
            execl(WW_CLI_PATH, "wavewarp", "pairwise", "big.tsv", "-o", "d.npy", "--progress", "--backend", "cpu",
                  "--threads", "1", (char *)NULL);
        _exit(98);
    }
    close(err_pipe[1]);
    char text[8192];
    size_t len = 0;
    int signalled = 0, idle_ms = 0;
    struct pollfd pfd = {err_pipe[0], POLLIN, 0};
    for (;;) {
        int ready = poll(&pfd, 1, 20);
        if (ready == 0) {
            /* generous fail-safes only: the test never asserts on time */
            idle_ms += 20;
            if (idle_ms > (signalled ? 120000 : 60000)) {
                fprintf(stderr, "  no progress or exit in time; killing the CLI\n");
                kill(pid, SIGKILL);
                CHECK(0);
                break;
            }
        } else {
            ssize_t got = ready > 0 ? read(err_pipe[0], text + len, sizeof text - 1 - len) : -1;
            if (got <= 0)
                break; /* EOF: the CLI exited */
            len += (size_t)got;
            if (len > sizeof text / 2) { /* keep the tail only */
                memmove(text, text + len - 1024, 1024);
                len = 1024;
            }
            text[len] = '\0';
        }
        int under_way = streamed_bytes > 0 ? temp_file_size(b, "d.npy") > streamed_bytes
                                           : memchr(text, '\r', len) != NULL;
        if (!signalled && under_way) {
            kill(pid, SIGINT);
            signalled = 1;
        }
    }
    close(err_pipe[0]);
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK(signalled);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 130);
    text[len] = '\0';
    CHECK(strstr(text, "interrupted") != NULL);
    const char *files[] = {"big.tsv", NULL};
    CHECK(work_holds_only(b, files));
}

void test_cli_interrupt_leaves_nothing(void)
{
    sandbox b;
    if (sandbox_open(&b) != 0)
        SKIP("cannot create a temporary directory");
    /* long enough on one CPU thread (about 3e10 cells) that it is surely running when we interrupt */
    run_ok(&b, "generate -o big.tsv --per-class 100 --length 400 --quiet");
    interrupt_pairwise(&b, NULL, 0);
    sandbox_close(&b);
}

void test_cli_interrupt_streamed(void)
{
    sandbox b;
    if (sandbox_open(&b) != 0)
        SKIP("cannot create a temporary directory");
    run_ok(&b, "generate -o big.tsv --per-class 100 --length 400 --quiet");
    /* a row of the 600 x 600 float64 matrix is 4800 bytes: one row a block, and the interrupt comes
     * once the temporary file holds the header and a block at least */
    interrupt_pairwise(&b, "4800", 4800);
    sandbox_close(&b);
}

/* Ctrl-C at every point where an output file exists (the CLI's test hook WW_CLI_INTERRUPT_AT=N
 * raises SIGINT at its N-th checkpoint: after each temporary file is created, before each block is
 * written, before each rename), once (the command stops and discards its outputs: exit 130, the
 * "interrupted" line) and twice (the second signal removes the temporary files and exits at once),
 * for every command that writes files: no file but the inputs is ever left. N runs up until the
 * command gets through all its checkpoints and succeeds. */
void test_cli_interrupt_every_checkpoint(void)
{
    sandbox b;
    if (sandbox_open(&b) != 0)
        SKIP("cannot create a temporary directory");
    run_ok(&b, "generate -o sc.tsv --per-class 10 --length 30 --seed 5 --quiet");
    const char *inputs[] = {"sc.tsv", NULL};
    const char *commands[] = {
        "pairwise sc.tsv -o d.csv",
        "pairwise sc.tsv -o d.npy --max-memory 960", /* 2 rows a block: many blocks */
        "pairwise sc.tsv sc.tsv -o d.tsv --measure dtw --window 3",
        "knn sc.tsv sc.tsv -k 2 -o nn.npy --distances dd.npy",
        "knn sc.tsv sc.tsv -k 2 -o nn.csv",
        "classify sc.tsv sc.tsv -o pred.csv",
        "generate -o g.tsv --per-class 5 --length 20",
    };
    for (size_t c = 0; c < sizeof commands / sizeof commands[0]; c++) {
        int completed = 0;
        for (int n = 1; n <= 200 && !completed; n++)
            for (int twice = 0; twice < 2; twice++) {
                char at[32];
                snprintf(at, sizeof at, "%d%s", n, twice ? "+" : "");
                setenv("WW_CLI_INTERRUPT_AT", at, 1);
                cli_result r = run_cli(&b, "%s", commands[c]);
                unsetenv("WW_CLI_INTERRUPT_AT");
                if (r.code == 0) { /* past the last checkpoint: a normal run */
                    completed = 1;
                    CHECK(n > 1); /* an output was created, so there was a checkpoint */
                    cli_result_free(&r);
                    break;
                }
                if (r.code != 130 || (!twice && strstr(r.err, "interrupted") == NULL))
                    fprintf(stderr, "  wavewarp %s with WW_CLI_INTERRUPT_AT=%s -> exit %d:\n%s", commands[c], at,
                            r.code, r.err);
                CHECK(r.code == 130);
                CHECK(twice || strstr(r.err, "interrupted") != NULL);
                CHECK(work_holds_only(&b, inputs));
                cli_result_free(&r);
            }
        CHECK(completed);
        /* the completed run left its outputs: clear them for the next command */
        sandbox_clear_except(&b, inputs);
    }
    sandbox_close(&b);
}

/* ---------------------------------------------------------------- calibrate and --devices */

void test_cli_calibrate_and_devices(void)
{
    sandbox b;
    if (sandbox_open(&b) != 0)
        SKIP("cannot create a temporary directory");
    run_ok(&b, "generate -o sc.tsv --per-class 40 --length 60 --seed 3 --quiet");
    const char *bad_lists[] = {"0,x", "''", ",", "-1", "0,,1", "99999999999", "1,"};
    cli_result r;
    for (size_t k = 0; k < sizeof bad_lists / sizeof bad_lists[0]; k++) {
        char cmd[128];
        snprintf(cmd, sizeof cmd, "pairwise sc.tsv -o m.csv --devices %s", bad_lists[k]);
        r = run_cli(&b, "%s", cmd);
        CHECK(r.code == 2 && strstr(r.err, "--devices") != NULL);
        cli_result_free(&r);
    }
    r = run_cli(&b, "calibrate --bogus");
    CHECK(r.code == 2 && strstr(r.err, "--bogus") != NULL);
    cli_result_free(&r);
    const char *only_data[] = {"sc.tsv", NULL};
    CHECK(work_holds_only(&b, only_data)); /* no output file from a refused command line */
    r = run_cli(&b, "distance sc.tsv sc.tsv --row 0 --row-b 1 --devices 0");
    CHECK(r.code == 2 && strstr(r.err, "does not apply") != NULL);
    cli_result_free(&r);
    const char *inputs[] = {"sc.tsv", NULL};
    if (!ww_cuda_available()) {
        /* no GPU: clear messages, exit 1, no file left */
        r = run_cli(&b, "calibrate -o cal.txt");
        CHECK(r.code == 1 && strstr(r.err, "calibrate needs a CUDA GPU") != NULL);
        cli_result_free(&r);
        r = run_cli(&b, "pairwise sc.tsv -o m.csv --devices all");
        CHECK(r.code == 1 && strstr(r.err, "no CUDA GPU") != NULL);
        cli_result_free(&r);
        r = run_cli(&b, "knn sc.tsv sc.tsv -o k.csv --devices 0,0");
        CHECK(r.code == 1 && strstr(r.err, "cannot use the cuda backend") != NULL);
        cli_result_free(&r);
        CHECK(work_holds_only(&b, inputs));
        sandbox_close(&b);
        return;
    }
    /* a GPU: calibrate prints the model and writes it; the matrix on devices 0,0 equals the CPU's */
    r = run_cli(&b, "calibrate -o cal.txt");
    CHECK(r.code == 0 && strstr(r.out, "thread_max_length = ") != NULL && strstr(r.err, "cal.txt") != NULL);
    cli_result_free(&r);
    run_ok(&b, "pairwise sc.tsv -o gpu.csv --devices 0,0 --quiet");
    run_ok(&b, "pairwise sc.tsv -o cpu.csv --backend cpu --quiet");
    run_ok(&b, "knn sc.tsv sc.tsv -o k.csv -k 3 --devices all --quiet");
    run_ok(&b, "classify sc.tsv sc.tsv --devices 0,0 --quiet");
    double *want = read_matrix(&b, "cpu.csv", 240, 240);
    if (want)
        compare_matrix(&b, "gpu.csv", want, 240, 240);
    free(want);
    char cal[512];
    path_in(&b, "cal.txt", cal, sizeof cal);
    char *text = slurp(cal, NULL);
    CHECK(text != NULL && strstr(text, "format = 1") != NULL);
    free(text);
    sandbox_close(&b);
}

/* ---------------------------------------------------------------- --measure and --window */


/* The .npy matrix `name` holds exactly these doubles (bit for bit). */
static int npy_matrix_is(const sandbox *b, const char *name, const double *want, size_t rows, size_t cols)
{
    double *got = read_matrix(b, name, rows, cols);
    int same = got != NULL && memcmp(got, want, rows * cols * sizeof(double)) == 0;
    if (got && !same)
        for (size_t i = 0; i < rows * cols; i++)
            if (memcmp(&got[i], &want[i], sizeof(double)) != 0) {
                fprintf(stderr, "  %s[%zu]: %.17g, library %.17g\n", name, i, got[i], want[i]);
                break;
            }
    free(got);
    return same;
}

/* Total of the library's progress reports over one call (its last `total`). */
static int last_total(uint64_t done, uint64_t total, void *user)
{
    (void)done;
    *(uint64_t *)user = total;
    return 0;
}

/* Cells the library reports for x (against y, or itself) computed in blocks of block_rows rows, as
 * the CLI's pairwise --max-memory asks for them. */
static uint64_t library_cells(ww_ctx *ctx, const ww_measure *m, const cli_dataset *x, const cli_dataset *y,
                              size_t block_rows)
{
    ww_dataset dx = describe(x), dy = y ? describe(y) : dx;
    size_t cols = y ? y->count : x->count;
    double *block = malloc(block_rows * cols * sizeof(double));
    uint64_t cells = 0;
    for (size_t r0 = 0; block && r0 < x->count; r0 += block_rows) {
        uint64_t total = 0;
        ww_pairwise_options o = ww_pairwise_options_default();
        o.row_begin = r0;
        o.row_end = r0 + block_rows < x->count ? r0 + block_rows : x->count;
        o.progress = last_total;
        o.progress_user = &total;
        CHECK_STATUS(ww_pairwise(ctx, m, &dx, y ? &dy : NULL, block, &o), WW_OK);
        cells += total;
    }
    free(block);
    return cells;
}

/* pairwise --measure/--window: the library's matrices (ww_pairwise with the same measure) bit for
 * bit, in one block and streamed, and the cells it reports. */
void test_cli_measure_pairwise(void)
{
    sandbox b;
    if (sandbox_open(&b) != 0)
        SKIP("cannot create a temporary directory");
    run_ok(&b, "generate -o sc.tsv --per-class 4 --length 40 --seed 7 --quiet");    /* 24 series */
    run_ok(&b, "generate -o other.csv --per-class 2 --length 33 --seed 8 --quiet"); /* 12 series */
    char ragged[8192] = "";
    ww_rng rng = {31337};
    for (size_t i = 0; i < 9; i++) {
        size_t used = strlen(ragged), length = 2 + ww_rng_below(&rng, 30);
        used += (size_t)snprintf(ragged + used, sizeof ragged - used, "%zu", i % 3 + 1);
        for (size_t t = 0; t < 31; t++)
            used += t < length ? (size_t)snprintf(ragged + used, sizeof ragged - used, "\t%.17g",
                                                  ww_rng_uniform(&rng) * 10 - 5)
                               : (size_t)snprintf(ragged + used, sizeof ragged - used, "\tNaN");
        snprintf(ragged + used, sizeof ragged - used, "\n");
    }
    write_text(&b, "r.tsv", ragged);
    cli_dataset sc, other, r;
    CHECK(read_dataset(&b, "sc.tsv", CLI_LABELS_AUTO, &sc) == 0);
    CHECK(read_dataset(&b, "other.csv", CLI_LABELS_AUTO, &other) == 0);
    CHECK(read_dataset(&b, "r.tsv", CLI_LABELS_AUTO, &r) == 0);
    CHECK(r.ragged);
    ww_ctx *ctx = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_AUTO, 0);

    ww_measure dtw = ww_measure_dtw(), dtw3 = ww_measure_dtw(), dtw0 = ww_measure_dtw(), dtwf = ww_measure_dtw();
    ww_measure_set_window(&dtw3, 3);
    ww_measure_set_window(&dtw0, 0);
    ww_measure_set_window_fraction(&dtwf, 0.15);
    ww_measure twed2 = ww_measure_twed(0.5, 0.25, 1), twedf = ww_measure_twed(0.001, 1, 2);
    ww_measure sd = ww_measure_softdtw(0.5), sd3 = ww_measure_softdtw(1.0);
    ww_measure_set_window(&sd3, 3);
    ww_measure_set_window(&twed2, 2);
    ww_measure_set_window_fraction(&twedf, 0.3);
    const struct {
        const char *inputs, *options;
        const ww_measure *m;
        const cli_dataset *x, *y;
        int use_float;
        const char *phrase; /* in the summary line */
    } cases[] = {
        {"sc.tsv", "--measure dtw", &dtw, &sc, NULL, 0, "dtw, no window"},
        {"sc.tsv", "--measure dtw --window 3", &dtw3, &sc, NULL, 0, "dtw, window radius 3"},
        {"sc.tsv", "--window 0 --measure=dtw", &dtw0, &sc, NULL, 0, "dtw, window radius 0"},
        {"sc.tsv other.csv", "--measure dtw", &dtw, &sc, &other, 0, "dtw, no window"},
        {"sc.tsv other.csv", "--measure dtw --window 3", &dtw3, &sc, &other, 0, "window radius 3"},
        {"other.csv sc.tsv", "--measure dtw --window-fraction 0.15", &dtwf, &other, &sc, 0,
         "dtw, window fraction 0.15 of the shorter series"},
        {"r.tsv", "--measure dtw --window 3", &dtw3, &r, NULL, 0, "dtw, window radius 3"},
        {"r.tsv sc.tsv", "--measure dtw --window-fraction 0.15", &dtwf, &r, &sc, 0, "window fraction 0.15"},
        {"sc.tsv", "--measure dtw --window 3 --precision float", &dtw3, &sc, NULL, 1, "dtw, window radius 3"},
        {"sc.tsv other.csv", "--nu 0.5 --lambda 0.25 --degree 1 --window 2", &twed2, &sc, &other, 0,
         "twed (nu = 0.5, lambda = 0.25, degree = 1), window radius 2"},
        {"r.tsv", "--measure twed --window-fraction 0.3", &twedf, &r, NULL, 0, "window fraction 0.3"},
        {"sc.tsv", "--measure softdtw --gamma 0.5", &sd, &sc, NULL, 0, "softdtw (gamma = 0.5), no window"},
        {"sc.tsv other.csv", "--measure softdtw --window 3", &sd3, &sc, &other, 0, "softdtw (gamma = 1), window radius 3"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        size_t rows = cases[c].x->count, cols = cases[c].y ? cases[c].y->count : rows;
        double *want = api_matrix_of(ctx, cases[c].m, cases[c].x, cases[c].y, cases[c].use_float);
        uint64_t cells = library_cells(ctx, cases[c].m, cases[c].x, cases[c].y, rows);
        char cells_text[64];
        snprintf(cells_text, sizeof cells_text, "(%llu cells,", (unsigned long long)cells);
        cli_result run = run_cli(&b, "pairwise %s -o m.npy --backend cpu %s", cases[c].inputs, cases[c].options);
        int ok = run.code == 0 && npy_matrix_is(&b, "m.npy", want, rows, cols) &&
                 npy_descr_is(&b, "m.npy", cases[c].use_float ? "<f4" : "<f8") &&
                 strstr(run.err, cases[c].phrase) != NULL && strstr(run.err, cells_text) != NULL;
        if (!ok)
            fprintf(stderr, "  case %zu: pairwise %s %s -> exit %d (want '%s' and '%s'), stderr:\n%s", c,
                    cases[c].inputs, cases[c].options, run.code, cases[c].phrase, cells_text, run.err);
        CHECK(ok);
        cli_result_free(&run);
        /* streamed in blocks of 5 rows (48 or 96 bytes a column x 5): the same bytes and cells */
        size_t block_rows = 5, budget = block_rows * cols * (cases[c].use_float ? 4 : 8);
        cells = library_cells(ctx, cases[c].m, cases[c].x, cases[c].y, block_rows);
        snprintf(cells_text, sizeof cells_text, "(%llu cells,", (unsigned long long)cells);
        run = run_cli(&b, "pairwise %s -o part.npy --backend cpu %s --max-memory %zu", cases[c].inputs,
                      cases[c].options, budget);
        ok = run.code == 0 && strstr(run.err, "blocks of 5 rows") != NULL && same_bytes(&b, "m.npy", "part.npy") &&
             strstr(run.err, cells_text) != NULL;
        if (!ok)
            fprintf(stderr, "  case %zu streamed: pairwise %s %s --max-memory %zu -> exit %d (want '%s'), stderr:\n%s",
                    c, cases[c].inputs, cases[c].options, budget, run.code, cells_text, run.err);
        CHECK(ok);
        cli_result_free(&run);
        /* text output: the same numbers, 17 digits */
        if (!cases[c].use_float) {
            run_ok(&b, "pairwise %s -o m.csv --backend cpu --quiet %s", cases[c].inputs, cases[c].options);
            double *text = read_matrix(&b, "m.csv", rows, cols);
            CHECK(text != NULL && memcmp(text, want, rows * cols * sizeof(double)) == 0);
            free(text);
        }
        free(want);
    }
    /* DTW is not TWED, a window changes DTW, and a fraction of 1 is no window */
    run_ok(&b, "pairwise sc.tsv -o twed.npy --quiet --backend cpu");
    run_ok(&b, "pairwise sc.tsv -o dtw.npy --quiet --backend cpu --measure dtw");
    run_ok(&b, "pairwise sc.tsv -o dtw1.npy --quiet --backend cpu --measure dtw --window 1");
    run_ok(&b, "pairwise sc.tsv -o dtwall.npy --quiet --backend cpu --measure dtw --window-fraction 1");
    run_ok(&b, "pairwise sc.tsv -o dtwwide.npy --quiet --backend cpu --measure dtw --window 4294967295");
    CHECK(!same_bytes(&b, "twed.npy", "dtw.npy") && !same_bytes(&b, "dtw.npy", "dtw1.npy"));
    CHECK(same_bytes(&b, "dtw.npy", "dtwall.npy") && same_bytes(&b, "dtw.npy", "dtwwide.npy"));
    const char *files[] = {"sc.tsv", "other.csv", "r.tsv", "m.npy", "part.npy", "m.csv", "twed.npy", "dtw.npy",
                           "dtw1.npy", "dtwall.npy", "dtwwide.npy", NULL};
    CHECK(work_holds_only(&b, files));
    ww_ctx_destroy(ctx);
    cli_dataset_free(&sc);
    cli_dataset_free(&other);
    cli_dataset_free(&r);
    sandbox_close(&b);
}

/* Number in the text after `key`, as an unsigned integer (0 when absent). */
static unsigned long long find_count(const char *text, const char *key)
{
    const char *p = strstr(text, key);
    return p ? strtoull(p + strlen(key), NULL, 10) : 0;
}

/* distance, knn, classify and demo with --measure dtw and a window: the library's results. */
void test_cli_measure_commands(void)
{
    sandbox b;
    if (sandbox_open(&b) != 0)
        SKIP("cannot create a temporary directory");
    run_ok(&b, "generate -o train.tsv --per-class 10 --seed 1 --quiet");               /* 60 of 60 */
    run_ok(&b, "generate -o test.tsv --per-class 10 --seed 2 --length 47 --quiet");    /* 60 of 47 */
    write_text(&b, "a.txt", "1 2 3 4.5 2 0\n");
    write_text(&b, "b.csv", "1\n3\n2.5\n");
    cli_dataset train, test;
    CHECK(read_dataset(&b, "train.tsv", CLI_LABELS_AUTO, &train) == 0);
    CHECK(read_dataset(&b, "test.tsv", CLI_LABELS_AUTO, &test) == 0);
    ww_ctx *ctx = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_AUTO, 0);
    ww_measure dtw = ww_measure_dtw(), dtw2 = ww_measure_dtw(), dtwf = ww_measure_dtw();
    ww_measure_set_window(&dtw2, 2);
    ww_measure_set_window_fraction(&dtwf, 0.1);

    /* distance: one pair, files of one series and rows of dataset files */
    const double av[] = {1, 2, 3, 4.5, 2, 0}, bv[] = {1, 3, 2.5};
    ww_series sa = ww_series_f64(av, NULL, 6, 1), sb = ww_series_f64(bv, NULL, 3, 1);
    ww_series s3 = ww_series_f64(train.values + 3 * 60, NULL, 60, 1),
              t7 = ww_series_f64(test.values + 7 * 47, NULL, 47, 1);
    const struct {
        const char *args;
        const ww_measure *m;
        const ww_series *x, *y;
    } pairs[] = {
        {"distance a.txt b.csv --measure dtw", &dtw, &sa, &sb},
        {"distance a.txt b.csv --measure dtw --window 0", NULL, &sa, &sb}, /* radius 0 */
        {"distance a.txt b.csv --measure dtw --window 2", &dtw2, &sa, &sb},
        {"distance train.tsv test.tsv --row 3 --row-b 7 --measure dtw", &dtw, &s3, &t7},
        {"distance train.tsv test.tsv --row 3 --row-b 7 --measure dtw --window 2", &dtw2, &s3, &t7},
        {"distance train.tsv test.tsv --row 3 --row-b 7 --measure dtw --window-fraction 0.1", &dtwf, &s3, &t7},
    };
    ww_measure dtw0 = ww_measure_dtw();
    ww_measure_set_window(&dtw0, 0);
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        double want = -1, got = -2;
        CHECK_STATUS(ww_distance(ctx, pairs[i].m ? pairs[i].m : &dtw0, pairs[i].x, pairs[i].y, &want), WW_OK);
        cli_result r = run_cli(&b, "%s --backend cpu", pairs[i].args);
        got = r.code == 0 ? strtod(r.out, NULL) : -2;
        if (got != want)
            fprintf(stderr, "  wavewarp %s -> exit %d, %.17g (library %.17g)\n%s", pairs[i].args, r.code, got, want,
                    r.err);
        CHECK(got == want); /* 17 digits: the same double */
        cli_result_free(&r);
    }
    double plain = 0, banded = 0;
    CHECK_STATUS(ww_distance(ctx, &dtw, &s3, &t7, &plain), WW_OK);
    CHECK_STATUS(ww_distance(ctx, &dtw2, &s3, &t7, &banded), WW_OK);
    CHECK(banded > plain); /* the window matters for this pair */

    /* knn: indices and distances of ww_knn */
    ww_dataset dtrain = describe(&train), dtest = describe(&test);
    size_t idx[60 * 3];
    double dist[60 * 3];
    run_ok(&b, "knn test.tsv train.tsv -k 3 -o k.npy --distances kd.npy --measure dtw --window 2 --backend cpu");
    CHECK_STATUS(ww_knn(ctx, &dtw2, &dtest, &dtrain, 3, idx, dist, NULL), WW_OK);
    int64_t *got_idx = read_npy_i64(&b, "k.npy", 60 * 3);
    double *got_dist = read_matrix(&b, "kd.npy", 60, 3);
    CHECK(got_idx != NULL && got_dist != NULL);
    for (size_t i = 0; got_idx && got_dist && i < 60 * 3; i++)
        CHECK(got_idx[i] == (int64_t)idx[i] && got_dist[i] == dist[i]);
    free(got_idx);
    free(got_dist);
    cli_result r = run_cli(&b, "knn test.tsv train.tsv -k 1 -o k.csv --measure dtw --backend cpu");
    CHECK(r.code == 0 && strstr(r.err, "for 60 queries, dtw, no window, in ") != NULL);
    CHECK(find_count(r.err, " s (") == 60ull * 60 * 60 * 47); /* every cell of every pair */
    cli_result_free(&r);

    /* classify: predictions of ww_knn with k = 1, the measure named, the band's cells counted */
    r = run_cli(&b, "classify train.tsv test.tsv -o pred.csv --measure dtw --window 2 --backend cpu");
    CHECK(r.code == 0);
    CHECK(find_number(r.out, "accuracy:") > 0.8);
    CHECK(strstr(r.out, "measure: dtw, window radius 2\n") != NULL);
    CHECK(strstr(r.out, "(60 x 60 dtw distances)") != NULL);
    const char *cells_at = strstr(r.out, "cells/s: ");
    const char *open = cells_at ? strchr(cells_at, '(') : NULL;
    CHECK(open != NULL && strtoull(open + 1, NULL, 10) == 60ull * 60 * ww_window_cells(47, 60, 2));
    CHECK(strstr(r.out, "cells, in the window)") != NULL);
    cli_result_free(&r);
    CHECK_STATUS(ww_knn(ctx, &dtw2, &dtest, &dtrain, 1, idx, dist, NULL), WW_OK);
    char path[512], line[256];
    path_in(&b, "pred.csv", path, sizeof path);
    FILE *fp = fopen(path, "r");
    CHECK(fp && fgets(line, sizeof line, fp) && strcmp(line, "test,label,predicted,nearest,distance\n") == 0);
    size_t rows = 0;
    while (fp && fgets(line, sizeof line, fp)) {
        size_t t, nearest;
        double label, predicted, d;
        CHECK(sscanf(line, "%zu,%lf,%lf,%zu,%lf", &t, &label, &predicted, &nearest, &d) == 5);
        CHECK(t == rows && nearest == idx[rows] && d == dist[rows]);
        rows++;
    }
    if (fp)
        fclose(fp);
    CHECK(rows == 60);
    r = run_cli(&b, "classify train.tsv test.tsv --measure dtw --window-fraction 0.1 --backend cpu");
    CHECK(r.code == 0 && strstr(r.out, "measure: dtw, window fraction 0.1 of the shorter series\n") != NULL);
    cli_result_free(&r);
    r = run_cli(&b, "classify train.tsv test.tsv --backend cpu --nu 0.01");
    CHECK(r.code == 0 && strstr(r.out, "measure: twed (nu = 0.01, lambda = 1, degree = 2), no window\n") != NULL);
    CHECK(strstr(r.out, "(60 x 60 twed distances)") && strstr(r.out, "cells)\n"));
    cli_result_free(&r);

    /* demo: the measure in the title and the summary; cells of the band */
    r = run_cli(&b, "demo --measure dtw");
    if (r.code != 0)
        fprintf(stderr, "%s%s", r.out, r.err);
    CHECK(r.code == 0);
    CHECK(strstr(r.out, "synthetic control charts under dtw, no window\n") != NULL);
    CHECK(find_number(r.out, "accuracy:") > 0.9);
    CHECK(strstr(r.out, "measure: dtw, no window\n") && strstr(r.out, "per class:"));
    CHECK(strstr(r.out, "(300 x 300 dtw distances)") != NULL);
    CHECK(strstr(r.out, "(324000000 cells)") != NULL); /* 300 x 300 pairs of 60 x 60 */
    cli_result_free(&r);
    r = run_cli(&b, "demo --measure dtw --window 6 --train-per-class 10 --test-per-class 5 --backend cpu --quiet");
    CHECK(r.code == 0);
    CHECK(strstr(r.out, "under dtw, window radius 6\n") && strstr(r.out, "measure: dtw, window radius 6\n"));
    char want_cells[64];
    snprintf(want_cells, sizeof want_cells, "(%llu cells, in the window)",
             (unsigned long long)(60ull * 30 * ww_window_cells(60, 60, 6)));
    CHECK(strstr(r.out, want_cells) != NULL);
    cli_result_free(&r);
    r = run_cli(&b, "demo --train-per-class 10 --test-per-class 5 --backend cpu --window 6 --lambda 0.5");
    CHECK(r.code == 0 && strstr(r.out, "under twed (nu = 0.001, lambda = 0.5, degree = 2), window radius 6\n"));
    cli_result_free(&r);

    const char *files[] = {"train.tsv", "test.tsv", "a.txt", "b.csv", "k.npy", "kd.npy", "k.csv", "pred.csv", NULL};
    CHECK(work_holds_only(&b, files));
    ww_ctx_destroy(ctx);
    cli_dataset_free(&train);
    cli_dataset_free(&test);
    sandbox_close(&b);
}

/* Bad --measure/--window command lines: exit 2, a message naming the option, nothing written. */
void test_cli_measure_usage_errors(void)
{
    sandbox b;
    if (sandbox_open(&b) != 0)
        SKIP("cannot create a temporary directory");
    write_text(&b, "ok.tsv", "1\t1\t2\t3\n2\t4\t5\t6\n");
    const struct {
        const char *args, *phrase;
    } cases[] = {
        {"pairwise ok.tsv -o o.npy --measure dtw --nu 0.1", "--nu is a TWED parameter; --measure dtw takes none"},
        {"pairwise ok.tsv -o o.npy --lambda 1 --measure dtw", "--lambda is a TWED parameter"},
        {"pairwise ok.tsv -o o.npy --measure dtw --degree 2", "--degree is a TWED parameter"},
        {"pairwise ok.tsv -o o.npy --degree 2 --nu 0 --measure dtw", "--degree is a TWED parameter"},
        {"pairwise ok.tsv -o o.npy --nu 0.1 --measure twed --measure dtw", "--measure given twice ('twed', then 'dtw')"},
        {"distance ok.tsv ok.tsv --row 0 --row-b 1 --measure dtw --nu 1", "--nu is a TWED parameter"},
        {"knn ok.tsv ok.tsv -o o.csv --measure dtw --lambda 2", "--lambda is a TWED parameter"},
        {"classify ok.tsv ok.tsv -o o.csv --measure dtw --degree 1", "--degree is a TWED parameter"},
        {"demo --measure dtw --nu 0.001", "--nu is a TWED parameter"},
        {"pairwise ok.tsv -o o.npy --measure euclid", "--measure: unknown measure 'euclid' (expected twed, dtw or softdtw)"},
        {"pairwise ok.tsv -o o.npy --measure dtw --gamma 0.5", "--gamma is a soft-DTW parameter; --measure dtw does not take it"},
        {"pairwise ok.tsv -o o.npy --divergence", "--divergence is a soft-DTW parameter; --measure twed does not take it"},
        {"knn ok.tsv ok.tsv -o o.csv --measure softdtw --nu 1", "--nu is a TWED parameter; --measure softdtw takes --gamma and --divergence"},
        {"pairwise ok.tsv -o o.npy --measure softdtw --gamma 0", "--gamma must be greater than 0 (got 0)"},
        {"pairwise ok.tsv -o o.npy --measure softdtw --gamma -1", "--gamma must be greater than 0 (got -1)"},
        {"pairwise ok.tsv -o o.npy --measure softdtw --gamma nan", "--gamma: 'nan' is not a finite number"},
        {"demo --measure softdtw --gamma", "option '--gamma' needs a value"},
        {"pairwise ok.tsv -o o.npy --measure Euclid", "unknown measure 'Euclid'"}, /* any case, but a measure */
        {"pairwise ok.tsv -o o.npy --measure ''", "unknown measure ''"},
        {"demo --measure", "option '--measure' needs a value"},
        {"pairwise ok.tsv -o o.npy --window -1", "--window must be at least 0"},
        {"pairwise ok.tsv -o o.npy --window 1.5", "--window: '1.5' is not a whole number"},
        {"pairwise ok.tsv -o o.npy --window 3x", "--window: '3x' is not a whole number"},
        {"pairwise ok.tsv -o o.npy --window ' 3'", "is not a whole number"},
        {"pairwise ok.tsv -o o.npy --window +3", "is not a whole number"},
        {"pairwise ok.tsv -o o.npy --window ''", "is not a whole number"},
        {"pairwise ok.tsv -o o.npy --window 0x10", "is not a whole number"},
        {"pairwise ok.tsv -o o.npy --window 4294967296", "--window must be at most 4294967295"},
        {"pairwise ok.tsv -o o.npy --window 99999999999999999999999",
         "--window: '99999999999999999999999' is too large"},
        {"knn ok.tsv ok.tsv -o o.csv --window=-5", "--window must be at least 0"},
        {"classify ok.tsv ok.tsv --window abc", "--window: 'abc' is not a whole number"},
        {"distance ok.tsv ok.tsv --row 0 --row-b 1 --window 2e3", "not a whole number"},
        {"demo --window 1e9999", "not a whole number"},
        {"pairwise ok.tsv -o o.npy --window-fraction 1.5", "--window-fraction must be between 0 and 1 (got 1.5)"},
        {"pairwise ok.tsv -o o.npy --window-fraction -0.1", "--window-fraction must be between 0 and 1"},
        {"pairwise ok.tsv -o o.npy --window-fraction nan", "--window-fraction: 'nan' is not a finite number"},
        {"pairwise ok.tsv -o o.npy --window-fraction 0.5x", "is not a finite number"},
        {"pairwise ok.tsv -o o.npy --window-fraction ''", "is not a finite number"},
        {"pairwise ok.tsv -o o.npy --window 3 --window-fraction 0.5",
         "--window and --window-fraction exclude each other"},
        {"demo --window-fraction 0.1 --measure dtw --window 2", "exclude each other"},
        {"generate -o o.tsv --measure dtw", "option '--measure' does not apply to 'generate'"},
        {"generate -o o.tsv --window 3", "option '--window' does not apply to 'generate'"},
        {"calibrate -o o.txt --window-fraction 0.5", "does not apply to 'calibrate'"},
    };
    const char *inputs[] = {"ok.tsv", NULL};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cli_result r = run_cli(&b, "%s", cases[i].args);
        int ok = r.code == 2 && strstr(r.err, cases[i].phrase) != NULL && strstr(r.err, "--help") != NULL &&
                 r.out[0] == '\0';
        if (!ok)
            fprintf(stderr, "  wavewarp %s -> exit %d (expected 2, '%s'), stderr:\n%s", cases[i].args, r.code,
                    cases[i].phrase, r.err);
        CHECK(ok);
        CHECK(work_holds_only(&b, inputs)); /* no output, no temporary file */
        cli_result_free(&r);
    }

    /* help: the options and the measures are documented */
    cli_result r = run_cli(&b, "--help");
    CHECK(r.code == 0 && strstr(r.out, "dtw") && strstr(r.out, "--window R") && strstr(r.out, "--window-fraction F"));
    cli_result_free(&r);
    const char *commands[] = {"distance", "pairwise", "knn", "classify", "demo"};
    for (size_t i = 0; i < 5; i++) {
        r = run_cli(&b, "%s --help", commands[i]);
        CHECK(r.code == 0 && strstr(r.out, "--measure M") && strstr(r.out, "--window R") &&
              strstr(r.out, "--window-fraction F") && strstr(r.out, "twed only"));
        cli_result_free(&r);
    }
    r = run_cli(&b, "generate --help");
    CHECK(r.code == 0 && strstr(r.out, "--measure") == NULL);
    cli_result_free(&r);
    r = run_cli(&b, "pairwise --measure dtw --nu 1 --help"); /* --help wins over a bad combination */
    CHECK(r.code == 0 && strstr(r.out, "Usage: wavewarp pairwise"));
    cli_result_free(&r);

    /* --backend cuda with DTW: without a GPU the library's explanation and exit 1, as for TWED; with
     * one, either the GPU's result (once it has DTW engines) or a clear "not available" and exit 1 */
    const char *gpu_runs[] = {"pairwise ok.tsv -o o.npy --measure dtw --backend cuda",
                              "knn ok.tsv ok.tsv -o o.csv --measure dtw --window 1 --backend cuda",
                              "classify ok.tsv ok.tsv --measure dtw --backend cuda",
                              "distance ok.tsv ok.tsv --row 0 --row-b 1 --measure dtw --backend cuda",
                              "demo --measure dtw --backend cuda --train-per-class 2 --test-per-class 2"};
    for (size_t i = 0; i < sizeof gpu_runs / sizeof gpu_runs[0]; i++) {
        r = run_cli(&b, "%s", gpu_runs[i]);
        int ok;
        if (!ww_cuda_available())
            ok = r.code == 1 && strstr(r.err, "cannot use the cuda backend") != NULL &&
                 (strstr(r.err, ww_strerror(WW_ERR_NO_CUDA)) != NULL ||
                  strstr(r.err, ww_strerror(WW_ERR_NO_DEVICE)) != NULL);
        else
            ok = r.code == 0 || (r.code == 1 && strstr(r.err, ww_strerror(WW_ERR_UNSUPPORTED)) != NULL &&
                                 strstr(r.err, "dtw") != NULL && strstr(r.err, "--backend cpu") != NULL);
        if (!ok)
            fprintf(stderr, "  wavewarp %s -> exit %d, stderr:\n%s", gpu_runs[i], r.code, r.err);
        CHECK(ok);
        if (r.code != 0)
            CHECK(work_holds_only(&b, inputs));
        cli_result_free(&r);
        char out[512];
        path_in(&b, "o.npy", out, sizeof out);
        unlink(out);
        path_in(&b, "o.csv", out, sizeof out);
        unlink(out);
    }
    sandbox_close(&b);
}

/* ---------------------------------------------------------------- label notes, output paths, option values */

/* Auto-detection of a text file's label column says on stderr what it decided, either way, and how
 * to decide otherwise: an integer first column was once dropped as labels by pairwise, knn and
 * distance without a word, and a one-column file of integers was said to hold non-integers. */
void test_cli_label_column_notes(void)
{
    sandbox b;
    if (sandbox_open(&b) != 0)
        SKIP("cannot create a temporary directory");
    write_text(&b, "ints.tsv", "1 2 3 4\n5 6 7 8\n");
    write_text(&b, "reals.csv", "0.5,1,2\n1.5,3,4\n");
    write_text(&b, "one.tsv", "1\n");
    write_text(&b, "a.txt", "1 2 3\n");
    ww_ctx *ctx = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_AUTO, 0);
    ww_measure dtw = ww_measure_dtw();
    const double first[] = {1, 2, 3, 4}, second[] = {5, 6, 7, 8};
    ww_series whole_a = ww_series_f64(first, NULL, 4, 1), whole_b = ww_series_f64(second, NULL, 4, 1);
    ww_series tail_a = ww_series_f64(first + 1, NULL, 3, 1), tail_b = ww_series_f64(second + 1, NULL, 3, 1);
    double as_labels = -1, as_data = -1;
    CHECK_STATUS(ww_distance(ctx, &dtw, &tail_a, &tail_b, &as_labels), WW_OK);
    CHECK_STATUS(ww_distance(ctx, &dtw, &whole_a, &whole_b, &as_data), WW_OK);
    CHECK(as_labels == 48 && as_data != as_labels);
    const char *labels_note = "note: ints.tsv: the first column holds only integers, so it is read as class labels";

    /* detected labels: the note names --no-labels, which keeps the column as data */
    cli_result r = run_cli(&b, "pairwise ints.tsv -o d.csv --measure dtw");
    CHECK(r.code == 0 && strstr(r.err, labels_note) != NULL && strstr(r.err, "pass --no-labels") != NULL);
    cli_result_free(&r);
    double *m = read_matrix(&b, "d.csv", 2, 2);
    CHECK(m != NULL && m[1] == as_labels);
    free(m);
    r = run_cli(&b, "pairwise ints.tsv -o d.csv --measure dtw --no-labels");
    CHECK(r.code == 0 && strstr(r.err, "note:") == NULL);
    cli_result_free(&r);
    m = read_matrix(&b, "d.csv", 2, 2);
    CHECK(m != NULL && m[1] == as_data);
    free(m);
    r = run_cli(&b, "distance ints.tsv ints.tsv --row 0 --row-b 1 --measure dtw");
    CHECK(r.code == 0 && strtod(r.out, NULL) == as_labels && strstr(r.err, labels_note) != NULL);
    cli_result_free(&r);
    r = run_cli(&b, "distance ints.tsv ints.tsv --row 0 --row-b 1 --measure dtw --no-labels");
    CHECK(r.code == 0 && strtod(r.out, NULL) == as_data && strstr(r.err, "note:") == NULL);
    cli_result_free(&r);
    r = run_cli(&b, "knn ints.tsv ints.tsv -o nn.csv");
    CHECK(r.code == 0 && strstr(r.err, labels_note) != NULL);
    cli_result_free(&r);

    /* no note: -q, an explicit choice, classify (it needs the labels), a file of one series */
    const char *quiet_runs[] = {"pairwise ints.tsv -o d.csv -q", "pairwise ints.tsv -o d.csv --labels",
                                "pairwise reals.csv -o d.csv --quiet", "classify ints.tsv ints.tsv",
                                "distance a.txt a.txt"};
    for (size_t i = 0; i < sizeof quiet_runs / sizeof quiet_runs[0]; i++) {
        r = run_cli(&b, "%s", quiet_runs[i]);
        if (r.code != 0 || strstr(r.err, "note:") != NULL)
            fprintf(stderr, "  wavewarp %s -> exit %d, stderr:\n%s", quiet_runs[i], r.code, r.err);
        CHECK(r.code == 0 && strstr(r.err, "note:") == NULL);
        cli_result_free(&r);
    }

    /* detected data: the same sentence, naming --labels */
    r = run_cli(&b, "pairwise reals.csv -o d.csv");
    CHECK(r.code == 0 &&
          strstr(r.err, "note: reals.csv: the first column holds non-integers, so it is read as data") != NULL &&
          strstr(r.err, "pass --labels") != NULL);
    cli_result_free(&r);
    /* one value a line: nothing to guess, and no claim of non-integers */
    r = run_cli(&b, "pairwise one.tsv -o d.csv");
    CHECK(r.code == 0 && strstr(r.err, "non-integers") == NULL &&
          strstr(r.err, "note: one.tsv: each line holds a single value") != NULL);
    cli_result_free(&r);
    ww_ctx_destroy(ctx);
    sandbox_close(&b);
}

/* A text file that starts with a UTF-8 byte order mark (saved by a spreadsheet on Windows) reads as
 * the same file without it: the mark made the first field a "non-numeric label". */
void test_cli_byte_order_mark(void)
{
    sandbox b;
    if (sandbox_open(&b) != 0)
        SKIP("cannot create a temporary directory");
    write_text(&b, "plain.csv", "1,0.5,2,3\n2,1.5,4,5\n");
    write_text(&b, "marked.csv", "\xEF\xBB\xBF" "1,0.5,2,3\n2,1.5,4,5\n");
    write_text(&b, "marked.tsv", "\xEF\xBB\xBF" "0.5 2 3\n1.5 4 5\n");
    run_ok(&b, "pairwise plain.csv -o plain.npy --measure dtw --quiet");
    run_ok(&b, "pairwise marked.csv -o marked.npy --measure dtw --quiet");
    run_ok(&b, "pairwise marked.tsv -o marked_tsv.npy --measure dtw --quiet");
    double *plain = read_matrix(&b, "plain.npy", 2, 2), *marked = read_matrix(&b, "marked.npy", 2, 2);
    double *marked_tsv = read_matrix(&b, "marked_tsv.npy", 2, 2);
    CHECK(plain != NULL && marked != NULL && marked_tsv != NULL);
    if (plain && marked && marked_tsv)
        CHECK(memcmp(plain, marked, 4 * sizeof(double)) == 0 && memcmp(plain, marked_tsv, 4 * sizeof(double)) == 0);
    free(plain), free(marked), free(marked_tsv);
    sandbox_close(&b);
}

/* Two outputs on one file (knn -o X --distances X: the distances silently replaced the indices),
 * or an output on an input (pairwise X -o X replaced the data): usage errors before anything is
 * read or written, whatever the spelling of the path; the inputs stay as they were. */
void test_cli_output_paths(void)
{
    sandbox b;
    if (sandbox_open(&b) != 0)
        SKIP("cannot create a temporary directory");
    run_ok(&b, "generate -o train.tsv --per-class 2 --length 20 --seed 1 --quiet");
    run_ok(&b, "generate -o test.tsv --per-class 1 --length 20 --seed 2 --quiet");
    run_ok(&b, "generate -o old.npy --per-class 1 --length 5 --quiet");
    char train[512], test[512], old[512], link_path[512], hard_path[512];
    path_in(&b, "train.tsv", train, sizeof train);
    path_in(&b, "test.tsv", test, sizeof test);
    path_in(&b, "old.npy", old, sizeof old);
    path_in(&b, "link.tsv", link_path, sizeof link_path);
    path_in(&b, "hard.npy", hard_path, sizeof hard_path);
    CHECK(symlink("train.tsv", link_path) == 0);
    CHECK(link(old, hard_path) == 0);
    size_t old_size = 0, old_size_after = 0;
    char *train_before = slurp(train, NULL), *test_before = slurp(test, NULL), *old_before = slurp(old, &old_size);
    const struct {
        const char *args, *phrase;
    } cases[] = {
        {"knn test.tsv train.tsv -o nn.npy --distances nn.npy", "-o and --distances name the same file (nn.npy)"},
        {"knn test.tsv train.tsv -o nn.npy --distances ./nn.npy", "-o and --distances name the same file"},
        {"knn test.tsv train.tsv -o ./nn.npy --distances ../work/nn.npy", "-o and --distances name the same file"},
        {"knn test.tsv train.tsv -o old.npy --distances old.npy", "-o and --distances name the same file"},
        {"knn test.tsv train.tsv -o old.npy --distances hard.npy", "-o and --distances name the same file"},
        {"pairwise train.tsv -o train.tsv", "-o train.tsv names an input file"},
        {"pairwise test.tsv train.tsv -o ./train.tsv", "-o ./train.tsv names an input file"},
        {"pairwise train.tsv -o link.tsv", "-o link.tsv names an input file"},
        {"pairwise link.tsv -o train.tsv", "-o train.tsv names an input file"},
        {"knn test.tsv train.tsv -o train.tsv", "-o train.tsv names an input file"},
        {"knn test.tsv old.npy -o nn.npy --distances old.npy", "--distances old.npy names an input file"},
        {"classify train.tsv test.tsv -o test.tsv", "-o test.tsv names an input file"},
        {"generate -o g.tsv --output=g.tsv", "given twice"}, /* an option given twice: test_cli_option_values */
    };
    const char *inputs[] = {"train.tsv", "test.tsv", "old.npy", "link.tsv", "hard.npy", NULL};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cli_result r = run_cli(&b, "%s", cases[i].args);
        int ok = r.code == 2 && strstr(r.err, cases[i].phrase) != NULL && r.out[0] == '\0';
        if (!ok)
            fprintf(stderr, "  wavewarp %s -> exit %d (expected 2, '%s'), stderr:\n%s", cases[i].args, r.code,
                    cases[i].phrase, r.err);
        CHECK(ok);
        CHECK(work_holds_only(&b, inputs)); /* no output, no temporary file */
        cli_result_free(&r);
    }
    char *train_after = slurp(train, NULL), *test_after = slurp(test, NULL), *old_after = slurp(old, &old_size_after);
    CHECK(train_after && train_before && strcmp(train_after, train_before) == 0);
    CHECK(test_after && test_before && strcmp(test_after, test_before) == 0);
    CHECK(old_after && old_before && old_size_after == old_size && memcmp(old_after, old_before, old_size) == 0);
    free(train_before), free(test_before), free(old_before), free(train_after), free(test_after), free(old_after);

    /* different files are fine: the same name elsewhere, another extension, two inputs alike */
    run_ok(&b, "knn test.tsv train.tsv -o nn.npy --distances nd.npy -q");
    run_ok(&b, "pairwise train.tsv -o train.npy -q");
    run_ok(&b, "knn train.tsv train.tsv -o nn.csv -q");
    sandbox_close(&b);
}

/* Measure and backend names in any case, as Python's measure names; an option that takes a value
 * given twice is a usage error (the last one used to win silently). Flags may repeat. */
void test_cli_option_values(void)
{
    sandbox b;
    if (sandbox_open(&b) != 0)
        SKIP("cannot create a temporary directory");
    write_text(&b, "ok.tsv", "1\t1\t2\t3\n2\t4\t5\t6\n");
    write_text(&b, "a.txt", "1 2 3 4.5\n");
    write_text(&b, "b.txt", "1 3 2.5\n");
    const struct {
        const char *lower, *other;
    } same[] = {
        {"--measure dtw", "--measure DTW"},
        {"--measure dtw", "--measure Dtw"},
        {"--measure softdtw", "--measure SoftDTW"},
        {"--measure twed", "--measure TWED --backend CPU"},
        {"--measure twed", "--backend Auto"},
    };
    for (size_t i = 0; i < sizeof same / sizeof same[0]; i++) {
        cli_result want = run_cli(&b, "distance a.txt b.txt %s", same[i].lower);
        cli_result got = run_cli(&b, "distance a.txt b.txt %s", same[i].other);
        int ok = want.code == 0 && got.code == 0 && strcmp(want.out, got.out) == 0;
        if (!ok)
            fprintf(stderr, "  wavewarp distance a.txt b.txt %s -> exit %d, %s%s", same[i].other, got.code, got.out,
                    got.err);
        CHECK(ok);
        cli_result_free(&want);
        cli_result_free(&got);
    }

    const struct {
        const char *args, *phrase;
    } cases[] = {
        {"pairwise ok.tsv -o o.npy --window 3 --window 4", "--window given twice ('3', then '4'); give it once"},
        {"pairwise ok.tsv -o o.npy --window-fraction 0.1 --window-fraction=0.2", "--window-fraction given twice"},
        {"pairwise ok.tsv -o o.npy --measure dtw --measure dtw", "--measure given twice ('dtw', then 'dtw')"},
        {"distance a.txt b.txt --measure dtw --window 2 --measure twed", "--measure given twice"},
        {"pairwise ok.tsv -o o.npy -o p.npy", "-o given twice ('o.npy', then 'p.npy')"},
        {"pairwise ok.tsv --output=o.npy --output p.npy", "--output given twice"},
        {"knn ok.tsv ok.tsv -o o.csv -k 1 -k2", "-k given twice"},
        {"pairwise ok.tsv -o o.npy --nu 1 --nu 2", "--nu given twice"},
        {"pairwise ok.tsv -o o.npy --backend cpu --backend cuda", "--backend given twice"},
        {"knn ok.tsv ok.tsv -o o.npy --distances d.npy --distances e.npy", "--distances given twice"},
        {"demo --seed 1 --seed 2", "--seed given twice"},
        {"pairwise ok.tsv -o o.npy --measure GPU", "unknown measure 'GPU'"},
        {"pairwise ok.tsv -o o.npy --backend GPU", "unknown backend 'GPU'"},
    };
    const char *inputs[] = {"ok.tsv", "a.txt", "b.txt", NULL};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cli_result r = run_cli(&b, "%s", cases[i].args);
        int ok = r.code == 2 && strstr(r.err, cases[i].phrase) != NULL && strstr(r.err, "--help") != NULL &&
                 r.out[0] == '\0';
        if (!ok)
            fprintf(stderr, "  wavewarp %s -> exit %d (expected 2, '%s'), stderr:\n%s", cases[i].args, r.code,
                    cases[i].phrase, r.err);
        CHECK(ok);
        CHECK(work_holds_only(&b, inputs));
        cli_result_free(&r);
    }
    run_ok(&b, "pairwise ok.tsv -o o.npy -q --quiet --no-labels --no-labels"); /* flags: no value to disagree */
    /* a number that underflows is the nearest double, as Python reads it (it was "not a finite
     * number"); one that overflows is not finite */
    run_ok(&b, "pairwise ok.tsv -o tiny.npy --measure dtw --window-fraction 1e-400 --quiet");
    run_ok(&b, "pairwise ok.tsv -o zero.npy --measure dtw --window 0 --quiet");
    CHECK(same_bytes(&b, "tiny.npy", "zero.npy"));
    run_ok(&b, "pairwise ok.tsv -o tiny_nu.npy --nu 1e-400 --quiet");
    cli_result r = run_cli(&b, "pairwise ok.tsv -o o2.npy --measure softdtw --gamma 1e-400");
    CHECK(r.code == 2 && strstr(r.err, "--gamma must be greater than 0") != NULL);
    cli_result_free(&r);
    r = run_cli(&b, "pairwise ok.tsv -o o2.npy --nu 1e400");
    CHECK(r.code == 2 && strstr(r.err, "--nu: '1e400' is not a finite number") != NULL);
    cli_result_free(&r);
    sandbox_close(&b);
}

/* ---------------------------------------------------------------- .ts files (UEA/UCR archive, aeon) */

/* Every header variant: the archive's spelling, aeon's writer's (lower case, "@dimension", "@missing
 * False", a ':' ending unlabelled cases), comments, CRLF, blanks around values; each read equal to
 * the same data in a UCR .tsv or a .npy. */
void test_cli_ts_reader(void)
{
    sandbox b;
    if (sandbox_open(&b) != 0)
        SKIP("cannot create a temporary directory");
    /* univariate, numeric classes: labels are the numbers themselves */
    write_text(&b, "uni.ts",
               "#The archive's header\n"
               "@problemName Uni\n@timeStamps false\n@missing false\n@univariate true\n@equalLength true\n"
               "@seriesLength 4\n@classLabel true 1 2 -3\n@data\n"
               "1,2,3,4:1\n"
               "0.5, 1.5 ,2.5,3.5:2\n"
               "\n# a comment between cases\n"
               "4,3,2,1:-3\n");
    write_text(&b, "uni.tsv", "1\t1\t2\t3\t4\n2\t0.5\t1.5\t2.5\t3.5\n-3\t4\t3\t2\t1\n");
    cli_dataset t, u;
    CHECK(read_dataset(&b, "uni.ts", CLI_LABELS_AUTO, &t) == 0);
    CHECK(read_dataset(&b, "uni.tsv", CLI_LABELS_AUTO, &u) == 0);
    CHECK(t.count == 3 && t.dim == 1 && !t.ragged && t.labels != NULL && t.label_guess == 1);
    if (t.count == 3 && u.count == 3 && t.labels && u.labels) {
        for (size_t i = 0; i < 3; i++)
            CHECK(t.labels[i] == u.labels[i]);
        CHECK(memcmp(t.values, u.values, 12 * sizeof(double)) == 0);
    }
    cli_dataset_free(&t);
    cli_dataset_free(&u);

    /* multivariate, named classes (their positions in @classLabel), ragged, CRLF, case-insensitive
     * tags and booleans, trailing NaN padding */
    write_text(&b, "mv.ts",
               "@PROBLEMNAME mv\r\n@timestamps FALSE\r\n@missing False\r\n@univariate false\r\n@dimensions 2\r\n"
               "@equalLength false\r\n@classLabel true Standing Running Walking\r\n@data\r\n"
               "1,2,3:10,20,30:Running\r\n"
               "4,5:40,50:Walking\r\n"
               "6,7,NaN,NaN:60,70,NaN,NaN:standing\r\n");
    CHECK(read_dataset(&b, "mv.ts", CLI_LABELS_AUTO, &t) == 0);
    const double mv_values[] = {1, 10, 2, 20, 3, 30, 4, 40, 5, 50, 6, 60, 7, 70};
    const size_t mv_offsets[] = {0, 3, 5, 7};
    CHECK(t.count == 3 && t.dim == 2 && t.ragged && t.labels != NULL);
    if (t.count == 3 && t.dim == 2 && t.labels) {
        CHECK(t.labels[0] == 1 && t.labels[1] == 2 && t.labels[2] == 0);
        for (size_t i = 0; i <= 3; i++)
            CHECK(t.offsets[i] == mv_offsets[i]);
        CHECK(memcmp(t.values, mv_values, sizeof mv_values) == 0);
    }
    cli_dataset_free(&t);
    CHECK(read_dataset(&b, "mv.ts", CLI_LABELS_NONE, &t) == 0); /* --no-labels: dropped */
    CHECK(t.count == 3 && t.labels == NULL);
    cli_dataset_free(&t);

    /* aeon's writer without labels: "@targetlabel false", "@dimension", a ':' after each case */
    write_text(&b, "aeon.ts",
               "# written by aeon\n@problemName aeon\n@timestamps false\n@missing False\n@univariate false\n"
               "@dimension 2\n@equalLength true\n@seriesLength 3\n@targetlabel false\n@data\n"
               "1.0,2.0,3.0:10.0,20.0,30.0:\n4.0,5.0,6.0:40.0,50.0,60.0:\n");
    double grid[2 * 3 * 2] = {1, 10, 2, 20, 3, 30, 4, 40, 5, 50, 6, 60};
    write_npy(&b, "aeon.npy", 1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3, 2), }", grid,
              sizeof grid);
    CHECK(read_dataset(&b, "aeon.ts", CLI_LABELS_AUTO, &t) == 0);
    CHECK(t.count == 2 && t.dim == 2 && !t.ragged && t.labels == NULL && t.label_guess == 0);
    if (t.count == 2 && t.dim == 2)
        CHECK(memcmp(t.values, grid, sizeof grid) == 0);
    cli_dataset_free(&t);
    run_ok(&b, "pairwise aeon.ts -o a.npy --quiet");
    run_ok(&b, "pairwise aeon.npy -o n.npy --quiet");
    CHECK(same_bytes(&b, "a.npy", "n.npy"));
    cli_result r = run_cli(&b, "pairwise aeon.ts -o a.csv");
    CHECK(r.code == 0 && strstr(r.err, "note:") == NULL); /* no word about a label column */
    cli_result_free(&r);

    /* a regression target, and no label tags at all (a label when a field is left over) */
    write_text(&b, "reg.ts", "@problemName r\n@univariate true\n@targetLabel true\n@data\n1,2,3:0.25\n4,5:-1e3\n");
    CHECK(read_dataset(&b, "reg.ts", CLI_LABELS_AUTO, &t) == 0);
    CHECK(t.count == 2 && t.ragged && t.labels && t.labels[0] == 0.25 && t.labels[1] == -1000);
    cli_dataset_free(&t);
    write_text(&b, "bare.ts", "@data\n1,2,3:7\n4,5,6:8\n");
    CHECK(read_dataset(&b, "bare.ts", CLI_LABELS_AUTO, &t) == 0);
    CHECK(t.count == 2 && t.dim == 1 && t.labels && t.labels[0] == 7 && t.labels[1] == 8);
    cli_dataset_free(&t);
    write_text(&b, "bare2.ts", "@data\n1,2,3\n4,5,6\n");
    CHECK(read_dataset(&b, "bare2.ts", CLI_LABELS_AUTO, &t) == 0);
    CHECK(t.count == 2 && t.dim == 1 && t.labels == NULL && cli_series_length(&t, 0) == 3);
    cli_dataset_free(&t);

    /* the CLI: classify with named classes (1-NN finds each case itself), knn, distance --row */
    r = run_cli(&b, "classify mv.ts mv.ts -o pred.csv");
    CHECK(r.code == 0 && find_number(r.out, "accuracy:") == 1.0);
    cli_result_free(&r);
    char pred_path[512];
    path_in(&b, "pred.csv", pred_path, sizeof pred_path);
    char *pred = slurp(pred_path, NULL);
    CHECK(pred && strstr(pred, "0,1,1,0,0\n1,2,2,1,0\n2,0,0,2,0\n") != NULL);
    free(pred);
    r = run_cli(&b, "distance mv.ts mv.ts --row 0 --row-b 1 --backend cpu");
    ww_ctx *ctx = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_AUTO, 1);
    ww_series s0 = ww_series_f64(mv_values, NULL, 3, 2), s1 = ww_series_f64(mv_values + 6, NULL, 2, 2);
    double want = 0;
    CHECK_STATUS(ww_twed(ctx, &s0, &s1, NULL, &want), WW_OK);
    CHECK(r.code == 0 && strtod(r.out, NULL) == want);
    cli_result_free(&r);
    ww_ctx_destroy(ctx);
    /* a test file whose @classLabel lists other classes, or in another order (aeon writes each
     * split's own classes): its labels are numbered as the training file's, by name */
    write_text(&b, "test.ts",
               "@univariate false\n@dimensions 2\n@classLabel true Walking Running Jumping\n@data\n"
               "4,5:40,50:Walking\n1,2,3:10,20,30:Running\n1,2:10,20:Jumping\n");
    CHECK(read_dataset(&b, "test.ts", CLI_LABELS_AUTO, &t) == 0);
    CHECK(t.class_count == 3 && t.labels && t.labels[0] == 0 && t.labels[1] == 1 && t.labels[2] == 2);
    cli_dataset m;
    CHECK(read_dataset(&b, "mv.ts", CLI_LABELS_AUTO, &m) == 0);
    char err[CLI_ERR_SIZE];
    CHECK(cli_align_class_labels(&m, &t, err) == 0);
    CHECK(t.labels && t.labels[0] == 2 && t.labels[1] == 1 && t.labels[2] == 3); /* Jumping: new */
    CHECK(t.class_names == NULL && m.class_count == 3);
    cli_dataset_free(&t);
    cli_dataset_free(&m);
    r = run_cli(&b, "classify mv.ts test.ts -o pred2.csv");
    CHECK(r.code == 0 && fabs(find_number(r.out, "accuracy:") - 2.0 / 3.0) < 1e-4);
    cli_result_free(&r);
    path_in(&b, "pred2.csv", pred_path, sizeof pred_path);
    pred = slurp(pred_path, NULL);
    CHECK(pred && strstr(pred, "0,2,2,1,0\n1,1,1,0,0\n2,3,") != NULL);
    free(pred);
    r = run_cli(&b, "classify aeon.ts uni.ts");
    CHECK(r.code == 1 && strstr(r.err, "aeon.ts: the file has no class labels") != NULL);
    cli_result_free(&r);
    r = run_cli(&b, "pairwise aeon.ts -o o.npy --labels");
    CHECK(r.code == 1 && strstr(r.err, "has no class labels") != NULL);
    cli_result_free(&r);
    sandbox_close(&b);
}

/* Malformed .ts files: each an error that names the file and, for data, the line; none a crash. */
void test_cli_ts_errors(void)
{
    sandbox b;
    if (sandbox_open(&b) != 0)
        SKIP("cannot create a temporary directory");
    static const struct {
        const char *content, *phrase;
    } cases[] = {
        {"@data\n1,2,?,4\n", "x.ts:2: dimension 1, value 3: missing value '?'"},
        {"@missing true\n@dimensions 2\n@data\n1,2:3,4\n5,?:6,7\n", "x.ts:5: dimension 1, value 2: missing value '?'"},
        {"@data\n1,,3\n", "x.ts:2: dimension 1, value 2: empty value"},
        {"@data\n1,2x,3\n", "x.ts:2: dimension 1, value 2: malformed number '2x'"},
        {"@data\n1,NaN,3\n", "x.ts:2: dimension 1, value 2: missing value (NaN) inside a series"},
        {"@data\n1,inf,3\n", "x.ts:2: dimension 1, value 2: value is not finite"},
        {"@data\nNaN,NaN\n", "x.ts:2: the case has no values"},
        {"@data\n:\n", "x.ts:2: dimension 1, value 1: empty value"},
        {"", "x.ts: no @data line"},
        {"@problemName x\n", "x.ts: no @data line"},
        {"@data\n\n# nothing\n", "x.ts: file is empty (no cases after @data)"},
        {"1,2,3\n@data\n", "x.ts:1: data before the @data line"},
        {"@data\n1,2\n@classLabel false\n", "x.ts:3: a header line after @data"},
        {"@data extra\n1\n", "x.ts:1: @data takes no value"},
        {"@frequency daily\n@data\n1\n", "x.ts:1: unknown .ts header line '@frequency'"},
        {"@timeStamps true\n@data\n(0,1),(1,2)\n", "@timeStamps true is not supported"},
        {"@timeStamps maybe\n@data\n1\n", "x.ts:1: @timeStamps needs true or false, not 'maybe'"},
        {"@univariate\n@data\n1\n", "x.ts:1: @univariate needs true or false"},
        {"@missing false true\n@data\n1\n", "x.ts:1: @missing takes one value"},
        {"@dimensions 0\n@data\n1\n", "x.ts:1: @dimensions needs one positive whole number"},
        {"@dimensions -2\n@data\n1\n", "needs one positive whole number"},
        {"@seriesLength 99999999999999999999\n@data\n1\n", "x.ts:1: @seriesLength needs one positive whole number"},
        {"@dimensions 2 3\n@data\n1\n", "needs one positive whole number"},
        {"@univariate true\n@dimensions 3\n@data\n1:2:3\n", "@univariate true but @dimensions 3"},
        {"@classLabel true a b\n@targetLabel true\n@data\n1:a\n", "both @classLabel true and @targetLabel true"},
        {"@classLabel true\n@data\n1:a\n", "x.ts:1: @classLabel true needs the class names"},
        {"@classLabel maybe a b\n@data\n1:a\n", "@classLabel needs true or false"},
        {"@classLabel true a b\n@data\n1,2:c\n", "x.ts:3: class label 'c' is not one of those of @classLabel"},
        {"@classLabel true a b\n@data\n1,2\n", "x.ts:3: the case has no label"},
        {"@classLabel true a b\n@data\n1,2:\n", "x.ts:3: the case has no label"},
        {"@targetLabel true\n@data\n1,2:high\n", "x.ts:3: the target 'high' is not a finite number"},
        {"@classLabel false\n@data\n1,2:3,4\n", "x.ts:3: the case has 2 dimensions but"},
        {"@dimensions 2\n@classLabel false\n@data\n1,2:3,4\n1,2\n", "x.ts:5: the case has 1 dimension but @dimensions says 2"},
        {"@univariate false\n@classLabel false\n@data\n1,2:3,4\n1,2:3,4:5,6\n",
         "x.ts:5: the case has 3 dimensions but the first case has 2"},
        {"@dimensions 2\n@targetLabel false\n@data\n1,2,3:3,4\n", "x.ts:4: dimension 2 has 2 values but dimension 1 has 3"},
        {"@equalLength true\n@seriesLength 3\n@data\n1,2,3\n1,2\n", "x.ts:5: the case has 2 values per dimension but @seriesLength is 3"},
        {"@equalLength true\n@data\n1,2,3\n1,2\n", "x.ts:4: the case has 2 values per dimension but line 3 has 3"},
    };
    const char *inputs[] = {"x.ts", NULL};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        write_text(&b, "x.ts", cases[i].content);
        cli_result r = run_cli(&b, "pairwise x.ts -o o.npy");
        int ok = r.code == 1 && strstr(r.err, cases[i].phrase) != NULL;
        if (!ok)
            fprintf(stderr, "  .ts case %zu -> exit %d (expected 1, '%s'), stderr:\n%s", i, r.code, cases[i].phrase,
                    r.err);
        CHECK(ok);
        CHECK(work_holds_only(&b, inputs));
        cli_result_free(&r);
    }
    /* @equalLength false lets @seriesLength go (aeon ignores it too), and a file with no final newline */
    write_text(&b, "x.ts", "@equalLength false\n@seriesLength 3\n@data\n1,2,3\n1,2");
    cli_dataset d;
    CHECK(read_dataset(&b, "x.ts", CLI_LABELS_AUTO, &d) == 0);
    CHECK(d.count == 2 && d.ragged && cli_series_length(&d, 1) == 2);
    cli_dataset_free(&d);
    sandbox_close(&b);
}

/* soft-DTW from the command line: `distance` equals the library's value (with and without the
 * divergence, which is 0 between a series and itself), and the summary names the measure. */
void test_cli_softdtw(void)
{
    sandbox b;
    if (sandbox_open(&b) != 0)
        SKIP("cannot create a temporary directory");
    run_ok(&b, "generate -o sc.tsv --per-class 2 --length 25 --quiet");
    cli_dataset x;
    CHECK(read_dataset(&b, "sc.tsv", CLI_LABELS_AUTO, &x) == 0);
    ww_ctx *ctx = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_AUTO, 0);
    ww_series s3 = ww_series_f64(x.values + 3 * 25, NULL, 25, 1), s10 = ww_series_f64(x.values + 10 * 25, NULL, 25, 1);
    for (int divergence = 0; divergence < 2; divergence++) {
        ww_measure m = ww_measure_softdtw(0.25);
        CHECK_STATUS(ww_measure_set_divergence(&m, divergence), WW_OK);
        double want = NAN;
        CHECK_STATUS(ww_distance(ctx, &m, &s3, &s10, &want), WW_OK);
        cli_result r = run_cli(&b, "distance sc.tsv sc.tsv --row 3 --row-b 10 --measure softdtw --gamma 0.25%s",
                               divergence ? " --divergence" : "");
        CHECK(r.code == 0);
        CHECK_CLOSE(strtod(r.out, NULL), want, 1e-15);
        cli_result_free(&r);
        if (divergence) {
            r = run_cli(&b, "distance sc.tsv sc.tsv --row 3 --row-b 3 --measure softdtw --divergence");
            CHECK(r.code == 0 && strtod(r.out, NULL) == 0.0);
            cli_result_free(&r);
        }
    }
    cli_result r = run_cli(&b, "classify sc.tsv sc.tsv --measure softdtw --gamma 0.1 --divergence --backend cpu");
    CHECK(r.code == 0 && strstr(r.out, "softdtw (gamma = 0.1, divergence)") != NULL);
    if (r.code != 0 || strstr(r.out, "softdtw (gamma = 0.1, divergence)") == NULL)
        fprintf(stderr, "  classify: exit %d, stdout:\n%s\nstderr:\n%s", r.code, r.out, r.err);
    cli_result_free(&r);
    cli_dataset_free(&x);
    ww_ctx_destroy(ctx);
    sandbox_close(&b);
}
