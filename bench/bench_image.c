/* Elastic image matching on the CPU (issue 11): throughput of the engine per core against the plain
 * reference (tests/image_reference.h) in the same run, and the two scenarios of the issue (one
 * 28 x 28 query against many stored images; all pairs of 1,797 8 x 8 images) on all cores.
 *   ww_bench_image [--stored N] [--threads T] [--rounds R] [--per-core-only]
 *                                                 CPU: per core against the reference, then all cores
 *   ww_bench_image --gpu [--stored N]              the GPU scenarios (stored default 60,000)
 * Random u8 images (the speed does not depend on the pixels). Prints a Markdown table. */
#include "bench_common.h"
#include "image_reference.h"
#include "wavewarp.h"

#include <stdio.h>
#include <string.h>
#ifdef WW_BENCH_CUDA
#include <cuda_runtime.h>
#endif

static unsigned long long rng_state = 0x5eed1234ULL;
static unsigned next_u8(void)
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (unsigned)(rng_state >> 56);
}

static unsigned char *random_u8(size_t n)
{
    unsigned char *p = (unsigned char *)malloc(n);
    for (size_t k = 0; k < n; k++)
        p[k] = (unsigned char)next_u8();
    return p;
}

static ww_ctx *make_ctx_on(ww_backend backend, int threads)
{
    ww_ctx_options o = ww_ctx_options_default();
    o.backend = backend;
    o.num_threads = threads;
    ww_ctx *ctx = NULL;
    if (ww_ctx_create(&ctx, &o) != WW_OK) {
        fprintf(stderr, "no context\n");
        exit(1);
    }
    return ctx;
}

static ww_ctx *make_ctx(int threads) { return make_ctx_on(WW_BACKEND_CPU, threads); }

/* The GPU scenarios: 28 x 28 u8 gray, one query against `stored` images; all pairs of
 * 1,797 8 x 8 u8 images. Median of 5 timed runs after a warm-up; checked against the CPU. Each
 * twice: the images in host memory (uploaded by every call), and already in device memory (as a
 * CuPy or PyTorch stack is: ww_image.memory = WW_DEVICE), the distances to the host either way. */
static int gpu_scenarios(size_t stored)
{
    if (!ww_cuda_available()) {
        printf("no GPU: the GPU scenarios are skipped\n");
        return 0;
    }
    ww_ctx *gpu = make_ctx_on(WW_BACKEND_CUDA, 0), *cpu = make_ctx(0);
    printf("## GPU (%s): the issue's scenarios\n\n", ww_ctx_describe(gpu));
    printf("| scenario | pairs | ms (median of 5) | pairs/s | cells/s | target | max rel diff vs CPU (checked part) |\n");
    printf("|---|---|---|---|---|---|---|\n");
    for (int run = 0; run < 4; run++) {
        const int scenario = run % 2, on_device = run / 2;
        const size_t n = scenario == 0 ? stored + 1 : 1797, side = scenario == 0 ? 28 : 8, px = side * side;
        unsigned char *pix = random_u8(px * n), *dpix = NULL;
        ww_image *im = (ww_image *)malloc(n * sizeof(ww_image));
        if (on_device) {
#ifdef WW_BENCH_CUDA
            if (cudaMalloc((void **)&dpix, px * n) != cudaSuccess ||
                cudaMemcpy(dpix, pix, px * n, cudaMemcpyHostToDevice) != cudaSuccess) {
                printf("no device memory for the images\n");
                return 1;
            }
#else
            free(pix), free(im);
            continue;
#endif
        }
        for (size_t k = 0; k < n; k++) {
            im[k] = ww_image_make((on_device ? dpix : pix) + k * px, side, side, 1, WW_U8);
            im[k].memory = on_device ? WW_DEVICE : WW_HOST;
        }
        const size_t rows = scenario == 0 ? 1 : n, cols = scenario == 0 ? stored : n;
        double *out = (double *)malloc(rows * cols * sizeof(double));
        double times[6];
        for (int rep = 0; rep < 6; rep++) {
            double t0 = bench_now();
            ww_status st = scenario == 0 ? ww_image_pairwise(gpu, im, 1, im + 1, stored, NULL, out, NULL)
                                         : ww_image_pairwise(gpu, im, n, NULL, 0, NULL, out, NULL);
            if (st != WW_OK) {
                printf("GPU run failed: %s\n", ww_strerror(st));
                return 1;
            }
            times[rep] = bench_now() - t0;
        }
        const double t = bench_median(times + 1, 5);
        /* the first 64 columns of the first row against the CPU (host images) */
        double check[64], worst = 0;
        const size_t k = cols < 64 ? cols : 64;
        for (size_t q = 0; q < n; q++)
            im[q] = ww_image_make(pix + q * px, side, side, 1, WW_U8);
        ww_image_pairwise(cpu, im, 1, scenario == 0 ? im + 1 : im, scenario == 0 ? stored : n, NULL, check,
                          &(ww_pairwise_options){0, 1, 0, k, k, WW_F64, NULL, NULL});
        for (size_t j = 0; j < k; j++) {
            double e = fabs(out[j] - check[j]) / (check[j] > 1 ? check[j] : 1);
            worst = e > worst ? e : worst;
        }
        const double pairs = scenario == 0 ? (double)stored : (double)n * (double)(n - 1) / 2;
        const double cells = pairs * ((double)(px * px) + (double)(side * side));
        printf("| %s%s | %.0f | %.3f | %.3g | %.3g | %s | %.1e |\n",
               scenario == 0 ? "28 x 28 u8, one query vs stored" : "all pairs of 1,797 8 x 8 u8",
               on_device ? ", images in device memory" : "", pairs, t * 1e3, pairs / t, cells / t,
               scenario == 0 ? "<= 30 ms (60,000)" : "<= 20 ms", worst);
#ifdef WW_BENCH_CUDA
        cudaFree(dpix);
#endif
        free(pix), free(im), free(out);
    }
    ww_ctx_destroy(gpu);
    ww_ctx_destroy(cpu);
    return 0;
}

