#define _POSIX_C_SOURCE 200809L /* mkdtemp */
/* Elastic image matching (issue 11): the engine against the plain reference (image_reference.h),
 * identity, symmetry, matrices, kNN, the warping map and bad input. */
#include "image_reference.h"
#include "ww_test.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef WW_TEST_CUDA
#include <cuda_runtime.h>
#endif

/* A random image of the given dtype; `values` receives the same pixels as doubles. */
static void *random_image(ww_rng *rng, size_t h, size_t w, size_t c, ww_dtype dt, double *values, ww_image *img)
{
    const size_t n = h * w * c;
    void *p = malloc(n ? n * 8 : 8);
    for (size_t k = 0; k < n; k++) {
        if (dt == WW_U8) {
            unsigned char v = (unsigned char)ww_rng_below(rng, 256);
            ((unsigned char *)p)[k] = v;
            values[k] = v;
        } else if (dt == WW_F32) {
            float v = (float)(ww_rng_uniform(rng) * 2 - 1);
            ((float *)p)[k] = v;
            values[k] = v;
        } else {
            double v = ww_rng_uniform(rng) * 2 - 1;
            ((double *)p)[k] = v;
            values[k] = v;
        }
    }
    *img = ww_image_make(p, h, w, c, dt);
    return p;
}

/* |got - want| within rel of want (both +inf counts as equal). */
static int close_or_inf(double got, double want, double rel)
{
    if (isinf(want) || isinf(got))
        return isinf(want) && isinf(got);
    return fabs(got - want) <= rel * (fabs(want) > 1 ? fabs(want) : 1);
}

void test_image_dpa_matches_reference(void)
{
    /* one-row images: the image distance is the 1D DPA of the rows (the outer DP of a 1 x 1 matrix
     * of r is 2r / 2); one-column images give the outer DP over pixel distances */
    ww_ctx *ctx = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_AUTO, 1);
    ww_rng rng = {0x1d1e5ULL};
    double *a = malloc(200 * sizeof(double)), *b = malloc(200 * sizeof(double)), *d = malloc(200 * 200 * sizeof(double));
    int bad = 0, infeasible = 0;
    for (int t = 0; t < 400; t++) {
        size_t n = 1 + ww_rng_below(&rng, 200), m = 1 + ww_rng_below(&rng, 200);
        if (t % 4 == 0) /* near the slope limit: m - 1 = 2 (n - 1) + {-1, 0, 1} */
            m = n <= 100 ? 2 * n - 1 + (size_t)(t / 4 % 3) - 1 : m;
        if (m < 1 || m > 200)
            m = 1 + ww_rng_below(&rng, 200);
        for (size_t k = 0; k < n; k++)
            a[k] = ww_rng_uniform(&rng) * 10 - 5;
        for (size_t k = 0; k < m; k++)
            b[k] = ww_rng_uniform(&rng) * 10 - 5;
        for (size_t i = 0; i < n; i++)
            for (size_t j = 0; j < m; j++)
                d[i * m + j] = fabs(a[i] - b[j]);
        const double want = ref_dpa(d, n, m);
        infeasible += isinf(want);
        for (int orient = 0; orient < 2; orient++) {
            ww_image ia = orient ? ww_image_make(a, n, 1, 1, WW_F64) : ww_image_make(a, 1, n, 1, WW_F64);
            ww_image ib = orient ? ww_image_make(b, m, 1, 1, WW_F64) : ww_image_make(b, 1, m, 1, WW_F64);
            double got = -1, back = -1;
            CHECK_STATUS(ww_image_distance(ctx, &ia, &ib, NULL, &got), WW_OK);
            CHECK_STATUS(ww_image_distance(ctx, &ib, &ia, NULL, &back), WW_OK);
            if (!close_or_inf(got, want, 1e-12) || !(got == back || (isinf(got) && isinf(back)))) {
                if (bad++ < 5)
                    fprintf(stderr, "  n %zu m %zu orient %d: got %.17g back %.17g want %.17g\n", n, m, orient, got,
                            back, want);
            }
        }
    }
    CHECK(bad == 0);
    CHECK(infeasible > 20); /* infeasible ratios were exercised, and give +inf */
    /* the exact limit: m - 1 == 2 (n - 1) has a path, one more has none */
    for (size_t n = 1; n <= 30; n++) {
        for (size_t k = 0; k < 2 * n; k++)
            a[k] = (double)(k % 7);
        ww_image ia = ww_image_make(a, 1, n, 1, WW_F64), ib = ww_image_make(a, 1, 2 * n - 1, 1, WW_F64),
                 ic = ww_image_make(a, 1, 2 * n, 1, WW_F64);
        double v1 = 0, v2 = 0;
        CHECK_STATUS(ww_image_distance(ctx, &ia, &ib, NULL, &v1), WW_OK);
        CHECK_STATUS(ww_image_distance(ctx, &ia, &ic, NULL, &v2), WW_OK);
        CHECK(isfinite(v1));
        CHECK(isinf(v2) && v2 > 0);
    }
    free(a);
    free(b);
    free(d);
    ww_ctx_destroy(ctx);
}

void test_image_random_matches_reference(void)
{
    ww_ctx *ctx = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_AUTO, 0);
    ww_rng rng = {0xab5e11ULL};
    const ww_dtype dtypes[3] = {WW_U8, WW_F32, WW_F64};
    double *va = malloc(64 * 64 * 3 * sizeof(double)), *vb = malloc(64 * 64 * 3 * sizeof(double));
    int bad = 0;
    for (int t = 0; t < 72; t++) {
        const ww_dtype dt = dtypes[t % 3];
        const size_t c = (t / 3) % 2 ? 3 : 1;
        const int squared = (t / 6) % 2;
        /* mostly small, some up to 64 x 64 */
        const size_t top = t % 12 == 11 ? 64 : 20;
        size_t h1 = 1 + ww_rng_below(&rng, top), w1 = 1 + ww_rng_below(&rng, top);
        size_t h2 = 1 + ww_rng_below(&rng, top), w2 = 1 + ww_rng_below(&rng, top);
        if (t % 2 == 0) { /* feasible ratios most of the time */
            h2 = h1 + ww_rng_below(&rng, h1 / 2 + 1);
            w2 = w1 > 2 ? w1 - ww_rng_below(&rng, w1 / 3) : w1;
        }
        if (t == 0)
            h1 = w1 = h2 = w2 = 1;
        if (t == 1)
            h1 = w1 = h2 = w2 = 64;
        ww_image a, b;
        void *pa = random_image(&rng, h1, w1, c, dt, va, &a);
        void *pb = random_image(&rng, h2, w2, c, dt, vb, &b);
        const double want = ref_image_distance(va, h1, w1, vb, h2, w2, c, squared);
        ww_image_params p = ww_image_params_default();
        p.squared = squared;
        double got = -1, back = -1;
        CHECK_STATUS(ww_image_distance(ctx, &a, &b, &p, &got), WW_OK);
        CHECK_STATUS(ww_image_distance(ctx, &b, &a, &p, &back), WW_OK);
        const double tol = dt == WW_F64 ? 1e-12 : 2e-5;
        if (!close_or_inf(got, want, tol) || !(got == back || (isinf(got) && isinf(back)))) {
            if (bad++ < 5)
                fprintf(stderr, "  %zux%zu vs %zux%zu c %zu dtype %d sq %d: got %.9g back %.9g want %.9g\n", h1, w1,
                        h2, w2, c, (int)dt, squared, got, back, want);
        }
        /* identity: exactly 0 */
        double self = -1;
        CHECK_STATUS(ww_image_distance(ctx, &a, &a, &p, &self), WW_OK);
        CHECK(self == 0);
        free(pa);
        free(pb);
    }
    CHECK(bad == 0);
    free(va);
    free(vb);
    ww_ctx_destroy(ctx);
}

static int count_progress(uint64_t done, uint64_t total, void *user)
{
    uint64_t *seen = (uint64_t *)user;
    seen[0]++;
    seen[1] = done;
    seen[2] = total;
    return seen[3] != 0 && seen[0] >= seen[3]; /* cancel at call seen[3] when set */
}

