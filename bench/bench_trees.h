/* The shared Swissport trees for the tree benchmarks (X-TED's pair of files: a line of preorder
 * labels and a line of children lists per tree, ../shared/data/trees). */
#ifndef WW_BENCH_TREES_H
#define WW_BENCH_TREES_H

#include "wavewarp.h"

#include <stdio.h>
#include <string.h>

/* Reads up to max trees of swissport_nodes_N.txt and swissport_nodes_adj_N.txt in dir into
 * trees (labels mapped by d); returns how many. */
static inline size_t bench_read_swissport(ww_labels *d, const char *dir, int n, ww_tree *trees, size_t max)
{
    static char line_a[1 << 21], line_b[1 << 21];
    char lp[4096], ap[4096];
    snprintf(lp, sizeof lp, "%s/swissport/swissport_nodes_%d.txt", dir, n);
    snprintf(ap, sizeof ap, "%s/swissport/swissport_nodes_adj_%d.txt", dir, n);
    FILE *fl = fopen(lp, "r"), *fa = fopen(ap, "r");
    size_t count = 0;
    while (fl && fa && count < max && fgets(line_a, sizeof line_a, fl) && fgets(line_b, sizeof line_b, fa))
        if (ww_tree_parse_xted(d, line_a, strlen(line_a), line_b, strlen(line_b), &trees[count]) == WW_OK)
            count++;
    if (fl)
        fclose(fl);
    if (fa)
        fclose(fa);
    return count;
}

#endif
