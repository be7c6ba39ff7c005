/* Preparation kernels: the caller's series (type Tin, host copies or device pointers) to the
 * prepared layout the engines read (compute type, sentinel sample 0 in front, stamps, and the
 * measure's per-sample term when it has one), with the checks of the host path raised as flags.
 * Templates over the measure functor (measure.cuh); kernels only, no launch policy. */
#ifndef WW_CUDA_PREPARE_CUH
#define WW_CUDA_PREPARE_CUH

#include "cuda_common.cuh"

/* ------------------------------------------------------------------------------------------ */
/* One pair (the wavefront and per-diagonal engines): double, padded                           */
/* ------------------------------------------------------------------------------------------ */

/* Prepared series are padded: SERIES_PAD_FRONT samples before sample 0 (sample 1, the first of
 * every column block, 32-byte aligned for vector loads) and SERIES_PAD_BACK after sample n, as far
 * as the wavefront engine reads (WAVEFRONT_COLUMN_PAD). The padding lets the
 * wavefront engine compute whole tiles without a branch for the matrix's edges (padding_of,
 * measure.cuh):
 *  - TWED (per-sample deletion costs): in front, zero values and stamps and an infinite deletion
 *    cost (sample 0's too: the recurrence never deletes it). Tiles before column 1 come out
 *    infinite: the boundary column D(i, 0). Behind: infinite values (so no match reaches them) and
 *    a zero deletion cost. A column (row) past the end then repeats the last one exactly:
 *    D(i, nb + 1) = min(D(i, nb), D(i - 1, nb + 1) + delete_a(i)), and the second term is never
 *    smaller, since the recurrence already took every chain of deletions down column nb, rounding
 *    included. So D(na, nb) can be read at any row >= na and column >= nb, e.g. at the last cell of
 *    the last tile. (A match between two padded samples is inf - inf = NaN, which twed_cell's
 *    comparisons drop: it only ever compares the match candidate as `match < m`.)
 *  - a measure without per-sample terms (DTW): +inf values in front (sample 0 included) and behind.
 *    A cell with a padded sample has an infinite local cost, so it is +inf (NaN where both samples
 *    are padding); such cells flow only into other cells outside the matrix, and the result is read
 *    at its exact cell. */
#define SERIES_PAD_FRONT (WAVEFRONT_COLUMN_PAD + 3)
#define SERIES_PAD_BACK (WAVEFRONT_COLUMN_PAD + 8) /* + 8: room for the last block's columns past nb */
/* The wavefront engine reads dim-1 columns without clamping the block index: up to
 * (LAST_SKEW + SYNC + AHEAD) * C samples either way of the matrix's columns, 576 for the 4 x 4
 * shape, fewer for the others (pair_kernels.cuh checks every shape against this at compile time). */
#define WAVEFRONT_COLUMN_PAD 576
static_assert((SERIES_PAD_FRONT + 1) % 4 == 0, "sample 1 32-byte aligned for the vector loads");

template <typename Tin> struct prepare_job {
    const Tin *values, *stamps; /* user layout; stamps may be NULL */
    size_t n, dim;
    size_t width; /* of a prepared sample: dim, or more with zeros after (see prepared_width) */
    double *out_values, *out_stamps, *out_delete; /* sample 0 of each */
};

/* Values and stamps to double with sentinel sample 0; non-finite values and decreasing stamps raise
 * flags. blockIdx.y selects the series (0 = a, 1 = b). For dim 1 the per-sample terms too (small
 * pairs pay for every launch): the thread of sample s converts sample s - 1 again, the same
 * conversion, so the same value, and the distance of two samples is |x - y| in every engine. */
