/* GPU engine of elastic image matching: one block per image pair, many pairs per launch. The
 * block's threads each run one row pair's small DP (src/measures/dpa.h) in their own registers
 * (rows of up to 32 pixels; wider ones in local memory), over the band of row pairs a path can
 * use; the row distances stay in shared memory, where warp 0 then runs the outer DP. Pixels
 * travel in their own dtype (u8 stays 1 byte) and are read as float: the engine computes in float.
 * Policy (when it runs) is src/common/image.c. */
#include "cuda_common.cuh"

#include "../common/image_internal.h"
#include "../measures/dpa.h"

#include <stdlib.h>
#include <string.h>

namespace {

/* An image on the device: where its pixels start in its set's buffer, its size and dtype. */
struct image_meta {
    unsigned long long offset;
    int height, width, dtype;
};

/* The pairs of one launch: entries (row_begin + p / cols, col_begin + p % cols) for p in
 * [first, first + count), and the self-matrix rule of the CPU engine. */
struct pair_range {
    long long first, count;
    long long row_begin, col_begin, cols;
    long long block_row_begin, block_row_end, block_col_begin, block_col_end;
    int self;
};

constexpr int THREADS = 128;
constexpr int CHUNK_PAIRS = 1 << 20; /* entries per launch: progress and Ctrl-C between launches */

/* An image's pixels: base + offset, where device images in place have base 0 and their address as
 * the offset (unsigned arithmetic: no pointer past an object). */
__host__ __device__ __forceinline__ const unsigned char *pixels_at(const unsigned char *base, unsigned long long offset)
{
    return (const unsigned char *)((uintptr_t)base + (uintptr_t)offset);
}

/* Sets *flag when a float image of the set has a NaN or infinite pixel (device images in place:
 * their values were not checked on the host). */
__global__ void image_finite_kernel(const unsigned char *base, const image_meta *meta, long long count, int channels,
                                    int *flag)
{
    for (long long k = blockIdx.x; k < count; k += gridDim.x) {
        const image_meta m = meta[k];
        const unsigned char *p = pixels_at(base, m.offset);
        const long long n = (long long)m.height * m.width * channels;
        for (long long q = threadIdx.x; q < n; q += blockDim.x)
            if ((m.dtype == WW_F32 && !isfinite(reinterpret_cast<const float *>(p)[q])) ||
                (m.dtype == WW_F64 && !isfinite(reinterpret_cast<const double *>(p)[q])))
                *flag = 1;
    }
}

__device__ __forceinline__ float load_pixel(const unsigned char *base, int dtype, size_t k)
{
    if (dtype == WW_U8)
        return (float)base[k];
    if (dtype == WW_F32)
        return reinterpret_cast<const float *>(base)[k];
    return (float)reinterpret_cast<const double *>(base)[k];
}

__device__ __forceinline__ bool entry_needed(const pair_range &r, long long i, long long j)
{
    if (!r.self)
        return true;
    if (i == j)
        return false;
    const bool mirror_in_block =
        j >= r.block_row_begin && j < r.block_row_end && i >= r.block_col_begin && i < r.block_col_end;
    return i < j || !mirror_in_block;
}

/* One row pair: the DPA of row xr (w1 pixels) and row yr (w2 pixels), in float. MAXW bounds w2. */
template <int MAXW>
__device__ float row_pair(const float *xr, int w1, const float *yr, int w2, int channels, int squared)
{
    float D[3][MAXW + 2], e[2][MAXW + 1];
    const float inf = __int_as_float(0x7f800000);
    for (int k = 0; k < w2 + 2; k++)
        D[0][k] = D[1][k] = D[2][k] = inf;
    for (int k = 0; k < w2 + 1; k++)
        e[0][k] = e[1][k] = 0.0f;
    long long band_lo[3] = {0, 0, 0}, band_hi[3] = {-1, -1, -1};
    for (int n = 0; n < w1; n++) {
        const int cur = n % 3, up1 = (n + 2) % 3, up2 = (n + 1) % 3, ec = n & 1, eu = (n + 1) & 1;
        for (long long m = band_lo[cur]; m <= band_hi[cur]; m++)
            D[cur][m + 2] = inf;
        long long lo, hi;
        ww_dpa_band_row(n, w1, w2, &lo, &hi);
        band_lo[cur] = lo;
        band_hi[cur] = hi;
        const float *xp = xr + (size_t)n * channels;
        for (long long m = lo; m <= hi; m++) {
            const float d = ww_dpa_local_f32(xp, yr + (size_t)m * channels, 1, (size_t)channels, squared);
            e[ec][m + 1] = d;
            D[cur][m + 2] = ww_dpa_cell_f32(D[up1][m + 1], D[up1][m], D[up2][m + 1], e[ec][m], e[eu][m + 1], d);
        }
        if (n == 0 && lo == 0)
            D[0][2] = ww_dpa_first_f32(e[0][1]);
    }
    return ww_dpa_finish_f32(D[(w1 - 1) % 3][w2 + 1], (size_t)w1, (size_t)w2);
}

/* One row pair in registers, for rows of at most W pixels (W a multiple of 4): row_pair's DP with
 * its three rows of D and two of local distances in registers instead of local memory. A cell reads
 * only the two rows above it, so the W cells of a row are independent: unrolled, in groups of 4
 * that are skipped where the row's band misses them (the band depends on the widths only, so it is
 * the same for every row pair of an image pair: uniform across the block). Cells off the band hold
 * +inf, as in row_pair, and its results are the same bits: a cell takes the same operands (a local
 * distance off the band enters only terms that are +inf). GRAY: one channel, the y row's pixels in
 * registers too. */
template <int W, bool GRAY>
__device__ float row_pair_regs(const float *xr, int w1, const float *yr, int w2, int channels, int squared)
{
    constexpr int G = 4;
    const float inf = __int_as_float(0x7f800000);
    float d1[W], d2[W], e1[W], yv[GRAY ? W : 1]; /* D of rows n - 1 and n - 2, local distances of row n - 1 */
#pragma unroll
    for (int m = 0; m < W; m++) {
        d1[m] = d2[m] = inf;
        e1[m] = 0.0f;
        if constexpr (GRAY)
            yv[m] = m < w2 ? yr[m] : 0.0f;
    }
    for (int n = 0; n < w1; n++) {
        long long lo_l, hi_l;
        ww_dpa_band_row(n, w1, w2, &lo_l, &hi_l);
        const int lo = (int)lo_l, hi = (int)hi_l;
        const float *xp = xr + (size_t)n * channels;
        const float xg = GRAY ? xp[0] : 0.0f;
        float ec[W], dc[W];
#pragma unroll
        for (int g = 0; g < W; g += G) {
            const bool skip = g + G - 1 < lo || g > hi;
#pragma unroll
            for (int u = 0; u < G; u++) {
                const int m = g + u;
                float d = 0.0f;
                if (!skip && m < w2) {
                    if constexpr (GRAY) {
                        const float t = xg - yv[m];
                        d = squared ? t * t : fabsf(t);
                    } else {
                        d = ww_dpa_local_f32(xp, yr + (size_t)m * channels, 1, (size_t)channels, squared);
                    }
                }
                ec[m] = d;
            }
        }
#pragma unroll
        for (int g = 0; g < W; g += G) {
            const bool skip = g + G - 1 < lo || g > hi;
#pragma unroll
            for (int u = 0; u < G; u++) {
                const int m = g + u;
                float v = inf;
                if (!skip) {
                    const float diag = m >= 1 ? d1[m - 1] : inf, left2 = m >= 2 ? d1[m - 2] : inf;
                    const float up2 = m >= 1 ? d2[m - 1] : inf, d_left = m >= 1 ? ec[m - 1] : 0.0f;
                    v = ww_dpa_cell_f32(diag, left2, up2, d_left, e1[m], ec[m]);
                    if (m == 0 && n == 0)
                        v = ww_dpa_first_f32(ec[0]);
                    v = m >= lo && m <= hi ? v : inf;
                }
                dc[m] = v;
            }
        }
#pragma unroll
        for (int m = 0; m < W; m++)
            d2[m] = d1[m], d1[m] = dc[m], e1[m] = ec[m];
    }
    float last = inf;
#pragma unroll
    for (int m = 0; m < W; m++)
        last = m == w2 - 1 ? d1[m] : last;
    return ww_dpa_finish_f32(last, (size_t)w1, (size_t)w2);
}

/* A row pair by the engine for rows of at most MAXW pixels: in registers up to 32 (REGS: W), else
 * row_pair's local memory. */
template <int MAXW, int REGS>
__device__ __forceinline__ float row_pair_any(const float *xr, int w1, const float *yr, int w2, int channels,
                                              int squared)
{
    if constexpr (REGS > 0)
        return channels == 1 ? row_pair_regs<REGS, true>(xr, w1, yr, w2, channels, squared)
                             : row_pair_regs<REGS, false>(xr, w1, yr, w2, channels, squared);
    else
        return row_pair<MAXW>(xr, w1, yr, w2, channels, squared);
}

template <int MAXW, int REGS>
__global__ void __launch_bounds__(THREADS) image_pairs_kernel(const unsigned char *xpix, const image_meta *xm,
                                                              const unsigned char *ypix, const image_meta *ym,
                                                              int channels, int squared, pair_range r, float *out)
{
    extern __shared__ float smem[];
    const float inf = __int_as_float(0x7f800000);
    for (long long p = blockIdx.x; p < r.count; p += gridDim.x) {
        const long long q = r.first + p, i = r.row_begin + q / r.cols, j = r.col_begin + q % r.cols;
        if (!entry_needed(r, i, j))
            continue;
        const image_meta a = xm[i], b = ym[j];
        const int h1 = a.height, w1 = a.width, h2 = b.height, w2 = b.width;
        if (!ww_dpa_feasible(h1, h2) || !ww_dpa_feasible(w1, w2)) {
            if (threadIdx.x == 0)
                out[p] = inf;
            continue;
        }
        float *xs = smem, *ys = xs + (size_t)h1 * w1 * channels, *rd = ys + (size_t)h2 * w2 * channels;
        float *Dd = rd + (size_t)h1 * h2;
        /* the band of row pairs: row ri's first pair and its count's running sum */
        int *band_lo = (int *)(Dd + (size_t)h1 * h2), *band_start = band_lo + h1;
        for (int k = threadIdx.x; k < h1 * w1 * channels; k += blockDim.x)
            xs[k] = load_pixel(pixels_at(xpix, a.offset), a.dtype, (size_t)k);
        for (int k = threadIdx.x; k < h2 * w2 * channels; k += blockDim.x)
            ys[k] = load_pixel(pixels_at(ypix, b.offset), b.dtype, (size_t)k);
        for (int k = threadIdx.x; k < h1 * h2; k += blockDim.x)
            rd[k] = inf;
        if (threadIdx.x == 0) {
            int sum = 0;
            for (int ri = 0; ri < h1; ri++) {
                long long lo, hi;
                ww_dpa_band_row(ri, h1, h2, &lo, &hi);
                band_lo[ri] = (int)lo, band_start[ri] = sum;
                sum += hi >= lo ? (int)(hi - lo + 1) : 0;
            }
            band_start[h1] = sum;
        }
        __syncthreads();
        /* the row pairs in the band only, one per thread: every lane of a warp busy with a DP of
         * the same widths */
        for (int k = threadIdx.x; k < band_start[h1]; k += blockDim.x) {
            int first = 0, last = h1 - 1; /* the last row whose start is <= k */
            while (first < last) {
                const int mid = (first + last + 1) / 2;
                if (band_start[mid] <= k)
                    first = mid;
                else
                    last = mid - 1;
            }
            const int ri = first, rj = band_lo[ri] + (k - band_start[ri]);
            rd[ri * h2 + rj] = row_pair_any<MAXW, REGS>(xs + (size_t)ri * w1 * channels, w1,
                                                        ys + (size_t)rj * w2 * channels, w2, channels, squared);
        }
        __syncthreads();
        /* the outer DP by warp 0, an anti-diagonal at a time (its cells read the two before the
         * last): the same cells as ww_dpa_full's loop, h1 + h2 - 1 steps instead of h1 h2 */
        if (threadIdx.x < 32) {
            for (int k = 0; k <= h1 + h2 - 2; k++) {
                const int i_lo = k - (h2 - 1) > 0 ? k - (h2 - 1) : 0, i_hi = k < h1 - 1 ? k : h1 - 1;
                for (int i = i_lo + (int)threadIdx.x; i <= i_hi; i += 32)
                    ww_dpa_full_cell_f32(rd, (size_t)h2, Dd, (size_t)i, (size_t)(k - i));
                __syncwarp();
            }
            if (threadIdx.x == 0)
                out[p] = ww_dpa_finish_f32(Dd[(size_t)h1 * h2 - 1], (size_t)h1, (size_t)h2);
        }
        __syncthreads(); /* the next pair reuses the shared memory */
    }
}

/* Whether a set's images lie one after the other in memory (a stack), so that it travels to the
 * GPU in one copy from where it is. */
static int contiguous_set(const ww_image *set, size_t n)
{
    const unsigned char *base = (const unsigned char *)set[0].pixels, *next = base;
    for (size_t k = 0; k < n; k++) {
        /* in place, and at an offset the kernel may read its dtype from */
        if ((const unsigned char *)set[k].pixels != next || (size_t)(next - base) % ww_image_dtype_size(set[k].dtype))
            return 0;
        next += set[k].height * set[k].width * set[k].channels * ww_image_dtype_size(set[k].dtype);
    }
    return 1;
}

/* The bytes of a set's pixels, exactly. */
static size_t exact_bytes(const ww_image *set, size_t n)
{
    size_t total = 0;
    for (size_t k = 0; k < n; k++)
        total += set[k].height * set[k].width * set[k].channels * ww_image_dtype_size(set[k].dtype);
    return total;
}

/* The layout of a set in one buffer (each image 8-byte aligned, or as it lies when `as_is`), its
 * metadata into meta (when not NULL), the pixels into `pixels` (when not NULL); returns the bytes. */
static size_t pack_set(const ww_image *set, size_t n, int as_is, unsigned char *pixels, image_meta *meta)
{
    size_t at = 0;
    for (size_t k = 0; k < n; k++) {
        const size_t bytes = set[k].height * set[k].width * set[k].channels * ww_image_dtype_size(set[k].dtype);
        if (pixels)
            memcpy(pixels + at, set[k].pixels, bytes);
        if (meta) {
            meta[k].offset = at;
            meta[k].height = (int)set[k].height;
            meta[k].width = (int)set[k].width;
            meta[k].dtype = (int)set[k].dtype;
        }
        at += as_is ? bytes : (bytes + 7) & ~(size_t)7;
    }
    return as_is ? (at + 7) & ~(size_t)7 : at;
}

template <int MAXW, int REGS>
static ww_status launch(ww_cuda_state *s, const unsigned char *xp, const image_meta *xm, const unsigned char *yp,
                        const image_meta *ym, int channels, int squared, const pair_range &r, size_t smem, int threads,
                        float *out)
{
    if (smem > 48 * 1024)
        WW_CUDA_TRY(cudaFuncSetAttribute(image_pairs_kernel<MAXW, REGS>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         (int)smem));
    const long long blocks = r.count < (long long)s->sm_count * 32 ? r.count : (long long)s->sm_count * 32;
    image_pairs_kernel<MAXW, REGS>
        <<<(unsigned)blocks, threads, smem, s->stream>>>(xp, xm, yp, ym, channels, squared, r, out);
    return ww_cuda_status(cudaGetLastError());
}

static ww_status run(ww_ctx *ctx, const ww_image *x, size_t nx, const ww_image *y, size_t ny, int squared, void *out,
                     const ww_pairwise_options *o)
{
    ww_cuda_state *s = ctx->cuda;
    const int self = y == NULL;
    const ww_image *ys = self ? x : y;
    const size_t nys = self ? nx : ny;
    const int channels = (int)x[0].channels;
    size_t smem = 0, widest = 0;
    size_t hx = 0, px = 0, hy = 0, py = 0;
    for (size_t i = 0; i < nx; i++) {
        hx = x[i].height > hx ? x[i].height : hx;
        px = x[i].height * x[i].width > px ? x[i].height * x[i].width : px;
    }
    for (size_t j = 0; j < nys; j++) {
        hy = ys[j].height > hy ? ys[j].height : hy;
        py = ys[j].height * ys[j].width > py ? ys[j].height * ys[j].width : py;
        widest = ys[j].width > widest ? ys[j].width : widest;
    }
    smem = ((px + py) * (size_t)channels + 2 * hx * hy) * sizeof(float) + (2 * hx + 1) * sizeof(int);
    if (widest > 128 || smem > s->smem_optin)
        return WW_ERR_UNSUPPORTED; /* the CPU engine takes them (policy in src/common/image.c) */

    /* pixels in their dtype: a host stack straight from where it is, other host sets through pinned
     * staging; device images in place (every image of both sets is then on the device: image.c) */
    const int on_device = x[0].memory == WW_DEVICE;
    if (on_device) {
        ww_status pst = ww_cuda_check_device_pointer(x[0].pixels);
        if (pst == WW_OK)
            pst = ww_cuda_check_device_pointer(ys[0].pixels);
        if (pst != WW_OK)
            return pst;
    }
    const int x_as_is = on_device || contiguous_set(x, nx), y_as_is = self || on_device || contiguous_set(ys, nys);
    const size_t xbytes = on_device ? 0 : pack_set(x, nx, x_as_is, NULL, NULL);
    const size_t ybytes = self || on_device ? 0 : pack_set(ys, nys, y_as_is, NULL, NULL);
    const size_t rows = o->row_end - o->row_begin, cols = o->col_end - o->col_begin;
    const size_t chunk = rows * cols < (size_t)CHUNK_PAIRS ? rows * cols : (size_t)CHUNK_PAIRS;
    const size_t meta_bytes = (nx + (self ? 0 : nys)) * sizeof(image_meta);
    const size_t staged = (x_as_is ? 0 : xbytes) + (y_as_is ? 0 : ybytes) + meta_bytes;
    /* two output buffers of a chunk each, host and device: the next chunk computes while the host
     * writes this one's entries out */
    ww_status st = ww_pinned_reserve(&s->pinned, &s->pinned_bytes, staged + 2 * chunk * sizeof(float));
    if (st == WW_OK)
        st = ww_device_reserve(&s->input, xbytes + ybytes + meta_bytes);
    if (st == WW_OK)
        st = ww_device_reserve(&s->work, 2 * chunk * sizeof(float));
    if (st != WW_OK)
        return st;
    unsigned char *h = (unsigned char *)s->pinned, *d = (unsigned char *)s->input.ptr;
    image_meta *hxm = (image_meta *)(h + staged - meta_bytes), *hym = self ? hxm : hxm + nx;
    unsigned char *stage_x = h, *stage_y = h + (x_as_is ? 0 : xbytes);
    if (on_device) {
        for (size_t k = 0; k < nx + (self ? 0 : nys); k++) {
            const ww_image *im = k < nx ? &x[k] : &ys[k - nx];
            hxm[k].offset = (unsigned long long)(uintptr_t)im->pixels;
            hxm[k].height = (int)im->height, hxm[k].width = (int)im->width, hxm[k].dtype = (int)im->dtype;
        }
    } else {
        pack_set(x, nx, x_as_is, x_as_is ? NULL : stage_x, hxm);
        if (!self)
            pack_set(ys, nys, y_as_is, y_as_is ? NULL : stage_y, hym);
        /* (a stack is copied to its last byte, never past it) */
        WW_CUDA_TRY(cudaMemcpyAsync(d, x_as_is ? x[0].pixels : stage_x, x_as_is ? exact_bytes(x, nx) : xbytes,
                                    cudaMemcpyHostToDevice, s->stream));
        if (!self)
            WW_CUDA_TRY(cudaMemcpyAsync(d + xbytes, y_as_is ? ys[0].pixels : stage_y,
                                        y_as_is ? exact_bytes(ys, nys) : ybytes, cudaMemcpyHostToDevice, s->stream));
    }
    WW_CUDA_TRY(cudaMemcpyAsync(d + xbytes + ybytes, hxm, meta_bytes, cudaMemcpyHostToDevice, s->stream));
    const unsigned char *dx = on_device ? NULL : d, *dy = on_device || self ? dx : dx + xbytes;
    const image_meta *dxm = (const image_meta *)(d + xbytes + ybytes), *dym = self ? dxm : dxm + nx;
    if (on_device) { /* NaN or infinite pixels: nothing is written */
        if ((st = ww_device_reserve(&s->result, 2 * sizeof(double))) != WW_OK)
            return st;
        int *flag = (int *)s->result.ptr, host_flag = 0;
        WW_CUDA_TRY(cudaMemsetAsync(flag, 0, sizeof(int), s->stream));
        image_finite_kernel<<<256, 128, 0, s->stream>>>(NULL, dxm, (long long)(nx + (self ? 0 : nys)), channels, flag);
        WW_CUDA_TRY(cudaGetLastError());
        WW_CUDA_TRY(cudaMemcpyAsync(&host_flag, flag, sizeof(int), cudaMemcpyDeviceToHost, s->stream));
        WW_CUDA_TRY(cudaStreamSynchronize(s->stream));
        if (host_flag)
            return WW_ERR_NONFINITE;
    }
    float *const dout[2] = {(float *)s->work.ptr, (float *)s->work.ptr + chunk};
    float *const hout[2] = {(float *)(h + staged), (float *)(h + staged) + chunk};

    uint64_t total = 0, done = 0;
    for (size_t i = o->row_begin; o->progress && i < o->row_end; i++)
        for (size_t j = o->col_begin; j < o->col_end; j++)
            if (!self || (i != j && (i < j || !(j >= o->row_begin && j < o->row_end && i >= o->col_begin &&
                                                i < o->col_end))))
                total += ww_image_pair_cells(&x[i], &ys[j]);
    pair_range r;
    r.row_begin = (long long)o->row_begin, r.col_begin = (long long)o->col_begin, r.cols = (long long)cols;
    r.block_row_begin = (long long)o->row_begin, r.block_row_end = (long long)o->row_end;
    r.block_col_begin = (long long)o->col_begin, r.block_col_end = (long long)o->col_end;
    r.self = self;
    /* small images have few row pairs in their band (about 30 at 8 x 8): one warp per pair then,
     * twice as many pairs in flight, instead of four warps mostly idle */
    const int threads = hx * hy <= 128 ? 32 : THREADS;
    /* chunk k computes into buffers k % 2 while the host writes out chunk k - 1 (its copy waited
     * for): the launch of k + 1 follows that write-out, so it never overwrites what the host reads */
    const size_t chunks = (rows * cols + chunk - 1) / chunk;
    for (size_t k = 0; k <= chunks; k++) {
        if (k < chunks) {
            const size_t first = k * chunk;
            r.first = (long long)first;
            r.count = (long long)(rows * cols - first < chunk ? rows * cols - first : chunk);
            float *d_k = dout[k % 2];
            st = widest <= 8    ? launch<8, 8>(s, dx, dxm, dy, dym, channels, squared, r, smem, threads, d_k)
                 : widest <= 16 ? launch<16, 16>(s, dx, dxm, dy, dym, channels, squared, r, smem, threads, d_k)
                 : widest <= 28 ? launch<28, 28>(s, dx, dxm, dy, dym, channels, squared, r, smem, threads, d_k)
                 : widest <= 32 ? launch<32, 32>(s, dx, dxm, dy, dym, channels, squared, r, smem, threads, d_k)
                 : widest <= 64 ? launch<64, 0>(s, dx, dxm, dy, dym, channels, squared, r, smem, threads, d_k)
                                : launch<128, 0>(s, dx, dxm, dy, dym, channels, squared, r, smem, threads, d_k);
            if (st != WW_OK) {
                cudaStreamSynchronize(s->stream); /* a chunk still in flight writes into our buffers */
                return st;
            }
            WW_CUDA_TRY(cudaMemcpyAsync(hout[k % 2], d_k, (size_t)r.count * sizeof(float), cudaMemcpyDeviceToHost,
                                        s->stream));
            WW_CUDA_TRY(cudaEventRecord(s->image_copied[k % 2], s->stream));
        }
        if (k == 0)
            continue;
        /* chunk k - 1: entries in row-major order from (i, j), no division per entry (millions) */
        const size_t first = (k - 1) * chunk;
        const long long count = (long long)(rows * cols - first < chunk ? rows * cols - first : chunk);
        WW_CUDA_TRY(cudaEventSynchronize(s->image_copied[(k - 1) % 2]));
        const float *hk = hout[(k - 1) % 2];
        size_t i = o->row_begin + first / cols, j = o->col_begin + first % cols;
        for (long long p = 0; p < count; p++) {
            const int needed = !self || (i != j && (i < j || !(j >= o->row_begin && j < o->row_end &&
                                                               i >= o->col_begin && i < o->col_end)));
            if (needed) {
                const size_t at = (i - o->row_begin) * o->out_stride + (j - o->col_begin);
                if (o->out_dtype == WW_F32)
                    ((float *)out)[at] = hk[p];
                else
                    ((double *)out)[at] = (double)hk[p];
                if (o->progress)
                    done += ww_image_pair_cells(&x[i], &ys[j]);
            }
            if (++j == o->col_end)
                j = o->col_begin, i++;
        }
        if (o->progress && o->progress(done, total, o->progress_user)) {
            cudaStreamSynchronize(s->stream);
            return WW_ERR_CANCELLED;
        }
    }
    if (self)
        ww_matrix_fill_mirror(o, out, ctx->num_threads);
    if (o->progress && o->progress(total, total, o->progress_user))
        return WW_ERR_CANCELLED;
    return WW_OK;
}

} // namespace

ww_status ww_cuda_image_pairwise(ww_ctx *ctx, const ww_image *x, size_t nx, const ww_image *y, size_t ny, int squared,
                                 void *out, const ww_pairwise_options *o)
{
    if (ctx->cuda == NULL)
        return WW_ERR_NO_DEVICE;
    ww_cuda_device_guard guard = ww_cuda_enter(ctx->cuda);
    ww_status st = run(ctx, x, nx, y, ny, squared, out, o);
    ww_cuda_recover(ctx->cuda, st);
    ww_cuda_leave(guard);
    return st;
}
