/* Tree edit distance on the CPU: Zhang and Shasha's keyroot algorithm. For every pair of keyroots
 * (k1, k2), in an order where the subtrees inside come first, one forest-distance table of
 * (|T(k1)| + 1) x (|T(k2)| + 1) cells fills the tree distances td[i][j] of the nodes on the two
 * leftmost paths. The work is the product of the trees' keyroot subtree sums; the engine takes the
 * cheaper of the left decomposition and the right one (both trees mirrored, same distance).
 *
 * Tables are int32 when the costs allow exact integers (unit costs, and any costs that are
 * integers after a power-of-two scale), else double; both give the same values. Exact pairs take
 * the keyroots of one or two nodes in closed form (no table).
 *
 * One pair: the keyroot pairs by dependency depth (level of k1 + level of k2; pairs of one depth
 * write disjoint entries of td and read only shallower ones) over the threads, the largest tables
 * of a depth first, the few that would hold a depth up computed by all threads together. Many
 * pairs: one pair per thread; a block of a few pairs: one after the other, each over all threads. */
#include "../common/ted_internal.h"
#include "../measures/ted.h"
#include "cpu_common.h"
#include "work_queue.h"

#include <math.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

/* Below this many cells (about half a millisecond on one core) a pair is not worth waking threads
 * for: the threads meet at a barrier after each dependency depth. */
#define TED_PARALLEL_CELLS 5e5

size_t ww_ted_prepared_ints(size_t n) { return 5 * n; }

/* Temporaries of ww_ted_prepare: subtree size, depth, postorder parent and the deepest keyroot
 * level below each node. */
static size_t prepare_tmp_ints(size_t n) { return 4 * n; }

static void prepare_with(const ww_tree *t, int mirrored, int32_t *storage, int32_t *tmp, ww_ted_prepared *out)
{
    const int32_t n = (int32_t)t->count;
    int32_t *label = storage, *leftmost = storage + n, *preorder = storage + 2 * n, *keyroots = storage + 3 * n,
            *level = storage + 4 * n;
    int32_t *size = tmp, *depth = tmp + n, *post_parent = tmp + 2 * n, *below = tmp + 3 * n;
    for (int32_t v = 0; v < n; v++)
        size[v] = 1;
    for (int32_t v = n - 1; v > 0; v--)
        size[t->parent[v]] += size[v];
    /* the postorder of the mirrored tree is the preorder reversed */
    for (int32_t v = 0; v < n; v++) {
        depth[v] = v == 0 ? 0 : depth[t->parent[v]] + 1;
        const int32_t post = mirrored ? n - 1 - v : v + size[v] - 1 - depth[v];
        label[post] = t->labels ? t->labels[v] : 0;
        leftmost[post] = post - size[v] + 1;
        preorder[post] = v;
    }
    for (int32_t v = 0; v < n; v++) {
        const int32_t post = mirrored ? n - 1 - v : v + size[v] - 1 - depth[v];
        const int32_t p = t->parent[v];
        post_parent[post] = p < 0 ? -1 : (mirrored ? n - 1 - p : p + size[p] - 1 - depth[p]);
        below[post] = -1;
    }
    /* keyroots: the root and every node that is not the first child of its parent */
    int32_t count = 0;
    double cost = 0;
    for (int32_t k = 0; k < n; k++) {
        const int32_t p = post_parent[k];
        int32_t inner = below[k];
        if (p < 0 || leftmost[p] != leftmost[k]) {
            inner = below[k] + 1;
            level[count] = inner;
            keyroots[count++] = k;
            cost += (double)(k - leftmost[k] + 1);
        }
        if (p >= 0 && inner > below[p])
            below[p] = inner;
    }
    out->n = n;
    out->label = label;
    out->leftmost = leftmost;
    out->preorder = preorder;
    out->keyroots = keyroots;
    out->level = level;
    out->keyroot_count = count;
    out->cost = cost;
}

void ww_ted_prepare(const ww_tree *t, int mirrored, int32_t *storage, ww_ted_prepared *out)
{
    /* the temporaries follow the storage's 5n entries (callers of this entry point give 9n) */
    prepare_with(t, mirrored, storage, storage + ww_ted_prepared_ints(t->count), out);
}

size_t ww_ted_table_doubles(size_t na, size_t nb)
{
    size_t td, fd;
    if (!ww_mul_size(na, nb, &td) || !ww_mul_size(na + 1, nb + 1, &fd) || td > SIZE_MAX - fd)
        return 0;
    return td + fd;
}

/* ---------------------------------------------------------------- the tables */

typedef struct ted_job {
    ww_ted_prepared A, B;
    double del, ins, ren;
    /* exact: every cost is an integer after one power-of-two scale (unit = its inverse) and every
     * value of the tables stays far inside int32: the tables are int32 (half the memory traffic,
     * integer adds, rows in prefix-minimum form) and give the double tables' values exactly, since
     * those add multiples of unit far below 2^53, which rounds nothing. */
    int exact;
    int32_t idel, iins, iren;
    double unit;
    double *td;   /* A.n x B.n, row-major by postorder numbers (double tables) */
    int32_t *itd; /* the same, exact tables */
    /* Exact tables are computed with the longer side as columns (a table's values do not depend
     * on its orientation when they are exact): most rows of most tables are a few cells long, and
     * a row's fixed cost is then paid min(rows, cols) times. The tree distances are kept in both
     * layouts (the second in td's other half), so every table reads them along its rows. */
    struct table_view {
        const ww_ted_prepared *X, *Y; /* rows, columns */
        int32_t *td, *td_t;           /* X.n x Y.n, Y.n x X.n */
        int32_t del, ins, ren;        /* deleting a node of X, inserting one of Y */
    } view[2];                        /* A x B, B x A */
} ted_job;

static void choose_exact(ted_job *J, size_t na, size_t nb)
{
    /* the rule of src/measures/ted.h, which the GPU engine applies too */
    J->exact = ww_ted_exact_costs(J->del, J->ins, J->ren, na, nb, &J->idel, &J->iins, &J->iren, &J->unit);
}

/* Cells y0 .. y1 - 1 of row x of the forest-distance table of the subtrees rooted at k1 and k2
 * (leftmost leaves l1, l2; rows of w doubles), the rows above and the cells left of y0 done (y0 = 1:
 * the row's first cell too). A table is its rows in order; a table shared by threads is blocks of
 * rows and columns in the same order per row, so the same operations give the same values. */