/* Engine on one core against the reference: one query of h x w images with c channels against 512
 * stored ones, and the reference on `ref_pairs` of the same pairs, in `rounds` interleaved rounds
 * (engine, then reference) of about the same length (the engine's call repeated to last as long as
 * the reference's pairs: a short run can fall between the other jobs of a shared machine, a long
 * one cannot); each side's fastest round counts, interference only ever adding time. */
static void per_core(ww_ctx *one, size_t h, size_t w, size_t c, size_t ref_pairs, int rounds)
{
    const size_t stored = 512, px = h * w * c;
    unsigned char *q = random_u8(px), *x = random_u8(px * stored);
    ww_image qi = ww_image_make(q, h, w, c, WW_U8);
    ww_image *xi = (ww_image *)malloc(stored * sizeof(ww_image));
    for (size_t k = 0; k < stored; k++)
        xi[k] = ww_image_make(x + k * px, h, w, c, WW_U8);
    double *out = (double *)malloc(stored * sizeof(double));
    double *qd = (double *)malloc(px * sizeof(double)), *xd = (double *)malloc(px * sizeof(double));
    for (size_t k = 0; k < px; k++)
        qd[k] = q[k];
    double worst = 0, engine = INFINITY, reference = INFINITY;
    size_t repeats = 1; /* engine calls a round, set after the first round */
    for (int round = 0; round < rounds; round++) {
        double t0 = bench_now();
        for (size_t r = 0; r < repeats; r++)
            if (ww_image_pairwise(one, &qi, 1, xi, stored, NULL, out, NULL) != WW_OK)
                exit(1);
        const double te = (bench_now() - t0) / (double)(stored * repeats);
        engine = te < engine ? te : engine;
        t0 = bench_now();
        for (size_t p = 0; p < ref_pairs; p++) {
            const size_t s = (p + (size_t)round * ref_pairs) % stored; /* other pairs each round */
            for (size_t k = 0; k < px; k++)
                xd[k] = x[s * px + k];
            double v = ref_image_distance(qd, h, w, xd, h, w, c, 0);
            double e = fabs(v - out[s]) / (v > 1 ? v : 1);
            worst = e > worst ? e : worst;
        }
        const double tr = (bench_now() - t0) / (double)ref_pairs;
        reference = tr < reference ? tr : reference;
        if (round == 0) /* as long as the reference's round */
            repeats = (size_t)(tr * (double)ref_pairs / (te * (double)stored)) + 1;
    }
    const double cells = (double)(h * h) * (double)(w * w) + (double)(h * h);
    printf("| %zu x %zu x %zu u8 | %.3g | %.3g | %.3g | %.3g | %.1fx | %.1e |\n", h, w, c, 1 / reference,
           1 / engine, cells / engine, cells / reference, reference / engine, worst);
    fflush(stdout);
    free(q), free(x), free(xi), free(out), free(qd), free(xd);
}