void test_image_pairwise_and_knn(void)
{
    ww_ctx *ctx = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_AUTO, 0);
    ww_rng rng = {0x9a1e5ULL};
    enum { NX = 13, NY = 7 };
    ww_image x[NX], y[NY];
    void *px[NX], *py[NY];
    double *tmp = malloc(32 * 32 * sizeof(double));
    for (int k = 0; k < NX; k++) /* ragged sizes, one with an infeasible height */
        px[k] = random_image(&rng, k == 5 ? 30 : 6 + ww_rng_below(&rng, 10), 6 + ww_rng_below(&rng, 10), 1,
                             k % 2 ? WW_U8 : WW_F32, tmp, &x[k]);
    for (int k = 0; k < NY; k++)
        py[k] = random_image(&rng, 6 + ww_rng_below(&rng, 10), 6 + ww_rng_below(&rng, 10), 1, WW_F32, tmp, &y[k]);
    /* x against y, and x against itself, each entry as one distance */
    double full[NX * NY], self[NX * NX];
    CHECK_STATUS(ww_image_pairwise(ctx, x, NX, y, NY, NULL, full, NULL), WW_OK);
    CHECK_STATUS(ww_image_pairwise(ctx, x, NX, NULL, 0, NULL, self, NULL), WW_OK);
    int bad = 0, infinite = 0;
    for (int i = 0; i < NX; i++) {
        for (int j = 0; j < NY; j++) {
            double d = -1;
            CHECK_STATUS(ww_image_distance(ctx, &x[i], &y[j], NULL, &d), WW_OK);
            bad += !(d == full[i * NY + j] || (isinf(d) && isinf(full[i * NY + j])));
            infinite += isinf(d);
        }
        for (int j = 0; j < NX; j++) {
            double d = -1;
            CHECK_STATUS(ww_image_distance(ctx, &x[i], &x[j], NULL, &d), WW_OK);
            bad += !(d == self[i * NX + j] || (isinf(d) && isinf(self[i * NX + j])));
            bad += !(self[i * NX + j] == self[j * NX + i] || (isinf(self[i * NX + j]) && isinf(self[j * NX + i])));
        }
        bad += self[i * NX + i] != 0;
    }
    CHECK(bad == 0);
    CHECK(infinite > 0);
    /* a block of the self matrix in float with a stride, and progress to the end */
    float block[5 * 9];
    for (int k = 0; k < 5 * 9; k++)
        block[k] = -7;
    ww_pairwise_options o = ww_pairwise_options_default();
    o.row_begin = 2, o.row_end = 7, o.col_begin = 4, o.col_end = 12, o.out_stride = 9, o.out_dtype = WW_F32;
    uint64_t seen[4] = {0, 0, 0, 0};
    o.progress = count_progress;
    o.progress_user = seen;
    CHECK_STATUS(ww_image_pairwise(ctx, x, NX, NULL, 0, NULL, block, &o), WW_OK);
    for (int i = 2; i < 7; i++) {
        for (int j = 4; j < 12; j++)
            bad += !(block[(i - 2) * 9 + (j - 4)] == (float)self[i * NX + j]);
        bad += block[(i - 2) * 9 + 8] != -7; /* past the block's width: untouched */
    }
    CHECK(bad == 0);
    CHECK(seen[0] >= 1 && seen[1] == seen[2] && seen[2] > 0);
    /* cancel at the first report */
    seen[0] = 0, seen[3] = 1;
    CHECK_STATUS(ww_image_pairwise(ctx, x, NX, y, NY, NULL, full, &o), WW_ERR_SHAPE); /* block outside 13 x 7 */
    o.col_begin = 0, o.col_end = 0, o.out_stride = 0, o.row_begin = 0, o.row_end = 0;
    CHECK_STATUS(ww_image_pairwise(ctx, x, NX, y, NY, NULL, full, &o), WW_ERR_CANCELLED);
    /* kNN: the sorted rows of the matrix, ties to the smaller index, +inf last */
    size_t idx[NX * 3];
    double dist[NX * 3];
    CHECK_STATUS(ww_image_knn(ctx, x, NX, y, NY, NULL, 3, idx, dist, NULL), WW_OK);
    CHECK_STATUS(ww_image_pairwise(ctx, x, NX, y, NY, NULL, full, NULL), WW_OK);
    for (int q = 0; q < NX; q++)
        for (int r = 0; r < 3; r++) {
            const double v = full[q * NY + idx[q * 3 + r]];
            bad += !(v == dist[q * 3 + r] || (isinf(v) && isinf(dist[q * 3 + r])));
            int smaller = 0; /* how many entries of the row come strictly before it */
            for (int j = 0; j < NY; j++)
                smaller += full[q * NY + j] < v || (full[q * NY + j] == v && (size_t)j < idx[q * 3 + r]);
            bad += smaller != r && !isinf(v);
        }
    CHECK(bad == 0);
    CHECK_STATUS(ww_image_knn(ctx, x, NX, y, NY, NULL, 0, idx, dist, NULL), WW_ERR_SHAPE);
    CHECK_STATUS(ww_image_knn(ctx, x, NX, y, NY, NULL, NY + 1, idx, dist, NULL), WW_ERR_SHAPE);
    for (int k = 0; k < NX; k++)
        free(px[k]);
    for (int k = 0; k < NY; k++)
        free(py[k]);
    free(tmp);
    ww_ctx_destroy(ctx);
}

/* Checks that a map is a valid pair of nested paths covering both images. */
static int map_is_valid(const size_t *mt, size_t count, const ww_image *a, const ww_image *b)
{
    char *seen_a = calloc(a->height * a->width, 1), *seen_b = calloc(b->height * b->width, 1);
    int ok = count > 0 && mt[0] == 0 && mt[1] == 0 && mt[2] == 0 && mt[3] == 0;
    for (size_t k = 0; k < count; k++) {
        const size_t *e = mt + 4 * k;
        if (e[0] >= a->height || e[1] >= a->width || e[2] >= b->height || e[3] >= b->width)
            return 0;
        seen_a[e[0] * a->width + e[1]] = 1;
        seen_b[e[2] * b->width + e[3]] = 1;
        if (k > 0) {
            const size_t *p = e - 4;
            if (e[0] == p[0] && e[2] == p[2]) { /* the same row pair: one step of the pixel path */
                ok &= e[1] >= p[1] && e[3] >= p[3] && e[1] - p[1] <= 1 && e[3] - p[3] <= 1 && e[1] + e[3] > p[1] + p[3];
            } else { /* a step of the row path, from the end of one pixel path to the start of the next */
                ok &= e[0] >= p[0] && e[2] >= p[2] && e[0] - p[0] <= 1 && e[2] - p[2] <= 1;
                ok &= p[1] == a->width - 1 && p[3] == b->width - 1 && e[1] == 0 && e[3] == 0;
            }
        }
    }
    const size_t *last = mt + 4 * (count - 1);
    ok &= last[0] == a->height - 1 && last[1] == a->width - 1 && last[2] == b->height - 1 && last[3] == b->width - 1;
    for (size_t k = 0; k < a->height * a->width; k++)
        ok &= seen_a[k];
    for (size_t k = 0; k < b->height * b->width; k++)
        ok &= seen_b[k];
    free(seen_a);
    free(seen_b);
    return ok;
}

