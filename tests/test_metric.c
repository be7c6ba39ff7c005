/* TWED is a metric (Marteau 2009): checked on random data for many parameters, dims, degrees,
 * with and without time stamps. And float32 inputs against double inputs. */
#include "ww_test.h"

#include <stdlib.h>
#include <string.h>

/* Stamps rising by random steps, about a third of them repeated. */
static void rising_stamps(ww_rng *r, size_t n, double *t)
{
    double now = ww_rng_uniform(r) * 2;
    for (size_t i = 0; i < n; i++) {
        now += ww_rng_below(r, 3) == 0 ? 0.0 : ww_rng_uniform(r) * 3;
        t[i] = now;
    }
}

/* d = the full matrix of x against itself, computed as x against y = x so that d(i,j) and d(j,i)
 * are computed independently. Checks identity, positivity, symmetry and the triangle inequality.
 * Returns the number of violated (i, j[, k]) combinations. */
static int check_axioms(const double *d, size_t n, int line)
{
    int bad = 0;
    for (size_t i = 0; i < n; i++) {
        if (d[i * n + i] != 0.0) {
            bad++;
            fprintf(stderr, "  %s:%d: d(%zu,%zu) = %.17g, not 0\n", __FILE__, line, i, i, d[i * n + i]);
        }
        for (size_t j = 0; j < n; j++) {
            double ij = d[i * n + j], ji = d[j * n + i];
            if (i != j && !(ij > 0.0 && isfinite(ij))) {
                bad++;
                fprintf(stderr, "  %s:%d: d(%zu,%zu) = %.17g, not positive\n", __FILE__, line, i, j, ij);
            }
            if (!(fabs(ij - ji) <= 1e-12 * fmax(fabs(ij), fabs(ji)))) {
                bad++;
                fprintf(stderr, "  %s:%d: d(%zu,%zu) = %.17g but d(%zu,%zu) = %.17g\n", __FILE__, line, i, j,
                        ij, j, i, ji);
            }
            for (size_t k = 0; k < n; k++) {
                double ik = d[i * n + k], jk = d[j * n + k];
                double scale = fmax(1.0, fmax(ik, ij + jk));
                if (!(ik <= ij + jk + 1e-9 * scale)) {
                    bad++;
                    fprintf(stderr, "  %s:%d: d(%zu,%zu) = %.17g > d(%zu,%zu) + d(%zu,%zu) = %.17g\n", __FILE__,
                            line, i, k, ik, i, j, j, k, ij + jk);
                }
            }
        }
    }
    return bad;
}

void test_metric_axioms(void)
{
    ww_rng r = {0xC0FFEE};
    const double nus[] = {0.0, 0.001, 0.5, 3.0};
    const double lambdas[] = {0.0, 0.25, 2.0};
    const size_t dims[] = {1, 2, 5, 8};
    enum { COUNT = 10, MAXLEN = 18 };
    double *v = (double *)malloc(COUNT * MAXLEN * 8 * sizeof(double));
    double *t = (double *)malloc(COUNT * MAXLEN * sizeof(double));
    double d[COUNT * COUNT];
    ww_ctx *ctx = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_AUTO, 2);
    int configs = 0, bad = 0;
    for (size_t di = 0; di < 4; di++)
        for (int stamps = 0; stamps < 2; stamps++)
            for (size_t ni = 0; ni < 4; ni++)
                for (size_t li = 0; li < 3; li++)
                    for (int degree = 1; degree <= 3; degree++) {
                        const size_t dim = dims[di];
                        size_t offsets[COUNT + 1];
                        offsets[0] = 0;
                        for (size_t i = 0; i < COUNT; i++)
                            offsets[i + 1] = offsets[i] + 1 + ww_rng_below(&r, MAXLEN);
                        /* values: a random walk half the time (closer series, tighter triangles) */
                        for (size_t i = 0; i < offsets[COUNT] * dim; i++)
                            v[i] = 2 * ww_rng_uniform(&r) - 1;
                        if (configs % 2)
                            for (size_t i = dim; i < offsets[COUNT] * dim; i++)
                                v[i] = v[i - dim] + 0.2 * v[i];
                        for (size_t i = 0; i < COUNT; i++)
                            rising_stamps(&r, offsets[i + 1] - offsets[i], t + offsets[i]);
                        ww_dataset x = ww_dataset_f64(v, stamps ? t : NULL, offsets, COUNT, 0, dim);
                        ww_twed_params p = {nus[ni], lambdas[li], degree};
                        CHECK_STATUS(ww_twed_pairwise(ctx, &x, &x, &p, d, NULL), WW_OK);
                        int b = check_axioms(d, COUNT, __LINE__);
                        if (b)
                            fprintf(stderr, "  (dim %zu, stamps %d, nu %g, lambda %g, degree %d)\n", dim, stamps,
                                    p.nu, p.lambda, degree);
                        bad += b;
                        /* the self matrix is the same one, mirrored */
                        double m[COUNT * COUNT];
                        CHECK_STATUS(ww_twed_pairwise(ctx, &x, NULL, &p, m, NULL), WW_OK);
                        for (size_t i = 0; i < COUNT; i++)
                            for (size_t j = i; j < COUNT; j++)
                                CHECK(m[i * COUNT + j] == d[i * COUNT + j] && m[j * COUNT + i] == d[i * COUNT + j]);
                        configs++;
                    }
    CHECK(configs == 288);
    CHECK(bad == 0);
    ww_ctx_destroy(ctx);
    free(v), free(t);
}

