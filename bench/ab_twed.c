/* A/B of two builds of the library on TWED, timed by the calling thread's CPU time.
 *
 * On a shared machine, wall times move by several percent with the other jobs; the CPU time of a
 * one-thread call leaves out the time the thread waited for a core (not the cache misses others
 * cause), so it separates two builds that differ by a few percent. Build this file against each
 * library (it uses only the TWED calls of version 0.1, which every build has) and run the two
 * binaries in turn:
 *
 *   cc -O2 -Iinclude bench/ab_twed.c -o ab-new build-cpu/libwavewarp.a -lm -fopenmp
 *   cc -O2 -I$OLD/include bench/ab_twed.c -o ab-old $OLD/build-cpu/libwavewarp.a -lm -fopenmp
 *   for r in 1 2 3; do for v in old new; do ./ab-$v all 3 | sed "s/^/$v /"; done; done
 *
 *   ab_twed [WORKLOAD|=WORKLOAD|all] [REPS]
 *
 * WORKLOAD selects the workloads whose name contains it (=NAME: that one only); each prints the
 * best CPU time of REPS calls (default 5) after one warm-up call. Data: uniform random in [0, 1)
 * (fixed seed), stamps 0..n-1, nu = 1, lambda = 1, degree 2, as in ww_bench (bench_cpu.c), whose
 * rows the workloads mirror at a smaller size where the row is long: one pair of n = 4,096
 * (reference, band and strip engines, dim 1 and 8), the upper triangle of 200 series of length 60
 * by one ww_twed call per pair, and 600 x 600 matrices with one thread (dim 1 double and float32,
 * dim 8, ragged lengths 40..80 at dims 1 and 8). */
#define _POSIX_C_SOURCE 200809L
#include "wavewarp.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double cpu_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static uint64_t rng = 0x243F6A8885A308D3ULL;
static double uniform(void)
{
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return (double)((rng * 2685821657736338717ULL) >> 11) * (1.0 / 9007199254740992.0);
}

static void *alloc(size_t bytes)
{
    void *p = malloc(bytes);
    if (p == NULL) {
        fprintf(stderr, "ab_twed: out of memory\n");
        exit(1);
    }
    return p;
}

static double *random_doubles(size_t n)
{
    double *v = (double *)alloc(n * sizeof(double));
    for (size_t i = 0; i < n; i++)
        v[i] = uniform();
    return v;
}

static ww_ctx *make_ctx(ww_engine engine)
{
    ww_ctx_options o = ww_ctx_options_default();
    o.backend = WW_BACKEND_CPU;
    o.engine = engine;
    o.num_threads = 1;
    ww_ctx *c = NULL;
    if (ww_ctx_create(&c, &o) != WW_OK) {
        fprintf(stderr, "ab_twed: ww_ctx_create failed\n");
        exit(1);
    }
    return c;
}

static const ww_twed_params P = {1.0, 1.0, 2};
static const char *want = "all";
static int reps = 5;

static int selected(const char *name)
{
    if (strcmp(want, "all") == 0)
        return 1;
    if (want[0] == '=')
        return strcmp(name, want + 1) == 0;
    return strstr(name, want) != NULL;
}

static void check(ww_status st)
{
    if (st != WW_OK) {
        fprintf(stderr, "ab_twed: %s\n", ww_strerror(st));
        exit(1);
    }
}

typedef struct pair_job {
    ww_ctx *ctx;
    const ww_series *a, *b;
} pair_job;

typedef struct matrix_job {
    ww_ctx *ctx;
    const ww_dataset *x;
    double *out;
    int by_pairs; /* the upper triangle by one ww_twed call per pair */
} matrix_job;

static void run_pair(const void *p)
{
    const pair_job *j = (const pair_job *)p;
    double d;
    check(ww_twed(j->ctx, j->a, j->b, &P, &d));
}

static void run_matrix(const void *p)
{
    const matrix_job *j = (const matrix_job *)p;
    if (!j->by_pairs) {
        check(ww_twed_pairwise(j->ctx, j->x, NULL, &P, j->out, NULL));
        return;
    }
    for (size_t i = 0; i < j->x->count; i++)
        for (size_t k = i + 1; k < j->x->count; k++) {
            ww_series a, b;
            check(ww_dataset_series(j->x, i, &a));
            check(ww_dataset_series(j->x, k, &b));
            check(ww_twed(j->ctx, &a, &b, &P, &j->out[i * j->x->count + k]));
        }
}