static WW_ALWAYS_INLINE void double_row_cells(const ted_job *J, int32_t l1, int32_t l2, size_t w, double *fd, size_t x,
                                              size_t y0, size_t y1)
{
    const double del = J->del, ins = J->ins, ren = J->ren;
    const int32_t *col_leftmost = J->B.leftmost + l2, *col_label = J->B.label + l2;
    const int32_t i = l1 + (int32_t)x - 1, li = J->A.leftmost[i];
    double *row = fd + x * w;
    const double *up = row - w;
    double *td_row = J->td + (size_t)i * (size_t)J->B.n + (size_t)l2; /* td_row[y - 1]: td[i][l2 + y - 1] */
    double left;
    if (y0 == 1) {
        left = up[0] + del;
        row[0] = left;
    } else {
        left = row[y0 - 1];
    }
    if (li == l1) {
        /* i on the leftmost path: against the leftmost path of k2, both forests are trees */
        const int32_t la = J->A.label[i];
        for (size_t y = y0; y < y1; y++) {
            const int32_t lj = col_leftmost[y - 1];
            if (lj == l2) {
                left = ww_ted_cell(up[y], left, up[y - 1] + ww_ted_relabel(la, col_label[y - 1], ren), del, ins);
                td_row[y - 1] = left;
            } else {
                left = ww_ted_cell(up[y], left, fd[lj - l2] + td_row[y - 1], del, ins);
            }
            row[y] = left;
        }
    } else {
        const double *sub = fd + (size_t)(li - l1) * w - l2; /* sub[lj]: fd[l(i) - l1][l(j) - l2] */
        for (size_t y = y0; y < y1; y++) {
            left = ww_ted_cell(up[y], left, sub[col_leftmost[y - 1]] + td_row[y - 1], del, ins);
            row[y] = left;
        }
    }
}

static void double_first_row(double *fd, size_t cols, double ins)
{
    fd[0] = 0;
    for (size_t y = 1; y <= cols; y++)
        fd[y] = fd[y - 1] + ins;
}

/* The forest-distance table of the subtrees rooted at k1 and k2 (keyroots, or any nodes when the
 * mapping recomputes a table: the tree distances it writes are then the same values again). fd
 * holds (|T(k1)| + 1) x (|T(k2)| + 1) doubles. */
static void forest_table(const ted_job *J, int32_t k1, int32_t k2, double *fd)
{
    const int32_t l1 = J->A.leftmost[k1], l2 = J->B.leftmost[k2];
    const size_t rows = (size_t)(k1 - l1) + 1, cols = (size_t)(k2 - l2) + 1;
    double_first_row(fd, cols, J->ins);
    for (size_t x = 1; x <= rows; x++)
        double_row_cells(J, l1, l2, cols + 1, fd, x, 1, cols + 1);
}

/* Rows of at least this many columns go in two passes (candidates vectorised, then the running
 * minimum); shorter ones (most rows of most tables: the keyroots of small subtrees) as one chain,
 * whose integer add and min cost less than the two passes' setup. */
#define TED_SCAN_COLUMNS 48

static inline int32_t min_i32(int32_t x, int32_t y) { return x < y ? x : y; }

/* An exact table of a view: its constants, read once per table, not once per row. */
typedef struct exact_table {
    const int32_t *x_leftmost, *x_label, *col_leftmost, *col_label; /* col_*: from column 1 */
    int32_t *td, *td_t;
    size_t x_n, y_n, w;
    int32_t l1, l2, del, ins, ren;
} exact_table;

static WW_ALWAYS_INLINE exact_table exact_table_of(const struct table_view *V, int32_t k1, int32_t k2)
{
    exact_table T;
    T.l1 = V->X->leftmost[k1];
    T.l2 = V->Y->leftmost[k2];
    T.x_leftmost = V->X->leftmost;
    T.x_label = V->X->label;
    T.col_leftmost = V->Y->leftmost + T.l2;
    T.col_label = V->Y->label + T.l2;
    T.td = V->td;
    T.td_t = V->td_t;
    T.x_n = (size_t)V->X->n;
    T.y_n = (size_t)V->Y->n;
    T.w = (size_t)(k2 - T.l2) + 2;
    T.del = V->del;
    T.ins = V->ins;
    T.ren = V->ren;
    return T;
}

/* forest_table's row cells in exact int32 (as double_row_cells). Long segments off the leftmost
 * path: the candidates in one pass that the compiler vectorises (the prefix forests left of the
 * subtrees gathered by leftmost leaf), then the running minimum; other rows: ww_ted_cell's chain
 * in integers. */
static WW_ALWAYS_INLINE void exact_row_cells(const exact_table *T, int32_t *fd, size_t x, size_t y0, size_t y1)
{
    const int32_t del = T->del, ins = T->ins, ren = T->ren, l1 = T->l1, l2 = T->l2;
    const size_t w = T->w, x_n = T->x_n;
    const int32_t *restrict col_leftmost = T->col_leftmost, *restrict col_label = T->col_label;
    const int32_t i = l1 + (int32_t)x - 1, li = T->x_leftmost[i];
    int32_t *restrict row = fd + x * w;
    const int32_t *restrict up = row - w;
    int32_t *restrict td_row = T->td + (size_t)i * T->y_n + (size_t)l2;
    int32_t *td_column = T->td_t + (size_t)l2 * x_n + (size_t)i; /* [(y - 1) * X.n]: td_t[j][i] */
    int32_t left;
    if (y0 == 1) {
        left = up[0] + del;
        row[0] = left;
    } else {
        left = row[y0 - 1];
    }
    if (li == l1) {
        const int32_t la = T->x_label[i];
        for (size_t y = y0; y < y1; y++) {
            const int32_t lj = col_leftmost[y - 1];
            if (lj == l2) {
                const int32_t match = up[y - 1] + (la == col_label[y - 1] ? 0 : ren);
                left = min_i32(min_i32(up[y] + del, match), left + ins);
                td_row[y - 1] = left;
                td_column[(y - 1) * x_n] = left;
            } else {
                left = min_i32(min_i32(up[y] + del, fd[lj - l2] + td_row[y - 1]), left + ins);
            }
            row[y] = left;
        }
    } else if (y1 - y0 < TED_SCAN_COLUMNS) {
        const int32_t *restrict sub = fd + (size_t)(li - l1) * w - l2;
        for (size_t y = y0; y < y1; y++) {
            left = min_i32(min_i32(up[y] + del, sub[col_leftmost[y - 1]] + td_row[y - 1]), left + ins);
            row[y] = left;
        }
    } else {
        const int32_t *restrict sub = fd + (size_t)(li - l1) * w - l2;
        WW_LANES_INDEPENDENT
        for (size_t y = y0; y < y1; y++)
            row[y] = ww_ted_row_candidate(up[y], sub[col_leftmost[y - 1]] + td_row[y - 1], del, (int32_t)y * ins);
        /* the running minimum of the candidates, from the cell left of y0 (its candidate form) */
        int32_t u = left - (int32_t)(y0 - 1) * ins, offset = (int32_t)(y0 - 1) * ins;
        for (size_t y = y0; y < y1; y++) {
            const int32_t v = row[y];
            u = v < u ? v : u;
            offset += ins;
            row[y] = u + offset;
        }
    }
}

static void exact_first_row(int32_t *fd, size_t cols, int32_t ins)
{
    fd[0] = 0;
    for (size_t y = 1; y <= cols; y++)
        fd[y] = fd[y - 1] + ins;
}

/* forest_table in exact int32. Inlined into the loops over tables, which are compiled per
 * instruction set (one dispatch per loop, not per table: most tables are a few dozen cells). */
