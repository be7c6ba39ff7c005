/* The GPU image engine (src/cuda/image.cu: one block per image pair, the rows' DPs on its threads,
 * the outer DP in shared memory) run on the CPU by the fake runtime beside this file, against the
 * CPU engine: ragged sets of gray and color images of every dtype, widths that pick every kernel
 * (up to 128), the squared distance, pairs no path joins (+inf), a set against itself and against
 * another, blocks with strides and float output, images in device memory, a NaN (nothing written)
 * and cancellation. `tests/gpu_emulation.sh image` builds and runs it.
 *
 * The engine's entry point is renamed (emu_cuda_image_pairwise) by build.sh (see emulated_gpu.h). */
#include "emulated_gpu.h"
#include "common/image_internal.h"
#include "ww_test.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

int ww_test_failures, ww_test_skipped; /* (ww_test.h's) */

namespace {

int compared = 0, differences = 0;

/* A set of images with their pixels. */
struct image_set {
    std::vector<std::vector<unsigned char>> bytes;
    std::vector<ww_image> images;
    void add(ww_rng &r, size_t h, size_t w, size_t c, ww_dtype dt)
    {
        const size_t n = h * w * c, es = dt == WW_U8 ? 1 : dt == WW_F32 ? 4 : 8;
        bytes.emplace_back(n * es); /* to the byte: a read past an image is AddressSanitizer's */
        unsigned char *p = bytes.back().data();
        for (size_t k = 0; k < n; k++) {
            if (dt == WW_U8) {
                p[k] = (unsigned char)ww_rng_below(&r, 256);
            } else if (dt == WW_F32) {
                const float v = (float)(ww_rng_uniform(&r) * 2 - 1);
                memcpy(p + 4 * k, &v, 4);
            } else {
                const double v = ww_rng_uniform(&r) * 2 - 1;
                memcpy(p + 8 * k, &v, 8);
            }
        }
        images.push_back(ww_image_make(p, h, w, c, dt));
    }
};

bool close_or_inf(double got, double want)
{
    if (std::isinf(want) || std::isinf(got))
        return std::isinf(want) && std::isinf(got);
    return std::fabs(got - want) <= 1e-4 * std::fmax(1.0, std::fabs(want)); /* the GPU sums in float */
}

/* The matrix (or a block of it) of x against y (NULL: x itself) on the emulated GPU and the CPU. */
void check(ww_ctx *cpu, ww_rng &r, image_set &x, image_set *y, bool squared, bool block, bool f32_out, bool on_device)
{
    const size_t nx = x.images.size(), ny = y ? y->images.size() : nx;
    ww_pairwise_options o = ww_pairwise_options_default();
    o.row_end = nx, o.col_end = ny, o.out_stride = ny;
    if (block) {
        o.row_begin = ww_rng_below(&r, nx);
        o.row_end = o.row_begin + 1 + ww_rng_below(&r, nx - o.row_begin);
        o.col_begin = ww_rng_below(&r, ny);
        o.col_end = o.col_begin + 1 + ww_rng_below(&r, ny - o.col_begin);
        o.out_stride = o.col_end - o.col_begin + 2;
    }
    o.out_dtype = f32_out ? WW_F32 : WW_F64;
    const size_t rows = o.row_end - o.row_begin, width = o.col_end - o.col_begin, cells = rows * o.out_stride;
    std::vector<double> want(cells, -7.0), got64(cells, -7.0);
    std::vector<float> got32(cells, -7.0f);
    ww_image_params p = ww_image_params_default();
    p.squared = squared;
    ww_pairwise_options co = o;
    co.out_dtype = WW_F64;
    const ww_status cst = ww_image_pairwise(cpu, x.images.data(), nx, y ? y->images.data() : NULL, y ? ny : 0, &p,
                                            want.data(), &co);
    std::vector<ww_image> gx = x.images, gy = y ? y->images : std::vector<ww_image>();
    if (on_device) { /* "device" memory is host memory here */
        for (ww_image &im : gx)
            im.memory = WW_DEVICE;
        for (ww_image &im : gy)
            im.memory = WW_DEVICE;
    }
    emulated_gpu gpu(4);
    void *out = f32_out ? (void *)got32.data() : (void *)got64.data();
    const ww_status st = ww_cuda_image_pairwise(&gpu.ctx, gx.data(), nx, y ? gy.data() : NULL, y ? ny : 0, squared, out, &o);
    compared++;
    bool bad = st != WW_OK || cst != WW_OK;
    for (size_t i = 0; i < rows && !bad; i++)
        for (size_t j = 0; j < o.out_stride && !bad; j++) {
            const double g = f32_out ? (double)got32[i * o.out_stride + j] : got64[i * o.out_stride + j];
            const double w = want[i * o.out_stride + j];
            bad = j >= width ? g != -7.0 : !close_or_inf(g, w);
            if (bad)
                printf("DIFFERENT: entry (%zu, %zu): gpu %.9g, cpu %.9g\n", i, j, g, w);
        }
    if (bad) {
        differences++;
        printf("DIFFERENT: %zu x %zu images, squared %d, block %d, f32 %d, device %d: gpu %s, cpu %s\n", nx, ny, squared,
               block, f32_out, on_device, ww_strerror(st), ww_strerror(cst));
    }
}

/* A NaN in a device image: WW_ERR_NONFINITE, nothing written; a cancelling callback. */
void check_errors(ww_rng &r)
{
    image_set x;
    for (int k = 0; k < 5; k++)
        x.add(r, 6 + k, 7, 1, WW_F32);
    const float nan = NAN;
    memcpy(x.bytes[2].data() + 4 * 9, &nan, 4);
    std::vector<ww_image> gx = x.images;
    for (ww_image &im : gx)
        im.memory = WW_DEVICE;
    ww_pairwise_options o = ww_pairwise_options_default();
    o.row_end = o.col_end = o.out_stride = 5;
    std::vector<double> out(25, -7.0);
    emulated_gpu gpu(4);
    ww_status st = ww_cuda_image_pairwise(&gpu.ctx, gx.data(), 5, NULL, 0, 0, out.data(), &o);
    bool untouched = true;
    for (double v : out)
        untouched = untouched && v == -7.0;
    compared++;
    if (st != WW_ERR_NONFINITE || !untouched) {
        differences++;
        printf("DIFFERENT: a NaN in a device image: %s, output %s\n", ww_strerror(st), untouched ? "untouched" : "written");
    }
    const float zero = 0;
    memcpy(x.bytes[2].data() + 4 * 9, &zero, 4);
    o.progress = emu_cancel_at_once;
    st = ww_cuda_image_pairwise(&gpu.ctx, x.images.data(), 5, NULL, 0, 0, out.data(), &o);
    compared++;
    if (st != WW_ERR_CANCELLED) {
        differences++;
        printf("DIFFERENT: a cancelling callback: %s\n", ww_strerror(st));
    }
}

} // namespace

