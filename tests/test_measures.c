#define _POSIX_C_SOURCE 200809L /* popen */
/* The measure contract: measure descriptors, DTW, and the Sakoe-Chiba window of every measure,
 * checked against plain full-matrix references written here from the definitions (wavewarp.h),
 * independently of the library's code. */
#include "ww_test.h"

#include "measures/window.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ plain references */

/* DTW, the full matrix: squared Euclidean cost, D[i][j] for i, j >= 1 inside the band of the
 * samples (i - 1, j - 1). */
static double dtw_plain(const double *a, size_t na, const double *b, size_t nb, size_t dim, size_t r)
{
    unsigned char *in = ww_test_band_cells(na, nb, r);
    double *D = malloc((na + 1) * (nb + 1) * sizeof(double));
    const size_t w = nb + 1;
    for (size_t k = 0; k < (na + 1) * w; k++)
        D[k] = INFINITY;
    D[0] = 0;
    for (size_t i = 1; i <= na; i++)
        for (size_t j = 1; j <= nb; j++) {
            if (!in[(i - 1) * nb + (j - 1)])
                continue;
            double cost = 0;
            for (size_t k = 0; k < dim; k++) {
                const double d = a[(i - 1) * dim + k] - b[(j - 1) * dim + k];
                cost += d * d;
            }
            double best = D[(i - 1) * w + j];
            if (D[i * w + j - 1] < best)
                best = D[i * w + j - 1];
            if (D[(i - 1) * w + j - 1] < best)
                best = D[(i - 1) * w + j - 1];
            D[i * w + j] = cost + best;
        }
    const double out = D[na * w + nb];
    free(D);
    free(in);
    return out;
}

static double lp(const double *x, const double *y, size_t dim, int p)
{
    if (dim == 1)
        return fabs(x[0] - y[0]);
    double acc = 0;
    for (size_t k = 0; k < dim; k++)
        acc += pow(fabs(x[k] - y[k]), p);
    return pow(acc, 1.0 / p);
}

/* TWED, the full matrix (README's recurrence), D[i][j] for i, j >= 1 inside the band of the
 * samples (i - 1, j - 1), as aeon's twe_distance. Stamps NULL: 1, 2, ... */
static double twed_plain(const double *a, const double *ta, size_t na, const double *b, const double *tb, size_t nb,
                         size_t dim, double nu, double lambda, int degree, size_t r)
{
    unsigned char *in = ww_test_band_cells(na, nb, r);
    const size_t w = nb + 1;
    double *D = malloc((na + 1) * w * sizeof(double));
    double *A = calloc((na + 1) * dim, sizeof(double)), *B = calloc((nb + 1) * dim, sizeof(double));
    double *TA = calloc(na + 1, sizeof(double)), *TB = calloc(nb + 1, sizeof(double));
    memcpy(A + dim, a, na * dim * sizeof(double));
    memcpy(B + dim, b, nb * dim * sizeof(double));
    for (size_t i = 1; i <= na; i++)
        TA[i] = ta ? ta[i - 1] : (double)i;
    for (size_t j = 1; j <= nb; j++)
        TB[j] = tb ? tb[j - 1] : (double)j;
    for (size_t k = 0; k < (na + 1) * w; k++)
        D[k] = INFINITY;
    D[0] = 0;
    for (size_t i = 1; i <= na; i++)
        for (size_t j = 1; j <= nb; j++) {
            if (!in[(i - 1) * nb + (j - 1)])
                continue;
            const double del_a = D[(i - 1) * w + j] + lp(A + i * dim, A + (i - 1) * dim, dim, degree) +
                                 nu * (TA[i] - TA[i - 1]) + lambda;
            const double del_b = D[i * w + j - 1] + lp(B + j * dim, B + (j - 1) * dim, dim, degree) +
                                 nu * (TB[j] - TB[j - 1]) + lambda;
            const double match = D[(i - 1) * w + j - 1] + lp(A + i * dim, B + j * dim, dim, degree) +
                                 lp(A + (i - 1) * dim, B + (j - 1) * dim, dim, degree) +
                                 nu * (fabs(TA[i] - TB[j]) + fabs(TA[i - 1] - TB[j - 1]));
            double best = del_a < del_b ? del_a : del_b;
            D[i * w + j] = match < best ? match : best;
        }
    const double out = D[na * w + nb];
    free(D);
    free(A);
    free(B);
    free(TA);
    free(TB);
    free(in);
    return out;
}

static void fill(ww_rng *r, double *x, size_t n)
{
    for (size_t k = 0; k < n; k++)
        x[k] = ww_rng_uniform(r) * 2.0 - 1.0;
}

