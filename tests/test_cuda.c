/* GPU engines against the CPU engine (FAISS-style mirror tests). Each test skips with a visible
 * message when the build has no CUDA backend or the machine has no GPU. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "ww_test.h"

#include <stdlib.h>
#include <string.h>

#include "common/internal.h" /* ww_cuda_describe_plan */
#include "golden.h"

#ifdef WW_TEST_CUDA
#include <cuda_runtime.h>
#endif

#define REQUIRE_GPU()                                                                              \
    do {                                                                                           \
        if (!ww_cuda_available())                                                                  \
            SKIP("GPU test: no CUDA backend in this build or no GPU on this machine");            \
    } while (0)

static const ww_engine gpu_engines[] = {WW_ENGINE_AUTO, WW_ENGINE_CUDA_WAVEFRONT, WW_ENGINE_CUDA_DIAGONAL};
#define N_GPU_ENGINES 3

void test_cuda_golden(void)
{
    REQUIRE_GPU();
    ww_golden_set set;
    if (ww_golden_load(&set) != 0)
        SKIP("../shared/golden/twed.txt not found");
    for (int e = 0; e < N_GPU_ENGINES; e++) {
        ww_ctx *ctx = ww_test_ctx(WW_BACKEND_CUDA, gpu_engines[e], 0);
        for (size_t c = 0; c < set.count; c++) {
            const ww_golden_case *g = &set.cases[c];
            ww_series a = ww_series_f64(g->a, g->ta, g->na, g->dim);
            ww_series b = ww_series_f64(g->b, g->tb, g->nb, g->dim);
            double d = NAN;
            CHECK_STATUS(ww_twed(ctx, &a, &b, &g->params, &d), WW_OK);
            CHECK_CLOSE(d, g->expect, 1e-12);
        }
        ww_ctx_destroy(ctx);
    }
    ww_golden_free(&set);
}

static void fill_random(ww_rng *r, double *v, size_t n, double *t, size_t len, int stamps)
{
    for (size_t i = 0; i < n; i++)
        v[i] = ww_rng_uniform(r);
    double now = 0;
    for (size_t i = 0; i < len && stamps; i++) {
        now += ww_rng_below(r, 5) == 0 ? 0.0 : 0.5 + ww_rng_uniform(r);
        t[i] = now;
    }
}

/* Lengths around the engines' edges: warp and band sizes, the block/wavefront switch, up to 2^20. */
void test_cuda_matches_cpu_random(void)
{
    REQUIRE_GPU();
    ww_rng r = {0xC0FFEE};
    const size_t lengths[] = {1, 2, 3, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 257, 1000, 4095, 4096,
                              4097, 10007, 65543};
    const size_t nl = sizeof lengths / sizeof lengths[0];
    const size_t dims[] = {1, 2, 3, 8, 64};
    ww_ctx *cpu = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_AUTO, 0);
    ww_ctx *gpu[N_GPU_ENGINES];
    for (int e = 0; e < N_GPU_ENGINES; e++)
        gpu[e] = ww_test_ctx(WW_BACKEND_CUDA, gpu_engines[e], 0);
    const size_t maxn = 1u << 20;
    double *va = malloc(maxn * sizeof(double)), *vb = malloc(maxn * sizeof(double));
    double *ta = malloc(maxn * sizeof(double)), *tb = malloc(maxn * sizeof(double));
    for (int trial = 0; trial < 60; trial++) {
        size_t na = lengths[ww_rng_below(&r, nl)], nb = lengths[ww_rng_below(&r, nl)];
        size_t dim = dims[ww_rng_below(&r, 5)];
        while (na * dim > maxn || nb * dim > maxn || (double)na * nb * dim > 4e8) {
            na = lengths[ww_rng_below(&r, nl)];
            nb = lengths[ww_rng_below(&r, nl)];
        }
        int stamps = trial % 3 != 0;
        ww_twed_params p = {ww_rng_uniform(&r), ww_rng_uniform(&r) * 2, 1 + (int)ww_rng_below(&r, 3)};
        fill_random(&r, va, na * dim, ta, na, stamps);
        fill_random(&r, vb, nb * dim, tb, nb, stamps);
        ww_series a = ww_series_f64(va, stamps ? ta : NULL, na, dim);
        ww_series b = ww_series_f64(vb, stamps ? tb : NULL, nb, dim);
        double want = NAN;
        CHECK_STATUS(ww_twed(cpu, &a, &b, &p, &want), WW_OK);
        for (int e = 0; e < N_GPU_ENGINES; e++) {
            if (gpu_engines[e] == WW_ENGINE_CUDA_DIAGONAL && na + nb > 20000)
                continue; /* one launch per diagonal: slow, and covered at smaller sizes */
            double got = NAN;
            CHECK_STATUS(ww_twed(gpu[e], &a, &b, &p, &got), WW_OK);
            CHECK_CLOSE(got, want, 1e-12);
            if (!(fabs(got - want) <= 1e-12 * fmax(1.0, fabs(want))))
                fprintf(stderr, "    engine %d na=%zu nb=%zu dim=%zu degree=%d stamps=%d\n", (int)gpu_engines[e], na,
                        nb, dim, p.degree, stamps);
        }
    }
    /* the longest: 2^20 against a short and a medium series, both orientations */
    const size_t longs[][2] = {{1u << 20, 777}, {3000, 1u << 20}};
    for (int k = 0; k < 2; k++) {
        size_t na = longs[k][0], nb = longs[k][1];
        fill_random(&r, va, na, ta, na, 1);
        fill_random(&r, vb, nb, tb, nb, 1);
        ww_series a = ww_series_f64(va, ta, na, 1), b = ww_series_f64(vb, tb, nb, 1);
        ww_twed_params p = {0.25, 1.0, 2};
        double want = NAN, got = NAN;
        CHECK_STATUS(ww_twed(cpu, &a, &b, &p, &want), WW_OK);
        CHECK_STATUS(ww_twed(gpu[1], &a, &b, &p, &got), WW_OK);
        CHECK_CLOSE(got, want, 1e-12);
    }
    free(va), free(vb), free(ta), free(tb);
    ww_ctx_destroy(cpu);
    for (int e = 0; e < N_GPU_ENGINES; e++)
        ww_ctx_destroy(gpu[e]);
}

/* Wide series: dim 1,024 (no compile-time limit on dim), several lengths and degrees. */
void test_cuda_wide_dims(void)
{
    REQUIRE_GPU();
    ww_rng r = {1024};
    const size_t dim = 1024, lengths[][2] = {{1, 1}, {17, 40}, {300, 257}};
    double *va = malloc(300 * dim * sizeof(double)), *vb = malloc(300 * dim * sizeof(double));
    ww_ctx *cpu = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_AUTO, 0), *gpu = ww_test_ctx(WW_BACKEND_CUDA, WW_ENGINE_AUTO, 0);
    for (size_t k = 0; k < 3; k++)
        for (int degree = 1; degree <= 3; degree++) {
            size_t na = lengths[k][0], nb = lengths[k][1];
            fill_random(&r, va, na * dim, NULL, 0, 0);
            fill_random(&r, vb, nb * dim, NULL, 0, 0);
            ww_series a = ww_series_f64(va, NULL, na, dim), b = ww_series_f64(vb, NULL, nb, dim);
            ww_twed_params p = {0.5, 1.0, degree};
            double want = NAN, got = NAN;
            CHECK_STATUS(ww_twed(cpu, &a, &b, &p, &want), WW_OK);
            CHECK_STATUS(ww_twed(gpu, &a, &b, &p, &got), WW_OK);
            CHECK_CLOSE(got, want, 1e-12);
        }
    free(va), free(vb);
    ww_ctx_destroy(cpu);
    ww_ctx_destroy(gpu);
}

/* The wavefront engine with every tile shape, on pairs around band and block boundaries (a band is
 * 128 * R rows: 384, 512 or 1024; a block C columns) and on a large pair (many bands, both row
 * buffers reused). */
void test_cuda_wavefront_band_sizes(void)
{
    REQUIRE_GPU();
    ww_rng r = {77};
    const size_t sizes[][2] = {{20011, 19997}, {513, 511}, {512, 512}, {1, 9},     {129, 7},
                               {4097, 3},      {1025, 1030}, {384, 385}, {767, 769}, {2049, 2047}};
    const size_t maxn = 20011;
    double *va = malloc(maxn * sizeof(double)), *vb = malloc(maxn * sizeof(double));
    double *ta = malloc(maxn * sizeof(double)), *tb = malloc(maxn * sizeof(double));
    ww_ctx *cpu = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_AUTO, 0);
    /* TWED by every shape built for it; DTW by its own, the lagged ones (lanes two steps apart) too */
    const char *twed_tiles[] = {"3x1s16", "4x1s16", "8x1s16", "8x2s8", "4x4s4", NULL};
    const char *dtw_tiles[] = {"3x1s16l2", "4x1s16l2", "3x1s16", "4x1s16", "8x1s16", "8x2s8", NULL};
    for (size_t q = 0; q < sizeof sizes / sizeof sizes[0]; q++) {
        const size_t n = sizes[q][0], m = sizes[q][1];
        fill_random(&r, va, n, ta, n, (int)(q & 1));
        fill_random(&r, vb, m, tb, m, (int)(q & 1));
        ww_series a = ww_series_f64(va, q & 1 ? ta : NULL, n, 1), b = ww_series_f64(vb, q & 1 ? tb : NULL, m, 1);
        for (int dtw = 0; dtw <= 1; dtw++) {
            const ww_measure ms = dtw ? ww_measure_dtw() : ww_measure_twed(q & 1 ? 0.5 : 1.0, 1.0, 2);
            double want = NAN;
            CHECK_STATUS(ww_distance(cpu, &ms, &a, &b, &want), WW_OK);
            for (const char *const *tile = dtw ? dtw_tiles : twed_tiles; *tile; tile++) {
                setenv("WW_WAVEFRONT_TILE", *tile, 1);
                ww_ctx *gpu = ww_test_ctx(WW_BACKEND_CUDA, WW_ENGINE_CUDA_WAVEFRONT, 0);
                for (int rep = 0; rep < (q == 0 ? 3 : 1); rep++) { /* a race shows as a result that moves */
                    double got = NAN;
                    CHECK_STATUS(ww_distance(gpu, &ms, &a, &b, &got), WW_OK);
                    CHECK_CLOSE(got, want, 1e-12);
                    if (!(fabs(got - want) <= 1e-12 * fmax(1.0, fabs(want))))
                        fprintf(stderr, "    %s tile %s na=%zu nb=%zu\n", dtw ? "dtw" : "twed", *tile, n, m);
                }
                ww_ctx_destroy(gpu);
            }
        }
        unsetenv("WW_WAVEFRONT_TILE");
    }
    free(va), free(vb), free(ta), free(tb);
    ww_ctx_destroy(cpu);
}

/* Series in R^dim, dims 2 to 9: samples of 2 to 8 components are zero-padded to 2, 4 or 8 and held
 * in registers (degrees 1 and 2), others read per cell; every tile shape that has a kernel for
 * them, around band edges, with and without stamps, f64 and f32 input. */
void test_cuda_wavefront_vectors(void)
{
    REQUIRE_GPU();
    ww_rng r = {4242};
    const size_t sizes[][2] = {{1025, 1030}, {385, 3}, {2, 770}, {2049, 1500}};
    const size_t dims[] = {2, 3, 4, 5, 8, 9};
    const char *tiles[] = {NULL, "3x1s16", "4x1s16", "8x1s16"};
    const size_t maxn = 2049 * 9;
    double *va = malloc(maxn * sizeof(double)), *vb = malloc(maxn * sizeof(double));
    double *ta = malloc(maxn * sizeof(double)), *tb = malloc(maxn * sizeof(double));
    float *fa = malloc(maxn * sizeof(float)), *fb = malloc(maxn * sizeof(float));
    ww_ctx *cpu = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_AUTO, 0);
    for (size_t q = 0; q < sizeof sizes / sizeof sizes[0]; q++)
        for (size_t d = 0; d < sizeof dims / sizeof dims[0]; d++)
            for (int degree = 1; degree <= 3; degree++) {
                const size_t n = sizes[q][0], m = sizes[q][1], dim = dims[d];
                const int stamps = (int)((q + d + (size_t)degree) & 1);
                fill_random(&r, va, n * dim, ta, n, stamps);
                fill_random(&r, vb, m * dim, tb, m, stamps);
                ww_series a = ww_series_f64(va, stamps ? ta : NULL, n, dim);
                ww_series b = ww_series_f64(vb, stamps ? tb : NULL, m, dim);
                ww_twed_params p = {stamps ? 0.5 : 0.001, 1.0, degree};
                double want = NAN;
                CHECK_STATUS(ww_twed(cpu, &a, &b, &p, &want), WW_OK);
                for (int k = 0; k < 4; k++) {
                    if (tiles[k])
                        setenv("WW_WAVEFRONT_TILE", tiles[k], 1);
                    const int in_registers = dim <= 8 && degree <= 2;
                    if ((k == 1 && in_registers) || (k == 3 && dim > 4 && in_registers))
                        continue; /* no kernel of that shape for these vectors (wavefront_shapes) */
                    ww_ctx *gpu = ww_test_ctx(WW_BACKEND_CUDA, WW_ENGINE_CUDA_WAVEFRONT, 0);
                    double got = NAN;
                    CHECK_STATUS(ww_twed(gpu, &a, &b, &p, &got), WW_OK);
                    CHECK_CLOSE(got, want, 1e-12);
                    if (!(fabs(got - want) <= 1e-12 * fmax(1.0, fabs(want))))
                        fprintf(stderr, "    tile %s n=%zu m=%zu dim=%zu degree=%d\n", tiles[k] ? tiles[k] : "auto",
                                n, m, dim, degree);
                    ww_ctx_destroy(gpu);
                }
                unsetenv("WW_WAVEFRONT_TILE");
                /* float input: converted to double on the device, the CPU's float engine within 1e-4 */
                if (degree == 2 && q == 0) {
                    for (size_t i = 0; i < n * dim; i++)
                        fa[i] = (float)va[i];
                    for (size_t i = 0; i < m * dim; i++)
                        fb[i] = (float)vb[i];
                    ww_series fsa = ww_series_f32(fa, NULL, n, dim), fsb = ww_series_f32(fb, NULL, m, dim);
                    ww_ctx *gpu = ww_test_ctx(WW_BACKEND_CUDA, WW_ENGINE_CUDA_WAVEFRONT, 0);
                    double got = NAN, want32 = NAN;
                    CHECK_STATUS(ww_twed(cpu, &fsa, &fsb, &p, &want32), WW_OK);
                    CHECK_STATUS(ww_twed(gpu, &fsa, &fsb, &p, &got), WW_OK);
                    CHECK_CLOSE(got, want32, 1e-4);
                    ww_ctx_destroy(gpu);
                }
            }
    free(va), free(vb), free(ta), free(tb), free(fa), free(fb);
    ww_ctx_destroy(cpu);
}

/* Regression (review): the hand-over buffer of one context may be handed to another by the
 * allocator with the last call's band rows still in it. A context that numbered its calls from 1
 * would wait for ids that the old rows already carry and read them: every call here gets a new
 * context, with pairs of the same band count, and each result must be the CPU's. */
void test_cuda_wavefront_fresh_contexts(void)
{
    REQUIRE_GPU();
    ww_rng r = {99};
    const size_t n = 2600, m = 2500; /* 6 bands of 512 rows (4 x 4 tiles) */
    double *va = malloc(n * sizeof(double)), *vb = malloc(m * sizeof(double));
    ww_ctx *cpu = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_AUTO, 0);
    ww_twed_params p = {1.0, 1.0, 2};
    for (int round = 0; round < 20; round++) {
        fill_random(&r, va, n, NULL, 0, 0);
        fill_random(&r, vb, m, NULL, 0, 0);
        ww_series a = ww_series_f64(va, NULL, n, 1), b = ww_series_f64(vb, NULL, m, 1);
        double want = NAN, got = NAN;
        CHECK_STATUS(ww_twed(cpu, &a, &b, &p, &want), WW_OK);
        ww_ctx *gpu = ww_test_ctx(WW_BACKEND_CUDA, WW_ENGINE_CUDA_WAVEFRONT, 0);
        CHECK_STATUS(ww_twed(gpu, &a, &b, &p, &got), WW_OK);
        CHECK_CLOSE(got, want, 1e-12);
        ww_ctx_destroy(gpu);
    }
    free(va), free(vb);
    ww_ctx_destroy(cpu);
}

