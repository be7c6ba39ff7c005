/* CPU benchmark: prints the Markdown tables of bench/results/cpu.md (TWED) and cpu-dtw.md (DTW).
 *
 *   ww_bench [--data PATH/synthetic_control.data] [--quick] [--matrices] [--reps N] [--measure twed|dtw|all]
 *   ww_bench --dtw-pair A.f64 B.f64 [--radius R] [--threads T] [--reps N]
 *   ww_bench --dtw-matrix X.f64 LENGTH [--radius R] [--threads T] [--reps N] [--out M.f64]
 *
 * --matrices runs the distance-matrix sections only (quick comparisons of the matrix engine).
 * --measure picks the tables: twed (the default, the tables of cpu.md), dtw, or all.
 * --dtw-pair and --dtw-matrix time one DTW call on series read from files of raw float64 (native
 * byte order; dim 1; a matrix file holds its series one after the other, each LENGTH samples) and
 * print one JSON line: {"seconds": [...], "calling_thread_cpu_seconds": [...], "value": ...} (wall
 * times, the calling thread's CPU times, and the distance or the sum of the matrix's entries). --out writes the matrix (count x count float64, row-major). bench/bench_dtw_rivals.py
 * uses them to time wavewarp between its rivals.
 *
 * Every time is the best of N calls (default 3) after one warm-up call, measured with
 * clock_gettime(CLOCK_MONOTONIC). Data: uniform random in [0, 1) (fixed seed), stamps 0..n-1,
 * nu = 1, lambda = 1, degree 2 (dim 1: |a - b|), double precision unless said otherwise.
 * GCUPS = cells of the dynamic-programming matrix / s / 1e9 (na * nb cells for one pair).
 * The reference engine (the full (n+1)^2 matrix) stands in for Marteau's O(n^2)-memory code and is
 * measured in the same run; Marteau's own figures come from ../shared/anchors.md. */
#define _POSIX_C_SOURCE 200809L
#include "wavewarp.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Marteau's reference C code, one core of the anchors' host (anchors.md) */
#define MARTEAU_GCUPS_16384 0.026
#define MARTEAU_SC_SECONDS 22.3

static int reps = 3;

/* CPU time of the calling thread: with one thread, the wall time less what other processes took
 * (scripts report both, to show how much the machine's load disturbed a run). */
static double thread_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void die(const char *what, ww_status st)
{
    fprintf(stderr, "ww_bench: %s: %s\n", what, ww_strerror(st));
    exit(1);
}

static uint64_t rng_state = 0x243F6A8885A308D3ULL;
static double uniform(void) /* [0, 1) */
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (double)((rng_state * 2685821657736338717ULL) >> 11) * (1.0 / 9007199254740992.0);
}

static double *random_doubles(size_t n)
{
    double *v = (double *)malloc(n * sizeof(double));
    if (v == NULL)
        die("malloc", WW_ERR_MEMORY);
    for (size_t i = 0; i < n; i++)
        v[i] = uniform();
    return v;
}

static float *to_float(const double *v, size_t n)
{
    float *f = (float *)malloc(n * sizeof(float));
    if (f == NULL)
        die("malloc", WW_ERR_MEMORY);
    for (size_t i = 0; i < n; i++)
        f[i] = (float)v[i];
    return f;
}

static double *ramp(size_t n) /* 0, 1, ..., n-1 */
{
    double *t = (double *)malloc(n * sizeof(double));
    if (t == NULL)
        die("malloc", WW_ERR_MEMORY);
    for (size_t i = 0; i < n; i++)
        t[i] = (double)i;
    return t;
}

static ww_ctx *make_ctx(ww_engine engine, int threads)
{
    ww_ctx_options o = ww_ctx_options_default();
    o.backend = WW_BACKEND_CPU;
    o.engine = engine;
    o.num_threads = threads;
    ww_ctx *ctx = NULL;
    ww_status st = ww_ctx_create(&ctx, &o);
    if (st != WW_OK)
        die("ww_ctx_create", st);
    return ctx;
}

static const char *engine_name(ww_engine e)
{
    switch (e) {
    case WW_ENGINE_CPU_REFERENCE: return "reference (full matrix)";
    case WW_ENGINE_CPU_BAND: return "band (paper's 3 diagonals)";
    case WW_ENGINE_CPU_STRIP: return "strip (default)";
    default: return "?";
    }
}

static const ww_twed_params params = {1.0, 1.0, 2};

/* DTW, with a Sakoe-Chiba radius (WW_NO_WINDOW: none). */
static ww_measure dtw_measure(size_t radius)
{
    ww_measure m = ww_measure_dtw();
    ww_status st = ww_measure_set_window(&m, radius);
    if (st != WW_OK)
        die("ww_measure_set_window", st);
    return m;
}

/* Cells of the dynamic program inside the band of radius r for lengths n and m (WW_NO_WINDOW: n m),
 * counted from the rule in wavewarp.h ("Window"): for step = 0..l, the short index S(step) +- r
 * at long index L(step); L and S never decrease and move by at most 1, so the cells of one long
 * index form one interval, from the first step's S - r to the last step's S + r. */
static double band_cells(size_t n, size_t m, size_t r)
{
    const size_t s = n < m ? n : m, l = n < m ? m : n;
    if (r == WW_NO_WINDOW || r >= s)
        return (double)n * (double)m;
    double cells = 0;
    size_t cur = SIZE_MAX, lo = 0, hi = 0;
    for (size_t step = 0; step <= l; step++) {
        const size_t L = (size_t)((unsigned long long)step * l / (l + 1));
        const size_t S = (size_t)((unsigned long long)step * s / (l + 1));
        const size_t klo = S > r ? S - r : 0, khi = S + r < s - 1 ? S + r : s - 1;
        if (L != cur) {
            if (cur != SIZE_MAX)
                cells += (double)(hi - lo + 1);
            cur = L, lo = klo, hi = khi;
        } else {
            hi = khi;
        }
    }
    return cells + (double)(hi - lo + 1);
}

