/* Soft-DTW's value engine on the CPU in base 2 (src/cpu/softdtw.c, src/measures/softmin_base2.h):
 * its exponential and logarithm against the C library's, long pairs against a long double
 * reference (the errors of a cell add up along the table), symmetry to the bit, the divergence,
 * and the scales where it hands over to the natural-base pass. */
#include "ww_test.h"
#include "measures/softmin_base2.h"

#include <stdlib.h>

/* sdtw by rows in long double (expl, logl): a reference whose own rounding is 2^11 times smaller
 * than a double engine's. No window. */
static double sv_reference(const double *a, size_t na, const double *b, size_t nb, size_t dim, double gamma)
{
    long double *prev = malloc((nb + 1) * sizeof(long double)), *row = malloc((nb + 1) * sizeof(long double));
    const long double g = gamma;
    for (size_t j = 0; j <= nb; j++)
        prev[j] = j == 0 ? 0.0L : (long double)INFINITY;
    for (size_t i = 1; i <= na; i++) {
        row[0] = (long double)INFINITY;
        for (size_t j = 1; j <= nb; j++) {
            const long double v[3] = {prev[j - 1], prev[j], row[j - 1]};
            long double lo = v[0] < v[1] ? v[0] : v[1];
            lo = v[2] < lo ? v[2] : lo;
            long double s = 0;
            for (int k = 0; k < 3; k++)
                s += expl(-(v[k] - lo) / g);
            long double c = 0;
            for (size_t k = 0; k < dim; k++) {
                const long double d = (long double)a[(i - 1) * dim + k] - (long double)b[(j - 1) * dim + k];
                c += d * d;
            }
            row[j] = c + lo - g * logl(s);
        }
        long double *t = prev;
        prev = row;
        row = t;
    }
    const double value = (double)prev[nb];
    free(prev);
    free(row);
    return value;
}

static ww_ctx *sv_ctx(void)
{
    ww_ctx_options o = ww_ctx_options_default();
    o.backend = WW_BACKEND_CPU;
    o.num_threads = 1;
    ww_ctx *ctx = NULL;
    CHECK_STATUS(ww_ctx_create(&ctx, &o), WW_OK);
    return ctx;
}

static void sv_fill(ww_rng *r, double *x, size_t n, double scale)
{
    for (size_t k = 0; k < n; k++)
        x[k] = (ww_rng_uniform(r) * 2.0 - 1.0) * scale;
}

/* 2^x over [-1000, 0] to 1e-15 relative; log2 of s in [1, 3] to 1e-15 absolute; the first stage's
 * clamp takes -inf and NaN (inf - inf: all three arguments off the table) to the floor. */
void test_softdtw_base2_math(void)
{
    double worst_exp = 0, worst_log = 0;
    for (int k = 0; k <= 200000; k++) {
        const double x = -1000.0 * k / 200000.0 - (k % 7) * 1e-9;
        const double e = fabs(ww_exp2_clamped_f64(x) - exp2(x)) / exp2(x);
        worst_exp = e > worst_exp ? e : worst_exp;
        const double s = 1.0 + 2.0 * k / 200000.0, l = -ww_sub_log2_f64(0.0, s);
        worst_log = fabs(l - log2(s)) > worst_log ? fabs(l - log2(s)) : worst_log;
    }
    if (!(worst_exp <= 1e-15 && worst_log <= 1e-15))
        fprintf(stderr, "  exp2 %.3g, log2 %.3g\n", worst_exp, worst_log);
    CHECK(worst_exp <= 1e-15 && worst_log <= 1e-15);
    CHECK(ww_exp2_clamped_f64(0.0) == 1.0 && ww_exp2_clamped_f64(-1.0) == 0.5);
    CHECK(ww_sub_log2_f64(0.0, 1.0) == -0.0 || fabs(ww_sub_log2_f64(0.0, 1.0)) <= 1e-16);
    double xh = 0, xo = 0;
    CHECK(ww_softmin2_args_f64(INFINITY, 2.0, INFINITY, -1000.0, &xh, &xo) == 2.0 && xh == -1000.0 && xo == -1000.0);
    CHECK(ww_softmin2_args_f64(INFINITY, INFINITY, INFINITY, -1000.0, &xh, &xo) == INFINITY && xh == -1000.0 &&
          xo == -1000.0);
    CHECK(ww_softmin2_args_f64(1.0, 3.0, 2.0, -1000.0, &xh, &xo) == 1.0 && xh == -2.0 && xo == -1.0);
    CHECK(ww_softmin2_sum_f64(-1000.0, -1000.0) == 1.0 && ww_softmin2_sum_f64(0.0, 0.0) == 3.0);
}

/* Long pairs (the cells' errors add up along the table) against the long double reference to
 * 1e-14, dims 1 and 2 (the costs inside the first loop) and 3 (a loop of their own), gamma from
 * 0.01 to 100; the gradient engine's value as well;
 * a pair and its swap give the same bits; the divergence of a series with itself is 0. */