/* float32 inputs computed in float on the GPU: within 1e-4 of double on data in [0, 1) for pairs
 * of similar lengths (the error of a float sum grows with the number of terms: very unequal
 * lengths, whose distance is a long run of deletions, drift further). */
void test_cuda_float_vs_double(void)
{
    REQUIRE_GPU();
    ww_rng r = {99};
    const size_t sizes[] = {100, 5000, 70000, 1u << 20};
    ww_ctx *gpu = ww_test_ctx(WW_BACKEND_CUDA, WW_ENGINE_AUTO, 0);
    for (size_t k = 0; k < 4; k++) {
        size_t na = sizes[k], nb = sizes[k] - 3;
        double *da = malloc(na * sizeof(double)), *db = malloc(nb * sizeof(double));
        float *fa = malloc(na * sizeof(float)), *fb = malloc(nb * sizeof(float));
        for (size_t i = 0; i < na; i++)
            fa[i] = (float)ww_rng_uniform(&r), da[i] = fa[i];
        for (size_t i = 0; i < nb; i++)
            fb[i] = (float)ww_rng_uniform(&r), db[i] = fb[i];
        ww_twed_params p = ww_twed_params_default();
        ww_series a64 = ww_series_f64(da, NULL, na, 1), b64 = ww_series_f64(db, NULL, nb, 1);
        ww_series a32 = ww_series_f32(fa, NULL, na, 1), b32 = ww_series_f32(fb, NULL, nb, 1);
        double d64 = NAN, d32 = NAN;
        CHECK_STATUS(ww_twed(gpu, &a64, &b64, &p, &d64), WW_OK);
        CHECK_STATUS(ww_twed(gpu, &a32, &b32, &p, &d32), WW_OK);
        CHECK(fabs(d32 - d64) <= 1e-4 * fabs(d64));
        fprintf(stderr, "  n=%zu: float %.9g double %.17g relative difference %.2e\n", na, d32, d64,
                fabs(d32 - d64) / fabs(d64));
        free(da), free(db), free(fa), free(fb);
    }
    ww_ctx_destroy(gpu);
}

/* Device pointers are read in place; bad values on the device are reported like host ones. */
void test_cuda_device_pointers(void)
{
    REQUIRE_GPU();
#ifndef WW_TEST_CUDA
    SKIP("test built without the CUDA runtime headers");
#else
    ww_rng r = {5};
    const size_t na = 3001, nb = 2999, dim = 3;
    double *ha = malloc(na * dim * sizeof(double)), *hb = malloc(nb * dim * sizeof(double));
    double *hta = malloc(na * sizeof(double)), *htb = malloc(nb * sizeof(double));
    fill_random(&r, ha, na * dim, hta, na, 1);
    fill_random(&r, hb, nb * dim, htb, nb, 1);
    double *da, *db, *dta, *dtb;
    CHECK(cudaMalloc((void **)&da, na * dim * sizeof(double)) == cudaSuccess);
    CHECK(cudaMalloc((void **)&db, nb * dim * sizeof(double)) == cudaSuccess);
    CHECK(cudaMalloc((void **)&dta, na * sizeof(double)) == cudaSuccess);
    CHECK(cudaMalloc((void **)&dtb, nb * sizeof(double)) == cudaSuccess);
    cudaMemcpy(da, ha, na * dim * sizeof(double), cudaMemcpyHostToDevice);
    cudaMemcpy(db, hb, nb * dim * sizeof(double), cudaMemcpyHostToDevice);
    cudaMemcpy(dta, hta, na * sizeof(double), cudaMemcpyHostToDevice);
    cudaMemcpy(dtb, htb, nb * sizeof(double), cudaMemcpyHostToDevice);
    ww_twed_params p = {0.3, 0.7, 2};
    ww_series ha_s = ww_series_f64(ha, hta, na, dim), hb_s = ww_series_f64(hb, htb, nb, dim);
    ww_series da_s = ha_s, db_s = hb_s;
    da_s.values = da, da_s.stamps = dta, da_s.memory = WW_DEVICE;
    db_s.values = db, db_s.stamps = dtb, db_s.memory = WW_DEVICE;
    ww_ctx *cpu = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_AUTO, 0), *gpu = ww_test_ctx(WW_BACKEND_CUDA, WW_ENGINE_AUTO, 0);
    double want = NAN, got = NAN, mixed = NAN;
    CHECK_STATUS(ww_twed(cpu, &ha_s, &hb_s, &p, &want), WW_OK);
    CHECK_STATUS(ww_twed(gpu, &da_s, &db_s, &p, &got), WW_OK);
    CHECK_STATUS(ww_twed(gpu, &ha_s, &db_s, &p, &mixed), WW_OK);
    CHECK_CLOSE(got, want, 1e-12);
    CHECK_CLOSE(mixed, want, 1e-12);
    /* device data on a CPU context is refused */
    CHECK_STATUS(ww_twed(cpu, &da_s, &db_s, &p, &got), WW_ERR_MEMORY_KIND);
    /* a NaN on the device */
    double nan_value = NAN;
    cudaMemcpy(da + 17, &nan_value, sizeof(double), cudaMemcpyHostToDevice);
    CHECK_STATUS(ww_twed(gpu, &da_s, &db_s, &p, &got), WW_ERR_NONFINITE);
    /* decreasing stamps on the device */
    cudaMemcpy(da, ha, na * dim * sizeof(double), cudaMemcpyHostToDevice);
    double back = hta[10] - 5.0;
    cudaMemcpy(dta + 11, &back, sizeof(double), cudaMemcpyHostToDevice);
    CHECK_STATUS(ww_twed(gpu, &da_s, &db_s, &p, &got), WW_ERR_STAMPS);
    /* a stamp beyond half the range on the device (see test_api_twed_errors) */
    cudaMemcpy(dta, hta, na * sizeof(double), cudaMemcpyHostToDevice);
    double huge = 1e308;
    cudaMemcpy(dta + na - 1, &huge, sizeof(double), cudaMemcpyHostToDevice);
    CHECK_STATUS(ww_twed(gpu, &da_s, &db_s, &p, &got), WW_ERR_STAMPS);
    /* and the context still works afterwards */
    cudaMemcpy(dta, hta, na * sizeof(double), cudaMemcpyHostToDevice);
    got = NAN;
    CHECK_STATUS(ww_twed(gpu, &da_s, &db_s, &p, &got), WW_OK);
    CHECK_CLOSE(got, want, 1e-12);
    cudaFree(da), cudaFree(db), cudaFree(dta), cudaFree(dtb);
    free(ha), free(hb), free(hta), free(htb);
    ww_ctx_destroy(cpu);
    ww_ctx_destroy(gpu);
#endif
}

/* Out of GPU memory: with the device filled by another allocation, one pair and a matrix fail with
 * WW_ERR_DEVICE_MEMORY on the CUDA backend (no crash, the context still works once memory is back),
 * and backend auto falls back to the CPU engine with the right values. */
void test_cuda_out_of_memory(void)
{
    REQUIRE_GPU();
#ifndef WW_TEST_CUDA
    SKIP("test built without the CUDA runtime headers");
#else
    ww_rng r = {404};
    const size_t na = (size_t)1 << 20, nb = 3000;
    double *va = malloc(na * sizeof(double)), *vb = malloc(nb * sizeof(double));
    fill_random(&r, va, na, NULL, 0, 0);
    fill_random(&r, vb, nb, NULL, 0, 0);
    ww_series a = ww_series_f64(va, NULL, na, 1), b = ww_series_f64(vb, NULL, nb, 1);
    ww_twed_params p = {0.5, 1.0, 2};
    /* a matrix whose device buffers need more than the headroom left: 64 series of 4,096 */
    const size_t count = 64, len = 4096;
    double *set = malloc(count * len * sizeof(double));
    fill_random(&r, set, count * len, NULL, 0, 0);
    ww_dataset x = {0};
    x.values = set, x.count = count, x.length = len, x.dim = 1, x.dtype = WW_F64, x.memory = WW_HOST;
    ww_pairwise_options po = ww_pairwise_options_default();
    po.row_end = 2, po.col_end = count;
    double *matrix = malloc(2 * count * sizeof(double)), *want_matrix = malloc(2 * count * sizeof(double));
    ww_ctx *cpu = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_AUTO, 0);
    ww_ctx *gpu = ww_test_ctx(WW_BACKEND_CUDA, WW_ENGINE_AUTO, 0), *autob = ww_test_ctx(WW_BACKEND_AUTO, WW_ENGINE_AUTO, 0);
    double want = NAN, got = NAN;
    CHECK_STATUS(ww_twed(cpu, &a, &b, &p, &want), WW_OK);
    CHECK_STATUS(ww_twed_pairwise(cpu, &x, NULL, &p, want_matrix, &po), WW_OK);

    /* fill the GPU in chunks of 1 GiB, then 64 MiB, then 2 MiB, until nothing more fits: what is
     * left is less than either call needs (25 MB prepared for the pair, 8 MB for the set) */
    void *balloon[512];
    int pieces = 0;
    const size_t chunk[] = {(size_t)1 << 30, (size_t)64 << 20, (size_t)2 << 20};
    for (int c = 0; c < 3; c++)
        while (pieces < 512 && cudaMalloc(&balloon[pieces], chunk[c]) == cudaSuccess)
            pieces++;
    cudaGetLastError();
    if (pieces == 0 || pieces == 512) {
        SKIP("could not fill the GPU's memory");
    } else {
        CHECK_STATUS(ww_twed(gpu, &a, &b, &p, &got), WW_ERR_DEVICE_MEMORY);
        CHECK_STATUS(ww_twed_pairwise(gpu, &x, NULL, &p, matrix, &po), WW_ERR_DEVICE_MEMORY);
        got = NAN;
        CHECK_STATUS(ww_twed(autob, &a, &b, &p, &got), WW_OK); /* on the CPU */
        CHECK_CLOSE(got, want, 1e-12);
        for (size_t k = 0; k < 2 * count; k++)
            matrix[k] = NAN;
        CHECK_STATUS(ww_twed_pairwise(autob, &x, NULL, &p, matrix, &po), WW_OK);
        for (size_t k = 0; k < 2 * count; k++)
            CHECK_CLOSE(matrix[k], want_matrix[k], 1e-12);
        for (int k = 0; k < pieces; k++)
            cudaFree(balloon[k]);
        /* memory is back: the same contexts work on the GPU again */
        got = NAN;
        CHECK_STATUS(ww_twed(gpu, &a, &b, &p, &got), WW_OK);
        CHECK_CLOSE(got, want, 1e-12);
        for (size_t k = 0; k < 2 * count; k++)
            matrix[k] = NAN;
        CHECK_STATUS(ww_twed_pairwise(gpu, &x, NULL, &p, matrix, &po), WW_OK);
        for (size_t k = 0; k < 2 * count; k++)
            CHECK_CLOSE(matrix[k], want_matrix[k], 1e-12);
    }
    ww_ctx_destroy(cpu), ww_ctx_destroy(gpu), ww_ctx_destroy(autob);
    free(va), free(vb), free(set), free(matrix), free(want_matrix);
#endif
}

/* Host inputs with bad values give the same errors on the GPU backend as on the CPU. */
void test_cuda_bad_inputs(void)
{
    REQUIRE_GPU();
    ww_ctx *gpu = ww_test_ctx(WW_BACKEND_CUDA, WW_ENGINE_AUTO, 0);
    double v[4] = {1, 2, NAN, 4}, ok[4] = {1, 2, 3, 4}, t_bad[4] = {1, 3, 2, 4};
    ww_series a = ww_series_f64(v, NULL, 4, 1), b = ww_series_f64(ok, NULL, 4, 1);
    ww_series c = ww_series_f64(ok, t_bad, 4, 1);
    double d = 0;
    CHECK_STATUS(ww_twed(gpu, &a, &b, NULL, &d), WW_ERR_NONFINITE);
    CHECK_STATUS(ww_twed(gpu, &b, &c, NULL, &d), WW_ERR_STAMPS);
    double t_huge[4] = {1, 2, 3, 1e308};
    ww_series h = ww_series_f64(ok, t_huge, 4, 1);
    CHECK_STATUS(ww_twed(gpu, &h, &b, NULL, &d), WW_ERR_STAMPS);
    ww_series e = ww_series_f64(ok, NULL, 0, 1);
    CHECK_STATUS(ww_twed(gpu, &e, &b, NULL, &d), WW_ERR_EMPTY);
    CHECK_STATUS(ww_twed(gpu, &b, &b, NULL, &d), WW_OK);
    CHECK(d == 0.0);
    ww_ctx_destroy(gpu);
}

/* Without a GPU, asking for CUDA is a clear error and auto falls back to the CPU. */
void test_cuda_absent_is_clear(void)
{
    if (ww_cuda_available())
        SKIP("a GPU is present: the no-GPU path is tested on machines without one");
    ww_ctx_options o = ww_ctx_options_default();
    o.backend = WW_BACKEND_CUDA;
    ww_ctx *ctx = NULL;
    ww_status st = ww_ctx_create(&ctx, &o);
    CHECK(st == WW_ERR_NO_CUDA || st == WW_ERR_NO_DEVICE);
    CHECK(ctx == NULL);
    o.backend = WW_BACKEND_AUTO;
    CHECK_STATUS(ww_ctx_create(&ctx, &o), WW_OK);
    CHECK(ww_ctx_backend(ctx) == WW_BACKEND_CPU);
    ww_ctx_destroy(ctx);
    fprintf(stderr, "  note: GPU tests skipped (no GPU); run scripts/gpu_run.sh on a GPU machine\n");
}

/* ---- distance matrices ---- */

/* A random dataset of `count` series with lengths in [min_len, max_len], values in [0, 1).
 * min_len 0: mixed lengths, so that pairs need different strategies: half of the series of 1 to
 * 60 samples, 5/12 of 150 to max_len / 3, 1/12 of max_len / 2 to max_len. */
typedef struct random_set {
    double *values, *stamps;
    float *values32, *stamps32;
    size_t *offsets;
    size_t count, dim;
} random_set;

static random_set make_set(ww_rng *r, size_t count, size_t min_len, size_t max_len, size_t dim)
{
    random_set s;
    s.count = count;
    s.dim = dim;
    s.offsets = malloc((count + 1) * sizeof(size_t));
    s.offsets[0] = 0;
    for (size_t i = 0; i < count; i++) {
        size_t lo = min_len, hi = max_len;
        if (min_len == 0) {
            const uint64_t band = ww_rng_below(r, 12);
            lo = band < 6 ? 1 : band < 11 ? 150 : max_len / 2;
            hi = band < 6 ? 60 : band < 11 ? max_len / 3 : max_len;
        }
        s.offsets[i + 1] = s.offsets[i] + lo + ww_rng_below(r, hi - lo + 1);
    }
    size_t total = s.offsets[count];
    s.values = malloc(total * dim * sizeof(double));
    s.stamps = malloc(total * sizeof(double));
    s.values32 = malloc(total * dim * sizeof(float));
    s.stamps32 = malloc(total * sizeof(float));
    for (size_t i = 0; i < count; i++)
        fill_random(r, s.values + s.offsets[i] * dim, (s.offsets[i + 1] - s.offsets[i]) * dim, s.stamps + s.offsets[i],
                    s.offsets[i + 1] - s.offsets[i], 1);
    for (size_t k = 0; k < total * dim; k++)
        s.values32[k] = (float)s.values[k];
    for (size_t k = 0; k < total; k++)
        s.stamps32[k] = (float)s.stamps[k];
    return s;
}

