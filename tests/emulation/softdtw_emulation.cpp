/* The GPU soft-DTW engine (src/cuda/softdtw.cu and its kernels: bands of rows swept by
 * anti-diagonals, the compact and the checkpointed gradient, chunks of pairs) run on the CPU by
 * the fake runtime beside this file, against the CPU engine: values and gradients of batches in
 * double and float, of one length and of many (several bands), samples of 1 to 5 components,
 * windows, the divergence (a series against itself: gradients added atomically into one array),
 * the table kept whole or recomputed from checkpoints, the free device memory too small for all
 * pairs at once, one pair through the gradient call, and a NaN (nothing written).
 * `tests/gpu_emulation.sh softdtw` builds and runs it.
 *
 * The engine's entry points are renamed (emu_cuda_softdtw_batch, ...) by build.sh (see
 * emulated_gpu.h). */
#include "emulated_gpu.h"
#include "ww_test.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

int ww_test_failures, ww_test_skipped; /* (ww_test.h's) */

namespace {

int compared = 0, differences = 0;

struct batch_case {
    size_t count, dim, longest;
    bool f32, ragged, grads, divergence;
    long radius; /* -1: none */
    double gamma;
    size_t table_budget;  /* bytes of stored R per pair (0: checkpoints) */
    size_t free_bytes;    /* the device's free memory (small: chunks of pairs) */
};

void describe(const batch_case &c, char *buf, size_t size)
{
    snprintf(buf, size, "count=%zu dim=%zu longest=%zu f32=%d ragged=%d grads=%d divergence=%d radius=%ld gamma=%g budget=%zu free=%zu",
             c.count, c.dim, c.longest, c.f32, c.ragged, c.grads, c.divergence, c.radius, c.gamma, c.table_budget,
             c.free_bytes);
}

/* Values or gradients of the GPU (as doubles) against the CPU's: the tests' budget (test_softdtw.c),
 * 1e-10 relative on values and 1e-9 of the largest gradient in double, 1e-5 and 1e-3 in float. */
bool agree(const std::vector<double> &got, const std::vector<double> &want, bool f32, bool gradient)
{
    double scale = 1;
    if (gradient)
        for (double w : want)
            scale = std::fmax(scale, std::fabs(w));
    const double tol = gradient ? (f32 ? 1e-3 : 1e-9) : (f32 ? 1e-5 : 1e-10);
    for (size_t k = 0; k < got.size(); k++)
        if (!(std::fabs(got[k] - want[k]) <= tol * (gradient ? scale : std::fmax(1.0, std::fabs(want[k])))))
            return false;
    return true;
}

/* A buffer of n values in the batch's type, poisoned, read back as doubles. */
struct typed_buffer {
    std::vector<double> f64;
    std::vector<float> f32;
    bool is32;
    typed_buffer(size_t n, bool single) : f64(single ? 0 : n, NAN), f32(single ? n : 0, NAN), is32(single) {}
    void *data() { return is32 ? (void *)f32.data() : (void *)f64.data(); }
    std::vector<double> doubles() const { return is32 ? std::vector<double>(f32.begin(), f32.end()) : f64; }
};

void check(ww_ctx *cpu, ww_rng &r, const batch_case &c)
{
    std::vector<size_t> ox(1, 0), oy(1, 0);
    for (size_t b = 0; b < c.count; b++) {
        ox.push_back(ox.back() + (c.ragged ? 1 + ww_rng_below(&r, c.longest) : c.longest));
        oy.push_back(oy.back() + (c.ragged ? 1 + ww_rng_below(&r, c.longest) : c.longest / 2 + 1));
    }
    const size_t nx = ox.back() * c.dim, ny = oy.back() * c.dim;
    std::vector<double> x(nx), y(ny);
    for (double &v : x)
        v = (double)(float)(ww_rng_uniform(&r) * 2 - 1);
    for (double &v : y)
        v = (double)(float)(ww_rng_uniform(&r) * 2 - 1);
    std::vector<float> x32(x.begin(), x.end()), y32(y.begin(), y.end());
    ww_measure m = ww_measure_softdtw(c.gamma);
    if (c.radius >= 0)
        ww_measure_set_window(&m, (size_t)c.radius);
    if (c.divergence)
        ww_measure_set_divergence(&m, 1);
    const size_t *offx = c.ragged ? ox.data() : NULL, *offy = c.ragged ? oy.data() : NULL;
    const size_t lx = c.ragged ? 0 : c.longest, ly = c.ragged ? 0 : c.longest / 2 + 1;
    /* the CPU's, in the batch's type (its float batch computes in double, rounded at the end) */
    ww_dataset hx = c.f32 ? ww_dataset_f32(x32.data(), NULL, offx, c.count, lx, c.dim)
                          : ww_dataset_f64(x.data(), NULL, offx, c.count, lx, c.dim);
    ww_dataset hy = c.f32 ? ww_dataset_f32(y32.data(), NULL, offy, c.count, ly, c.dim)
                          : ww_dataset_f64(y.data(), NULL, offy, c.count, ly, c.dim);
    typed_buffer cv(c.count, c.f32), cgx(nx, c.f32), cgy(ny, c.f32);
    const ww_status cst = ww_softdtw_batch(cpu, &m, &hx, &hy, cv.data(), c.grads ? cgx.data() : NULL,
                                           c.grads ? cgy.data() : NULL);
    /* the GPU's: "device" memory is host memory here */
    ww_dataset dx = hx, dy = hy;
    dx.memory = dy.memory = WW_DEVICE;
    typed_buffer gv(c.count, c.f32), ggx(nx, c.f32), ggy(ny, c.f32);
    emulated_gpu gpu(4);
    gpu.ctx.softdtw_memory_budget = c.table_budget;
    emu::device_free_bytes = c.free_bytes;
    const ww_status st = ww_cuda_softdtw_batch(&gpu.ctx, &m, &dx, &dy, gv.data(), c.grads ? ggx.data() : NULL,
                                               c.grads ? ggy.data() : NULL);
    emu::device_free_bytes = (size_t)1 << 30;
    compared++;
    const bool same = cst == WW_OK && st == WW_OK && agree(gv.doubles(), cv.doubles(), c.f32, false) &&
                      (!c.grads || (agree(ggx.doubles(), cgx.doubles(), c.f32, true) &&
                                    agree(ggy.doubles(), cgy.doubles(), c.f32, true)));
    if (!same) {
        char what[300];
        describe(c, what, sizeof what);
        differences++;
        printf("DIFFERENT: %s: gpu %s, cpu %s; value 0: gpu %.17g, cpu %.17g\n", what, ww_strerror(st),
               ww_strerror(cst), gv.doubles()[0], cv.doubles()[0]);
    }
}

/* One pair through the gradient call (double device series), against the CPU's ww_gradient. */
void check_gradient(ww_ctx *cpu, ww_rng &r)
{
    const size_t n = 150, mm = 90, dim = 2;
    std::vector<double> a(n * dim), b(mm * dim);
    for (double &v : a)
        v = ww_rng_uniform(&r);
    for (double &v : b)
        v = ww_rng_uniform(&r);
    const ww_measure m = ww_measure_softdtw(0.5);
    ww_series sa = ww_series_f64(a.data(), NULL, n, dim), sb = ww_series_f64(b.data(), NULL, mm, dim);
    std::vector<double> wa(n * dim), wb(mm * dim), ga(n * dim, NAN), gb(mm * dim, NAN);
    double want = NAN, got = NAN;
    const ww_status cst = ww_gradient(cpu, &m, &sa, &sb, &want, wa.data(), wb.data());
    sa.memory = sb.memory = WW_DEVICE;
    emulated_gpu gpu(4);
    gpu.ctx.softdtw_memory_budget = (size_t)256 << 20;
    const ww_status st = ww_cuda_softdtw_gradient(&gpu.ctx, &m, &sa, &sb, &got, ga.data(), gb.data());
    compared++;
    if (cst != WW_OK || st != WW_OK || !agree({got}, {want}, false, false) || !agree(ga, wa, false, true) ||
        !agree(gb, wb, false, true)) {
        differences++;
        printf("DIFFERENT: one pair's gradient: gpu %.17g (%s), cpu %.17g\n", got, ww_strerror(st), want);
    }
}

/* A NaN in the batch: WW_ERR_NONFINITE, values and gradients untouched. */
void check_nan(ww_rng &r)
{
    for (int grads = 0; grads <= 1; grads++) {
        std::vector<double> x(5 * 40), y(5 * 30);
        for (double &v : x)
            v = ww_rng_uniform(&r);
        for (double &v : y)
            v = ww_rng_uniform(&r);
        y[77] = NAN;
        const ww_measure m = ww_measure_softdtw(1.0);
        ww_dataset dx = ww_dataset_f64(x.data(), NULL, NULL, 5, 40, 1), dy = ww_dataset_f64(y.data(), NULL, NULL, 5, 30, 1);
        dx.memory = dy.memory = WW_DEVICE;
        std::vector<double> v(5, -7.0), gx(200, -7.0), gy(150, -7.0);
        emulated_gpu gpu(4);
        gpu.ctx.softdtw_memory_budget = (size_t)256 << 20;
        const ww_status st = ww_cuda_softdtw_batch(&gpu.ctx, &m, &dx, &dy, v.data(), grads ? gx.data() : NULL,
                                                   grads ? gy.data() : NULL);
        bool untouched = true;
        for (double e : v)
            untouched = untouched && e == -7.0;
        for (double e : gx)
            untouched = untouched && e == -7.0;
        for (double e : gy)
            untouched = untouched && e == -7.0;
        compared++;
        if (st != WW_ERR_NONFINITE || !untouched) {
            differences++;
            printf("DIFFERENT: a NaN (grads %d): %s, outputs %s\n", grads, ww_strerror(st), untouched ? "untouched" : "written");
        }
    }
}

} // namespace

