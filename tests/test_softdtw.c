/* Soft-DTW (issue 14): values, divergences, gradients and batches, against plain full-matrix
 * references written here from the definitions (wavewarp.h), independently of the library. */
#include "ww_test.h"
#include "measures/softmath.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef WW_TEST_CUDA
#include <cuda_runtime.h>
#endif

/* ------------------------------------------------------------------ plain references */

static double sd_cost(const double *a, const double *b, size_t i, size_t j, size_t dim)
{
    double c = 0;
    for (size_t k = 0; k < dim; k++) {
        const double d = a[(i - 1) * dim + k] - b[(j - 1) * dim + k];
        c += d * d;
    }
    return c;
}

/* -gamma log sum exp(-v / gamma) of the finite values, by the max of -v / gamma. */
static double sd_softmin(const double *v, int n, double gamma)
{
    double mx = -INFINITY;
    for (int k = 0; k < n; k++)
        if (-v[k] / gamma > mx)
            mx = -v[k] / gamma;
    if (mx == -INFINITY)
        return INFINITY;
    double s = 0;
    for (int k = 0; k < n; k++)
        s += exp(-v[k] / gamma - mx);
    return -gamma * (log(s) + mx);
}

/* Value, and when ga/gb are given the gradients (Cuturi and Blondel's algorithm 2 on the padded
 * matrices, cells outside the band excluded). */
static double sd_plain(const double *a, size_t na, const double *b, size_t nb, size_t dim, double gamma, size_t r,
                       double *ga, double *gb)
{
    unsigned char *in = ww_test_band_cells(na, nb, r);
    const size_t w = nb + 2;
    double *R = malloc((na + 2) * w * sizeof(double)), *E = calloc((na + 2) * w, sizeof(double));
    for (size_t k = 0; k < (na + 2) * w; k++)
        R[k] = INFINITY;
    R[0] = 0;
    for (size_t i = 1; i <= na; i++)
        for (size_t j = 1; j <= nb; j++) {
            if (!in[(i - 1) * nb + j - 1])
                continue;
            const double v[3] = {R[(i - 1) * w + j - 1], R[(i - 1) * w + j], R[i * w + j - 1]};
            R[i * w + j] = sd_cost(a, b, i, j, dim) + sd_softmin(v, 3, gamma);
        }
    const double value = R[na * w + nb];
    if (ga || gb) {
        /* successors outside the table or the band weigh 0: R = -inf there */
        for (size_t i = 0; i <= na + 1; i++)
            for (size_t j = 0; j <= nb + 1; j++)
                if (i == 0 || j == 0 || i > na || j > nb || !in[(i - 1) * nb + j - 1])
                    R[i * w + j] = -INFINITY;
        E[na * w + nb] = 1;
        for (size_t i = na; i >= 1; i--)
            for (size_t j = nb; j >= 1; j--) {
                if (!in[(i - 1) * nb + j - 1] || (i == na && j == nb))
                    continue;
                const double here = R[i * w + j];
                double e = 0;
                if (i < na)
                    e += E[(i + 1) * w + j] * exp((R[(i + 1) * w + j] - here - sd_cost(a, b, i + 1, j, dim)) / gamma);
                if (j < nb)
                    e += E[i * w + j + 1] * exp((R[i * w + j + 1] - here - sd_cost(a, b, i, j + 1, dim)) / gamma);
                if (i < na && j < nb)
                    e += E[(i + 1) * w + j + 1] *
                         exp((R[(i + 1) * w + j + 1] - here - sd_cost(a, b, i + 1, j + 1, dim)) / gamma);
                E[i * w + j] = e;
            }
        if (ga)
            memset(ga, 0, na * dim * sizeof(double));
        if (gb)
            memset(gb, 0, nb * dim * sizeof(double));
        for (size_t i = 1; i <= na; i++)
            for (size_t j = 1; j <= nb; j++)
                for (size_t k = 0; k < dim; k++) {
                    const double g = 2 * E[i * w + j] * (a[(i - 1) * dim + k] - b[(j - 1) * dim + k]);
                    if (ga)
                        ga[(i - 1) * dim + k] += g;
                    if (gb)
                        gb[(j - 1) * dim + k] -= g;
                }
    }
    free(R);
    free(E);
    free(in);
    return value;
}

static void sd_fill(ww_rng *r, double *x, size_t n)
{
    for (size_t k = 0; k < n; k++)
        x[k] = ww_rng_uniform(r) * 2.0 - 1.0;
}

static ww_ctx *sd_ctx(ww_engine engine, int threads)
{
    ww_ctx_options o = ww_ctx_options_default();
    o.backend = WW_BACKEND_CPU;
    o.engine = engine;
    o.num_threads = threads;
    ww_ctx *ctx = NULL;
    ww_ctx_create(&ctx, &o);
    return ctx;
}

/* |got - want| <= tol (max(|want|, scale)) for every entry */
static int sd_close_all(const double *got, const double *want, size_t n, double tol, double scale)
{
    for (size_t k = 0; k < n; k++) {
        const double s = fabs(want[k]) > scale ? fabs(want[k]) : scale;
        if (!(fabs(got[k] - want[k]) <= tol * s)) {
            fprintf(stderr, "  entry %zu: %.17g, expected %.17g\n", k, got[k], want[k]);
            return 0;
        }
    }
    return 1;
}

/* ------------------------------------------------------------------ values */

void test_softdtw_values_every_engine(void)
{
    ww_rng rng = {0x5d7u};
    const ww_engine engines[] = {WW_ENGINE_CPU_REFERENCE, WW_ENGINE_CPU_BAND, WW_ENGINE_CPU_STRIP};
    const size_t lengths[][2] = {{1, 1}, {1, 7}, {9, 1}, {20, 20}, {37, 23}, {300, 290}, {64, 80}};
    const double gammas[] = {0.01, 0.1, 1.0, 10.0};
    const size_t radii[] = {SIZE_MAX, 0, 3, 17};
    for (size_t e = 0; e < 3; e++) {
        ww_ctx *ctx = sd_ctx(engines[e], 1);
        CHECK(ctx != NULL);
        for (size_t L = 0; L < sizeof lengths / sizeof lengths[0]; L++)
            for (size_t dim = 1; dim <= 3; dim += 2) {
                const size_t na = lengths[L][0], nb = lengths[L][1];
                double *a = malloc(na * dim * sizeof(double)), *b = malloc(nb * dim * sizeof(double));
                sd_fill(&rng, a, na * dim);
                sd_fill(&rng, b, nb * dim);
                const ww_series sa = ww_series_f64(a, NULL, na, dim), sb = ww_series_f64(b, NULL, nb, dim);
                for (size_t g = 0; g < 4; g++)
                    for (size_t ri = 0; ri < 4; ri++) {
                        ww_measure m = ww_measure_softdtw(gammas[g]);
                        ww_measure_set_window(&m, radii[ri]);
                        double got = NAN;
                        CHECK_STATUS(ww_distance(ctx, &m, &sa, &sb, &got), WW_OK);
                        CHECK_CLOSE(got, sd_plain(a, na, b, nb, dim, gammas[g], radii[ri], NULL, NULL), 1e-12);
                    }
                free(a);
                free(b);
            }
        ww_ctx_destroy(ctx);
    }
}

