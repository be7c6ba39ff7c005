/* The matrix engine's run (ww_pairwise with the CUDA backend): the sets uploaded and prepared, the
 * plan's rectangles computed in chunks of rows by the kernels of their strategies (pairwise_kernels.cuh)
 * or through the one-pair engine (the whole-GPU strategy), each strategy on a stream ("lane") and
 * host thread of its own, on every device of the context. Generic over the measure: the kernels
 * are instantiated per measure functor and window (measure.cuh); which strategy runs is the plan's
 * (pairwise_plan.cu).
 *
 * A rectangle is computed in chunks of rows: each chunk's block of the output is computed into
 * device memory and copied to the caller's matrix, so device memory stays bounded whatever the
 * matrix size, and progress/cancellation are reported between chunks.
 *
 * Float inputs are computed in float here (each entry is a short sum), double inputs in double. */
#include "pairwise.cuh"
#include "pairwise_launch.cuh"
#include "prepare.cuh"
#include "../common/settings.h"

#include <float.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <new>
#include <thread>
#include <vector>

#define CHUNK_TARGET_CELLS (1ull << 31) /* DP cells per launch: a progress report every ~10 ms */
#define CHUNK_MAX_BYTES ((size_t)128 << 20)  /* output bytes per chunk (two on the device, two pinned) */
/* Host sets up to this size travel with their offsets, in one copy: a query saves a copy's fixed
 * cost; larger sets would pay a host memcpy that costs more than the copy it saves (TWED's 600 x 60
 * matrix, 576 KB with stamps: 2-3% slower packed, on an H200 host) */
#define UPLOAD_PACK_BYTES ((size_t)64 << 10)
/* Larger host sets up to this size are copied into pinned memory on several threads: the GPU then
 * fetches them while the host goes on (288 KB: 36-48 us of the host's time pageable, 10 us staged
 * on 4 threads, H200 host); a pinned buffer is kept per set. (Staging a query of 6 KB too made an
 * index query 3-5% slower: an event more to wait for and record.) */
#define UPLOAD_STAGE_BYTES ((size_t)8 << 20)


/* What one strategy's chunks need on a device: a stream of its own (the strategies of one matrix
 * run concurrently), output buffers for two chunks in flight on the device and in pinned memory,
 * and the warp and block strategies' row buffers. */
struct chunk_lane {
    cudaStream_t stream, copy_stream; /* kernels; copies to pinned memory, beside the next kernel */
    ww_device_buffer out, scratch;
    void *pinned;
    size_t pinned_bytes;
    cudaEvent_t computed;  /* a chunk's kernels are done: its copy may start */
    cudaEvent_t copied[2]; /* a chunk has reached pinned memory */
};

/* Lanes for the thread, warp and block strategies; the whole-GPU strategy runs on the pair engine
 * (the state's own stream and buffers). */
#define CHUNK_LANES 3

struct pairwise_state {
    set_buffers x, y;
    ww_device_buffer views; /* the pair groups' gathered views (see pair_plan) */
    chunk_lane lanes[CHUNK_LANES];
    /* The flags of the call's uploads (bad values), copied to pinned memory behind them on the
     * state's stream, and an event after both that every lane waits for before its first kernel:
     * a lane reads the flags once its first chunk is back, before it writes anything, so the call
     * needs no round trip to the device between its uploads and its kernels. */
    int *flags_host;
    cudaEvent_t uploaded;
};

/* The flags and event of the call's uploads, created on first use. */
static ww_status uploads_ready(pairwise_state *ps)
{
    if (ps->flags_host == NULL)
        WW_CUDA_TRY(cudaMallocHost((void **)&ps->flags_host, sizeof(int)));
    if (ps->uploaded == NULL)
        WW_CUDA_TRY(cudaEventCreateWithFlags(&ps->uploaded, cudaEventDisableTiming));
    return WW_OK;
}

/* The uploads' flags, once the uploads (and the flags' copy) are done. */
static ww_status uploads_status(const pairwise_state *ps)
{
    WW_CUDA_TRY(cudaEventSynchronize(ps->uploaded));
    return ww_flags_status(*(volatile const int *)ps->flags_host);
}

/* The context owns one pairwise_state; allocated on first use. */
static pairwise_state *state_of(ww_cuda_state *s)
{
    if (s->pairwise == NULL)
        s->pairwise = calloc(1, sizeof(pairwise_state));
    return (pairwise_state *)s->pairwise;
}

void ww_cuda_release_set(set_buffers *b)
{
    ww_device_buffer *all[] = {&b->raw, &b->meta, &b->prepared};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
        if (all[k]->ptr)
            cudaFree(all[k]->ptr);
    if (b->staged) {
        cudaEventSynchronize(b->staged); /* no copy may still read the buffer */
        cudaEventDestroy(b->staged);
    }
    if (b->staging)
        cudaFreeHost(b->staging);
    memset(b, 0, sizeof *b);
}

void ww_cuda_pairwise_release(ww_cuda_state *s)
{
    pairwise_state *ps = (pairwise_state *)s->pairwise;
    if (ps == NULL)
        return;
    ww_cuda_release_set(&ps->x);
    ww_cuda_release_set(&ps->y);
    if (ps->views.ptr)
        cudaFree(ps->views.ptr);
    if (ps->flags_host)
        cudaFreeHost(ps->flags_host);
    if (ps->uploaded)
        cudaEventDestroy(ps->uploaded);
    for (int l = 0; l < CHUNK_LANES; l++) {
        chunk_lane *lane = &ps->lanes[l];
        if (lane->out.ptr)
            cudaFree(lane->out.ptr);
        if (lane->scratch.ptr)
            cudaFree(lane->scratch.ptr);
        if (lane->pinned)
            cudaFreeHost(lane->pinned);
        for (int k = 0; k < 2; k++)
            if (lane->copied[k])
                cudaEventDestroy(lane->copied[k]);
        if (lane->computed)
            cudaEventDestroy(lane->computed);
        if (lane->stream)
            cudaStreamDestroy(lane->stream);
        if (lane->copy_stream)
            cudaStreamDestroy(lane->copy_stream);
    }
    free(ps);
    s->pairwise = NULL;
}