static WW_ALWAYS_INLINE void forest_table_exact(const struct table_view *V, int32_t k1, int32_t k2, int32_t *fd)
{
    const int32_t l1 = V->X->leftmost[k1], l2 = V->Y->leftmost[k2];
    const size_t rows = (size_t)(k1 - l1) + 1, cols = (size_t)(k2 - l2) + 1;
    if (rows == 1) {
        /* k1 a leaf (a third of the tables, most of them a few cells): the distance from a single
         * node to a tree T(j) is (|T(j)| - 1) ins plus the cheaper of del + ins and the
         * relabelling of k1 to the best node of T(j): 0 once T(j) = [l2, j] holds k1's label */
        const int32_t *col_leftmost = V->Y->leftmost + l2, *col_label = V->Y->label + l2;
        const int32_t la = V->X->label[k1], base = V->del + V->ins, ins = V->ins, ren = V->ren;
        size_t found = cols + 1; /* the first column with k1's label */
        for (size_t y = 1; y <= cols; y++)
            if (col_label[y - 1] == la) {
                found = y;
                break;
            }
        int32_t *td_row = V->td + (size_t)k1 * (size_t)V->Y->n + (size_t)l2;
        int32_t *td_column = V->td_t + (size_t)l2 * (size_t)V->X->n + (size_t)k1;
        for (size_t y = 1; y <= cols; y++)
            if (col_leftmost[y - 1] == l2) {
                const int32_t best = y >= found ? 0 : ren;
                const int32_t d = (int32_t)(y - 1) * ins + (best < base ? best : base);
                td_row[y - 1] = d;
                td_column[(y - 1) * (size_t)V->X->n] = d;
            }
        return;
    }
    const exact_table T = exact_table_of(V, k1, k2);
    exact_first_row(fd, cols, V->ins);
    for (size_t x = 1; x <= rows; x++)
        exact_row_cells(&T, fd, x, 1, cols + 1);
}

/* Keyroots of two nodes (a node with one child, a leaf: in XML an element holding a text), exact
 * tables: the tree distances of both nodes against every subtree T(j) of the other tree follow
 * from the mappings of a two-node path, in one pass over the other tree instead of one table per
 * keyroot of it (134,000 of the 160,000 tables of the 1000-node Swissport pair). With p the parent
 * and c the child, s = |T(j)|: nothing mapped, 2 del + s ins; one node mapped, del + (s - 1) ins
 * plus 0 when T(j) holds the label of p or c, else ren; both mapped (c to a proper descendant of
 * p's image), (s - 2) ins plus 0, ren or 2 ren by the labels found; and c alone against T(j),
 * (s - 1) ins + min(del + ins, 0 or ren). T(j) is the postorder range [l(j), j], so the last
 * position of each label of interest, scanned in postorder, answers "is it in T(j)". */
static int32_t subtree_size(const ww_ted_prepared *t, int32_t k) { return k - t->leftmost[k] + 1; }

static void two_node_rows(const struct table_view *V, int32_t k)
{
    const int32_t c = k - 1, p = k, lc = V->X->label[c], lp = V->X->label[p];
    const int32_t del = V->del, ins = V->ins, ren = V->ren;
    const ww_ted_prepared *Y = V->Y;
    const size_t x_n = (size_t)V->X->n;
    int32_t *row_c = V->td + (size_t)c * (size_t)Y->n, *row_p = V->td + (size_t)p * (size_t)Y->n;
    int32_t last_c = -1, last_p = -1, last_p_over_c = -1, last_p_inner = -1;
    for (int32_t j = 0; j < Y->n; j++) {
        const int32_t l = Y->leftmost[j], label = Y->label[j], s = j - l + 1;
        const int32_t c_below = last_c; /* the last label-c node before j */
        if (label == lp) {
            if (c_below >= l)
                last_p_over_c = j; /* a p-labelled node over a c-labelled one */
            if (l < j)
                last_p_inner = j; /* a p-labelled node with descendants */
            last_p = j;
        }
        if (label == lc)
            last_c = j;
        const int has_c = last_c >= l, has_p = last_p >= l;
        const int32_t dc = (s - 1) * ins + min_i32(del + ins, has_c ? 0 : ren);
        int32_t dp = min_i32(2 * del + s * ins, del + (s - 1) * ins + (has_c || has_p ? 0 : ren));
        if (s >= 2) {
            const int32_t relabel = last_p_over_c >= l ? 0 : last_p_inner >= l || c_below >= l ? ren : 2 * ren;
            dp = min_i32(dp, (s - 2) * ins + relabel);
        }
        row_c[j] = dc;
        row_p[j] = dp;
        V->td_t[(size_t)j * x_n + (size_t)c] = dc;
        V->td_t[(size_t)j * x_n + (size_t)p] = dp;
    }
}

/* Before any table of an exact pair: the two-node keyroots' passes (their tables are skipped). */
static void two_node_passes(const ted_job *J)
{
    for (int32_t a = 0; a < J->A.keyroot_count; a++)
        if (subtree_size(&J->A, J->A.keyroots[a]) == 2)
            two_node_rows(&J->view[0], J->A.keyroots[a]);
    for (int32_t b = 0; b < J->B.keyroot_count; b++)
        if (subtree_size(&J->B, J->B.keyroots[b]) == 2)
            two_node_rows(&J->view[1], J->B.keyroots[b]);
}

static WW_ALWAYS_INLINE void one_table(const ted_job *J, int32_t k1, int32_t k2, void *fd)
{
    if (J->exact) {
        if (subtree_size(&J->A, k1) == 2 || subtree_size(&J->B, k2) == 2)
            return; /* two_node_rows wrote its tree distances */
        if (k1 - J->A.leftmost[k1] > k2 - J->B.leftmost[k2])
            forest_table_exact(&J->view[1], k2, k1, (int32_t *)fd);
        else
            forest_table_exact(&J->view[0], k1, k2, (int32_t *)fd);
    } else
        forest_table(J, k1, k2, (double *)fd);
}

/* The tree distances of a job in td (A.n x B.n doubles' room: both layouts of int32). */
static void set_tree_distances(ted_job *J, void *td)
{
    J->td = (double *)td;
    J->itd = (int32_t *)td;
    int32_t *transposed = J->itd + (size_t)J->A.n * (size_t)J->B.n;
    J->view[0] = (struct table_view){&J->A, &J->B, J->itd, transposed, J->idel, J->iins, J->iren};
    J->view[1] = (struct table_view){&J->B, &J->A, transposed, J->itd, J->iins, J->idel, J->iren};
}

static double root_distance(const ted_job *J)
{
    const size_t last = (size_t)J->A.n * (size_t)J->B.n - 1;
    return J->exact ? (double)J->itd[last] * J->unit : J->td[last];
}

/* Every keyroot pair on one thread, in increasing postorder (inner subtrees first). */
WW_MULTIVERSION
static void tables_serial(const ted_job *J, void *fd)
{
    if (J->exact)
        two_node_passes(J);
    for (int32_t a = 0; a < J->A.keyroot_count; a++)
        for (int32_t b = 0; b < J->B.keyroot_count; b++)
            one_table(J, J->A.keyroots[a], J->B.keyroots[b], fd);
}

/* ---------------------------------------------------------------- the schedule of one pair */

