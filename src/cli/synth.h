/* The synthetic control chart data set (Alcock & Manolopoulos 1999, UCI), generated here so the
 * demo and the tests need no download. Deterministic: the same seed gives the same numbers on
 * every machine (own PRNG, no libc rand). */
#ifndef WW_CLI_SYNTH_H
#define WW_CLI_SYNTH_H

#include <stddef.h>
#include <stdint.h>

#define WW_SYNTH_CLASSES 6

/* Class labels 1..6, in this order (as in the UCI file). */
enum {
    WW_SYNTH_NORMAL = 1,
    WW_SYNTH_CYCLIC = 2,
    WW_SYNTH_INCREASING = 3,
    WW_SYNTH_DECREASING = 4,
    WW_SYNTH_UPWARD_SHIFT = 5,
    WW_SYNTH_DOWNWARD_SHIFT = 6
};

/* Name of a class label ("normal", "cyclic", ...), or "?" outside 1..6. */
const char *ww_synth_class_name(int label);

/* One series of `length` samples of class `label` (1..6). Series `index` of a class under `seed`
 * is always the same numbers, whatever else is generated, so a set with 50 per class is the first
 * 50 of a set with 100 per class. */
void ww_synth_series(uint64_t seed, int label, size_t index, size_t length, double *out);

/* per_class series of every class, in class blocks: values (6 * per_class * length, row-major)
 * and labels (6 * per_class). */
void ww_synth_dataset(uint64_t seed, size_t per_class, size_t length, double *values, double *labels);

#endif