int main(int argc, char **argv)
{
    const bool quick = argc > 1 && strcmp(argv[1], "quick") == 0;
    ww_ctx *cpu = emu_cpu_context();
    if (cpu == NULL)
        return 2;
    ww_rng r{0xC0DAull};
    const size_t dims[] = {1, 2, 3, 5};
    const int rounds = quick ? 1 : 2;
    for (int round = 0; round < rounds; round++)
        for (int f32 = 0; f32 <= 1; f32++)
            for (int variant = 0; variant < 6; variant++) {
                batch_case c{};
                c.count = 1 + ww_rng_below(&r, 6);
                c.dim = dims[ww_rng_below(&r, 4)];
                c.longest = 1 + ww_rng_below(&r, 140);
                c.f32 = f32;
                c.ragged = ww_rng_below(&r, 2);
                c.grads = variant != 5;
                c.divergence = variant == 2;
                c.radius = variant == 1 ? (long)ww_rng_below(&r, 12) : -1;
                c.gamma = variant == 3 ? 0.1 : 1.0;
                c.table_budget = variant == 4 ? 0 : (size_t)256 << 20; /* 0: every band recomputed */
                c.free_bytes = (size_t)1 << 30;
                if (variant == 3) /* room for about one pair at a time: chunks */
                    c.free_bytes = c.longest * c.longest * 16 + 4096;
                check(cpu, r, c);
            }
    /* several bands (a band holds up to 256 (double) or 512 (float) threads of 4 rows), kept whole
     * and recomputed from checkpoints */
    for (int f32 = 0; f32 <= 1; f32++)
        for (int checkpoints = 0; checkpoints <= 1; checkpoints++) {
            batch_case c{};
            c.count = 2, c.dim = 1 + (size_t)checkpoints, c.longest = f32 ? 2100 : 1100;
            c.f32 = f32, c.ragged = true, c.grads = true, c.divergence = false;
            c.radius = checkpoints ? 60 : -1;
            c.gamma = 1.0;
            c.table_budget = checkpoints ? 0 : (size_t)256 << 20;
            c.free_bytes = (size_t)1 << 30;
            check(cpu, r, c);
            if (quick)
                break;
        }
    check_gradient(cpu, r);
    check_nan(r);
    printf("softdtw_gpu_emulation: %d comparisons, %d differences\n", compared, differences);
    ww_ctx_destroy(cpu);
    return differences != 0;
}