/* ------------------------------------------------------------------ descriptors */

void test_measure_descriptors(void)
{
    ww_measure t = ww_measure_twed(0.5, 0.25, 3), d = ww_measure_dtw();
    CHECK(t.kind == WW_MEASURE_TWED && t.window == WW_NO_WINDOW);
    CHECK(t.params.twed.nu == 0.5 && t.params.twed.lambda == 0.25 && t.params.twed.degree == 3);
    CHECK(d.kind == WW_MEASURE_DTW && d.window == WW_NO_WINDOW);
    CHECK(strcmp(ww_measure_name(&t), "twed") == 0 && strcmp(ww_measure_name(&d), "dtw") == 0);
    CHECK(strcmp(ww_measure_name(NULL), "unknown") == 0);
    CHECK_STATUS(ww_measure_check(&t), WW_OK);
    CHECK_STATUS(ww_measure_check(&d), WW_OK);
    CHECK_STATUS(ww_measure_check(NULL), WW_ERR_NULL_POINTER);
    CHECK_STATUS(ww_measure_set_window(NULL, 3), WW_ERR_NULL_POINTER);
    CHECK_STATUS(ww_measure_set_window(&d, 3), WW_OK);
    CHECK(d.window == 3);
    ww_measure bad = ww_measure_twed(-1, 1, 2);
    CHECK_STATUS(ww_measure_check(&bad), WW_ERR_PARAM);
    bad = ww_measure_twed(1, NAN, 2);
    CHECK_STATUS(ww_measure_check(&bad), WW_ERR_PARAM);
    bad = ww_measure_twed(1, 1, 0);
    CHECK_STATUS(ww_measure_check(&bad), WW_ERR_PARAM);
    bad = ww_measure_dtw();
    bad.kind = (ww_measure_kind)99;
    CHECK_STATUS(ww_measure_check(&bad), WW_ERR_MEASURE);
    CHECK(strcmp(ww_measure_name(&bad), "unknown") == 0);

    /* every computing call refuses a NULL or unknown measure before anything else */
    ww_ctx *ctx = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_AUTO, 1);
    double v[4] = {1, 2, 3, 4}, out[4];
    size_t idx[2];
    ww_series s = ww_series_f64(v, NULL, 4, 1);
    ww_dataset x = ww_dataset_f64(v, NULL, NULL, 2, 2, 1);
    CHECK_STATUS(ww_distance(ctx, NULL, &s, &s, out), WW_ERR_NULL_POINTER);
    CHECK_STATUS(ww_distance(ctx, &bad, &s, &s, out), WW_ERR_MEASURE);
    CHECK_STATUS(ww_pairwise(ctx, NULL, &x, NULL, out, NULL), WW_ERR_NULL_POINTER);
    CHECK_STATUS(ww_pairwise(ctx, &bad, &x, NULL, out, NULL), WW_ERR_MEASURE);
    CHECK_STATUS(ww_knn(ctx, NULL, &x, &x, 1, idx, out, NULL), WW_ERR_NULL_POINTER);
    CHECK_STATUS(ww_knn(ctx, &bad, &x, &x, 1, idx, out, NULL), WW_ERR_MEASURE);
    ww_index *ix = NULL;
    CHECK_STATUS(ww_index_create(ctx, &x, NULL, &ix), WW_ERR_NULL_POINTER);
    CHECK_STATUS(ww_index_create(ctx, &x, &bad, &ix), WW_ERR_MEASURE);
    CHECK(ix == NULL);
    bad = ww_measure_twed(-1, 1, 2);
    CHECK_STATUS(ww_distance(ctx, &bad, &s, &s, out), WW_ERR_PARAM);
    CHECK(strstr(ww_strerror(WW_ERR_UNSUPPORTED), "not available") != NULL);
    CHECK(strstr(ww_strerror(WW_ERR_MEASURE), "measure") != NULL);
    ww_ctx_destroy(ctx);
}

