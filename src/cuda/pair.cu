/* One pair on the GPU: the tile shape of the wavefront engine, launches, copies and the result
 * (the kernels are in pair_kernels.cuh and prepare.cuh). Generic over the measure: each measure's
 * kernels are instances of the same templates (measure.cuh). */
#include "wavefront_shapes.cuh"
#include "../common/settings.h"

#include <atomic>
#include <chrono>
#include <ctype.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Prepared samples of 2 to 8 components are zero-padded to 2, 4 or 8, so that the wavefront engine
 * can hold them in registers with a width known at compile time. The zeros change no distance:
 * each adds |0 - 0| = 0 to a sum of non-negative terms, exactly. */
static size_t prepared_width(size_t dim)
{
    return dim <= 2 ? dim : dim <= 4 ? 4 : dim <= 8 ? 8 : dim;
}

/* ------------------------------------------------------------------------------------------ */
/* Per-diagonal baseline (TWED without a window)                                                */
/* ------------------------------------------------------------------------------------------ */

template <class M, typename T>
static ww_status run_diagonal(ww_cuda_state *s, const device_series<T> &a, const device_series<T> &b, const M &m,
                              pair_result *result)
{
    const size_t na = a.length, nb = b.length;
    WW_CUDA_TRY(cudaGetLastError());
    ww_status st = ww_device_reserve(&s->work, 3 * (na + 1) * sizeof(T));
    if (st != WW_OK)
        return st;
    T *z0 = (T *)s->work.ptr, *z1 = z0 + (na + 1), *z2 = z1 + (na + 1);
    diagonal_start_kernel<T><<<1, 1, 0, s->stream>>>(z1);
    for (size_t d = 1; d <= na + nb; d++) {
        size_t lo = d > nb ? d - nb : 0, hi = d < na ? d : na;
        size_t cells = hi - lo + 1;
        unsigned threads = 256, blocks = (unsigned)((cells + threads - 1) / threads);
        diagonal_kernel<M, T><<<blocks, threads, 0, s->stream>>>(a, b, m, d, lo, hi, z1, z2, z0);
        T *t = z2;
        z2 = z1;
        z1 = z0;
        z0 = t;
    }
    diagonal_finish_kernel<T><<<1, 1, 0, s->stream>>>(z1, na, result);
    WW_CUDA_TRY(cudaGetLastError());
    return WW_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* The wavefront engine: tile shapes and launches                                               */
/* ------------------------------------------------------------------------------------------ */

/* The shapes and their kernels (wavefront_shapes.cuh) are instantiated in src/cuda/instances/, one
 * file per measure and window, so that they compile in parallel. */
WW_WAVEFRONT_INSTANCE(extern, twed_ops, false)
WW_WAVEFRONT_INSTANCE(extern, twed_ops, true)
WW_WAVEFRONT_INSTANCE(extern, dtw_ops, false)
WW_WAVEFRONT_INSTANCE(extern, dtw_ops, true)

/* A shape's kernel for samples of `width` prepared components (prepared_width) and norm p. */
template <class M>
static wavefront_launcher<M> wavefront_kernel_for(const wavefront_shape<M> &k, size_t width, int norm_p)
{
    if (width == 1)
        return k.dim1;
    const int v = width == 2 ? 0 : width == 4 ? 1 : width == 8 ? 2 : -1;
    if (v >= 0 && (norm_p == 1 || norm_p == 2)) /* NULL: no such shape for vectors in registers */
        return k.vec[v][norm_p - 1];
    return k.any;
}

/* The shape for a pair whose longer series has `rows` samples, and its kernel (*launch).
 * WW_WAVEFRONT_TILE ("RxCsSYNC" or "RxCsSYNClLAG", one of wavefront_shapes) overrides the choice,
 * for benchmarks and tests: a value that names no shape built for these samples is WW_ERR_BACKEND
 * (settings.h), so that a benchmark never measures another shape unawares. */
template <class M, bool WIN>
static ww_status wavefront_pick(size_t width, int norm_p, size_t rows, int sm_count, const wavefront_shape<M> **shape,
                                wavefront_launcher<M> *launch)
{
    const wavefront_shape<M> *shapes = wavefront_shapes<M, WIN>();
    const char *env = ww_setting_value(WW_SETTING_WAVEFRONT_TILE);
    if (env && *env) {
        int r = 0, c = 0, sync = 0, lag = 1, used = 0, tail = 0;
        bool named = sscanf(env, "%3dx%3ds%3d%n", &r, &c, &sync, &used) == 3;
        if (named && env[used] == 'l') { /* the lanes' lag, digits only: 1 if not named */
            named = isdigit((unsigned char)env[used + 1]) && sscanf(env + used, "l%3d%n", &lag, &tail) == 1;
            used += tail;
        }
        if (named && env[used] == '\0')
            for (int k = 0; k < SHAPE_COUNT; k++)
                if (shapes[k].rows == r && shapes[k].cols == c && shapes[k].sync == sync && shapes[k].lag == lag &&
                    (*launch = wavefront_kernel_for(shapes[k], width, norm_p))) {
                    *shape = &shapes[k];
                    return WW_OK;
                }
        return WW_ERR_BACKEND;
    }
    const size_t sms = sm_count > 0 ? (size_t)sm_count : 1;
    const wavefront_shape<M> *last = NULL;
    for (int k = 0; k < POLICY_SHAPES; k++) {
        const wavefront_shape<M> &candidate = shapes[k];
        if (!wavefront_kernel_for(candidate, width, norm_p) || (WIN && !candidate.windows))
            continue;
        last = &candidate;
        const size_t band_rows = (size_t)WAVEFRONT_THREADS * candidate.rows;
        if (WIN || candidate.fit == 0 || (rows + band_rows - 1) / band_rows <= (size_t)candidate.fit * sms)
            break;
    }
    if (last == NULL) /* (4 x 1 reads any samples: unreachable) */
        return WW_ERR_BACKEND;
    *shape = last;
    *launch = wavefront_kernel_for(*last, width, norm_p);
    return WW_OK;
}

/* Bands per multiprocessor at once, at most. Past 4, blocks spend their issue slots waiting for the
 * bands above (DTW, 8 x 2 at n = 2^20 on an H200: 1.01 s with the 5 that fit, 0.69 s with 4, 0.75 s
 * with 3). Under a window, only the bands across its width are busy at once: a band sweeps its
 * rows' windows, and starts a band's drift along the diagonal plus its skew after the band above
 * (windowed_sweep, WAVEFRONT_LAST_SKEW). Blocks beyond those busy bands only share the
 * multiprocessors' schedulers with them, and the steps on the critical path slow down: with a 10%
 * window and 4 x 1 tiles on an H200, DTW at 2^19 took 82 ms with 1 per multiprocessor against 89 ms
 * with 4 (TWED 92 against 122 ms), at 2^20 187 ms with 2 against 206 ms, and at 2^21 520 ms with 4
 * against 556 ms with 3 (bench/results/gpu-dtw.md). So a windowed pair takes the busy bands per
 * multiprocessor, rounded to the nearest (DTW's 3 x 1 at 2^20: 2.3, and 2 took 169 ms against 202
 * with 3; a 4 x 2 shape since removed had 1.9, and 1 took 231 against 184 ms with 2). */
static int wavefront_resident(const pair_band &band, bool windowed, size_t na, size_t shift, int rows, int cols,
                              int sync, int lag, size_t nbands, int sm_count)
{
    if (!windowed || nbands < 3 || sm_count < 1)
        return WAVEFRONT_MAX_RESIDENT;
    const unsigned mid = (unsigned)(nbands / 2);
    const band_sweep here = windowed_sweep(band, mid, (int)na, (int)shift, rows, cols);
    const band_sweep next = windowed_sweep(band, mid + 1, (int)na, (int)shift, rows, cols);
    const long long skew = WAVEFRONT_LAST_SKEW(sync, lag);
    const long long busy = (here.last - here.start + 1 + skew) / (next.start - here.start + skew);
    const long long per_sm = (2 * busy + sm_count) / (2 * sm_count);
    return per_sm < 1 ? 1 : per_sm > WAVEFRONT_MAX_RESIDENT ? WAVEFRONT_MAX_RESIDENT : (int)per_sm;
}

/* Numbers the calls of the whole process (not of a context: buffers move between contexts
 * through the allocator), starting from a value that differs between processes, so that a
 * hand-over pair left in memory by any earlier call never carries the id a band waits for. 40
 * bits: never wraps in practice. */
static unsigned long long next_wavefront_call(void)
{
    static std::atomic<unsigned long long> counter(
        ((unsigned long long)std::chrono::steady_clock::now().time_since_epoch().count() * 0x9E3779B97F4A7C15ull) >> 25);
    unsigned long long call;
    do
        call = ++counter & ((1ull << 40) - 1);
    while (call == 0); /* zero (cleared memory) must never be a valid id's call */
    return call;
}

template <class M, bool WIN>
static ww_status run_wavefront(ww_cuda_state *s, const device_series<double> &a, const device_series<double> &b,
                               const M &m, const pair_band &band, pair_result *result)
{
    wavefront_launcher<M> launch = NULL;
    const wavefront_shape<M> *shape = NULL;
    ww_status st = wavefront_pick<M, WIN>(a.dim, m.norm_p(), a.length, s->sm_count, &shape, &launch);
    if (st != WW_OK)
        return st;
    const size_t band_rows = (size_t)WAVEFRONT_THREADS * shape->rows;
    /* the result read at its exact cell (see result_cell): the rows shifted so that row na is the
     * last of a thread's tile rows, unless the padding repeats it past the end */
    const bool exact = WIN || !M::pad_repeats_last;
    const size_t R = (size_t)shape->rows, shift = exact ? (R - a.length % R) % R : 0;
    const size_t nbands = (a.length + shift + band_rows - 1) / band_rows;
    const size_t blocks = (b.length + shape->cols - 1) / shape->cols;
    /* the kernel indexes rows, columns and steps with int */
    if (a.length + 2 * band_rows >= (size_t)INT32_MAX || b.length + 1024 >= (size_t)INT32_MAX)
        return WW_ERR_OVERFLOW;
    const size_t row_bytes = blocks * shape->cols * sizeof(handover);
    const size_t had = s->work.bytes;
    st = ww_device_reserve(&s->work, row_bytes);
    if (st != WW_OK)
        return st;
    /* a new buffer may hold another context's hand-over pairs: zeros fail every check */
    if (s->work.bytes != had)
        WW_CUDA_TRY(cudaMemsetAsync(s->work.ptr, 0, s->work.bytes, s->stream));
    wavefront_args<M> w;
    w.a = a;
    w.b = b;
    w.m = m;
    w.column_blocks = (int)blocks;
    w.rows = (handover *)s->work.ptr;
    w.call = next_wavefront_call();
    w.next_band = &result->next_band;
    w.nbands = (unsigned)nbands;
    w.spread = 0; /* (the launch sets it) */
    w.result = result;
    w.band = band;
    /* D(na, nb): shifted row na - 1 + shift (0-based), column nb - 1 (in the last block); or the
     * last cell of the last tile */
    const size_t last_row = a.length - 1 + shift;
    w.at.thread = exact ? (int)(last_row % band_rows / R) : WAVEFRONT_THREADS - 1;
    w.at.c = exact ? (int)((b.length - 1) % (size_t)shape->cols) : shape->cols - 1;
    w.at.row_shift = (int)shift;
    const int per_sm = wavefront_resident(band, WIN, a.length, shift, shape->rows, shape->cols, shape->sync,
                                          shape->lag, nbands, s->sm_count);
    return launch(s, w, per_sm);
}

/* ------------------------------------------------------------------------------------------ */
/* One pair                                                                                     */
/* ------------------------------------------------------------------------------------------ */

/* Host series are packed into one pinned buffer and sent with one copy (small pairs are bound by
 * per-copy latency); device series are read in place. Either way they are converted to double on
 * the device: a float D chain over a million cells drifts by 1e-4 relative, and double costs the
 * wavefront engine nothing measurable (bench/results/gpu.md). */
template <class Ops, typename Tin>
static ww_status run_pair(ww_ctx *ctx, ww_engine engine, const ww_measure *msr, const ww_series *sa,
                          const ww_series *sb, double *out)
{
    typedef measure_functor<Ops, double> M;
    const M m = make_functor<Ops, double>(msr);
    const pair_band band = pair_band::make(window_of(msr), sa->length, sb->length);
    /* the per-diagonal baseline: TWED without a window (the registry offers it for nothing else) */
    const bool diagonal = engine == WW_ENGINE_CUDA_DIAGONAL;
    if (diagonal && (Ops::kind != WW_MEASURE_TWED || band.windowed()))
        return WW_ERR_UNSUPPORTED;
    ww_cuda_state *s = ctx->cuda;
    const size_t dim = sa->dim, width = prepared_width(dim);
    const ww_series *in[2] = {sa, sb};
    size_t host_bytes = 0, off[2][2] = {{0, 0}, {0, 0}};
    for (int k = 0; k < 2; k++) {
        if (in[k]->memory != WW_HOST)
            continue;
        off[k][0] = host_bytes;
        host_bytes += (in[k]->length * dim * sizeof(Tin) + 255) & ~(size_t)255;
        off[k][1] = host_bytes;
        if (in[k]->stamps)
            host_bytes += (in[k]->length * sizeof(Tin) + 255) & ~(size_t)255;
    }
    /* pinned: the inputs, the result's initial state, the result read back */
    const size_t result_at = host_bytes, readback_at = host_bytes + ((sizeof(pair_result) + 255) & ~(size_t)255);
    ww_status st = ww_pinned_reserve(&s->pinned, &s->pinned_bytes, readback_at + sizeof(pair_result));
    if (st == WW_OK)
        st = ww_device_reserve(&s->input, result_at + sizeof(pair_result));
    /* each prepared array holds the padded samples and is rounded up to 4 doubles (32 bytes) */
    size_t padded[2], prep_elems = 0;
    for (int k = 0; k < 2; k++) {
        padded[k] = (SERIES_PAD_FRONT + in[k]->length + 1 + SERIES_PAD_BACK + 3) & ~(size_t)3;
        prep_elems += padded[k] * (width + 2);
    }
    if (st == WW_OK)
        st = ww_device_reserve(&s->prepared, prep_elems * sizeof(double));
    if (st != WW_OK)
        return st;

    const Tin *dev_values[2], *dev_stamps[2];
    char *pinned = (char *)s->pinned;
    for (int k = 0; k < 2; k++) {
        if (in[k]->memory == WW_HOST) {
            memcpy(pinned + off[k][0], in[k]->values, in[k]->length * dim * sizeof(Tin));
            dev_values[k] = (const Tin *)((char *)s->input.ptr + off[k][0]);
            dev_stamps[k] = NULL;
            if (in[k]->stamps) {
                memcpy(pinned + off[k][1], in[k]->stamps, in[k]->length * sizeof(Tin));
                dev_stamps[k] = (const Tin *)((char *)s->input.ptr + off[k][1]);
            }
        } else {
            dev_values[k] = (const Tin *)in[k]->values;
            dev_stamps[k] = (const Tin *)in[k]->stamps;
        }
    }
    pair_result *init = (pair_result *)(pinned + result_at), *dres = (pair_result *)((char *)s->input.ptr + result_at);
    init->value = NAN;
    init->flags = 0;
    init->next_band = 0;
    memset(init->sm_blocks, 0, sizeof init->sm_blocks);
    /* one copy: the host series (if any) and the result's initial state behind them */
    WW_CUDA_TRY(cudaMemcpyAsync(s->input.ptr, pinned, result_at + sizeof(pair_result), cudaMemcpyHostToDevice,
                                s->stream));
    device_series<double> ds[2];
    prepare_job<Tin> jobs[2];
    double *prep = (double *)s->prepared.ptr;
    for (int k = 0; k < 2; k++) {
        size_t n = in[k]->length;
        jobs[k].values = dev_values[k];
        jobs[k].stamps = dev_stamps[k];
        jobs[k].n = n;
        jobs[k].dim = dim;
        jobs[k].width = width;
        jobs[k].out_values = prep + SERIES_PAD_FRONT * width;
        jobs[k].out_stamps = prep + padded[k] * width + SERIES_PAD_FRONT;
        jobs[k].out_delete = jobs[k].out_stamps + padded[k];
        ds[k].values = jobs[k].out_values;
        ds[k].stamps = jobs[k].out_stamps;
        ds[k].delete_cost = jobs[k].out_delete;
        ds[k].length = n;
        ds[k].dim = width; /* the engines see the prepared samples */
        prep += padded[k] * (width + 2);
    }
    size_t longest = sa->length > sb->length ? sa->length : sb->length;
    unsigned pblocks = (unsigned)((longest + 256) / 256);
    if (pblocks > 4096)
        pblocks = 4096;
    prepare_values_kernel<M, Tin><<<dim3(pblocks, 2), 256, 0, s->stream>>>(jobs[0], jobs[1], m, &dres->flags);
    if (M::has_aux && dim > 1)
        prepare_costs_kernel<M, Tin><<<dim3(pblocks, 2), 256, 0, s->stream>>>(jobs[0], jobs[1], m);
    WW_CUDA_TRY(cudaGetLastError());

    if (diagonal) {
        st = run_diagonal<M, double>(s, ds[0], ds[1], m, dres);
    } else {
        /* a symmetric measure: the longer series gives the rows, so more bands run at once (the
         * window is symmetric too: its band is taken for the rows and columns as they come) */
        const bool swap = M::symmetric && ds[0].length < ds[1].length;
        const device_series<double> &rows = swap ? ds[1] : ds[0], &cols = swap ? ds[0] : ds[1];
        const pair_band b = pair_band::make(window_of(msr), rows.length, cols.length);
        st = b.windowed() ? run_wavefront<M, true>(s, rows, cols, m, b, dres)
                          : run_wavefront<M, false>(s, rows, cols, m, b, dres);
    }
    if (st != WW_OK)
        return st;
    pair_result *hres = (pair_result *)(pinned + readback_at);
    WW_CUDA_TRY(cudaMemcpyAsync(hres, dres, offsetof(pair_result, sm_blocks), cudaMemcpyDeviceToHost, s->stream));
    WW_CUDA_TRY(cudaStreamSynchronize(s->stream));
    if ((st = ww_flags_status(hres->flags)) != WW_OK)
        return st;
    if (isnan(hres->value)) /* still the poison: no engine wrote the result */
        return WW_ERR_CUDA;
    *out = hres->value;
    return WW_OK;
}

ww_status ww_cuda_pair(ww_ctx *ctx, ww_engine engine, const ww_measure *m, const ww_series *a_in,
                       const ww_series *b_in, double *out)
{
    ww_cuda_state *s = ctx->cuda;
    if (s == NULL)
        return WW_ERR_NO_DEVICE;
    const ww_series a0 = ww_cuda_measured_series(m, a_in), b0 = ww_cuda_measured_series(m, b_in);
    const ww_series *a = &a0, *b = &b0;
    /* Host data is checked on the host first: cheaper than a round trip when it is bad, and it
     * keeps the error identical to the CPU engine's. Device data is checked by prepare_kernel. */
    if (a->memory == WW_HOST) {
        ww_status st = ww_check_values_host(a->values, a->stamps, a->length, a->dim, a->dtype);
        if (st != WW_OK)
            return st;
    }
    if (b->memory == WW_HOST) {
        ww_status st = ww_check_values_host(b->values, b->stamps, b->length, b->dim, b->dtype);
        if (st != WW_OK)
            return st;
    }
    /* the GPU engines index rows and columns with int (the registry sends longer pairs of host
     * data to the CPU) */
    if (a->length >= WW_CUDA_MAX_LENGTH || b->length >= WW_CUDA_MAX_LENGTH)
        return WW_ERR_OVERFLOW;
    const ww_series *in[2] = {a, b};
    for (int k = 0; k < 2; k++)
        if (in[k]->memory == WW_DEVICE) {
            ww_status st = ww_cuda_check_device_pointer(in[k]->values);
            if (st == WW_OK && in[k]->stamps)
                st = ww_cuda_check_device_pointer(in[k]->stamps);
            if (st != WW_OK)
                return st;
        }
    ww_cuda_device_guard guard = ww_cuda_enter(s);
    ww_status st = dispatch_measure(m->kind, [&](auto ops) {
        typedef decltype(ops) Ops;
        return a->dtype == WW_F32 ? run_pair<Ops, float>(ctx, engine, m, a, b, out)
                                  : run_pair<Ops, double>(ctx, engine, m, a, b, out);
    });
    ww_cuda_recover(s, st); /* leave the stream usable for the next call */
    ww_cuda_leave(guard);
    return st;
}

ww_status ww_cuda_distance(ww_ctx *ctx, const ww_measure *m, const ww_series *a, const ww_series *b, double *out)
{
    return ww_cuda_pair(ctx, ctx->engine, m, a, b, out);
}