/* Matrices (the lane engine), ragged, self and not, F64 and F32, kNN and an index. */
void test_softdtw_pairwise_knn(void)
{
    ww_rng rng = {0x77u};
    const size_t count = 37, dim = 2;
    size_t offsets[38];
    offsets[0] = 0;
    for (size_t i = 0; i < count; i++)
        offsets[i + 1] = offsets[i] + 1 + (size_t)(ww_rng_uniform(&rng) * 40);
    double *v = malloc(offsets[count] * dim * sizeof(double));
    sd_fill(&rng, v, offsets[count] * dim);
    const ww_dataset x = ww_dataset_f64(v, NULL, offsets, count, 0, dim);
    ww_ctx *ctx = sd_ctx(WW_ENGINE_AUTO, 2);
    for (int div = 0; div < 2; div++)
        for (size_t radius = 4; radius != 0; radius = radius == 4 ? SIZE_MAX : 0) {
            ww_measure m = ww_measure_softdtw(0.5);
            ww_measure_set_divergence(&m, div);
            ww_measure_set_window(&m, radius);
            double *out = malloc(count * count * sizeof(double));
            float *outf = malloc(count * count * sizeof(float));
            CHECK_STATUS(ww_pairwise(ctx, &m, &x, NULL, out, NULL), WW_OK);
            ww_pairwise_options o = ww_pairwise_options_default();
            o.out_dtype = WW_F32;
            CHECK_STATUS(ww_pairwise(ctx, &m, &x, &x, outf, &o), WW_OK);
            int bad = 0;
            for (size_t i = 0; i < count && bad < 3; i++)
                for (size_t j = 0; j < count && bad < 3; j++) {
                    const double *a = v + offsets[i] * dim, *b = v + offsets[j] * dim;
                    const size_t na = offsets[i + 1] - offsets[i], nb = offsets[j + 1] - offsets[j];
                    double want = sd_plain(a, na, b, nb, dim, 0.5, radius, NULL, NULL);
                    if (div)
                        want -= (sd_plain(a, na, a, na, dim, 0.5, radius, NULL, NULL) +
                                 sd_plain(b, nb, b, nb, dim, 0.5, radius, NULL, NULL)) / 2;
                    const double s = fabs(want) > 1 ? fabs(want) : 1;
                    if (!(fabs(out[i * count + j] - want) <= 1e-12 * s) ||
                        !(fabs(outf[i * count + j] - want) <= 1e-6 * s)) {
                        fprintf(stderr, "  div %d r %zu (%zu,%zu): %.17g / %.9g, expected %.17g\n", div, radius, i, j,
                                out[i * count + j], (double)outf[i * count + j], want);
                        bad++;
                    }
                    if (div && i == j && out[i * count + j] != 0.0)
                        bad++;
                }
            CHECK(bad == 0);
            /* kNN and an index give the matrix's order */
            size_t idx[3 * 37];
            double dist[3 * 37];
            CHECK_STATUS(ww_knn(ctx, &m, &x, &x, 3, idx, dist, NULL), WW_OK);
            for (size_t q = 0; q < count; q++) {
                CHECK_CLOSE(dist[q * 3], out[q * count + idx[q * 3]], 1e-15);
                for (size_t j = 0; j < count; j++)
                    CHECK(out[q * count + j] >= dist[q * 3]);
            }
            ww_index *ix = NULL;
            CHECK_STATUS(ww_index_create(ctx, &x, &m, &ix), WW_OK);
            double *rows = malloc(count * count * sizeof(double));
            CHECK_STATUS(ww_index_pairwise(ctx, ix, &x, rows, NULL), WW_OK);
            CHECK(sd_close_all(rows, out, count * count, 1e-12, 1.0));
            free(rows);
            ww_index_destroy(ix);
            free(out);
            free(outf);
        }
    ww_ctx_destroy(ctx);
    free(v);
}

/* Divergence: 0 (exactly) for x = y, >= 0 on random data; gamma -> 0 gives DTW. */
void test_softdtw_divergence_and_limit(void)
{
    ww_rng rng = {0x99u};
    ww_ctx *ctx = sd_ctx(WW_ENGINE_AUTO, 1);
    for (int t = 0; t < 40; t++) {
        const size_t na = 1 + (size_t)(ww_rng_uniform(&rng) * 60), nb = 1 + (size_t)(ww_rng_uniform(&rng) * 60);
        const size_t dim = 1 + (size_t)t % 3;
        double *a = malloc(na * dim * sizeof(double)), *b = malloc(nb * dim * sizeof(double));
        sd_fill(&rng, a, na * dim);
        sd_fill(&rng, b, nb * dim);
        const ww_series sa = ww_series_f64(a, NULL, na, dim), sb = ww_series_f64(b, NULL, nb, dim);
        ww_measure m = ww_measure_softdtw(0.05 + ww_rng_uniform(&rng) * 2);
        CHECK_STATUS(ww_measure_set_divergence(&m, 1), WW_OK);
        double d = NAN, self = NAN;
        CHECK_STATUS(ww_distance(ctx, &m, &sa, &sb, &d), WW_OK);
        CHECK_STATUS(ww_distance(ctx, &m, &sa, &sa, &self), WW_OK);
        CHECK(d >= -1e-12 * (1 + fabs(d)));
        CHECK(self == 0.0);
        double gsa[200], gsb[200], v = NAN;
        CHECK_STATUS(ww_gradient(ctx, &m, &sa, &sa, &v, gsa, gsb), WW_OK);
        CHECK(v == 0.0);
        /* gamma -> 0: DTW (|sdtw - dtw| <= gamma log(3) per step of the path) */
        const ww_measure dtw = ww_measure_dtw();
        double want = NAN, got = NAN;
        CHECK_STATUS(ww_distance(ctx, &dtw, &sa, &sb, &want), WW_OK);
        const ww_measure small = ww_measure_softdtw(1e-6);
        CHECK_STATUS(ww_distance(ctx, &small, &sa, &sb, &got), WW_OK);
        CHECK(fabs(got - want) <= 1e-6 * log(3.0) * (double)(na + nb));
        free(a);
        free(b);
    }
    ww_ctx_destroy(ctx);
}

/* ------------------------------------------------------------------ gradients */

void test_softdtw_gradient_reference_and_fd(void)
{
    ww_rng rng = {0x123u};
    ww_ctx *ctx = sd_ctx(WW_ENGINE_AUTO, 1);
    const size_t lengths[][2] = {{1, 1}, {1, 5}, {6, 1}, {12, 12}, {25, 17}, {40, 53}};
    const size_t radii[] = {SIZE_MAX, 0, 2, 6};
    for (size_t L = 0; L < 6; L++)
        for (size_t dim = 1; dim <= 2; dim++)
            for (size_t ri = 0; ri < 4; ri++)
                for (int div = 0; div < 2; div++) {
                    const size_t na = lengths[L][0], nb = lengths[L][1];
                    double *a = malloc(na * dim * sizeof(double)), *b = malloc(nb * dim * sizeof(double));
                    double *ga = malloc(na * dim * sizeof(double)), *gb = malloc(nb * dim * sizeof(double));
                    double *wa = malloc(na * dim * sizeof(double)), *wb = malloc(nb * dim * sizeof(double));
                    double *t1 = malloc(na * dim * sizeof(double)), *t2 = malloc(nb * dim * sizeof(double));
                    sd_fill(&rng, a, na * dim);
                    sd_fill(&rng, b, nb * dim);
                    const double gamma = 0.3 + ri * 0.2;
                    ww_measure m = ww_measure_softdtw(gamma);
                    ww_measure_set_window(&m, radii[ri]);
                    ww_measure_set_divergence(&m, div);
                    const ww_series sa = ww_series_f64(a, NULL, na, dim), sb = ww_series_f64(b, NULL, nb, dim);
                    double v = NAN, d = NAN;
                    CHECK_STATUS(ww_gradient(ctx, &m, &sa, &sb, &v, ga, gb), WW_OK);
                    CHECK_STATUS(ww_distance(ctx, &m, &sa, &sb, &d), WW_OK);
                    CHECK_CLOSE(v, d, 1e-12);
                    double want = sd_plain(a, na, b, nb, dim, gamma, radii[ri], wa, wb);
                    if (div) {
                        want -= (sd_plain(a, na, a, na, dim, gamma, radii[ri], t1, NULL) +
                                 sd_plain(b, nb, b, nb, dim, gamma, radii[ri], t2, NULL)) / 2;
                        /* d/da sdtw(a, a) = 2 ga(a, a) by symmetry */
                        for (size_t k = 0; k < na * dim; k++)
                            wa[k] -= t1[k];
                        for (size_t k = 0; k < nb * dim; k++)
                            wb[k] -= t2[k];
                    }
                    CHECK_CLOSE(v, want, 1e-12);
                    CHECK(sd_close_all(ga, wa, na * dim, 1e-10, 1e-3));
                    CHECK(sd_close_all(gb, wb, nb * dim, 1e-10, 1e-3));
                    /* central finite differences of the library's own value */
                    const double h = 1e-6;
                    for (size_t k = 0; k < na * dim; k += 1 + na * dim / 7) {
                        const double keep = a[k];
                        double up, down;
                        a[k] = keep + h;
                        ww_distance(ctx, &m, &sa, &sb, &up);
                        a[k] = keep - h;
                        ww_distance(ctx, &m, &sa, &sb, &down);
                        a[k] = keep;
                        CHECK_CLOSE(ga[k], (up - down) / (2 * h), 1e-6);
                    }
                    for (size_t k = 0; k < nb * dim; k += 1 + nb * dim / 7) {
                        const double keep = b[k];
                        double up, down;
                        b[k] = keep + h;
                        ww_distance(ctx, &m, &sa, &sb, &up);
                        b[k] = keep - h;
                        ww_distance(ctx, &m, &sa, &sb, &down);
                        b[k] = keep;
                        CHECK_CLOSE(gb[k], (up - down) / (2 * h), 1e-6);
                    }
                    free(a), free(b), free(ga), free(gb), free(wa), free(wb), free(t1), free(t2);
                }
    ww_ctx_destroy(ctx);
}

/* The checkpointed backward pass (budget 0) equals the compact table (no limit) to the bit; the
 * environment setting of the default is read. */