/* DTW reads no stamps: bad ones are neither read nor refused; TWED refuses them. */
void test_dtw_ignores_stamps(void)
{
    ww_ctx *ctx = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_AUTO, 1);
    double a[5] = {1, 2, 3, 2, 1}, b[4] = {0, 2, 4, 1}, ta[5] = {5, 4, NAN, 2, 1}, out = 0, ref = 0;
    ww_series sa = ww_series_f64(a, ta, 5, 1), sb = ww_series_f64(b, NULL, 4, 1), plain = ww_series_f64(a, NULL, 5, 1);
    ww_measure d = ww_measure_dtw(), t = ww_measure_twed(1, 1, 2);
    CHECK_STATUS(ww_distance(ctx, &d, &sa, &sb, &out), WW_OK);
    CHECK_STATUS(ww_distance(ctx, &d, &plain, &sb, &ref), WW_OK);
    CHECK(out == ref);
    CHECK(out == dtw_plain(a, 5, b, 4, 1, SIZE_MAX));
    CHECK_STATUS(ww_distance(ctx, &t, &sa, &sb, &out), WW_ERR_STAMPS);
    ww_dataset x = ww_dataset_f64(a, ta, NULL, 1, 5, 1);
    double m[1];
    CHECK_STATUS(ww_pairwise(ctx, &d, &x, NULL, m, NULL), WW_OK);
    CHECK_STATUS(ww_pairwise(ctx, &t, &x, NULL, m, NULL), WW_ERR_STAMPS);
    ww_ctx_destroy(ctx);
}

/* ------------------------------------------------------------------ the band */

/* ww_band_row against the definition, and the DP's rows; the band holds both corners,
 * its rows are intervals that never move left, and it always has a path (radius 0 included). */
void test_window_band_rows(void)
{
    for (size_t n = 1; n <= 23; n++)
        for (size_t m = 1; m <= 23; m++)
            for (size_t r = 0; r <= 25; r += (r < 6 ? 1 : 7)) {
                unsigned char *in = ww_test_band_cells(n, m, r);
                size_t prev_lo = 0, prev_hi = 0;
                for (size_t p = 0; p < n; p++) {
                    size_t lo, hi;
                    ww_band_row(n, m, r, p, &lo, &hi);
                    for (size_t q = 0; q < m; q++)
                        CHECK(in[p * m + q] == (q >= lo && q <= hi));
                    CHECK(lo >= prev_lo && hi >= prev_hi);
                    CHECK(p == 0 || lo <= prev_hi + 1); /* connected: a path exists */
                    prev_lo = lo;
                    prev_hi = hi;
                }
                CHECK(in[0] && in[n * m - 1]);
                /* the DP's rows, and the closed-form area */
                uint64_t cells = 0;
                for (size_t i = 1; i <= n; i++) {
                    size_t lo, hi;
                    ww_window_row(n, m, r, i, &lo, &hi);
                    CHECK(lo >= 1 && hi <= m && lo <= hi);
                    for (size_t j = 1; j <= m; j++)
                        CHECK(in[(i - 1) * m + (j - 1)] == (j >= lo && j <= hi));
                    cells += hi - lo + 1;
                }
                CHECK(ww_window_cells(n, m, r) == cells);
                free(in);
            }
}

/* ------------------------------------------------------------------ engines against the references */

static const ww_engine cpu_engines[] = {WW_ENGINE_CPU_REFERENCE, WW_ENGINE_CPU_BAND, WW_ENGINE_CPU_STRIP};

/* Every CPU engine, DTW and TWED, with and without windows, lengths 1 to ~600 (past a strip of 256
 * rows), dims 1 to 5, double and float input, against the plain references. */
