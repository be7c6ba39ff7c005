/* TWED values: the golden cases of the original reference, and agreement between engines. */
#include "ww_test.h"

#include <stdlib.h>
#include <string.h>

#include "golden.h"

void test_golden_all_cpu_engines(void)
{
    ww_golden_set set;
    if (ww_golden_load(&set) != 0)
        SKIP("../shared/golden/twed.txt not found");
    const ww_engine engines[] = {WW_ENGINE_CPU_REFERENCE, WW_ENGINE_CPU_BAND, WW_ENGINE_CPU_STRIP};
    for (size_t e = 0; e < 3; e++) {
        ww_ctx *ctx = ww_test_ctx(WW_BACKEND_CPU, engines[e], 1);
        for (size_t c = 0; c < set.count; c++) {
            const ww_golden_case *g = &set.cases[c];
            ww_series a = ww_series_f64(g->a, g->ta, g->na, g->dim);
            ww_series b = ww_series_f64(g->b, g->tb, g->nb, g->dim);
            double d = -1;
            CHECK_STATUS(ww_twed(ctx, &a, &b, &g->params, &d), WW_OK);
            CHECK_CLOSE(d, g->expect, 1e-12);
        }
        ww_ctx_destroy(ctx);
    }
    CHECK(set.count == 60);
    ww_golden_free(&set);
}

/* Random series: values in [-1, 1), stamps strictly or weakly increasing with random steps. */
static void random_series(ww_rng *r, size_t n, size_t dim, int with_stamps, double *v, double *t)
{
    for (size_t i = 0; i < n * dim; i++)
        v[i] = 2 * ww_rng_uniform(r) - 1;
    double now = ww_rng_uniform(r) * 3;
    for (size_t i = 0; i < n && with_stamps; i++) {
        now += ww_rng_below(r, 4) == 0 ? 0.0 : ww_rng_uniform(r) * 2;
        t[i] = now;
    }
}

void test_engines_agree_random(void)
{
    ww_rng r = {0x9E3779B97F4A7C15ULL};
    ww_ctx *ref = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_CPU_REFERENCE, 1);
    ww_ctx *band = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_CPU_BAND, 1);
    ww_ctx *strip = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_CPU_STRIP, 1);
    const size_t lengths[] = {1, 2, 3, 7, 31, 255, 256, 257, 600, 1100, 2000};
    const size_t nl = sizeof lengths / sizeof lengths[0];
    double *va = malloc(2000 * 8 * sizeof(double)), *vb = malloc(2000 * 8 * sizeof(double));
    double *ta = malloc(2000 * sizeof(double)), *tb = malloc(2000 * sizeof(double));
    for (int trial = 0; trial < 40; trial++) {
        size_t na = lengths[ww_rng_below(&r, nl)], nb = lengths[ww_rng_below(&r, nl)];
        size_t dim = 1 + ww_rng_below(&r, 8);
        int stamps = trial % 2;
        ww_twed_params p = {ww_rng_uniform(&r) * 2, ww_rng_uniform(&r) * 2, 1 + (int)ww_rng_below(&r, 3)};
        random_series(&r, na, dim, stamps, va, ta);
        random_series(&r, nb, dim, stamps, vb, tb);
        ww_series a = ww_series_f64(va, stamps ? ta : NULL, na, dim);
        ww_series b = ww_series_f64(vb, stamps ? tb : NULL, nb, dim);
        double d_ref = -1, d_band = -2, d_strip = -3;
        CHECK_STATUS(ww_twed(ref, &a, &b, &p, &d_ref), WW_OK);
        CHECK_STATUS(ww_twed(band, &a, &b, &p, &d_band), WW_OK);
        CHECK_STATUS(ww_twed(strip, &a, &b, &p, &d_strip), WW_OK);
        CHECK_CLOSE(d_band, d_ref, 1e-12);
        CHECK_CLOSE(d_strip, d_ref, 1e-12);
    }
    free(va), free(vb), free(ta), free(tb);
    ww_ctx_destroy(ref), ww_ctx_destroy(band), ww_ctx_destroy(strip);
}