void test_softdtw_checkpoint_equals_compact(void)
{
    ww_rng rng = {0x4242u};
    ww_ctx *ctx = sd_ctx(WW_ENGINE_AUTO, 1);
    const size_t lengths[][2] = {{300, 257}, {97, 400}, {1, 50}, {50, 1}, {2, 2}};
    for (size_t L = 0; L < 5; L++)
        for (size_t ri = 0; ri < 2; ri++) {
            const size_t na = lengths[L][0], nb = lengths[L][1], dim = 2;
            double *a = malloc(na * dim * sizeof(double)), *b = malloc(nb * dim * sizeof(double));
            double *g1 = malloc((na + nb) * dim * sizeof(double)), *g2 = malloc((na + nb) * dim * sizeof(double));
            sd_fill(&rng, a, na * dim);
            sd_fill(&rng, b, nb * dim);
            ww_measure m = ww_measure_softdtw(0.7);
            if (ri)
                ww_measure_set_window(&m, 9);
            const ww_series sa = ww_series_f64(a, NULL, na, dim), sb = ww_series_f64(b, NULL, nb, dim);
            double v1 = NAN, v2 = NAN;
            CHECK_STATUS(ww_softdtw_set_memory_budget(ctx, SIZE_MAX), WW_OK);
            CHECK_STATUS(ww_gradient(ctx, &m, &sa, &sb, &v1, g1, g1 + na * dim), WW_OK);
            CHECK_STATUS(ww_softdtw_set_memory_budget(ctx, 0), WW_OK);
            CHECK_STATUS(ww_gradient(ctx, &m, &sa, &sb, &v2, g2, g2 + na * dim), WW_OK);
            CHECK(v1 == v2);
            CHECK(memcmp(g1, g2, (na + nb) * dim * sizeof(double)) == 0);
            free(a), free(b), free(g1), free(g2);
        }
    ww_ctx_destroy(ctx);
    CHECK(ww_softdtw_set_memory_budget(NULL, 0) == WW_ERR_NULL_POINTER);
}

/* ------------------------------------------------------------------ batches */

void test_softdtw_batch_mixed_lengths(void)
{
    ww_rng rng = {0xbeefu};
    ww_ctx *ctx = sd_ctx(WW_ENGINE_AUTO, 2);
    const size_t count = 23, dim = 3;
    size_t ox[24], oy[24];
    ox[0] = oy[0] = 0;
    for (size_t i = 0; i < count; i++) {
        ox[i + 1] = ox[i] + 1 + (size_t)(ww_rng_uniform(&rng) * 30);
        oy[i + 1] = oy[i] + 1 + (size_t)(ww_rng_uniform(&rng) * 30);
    }
    const size_t nx = ox[count] * dim, ny = oy[count] * dim;
    double *x = malloc(nx * sizeof(double)), *y = malloc(ny * sizeof(double));
    double *gx = malloc(nx * sizeof(double)), *gy = malloc(ny * sizeof(double)), vals[23];
    float *xf = malloc(nx * sizeof(float)), *yf = malloc(ny * sizeof(float));
    float *gxf = malloc(nx * sizeof(float)), *gyf = malloc(ny * sizeof(float)), valsf[23];
    sd_fill(&rng, x, nx);
    sd_fill(&rng, y, ny);
    for (size_t k = 0; k < nx; k++)
        xf[k] = (float)x[k];
    for (size_t k = 0; k < ny; k++)
        yf[k] = (float)y[k];
    for (int div = 0; div < 2; div++) {
        ww_measure m = ww_measure_softdtw(1.0);
        ww_measure_set_divergence(&m, div);
        const ww_dataset dx = ww_dataset_f64(x, NULL, ox, count, 0, dim), dy = ww_dataset_f64(y, NULL, oy, count, 0, dim);
        CHECK_STATUS(ww_softdtw_batch(ctx, &m, &dx, &dy, vals, gx, gy), WW_OK);
        const ww_dataset fx = ww_dataset_f32(xf, NULL, ox, count, 0, dim), fy = ww_dataset_f32(yf, NULL, oy, count, 0, dim);
        CHECK_STATUS(ww_softdtw_batch(ctx, &m, &fx, &fy, valsf, gxf, gyf), WW_OK);
        for (size_t p = 0; p < count; p++) {
            ww_series a, b;
            ww_dataset_series(&dx, p, &a);
            ww_dataset_series(&dy, p, &b);
            double v = NAN, ga[100], gb[100];
            CHECK_STATUS(ww_gradient(ctx, &m, &a, &b, &v, ga, gb), WW_OK);
            CHECK(v == vals[p]);
            CHECK(memcmp(ga, gx + ox[p] * dim, a.length * dim * sizeof(double)) == 0);
            CHECK(memcmp(gb, gy + oy[p] * dim, b.length * dim * sizeof(double)) == 0);
            /* F32: the same computation on the rounded inputs, rounded once */
            CHECK_CLOSE(valsf[p], v, 1e-5);
            for (size_t k = 0; k < a.length * dim; k++)
                CHECK_CLOSE(gxf[ox[p] * dim + k], ga[k], 1e-4);
        }
        /* values only */
        CHECK_STATUS(ww_softdtw_batch(ctx, &m, &dx, &dy, vals, NULL, NULL), WW_OK);
    }
    /* equal lengths without offsets */
    ww_measure m = ww_measure_softdtw(0.1);
    const ww_dataset ex = ww_dataset_f64(x, NULL, NULL, 4, 5, dim), ey = ww_dataset_f64(y, NULL, NULL, 4, 6, dim);
    CHECK_STATUS(ww_softdtw_batch(ctx, &m, &ex, &ey, vals, gx, NULL), WW_OK);
    for (size_t p = 0; p < 4; p++)
        CHECK_CLOSE(vals[p], sd_plain(x + p * 5 * dim, 5, y + p * 6 * dim, 6, dim, 0.1, SIZE_MAX, NULL, NULL), 1e-12);
    free(x), free(y), free(gx), free(gy), free(xf), free(yf), free(gxf), free(gyf);
    ww_ctx_destroy(ctx);
}

/* ------------------------------------------------------------------ errors */

void test_softdtw_bad_input(void)
{
    ww_ctx *ctx = sd_ctx(WW_ENGINE_AUTO, 1);
    double a[6] = {0, 1, 2, 3, 4, 5}, b[4] = {1, 2, 3, 4}, v, g[6];
    const ww_series sa = ww_series_f64(a, NULL, 3, 2), sb = ww_series_f64(b, NULL, 2, 2);
    const double bad_gammas[] = {0.0, -1.0, NAN, INFINITY, 1e-320};
    for (int k = 0; k < 5; k++) {
        const ww_measure m = ww_measure_softdtw(bad_gammas[k]);
        CHECK_STATUS(ww_measure_check(&m), WW_ERR_PARAM);
        CHECK_STATUS(ww_distance(ctx, &m, &sa, &sb, &v), WW_ERR_PARAM);
        CHECK_STATUS(ww_gradient(ctx, &m, &sa, &sb, &v, g, NULL), WW_ERR_PARAM);
    }
    const ww_measure m = ww_measure_softdtw(1.0);
    CHECK(strcmp(ww_measure_name(&m), "softdtw") == 0);
    /* NaN and inf values */
    double nan_a[6] = {0, 1, NAN, 3, 4, 5}, inf_b[4] = {1, INFINITY, 3, 4};
    const ww_series na_ = ww_series_f64(nan_a, NULL, 3, 2), ib = ww_series_f64(inf_b, NULL, 2, 2);
    CHECK_STATUS(ww_gradient(ctx, &m, &na_, &sb, &v, g, NULL), WW_ERR_NONFINITE);
    CHECK_STATUS(ww_gradient(ctx, &m, &sa, &ib, &v, NULL, NULL), WW_ERR_NONFINITE);
    CHECK_STATUS(ww_distance(ctx, &m, &na_, &sb, &v), WW_ERR_NONFINITE);
    /* empty, dims, dtypes, NULL */
    const ww_series empty = ww_series_f64(a, NULL, 0, 2), d3 = ww_series_f64(a, NULL, 2, 3);
    CHECK_STATUS(ww_gradient(ctx, &m, &empty, &sb, &v, NULL, NULL), WW_ERR_EMPTY);
    CHECK_STATUS(ww_gradient(ctx, &m, &sa, &d3, &v, NULL, NULL), WW_ERR_SHAPE);
    float af[6] = {0};
    const ww_series fa = ww_series_f32(af, NULL, 3, 2);
    CHECK_STATUS(ww_gradient(ctx, &m, &fa, &sb, &v, NULL, NULL), WW_ERR_DTYPE);
    CHECK_STATUS(ww_gradient(NULL, &m, &sa, &sb, &v, NULL, NULL), WW_ERR_NULL_POINTER);
    CHECK_STATUS(ww_gradient(ctx, NULL, &sa, &sb, &v, NULL, NULL), WW_ERR_NULL_POINTER);
    /* not differentiable */
    const ww_measure dtw = ww_measure_dtw();
    CHECK_STATUS(ww_gradient(ctx, &dtw, &sa, &sb, &v, g, NULL), WW_ERR_NOT_DIFFERENTIABLE);
    ww_measure dtw2 = dtw;
    CHECK_STATUS(ww_measure_set_divergence(&dtw2, 1), WW_ERR_MEASURE);
    CHECK(strlen(ww_strerror(WW_ERR_NOT_DIFFERENTIABLE)) > 10);
    /* batches: count, dim, dtype, values */
    size_t o2[3] = {0, 1, 3}, o3[4] = {0, 1, 2, 3};
    const ww_dataset x2 = ww_dataset_f64(a, NULL, o2, 2, 0, 2), x3 = ww_dataset_f64(a, NULL, o3, 3, 0, 2);
    const ww_dataset x2d1 = ww_dataset_f64(a, NULL, o2, 2, 0, 1), x2f = ww_dataset_f32(af, NULL, o2, 2, 0, 2);
    double vals[3];
    CHECK_STATUS(ww_softdtw_batch(ctx, &m, &x2, &x3, vals, NULL, NULL), WW_ERR_SHAPE);
    CHECK_STATUS(ww_softdtw_batch(ctx, &m, &x2, &x2d1, vals, NULL, NULL), WW_ERR_SHAPE);
    CHECK_STATUS(ww_softdtw_batch(ctx, &m, &x2, &x2f, vals, NULL, NULL), WW_ERR_DTYPE);
    CHECK_STATUS(ww_softdtw_batch(ctx, &m, &x2, &x2, NULL, NULL, NULL), WW_ERR_NULL_POINTER);
    CHECK_STATUS(ww_softdtw_batch(ctx, &dtw, &x2, &x2, vals, NULL, NULL), WW_ERR_NOT_DIFFERENTIABLE);
    size_t o_bad[3] = {0, 2, 1};
    const ww_dataset xbad = ww_dataset_f64(a, NULL, o_bad, 2, 0, 2);
    CHECK(ww_softdtw_batch(ctx, &m, &x2, &xbad, vals, NULL, NULL) != WW_OK);
    const ww_dataset xnan = ww_dataset_f64(nan_a, NULL, o2, 2, 0, 2);
    vals[0] = vals[1] = 7.0;
    CHECK_STATUS(ww_softdtw_batch(ctx, &m, &x2, &xnan, vals, NULL, NULL), WW_ERR_NONFINITE);
    CHECK(vals[0] == 7.0 && vals[1] == 7.0); /* nothing written */
    const ww_dataset none = ww_dataset_f64(a, NULL, NULL, 0, 3, 2);
    CHECK_STATUS(ww_softdtw_batch(ctx, &m, &none, &none, vals, NULL, NULL), WW_ERR_EMPTY);
    ww_ctx_destroy(ctx);
}