void test_measures_engines_vs_plain(void)
{
    ww_rng rng = {0x5eed1234};
    ww_ctx *ctx[3];
    for (int e = 0; e < 3; e++)
        ctx[e] = ww_test_ctx(WW_BACKEND_CPU, cpu_engines[e], 1);
    const size_t radii[] = {SIZE_MAX, 0, 1, 3, 17, 300};
    for (int trial = 0; trial < 60; trial++) {
        const size_t dim = 1 + ww_rng_below(&rng, trial % 3 == 0 ? 5 : 1);
        const size_t big = trial % 5 == 0 ? 600 : 40;
        const size_t na = 1 + ww_rng_below(&rng, big), nb = trial % 4 == 0 ? na : 1 + ww_rng_below(&rng, big);
        double *a = malloc(na * dim * sizeof(double)), *b = malloc(nb * dim * sizeof(double));
        float *af = malloc(na * dim * sizeof(float)), *bf = malloc(nb * dim * sizeof(float));
        double *ta = malloc(na * sizeof(double)), *tb = malloc(nb * sizeof(double));
        fill(&rng, a, na * dim);
        fill(&rng, b, nb * dim);
        for (size_t k = 0; k < na * dim; k++)
            a[k] = af[k] = (float)a[k]; /* exact in both types */
        for (size_t k = 0; k < nb * dim; k++)
            b[k] = bf[k] = (float)b[k];
        ta[0] = ww_rng_uniform(&rng);
        for (size_t k = 1; k < na; k++)
            ta[k] = ta[k - 1] + ww_rng_uniform(&rng);
        tb[0] = ww_rng_uniform(&rng);
        for (size_t k = 1; k < nb; k++)
            tb[k] = tb[k - 1] + ww_rng_uniform(&rng);
        const size_t r = radii[trial % 6];
        const double nu = trial % 2 ? 0.5 : 0.001, lambda = trial % 3 ? 1.0 : 0.0;
        const int degree = 1 + trial % 3;
        const double want_dtw = dtw_plain(a, na, b, nb, dim, r);
        const double want_twed = twed_plain(a, ta, na, b, tb, nb, dim, nu, lambda, degree, r);
        CHECK(isfinite(want_dtw) && isfinite(want_twed)); /* the band always holds a path */
        ww_measure dtw = ww_measure_dtw(), twed = ww_measure_twed(nu, lambda, degree);
        ww_measure_set_window(&dtw, r);
        ww_measure_set_window(&twed, r);
        ww_series sa = ww_series_f64(a, ta, na, dim), sb = ww_series_f64(b, tb, nb, dim);
        ww_series fa = ww_series_f32(af, NULL, na, dim), fb = ww_series_f32(bf, NULL, nb, dim);
        for (int e = 0; e < 3; e++) {
            double got = NAN, swapped = NAN, gotf = NAN;
            CHECK_STATUS(ww_distance(ctx[e], &dtw, &sa, &sb, &got), WW_OK);
            CHECK_STATUS(ww_distance(ctx[e], &dtw, &sb, &sa, &swapped), WW_OK);
            CHECK_STATUS(ww_distance(ctx[e], &dtw, &fa, &fb, &gotf), WW_OK);
            CHECK_CLOSE(got, want_dtw, 1e-12);
            if (!(fabs(got - want_dtw) <= 1e-12 * fmax(1, want_dtw)))
                fprintf(stderr, "  (dtw: engine %d, lengths %zu x %zu, dim %zu, radius %zu)\n", e, na, nb, dim, r);
            CHECK(got == swapped); /* symmetric, bit for bit */
            CHECK(got == gotf);    /* float input is computed in double */
            CHECK_STATUS(ww_distance(ctx[e], &twed, &sa, &sb, &got), WW_OK);
            CHECK_STATUS(ww_distance(ctx[e], &twed, &sb, &sa, &swapped), WW_OK);
            CHECK_CLOSE(got, want_twed, 1e-12);
            CHECK_CLOSE(swapped, want_twed, 1e-12);
        }
        free(a);
        free(b);
        free(af);
        free(bf);
        free(ta);
        free(tb);
    }
    for (int e = 0; e < 3; e++)
        ww_ctx_destroy(ctx[e]);
}

/* A window only ever removes paths; radius >= the longer length is no window; and DTW with a
 * window of 0 on equal lengths is the squared Euclidean distance. */
void test_window_properties(void)
{
    ww_rng rng = {77};
    ww_ctx *ctx = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_AUTO, 1);
    double a[300], b[300];
    fill(&rng, a, 300);
    fill(&rng, b, 300);
    const size_t lengths[][2] = {{300, 300}, {300, 170}, {41, 300}, {1, 300}};
    for (int c = 0; c < 4; c++) {
        const size_t na = lengths[c][0], nb = lengths[c][1];
        ww_series sa = ww_series_f64(a, NULL, na, 1), sb = ww_series_f64(b, NULL, nb, 1);
        for (int kind = 0; kind < 2; kind++) {
            ww_measure m = kind ? ww_measure_dtw() : ww_measure_twed(0.01, 0.5, 2);
            double prev = INFINITY, none = 0, wide = 0;
            for (size_t r = 0; r <= 310; r += 10) {
                double d;
                ww_measure_set_window(&m, r);
                CHECK_STATUS(ww_distance(ctx, &m, &sa, &sb, &d), WW_OK);
                CHECK(d <= prev); /* a wider band: more paths */
                prev = d;
            }
            ww_measure_set_window(&m, WW_NO_WINDOW);
            CHECK_STATUS(ww_distance(ctx, &m, &sa, &sb, &none), WW_OK);
            ww_measure_set_window(&m, 301);
            CHECK_STATUS(ww_distance(ctx, &m, &sa, &sb, &wide), WW_OK);
            CHECK(none == wide && prev == none);
        }
    }
    ww_measure d0 = ww_measure_dtw();
    ww_measure_set_window(&d0, 0);
    ww_series sa = ww_series_f64(a, NULL, 300, 1), sb = ww_series_f64(b, NULL, 300, 1);
    double got, sq = 0;
    for (size_t k = 0; k < 300; k++)
        sq += (a[k] - b[k]) * (a[k] - b[k]);
    CHECK_STATUS(ww_distance(ctx, &d0, &sa, &sb, &got), WW_OK);
    CHECK_CLOSE(got, sq, 1e-13);
    ww_ctx_destroy(ctx);
}