void test_softdtw_base2_long_pairs(void)
{
    ww_rng rng = {0xba5e2u};
    ww_ctx *ctx = sv_ctx();
    const size_t lengths[][2] = {{700, 900}, {1, 600}, {333, 1}, {257, 256}};
    const double gammas[] = {0.01, 1.0, 100.0};
    for (size_t L = 0; L < 4; L++)
        for (size_t dim = 1; dim <= 3; dim++)
            for (size_t g = 0; g < 3; g++) {
                if (L == 0 && dim != 2 && g != 1) /* the longest pair: every dim at gamma 1, every gamma at dim 2 */
                    continue;
                const size_t na = lengths[L][0], nb = lengths[L][1];
                double *a = malloc(na * dim * sizeof(double)), *b = malloc(nb * dim * sizeof(double));
                sv_fill(&rng, a, na * dim, 1.0);
                sv_fill(&rng, b, nb * dim, 1.0);
                const ww_series sa = ww_series_f64(a, NULL, na, dim), sb = ww_series_f64(b, NULL, nb, dim);
                ww_measure m = ww_measure_softdtw(gammas[g]);
                double ab = NAN, ba = NAN;
                CHECK_STATUS(ww_distance(ctx, &m, &sa, &sb, &ab), WW_OK);
                CHECK_STATUS(ww_distance(ctx, &m, &sb, &sa, &ba), WW_OK);
                const double want = sv_reference(a, na, b, nb, dim, gammas[g]);
                /* 1e-14: the natural-base engine is within 3e-15 here; a bias of 1e-16 a cell (a
                 * logarithm that is not 0 at s = 1, rounded at R's magnitude) gave 2e-14 */
                if (!(fabs(ab - want) <= 1e-14 * (fabs(want) > 1 ? fabs(want) : 1)))
                    fprintf(stderr, "  (%zu, %zu) dim %zu gamma %g\n", na, nb, dim, gammas[g]);
                CHECK_CLOSE(ab, want, 1e-14);
                CHECK(ab == ba);
                double gv = NAN, *ga = malloc(na * dim * sizeof(double)); /* a gradient: the gradient engine */
                CHECK_STATUS(ww_gradient(ctx, &m, &sa, &sb, &gv, ga, NULL), WW_OK);
                CHECK_CLOSE(gv, want, 1e-14);
                free(ga);
                ww_measure_set_divergence(&m, 1);
                double aa = NAN, d = NAN;
                CHECK_STATUS(ww_distance(ctx, &m, &sa, &sa, &aa), WW_OK);
                CHECK_STATUS(ww_distance(ctx, &m, &sa, &sb, &d), WW_OK);
                CHECK(aa == 0.0);
                CHECK(d >= -1e-12 * (1 + fabs(d)));
                free(a);
                free(b);
            }
    ww_ctx_destroy(ctx);
}

/* Where R / (gamma ln 2) could leave a double's range (gamma tiny against the costs, gamma huge,
 * values near the square root of the largest double) the engine computes in the natural base: the
 * same values as the forced reference engine, finite where they are; and just inside the range the
 * base-2 table is used and exact too. */
void test_softdtw_base2_scale_range(void)
{
    ww_rng rng = {0x5ca1eu};
    ww_ctx *ctx = sv_ctx(), *ref = NULL;
    ww_ctx_options o = ww_ctx_options_default();
    o.backend = WW_BACKEND_CPU;
    o.engine = WW_ENGINE_CPU_REFERENCE;
    o.num_threads = 1;
    CHECK_STATUS(ww_ctx_create(&ref, &o), WW_OK);
    const struct {
        double gamma, scale;
    } cases[] = {{1e-300, 1.0}, {1e-200, 1e-10}, {1e-12, 1e3}, {1e20, 1.0}, {1e30, 1e10}, {1.0, 1e150},
                 {1.0, 1e-150}, {1e-5, 1e-3}, {2.0, 1e100}, {1e100, 1e60}};
    const size_t na = 40, nb = 55, dim = 2;
    double *a = malloc(na * dim * sizeof(double)), *b = malloc(nb * dim * sizeof(double));
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        sv_fill(&rng, a, na * dim, cases[k].scale);
        sv_fill(&rng, b, nb * dim, cases[k].scale);
        const ww_series sa = ww_series_f64(a, NULL, na, dim), sb = ww_series_f64(b, NULL, nb, dim);
        const ww_measure m = ww_measure_softdtw(cases[k].gamma);
        double got = NAN, want = NAN;
        CHECK_STATUS(ww_distance(ctx, &m, &sa, &sb, &got), WW_OK);
        CHECK_STATUS(ww_distance(ref, &m, &sa, &sb, &want), WW_OK);
        if (!(fabs(got - want) <= 1e-12 * (fabs(want) > 1 ? fabs(want) : 1)) || !isfinite(got))
            fprintf(stderr, "  gamma %g, values %g: %.17g, expected %.17g\n", cases[k].gamma, cases[k].scale, got, want);
        CHECK(isfinite(got) == isfinite(want));
        if (isfinite(want))
            CHECK_CLOSE(got, want, 1e-12);
    }
    free(a);
    free(b);
    ww_ctx_destroy(ref);
    ww_ctx_destroy(ctx);
}