/* ------------------------------------------------------------------ the CPU engine's paths */

/* The soft minimum's exponential and logarithm (src/measures/softmath.h) against the C library's
 * over the ranges soft-DTW uses: exp of x <= 0 to 1e-15 relative (down to -700; -inf and below
 * -708 give at most 4e-308, nothing next to the sum's 1), log of s in [1, 3] and 1 / s to 1e-15. */
void test_softdtw_softmath_accuracy(void)
{
    double worst_exp = 0, worst_log = 0, worst_inv = 0, worst_log2 = 0;
    for (int k = 0; k <= 200000; k++) {
        const double x = -700.0 * k / 200000.0 - (k % 7) * 1e-9;
        const double want = exp(x), got = ww_softexp_f64(x);
        const double e = fabs(got - want) / want;
        worst_exp = e > worst_exp ? e : worst_exp;
        const double s = 1.0 + 2.0 * k / 200000.0;
        double inv = 0;
        const double l = ww_softlog_f64(s), l2 = ww_softlog_inv_f64(s, &inv);
        worst_log = fabs(l - log(s)) > worst_log ? fabs(l - log(s)) : worst_log;
        worst_log2 = fabs(l2 - log(s)) > worst_log2 ? fabs(l2 - log(s)) : worst_log2;
        worst_inv = fabs(inv * s - 1.0) > worst_inv ? fabs(inv * s - 1.0) : worst_inv;
    }
    if (!(worst_exp <= 1e-15 && worst_log <= 1e-15 && worst_log2 <= 1e-15 && worst_inv <= 1e-15))
        fprintf(stderr, "  exp %.3g, log %.3g, log (with 1/s) %.3g, 1/s %.3g\n", worst_exp, worst_log, worst_log2,
                worst_inv);
    CHECK(worst_exp <= 1e-15 && worst_log <= 1e-15 && worst_log2 <= 1e-15 && worst_inv <= 1e-15);
    CHECK(ww_softexp_f64(-INFINITY) >= 0 && ww_softexp_f64(-INFINITY) <= 4e-308);
    CHECK(ww_softexp_f64(-1e300) <= 4e-308 && ww_softexp_f64(0.0) == 1.0);
    CHECK(ww_softexp_floor_f64(-INFINITY, -708.0) <= 4e-308);
}

/* The gradient engine's paths (the two stages of the soft minimum, the weights kept for the
 * backward pass, the series by component for any dim, compact and checkpointed tables) against the
 * plain reference, for small and large gamma, dims 1 to 4, windows and length 1. */
void test_softdtw_gradient_engine_paths(void)
{
    ww_rng rng = {0x51deu};
    ww_ctx *ctx = sd_ctx(WW_ENGINE_AUTO, 1);
    const size_t lengths[][2] = {{1, 1}, {1, 9}, {13, 1}, {31, 47}, {64, 64}, {90, 37}};
    const double gammas[] = {0.01, 0.3, 25.0};
    const size_t radii[] = {SIZE_MAX, 0, 5};
    for (size_t L = 0; L < 6; L++)
        for (size_t dim = 1; dim <= 4; dim++)
            for (size_t gi = 0; gi < 3; gi++)
                for (size_t ri = 0; ri < 3; ri++) {
                    const size_t na = lengths[L][0], nb = lengths[L][1];
                    double *a = malloc(na * dim * sizeof(double)), *b = malloc(nb * dim * sizeof(double));
                    double *g = malloc(2 * (na + nb) * dim * sizeof(double)), *w = malloc((na + nb) * dim * sizeof(double));
                    sd_fill(&rng, a, na * dim);
                    sd_fill(&rng, b, nb * dim);
                    ww_measure m = ww_measure_softdtw(gammas[gi]);
                    ww_measure_set_window(&m, radii[ri]);
                    const ww_series sa = ww_series_f64(a, NULL, na, dim), sb = ww_series_f64(b, NULL, nb, dim);
                    double v1 = NAN, v2 = NAN, d = NAN;
                    double *g2 = g + (na + nb) * dim;
                    CHECK_STATUS(ww_softdtw_set_memory_budget(ctx, SIZE_MAX), WW_OK);
                    CHECK_STATUS(ww_gradient(ctx, &m, &sa, &sb, &v1, g, g + na * dim), WW_OK);
                    CHECK_STATUS(ww_softdtw_set_memory_budget(ctx, 0), WW_OK);
                    CHECK_STATUS(ww_gradient(ctx, &m, &sa, &sb, &v2, g2, g2 + na * dim), WW_OK);
                    CHECK_STATUS(ww_distance(ctx, &m, &sa, &sb, &d), WW_OK);
                    const double want = sd_plain(a, na, b, nb, dim, gammas[gi], radii[ri], w, w + na * dim);
                    CHECK(v1 == v2 && memcmp(g, g2, (na + nb) * dim * sizeof(double)) == 0);
                    CHECK_CLOSE(v1, want, 1e-12);
                    CHECK_CLOSE(d, want, 1e-12);
                    /* the weights exponentiate differences of R over gamma: rounding of R (either
                     * side's) is amplified by 1 / gamma */
                    const double tol = gammas[gi] < 0.1 ? 1e-11 / gammas[gi] : 1e-10;
                    if (!sd_close_all(g, w, (na + nb) * dim, tol, 1e-3))
                        fprintf(stderr, "  (%zu, %zu) dim %zu gamma %g radius %zu\n", na, nb, dim, gammas[gi], radii[ri]);
                    CHECK(sd_close_all(g, w, (na + nb) * dim, tol, 1e-3));
                    free(a), free(b), free(g), free(w);
                }
    ww_ctx_destroy(ctx);
}

/* A batch on the threading layer: 1 and 2 threads give the same bits, values against the plain
 * reference; gradients of Y alone; lengths 1 and a window. */
