/* Synthetic control charts, following the UCI description of Alcock & Manolopoulos (1999):
 * m = 30, s = 2, r uniform in [-3, 3] drawn afresh at every time step t = 1..n, and
 *   normal      y(t) = m + r s
 *   cyclic      y(t) = m + r s + a sin(2 pi t / T),  a in [10, 15], T in [10, 15]
 *   increasing  y(t) = m + r s + g t,                g in [0.2, 0.5]
 *   decreasing  y(t) = m + r s - g t
 *   upward      y(t) = m + r s + k x,                x in [7.5, 20], k = (t >= t3), t3 in [n/3, 2n/3]
 *   downward    y(t) = m + r s - k x
 * with a, T, g, x and t3 drawn once per series. */
#include "synth.h"

static const double synth_pi = 3.14159265358979323846;

/* splitmix64: tiny, fast, and good enough to scramble seeds and draw uniforms. */
static uint64_t splitmix64_next(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* Uniform in [lo, hi), from the top 53 bits. */
static double uniform(uint64_t *state, double lo, double hi)
{
    double unit = (double)(splitmix64_next(state) >> 11) * (1.0 / 9007199254740992.0);
    return lo + (hi - lo) * unit;
}

/* sin(x) with a fixed sequence of IEEE operations, so the cyclic class comes out bit-identical on
 * every machine (libm implementations may differ in the last bit). Accurate to about 1e-16 for the
 * arguments used here (|x| < 100). */
static double portable_sin(double x)
{
    const double two_pi = 2.0 * synth_pi;
    double turns = x / two_pi;
    double whole = (double)(long long)(turns + (turns >= 0 ? 0.5 : -0.5));
    x -= whole * two_pi; /* now in [-pi, pi] */
    if (x > synth_pi / 2)
        x = synth_pi - x; /* sin(pi - x) = sin(x) */
    else if (x < -synth_pi / 2)
        x = -synth_pi - x;
    /* Taylor series to x^23: the remainder is below 1e-18 on [-pi/2, pi/2]. */
    double x2 = x * x, term = x, sum = x;
    for (int k = 1; k <= 11; k++) {
        term *= -x2 / (double)((2 * k) * (2 * k + 1));
        sum += term;
    }
    return sum;
}

const char *ww_synth_class_name(int label)
{
    static const char *const names[WW_SYNTH_CLASSES] = {"normal",           "cyclic",       "increasing trend",
                                                        "decreasing trend", "upward shift", "downward shift"};
    return label >= 1 && label <= WW_SYNTH_CLASSES ? names[label - 1] : "?";
}

void ww_synth_series(uint64_t seed, int label, size_t index, size_t length, double *out)
{
    /* One independent stream per (seed, class, index): mix the three through splitmix64. */
    uint64_t state = seed;
    state = splitmix64_next(&state) ^ (uint64_t)label * 0xD1B54A32D192ED03ULL;
    state = splitmix64_next(&state) ^ (uint64_t)index * 0xABC98388FB8FAC03ULL;
    (void)splitmix64_next(&state);

    const double m = 30.0, s = 2.0, n = (double)length;
    /* Per-series parameters, all drawn whatever the class so every class uses the stream alike. */
    double amplitude = uniform(&state, 10.0, 15.0);
    double period = uniform(&state, 10.0, 15.0);
    double gradient = uniform(&state, 0.2, 0.5);
    double shift = uniform(&state, 7.5, 20.0);
    double shift_time = uniform(&state, n / 3.0, 2.0 * n / 3.0);

    for (size_t i = 0; i < length; i++) {
        double t = (double)(i + 1);
        double y = m + uniform(&state, -3.0, 3.0) * s;
        switch (label) {
        case WW_SYNTH_CYCLIC: y += amplitude * portable_sin(2.0 * synth_pi * t / period); break;
        case WW_SYNTH_INCREASING: y += gradient * t; break;
        case WW_SYNTH_DECREASING: y -= gradient * t; break;
        case WW_SYNTH_UPWARD_SHIFT: y += t >= shift_time ? shift : 0.0; break;
        case WW_SYNTH_DOWNWARD_SHIFT: y -= t >= shift_time ? shift : 0.0; break;
        default: break; /* normal */
        }
        out[i] = y;
    }
}

void ww_synth_dataset(uint64_t seed, size_t per_class, size_t length, double *values, double *labels)
{
    size_t row = 0;
    for (int label = 1; label <= WW_SYNTH_CLASSES; label++)
        for (size_t i = 0; i < per_class; i++, row++) {
            ww_synth_series(seed, label, i, length, values + row * length);
            labels[row] = (double)label;
        }
}