void test_image_map(void)
{
    ww_ctx *ctx = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_AUTO, 0);
    /* X smooth, Y = each row of X stretched horizontally by 3/2 (a smooth resampling) */
    enum { H = 12, W1 = 20, W2 = 30 };
    double xv[H * W1], yv[H * W2];
    for (int i = 0; i < H; i++) {
        for (int n = 0; n < W1; n++)
            xv[i * W1 + n] = 40 * sin(0.35 * n + 0.5 * i) + 3 * n;
        for (int m = 0; m < W2; m++) { /* source position m * (W1 - 1) / (W2 - 1), linearly interpolated */
            const double s = (double)m * (W1 - 1) / (W2 - 1);
            const int n0 = (int)s;
            const double f = s - n0;
            const double v1 = n0 + 1 < W1 ? 40 * sin(0.35 * (n0 + 1) + 0.5 * i) + 3 * (n0 + 1) : 0;
            yv[i * W2 + m] = (1 - f) * (40 * sin(0.35 * n0 + 0.5 * i) + 3 * n0) + f * v1;
        }
    }
    ww_image a = ww_image_make(xv, H, W1, 1, WW_F64), b = ww_image_make(yv, H, W2, 1, WW_F64);
    const size_t cap = ww_image_map_capacity(&a, &b);
    size_t *mt = malloc(4 * cap * sizeof(size_t)), count = 0;
    double dist = -1, plain = -2;
    CHECK_STATUS(ww_image_map(ctx, &a, &b, NULL, &dist, mt, cap, &count), WW_OK);
    CHECK_STATUS(ww_image_distance(ctx, &a, &b, NULL, &plain), WW_OK);
    CHECK(dist == plain);
    CHECK(map_is_valid(mt, count, &a, &b));
    /* the rows match themselves, and each pixel of Y its source column within one pixel */
    int off = 0;
    double warped[H * W2];
    for (size_t k = 0; k < count; k++) {
        const size_t *e = mt + 4 * k;
        off += e[0] != e[2];
        const double src = (double)e[3] * (W1 - 1) / (W2 - 1);
        off += fabs((double)e[1] - src) > 1.0;
        warped[e[2] * W2 + e[3]] = xv[e[0] * W1 + e[1]]; /* X warped onto Y by the map */
    }
    CHECK(off == 0);
    /* the warped image reproduces Y up to the interpolation error of a one-pixel shift */
    double worst = 0;
    for (int k = 0; k < H * W2; k++)
        worst = fabs(warped[k] - yv[k]) > worst ? fabs(warped[k] - yv[k]) : worst;
    CHECK(worst < 20); /* the slope of a row is at most 40 * 0.35 + 3 = 17 per pixel */
    /* the map reproduces the distance: the path's cells carry it (a mean over matched pixels) */
    /* an image with itself: the identity map, distance 0 */
    CHECK_STATUS(ww_image_map(ctx, &a, &a, NULL, &dist, mt, cap, &count), WW_OK);
    CHECK(dist == 0 && count == H * W1);
    int identity = 1;
    for (size_t k = 0; k < count; k++)
        identity &= mt[4 * k] == mt[4 * k + 2] && mt[4 * k + 1] == mt[4 * k + 3];
    CHECK(identity);
    /* random pairs in float and 3 channels: valid maps, distances as ww_image_distance */
    ww_rng rng = {0x3a9ULL};
    double tmp[20 * 20 * 3];
    for (int t = 0; t < 20; t++) {
        ww_image ra, rb;
        const size_t c = t % 2 ? 3 : 1;
        void *pa = random_image(&rng, 1 + ww_rng_below(&rng, 12), 2 + ww_rng_below(&rng, 12), c, t % 3 ? WW_F32 : WW_U8,
                                tmp, &ra);
        void *pb = random_image(&rng, ra.height + ww_rng_below(&rng, 3), ra.width + ww_rng_below(&rng, 3), c, WW_F32,
                                tmp, &rb);
        CHECK_STATUS(ww_image_map(ctx, &ra, &rb, NULL, &dist, mt, cap, &count), WW_OK);
        CHECK_STATUS(ww_image_distance(ctx, &ra, &rb, NULL, &plain), WW_OK);
        CHECK(dist == plain || (isinf(dist) && isinf(plain)));
        CHECK(isinf(dist) ? count == 0 : map_is_valid(mt, count, &ra, &rb));
        free(pa);
        free(pb);
    }
    CHECK_STATUS(ww_image_map(ctx, &a, &b, NULL, &dist, mt, cap - 1, &count), WW_ERR_SHAPE);
    free(mt);
    ww_ctx_destroy(ctx);
}

void test_image_bad_input(void)
{
    ww_ctx *ctx = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_AUTO, 0);
    float px[12] = {0};
    double dv[12] = {0};
    ww_image good = ww_image_make(px, 2, 2, 3, WW_F32), gray = ww_image_make(px, 3, 4, 1, WW_F32);
    double d = 0;
    CHECK_STATUS(ww_image_distance(ctx, &good, &good, NULL, &d), WW_OK);
    ww_image e = good;
    e.height = 0;
    CHECK_STATUS(ww_image_distance(ctx, &e, &good, NULL, &d), WW_ERR_EMPTY);
    e = good, e.width = 0;
    CHECK_STATUS(ww_image_distance(ctx, &good, &e, NULL, &d), WW_ERR_EMPTY);
    e = good, e.channels = 0;
    CHECK_STATUS(ww_image_check(&e), WW_ERR_EMPTY);
    e = good, e.pixels = NULL;
    CHECK_STATUS(ww_image_distance(ctx, &e, &good, NULL, &d), WW_ERR_NULL_POINTER);
    CHECK_STATUS(ww_image_distance(ctx, &good, &gray, NULL, &d), WW_ERR_SHAPE); /* mismatched channels */
    CHECK_STATUS(ww_image_distance(NULL, &good, &good, NULL, &d), WW_ERR_NULL_POINTER);
    CHECK_STATUS(ww_image_distance(ctx, &good, &good, NULL, NULL), WW_ERR_NULL_POINTER);
    e = good, e.dtype = (ww_dtype)7;
    CHECK_STATUS(ww_image_distance(ctx, &e, &good, NULL, &d), WW_ERR_DTYPE);
    e = good, e.memory = WW_DEVICE;
    CHECK_STATUS(ww_image_distance(ctx, &e, &good, NULL, &d), WW_ERR_MEMORY_KIND);
    e = good, e.height = SIZE_MAX / 2;
    CHECK_STATUS(ww_image_check(&e), WW_ERR_OVERFLOW);
    px[5] = NAN;
    CHECK_STATUS(ww_image_distance(ctx, &good, &gray, NULL, &d), WW_ERR_NONFINITE);
    px[5] = INFINITY;
    CHECK_STATUS(ww_image_check(&good), WW_ERR_NONFINITE);
    px[5] = 0;
    dv[11] = -INFINITY;
    ww_image g64 = ww_image_make(dv, 2, 2, 3, WW_F64);
    CHECK_STATUS(ww_image_distance(ctx, &good, &g64, NULL, &d), WW_ERR_NONFINITE);
    /* sets: empty, mixed channels, NULL */
    double out[4];
    ww_image set[2] = {good, gray};
    CHECK_STATUS(ww_image_pairwise(ctx, set, 0, NULL, 0, NULL, out, NULL), WW_ERR_EMPTY);
    CHECK_STATUS(ww_image_pairwise(ctx, set, 2, NULL, 0, NULL, out, NULL), WW_ERR_SHAPE);
    CHECK_STATUS(ww_image_pairwise(ctx, NULL, 2, NULL, 0, NULL, out, NULL), WW_ERR_NULL_POINTER);
    CHECK_STATUS(ww_image_pairwise(ctx, set, 1, set, 0, NULL, out, NULL), WW_ERR_EMPTY);
    size_t idx[2];
    CHECK_STATUS(ww_image_knn(ctx, set, 1, set + 1, 1, NULL, 1, idx, out, NULL), WW_ERR_SHAPE);
    /* WW_U8 is for images: series and datasets refuse it */
    unsigned char bytes[4] = {1, 2, 3, 4};
    ww_series s = {bytes, NULL, 4, 1, WW_U8, WW_HOST};
    CHECK_STATUS(ww_series_check(&s), WW_ERR_DTYPE);
    ww_measure m = ww_measure_dtw();
    CHECK_STATUS(ww_distance(ctx, &m, &s, &s, &d), WW_ERR_DTYPE);
    ww_dataset ds = {bytes, NULL, NULL, 2, 2, 1, WW_U8, WW_HOST};
    CHECK_STATUS(ww_dataset_check(&ds), WW_ERR_DTYPE);
    CHECK_STATUS(ww_pairwise(ctx, &m, &ds, NULL, out, NULL), WW_ERR_DTYPE);
    ww_ctx_destroy(ctx);
}