void test_softdtw_batch_threads(void)
{
    ww_rng rng = {0x7e57u};
    const size_t count = 29, dim = 2;
    size_t ox[30], oy[30];
    ox[0] = oy[0] = 0;
    for (size_t i = 0; i < count; i++) {
        ox[i + 1] = ox[i] + (i % 5 == 0 ? 1 : 1 + (size_t)(ww_rng_uniform(&rng) * 70));
        oy[i + 1] = oy[i] + (i % 7 == 0 ? 1 : 1 + (size_t)(ww_rng_uniform(&rng) * 70));
    }
    const size_t nx = ox[count] * dim, ny = oy[count] * dim;
    double *x = malloc(nx * sizeof(double)), *y = malloc(ny * sizeof(double));
    double *gy1 = malloc(ny * sizeof(double)), *gy2 = malloc(ny * sizeof(double)), *ref = malloc(ny * sizeof(double));
    double v1[29], v2[29];
    sd_fill(&rng, x, nx);
    sd_fill(&rng, y, ny);
    ww_measure m = ww_measure_softdtw(0.4);
    ww_measure_set_window(&m, 6);
    const ww_dataset dx = ww_dataset_f64(x, NULL, ox, count, 0, dim), dy = ww_dataset_f64(y, NULL, oy, count, 0, dim);
    ww_ctx *one = sd_ctx(WW_ENGINE_AUTO, 1), *two = sd_ctx(WW_ENGINE_AUTO, 2);
    CHECK_STATUS(ww_softdtw_batch(one, &m, &dx, &dy, v1, NULL, gy1), WW_OK);
    CHECK_STATUS(ww_softdtw_batch(two, &m, &dx, &dy, v2, NULL, gy2), WW_OK);
    CHECK(memcmp(v1, v2, sizeof v1) == 0 && memcmp(gy1, gy2, ny * sizeof(double)) == 0);
    int bad = 0;
    for (size_t p = 0; p < count && bad < 3; p++) {
        const size_t na = ox[p + 1] - ox[p], nb = oy[p + 1] - oy[p];
        const double want = sd_plain(x + ox[p] * dim, na, y + oy[p] * dim, nb, dim, 0.4, 6, NULL, ref);
        if (!(fabs(v1[p] - want) <= 1e-12 * (fabs(want) > 1 ? fabs(want) : 1)) ||
            !sd_close_all(gy1 + oy[p] * dim, ref, nb * dim, 1e-10, 1e-3)) {
            fprintf(stderr, "  pair %zu (%zu, %zu): %.17g, expected %.17g\n", p, na, nb, v1[p], want);
            bad++;
        }
    }
    CHECK(bad == 0);
    /* a batch large enough for two threads (small ones run on one: BATCH_CELLS_PER_THREAD) */
    const size_t big = 7, n = 420;
    double *bx = malloc(big * n * dim * sizeof(double)), *by = malloc(big * n * dim * sizeof(double));
    double *bg1 = malloc(big * n * dim * sizeof(double)), *bg2 = malloc(big * n * dim * sizeof(double)), bv1[7], bv2[7];
    sd_fill(&rng, bx, big * n * dim);
    sd_fill(&rng, by, big * n * dim);
    const ww_dataset ebx = ww_dataset_f64(bx, NULL, NULL, big, n, dim), eby = ww_dataset_f64(by, NULL, NULL, big, n, dim);
    const ww_measure plain = ww_measure_softdtw(1.0);
    CHECK_STATUS(ww_softdtw_batch(one, &plain, &ebx, &eby, bv1, bg1, NULL), WW_OK);
    CHECK_STATUS(ww_softdtw_batch(two, &plain, &ebx, &eby, bv2, bg2, NULL), WW_OK);
    CHECK(memcmp(bv1, bv2, sizeof bv1) == 0 && memcmp(bg1, bg2, big * n * dim * sizeof(double)) == 0);
    CHECK_CLOSE(bv1[big - 1], sd_plain(bx + (big - 1) * n * dim, n, by + (big - 1) * n * dim, n, dim, 1.0, SIZE_MAX,
                                       NULL, NULL), 1e-12);
    free(bx), free(by), free(bg1), free(bg2);
    free(x), free(y), free(gy1), free(gy2), free(ref);
    ww_ctx_destroy(one);
    ww_ctx_destroy(two);
}

/* ------------------------------------------------------------------ GPU */

#ifdef WW_TEST_CUDA
/* A context on the GPU (NULL, a failed check, when it cannot be made). */
/* v[0 .. n) stored into out as float (f32) or double. */
static void sd_store_as(void *out, const double *v, size_t n, int f32)
{
    for (size_t k = 0; k < n; k++)
        f32 ? (void)(((float *)out)[k] = (float)v[k]) : (void)(((double *)out)[k] = v[k]);
}

static ww_ctx *sd_cuda_ctx(void)
{
    ww_ctx_options o = ww_ctx_options_default();
    o.backend = WW_BACKEND_CUDA;
    ww_ctx *gpu = NULL;
    CHECK_STATUS(ww_ctx_create(&gpu, &o), WW_OK);
    return gpu;
}

/* One batch on the GPU (device arrays, outputs poisoned with NaN first): values, grad_x and grad_y
 * one after the other in a host buffer of the data's type (free it); NULL if the call failed. */
static void *sd_gpu_outputs(ww_ctx *gpu, const ww_measure *m, int f32, size_t count, size_t dim, const size_t *ox,
                            const size_t *oy, const double *x, const double *y)
{
    const size_t nx = ox[count] * dim, ny = oy[count] * dim, es = f32 ? sizeof(float) : sizeof(double);
    void *hx = malloc(nx * es), *hy = malloc(ny * es), *out = malloc((count + nx + ny) * es);
    sd_store_as(hx, x, nx, f32);
    sd_store_as(hy, y, ny, f32);
    void *dx, *dy, *dv, *dgx, *dgy;
    CHECK(cudaMalloc(&dx, nx * es) == cudaSuccess && cudaMalloc(&dy, ny * es) == cudaSuccess &&
          cudaMalloc(&dv, count * es) == cudaSuccess && cudaMalloc(&dgx, nx * es) == cudaSuccess &&
          cudaMalloc(&dgy, ny * es) == cudaSuccess);
    cudaMemcpy(dx, hx, nx * es, cudaMemcpyHostToDevice);
    cudaMemcpy(dy, hy, ny * es, cudaMemcpyHostToDevice);
    cudaMemset(dv, 0xff, count * es); /* NaN */
    cudaMemset(dgx, 0xff, nx * es);
    cudaMemset(dgy, 0xff, ny * es);
    ww_dataset gx = f32 ? ww_dataset_f32(dx, NULL, ox, count, 0, dim) : ww_dataset_f64(dx, NULL, ox, count, 0, dim);
    ww_dataset gy = f32 ? ww_dataset_f32(dy, NULL, oy, count, 0, dim) : ww_dataset_f64(dy, NULL, oy, count, 0, dim);
    /* equal lengths: a regular dataset (no offsets), which the GPU engine runs without a table of pairs */
    int regular = 1;
    for (size_t b = 1; b < count; b++)
        regular &= ox[b + 1] - ox[b] == ox[1] - ox[0] && oy[b + 1] - oy[b] == oy[1] - oy[0];
    if (regular) {
        gx.offsets = gy.offsets = NULL;
        gx.length = ox[1] - ox[0], gy.length = oy[1] - oy[0];
    }
    gx.memory = gy.memory = WW_DEVICE;
    const ww_status st = ww_softdtw_batch(gpu, m, &gx, &gy, dv, dgx, dgy);
    CHECK_STATUS(st, WW_OK);
    cudaMemcpy(out, dv, count * es, cudaMemcpyDeviceToHost);
    cudaMemcpy((char *)out + count * es, dgx, nx * es, cudaMemcpyDeviceToHost);
    cudaMemcpy((char *)out + (count + nx) * es, dgy, ny * es, cudaMemcpyDeviceToHost);
    cudaFree(dx), cudaFree(dy), cudaFree(dv), cudaFree(dgx), cudaFree(dgy);
    free(hx), free(hy);
    if (st != WW_OK)
        free(out), out = NULL;
    return out;
}