static void free_set(random_set *s)
{
    free(s->values), free(s->stamps), free(s->values32), free(s->stamps32), free(s->offsets);
}

/* A block of the matrix (rows from a third down to the last but one, columns from a quarter on)
 * into a NaN-poisoned buffer five columns wider, f32 output: the entries that differ from `want`
 * (the CPU's whole matrix, rows x cols) by more than 1e-6 relative, plus those written outside
 * the block. */
static size_t block_f32_mismatches(ww_ctx *gpu, const ww_dataset *x, const ww_dataset *y, const ww_twed_params *p,
                                   const double *want, size_t rows, size_t cols)
{
    ww_pairwise_options o = ww_pairwise_options_default();
    o.row_begin = rows / 3;
    o.row_end = rows - 1;
    o.col_begin = cols / 4;
    o.col_end = cols;
    o.out_stride = cols + 5;
    o.out_dtype = WW_F32;
    const size_t brows = o.row_end - o.row_begin, bcols = o.col_end - o.col_begin;
    float *blk = malloc(brows * o.out_stride * sizeof(float));
    for (size_t k = 0; k < brows * o.out_stride; k++)
        blk[k] = NAN;
    CHECK_STATUS(ww_twed_pairwise(gpu, x, y, p, blk, &o), WW_OK);
    size_t bad = 0;
    for (size_t i = 0; i < brows; i++)
        for (size_t j = 0; j < o.out_stride; j++) {
            const float v = blk[i * o.out_stride + j];
            const double w = want[(o.row_begin + i) * cols + o.col_begin + j];
            bad += j >= bcols ? !isnan(v) : !(fabs(v - w) <= 1e-6 * fmax(1.0, fabs(w)));
        }
    free(blk);
    return bad;
}

/* Every entry of GPU matrices (self and cross, whole and blocks, f64 and f32 output) equals the
 * CPU engine to 1e-12; poisoned outputs show that every entry is written and nothing outside. */
static void pairwise_matches_cpu(const char *strategy)
{
    if (strategy)
        setenv("WW_MATRIX_STRATEGY", strategy, 1);
    else
        unsetenv("WW_MATRIX_STRATEGY");
    ww_rng r = {2024};
    ww_ctx *cpu = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_AUTO, 0), *gpu = ww_test_ctx(WW_BACKEND_CUDA, WW_ENGINE_AUTO, 0);
    const size_t cases[][4] = {/* count, min_len, max_len, dim */
                               {37, 1, 60, 1}, {50, 20, 256, 3}, {23, 1, 120, 8}, {9, 200, 700, 2}, {5, 1, 3000, 1},
                               {12, 5, 40, 100} /* dim past the register path */,
                               /* the staged thread kernel: dims up to 8 and up to 32, lengths around
                                * its shared-memory bound; then dim 64 and lengths past 32 * warps per block */
                               {30, 1, 36, 28}, {21, 1, 70, 5}, {17, 30, 64, 32}, {8, 1, 600, 64}, {6, 150, 1100, 17}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        random_set xs = make_set(&r, cases[c][0], cases[c][1], cases[c][2], cases[c][3]);
        random_set ys = make_set(&r, cases[c][0] / 2 + 3, cases[c][1], cases[c][2], cases[c][3]);
        ww_dataset x = ww_dataset_f64(xs.values, xs.stamps, xs.offsets, xs.count, 0, xs.dim);
        ww_dataset y = ww_dataset_f64(ys.values, ys.stamps, ys.offsets, ys.count, 0, ys.dim);
        ww_twed_params p = {0.3, 0.8, c % 4 == 3 ? 1 : 2}; /* degree 1 too: its own loops */
        for (int cross = 0; cross < 2; cross++) {
            const ww_dataset *yy = cross ? &y : NULL;
            size_t rows = x.count, cols = cross ? y.count : x.count;
            double *want = malloc(rows * cols * sizeof(double));
            CHECK_STATUS(ww_twed_pairwise(cpu, &x, yy, &p, want, NULL), WW_OK);
            /* whole matrix, f64 */
            double *got = malloc(rows * cols * sizeof(double));
            for (size_t k = 0; k < rows * cols; k++)
                got[k] = NAN;
            CHECK_STATUS(ww_twed_pairwise(gpu, &x, yy, &p, got, NULL), WW_OK);
            for (size_t k = 0; k < rows * cols; k++)
                CHECK_CLOSE(got[k], want[k], 1e-12);
            /* a block in a wider buffer, f32 output; outside the block untouched */
            CHECK(block_f32_mismatches(gpu, &x, yy, &p, want, rows, cols) == 0);
            free(got);
            free(want);
        }
        /* float inputs: float arithmetic, close to double on the same rounded data */
        ww_dataset x32 = ww_dataset_f32(xs.values32, xs.stamps32, xs.offsets, xs.count, 0, xs.dim);
        ww_dataset x64r = x; /* double on the float-rounded values */
        double *r64 = malloc(x.count * x.count * sizeof(double)), *r32 = malloc(x.count * x.count * sizeof(double));
        double *v64 = malloc(xs.offsets[xs.count] * xs.dim * sizeof(double));
        double *t64 = malloc(xs.offsets[xs.count] * sizeof(double));
        for (size_t k = 0; k < xs.offsets[xs.count] * xs.dim; k++)
            v64[k] = xs.values32[k];
        for (size_t k = 0; k < xs.offsets[xs.count]; k++)
            t64[k] = xs.stamps32[k];
        x64r.values = v64;
        x64r.stamps = t64;
        CHECK_STATUS(ww_twed_pairwise(cpu, &x64r, NULL, &p, r64, NULL), WW_OK);
        CHECK_STATUS(ww_twed_pairwise(gpu, &x32, NULL, &p, r32, NULL), WW_OK);
        for (size_t k = 0; k < x.count * x.count; k++)
            CHECK(fabs(r32[k] - r64[k]) <= 1e-4 * fabs(r64[k]) + 1e-5);
        free(r64), free(r32), free(v64), free(t64);
        free_set(&xs);
        free_set(&ys);
    }
    ww_ctx_destroy(cpu);
    ww_ctx_destroy(gpu);
    unsetenv("WW_MATRIX_STRATEGY");
}

/* The strategy the cost model picks (thread, warp or whole GPU by size), then each forced. */
void test_cuda_pairwise_matches_cpu(void)
{
    REQUIRE_GPU();
    pairwise_matches_cpu(NULL);
    pairwise_matches_cpu("thread");
    pairwise_matches_cpu("warp");
    pairwise_matches_cpu("block");
    pairwise_matches_cpu("grid");
}

/* The staged one-thread-per-pair kernel (dim 2 .. 32, short series) in each of its shapes (rows per
 * pass, lanes per block) and off, on self and cross matrices with every degree: every entry equals
 * the CPU engine. */
void test_cuda_pairwise_staged_shapes(void)
{
    REQUIRE_GPU();
    ww_rng r = {4242};
    ww_ctx *cpu = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_AUTO, 0), *gpu = ww_test_ctx(WW_BACKEND_CUDA, WW_ENGINE_AUTO, 0);
    const size_t cases[][4] = {{70, 1, 30, 28}, {45, 1, 50, 3}, {40, 20, 33, 32}, {33, 1, 16, 9}};
    const char *shapes[][3] = {/* WW_STAGED, WW_STAGED_ROWS, WW_STAGED_THREADS */
                               {"1", "1", "64"}, {"1", "2", "64"}, {"1", "1", "32"}, {"1", "2", "128"}, {"0", "2", "64"}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        random_set xs = make_set(&r, cases[c][0], cases[c][1], cases[c][2], cases[c][3]);
        random_set ys = make_set(&r, cases[c][0] / 3 + 2, cases[c][1], cases[c][2], cases[c][3]);
        ww_dataset x = ww_dataset_f64(xs.values, xs.stamps, xs.offsets, xs.count, 0, xs.dim);
        ww_dataset y = ww_dataset_f64(ys.values, ys.stamps, ys.offsets, ys.count, 0, ys.dim);
        for (int degree = 1; degree <= 3; degree++) {
            ww_twed_params p = {0.4, 0.6, degree};
            for (int cross = 0; cross < 2; cross++) {
                const ww_dataset *yy = cross ? &y : NULL;
                const size_t rows = x.count, cols = cross ? y.count : x.count;
                double *want = malloc(rows * cols * sizeof(double)), *got = malloc(rows * cols * sizeof(double));
                CHECK_STATUS(ww_twed_pairwise(cpu, &x, yy, &p, want, NULL), WW_OK);
                for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
                    setenv("WW_STAGED", shapes[s][0], 1);
                    setenv("WW_STAGED_ROWS", shapes[s][1], 1);
                    setenv("WW_STAGED_THREADS", shapes[s][2], 1);
                    for (size_t k = 0; k < rows * cols; k++)
                        got[k] = NAN;
                    CHECK_STATUS(ww_twed_pairwise(gpu, &x, yy, &p, got, NULL), WW_OK);
                    size_t bad = 0, first = 0;
                    for (size_t k = 0; k < rows * cols; k++)
                        if (!(fabs(got[k] - want[k]) <= 1e-12 * fmax(1.0, fabs(want[k]))) && bad++ == 0)
                            first = k; /* NaN (an entry not written) counts too */
                    CHECK(bad == 0);
                    if (bad)
                        fprintf(stderr, "    staged shape %s/%s/%s case %zu degree %d cross %d: %zu entries off, "
                                "first (%zu, %zu) = %.17g, expected %.17g\n", shapes[s][0], shapes[s][1],
                                shapes[s][2], c, degree, cross, bad, first / cols, first % cols, got[first], want[first]);
                }
                free(want), free(got);
            }
        }
        free_set(&xs);
        free_set(&ys);
    }
    unsetenv("WW_STAGED");
    unsetenv("WW_STAGED_ROWS");
    unsetenv("WW_STAGED_THREADS");
    ww_ctx_destroy(cpu);
    ww_ctx_destroy(gpu);
}

/* Device-resident datasets; bad device data is reported before any output is written. */
void test_cuda_pairwise_device_data(void)
{
    REQUIRE_GPU();
#ifndef WW_TEST_CUDA
    SKIP("test built without the CUDA runtime headers");
#else
    ww_rng r = {31337};
    random_set xs = make_set(&r, 40, 10, 90, 2);
    size_t total = xs.offsets[xs.count];
    double *dv, *dt;
    CHECK(cudaMalloc((void **)&dv, total * 2 * sizeof(double)) == cudaSuccess);
    CHECK(cudaMalloc((void **)&dt, total * sizeof(double)) == cudaSuccess);
    cudaMemcpy(dv, xs.values, total * 2 * sizeof(double), cudaMemcpyHostToDevice);
    cudaMemcpy(dt, xs.stamps, total * sizeof(double), cudaMemcpyHostToDevice);
    ww_dataset host = ww_dataset_f64(xs.values, xs.stamps, xs.offsets, xs.count, 0, 2);
    ww_dataset dev = host;
    dev.values = dv, dev.stamps = dt, dev.memory = WW_DEVICE;
    ww_ctx *cpu = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_AUTO, 0), *gpu = ww_test_ctx(WW_BACKEND_CUDA, WW_ENGINE_AUTO, 0);
    ww_twed_params p = ww_twed_params_default();
    double *want = malloc(40 * 40 * sizeof(double)), *got = malloc(40 * 40 * sizeof(double));
    CHECK_STATUS(ww_twed_pairwise(cpu, &host, NULL, &p, want, NULL), WW_OK);
    for (size_t k = 0; k < 1600; k++)
        got[k] = NAN;
    CHECK_STATUS(ww_twed_pairwise(gpu, &dev, NULL, &p, got, NULL), WW_OK);
    for (size_t k = 0; k < 1600; k++)
        CHECK_CLOSE(got[k], want[k], 1e-12);
    /* knn through the GPU matrix engine */
    size_t idx[40 * 3], idx_cpu[40 * 3];
    double dist[40 * 3], dist_cpu[40 * 3];
    CHECK_STATUS(ww_twed_knn(gpu, &dev, &dev, &p, 3, idx, dist, NULL), WW_OK);
    CHECK_STATUS(ww_twed_knn(cpu, &host, &host, &p, 3, idx_cpu, dist_cpu, NULL), WW_OK);
    for (size_t k = 0; k < 120; k++) {
        CHECK(idx[k] == idx_cpu[k]);
        CHECK_CLOSE(dist[k], dist_cpu[k], 1e-12);
    }
    double inf_value = INFINITY;
    cudaMemcpy(dv + 33, &inf_value, sizeof(double), cudaMemcpyHostToDevice);
    for (size_t k = 0; k < 1600; k++)
        got[k] = NAN;
    CHECK_STATUS(ww_twed_pairwise(gpu, &dev, NULL, &p, got, NULL), WW_ERR_NONFINITE);
    for (size_t k = 0; k < 1600; k++)
        CHECK(isnan(got[k]));
    free(want), free(got);
    cudaFree(dv), cudaFree(dt);
    free_set(&xs);
    ww_ctx_destroy(cpu);
    ww_ctx_destroy(gpu);
#endif
}

static int cancel_after_first(uint64_t done, uint64_t total, void *user)
{
    (void)total;
    int *calls = (int *)user;
    (*calls)++;
    return done > 0;
}

/* Progress reaches the callback and cancelling stops the GPU matrix. */
void test_cuda_pairwise_cancel(void)
{
    REQUIRE_GPU();
    ww_rng r = {8};
    random_set xs = make_set(&r, 3000, 100, 100, 1); /* large enough for several chunks */
    ww_dataset x = ww_dataset_f64(xs.values, NULL, NULL, xs.count, 100, 1);
    double *m = malloc(xs.count * xs.count * sizeof(double));
    ww_ctx *gpu = ww_test_ctx(WW_BACKEND_CUDA, WW_ENGINE_AUTO, 0);
    int calls = 0;
    ww_pairwise_options o = ww_pairwise_options_default();
    o.progress = cancel_after_first;
    o.progress_user = &calls;
    CHECK_STATUS(ww_twed_pairwise(gpu, &x, NULL, NULL, m, &o), WW_ERR_CANCELLED);
    CHECK(calls >= 1);
    free(m);
    free_set(&xs);
    ww_ctx_destroy(gpu);
}

#ifdef WW_TEST_CUDA
typedef struct progress_log {
    uint64_t last_done, total;
    int calls, overshoot, backwards;
} progress_log;

static int log_progress(uint64_t done, uint64_t total, void *user)
{
    progress_log *l = (progress_log *)user;
    l->calls++;
    l->overshoot |= done > total;
    l->backwards |= done < l->last_done;
    l->last_done = done;
    l->total = total;
    return 0;
}
#endif

