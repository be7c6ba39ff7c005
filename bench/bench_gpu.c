/* GPU benchmark for one pair (the ITWED paper's Table 3 shape): TWED of two random series of
 * length n, dim 1, nu = lambda = 1, degree 2, stamps 1..n, for n = 2^10 .. 2^20, double and float.
 * Columns: the fast engine (auto), the paper's per-diagonal baseline, the CPU strip engine (one
 * core, where it finishes in reasonable time). Times are of the whole synchronous call (host data in,
 * result out), warm (after one untimed call), median of several runs for small n.
 * Then DTW on the same series, and both measures with a window of 10% (aeon's fraction 0.1, radius
 * n / 10) against the band's share of the matrix (issue 15). WW_BENCH_TWED_ONLY=1 stops after the
 * TWED tables (those of the commits before the measures were split out, for old-vs-new runs),
 * WW_BENCH_DTW_ONLY=1 runs the measures' tables alone.
 * Usage: ww_bench_gpu [max_log2_n] [output.md] */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "wavewarp.h"
#include "bench_common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>


/* Median time of `reps` calls after one warm-up; -1 on error. */
static double time_call(ww_ctx *ctx, const ww_series *a, const ww_series *b, const ww_twed_params *p, int reps,
                        double *value)
{
    double times[64];
    if (ww_twed(ctx, a, b, p, value) != WW_OK)
        return -1;
    for (int r = 0; r < reps; r++) {
        double t0 = bench_now();
        ww_status st = ww_twed(ctx, a, b, p, value);
        times[r] = bench_now() - t0;
        if (st != WW_OK)
            return -1;
    }
    return bench_median(times, (size_t)reps);
}

/* The same for any measure (ww_distance). */
static double time_measure(ww_ctx *ctx, const ww_measure *m, const ww_series *a, const ww_series *b, int reps,
                           double *value)
{
    double times[64];
    if (ww_distance(ctx, m, a, b, value) != WW_OK)
        return -1;
    for (int r = 0; r < reps; r++) {
        double t0 = bench_now();
        ww_status st = ww_distance(ctx, m, a, b, value);
        times[r] = bench_now() - t0;
        if (st != WW_OK)
            return -1;
    }
    return bench_median(times, (size_t)reps);
}

/* Cells of the band of radius r on an n x n matrix (window.h's closed form), over n^2. */
static double band_share(size_t n, size_t r)
{
    if (r >= n)
        return 1.0;
    return ((double)n * (double)(2 * r + 1) - (double)r * (double)(r + 1)) / ((double)n * (double)n);
}

static ww_ctx *make(ww_backend backend, ww_engine engine)
{
    ww_ctx_options o = ww_ctx_options_default();
    o.backend = backend;
    o.engine = engine;
    o.num_threads = 1;
    ww_ctx *ctx = NULL;
    return ww_ctx_create(&ctx, &o) == WW_OK ? ctx : NULL;
}

static void cell(char *buf, size_t n, double t)
{
    if (t < 0)
        snprintf(buf, n, "-");
    else if (t < 0.01)
        snprintf(buf, n, "%.3f ms", t * 1e3);
    else
        snprintf(buf, n, "%.4g s", t);
}

/* "slow / fast" as "23x", or "-" when either was not measured */
static void speedup(char *buf, size_t n, double slow, double fast)
{
    if (slow > 0 && fast > 0)
        snprintf(buf, n, "%.0fx", slow / fast);
    else
        snprintf(buf, n, "-");
}

static void out_line(FILE *md, const char *line)
{
    printf("%s", line);
    fflush(stdout);
    if (md) {
        fputs(line, md);
        fflush(md);
    }
}