/* Table (k1, k2) reads the tree distances of node pairs in T(k1) x T(k2) that are not both on
 * the leftmost paths of k1 and k2: those are written by the tables of keyroots inside T(k1) and
 * T(k2), whose levels (ww_ted_prepared.level) are lower. So the tables of one depth, level(k1) +
 * level(k2), write disjoint entries and read only entries of smaller depths: the depths run one
 * after the other, the tables of a depth in any order on any thread, and every entry gets the
 * same value as on one thread.
 *
 * Within a depth the work is runs: one keyroot of A against consecutive keyroots of one level of
 * B, at least TED_RUN_CELLS cells unless a single table is that large; runs largest first, so the
 * big tables of a depth (at the deep ones, a few tables are most of the work) start at once. */
#define TED_RUN_CELLS 4096.0

typedef struct table_run {
    int32_t a, b_begin, b_end; /* indexes into the sorted keyroots of A and B */
    int32_t size_class;        /* floor(log2(cells)) */
} table_run;

typedef struct pair_schedule {
    int32_t *keyroots_a, *keyroots_b; /* by level, largest subtree first */
    double *prefix_b;                 /* prefix sums of the sorted B keyroots' subtree sizes */
    int32_t *level_start_a, *level_start_b;
    int32_t levels_a, levels_b, depths;
    table_run *runs;
    size_t *depth_start;  /* runs of depth d: depth_start[d] .. depth_start[d + 1] */
    size_t *shared_count; /* of which the first shared_count[d] are shared tables */
    int32_t *row_done;    /* shared tables: the blocks done per band (thread), a cache line apart */
    size_t *claimed;      /* per depth: runs taken so far, a cache line apart */
    int32_t *barrier;     /* threads arrived, then the barrier's sense, a cache line apart */
    void *memory;
} pair_schedule;

static int32_t max_level(const ww_ted_prepared *t)
{
    int32_t m = 0;
    for (int32_t k = 0; k < t->keyroot_count; k++)
        if (t->level[k] > m)
            m = t->level[k];
    return m + 1;
}

/* Sorts the keyroots of t by level, then size (descending); level_start[l] .. level_start[l + 1].
 * Two counting sorts (by size, then stably by level): tmp holds t->n + 2 + keyroot_count ints. */
static void sort_keyroots(const ww_ted_prepared *t, int32_t *tmp, int32_t *sorted, int32_t *level_start, int32_t levels)
{
    const int32_t n = t->n, count = t->keyroot_count;
    int32_t *at = tmp, *by_size = tmp + n + 2;
    for (int32_t v = 0; v <= n + 1; v++)
        at[v] = 0;
    for (int32_t k = 0; k < count; k++)
        at[n - subtree_size(t, t->keyroots[k]) + 1]++; /* largest first */
    for (int32_t v = 0; v <= n; v++)
        at[v + 1] += at[v];
    for (int32_t k = 0; k < count; k++)
        by_size[at[n - subtree_size(t, t->keyroots[k])]++] = k;
    for (int32_t l = 0; l <= levels; l++)
        level_start[l] = 0;
    for (int32_t k = 0; k < count; k++)
        level_start[t->level[k] + 1]++;
    for (int32_t l = 0; l < levels; l++)
        level_start[l + 1] += level_start[l];
    int32_t *fill = at; /* reused: levels <= n */
    for (int32_t l = 0; l < levels; l++)
        fill[l] = level_start[l];
    for (int32_t q = 0; q < count; q++) {
        const int32_t k = by_size[q];
        sorted[fill[t->level[k]]++] = t->keyroots[k];
    }
}

static int32_t size_class(double cells)
{
    if (cells < 2.0)
        return 0;
    const int c = ilogb(cells);
    return c > 62 ? 62 : c;
}

static void schedule_free(pair_schedule *s)
{
    free(s->memory);
    free(s->runs);
    free(s->depth_start);
    free(s->shared_count);
    free(s->row_done);
}

static double run_cells(const ted_job *J, const pair_schedule *s, const table_run *r)
{
    return (double)subtree_size(&J->A, s->keyroots_a[r->a]) * (s->prefix_b[r->b_end] - s->prefix_b[r->b_begin]);
}

/* Appends the runs of one depth, then orders them largest class first (a counting sort), and
 * puts first the tables that all the threads compute together: single tables of at least
 * TED_SHARED_CELLS cells that would hold up the depth (over 2 / threads of its cells; at the
 * deepest depths one table, the roots', is most of the work). */
#define TED_SHARED_CELLS 65536.0
#define TED_ROW_DONE_STRIDE 16 /* int32: 64 bytes */