/* Gradients on both sides of the base-2 range (the gradient engine's forward pass as the value
 * engine's), through sdtw's scaling: sdtw_{alpha^2 gamma}(alpha x, alpha y) = alpha^2 sdtw_gamma(x, y),
 * its gradients alpha times. alpha = 1e100 (gamma 1e200 gamma: 1 / (gamma ln 2) below 2^-64, the
 * natural base) and alpha = 1e-100 (base 2, R' near 1e200) against alpha = 1; the compact table
 * and the checkpoints give the same bits in each; the largest values (the range's other bound)
 * against the reference engine's value. */
void test_softdtw_base2_gradient_scaling(void)
{
    ww_rng rng = {0x9badu};
    ww_ctx *ctx = sv_ctx();
    const size_t na = 30, nb = 45, dim = 2, n = (na + nb) * dim;
    double *x = malloc(n * sizeof(double)), *xs = malloc(n * sizeof(double)), *g = malloc(4 * n * sizeof(double));
    double *g1 = g + n, *g2 = g + 2 * n, *want = g + 3 * n;
    sv_fill(&rng, x, n, 1.0);
    const double gammas[] = {0.1, 1.0}, alphas[] = {1e100, 1e-100};
    for (size_t gi = 0; gi < 2; gi++) {
        const ww_series sa = ww_series_f64(x, NULL, na, dim), sb = ww_series_f64(x + na * dim, NULL, nb, dim);
        const ww_measure m = ww_measure_softdtw(gammas[gi]);
        double v = NAN;
        CHECK_STATUS(ww_gradient(ctx, &m, &sa, &sb, &v, want, want + na * dim), WW_OK);
        for (size_t ai = 0; ai < 2; ai++) {
            const double alpha = alphas[ai];
            for (size_t k = 0; k < n; k++)
                xs[k] = alpha * x[k];
            const ww_series ta = ww_series_f64(xs, NULL, na, dim), tb = ww_series_f64(xs + na * dim, NULL, nb, dim);
            const ww_measure ms = ww_measure_softdtw(alpha * alpha * gammas[gi]);
            double v1 = NAN, v2 = NAN;
            CHECK_STATUS(ww_softdtw_set_memory_budget(ctx, SIZE_MAX), WW_OK);
            CHECK_STATUS(ww_gradient(ctx, &ms, &ta, &tb, &v1, g1, g1 + na * dim), WW_OK);
            CHECK_STATUS(ww_softdtw_set_memory_budget(ctx, 0), WW_OK);
            CHECK_STATUS(ww_gradient(ctx, &ms, &ta, &tb, &v2, g2, g2 + na * dim), WW_OK);
            CHECK(v1 == v2 && memcmp(g1, g2, n * sizeof(double)) == 0);
            CHECK_CLOSE(v1 / (alpha * alpha), v, 1e-12);
            double worst = 0, largest = 0;
            for (size_t k = 0; k < n; k++) {
                worst = fabs(g1[k] / alpha - want[k]) > worst ? fabs(g1[k] / alpha - want[k]) : worst;
                largest = fabs(want[k]) > largest ? fabs(want[k]) : largest;
            }
            if (!(worst <= 1e-10 * largest))
                fprintf(stderr, "  gamma %g alpha %g: gradient off by %.3g of %.3g\n", gammas[gi], alpha, worst, largest);
            CHECK(worst <= 1e-10 * largest);
        }
    }
    CHECK_STATUS(ww_softdtw_set_memory_budget(ctx, SIZE_MAX), WW_OK);
    /* values near 1e150: the costs' bound leaves the base-2 range */
    ww_ctx_options o = ww_ctx_options_default();
    o.backend = WW_BACKEND_CPU;
    o.engine = WW_ENGINE_CPU_REFERENCE;
    o.num_threads = 1;
    ww_ctx *ref = NULL;
    CHECK_STATUS(ww_ctx_create(&ref, &o), WW_OK);
    for (size_t k = 0; k < n; k++)
        xs[k] = 1e150 * x[k];
    const ww_series ta = ww_series_f64(xs, NULL, na, dim), tb = ww_series_f64(xs + na * dim, NULL, nb, dim);
    const ww_measure m = ww_measure_softdtw(1.0);
    double v1 = NAN, w = NAN;
    CHECK_STATUS(ww_gradient(ctx, &m, &ta, &tb, &v1, g1, g1 + na * dim), WW_OK);
    CHECK_STATUS(ww_distance(ref, &m, &ta, &tb, &w), WW_OK);
    CHECK(isfinite(v1));
    CHECK_CLOSE(v1, w, 1e-12);
    ww_ctx_destroy(ref);
    free(x), free(xs), free(g);
    ww_ctx_destroy(ctx);
}