/* Best time of ww_twed over `reps` calls after a warm-up; *out gets the distance. */
static double time_pair(ww_ctx *ctx, const ww_series *a, const ww_series *b, double *out)
{
    ww_status st = ww_twed(ctx, a, b, &params, out);
    if (st != WW_OK)
        die("ww_twed", st);
    double best = 1e300;
    for (int r = 0; r < reps; r++) {
        double t0 = now_s();
        st = ww_twed(ctx, a, b, &params, out);
        double t = now_s() - t0;
        if (st != WW_OK)
            die("ww_twed", st);
        if (t < best)
            best = t;
    }
    return best;
}

static double time_matrix(ww_ctx *ctx, const ww_dataset *x, const ww_dataset *y, void *out, ww_dtype out_dtype)
{
    ww_pairwise_options o = ww_pairwise_options_default();
    o.out_dtype = out_dtype;
    ww_status st = ww_twed_pairwise(ctx, x, y, &params, out, &o);
    if (st != WW_OK)
        die("ww_twed_pairwise", st);
    double best = 1e300;
    for (int r = 0; r < reps; r++) {
        double t0 = now_s();
        st = ww_twed_pairwise(ctx, x, y, &params, out, &o);
        double t = now_s() - t0;
        if (st != WW_OK)
            die("ww_twed_pairwise", st);
        if (t < best)
            best = t;
    }
    return best;
}

/* The upper triangle, one ww_twed call per pair (how a user of a pair-only library would do it). */
static double time_triangle_by_pairs(ww_ctx *ctx, const ww_dataset *x, double *out, int runs)
{
    double best = 1e300;
    for (int r = 0; r < runs; r++) {
        double t0 = now_s();
        for (size_t i = 0; i < x->count; i++)
            for (size_t j = i + 1; j < x->count; j++) {
                ww_series a, b;
                ww_dataset_series(x, i, &a);
                ww_dataset_series(x, j, &b);
                ww_status st = ww_twed(ctx, &a, &b, &params, &out[i * x->count + j]);
                if (st != WW_OK)
                    die("ww_twed", st);
            }
        double t = now_s() - t0;
        if (t < best)
            best = t;
    }
    return best;
}

static long max_rss_kib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss; /* KiB on Linux */
}

/* The 1-minute load average: other processes on a small machine skew multi-thread figures. */
static double load_average(void)
{
    double l = -1;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf", &l) != 1)
            l = -1;
        fclose(f);
    }
    return l;
}

static void print_machine(void)
{
    char model[256] = "unknown";
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f) {
        char line[512];
        while (fgets(line, sizeof line, f)) {
            if (strncmp(line, "model name", 10) == 0) {
                const char *c = strchr(line, ':');
                if (c) {
                    snprintf(model, sizeof model, "%s", c + 2);
                    model[strcspn(model, "\n")] = '\0';
                }
                break;
            }
        }
        fclose(f);
    }
    ww_ctx *ctx = make_ctx(WW_ENGINE_AUTO, 0);
    printf("## Machine\n\nCPU: %s; library: wavewarp %s, %s. Load average (1 min) at the start: %.2f.\n\n",
           model, ww_version(), ww_ctx_describe(ctx), load_average());
    ww_ctx_destroy(ctx);
}

/* ------------------------------------------------------------------ linear memory */

/* Runs first, while the process's peak RSS is still small: the growth of the peak over a call is
 * what that call allocated (and touched). */
static void bench_memory(int quick)
{
    const size_t n_long = quick ? 100000 : 1000000, n_short = 1000;
    double *v = random_doubles(n_long), *t = ramp(n_long);
    double *w = random_doubles(n_short), *tw = ramp(n_short);
    ww_series lng = ww_series_f64(v, t, n_long, 1), shrt = ww_series_f64(w, tw, n_short, 1);
    printf("## Linear memory\n\n");
    printf("One pair of lengths %zu and %zu (%.3g cells), dim 1, double, 1 thread, each call in a child "
           "process of its own (getrusage ru_maxrss before and after the call; the inputs, %.1f MiB, are "
           "already resident before). The growth is what the call allocated and touched. Expected scratch: "
           "the two prepared series, (n+1) * (dim+2) doubles each, plus the engine's work area: strip "
           "2 * (nB+1) + 6 * 257 doubles (B = the second series), band 3 * (nA+1) doubles (A = the first). "
           "The reference engine would need (nA+1) * (nB+1) doubles = %.1f GiB for this pair (not run).\n\n",
           n_long, n_short, (double)n_long * (double)n_short,
           (double)(2 * (n_long + n_short) * sizeof(double)) / 1048576.0,
           (double)(n_long + 1) * (double)(n_short + 1) * sizeof(double) / 1073741824.0);
    printf("| engine | A x B | time (s) | peak RSS before (MiB) | after (MiB) | growth (MiB) | expected scratch (MiB) |\n");
    printf("| --- | --- | --- | --- | --- | --- | --- |\n");
    const struct {
        ww_engine engine;
        int long_first;
    } runs[] = {{WW_ENGINE_CPU_STRIP, 1}, {WW_ENGINE_CPU_STRIP, 0}, {WW_ENGINE_CPU_BAND, 1}};
    for (int k = 0; k < 3; k++) {
        const ww_series *a = runs[k].long_first ? &lng : &shrt, *b = runs[k].long_first ? &shrt : &lng;
        /* each measurement in a child process of its own, so that one call's peak does not hide the
         * next one's; the child starts with the parent's current RSS as its peak */
        double res[3] = {0, 0, 0}; /* seconds, peak before, peak after (KiB) */
        int fds[2];
        if (pipe(fds) != 0)
            die("pipe", WW_ERR_MEMORY);
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            close(fds[0]);
            ww_ctx *ctx = make_ctx(runs[k].engine, 1);
            res[1] = (double)max_rss_kib();
            double d, t0 = now_s();
            ww_status st = ww_twed(ctx, a, b, &params, &d);
            res[0] = now_s() - t0;
            res[2] = (double)max_rss_kib();
            if (st != WW_OK)
                res[0] = -1;
            ww_ctx_destroy(ctx);
            if (write(fds[1], res, sizeof res) != (ssize_t)sizeof res)
                _exit(1);
            _exit(0);
        }
        close(fds[1]);
        ssize_t got = pid > 0 ? read(fds[0], res, sizeof res) : -1;
        close(fds[0]);
        if (pid > 0)
            waitpid(pid, NULL, 0);
        if (got != (ssize_t)sizeof res || res[0] < 0)
            die("memory measurement", WW_ERR_MEMORY);
        const double el = res[0];
        const long before = (long)res[1], after = (long)res[2];
        double prepared = (double)((a->length + 1) * 3 + (b->length + 1) * 3) * sizeof(double);
        double work = runs[k].engine == WW_ENGINE_CPU_BAND ? 3.0 * (double)(a->length + 1)
                                                           : 2.0 * (double)(b->length + 1) + 6.0 * 257;
        printf("| %s | %zu x %zu | %.2f | %.1f | %.1f | %.1f | %.1f |\n", engine_name(runs[k].engine), a->length,
               b->length, el, before / 1024.0, after / 1024.0, (after - before) / 1024.0,
               (prepared + work * sizeof(double)) / 1048576.0);
    }
    printf("\nA pair of length %zu against itself allocates the same scratch (the work area depends on one "
           "length only) but takes %.0e cells, too long to run here.\n\n",
           n_long, (double)n_long * (double)n_long);
    free(v), free(t), free(w), free(tw);
}