/* The lane's stream and events, created on first use. */
static ww_status lane_ready(chunk_lane *lane)
{
    if (lane->stream == NULL)
        WW_CUDA_TRY(cudaStreamCreateWithFlags(&lane->stream, cudaStreamNonBlocking));
    if (lane->copy_stream == NULL)
        WW_CUDA_TRY(cudaStreamCreateWithFlags(&lane->copy_stream, cudaStreamNonBlocking));
    if (lane->computed == NULL)
        WW_CUDA_TRY(cudaEventCreateWithFlags(&lane->computed, cudaEventDisableTiming));
    for (int k = 0; k < 2; k++)
        if (lane->copied[k] == NULL)
            WW_CUDA_TRY(cudaEventCreateWithFlags(&lane->copied[k], cudaEventDisableTiming));
    return WW_OK;
}

/* Uploads dataset d and prepares it for measure M (compute type M::real) on the state's stream;
 * `threads` > 0: a small host set is staged in pinned memory on that many threads. */
template <class M>
static ww_status upload_set(ww_cuda_state *s, const M &m, const ww_dataset *d, set_buffers *b, int *flags,
                            prepared_columns<typename M::real> *out, int threads)
{
    typedef typename M::real T;
    size_t *max_length = &out->max_length;
    const size_t count = d->count, dim = d->dim, es = ww_cuda_esize(d->dtype);
    const size_t samples = d->offsets ? d->offsets[count] : count * d->length;
    /* One host block, one copy: the offsets and bases (count + 1 words each), the lengths, and the
     * samples of a small host set after them (each copy from pageable memory costs the host a few
     * microseconds: one query against an index is a few copies and a kernel). */
    const size_t words = 2 * (count + 1), meta_bytes = (words * sizeof(size_t) + count * sizeof(int) + 255) & ~(size_t)255;
    const size_t vbytes = samples * dim * es, tbytes = d->stamps ? samples * es : 0;
    const bool host_data = d->memory == WW_HOST;
    const bool staged = host_data && threads > 0 && vbytes + tbytes > UPLOAD_PACK_BYTES &&
                        meta_bytes + vbytes + tbytes <= UPLOAD_STAGE_BYTES;
    const bool packed = staged || (host_data && vbytes + tbytes <= UPLOAD_PACK_BYTES);
    char *host = NULL;
    if (staged) { /* the staging buffer, once the last copy out of it is done */
        if (b->staged == NULL)
            WW_CUDA_TRY(cudaEventCreateWithFlags(&b->staged, cudaEventDisableTiming));
        WW_CUDA_TRY(cudaEventSynchronize(b->staged));
        ww_status st = ww_pinned_reserve(&b->staging, &b->staging_bytes, meta_bytes + vbytes + tbytes);
        if (st != WW_OK)
            return st;
        host = (char *)b->staging;
    } else if ((host = (char *)malloc(meta_bytes + (packed ? vbytes + tbytes : 0))) == NULL) {
        return WW_ERR_MEMORY;
    }
    size_t *offsets = (size_t *)host, *base = offsets + (count + 1);
    int *length = (int *)(base + (count + 1));
    *max_length = 0;
    for (size_t i = 0; i <= count; i++) {
        offsets[i] = d->offsets ? d->offsets[i] : i * d->length;
        base[i] = offsets[i] + i;
        if (i < count) {
            size_t n = ww_dataset_length(d, i);
            if (n >= (size_t)INT32_MAX / 2) { /* the kernels index samples with int */
                if (!staged)
                    free(host);
                return WW_ERR_OVERFLOW;
            }
            length[i] = (int)n;
            if (n > *max_length)
                *max_length = n;
        }
    }
    if (packed) {
        ww_copy_rows(host + meta_bytes, vbytes, d->values, vbytes, vbytes, 1, staged ? threads : 1);
        if (tbytes)
            ww_copy_rows(host + meta_bytes + vbytes, tbytes, d->stamps, tbytes, tbytes, 1, staged ? threads : 1);
    }
    ww_status st = ww_device_reserve(&b->meta, meta_bytes + (packed ? vbytes + tbytes + 256 : 0));
    if (st == WW_OK)
        st = ww_device_reserve(&b->prepared, (samples + count) * (dim + 2) * sizeof(T));
    const void *values = d->values, *stamps = d->stamps;
    if (st == WW_OK && packed) {
        values = (const char *)b->meta.ptr + meta_bytes;
        stamps = d->stamps ? (const char *)values + vbytes : NULL;
    } else if (st == WW_OK && host_data) {
        st = ww_device_reserve(&b->raw, vbytes + tbytes + 256);
        if (st == WW_OK) {
            cudaError_t e = cudaMemcpyAsync(b->raw.ptr, d->values, vbytes, cudaMemcpyHostToDevice, s->stream);
            if (e == cudaSuccess && tbytes)
                e = cudaMemcpyAsync((char *)b->raw.ptr + vbytes, d->stamps, tbytes, cudaMemcpyHostToDevice, s->stream);
            st = ww_cuda_status(e);
            values = b->raw.ptr;
            stamps = d->stamps ? (const char *)b->raw.ptr + vbytes : NULL;
        }
    }
    /* `host` is pinned (staged: the event marks when it may be written again) or pageable (malloc): a
     * copy from pageable memory returns once its bytes are staged by the driver, so it may be freed
     * now, without waiting for the stream */
    if (st == WW_OK)
        st = ww_cuda_status(cudaMemcpyAsync(b->meta.ptr, host, meta_bytes + (packed ? vbytes + tbytes : 0),
                                            cudaMemcpyHostToDevice, s->stream));
    if (staged && st == WW_OK)
        st = ww_cuda_status(cudaEventRecord(b->staged, s->stream));
    if (!staged)
        free(host);
    if (st != WW_OK)
        return st;
    const size_t *dmeta = (const size_t *)b->meta.ptr;
    T *prep = (T *)b->prepared.ptr;
    prepare_set_job<T, T> job;
    job.values = (const T *)values;
    job.stamps = (const T *)stamps;
    job.offsets = dmeta;
    job.out_values = prep;
    job.out_stamps = prep + (samples + count) * dim;
    job.out_delete = job.out_stamps + (samples + count);
    job.base = dmeta + (count + 1);
    job.dim = dim;
    prepare_set_kernel<M, T, T><<<(unsigned)count, 128, 0, s->stream>>>(job, m, flags);
    WW_CUDA_TRY(cudaGetLastError());
    out->values = job.out_values;
    out->stamps = job.out_stamps;
    out->delete_cost = job.out_delete;
    out->base = job.base;
    out->length = (const int *)(dmeta + words);
    out->dim = dim;
    return WW_OK;
}