/* One batch on the GPU against the CPU's. */
static void sd_gpu_batch_case(ww_ctx *gpu, ww_ctx *cpu, const ww_measure *m, int f32, size_t count, size_t dim,
                              const size_t *ox, const size_t *oy, const double *x, const double *y)
{
    const size_t nx = ox[count] * dim, ny = oy[count] * dim, es = f32 ? sizeof(float) : sizeof(double);
    char *gpu_out = sd_gpu_outputs(gpu, m, f32, count, dim, ox, oy, x, y);
    if (gpu_out == NULL)
        return;
    void *hv = gpu_out, *hgx = gpu_out + count * es, *hgy = gpu_out + (count + nx) * es;
    void *hx = malloc(nx * es), *hy = malloc(ny * es), *cv = malloc(count * es), *cgx = malloc(nx * es),
         *cgy = malloc(ny * es);
    sd_store_as(hx, x, nx, f32);
    sd_store_as(hy, y, ny, f32);
    const ww_dataset hxd = f32 ? ww_dataset_f32(hx, NULL, ox, count, 0, dim) : ww_dataset_f64(hx, NULL, ox, count, 0, dim);
    const ww_dataset hyd = f32 ? ww_dataset_f32(hy, NULL, oy, count, 0, dim) : ww_dataset_f64(hy, NULL, oy, count, 0, dim);
    CHECK_STATUS(ww_softdtw_batch(cpu, m, &hxd, &hyd, cv, cgx, cgy), WW_OK);
    /* float32: the stated budget, 1e-5 relative on the values; gradients to 1e-3 of their scale */
    const double vtol = f32 ? 1e-5 : 1e-10, gtol = f32 ? 1e-3 : 1e-9;
    int bad = 0;
    for (size_t b = 0; b < count && bad < 5; b++) {
        const double g = f32 ? ((float *)hv)[b] : ((double *)hv)[b], w = f32 ? ((float *)cv)[b] : ((double *)cv)[b];
        if (!(fabs(g - w) <= vtol * (fabs(w) > 1 ? fabs(w) : 1)))
            fprintf(stderr, "  value %zu: gpu %.9g cpu %.9g\n", b, g, w), bad++;
    }
    double scale = 0;
    for (size_t k = 0; k < nx; k++)
        scale = fmax(scale, fabs(f32 ? ((float *)cgx)[k] : ((double *)cgx)[k]));
    for (size_t k = 0; k < nx && bad < 5; k++) {
        const double g = f32 ? ((float *)hgx)[k] : ((double *)hgx)[k], w = f32 ? ((float *)cgx)[k] : ((double *)cgx)[k];
        if (!(fabs(g - w) <= gtol * (scale > 1 ? scale : 1)))
            fprintf(stderr, "  grad_x %zu: gpu %.9g cpu %.9g\n", k, g, w), bad++;
    }
    for (size_t k = 0; k < ny && bad < 5; k++) {
        const double g = f32 ? ((float *)hgy)[k] : ((double *)hgy)[k], w = f32 ? ((float *)cgy)[k] : ((double *)cgy)[k];
        if (!(fabs(g - w) <= gtol * (scale > 1 ? scale : 1)))
            fprintf(stderr, "  grad_y %zu: gpu %.9g cpu %.9g\n", k, g, w), bad++;
    }
    CHECK(bad == 0);
    free(gpu_out), free(hx), free(hy), free(cv), free(cgx), free(cgy);
}
#endif

/* The GPU batch (device data, F64 and F32, mixed lengths up to 1,500, windows, the divergence)
 * against the CPU's, on fresh random inputs with poisoned outputs; one pair of device series
 * through ww_gradient; NaN on the device. */
void test_cuda_softdtw_batch(void)
{
#ifndef WW_TEST_CUDA
    SKIP("test built without the CUDA runtime headers");
#else
    if (!ww_cuda_available())
        SKIP("GPU test: no CUDA backend in this build or no GPU on this machine");
    ww_ctx *gpu = sd_cuda_ctx(), *cpu = sd_ctx(WW_ENGINE_AUTO, 0);
    if (gpu == NULL)
        return;
    ww_rng rng = {0xc0dau};
    const size_t count = 24, dim = 2;
    size_t ox[25], oy[25];
    ox[0] = oy[0] = 0;
    for (size_t i = 0; i < count; i++) {
        const size_t big = i % 6 == 0 ? 1500 : 300;
        ox[i + 1] = ox[i] + (i == 3 ? 1 : 1 + (size_t)(ww_rng_uniform(&rng) * big));
        oy[i + 1] = oy[i] + 1 + (size_t)(ww_rng_uniform(&rng) * big);
    }
    double *x = malloc(ox[count] * dim * sizeof(double)), *y = malloc(oy[count] * dim * sizeof(double));
    sd_fill(&rng, x, ox[count] * dim);
    sd_fill(&rng, y, oy[count] * dim);
    for (int f32 = 0; f32 < 2; f32++)
        for (int variant = 0; variant < 5; variant++) {
            ww_measure m = ww_measure_softdtw(variant == 2 ? 0.1 : 1.0);
            if (variant == 1)
                ww_measure_set_window(&m, 20);
            if (variant == 3) /* a narrow window: every band's sweep is cut short at both ends */
                ww_measure_set_window(&m, 2);
            if (variant == 4) /* radius 0 on very unequal lengths: one cell a row or a column */
                ww_measure_set_window(&m, 0);
            if (variant == 2)
                ww_measure_set_divergence(&m, 1);
            sd_gpu_batch_case(gpu, cpu, &m, f32, count, dim, ox, oy, x, y);
        }
    /* float32 data far from 0: the costs come from the differences of the samples as given (samples
     * scaled before subtracting lost the digits of close samples: values 1e-4 off at 1e4) */
    {
        double *xo = malloc(ox[count] * dim * sizeof(double)), *yo = malloc(oy[count] * dim * sizeof(double));
        for (size_t k = 0; k < ox[count] * dim; k++)
            xo[k] = 1e4 + 4 * x[k];
        for (size_t k = 0; k < oy[count] * dim; k++)
            yo[k] = 1e4 + 4 * y[k];
        const ww_measure m = ww_measure_softdtw(1.0);
        sd_gpu_batch_case(gpu, cpu, &m, 1, count, dim, ox, oy, xo, yo);
        free(xo), free(yo);
    }
    /* one F64 pair through ww_gradient */
    const size_t na = ox[2] - ox[1], nb = oy[2] - oy[1];
    double *da, *db, *dga, *dgb, v = NAN, w = NAN;
    cudaMalloc((void **)&da, na * dim * 8), cudaMalloc((void **)&db, nb * dim * 8);
    cudaMalloc((void **)&dga, na * dim * 8), cudaMalloc((void **)&dgb, nb * dim * 8);
    cudaMemcpy(da, x + ox[1] * dim, na * dim * 8, cudaMemcpyHostToDevice);
    cudaMemcpy(db, y + oy[1] * dim, nb * dim * 8, cudaMemcpyHostToDevice);
    ww_series sa = ww_series_f64(da, NULL, na, dim), sb = ww_series_f64(db, NULL, nb, dim);
    sa.memory = sb.memory = WW_DEVICE;
    const ww_measure m = ww_measure_softdtw(1.0);
    CHECK_STATUS(ww_gradient(gpu, &m, &sa, &sb, &v, dga, dgb), WW_OK);
    const ww_series ha = ww_series_f64(x + ox[1] * dim, NULL, na, dim), hb = ww_series_f64(y + oy[1] * dim, NULL, nb, dim);
    double *ga_gpu = malloc(na * dim * 8), *gb_gpu = malloc(nb * dim * 8), *ga_cpu = malloc(na * dim * 8),
           *gb_cpu = malloc(nb * dim * 8);
    CHECK_STATUS(ww_gradient(cpu, &m, &ha, &hb, &w, ga_cpu, gb_cpu), WW_OK);
    CHECK_CLOSE(v, w, 1e-10);
    cudaMemcpy(ga_gpu, dga, na * dim * 8, cudaMemcpyDeviceToHost);
    cudaMemcpy(gb_gpu, dgb, nb * dim * 8, cudaMemcpyDeviceToHost);
    double gscale = 1;
    for (size_t k = 0; k < na * dim; k++)
        gscale = fmax(gscale, fabs(ga_cpu[k]));
    int gbad = 0;
    for (size_t k = 0; k < na * dim; k++)
        gbad += !(fabs(ga_gpu[k] - ga_cpu[k]) <= 1e-9 * gscale);
    for (size_t k = 0; k < nb * dim; k++)
        gbad += !(fabs(gb_gpu[k] - gb_cpu[k]) <= 1e-9 * gscale);
    CHECK(gbad == 0);
    free(ga_gpu), free(gb_gpu), free(ga_cpu), free(gb_cpu);
    /* NaN on the device; device data on a CPU context */
    const double nan = NAN;
    cudaMemcpy(da + 1, &nan, sizeof nan, cudaMemcpyHostToDevice);
    CHECK_STATUS(ww_gradient(gpu, &m, &sa, &sb, &v, dga, dgb), WW_ERR_NONFINITE);
    CHECK_STATUS(ww_gradient(cpu, &m, &sa, &sb, &v, dga, dgb), WW_ERR_MEMORY_KIND);
    cudaFree(da), cudaFree(db), cudaFree(dga), cudaFree(dgb);
    free(x), free(y);
    ww_ctx_destroy(gpu);
    ww_ctx_destroy(cpu);
#endif
}

#ifdef WW_TEST_CUDA
/* `count` float32 pairs of nx x ny on a fresh context with about `keep` bytes of the device left
 * free (the rest held), against the same on a fresh context with all of it free: the same bits. */