/* ------------------------------------------------------------------ one pair */

static double strip_gcups_16384 = 0, band_gcups_16384 = 0;

static void bench_pairs(int quick)
{
    const size_t sizes_full[] = {1024, 4096, 16384}, sizes_quick[] = {512, 1024, 2048};
    const size_t *sizes = quick ? sizes_quick : sizes_full;
    const ww_engine engines[] = {WW_ENGINE_CPU_REFERENCE, WW_ENGINE_CPU_BAND, WW_ENGINE_CPU_STRIP};
    printf("## One pair, dim 1, double, 1 thread\n\n");
    printf("Two series of length n, uniform random in [0,1), stamps 0..n-1, nu = 1, lambda = 1. "
           "\"vs reference\": time of the reference engine in this run / this time. \"vs Marteau\": GCUPS / %.3f "
           "(Marteau's code at n = 16,384, anchors.md; 0.017 and 0.028 at 1,024 and 4,096).\n\n",
           MARTEAU_GCUPS_16384);
    printf("| engine | n | time (s) | GCUPS | vs reference | vs Marteau | distance |\n");
    printf("| --- | --- | --- | --- | --- | --- | --- |\n");
    for (int si = 0; si < 3; si++) {
        const size_t n = sizes[si];
        double *va = random_doubles(n), *vb = random_doubles(n), *t = ramp(n);
        ww_series a = ww_series_f64(va, t, n, 1), b = ww_series_f64(vb, t, n, 1);
        double t_ref = 0;
        for (int e = 0; e < 3; e++) {
            ww_ctx *ctx = make_ctx(engines[e], 1);
            double d, el = time_pair(ctx, &a, &b, &d);
            double gcups = (double)n * (double)n / el / 1e9;
            if (e == 0)
                t_ref = el;
            if (n == 16384 && engines[e] == WW_ENGINE_CPU_STRIP)
                strip_gcups_16384 = gcups;
            if (n == 16384 && engines[e] == WW_ENGINE_CPU_BAND)
                band_gcups_16384 = gcups;
            printf("| %s | %zu | %.4f | %.3f | %.1fx | %.0fx | %.6f |\n", engine_name(engines[e]), n, el, gcups,
                   t_ref / el, gcups / MARTEAU_GCUPS_16384, d);
            ww_ctx_destroy(ctx);
        }
        free(va), free(vb), free(t);
    }

    /* float inputs, and a multivariate case */
    const size_t n = quick ? 1024 : 4096;
    printf("\n## One pair, other inputs, 1 thread (n = %zu)\n\n", n);
    printf("float32: the same random data as float (the CPU engines compute in double). dim 8: the L2 norm "
           "over 8 components per sample.\n\n");
    printf("| engine | input | time (s) | GCUPS | vs reference |\n");
    printf("| --- | --- | --- | --- | --- |\n");
    for (int variant = 0; variant < 3; variant++) {
        const size_t dim = variant == 2 ? 8 : 1;
        double *va = random_doubles(n * dim), *vb = random_doubles(n * dim), *t = ramp(n);
        float *fa = to_float(va, n * dim), *fb = to_float(vb, n * dim), *ft = to_float(t, n);
        ww_series a = ww_series_f64(va, t, n, dim), b = ww_series_f64(vb, t, n, dim);
        if (variant == 1) {
            a = ww_series_f32(fa, ft, n, dim);
            b = ww_series_f32(fb, ft, n, dim);
        }
        const char *input = variant == 0 ? "double, dim 1" : variant == 1 ? "float32, dim 1" : "double, dim 8";
        double t_ref = 0;
        for (int e = 0; e < 3; e++) {
            ww_ctx *ctx = make_ctx(engines[e], 1);
            double d, el = time_pair(ctx, &a, &b, &d);
            if (e == 0)
                t_ref = el;
            printf("| %s | %s | %.4f | %.3f | %.1fx |\n", engine_name(engines[e]), input, el,
                   (double)n * (double)n / el / 1e9, t_ref / el);
            ww_ctx_destroy(ctx);
        }
        free(va), free(vb), free(t), free(fa), free(fb), free(ft);
    }
    printf("\n");
}

/* ------------------------------------------------------------------ distance matrices */

static double pairwise_gcups_1 = 0, pairwise_seconds_2 = 0, pairwise_gcups_2 = 0;

/* Reads whitespace-separated numbers, one series per line; every line must have the same count. */
static double *read_table(const char *path, size_t *rows, size_t *cols)
{
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return NULL;
    size_t cap = 1 << 16, n = 0, r = 0, c = 0, in_row = 0;
    double *v = (double *)malloc(cap * sizeof(double));
    int ch;
    char tok[64];
    size_t tl = 0;
    for (;;) {
        ch = fgetc(f);
        int sep = ch == EOF || ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r';
        if (!sep && tl + 1 < sizeof tok) {
            tok[tl++] = (char)ch;
            continue;
        }
        if (tl > 0) {
            tok[tl] = '\0';
            tl = 0;
            if (n == cap) {
                cap *= 2;
                v = (double *)realloc(v, cap * sizeof(double));
            }
            v[n++] = strtod(tok, NULL);
            in_row++;
        }
        if ((ch == '\n' || ch == EOF) && in_row > 0) {
            if (c == 0)
                c = in_row;
            if (in_row != c) {
                fprintf(stderr, "ww_bench: %s: row %zu has %zu values, not %zu\n", path, r + 1, in_row, c);
                free(v);
                fclose(f);
                return NULL;
            }
            r++;
            in_row = 0;
        }
        if (ch == EOF)
            break;
    }
    fclose(f);
    *rows = r;
    *cols = c;
    return v;
}

