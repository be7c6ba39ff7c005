/* Elastic image matching, the CPU engine's path for small images (issue 11: 8 x 8 at >= 50x the
 * reference per core): groups of columns exactly 8 pixels wide against x images 8 wide go through a
 * DP unrolled whole (image_lanes_fixed), u8 RGB pixels through |x|^2 + |y|^2 - 2 x.y by fused
 * multiply-adds (exact in float for bytes). Every distance must be the bits of the recursion written
 * plainly in the engine's precision (image_reference.h) and of the single-pair path. */
#include "image_reference.h"
#include "ww_test.h"

#include <stdlib.h>
#include <string.h>

/* Random pixels of dtype dt in values (as doubles) and in a buffer of that dtype; `extreme`: only the
 * ends of the range (0 and 255 for u8, +-1e18 for floats: differences that square past float's range,
 * +inf distances in float) for half the pixels. */
static void *small_image(ww_rng *rng, size_t h, size_t w, size_t c, ww_dtype dt, int extreme, double *values,
                         ww_image *img)
{
    const size_t n = h * w * c;
    void *p = malloc(n * 8 + 8);
    for (size_t k = 0; k < n; k++) {
        const int end = extreme && ww_rng_below(rng, 2);
        if (dt == WW_U8) {
            const unsigned char v = (unsigned char)(end ? 255 * ww_rng_below(rng, 2) : ww_rng_below(rng, 256));
            ((unsigned char *)p)[k] = v;
            values[k] = v;
        } else {
            const double v = end ? (ww_rng_below(rng, 2) ? 1e18 : -1e18) : ww_rng_uniform(rng) * 510 - 255;
            if (dt == WW_F32)
                ((float *)p)[k] = (float)v, values[k] = (float)v;
            else
                ((double *)p)[k] = v, values[k] = v;
        }
    }
    *img = ww_image_make(p, h, w, c, dt);
    return p;
}

static int same_or_both_inf(double a, double b) { return a == b || (isinf(a) && isinf(b)); }

/* x images 8 wide (and a few 7 and 9 wide) of 1 to 19 rows against 40 columns 8 wide (two full
 * groups of 16 and a partial one; heights that admit a path and some that do not), 1 to 4 channels,
 * u8, f32 and f64, absolute and squared: each entry the plain recursion's bits and ww_image_distance's. */
void test_image_small_fixed_width_exact(void)
{
    ww_ctx *ctx = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_AUTO, 0);
    ww_rng rng = {0x88c01ULL};
    enum { NX = 6, NY = 40, ROUNDS = 28 };
    const ww_dtype dtypes[3] = {WW_U8, WW_F32, WW_F64};
    const size_t most = 20 * 9 * 4;
    double *xv = malloc(NX * most * sizeof(double)), *yv = malloc(NY * most * sizeof(double));
    float *xf = malloc(most * sizeof(float)), *yf = malloc(most * sizeof(float));
    int bad = 0, checked = 0, finite = 0;
    for (int round = 0; round < ROUNDS; round++) {
        /* rounds 24 on: u8 RGB (the fused multiply-add path), with and without the range's ends */
        const ww_dtype dt = round < 24 ? dtypes[round % 3] : WW_U8;
        const size_t ch = round < 24 ? 1 + (size_t)(round / 3) % 4 : 3, h = 8 + (size_t)round % 5 - 2; /* 6 to 10 rows */
        const int squared = round < 24 ? (round / 12) % 2 : round % 2;
        const int extreme = round < 24 ? round % 4 == 1 : (round / 2) % 2;
        ww_image x[NX], y[NY];
        void *px[NX], *py[NY];
        for (int k = 0; k < NY; k++) /* one size but the last eight: 3 rows (no path from most x) */
            py[k] = small_image(&rng, k < 32 ? h : 3, 8, ch, dt, extreme, yv + k * most, &y[k]);
        for (int k = 0; k < NX; k++) {
            const size_t xh = k == 0 ? h : 1 + ww_rng_below(&rng, 19), xw = k < 4 ? 8 : 7 + 2 * (size_t)(k - 4);
            px[k] = small_image(&rng, xh, xw, ch, dt, extreme, xv + k * most, &x[k]);
        }
        ww_image_params p = ww_image_params_default();
        p.squared = squared;
        double m[NX * NY];
        CHECK_STATUS(ww_image_pairwise(ctx, x, NX, y, NY, &p, m, NULL), WW_OK);
        for (int i = 0; i < NX; i++)
            for (int j = 0; j < NY; j++) {
                const ww_image *a = &x[i], *b = &y[j];
                const double *av = xv + i * most, *bv = yv + j * most;
                const double exact = ref_image_distance_as(dt != WW_F64, av, a->height, a->width, bv, b->height, b->width,
                                                           ch, squared, xf, yf);
                double single = -1;
                CHECK_STATUS(ww_image_distance(ctx, a, b, &p, &single), WW_OK);
                const double got = m[i * NY + j];
                if (!(same_or_both_inf(got, exact) && same_or_both_inf(single, exact)) && bad++ < 5)
                    fprintf(stderr, "  %zux%zu vs %zux%zu c %zu dtype %d sq %d: matrix %.17g pair %.17g plain %.17g\n",
                            a->height, a->width, b->height, b->width, ch, (int)dt, squared, got, single, exact);
                checked++;
                finite += !isinf(exact);
            }
        /* the self matrix of the columns (x = y: the groups against their own images) */
        double self[NY * NY];
        CHECK_STATUS(ww_image_pairwise(ctx, y, NY, NULL, 0, &p, self, NULL), WW_OK);
        for (int i = 0; i < NY; i += 3)
            for (int j = 0; j < NY; j++) {
                double single = -1;
                CHECK_STATUS(ww_image_distance(ctx, &y[i], &y[j], &p, &single), WW_OK);
                bad += !same_or_both_inf(self[i * NY + j], single);
            }
        for (int k = 0; k < NX; k++)
            free(px[k]);
        for (int k = 0; k < NY; k++)
            free(py[k]);
    }
    CHECK(bad == 0);
    CHECK(checked == ROUNDS * NX * NY);
    CHECK(finite > checked / 3); /* most pairs have a path */
    free(xv);
    free(yv);
    free(xf);
    free(yf);
    ww_ctx_destroy(ctx);
}