ww_status ww_cuda_upload_set(ww_cuda_state *s, const ww_measure *m, const ww_dataset *d, set_buffers *b, int *dflags,
                             prepared_columns<double> *out)
{
    const ww_dataset dm = ww_cuda_measured_dataset(m, d);
    return dispatch_measure(m->kind, [&](auto ops) {
        return upload_set(s, make_functor<decltype(ops), double>(m), &dm, b, dflags, out, 0);
    });
}

ww_status ww_cuda_upload_set(ww_cuda_state *s, const ww_measure *m, const ww_dataset *d, set_buffers *b, int *dflags,
                             prepared_columns<float> *out)
{
    const ww_dataset dm = ww_cuda_measured_dataset(m, d);
    return dispatch_measure(m->kind, [&](auto ops) {
        return upload_set(s, make_functor<decltype(ops), float>(m), &dm, b, dflags, out, 0);
    });
}


/* Work shared by the threads of one call: the strategies' lanes on each device, and the devices.
 * Each rectangle's rows are taken in chunks from its counter, so that a faster device takes more;
 * rows are disjoint, so every element is written once, and the self matrix's mirror is filled
 * after all have finished. Only the calling thread calls the progress callback; the others count
 * their cells in done_cells and stop at their next chunk once `stop` is set (a cancel, or a
 * failure anywhere). */
struct work_share {
    const pair_plan *plan;
    std::unique_ptr<std::atomic<size_t>[]> next_row; /* per rectangle: rows taken, from 0 */
    std::atomic<uint64_t> done_cells;
    std::atomic<int> stop;
    uint64_t reported; /* done_cells when the callback was last called (calling thread only) */
    std::thread::id caller;
    int devices;
    int copy_threads;          /* the context's threads, for copies into the caller's matrix */
    std::atomic<int> mirrored; /* the self matrix was completed on the device */
};

/* Threads for host copies (staging, copies into the caller's matrix, evictions): the context's on
 * the calling thread, one elsewhere (a worker thread of this call would start an OpenMP team of
 * its own every call). */
static int copy_threads_here(const work_share *share)
{
    return std::this_thread::get_id() == share->caller ? share->copy_threads : 1;
}

/* On the calling thread: passes the cells done so far to the callback (when they changed); a
 * nonzero answer stops all. */
static void report_progress(work_share *share, const ww_pairwise_options *o)
{
    if (std::this_thread::get_id() != share->caller || !o->progress || share->stop.load())
        return;
    const uint64_t done = share->done_cells.load();
    if (done == share->reported)
        return;
    share->reported = done;
    if (o->progress(share->reported, share->plan->total_cells, o->progress_user))
        share->stop.store(1);
}

/* Counts finished cells. WW_ERR_CANCELLED: stop. */
static ww_status count_progress(work_share *share, uint64_t cells, const ww_pairwise_options *o)
{
    share->done_cells.fetch_add(cells);
    report_progress(share, o);
    return share->stop.load() ? WW_ERR_CANCELLED : WW_OK;
}

/* Runs work(k) for k in [0, n): k = 0 on the calling thread, the others on threads of their own;
 * while it waits for them, the calling thread reports progress. Returns a failure before the
 * cancellations it caused on the others, then WW_ERR_CANCELLED if the work was stopped. */