static ww_status schedule_build(const ted_job *J, pair_schedule *s, int threads)
{
    const int32_t ka = J->A.keyroot_count, kb = J->B.keyroot_count;
    s->levels_a = max_level(&J->A);
    s->levels_b = max_level(&J->B);
    s->depths = s->levels_a + s->levels_b - 1;
    const size_t scratch = (size_t)(J->A.n > J->B.n ? J->A.n : J->B.n) + 2 + (size_t)(ka > kb ? ka : kb);
    s->memory = malloc(((size_t)kb + 1) * sizeof(double) +
                       (scratch + (size_t)ka + (size_t)kb + (size_t)s->levels_a + (size_t)s->levels_b + 2) * sizeof(int32_t));
    s->depth_start = (size_t *)malloc(((size_t)s->depths + 1) * sizeof(size_t));
    s->shared_count = (size_t *)calloc((size_t)s->depths + 1, sizeof(size_t));
    /* row_done: threads + 1 counters, then the barrier's two; claimed: one per depth */
    s->row_done = (int32_t *)calloc(((size_t)threads + 3) * TED_ROW_DONE_STRIDE + ((size_t)s->depths + 1) * 8 * 2,
                                    sizeof(int32_t));
    size_t capacity = 1024, count = 0;
    s->runs = (table_run *)malloc(capacity * sizeof(table_run));
    table_run *order = NULL;
    if (!s->memory || !s->depth_start || !s->runs || !s->shared_count || !s->row_done)
        goto no_memory;
    s->barrier = s->row_done + ((size_t)threads + 1) * TED_ROW_DONE_STRIDE;
    s->claimed = (size_t *)(s->barrier + 2 * TED_ROW_DONE_STRIDE); /* 8 size_t: 64 bytes per depth */
    s->prefix_b = (double *)s->memory; /* the doubles first: aligned */
    int32_t *tmp = (int32_t *)(s->prefix_b + kb + 1);
    s->keyroots_a = tmp + scratch;
    s->keyroots_b = s->keyroots_a + ka;
    s->level_start_a = s->keyroots_b + kb;
    s->level_start_b = s->level_start_a + s->levels_a + 1;
    sort_keyroots(&J->A, tmp, s->keyroots_a, s->level_start_a, s->levels_a);
    sort_keyroots(&J->B, tmp, s->keyroots_b, s->level_start_b, s->levels_b);
    s->prefix_b[0] = 0;
    for (int32_t b = 0; b < kb; b++) {
        /* two-node keyroots of an exact pair have no tables (two_node_rows): no cells */
        const int32_t size = subtree_size(&J->B, s->keyroots_b[b]);
        s->prefix_b[b + 1] = s->prefix_b[b] + (J->exact && size == 2 ? 0 : size);
    }
    int32_t class_count[64];
    for (int32_t d = 0; d < s->depths; d++) {
        s->depth_start[d] = count;
        for (int32_t c = 0; c < 64; c++)
            class_count[c] = 0;
        const int32_t la_lo = d - (s->levels_b - 1) > 0 ? d - (s->levels_b - 1) : 0;
        const int32_t la_hi = d < s->levels_a - 1 ? d : s->levels_a - 1;
        for (int32_t la = la_lo; la <= la_hi; la++) {
            const int32_t lb = d - la, b_lo = s->level_start_b[lb], b_hi = s->level_start_b[lb + 1];
            for (int32_t a = s->level_start_a[la]; a < s->level_start_a[la + 1]; a++) {
                const double size_a = subtree_size(&J->A, s->keyroots_a[a]);
                if (J->exact && size_a == 2)
                    continue; /* two_node_rows */
                for (int32_t b = b_lo; b < b_hi;) {
                    /* the first end e with size_a * (prefix[e] - prefix[b]) >= TED_RUN_CELLS */
                    const double want = s->prefix_b[b] + TED_RUN_CELLS / size_a;
                    int32_t lo = b + 1, hi = b_hi;
                    while (lo < hi) {
                        const int32_t mid = lo + (hi - lo) / 2;
                        if (s->prefix_b[mid] >= want)
                            hi = mid;
                        else
                            lo = mid + 1;
                    }
                    if (count == capacity) {
                        table_run *grown = (table_run *)realloc(s->runs, 2 * capacity * sizeof(table_run));
                        if (!grown)
                            goto no_memory;
                        s->runs = grown;
                        capacity *= 2;
                    }
                    const int32_t c = size_class(size_a * (s->prefix_b[lo] - s->prefix_b[b]));
                    s->runs[count++] = (table_run){a, b, lo, c};
                    class_count[c]++;
                    b = lo;
                }
            }
        }
        /* largest class first: a stable counting sort of this depth's runs */
        const size_t first = s->depth_start[d], n = count - first;
        if (n > 1) {
            table_run *grown = (table_run *)realloc(order, n * sizeof(table_run));
            if (!grown)
                goto no_memory;
            order = grown;
            int32_t at[64], sum = 0;
            for (int32_t c = 63; c >= 0; c--) {
                at[c] = sum;
                sum += class_count[c];
            }
            for (size_t r = first; r < count; r++)
                order[at[s->runs[r].size_class]++] = s->runs[r];
            memcpy(s->runs + first, order, n * sizeof(table_run));
        }
        double depth_cells = 0;
        for (size_t r = first; r < count; r++)
            depth_cells += run_cells(J, s, &s->runs[r]);
        size_t shared = 0;
        for (size_t r = first; r < count && threads > 1; r++) {
            const double cells = run_cells(J, s, &s->runs[r]);
            if (s->runs[r].b_end - s->runs[r].b_begin == 1 && cells >= TED_SHARED_CELLS &&
                cells * threads > 2 * depth_cells) {
                const table_run keep = s->runs[r];
                memmove(s->runs + first + shared + 1, s->runs + first + shared, (r - first - shared) * sizeof(table_run));
                s->runs[first + shared++] = keep;
            }
        }
        s->shared_count[d] = shared;
    }
    s->depth_start[s->depths] = count;
    free(order);
    return WW_OK;
no_memory:
    free(order);
    schedule_free(s);
    s->memory = NULL;
    s->runs = NULL;
    s->depth_start = NULL;
    s->shared_count = NULL;
    s->row_done = NULL;
    return WW_ERR_MEMORY;
}

WW_MULTIVERSION
static void run_tables(const ted_job *J, const pair_schedule *s, const table_run *r, void *fd)
{
    const int32_t k1 = s->keyroots_a[r->a];
    for (int32_t b = r->b_begin; b < r->b_end; b++)
        one_table(J, k1, s->keyroots_b[b], fd);
}

/* One table computed by all the threads of the team together (called by each, between barriers):
 * thread t takes a band of consecutive rows and sweeps it block of columns by block, each block
 * once the band above has finished it. Every row a cell reads (the row above, the rows of its left
 * forest) is then done up to that cell's column: the same values as one thread's table. The
 * critical path is threads + blocks - 1 band-blocks, so about 3 blocks per thread (of at least
 * TED_SHARED_MIN_COLUMNS columns) keep the threads busy. fd: one buffer for all (thread 0's). */
#define TED_SHARED_MIN_COLUMNS 32

/* Waits for *value >= at_least: spinning, then yielding the core, since the thread being waited
 * for may be waiting for one (a machine busier than its cores): sleeping in the kernel, as OpenMP's
 * barriers do after a while, costs a scheduler tick per wait there, about 4 ms. */
static void wait_until(const int32_t *value, int32_t at_least)
{
    for (int spins = 0; __atomic_load_n(value, __ATOMIC_ACQUIRE) < at_least; spins++)
        if (spins > 100)
            sched_yield();
}

/* A barrier of the team on a counter and a sense (the schedule's): the last thread to arrive
 * resets the counter and flips the sense; the others wait for the flip. sense: the thread's own. */
static void team_barrier(int32_t *barrier, int team, int32_t *sense)
{
    int32_t *arrived = barrier, *flag = barrier + TED_ROW_DONE_STRIDE;
    const int32_t mine = *sense + 1; /* senses count up: a wait for >= mine */
    *sense = mine;
    if (__atomic_add_fetch(arrived, 1, __ATOMIC_ACQ_REL) == team) {
        __atomic_store_n(arrived, 0, __ATOMIC_RELAXED);
        __atomic_store_n(flag, mine, __ATOMIC_RELEASE);
    } else {
        wait_until(flag, mine);
    }
}

/* No thread leaves a shared table early (a cancel waits for its end): the threads of the bands
 * below would wait for its blocks forever. */
static void wait_for_blocks(const int32_t *done, int32_t blocks) { wait_until(done, blocks); }

WW_MULTIVERSION
static void shared_table(const ted_job *J, const pair_schedule *s, const table_run *r, void *fd, int tid, int threads,
                         int32_t *sense)
{
    int32_t k1 = s->keyroots_a[r->a], k2 = s->keyroots_b[r->b_begin];
    const struct table_view *V = NULL;
    if (J->exact) {
        const int transposed = k1 - J->A.leftmost[k1] > k2 - J->B.leftmost[k2];
        V = &J->view[transposed];
        if (transposed) {
            const int32_t k = k1;
            k1 = k2;
            k2 = k;
        }
    }
    const ww_ted_prepared *X = J->exact ? V->X : &J->A, *Y = J->exact ? V->Y : &J->B;
    const int32_t l1 = X->leftmost[k1], l2 = Y->leftmost[k2];
    const size_t rows = (size_t)(k1 - l1) + 1, cols = (size_t)(k2 - l2) + 1;
    const size_t band = (rows + (size_t)threads - 1) / (size_t)threads, r0 = 1 + (size_t)tid * band;
    const size_t r1 = r0 + band < rows + 1 ? r0 + band : rows + 1;
    size_t width = cols / (3 * (size_t)threads);
    if (width < TED_SHARED_MIN_COLUMNS)
        width = TED_SHARED_MIN_COLUMNS;
    const size_t blocks = (cols + width - 1) / width;
    int32_t *done = s->row_done + (size_t)tid * TED_ROW_DONE_STRIDE; /* blocks done by this band */
    exact_table T;
    if (J->exact)
        T = exact_table_of(V, k1, k2);
    __atomic_store_n(done, 0, __ATOMIC_RELAXED);
    if (tid == 0) {
        if (J->exact)
            exact_first_row((int32_t *)fd, cols, V->ins);
        else
            double_first_row((double *)fd, cols, J->ins);
    }
    team_barrier(s->barrier, threads, sense);
    if (r0 >= r1) /* no rows here, nor in the bands below */
        return;
    for (size_t b = 0; b < blocks; b++) {
        const size_t y0 = 1 + b * width, y1 = y0 + width < cols + 1 ? y0 + width : cols + 1;
        if (tid > 0)
            wait_for_blocks(done - TED_ROW_DONE_STRIDE, (int32_t)b + 1);
        for (size_t x = r0; x < r1; x++) {
            if (J->exact)
                exact_row_cells(&T, (int32_t *)fd, x, y0, y1);
            else
                double_row_cells(J, l1, l2, cols + 1, (double *)fd, x, y0, y1);
        }
        __atomic_store_n(done, (int32_t)b + 1, __ATOMIC_RELEASE);
    }
}