static void matrix_table(const char *title, const double *v, size_t count, size_t len, size_t dim, int with_reference,
                         int quick)
{
    double *t = ramp(count * len);
    for (size_t i = 0; i < count * len; i++)
        t[i] = (double)(i % len); /* stamps 0..len-1 in every series */
    float *vf = to_float(v, count * len * dim), *tf = to_float(t, count * len);
    ww_dataset x = ww_dataset_f64(v, t, NULL, count, len, dim);
    ww_dataset xf = ww_dataset_f32(vf, tf, NULL, count, len, dim);
    const double pairs = (double)count * (double)(count - 1) / 2;
    const double cells = pairs * (double)len * (double)len;
    double *out = (double *)malloc(count * count * sizeof(double));
    printf("%s\n\n", title);
    printf("%zu series of length %zu, dim %zu, stamps 0..%zu, nu = 1, lambda = 1. The whole %zu x %zu matrix; "
           "each unordered pair computed once (%.0f pairs, %.4g cells). GCUPS/core = GCUPS / threads.\n\n",
           count, len, dim, len - 1, count, count, pairs, cells);
    printf("| method | input | threads | time (s) | GCUPS | GCUPS/core | vs reference |%s\n",
           with_reference ? " vs Marteau (22.3 s) |" : "");
    printf("| --- | --- | --- | --- | --- | --- | --- |%s\n", with_reference ? " --- |" : "");
    double t_ref = 0;
    if (with_reference) {
        /* pair by pair, upper triangle: the reference engine (O(n^2) memory, like Marteau's code) and
         * the strip engine. Best of `reps` without a separate warm-up: each run is 179,700 calls. */
        const ww_engine engines[] = {WW_ENGINE_CPU_REFERENCE, WW_ENGINE_CPU_STRIP};
        for (int e = 0; e < 2; e++) {
            ww_ctx *ctx = make_ctx(engines[e], 1);
            double el = time_triangle_by_pairs(ctx, &x, out, quick ? 1 : reps);
            if (e == 0)
                t_ref = el;
            printf("| %s, one ww_twed per pair | double | 1 | %.3f | %.3f | %.3f | %.1fx | %.0fx |\n",
                   engines[e] == WW_ENGINE_CPU_REFERENCE ? "reference engine" : "strip engine", el,
                   cells / el / 1e9, cells / el / 1e9, t_ref / el, MARTEAU_SC_SECONDS / el);
            ww_ctx_destroy(ctx);
        }
    }
    for (int input = 0; input < 2; input++)
        for (int threads = 1; threads <= 2; threads++) {
            ww_ctx *ctx = make_ctx(WW_ENGINE_AUTO, threads);
            double el = time_matrix(ctx, input ? &xf : &x, NULL, out, WW_F64);
            double g = cells / el / 1e9;
            if (with_reference && input == 0 && threads == 1)
                pairwise_gcups_1 = g;
            if (with_reference && input == 0 && threads == 2) {
                pairwise_gcups_2 = g;
                pairwise_seconds_2 = el;
            }
            printf("| ww_twed_pairwise (SIMD across pairs) | %s | %d | %.4f | %.3f | %.3f | ", input ? "float32" : "double",
                   threads, el, g, g / threads);
            if (t_ref > 0)
                printf("%.1fx | %.0fx |\n", t_ref / el, MARTEAU_SC_SECONDS / el);
            else
                printf("n/a |\n");
            ww_ctx_destroy(ctx);
        }
    printf("\n");
    free(out), free(t), free(vf), free(tf);
}

/* Ragged data: lengths drawn uniformly from [min_len, max_len] in a random order, so that series of
 * one length lie far apart; values random, stamps 0..length-1. Self matrix, each unordered pair once. */
static void ragged_table(size_t count, size_t min_len, size_t max_len, size_t dim)
{
    size_t *offsets = (size_t *)malloc((count + 1) * sizeof(size_t));
    if (offsets == NULL)
        die("malloc", WW_ERR_MEMORY);
    offsets[0] = 0;
    for (size_t i = 0; i < count; i++)
        offsets[i + 1] = offsets[i] + min_len + (size_t)(uniform() * (double)(max_len - min_len + 1));
    const size_t samples = offsets[count];
    double *v = random_doubles(samples * dim), *t = ramp(samples);
    double lengths_sum = 0, lengths_sq = 0;
    for (size_t i = 0; i < count; i++) {
        const double len = (double)(offsets[i + 1] - offsets[i]);
        for (size_t s = 0; s < offsets[i + 1] - offsets[i]; s++)
            t[offsets[i] + s] = (double)s;
        lengths_sum += len;
        lengths_sq += len * len;
    }
    ww_dataset x = ww_dataset_f64(v, t, offsets, count, 0, dim);
    const double pairs = (double)count * (double)(count - 1) / 2;
    const double cells = (lengths_sum * lengths_sum - lengths_sq) / 2; /* sum over i < j of len_i len_j */
    double *out = (double *)malloc(count * count * sizeof(double));
    if (out == NULL)
        die("malloc", WW_ERR_MEMORY);
    printf("## Distance matrix: ragged (random, lengths %zu..%zu shuffled, dim %zu)\n\n", min_len, max_len, dim);
    printf("%zu series of random lengths in [%zu, %zu] in random order, dim %zu, stamps 0..length-1, nu = 1, "
           "lambda = 1. The whole %zu x %zu matrix; each unordered pair computed once (%.0f pairs, %.4g cells). "
           "GCUPS/core = GCUPS / threads.\n\n",
           count, min_len, max_len, dim, count, count, pairs, cells);
    printf("| method | input | threads | time (s) | GCUPS | GCUPS/core |\n");
    printf("| --- | --- | --- | --- | --- | --- |\n");
    for (int threads = 1; threads <= 2; threads++) {
        ww_ctx *ctx = make_ctx(WW_ENGINE_AUTO, threads);
        double el = time_matrix(ctx, &x, NULL, out, WW_F64);
        double g = cells / el / 1e9;
        printf("| ww_twed_pairwise (SIMD across pairs) | double | %d | %.4f | %.3f | %.3f |\n", threads, el, g,
               g / threads);
        ww_ctx_destroy(ctx);
    }
    printf("\n");
    free(out), free(v), free(t), free(offsets);
}

