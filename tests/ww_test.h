/* A minimal test harness: each test is a function; CHECK records failures without stopping.
 * The runner prints one line per failed check and ends with "N passed, N failed, N skipped". */
#ifndef WW_TEST_H
#define WW_TEST_H

#include "wavewarp.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <math.h>
#include <stdio.h>

extern int ww_test_failures; /* failed checks in the current test */
extern int ww_test_skipped;  /* set by SKIP() */

#define CHECK(cond)                                                                            \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            ww_test_failures++;                                                                \
            fprintf(stderr, "  %s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond);        \
        }                                                                                      \
    } while (0)

#define CHECK_STATUS(expr, expected)                                                           \
    do {                                                                                       \
        ww_status got_ = (expr);                                                               \
        if (got_ != (expected)) {                                                              \
            ww_test_failures++;                                                                \
            fprintf(stderr, "  %s:%d: %s returned %d (%s), expected %d (%s)\n", __FILE__,     \
                    __LINE__, #expr, (int)got_, ww_strerror(got_), (int)(expected),            \
                    ww_strerror(expected));                                                    \
        }                                                                                      \
    } while (0)

/* |got - want| <= rel * max(1, |want|) */
#define CHECK_CLOSE(got, want, rel)                                                            \
    do {                                                                                       \
        double g_ = (got), w_ = (want);                                                        \
        double s_ = fabs(w_) > 1.0 ? fabs(w_) : 1.0;                                           \
        if (!(fabs(g_ - w_) <= (rel) * s_)) {                                                  \
            ww_test_failures++;                                                                \
            fprintf(stderr, "  %s:%d: %s = %.17g, expected %.17g (rel tol %g)\n", __FILE__,   \
                    __LINE__, #got, g_, w_, (double)(rel));                                    \
        }                                                                                      \
    } while (0)

#define SKIP(why)                                                                              \
    do {                                                                                       \
        fprintf(stderr, "  skipped: %s\n", why);                                               \
        ww_test_skipped = 1;                                                                   \
        return;                                                                                \
    } while (0)

/* Deterministic random numbers for tests (xorshift64*), seeded per test. */
typedef struct ww_rng {
    unsigned long long s;
} ww_rng;
static inline double ww_rng_uniform(ww_rng *r) /* [0, 1) */
{
    r->s ^= r->s >> 12;
    r->s ^= r->s << 25;
    r->s ^= r->s >> 27;
    return (double)((r->s * 2685821657736338717ULL) >> 11) * (1.0 / 9007199254740992.0);
}
static inline size_t ww_rng_below(ww_rng *r, size_t n) { return (size_t)(ww_rng_uniform(r) * (double)n); }

/* A context for a test (threads <= 0: all cores); a failure is a failed check and gives NULL. */
ww_ctx *ww_test_ctx(ww_backend backend, ww_engine engine, int threads);

/* Path of the shared folder (../shared next to the checkout), or NULL when absent. */
const char *ww_test_shared_dir(void);

/* Prototypes of every test function. */
#define X(name) void name(void);
#include "test_list.h"
#undef X

/* The band of lengths n, m and radius r as a boolean n x m matrix, from the definition: every step
 * of the long series against the short one, +- r. r = SIZE_MAX: every cell. Shared by the tests of
 * every measure's window (test_measures.c, test_softdtw.c); the caller frees it. */
static inline unsigned char *ww_test_band_cells(size_t n, size_t m, size_t r)
{
    unsigned char *in = (unsigned char *)calloc(n * m, 1);
    if (r == SIZE_MAX || (n == m && r >= n)) {
        memset(in, 1, n * m);
        return in;
    }
    if (n == m) {
        for (size_t p = 0; p < n; p++)
            for (size_t q = 0; q < m; q++)
                in[p * m + q] = (p > q ? p - q : q - p) <= r;
        return in;
    }
    const size_t l = n > m ? n : m, s = n > m ? m : n;
    for (size_t step = 0; step <= l; step++) {
        const size_t L = (size_t)((unsigned long long)step * l / (l + 1));
        const size_t S = (size_t)((unsigned long long)step * s / (l + 1));
        const size_t k0 = S > r ? S - r : 0, k1 = S + r < s - 1 ? S + r : s - 1;
        for (size_t k = k0; k <= k1; k++) {
            const size_t p = n > m ? L : k, q = n > m ? k : L;
            in[p * m + q] = 1;
        }
    }
    return in;
}


#endif
