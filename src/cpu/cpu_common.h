/* Shared by the CPU engines. */
#ifndef WW_CPU_COMMON_H
#define WW_CPU_COMMON_H

#include "../common/internal.h"
#include "../common/twed_recurrence.h"

#include <math.h>

/* Hot loops are compiled for several instruction sets and the best one is chosen when the library
 * loads (GCC/Clang function multi-versioning), so one x86-64 binary runs fast on any x86-64 CPU. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(WW_NO_MULTIVERSION)
#define WW_MULTIVERSION __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define WW_MULTIVERSION
#endif

#define WW_INF ((double)INFINITY)

/* Pointer to sample s of a prepared series stored in time order. */
static inline const double *ww_sample(const ww_prepared *p, size_t s) { return p->values + s * p->dim; }

#endif