/* ------------------------------------------------------------------ matrices, kNN, indexes */

/* ww_pairwise against ww_distance entry by entry: DTW and TWED, windows, equal and ragged lengths,
 * dims 1 and 3, self and cross, blocks, float output, 1 and 2 threads. */
void test_measures_pairwise_vs_pairs(void)
{
    ww_rng rng = {4242};
    ww_ctx *one = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_AUTO, 1), *two = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_AUTO, 2);
    const size_t nx = 45, ny = 38;
    for (int c = 0; c < 8; c++) {
        const size_t dim = c % 4 < 2 ? 1 : 3;
        const int ragged = c % 2;
        const size_t r = c < 4 ? (c % 2 ? 4 : 0) : (c % 2 ? WW_NO_WINDOW : 9);
        size_t xo[46], yo[39];
        xo[0] = yo[0] = 0;
        for (size_t i = 0; i < nx; i++)
            xo[i + 1] = xo[i] + (ragged ? 5 + ww_rng_below(&rng, 60) : 33);
        for (size_t j = 0; j < ny; j++)
            yo[j + 1] = yo[j] + (ragged ? 1 + ww_rng_below(&rng, 80) : 33);
        double *xv = malloc(xo[nx] * dim * sizeof(double)), *yv = malloc(yo[ny] * dim * sizeof(double));
        fill(&rng, xv, xo[nx] * dim);
        fill(&rng, yv, yo[ny] * dim);
        ww_dataset x = ww_dataset_f64(xv, NULL, ragged ? xo : NULL, nx, 33, dim);
        ww_dataset y = ww_dataset_f64(yv, NULL, ragged ? yo : NULL, ny, 33, dim);
        for (int kind = 0; kind < 2; kind++) {
            ww_measure m = kind ? ww_measure_dtw() : ww_measure_twed(0.1, 0.7, 2);
            ww_measure_set_window(&m, r);
            double *self = malloc(nx * nx * sizeof(double)), *cross = malloc(nx * ny * sizeof(double));
            float *cross32 = malloc(nx * ny * sizeof(float));
            CHECK_STATUS(ww_pairwise(c % 3 ? two : one, &m, &x, NULL, self, NULL), WW_OK);
            CHECK_STATUS(ww_pairwise(c % 3 ? one : two, &m, &x, &y, cross, NULL), WW_OK);
            ww_pairwise_options o = ww_pairwise_options_default();
            o.out_dtype = WW_F32;
            CHECK_STATUS(ww_pairwise(two, &m, &x, &y, cross32, &o), WW_OK);
            for (size_t i = 0; i < nx; i++) {
                ww_series a;
                ww_dataset_series(&x, i, &a);
                for (size_t j = 0; j < nx; j++) {
                    ww_series b;
                    ww_dataset_series(&x, j, &b);
                    double d;
                    CHECK_STATUS(ww_distance(one, &m, &a, &b, &d), WW_OK);
                    CHECK_CLOSE(self[i * nx + j], i == j ? 0.0 : d, 1e-12);
                }
                for (size_t j = 0; j < ny; j++) {
                    ww_series b;
                    ww_dataset_series(&y, j, &b);
                    double d;
                    CHECK_STATUS(ww_distance(one, &m, &a, &b, &d), WW_OK);
                    CHECK_CLOSE(cross[i * ny + j], d, 1e-12);
                    CHECK(cross32[i * ny + j] == (float)cross[i * ny + j]);
                }
            }
            /* a block of the self matrix with a stride */
            double *blk = malloc(nx * nx * sizeof(double));
            for (size_t k = 0; k < nx * nx; k++)
                blk[k] = NAN;
            o = ww_pairwise_options_default();
            o.row_begin = 3, o.row_end = 30, o.col_begin = 10, o.col_end = 44, o.out_stride = nx;
            CHECK_STATUS(ww_pairwise(two, &m, &x, NULL, blk, &o), WW_OK);
            for (size_t i = 3; i < 30; i++)
                for (size_t j = 10; j < 44; j++)
                    CHECK_CLOSE(blk[(i - 3) * nx + (j - 10)], self[i * nx + j], 1e-12);
            free(blk);
            free(self);
            free(cross);
            free(cross32);
        }
        free(xv);
        free(yv);
    }
    ww_ctx_destroy(one);
    ww_ctx_destroy(two);
}

/* Progress rises, never past its total: seen = {last done, total, calls}. */
static int monotone_progress(uint64_t done, uint64_t total, void *user)
{
    uint64_t *seen = (uint64_t *)user;
    CHECK(done >= seen[0] && done <= total);
    seen[0] = done;
    seen[1] = total;
    seen[2]++;
    return 0;
}

