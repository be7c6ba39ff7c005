/* Tree edit distance (Zhang and Shasha 1989): the forest-distance recurrence, written once for the
 * CPU engine and a CUDA kernel. Nodes are numbered in postorder; fd[x][y] is the distance between
 * the prefix forests of x and y nodes of the two subtrees of a keyroot pair, td[i][j] the distance
 * between the subtrees rooted at i and j. */
#ifndef WW_MEASURES_TED_H
#define WW_MEASURES_TED_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#if defined(__CUDACC__)
#define WW_TED_FN static inline __host__ __device__
#else
#define WW_TED_FN static inline
#endif

/* One cell: node i deleted (up + del), node j inserted (left + ins), or i matched with j at cost
 * `match`: when both prefix forests are trees rooted at i and j, fd[x-1][y-1] plus the relabelling
 * cost (and the cell is also td[i][j]); else fd[l(i) - l1][l(j) - l2] + td[i][j], the forests left
 * of the two subtrees plus the subtrees' distance. A min is exact, so a backtrack that recomputes
 * the three sums finds the cell's value among them. */
WW_TED_FN double ww_ted_cell(double up, double left, double match, double del, double ins)
{
    /* the left neighbour enters last: the chain from one cell to the next is one add and one min */
    const double d = up + del;
    const double m = d < match ? d : match;
    const double i = left + ins;
    return i < m ? i : m;
}

/* Relabelling i to j: free for equal labels. */
WW_TED_FN double ww_ted_relabel(int32_t la, int32_t lb, double relabel) { return la == lb ? 0.0 : relabel; }

/* The same row in prefix-minimum form, for tables in exact integers (costs that are integers after
 * a power-of-two scale, values far from overflow). With m[y] = min(up[y] + del, match[y]) and
 * m[0] the row's first cell, cell y of the row is min over y' <= y of m[y'] + (y - y') ins, so
 * u[y] = cell - y ins is the running minimum of m[y'] - y' ins: the cells of a row no longer wait
 * on their left neighbours' additions (the candidates of a whole row are independent; only a
 * running minimum is serial). Exact integers make it the same value as ww_ted_cell's chain. */
WW_TED_FN int32_t ww_ted_row_candidate(int32_t up, int32_t match, int32_t del, int32_t offset)
{
    const int32_t d = up + del;
    return (d < match ? d : match) - offset;
}

/* ww_ted_cell in exact int32 (the tables of costs that are integers after a power-of-two scale):
 * the same min of the same three sums, exact. */
WW_TED_FN int32_t ww_ted_cell_exact(int32_t up, int32_t left, int32_t match, int32_t del, int32_t ins)
{
    const int32_t d = up + del;
    const int32_t m = d < match ? d : match;
    const int32_t i = left + ins;
    return i < m ? i : m;
}

/* When the tables of a pair of na and nb nodes may be exact int32 (the CPU and GPU engines share
 * the rule, so both pick the same tables): every cost an integer after one power-of-two scale 2^k
 * (k <= 20; *unit = 2^-k) and every table value far inside int32 (a value is at most rows * del +
 * cols * ins; a match adds two, a row candidate subtracts up to cols * ins: 2^29 leaves room).
 * Those tables give the double tables' values exactly: sums of multiples of unit far below 2^53
 * round nothing. Returns 1 and the scaled costs, or 0. */
WW_TED_FN int ww_ted_exact_costs(double del, double ins, double ren, size_t na, size_t nb, int32_t *idel,
                                 int32_t *iins, int32_t *iren, double *unit)
{
    for (int k = 0; k <= 20; k++) {
        const double s = ldexp(1.0, k), d = del * s, i = ins * s, r = ren * s;
        if (d != floor(d) || i != floor(i) || r != floor(r))
            continue;
        if ((double)(na + nb + 2) * (d + i + r) > 536870912.0)
            return 0;
        *idel = (int32_t)d;
        *iins = (int32_t)i;
        *iren = (int32_t)r;
        *unit = ldexp(1.0, -k);
        return 1;
    }
    return 0;
}

#endif