void test_pairwise_matches_single(void)
{
    ww_rng r = {12345};
    const size_t count = 37, dim_max = 3;
    for (size_t dim = 1; dim <= dim_max; dim++) {
        for (int ragged = 0; ragged < 2; ragged++) {
            size_t offsets[38];
            offsets[0] = 0;
            for (size_t i = 0; i < count; i++)
                offsets[i + 1] = offsets[i] + (ragged ? 1 + ww_rng_below(&r, 60) : 45);
            size_t total = offsets[count];
            double *v = malloc(total * dim * sizeof(double)), *t = malloc(total * sizeof(double));
            for (size_t i = 0; i < count; i++)
                random_series(&r, offsets[i + 1] - offsets[i], dim, 1, v + offsets[i] * dim, t + offsets[i]);
            ww_dataset x = ww_dataset_f64(v, t, offsets, count, 0, dim);
            ww_twed_params p = {0.5, 1.0, 2};
            ww_ctx *ctx = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_AUTO, 2);
            double *m = malloc(count * count * sizeof(double));
            for (size_t k = 0; k < count * count; k++)
                m[k] = NAN;
            CHECK_STATUS(ww_twed_pairwise(ctx, &x, NULL, &p, m, NULL), WW_OK);
            for (size_t i = 0; i < count; i++)
                for (size_t j = 0; j < count; j++) {
                    ww_series a, b;
                    ww_dataset_series(&x, i, &a);
                    ww_dataset_series(&x, j, &b);
                    double d = -1;
                    CHECK_STATUS(ww_twed(ctx, &a, &b, &p, &d), WW_OK);
                    CHECK_CLOSE(m[i * count + j], i == j ? 0.0 : d, 1e-12);
                }
            free(m), free(v), free(t);
            ww_ctx_destroy(ctx);
        }
    }
}

#include "common/internal.h"

/* The mirror pass of self matrices, on every block shape around the diagonal, both dtypes. */
void test_matrix_fill_mirror(void)
{
    const size_t n = 150;
    const size_t blocks[][4] = {{0, 150, 0, 150}, {10, 90, 0, 150}, {0, 150, 40, 149}, {30, 100, 60, 140},
                                {100, 150, 0, 50}, {64, 129, 63, 130}, {7, 8, 0, 150}};
    for (size_t b = 0; b < sizeof blocks / sizeof blocks[0]; b++)
        for (int f32 = 0; f32 < 2; f32++) {
            ww_pairwise_options o = ww_pairwise_options_default();
            o.row_begin = blocks[b][0], o.row_end = blocks[b][1];
            o.col_begin = blocks[b][2], o.col_end = blocks[b][3];
            o.out_stride = o.col_end - o.col_begin + 3;
            o.out_dtype = f32 ? WW_F32 : WW_F64;
            size_t rows = o.row_end - o.row_begin, cells = rows * o.out_stride;
            double *d = malloc(cells * sizeof(double));
            float *f = (float *)d;
            /* computed entries hold a symmetric function of (i, j); the rest is poison */
            for (size_t i = o.row_begin; i < o.row_end; i++)
                for (size_t k = 0; k < o.out_stride; k++) {
                    size_t j = o.col_begin + k;
                    int mirrored = j < o.col_end && j != i && j >= o.row_begin && j < o.row_end &&
                                   i >= o.col_begin && i < o.col_end && j < i;
                    double v = (j < o.col_end && !mirrored && j != i) ? (double)(i * n + j + j * n + i) : -1.0;
                    size_t at = (i - o.row_begin) * o.out_stride + k;
                    if (f32)
                        f[at] = (float)v;
                    else
                        d[at] = v;
                }
            ww_matrix_fill_mirror(&o, d, 2);
            for (size_t i = o.row_begin; i < o.row_end; i++)
                for (size_t k = 0; k < o.out_stride; k++) {
                    size_t j = o.col_begin + k, at = (i - o.row_begin) * o.out_stride + k;
                    double v = f32 ? (double)f[at] : d[at];
                    double want = j >= o.col_end ? -1.0 : i == j ? 0.0 : (double)(i * n + j + j * n + i);
                    CHECK(v == want);
                }
            free(d);
        }
}

/* Indexes answer like the plain calls, survive the caller's buffers, and refuse bad input. A GPU
 * context is used when one is available, so the same test covers both backends. */
