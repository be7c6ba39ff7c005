/* Measures: constructors, checks, names, and what the host code needs to know of each (its
 * traits, its coefficients in the computing type, the cells its window covers). */
#include "internal.h"
#include "../measures/measures.h"

#include <math.h>
#include <string.h>

ww_measure ww_measure_twed(double nu, double lambda, int degree)
{
    ww_measure m;
    memset(&m, 0, sizeof m);
    m.kind = WW_MEASURE_TWED;
    m.window = WW_NO_WINDOW;
    m.window_fraction = -1.0;
    m.params.twed.nu = nu;
    m.params.twed.lambda = lambda;
    m.params.twed.degree = degree;
    return m;
}

ww_measure ww_measure_dtw(void)
{
    ww_measure m;
    memset(&m, 0, sizeof m);
    m.kind = WW_MEASURE_DTW;
    m.window = WW_NO_WINDOW;
    m.window_fraction = -1.0;
    return m;
}

ww_measure ww_measure_softdtw(double gamma)
{
    ww_measure m;
    memset(&m, 0, sizeof m);
    m.kind = WW_MEASURE_SOFTDTW;
    m.window = WW_NO_WINDOW;
    m.window_fraction = -1.0;
    m.params.softdtw.gamma = gamma;
    m.params.softdtw.divergence = 0;
    return m;
}

ww_status ww_measure_set_divergence(ww_measure *m, int on)
{
    if (m == NULL)
        return WW_ERR_NULL_POINTER;
    if (m->kind != WW_MEASURE_SOFTDTW)
        return WW_ERR_MEASURE;
    m->params.softdtw.divergence = on != 0;
    return WW_OK;
}

ww_status ww_measure_set_window(ww_measure *m, size_t radius)
{
    if (m == NULL)
        return WW_ERR_NULL_POINTER;
    m->window = radius;
    m->window_fraction = -1.0;
    return WW_OK;
}

ww_status ww_measure_set_window_fraction(ww_measure *m, double fraction)
{
    if (m == NULL)
        return WW_ERR_NULL_POINTER;
    if (!(fraction >= 0.0 && fraction <= 1.0))
        return WW_ERR_PARAM;
    m->window = WW_NO_WINDOW;
    m->window_fraction = fraction;
    return WW_OK;
}

size_t ww_measure_radius(const ww_measure *m, size_t n, size_t m_length)
{
    if (m == NULL)
        return WW_NO_WINDOW;
    if (m->window != WW_NO_WINDOW || !(m->window_fraction >= 0.0))
        return m->window;
    /* aeon: int(window * min(n, m)), the product in double (a fraction above 1, which
     * ww_measure_check refuses, gives the whole matrix rather than an out-of-range conversion) */
    const size_t shorter = n < m_length ? n : m_length;
    if (!(m->window_fraction <= 1.0))
        return WW_NO_WINDOW;
    return (size_t)(m->window_fraction * (double)shorter);
}

ww_twed_params ww_twed_params_default(void)
{
    ww_twed_params p;
    p.nu = 0.001;
    p.lambda = 1.0;
    p.degree = 2;
    return p;
}

ww_status ww_twed_params_check(const ww_twed_params *p)
{
    if (p == NULL)
        return WW_ERR_NULL_POINTER;
    if (!isfinite(p->nu) || !isfinite(p->lambda) || p->nu < 0 || p->lambda < 0 || p->degree < 1)
        return WW_ERR_PARAM;
    return WW_OK;
}

ww_status ww_measure_check(const ww_measure *m)
{
    if (m == NULL)
        return WW_ERR_NULL_POINTER;
    if (m->window == WW_NO_WINDOW && m->window_fraction >= 0.0 && !(m->window_fraction <= 1.0))
        return WW_ERR_PARAM;
    if (isnan(m->window_fraction))
        return WW_ERR_PARAM;
    switch (m->kind) {
    case WW_MEASURE_TWED: return ww_twed_params_check(&m->params.twed);
    case WW_MEASURE_DTW: return WW_OK;
    case WW_MEASURE_SOFTDTW: {
        const double g = m->params.softdtw.gamma;
        /* 1 / gamma must be finite too */
        return isfinite(g) && g > 0 && isfinite(1.0 / g) ? WW_OK : WW_ERR_PARAM;
    }
    }
    return WW_ERR_MEASURE;
}

const ww_measure_traits *ww_measure_traits_of(ww_measure_kind kind)
{
    static const ww_measure_traits table[] = {
#define X(tok, TOK, KIND)                                                                                  \
    {KIND, #tok, WW_##TOK##_HAS_AUX, WW_##TOK##_CARRIES_BEFORE, WW_##TOK##_USES_STAMPS, WW_##TOK##_SYMMETRIC, \
     WW_##TOK##_ZERO_SELF},
        WW_FOR_EACH_MEASURE(X)
#undef X
    };
    for (size_t k = 0; k < sizeof table / sizeof table[0]; k++)
        if (table[k].kind == kind)
            return &table[k];
    return NULL;
}

const char *ww_measure_name(const ww_measure *m)
{
    const ww_measure_traits *t = m ? ww_measure_traits_of(m->kind) : NULL;
    return t ? t->name : "unknown";
}

ww_coef_f64 ww_measure_coef_f64(const ww_measure *m)
{
    ww_coef_f64 c;
    memset(&c, 0, sizeof c);
    c.degree = 2;
    if (m->kind == WW_MEASURE_TWED) {
        c.nu = m->params.twed.nu;
        c.lambda = m->params.twed.lambda;
        c.degree = m->params.twed.degree;
    }
    if (m->kind == WW_MEASURE_SOFTDTW) {
        c.gamma = m->params.softdtw.gamma;
        c.inv_gamma = 1.0 / c.gamma;
    }
    return c;
}

ww_coef_f32 ww_measure_coef_f32(const ww_measure *m)
{
    const ww_coef_f64 d = ww_measure_coef_f64(m);
    ww_coef_f32 c;
    c.nu = (float)d.nu;
    c.lambda = (float)d.lambda;
    c.degree = d.degree;
    c.gamma = (float)d.gamma;
    c.inv_gamma = (float)d.inv_gamma;
    return c;
}

int ww_measure_windowed(const ww_measure *m, size_t n, size_t m_length)
{
    /* a radius of the shorter length or more leaves the whole matrix (window.h) */
    return ww_measure_radius(m, n, m_length) < (n < m_length ? n : m_length);
}

int ww_measure_has_window(const ww_measure *m) { return m->window != WW_NO_WINDOW || m->window_fraction >= 0.0; }

uint64_t ww_measure_cells(const ww_measure *m, size_t n, size_t m_length)
{
    /* n m saturates; so do lengths a window's formulas cannot take, which every computing call
     * refuses (WW_ERR_OVERFLOW): their band has no cell count to give */
    const uint64_t all = m_length != 0 && (uint64_t)n > UINT64_MAX / m_length ? UINT64_MAX : (uint64_t)n * m_length;
    if (!ww_measure_windowed(m, n, m_length) || n >= WW_WINDOW_MAX_LENGTH || m_length >= WW_WINDOW_MAX_LENGTH)
        return all;
    return ww_window_cells(n, m_length, ww_measure_radius(m, n, m_length));
}