template <typename Work>
static ww_status run_workers(int n, work_share *share, const ww_pairwise_options *o, Work work)
{
    /* every allocation is inside the try, so no exception leaves the extern "C" entry points */
    if (n <= 0)
        return WW_OK;
    std::vector<ww_status> status;
    std::vector<std::thread> threads;
    std::mutex lock;
    std::condition_variable done;
    int finished = 0;
    try {
        status.assign((size_t)n, WW_OK);
        threads.reserve((size_t)n - 1);
        for (int k = 1; k < n; k++)
            threads.emplace_back([&, k] {
                const ww_status st = work(k);
                if (st != WW_OK)
                    share->stop.store(1);
                std::lock_guard<std::mutex> guard(lock);
                status[(size_t)k] = st;
                finished++;
                done.notify_all();
            });
    } catch (...) { /* no memory or no thread to be had: the started ones stop at their next chunk */
        share->stop.store(1);
        if (status.empty())
            return WW_ERR_MEMORY; /* nothing started */
        status[0] = WW_ERR_MEMORY;
    }
    if (status[0] == WW_OK && (status[0] = work(0)) != WW_OK)
        share->stop.store(1);
    for (;;) {
        {
            std::unique_lock<std::mutex> wait(lock);
            done.wait_for(wait, std::chrono::milliseconds(5), [&] { return finished == (int)threads.size(); });
            if (finished == (int)threads.size())
                break;
        }
        report_progress(share, o);
    }
    for (std::thread &t : threads)
        t.join();
    ww_status st = WW_OK;
    for (size_t k = 0; k < status.size() && st == WW_OK; k++)
        if (status[k] != WW_ERR_CANCELLED)
            st = status[k];
    if (st == WW_OK && share->stop.load())
        st = WW_ERR_CANCELLED;
    return st;
}


/* The kernels' launches (pairwise_launch.cuh) are instantiated in src/cuda/instances/, one file per
 * measure and window, so that they compile in parallel. */
WW_PAIRWISE_INSTANCE(extern, twed_ops, false)
WW_PAIRWISE_INSTANCE(extern, twed_ops, true)
WW_PAIRWISE_INSTANCE(extern, dtw_ops, false)
WW_PAIRWISE_INSTANCE(extern, dtw_ops, true)

/* ------------------------------------------------------------------------------------------ */
/* Chunks of a rectangle                                                                        */
/* ------------------------------------------------------------------------------------------ */

/* Does the measure's window narrow any pair of series of at most `longest` samples? (a radius as
 * wide as the longest series, or a fraction of 1, leaves every pair whole: the kernels without a
 * window then run) */
static bool window_narrows(const ww_measure *m, size_t longest)
{
    if (m->window != WW_NO_WINDOW)
        return m->window < longest;
    return m->window_fraction >= 0.0 && m->window_fraction < 1.0;
}

/* One rectangle by the thread, warp or block strategy on `lane`: chunks of its rows are computed
 * into device memory, copied to pinned memory and from there into the caller's matrix. */
