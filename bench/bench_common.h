/* Timing helpers shared by the benchmark programs. */
#ifndef WW_BENCH_COMMON_H
#define WW_BENCH_COMMON_H

#include <stdlib.h>
#include <time.h>

/* Seconds on the monotonic clock. */
static inline double bench_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static inline int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The median of n times (sorts them). */
static inline double bench_median(double *times, size_t n)
{
    qsort(times, n, sizeof(double), bench_cmp_double);
    return times[n / 2];
}

#endif