static void index_checks(ww_backend backend)
{
    ww_rng r = {4242};
    const size_t count = 70, dim = 3, nq = 9;
    size_t offsets[71], qoff[10];
    offsets[0] = qoff[0] = 0;
    for (size_t i = 0; i < count; i++)
        offsets[i + 1] = offsets[i] + 5 + ww_rng_below(&r, 60);
    for (size_t i = 0; i < nq; i++)
        qoff[i + 1] = qoff[i] + 1 + ww_rng_below(&r, 80);
    double *v = malloc(offsets[count] * dim * sizeof(double)), *t = malloc(offsets[count] * sizeof(double));
    double *qv = malloc(qoff[nq] * dim * sizeof(double));
    random_series(&r, offsets[count], dim, 1, v, t);
    /* stamps must increase within each series: random_series made one increasing run overall */
    random_series(&r, qoff[nq], dim, 0, qv, NULL);
    ww_dataset x = ww_dataset_f64(v, t, offsets, count, 0, dim);
    ww_dataset q = ww_dataset_f64(qv, NULL, qoff, nq, 0, dim);
    ww_twed_params p = {0.2, 0.7, 2};
    ww_ctx *ctx = ww_test_ctx(backend, WW_ENGINE_AUTO, 2);
    double *want = malloc(nq * count * sizeof(double)), *got = malloc(nq * count * sizeof(double));
    size_t wi[9 * 4], gi[9 * 4];
    double wd[9 * 4], gd[9 * 4];
    CHECK_STATUS(ww_twed_pairwise(ctx, &q, &x, &p, want, NULL), WW_OK);
    CHECK_STATUS(ww_twed_knn(ctx, &q, &x, &p, 4, wi, wd, NULL), WW_OK);
    ww_index *ix = NULL;
    const ww_measure pm = ww_measure_twed(p.nu, p.lambda, p.degree);
    CHECK_STATUS(ww_index_create(ctx, &x, &pm, &ix), WW_OK);
    CHECK(ww_index_count(ix) == count);
    /* the index has its own copy: wreck the caller's buffer */
    for (size_t k = 0; k < offsets[count] * dim; k++)
        v[k] = NAN;
    for (size_t k = 0; k < nq * count; k++)
        got[k] = NAN;
    CHECK_STATUS(ww_index_pairwise(ctx, ix, &q, got, NULL), WW_OK);
    for (size_t k = 0; k < nq * count; k++)
        CHECK_CLOSE(got[k], want[k], 1e-12);
    CHECK_STATUS(ww_index_knn(ctx, ix, &q, 4, gi, gd, NULL), WW_OK);
    for (size_t k = 0; k < nq * 4; k++) {
        CHECK(gi[k] == wi[k]);
        CHECK_CLOSE(gd[k], wd[k], 1e-12);
    }
    /* a block of the query matrix */
    ww_pairwise_options o = ww_pairwise_options_default();
    o.row_begin = 2, o.row_end = 7, o.col_begin = 10, o.col_end = 60;
    CHECK_STATUS(ww_index_pairwise(ctx, ix, &q, got, &o), WW_OK);
    for (size_t i = 2; i < 7; i++)
        for (size_t j = 10; j < 60; j++)
            CHECK_CLOSE(got[(i - 2) * 50 + (j - 10)], want[i * count + j], 1e-12);
    /* bad uses */
    ww_ctx *other = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_AUTO, 1);
    CHECK_STATUS(ww_index_pairwise(other, ix, &q, got, NULL), WW_ERR_BACKEND);
    CHECK_STATUS(ww_index_knn(ctx, ix, &q, count + 1, gi, gd, NULL), WW_ERR_SHAPE);
    float qf[4] = {1, 2, 3, 4};
    ww_dataset q32 = ww_dataset_f32(qf, NULL, NULL, 1, 4, dim == 3 ? 1 : 1);
    CHECK_STATUS(ww_index_pairwise(ctx, ix, &q32, got, NULL), WW_ERR_SHAPE); /* dim 1 vs 3 */
    ww_index *bad = NULL;
    CHECK_STATUS(ww_index_create(ctx, &x, &pm, &bad), WW_ERR_NONFINITE); /* the wrecked buffer */
    CHECK(bad == NULL);
    ww_index_destroy(ix);
    ww_ctx_destroy(other);
    ww_ctx_destroy(ctx);
    free(v), free(t), free(qv), free(want), free(got);
}