/* The same axioms through ww_twed with each pair engine, on fewer but longer series. */
void test_metric_axioms_pair_engines(void)
{
    ww_rng r = {271828};
    const ww_engine engines[] = {WW_ENGINE_CPU_REFERENCE, WW_ENGINE_CPU_BAND, WW_ENGINE_CPU_STRIP};
    enum { COUNT = 4, MAXLEN = 300 };
    double *v = (double *)malloc(COUNT * MAXLEN * 4 * sizeof(double));
    double *t = (double *)malloc(COUNT * MAXLEN * sizeof(double));
    for (int trial = 0; trial < 3; trial++) {
        const size_t dim = (size_t)(trial == 0 ? 1 : trial * 2);
        size_t len[COUNT];
        for (size_t i = 0; i < COUNT; i++)
            len[i] = 1 + ww_rng_below(&r, MAXLEN);
        for (size_t i = 0; i < COUNT * MAXLEN * dim; i++)
            v[i] = ww_rng_uniform(&r);
        for (size_t i = 0; i < COUNT; i++)
            rising_stamps(&r, len[i], t + i * MAXLEN);
        ww_twed_params p = {trial * 0.3, 0.5 + trial, 1 + trial};
        for (int e = 0; e < 3; e++) {
            ww_ctx *ctx = ww_test_ctx(WW_BACKEND_CPU, engines[e], 1);
            double d[COUNT * COUNT];
            for (size_t i = 0; i < COUNT; i++)
                for (size_t j = 0; j < COUNT; j++) {
                    ww_series a = ww_series_f64(v + i * MAXLEN * dim, trial ? t + i * MAXLEN : NULL, len[i], dim);
                    ww_series b = ww_series_f64(v + j * MAXLEN * dim, trial ? t + j * MAXLEN : NULL, len[j], dim);
                    d[i * COUNT + j] = -1;
                    CHECK_STATUS(ww_twed(ctx, &a, &b, &p, &d[i * COUNT + j]), WW_OK);
                }
            CHECK(check_axioms(d, COUNT, __LINE__) == 0);
            ww_ctx_destroy(ctx);
        }
    }
    free(v), free(t);
}

/* float32 inputs: within 1e-5 relative of the double computation on the same float-rounded data
 * (the CPU engines convert to double first, so in fact equal to 1e-12), and within 1e-4 relative of
 * the result for the original double data in [0, 1). For every engine, the matrix and kNN. */
