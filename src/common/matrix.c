/* Shared by the CPU and GPU matrix engines: completing a self matrix (x against itself), in which
 * each unordered pair was computed once. */
#include "internal.h"

#include <string.h>

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

/* A copy takes one thread per COPY_BYTES_PER_THREAD: one core copies about 12 GB/s, so a GPU's matrix
 * of 2.9 MB (600 x 600 doubles) took 240 us from pinned memory on one thread, four times its
 * PCIe copy, and 14 us on eight (H200 host: bench/results/gpu-dtw.md); a small copy stays on one,
 * as a team's start would cost more than it saves. */
#define COPY_BYTES_PER_THREAD ((size_t)256 << 10)

void ww_copy_rows(void *dst, size_t dst_stride, const void *src, size_t src_stride, size_t row_bytes, size_t rows,
                  int threads)
{
    const size_t total = row_bytes * rows;
    if (threads < 1)
        threads = 1;
    if (dst_stride == row_bytes && src_stride == row_bytes) { /* one block: pieces of equal size */
        const size_t pieces_max = total / COPY_BYTES_PER_THREAD;
        const int pieces = pieces_max < 1 ? 1 : pieces_max < (size_t)threads ? (int)pieces_max : threads;
        const size_t piece = (total + (size_t)pieces - 1) / (size_t)pieces;
        _Pragma("omp parallel for schedule(static) num_threads(pieces) if (pieces > 1)")
        for (int p = 0; p < pieces; p++) {
            const size_t begin = (size_t)p * piece, end = begin + piece < total ? begin + piece : total;
            if (begin < end)
                memcpy((char *)dst + begin, (const char *)src + begin, end - begin);
        }
        return;
    }
    const size_t team_max = total / COPY_BYTES_PER_THREAD;
    const int team = team_max < 1 ? 1 : team_max < (size_t)threads ? (int)team_max : threads;
    (void)team;
    _Pragma("omp parallel for schedule(static) num_threads(team) if (team > 1)")
    for (size_t r = 0; r < rows; r++)
        memcpy((char *)dst + r * dst_stride, (const char *)src + r * src_stride, row_bytes);
}
