/* Loader of ../shared/golden/twed.txt for the tests. */
#ifndef WW_GOLDEN_H
#define WW_GOLDEN_H
#include "wavewarp.h"

typedef struct ww_golden_case {
    size_t na, nb, dim;
    ww_twed_params params;
    double *a, *ta, *b, *tb;
    double expect;
} ww_golden_case;

typedef struct ww_golden_set {
    ww_golden_case *cases;
    size_t count;
} ww_golden_set;

/* 0 on success; non-zero when the file is absent or malformed. */
int ww_golden_load(ww_golden_set *set);
void ww_golden_free(ww_golden_set *set);
#endif