void test_measures_knn_index_progress(void)
{
    ww_rng rng = {99};
    ww_ctx *ctx = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_AUTO, 2);
    const size_t n = 50, nq = 9, len = 40;
    double xv[50 * 40], qv[9 * 40];
    fill(&rng, xv, n * len);
    fill(&rng, qv, nq * len);
    ww_dataset x = ww_dataset_f64(xv, NULL, NULL, n, len, 1), q = ww_dataset_f64(qv, NULL, NULL, nq, len, 1);
    ww_measure m = ww_measure_dtw();
    ww_measure_set_window(&m, 5);
    double rows[9 * 50], dist[9 * 3], dist2[9 * 3], again[9 * 50];
    size_t idx[9 * 3], idx2[9 * 3];
    CHECK_STATUS(ww_pairwise(ctx, &m, &q, &x, rows, NULL), WW_OK);
    CHECK_STATUS(ww_knn(ctx, &m, &q, &x, 3, idx, dist, NULL), WW_OK);
    for (size_t i = 0; i < nq; i++) {
        /* brute force: the 3 smallest of the row, ties by index */
        for (size_t rnk = 0; rnk < 3; rnk++) {
            size_t best = SIZE_MAX;
            for (size_t j = 0; j < n; j++) {
                int taken = 0;
                for (size_t k = 0; k < rnk; k++)
                    taken |= idx[i * 3 + k] == j;
                if (!taken && (best == SIZE_MAX || rows[i * n + j] < rows[i * n + best]))
                    best = j;
            }
            CHECK(idx[i * 3 + rnk] == best);
            CHECK(dist[i * 3 + rnk] == rows[i * n + best]);
        }
    }
    ww_index *ix = NULL;
    CHECK_STATUS(ww_index_create(ctx, &x, &m, &ix), WW_OK);
    CHECK_STATUS(ww_index_pairwise(ctx, ix, &q, again, NULL), WW_OK);
    CHECK(memcmp(again, rows, sizeof rows) == 0);
    CHECK_STATUS(ww_index_knn(ctx, ix, &q, 3, idx2, dist2, NULL), WW_OK);
    CHECK(memcmp(idx, idx2, sizeof idx) == 0 && memcmp(dist, dist2, sizeof dist) == 0);
    ww_index_destroy(ix);

    /* the band's cells, ending at their total */
    uint64_t seen[3] = {0, 0, 0};
    ww_pairwise_options o = ww_pairwise_options_default();
    o.progress = monotone_progress;
    o.progress_user = seen;
    double self[50 * 50];
    CHECK_STATUS(ww_pairwise(ctx, &m, &x, NULL, self, &o), WW_OK);
    CHECK(seen[0] == seen[1]);
    CHECK(seen[1] == (uint64_t)(n * (n - 1) / 2) * ww_window_cells(len, len, 5));
    ww_ctx_destroy(ctx);
}

/* ------------------------------------------------------------------ TWED did not move */

/* The checksums of every TWED result of the CPU engines, recorded with the commit before the
 * measure refactor (tests/twed_checksums_cpu.txt), must come out the same, bit for bit. */
void test_twed_checksums(void)
{
    char cmd[4096], line[512], want[512];
    snprintf(cmd, sizeof cmd, "'%s' cpu", WW_CHECKSUMS_PATH);
    snprintf(line, sizeof line, "%s/tests/twed_checksums_cpu.txt", WW_SOURCE_DIR);
    FILE *recorded = fopen(line, "r"), *now = popen(cmd, "r");
    CHECK(recorded != NULL && now != NULL);
    if (recorded == NULL || now == NULL)
        return;
    int lines = 0;
    while (fgets(want, sizeof want, recorded)) {
        if (fgets(line, sizeof line, now) == NULL) {
            CHECK(!"fewer checksum lines than recorded");
            break;
        }
        if (strcmp(line, want) != 0) {
            ww_test_failures++;
            fprintf(stderr, "  checksum differs: now %s  recorded %s", line, want);
        }
        lines++;
    }
    CHECK(fgets(line, sizeof line, now) == NULL);
    CHECK(lines > 100);
    fclose(recorded);
    CHECK(pclose(now) == 0);
}

/* aeon's window: a fraction of the shorter series, a radius per pair, in double as aeon computes
 * it (0.29 * 100 is 28.999..., radius 28); a ragged matrix gives each pair its own radius. */
