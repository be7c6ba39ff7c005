/* The GPU matrix engine (src/cuda/pairwise.cu, its plan and its kernels: thread, staged, warp and
 * block strategies, and the whole-GPU one through the one-pair engine) and the GPU index
 * (src/cuda/index.cu) run on the CPU by the fake runtime beside this file, against the CPU engine:
 * every strategy forced in turn and the cost model's choice, TWED and DTW, with and without a
 * window, samples of 1 to 40 components, float and double data and output, sets of one length and
 * of many, a set against itself and against another, blocks of the matrix with strides, two
 * devices, the staged kernel's knobs, long series under narrow windows by one thread per pair (and
 * the plan that picks it), the warp's rows rolling over its lanes under windows, the model's choices
 * for windowed matrices measured on an H200, cancellation, and a bad value in device data.
 * `tests/gpu_emulation.sh matrix` builds and runs it.
 *
 * The engines' entry points are renamed (emu_cuda_pairwise, ...) by build.sh (see emulated_gpu.h). */
#include "emulated_gpu.h"
#include "cuda/pairwise.cuh"
#include "ww_test.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

int ww_test_failures, ww_test_skipped; /* (ww_test.h's) */

namespace {

int compared = 0, differences = 0;

/* A set of `count` series in R^dim, of one length or of lengths 1..longest (offsets). */
struct series_set {
    std::vector<double> values, stamps;
    std::vector<float> values32, stamps32;
    std::vector<size_t> offsets;
    size_t count = 0, length = 0, dim = 1;
    bool ragged = false;
    void make(ww_rng &r, size_t n, size_t longest, size_t d, bool varied)
    {
        count = n, dim = d, ragged = varied, length = longest;
        offsets.assign(1, 0);
        for (size_t i = 0; i < n; i++)
            offsets.push_back(offsets.back() + (varied ? 1 + ww_rng_below(&r, longest) : longest));
        values.resize(offsets.back() * d);
        stamps.resize(offsets.back());
        for (double &v : values)
            v = (double)(float)(ww_rng_uniform(&r) * 4 - 2); /* exact in float too */
        for (size_t i = 0; i < n; i++) {
            double now = 0;
            for (size_t k = offsets[i]; k < offsets[i + 1]; k++) {
                now += ww_rng_below(&r, 5) == 0 ? 0.0 : (double)(float)(0.5 + ww_rng_uniform(&r));
                stamps[k] = now;
            }
        }
        values32.assign(values.begin(), values.end());
        stamps32.assign(stamps.begin(), stamps.end());
    }
    ww_dataset f64(bool with_stamps) const
    {
        return ww_dataset_f64(values.data(), with_stamps ? stamps.data() : NULL, ragged ? offsets.data() : NULL,
                              count, length, dim);
    }
    ww_dataset f32(bool with_stamps) const
    {
        return ww_dataset_f32(values32.data(), with_stamps ? stamps32.data() : NULL, ragged ? offsets.data() : NULL,
                              count, length, dim);
    }
};

struct matrix_case {
    bool dtw, f32_data, f32_out, stamps, self, block, on_device;
    long radius;     /* -1: none */
    double fraction; /* < 0: none */
    const char *strategy; /* NULL: the cost model's */
    int devices;
};

/* got and want (the CPU's, in double) agree: float data is computed in float on the GPU */
bool close(double got, double want, bool f32)
{
    if (std::isinf(want) || std::isinf(got))
        return got == want;
    return std::fabs(got - want) <= (f32 ? 2e-5 : 1e-12) * std::fmax(1.0, std::fabs(want));
}

ww_measure measure_of(const matrix_case &c, ww_rng &r)
{
    ww_measure m = c.dtw ? ww_measure_dtw() : ww_measure_twed(0.01 + ww_rng_uniform(&r), 0.5 + ww_rng_uniform(&r), 1 + (int)ww_rng_below(&r, 3));
    if (c.radius >= 0)
        ww_measure_set_window(&m, (size_t)c.radius);
    if (c.fraction >= 0)
        ww_measure_set_window_fraction(&m, c.fraction);
    return m;
}

void describe(const matrix_case &c, const series_set &x, const series_set &y, char *buf, size_t size)
{
    snprintf(buf, size,
             "%s x=%zux%zu%s y=%zux%zu%s dim=%zu radius=%ld fraction=%g strategy=%s f32 data=%d out=%d stamps=%d self=%d "
             "block=%d device=%d devices=%d",
             c.dtw ? "dtw" : "twed", x.count, x.length, x.ragged ? "(ragged)" : "", y.count, y.length,
             y.ragged ? "(ragged)" : "", x.dim, c.radius, c.fraction, c.strategy ? c.strategy : "auto", c.f32_data,
             c.f32_out, c.stamps, c.self, c.block, c.on_device, c.devices);
}

/* One matrix (or block of it) on the emulated GPU against the CPU engine. */
void check(ww_ctx *cpu, ww_rng &r, const matrix_case &c, const series_set &x, const series_set &y)
{
    const ww_measure m = measure_of(c, r);
    ww_dataset gx = c.f32_data ? x.f32(c.stamps) : x.f64(c.stamps), gy = c.f32_data ? y.f32(c.stamps) : y.f64(c.stamps);
    const ww_dataset cx = x.f64(c.stamps), cy = y.f64(c.stamps); /* the CPU's, in double */
    const size_t cols = c.self ? x.count : y.count;
    ww_pairwise_options o = ww_pairwise_options_default();
    if (c.block) { /* a block with a stride wider than it */
        o.row_begin = ww_rng_below(&r, x.count);
        o.row_end = o.row_begin + 1 + ww_rng_below(&r, x.count - o.row_begin);
        o.col_begin = ww_rng_below(&r, cols);
        o.col_end = o.col_begin + 1 + ww_rng_below(&r, cols - o.col_begin);
        o.out_stride = o.col_end - o.col_begin + 3;
    }
    o.out_dtype = c.f32_out ? WW_F32 : WW_F64;
    ww_pairwise_options resolved;
    if (ww_resolve_pairwise(&gx, c.self ? NULL : &gy, &o, &resolved) != WW_OK) {
        printf("DIFFERENT: options refused\n");
        differences++;
        return;
    }
    const size_t rows = resolved.row_end - resolved.row_begin, width = resolved.col_end - resolved.col_begin;
    const size_t stride = resolved.out_stride, cells = rows * stride;
    std::vector<double> want(cells, -7.0), got64(cells, -7.0);
    std::vector<float> got32(cells, -7.0f);
    ww_pairwise_options cpu_o = resolved;
    cpu_o.out_dtype = WW_F64;
    char what[400];
    describe(c, x, y, what, sizeof what);
    if (ww_pairwise(cpu, &m, &cx, c.self ? NULL : &cy, want.data(), &cpu_o) != WW_OK) {
        printf("DIFFERENT: cpu failed: %s\n", what);
        differences++;
        return;
    }
    if (c.on_device) /* "device" memory is host memory here: the checks run in the kernels */
        gx.memory = gy.memory = WW_DEVICE;
    emulated_gpu gpu(4), second(4);
    gpu.state.model = second.state.model = ww_cuda_model_default();
    if (c.devices == 2) {
        gpu.ctx.cuda_devices[0] = &gpu.state;
        gpu.ctx.cuda_devices[1] = &second.state;
        gpu.ctx.cuda_count = 2;
    }
    gpu.state.forced_strategy = second.state.forced_strategy = c.strategy;
    void *out = c.f32_out ? (void *)got32.data() : (void *)got64.data();
    const ww_status st = ww_cuda_pairwise(&gpu.ctx, &m, &gx, c.self ? NULL : &gy, out, &resolved);
    ww_cuda_pairwise_release(&gpu.state);
    ww_cuda_pairwise_release(&second.state);
    compared++;
    int bad = st != WW_OK;
    for (size_t i = 0; i < rows && !bad; i++)
        for (size_t j = 0; j < stride && !bad; j++) {
            const double g = c.f32_out ? (double)got32[i * stride + j] : got64[i * stride + j];
            const double w = want[i * stride + j];
            if (j >= width) /* past the block: untouched */
                bad = g != -7.0;
            else
                bad = !close(g, c.f32_out ? (double)(float)w : w, c.f32_data || c.f32_out);
            if (bad)
                printf("DIFFERENT: %s: entry (%zu, %zu): gpu %.17g (%s), cpu %.17g\n", what, i, j, g, ww_strerror(st),
                       w);
        }
    if (bad) {
        if (st != WW_OK)
            printf("DIFFERENT: %s: %s\n", what, ww_strerror(st));
        differences++;
    }
}

/* The GPU index of x queried by q, against the CPU's matrix of q against x. */
void check_index(ww_ctx *cpu, const ww_measure &m, const series_set &x, const series_set &q, bool f32)
{
    ww_dataset gx = f32 ? x.f32(false) : x.f64(false), gq = f32 ? q.f32(false) : q.f64(false);
    const ww_dataset cx = x.f64(false), cq = q.f64(false);
    std::vector<double> want(q.count * x.count), got(q.count * x.count, -7.0);
    const ww_status cst = ww_pairwise(cpu, &m, &cq, &cx, want.data(), NULL);
    emulated_gpu gpu(4);
    gpu.state.model = ww_cuda_model_default();
    ww_index *ix = (ww_index *)calloc(1, sizeof *ix);
    ix->ctx = &gpu.ctx;
    ix->measure = m;
    ix->count = x.count;
    ww_status st = ww_cuda_index_create(&gpu.ctx, &gx, &m, ix);
    ww_pairwise_options o;
    if (st == WW_OK)
        st = ww_resolve_pairwise(&gq, &ix->host, NULL, &o);
    if (st == WW_OK)
        st = ww_cuda_index_pairwise(&gpu.ctx, ix, &gq, got.data(), &o);
    ww_cuda_index_destroy(ix);
    free(ix->host_storage);
    free(ix);
    ww_cuda_pairwise_release(&gpu.state);
    compared++;
    bool bad = st != WW_OK || cst != WW_OK;
    for (size_t e = 0; e < got.size() && !bad; e++)
        bad = !close(got[e], want[e], f32);
    if (bad) {
        differences++;
        printf("DIFFERENT: index of %zu x %zu (dim %zu, %s, f32 %d): %s\n", x.count, x.length, x.dim,
               m.kind == WW_MEASURE_DTW ? "dtw" : "twed", f32, ww_strerror(st));
    }
}

/* A NaN in a set in device memory: WW_ERR_NONFINITE and nothing written; a callback that cancels:
 * WW_ERR_CANCELLED. */
void check_errors(ww_rng &r)
{
    series_set x;
    x.make(r, 12, 40, 2, false);
    x.values[77] = NAN;
    const ww_measure m = ww_measure_dtw();
    const char *strategies[] = {"thread", "warp", "block", "grid"};
    for (const char *s : strategies) {
        emulated_gpu gpu(4);
        gpu.state.model = ww_cuda_model_default();
        gpu.state.forced_strategy = s;
        ww_dataset dx = x.f64(false);
        dx.memory = WW_DEVICE;
        std::vector<double> out(144, -7.0);
        ww_pairwise_options o;
        ww_status st = ww_resolve_pairwise(&dx, NULL, NULL, &o);
        if (st == WW_OK)
            st = ww_cuda_pairwise(&gpu.ctx, &m, &dx, NULL, out.data(), &o);
        ww_cuda_pairwise_release(&gpu.state);
        bool untouched = true;
        for (double v : out)
            untouched = untouched && v == -7.0;
        compared++;
        if (st != WW_ERR_NONFINITE || !untouched) {
            differences++;
            printf("DIFFERENT: a NaN in device data (%s): %s, output %s\n", s, ww_strerror(st),
                   untouched ? "untouched" : "written");
        }
    }
    x.values[77] = 0.5;
    emulated_gpu gpu(4);
    gpu.state.model = ww_cuda_model_default();
    ww_dataset dx = x.f64(false);
    std::vector<double> out(144, -7.0);
    ww_pairwise_options o;
    ww_status st = ww_resolve_pairwise(&dx, NULL, NULL, &o);
    o.progress = emu_cancel_at_once;
    if (st == WW_OK)
        st = ww_cuda_pairwise(&gpu.ctx, &m, &dx, NULL, out.data(), &o);
    ww_cuda_pairwise_release(&gpu.state);
    compared++;
    if (st != WW_ERR_CANCELLED) {
        differences++;
        printf("DIFFERENT: a cancelling callback: %s\n", ww_strerror(st));
    }
}

/* A case of DTW (else TWED) under `strategy` and a window (radius, or fraction when >= 0) on one
 * device, its stamps, data and output types, self matrix and block drawn at random in this order. */
matrix_case windowed_case(ww_rng &r, int dtw, const char *strategy, long radius, double fraction)
{
    matrix_case c{};
    c.dtw = dtw;
    c.strategy = strategy;
    c.radius = radius;
    c.fraction = fraction;
    c.stamps = !dtw && ww_rng_below(&r, 2);
    c.f32_data = ww_rng_below(&r, 4) == 0;
    c.f32_out = ww_rng_below(&r, 4) == 0;
    c.self = ww_rng_below(&r, 2);
    c.block = ww_rng_below(&r, 3) == 0;
    c.devices = 1;
    return c;
}

/* Long series of one length under narrow windows: one thread per pair at any length, its row
 * buffer following the band (pairs_thread_kernel), forced and by the cost model, which takes it
 * while the band's span (2 r + 5 columns) is at most a quarter of the model's thread length plus
 * one (33) and there are 1,024 pairs per multiprocessor; past the buffer's 257 entries a forced "thread"
 * gives way to the model. Each matrix against the CPU engine, and the plan's strategy against
 * those rules. */
void check_banded_threads(ww_ctx *cpu, ww_rng &r)
{
    const struct {
        size_t count, length, dim;
        long radius;
        double fraction;
    } cases[] = {{9, 300, 1, 0, -1},  {7, 400, 1, -1, 0.1}, {6, 333, 3, 17, -1}, {5, 290, 40, 5, -1},
                 {6, 700, 1, 62, -1}, {5, 520, 2, 126, -1}, {4, 600, 1, 127, -1}, {5, 257, 1, 2, -1},
                 {5, 450, 1, 1, -1},  {5, 299, 2, 3, -1}};
    const char *strategies[] = {NULL, "thread"};
    for (const auto &k : cases)
        for (int dtw = 0; dtw <= 1; dtw++)
            for (const char *strategy : strategies) {
                const matrix_case c = windowed_case(r, dtw, strategy, k.radius, k.fraction);
                series_set x, y;
                x.make(r, k.count, k.length, k.dim, false);
                y.make(r, k.count / 2 + 2, k.length, k.dim, false);
                check(cpu, r, c, x, y);
                /* the plan: thread exactly where the rules above say, for these few pairs and for a
                 * set of 100 series (4,950 pairs, enough for the 4 multiprocessors) */
                for (int many = 0; many <= 1; many++) {
                    const ww_measure m = measure_of(c, r);
                    const size_t radius = k.radius >= 0 ? (size_t)k.radius : (size_t)(k.fraction * (double)k.length);
                    const size_t span = 2 * radius + 5;
                    const bool want_thread = strategy ? span <= 257 : many && span <= 33;
                    emulated_gpu gpu(4);
                    gpu.state.model = ww_cuda_model_default();
                    gpu.state.forced_strategy = strategy;
                    series_set big;
                    if (many)
                        big.make(r, 100, k.length, k.dim, false);
                    const ww_dataset dx = many ? big.f64(false) : x.f64(false), dy = y.f64(false);
                    const bool self = many || c.self;
                    ww_pairwise_options o = ww_pairwise_options_default();
                    o.row_end = dx.count;
                    o.col_end = self ? dx.count : dy.count;
                    pair_plan plan;
                    const ww_status st =
                        ww_cuda_make_plan(&gpu.state, &m, &dx, self ? &dx : &dy, &o, self, sizeof(double), &plan);
                    compared++;
                    if (st != WW_OK || plan.blocks.size() != 1 ||
                        (plan.blocks[0].strategy == STRATEGY_THREAD) != want_thread) {
                        differences++;
                        printf("DIFFERENT: plan of %zu x %zu (radius %zu, %s): %s, %zu blocks, strategy %d, want "
                               "thread %d\n",
                               dx.count, k.length, radius, strategy ? strategy : "auto", ww_strerror(st),
                               plan.blocks.size(), plan.blocks.empty() ? -1 : (int)plan.blocks[0].strategy,
                               (int)want_thread);
                    }
                }
            }
}

/* The thread strategy's band in registers (pairs_band_kernel): series of one length under every
 * radius it is built for (1 .. 32, TWED's 1 .. 16) and the next ones out (0, and 33 or 17: the row
 * sweep), lengths from one more than the radius (its first rows meet the matrix's left edge, its
 * last ones run past the unrolled rows) to 400, as a radius and as a fraction. Each matrix against the CPU engine, and bit for bit against
 * the row sweep of pairs_thread_kernel (WW_BAND=0): the same cells in the same order of operations. */
void check_band_threads(ww_ctx *cpu, ww_rng &r)
{
    /* BAND_RADIUS_MAX and BAND_RADIUS_MAX_CARRIED (pairwise_kernels.cuh, whose kernels this file does not include) */
    const long band_radius_max = 32, band_radius_max_carried = 16;
    for (long radius = 0; radius <= band_radius_max + 1; radius++)
        for (int dtw = radius > band_radius_max_carried + 1; dtw <= 1; dtw++) {
            const size_t lengths[] = {(size_t)radius + 1, (size_t)radius + 2 + ww_rng_below(&r, 4),
                                      2 * (size_t)radius + 1 + ww_rng_below(&r, 9), 60, 100 + ww_rng_below(&r, 300)};
            for (size_t length : lengths) {
                /* at length 60 the same radius as a fraction: aeon's window */
                const bool fraction = length == 60 && radius > 0;
                const matrix_case c = windowed_case(r, dtw, "thread", fraction ? -1 : radius,
                                                    fraction ? ((double)radius + 0.5) / 60.0 : -1);
                series_set x, y;
                x.make(r, 3 + ww_rng_below(&r, 40), length, 1, false);
                y.make(r, 2 + ww_rng_below(&r, 9), length, 1, false);
                check(cpu, r, c, x, y);
                /* the band against the row sweep, bit for bit (one measure for both) */
                const ww_measure m = measure_of(c, r);
                const ww_dataset gx = c.f32_data ? x.f32(c.stamps) : x.f64(c.stamps),
                                 gy = c.f32_data ? y.f32(c.stamps) : y.f64(c.stamps);
                std::vector<double> with_band(x.count * y.count, -7.0), with_sweep(x.count * y.count, -5.0);
                ww_status st[2];
                for (int sweep = 0; sweep <= 1; sweep++) {
                    if (sweep)
                        setenv("WW_BAND", "0", 1);
                    emulated_gpu gpu(4);
                    gpu.state.model = ww_cuda_model_default();
                    gpu.state.forced_strategy = "thread";
                    ww_pairwise_options o;
                    st[sweep] = ww_resolve_pairwise(&gx, &gy, NULL, &o);
                    if (st[sweep] == WW_OK)
                        st[sweep] = ww_cuda_pairwise(&gpu.ctx, &m, &gx, &gy, sweep ? with_sweep.data() : with_band.data(), &o);
                    ww_cuda_pairwise_release(&gpu.state);
                    unsetenv("WW_BAND");
                }
                compared++;
                if (st[0] != WW_OK || st[1] != WW_OK ||
                    memcmp(with_band.data(), with_sweep.data(), with_band.size() * sizeof(double)) != 0) {
                    differences++;
                    printf("DIFFERENT: band against sweep, %s radius %ld length %zu f32 %d: %s / %s\n",
                           dtw ? "dtw" : "twed", radius, length, (int)c.f32_data, ww_strerror(st[0]), ww_strerror(st[1]));
                }
            }
        }
}

/* The warp strategy under windows (warp_pair_rolling): rows rolling over the lanes with the
 * lag between rows at its extremes (P = 32, the least, up to ROLL_PERIOD_MAX, where the lag and the
 * diagonal's step fill the ring, with float data), series of one length and of two (a band that widens with their
 * ratio, band_period's bound), lengths of 1 to 400 samples, and the bands too wide for the ring,
 * which take the strips (warp_pair_in_strips). Each matrix against the CPU engine. */
void check_rolling_warps(ww_ctx *cpu, ww_rng &r)
{
    const struct {
        size_t x_count, x_length, y_count, y_length, dim;
        bool ragged, f32; /* f32: float data (4-byte columns: DTW rolls up to the ring's P = 448) */
        long radius;
        double fraction;
    } cases[] = {{4, 300, 3, 300, 1, false, false, 40, -1},  {3, 300, 3, 420, 1, false, false, 40, -1},
                 {3, 500, 2, 500, 2, false, false, 239, -1}, {3, 500, 2, 500, 1, false, true, 239, -1},
                 {3, 500, 2, 500, 1, false, true, 240, -1},  {3, 260, 3, 500, 1, false, false, 100, -1},
                 {3, 200, 2, 700, 1, false, false, 120, -1}, {5, 100, 4, 130, 3, false, false, 16, -1},
                 {4, 333, 4, 333, 1, false, false, 0, -1},   {6, 400, 5, 350, 1, true, false, -1, 0.2},
                 {5, 90, 4, 90, 1, false, false, 47, -1}};
    for (const auto &k : cases)
        for (int dtw = 0; dtw <= 1; dtw++) {
            matrix_case c{};
            c.dtw = dtw;
            c.strategy = "warp";
            c.radius = k.radius;
            c.fraction = k.fraction;
            c.stamps = !dtw && ww_rng_below(&r, 2);
            c.f32_data = k.f32 || ww_rng_below(&r, 4) == 0;
            c.f32_out = ww_rng_below(&r, 4) == 0;
            c.self = k.x_length == k.y_length && ww_rng_below(&r, 2);
            c.block = ww_rng_below(&r, 3) == 0;
            c.devices = 1;
            series_set x, y;
            x.make(r, k.x_count, k.x_length, k.dim, k.ragged);
            y.make(r, k.y_count, k.y_length, k.dim, k.ragged);
            check(cpu, r, c, x, y);
        }
}

/* The cost model's choices on an H200's 132 multiprocessors for the windowed matrices measured in
 * bench/results/gpu-dtw.md (seventeenth session; nineteenth since the warp's rows roll; twenty-fifth
 * since DTW's bands of radius up to 32 take registers, one thread per pair: 1,000 x 400 with radius
 * 24 in 0.39 of the warp's time), where the choice was the fastest of the forced strategies, or
 * within a few percent of it. */
void check_window_plans()
{
    const struct {
        size_t count, length, radius;
        enum strategy want;
    } cases[] = {{1000, 400, 10, STRATEGY_THREAD}, {1000, 400, 20, STRATEGY_THREAD}, {1000, 400, 32, STRATEGY_THREAD},
                 {1000, 400, 33, STRATEGY_WARP},   {1000, 400, 40, STRATEGY_WARP},
                 {1000, 400, 100, STRATEGY_WARP},  {256, 2048, 20, STRATEGY_WARP},    {256, 2048, 62, STRATEGY_WARP},
                 {256, 2048, 204, STRATEGY_WARP}, {48, 8192, 204, STRATEGY_BLOCK},   {48, 8192, 819, STRATEGY_BLOCK}};
    static const double dummy[1] = {0};
    for (const auto &k : cases) {
        emulated_gpu gpu(132);
        gpu.state.model = ww_cuda_model_default();
        ww_measure m = ww_measure_dtw();
        ww_measure_set_window(&m, k.radius);
        const ww_dataset x = ww_dataset_f64(dummy, NULL, NULL, k.count, k.length, 1); /* the plan reads no values */
        ww_pairwise_options o = ww_pairwise_options_default();
        o.row_end = o.col_end = k.count;
        pair_plan plan;
        const ww_status st = ww_cuda_make_plan(&gpu.state, &m, &x, &x, &o, 1, sizeof(double), &plan);
        compared++;
        if (st != WW_OK || plan.blocks.size() != 1 || plan.blocks[0].strategy != k.want) {
            differences++;
            printf("DIFFERENT: plan of %zu x %zu, radius %zu: strategy %d, want %d\n", k.count, k.length, k.radius,
                   plan.blocks.empty() ? -1 : (int)plan.blocks[0].strategy, (int)k.want);
        }
    }
    /* never a thread for a band wider than its buffer: a calibration file's thread length of 1e9
     * with a span of 405, and forced "thread" on lengths 400 and 401 (the span of series that
     * differ is the longer's row, 402) */
    for (int k = 0; k < 2; k++) {
        emulated_gpu gpu(132);
        gpu.state.model = ww_cuda_model_default();
        if (k == 0)
            gpu.state.model.thread_max_length = 1e9;
        else
            gpu.state.forced_strategy = "thread";
        ww_measure m = ww_measure_dtw();
        ww_measure_set_window(&m, k == 0 ? 200 : 10);
        const ww_dataset x = ww_dataset_f64(dummy, NULL, NULL, 1000, k == 0 ? 2000 : 400, 1);
        const ww_dataset y = ww_dataset_f64(dummy, NULL, NULL, 1000, k == 0 ? 2000 : 401, 1);
        ww_pairwise_options o = ww_pairwise_options_default();
        o.row_end = o.col_end = 1000;
        pair_plan plan;
        const ww_status st = ww_cuda_make_plan(&gpu.state, &m, &x, &y, &o, 0, sizeof(double), &plan);
        compared++;
        if (st != WW_OK || plan.blocks.size() != 1 || plan.blocks[0].strategy == STRATEGY_THREAD) {
            differences++;
            printf("DIFFERENT: a band wider than a thread's buffer (case %d) went to the thread\n", k);
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
    ww_rng r{0x5DEECE66Dull};
    const char *strategies[] = {NULL, "thread", "warp", "block", "grid"};
    const size_t dims[] = {1, 2, 3, 8, 28, 40};
    const int rounds = quick ? 1 : 3;
    for (int round = 0; round < rounds; round++)
        for (const char *strategy : strategies)
            for (int dtw = 0; dtw <= 1; dtw++)
                for (int window = 0; window < 3; window++) {
                    matrix_case c{};
                    c.dtw = dtw;
                    c.strategy = strategy;
                    c.radius = window == 1 ? (long)ww_rng_below(&r, 8) : -1;
                    c.fraction = window == 2 ? 0.05 + 0.3 * ww_rng_uniform(&r) : -1;
                    c.stamps = !dtw && ww_rng_below(&r, 2);
                    c.f32_data = ww_rng_below(&r, 4) == 0;
                    c.f32_out = ww_rng_below(&r, 4) == 0;
                    c.self = ww_rng_below(&r, 2);
                    c.block = ww_rng_below(&r, 3) == 0;
                    c.on_device = ww_rng_below(&r, 4) == 0;
                    c.devices = !c.on_device && ww_rng_below(&r, 4) == 0 ? 2 : 1;
                    /* the whole-GPU strategy runs each pair on the one-pair engine: fewer, longer */
                    const bool grid = strategy && !strcmp(strategy, "grid");
                    const size_t dim = dims[ww_rng_below(&r, 6)];
                    const size_t longest = grid ? 40 + ww_rng_below(&r, 300) : 1 + ww_rng_below(&r, 120);
                    series_set x, y;
                    x.make(r, grid ? 3 + ww_rng_below(&r, 3) : 1 + ww_rng_below(&r, 14), longest, dim, ww_rng_below(&r, 2));
                    y.make(r, grid ? 2 + ww_rng_below(&r, 3) : 1 + ww_rng_below(&r, 14), 1 + ww_rng_below(&r, longest), dim,
                           ww_rng_below(&r, 2));
                    check(cpu, r, c, x, y);
                }
    /* the staged kernel's knobs: one lane or two per pair, one row per pass, blocks of 32 */
    const char *knobs[][2] = {{"WW_STAGED_LANES", "2"}, {"WW_STAGED_LANES", "1"}, {"WW_STAGED_ROWS", "1"},
                              {"WW_STAGED_THREADS", "32"}, {"WW_STAGED", "0"}};
    for (const auto &knob : knobs)
        for (int dtw = 0; dtw <= 1; dtw++) {
            setenv(knob[0], knob[1], 1);
            matrix_case c{};
            c.dtw = dtw;
            c.strategy = "thread";
            c.radius = dtw ? 3 : -1;
            c.fraction = -1;
            c.devices = 1;
            series_set x, y;
            x.make(r, 9, 30, 2 + 7 * (size_t)dtw, true);
            y.make(r, 70, 25, 2 + 7 * (size_t)dtw, false);
            check(cpu, r, c, x, y);
            unsetenv(knob[0]);
        }
    /* sets above 64 KB (staged in pinned memory for their upload) and a square self block in one
     * chunk (completed on the device), self and cross, whole and as a block */
    for (int k = 0; k < 4; k++) {
        matrix_case c{};
        c.dtw = k % 2;
        c.radius = 6;
        c.fraction = -1;
        c.stamps = !c.dtw;
        c.self = k < 2;
        c.block = k == 1 || k == 3;
        c.devices = 1;
        series_set x, y;
        x.make(r, 150, 60, 1, k == 3); /* 72 KB of values */
        y.make(r, 160, 60, 1, false);  /* 77 KB */
        check(cpu, r, c, x, y);
    }
    /* the index: one query and several, f64 and f32, both measures */
    for (int k = 0; k < 4; k++) {
        series_set x, q;
        const size_t dim = k % 2 ? 28 : 1;
        x.make(r, 60, 28, dim, k == 3);
        q.make(r, k < 2 ? 1 : 5, 28, dim, false);
        ww_measure m = k % 2 ? ww_measure_dtw() : ww_measure_twed(0.25, 1, 2);
        if (k == 2)
            ww_measure_set_window(&m, 4);
        check_index(cpu, m, x, q, k == 1);
    }
    check_banded_threads(cpu, r);
    check_band_threads(cpu, r);
    check_rolling_warps(cpu, r);
    check_window_plans();
    check_errors(r);
    printf("matrix_gpu_emulation: %d comparisons, %d differences\n", compared, differences);
    ww_ctx_destroy(cpu);
    return differences != 0;
}