int main(int argc, char **argv)
{
    const bool quick = argc > 1 && strcmp(argv[1], "quick") == 0;
    ww_ctx *cpu = emu_cpu_context();
    if (cpu == NULL)
        return 2;
    ww_rng r{0x1D6A9Eull};
    const ww_dtype dtypes[3] = {WW_U8, WW_F32, WW_F64};
    /* the widest image of y picks the kernel: 8, 16, 28, 32, 64, 128 */
    const size_t widths[] = {8, 16, 28, 32, 64, 128};
    const int rounds = quick ? 1 : 3;
    for (int round = 0; round < rounds; round++)
        for (size_t top : widths) {
            const size_t channels = ww_rng_below(&r, 2) ? 3 : 1, tall = top > 32 ? 12 : top;
            image_set x, y;
            const size_t nx = 2 + ww_rng_below(&r, top > 32 ? 3 : 7), ny = 2 + ww_rng_below(&r, top > 32 ? 3 : 6);
            for (size_t k = 0; k < nx; k++) /* some more than twice as high as others: no path, +inf */
                x.add(r, 1 + ww_rng_below(&r, tall), 1 + ww_rng_below(&r, top), channels, dtypes[k % 3]);
            for (size_t k = 0; k < ny; k++)
                y.add(r, tall / 2 + 1 + ww_rng_below(&r, tall / 2), k == 0 ? top : top / 2 + 1 + ww_rng_below(&r, top / 2),
                      channels, dtypes[(k + 1) % 3]);
            const bool squared = ww_rng_below(&r, 2), device = ww_rng_below(&r, 3) == 0;
            check(cpu, r, x, &y, squared, ww_rng_below(&r, 3) == 0, ww_rng_below(&r, 3) == 0, device);
            check(cpu, r, y, NULL, squared, ww_rng_below(&r, 2), ww_rng_below(&r, 3) == 0, device);
        }
    check_errors(r);
    printf("image_gpu_emulation: %d comparisons, %d differences\n", compared, differences);
    ww_ctx_destroy(cpu);
    return differences != 0;
}