/* ---------------------------------------------------------------- the CLI's image commands */

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* Runs the CLI in `dir` with `env` (may be ""); its stdout and stderr in out/err (truncated). */
static int run_image_cli(const char *dir, const char *env, const char *args, char *out, size_t out_size, char *err,
                         size_t err_size)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "cd '%s' && %s '%s' %s >stdout.txt 2>stderr.txt </dev/null", dir, env, WW_CLI_PATH,
             args);
    int status = system(cmd);
    const char *names[2] = {"stdout.txt", "stderr.txt"};
    char *bufs[2] = {out, err};
    size_t sizes[2] = {out_size, err_size};
    for (int k = 0; k < 2; k++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, names[k]);
        FILE *fp = fopen(path, "rb");
        size_t n = fp ? fread(bufs[k], 1, sizes[k] - 1, fp) : 0;
        bufs[k][n] = 0;
        if (fp)
            fclose(fp);
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void write_bytes(const char *dir, const char *name, const void *data, size_t n)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *fp = fopen(path, "wb");
    if (fp) {
        fwrite(data, 1, n, fp);
        fclose(fp);
    }
}

/* A binary PGM of h x w bytes. */
static void write_pgm(const char *dir, const char *name, const unsigned char *px, size_t h, size_t w)
{
    char buf[8192];
    int head = snprintf(buf, sizeof buf, "P5\n# test\n%zu %zu\n255\n", w, h);
    memcpy(buf + head, px, h * w);
    write_bytes(dir, name, buf, (size_t)head + h * w);
}

static int file_exists(const char *dir, const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    struct stat st;
    return stat(path, &st) == 0;
}

/* Nothing but the files we made (no temporary output left behind). */
static int no_temp_files(const char *dir)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "ls -A '%s' | grep -q '^\\.'", dir);
    return system(cmd) != 0;
}

void test_image_cli(void)
{
    char dir[] = "/tmp/ww_image_cli_XXXXXX";
    if (mkdtemp(dir) == NULL)
        SKIP("no temporary folder");
    char out[4096], err[4096], path[1024];
    ww_rng rng = {0xc11ULL};
    unsigned char a[10 * 12], b[11 * 12];
    for (size_t k = 0; k < sizeof a; k++)
        a[k] = (unsigned char)ww_rng_below(&rng, 256);
    for (size_t k = 0; k < sizeof b; k++)
        b[k] = (unsigned char)ww_rng_below(&rng, 256);
    write_pgm(dir, "a.pgm", a, 10, 12);
    write_pgm(dir, "b.pgm", b, 11, 12);
    /* image-distance prints ww_image_distance's value */
    ww_ctx *ctx = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_AUTO, 0);
    ww_image ia = ww_image_make(a, 10, 12, 1, WW_U8), ib = ww_image_make(b, 11, 12, 1, WW_U8);
    double want = 0;
    CHECK_STATUS(ww_image_distance(ctx, &ia, &ib, NULL, &want), WW_OK);
    CHECK(run_image_cli(dir, "", "image-distance a.pgm b.pgm", out, sizeof out, err, sizeof err) == 0);
    CHECK(strtod(out, NULL) == want);
    /* a class folder tree: image-pairwise and image-classify */
    snprintf(path, sizeof path, "mkdir -p '%s/train/x' '%s/train/y' '%s/test/x'", dir, dir, dir);
    CHECK(system(path) == 0);
    write_pgm(dir, "train/x/1.pgm", a, 10, 12);
    write_pgm(dir, "train/y/1.pgm", b, 11, 12);
    write_pgm(dir, "test/x/1.pgm", a, 10, 12);
    CHECK(run_image_cli(dir, "", "image-pairwise train -o m.csv -q --backend cpu", out, sizeof out, err,
                        sizeof err) == 0);
    CHECK(file_exists(dir, "m.csv"));
    CHECK(run_image_cli(dir, "", "image-classify train test", out, sizeof out, err, sizeof err) == 0);
    CHECK(strstr(out, "accuracy 1.0000") != NULL);
    CHECK(run_image_cli(dir, "", "image-classify train test -o c.csv -q --squared", out, sizeof out, err, sizeof err) == 0);
    CHECK(file_exists(dir, "c.csv"));
    /* X against Y, squared: the library's value */
    ww_image_params sq = ww_image_params_default();
    sq.squared = 1;
    double want_sq = 0;
    CHECK_STATUS(ww_image_distance(ctx, &ia, &ib, &sq, &want_sq), WW_OK);
    CHECK(run_image_cli(dir, "", "image-pairwise a.pgm b.pgm --squared -o ab.csv -q", out, sizeof out, err,
                        sizeof err) == 0);
    snprintf(path, sizeof path, "%s/ab.csv", dir);
    FILE *fp = fopen(path, "r");
    double got_sq = -1;
    CHECK(fp != NULL && fscanf(fp, "%lf", &got_sq) == 1);
    if (fp)
        fclose(fp);
    CHECK(got_sq == want_sq);
    /* usage errors: no output, an unknown output format, an option of another command */
    CHECK(run_image_cli(dir, "", "image-pairwise train", out, sizeof out, err, sizeof err) == 2);
    CHECK(run_image_cli(dir, "", "image-pairwise train -o m.bin", out, sizeof out, err, sizeof err) == 2);
    CHECK(run_image_cli(dir, "", "image-distance a.pgm b.pgm --measure dtw", out, sizeof out, err, sizeof err) == 2);
    /* bad files: truncated, malformed, missing, PNG, unknown: exit 1 with the reason, no output */
    write_bytes(dir, "trunc.pgm", "P5\n4 4\n255\n\001\002", 13);
    write_bytes(dir, "bad.pgm", "P5\nfour 4\n255\n", 15);
    write_bytes(dir, "x.png", "\x89PNG", 4);
    static const struct {
        const char *args, *says;
    } bad[] = {
        {"image-distance a.pgm trunc.pgm", "truncated"},
        {"image-distance a.pgm bad.pgm", "malformed"},
        {"image-distance a.pgm missing.pgm", "cannot open"},
        {"image-distance a.pgm x.png", "PNG"},
        {"image-distance a.pgm stdout.txt", "unknown image format"},
        {"image-pairwise trunc.pgm a.pgm -o o.npy", "truncated"},
        {"image-classify a.pgm train", "no class label"},
    };
    for (size_t t = 0; t < sizeof bad / sizeof bad[0]; t++) {
        int rc = run_image_cli(dir, "", bad[t].args, out, sizeof out, err, sizeof err);
        CHECK(rc == 1);
        if (strstr(err, bad[t].says) == NULL) {
            ww_test_failures++;
            fprintf(stderr, "  '%s' said '%s', expected '%s'\n", bad[t].args, err, bad[t].says);
        }
    }
    CHECK(!file_exists(dir, "o.npy"));
    /* a folder with a truncated image: no output at all */
    write_bytes(dir, "train/y/2.pgm", "P5\n4 4\n255\n\001", 12);
    CHECK(run_image_cli(dir, "", "image-pairwise train -o m2.npy", out, sizeof out, err, sizeof err) == 1);
    CHECK(strstr(err, "train/y/2.pgm") != NULL);
    CHECK(!file_exists(dir, "m2.npy"));
    snprintf(path, sizeof path, "%s/train/y/2.pgm", dir);
    CHECK(remove(path) == 0);
    /* .npy stacks: float32 with a NaN, mismatched channels, a stack and its labels */
    const char npy_head[] = "\x93NUMPY\x01\x00\x76\x00{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2, 2), }";
    char npy[128 + 32];
    memset(npy, ' ', sizeof npy);
    memcpy(npy, npy_head, sizeof npy_head - 1);
    npy[10 + 0x76 - 1] = '\n';
    float fv[8] = {1, 2, 3, 4, 5, 6, 7, NAN};
    memcpy(npy + 10 + 0x76, fv, sizeof fv);
    write_bytes(dir, "nan.npy", npy, 10 + 0x76 + sizeof fv);
    CHECK(run_image_cli(dir, "", "image-pairwise nan.npy -o n.npy", out, sizeof out, err, sizeof err) == 1);
    CHECK(strstr(err, "NaN") != NULL);
    fv[7] = 8;
    memcpy(npy + 10 + 0x76, fv, sizeof fv);
    write_bytes(dir, "ok.npy", npy, 10 + 0x76 + sizeof fv);
    CHECK(run_image_cli(dir, "", "image-pairwise ok.npy -o n.npy -q", out, sizeof out, err, sizeof err) == 0);
    /* a stack's labels: NAME.labels.txt, one line per image */
    CHECK(run_image_cli(dir, "", "image-classify ok.npy ok.npy", out, sizeof out, err, sizeof err) == 1);
    CHECK(strstr(err, "ok.labels.txt") != NULL);
    write_bytes(dir, "ok.labels.txt", "a\n", 2);
    CHECK(run_image_cli(dir, "", "image-classify ok.npy ok.npy", out, sizeof out, err, sizeof err) == 1);
    CHECK(strstr(err, "fewer labels") != NULL);
    write_bytes(dir, "ok.labels.txt", "a\nb\n", 4);
    CHECK(run_image_cli(dir, "", "image-classify ok.npy ok.npy", out, sizeof out, err, sizeof err) == 0);
    CHECK(strstr(out, "accuracy 1.0000") != NULL);
    write_bytes(dir, "ok.npy", npy, 10 + 0x76 + sizeof fv - 1); /* truncated data */
    CHECK(run_image_cli(dir, "", "image-pairwise ok.npy -o n2.npy", out, sizeof out, err, sizeof err) == 1);
    CHECK(strstr(err, "truncated") != NULL && !file_exists(dir, "n2.npy"));
    unsigned char rgb[2 * 2 * 3] = {0};
    char ppm[64];
    int head = snprintf(ppm, sizeof ppm, "P6\n2 2\n255\n");
    memcpy(ppm + head, rgb, sizeof rgb);
    write_bytes(dir, "c.ppm", ppm, (size_t)head + sizeof rgb);
    CHECK(run_image_cli(dir, "", "image-distance a.pgm c.ppm", out, sizeof out, err, sizeof err) == 1);
    CHECK(strstr(err, "channels") != NULL);
    /* damaged files (cut short, bytes changed): a clear error or a result, never a crash */
    {
        char pgm[256];
        const int pgm_len = snprintf(pgm, sizeof pgm, "P5\n# c\n6 4\n255\n");
        memcpy(pgm + pgm_len, a, 24);
        const char *originals[2] = {pgm, npy};
        const size_t sizes[2] = {(size_t)pgm_len + 24, 10 + 0x76 + sizeof fv};
        int crashes = 0;
        for (int t = 0; t < 60; t++) {
            const int kind = t % 2;
            char buf[512];
            size_t n = sizes[kind];
            memcpy(buf, originals[kind], n);
            if (t % 3 == 0)
                n = ww_rng_below(&rng, n); /* cut */
            for (int f = 0; f < 1 + t % 4 && n > 0; f++)
                buf[ww_rng_below(&rng, n)] = (char)ww_rng_below(&rng, 256); /* changed bytes */
            write_bytes(dir, kind ? "damaged.npy" : "damaged.pgm", buf, n);
            int rc = run_image_cli(dir, "", kind ? "image-pairwise damaged.npy -o dmg.npy -q" : "image-distance a.pgm damaged.pgm",
                                   out, sizeof out, err, sizeof err);
            if (rc != 0 && rc != 1) {
                if (crashes++ < 3)
                    fprintf(stderr, "  damaged file %d: exit %d: %s\n", t, rc, err);
            }
        }
        CHECK(crashes == 0);
        CHECK(no_temp_files(dir));
    }
    /* Ctrl-C at the output's creation, then at its completion: exit 130, no output, no temporary file */
    for (int at = 1; at <= 2; at++) {
        CHECK(run_image_cli(dir, at == 1 ? "WW_CLI_INTERRUPT_AT=1" : "WW_CLI_INTERRUPT_AT=2",
                            "image-pairwise train -o i.npy", out, sizeof out, err, sizeof err) == 130);
        CHECK(!file_exists(dir, "i.npy"));
        CHECK(no_temp_files(dir));
    }
    ww_ctx_destroy(ctx);
    snprintf(path, sizeof path, "rm -rf '%s'", dir);
    CHECK(system(path) == 0);
}