int main(int argc, char **argv)
{
    size_t stored = 60000;
    int threads = 0, gpu = 0, rounds = 7, per_core_only = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--stored") == 0 && i + 1 < argc)
            stored = (size_t)strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
            threads = atoi(argv[++i]);
        else if (strcmp(argv[i], "--gpu") == 0)
            gpu = 1;
        else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
            rounds = atoi(argv[++i]) > 0 ? atoi(argv[i]) : 1;
        else if (strcmp(argv[i], "--per-core-only") == 0)
            per_core_only = 1;
        else {
            fprintf(stderr, "usage: ww_bench_image [--stored N] [--threads T] [--rounds R] [--per-core-only] [--gpu]\n");
            return 2;
        }
    }
    if (gpu)
        return gpu_scenarios(stored);
    ww_ctx *one = make_ctx(1);
    printf("## One core: engine against the plain reference (same run, %d interleaved rounds of equal length, fastest of each)\n\n",
           rounds);
    printf("| images | reference pairs/s | engine pairs/s | engine cells/s | reference cells/s | speed-up | max rel diff |\n");
    printf("|---|---|---|---|---|---|---|\n");
    /* reference pairs per round: about 50 ms of it at each size */
    per_core(one, 8, 8, 1, 2000, rounds);
    per_core(one, 8, 8, 3, 2000, rounds);
    per_core(one, 16, 16, 1, 120, rounds);
    per_core(one, 16, 16, 3, 120, rounds);
    per_core(one, 28, 28, 1, 12, rounds);
    per_core(one, 28, 28, 3, 12, rounds);
    per_core(one, 64, 64, 1, 1, rounds);
    per_core(one, 64, 64, 3, 1, rounds);
    ww_ctx_destroy(one);
    if (per_core_only)
        return 0;

    ww_ctx *all = make_ctx(threads);
    printf("\n## All cores (%d threads): the issue's scenarios\n\n", ww_ctx_num_threads(all));
    printf("| scenario | pairs | seconds | pairs/s | cells/s |\n|---|---|---|---|---|\n");
    {
        const size_t px = 28 * 28;
        unsigned char *q = random_u8(px), *x = random_u8(px * stored);
        ww_image qi = ww_image_make(q, 28, 28, 1, WW_U8);
        ww_image *xi = (ww_image *)malloc(stored * sizeof(ww_image));
        for (size_t k = 0; k < stored; k++)
            xi[k] = ww_image_make(x + k * px, 28, 28, 1, WW_U8);
        double *out = (double *)malloc(stored * sizeof(double));
        double t0 = bench_now();
        if (ww_image_pairwise(all, &qi, 1, xi, stored, NULL, out, NULL) != WW_OK)
            return 1;
        double t = bench_now() - t0;
        const double cells = (double)stored * (28.0 * 28 * 28 * 28 + 28 * 28);
        printf("| 28 x 28 u8, one query vs %zu stored | %zu | %.4f | %.3g | %.3g |\n", stored, stored, t,
               (double)stored / t, cells / t);
        free(q), free(x), free(xi), free(out);
    }
    {
        const size_t n = 1797, px = 64;
        unsigned char *x = random_u8(px * n);
        ww_image *xi = (ww_image *)malloc(n * sizeof(ww_image));
        for (size_t k = 0; k < n; k++)
            xi[k] = ww_image_make(x + k * px, 8, 8, 1, WW_U8);
        double *out = (double *)malloc(n * n * sizeof(double));
        double t0 = bench_now();
        if (ww_image_pairwise(all, xi, n, NULL, 0, NULL, out, NULL) != WW_OK)
            return 1;
        double t = bench_now() - t0;
        const double pairs = (double)n * (n - 1) / 2;
        printf("| all pairs of 1,797 8 x 8 u8 | %.0f | %.4f | %.3g | %.3g |\n", pairs, t, pairs / t,
               pairs * (8.0 * 8 * 8 * 8 + 64) / t);
        free(x), free(xi), free(out);
    }
    ww_ctx_destroy(all);
    return 0;
}