static void bench_matrices(const char *data_path, int quick)
{
    size_t rows = 0, cols = 0;
    double *sc = data_path ? read_table(data_path, &rows, &cols) : NULL;
    if (sc == NULL) {
        printf("## Distance matrix: UCI synthetic control\n\nSKIPPED: %s not found (pass --data PATH).\n\n",
               data_path ? data_path : "synthetic_control.data");
    } else {
        size_t count = quick && rows > 200 ? 200 : rows;
        matrix_table("## Distance matrix: UCI synthetic control (synthetic_control.data)", sc, count, cols, 1, 1,
                     quick);
        free(sc);
    }
    const size_t count = quick ? 200 : 600, len = 60, dim = 8;
    double *v = random_doubles(count * len * dim);
    matrix_table("## Distance matrix: multivariate (random, dim 8)", v, count, len, dim, 0, quick);
    free(v);
    ragged_table(count, 40, 80, 1);
    ragged_table(count, 40, 80, 8);
}

/* ------------------------------------------------------------------ DTW */

/* Best time of ww_distance over `reps` calls after a warm-up; *out gets the distance. */
static double time_distance(ww_ctx *ctx, const ww_measure *m, const ww_series *a, const ww_series *b, double *out)
{
    ww_status st = ww_distance(ctx, m, a, b, out);
    if (st != WW_OK)
        die("ww_distance", st);
    double best = 1e300;
    for (int r = 0; r < reps; r++) {
        double t0 = now_s();
        st = ww_distance(ctx, m, a, b, out);
        double t = now_s() - t0;
        if (st != WW_OK)
            die("ww_distance", st);
        if (t < best)
            best = t;
    }
    return best;
}

static double time_pairwise(ww_ctx *ctx, const ww_measure *m, const ww_dataset *x, void *out, ww_dtype out_dtype)
{
    ww_pairwise_options o = ww_pairwise_options_default();
    o.out_dtype = out_dtype;
    ww_status st = ww_pairwise(ctx, m, x, NULL, out, &o);
    if (st != WW_OK)
        die("ww_pairwise", st);
    double best = 1e300;
    for (int r = 0; r < reps; r++) {
        double t0 = now_s();
        st = ww_pairwise(ctx, m, x, NULL, out, &o);
        double t = now_s() - t0;
        if (st != WW_OK)
            die("ww_pairwise", st);
        if (t < best)
            best = t;
    }
    return best;
}

static const char *radius_text(size_t r, char *buf, size_t size)
{
    if (r == WW_NO_WINDOW)
        snprintf(buf, size, "none");
    else
        snprintf(buf, size, "%zu", r);
    return buf;
}

static double dtw_strip_gcups_16384 = 0, dtw_strip_seconds_16384 = 0;