/* ---------------------------------------------------------------- the GPU engine against the CPU */

static int matrices_agree(const double *gpu, const double *cpu, size_t n, double rel)
{
    int bad = 0;
    for (size_t k = 0; k < n; k++) {
        if (!close_or_inf(gpu[k], cpu[k], rel)) {
            if (bad++ < 5)
                fprintf(stderr, "  entry %zu: gpu %.9g cpu %.9g\n", k, gpu[k], cpu[k]);
        }
    }
    return bad == 0;
}

void test_image_cuda_matches_cpu(void)
{
    if (!ww_cuda_available())
        SKIP("GPU test: no CUDA backend in this build or no GPU on this machine");
    ww_ctx *gpu = ww_test_ctx(WW_BACKEND_CUDA, WW_ENGINE_AUTO, 0), *cpu = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_AUTO, 0);
    if (gpu == NULL || cpu == NULL)
        return;
    ww_rng rng = {0x6b0ULL};
    enum { NX = 37, NY = 23 };
    double *tmp = malloc(64 * 64 * 3 * sizeof(double));
    double *g = malloc(NX * NX * sizeof(double)), *c = malloc(NX * NX * sizeof(double));
    const ww_dtype dtypes[3] = {WW_U8, WW_F32, WW_F64};
    for (int round = 0; round < 4; round++) {
        /* ragged images of every dtype, gray then color, squared or not, some of infeasible ratios */
        const size_t ch = round % 2 ? 3 : 1, top = round < 2 ? 16 : 40;
        ww_image x[NX], y[NY];
        void *px[NX], *py[NY];
        for (int k = 0; k < NX; k++)
            px[k] = random_image(&rng, 1 + ww_rng_below(&rng, top), 1 + ww_rng_below(&rng, top), ch, dtypes[k % 3],
                                 tmp, &x[k]);
        for (int k = 0; k < NY; k++)
            py[k] = random_image(&rng, top / 2 + ww_rng_below(&rng, top / 2), top / 2 + ww_rng_below(&rng, top / 2),
                                 ch, dtypes[(k + 1) % 3], tmp, &y[k]);
        ww_image_params p = ww_image_params_default();
        p.squared = round >= 2;
        for (size_t k = 0; k < NX * NX; k++)
            g[k] = NAN; /* poisoned: every entry must be written */
        CHECK_STATUS(ww_image_pairwise(gpu, x, NX, y, NY, &p, g, NULL), WW_OK);
        CHECK(ww_ctx_last_backend(gpu) == WW_BACKEND_CUDA);
        CHECK_STATUS(ww_image_pairwise(cpu, x, NX, y, NY, &p, c, NULL), WW_OK);
        CHECK(matrices_agree(g, c, NX * NY, 1e-4));
        /* the self matrix, and a block of it in float with a stride */
        for (size_t k = 0; k < NX * NX; k++)
            g[k] = NAN;
        CHECK_STATUS(ww_image_pairwise(gpu, x, NX, NULL, 0, &p, g, NULL), WW_OK);
        CHECK_STATUS(ww_image_pairwise(cpu, x, NX, NULL, 0, &p, c, NULL), WW_OK);
        CHECK(matrices_agree(g, c, NX * NX, 1e-4));
        float block[10 * 20];
        for (int k = 0; k < 10 * 20; k++)
            block[k] = NAN;
        ww_pairwise_options o = ww_pairwise_options_default();
        o.row_begin = 3, o.row_end = 13, o.col_begin = 8, o.col_end = 27, o.out_stride = 20, o.out_dtype = WW_F32;
        CHECK_STATUS(ww_image_pairwise(gpu, x, NX, NULL, 0, &p, block, &o), WW_OK);
        int bad = 0;
        for (int i = 3; i < 13; i++) {
            for (int j = 8; j < 27; j++)
                bad += !close_or_inf(block[(i - 3) * 20 + (j - 8)], c[i * NX + j], 1e-4);
            bad += !isnan(block[(i - 3) * 20 + 19]); /* past the block: untouched */
        }
        CHECK(bad == 0);
        /* kNN through the GPU */
        size_t idx[NY * 2];
        double dist[NY * 2];
        CHECK_STATUS(ww_image_knn(gpu, y, NY, x, NX, &p, 2, idx, dist, NULL), WW_OK);
        CHECK_STATUS(ww_image_pairwise(cpu, y, NY, x, NX, &p, c, NULL), WW_OK);
        for (int q = 0; q < NY; q++)
            bad += !close_or_inf(dist[q * 2], c[q * NX + idx[q * 2]], 1e-4) || dist[q * 2] > dist[q * 2 + 1];
        CHECK(bad == 0);
        for (int k = 0; k < NX; k++)
            free(px[k]);
        for (int k = 0; k < NY; k++)
            free(py[k]);
    }
    /* the shapes: 28 x 28 u8 one query against many, and 8 x 8 digits-like all pairs */
    enum { MANY = 3000 };
    unsigned char *pix = malloc(MANY * 28 * 28);
    for (size_t k = 0; k < (size_t)MANY * 28 * 28; k++)
        pix[k] = (unsigned char)ww_rng_below(&rng, 256);
    ww_image *set = malloc(MANY * sizeof(ww_image));
    for (int k = 0; k < MANY; k++)
        set[k] = ww_image_make(pix + (size_t)k * 28 * 28, 28, 28, 1, WW_U8);
    double *gm = malloc(MANY * sizeof(double)), *cm = malloc(MANY * sizeof(double));
    for (int k = 0; k < MANY; k++)
        gm[k] = NAN;
    CHECK_STATUS(ww_image_pairwise(gpu, set, 1, set, MANY, NULL, gm, NULL), WW_OK);
    CHECK_STATUS(ww_image_pairwise(cpu, set, 1, set, MANY, NULL, cm, NULL), WW_OK);
    CHECK(matrices_agree(gm, cm, MANY, 1e-5));
    CHECK(gm[0] == 0);
    ww_image small[200];
    for (int k = 0; k < 200; k++)
        small[k] = ww_image_make(pix + (size_t)k * 64, 8, 8, 1, WW_U8);
    double *gs = malloc(200 * 200 * sizeof(double)), *cs = malloc(200 * 200 * sizeof(double));
    CHECK_STATUS(ww_image_pairwise(gpu, small, 200, NULL, 0, NULL, gs, NULL), WW_OK);
    CHECK_STATUS(ww_image_pairwise(cpu, small, 200, NULL, 0, NULL, cs, NULL), WW_OK);
    CHECK(matrices_agree(gs, cs, 200 * 200, 1e-5));
    /* cancel through progress; too wide for the GPU engine: the CPU takes it (AUTO) */
    uint64_t seen[4] = {0, 0, 0, 1};
    ww_pairwise_options o = ww_pairwise_options_default();
    o.progress = count_progress;
    o.progress_user = seen;
    CHECK_STATUS(ww_image_pairwise(gpu, set, 1, set, MANY, NULL, gm, &o), WW_ERR_CANCELLED);
    float *wide = calloc(4 * 150, sizeof(float)); /* two images of 2 x 150 */
    ww_image w[2] = {ww_image_make(wide, 2, 150, 1, WW_F32), ww_image_make(wide + 300, 2, 150, 1, WW_F32)};
    double wd[4];
    CHECK_STATUS(ww_image_pairwise(gpu, w, 2, w, 2, NULL, wd, NULL), WW_ERR_UNSUPPORTED); /* backend CUDA: no CPU */
    ww_ctx *any = ww_test_ctx(WW_BACKEND_AUTO, WW_ENGINE_AUTO, 0);
    CHECK_STATUS(ww_image_pairwise(any, w, 2, w, 2, NULL, wd, NULL), WW_OK);
    CHECK(wd[0] == 0 && wd[3] == 0);
    ww_ctx_destroy(any);
    free(wide);
    free(gm), free(cm), free(gs), free(cs), free(set), free(pix), free(tmp), free(g), free(c);
    ww_ctx_destroy(gpu);
    ww_ctx_destroy(cpu);
}