void test_window_fraction(void)
{
    ww_measure m = ww_measure_dtw();
    CHECK_STATUS(ww_measure_set_window_fraction(NULL, 0.5), WW_ERR_NULL_POINTER);
    CHECK_STATUS(ww_measure_set_window_fraction(&m, -0.1), WW_ERR_PARAM);
    CHECK_STATUS(ww_measure_set_window_fraction(&m, 1.5), WW_ERR_PARAM);
    CHECK_STATUS(ww_measure_set_window_fraction(&m, NAN), WW_ERR_PARAM);
    CHECK(m.window == WW_NO_WINDOW && m.window_fraction < 0);
    CHECK_STATUS(ww_measure_set_window_fraction(&m, 0.29), WW_OK);
    CHECK(ww_measure_radius(&m, 100, 300) == 28);
    CHECK(ww_measure_radius(&m, 300, 100) == 28);
    CHECK_STATUS(ww_measure_set_window(&m, 7), WW_OK); /* a radius replaces the fraction */
    CHECK(ww_measure_radius(&m, 100, 300) == 7 && m.window_fraction < 0);
    CHECK_STATUS(ww_measure_set_window_fraction(&m, 0.1), WW_OK); /* and the reverse */
    CHECK(m.window == WW_NO_WINDOW && ww_measure_radius(&m, 50, 60) == 5);
    CHECK(ww_measure_radius(NULL, 5, 5) == WW_NO_WINDOW);
    /* the cells a pair costs: n m, or the band's */
    CHECK(ww_measure_cells(&m, 40, 33) == ww_window_cells(40, 33, 3)); /* fraction 0.1 of 33: radius 3 */
    ww_measure plain = ww_measure_twed(0.001, 1, 2);
    CHECK(ww_measure_cells(&plain, 40, 33) == 40u * 33u);
    ww_measure_set_window(&plain, 0);
    CHECK(ww_measure_cells(&plain, 40, 40) == 40u && ww_measure_cells(&plain, 40, 33) == ww_window_cells(40, 33, 0));
    ww_measure_set_window(&plain, 33); /* as wide as the shorter series: the whole matrix */
    CHECK(ww_measure_cells(&plain, 40, 33) == 40u * 33u);
    /* lengths no call takes: n m saturates, and a window's band is not counted past 2^32 (it
     * divided by zero at SIZE_MAX, wrapped, and looped over 10^10 rows) */
    ww_measure wide = ww_measure_dtw();
    CHECK(ww_measure_cells(&wide, SIZE_MAX, SIZE_MAX) == UINT64_MAX);
    CHECK(ww_measure_cells(&wide, (size_t)1 << 40, (size_t)1 << 20) == (uint64_t)1 << 60);
    ww_measure_set_window(&wide, 3);
    CHECK(ww_measure_cells(&wide, SIZE_MAX, SIZE_MAX / 3) == UINT64_MAX);
    CHECK(ww_measure_cells(&wide, SIZE_MAX, SIZE_MAX) == UINT64_MAX);
    CHECK(ww_measure_cells(&wide, 10000000000ull, 10000000001ull) == UINT64_MAX);
    CHECK(ww_measure_cells(&wide, WW_WINDOW_MAX_LENGTH - 1, WW_WINDOW_MAX_LENGTH - 1) ==
          ww_window_cells(WW_WINDOW_MAX_LENGTH - 1, WW_WINDOW_MAX_LENGTH - 1, 3));
    /* a fraction set past the setter's check: no out-of-range conversion, the whole matrix */
    wide.window = WW_NO_WINDOW;
    wide.window_fraction = 1e300;
    CHECK(ww_measure_radius(&wide, 100, 100) == WW_NO_WINDOW && ww_measure_cells(&wide, 40, 33) == 40u * 33u);
    ww_measure bad = ww_measure_dtw();
    bad.window_fraction = 2.0;
    CHECK_STATUS(ww_measure_check(&bad), WW_ERR_PARAM);
    bad.window_fraction = NAN;
    CHECK_STATUS(ww_measure_check(&bad), WW_ERR_PARAM);

    ww_rng rng = {31337};
    ww_ctx *ctx = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_AUTO, 2);
    const size_t n = 40;
    size_t off[41];
    off[0] = 0;
    for (size_t i = 0; i < n; i++)
        off[i + 1] = off[i] + 3 + ww_rng_below(&rng, 70);
    double *v = malloc(off[n] * sizeof(double)), *got = malloc(n * n * sizeof(double));
    fill(&rng, v, off[n]);
    ww_dataset x = ww_dataset_f64(v, NULL, off, n, 0, 1);
    for (int kind = 0; kind < 2; kind++) {
        ww_measure f = kind ? ww_measure_dtw() : ww_measure_twed(0.05, 0.5, 2);
        ww_measure_set_window_fraction(&f, kind ? 0.1 : 0.23);
        CHECK_STATUS(ww_pairwise(ctx, &f, &x, NULL, got, NULL), WW_OK);
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < n; j++) {
                ww_series a, b;
                ww_dataset_series(&x, i, &a);
                ww_dataset_series(&x, j, &b);
                ww_measure r = f;
                ww_measure_set_window(&r, ww_measure_radius(&f, a.length, b.length));
                double want = 0;
                CHECK_STATUS(ww_distance(ctx, &r, &a, &b, &want), WW_OK);
                CHECK_CLOSE(got[i * n + j], i == j ? 0.0 : want, 1e-12);
            }
    }
    /* a fraction of 1 is no window */
    ww_measure one = ww_measure_dtw(), none = ww_measure_dtw();
    ww_measure_set_window_fraction(&one, 1.0);
    double *g2 = malloc(n * n * sizeof(double));
    CHECK_STATUS(ww_pairwise(ctx, &one, &x, NULL, got, NULL), WW_OK);
    CHECK_STATUS(ww_pairwise(ctx, &none, &x, NULL, g2, NULL), WW_OK);
    CHECK(memcmp(got, g2, n * n * sizeof(double)) == 0);
    free(g2);
    free(v);
    free(got);
    ww_ctx_destroy(ctx);
}