static void bench(const char *name, void (*fn)(const void *), const void *job)
{
    if (!selected(name))
        return;
    double best = 1e300;
    for (int r = 0; r <= reps; r++) { /* r = 0: warm-up */
        double t0 = cpu_s();
        fn(job);
        double t = cpu_s() - t0;
        if (r > 0 && t < best)
            best = t;
    }
    printf("%-24s %.5f\n", name, best);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    if (argc > 1)
        want = argv[1];
    if (argc > 2)
        reps = atoi(argv[2]) > 0 ? atoi(argv[2]) : 1;
    const size_t n = 4096;
    double *a1 = random_doubles(n), *b1 = random_doubles(n), *t = (double *)alloc(n * sizeof(double));
    for (size_t i = 0; i < n; i++)
        t[i] = (double)i;
    double *a8 = random_doubles(n * 8), *b8 = random_doubles(n * 8);
    ww_series sa = ww_series_f64(a1, t, n, 1), sb = ww_series_f64(b1, t, n, 1);
    ww_series sa8 = ww_series_f64(a8, t, n, 8), sb8 = ww_series_f64(b8, t, n, 8);
    ww_ctx *ref = make_ctx(WW_ENGINE_CPU_REFERENCE), *band = make_ctx(WW_ENGINE_CPU_BAND);
    ww_ctx *strip = make_ctx(WW_ENGINE_CPU_STRIP), *autoc = make_ctx(WW_ENGINE_AUTO);
    const pair_job pairs[6] = {{ref, &sa, &sb},  {band, &sa, &sb},  {strip, &sa, &sb},
                               {ref, &sa8, &sb8}, {band, &sa8, &sb8}, {strip, &sa8, &sb8}};
    const char *pair_names[6] = {"reference4096", "band4096", "strip4096", "reference4096dim8", "band4096dim8",
                                 "strip4096dim8"};
    for (int k = 0; k < 6; k++)
        bench(pair_names[k], run_pair, &pairs[k]);

    const size_t len = 60, few = 200, many = 600;
    double *xm = random_doubles(many * len * 8), *tm = (double *)alloc(many * len * sizeof(double));
    float *xf = (float *)alloc(many * len * sizeof(float)), *tf = (float *)alloc(many * len * sizeof(float));
    for (size_t i = 0; i < many * len; i++) {
        tm[i] = (double)(i % len);
        xf[i] = (float)xm[i];
        tf[i] = (float)tm[i];
    }
    double *out = (double *)alloc(many * many * sizeof(double));
    ww_dataset small = ww_dataset_f64(xm, tm, NULL, few, len, 1);
    ww_dataset d1 = ww_dataset_f64(xm, tm, NULL, many, len, 1), d8 = ww_dataset_f64(xm, tm, NULL, many, len, 8);
    ww_dataset df = ww_dataset_f32(xf, tf, NULL, many, len, 1);
    size_t *off = (size_t *)alloc((many + 1) * sizeof(size_t));
    off[0] = 0;
    for (size_t i = 0; i < many; i++)
        off[i + 1] = off[i] + 40 + (size_t)(uniform() * 41.0);
    double *rv = random_doubles(off[many] * 8), *rt = (double *)alloc(off[many] * sizeof(double));
    for (size_t i = 0; i < many; i++)
        for (size_t s = off[i]; s < off[i + 1]; s++)
            rt[s] = (double)(s - off[i]);
    ww_dataset r1 = ww_dataset_f64(rv, rt, off, many, 0, 1), r8 = ww_dataset_f64(rv, rt, off, many, 0, 8);
    const matrix_job mats[7] = {{strip, &small, out, 1}, {ref, &small, out, 1}, {autoc, &d1, out, 0},
                                {autoc, &df, out, 0},    {autoc, &d8, out, 0},  {autoc, &r1, out, 0},
                                {autoc, &r8, out, 0}};
    const char *mat_names[7] = {"pairs_strip200", "pairs_ref200", "pairwise600",    "pairwise600f32",
                                "pairwise600dim8", "ragged600",   "ragged600dim8"};
    for (int k = 0; k < 7; k++)
        bench(mat_names[k], run_matrix, &mats[k]);
    return 0;
}
