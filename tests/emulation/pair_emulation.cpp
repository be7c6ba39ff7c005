/* The GPU one-pair engine (src/cuda/pair.cu: the wavefront kernels of pair_kernels.cuh, the
 * per-diagonal baseline, the preparation kernels) run on the CPU by the fake runtime beside this
 * file, against the CPU engine: every tile shape forced in turn, TWED and DTW, with and without a
 * window, samples of 1 to 9 components, lengths around the bands' and the warps' edges (where the
 * result's cell moves between threads and lanes), the bands on one block and on several at once
 * (handing their bottom rows over through global memory while both run), several blocks per
 * multiprocessor (the later ones wait for the first bands to spread). Each pair gets fresh
 * device buffers of its exact size, poisoned (backend.cpp), so with AddressSanitizer a read past
 * the padded series is caught. `tests/gpu_emulation.sh pair` builds and runs it.
 *
 * The engine's entry point is renamed (emu_cuda_pair) by the script (see emulated_gpu.h). */
#include "emulated_gpu.h"
#include "ww_test.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

int ww_test_failures, ww_test_skipped; /* (ww_test.h's) */

namespace {

struct pair_case {
    size_t n, m, dim;
    bool dtw;
    long radius;     /* -1: none */
    double fraction; /* < 0: none */
    const char *tile; /* NULL: chosen by size */
    bool stamps, f32, on_device;
    int degree, sm_count;
    ww_engine engine;
    int per_sm; /* > 1: blocks per multiprocessor, all running at once (the later ones of each wait
                 * for the first bands to spread: wavefront_kernel) */
};

int compared = 0, differences = 0, identical = 0;

void describe(const pair_case &c, char *buf, size_t size)
{
    snprintf(buf, size,
             "%s n=%zu m=%zu dim=%zu radius=%ld fraction=%g tile=%s stamps=%d f32=%d device=%d degree=%d sms=%d "
             "per sm=%d engine=%d",
             c.dtw ? "dtw" : "twed", c.n, c.m, c.dim, c.radius, c.fraction, c.tile ? c.tile : "auto", c.stamps,
             c.f32, c.on_device, c.degree, c.sm_count, c.per_sm, (int)c.engine);
}

ww_measure measure_of(const pair_case &c)
{
    ww_measure m = c.dtw ? ww_measure_dtw() : ww_measure_twed(c.stamps ? 0.5 : 0.001, 1.0, c.degree);
    if (c.radius >= 0)
        ww_measure_set_window(&m, (size_t)c.radius);
    if (c.fraction >= 0)
        ww_measure_set_window_fraction(&m, c.fraction);
    return m;
}

void random_series(ww_rng &r, size_t n, size_t dim, bool stamps, std::vector<double> &v, std::vector<double> &t)
{
    v.resize(n * dim);
    t.resize(n);
    for (double &x : v)
        x = ww_rng_uniform(&r) * 4 - 2;
    double now = 0;
    for (double &x : t) { /* repeated stamps too */
        now += ww_rng_below(&r, 5) == 0 ? 0.0 : 0.5 + ww_rng_uniform(&r);
        x = stamps ? now : 0;
    }
}

/* One pair on the emulated GPU against the CPU engine (the same data, as doubles). */
void check(ww_ctx *cpu, ww_rng &r, const pair_case &c)
{
    std::vector<double> va, vb, ta, tb;
    random_series(r, c.n, c.dim, c.stamps, va, ta);
    random_series(r, c.m, c.dim, c.stamps, vb, tb);
    std::vector<float> fa(va.begin(), va.end()), fb(vb.begin(), vb.end()), fta(ta.begin(), ta.end()),
        ftb(tb.begin(), tb.end());
    if (c.f32) { /* the CPU gets the float values exactly */
        va.assign(fa.begin(), fa.end()), vb.assign(fb.begin(), fb.end());
        ta.assign(fta.begin(), fta.end()), tb.assign(ftb.begin(), ftb.end());
    }
    const ww_measure m = measure_of(c);
    ww_series a = ww_series_f64(va.data(), c.stamps ? ta.data() : NULL, c.n, c.dim);
    ww_series b = ww_series_f64(vb.data(), c.stamps ? tb.data() : NULL, c.m, c.dim);
    double want = NAN;
    char what[400];
    describe(c, what, sizeof what);
    if (ww_distance(cpu, &m, &a, &b, &want) != WW_OK) {
        printf("cpu failed: %s\n", what);
        differences++;
        return;
    }
    ww_series ga = c.f32 ? ww_series_f32(fa.data(), c.stamps ? fta.data() : NULL, c.n, c.dim) : a;
    ww_series gb = c.f32 ? ww_series_f32(fb.data(), c.stamps ? ftb.data() : NULL, c.m, c.dim) : b;
    if (c.on_device) /* "device" memory is host memory here: the checks run in the kernels */
        ga.memory = gb.memory = WW_DEVICE;
    if (c.tile)
        setenv("WW_WAVEFRONT_TILE", c.tile, 1);
    emulated_gpu gpu(c.sm_count);
    const int had_per_sm = emu::blocks_per_sm, had_blocks = emu::concurrent_blocks, had_sms = emu::multiprocessors;
    if (c.per_sm > 1) {
        emu::blocks_per_sm = c.per_sm;
        emu::concurrent_blocks = c.per_sm * c.sm_count;
        emu::multiprocessors = c.sm_count;
    }
    double got = NAN, again = NAN;
    ww_status st = ww_cuda_pair(&gpu.ctx, c.engine, &m, &ga, &gb, &got);
    if (st == WW_OK && compared % 4 == 0) {
        /* the same call again on buffers that keep the first call's hand-over rows, as on a GPU:
         * they carry the first call's id, and must never pass for this call's */
        emu_keep_contents = true;
        st = ww_cuda_pair(&gpu.ctx, c.engine, &m, &ga, &gb, &again);
        emu_keep_contents = false;
        if (st == WW_OK && again != got) {
            printf("DIFFERENT: %s: a second call on the same buffers gave %.17g, the first %.17g\n", what, again, got);
            got = again;
        }
    }
    unsetenv("WW_WAVEFRONT_TILE");
    emu::blocks_per_sm = had_per_sm, emu::concurrent_blocks = had_blocks, emu::multiprocessors = had_sms;
    compared++;
    const bool same = std::isinf(want) ? got == want : std::fabs(got - want) <= 1e-12 * std::fmax(1.0, std::fabs(want));
    if (st != WW_OK || !same) {
        differences++;
        printf("DIFFERENT: %s: gpu %.17g (%s), cpu %.17g\n", what, got, ww_strerror(st), want);
    } else if (got == want) {
        identical++;
    } else if (getenv("EMU_VERBOSE")) {
        printf("within 1e-12, not identical: %s: gpu %.17g, cpu %.17g\n", what, got, want);
    }
}

/* A bad value in the series: the same error as the CPU's, and nothing written. */
void check_bad_values(ww_rng &r)
{
    for (int device = 0; device <= 1; device++)
        for (int dtw = 0; dtw <= 1; dtw++) {
            std::vector<double> va, vb, ta, tb;
            random_series(r, 700, 1, true, va, ta);
            random_series(r, 500, 1, true, vb, tb);
            vb[321] = NAN;
            const ww_measure m = dtw ? ww_measure_dtw() : ww_measure_twed(0.5, 1, 2);
            ww_series a = ww_series_f64(va.data(), ta.data(), 700, 1), b = ww_series_f64(vb.data(), tb.data(), 500, 1);
            if (device)
                a.memory = b.memory = WW_DEVICE;
            emulated_gpu gpu(2);
            double got = -7;
            const ww_status st = ww_cuda_pair(&gpu.ctx, WW_ENGINE_CUDA_WAVEFRONT, &m, &a, &b, &got);
            compared++;
            if (st != WW_ERR_NONFINITE || got != -7) {
                differences++;
                printf("DIFFERENT: a NaN (%s, device %d): %s, %g\n", dtw ? "dtw" : "twed", device, ww_strerror(st), got);
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
    ww_rng r{0x9E3779B97F4A7C15ull};
    struct tile {
        const char *name;
        size_t rows;
    };
    const tile tiles[] = {{"3x1s16", 3}, {"4x1s16", 4}, {"8x1s16", 8}, {"8x2s8", 8}, {"4x4s4", 4}, {"3x1s16l2", 3},
                          {"4x1s16l2", 4}};
    /* the shapes built for some pairs only: 4 x 4 for TWED without a window, lanes two steps apart
     * (l2) for DTW */
    auto built = [](const tile &t, int dtw, bool windowed) {
        if (t.name[0] == '4' && t.name[2] == '4')
            return !dtw && !windowed;
        if (strchr(t.name, 'l') != NULL)
            return dtw != 0;
        return true;
    };
    /* every shape, measure and kind of window on lengths around its band (128 R rows) and warp
     * (32 R rows) edges: the result's row on the last lane of a warp, another lane, the band's
     * last thread; one band, and several on one block or on two or three at once */
    for (const tile &t : tiles)
        for (int dtw = 0; dtw <= 1; dtw++)
            for (int window = 0; window < 4; window++) {
                if (!built(t, dtw, window != 0 && window != 3))
                    continue; /* (radius n + m: no window) */
                const size_t R = t.rows, band = 128 * R;
                const size_t rows[] = {1, 2, R + 1, 32 * R, 32 * R - 1, 96 * R + 1, band, band + 1, 2 * band + 37, 3 * band - 2};
                const size_t cols[] = {1, 3, 40, 257, 300};
                const int count = quick ? 3 : 8;
                for (int k = 0; k < count; k++) {
                    pair_case c{};
                    c.n = rows[ww_rng_below(&r, 10)];
                    c.m = cols[ww_rng_below(&r, 5)];
                    if (k == 0) /* several bands, and columns enough for the pipelines to fill */
                        c.n = 2 * band + 37, c.m = 300;
                    if (k == 2) /* more bands than blocks: the hand-over row reused by later bands */
                        c.n = 5 * band + ww_rng_below(&r, band), c.m = 3 + ww_rng_below(&r, 60);
                    if (k % 2) /* the longer series as the rows (symmetric measures swap them) */
                        std::swap(c.n, c.m);
                    c.dim = 1;
                    c.dtw = dtw;
                    c.radius = window == 1 ? (long)ww_rng_below(&r, 4) : window == 3 ? (long)(c.n + c.m) : -1;
                    c.fraction = window == 2 ? 0.1 + 0.2 * ww_rng_uniform(&r) : -1;
                    c.tile = t.name;
                    c.stamps = !dtw && ww_rng_below(&r, 2);
                    c.degree = 2;
                    c.sm_count = 1 + (int)ww_rng_below(&r, 3);
                    c.engine = WW_ENGINE_CUDA_WAVEFRONT;
                    c.per_sm = k == 2 ? 2 + (int)ww_rng_below(&r, 2) : 1;
                    check(cpu, r, c);
                }
            }
    /* windows wide enough that whole groups of steps run unmasked (groups inside every row's
     * window, wavefront_kernel), on equal and unequal lengths */
    for (const tile &t : tiles)
        for (int dtw = 0; dtw <= 1; dtw++)
            for (int k = 0; k < 2; k++) {
                if (!built(t, dtw, true))
                    continue;
                pair_case c{};
                c.n = 128 * t.rows + 300 + ww_rng_below(&r, 200);
                c.m = k == 0 ? c.n - 20 + ww_rng_below(&r, 41) : c.n * 3 / 5;
                c.dim = 1;
                c.dtw = dtw;
                c.radius = k == 0 ? 150 + (long)ww_rng_below(&r, 100) : -1;
                c.fraction = k == 0 ? -1 : 0.4;
                c.tile = t.name;
                c.stamps = !dtw && k == 1;
                c.degree = 2;
                c.sm_count = 2;
                c.engine = WW_ENGINE_CUDA_WAVEFRONT;
                check(cpu, r, c);
            }
    /* vectors: in registers (2, 4, 8 components after padding, p 1 or 2) or read per cell (9, or
     * p = 3), float input converted on the device, device memory */
    const size_t dims[] = {2, 3, 4, 5, 8, 9};
    for (size_t d : dims)
        for (int dtw = 0; dtw <= 1; dtw++)
            for (int k = 0; k < (quick ? 2 : 4); k++) {
                pair_case c{};
                c.n = k % 2 ? 600 : 130 + ww_rng_below(&r, 300);
                c.m = 50 + ww_rng_below(&r, 200);
                c.dim = d;
                c.dtw = dtw;
                c.radius = k >= 2 ? (long)ww_rng_below(&r, 30) : -1;
                c.fraction = -1;
                c.tile = k == 3 ? NULL : k == 1 ? "8x1s16" : "4x1s16";
                c.stamps = !dtw && k % 2;
                c.f32 = k == 2;
                c.on_device = k == 1;
                c.degree = dtw ? 2 : 1 + (int)ww_rng_below(&r, 3);
                c.sm_count = 2;
                c.engine = WW_ENGINE_CUDA_WAVEFRONT;
                if (d > 4 && c.tile && c.tile[0] == '8' && c.degree <= 2)
                    c.tile = "4x1s16"; /* 8 x 1 has no kernel for 8 components in registers */
                check(cpu, r, c);
            }
    /* the shape chosen by size, and TWED's per-diagonal baseline */
    for (int k = 0; k < (quick ? 2 : 6); k++) {
        pair_case c{};
        c.n = 1 + ww_rng_below(&r, 1500), c.m = 1 + ww_rng_below(&r, 300), c.dim = 1;
        c.dtw = k % 2;
        c.radius = k % 3 == 0 ? (long)ww_rng_below(&r, 50) : -1;
        c.fraction = -1;
        c.stamps = !c.dtw;
        c.degree = 2;
        c.sm_count = 1 + (int)ww_rng_below(&r, 3);
        c.engine = WW_ENGINE_CUDA_WAVEFRONT;
        check(cpu, r, c);
        if (!c.dtw && c.radius < 0) {
            c.n = 1 + ww_rng_below(&r, 200), c.m = 1 + ww_rng_below(&r, 200);
            c.engine = WW_ENGINE_CUDA_DIAGONAL;
            check(cpu, r, c);
        }
    }
    check_bad_values(r);
    printf("pair_gpu_emulation: %d comparisons, %d differences (%d bit-identical to the CPU engine); bands waited "
           "for the band above %llu times\n",
           compared, differences, identical, (unsigned long long)emu::waits.load());
    if (emu::waits.load() == 0) { /* the hand-over's wait never ran: the test lost its concurrency */
        printf("no band ever waited for the band above\n");
        differences++;
    }
    ww_ctx_destroy(cpu);
    return differences != 0;
}