static void dtw_pairs(int quick)
{
    const size_t sizes_full[] = {1024, 4096, 16384, 65536}, sizes_quick[] = {512, 1024, 2048, 4096};
    const size_t *sizes = quick ? sizes_quick : sizes_full;
    const ww_engine engines[] = {WW_ENGINE_CPU_REFERENCE, WW_ENGINE_CPU_BAND, WW_ENGINE_CPU_STRIP};
    const ww_measure m = dtw_measure(WW_NO_WINDOW);
    printf("## DTW: one pair, dim 1, double, 1 thread\n\n");
    printf("Two series of length n, uniform random in [0,1), squared Euclidean cost, no window. \"vs reference\": "
           "time of the reference engine (full matrix) in this run / this time. The reference engine runs up to "
           "n = 4,096 (at 65,536 its matrix would take 32 GiB), the band engine up to 16,384.\n\n");
    printf("| engine | n | time (s) | GCUPS | vs reference | distance |\n");
    printf("| --- | --- | --- | --- | --- | --- |\n");
    for (int si = 0; si < 4; si++) {
        const size_t n = sizes[si];
        double *va = random_doubles(n), *vb = random_doubles(n);
        ww_series a = ww_series_f64(va, NULL, n, 1), b = ww_series_f64(vb, NULL, n, 1);
        double t_ref = 0;
        for (int e = 0; e < 3; e++) {
            if (engines[e] == WW_ENGINE_CPU_REFERENCE && n > 4096)
                continue;
            if (engines[e] == WW_ENGINE_CPU_BAND && n > 16384)
                continue;
            ww_ctx *ctx = make_ctx(engines[e], 1);
            double d, el = time_distance(ctx, &m, &a, &b, &d);
            double gcups = (double)n * (double)n / el / 1e9;
            if (e == 0)
                t_ref = el;
            if (n == 16384 && engines[e] == WW_ENGINE_CPU_STRIP) {
                dtw_strip_gcups_16384 = gcups;
                dtw_strip_seconds_16384 = el;
            }
            printf("| %s | %zu | %.4f | %.3f | ", engine_name(engines[e]), n, el, gcups);
            if (t_ref > 0)
                printf("%.1fx | %.6f |\n", t_ref / el, d);
            else
                printf("n/a | %.6f |\n", d);
            ww_ctx_destroy(ctx);
        }
        free(va), free(vb);
    }

    const size_t n = quick ? 1024 : 4096;
    printf("\n## DTW: one pair, other inputs, 1 thread (n = %zu)\n\n", n);
    printf("float32: the same random data as float (the CPU engines compute in double). dim 8: the squared "
           "Euclidean distance over 8 components per sample.\n\n");
    printf("| engine | input | time (s) | GCUPS | vs reference |\n");
    printf("| --- | --- | --- | --- | --- |\n");
    for (int variant = 0; variant < 3; variant++) {
        const size_t dim = variant == 2 ? 8 : 1;
        double *va = random_doubles(n * dim), *vb = random_doubles(n * dim);
        float *fa = to_float(va, n * dim), *fb = to_float(vb, n * dim);
        ww_series a = ww_series_f64(va, NULL, n, dim), b = ww_series_f64(vb, NULL, n, dim);
        if (variant == 1) {
            a = ww_series_f32(fa, NULL, n, dim);
            b = ww_series_f32(fb, NULL, n, dim);
        }
        const char *input = variant == 0 ? "double, dim 1" : variant == 1 ? "float32, dim 1" : "double, dim 8";
        double t_ref = 0;
        for (int e = 0; e < 3; e++) {
            ww_ctx *ctx = make_ctx(engines[e], 1);
            double d, el = time_distance(ctx, &m, &a, &b, &d);
            if (e == 0)
                t_ref = el;
            printf("| %s | %s | %.4f | %.3f | %.1fx |\n", engine_name(engines[e]), input, el,
                   (double)n * (double)n / el / 1e9, t_ref / el);
            ww_ctx_destroy(ctx);
        }
        free(va), free(vb), free(fa), free(fb);
    }

    /* the window: time in proportion to the band's area */
    const size_t nw = quick ? 4096 : 16384;
    const size_t radii[] = {WW_NO_WINDOW, nw / 2, nw / 10, nw / 100, nw / 1000, 0};
    printf("\n## DTW: one pair with a Sakoe-Chiba window, n = %zu, dim 1, 1 thread (strip engine)\n\n", nw);
    printf("Cells: the dynamic program's cells inside the band (n (2r + 1) - r (r + 1)). \"time / full\" against "
           "\"area / full\": the cost of a call follows the band's area while the band is wide; a narrow band "
           "pays a fixed cost per diagonal and per strip.\n\n");
    printf("| radius | cells | area / full | time (s) | time / full | GCUPS (band cells) | distance |\n");
    printf("| --- | --- | --- | --- | --- | --- | --- |\n");
    {
        double *va = random_doubles(nw), *vb = random_doubles(nw);
        ww_series a = ww_series_f64(va, NULL, nw, 1), b = ww_series_f64(vb, NULL, nw, 1);
        ww_ctx *ctx = make_ctx(WW_ENGINE_CPU_STRIP, 1);
        double t_full = 0;
        const double full = (double)nw * (double)nw;
        for (int k = 0; k < 6; k++) {
            const ww_measure mw = dtw_measure(radii[k]);
            double d, el = time_distance(ctx, &mw, &a, &b, &d);
            if (k == 0)
                t_full = el;
            const double cells = band_cells(nw, nw, radii[k]);
            char rb[32];
            printf("| %s | %.4g | %.4f | %.5f | %.4f | %.3f | %.6f |\n", radius_text(radii[k], rb, sizeof rb), cells,
                   cells / full, el, el / t_full, cells / el / 1e9, d);
        }
        ww_ctx_destroy(ctx);
        free(va), free(vb);
    }
    printf("\n");
}

static double dtw_sc_seconds[2][2]; /* [windowed][threads - 1] */

/* A self matrix of DTW for radii none and `radius`, threads 1 and 2, double (and float32 once). */
static void dtw_matrix_table(const char *title, const double *v, const size_t *offsets, size_t count, size_t len,
                             size_t dim, size_t radius, int is_sc, int with_pairs)
{
    ww_dataset x = ww_dataset_f64(v, NULL, offsets, count, offsets ? 0 : len, dim);
    const size_t samples = offsets ? offsets[count] : count * len;
    float *vf = to_float(v, samples * dim);
    ww_dataset xf = ww_dataset_f32(vf, NULL, offsets, count, offsets ? 0 : len, dim);
    const double pairs = (double)count * (double)(count - 1) / 2;
    double *out = (double *)malloc(count * count * sizeof(double));
    if (out == NULL)
        die("malloc", WW_ERR_MEMORY);
    printf("%s\n\n", title);
    printf("%zu series, dim %zu, squared Euclidean cost. The whole %zu x %zu matrix; each unordered pair computed "
           "once (%.0f pairs). Cells: inside the band for each pair. GCUPS/core = GCUPS / threads.\n\n",
           count, dim, count, count, pairs);
    printf("| method | radius | input | threads | cells | time (s) | GCUPS | GCUPS/core |\n");
    printf("| --- | --- | --- | --- | --- | --- | --- | --- |\n");
    for (int windowed = 0; windowed < 2; windowed++) {
        const size_t r = windowed ? radius : WW_NO_WINDOW;
        const ww_measure m = dtw_measure(r);
        double cells = 0;
        for (size_t i = 0; i < count; i++)
            for (size_t j = i + 1; j < count; j++) {
                const size_t li = offsets ? offsets[i + 1] - offsets[i] : len;
                const size_t lj = offsets ? offsets[j + 1] - offsets[j] : len;
                cells += band_cells(li, lj, r);
            }
        char rb[32];
        radius_text(r, rb, sizeof rb);
        if (with_pairs) { /* one ww_distance per pair, the strip engine (upper triangle) */
            ww_ctx *ctx = make_ctx(WW_ENGINE_CPU_STRIP, 1);
            double best = 1e300;
            for (int rep = 0; rep < reps; rep++) {
                double t0 = now_s();
                for (size_t i = 0; i < count; i++)
                    for (size_t j = i + 1; j < count; j++) {
                        ww_series a, b;
                        ww_dataset_series(&x, i, &a);
                        ww_dataset_series(&x, j, &b);
                        ww_status st = ww_distance(ctx, &m, &a, &b, &out[i * count + j]);
                        if (st != WW_OK)
                            die("ww_distance", st);
                    }
                double t = now_s() - t0;
                best = t < best ? t : best;
            }
            printf("| strip engine, one ww_distance per pair | %s | double | 1 | %.4g | %.4f | %.3f | %.3f |\n", rb,
                   cells, best, cells / best / 1e9, cells / best / 1e9);
            ww_ctx_destroy(ctx);
        }
        for (int input = 0; input < 2; input++)
            for (int threads = 1; threads <= 2; threads++) {
                if (input == 1 && threads == 2)
                    continue;
                ww_ctx *ctx = make_ctx(WW_ENGINE_AUTO, threads);
                double el = time_pairwise(ctx, &m, input ? &xf : &x, out, WW_F64);
                if (is_sc && input == 0)
                    dtw_sc_seconds[windowed][threads - 1] = el;
                double g = cells / el / 1e9;
                printf("| ww_pairwise (SIMD across pairs) | %s | %s | %d | %.4g | %.4f | %.3f | %.3f |\n", rb,
                       input ? "float32" : "double", threads, cells, el, g, g / threads);
                ww_ctx_destroy(ctx);
            }
    }
    printf("\n");
    free(out), free(vf);
}