template <class M, typename Tout>
static ww_status run_chunks(ww_cuda_state *s, const pairwise_state *ps, chunk_lane *lane,
                            const device_set<typename M::real> &dx,
                            const device_set<typename M::real> &dy, const size_t *row_origin, const size_t *col_origin,
                            int self, const ww_measure *msr, void *out, const ww_pairwise_options *o,
                            const ww_dataset *hx, work_share *share, size_t block_index)
{
    typedef typename M::real T;
    const sub_block &sb = share->plan->blocks[block_index];
    const enum strategy strategy = sb.strategy;
    const size_t width = sb.col_count, rows = sb.row_count;
    const size_t longest = sb.max_row > sb.max_col ? sb.max_row : sb.max_col;
    const uint64_t cells_per_pair = (uint64_t)sb.max_row * sb.max_col;
    size_t rows_per_chunk = (size_t)(CHUNK_TARGET_CELLS / (cells_per_pair ? cells_per_pair : 1) / width);
    if (rows_per_chunk > 65535 * 128) /* lanes are counted in blockIdx.y */
        rows_per_chunk = 65535 * 128;
    if (rows_per_chunk < 1)
        rows_per_chunk = 1;
    /* the warp strategy needs several pairs per resident warp to fill the GPU */
    const size_t warp_pairs = 4 * (size_t)s->sm_count * WARPS_PER_SM;
    if ((strategy == STRATEGY_WARP || strategy == STRATEGY_BLOCK) && rows_per_chunk * width < warp_pairs)
        rows_per_chunk = (warp_pairs + width - 1) / width;
    /* and the staging buffers stay bounded whatever the series' lengths */
    if (rows_per_chunk * width * sizeof(Tout) > CHUNK_MAX_BYTES)
        rows_per_chunk = CHUNK_MAX_BYTES / (width * sizeof(Tout)) > 0 ? CHUNK_MAX_BYTES / (width * sizeof(Tout)) : 1;
    if (rows_per_chunk > rows)
        rows_per_chunk = rows;
    /* several devices: chunks small enough that each gets some, and that they finish together */
    const size_t share_rows = (rows + 4 * (size_t)share->devices - 1) / (4 * (size_t)share->devices);
    if (share->devices > 1 && rows_per_chunk > share_rows)
        rows_per_chunk = share_rows;
    /* Two chunks in flight: while the GPU computes chunk k+1, chunk k travels to pinned memory (on
     * the copy stream) and the host copies the previous one into the caller's matrix. */
    const size_t chunk_elems = rows_per_chunk * width;
    ww_status st = lane_ready(lane);
    if (st == WW_OK)
        st = ww_device_reserve(&lane->out, 2 * chunk_elems * sizeof(Tout));
    if (st == WW_OK)
        st = ww_pinned_reserve(&lane->pinned, &lane->pinned_bytes, 2 * chunk_elems * sizeof(Tout));
    if (st != WW_OK)
        return st;
    Tout *dout = (Tout *)lane->out.ptr, *pinned = (Tout *)lane->pinned;
    /* the warp strategy's row buffers: two rows (D, local terms) of the longest series per warp;
     * the block strategy's: two pairs of rows per block */
    const size_t stride = 2 * (longest + 1);
    const unsigned warp_blocks = (unsigned)((ww_cuda_warp_strategy_warps(s->sm_count, longest, sizeof(T)) + 3) / 4);
    const unsigned block_count = (unsigned)ww_cuda_block_strategy_blocks(s->sm_count, longest, sizeof(T));
    size_t scratch_bytes = 0;
    if (strategy == STRATEGY_WARP)
        scratch_bytes = (size_t)warp_blocks * 4 * stride * sizeof(T);
    else if (strategy == STRATEGY_BLOCK)
        scratch_bytes = (size_t)block_count * ww_cuda_block_scratch_stride(longest) * sizeof(T);
    if (scratch_bytes && (st = ww_device_reserve(&lane->scratch, scratch_bytes)) != WW_OK)
        return st;
    T *scratch = (T *)lane->scratch.ptr;
    /* A square self block computed in one chunk is completed on the device (mirror_lower_kernel):
     * its chunk is then copied as it is, and the host mirrors nothing. */
    const bool device_mirror = self && share->plan->blocks.size() == 1 && share->devices == 1 && sb.whole &&
                               rows_per_chunk == rows && width == rows && sb.first_row == o->row_begin &&
                               sb.first_col == o->col_begin && o->row_begin == o->col_begin &&
                               o->row_end == o->col_end && rows == o->row_end - o->row_begin;
    const int copy_threads = copy_threads_here(share);
    const bool windowed = window_narrows(msr, longest);
    const bool roll = windowed && ww_cuda_pairs_roll(msr, sb.max_row, sb.max_col, sizeof(T), dx.dim);
    const M mf = make_functor<typename M::ops, T>(msr);
    const int band_radius = windowed && sb.equal_lengths && sb.max_row == sb.max_col
                                ? ww_cuda_band_radius(msr, sb.max_row, dx.dim, sizeof(T))
                                : -1;
    /* copies chunk rows [q0, q1) from pinned buffer `buf` to the caller's matrix, counts progress
     * in DP cells as the CPU engine does (sum over rows of len(i) * sum of len(j)) */
    auto drain = [&](size_t q0, size_t q1, int buf) -> ww_status {
        WW_CUDA_TRY(cudaEventSynchronize(lane->copied[buf]));
        ww_status bad = uploads_status(ps); /* complete: the kernels waited for it */
        if (bad != WW_OK)
            return bad;
        const Tout *src = pinned + (size_t)buf * chunk_elems;
        if (sb.whole)
            ww_copy_rows((Tout *)out + (q0 - o->row_begin) * o->out_stride, o->out_stride * sizeof(Tout), src,
                         width * sizeof(Tout), width * sizeof(Tout), q1 - q0, copy_threads);
        else
            for (size_t q = q0; q < q1; q++) {
                const Tout *line = src + (q - q0) * width;
                Tout *dst = (Tout *)out + (sb.rows[q] - o->row_begin) * o->out_stride;
                for (size_t c = 0; c < width; c++)
                    dst[sb.cols[c] - o->col_begin] = line[c];
            }
        const uint64_t row_samples =
            sb.whole ? ww_cuda_samples(hx, q0, q1) : sb.row_samples[q1] - sb.row_samples[q0];
        return count_progress(share, row_samples * sb.col_samples, o);
    };
    WW_CUDA_TRY(cudaStreamWaitEvent(lane->stream, ps->uploaded, 0));
    const size_t end_row = sb.first_row + rows;
    std::atomic<size_t> &taken = share->next_row[block_index];
    size_t prev0 = 0, prev1 = 0;
    int buf = 0, have_prev = 0;
    for (size_t r0 = sb.first_row + taken.fetch_add(rows_per_chunk); r0 < end_row;
         r0 = sb.first_row + taken.fetch_add(rows_per_chunk)) {
        if (share->stop.load()) { /* a cancel or a failure elsewhere: launch nothing more */
            st = WW_ERR_CANCELLED;
            break;
        }
        const size_t r1 = r0 + rows_per_chunk < end_row ? r0 + rows_per_chunk : end_row;
        const chunk_args<M> k = {{r0, r1, sb.first_col, sb.first_col + width, width, self, row_origin, col_origin,
                                  o->row_begin, o->row_end, o->col_begin, o->col_end},
                                 mf,
                                 window_of(msr),
                                 band_radius};
        /* lanes over the longer side of the chunk, so that warps are full (one query against a set) */
        pair_map map = {r1 - r0 >= width || width > (size_t)65535 * 128};
        const size_t lane_count = map.lanes_are_rows ? r1 - r0 : width, shared_count = map.lanes_are_rows ? width : r1 - r0;
        Tout *d = dout + (size_t)buf * chunk_elems;
        if (strategy == STRATEGY_WARP)
            st = windowed ? launch_warp_pairs<M, Tout, true>(lane->stream, dx, dy, k, warp_blocks, scratch, stride, roll, d)
                          : launch_warp_pairs<M, Tout, false>(lane->stream, dx, dy, k, warp_blocks, scratch, stride, false,
                                                              d);
        else if (strategy == STRATEGY_BLOCK)
            st = windowed ? launch_block_pairs<M, Tout, true>(lane->stream, dx, dy, k, block_count, scratch,
                                                              ww_cuda_block_scratch_stride(longest), d)
                          : launch_block_pairs<M, Tout, false>(lane->stream, dx, dy, k, block_count, scratch,
                                                               ww_cuda_block_scratch_stride(longest), d);
        else
            st = windowed ? launch_thread_pairs<M, Tout, true>(lane->stream, dx, dy, k, map, longest, lane_count,
                                                               shared_count, d)
                          : launch_thread_pairs<M, Tout, false>(lane->stream, dx, dy, k, map, longest, lane_count,
                                                                shared_count, d);
        if (st == WW_OK && device_mirror && (st = launch_mirror_lower<Tout>(lane->stream, d, width)) == WW_OK)
            share->mirrored.store(1);
        if (st != WW_OK)
            break;
        /* Several chunks: each copy runs on the copy stream, beside the next chunk's kernels (it waits
         * for its own; the host drains chunk k - 1, below, before chunk k + 1 writes its buffers).
         * 14,000 x 14,000 matrices of length 60 on an H200: 0.88-0.98 of the time with the copies
         * behind the kernels on one stream (bench/results/gpu-dtw.md). One chunk has nothing to
         * overlap and stays on one stream: two streams cost a 600 x 600 call up to 13%. */
        cudaStream_t copy_stream = rows_per_chunk < rows ? lane->copy_stream : lane->stream;
        cudaError_t e = cudaGetLastError();
        if (e == cudaSuccess && copy_stream != lane->stream)
            e = cudaEventRecord(lane->computed, lane->stream);
        if (e == cudaSuccess && copy_stream != lane->stream)
            e = cudaStreamWaitEvent(copy_stream, lane->computed, 0);
        if (e == cudaSuccess)
            e = cudaMemcpyAsync(pinned + (size_t)buf * chunk_elems, d, (r1 - r0) * width * sizeof(Tout),
                                cudaMemcpyDeviceToHost, copy_stream);
        if (e == cudaSuccess)
            e = cudaEventRecord(lane->copied[buf], copy_stream);
        if ((st = ww_cuda_status(e)) != WW_OK)
            break;
        /* while the GPU computes the chunk, its pinned buffer leaves the CPU's caches */
        ww_evict_from_caches(pinned + (size_t)buf * chunk_elems, (r1 - r0) * width * sizeof(Tout), copy_threads);
        if (have_prev && (st = drain(prev0, prev1, buf ^ 1)) != WW_OK)
            break;
        prev0 = r0, prev1 = r1, have_prev = 1;
        buf ^= 1;
    }
    if (st == WW_OK && have_prev)
        st = drain(prev0, prev1, buf ^ 1);
    if (st != WW_OK) { /* leave no copy in flight into buffers we own, and no error for the next call */
        cudaStreamSynchronize(lane->stream);
        cudaStreamSynchronize(lane->copy_stream);
        cudaGetLastError();
    }
    return st;
}

