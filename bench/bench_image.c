/* Elastic image matching on the CPU (issue 11): throughput of the engine per core against the plain
 * reference (tests/image_reference.h) in the same run, and the two scenarios of the issue (one
 * 28 x 28 query against many stored images; all pairs of 1,797 8 x 8 images) on all cores.
 *   ww_bench_image [--stored N] [--threads T]
 * Random u8 images (the speed does not depend on the pixels). Prints a Markdown table. */
#include "bench_common.h"
#include "image_reference.h"
#include "wavewarp.h"

#include <stdio.h>
#include <string.h>

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

static ww_ctx *make_ctx(int threads)
{
    ww_ctx_options o = ww_ctx_options_default();
    o.backend = WW_BACKEND_CPU;
    o.num_threads = threads;
    ww_ctx *ctx = NULL;
    if (ww_ctx_create(&ctx, &o) != WW_OK) {
        fprintf(stderr, "no context\n");
        exit(1);
    }
    return ctx;
}

/* Engine on one core against the reference: `pairs` pairs of h x w images with c channels. */
static void per_core(ww_ctx *one, size_t h, size_t w, size_t c, size_t ref_pairs)
{
    const size_t stored = 512, px = h * w * c;
    unsigned char *q = random_u8(px), *x = random_u8(px * stored);
    ww_image qi = ww_image_make(q, h, w, c, WW_U8);
    ww_image *xi = (ww_image *)malloc(stored * sizeof(ww_image));
    for (size_t k = 0; k < stored; k++)
        xi[k] = ww_image_make(x + k * px, h, w, c, WW_U8);
    double *out = (double *)malloc(stored * sizeof(double));
    double times[5];
    for (int rep = 0; rep < 5; rep++) {
        double t0 = bench_now();
        if (ww_image_pairwise(one, &qi, 1, xi, stored, NULL, out, NULL) != WW_OK)
            exit(1);
        times[rep] = bench_now() - t0;
    }
    const double engine = bench_median(times, 5) / (double)stored;
    /* the reference on the first pairs, checking the results agree */
    double *qd = (double *)malloc(px * sizeof(double)), *xd = (double *)malloc(px * sizeof(double));
    for (size_t k = 0; k < px; k++)
        qd[k] = q[k];
    double worst = 0, t0 = bench_now();
    for (size_t p = 0; p < ref_pairs; p++) {
        for (size_t k = 0; k < px; k++)
            xd[k] = x[p * px + k];
        double v = ref_image_distance(qd, h, w, xd, h, w, c, 0);
        double e = fabs(v - out[p]) / (v > 1 ? v : 1);
        worst = e > worst ? e : worst;
    }
    const double reference = (bench_now() - t0) / (double)ref_pairs;
    const double cells = (double)(h * h) * (double)(w * w) + (double)(h * h);
    printf("| %zu x %zu x %zu u8 | %.3g | %.3g | %.3g | %.3g | %.1fx | %.1e |\n", h, w, c, 1 / reference,
           1 / engine, cells / engine, cells / reference, reference / engine, worst);
    free(q), free(x), free(xi), free(out), free(qd), free(xd);
}

int main(int argc, char **argv)
{
    size_t stored = 60000;
    int threads = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--stored") == 0 && i + 1 < argc)
            stored = (size_t)strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
            threads = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: ww_bench_image [--stored N] [--threads T]\n");
            return 2;
        }
    }
    ww_ctx *one = make_ctx(1);
    printf("## One core: engine against the plain reference (same run)\n\n");
    printf("| images | reference pairs/s | engine pairs/s | engine cells/s | reference cells/s | speed-up | max rel diff |\n");
    printf("|---|---|---|---|---|---|---|\n");
    per_core(one, 8, 8, 1, 200);
    per_core(one, 16, 16, 1, 20);
    per_core(one, 28, 28, 1, 4);
    per_core(one, 28, 28, 3, 2);
    per_core(one, 64, 64, 1, 1);
    ww_ctx_destroy(one);

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