/* Review findings, each with the test that would have caught it. */
void test_cuda_review_regressions(void)
{
    REQUIRE_GPU();
#ifndef WW_TEST_CUDA
    SKIP("test built without the CUDA runtime headers");
#else
    ww_ctx *gpu = ww_test_ctx(WW_BACKEND_CUDA, WW_ENGINE_AUTO, 0), *cpu = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_AUTO, 0);
    ww_twed_params p = ww_twed_params_default();
    ww_rng r = {777};
    /* a host pointer labelled WW_DEVICE is refused, and the context still works afterwards */
    double host[64];
    fill_random(&r, host, 64, NULL, 0, 0);
    ww_series lie = ww_series_f64(host, NULL, 64, 1), ok = ww_series_f64(host, NULL, 64, 1);
    lie.memory = WW_DEVICE;
    double d = NAN;
    CHECK_STATUS(ww_twed(gpu, &lie, &ok, &p, &d), WW_ERR_MEMORY_KIND);
    ww_dataset lie_set = ww_dataset_f64(host, NULL, NULL, 4, 16, 1);
    lie_set.memory = WW_DEVICE;
    double m[16];
    CHECK_STATUS(ww_twed_pairwise(gpu, &lie_set, NULL, &p, m, NULL), WW_ERR_MEMORY_KIND);
    CHECK_STATUS(ww_twed(gpu, &ok, &ok, &p, &d), WW_OK);
    CHECK(d == 0.0);

    /* float data on the GPU matrix engine needs parameters within float range */
    float f[64];
    for (int k = 0; k < 64; k++)
        f[k] = (float)host[k];
    ww_dataset fs = ww_dataset_f32(f, NULL, NULL, 4, 16, 1);
    ww_twed_params huge = {1e300, 1.0, 2};
    CHECK_STATUS(ww_twed_pairwise(gpu, &fs, NULL, &huge, m, NULL), WW_ERR_PARAM);

    /* kNN of ragged queries on the GPU: progress in cells, monotone, ending at its total */
    random_set qs = make_set(&r, 300, 5, 120, 1), xs = make_set(&r, 90, 5, 120, 1);
    ww_dataset q = ww_dataset_f64(qs.values, NULL, qs.offsets, qs.count, 0, 1);
    ww_dataset x = ww_dataset_f64(xs.values, NULL, xs.offsets, xs.count, 0, 1);
    size_t *gi = malloc(300 * 3 * sizeof(size_t)), *ci = malloc(300 * 3 * sizeof(size_t));
    double *gd = malloc(300 * 3 * sizeof(double)), *cd = malloc(300 * 3 * sizeof(double));
    progress_log log = {0, 0, 0, 0, 0};
    ww_pairwise_options o = ww_pairwise_options_default();
    o.progress = log_progress;
    o.progress_user = &log;
    CHECK_STATUS(ww_twed_knn(gpu, &q, &x, &p, 3, gi, gd, &o), WW_OK);
    CHECK_STATUS(ww_twed_knn(cpu, &q, &x, &p, 3, ci, cd, NULL), WW_OK);
    for (size_t k = 0; k < 900; k++) {
        CHECK(gi[k] == ci[k]);
        CHECK_CLOSE(gd[k], cd[k], 1e-12);
    }
    CHECK(log.calls >= 1 && !log.overshoot && !log.backwards);
    CHECK(log.last_done == log.total && log.total == (uint64_t)qs.offsets[300] * xs.offsets[90]);

    /* device queries with a NaN in a later chunk: an error, and no result written */
    double *dq;
    CHECK(cudaMalloc((void **)&dq, qs.offsets[300] * sizeof(double)) == cudaSuccess);
    cudaMemcpy(dq, qs.values, qs.offsets[300] * sizeof(double), cudaMemcpyHostToDevice);
    double nan_value = NAN;
    cudaMemcpy(dq + qs.offsets[290], &nan_value, sizeof(double), cudaMemcpyHostToDevice);
    ww_dataset qd = q;
    qd.values = dq;
    qd.memory = WW_DEVICE;
    for (size_t k = 0; k < 900; k++)
        gi[k] = (size_t)-1;
    CHECK_STATUS(ww_twed_knn(gpu, &qd, &x, &p, 3, gi, gd, NULL), WW_ERR_NONFINITE);
    for (size_t k = 0; k < 900; k++)
        CHECK(gi[k] == (size_t)-1);
    cudaFree(dq);
    free(gi), free(ci), free(gd), free(cd);
    free_set(&qs);
    free_set(&xs);
    ww_ctx_destroy(gpu);
    ww_ctx_destroy(cpu);
#endif
}

/* ---- calibration and several devices ---- */

/* Every entry of the self and cross matrices of random mixed-length batches, whole and as a block
 * (f32 output, in a wider buffer), equals the CPU engine; outputs are NaN-poisoned first, so that
 * an entry left unwritten (or written outside the block) shows. */
static void matrices_match_cpu(ww_ctx *gpu, ww_ctx *cpu, const size_t (*cases)[4], size_t case_count,
                               unsigned long long seed)
{
    ww_rng r = {seed};
    for (size_t c = 0; c < case_count; c++) {
        random_set xs = make_set(&r, cases[c][0], cases[c][1], cases[c][2], cases[c][3]);
        random_set ys = make_set(&r, cases[c][0] / 2 + 3, cases[c][1], cases[c][2], cases[c][3]);
        ww_dataset x = ww_dataset_f64(xs.values, xs.stamps, xs.offsets, xs.count, 0, xs.dim);
        ww_dataset y = ww_dataset_f64(ys.values, ys.stamps, ys.offsets, ys.count, 0, ys.dim);
        ww_twed_params p = {0.3, 0.8, 2};
        for (int cross = 0; cross < 2; cross++) {
            const ww_dataset *yy = cross ? &y : NULL;
            size_t rows = x.count, cols = cross ? y.count : x.count;
            double *want = malloc(rows * cols * sizeof(double)), *got = malloc(rows * cols * sizeof(double));
            CHECK_STATUS(ww_twed_pairwise(cpu, &x, yy, &p, want, NULL), WW_OK);
            for (size_t k = 0; k < rows * cols; k++)
                got[k] = NAN;
            CHECK_STATUS(ww_twed_pairwise(gpu, &x, yy, &p, got, NULL), WW_OK);
            size_t bad = 0;
            for (size_t k = 0; k < rows * cols; k++)
                bad += !(fabs(got[k] - want[k]) <= 1e-12 * fmax(1.0, fabs(want[k])));
            if (bad)
                fprintf(stderr, "  case %zu (%s): %zu of %zu entries differ\n", c, cross ? "X vs Y" : "X vs X", bad,
                        rows * cols);
            CHECK(bad == 0);
            CHECK(block_f32_mismatches(gpu, &x, yy, &p, want, rows, cols) == 0);
            free(got), free(want);
        }
        free_set(&xs);
        free_set(&ys);
    }
}

/* calibrate writes a file that a new context loads, and results under the calibrated model still
 * equal the CPU engine; malformed and foreign files behave as documented. */
void test_cuda_calibrate(void)
{
    REQUIRE_GPU();
    char dir[256], path[400], bad[400];
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/ww_cuda_calibration_XXXXXX", tmp && *tmp ? tmp : "/tmp");
    CHECK(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/model.txt", dir);
    snprintf(bad, sizeof bad, "%s/bad.txt", dir);
    ww_ctx *gpu = ww_test_ctx(WW_BACKEND_CUDA, WW_ENGINE_AUTO, 0), *cpu = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_AUTO, 0);
    char report[2048] = "";
    CHECK_STATUS(ww_cuda_calibrate(gpu, path, report, sizeof report), WW_OK);
    fprintf(stderr, "  calibration of %s:\n%s", ww_ctx_describe(gpu), report);
    CHECK(strstr(report, "gpu = ") != NULL && strstr(report, "thread_max_length = ") != NULL);
    CHECK(strcmp(ww_ctx_calibration(gpu), path) == 0);
    ww_ctx_destroy(gpu);
    /* the tree engine's thresholds: measured, in order (thread <= warp <= block) */
    {
        const char *at[3] = {strstr(report, "ted_thread_cells = "), strstr(report, "ted_warp_cells = "),
                             strstr(report, "ted_block_cells = ")};
        double cells[3] = {-1, -1, -1};
        for (int k = 0; k < 3; k++)
            if (at[k])
                cells[k] = strtod(strchr(at[k], '=') + 1, NULL);
        CHECK(cells[0] >= 0 && cells[0] <= cells[1] && cells[1] <= cells[2]);
        CHECK(strstr(report, "ted_pair_block_cells = ") != NULL);
    }

    ww_ctx_options o = ww_ctx_options_default();
    o.backend = WW_BACKEND_CUDA;
    o.calibration = path;
    ww_ctx *calibrated = NULL;
    CHECK_STATUS(ww_ctx_create(&calibrated, &o), WW_OK);
    if (calibrated) {
        CHECK(strcmp(ww_ctx_calibration(calibrated), path) == 0);
        const size_t cases[][4] = {{90, 1, 60, 1}, {60, 20, 256, 3}, {40, 100, 400, 1}, {5, 1, 3000, 1}};
        matrices_match_cpu(calibrated, cpu, cases, sizeof cases / sizeof cases[0], 77);
        /* trees under the calibrated thresholds: random trees of 1 to 300 nodes, bit for bit */
        enum { TREES = 12, MAXN = 300 };
        int32_t *parent = malloc(TREES * MAXN * sizeof(int32_t)), *label = malloc(TREES * MAXN * sizeof(int32_t));
        double *tg = malloc(TREES * TREES * sizeof(double)), *tc = malloc(TREES * TREES * sizeof(double));
        ww_tree trees[TREES];
        ww_rng r = {991};
        for (int t = 0; t < TREES; t++) {
            const size_t n = 1 + ww_rng_below(&r, MAXN);
            int32_t *pa = parent + t * MAXN;
            for (size_t i = 0; i < n; i++) { /* preorder: the parent is an ancestor of node i - 1, or it */
                int32_t up = i == 0 ? -1 : (int32_t)i - 1;
                for (size_t steps = ww_rng_below(&r, 4); i > 0 && steps > 0 && pa[up] >= 0; steps--)
                    up = pa[up];
                pa[i] = up;
                label[t * MAXN + i] = (int32_t)ww_rng_below(&r, 6);
            }
            trees[t] = (ww_tree){n, parent + t * MAXN, label + t * MAXN};
        }
        for (int k = 0; k < TREES * TREES; k++)
            tg[k] = NAN;
        CHECK_STATUS(ww_ted_pairwise(calibrated, trees, TREES, NULL, 0, NULL, tg, NULL), WW_OK);
        CHECK_STATUS(ww_ted_pairwise(cpu, trees, TREES, NULL, 0, NULL, tc, NULL), WW_OK);
        for (int k = 0; k < TREES * TREES; k++)
            CHECK(tg[k] == tc[k]);
        free(parent), free(label), free(tg), free(tc);
        ww_ctx_destroy(calibrated);
    }
    /* through the environment too, with backend auto */
    setenv("WW_CALIBRATION", path, 1);
    ww_ctx *from_env = ww_test_ctx(WW_BACKEND_AUTO, WW_ENGINE_AUTO, 0);
    CHECK(from_env && strcmp(ww_ctx_calibration(from_env), path) == 0);
    ww_ctx_destroy(from_env);
    /* malformed: an error even for auto, which would otherwise quietly take the CPU */
    FILE *f = fopen(bad, "w");
    if (f) {
        fputs("format = 1\ngpu = x\nsm_count = 1\nwarp_step_seconds = soon\n", f);
        fclose(f);
    }
    setenv("WW_CALIBRATION", bad, 1);
    ww_ctx *none = NULL;
    o = ww_ctx_options_default();
    CHECK_STATUS(ww_ctx_create(&none, &o), WW_ERR_CALIBRATION);
    CHECK(none == NULL);
    /* another GPU's file: ignored */
    f = fopen(bad, "w");
    if (f) {
        fputs("format = 1\ngpu = Imaginary GPU\nsm_count = 3\nwarp_step_seconds = 1\n", f);
        fclose(f);
    }
    CHECK_STATUS(ww_ctx_create(&none, &o), WW_OK);
    CHECK(none && strcmp(ww_ctx_calibration(none), "built-in defaults") == 0);
    ww_ctx_destroy(none);
    unsetenv("WW_CALIBRATION");
    ww_ctx_destroy(cpu);
    remove(path), remove(bad), remove(dir);
}

#define WW_TEST_MAX_DEVICES 16

/* A context given several devices spreads the matrix over them. The same device listed twice takes
 * the same code path (two workers, two streams), so this runs on one GPU; with more visible, all
 * of them are used as well. */
void test_cuda_multi_device(void)
{
    REQUIRE_GPU();
    ww_ctx *cpu = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_AUTO, 0);
    int lists[2][WW_TEST_MAX_DEVICES], counts[2] = {2, 0};
    lists[0][0] = lists[0][1] = 0;
    const int visible = ww_cuda_device_count();
    for (int d = 0; d < visible && d < WW_TEST_MAX_DEVICES; d++)
        lists[1][counts[1]++] = d;
    for (int l = 0; l < 2; l++) {
        if (l == 1 && counts[1] < 2) {
            fprintf(stderr, "  note: one GPU visible: the multi-device path ran on devices 0,0 only\n");
            break;
        }
        ww_ctx_options o = ww_ctx_options_default();
        o.backend = WW_BACKEND_CUDA;
        o.devices = lists[l];
        o.device_count = counts[l];
        ww_ctx *gpu = NULL;
        CHECK_STATUS(ww_ctx_create(&gpu, &o), WW_OK);
        if (gpu == NULL)
            continue;
        fprintf(stderr, "  %s\n", ww_ctx_describe(gpu));
        CHECK(strstr(ww_ctx_describe(gpu), "devices 0,") != NULL);
        /* one thread per pair, one warp per pair, and long pairs (on the first device) */
        const size_t cases[][4] = {{301, 1, 60, 1}, {57, 1, 120, 8}, {130, 100, 300, 2}, {5, 1, 3000, 1}};
        matrices_match_cpu(gpu, cpu, cases, sizeof cases / sizeof cases[0], 4242 + (unsigned long long)l);
#ifdef WW_TEST_CUDA
        /* progress climbs to the total, from the calling thread; cancelling stops every device */
        ww_rng r = {99};
        random_set xs = make_set(&r, 3000, 100, 100, 1);
        ww_dataset x = ww_dataset_f64(xs.values, NULL, NULL, xs.count, 100, 1);
        double *m = malloc(xs.count * xs.count * sizeof(double));
        progress_log log = {0, 0, 0, 0, 0};
        ww_pairwise_options po = ww_pairwise_options_default();
        po.progress = log_progress;
        po.progress_user = &log;
        CHECK_STATUS(ww_twed_pairwise(gpu, &x, NULL, NULL, m, &po), WW_OK);
        CHECK(log.calls >= 2 && log.total > 0 && log.last_done == log.total && !log.overshoot && !log.backwards);
        int calls = 0;
        po.progress = cancel_after_first;
        po.progress_user = &calls;
        CHECK_STATUS(ww_twed_pairwise(gpu, &x, NULL, NULL, m, &po), WW_ERR_CANCELLED);
        CHECK(calls >= 1);
        /* and the context still works after a cancel */
        CHECK_STATUS(ww_twed_pairwise(gpu, &x, NULL, NULL, m, NULL), WW_OK);
        free(m);
        free_set(&xs);
#endif
        ww_ctx_destroy(gpu);
    }
    ww_ctx_destroy(cpu);
}

/* Mixed lengths: the matrix is split into rectangles by strategy, computed concurrently through
 * gathered views of the uploaded sets. Every entry of self, cross and block matrices, of an
 * index's queries and of the several-device path still equals the CPU engine (NaN-poisoned
 * outputs), progress is monotone and ends at its total, and a cancel stops every lane. */