/* One rectangle of long series: every needed entry through the one-pair engine, which fills the
 * GPU by itself (on the context's first device, its own stream and buffers): the wavefront engine,
 * or the per-diagonal baseline when the context was made for it and it serves the measure (TWED
 * without a window), as before the measures were split out. */
static ww_status run_grid_block(ww_ctx *ctx, const ww_measure *m, const ww_dataset *x, const ww_dataset *y, int self,
                                void *out, const ww_pairwise_options *o, work_share *share, size_t block_index)
{
    const sub_block &sb = share->plan->blocks[block_index];
    const ww_engine engine = ctx->engine == WW_ENGINE_CUDA_DIAGONAL && m->kind == WW_MEASURE_TWED &&
                                     !ww_measure_has_window(m)
                                 ? WW_ENGINE_CUDA_DIAGONAL
                                 : WW_ENGINE_CUDA_WAVEFRONT;
    std::atomic<size_t> &taken = share->next_row[block_index];
    for (size_t q = taken.fetch_add(1); q < sb.row_count; q = taken.fetch_add(1)) {
        const size_t i = sb.whole ? sb.first_row + q : sb.rows[q];
        for (size_t c = 0; c < sb.col_count; c++) {
            const size_t j = sb.whole ? sb.first_col + c : sb.cols[c];
            const bool mirror_in_block = j >= o->row_begin && j < o->row_end && i >= o->col_begin && i < o->col_end;
            double v = 0;
            if (!self || (i != j && !(mirror_in_block && j < i))) {
                if (share->stop.load()) /* a long pair each: stop between them */
                    return WW_ERR_CANCELLED;
                ww_series a, b;
                ww_dataset_series(x, i, &a);
                ww_dataset_series(y, j, &b);
                ww_status st = ww_cuda_pair(ctx, engine, m, &a, &b, &v);
                if (st != WW_OK)
                    return st;
            }
            const size_t at = (i - o->row_begin) * o->out_stride + (j - o->col_begin);
            if (o->out_dtype == WW_F32)
                ((float *)out)[at] = (float)v;
            else
                ((double *)out)[at] = v;
        }
        ww_status st = count_progress(share, (uint64_t)ww_dataset_length(x, i) * sb.col_samples, o);
        if (st != WW_OK)
            return st;
    }
    return WW_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* A matrix on one device                                                                       */
/* ------------------------------------------------------------------------------------------ */

template <typename T> static device_set<T> set_of(const prepared_columns<T> &c)
{
    device_set<T> d;
    d.values = c.values, d.stamps = c.stamps, d.delete_cost = c.delete_cost;
    d.base = c.base, d.length = c.length, d.dim = c.dim;
    return d;
}

/* A rectangle's sets as its kernels see them: the uploaded sets, or gathered views of them. */
template <typename T> struct block_views {
    device_set<T> x, y;
    const size_t *row_origin, *col_origin; /* NULL for a whole block */
};

/* Views of the plan's rectangles on one device: for each, its series' bases and lengths in its
 * order, and their original indices (for the mirror rule); one upload for all. */
template <typename T>
static ww_status make_views(ww_cuda_state *s, pairwise_state *ps, const pair_plan &plan, const ww_dataset *hx,
                            const ww_dataset *hy, const device_set<T> &dx, const device_set<T> &dy,
                            std::vector<block_views<T>> *views)
{
    try {
        const block_views<T> whole = {dx, dy, NULL, NULL};
        views->assign(plan.blocks.size(), whole);
        size_t words = 0, ints = 0;
        for (const sub_block &b : plan.blocks)
            if (!b.whole) {
                words += 2 * (b.row_count + b.col_count); /* bases and origins */
                ints += b.row_count + b.col_count;        /* lengths */
            }
        if (words == 0)
            return WW_OK;
        std::vector<size_t> host(words + (ints + 1) / 2); /* the ints after the words */
        size_t *word = host.data();
        int *length = (int *)(host.data() + words);
        struct at { size_t row_base, row_origin, col_base, col_origin, row_length, col_length; };
        std::vector<at> where(plan.blocks.size());
        size_t w = 0, n = 0;
        for (size_t k = 0; k < plan.blocks.size(); k++) {
            const sub_block &b = plan.blocks[k];
            if (b.whole)
                continue;
            at &a = where[k];
            a.row_base = w, a.row_origin = w + b.row_count, a.row_length = n;
            for (size_t r = 0; r < b.row_count; r++) {
                word[w + r] = ww_cuda_prepared_base(hx, b.rows[r]);
                word[w + b.row_count + r] = b.rows[r];
                length[n + r] = (int)ww_dataset_length(hx, b.rows[r]);
            }
            w += 2 * b.row_count, n += b.row_count;
            a.col_base = w, a.col_origin = w + b.col_count, a.col_length = n;
            for (size_t c = 0; c < b.col_count; c++) {
                word[w + c] = ww_cuda_prepared_base(hy, b.cols[c]);
                word[w + b.col_count + c] = b.cols[c];
                length[n + c] = (int)ww_dataset_length(hy, b.cols[c]);
            }
            w += 2 * b.col_count, n += b.col_count;
        }
        ww_status st = ww_device_reserve(&ps->views, host.size() * sizeof(size_t));
        if (st != WW_OK)
            return st;
        /* pageable memory, so the copy is complete when the stream is */
        WW_CUDA_TRY(cudaMemcpyAsync(ps->views.ptr, host.data(), host.size() * sizeof(size_t), cudaMemcpyHostToDevice,
                                    s->stream));
        WW_CUDA_TRY(cudaStreamSynchronize(s->stream));
        const size_t *dword = (const size_t *)ps->views.ptr;
        const int *dlength = (const int *)(dword + words);
        for (size_t k = 0; k < plan.blocks.size(); k++) {
            if (plan.blocks[k].whole)
                continue;
            block_views<T> &v = (*views)[k];
            v.x.base = dword + where[k].row_base;
            v.x.length = dlength + where[k].row_length;
            v.y.base = dword + where[k].col_base;
            v.y.length = dlength + where[k].col_length;
            v.row_origin = dword + where[k].row_origin;
            v.col_origin = dword + where[k].col_origin;
        }
        return WW_OK;
    } catch (const std::bad_alloc &) {
        return WW_ERR_MEMORY;
    }
}

/* The plan on device `s` for measure functor M: the sets uploaded and prepared, then one lane per
 * strategy present, run concurrently (the whole-GPU strategy only on the first device, as one-pair
 * calls run there). */
template <class M>
static ww_status run_device_typed(ww_ctx *ctx, ww_cuda_state *s, const ww_measure *msr, const ww_dataset *x,
                                  const ww_dataset *y, const prepared_columns<typename M::real> *cols, void *out,
                                  const ww_pairwise_options *o, work_share *share)
{
    typedef typename M::real T;
    pairwise_state *ps = state_of(s);
    if (ps == NULL)
        return WW_ERR_MEMORY;
    const pair_plan &plan = *share->plan;
    const int self = y == NULL;
    const ww_dataset *hy = self ? x : y;
    ww_status st = ww_device_reserve(&s->result, 64);
    if (st != WW_OK)
        return st;
    int *dflags = (int *)s->result.ptr;
    WW_CUDA_TRY(cudaMemsetAsync(dflags, 0, sizeof(int), s->stream));
    const M mf = make_functor<typename M::ops, T>(msr);
    prepared_columns<T> px, py;
    const int threads = copy_threads_here(share); /* host sets of 64 KB to 8 MB are staged on them */
    st = upload_set(s, mf, x, &ps->x, dflags, &px, threads);
    if (st == WW_OK && !self && cols == NULL)
        st = upload_set(s, mf, y, &ps->y, dflags, &py, threads);
    if (st != WW_OK)
        return st;
    device_set<T> dx = set_of(px), dy;
    if (self)
        dy = dx;
    else
        dy = set_of(cols ? *cols : py);
    std::vector<block_views<T>> views;
    if ((st = make_views<T>(s, ps, plan, x, hy, dx, dy, &views)) != WW_OK)
        return st;
    /* bad values anywhere stop the call before anything is written: every lane checks the flags
     * before it writes (uploads_status) */
    if ((st = uploads_ready(ps)) != WW_OK)
        return st;
    WW_CUDA_TRY(cudaMemcpyAsync(ps->flags_host, dflags, sizeof(int), cudaMemcpyDeviceToHost, s->stream));
    WW_CUDA_TRY(cudaEventRecord(ps->uploaded, s->stream));
    enum strategy lanes[STRATEGY_GRID + 1];
    int lane_count = 0;
    for (int k = STRATEGY_THREAD; k <= STRATEGY_GRID; k++) {
        if (k == STRATEGY_GRID && s != ctx->cuda)
            continue;
        for (const sub_block &b : plan.blocks)
            if (b.strategy == k) {
                lanes[lane_count++] = (enum strategy)k;
                break;
            }
    }
    return run_workers(lane_count, share, o, [&](int k) -> ww_status {
        const enum strategy lane = lanes[k];
        const ww_cuda_device_guard guard = ww_cuda_enter(s); /* a new thread starts on device 0 */
        ww_status r = WW_OK;
        for (size_t b = 0; b < plan.blocks.size() && r == WW_OK; b++) {
            const block_views<T> &v = views[b];
            if (plan.blocks[b].strategy != lane)
                continue;
            if (lane == STRATEGY_GRID)
                r = (r = uploads_status(ps)) == WW_OK ? run_grid_block(ctx, msr, x, hy, self, out, o, share, b) : r;
            else if (o->out_dtype == WW_F32)
                r = run_chunks<M, float>(s, ps, &ps->lanes[lane], v.x, v.y, v.row_origin, v.col_origin, self, msr, out, o,
                                         x, share, b);
            else
                r = run_chunks<M, double>(s, ps, &ps->lanes[lane], v.x, v.y, v.row_origin, v.col_origin, self, msr, out,
                                          o, x, share, b);
        }
        ww_cuda_leave(guard);
        return r;
    });
}

ww_status ww_cuda_check_set(const ww_dataset *d, const ww_measure *m)
{
    if (d == NULL)
        return WW_OK;
    if (d->memory == WW_DEVICE) {
        ww_status st = ww_cuda_check_device_pointer(d->values);
        if (st == WW_OK && ww_measure_stamps(m, d->stamps))
            st = ww_cuda_check_device_pointer(d->stamps);
        if (st != WW_OK)
            return st;
    }
    const ww_coef_f64 c = ww_measure_coef_f64(m);
    if (d->dtype == WW_F32 && (c.nu > FLT_MAX || c.lambda > FLT_MAX))
        return WW_ERR_PARAM;
    return WW_OK;
}

/* The plan's part on one device. */
static ww_status run_device_part(ww_ctx *ctx, ww_cuda_state *s, const ww_measure *m, const ww_dataset *x,
                                 const ww_dataset *y, const prepared_columns<float> *c32,
                                 const prepared_columns<double> *c64, void *out, const ww_pairwise_options *o,
                                 work_share *share)
{
    ww_cuda_device_guard guard = ww_cuda_enter(s);
    ww_status st = dispatch_measure(m->kind, [&](auto ops) {
        typedef decltype(ops) Ops;
        return x->dtype == WW_F32
                   ? run_device_typed<measure_functor<Ops, float>>(ctx, s, m, x, y, c32, out, o, share)
                   : run_device_typed<measure_functor<Ops, double>>(ctx, s, m, x, y, c64, out, o, share);
    });
    ww_cuda_recover(s, st);
    ww_cuda_leave(guard);
    return st;
}

ww_status ww_cuda_run_pairwise(ww_ctx *ctx, const ww_measure *m, const ww_dataset *x_in, const ww_dataset *y_in,
                               const prepared_columns<float> *c32, const prepared_columns<double> *c64, void *out,
                               const ww_pairwise_options *o, int devices)
{
    /* the series as the measure reads them (stamps dropped when it has none) */
    const ww_dataset xm = ww_cuda_measured_dataset(m, x_in), ym = y_in ? ww_cuda_measured_dataset(m, y_in) : xm;
    const ww_dataset *x = &xm, *y = y_in ? &ym : NULL;
    const int self = y == NULL;
    pair_plan plan;
    work_share share;
    ww_status st = ww_cuda_make_plan(ctx->cuda, m, x, self ? x : y, o, self, ww_cuda_esize(x->dtype), &plan);
    if (st != WW_OK || plan.blocks.empty())
        return st;
    bool all_grid = true;
    for (const sub_block &b : plan.blocks)
        all_grid = all_grid && b.strategy == STRATEGY_GRID;
    share.plan = &plan;
    share.next_row.reset(new (std::nothrow) std::atomic<size_t>[plan.blocks.size()]);
    if (!share.next_row)
        return WW_ERR_MEMORY;
    for (size_t b = 0; b < plan.blocks.size(); b++)
        share.next_row[b].store(0);
    share.done_cells.store(0);
    share.stop.store(0);
    share.reported = 0;
    share.caller = std::this_thread::get_id();
    share.devices = all_grid ? 1 : devices; /* long series stay on the first device */
    share.copy_threads = ctx->num_threads;
    share.mirrored.store(0);
    st = run_workers(share.devices, &share, o, [&](int d) {
        return run_device_part(ctx, d == 0 ? ctx->cuda : ctx->cuda_devices[d], m, x, y, c32, c64, out, o, &share);
    });
    /* the callback sees the end (once) */
    if (st == WW_OK && o->progress && share.reported != share.done_cells.load() &&
        o->progress(share.done_cells.load(), plan.total_cells, o->progress_user))
        st = WW_ERR_CANCELLED;
    if (st == WW_OK && self && !share.mirrored.load())
        ww_matrix_fill_mirror(o, out, ctx->num_threads);
    return st;
}

ww_status ww_cuda_pairwise(ww_ctx *ctx, const ww_measure *m, const ww_dataset *x, const ww_dataset *y, void *out,
                           const ww_pairwise_options *opt)
{
    ww_cuda_state *s = ctx->cuda;
    if (s == NULL)
        return WW_ERR_NO_DEVICE;
    const int host = x->memory == WW_HOST && (y == NULL || y->memory == WW_HOST);
    ww_status st = ww_cuda_check_set(x, m);
    if (st == WW_OK)
        st = ww_cuda_check_set(y, m);
    if (st != WW_OK)
        return st;
    /* several devices take host data only: a device pointer belongs to one GPU */
    return ww_cuda_run_pairwise(ctx, m, x, y, NULL, NULL, out, opt, ctx->cuda_count > 1 && host ? ctx->cuda_count : 1);
}