static void sd_tight_memory_case(size_t count, size_t nx, size_t ny, size_t keep, size_t budget, unsigned seed)
{
    enum { DIM = 2 };
    size_t *ox = malloc((count + 1) * sizeof(size_t)), *oy = malloc((count + 1) * sizeof(size_t));
    for (size_t i = 0; i <= count; i++)
        ox[i] = i * nx, oy[i] = i * ny;
    double *x = malloc(count * nx * DIM * sizeof(double)), *y = malloc(count * ny * DIM * sizeof(double));
    ww_rng rng = {seed};
    sd_fill(&rng, x, count * nx * DIM);
    sd_fill(&rng, y, count * ny * DIM);
    const ww_measure m = ww_measure_softdtw(2.0);
    const size_t bytes = (count + count * (nx + ny) * DIM) * sizeof(float);
    ww_ctx *gpu = sd_cuda_ctx();
    void *whole = NULL, *tight = NULL, *hog = NULL;
    if (gpu != NULL) {
        CHECK_STATUS(ww_softdtw_set_memory_budget(gpu, budget), WW_OK);
        whole = sd_gpu_outputs(gpu, &m, 1, count, DIM, ox, oy, x, y);
        ww_ctx_destroy(gpu);
    }
    size_t free_bytes = 0, total_bytes = 0;
    CHECK(cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess);
    if (free_bytes > keep + ((size_t)1 << 28))
        CHECK(cudaMalloc(&hog, free_bytes - keep) == cudaSuccess);
    gpu = sd_cuda_ctx();
    if (gpu != NULL) {
        CHECK_STATUS(ww_softdtw_set_memory_budget(gpu, budget), WW_OK);
        tight = sd_gpu_outputs(gpu, &m, 1, count, DIM, ox, oy, x, y);
        ww_ctx_destroy(gpu);
    }
    CHECK(whole && tight && memcmp(whole, tight, bytes) == 0);
    cudaFree(hog);
    free(whole), free(tight), free(x), free(y), free(ox), free(oy);
}
#endif

/* Whole float32 tables that do not fit the free device memory: the engine keeps checkpoints rather
 * than failing or running chunks of a few pairs, with the same bits as whole tables.
 * - 64 pairs of 8,192 x 1,024: 2 GiB of whole tables, about 0.5 GiB of checkpoints, 1 GiB left
 *   free (chunks of whole tables would hold 28 pairs);
 * - one pair of 16,384 x 4,096 under an unlimited budget per pair: 256 MiB whole, 32 MiB of
 *   checkpoints, 160 MiB left free (WW_ERR_DEVICE_MEMORY before the engine looked at the free
 *   memory). */
void test_cuda_softdtw_free_memory_checkpoints(void)
{
#ifndef WW_TEST_CUDA
    SKIP("test built without the CUDA runtime headers");
#else
    if (!ww_cuda_available())
        SKIP("GPU test: no CUDA backend in this build or no GPU on this machine");
    sd_tight_memory_case(64, 8192, 1024, (size_t)1 << 30, (size_t)256 << 20, 0xf7eeu);
    sd_tight_memory_case(1, 16384, 4096, (size_t)160 << 20, SIZE_MAX, 0xf7efu);
#endif
}

/* The GPU batch with one gradient asked for (the other NULL), with and without the divergence, F32
 * and F64: the same values and the same bits of that gradient as with both. */
void test_cuda_softdtw_one_gradient(void)
{
#ifndef WW_TEST_CUDA
    SKIP("test built without the CUDA runtime headers");
#else
    if (!ww_cuda_available())
        SKIP("GPU test: no CUDA backend in this build or no GPU on this machine");
    ww_ctx *gpu = sd_cuda_ctx();
    if (gpu == NULL)
        return;
    enum { COUNT = 6, DIM = 2 };
    const size_t lx[COUNT] = {1, 37, 300, 513, 900, 2100}, ly[COUNT] = {5, 40, 260, 700, 333, 2000};
    size_t ox[COUNT + 1] = {0}, oy[COUNT + 1] = {0};
    for (size_t i = 0; i < COUNT; i++)
        ox[i + 1] = ox[i] + lx[i], oy[i + 1] = oy[i] + ly[i];
    const size_t nx = ox[COUNT] * DIM, ny = oy[COUNT] * DIM;
    double *x = malloc(nx * sizeof(double)), *y = malloc(ny * sizeof(double));
    ww_rng rng = {0x0e9au};
    sd_fill(&rng, x, nx);
    sd_fill(&rng, y, ny);
    for (int f32 = 0; f32 < 2; f32++)
        for (int divergence = 0; divergence < 2; divergence++) {
            ww_measure m = ww_measure_softdtw(f32 ? 2.0 : 0.7);
            ww_measure_set_divergence(&m, divergence);
            const size_t es = f32 ? sizeof(float) : sizeof(double);
            void *hx = malloc(nx * es), *hy = malloc(ny * es);
            sd_store_as(hx, x, nx, f32);
            sd_store_as(hy, y, ny, f32);
            void *dx, *dy, *dv[3], *dgx[2], *dgy[2];
            CHECK(cudaMalloc(&dx, nx * es) == cudaSuccess && cudaMalloc(&dy, ny * es) == cudaSuccess);
            for (int k = 0; k < 3; k++)
                CHECK(cudaMalloc(&dv[k], COUNT * es) == cudaSuccess);
            for (int k = 0; k < 2; k++)
                CHECK(cudaMalloc(&dgx[k], nx * es) == cudaSuccess && cudaMalloc(&dgy[k], ny * es) == cudaSuccess);
            cudaMemcpy(dx, hx, nx * es, cudaMemcpyHostToDevice);
            cudaMemcpy(dy, hy, ny * es, cudaMemcpyHostToDevice);
            ww_dataset gx = f32 ? ww_dataset_f32(dx, NULL, ox, COUNT, 0, DIM) : ww_dataset_f64(dx, NULL, ox, COUNT, 0, DIM);
            ww_dataset gy = f32 ? ww_dataset_f32(dy, NULL, oy, COUNT, 0, DIM) : ww_dataset_f64(dy, NULL, oy, COUNT, 0, DIM);
            gx.memory = gy.memory = WW_DEVICE;
            CHECK_STATUS(ww_softdtw_batch(gpu, &m, &gx, &gy, dv[0], dgx[0], dgy[0]), WW_OK);
            CHECK_STATUS(ww_softdtw_batch(gpu, &m, &gx, &gy, dv[1], dgx[1], NULL), WW_OK);
            CHECK_STATUS(ww_softdtw_batch(gpu, &m, &gx, &gy, dv[2], NULL, dgy[1]), WW_OK);
            char *a = malloc((nx > ny ? nx : ny) * es), *b = malloc((nx > ny ? nx : ny) * es);
            for (int k = 1; k < 3; k++) {
                cudaMemcpy(a, dv[0], COUNT * es, cudaMemcpyDeviceToHost);
                cudaMemcpy(b, dv[k], COUNT * es, cudaMemcpyDeviceToHost);
                CHECK(memcmp(a, b, COUNT * es) == 0);
            }
            cudaMemcpy(a, dgx[0], nx * es, cudaMemcpyDeviceToHost);
            cudaMemcpy(b, dgx[1], nx * es, cudaMemcpyDeviceToHost);
            CHECK(memcmp(a, b, nx * es) == 0);
            cudaMemcpy(a, dgy[0], ny * es, cudaMemcpyDeviceToHost);
            cudaMemcpy(b, dgy[1], ny * es, cudaMemcpyDeviceToHost);
            CHECK(memcmp(a, b, ny * es) == 0);
            free(a), free(b), free(hx), free(hy);
            cudaFree(dx), cudaFree(dy);
            for (int k = 0; k < 3; k++)
                cudaFree(dv[k]);
            for (int k = 0; k < 2; k++)
                cudaFree(dgx[k]), cudaFree(dgy[k]);
        }
    free(x), free(y);
    ww_ctx_destroy(gpu);
#endif
}

/* The float32 GPU cell in base 2 (softmath.h), on the host: against the natural soft minimum in
 * double; a cell whose three predecessors are off stays off, whatever its cost; the clamp; the
 * backward weight of an off successor (Q = -off) or from an off cell is 0. */
void test_softdtw_base2_f32_cell(void)
{
    const float off = WW_SOFT2_OFF_F32;
    const double gamma = 0.37, k = 1 / (gamma * log(2.0));
    ww_rng rng = {0xba5eu};
    for (int t = 0; t < 1000; t++) {
        const double a = 10 * ww_rng_uniform(&rng), b = 10 * ww_rng_uniform(&rng), c = 10 * ww_rng_uniform(&rng);
        const double cost = ww_rng_uniform(&rng);
        const double lo = fmin(a, fmin(b, c));
        const double want = cost + lo - gamma * log(exp((lo - a) / gamma) + exp((lo - b) / gamma) + exp((lo - c) / gamma));
        const float got = ww_softdtw2_cell_f32((float)(a * k), (float)(b * k), (float)(c * k), (float)(cost * k));
        CHECK(fabs(got / k - want) <= 1e-5 * fmax(1, fabs(want)));
    }
    CHECK(ww_softdtw2_cell_f32(off, off, off, 0) == off);
    CHECK(ww_softdtw2_cell_f32(off, off, off, 1e30f) == off);
    CHECK(ww_softdtw2_cell_f32(off, off, off, INFINITY) == off);
    CHECK(ww_softdtw2_cell_f32(off, 3.0f, off, 2.0f) == 5.0f);
    CHECK(ww_softdtw2_back_weight_f32(-off, 12.5f) == 0.0f);
    CHECK(ww_softdtw2_back_weight_f32(7.0f, off) == 0.0f);
    CHECK(ww_softdtw2_back_weight_f32(-off, off) == 0.0f);
    CHECK(ww_softdtw2_back_weight_f32(4.0f, 4.0f) == 1.0f);
}

