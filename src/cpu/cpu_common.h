/* Shared by the CPU engines. */
#ifndef WW_CPU_COMMON_H
#define WW_CPU_COMMON_H

#include "../common/internal.h"
#include "../measures/measures.h"

#include <math.h>

/* Hot loops are compiled for several instruction sets and the best one is chosen when the library
 * loads (GCC/Clang function multi-versioning), so one x86-64 binary runs fast on any x86-64 CPU. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(WW_NO_MULTIVERSION)
#define WW_MULTIVERSION __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define WW_MULTIVERSION
#endif

/* For an engine written once with a constant flag (windowed or not) and instantiated per value:
 * each instance is compiled as its own loop nest, the unused branches folded away. */
#if defined(__GNUC__)
#define WW_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define WW_ALWAYS_INLINE inline
#endif

/* Before a loop over the lanes of the matrix engine: its iterations touch disjoint elements (one
 * lane each) of buffers that never overlap, so gcc need not test at run time, before every
 * 32-lane step, whether they alias (those tests cost as much as a step's arithmetic). */
#if defined(__GNUC__) && !defined(__clang__)
#define WW_LANES_INDEPENDENT _Pragma("GCC ivdep")
#else
#define WW_LANES_INDEPENDENT
#endif

#define WW_INF ((double)INFINITY)

/* Pointer to sample s of a prepared series stored in time order. */
static inline const double *ww_sample(const ww_prepared *p, size_t s) { return p->values + s * p->dim; }

/* The window of one pair in the engines' terms: its radius, and whether it is narrower than the
 * matrix (a radius WW_NO_WINDOW, or one as wide as the shorter series, is no window). */
typedef struct ww_pair_window {
    size_t radius;
    int active;
} ww_pair_window;

static inline ww_pair_window ww_pair_window_of(const ww_measure *m, size_t na, size_t nb)
{
    ww_pair_window w;
    w.radius = ww_measure_radius(m, na, nb);
    w.active = ww_measure_windowed(m, na, nb);
    return w;
}

/* Row i's columns: the window's, or 1..nb. */
static inline void ww_pair_window_row(const ww_pair_window *w, size_t na, size_t nb, size_t i, size_t *lo, size_t *hi)
{
    if (w->active) {
        ww_window_row(na, nb, w->radius, i, lo, hi);
    } else {
        *lo = 1;
        *hi = nb;
    }
}

#endif