void test_cuda_pairwise_groups(void)
{
    REQUIRE_GPU();
    unsetenv("WW_MATRIX_STRATEGY");
    ww_ctx *cpu = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_AUTO, 0), *gpu = ww_test_ctx(WW_BACKEND_CUDA, WW_ENGINE_AUTO, 0);
    ww_rng r = {5150};
    random_set xs = make_set(&r, 160, 0, 1500, 1), ys = make_set(&r, 70, 0, 1500, 1);
    ww_dataset x = ww_dataset_f64(xs.values, xs.stamps, xs.offsets, xs.count, 0, 1);
    ww_dataset y = ww_dataset_f64(ys.values, ys.stamps, ys.offsets, ys.count, 0, 1);
    char plan[2048];
    const int rectangles = ww_cuda_describe_plan(gpu, &x, NULL, plan, sizeof plan);
    fprintf(stderr, "  plan of a mixed-length self matrix (%d rectangles):\n%s", rectangles, plan);
    CHECK(rectangles >= 3 && strstr(plan, "thread ") != NULL &&
          (strstr(plan, "warp ") != NULL || strstr(plan, "block ") != NULL));
    CHECK(strstr(plan, "(whole)") == NULL);
    /* equal lengths and a forced strategy leave the block whole */
    ww_dataset equal = ww_dataset_f64(xs.values, NULL, NULL, 40, 30, 1);
    CHECK(ww_cuda_describe_plan(gpu, &equal, NULL, plan, sizeof plan) == 1 && strstr(plan, "(whole)") != NULL);
    setenv("WW_MATRIX_STRATEGY", "warp", 1);
    CHECK(ww_cuda_describe_plan(gpu, &x, NULL, plan, sizeof plan) == 1 && strstr(plan, "warp ") != NULL);
    unsetenv("WW_MATRIX_STRATEGY");

    /* self, cross, whole and blocks; dims 1 and 3 */
    const size_t cases[][4] = {{150, 0, 1500, 1}, {90, 0, 900, 3}};
    matrices_match_cpu(gpu, cpu, cases, 2, 60606);

    /* an index of mixed lengths queried by mixed lengths, whole and as a block */
    ww_twed_params p = {0.3, 0.8, 2};
    ww_index *ix = NULL;
    const ww_measure pm = ww_measure_twed(p.nu, p.lambda, p.degree);
    CHECK_STATUS(ww_index_create(gpu, &x, &pm, &ix), WW_OK);
    const size_t rows = y.count, cols = x.count;
    double *want = malloc(rows * cols * sizeof(double)), *got = malloc(rows * cols * sizeof(double));
    CHECK_STATUS(ww_twed_pairwise(cpu, &y, &x, &p, want, NULL), WW_OK);
    for (size_t k = 0; k < rows * cols; k++)
        got[k] = NAN;
    if (ix) {
        CHECK_STATUS(ww_index_pairwise(gpu, ix, &y, got, NULL), WW_OK);
        size_t bad = 0;
        for (size_t k = 0; k < rows * cols; k++)
            bad += !(fabs(got[k] - want[k]) <= 1e-12 * fmax(1.0, fabs(want[k])));
        CHECK(bad == 0);
        ww_pairwise_options o = ww_pairwise_options_default();
        o.row_begin = 3, o.row_end = rows - 2, o.col_begin = 7, o.col_end = cols - 11, o.out_stride = cols;
        for (size_t k = 0; k < rows * cols; k++)
            got[k] = NAN;
        CHECK_STATUS(ww_index_pairwise(gpu, ix, &y, got, &o), WW_OK);
        bad = 0;
        for (size_t i = 0; i < o.row_end - o.row_begin; i++)
            for (size_t j = 0; j < cols; j++) {
                const double v = got[i * cols + j], w = want[(o.row_begin + i) * cols + o.col_begin + j];
                bad += j >= o.col_end - o.col_begin ? !isnan(v) : !(fabs(v - w) <= 1e-12 * fmax(1.0, fabs(w)));
            }
        CHECK(bad == 0);
        ww_index_destroy(ix);
    }
    free(want), free(got);

#ifdef WW_TEST_CUDA
    /* progress over all lanes from the calling thread; a cancel stops them all; the context works after */
    double *m = malloc(x.count * x.count * sizeof(double));
    progress_log log = {0, 0, 0, 0, 0};
    ww_pairwise_options po = ww_pairwise_options_default();
    po.progress = log_progress;
    po.progress_user = &log;
    CHECK_STATUS(ww_twed_pairwise(gpu, &x, NULL, &p, m, &po), WW_OK);
    const uint64_t samples = xs.offsets[xs.count];
    CHECK(log.calls >= 1 && !log.overshoot && !log.backwards);
    CHECK(log.last_done == log.total && log.total == samples * samples);
    int calls = 0;
    po.progress = cancel_after_first;
    po.progress_user = &calls;
    CHECK_STATUS(ww_twed_pairwise(gpu, &x, NULL, &p, m, &po), WW_ERR_CANCELLED);
    CHECK(calls >= 1);
    double *want_self = malloc(x.count * x.count * sizeof(double));
    CHECK_STATUS(ww_twed_pairwise(cpu, &x, NULL, &p, want_self, NULL), WW_OK);
    for (size_t k = 0; k < x.count * x.count; k++)
        m[k] = NAN;
    CHECK_STATUS(ww_twed_pairwise(gpu, &x, NULL, &p, m, NULL), WW_OK);
    size_t bad = 0;
    for (size_t k = 0; k < x.count * x.count; k++)
        bad += !(fabs(m[k] - want_self[k]) <= 1e-12 * fmax(1.0, fabs(want_self[k])));
    CHECK(bad == 0);
    free(m), free(want_self);
#endif

    /* several devices (0,0 runs everywhere): rectangles' rows shared between them */
    int devices[2] = {0, 0};
    ww_ctx_options o = ww_ctx_options_default();
    o.backend = WW_BACKEND_CUDA;
    o.devices = devices;
    o.device_count = 2;
    ww_ctx *two = NULL;
    CHECK_STATUS(ww_ctx_create(&two, &o), WW_OK);
    if (two) {
        matrices_match_cpu(two, cpu, cases, 1, 70707);
        ww_ctx_destroy(two);
    }
    free_set(&xs);
    free_set(&ys);
    ww_ctx_destroy(gpu);
    ww_ctx_destroy(cpu);
}

/* ---- every measure, with and without windows (issue 15) ---- */

/* The measures under test: TWED with parameters of its own, or DTW; window 0: none, 1: a radius
 * (some below and some past the shorter length), 2: a fraction (aeon's window). */
static ww_measure measure_case(int dtw, int window, ww_rng *r, size_t shorter)
{
    ww_measure m = dtw ? ww_measure_dtw()
                       : ww_measure_twed(0.05 + ww_rng_uniform(r), 0.25 + ww_rng_uniform(r), 1 + (int)ww_rng_below(r, 2));
    if (window == 1)
        ww_measure_set_window(&m, ww_rng_below(r, 4) == 0 ? ww_rng_below(r, 3) : ww_rng_below(r, shorter / 3 + 2));
    else if (window == 2)
        ww_measure_set_window_fraction(&m, ww_rng_below(r, 3) == 0 ? 0.1 : ww_rng_uniform(r) * 0.6);
    return m;
}

static const char *measure_label(const ww_measure *m, char *buf, size_t size)
{
    if (m->window != WW_NO_WINDOW)
        snprintf(buf, size, "%s radius %zu", ww_measure_name(m), m->window);
    else if (m->window_fraction >= 0)
        snprintf(buf, size, "%s fraction %g", ww_measure_name(m), m->window_fraction);
    else
        snprintf(buf, size, "%s", ww_measure_name(m));
    return buf;
}

/* Has the wavefront engine a kernel of this shape (NULL: chosen by size) for samples of `dim`
 * components and norm p (wavefront_shapes.cuh)? DTW's lagged shapes (l2): dim 1 only; others for
 * dim 1: every shape; vectors of up to 8 components with p = 1 or 2, held in registers: 4 x 1, and
 * 8 x 1 up to 4 components; any other sample: every shape but 8 x 2. */
static int tile_built(const char *tile, int dtw, size_t dim, int p)
{
    if (tile != NULL && strchr(tile, 'l') != NULL) /* lanes two steps apart: DTW's dim 1 only */
        return dtw && dim == 1;
    if (tile == NULL || dim == 1)
        return 1;
    if (strcmp(tile, "8x2s8") == 0)
        return 0;
    if (dim <= 8 && (p == 1 || p == 2))
        return strcmp(tile, "4x1s16") == 0 || (strcmp(tile, "8x1s16") == 0 && dim <= 4);
    return 1;
}

/* One pair on the GPU for TWED and DTW, with and without windows (radius, fraction), equal and
 * unequal lengths around band and block edges, dims 1 to 64, f64 and f32 input, host and device
 * series, every tile shape of the wavefront engine forced in turn: each equals the CPU engine to
 * 1e-12. A shape not built for the samples is WW_ERR_BACKEND (never another shape), and the
 * per-diagonal baseline refuses what it does not compute. */
void test_cuda_measures_pair(void)
{
    REQUIRE_GPU();
    ww_rng r = {0xD7A};
    const size_t lengths[] = {1, 2, 3, 31, 33, 127, 128, 383, 384, 385, 512, 1000, 1025, 2047, 4100, 9001};
    const size_t nl = sizeof lengths / sizeof lengths[0], dims[] = {1, 1, 1, 2, 3, 8, 9, 64};
    const char *tiles[] = {NULL, "3x1s16", "4x1s16", "8x1s16", "8x2s8", "3x1s16l2", "4x1s16l2"};
    const size_t maxn = 9001 * 64;
    double *va = malloc(maxn * sizeof(double)), *vb = malloc(maxn * sizeof(double));
    float *fa = malloc(maxn * sizeof(float)), *fb = malloc(maxn * sizeof(float));
    ww_ctx *cpu = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_AUTO, 0);
    ww_ctx *wave = ww_test_ctx(WW_BACKEND_CUDA, WW_ENGINE_CUDA_WAVEFRONT, 0);
    ww_ctx *diag = ww_test_ctx(WW_BACKEND_CUDA, WW_ENGINE_CUDA_DIAGONAL, 0);
    size_t mismatches = 0;
    for (int trial = 0; trial < 90; trial++) {
        const int dtw = trial % 2, window = (trial / 2) % 3;
        size_t na = lengths[ww_rng_below(&r, nl)], nb = lengths[ww_rng_below(&r, nl)];
        const size_t dim = dims[ww_rng_below(&r, sizeof dims / sizeof dims[0])];
        while ((na * nb * dim > 6e7))
            na = lengths[ww_rng_below(&r, nl)], nb = lengths[ww_rng_below(&r, nl)];
        if (trial % 7 == 0)
            nb = na; /* equal lengths: the band's own formula */
        const ww_measure m = measure_case(dtw, window, &r, na < nb ? na : nb);
        fill_random(&r, va, na * dim, NULL, 0, 0);
        fill_random(&r, vb, nb * dim, NULL, 0, 0);
        ww_series a = ww_series_f64(va, NULL, na, dim), b = ww_series_f64(vb, NULL, nb, dim);
        double want = NAN;
        CHECK_STATUS(ww_distance(cpu, &m, &a, &b, &want), WW_OK);
        for (size_t t = 0; t < sizeof tiles / sizeof tiles[0]; t++) {
            if (tiles[t])
                setenv("WW_WAVEFRONT_TILE", tiles[t], 1);
            double got = NAN;
            const ww_status st = ww_distance(wave, &m, &a, &b, &got);
            if (!tile_built(tiles[t], dtw, dim, dtw ? 2 : m.params.twed.degree)) {
                CHECK_STATUS(st, WW_ERR_BACKEND);
            } else {
                CHECK_STATUS(st, WW_OK);
                if (!(fabs(got - want) <= 1e-12 * fmax(1.0, fabs(want))) && mismatches++ < 10) {
                    char label[64];
                    fprintf(stderr, "    %s tile %s na=%zu nb=%zu dim=%zu: %.17g, CPU %.17g\n",
                            measure_label(&m, label, sizeof label), tiles[t] ? tiles[t] : "auto", na, nb, dim, got,
                            want);
                }
            }
            unsetenv("WW_WAVEFRONT_TILE");
        }
        /* float input: converted to double on the device, as the CPU pair engine does */
        if (trial % 3 == 0) {
            for (size_t i = 0; i < na * dim; i++)
                fa[i] = (float)va[i];
            for (size_t i = 0; i < nb * dim; i++)
                fb[i] = (float)vb[i];
            ww_series a32 = ww_series_f32(fa, NULL, na, dim), b32 = ww_series_f32(fb, NULL, nb, dim);
            double w32 = NAN, g32 = NAN;
            CHECK_STATUS(ww_distance(cpu, &m, &a32, &b32, &w32), WW_OK);
            CHECK_STATUS(ww_distance(wave, &m, &a32, &b32, &g32), WW_OK);
            CHECK_CLOSE(g32, w32, 1e-12);
        }
        /* the per-diagonal baseline: TWED without a window only */
        if (na + nb < 3000) {
            double got = NAN;
            /* the registry's rule: a radius narrower than the longer series, or a fraction below 1 */
            const size_t longer = na > nb ? na : nb;
            const int windowed = m.window != WW_NO_WINDOW ? m.window < longer
                                                          : m.window_fraction >= 0 && m.window_fraction < 1;
            const int served = !dtw && !windowed;
            CHECK_STATUS(ww_distance(diag, &m, &a, &b, &got), served ? WW_OK : WW_ERR_UNSUPPORTED);
            if (served)
                CHECK_CLOSE(got, want, 1e-12);
        }
    }
    CHECK(mismatches == 0);
    /* long pairs: many bands, windows narrower than a band and wider */
    const size_t longs[][3] = {{65543, 65536, 6553}, {70001, 3001, 50}, {2999, 100003, 0}, {131072, 131072, 100}};
    double *la = malloc(131072 * sizeof(double)), *lb = malloc(131072 * sizeof(double));
    for (int k = 0; k < 4; k++) {
        const size_t na = longs[k][0], nb = longs[k][1];
        fill_random(&r, la, na, NULL, 0, 0);
        fill_random(&r, lb, nb, NULL, 0, 0);
        ww_series a = ww_series_f64(la, NULL, na, 1), b = ww_series_f64(lb, NULL, nb, 1);
        for (int dtw = 0; dtw < 2; dtw++) {
            ww_measure m = dtw ? ww_measure_dtw() : ww_measure_twed(0.5, 1.0, 2);
            ww_measure_set_window(&m, longs[k][2]);
            if (k == 2)
                ww_measure_set_window_fraction(&m, 0.1);
            double want = NAN, got = NAN;
            CHECK_STATUS(ww_distance(cpu, &m, &a, &b, &want), WW_OK);
            CHECK_STATUS(ww_distance(wave, &m, &a, &b, &got), WW_OK);
            CHECK_CLOSE(got, want, 1e-12);
        }
    }
    /* DTW without a window on a long pair (the exact result cell past many bands) */
    {
        const size_t na = 20011, nb = 19997;
        fill_random(&r, la, na, NULL, 0, 0);
        fill_random(&r, lb, nb, NULL, 0, 0);
        ww_series a = ww_series_f64(la, NULL, na, 1), b = ww_series_f64(lb, NULL, nb, 1);
        const ww_measure m = ww_measure_dtw();
        double want = NAN;
        CHECK_STATUS(ww_distance(cpu, &m, &a, &b, &want), WW_OK);
        for (size_t t = 0; t < sizeof tiles / sizeof tiles[0]; t++) {
            if (tiles[t])
                setenv("WW_WAVEFRONT_TILE", tiles[t], 1);
            for (int rep = 0; rep < 2; rep++) { /* a race shows as a result that moves */
                double got = NAN;
                CHECK_STATUS(ww_distance(wave, &m, &a, &b, &got), WW_OK);
                CHECK_CLOSE(got, want, 1e-12);
            }
            unsetenv("WW_WAVEFRONT_TILE");
        }
    }
    free(la), free(lb);
    free(va), free(vb), free(fa), free(fb);
    ww_ctx_destroy(cpu), ww_ctx_destroy(wave), ww_ctx_destroy(diag);
}


/* Pairs of more bands than multiprocessors, where a multiprocessor's later blocks wait for the first
 * bands to spread (wavefront_kernel): windowed pairs of 150,000 samples (one length and two) by
 * every tile shape against the CPU engine, and a full pair, whose value must not change with the
 * blocks per multiprocessor (one block each: no block waits), on poisoned outputs. */