static void dtw_matrices(const char *data_path, int quick)
{
    size_t rows = 0, cols = 0;
    double *sc = data_path ? read_table(data_path, &rows, &cols) : NULL;
    if (sc == NULL) {
        printf("## DTW: distance matrix: UCI synthetic control\n\nSKIPPED: %s not found (pass --data PATH).\n\n",
               data_path ? data_path : "synthetic_control.data");
    } else {
        size_t count = quick && rows > 200 ? 200 : rows;
        dtw_matrix_table("## DTW: distance matrix: UCI synthetic control (synthetic_control.data), 600 x 60", sc, NULL,
                         count, cols, 1, 6, 1, 1);
        free(sc);
    }
    const size_t count = quick ? 200 : 600, len = 60;
    double *v = random_doubles(count * len * 8);
    dtw_matrix_table("## DTW: distance matrix: multivariate (random, 600 x 60, dim 8)", v, NULL, count, len, 8, 6, 0,
                     0);
    free(v);
    for (size_t dim = 1; dim <= 8; dim += 7) {
        size_t *offsets = (size_t *)malloc((count + 1) * sizeof(size_t));
        if (offsets == NULL)
            die("malloc", WW_ERR_MEMORY);
        offsets[0] = 0;
        for (size_t i = 0; i < count; i++)
            offsets[i + 1] = offsets[i] + 40 + (size_t)(uniform() * 41.0);
        double *rv = random_doubles(offsets[count] * dim);
        char title[160];
        snprintf(title, sizeof title,
                 "## DTW: distance matrix: ragged (random, %zu series of lengths 40..80 shuffled, dim %zu)", count, dim);
        dtw_matrix_table(title, rv, offsets, count, 0, dim, 6, 0, 0);
        free(rv), free(offsets);
    }
}

static void dtw_targets(void)
{
    printf("## DTW figures for the targets (the rivals' times come from bench/bench_dtw_rivals.py)\n\n");
    printf("| workload | wavewarp |\n| --- | --- |\n");
    if (dtw_strip_seconds_16384 > 0)
        printf("| one pair n = 16,384, 1 thread | %.4f s (%.2f GCUPS) |\n", dtw_strip_seconds_16384,
               dtw_strip_gcups_16384);
    if (dtw_sc_seconds[0][0] > 0)
        printf("| synthetic control 600 x 600, no window | %.4f s (1 thread), %.4f s (2) |\n", dtw_sc_seconds[0][0],
               dtw_sc_seconds[0][1]);
    if (dtw_sc_seconds[1][0] > 0)
        printf("| synthetic control 600 x 600, radius 6 | %.4f s (1 thread), %.4f s (2) |\n", dtw_sc_seconds[1][0],
               dtw_sc_seconds[1][1]);
    printf("\n");
}

/* ------------------------------------------------------------------ one timed call, for scripts */

static double *read_raw(const char *path, size_t *count)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, "ww_bench: cannot open %s\n", path);
        exit(1);
    }
    fseek(f, 0, SEEK_END);
    long bytes = ftell(f);
    fseek(f, 0, SEEK_SET);
    if (bytes <= 0 || bytes % (long)sizeof(double) != 0) {
        fprintf(stderr, "ww_bench: %s: not a whole number of float64\n", path);
        exit(1);
    }
    *count = (size_t)bytes / sizeof(double);
    double *v = (double *)malloc((size_t)bytes);
    if (v == NULL || fread(v, sizeof(double), *count, f) != *count) {
        fprintf(stderr, "ww_bench: cannot read %s\n", path);
        exit(1);
    }
    fclose(f);
    return v;
}

/* Times `reps` calls after a warm-up and prints them as one JSON line. */
static int run_script_case(const char *pair_a, const char *pair_b, const char *matrix, size_t length, size_t radius,
                           int threads, const char *out_path)
{
    const ww_measure m = dtw_measure(radius);
    ww_ctx *ctx = make_ctx(WW_ENGINE_AUTO, threads);
    double value = 0, *times = (double *)malloc(2 * (size_t)reps * sizeof(double)), *cpu = times + reps;
    if (times == NULL)
        die("malloc", WW_ERR_MEMORY);
    if (pair_a) {
        size_t na, nb;
        double *va = read_raw(pair_a, &na), *vb = read_raw(pair_b, &nb);
        ww_series a = ww_series_f64(va, NULL, na, 1), b = ww_series_f64(vb, NULL, nb, 1);
        for (int r = -1; r < reps; r++) {
            double c0 = thread_cpu_s(), t0 = now_s();
            ww_status st = ww_distance(ctx, &m, &a, &b, &value);
            double t = now_s() - t0, c = thread_cpu_s() - c0;
            if (st != WW_OK)
                die("ww_distance", st);
            if (r >= 0)
                times[r] = t, cpu[r] = c;
        }
        free(va), free(vb);
    } else {
        size_t samples;
        double *v = read_raw(matrix, &samples);
        if (length == 0 || samples % length != 0) {
            fprintf(stderr, "ww_bench: %s holds %zu samples, not a multiple of %zu\n", matrix, samples, length);
            return 1;
        }
        const size_t count = samples / length;
        ww_dataset x = ww_dataset_f64(v, NULL, NULL, count, length, 1);
        double *out = (double *)malloc(count * count * sizeof(double));
        if (out == NULL)
            die("malloc", WW_ERR_MEMORY);
        for (int r = -1; r < reps; r++) {
            double c0 = thread_cpu_s(), t0 = now_s();
            ww_status st = ww_pairwise(ctx, &m, &x, NULL, out, NULL);
            double t = now_s() - t0, c = thread_cpu_s() - c0;
            if (st != WW_OK)
                die("ww_pairwise", st);
            if (r >= 0)
                times[r] = t, cpu[r] = c;
        }
        for (size_t k = 0; k < count * count; k++)
            value += out[k];
        if (out_path) {
            FILE *f = fopen(out_path, "wb");
            if (f == NULL || fwrite(out, sizeof(double), count * count, f) != count * count || fclose(f) != 0) {
                fprintf(stderr, "ww_bench: cannot write %s\n", out_path);
                return 1;
            }
        }
        free(out), free(v);
    }
    printf("{\"seconds\": [");
    for (int r = 0; r < reps; r++)
        printf("%s%.9g", r ? ", " : "", times[r]);
    printf("], \"calling_thread_cpu_seconds\": [");
    for (int r = 0; r < reps; r++)
        printf("%s%.9g", r ? ", " : "", cpu[r]);
    printf("], \"value\": %.17g, \"threads\": %d, \"library\": \"%s\"}\n", value, threads, ww_ctx_describe(ctx));
    free(times);
    ww_ctx_destroy(ctx);
    return 0;
}