void test_float_vs_double(void)
{
    ww_rng r = {1618};
    const ww_engine engines[] = {WW_ENGINE_CPU_REFERENCE, WW_ENGINE_CPU_BAND, WW_ENGINE_CPU_STRIP};
    ww_ctx *ctx[3];
    for (int e = 0; e < 3; e++)
        ctx[e] = ww_test_ctx(WW_BACKEND_CPU, engines[e], 2);
    enum { MAXLEN = 500, MAXDIM = 4 };
    double *a64 = (double *)malloc(MAXLEN * MAXDIM * sizeof(double)), *b64 = (double *)malloc(MAXLEN * MAXDIM * sizeof(double));
    double *a_r = (double *)malloc(MAXLEN * MAXDIM * sizeof(double)), *b_r = (double *)malloc(MAXLEN * MAXDIM * sizeof(double));
    float *a32 = (float *)malloc(MAXLEN * MAXDIM * sizeof(float)), *b32 = (float *)malloc(MAXLEN * MAXDIM * sizeof(float));
    double *ta = (double *)malloc(MAXLEN * sizeof(double)), *tb = (double *)malloc(MAXLEN * sizeof(double));
    float *ta32 = (float *)malloc(MAXLEN * sizeof(float)), *tb32 = (float *)malloc(MAXLEN * sizeof(float));
    for (int trial = 0; trial < 12; trial++) {
        const size_t na = 1 + ww_rng_below(&r, MAXLEN), nb = 1 + ww_rng_below(&r, MAXLEN);
        const size_t dim = 1 + (size_t)trial % MAXDIM;
        const int stamps = trial % 3 == 2;
        for (size_t i = 0; i < MAXLEN * MAXDIM; i++) {
            a64[i] = ww_rng_uniform(&r);
            b64[i] = ww_rng_uniform(&r);
            a32[i] = (float)a64[i], b32[i] = (float)b64[i];
            a_r[i] = a32[i], b_r[i] = b32[i];
        }
        rising_stamps(&r, MAXLEN, ta);
        rising_stamps(&r, MAXLEN, tb);
        for (size_t i = 0; i < MAXLEN; i++) {
            ta32[i] = (float)ta[i], tb32[i] = (float)tb[i];
            ta[i] = ta32[i], tb[i] = tb32[i]; /* stamps are only compared float-rounded */
        }
        ww_twed_params p = {trial % 2 ? 0.001 : 0.5, 1.0, 1 + trial % 3};
        ww_series fa = ww_series_f32(a32, stamps ? ta32 : NULL, na, dim), fb = ww_series_f32(b32, stamps ? tb32 : NULL, nb, dim);
        ww_series ra = ww_series_f64(a_r, stamps ? ta : NULL, na, dim), rb = ww_series_f64(b_r, stamps ? tb : NULL, nb, dim);
        ww_series da = ww_series_f64(a64, stamps ? ta : NULL, na, dim), db = ww_series_f64(b64, stamps ? tb : NULL, nb, dim);
        for (int e = 0; e < 3; e++) {
            if (e == 0 && (na + 1) * (nb + 1) > 100000)
                continue; /* the reference matrix only when small */
            double d32 = -1, d_r = -2, d64 = -3;
            CHECK_STATUS(ww_twed(ctx[e], &fa, &fb, &p, &d32), WW_OK);
            CHECK_STATUS(ww_twed(ctx[e], &ra, &rb, &p, &d_r), WW_OK);
            CHECK_STATUS(ww_twed(ctx[e], &da, &db, &p, &d64), WW_OK);
            CHECK_CLOSE(d32, d_r, 1e-5);
            CHECK_CLOSE(d32, d_r, 1e-12); /* the CPU engines compute in double */
            CHECK(fabs(d32 - d64) <= 1e-4 * d64);
        }
    }
    /* matrices and kNN with float data */
    enum { COUNT = 20, LEN = 40, DIM = 3 };
    size_t offsets[COUNT + 1];
    offsets[0] = 0;
    for (size_t i = 0; i < COUNT; i++)
        offsets[i + 1] = offsets[i] + 1 + ww_rng_below(&r, LEN);
    for (size_t i = 0; i < offsets[COUNT] * DIM; i++) {
        a64[i] = ww_rng_uniform(&r);
        a32[i] = (float)a64[i];
        a_r[i] = a32[i];
    }
    ww_dataset x32 = ww_dataset_f32(a32, NULL, offsets, COUNT, 0, DIM);
    ww_dataset x_r = ww_dataset_f64(a_r, NULL, offsets, COUNT, 0, DIM);
    ww_dataset x64 = ww_dataset_f64(a64, NULL, offsets, COUNT, 0, DIM);
    ww_twed_params p = {0.5, 1.0, 2};
    double m32[COUNT * COUNT], m_r[COUNT * COUNT], m64[COUNT * COUNT];
    CHECK_STATUS(ww_twed_pairwise(ctx[2], &x32, NULL, &p, m32, NULL), WW_OK);
    CHECK_STATUS(ww_twed_pairwise(ctx[2], &x_r, NULL, &p, m_r, NULL), WW_OK);
    CHECK_STATUS(ww_twed_pairwise(ctx[2], &x64, NULL, &p, m64, NULL), WW_OK);
    for (size_t k = 0; k < COUNT * COUNT; k++) {
        CHECK_CLOSE(m32[k], m_r[k], 1e-12);
        CHECK(fabs(m32[k] - m64[k]) <= 1e-4 * m64[k]);
    }
    size_t i32[COUNT * 3], i_r[COUNT * 3];
    double d32[COUNT * 3], d_r[COUNT * 3];
    CHECK_STATUS(ww_twed_knn(ctx[2], &x32, &x32, &p, 3, i32, d32, NULL), WW_OK);
    CHECK_STATUS(ww_twed_knn(ctx[2], &x_r, &x_r, &p, 3, i_r, d_r, NULL), WW_OK);
    for (size_t k = 0; k < COUNT * 3; k++) {
        CHECK(i32[k] == i_r[k]);
        CHECK_CLOSE(d32[k], d_r[k], 1e-12);
    }
    for (int e = 0; e < 3; e++)
        ww_ctx_destroy(ctx[e]);
    free(a64), free(b64), free(a_r), free(b_r), free(a32), free(b32), free(ta), free(tb), free(ta32), free(tb32);
}