void test_cuda_spread_bands(void)
{
    REQUIRE_GPU();
    ww_rng r = {0x5B8EAD};
    const size_t n = 150000, m = 149000;
    double *va = malloc(n * sizeof(double)), *vb = malloc(n * sizeof(double));
    fill_random(&r, va, n, NULL, 0, 0);
    fill_random(&r, vb, n, NULL, 0, 0);
    ww_ctx *cpu = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_AUTO, 0);
    ww_ctx *gpu = ww_test_ctx(WW_BACKEND_CUDA, WW_ENGINE_CUDA_WAVEFRONT, 0);
    const char *tiles[] = {NULL, "3x1s16", "4x1s16", "8x1s16", "8x2s8", "3x1s16l2", "4x1s16l2"};
    for (int dtw = 0; dtw <= 1; dtw++)
        for (int two = 0; two <= 1; two++) {
            ww_measure ms = dtw ? ww_measure_dtw() : ww_measure_twed(0.001, 1.0, 2);
            ww_measure_set_window(&ms, 30);
            ww_series a = ww_series_f64(va, NULL, n, 1), b = ww_series_f64(vb, NULL, two ? m : n, 1);
            double want = NAN;
            CHECK_STATUS(ww_distance(cpu, &ms, &a, &b, &want), WW_OK);
            for (size_t t = 0; t < sizeof tiles / sizeof tiles[0]; t++) {
                if (tiles[t])
                    setenv("WW_WAVEFRONT_TILE", tiles[t], 1);
                double got = NAN;
                const int built = tile_built(tiles[t], dtw, 1, 2);
                CHECK_STATUS(ww_distance(gpu, &ms, &a, &b, &got), built ? WW_OK : WW_ERR_BACKEND);
                if (built)
                    CHECK_CLOSE(got, want, 1e-12);
                if (built && !(fabs(got - want) <= 1e-12 * fmax(1.0, fabs(want))))
                    fprintf(stderr, "    %s tile %s m=%zu: %.17g, CPU %.17g\n", dtw ? "dtw" : "twed",
                            tiles[t] ? tiles[t] : "auto", two ? m : n, got, want);
                unsetenv("WW_WAVEFRONT_TILE");
            }
        }
    /* the full pair: 150,000 x 2,000, the rows in bands of 3 to 8 x 128 */
    for (int dtw = 0; dtw <= 1; dtw++) {
        const ww_measure ms = dtw ? ww_measure_dtw() : ww_measure_twed(0.001, 1.0, 2);
        ww_series a = ww_series_f64(va, NULL, n, 1), b = ww_series_f64(vb, NULL, 2000, 1);
        double want = NAN, spread = NAN, alone = NAN;
        CHECK_STATUS(ww_distance(cpu, &ms, &a, &b, &want), WW_OK);
        CHECK_STATUS(ww_distance(gpu, &ms, &a, &b, &spread), WW_OK);
        setenv("WW_WAVEFRONT_RESIDENT", "1", 1);
        CHECK_STATUS(ww_distance(gpu, &ms, &a, &b, &alone), WW_OK);
        unsetenv("WW_WAVEFRONT_RESIDENT");
        CHECK_CLOSE(spread, want, 1e-12);
        CHECK(spread == alone);
        /* DTW's lagged shapes, forced: 391 and 293 bands, more than the multiprocessors */
        for (int k = 0; dtw && k < 2; k++) {
            setenv("WW_WAVEFRONT_TILE", k ? "4x1s16l2" : "3x1s16l2", 1);
            double lagged = NAN, lagged_alone = NAN;
            CHECK_STATUS(ww_distance(gpu, &ms, &a, &b, &lagged), WW_OK);
            setenv("WW_WAVEFRONT_RESIDENT", "1", 1);
            CHECK_STATUS(ww_distance(gpu, &ms, &a, &b, &lagged_alone), WW_OK);
            unsetenv("WW_WAVEFRONT_RESIDENT");
            unsetenv("WW_WAVEFRONT_TILE");
            CHECK_CLOSE(lagged, want, 1e-12);
            CHECK(lagged == lagged_alone);
        }
    }
    ww_ctx_destroy(gpu);
    ww_ctx_destroy(cpu);
    free(va), free(vb);
}
/* A tile setting that names no shape for the call's samples is an error, not a warning. */
void test_cuda_tile_setting(void)
{
    REQUIRE_GPU();
    ww_ctx *gpu = ww_test_ctx(WW_BACKEND_CUDA, WW_ENGINE_CUDA_WAVEFRONT, 0);
    double v[64], d = NAN;
    for (int k = 0; k < 64; k++)
        v[k] = k % 7;
    ww_series a = ww_series_f64(v, NULL, 64, 1), b = ww_series_f64(v + 1, NULL, 60, 1);
    const ww_measure m = ww_measure_dtw();
    setenv("WW_WAVEFRONT_TILE", "5x5s5", 1);
    CHECK_STATUS(ww_distance(gpu, &m, &a, &b, &d), WW_ERR_BACKEND);
    setenv("WW_WAVEFRONT_TILE", "4x1s16junk", 1);
    CHECK_STATUS(ww_distance(gpu, &m, &a, &b, &d), WW_ERR_BACKEND);
    /* lags: digits only, and only those built (DTW's 2, and 1 named or not) */
    const char *bad[] = {"4x1s16l3", "4x1s16l", "4x1s16l0", "4x1s16l2x", "4x1s16l 2", "4x1s16l+2", "4x1s16l-1", "4x1s16ll2"};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        setenv("WW_WAVEFRONT_TILE", bad[k], 1);
        CHECK_STATUS(ww_distance(gpu, &m, &a, &b, &d), WW_ERR_BACKEND);
    }
    ww_ctx *cpu = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_AUTO, 0);
    double want = NAN;
    CHECK_STATUS(ww_distance(cpu, &m, &a, &b, &want), WW_OK);
    ww_ctx_destroy(cpu);
    const char *good[] = {"4x1s16l2", "3x1s16l2", "4x1s16l1", "4x1s16"};
    for (size_t k = 0; k < sizeof good / sizeof good[0]; k++) {
        setenv("WW_WAVEFRONT_TILE", good[k], 1);
        d = NAN;
        CHECK_STATUS(ww_distance(gpu, &m, &a, &b, &d), WW_OK);
        CHECK_CLOSE(d, want, 1e-12);
    }
    setenv("WW_WAVEFRONT_TILE", "4x4s4", 1); /* the old shape: TWED without a window only */
    CHECK_STATUS(ww_distance(gpu, &m, &a, &b, &d), WW_ERR_BACKEND);
    const ww_measure t = ww_measure_twed(0.001, 1, 2);
    CHECK_STATUS(ww_distance(gpu, &t, &a, &b, &d), WW_OK);
    setenv("WW_WAVEFRONT_TILE", "4x1s16l2", 1); /* not built for TWED */
    CHECK_STATUS(ww_distance(gpu, &t, &a, &b, &d), WW_ERR_BACKEND);
    unsetenv("WW_WAVEFRONT_TILE");
    CHECK_STATUS(ww_distance(gpu, &m, &a, &b, &d), WW_OK);
    ww_ctx_destroy(gpu);
}

/* A GPU matrix under measure m (whole, f64 output, NaN-poisoned) and a block of it in a wider
 * f32 buffer against the CPU's whole matrix: the entries off by more than `tol`, plus those
 * written outside the block. */
static size_t measure_matrix_mismatches(ww_ctx *gpu, ww_ctx *cpu, const ww_measure *m, const ww_dataset *x,
                                        const ww_dataset *y, double tol, const char *what)
{
    const size_t rows = x->count, cols = y ? y->count : x->count;
    double *want = malloc(rows * cols * sizeof(double)), *got = malloc(rows * cols * sizeof(double));
    CHECK_STATUS(ww_pairwise(cpu, m, x, y, want, NULL), WW_OK);
    for (size_t k = 0; k < rows * cols; k++)
        got[k] = NAN;
    CHECK_STATUS(ww_pairwise(gpu, m, x, y, got, NULL), WW_OK);
    size_t bad = 0, first = 0;
    for (size_t k = 0; k < rows * cols; k++)
        if (!(fabs(got[k] - want[k]) <= tol * fmax(1.0, fabs(want[k]))) && bad++ == 0)
            first = k;
    /* a block in a wider buffer, f32 output */
    ww_pairwise_options o = ww_pairwise_options_default();
    o.row_begin = rows / 3, o.row_end = rows - 1, o.col_begin = cols / 4, o.col_end = cols;
    o.out_stride = cols + 5, o.out_dtype = WW_F32;
    const size_t brows = o.row_end - o.row_begin, bcols = o.col_end - o.col_begin;
    float *blk = malloc(brows * o.out_stride * sizeof(float) + 1);
    for (size_t k = 0; k < brows * o.out_stride; k++)
        blk[k] = NAN;
    CHECK_STATUS(ww_pairwise(gpu, m, x, y, blk, &o), WW_OK);
    size_t bad_block = 0;
    for (size_t i = 0; i < brows; i++)
        for (size_t j = 0; j < o.out_stride; j++) {
            const float v = blk[i * o.out_stride + j];
            const double w = want[(o.row_begin + i) * cols + o.col_begin + j];
            bad_block += j >= bcols ? !isnan(v) : !(fabs(v - w) <= fmax(tol, 1e-6) * fmax(1.0, fabs(w)));
        }
    if (bad || bad_block) {
        char label[64];
        fprintf(stderr, "    %s %s %zu x %zu: %zu entries off (first (%zu, %zu) = %.17g, CPU %.17g), %zu in the block\n",
                what, measure_label(m, label, sizeof label), rows, cols, bad, first / cols, first % cols, got[first],
                want[first], bad_block);
    }
    free(want), free(got), free(blk);
    return bad + bad_block;
}

/* Matrices for TWED and DTW, with and without windows, under every strategy (the cost model's
 * choice, then thread, warp, block and grid forced), ragged and equal lengths, self and cross,
 * dims 1 to 40 (the staged kernel's too), f64 and f32 input, host and device data. */
void test_cuda_measures_pairwise(void)
{
    REQUIRE_GPU();
    ww_rng r = {0x15};
    ww_ctx *cpu = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_AUTO, 0), *gpu = ww_test_ctx(WW_BACKEND_CUDA, WW_ENGINE_AUTO, 0);
    const char *strategies[] = {NULL, "thread", "warp", "block", "grid"};
    const size_t cases[][4] = {/* count, min_len, max_len, dim */
                               {33, 1, 60, 1},   {24, 40, 40, 1},  {20, 20, 250, 3}, {17, 1, 90, 28},
                               {9, 200, 700, 1}, {7, 100, 500, 2}, {11, 5, 45, 40},  {5, 1, 2100, 1}};
    size_t bad = 0;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        random_set xs = make_set(&r, cases[c][0], cases[c][1], cases[c][2], cases[c][3]);
        random_set ys = make_set(&r, cases[c][0] / 2 + 2, cases[c][1], cases[c][2], cases[c][3]);
        const int equal = cases[c][1] == cases[c][2];
        ww_dataset x = ww_dataset_f64(xs.values, xs.stamps, equal ? NULL : xs.offsets, xs.count, cases[c][1], xs.dim);
        ww_dataset y = ww_dataset_f64(ys.values, ys.stamps, equal ? NULL : ys.offsets, ys.count, cases[c][1], ys.dim);
        for (int dtw = 0; dtw < 2; dtw++)
            for (int window = 0; window < 3; window++) {
                const ww_measure m = measure_case(dtw, window, &r, cases[c][1] > 3 ? cases[c][1] : 3);
                for (size_t s = 0; s < sizeof strategies / sizeof strategies[0]; s++) {
                    if (strategies[s] && strcmp(strategies[s], "grid") == 0 && cases[c][0] > 12)
                        continue; /* one pair at a time: slow for many pairs, covered by the small cases */
                    if (strategies[s])
                        setenv("WW_MATRIX_STRATEGY", strategies[s], 1);
                    bad += measure_matrix_mismatches(gpu, cpu, &m, &x, NULL, 1e-12, strategies[s] ? strategies[s] : "auto");
                    bad += measure_matrix_mismatches(gpu, cpu, &m, &x, &y, 1e-12, strategies[s] ? strategies[s] : "auto");
                    unsetenv("WW_MATRIX_STRATEGY");
                }
                /* float input, computed in float: close to double on the same rounded data */
                ww_dataset x32 = ww_dataset_f32(xs.values32, xs.stamps32, x.offsets, xs.count, x.length, xs.dim);
                ww_dataset x64r = x;
                double *v64 = malloc(xs.offsets[xs.count] * xs.dim * sizeof(double));
                double *t64 = malloc(xs.offsets[xs.count] * sizeof(double));
                for (size_t k = 0; k < xs.offsets[xs.count] * xs.dim; k++)
                    v64[k] = xs.values32[k];
                for (size_t k = 0; k < xs.offsets[xs.count]; k++)
                    t64[k] = xs.stamps32[k];
                x64r.values = v64, x64r.stamps = t64;
                double *r64 = malloc(x.count * x.count * sizeof(double)), *r32 = malloc(x.count * x.count * sizeof(double));
                for (size_t k = 0; k < x.count * x.count; k++)
                    r32[k] = NAN;
                CHECK_STATUS(ww_pairwise(cpu, &m, &x64r, NULL, r64, NULL), WW_OK);
                CHECK_STATUS(ww_pairwise(gpu, &m, &x32, NULL, r32, NULL), WW_OK);
                for (size_t k = 0; k < x.count * x.count; k++)
                    bad += !(fabs(r32[k] - r64[k]) <= 1e-4 * fabs(r64[k]) + 1e-5);
                free(r64), free(r32), free(v64), free(t64);
            }
        free_set(&xs), free_set(&ys);
    }
    CHECK(bad == 0);
    /* the staged kernel's shapes with a window */
    random_set ss = make_set(&r, 40, 1, 50, 5);
    ww_dataset sx = ww_dataset_f64(ss.values, NULL, ss.offsets, ss.count, 0, 5);
    const char *shapes[][3] = {{"1", "1", "64"}, {"1", "2", "32"}, {"1", "2", "128"}, {"0", "2", "64"}};
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
        setenv("WW_STAGED", shapes[k][0], 1);
        setenv("WW_STAGED_ROWS", shapes[k][1], 1);
        setenv("WW_STAGED_THREADS", shapes[k][2], 1);
        for (int dtw = 0; dtw < 2; dtw++) {
            const ww_measure m = measure_case(dtw, 1 + (int)(k % 2), &r, 10);
            CHECK(measure_matrix_mismatches(gpu, cpu, &m, &sx, NULL, 1e-12, "staged") == 0);
        }
    }
    unsetenv("WW_STAGED"), unsetenv("WW_STAGED_ROWS"), unsetenv("WW_STAGED_THREADS");
    free_set(&ss);
#ifdef WW_TEST_CUDA
    /* device data, and a kNN through the GPU matrix engine */
    random_set ds = make_set(&r, 50, 10, 120, 2);
    const size_t total = ds.offsets[ds.count];
    double *dv;
    CHECK(cudaMalloc((void **)&dv, total * 2 * sizeof(double)) == cudaSuccess);
    cudaMemcpy(dv, ds.values, total * 2 * sizeof(double), cudaMemcpyHostToDevice);
    ww_dataset host = ww_dataset_f64(ds.values, NULL, ds.offsets, ds.count, 0, 2), dev = host;
    dev.values = dv, dev.memory = WW_DEVICE;
    for (int dtw = 0; dtw < 2; dtw++)
        for (int window = 0; window < 3; window++) {
            const ww_measure m = measure_case(dtw, window, &r, 10);
            const size_t n = ds.count;
            double *want = malloc(n * n * sizeof(double)), *got = malloc(n * n * sizeof(double));
            CHECK_STATUS(ww_pairwise(cpu, &m, &host, NULL, want, NULL), WW_OK);
            for (size_t k = 0; k < n * n; k++)
                got[k] = NAN;
            CHECK_STATUS(ww_pairwise(gpu, &m, &dev, NULL, got, NULL), WW_OK);
            size_t off = 0;
            for (size_t k = 0; k < n * n; k++)
                off += !(fabs(got[k] - want[k]) <= 1e-12 * fmax(1.0, fabs(want[k])));
            CHECK(off == 0);
            size_t gi[50 * 4], ci[50 * 4];
            double gd[50 * 4], cd[50 * 4];
            CHECK_STATUS(ww_knn(gpu, &m, &dev, &dev, 4, gi, gd, NULL), WW_OK);
            CHECK_STATUS(ww_knn(cpu, &m, &host, &host, 4, ci, cd, NULL), WW_OK);
            for (size_t k = 0; k < 200; k++) {
                CHECK(gi[k] == ci[k]);
                CHECK_CLOSE(gd[k], cd[k], 1e-12);
            }
            free(want), free(got);
        }
    cudaFree(dv);
    free_set(&ds);