void test_index_cpu(void) { index_checks(WW_BACKEND_CPU); }

void test_index_gpu(void)
{
    if (!ww_cuda_available())
        SKIP("GPU test: no CUDA backend in this build or no GPU on this machine");
    index_checks(WW_BACKEND_CUDA);
}

#include "measures/twed.h"

/* The regrouped cells of the GPU wavefront engine (up or left taken last) must give exactly
 * ww_twed_cell's value: on random inputs, on ties, infinities (the matrix's boundary) and a NaN
 * match part (inf - inf between padding samples, which must lose), in both precisions. */
void test_twed_cell_groupings(void)
{
    ww_rng r = {2026};
    const double specials[] = {0.0, 1.0, 0.5, INFINITY};
    for (int it = 0; it < 20000; it++) {
        double in[7];
        for (int k = 0; k < 7; k++)
            in[k] = it < 4096 ? specials[(it >> (2 * (k % 6))) & 3] + (k == 6 && (it & 1) ? 0.25 : 0.0)
                              : floor(ww_rng_uniform(&r) * 8.0) / 4.0; /* coarse: many ties */
        if (it % 97 == 5)
            in[5] = NAN; /* a match part between padding samples */
        const double want = ww_twed_cell_f64(in[0], in[1], in[2], in[3], in[4], in[5], in[6], NULL);
        const double up_last = ww_twed_cell_up_last_f64(in[0], in[1], in[2], in[3], in[4], in[5], in[6], NULL);
        const double left_last = ww_twed_cell_left_last_f64(in[0], in[1], in[2], in[3], in[4], in[5], in[6], NULL);
        CHECK(memcmp(&want, &up_last, sizeof want) == 0);
        CHECK(memcmp(&want, &left_last, sizeof want) == 0);
        float f[7];
        for (int k = 0; k < 7; k++)
            f[k] = (float)in[k];
        const float wantf = ww_twed_cell_f32(f[0], f[1], f[2], f[3], f[4], f[5], f[6], NULL);
        const float upf = ww_twed_cell_up_last_f32(f[0], f[1], f[2], f[3], f[4], f[5], f[6], NULL);
        const float leftf = ww_twed_cell_left_last_f32(f[0], f[1], f[2], f[3], f[4], f[5], f[6], NULL);
        CHECK(memcmp(&wantf, &upf, sizeof wantf) == 0);
        CHECK(memcmp(&wantf, &leftf, sizeof wantf) == 0);
    }
}

/* The parallel copy of a matrix chunk into the caller's matrix: one block and strided rows, small
 * (one thread) and large (a team), any thread count; every byte lands, nothing past the rows. */
void test_copy_rows(void)
{
    const size_t shapes[][3] = {/* rows, row bytes, padding of dst rows */
                                {3, 40, 0}, {600, 4800, 0}, {600, 4800, 24}, {1000, 2056, 8}, {1, 3u << 20, 0}};
    const int threads[] = {0, 1, 4, 16};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (size_t t = 0; t < sizeof threads / sizeof threads[0]; t++) {
            const size_t rows = shapes[s][0], row = shapes[s][1], stride = row + shapes[s][2];
            unsigned char *src = malloc(rows * row), *dst = malloc(rows * stride + 1);
            for (size_t k = 0; k < rows * row; k++)
                src[k] = (unsigned char)(k * 2654435761u >> 13);
            memset(dst, 0xA5, rows * stride + 1);
            ww_copy_rows(dst, stride, src, row, row, rows, threads[t]);
            size_t off = 0;
            for (size_t r = 0; r < rows; r++) {
                off += memcmp(dst + r * stride, src + r * row, row) != 0;
                for (size_t k = row; k < stride; k++)
                    off += dst[r * stride + k] != 0xA5;
            }
            off += dst[rows * stride] != 0xA5;
            CHECK(off == 0);
            /* evicting the source from the caches leaves it as it was, aligned or not */
            ww_evict_from_caches(src + 1, rows * row - 1, threads[t]);
            ww_evict_from_caches(src, 0, threads[t]);
            CHECK(memcmp(dst, src, row) == 0);
            free(src), free(dst);
        }
}