/* kNN over several chunks of queries with a window: progress rises to exactly its total; DTW does
 * not check the stamps of later chunks either (it reads none). */

void test_knn_chunks_window_progress(void)
{
    ww_rng rng = {2024};
    ww_ctx *ctx = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_AUTO, 2);
    const size_t nq = 600, n = 20, len = 12; /* 600 queries: more than one chunk of 256 */
    double *qv = malloc(nq * len * sizeof(double)), *qt = malloc(nq * len * sizeof(double)), xv[20 * 12];
    fill(&rng, qv, nq * len);
    fill(&rng, xv, n * len);
    for (size_t k = 0; k < nq * len; k++)
        qt[k] = k == 300 * len ? NAN : (double)k; /* a bad stamp in the second chunk */
    ww_dataset q = ww_dataset_f64(qv, qt, NULL, nq, len, 1), x = ww_dataset_f64(xv, NULL, NULL, n, len, 1);
    ww_measure m = ww_measure_dtw();
    ww_measure_set_window(&m, 2);
    size_t *idx = malloc(nq * 2 * sizeof(size_t));
    double *dist = malloc(nq * 2 * sizeof(double));
    uint64_t seen[3] = {0, 0, 0};
    ww_pairwise_options o = ww_pairwise_options_default();
    o.progress = monotone_progress;
    o.progress_user = seen;
    CHECK_STATUS(ww_knn(ctx, &m, &q, &x, 2, idx, dist, &o), WW_OK);
    CHECK(seen[2] > 1 && seen[0] == seen[1] && seen[1] == (uint64_t)nq * len * n * len);
    /* the same queries one by one */
    for (size_t i = 0; i < nq; i += 97) {
        ww_series a;
        ww_dataset_series(&q, i, &a);
        double best = INFINITY;
        for (size_t j = 0; j < n; j++) {
            ww_series b;
            ww_dataset_series(&x, j, &b);
            double d;
            CHECK_STATUS(ww_distance(ctx, &m, &a, &b, &d), WW_OK);
            best = d < best ? d : best;
        }
        CHECK(dist[i * 2] == best);
    }
    ww_measure t = ww_measure_twed(0.001, 1, 2); /* TWED reads the stamps: refused, nothing written */
    dist[0] = -1;
    CHECK_STATUS(ww_knn(ctx, &t, &q, &x, 2, idx, dist, NULL), WW_ERR_STAMPS);
    CHECK(dist[0] == -1);
    free(qv);
    free(qt);
    free(idx);
    free(dist);
    ww_ctx_destroy(ctx);
}

/* Where the last call ran: AUTO before any, then the CPU on a CPU context. (A GPU context handing
 * work to the CPU is tested in test_cuda.c.) */
void test_ctx_last_backend(void)
{
    CHECK(ww_ctx_last_backend(NULL) == WW_BACKEND_AUTO);
    ww_ctx *ctx = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_AUTO, 1);
    CHECK(ww_ctx_last_backend(ctx) == WW_BACKEND_AUTO);
    double v[3] = {1, 2, 3}, d;
    ww_series s = ww_series_f64(v, NULL, 3, 1);
    ww_measure m = ww_measure_dtw();
    CHECK_STATUS(ww_distance(ctx, &m, &s, &s, &d), WW_OK);
    CHECK(ww_ctx_last_backend(ctx) == WW_BACKEND_CPU);
    ww_ctx_destroy(ctx);
}
