/* TWED values: the golden cases of the original reference, and agreement between engines. */
#include "ww_test.h"

#include <stdlib.h>
#include <string.h>

#include "golden.h"

static ww_ctx *make_ctx(ww_backend backend, ww_engine engine, int threads)
{
    ww_ctx_options o = ww_ctx_options_default();
    o.backend = backend;
    o.engine = engine;
    o.num_threads = threads;
    ww_ctx *ctx = NULL;
    CHECK_STATUS(ww_ctx_create(&ctx, &o), WW_OK);
    return ctx;
}

void test_golden_all_cpu_engines(void)
{
    ww_golden_set set;
    if (ww_golden_load(&set) != 0)
        SKIP("../shared/golden/twed.txt not found");
    const ww_engine engines[] = {WW_ENGINE_CPU_REFERENCE, WW_ENGINE_CPU_BAND, WW_ENGINE_CPU_STRIP};
    for (size_t e = 0; e < 3; e++) {
        ww_ctx *ctx = make_ctx(WW_BACKEND_CPU, engines[e], 1);
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
    ww_ctx *ref = make_ctx(WW_BACKEND_CPU, WW_ENGINE_CPU_REFERENCE, 1);
    ww_ctx *band = make_ctx(WW_BACKEND_CPU, WW_ENGINE_CPU_BAND, 1);
    ww_ctx *strip = make_ctx(WW_BACKEND_CPU, WW_ENGINE_CPU_STRIP, 1);
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
            ww_ctx *ctx = make_ctx(WW_BACKEND_CPU, WW_ENGINE_AUTO, 2);
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