/* ---------------------------------------------------------------- one pair */

/* Prepares both trees in the cheaper orientation. ints: 2 * (5 + 4) * max(na, nb) + ... */
static size_t pair_ints(size_t na, size_t nb)
{
    const size_t big = na > nb ? na : nb;
    return 2 * ww_ted_prepared_ints(na) + 2 * ww_ted_prepared_ints(nb) + prepare_tmp_ints(big);
}

static void prepare_pair(ted_job *J, const ww_tree *a, const ww_tree *b, const ww_ted_params *p, int32_t *ints)
{
    int32_t *a_left = ints, *a_right = a_left + ww_ted_prepared_ints(a->count);
    int32_t *b_left = a_right + ww_ted_prepared_ints(a->count), *b_right = b_left + ww_ted_prepared_ints(b->count);
    int32_t *tmp = b_right + ww_ted_prepared_ints(b->count);
    ww_ted_prepared al, ar, bl, br;
    prepare_with(a, 0, a_left, tmp, &al);
    prepare_with(a, 1, a_right, tmp, &ar);
    prepare_with(b, 0, b_left, tmp, &bl);
    prepare_with(b, 1, b_right, tmp, &br);
    const int right = ar.cost * br.cost < al.cost * bl.cost;
    J->A = right ? ar : al;
    J->B = right ? br : bl;
    J->del = p->delete_cost;
    J->ins = p->insert_cost;
    J->ren = p->relabel_cost;
    choose_exact(J, a->count, b->count);
}

/* The distance of a prepared pair whose td is set up: tables, then td of the roots. */
static double pair_distance_serial(const ted_job *J, void *fd)
{
    if (J->A.n == 0 || J->B.n == 0) /* all insertions or all deletions */
        return J->A.n == 0 ? (double)J->B.n * J->ins : (double)J->A.n * J->del;
    tables_serial(J, fd);
    return root_distance(J);
}

/* Sums in the order a table does: exact integers for unit costs either way. */
static double empty_side(size_t n, double cost)
{
    double s = 0;
    for (size_t k = 0; k < n; k++)
        s += cost;
    return s;
}

/* Progress within pairs computed one after the other over all threads (a matrix block with a
 * few pairs to compute): the tables' cells done, scaled to the caller's unit for the pair
 * (pair_cells), after the pairs before it (base), of the caller's total; at most every
 * TED_PROGRESS_CELLS cells and only from the calling thread; a nonzero answer stops the pair
 * between runs of tables (WW_ERR_CANCELLED). The caller reports the end itself. */
#define TED_PROGRESS_CELLS ((uint64_t)1 << 20)

typedef struct pair_progress {
    const ww_pairwise_options *o; /* NULL: no reports */
    uint64_t base, pair_cells, total;
    double all_cells; /* the tables' cells */
} pair_progress;

/* Calls the user's callback with `done` of the tables' cells; nonzero: cancel. */
static int report(const pair_progress *pp, uint64_t done)
{
    double scaled = (double)pp->base + (double)done / pp->all_cells * (double)pp->pair_cells;
    if (scaled > (double)(pp->total - 1))
        scaled = (double)(pp->total - 1); /* the end is the caller's */
    return pp->o->progress((uint64_t)scaled, pp->total, pp->o->progress_user) != 0;
}

WW_MULTIVERSION
static ww_status tables_serial_progress(const ted_job *J, void *fd, const pair_progress *pp)
{
    if (J->exact)
        two_node_passes(J);
    uint64_t done = 0, reported = 0;
    for (int32_t a = 0; a < J->A.keyroot_count; a++) {
        const int32_t k1 = J->A.keyroots[a];
        const uint64_t size_a = (uint64_t)subtree_size(&J->A, k1);
        for (int32_t b = 0; b < J->B.keyroot_count; b++) {
            one_table(J, k1, J->B.keyroots[b], fd);
            done += size_a * (uint64_t)subtree_size(&J->B, J->B.keyroots[b]);
        }
        if (done - reported >= TED_PROGRESS_CELLS) {
            reported = done;
            if (report(pp, done))
                return WW_ERR_CANCELLED;
        }
    }
    return WW_OK;
}

/* One pair: tables on `threads` threads of the context (1 below TED_PARALLEL_CELLS), progress and
 * cancel when pp->o has a callback. */