#endif
    ww_ctx_destroy(cpu), ww_ctx_destroy(gpu);
}

/* Long series of one length under narrow windows: one thread per pair whatever the length (its row
 * buffer follows the band), forced (spans up to 257 columns; past that, forced "thread" gives way to
 * the model), the warp strategy forced, and the model's choice (these sets have too few pairs for
 * the thread; the emulation checks the plan's rule), TWED with stamps and DTW, dims 1 to 40, self
 * and cross, radii and aeon's fraction: the CPU engine's values to 1e-12. */
void test_cuda_banded_threads(void)
{
    REQUIRE_GPU();
    ww_rng r = {0xBA5D};
    ww_ctx *cpu = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_AUTO, 0), *gpu = ww_test_ctx(WW_BACKEND_CUDA, WW_ENGINE_AUTO, 0);
    const struct {
        size_t count, length, dim, radius; /* radius SIZE_MAX: a fraction of 0.1 */
    } cases[] = {{40, 300, 1, 0},  {30, 400, 1, SIZE_MAX}, {20, 333, 3, 17}, {16, 290, 40, 5}, {24, 700, 1, 62},
                 {12, 520, 2, 126}, {10, 600, 1, 127},      {20, 257, 1, 2},  {25, 1000, 8, 30},
                 {15, 299, 1, 7}};
    const char *strategies[] = {NULL, "thread", "warp"};
    size_t bad = 0;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        random_set xs = make_set(&r, cases[c].count, cases[c].length, cases[c].length, cases[c].dim);
        random_set ys = make_set(&r, cases[c].count / 2 + 3, cases[c].length, cases[c].length, cases[c].dim);
        ww_dataset x = ww_dataset_f64(xs.values, xs.stamps, NULL, xs.count, cases[c].length, xs.dim);
        ww_dataset y = ww_dataset_f64(ys.values, ys.stamps, NULL, ys.count, cases[c].length, ys.dim);
        for (int dtw = 0; dtw < 2; dtw++) {
            ww_measure m = dtw ? ww_measure_dtw() : ww_measure_twed(0.05 + ww_rng_uniform(&r), 0.5 + ww_rng_uniform(&r), 2);
            if (cases[c].radius == SIZE_MAX)
                ww_measure_set_window_fraction(&m, 0.1);
            else
                ww_measure_set_window(&m, cases[c].radius);
            for (size_t s = 0; s < sizeof strategies / sizeof strategies[0]; s++) {
                if (strategies[s])
                    setenv("WW_MATRIX_STRATEGY", strategies[s], 1);
                const char *what = strategies[s] ? strategies[s] : "auto";
                bad += measure_matrix_mismatches(gpu, cpu, &m, &x, NULL, 1e-12, what);
                bad += measure_matrix_mismatches(gpu, cpu, &m, &x, &y, 1e-12, what);
                unsetenv("WW_MATRIX_STRATEGY");
            }
        }
        free_set(&xs), free_set(&ys);
    }
    CHECK(bad == 0);
    ww_ctx_destroy(cpu), ww_ctx_destroy(gpu);
}

/* The thread strategy's band in registers (pairs_band_kernel, series of one length under a radius
 * of 1 to 32, TWED's to 16): every radius from 0 to 33, TWED's to 17 (0 and the last: the row sweep),
 * lengths from one more than the radius to 1,000, DTW and TWED, f64 and f32 data, self and cross, forced and by the model, against
 * the CPU engine on poisoned outputs, and bit for bit against the row sweep (WW_BAND=0). */
void test_cuda_band_registers(void)
{
    REQUIRE_GPU();
    ww_rng r = {0xB4AD};
    ww_ctx *cpu = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_AUTO, 0), *gpu = ww_test_ctx(WW_BACKEND_CUDA, WW_ENGINE_AUTO, 0);
    size_t bad = 0, differ = 0;
    for (size_t radius = 0; radius <= 33; radius++) {
        const size_t lengths[] = {radius + 1, 2 * radius + 3, 60, 257 + ww_rng_below(&r, 5), radius % 4 == 1 ? 1000 : 100};
        for (size_t l = 0; l < sizeof lengths / sizeof lengths[0]; l++) {
            const size_t n = lengths[l], count = n >= 1000 ? 40 : 70;
            const int f32 = (int)((radius + l) % 3 == 0);
            random_set xs = make_set(&r, count, n, n, 1), ys = make_set(&r, count / 2 + 1, n, n, 1);
            ww_dataset x = f32 ? ww_dataset_f32(xs.values32, xs.stamps32, NULL, xs.count, n, 1)
                               : ww_dataset_f64(xs.values, xs.stamps, NULL, xs.count, n, 1);
            ww_dataset y = f32 ? ww_dataset_f32(ys.values32, ys.stamps32, NULL, ys.count, n, 1)
                               : ww_dataset_f64(ys.values, ys.stamps, NULL, ys.count, n, 1);
            const double tol = f32 ? 2e-5 : 1e-12; /* float data is computed in float on the GPU */
            for (int dtw = radius > 17; dtw < 2; dtw++) {
                ww_measure m = dtw ? ww_measure_dtw() : ww_measure_twed(0.05 + ww_rng_uniform(&r), 0.5 + ww_rng_uniform(&r), 1 + (int)(radius % 2));
                if (l == 2 && radius > 0) /* aeon's fraction: int(0.1 * 60) = 6 and its neighbours */
                    ww_measure_set_window_fraction(&m, ((double)radius + 0.5) / 60.0);
                else
                    ww_measure_set_window(&m, radius);
                const char *strategy = l % 2 ? "thread" : NULL;
                if (strategy)
                    setenv("WW_MATRIX_STRATEGY", strategy, 1);
                bad += measure_matrix_mismatches(gpu, cpu, &m, &x, NULL, tol, strategy ? strategy : "auto");
                bad += measure_matrix_mismatches(gpu, cpu, &m, &x, &y, tol, strategy ? strategy : "auto");
                /* the band against the row sweep of the thread kernel, bit for bit */
                setenv("WW_MATRIX_STRATEGY", "thread", 1);
                const size_t cells = x.count * y.count;
                double *band = malloc(cells * sizeof(double)), *sweep = malloc(cells * sizeof(double));
                for (size_t k = 0; k < cells; k++)
                    band[k] = NAN, sweep[k] = -1;
                CHECK_STATUS(ww_pairwise(gpu, &m, &x, &y, band, NULL), WW_OK);
                setenv("WW_BAND", "0", 1);
                CHECK_STATUS(ww_pairwise(gpu, &m, &x, &y, sweep, NULL), WW_OK);
                unsetenv("WW_BAND");
                unsetenv("WW_MATRIX_STRATEGY");
                if (memcmp(band, sweep, cells * sizeof(double)) != 0 && differ++ < 5)
                    fprintf(stderr, "    band and sweep differ: %s radius %zu length %zu f32 %d\n", dtw ? "dtw" : "twed",
                            radius, n, f32);
                free(band), free(sweep);
            }
            free_set(&xs), free_set(&ys);
        }
    }
    CHECK(bad == 0);
    CHECK(differ == 0);
    ww_ctx_destroy(cpu), ww_ctx_destroy(gpu);
}

/* The warp strategy under windows (warp_pair_rolling): rows rolling over the lanes with the
 * lag between rows from its least (P = 32) to the most that double data rolls (P = 377 for DTW, 93
 * for TWED) and that float data does (P = 447 of the ring's 448, DTW), series of one length and of
 * two (a band that widens with their ratio), ragged sets, samples of 1 to 3 components, and bands
 * that do not roll (the strips), forced and by the model, against the CPU engine on poisoned
 * outputs. */
void test_cuda_rolling_warps(void)
{
    REQUIRE_GPU();
    ww_rng r = {0x2011};
    ww_ctx *cpu = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_AUTO, 0), *gpu = ww_test_ctx(WW_BACKEND_CUDA, WW_ENGINE_AUTO, 0);
    const struct {
        size_t x_count, x_min, x_max, y_count, y_min, y_max, dim, radius; /* radius SIZE_MAX: a fraction of 0.2 */
        int f32;                                                          /* float data */
    } cases[] = {{20, 300, 300, 12, 300, 300, 1, 40, 0},       {12, 300, 300, 10, 420, 420, 1, 40, 0},
                 {8, 500, 500, 6, 500, 500, 2, 239, 0},        {8, 500, 500, 6, 500, 500, 1, 239, 1},
                 {8, 500, 500, 6, 500, 500, 1, 240, 1},        {10, 260, 260, 8, 500, 500, 1, 100, 0},
                 {8, 2048, 2048, 6, 2048, 2048, 1, 204, 0},    {8, 200, 200, 6, 700, 700, 1, 120, 0},
                 {30, 100, 100, 20, 130, 130, 3, 16, 0},       {16, 333, 333, 12, 333, 333, 1, 0, 0},
                 {24, 300, 400, 16, 250, 350, 1, SIZE_MAX, 0}, {40, 90, 90, 30, 90, 90, 1, 47, 0}};
    const char *strategies[] = {NULL, "warp"};
    size_t bad = 0;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        random_set xs = make_set(&r, cases[c].x_count, cases[c].x_min, cases[c].x_max, cases[c].dim);
        random_set ys = make_set(&r, cases[c].y_count, cases[c].y_min, cases[c].y_max, cases[c].dim);
        const int ragged = cases[c].x_min != cases[c].x_max;
        const size_t *xo = ragged ? xs.offsets : NULL, *yo = ragged ? ys.offsets : NULL;
        ww_dataset x = cases[c].f32 ? ww_dataset_f32(xs.values32, xs.stamps32, xo, xs.count, cases[c].x_max, xs.dim)
                                    : ww_dataset_f64(xs.values, xs.stamps, xo, xs.count, cases[c].x_max, xs.dim);
        ww_dataset y = cases[c].f32 ? ww_dataset_f32(ys.values32, ys.stamps32, yo, ys.count, cases[c].y_max, ys.dim)
                                    : ww_dataset_f64(ys.values, ys.stamps, yo, ys.count, cases[c].y_max, ys.dim);
        const double tol = cases[c].f32 ? 2e-5 : 1e-12; /* float data is computed in float on the GPU */
        for (int dtw = 0; dtw < 2; dtw++) {
            ww_measure m = dtw ? ww_measure_dtw() : ww_measure_twed(0.05 + ww_rng_uniform(&r), 0.5 + ww_rng_uniform(&r), 2);
            if (cases[c].radius == SIZE_MAX)
                ww_measure_set_window_fraction(&m, 0.2);
            else
                ww_measure_set_window(&m, cases[c].radius);
            for (size_t s = 0; s < sizeof strategies / sizeof strategies[0]; s++) {
                if (strategies[s])
                    setenv("WW_MATRIX_STRATEGY", strategies[s], 1);
                const char *what = strategies[s] ? strategies[s] : "auto";
                if (cases[c].x_max == cases[c].y_max && !ragged)
                    bad += measure_matrix_mismatches(gpu, cpu, &m, &x, NULL, tol, what);
                bad += measure_matrix_mismatches(gpu, cpu, &m, &x, &y, tol, what);
                unsetenv("WW_MATRIX_STRATEGY");
            }
        }
        free_set(&xs), free_set(&ys);
    }
    CHECK(bad == 0);
    ww_ctx_destroy(cpu), ww_ctx_destroy(gpu);
}

/* Self matrices completed on the device (a square block in one chunk: mirror_lower_kernel) or on
 * the host (several chunks, or a block whose rows and columns differ): sizes around the kernel's
 * tiles of 32, square sub-blocks in wider buffers, f64 and f32 output, each strategy; every entry,
 * the diagonal and the buffer's padding checked against the CPU engine on poisoned outputs. */
void test_cuda_self_blocks_mirrored(void)
{
    REQUIRE_GPU();
    ww_rng r = {0x5E1F};
    ww_ctx *cpu = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_AUTO, 0), *gpu = ww_test_ctx(WW_BACKEND_CUDA, WW_ENGINE_AUTO, 0);
    const size_t cases[][2] = {/* count, length: one chunk up to 600 x 60; 300 x 500 takes several */
                               {1, 9}, {2, 7}, {31, 20}, {32, 20}, {33, 20}, {65, 12}, {600, 60}, {300, 500}};
    const char *strategies[] = {NULL, "thread", "warp", "block"};
    size_t bad = 0;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const size_t n = cases[c][0], len = cases[c][1];
        random_set xs = make_set(&r, n, len, len, 1);
        ww_dataset x = ww_dataset_f64(xs.values, xs.stamps, NULL, n, len, 1);
        double *want = malloc(n * n * sizeof(double));
        for (int dtw = 0; dtw < 2; dtw++) {
            ww_measure m = dtw ? ww_measure_dtw() : ww_measure_twed(0.5, 1.0, 2);
            if (c % 2)
                ww_measure_set_window(&m, len / 10);
            CHECK_STATUS(ww_pairwise(cpu, &m, &x, NULL, want, NULL), WW_OK);
            for (size_t s = 0; s < sizeof strategies / sizeof strategies[0]; s++) {
                if (strategies[s] && n * len > 40000)
                    continue; /* the large cases once, by the model's choice */
                if (strategies[s])
                    setenv("WW_MATRIX_STRATEGY", strategies[s], 1);
                /* blocks: the whole matrix, a square inside it, rows and columns that differ */
                const size_t blocks[][4] = {{0, n, 0, n}, {n / 5, n - n / 7, n / 5, n - n / 7}, {0, n, n / 3, n}};
                for (size_t b = 0; b < 3; b++)
                    for (int f32 = 0; f32 < 2; f32++) {
                        ww_pairwise_options o = ww_pairwise_options_default();
                        o.row_begin = blocks[b][0], o.row_end = blocks[b][1];
                        o.col_begin = blocks[b][2], o.col_end = blocks[b][3];
                        if (o.row_begin == o.row_end || o.col_begin == o.col_end)
                            continue;
                        const size_t rows = o.row_end - o.row_begin, cols = o.col_end - o.col_begin;
                        o.out_stride = cols + (b ? 3 : 0);
                        o.out_dtype = f32 ? WW_F32 : WW_F64;
                        const size_t es = f32 ? sizeof(float) : sizeof(double);
                        unsigned char *out = malloc(rows * o.out_stride * es);
                        for (size_t k = 0; k < rows * o.out_stride; k++)
                            f32 ? (void)(((float *)out)[k] = NAN) : (void)(((double *)out)[k] = NAN);
                        CHECK_STATUS(ww_pairwise(gpu, &m, &x, NULL, out, &o), WW_OK);
                        size_t off = 0;
                        for (size_t i = 0; i < rows; i++)
                            for (size_t j = 0; j < o.out_stride; j++) {
                                const double v = f32 ? ((float *)out)[i * o.out_stride + j] : ((double *)out)[i * o.out_stride + j];
                                if (j >= cols) { /* padding: untouched */
                                    off += !isnan(v);
                                    continue;
                                }
                                const double w = want[(o.row_begin + i) * n + o.col_begin + j];
                                off += !(fabs(v - w) <= (f32 ? 1e-6 : 1e-12) * fmax(1.0, fabs(w)));
                            }
                        if (off)
                            fprintf(stderr, "    %s %s n %zu len %zu block %zu %s: %zu entries off\n",
                                    strategies[s] ? strategies[s] : "auto", dtw ? "DTW" : "TWED", n, len, b,
                                    f32 ? "f32" : "f64", off);
                        bad += off;
                        free(out);
                    }
                unsetenv("WW_MATRIX_STRATEGY");
            }
        }
        free(want);
        free_set(&xs);
    }
    CHECK(bad == 0);
    ww_ctx_destroy(cpu), ww_ctx_destroy(gpu);
}

/* Indexes of each measure and window on the GPU (host and device data, mixed lengths) answer as
 * the CPU does, whole and as a block; kNN against them too. */
