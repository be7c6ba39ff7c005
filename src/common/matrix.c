/* Shared by the CPU and GPU matrix engines: completing a self matrix (x against itself), in which
 * each unordered pair was computed once. */
#include "internal.h"

#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#include <immintrin.h>
#include <stdatomic.h>
#define WW_HAVE_CLFLUSHOPT 1
#endif

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
 * PCIe copy, and 14 us on eight; an upload of 288 KB 16 us on one and 10 on four (H200 host:
 * bench/results/gpu-dtw.md). A copy under 128 KB stays on one: a team's start would cost more. */
#define COPY_BYTES_PER_THREAD ((size_t)64 << 10)
/* ... and at most COPY_MAX_THREADS: eight copy 2.9 MB about as fast as sixteen, and a team as large
 * as the machine waits, at each barrier, for whichever of its threads the system has put aside
 * (16 on a 16-core host: 0.55-0.8 ms for what 11 did in 30 us, H200 host) */
#define COPY_MAX_THREADS 8

/* Threads for `bytes` of copying with up to `threads` available. */
static int copy_team(size_t bytes, int threads)
{
    const size_t wanted = bytes / COPY_BYTES_PER_THREAD;
    int team = threads < COPY_MAX_THREADS ? threads : COPY_MAX_THREADS;
    if ((size_t)team > wanted)
        team = (int)wanted;
    return team < 1 ? 1 : team;
}

void ww_copy_rows(void *dst, size_t dst_stride, const void *src, size_t src_stride, size_t row_bytes, size_t rows,
                  int threads)
{
    const size_t total = row_bytes * rows;
    const int team = copy_team(total, threads);
    if (dst_stride == row_bytes && src_stride == row_bytes) { /* one block: a piece per thread */
        const size_t piece = (total + (size_t)team - 1) / (size_t)team;
        _Pragma("omp parallel for schedule(static) num_threads(team) if (team > 1)")
        for (int p = 0; p < team; p++) {
            const size_t begin = (size_t)p * piece, end = begin + piece < total ? begin + piece : total;
            if (begin < end)
                memcpy((char *)dst + begin, (const char *)src + begin, end - begin);
        }
        return;
    }
    _Pragma("omp parallel for schedule(static) num_threads(team) if (team > 1)")
    for (size_t r = 0; r < rows; r++)
        memcpy((char *)dst + r * dst_stride, (const char *)src + r * src_stride, row_bytes);
}

#ifdef WW_HAVE_CLFLUSHOPT
__attribute__((target("clflushopt"))) static void evict_lines(const char *p, size_t bytes)
{
    for (size_t k = 0; k < bytes; k += 64)
        _mm_clflushopt((void *)(p + k));
    _mm_sfence();
}

static int have_clflushopt(void)
{
    unsigned a, b, c, d;
    return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & (1u << 23));
}
#endif

/* Why: a GPU's copy into a pinned buffer whose lines sit in the host cores' caches (they have just
 * been read out of it, by the previous chunk's or call's copy) waits for each line to be snooped out
 * of them: 2.9 MB took 110-125 us instead of 55-60 (H200 host, bench/results/gpu-dtw.md). Evicting
 * the buffer while the GPU still computes puts the copy back at full speed. The buffer is only read
 * by the host, so its lines are clean and eviction never writes anything back. Elsewhere than on
 * x86 with CLFLUSHOPT, nothing is done. */
void ww_evict_from_caches(const void *p, size_t bytes, int threads)
{
#ifdef WW_HAVE_CLFLUSHOPT
    static atomic_int supported = -1; /* asked once: CPUID may trap to a hypervisor */
    int known = atomic_load_explicit(&supported, memory_order_relaxed);
    if (known < 0)
        atomic_store_explicit(&supported, known = have_clflushopt(), memory_order_relaxed);
    if (!known || bytes == 0)
        return;
    const char *start = (const char *)((uintptr_t)p & ~(uintptr_t)63);
    bytes += (size_t)((const char *)p - start);
    const int team = copy_team(bytes, threads);
    const size_t piece = ((bytes + (size_t)team - 1) / (size_t)team + 63) & ~(size_t)63;
    _Pragma("omp parallel for schedule(static) num_threads(team) if (team > 1)")
    for (int t = 0; t < team; t++) {
        const size_t begin = (size_t)t * piece, end = begin + piece < bytes ? begin + piece : bytes;
        if (begin < end)
            evict_lines(start + begin, end - begin);
    }
#else
    (void)p, (void)bytes, (void)threads;
#endif
}