static ww_status pair_engine(ww_ctx *ctx, const ww_tree *a, const ww_tree *b, const ww_ted_params *p, int threads,
                             pair_progress *pp, double *out)
{
    if (a->count == 0 || b->count == 0) {
        *out = a->count == 0 ? empty_side(b->count, p->insert_cost) : empty_side(a->count, p->delete_cost);
        return WW_OK;
    }
    const size_t na = a->count, nb = b->count, fd_doubles = (na + 1) * (nb + 1);
    ww_status st = ww_buffer_reserve(&ctx->cpu[0].b, pair_ints(na, nb) * sizeof(int32_t));
    if (st != WW_OK)
        return st;
    ted_job J;
    prepare_pair(&J, a, b, p, (int32_t *)ctx->cpu[0].b.ptr);
    if (threads < 1 || J.A.cost * J.B.cost < TED_PARALLEL_CELLS)
        threads = 1;
#ifndef _OPENMP
    threads = 1;
#endif
    if ((st = ww_buffer_reserve(&ctx->shared, na * nb * sizeof(double))) != WW_OK)
        return st;
    set_tree_distances(&J, ctx->shared.ptr);
    for (int t = 0; t < threads; t++)
        if ((st = ww_buffer_reserve(&ctx->cpu[t].work, fd_doubles * sizeof(double))) != WW_OK)
            return st;
    const int progress = pp->o != NULL && pp->o->progress != NULL;
    pp->all_cells = J.A.cost * J.B.cost;
    if (threads == 1) {
        if (progress && (st = tables_serial_progress(&J, ctx->cpu[0].work.ptr, pp)) != WW_OK)
            return st;
        if (!progress)
            tables_serial(&J, ctx->cpu[0].work.ptr);
        *out = root_distance(&J);
        return WW_OK;
    }
    pair_schedule s;
    if ((st = schedule_build(&J, &s, threads)) != WW_OK)
        return st;
    int32_t two_node_a = 0; /* keyroots of two nodes in A */
    for (int32_t q = 0; J.exact && q < J.A.keyroot_count; q++)
        two_node_a += subtree_size(&J.A, J.A.keyroots[q]) == 2;
    uint64_t done = 0;
    int stop = 0;
#ifdef _OPENMP
#pragma omp parallel num_threads(threads)
#endif
    {
        int tid = 0, team = 1;
#ifdef _OPENMP
        tid = omp_get_thread_num();
        team = omp_get_num_threads(); /* fewer than asked when nested or limited */
#endif
        void *fd = ctx->cpu[tid].work.ptr;
        uint64_t reported = 0;
        int32_t sense = 0; /* barriers passed */
        if (J.exact) {
            /* the two-node keyroots' passes, read from depth 1 on: shared out, then a barrier */
            const size_t passes = (size_t)J.A.keyroot_count + (size_t)J.B.keyroot_count;
            for (size_t q; (q = __atomic_fetch_add(&s.claimed[8 * (size_t)s.depths], 1, __ATOMIC_RELAXED)) < passes;) {
                const int in_a = q < (size_t)J.A.keyroot_count;
                const ww_ted_prepared *t = in_a ? &J.A : &J.B;
                const int32_t k = t->keyroots[in_a ? q : q - (size_t)J.A.keyroot_count];
                if (subtree_size(t, k) != 2)
                    continue;
                two_node_rows(&J.view[in_a ? 0 : 1], k);
                if (progress) {
                    /* its tables, left out of the runs (both keyroots of two nodes: counted once) */
                    const uint64_t cells = (uint64_t)(in_a ? 2 * J.B.cost : 2 * (J.A.cost - 2.0 * (double)two_node_a));
#ifdef _OPENMP
#pragma omp atomic update
#endif
                    done += cells;
                }
            }
            team_barrier(s.barrier, team, &sense);
        }
        for (int32_t depth = 0; depth < s.depths; depth++) {
            const long first = (long)s.depth_start[depth], last = (long)s.depth_start[depth + 1];
            if (progress && tid == 0 && depth > 0) {
                /* after the barrier of each depth, whatever runs this thread took */
                uint64_t now;
#ifdef _OPENMP
#pragma omp atomic read
#endif
                now = done;
                if (now - reported >= TED_PROGRESS_CELLS) {
                    reported = now;
                    if (report(pp, now)) {
#ifdef _OPENMP
#pragma omp atomic write
#endif
                        stop = 1;
                    }
                }
            }
            for (size_t q = 0; q < s.shared_count[depth]; q++) {
                shared_table(&J, &s, &s.runs[first + (long)q], ctx->cpu[0].work.ptr, tid, team, &sense);
                if (progress && tid == 0) {
#ifdef _OPENMP
#pragma omp atomic update
#endif
                    done += (uint64_t)run_cells(&J, &s, &s.runs[first + (long)q]);
                }
                team_barrier(s.barrier, team, &sense);
            }
            /* the other runs, taken one at a time from the depth's counter */
            const size_t runs = (size_t)(last - first) - s.shared_count[depth];
            const table_run *depth_runs = s.runs + first + (long)s.shared_count[depth];
            for (size_t q; (q = __atomic_fetch_add(&s.claimed[8 * (size_t)depth], 1, __ATOMIC_RELAXED)) < runs;) {
                if (!progress) {
                    run_tables(&J, &s, &depth_runs[q], fd);
                    continue;
                }
                int stopped;
#ifdef _OPENMP
#pragma omp atomic read
#endif
                stopped = stop;
                if (stopped)
                    continue;
                run_tables(&J, &s, &depth_runs[q], fd);
                uint64_t now;
#ifdef _OPENMP
#pragma omp atomic capture
#endif
                now = done += (uint64_t)run_cells(&J, &s, &depth_runs[q]);
                if (tid == 0 && now - reported >= TED_PROGRESS_CELLS) {
                    reported = now;
                    if (report(pp, now)) {
#ifdef _OPENMP
#pragma omp atomic write
#endif
                        stop = 1;
                    }
                }
            }
            team_barrier(s.barrier, team, &sense); /* the depth's tree distances are all written */
        }
    }
    schedule_free(&s);
    if (stop)
        return WW_ERR_CANCELLED;
    *out = root_distance(&J);
    return WW_OK;
}

ww_status ww_cpu_ted(ww_ctx *ctx, const ww_tree *a, const ww_tree *b, const ww_ted_params *p, int threads,
                     double *out)
{
    pair_progress none = {NULL, 0, 0, 0, 0};
    return pair_engine(ctx, a, b, p, threads, &none, out);
}

/* ---------------------------------------------------------------- the mapping */

static int compare_edits(const void *x, const void *y)
{
    const ww_ted_edit *e = (const ww_ted_edit *)x, *f = (const ww_ted_edit *)y;
    if (e->a != f->a)
        return e->a < f->a ? -1 : 1;
    return e->b < f->b ? -1 : e->b > f->b;
}

ww_status ww_cpu_ted_mapping(ww_ctx *ctx, const ww_tree *a, const ww_tree *b, const ww_ted_params *p,
                             ww_ted_edit *edits, size_t *count, double *distance)
{
    const size_t na = a->count, nb = b->count;
    size_t c = 0;
    if (na == 0 || nb == 0) {
        for (size_t i = 0; i < na; i++)
            edits[c++] = (ww_ted_edit){(int32_t)i, -1};
        for (size_t j = 0; j < nb; j++)
            edits[c++] = (ww_ted_edit){-1, (int32_t)j};
        *count = c;
        *distance = na == 0 ? empty_side(nb, p->insert_cost) : empty_side(na, p->delete_cost);
        return WW_OK;
    }
    ww_status st = ww_buffer_reserve(&ctx->cpu[0].b, pair_ints(na, nb) * sizeof(int32_t));
    if (st == WW_OK)
        st = ww_buffer_reserve(&ctx->shared, na * nb * sizeof(double));
    if (st == WW_OK)
        st = ww_buffer_reserve(&ctx->cpu[0].work, (na + 1) * (nb + 1) * sizeof(double));
    int32_t *stack = st == WW_OK ? (int32_t *)malloc(2 * (na + nb + 2) * sizeof(int32_t)) : NULL;
    if (st != WW_OK || stack == NULL)
        return st != WW_OK ? st : WW_ERR_MEMORY;
    ted_job J;
    prepare_pair(&J, a, b, p, (int32_t *)ctx->cpu[0].b.ptr);
    J.exact = 0; /* the backtrack reads double tables (the same values) */
    set_tree_distances(&J, ctx->shared.ptr);
    double *fd = (double *)ctx->cpu[0].work.ptr;
    *distance = pair_distance_serial(&J, fd);

    /* Backtrack from the roots: a table of two subtrees is recomputed, then walked from its corner;
     * a match of two subtrees that are not both prefixes' trees is a pair of subtrees to walk later
     * (at most one per node of each tree). */
    size_t top = 0;
    stack[top++] = J.A.n - 1;
    stack[top++] = J.B.n - 1;
    while (top > 0) {
        const int32_t k2 = stack[--top], k1 = stack[--top];
        forest_table(&J, k1, k2, fd);
        const int32_t l1 = J.A.leftmost[k1], l2 = J.B.leftmost[k2];
        const size_t w = (size_t)(k2 - l2) + 2;
        size_t x = (size_t)(k1 - l1) + 1, y = (size_t)(k2 - l2) + 1;
        while (x > 0 || y > 0) {
            const double v = fd[x * w + y];
            const int32_t i = l1 + (int32_t)x - 1, j = l2 + (int32_t)y - 1;
            if (x > 0 && v == fd[(x - 1) * w + y] + J.del) {
                edits[c++] = (ww_ted_edit){J.A.preorder[i], -1};
                x--;
            } else if (y > 0 && v == fd[x * w + y - 1] + J.ins) {
                edits[c++] = (ww_ted_edit){-1, J.B.preorder[j]};
                y--;
            } else if (J.A.leftmost[i] == l1 && J.B.leftmost[j] == l2) {
                edits[c++] = (ww_ted_edit){J.A.preorder[i], J.B.preorder[j]};
                x--;
                y--;
            } else {
                stack[top++] = i;
                stack[top++] = j;
                x = (size_t)(J.A.leftmost[i] - l1);
                y = (size_t)(J.B.leftmost[j] - l2);
            }
        }
    }
    free(stack);
    qsort(edits, c, sizeof *edits, compare_edits);
    *count = c;
    return WW_OK;
}