/* Columns of one small size go through the CPU engine by groups of 16 images side by side: the
 * same values as one pair at a time (one dtype per call: a call with an f64 image computes all in
 * double), for every dtype, 1 and 3 channels, x of other sizes (some
 * infeasible against the group), partial groups, and self blocks. */
void test_image_groups_match_pairs(void)
{
    ww_ctx *ctx = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_AUTO, 0);
    ww_rng rng = {0x960ULL};
    enum { NX = 9, NY = 37 };
    double tmp[40 * 40 * 3];
    const ww_dtype dtypes[3] = {WW_U8, WW_F32, WW_F64};
    for (int round = 0; round < 6; round++) {
        const size_t ch = round % 2 ? 3 : 1, h = 3 + ww_rng_below(&rng, 18), w = 2 + ww_rng_below(&rng, 12);
        ww_image x[NX], y[NY];
        void *px[NX], *py[NY];
        for (int k = 0; k < NX; k++)
            px[k] = random_image(&rng, k == 0 ? 2 * h + 1 : 1 + ww_rng_below(&rng, 2 * h), 1 + ww_rng_below(&rng, 2 * w),
                                 ch, dtypes[round % 3], tmp, &x[k]);
        for (int k = 0; k < NY; k++) /* one size but for one column, which splits a group */
            py[k] = random_image(&rng, k == 20 ? h + 1 : h, w, ch, dtypes[round % 3], tmp, &y[k]);
        ww_image_params p = ww_image_params_default();
        p.squared = round >= 3;
        double m[NX * NY], self[NY * NY];
        CHECK_STATUS(ww_image_pairwise(ctx, x, NX, y, NY, &p, m, NULL), WW_OK);
        CHECK_STATUS(ww_image_pairwise(ctx, y, NY, NULL, 0, &p, self, NULL), WW_OK);
        int bad = 0;
        for (int i = 0; i < NX; i++)
            for (int j = 0; j < NY; j++) {
                double d = -1;
                CHECK_STATUS(ww_image_distance(ctx, &x[i], &y[j], &p, &d), WW_OK);
                bad += !(d == m[i * NY + j] || (isinf(d) && isinf(m[i * NY + j])));
            }
        for (int i = 0; i < NY; i++)
            for (int j = 0; j < NY; j++) {
                double d = -1;
                CHECK_STATUS(ww_image_distance(ctx, &y[i], &y[j], &p, &d), WW_OK);
                bad += !(d == self[i * NY + j] || (isinf(d) && isinf(self[i * NY + j])));
            }
        if (bad)
            fprintf(stderr, "  round %d (%zu x %zu, %zu channels): %d entries differ\n", round, h, w, ch, bad);
        CHECK(bad == 0);
        /* a block of the self matrix that cuts groups */
        double block[11 * 23];
        ww_pairwise_options o = ww_pairwise_options_default();
        o.row_begin = 5, o.row_end = 16, o.col_begin = 3, o.col_end = 26;
        CHECK_STATUS(ww_image_pairwise(ctx, y, NY, NULL, 0, &p, block, &o), WW_OK);
        for (int i = 5; i < 16; i++)
            for (int j = 3; j < 26; j++)
                bad += !(block[(i - 5) * 23 + (j - 3)] == self[i * NY + j] ||
                         (isinf(self[i * NY + j]) && isinf(block[(i - 5) * 23 + (j - 3)])));
        CHECK(bad == 0);
        for (int k = 0; k < NX; k++)
            free(px[k]);
        for (int k = 0; k < NY; k++)
            free(py[k]);
    }
    ww_ctx_destroy(ctx);
}

/* The CPU engine to the bit against the recursion written plainly in its own precision
 * (image_reference.h's ref_image_distance_f32 / _f64: float for u8 and f32 pixels, double for f64),
 * and within rounding of the double reference: colour and gray, absolute and squared, at sizes
 * that take every path of the engine: 1 x N, N x 1, odd widths, groups of same-size columns
 * (up to 128 rows: 28 x 28, 40 x 12), the row-by-row path (single pairs, and columns of more than
 * 128 rows), x images of another size than the columns. */