/* The GPU engine's shapes against the CPU: dimensions kept in registers (1, 3) and not (5), pairs
 * of one sample, rows fewer and more than columns, pairs of several bands (more rows than a block
 * holds: 2,600 > 2,048 rows in float, 1,100 > 1,024 in double); then the checkpointed backward pass
 * (a budget of 0) against the compact one, bit for bit, with and without a window; small batches
 * (blocks of one warp, 1, 2 or 4 rows per thread), regular and ragged; a NaN: an error and
 * untouched outputs. */
void test_cuda_softdtw_shapes_and_checkpoints(void)
{
#ifndef WW_TEST_CUDA
    SKIP("test built without the CUDA runtime headers");
#else
    if (!ww_cuda_available())
        SKIP("GPU test: no CUDA backend in this build or no GPU on this machine");
    ww_ctx *gpu = sd_cuda_ctx(), *cpu = sd_ctx(WW_ENGINE_AUTO, 0);
    if (gpu == NULL)
        return;
    ww_rng rng = {0x5d7au};
    enum { COUNT = 7 };
    const size_t na[COUNT] = {1, 1, 40, 300, 700, 1100, 2600}, nb[COUNT] = {1, 9, 1, 33, 520, 1300, 2100};
    size_t ox[COUNT + 1] = {0}, oy[COUNT + 1] = {0};
    for (size_t i = 0; i < COUNT; i++)
        ox[i + 1] = ox[i] + na[i], oy[i + 1] = oy[i] + nb[i];
    const size_t dims[3] = {1, 3, 5};
    double *x = malloc(ox[COUNT] * 5 * sizeof(double)), *y = malloc(oy[COUNT] * 5 * sizeof(double));
    sd_fill(&rng, x, ox[COUNT] * 5);
    sd_fill(&rng, y, oy[COUNT] * 5);
    /* float32 tables of long pairs: R grows with the path (to about 10^3 here) and its rounding,
     * divided by gamma, enters every backward weight; so float32 runs with small costs and a large
     * gamma, where float32 holds the budget of sd_gpu_batch_case (gamma 0.5 and costs of order 1 put
     * some float32 gradients of the 2,600 x 2,100 pair 2% off the CPU's, which computes in double) */
    double *xs = malloc(ox[COUNT] * 5 * sizeof(double)), *ys = malloc(oy[COUNT] * 5 * sizeof(double));
    for (size_t k = 0; k < ox[COUNT] * 5; k++)
        xs[k] = 0.25 * x[k];
    for (size_t k = 0; k < oy[COUNT] * 5; k++)
        ys[k] = 0.25 * y[k];
    for (int f32 = 0; f32 < 2; f32++)
        for (size_t d = 0; d < 3; d++) {
            ww_measure m = ww_measure_softdtw(f32 ? 4.0 : 0.5);
            sd_gpu_batch_case(gpu, cpu, &m, f32, COUNT, dims[d], ox, oy, f32 ? xs : x, f32 ? ys : y);
        }
    free(xs), free(ys);
    for (int f32 = 0; f32 < 2; f32++)
        for (int windowed = 0; windowed < 2; windowed++) {
            ww_measure m = ww_measure_softdtw(1.0);
            if (windowed)
                ww_measure_set_window(&m, 150);
            const size_t dim = 2, es = f32 ? sizeof(float) : sizeof(double);
            const size_t bytes = (COUNT + (ox[COUNT] + oy[COUNT]) * dim) * es;
            CHECK_STATUS(ww_softdtw_set_memory_budget(gpu, SIZE_MAX), WW_OK);
            void *compact = sd_gpu_outputs(gpu, &m, f32, COUNT, dim, ox, oy, x, y);
            CHECK_STATUS(ww_softdtw_set_memory_budget(gpu, 0), WW_OK);
            void *checkpointed = sd_gpu_outputs(gpu, &m, f32, COUNT, dim, ox, oy, x, y);
            CHECK(compact && checkpointed && memcmp(compact, checkpointed, bytes) == 0);
            if (windowed) /* and both against the CPU */
                sd_gpu_batch_case(gpu, cpu, &m, f32, COUNT, dim, ox, oy, x, y);
            free(compact), free(checkpointed);
        }
    /* batches whose longest series make blocks of one warp with 1, 2 and 4 rows per thread, regular
     * (equal lengths: no table of pairs) and ragged */
    {
        enum { SMALL = 24 };
        const size_t shapes[4][2] = {{20, 27}, {50, 61}, {128, 100}, {0, 0}};
        size_t sx[SMALL + 1], sy[SMALL + 1];
        for (int shape = 0; shape < 4; shape++) {
            sx[0] = sy[0] = 0;
            for (size_t i = 0; i < SMALL; i++) {
                const size_t lx = shape < 3 ? shapes[shape][0] : 1 + (i * 37) % 90;
                const size_t ly = shape < 3 ? shapes[shape][1] : 1 + (i * 53) % 70;
                sx[i + 1] = sx[i] + lx, sy[i + 1] = sy[i] + ly;
            }
            for (int f32 = 0; f32 < 2; f32++) {
                ww_measure m = ww_measure_softdtw(f32 ? 4.0 : 0.7);
                if (shape == 1)
                    ww_measure_set_window(&m, 9);
                if (shape == 2)
                    ww_measure_set_divergence(&m, 1);
                sd_gpu_batch_case(gpu, cpu, &m, f32, SMALL, 2, sx, sy, x, y);
            }
        }
    }
    /* a NaN in a series: WW_ERR_NONFINITE and nothing written (the kernels read the device's flag) */
    {
        const size_t dim = 2, nx = ox[COUNT] * dim, ny = oy[COUNT] * dim;
        float *hx = malloc(nx * sizeof(float)), *hy = malloc(ny * sizeof(float)), *back = malloc(nx * sizeof(float));
        for (size_t k = 0; k < nx; k++)
            hx[k] = (float)x[k];
        for (size_t k = 0; k < ny; k++)
            hy[k] = (float)y[k];
        hy[ny - 3] = NAN;
        void *dx, *dy, *dv, *dgx, *dgy;
        CHECK(cudaMalloc(&dx, nx * 4) == cudaSuccess && cudaMalloc(&dy, ny * 4) == cudaSuccess &&
              cudaMalloc(&dv, COUNT * 4) == cudaSuccess && cudaMalloc(&dgx, nx * 4) == cudaSuccess &&
              cudaMalloc(&dgy, ny * 4) == cudaSuccess);
        cudaMemcpy(dx, hx, nx * 4, cudaMemcpyHostToDevice);
        cudaMemcpy(dy, hy, ny * 4, cudaMemcpyHostToDevice);
        cudaMemset(dv, 0x7f, COUNT * 4), cudaMemset(dgx, 0x7f, nx * 4), cudaMemset(dgy, 0x7f, ny * 4);
        ww_dataset gx = ww_dataset_f32(dx, NULL, ox, COUNT, 0, dim), gy = ww_dataset_f32(dy, NULL, oy, COUNT, 0, dim);
        gx.memory = gy.memory = WW_DEVICE;
        const ww_measure m = ww_measure_softdtw(1.0);
        CHECK_STATUS(ww_softdtw_batch(gpu, &m, &gx, &gy, dv, dgx, dgy), WW_ERR_NONFINITE);
        cudaMemcpy(back, dgx, nx * 4, cudaMemcpyDeviceToHost);
        int untouched = 1;
        for (size_t k = 0; k < nx; k++)
            untouched &= memcmp(&back[k], "\x7f\x7f\x7f\x7f", 4) == 0;
        cudaMemcpy(back, dv, COUNT * 4, cudaMemcpyDeviceToHost);
        for (size_t k = 0; k < COUNT; k++)
            untouched &= memcmp(&back[k], "\x7f\x7f\x7f\x7f", 4) == 0;
        float *back_y = malloc(ny * sizeof(float));
        cudaMemcpy(back_y, dgy, ny * 4, cudaMemcpyDeviceToHost);
        for (size_t k = 0; k < ny; k++)
            untouched &= memcmp(&back_y[k], "\x7f\x7f\x7f\x7f", 4) == 0;
        free(back_y);
        CHECK(untouched);
        cudaFree(dx), cudaFree(dy), cudaFree(dv), cudaFree(dgx), cudaFree(dgy);
        free(hx), free(hy), free(back);
    }
    free(x), free(y);
    ww_ctx_destroy(gpu);
    ww_ctx_destroy(cpu);
#endif
}