/* ---------------------------------------------------------------- many pairs */

/* In a self matrix with symmetric costs, (i, j) is computed unless it is on the diagonal or its
 * mirror (j, i) is in the block too and comes first (j < i). */
static int entry_computed(const ww_pairwise_options *o, int self, int mirror, size_t i, size_t j)
{
    if (!self)
        return 1;
    if (i == j)
        return 0;
    const int mirror_in_block = j >= o->row_begin && j < o->row_end && i >= o->col_begin && i < o->col_end;
    return !(mirror && mirror_in_block && j < i);
}

static uint64_t pair_cells(size_t na, size_t nb)
{
    const uint64_t c = (uint64_t)na * (uint64_t)nb;
    return c > 0 ? c : 1;
}

/* A matrix of trees as work items: entry e of the block (row-major). */
typedef struct ted_matrix_job {
    const ww_tree *x, *y;
    const ww_ted_params *p;
    const ww_pairwise_options *o;
    void *out;
    int self, mirror;
} ted_matrix_job;

static ww_status ted_matrix_item(void *job_, size_t e, ww_cpu_scratch *sc, uint64_t *cells)
{
    const ted_matrix_job *job = (const ted_matrix_job *)job_;
    const ww_pairwise_options *o = job->o;
    const size_t width = o->col_end - o->col_begin;
    const size_t i = o->row_begin + e / width, j = o->col_begin + e % width;
    if (!entry_computed(o, job->self, job->mirror, i, j))
        return WW_OK;
    const ww_tree *a = &job->x[i], *b = &job->y[j];
    const ww_ted_params *p = job->p;
    double d;
    if (a->count == 0 || b->count == 0) {
        d = a->count == 0 ? empty_side(b->count, p->insert_cost) : empty_side(a->count, p->delete_cost);
    } else {
        ww_status s = ww_buffer_reserve(&sc->b, pair_ints(a->count, b->count) * sizeof(int32_t));
        if (s == WW_OK)
            s = ww_buffer_reserve(&sc->a, a->count * b->count * sizeof(double));
        if (s == WW_OK)
            s = ww_buffer_reserve(&sc->work, (a->count + 1) * (b->count + 1) * sizeof(double));
        if (s != WW_OK)
            return s;
        ted_job J;
        prepare_pair(&J, a, b, p, (int32_t *)sc->b.ptr);
        set_tree_distances(&J, sc->a.ptr);
        d = pair_distance_serial(&J, sc->work.ptr);
    }
    const size_t at = (i - o->row_begin) * o->out_stride + (j - o->col_begin);
    if (o->out_dtype == WW_F32)
        ((float *)job->out)[at] = (float)d;
    else
        ((double *)job->out)[at] = d;
    *cells = pair_cells(a->count, b->count);
    return WW_OK;
}

ww_status ww_cpu_ted_pairwise(ww_ctx *ctx, const ww_tree *x, size_t nx, const ww_tree *y, size_t ny,
                              const ww_ted_params *p, void *out, const ww_pairwise_options *o, int threads)
{
    const int self = y == NULL;
    (void)nx;
    (void)ny;
    ted_matrix_job job = {x, self ? x : y, p, o, out, self, self && p->delete_cost == p->insert_cost};
    /* mirrored entries only when the matrix is symmetric */
    const int mirror = job.mirror;
    const size_t width = o->col_end - o->col_begin, entries = (o->row_end - o->row_begin) * width;
    uint64_t total = 0;
    for (size_t i = o->row_begin; i < o->row_end; i++)
        for (size_t j = o->col_begin; j < o->col_end; j++)
            if (entry_computed(o, self, mirror, i, j))
                total += pair_cells(x[i].count, job.y[j].count);
    if (threads < 1)
        threads = 1;
    /* a block with a few pairs to compute (one long pair, most often): one pair after the other,
     * each over all the threads (a pair scales to about 4 threads on ordinary trees, so this pays
     * up to threads / 4 pairs), with progress and cancel inside the pairs */
    size_t computed = 0;
    for (size_t e = 0; e < entries && (computed <= 1 || computed * 4 <= (size_t)threads); e++)
        computed += entry_computed(o, self, mirror, o->row_begin + e / width, o->col_begin + e % width);
    if (computed == 1 || computed * 4 <= (size_t)threads) {
        pair_progress pp = {o, 0, 0, total, 0};
        for (size_t e = 0; e < entries; e++) {
            const size_t i = o->row_begin + e / width, j = o->col_begin + e % width;
            if (!entry_computed(o, self, mirror, i, j))
                continue;
            pp.pair_cells = pair_cells(x[i].count, job.y[j].count);
            double d;
            const ww_status s = pair_engine(ctx, &x[i], &job.y[j], p, threads, &pp, &d);
            if (s != WW_OK)
                return s;
            pp.base += pp.pair_cells;
            const size_t at = (i - o->row_begin) * o->out_stride + (j - o->col_begin);
            if (o->out_dtype == WW_F32)
                ((float *)out)[at] = (float)d;
            else
                ((double *)out)[at] = d;
        }
    } else {
        const ww_status failure = ww_cpu_run_items(ctx, threads, entries, total, o, NULL, ted_matrix_item, &job);
        if (failure != WW_OK)
            return failure;
    }
    if (self) {
        if (mirror) {
            ww_matrix_fill_mirror(o, out, threads);
        } else { /* the diagonal only */
            for (size_t i = o->row_begin; i < o->row_end; i++)
                if (i >= o->col_begin && i < o->col_end) {
                    const size_t at = (i - o->row_begin) * o->out_stride + (i - o->col_begin);
                    if (o->out_dtype == WW_F32)
                        ((float *)out)[at] = 0;
                    else
                        ((double *)out)[at] = 0;
                }
        }
    }
    if (o->progress && o->progress(total, total, o->progress_user))
        return WW_ERR_CANCELLED;
    return WW_OK;
}