static const char *find_data(void)
{
    static char path[4096];
    const char *env = getenv("WW_SHARED_DIR");
    const char *candidates[] = {"../shared", "../../shared", "../../../shared"};
    if (env) {
        snprintf(path, sizeof path, "%s/data/synthetic_control.data", env);
        return path;
    }
    for (int k = 0; k < 3; k++) {
        snprintf(path, sizeof path, "%s/data/synthetic_control.data", candidates[k]);
        FILE *f = fopen(path, "r");
        if (f) {
            fclose(f);
            return path;
        }
    }
    return NULL;
}

int main(int argc, char **argv)
{
    const char *data = NULL, *pair_a = NULL, *pair_b = NULL, *matrix = NULL, *out_path = NULL;
    const char *measure = "twed";
    size_t length = 0, radius = WW_NO_WINDOW;
    int quick = 0, matrices_only = 0, threads = 1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--data") == 0 && i + 1 < argc)
            data = argv[++i];
        else if (strcmp(argv[i], "--measure") == 0 && i + 1 < argc)
            measure = argv[++i];
        else if (strcmp(argv[i], "--dtw-pair") == 0 && i + 2 < argc)
            pair_a = argv[i + 1], pair_b = argv[i + 2], i += 2;
        else if (strcmp(argv[i], "--dtw-matrix") == 0 && i + 2 < argc)
            matrix = argv[i + 1], length = (size_t)strtoull(argv[i + 2], NULL, 10), i += 2;
        else if (strcmp(argv[i], "--radius") == 0 && i + 1 < argc)
            radius = (size_t)strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
            threads = atoi(argv[++i]);
        else if (strcmp(argv[i], "--out") == 0 && i + 1 < argc)
            out_path = argv[++i];
        else if (strcmp(argv[i], "--quick") == 0)
            quick = 1;
        else if (strcmp(argv[i], "--matrices") == 0)
            matrices_only = 1;
        else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
            reps = atoi(argv[++i]) > 0 ? atoi(argv[i]) : 1;
        else {
            fprintf(stderr,
                    "usage: %s [--data PATH/synthetic_control.data] [--quick] [--matrices] [--reps N] "
                    "[--measure twed|dtw|all]\n"
                    "       %s --dtw-pair A.f64 B.f64 | --dtw-matrix X.f64 LENGTH [--radius R] [--threads T] "
                    "[--reps N] [--out M.f64]\n",
                    argv[0], argv[0]);
            return 2;
        }
    }
    if (pair_a || matrix)
        return run_script_case(pair_a, pair_b, matrix, length, radius, threads, out_path);
    const int twed = strcmp(measure, "twed") == 0 || strcmp(measure, "all") == 0;
    const int dtw = strcmp(measure, "dtw") == 0 || strcmp(measure, "all") == 0;
    if (!twed && !dtw) {
        fprintf(stderr, "ww_bench: --measure twed, dtw or all\n");
        return 2;
    }
    if (data == NULL)
        data = find_data();
    print_machine();
    if (twed) {
        if (!matrices_only) {
            bench_memory(quick); /* first: it reads the growth of the peak RSS */
            bench_pairs(quick);
        }
        bench_matrices(data, quick);
        if (!dtw)
            printf("Load average (1 min) at the end: %.2f.\n\n", load_average());
    }
    if (dtw) {
        if (!matrices_only)
            dtw_pairs(quick);
        dtw_matrices(data, quick);
        printf("Load average (1 min) at the end: %.2f.\n\n", load_average());
        dtw_targets();
    }
    if (!twed)
        return 0;
    printf("## Targets (dim 1, double, one core unless said)\n\n");
    printf("| target | measured | met |\n| --- | --- | --- |\n");
    if (strip_gcups_16384 > 0)
        printf("| one pair, n = 16,384: >= 1 GCUPS on one core | %.2f GCUPS (%.0fx Marteau's 0.026; band engine %.2f) | %s |\n",
               strip_gcups_16384, strip_gcups_16384 / MARTEAU_GCUPS_16384, band_gcups_16384,
               strip_gcups_16384 >= 1.0 ? "yes" : "NO");
    if (pairwise_gcups_1 > 0)
        printf("| synthetic control 600 x 600: >= 2 GCUPS per core | %.2f GCUPS on 1 core, %.2f per core on 2 | %s |\n",
               pairwise_gcups_1, pairwise_gcups_2 / 2, pairwise_gcups_1 >= 2.0 && pairwise_gcups_2 / 2 >= 2.0 ? "yes" : "NO");
    if (pairwise_seconds_2 > 0)
        printf("| synthetic control 600 x 600 well under 1 s on two cores (Marteau: 22.3 s on one) | %.3f s | %s |\n",
               pairwise_seconds_2, pairwise_seconds_2 < 0.5 ? "yes" : "NO");
    return 0;
}