template <class M, typename Tin>
__global__ void prepare_values_kernel(prepare_job<Tin> ja, prepare_job<Tin> jb, M m, int *flags)
{
    const prepare_job<Tin> &j = blockIdx.y == 0 ? ja : jb;
    const size_t dim = j.dim, width = j.width;
    const ptrdiff_t n = (ptrdiff_t)j.n;
    for (ptrdiff_t s = (ptrdiff_t)(blockIdx.x * (size_t)blockDim.x + threadIdx.x) - SERIES_PAD_FRONT;
         s <= n + SERIES_PAD_BACK; s += (ptrdiff_t)gridDim.x * blockDim.x) {
        double *dst = j.out_values + s * (ptrdiff_t)width;
        if (s > n) { /* padding behind: see SERIES_PAD_BACK */
            for (size_t k = 0; k < width; k++)
                dst[k] = infinity_of<double>();
            if constexpr (M::uses_stamps)
                j.out_stamps[s] = j.stamps ? (double)j.stamps[j.n - 1] : (double)j.n;
            if constexpr (M::has_aux)
                if (dim == 1)
                    j.out_delete[s] = 0;
            continue;
        }
        if (s <= 0) { /* the sentinel and the front padding */
            for (size_t k = 0; k < width; k++)
                dst[k] = M::pad_inf_values ? infinity_of<double>() : 0;
            if constexpr (M::uses_stamps)
                j.out_stamps[s] = 0;
            if constexpr (M::has_aux)
                if (dim == 1)
                    j.out_delete[s] = infinity_of<double>();
            continue;
        }
        const Tin *src = j.values + (s - 1) * dim;
        int bad = 0;
        for (size_t k = 0; k < dim; k++) {
            double v = (double)src[k];
            bad |= !isfinite(v);
            dst[k] = v;
        }
        for (size_t k = dim; k < width; k++)
            dst[k] = 0;
        if constexpr (M::uses_stamps) {
            double t = j.stamps ? (double)j.stamps[s - 1] : (double)s;
            if (j.stamps && (!stamp_ok(j.stamps[s - 1]) || (s >= 2 && t < (double)j.stamps[s - 2])))
                bad |= WW_FLAG_STAMPS;
            j.out_stamps[s] = t;
            if (bad)
                atomicOr(flags, bad);
            if constexpr (M::has_aux)
                if (dim == 1) {
                    const double prev = s >= 2 ? (double)src[-1] : 0.0;
                    const double t_prev = s >= 2 ? (j.stamps ? (double)j.stamps[s - 2] : (double)(s - 1)) : 0.0;
                    j.out_delete[s] = m.aux(dst, &prev, 1, t, t_prev);
                }
        } else {
            if (bad)
                atomicOr(flags, bad);
        }
    }
}

/* Per-sample terms for dim > 1, from the converted values (a second launch: sample s needs sample
 * s - 1); only for a measure that has them. */
template <class M, typename Tin> __global__ void prepare_costs_kernel(prepare_job<Tin> ja, prepare_job<Tin> jb, M m)
{
    const prepare_job<Tin> &j = blockIdx.y == 0 ? ja : jb;
    const size_t width = j.width; /* the zeros after dim change no distance (prepared_width) */
    const ptrdiff_t n = (ptrdiff_t)j.n;
    for (ptrdiff_t s = (ptrdiff_t)(blockIdx.x * (size_t)blockDim.x + threadIdx.x) - SERIES_PAD_FRONT;
         s <= n + SERIES_PAD_BACK; s += (ptrdiff_t)gridDim.x * blockDim.x) {
        if (s <= 0) {
            j.out_delete[s] = infinity_of<double>();
            continue;
        }
        if (s > n) {
            j.out_delete[s] = 0;
            continue;
        }
        const double *x = j.out_values + s * width;
        j.out_delete[s] = m.aux(x, x - width, width, j.out_stamps[s], j.out_stamps[s - 1]);
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Datasets (the matrix engine): compute type T, one sentinel per series, no padding           */
/* ------------------------------------------------------------------------------------------ */

template <typename Tin, typename T> struct prepare_set_job {
    const Tin *values, *stamps; /* the user's data (device pointers) */
    const size_t *offsets;      /* user offsets (device copy), count + 1 */
    T *out_values, *out_stamps, *out_delete;
    const size_t *base;
    size_t dim;
};

/* One block per series: values and stamps first, then (after a barrier) the per-sample terms,
 * which read the previous prepared sample. */
template <class M, typename Tin, typename T>
__global__ void prepare_set_kernel(prepare_set_job<Tin, T> j, M m, int *flags)
{
    const size_t i = blockIdx.x, dim = j.dim;
    const size_t first = j.offsets[i], n = j.offsets[i + 1] - first, base = j.base[i];
    int bad = 0;
    for (size_t s = threadIdx.x; s <= n; s += blockDim.x) {
        T *dst = j.out_values + (base + s) * dim;
        if (s == 0) {
            for (size_t k = 0; k < dim; k++)
                dst[k] = 0;
            if constexpr (M::uses_stamps)
                j.out_stamps[base] = 0;
            continue;
        }
        const Tin *src = j.values + (first + s - 1) * dim;
        for (size_t k = 0; k < dim; k++) {
            T v = (T)src[k];
            bad |= !isfinite(v);
            dst[k] = v;
        }
        if constexpr (M::uses_stamps) {
            T t = j.stamps ? (T)j.stamps[first + s - 1] : (T)s;
            /* usable in the input's type and in the computing one */
            if (j.stamps &&
                (!stamp_ok(j.stamps[first + s - 1]) || !stamp_ok(t) || (s >= 2 && t < (T)j.stamps[first + s - 2])))
                bad |= WW_FLAG_STAMPS;
            j.out_stamps[base + s] = t;
        }
    }
    if (bad)
        atomicOr(flags, bad);
    if constexpr (M::has_aux) {
        __syncthreads();
        for (size_t s = threadIdx.x; s <= n; s += blockDim.x) {
            if (s == 0) {
                j.out_delete[base] = 0;
                continue;
            }
            const T *x = j.out_values + (base + s) * dim;
            j.out_delete[base + s] = m.aux(x, x - dim, dim, j.out_stamps[base + s], j.out_stamps[base + s - 1]);
        }
    }
}

#endif
