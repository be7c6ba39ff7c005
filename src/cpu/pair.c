/* CPU engines for one pair: the full-matrix reference (tests only), the paper's three-diagonal
 * band, and the strip engine that the library uses. Each is written once, in pair_engines.inc, and
 * instantiated for every measure; this file prepares the series and picks the instance. */
#include "pair_engine.h"

#include <stdlib.h>
#include <string.h>

size_t ww_prepared_doubles(size_t length, size_t dim) { return (length + 1) * (dim + 2); }

/* The measure's per-sample terms of a prepared series (values and stamps in place): aux[idx] from
 * the sample at idx and the one before it in time (idx + 1 when reversed); sample 0's is 0. */
static void fill_aux(const ww_measure *m, const ww_coef_f64 *c, const ww_prepared *p, int reversed)
{
    const size_t n = p->length, dim = p->dim;
    const double *v = p->values, *t = p->stamps;
    double *aux = p->aux;
    aux[reversed ? n : 0] = 0.0;
    switch (m->kind) {
#define X(tok, TOK, KIND)                                                                                         \
    case KIND:                                                                                                    \
        for (size_t smp = 1; smp <= n; smp++) {                                                                   \
            const size_t idx = reversed ? n - smp : smp, prev = reversed ? idx + 1 : idx - 1;                     \
            aux[idx] = WW_MEASURE_FN(tok, aux_f64)(v + idx * dim, v + prev * dim, dim, t[idx], t[prev], c);       \
        }                                                                                                         \
        break;
        WW_FOR_EACH_MEASURE(X)
#undef X
    }
}

void ww_prepare(const ww_series *s, const ww_measure *m, int reversed, double *storage, ww_prepared *p)
{
    const size_t n = s->length, dim = s->dim;
    const ww_measure_traits *traits = ww_measure_traits_of(m->kind);
    const void *stamps = traits->uses_stamps ? s->stamps : NULL;
    p->length = n;
    p->dim = dim;
    p->values = storage;
    p->stamps = storage + (n + 1) * dim;
    p->aux = p->stamps + (n + 1);
    /* Sample s goes to index s (time order) or n - s (reversed); sample 0 is zero at time 0. */
    const size_t zero = reversed ? n : 0;
    memset(p->values + zero * dim, 0, dim * sizeof(double));
    p->stamps[zero] = 0.0;
    if (s->dtype == WW_F64) {
        const double *src = (const double *)s->values, *ts = (const double *)stamps;
        if (!reversed) {
            memcpy(p->values + dim, src, n * dim * sizeof(double));
        } else if (dim == 1) {
            for (size_t smp = 1; smp <= n; smp++)
                p->values[n - smp] = src[smp - 1];
        } else {
            for (size_t smp = 1; smp <= n; smp++)
                for (size_t k = 0; k < dim; k++)
                    p->values[(n - smp) * dim + k] = src[(smp - 1) * dim + k];
        }
        for (size_t smp = 1; smp <= n; smp++)
            p->stamps[reversed ? n - smp : smp] = ts ? ts[smp - 1] : (double)smp;
    } else {
        const float *src = (const float *)s->values, *ts = (const float *)stamps;
        for (size_t smp = 1; smp <= n; smp++) {
            const size_t idx = reversed ? n - smp : smp;
            for (size_t k = 0; k < dim; k++)
                p->values[idx * dim + k] = (double)src[(smp - 1) * dim + k];
            p->stamps[idx] = ts ? (double)ts[smp - 1] : (double)smp;
        }
    }
    const ww_coef_f64 c = ww_measure_coef_f64(m);
    if (traits->has_aux)
        fill_aux(m, &c, p, reversed);
    else
        for (size_t idx = 0; idx <= n; idx++)
            p->aux[idx] = 0.0;
}

#define WW_ENGINE_SOFTDTW_ELSEWHERE /* soft-DTW's instances: softdtw_engines.c */
#define WW_ENGINE_TEMPLATE "../cpu/pair_engines.inc" /* relative to for_each_measure.h */
#include "../measures/for_each_measure.h"
#undef WW_ENGINE_TEMPLATE
#undef WW_ENGINE_SOFTDTW_ELSEWHERE
#define pair_engine_softdtw ww_cpu_pair_engine_softdtw

size_t ww_cpu_pair_work_doubles(ww_engine engine, size_t na, size_t nb)
{
    size_t n;
    switch (engine) {
    case WW_ENGINE_CPU_REFERENCE:
        if (!ww_mul_size(na + 1, nb + 1, &n))
            return 0;
        return n;
    case WW_ENGINE_CPU_BAND:
        return 3 * (na + 1);
    default:
        /* two rows (D and the local term of the strip's top boundary) + six strip diagonals */
        return 2 * (nb + 1) + 6 * (STRIP_ROWS + 1);
    }
}

double ww_cpu_pair_engine(ww_engine engine, const ww_measure *m, const ww_prepared *a, const ww_prepared *b,
                          double *work)
{
    switch (m->kind) {
#define X(tok, TOK, KIND) \
    case KIND: return WW_CAT(pair_engine_, tok)(engine, m, a, b, work);
        WW_FOR_EACH_MEASURE(X)
#undef X
    }
    return NAN;
}

ww_status ww_cpu_distance(ww_ctx *ctx, ww_engine engine, const ww_measure *m, const ww_series *a, const ww_series *b,
                          double *out)
{
    /* Sizes first: a length that overflows them must not make us read the values. */
    if (engine == WW_ENGINE_AUTO)
        engine = WW_ENGINE_CPU_STRIP;
    ww_cpu_scratch *sc = &ctx->cpu[0];
    size_t work = ww_cpu_pair_work_doubles(engine, a->length, b->length);
    if (work == 0 || work > SIZE_MAX / sizeof(double))
        return WW_ERR_OVERFLOW;
    ww_status st = ww_check_values_host(a->values, ww_measure_stamps(m, a->stamps), a->length, a->dim, a->dtype);
    if (st == WW_OK)
        st = ww_check_values_host(b->values, ww_measure_stamps(m, b->stamps), b->length, b->dim, b->dtype);
    if (st != WW_OK)
        return st;
    if ((st = ww_buffer_reserve(&sc->a, ww_prepared_doubles(a->length, a->dim) * sizeof(double))) != WW_OK ||
        (st = ww_buffer_reserve(&sc->b, ww_prepared_doubles(b->length, b->dim) * sizeof(double))) != WW_OK ||
        (st = ww_buffer_reserve(&sc->work, work * sizeof(double))) != WW_OK)
        return st;
    ww_prepared pa, pb;
    ww_prepare(a, m, 0, (double *)sc->a.ptr, &pa);
    ww_prepare(b, m, 1, (double *)sc->b.ptr, &pb);
    *out = ww_cpu_pair_engine(engine, m, &pa, &pb, (double *)sc->work.ptr);
    /* The reference engine's matrix can be huge: give it back rather than keep it. */
    if (engine == WW_ENGINE_CPU_REFERENCE)
        ww_buffer_free(&sc->work);
    return WW_OK;
}
