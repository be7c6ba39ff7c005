/* Shared by the CPU and GPU matrix engines: completing a self matrix (x against itself), in which
 * each unordered pair was computed once. */
#include "internal.h"

#ifdef _OPENMP
#include <omp.h>
#endif

#define MIRROR_TILE 64 /* a 64 x 64 tile of doubles and its mirror (64 KB) stay in L2 */

/* Entry (i, j) of the block mirrors (j, i) when both lie in the block and j < i; the diagonal is 0.
 * Tiles of rows are shared among threads; inside a tile the mirrored range of each row is
 * computed once, so the inner loop is a plain strided copy. */
#define FILL_MIRROR(T)                                                                                          \
    do {                                                                                                        \
        T *m = (T *)out;                                                                                        \
        _Pragma("omp parallel for schedule(dynamic) num_threads(threads)")                                     \
        for (size_t i0 = o->row_begin; i0 < o->row_end; i0 += MIRROR_TILE) {                                 \
            const size_t i1 = i0 + MIRROR_TILE < o->row_end ? i0 + MIRROR_TILE : o->row_end;                 \
            for (size_t j0 = lo; j0 < i1 && j0 < hi; j0 += MIRROR_TILE)                                        \
                for (size_t i = i0; i < i1; i++) {                                                               \
                    if (i < o->col_begin || i >= o->col_end)                                                     \
                        continue;                                                                                \
                    size_t j_end = j0 + MIRROR_TILE < hi ? j0 + MIRROR_TILE : hi;                               \
                    if (j_end > i)                                                                               \
                        j_end = i;                                                                               \
                    T *row = m + (i - o->row_begin) * o->out_stride; /* column j at row[j - col_begin] */   \
                    for (size_t j = j0; j < j_end; j++)                                                         \
                        row[j - o->col_begin] = m[(j - o->row_begin) * o->out_stride + (i - o->col_begin)];   \
                }                                                                                                \
        }                                                                                                       \
        for (size_t i = o->row_begin; i < o->row_end; i++)                                                     \
            if (i >= o->col_begin && i < o->col_end)                                                           \
                m[(i - o->row_begin) * o->out_stride + (i - o->col_begin)] = 0;                                \
    } while (0)

void ww_matrix_fill_mirror(const ww_pairwise_options *o, void *out, int threads)
{
    /* mirrored columns j lie in [lo, hi): in the block's rows and in its columns */
    const size_t lo = o->row_begin > o->col_begin ? o->row_begin : o->col_begin;
    const size_t hi = o->row_end < o->col_end ? o->row_end : o->col_end;
    if (threads < 1)
        threads = 1;
    (void)threads;
    if (o->out_dtype == WW_F32)
        FILL_MIRROR(float);
    else
        FILL_MIRROR(double);
}