void test_image_colour_engine_exact(void)
{
    ww_ctx *ctx = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_AUTO, 0);
    ww_rng rng = {0xc0105ULL};
    static const size_t shapes[][2] = {{1, 1}, {1, 9}, {11, 1}, {5, 7}, {3, 13}, {9, 4}, {28, 28}, {40, 12}, {140, 3}};
    const ww_dtype dtypes[3] = {WW_U8, WW_F32, WW_F64};
    enum { NX = 2, NY = 5 };
    const size_t most = 140 * 12 * 3;
    double *xv = malloc(NX * most * sizeof(double)), *yv = malloc(NY * most * sizeof(double));
    float *xf = malloc(most * sizeof(float)), *yf = malloc(most * sizeof(float));
    int bad = 0, far = 0, checked = 0;
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (int t = 0; t < 6; t++) {
            const ww_dtype dt = dtypes[t % 3];
            const size_t ch = t < 3 || s % 3 == 2 ? 3 : 1; /* mostly colour */
            const int squared = (int)((s + (size_t)t) % 2);
            const size_t h = shapes[s][0], w = shapes[s][1];
            ww_image x[NX], y[NY];
            void *px[NX], *py[NY];
            for (int k = 0; k < NY; k++)
                py[k] = random_image(&rng, h, w, ch, dt, yv + k * most, &y[k]);
            /* x: one of the columns' size, one a row and a column more or less (still a path) */
            px[0] = random_image(&rng, h, w, ch, dt, xv, &x[0]);
            px[1] = random_image(&rng, h > 2 ? h - 1 : h + 1, w + 1, ch, dt, xv + most, &x[1]);
            ww_image_params p = ww_image_params_default();
            p.squared = squared;
            double m[NX * NY];
            CHECK_STATUS(ww_image_pairwise(ctx, x, NX, y, NY, &p, m, NULL), WW_OK);
            for (int i = 0; i < NX; i++)
                for (int j = 0; j < NY; j++) {
                    const ww_image *a = &x[i], *b = &y[j];
                    const double *av = xv + i * most, *bv = yv + j * most;
                    const double exact = ref_image_distance_as(dt != WW_F64, av, a->height, a->width, bv, b->height, b->width,
                                                               ch, squared, xf, yf);
                    const double want =
                        ref_image_distance(av, a->height, a->width, bv, b->height, b->width, ch, squared);
                    double single = -1;
                    CHECK_STATUS(ww_image_distance(ctx, a, b, &p, &single), WW_OK);
                    const double got = m[i * NY + j];
                    const int same = (got == exact || (isinf(got) && isinf(exact))) &&
                                     (single == exact || (isinf(single) && isinf(exact)));
                    if (!same && bad++ < 5)
                        fprintf(stderr, "  %zux%zu vs %zux%zu c %zu dtype %d sq %d: matrix %.17g pair %.17g plain %.17g\n",
                                a->height, a->width, b->height, b->width, ch, (int)dt, squared, got, single, exact);
                    far += !close_or_inf(got, want, dt == WW_F64 ? 1e-12 : 2e-5);
                    checked += !isinf(want);
                }
            for (int k = 0; k < NX; k++)
                free(px[k]);
            for (int k = 0; k < NY; k++)
                free(py[k]);
        }
    CHECK(bad == 0);
    CHECK(far == 0);
    CHECK(checked > 300); /* most pairs have a path */
    free(xv);
    free(yv);
    free(xf);
    free(yf);
    ww_ctx_destroy(ctx);
}

/* kNN over images through the shared threading layer: progress reaches its total once, in order,
 * and a progress callback's non-zero return cancels the search (WW_ERR_CANCELLED), on one thread
 * and on several. */
void test_image_knn_progress_and_cancel(void)
{
    ww_rng rng = {0x4e11ULL};
    enum { NQ = 7, NX = 40 };
    ww_image q[NQ], x[NX];
    void *pq[NQ], *px[NX];
    double tmp[12 * 12 * 3];
    for (int k = 0; k < NQ; k++)
        pq[k] = random_image(&rng, 6 + ww_rng_below(&rng, 6), 6 + ww_rng_below(&rng, 6), 3, WW_U8, tmp, &q[k]);
    for (int k = 0; k < NX; k++)
        px[k] = random_image(&rng, 6 + ww_rng_below(&rng, 6), 6 + ww_rng_below(&rng, 6), 3, k % 2 ? WW_U8 : WW_F32, tmp,
                             &x[k]);
    uint64_t cells = 0;
    for (int a = 0; a < NQ; a++)
        for (int b = 0; b < NX; b++)
            cells += (uint64_t)q[a].height * x[b].height * (q[a].width * x[b].width + 1);
    for (int threads = 1; threads <= 3; threads += 2) {
        ww_ctx *ctx = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_AUTO, threads);
        size_t idx[NQ * 2], want_idx[NQ * 2];
        double dist[NQ * 2], want_dist[NQ * 2];
        CHECK_STATUS(ww_image_knn(ctx, q, NQ, x, NX, NULL, 2, want_idx, want_dist, NULL), WW_OK);
        uint64_t seen[4] = {0, 0, 0, 0};
        ww_pairwise_options o = ww_pairwise_options_default();
        o.progress = count_progress;
        o.progress_user = seen;
        CHECK_STATUS(ww_image_knn(ctx, q, NQ, x, NX, NULL, 2, idx, dist, &o), WW_OK);
        CHECK(seen[0] >= 1 && seen[1] == seen[2] && seen[2] == cells);
        CHECK(memcmp(idx, want_idx, sizeof idx) == 0 && memcmp(dist, want_dist, sizeof dist) == 0);
        seen[0] = 0, seen[3] = 1; /* cancel at the first report */
        CHECK_STATUS(ww_image_knn(ctx, q, NQ, x, NX, NULL, 2, idx, dist, &o), WW_ERR_CANCELLED);
        CHECK(seen[0] == 1);
        seen[0] = 0; /* and the matrix */
        double m[NQ * NX];
        CHECK_STATUS(ww_image_pairwise(ctx, q, NQ, x, NX, NULL, m, &o), WW_ERR_CANCELLED);
        CHECK(seen[0] == 1);
        ww_ctx_destroy(ctx);
    }
    for (int k = 0; k < NQ; k++)
        free(pq[k]);
    for (int k = 0; k < NX; k++)
        free(px[k]);
}

/* The CLI's image commands on bad input not covered by test_image_cli: empty images (PGM, .npy),
 * channel counts that differ inside an .npy pair, parameters of another measure or out of range, a
 * missing argument: exit 1 (input) or 2 (usage) with a message naming the problem, no output. */