/* DTW of one pair, then DTW and TWED with a 10% window: time against the band's share. */
static void measures_tables(FILE *md, ww_ctx *fast, ww_ctx *cpu, const double *a, const double *b, const float *af,
                            const float *bf, int max_log2)
{
    const ww_measure dtw = ww_measure_dtw(), twed = ww_measure_twed(1.0, 1.0, 2);
    char line[512];
    out_line(md, "\nDTW of one pair (the same series; f32: converted to double on the device; CPU: the strip "
                 "engine, one core, where it finishes quickly):\n\n"
                 "| n | DTW f64 | GCUPS | DTW f32 | CPU strip f64 (1 core) | TWED f64 (same run) | DTW / TWED |\n"
                 "| --- | --- | --- | --- | --- | --- | --- |\n");
    for (int lg = 10; lg <= max_log2; lg++) {
        const size_t n = (size_t)1 << lg;
        const int reps = lg <= 14 ? 21 : (lg <= 17 ? 5 : 1);
        ww_series A = ww_series_f64(a, NULL, n, 1), B = ww_series_f64(b, NULL, n, 1);
        ww_series Af = ww_series_f32(af, NULL, n, 1), Bf = ww_series_f32(bf, NULL, n, 1);
        double v = NAN, vf = NAN, vc = NAN, vt = NAN;
        const double t = time_measure(fast, &dtw, &A, &B, reps, &v);
        const double tf = time_measure(fast, &dtw, &Af, &Bf, reps, &vf);
        const double tc = lg <= 15 ? time_measure(cpu, &dtw, &A, &B, 1, &vc) : -1;
        const double tt = time_measure(fast, &twed, &A, &B, reps, &vt);
        if (tc >= 0 && fabs(vc - v) > 1e-12 * fabs(vc))
            fprintf(stderr, "MISMATCH DTW n=%zu: GPU %.17g CPU %.17g\n", n, v, vc);
        char c[4][32];
        cell(c[0], sizeof c[0], t), cell(c[1], sizeof c[1], tf), cell(c[2], sizeof c[2], tc), cell(c[3], sizeof c[3], tt);
        snprintf(line, sizeof line, "| %zu | %s | %.1f | %s | %s | %s | %.2f |\n", n, c[0],
                 t > 0 ? (double)n * (double)n / t / 1e9 : 0.0, c[1], c[2], c[3], t > 0 && tt > 0 ? t / tt : 0.0);
        out_line(md, line);
    }
    /* the tile shapes for DTW (a cheaper cell than TWED's: wider tiles may pay earlier), and for the
     * largest pairs the bands resident per multiprocessor (WW_WAVEFRONT_RESIDENT) */
    const char *tiles[] = {NULL, "3x1s16l2", "4x1s16l2", "3x1s16", "4x1s16", "8x1s16", "8x2s8"};
    out_line(md, "\nDTW tile shapes of the wavefront engine (RxCsS, as the TWED table; lL: lanes L steps apart, 1 if "
                 "not named; f64, time of the call):\n\n"
                 "| n | auto | 3x1s16l2 | 4x1s16l2 | 3x1s16 | 4x1s16 | 8x1s16 | 8x2s8 |\n"
                 "| --- | --- | --- | --- | --- | --- | --- | --- |\n");
    for (int lg = 10; lg <= max_log2; lg++) {
        const size_t n = (size_t)1 << lg;
        const int reps = lg <= 14 ? 11 : (lg <= 16 ? 3 : 1);
        ww_series A = ww_series_f64(a, NULL, n, 1), B = ww_series_f64(b, NULL, n, 1);
        int at = snprintf(line, sizeof line, "| %zu |", n);
        for (int k = 0; k < (int)(sizeof tiles / sizeof tiles[0]); k++) {
            char c[32];
            if (tiles[k])
                setenv("WW_WAVEFRONT_TILE", tiles[k], 1);
            double v = NAN;
            cell(c, sizeof c, time_measure(fast, &dtw, &A, &B, reps, &v));
            unsetenv("WW_WAVEFRONT_TILE");
            at += snprintf(line + at, sizeof line - (size_t)at, " %s |", c);
        }
        snprintf(line + at, sizeof line - (size_t)at, "\n");
        out_line(md, line);
    }
    out_line(md, "\nDTW, bands of the 8 x 2 shape resident per multiprocessor (WW_WAVEFRONT_RESIDENT; 0: the default, as "
                 "many as fit up to 4), f64:\n\n| n | 0 | 2 | 3 | 4 |\n| --- | --- | --- | --- | --- |\n");
    for (int lg = 16; lg <= max_log2; lg += 2) {
        const size_t n = (size_t)1 << lg;
        ww_series A = ww_series_f64(a, NULL, n, 1), B = ww_series_f64(b, NULL, n, 1);
        int at = snprintf(line, sizeof line, "| %zu |", n);
        const char *resident[] = {NULL, "2", "3", "4"};
        setenv("WW_WAVEFRONT_TILE", "8x2s8", 1);
        for (int k = 0; k < 4; k++) {
            char c[32];
            if (resident[k])
                setenv("WW_WAVEFRONT_RESIDENT", resident[k], 1);
            double v = NAN;
            cell(c, sizeof c, time_measure(fast, &dtw, &A, &B, lg <= 16 ? 3 : 1, &v));
            unsetenv("WW_WAVEFRONT_RESIDENT");
            at += snprintf(line + at, sizeof line - (size_t)at, " %s |", c);
        }
        unsetenv("WW_WAVEFRONT_TILE");
        snprintf(line + at, sizeof line - (size_t)at, "\n");
        out_line(md, line);
    }
    out_line(md, "\nA window of 10% (fraction 0.1: radius n / 10), f64: the time against the band's share of the "
                 "matrix (time ratio / area ratio: 1 is proportional):\n\n"
                 "| n | measure | full | 10% window | band / n^2 | time ratio | time ratio / area ratio | CPU check |\n"
                 "| --- | --- | --- | --- | --- | --- | --- | --- |\n");
    for (int lg = 12; lg <= max_log2; lg += 2) {
        const size_t n = (size_t)1 << lg;
        const int reps = lg <= 14 ? 11 : (lg <= 16 ? 3 : 1);
        ww_series A = ww_series_f64(a, NULL, n, 1), B = ww_series_f64(b, NULL, n, 1);
        for (int k = 0; k < 2; k++) {
            const ww_measure *full = k ? &twed : &dtw;
            ww_measure win = *full;
            ww_measure_set_window_fraction(&win, 0.1);
            double vf = NAN, vw = NAN, vc = NAN;
            const double tf = time_measure(fast, full, &A, &B, reps, &vf);
            const double tw = time_measure(fast, &win, &A, &B, reps, &vw);
            const int check = lg <= 14;
            if (check)
                time_measure(cpu, &win, &A, &B, 1, &vc);
            const double share = band_share(n, (size_t)(0.1 * (double)n));
            char c[2][32];
            cell(c[0], sizeof c[0], tf), cell(c[1], sizeof c[1], tw);
            snprintf(line, sizeof line, "| %zu | %s | %s | %s | %.3f | %.3f | %.2f | %s |\n", n, k ? "TWED" : "DTW",
                     c[0], c[1], share, tf > 0 && tw > 0 ? tw / tf : 0.0, tf > 0 && tw > 0 ? tw / tf / share : 0.0,
                     !check ? "-" : fabs(vc - vw) <= 1e-12 * fabs(vc) ? "equal" : "MISMATCH");
            out_line(md, line);
        }
    }
}