void test_cuda_measures_index(void)
{
    REQUIRE_GPU();
    ww_rng r = {0x1D};
    ww_ctx *cpu = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_AUTO, 0), *gpu = ww_test_ctx(WW_BACKEND_CUDA, WW_ENGINE_AUTO, 0);
    random_set xs = make_set(&r, 120, 0, 900, 1), qs = make_set(&r, 37, 0, 900, 1);
    ww_dataset x = ww_dataset_f64(xs.values, xs.stamps, xs.offsets, xs.count, 0, 1);
    ww_dataset q = ww_dataset_f64(qs.values, qs.stamps, qs.offsets, qs.count, 0, 1);
    for (int dtw = 0; dtw < 2; dtw++)
        for (int window = 0; window < 3; window++) {
            const ww_measure m = measure_case(dtw, window, &r, 30);
            ww_index *ix = NULL;
            CHECK_STATUS(ww_index_create(gpu, &x, &m, &ix), WW_OK);
            if (ix == NULL)
                continue;
            const size_t rows = q.count, cols = x.count;
            double *want = malloc(rows * cols * sizeof(double)), *got = malloc(rows * cols * sizeof(double));
            CHECK_STATUS(ww_pairwise(cpu, &m, &q, &x, want, NULL), WW_OK);
            for (size_t k = 0; k < rows * cols; k++)
                got[k] = NAN;
            CHECK_STATUS(ww_index_pairwise(gpu, ix, &q, got, NULL), WW_OK);
            size_t bad = 0;
            for (size_t k = 0; k < rows * cols; k++)
                bad += !(fabs(got[k] - want[k]) <= 1e-12 * fmax(1.0, fabs(want[k])));
            CHECK(bad == 0);
            ww_pairwise_options o = ww_pairwise_options_default();
            o.row_begin = 3, o.row_end = rows - 2, o.col_begin = 7, o.col_end = cols - 11, o.out_stride = cols;
            for (size_t k = 0; k < rows * cols; k++)
                got[k] = NAN;
            CHECK_STATUS(ww_index_pairwise(gpu, ix, &q, got, &o), WW_OK);
            bad = 0;
            for (size_t i = 0; i < o.row_end - o.row_begin; i++)
                for (size_t j = 0; j < cols; j++) {
                    const double v = got[i * cols + j], w = want[(o.row_begin + i) * cols + o.col_begin + j];
                    bad += j >= o.col_end - o.col_begin ? !isnan(v) : !(fabs(v - w) <= 1e-12 * fmax(1.0, fabs(w)));
                }
            CHECK(bad == 0);
            ww_index_destroy(ix);
            /* kNN with the measure: GPU and CPU agree */
            size_t *gi = malloc(rows * 3 * sizeof(size_t)), *ci = malloc(rows * 3 * sizeof(size_t));
            double *gd = malloc(rows * 3 * sizeof(double)), *cd = malloc(rows * 3 * sizeof(double));
            CHECK_STATUS(ww_knn(gpu, &m, &q, &x, 3, gi, gd, NULL), WW_OK);
            CHECK_STATUS(ww_knn(cpu, &m, &q, &x, 3, ci, cd, NULL), WW_OK);
            for (size_t k = 0; k < rows * 3; k++) {
                CHECK(gi[k] == ci[k]);
                CHECK_CLOSE(gd[k], cd[k], 1e-12);
            }
            free(gi), free(ci), free(gd), free(cd), free(want), free(got);
        }
#ifdef WW_TEST_CUDA
    /* an index of device data in R^28 in float (the benchmark's shape), DTW with a window */
    random_set fs = make_set(&r, 300, 28, 28, 28);
    float *dv;
    const size_t total = fs.offsets[fs.count];
    CHECK(cudaMalloc((void **)&dv, total * 28 * sizeof(float)) == cudaSuccess);
    cudaMemcpy(dv, fs.values32, total * 28 * sizeof(float), cudaMemcpyHostToDevice);
    ww_dataset fx = ww_dataset_f32(dv, NULL, NULL, fs.count, 28, 28);
    fx.memory = WW_DEVICE;
    ww_dataset fq = ww_dataset_f32(fs.values32, NULL, NULL, 2, 28, 28);
    ww_dataset hx = ww_dataset_f64(NULL, NULL, NULL, fs.count, 28, 28);
    double *v64 = malloc(total * 28 * sizeof(double));
    for (size_t k = 0; k < total * 28; k++)
        v64[k] = fs.values32[k];
    hx.values = v64;
    ww_dataset hq = hx;
    hq.count = 2;
    for (int window = 0; window < 2; window++) {
        ww_measure m = ww_measure_dtw();
        if (window)
            ww_measure_set_window(&m, 3);
        ww_index *ix = NULL;
        CHECK_STATUS(ww_index_create(gpu, &fx, &m, &ix), WW_OK);
        float got[600];
        double want[600];
        ww_pairwise_options o = ww_pairwise_options_default();
        o.out_dtype = WW_F32;
        if (ix)
            CHECK_STATUS(ww_index_pairwise(gpu, ix, &fq, got, &o), WW_OK);
        CHECK_STATUS(ww_pairwise(cpu, &m, &hq, &hx, want, NULL), WW_OK);
        for (size_t k = 0; ix && k < 600; k++)
            CHECK(fabs(got[k] - want[k]) <= 1e-5 * fabs(want[k]));
        ww_index_destroy(ix);
    }
    free(v64);
    cudaFree(dv);
    free_set(&fs);
#endif
    free_set(&xs), free_set(&qs);
    ww_ctx_destroy(cpu), ww_ctx_destroy(gpu);
}

/* What the GPU does not serve is refused with WW_ERR_UNSUPPORTED on a CUDA context (the
 * per-diagonal engine: TWED without a window only), never computed another way; backend auto
 * serves the same calls (here on the GPU's default engine or the CPU), with the CPU's values. */
void test_cuda_unsupported_is_clear(void)
{
    REQUIRE_GPU();
    ww_rng r = {404};
    double va[3000], vb[2900];
    fill_random(&r, va, 3000, NULL, 0, 0);
    fill_random(&r, vb, 2900, NULL, 0, 0);
    ww_series a = ww_series_f64(va, NULL, 3000, 1), b = ww_series_f64(vb, NULL, 2900, 1);
    ww_ctx *diag = ww_test_ctx(WW_BACKEND_CUDA, WW_ENGINE_CUDA_DIAGONAL, 0);
    ww_ctx *autob = ww_test_ctx(WW_BACKEND_AUTO, WW_ENGINE_AUTO, 0), *cpu = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_AUTO, 0);
    ww_measure ms[3] = {ww_measure_dtw(), ww_measure_twed(0.001, 1, 2), ww_measure_dtw()};
    ww_measure_set_window(&ms[1], 30);
    ww_measure_set_window_fraction(&ms[2], 0.1);
    for (int k = 0; k < 3; k++) {
        double d = -1, want = NAN, got = NAN;
        CHECK_STATUS(ww_distance(diag, &ms[k], &a, &b, &d), WW_ERR_UNSUPPORTED);
        CHECK(d == -1);
        CHECK_STATUS(ww_distance(cpu, &ms[k], &a, &b, &want), WW_OK);
        CHECK_STATUS(ww_distance(autob, &ms[k], &a, &b, &got), WW_OK);
        CHECK_CLOSE(got, want, 1e-12);
    }
    ww_ctx_destroy(diag), ww_ctx_destroy(autob), ww_ctx_destroy(cpu);
}

/* The staged kernel with two lanes per pair (WW_STAGED_LANES=2) gives the bits of one lane per pair,
 * for both measures, degrees 1 and 2, with and without a window, float and double, self and cross
 * matrices, dims around the split (2 .. 32), and an index query (where the default chooses two
 * lanes); and equals the CPU engine. Outputs are poisoned before each call. */
void test_cuda_staged_lanes(void)
{
    REQUIRE_GPU();
    ww_rng r = {9090};
    ww_ctx *cpu = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_AUTO, 0), *gpu = ww_test_ctx(WW_BACKEND_CUDA, WW_ENGINE_AUTO, 0);
    const size_t dims[] = {2, 3, 5, 8, 9, 13, 17, 21, 28, 32}; /* every staged width, 4 to 32 */
    size_t differ = 0, off_cpu = 0;
    for (size_t di = 0; di < sizeof dims / sizeof dims[0]; di++) {
        random_set xs = make_set(&r, 37, 1, 40, dims[di]);
        random_set ys = make_set(&r, 11, 1, 40, dims[di]);
        for (int f32 = 0; f32 < 2; f32++)
            for (int dtw = 0; dtw < 2; dtw++)
                for (int window = 0; window < 2; window++) {
                    ww_measure m = measure_case(dtw, window, &r, 10);
                    if (!dtw)
                        m.params.twed.degree = 1 + (int)(di % 2); /* the split covers degrees 1 and 2 */
                    ww_dataset x = f32 ? ww_dataset_f32(xs.values32, dtw ? NULL : xs.stamps32, xs.offsets, xs.count, 0, xs.dim)
                                       : ww_dataset_f64(xs.values, dtw ? NULL : xs.stamps, xs.offsets, xs.count, 0, xs.dim);
                    ww_dataset y = f32 ? ww_dataset_f32(ys.values32, dtw ? NULL : ys.stamps32, ys.offsets, ys.count, 0, ys.dim)
                                       : ww_dataset_f64(ys.values, dtw ? NULL : ys.stamps, ys.offsets, ys.count, 0, ys.dim);
                    for (int cross = 0; cross < 2; cross++) {
                        const size_t rows = x.count, cols = cross ? y.count : x.count, n = rows * cols;
                        double *one = malloc(n * sizeof(double)), *two = malloc(n * sizeof(double)),
                               *want = malloc(n * sizeof(double));
                        CHECK_STATUS(ww_pairwise(cpu, &m, &x, cross ? &y : NULL, want, NULL), WW_OK);
                        for (int lanes = 1; lanes <= 2; lanes++) {
                            double *got = lanes == 1 ? one : two;
                            for (size_t k = 0; k < n; k++)
                                got[k] = NAN;
                            setenv("WW_STAGED_LANES", lanes == 1 ? "1" : "2", 1);
                            CHECK_STATUS(ww_pairwise(gpu, &m, &x, cross ? &y : NULL, got, NULL), WW_OK);
                        }
                        unsetenv("WW_STAGED_LANES");
                        for (size_t k = 0; k < n; k++) {
                            differ += memcmp(&one[k], &two[k], sizeof(double)) != 0;
                            off_cpu += !(fabs(two[k] - want[k]) <= (f32 ? 1e-4 : 1e-12) * fmax(1.0, fabs(want[k])));
                        }
                        free(one), free(two), free(want);
                    }
                }
        free_set(&xs), free_set(&ys);
    }
    CHECK(differ == 0);
    CHECK(off_cpu == 0);
    if (differ || off_cpu)
        fprintf(stderr, "    staged lanes: %zu entries differ between 1 and 2 lanes per pair, %zu off the CPU\n", differ,
                off_cpu);
    /* one query against an index of 3,000 series in R^28: two lanes per pair by default */
    random_set is = make_set(&r, 3000, 28, 28, 28);
    ww_dataset ix_set = ww_dataset_f64(is.values, NULL, NULL, is.count, 28, 28);
    ww_dataset q = ww_dataset_f64(is.values + 5 * 28 * 28, NULL, NULL, 1, 28, 28);
    ww_measure dtw = ww_measure_dtw();
    ww_index *ix = NULL;
    CHECK_STATUS(ww_index_create(gpu, &ix_set, &dtw, &ix), WW_OK);
    double *got = malloc(is.count * sizeof(double)), *want = malloc(is.count * sizeof(double));
    for (size_t k = 0; k < is.count; k++)
        got[k] = NAN;
    CHECK_STATUS(ww_index_pairwise(gpu, ix, &q, got, NULL), WW_OK);
    CHECK_STATUS(ww_pairwise(cpu, &dtw, &q, &ix_set, want, NULL), WW_OK);
    size_t bad = 0;
    for (size_t k = 0; k < is.count; k++)
        bad += !(fabs(got[k] - want[k]) <= 1e-12 * fmax(1.0, fabs(want[k])));
    CHECK(bad == 0);
    CHECK(got[5] == 0.0);
    free(got), free(want);
    ww_index_destroy(ix);
    free_set(&is);
    ww_ctx_destroy(cpu);
    ww_ctx_destroy(gpu);
}

/* A NaN or an infinity anywhere in the host series stops the call before anything is written: the
 * flags of the uploads reach the host behind them, and each lane checks them before its first
 * write (pairwise.cu, uploads_status). Small sets (one packed upload) and large ones (values
 * apart), the bad value in either side or in the query of an index, every strategy (dim 1 and 28,
 * short and long series, windows); a good call after a bad one is exact again. */
void test_cuda_bad_values_write_nothing(void)
{
    REQUIRE_GPU();
    ww_rng r = {5151};
    ww_ctx *cpu = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_AUTO, 0), *gpu = ww_test_ctx(WW_BACKEND_CUDA, WW_ENGINE_AUTO, 0);
    /* {count, min length, max length, dim}: staged (dim 28), thread (dim 1), warp/block (long), and a
     * large set: sets on both sides of the packed upload's 64 KB (the first case's x, the long series
     * and the large set above it, the others below) */
    const size_t cases[][4] = {{30, 20, 28, 28}, {40, 5, 60, 1}, {12, 300, 700, 1}, {700, 28, 28, 28}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        random_set xs = make_set(&r, cases[c][0], cases[c][1], cases[c][2], cases[c][3]);
        random_set ys = make_set(&r, 7, cases[c][1], cases[c][2], cases[c][3]);
        const size_t dim = cases[c][3];
        for (int dtw = 0; dtw < 2; dtw++)
            for (int side = 0; side < 3; side++) { /* the bad value in x, in y, in the index's query */
                ww_measure m = measure_case(dtw, (int)(c & 1), &r, cases[c][1]);
                random_set *bad_set = side == 0 ? &xs : &ys;
                const size_t at = ww_rng_below(&r, bad_set->offsets[bad_set->count] * dim);
                const double kept = bad_set->values[at];
                bad_set->values[at] = side == 1 ? INFINITY : NAN;
                ww_dataset x = ww_dataset_f64(xs.values, dtw ? NULL : xs.stamps, xs.offsets, xs.count, 0, dim);
                ww_dataset y = ww_dataset_f64(ys.values, dtw ? NULL : ys.stamps, ys.offsets, ys.count, 0, dim);
                const size_t n = xs.count * ys.count;
                double *got = malloc(n * sizeof(double));
                for (size_t k = 0; k < n; k++)
                    got[k] = -7.0;
                if (side < 2) {
                    CHECK_STATUS(ww_pairwise(gpu, &m, &x, &y, got, NULL), WW_ERR_NONFINITE);
                } else {
                    ww_index *ix = NULL;
                    bad_set->values[at] = kept; /* the index is sound, the query is not */
                    CHECK_STATUS(ww_index_create(gpu, &x, &m, &ix), WW_OK);
                    bad_set->values[at] = NAN;
                    CHECK_STATUS(ww_index_pairwise(gpu, ix, &y, got, NULL), WW_ERR_NONFINITE);
                    ww_index_destroy(ix);
                }
                size_t written = 0;
                for (size_t k = 0; k < n; k++)
                    written += got[k] != -7.0;
                CHECK(written == 0);
                /* the same call on sound data: the CPU's values */
                bad_set->values[at] = kept;
                double *want = malloc(n * sizeof(double));
                CHECK_STATUS(ww_pairwise(cpu, &m, &x, &y, want, NULL), WW_OK);
                CHECK_STATUS(ww_pairwise(gpu, &m, &x, &y, got, NULL), WW_OK);
                size_t off = 0;
                for (size_t k = 0; k < n; k++)
                    off += !(fabs(got[k] - want[k]) <= 1e-12 * fmax(1.0, fabs(want[k])));
                CHECK(off == 0);
                if (written || off)
                    fprintf(stderr, "    bad values: case %zu dtw %d side %d: %zu written, %zu off the CPU\n", c, dtw,
                            side, written, off);
                free(got), free(want);
            }
        free_set(&xs), free_set(&ys);
    }
    ww_ctx_destroy(cpu);
    ww_ctx_destroy(gpu);
}