void test_image_cli_bad_input(void)
{
    char dir[] = "/tmp/ww_image_cli_bad_XXXXXX";
    if (mkdtemp(dir) == NULL)
        SKIP("no temporary folder");
    char out[4096], err[4096], cmd[1200];
    const unsigned char px[4] = {1, 2, 3, 4};
    write_pgm(dir, "a.pgm", px, 2, 2);
    write_bytes(dir, "wide0.pgm", "P5\n0 4\n255\n", 11);
    write_bytes(dir, "tall0.pgm", "P5\n3 0\n255\n", 11);
    /* .npy stacks: u8 (2, 0, 3) and (0, 2, 2) (empty), and (2, 2, 2, 3) (colour, against gray a.pgm) */
    const char *shapes[3] = {"(2, 0, 3)", "(0, 2, 2)", "(2, 2, 2, 3)"};
    const char *names[3] = {"z.npy", "e.npy", "rgb.npy"};
    for (int k = 0; k < 3; k++) {
        char npy[128 + 64];
        int n = snprintf(npy + 10, 118, "{'descr': '|u1', 'fortran_order': False, 'shape': %s, }", shapes[k]);
        memcpy(npy, "\x93NUMPY\x01\x00\x76\x00", 10);
        memset(npy + 10 + n, ' ', (size_t)(118 - n));
        npy[10 + 117] = '\n';
        size_t len = 128;
        if (k == 2) {
            memset(npy + 128, 7, 24);
            len += 24;
        }
        write_bytes(dir, names[k], npy, len);
    }
    write_bytes(dir, "rgb.labels.txt", "a\nb\n", 4); /* colour queries, a gray training folder */
    snprintf(cmd, sizeof cmd, "mkdir -p '%s/train/x'", dir);
    CHECK(system(cmd) == 0);
    write_pgm(dir, "train/x/1.pgm", px, 2, 2);
    static const struct {
        const char *args, *says;
        int rc;
    } bad[] = {
        {"image-distance a.pgm wide0.pgm", "empty", 1},
        {"image-distance tall0.pgm a.pgm", "empty", 1},
        {"image-pairwise z.npy -o o.npy", "empty", 1},
        {"image-pairwise e.npy -o o.npy", "empty", 1},
        {"image-pairwise rgb.npy a.pgm -o o.npy", "channels", 1},
        {"image-classify rgb.npy train", "channels", 1},
        {"image-distance a.pgm a.pgm --gamma 1", "does not apply", 2},
        {"image-pairwise a.pgm -o o.npy --threads -3", "--threads", 2},
        {"image-distance a.pgm", "missing", 2},
        {"image-pairwise a.pgm -o o.npy --backend tpu", "backend", 2},
    };
    for (size_t t = 0; t < sizeof bad / sizeof bad[0]; t++) {
        int rc = run_image_cli(dir, "", bad[t].args, out, sizeof out, err, sizeof err);
        if (rc != bad[t].rc || strstr(err, bad[t].says) == NULL || strstr(err, "wavewarp: ") == NULL) {
            ww_test_failures++;
            fprintf(stderr, "  '%s': exit %d (want %d), said '%s', expected '%s'\n", bad[t].args, rc, bad[t].rc, err,
                    bad[t].says);
        }
    }
    CHECK(!file_exists(dir, "o.npy"));
    CHECK(no_temp_files(dir));
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
}

/* Images in device memory, read in place by the GPU engine: a u8 stack and f32 images against the
 * same images on the host (the same engine: the same bits), kNN; then the errors: device images on
 * a CPU context, host and device mixed, the map, and a NaN pixel on the device (the output
 * untouched). */
void test_image_cuda_device_images(void)
{
#ifndef WW_TEST_CUDA
    SKIP("test built without the CUDA runtime headers");
#else
    if (!ww_cuda_available())
        SKIP("GPU test: no CUDA backend in this build or no GPU on this machine");
    ww_ctx *gpu = ww_test_ctx(WW_BACKEND_CUDA, WW_ENGINE_AUTO, 0), *cpu = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_AUTO, 0);
    if (gpu == NULL || cpu == NULL)
        return;
    enum { N = 300, SIDE = 28, PX = SIDE * SIDE, NF = 20 };
    ww_rng rng = {0xde71ceULL};
    unsigned char *pix = malloc(N * PX);
    for (size_t k = 0; k < (size_t)N * PX; k++)
        pix[k] = (unsigned char)ww_rng_below(&rng, 256);
    float *fpix = malloc(NF * 20 * 24 * sizeof(float));
    for (size_t k = 0; k < (size_t)NF * 20 * 24; k++)
        fpix[k] = (float)(ww_rng_uniform(&rng) * 2 - 1);
    unsigned char *dpix = NULL;
    float *dfpix = NULL;
    CHECK(cudaMalloc((void **)&dpix, N * PX) == cudaSuccess && cudaMalloc((void **)&dfpix, NF * 20 * 24 * 4) == cudaSuccess);
    cudaMemcpy(dpix, pix, N * PX, cudaMemcpyHostToDevice);
    cudaMemcpy(dfpix, fpix, NF * 20 * 24 * 4, cudaMemcpyHostToDevice);
    ww_image *host = malloc(N * sizeof(ww_image)), *dev = malloc(N * sizeof(ww_image));
    for (int k = 0; k < N; k++) {
        host[k] = ww_image_make(pix + (size_t)k * PX, SIDE, SIDE, 1, WW_U8);
        dev[k] = ww_image_make(dpix + (size_t)k * PX, SIDE, SIDE, 1, WW_U8);
        dev[k].memory = WW_DEVICE;
    }
    double *a = malloc(N * N * sizeof(double)), *b = malloc(N * N * sizeof(double));
    for (size_t k = 0; k < (size_t)N * N; k++)
        a[k] = b[k] = NAN;
    /* one query against the stack, and a block of the self matrix */
    CHECK_STATUS(ww_image_pairwise(gpu, host, 1, host + 1, N - 1, NULL, a, NULL), WW_OK);
    CHECK_STATUS(ww_image_pairwise(gpu, dev, 1, dev + 1, N - 1, NULL, b, NULL), WW_OK);
    CHECK(ww_ctx_last_backend(gpu) == WW_BACKEND_CUDA);
    CHECK(memcmp(a, b, (N - 1) * sizeof(double)) == 0);
    CHECK_STATUS(ww_image_pairwise(gpu, host, 60, NULL, 0, NULL, a, NULL), WW_OK);
    CHECK_STATUS(ww_image_pairwise(gpu, dev, 60, NULL, 0, NULL, b, NULL), WW_OK);
    CHECK(memcmp(a, b, 60 * 60 * sizeof(double)) == 0);
    /* f32 images of another size (20 x 24) against the u8 stack: dtypes and sizes mix, memory not */
    ww_image fh[NF], fd[NF];
    for (int k = 0; k < NF; k++) {
        fh[k] = ww_image_make(fpix + (size_t)k * 480, 20, 24, 1, WW_F32);
        fd[k] = ww_image_make(dfpix + (size_t)k * 480, 20, 24, 1, WW_F32);
        fd[k].memory = WW_DEVICE;
    }
    CHECK_STATUS(ww_image_pairwise(gpu, fh, NF, host, 40, NULL, a, NULL), WW_OK);
    CHECK_STATUS(ww_image_pairwise(gpu, fd, NF, dev, 40, NULL, b, NULL), WW_OK);
    CHECK(memcmp(a, b, NF * 40 * sizeof(double)) == 0);
    /* kNN with device images */
    size_t hi_idx[10 * 3], di_idx[10 * 3];
    double hd[10 * 3], dd[10 * 3];
    CHECK_STATUS(ww_image_knn(gpu, host, 10, host + 10, N - 10, NULL, 3, hi_idx, hd, NULL), WW_OK);
    CHECK_STATUS(ww_image_knn(gpu, dev, 10, dev + 10, N - 10, NULL, 3, di_idx, dd, NULL), WW_OK);
    CHECK(memcmp(hi_idx, di_idx, sizeof hi_idx) == 0 && memcmp(hd, dd, sizeof hd) == 0);
    /* errors */
    CHECK_STATUS(ww_image_pairwise(cpu, dev, 2, NULL, 0, NULL, a, NULL), WW_ERR_MEMORY_KIND);
    ww_image mixed[2] = {host[0], dev[1]};
    CHECK_STATUS(ww_image_pairwise(gpu, mixed, 2, NULL, 0, NULL, a, NULL), WW_ERR_MEMORY_KIND);
    CHECK_STATUS(ww_image_pairwise(gpu, host, 2, dev, 2, NULL, a, NULL), WW_ERR_MEMORY_KIND);
    double dist = 0;
    size_t matches[4 * 112], count = 0;
    CHECK_STATUS(ww_image_map(cpu, &dev[0], &dev[1], NULL, &dist, matches, 112, &count), WW_ERR_MEMORY_KIND);
    const float nan = NAN;
    cudaMemcpy(dfpix + 5 * 480 + 17, &nan, sizeof nan, cudaMemcpyHostToDevice);
    for (size_t k = 0; k < (size_t)NF * NF; k++)
        b[k] = -1;
    CHECK_STATUS(ww_image_pairwise(gpu, fd, NF, NULL, 0, NULL, b, NULL), WW_ERR_NONFINITE);
    int untouched = 1;
    for (size_t k = 0; k < (size_t)NF * NF; k++)
        untouched &= b[k] == -1;
    CHECK(untouched);
    cudaFree(dpix), cudaFree(dfpix);
    free(pix), free(fpix), free(host), free(dev), free(a), free(b);
    ww_ctx_destroy(gpu);
    ww_ctx_destroy(cpu);
#endif
}