int main(int argc, char **argv)
{
    int max_log2 = argc > 1 ? atoi(argv[1]) : 20;
    FILE *md = argc > 2 ? fopen(argv[2], "w") : NULL;
    if (!ww_cuda_available()) {
        printf("GPU benchmark skipped: no CUDA backend in this build or no GPU on this machine\n");
        return 0;
    }
    ww_ctx *fast = make(WW_BACKEND_CUDA, WW_ENGINE_AUTO);
    ww_ctx *base = make(WW_BACKEND_CUDA, WW_ENGINE_CUDA_DIAGONAL);
    ww_ctx *cpu = make(WW_BACKEND_CPU, WW_ENGINE_CPU_STRIP);
    if (!fast || !base || !cpu) {
        fprintf(stderr, "could not create contexts\n");
        return 1;
    }
    printf("device: %s\n", ww_ctx_describe(fast));
    const size_t nmax = (size_t)1 << max_log2;
    double *a = malloc(nmax * sizeof(double)), *b = malloc(nmax * sizeof(double));
    float *af = malloc(nmax * sizeof(float)), *bf = malloc(nmax * sizeof(float));
    srand(42);
    for (size_t i = 0; i < nmax; i++) {
        a[i] = rand() / (RAND_MAX + 1.0);
        b[i] = rand() / (RAND_MAX + 1.0);
        af[i] = (float)a[i];
        bf[i] = (float)b[i];
    }
    if (getenv("WW_BENCH_DTW_ONLY")) { /* the measures' tables alone (issue 15) */
        if (md)
            fprintf(md, "Device: %s\n", ww_ctx_describe(fast));
        measures_tables(md, fast, cpu, a, b, af, bf, max_log2);
        if (md)
            fclose(md);
        ww_ctx_destroy(fast), ww_ctx_destroy(base), ww_ctx_destroy(cpu);
        free(a), free(b), free(af), free(bf);
        return 0;
    }
    ww_twed_params p = {1.0, 1.0, 2};
    {
        /* the fixed cost of a call: a 4 x 4 pair, all copies, launches and the synchronisation */
        ww_series A = ww_series_f64(a, NULL, 4, 1), B = ww_series_f64(b, NULL, 4, 1);
        double v = NAN, t = time_call(fast, &A, &B, &p, 21, &v);
        printf("fixed cost of a call (n = 4, f64): %.1f us\n", t * 1e6);
        if (md)
            fprintf(md, "Fixed cost of a call (n = 4, f64, median of 21): %.1f us\n\n", t * 1e6);
    }
    const char *header = "| n | fast f64 | GCUPS | fast f32 | GCUPS | per-diagonal f64 | CPU strip f64 (1 core) | "
                         "fast vs per-diagonal | f32 - f64 (rel) |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n";
    printf("\n%s", header);
    if (md)
        fprintf(md, "Device: %s\n\n%s", ww_ctx_describe(fast), header);
    for (int lg = 10; lg <= max_log2; lg++) {
        size_t n = (size_t)1 << lg;
        double cells = (double)n * (double)n;
        int reps = lg <= 14 ? 21 : (lg <= 17 ? 5 : 1);
        ww_series A = ww_series_f64(a, NULL, n, 1), B = ww_series_f64(b, NULL, n, 1);
        ww_series Af = ww_series_f32(af, NULL, n, 1), Bf = ww_series_f32(bf, NULL, n, 1);
        double v64 = NAN, v32 = NAN, vb = NAN, vc = NAN;
        double t64 = time_call(fast, &A, &B, &p, reps, &v64);
        double t32 = time_call(fast, &Af, &Bf, &p, reps, &v32);
        double tb = lg <= 18 ? time_call(base, &A, &B, &p, lg <= 14 ? 5 : 1, &vb) : -1;
        double tc = lg <= 16 ? time_call(cpu, &A, &B, &p, 1, &vc) : -1;
        if (tb >= 0 && fabs(vb - v64) > 1e-12 * fabs(v64))
            fprintf(stderr, "MISMATCH n=%zu: fast %.17g baseline %.17g\n", n, v64, vb);
        if (tc >= 0 && fabs(vc - v64) > 1e-12 * fabs(v64))
            fprintf(stderr, "MISMATCH n=%zu: fast %.17g cpu %.17g\n", n, v64, vc);
        char c64[32], c32[32], cb[32], cc[32], ratio[32];
        cell(c64, sizeof c64, t64);
        cell(c32, sizeof c32, t32);
        cell(cb, sizeof cb, tb);
        cell(cc, sizeof cc, tc);
        speedup(ratio, sizeof ratio, tb, t64);
        char line[512];
        snprintf(line, sizeof line, "| %zu | %s | %.1f | %s | %.1f | %s | %s | %s | %.1e |\n", n, c64,
                 t64 > 0 ? cells / t64 / 1e9 : 0.0, c32, t32 > 0 ? cells / t32 / 1e9 : 0.0, cb, cc, ratio,
                 fabs(v32 - v64) / fabs(v64));
        printf("%s", line);
        fflush(stdout);
        if (md) {
            fputs(line, md);
            fflush(md);
        }
    }
    /* tile shapes of the wavefront engine (rows x columns per thread, steps between barriers): the
     * choice by size (auto) against each shape forced (WW_WAVEFRONT_TILE, see dim1_shapes) */
    const char *tiles[] = {NULL, "3x1s16", "4x1s16", "8x1s16", "8x2s8", "4x4s4"};
    const int ntiles = (int)(sizeof tiles / sizeof tiles[0]);
    const char *sweep = "\n| n | auto | 3x1s16 | 4x1s16 | 8x1s16 | 8x2s8 | 4x4s4 (before) |\n"
                        "| --- | --- | --- | --- | --- | --- | --- |\n";
    printf("%s", sweep);
    if (md)
        fprintf(md,
                "\nTile shapes of the wavefront engine, R rows x C columns per thread and S steps between "
                "barriers (RxCsS; f64, time of the call):\n%s",
                sweep);
    for (int lg = 10; lg <= max_log2; lg++) {
        size_t n = (size_t)1 << lg;
        int reps = lg <= 14 ? 11 : (lg <= 16 ? 3 : 1);
        ww_series A = ww_series_f64(a, NULL, n, 1), B = ww_series_f64(b, NULL, n, 1);
        char line[512];
        int at = snprintf(line, sizeof line, "| %zu |", n);
        for (int k = 0; k < ntiles; k++) {
            char c[32];
            if (tiles[k])
                setenv("WW_WAVEFRONT_TILE", tiles[k], 1);
            else
                unsetenv("WW_WAVEFRONT_TILE");
            double v = NAN;
            double t = time_call(fast, &A, &B, &p, reps, &v);
            cell(c, sizeof c, t);
            at += snprintf(line + at, sizeof line - (size_t)at, " %s |", c);
        }
        unsetenv("WW_WAVEFRONT_TILE");
        printf("%s\n", line);
        fflush(stdout);
        if (md)
            fprintf(md, "%s\n", line);
    }
    /* series in R^dim: samples of up to 8 components in registers (zero-padded to 2, 4, 8), wider
     * ones read per cell; the per-diagonal baseline for comparison where it finishes quickly */
    {
        const size_t dims[] = {2, 3, 8, 16, 64}, vns[] = {1024, 16384, 65536};
        const char *vhead = "\n| dim | n | fast f64 | GCUPS (cells) | per-diagonal f64 | fast vs per-diagonal |\n"
                            "| --- | --- | --- | --- | --- | --- |\n";
        printf("%s", vhead);
        if (md)
            fprintf(md, "\nSeries in R^dim (f64, degree 2, time of the call):\n%s", vhead);
        const size_t vmax = (size_t)1 << (max_log2 < 16 ? max_log2 : 16);
        double *va = malloc(vmax * 64 * sizeof(double)), *vb = malloc(vmax * 64 * sizeof(double));
        for (size_t i = 0; va && vb && i < vmax * 64; i++) {
            va[i] = rand() / (RAND_MAX + 1.0);
            vb[i] = rand() / (RAND_MAX + 1.0);
        }
        for (size_t d = 0; va && vb && d < sizeof dims / sizeof dims[0]; d++)
            for (size_t q = 0; q < 3 && vns[q] <= vmax; q++) {
                const size_t dim = dims[d], n = vns[q];
                ww_series A = ww_series_f64(va, NULL, n, dim), B = ww_series_f64(vb, NULL, n, dim);
                double v = NAN, vbase = NAN;
                double t = time_call(fast, &A, &B, &p, n <= 1024 ? 11 : (n <= 16384 ? 3 : 1), &v);
                double tb = n <= 16384 && dim <= 16 ? time_call(base, &A, &B, &p, 1, &vbase) : -1;
                if (tb >= 0 && fabs(vbase - v) > 1e-12 * fabs(v))
                    fprintf(stderr, "MISMATCH dim=%zu n=%zu: fast %.17g baseline %.17g\n", dim, n, v, vbase);
                char ct[32], cb[32], ratio[32], line[256];
                cell(ct, sizeof ct, t);
                cell(cb, sizeof cb, tb);
                speedup(ratio, sizeof ratio, tb, t);
                snprintf(line, sizeof line, "| %zu | %zu | %s | %.1f | %s | %s |\n", dim, n, ct,
                         t > 0 ? (double)n * (double)n / t / 1e9 : 0.0, cb, ratio);
                printf("%s", line);
                fflush(stdout);
                if (md) {
                    fputs(line, md);
                    fflush(md);
                }
            }
        free(va), free(vb);
    }
    if (getenv("WW_BENCH_TWED_ONLY") == NULL)
        measures_tables(md, fast, cpu, a, b, af, bf, max_log2);
    if (md)
        fclose(md);
    ww_ctx_destroy(fast);
    ww_ctx_destroy(base);
    ww_ctx_destroy(cpu);
    free(a), free(b), free(af), free(bf);
    return 0;
}
