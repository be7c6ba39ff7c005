/* The public API's contract: every bad input gets its exact status and leaves the outputs alone;
 * blocks, strides, output dtypes, ragged datasets, kNN and thread counts give the same numbers as
 * the plain pair computation. Contexts are created with backend CPU so that these hold in any build. */
#include "ww_test.h"

#include <float.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ helpers */

static void fill_nan(double *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        v[i] = NAN;
}

static int all_nan(const double *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isnan(v[i]))
            return 0;
    return 1;
}

/* Values in [-1, 1); stamps rising by random steps, a quarter of them repeated. */
static void random_values(ww_rng *r, size_t n, double *v)
{
    for (size_t i = 0; i < n; i++)
        v[i] = 2 * ww_rng_uniform(r) - 1;
}

static void random_stamps(ww_rng *r, size_t n, double *t)
{
    double now = ww_rng_uniform(r) * 3;
    for (size_t i = 0; i < n; i++) {
        now += ww_rng_below(r, 4) == 0 ? 0.0 : ww_rng_uniform(r) * 2;
        t[i] = now;
    }
}

/* A ragged random dataset: count series of lengths in [min_len, max_len], with stamps. */
typedef struct test_set {
    double *v, *t;
    size_t *offsets;
    size_t count, dim;
    ww_dataset d;
} test_set;

static void make_set_lengths(ww_rng *r, test_set *s, size_t count, size_t dim, const size_t *lengths,
                             int stamps)
{
    s->count = count;
    s->dim = dim;
    s->offsets = (size_t *)malloc((count + 1) * sizeof(size_t));
    s->offsets[0] = 0;
    for (size_t i = 0; i < count; i++)
        s->offsets[i + 1] = s->offsets[i] + lengths[i];
    size_t total = s->offsets[count];
    s->v = (double *)malloc(total * dim * sizeof(double));
    s->t = (double *)malloc(total * sizeof(double));
    random_values(r, total * dim, s->v);
    for (size_t i = 0; i < count; i++)
        random_stamps(r, s->offsets[i + 1] - s->offsets[i], s->t + s->offsets[i]);
    s->d = ww_dataset_f64(s->v, stamps ? s->t : NULL, s->offsets, count, 0, dim);
}

static void make_set(ww_rng *r, test_set *s, size_t count, size_t dim, size_t min_len, size_t max_len,
                     int stamps)
{
    size_t *lengths = (size_t *)malloc(count * sizeof(size_t));
    for (size_t i = 0; i < count; i++)
        lengths[i] = min_len + ww_rng_below(r, max_len - min_len + 1);
    make_set_lengths(r, s, count, dim, lengths, stamps);
    free(lengths);
}

static void free_set(test_set *s)
{
    free(s->v), free(s->t), free(s->offsets);
}

/* ------------------------------------------------------------------ contexts and strings */

void test_api_context_errors(void)
{
    ww_ctx *ctx = (ww_ctx *)&ctx; /* any non-NULL value: a failed create must reset it */
    ww_ctx_options o = ww_ctx_options_default();
    CHECK(o.backend == WW_BACKEND_AUTO && o.engine == WW_ENGINE_AUTO && o.num_threads <= 0);
    CHECK_STATUS(ww_ctx_create(NULL, NULL), WW_ERR_NULL_POINTER);
    CHECK_STATUS(ww_ctx_create(NULL, &o), WW_ERR_NULL_POINTER);

    o.backend = (ww_backend)3;
    CHECK_STATUS(ww_ctx_create(&ctx, &o), WW_ERR_BACKEND);
    CHECK(ctx == NULL);
    o.backend = (ww_backend)-1;
    CHECK_STATUS(ww_ctx_create(&ctx, &o), WW_ERR_BACKEND);
    o = ww_ctx_options_default();
    o.engine = (ww_engine)6;
    CHECK_STATUS(ww_ctx_create(&ctx, &o), WW_ERR_BACKEND);
    o.engine = (ww_engine)-2;
    CHECK_STATUS(ww_ctx_create(&ctx, &o), WW_ERR_BACKEND);

    /* contradictory backend and engine */
    const ww_engine cuda_engines[] = {WW_ENGINE_CUDA_DIAGONAL, WW_ENGINE_CUDA_WAVEFRONT};
    const ww_engine cpu_engines[] = {WW_ENGINE_CPU_REFERENCE, WW_ENGINE_CPU_BAND, WW_ENGINE_CPU_STRIP};
    for (int e = 0; e < 2; e++) {
        o = ww_ctx_options_default();
        o.backend = WW_BACKEND_CPU;
        o.engine = cuda_engines[e];
        CHECK_STATUS(ww_ctx_create(&ctx, &o), WW_ERR_BACKEND);
        CHECK(ctx == NULL);
    }
    for (int e = 0; e < 3; e++) {
        o = ww_ctx_options_default();
        o.backend = WW_BACKEND_CUDA;
        o.engine = cpu_engines[e];
        CHECK_STATUS(ww_ctx_create(&ctx, &o), WW_ERR_BACKEND);
        CHECK(ctx == NULL);
        /* a CPU engine with backend AUTO means the CPU */
        o.backend = WW_BACKEND_AUTO;
        CHECK_STATUS(ww_ctx_create(&ctx, &o), WW_OK);
        CHECK(ww_ctx_backend(ctx) == WW_BACKEND_CPU);
        ww_ctx_destroy(ctx);
    }

    /* backend CUDA without a usable GPU: NO_CUDA in a build without CUDA (NO_DEVICE in a CUDA
     * build on a machine without a GPU). With a GPU this is not an error, so it is not checked. */
    if (!ww_cuda_available()) {
        o = ww_ctx_options_default();
        o.backend = WW_BACKEND_CUDA;
        ctx = (ww_ctx *)&ctx;
        ww_status st = ww_ctx_create(&ctx, &o);
        CHECK(st == WW_ERR_NO_CUDA || st == WW_ERR_NO_DEVICE);
        CHECK(ctx == NULL);
        o.backend = WW_BACKEND_AUTO;
        o.engine = WW_ENGINE_CUDA_WAVEFRONT; /* an explicit CUDA engine implies backend CUDA */
        st = ww_ctx_create(&ctx, &o);
        CHECK(st == WW_ERR_NO_CUDA || st == WW_ERR_NO_DEVICE);
        /* AUTO silently uses the CPU */
        CHECK_STATUS(ww_ctx_create(&ctx, NULL), WW_OK);
        CHECK(ww_ctx_backend(ctx) == WW_BACKEND_CPU);
        CHECK(strncmp(ww_ctx_describe(ctx), "cpu", 3) == 0);
        ww_ctx_destroy(ctx);
    }

    /* device lists: a bad list is refused before any device is touched, in every build; an
     * ordinal no GPU has is NO_DEVICE (NO_CUDA in a build without CUDA) */
    {
        const int negative[] = {0, -1}, absent[] = {4096};
        o = ww_ctx_options_default();
        o.backend = WW_BACKEND_CUDA;
        o.devices = negative, o.device_count = 2;
        ctx = (ww_ctx *)&ctx;
        CHECK_STATUS(ww_ctx_create(&ctx, &o), WW_ERR_NO_DEVICE);
        CHECK(ctx == NULL);
        o.devices = NULL, o.device_count = 1;
        CHECK_STATUS(ww_ctx_create(&ctx, &o), WW_ERR_NULL_POINTER);
        o.devices = negative, o.device_count = -1;
        CHECK_STATUS(ww_ctx_create(&ctx, &o), WW_ERR_NO_DEVICE);
        o.device_count = 65; /* more than WW_MAX_DEVICES */
        CHECK_STATUS(ww_ctx_create(&ctx, &o), WW_ERR_NO_DEVICE);
        o.devices = absent, o.device_count = 1;
        ww_status st = ww_ctx_create(&ctx, &o);
        CHECK(st == WW_ERR_NO_DEVICE || st == WW_ERR_NO_CUDA);
        CHECK(ctx == NULL);
    }

    /* thread counts, names, NULL tolerance */
    for (int threads = 1; threads <= 3; threads++) {
        ctx = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_AUTO, threads);
        CHECK(ww_ctx_num_threads(ctx) == threads);
        CHECK(ww_ctx_backend(ctx) == WW_BACKEND_CPU);
        CHECK(strstr(ww_ctx_describe(ctx), "cpu") != NULL);
        ww_ctx_destroy(ctx);
    }
    ctx = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_AUTO, 0);
    CHECK(ww_ctx_num_threads(ctx) >= 1);
    ww_ctx_destroy(ctx);
    ww_ctx_destroy(NULL);
    CHECK(ww_ctx_backend(NULL) == WW_BACKEND_AUTO);
    CHECK(ww_ctx_num_threads(NULL) == 0);
    CHECK(ww_ctx_describe(NULL) != NULL);
    CHECK(strcmp(ww_backend_name(WW_BACKEND_CPU), "cpu") == 0);
    CHECK(strcmp(ww_backend_name(WW_BACKEND_CUDA), "cuda") == 0);
    CHECK(strcmp(ww_backend_name(WW_BACKEND_AUTO), "auto") == 0);
    CHECK(ww_backend_name((ww_backend)77) != NULL);
    char version[32];
    snprintf(version, sizeof version, "%d.%d.%d", WW_VERSION_MAJOR, WW_VERSION_MINOR, WW_VERSION_PATCH);
    CHECK(strcmp(ww_version(), version) == 0);
}

void test_api_strerror(void)
{
    const int last = WW_ERR_TREE_SIZE;
    for (int a = 0; a <= last; a++) {
        const char *sa = ww_strerror((ww_status)a);
        CHECK(sa != NULL && sa[0] != '\0');
        if (sa == NULL)
            continue;
        for (int b = 0; b < a; b++)
            CHECK(strcmp(sa, ww_strerror((ww_status)b)) != 0);
    }
    const int unknown[] = {-1, last + 1, 1000};
    for (int u = 0; u < 3; u++) {
        const char *s = ww_strerror((ww_status)unknown[u]);
        CHECK(s != NULL && s[0] != '\0');
        if (s == NULL)
            continue;
        CHECK(strstr(s, "unknown") != NULL);
        for (int b = 0; b <= last; b++)
            CHECK(strcmp(s, ww_strerror((ww_status)b)) != 0);
    }
}

/* ------------------------------------------------------------------ one pair */

/* ww_twed, ww_series_check must both give `want`; *out must stay untouched on failure. */
static void expect_pair(ww_ctx *ctx, const ww_series *a, const ww_series *b, const ww_twed_params *p,
                        ww_status want, int line)
{
    double out = 42.0;
    ww_status got = ww_twed(ctx, a, b, p, &out);
    if (got != want) {
        ww_test_failures++;
        fprintf(stderr, "  %s:%d: ww_twed returned %d (%s), expected %d (%s)\n", __FILE__, line, (int)got,
                ww_strerror(got), (int)want, ww_strerror(want));
    }
    if (want != WW_OK && out != 42.0) {
        ww_test_failures++;
        fprintf(stderr, "  %s:%d: ww_twed wrote its output on failure\n", __FILE__, line);
    }
    if (want == WW_OK && !(out >= 0 && isfinite(out))) {
        ww_test_failures++;
        fprintf(stderr, "  %s:%d: ww_twed gave %g\n", __FILE__, line, out);
    }
}
#define EXPECT_PAIR(ctx, a, b, p, want) expect_pair(ctx, a, b, p, want, __LINE__)

void test_api_twed_errors(void)
{
    ww_ctx *ctx = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_AUTO, 1);
    enum { N = 6, D = 2 };
    double va[N * D], vb[N * D], ta[N], tb[N];
    float fa[N * D], fb[N * D], fta[N];
    for (int i = 0; i < N * D; i++) {
        va[i] = 0.1 * i;
        vb[i] = 1.0 - 0.05 * i;
        fa[i] = (float)va[i];
        fb[i] = (float)vb[i];
    }
    for (int i = 0; i < N; i++) {
        ta[i] = tb[i] = i;
        fta[i] = (float)i;
    }
    const ww_series a = ww_series_f64(va, ta, N, D), b = ww_series_f64(vb, tb, N, D);
    const ww_twed_params p = {0.5, 1.0, 2};
    EXPECT_PAIR(ctx, &a, &b, &p, WW_OK);
    EXPECT_PAIR(ctx, &a, &b, NULL, WW_OK); /* defaults */
    double with_null = -1, with_default = -2;
    ww_twed_params def = ww_twed_params_default();
    CHECK(def.nu == 0.001 && def.lambda == 1.0 && def.degree == 2);
    CHECK_STATUS(ww_twed(ctx, &a, &b, NULL, &with_null), WW_OK);
    CHECK_STATUS(ww_twed(ctx, &a, &b, &def, &with_default), WW_OK);
    CHECK(with_null == with_default);

    /* NULL pointers */
    double out = 42.0;
    CHECK_STATUS(ww_twed(NULL, &a, &b, &p, &out), WW_ERR_NULL_POINTER);
    CHECK_STATUS(ww_twed(ctx, &a, &b, &p, NULL), WW_ERR_NULL_POINTER);
    CHECK(out == 42.0);
    EXPECT_PAIR(ctx, NULL, &b, &p, WW_ERR_NULL_POINTER);
    EXPECT_PAIR(ctx, &a, NULL, &p, WW_ERR_NULL_POINTER);
    ww_series s = a;
    s.values = NULL;
    EXPECT_PAIR(ctx, &s, &b, &p, WW_ERR_NULL_POINTER);
    EXPECT_PAIR(ctx, &b, &s, &p, WW_ERR_NULL_POINTER);
    CHECK_STATUS(ww_series_check(&s), WW_ERR_NULL_POINTER);
    CHECK_STATUS(ww_series_check(NULL), WW_ERR_NULL_POINTER);
    CHECK_STATUS(ww_twed_params_check(NULL), WW_ERR_NULL_POINTER);
    s = a;
    s.stamps = NULL; /* NULL stamps are allowed: 1, 2, ... */
    EXPECT_PAIR(ctx, &s, &b, &p, WW_OK);

    /* shapes */
    s = a;
    s.length = 0;
    EXPECT_PAIR(ctx, &s, &b, &p, WW_ERR_EMPTY);
    EXPECT_PAIR(ctx, &b, &s, &p, WW_ERR_EMPTY);
    CHECK_STATUS(ww_series_check(&s), WW_ERR_EMPTY);
    s = a;
    s.dim = 0;
    EXPECT_PAIR(ctx, &s, &b, &p, WW_ERR_SHAPE);
    EXPECT_PAIR(ctx, &b, &s, &p, WW_ERR_SHAPE);
    CHECK_STATUS(ww_series_check(&s), WW_ERR_SHAPE);
    s = ww_series_f64(va, NULL, N * D, 1); /* same buffer seen as dim 1 */
    EXPECT_PAIR(ctx, &s, &b, &p, WW_ERR_SHAPE);
    EXPECT_PAIR(ctx, &b, &s, &p, WW_ERR_SHAPE);
    s = ww_series_f64(va, NULL, 4, 3);
    EXPECT_PAIR(ctx, &a, &s, &p, WW_ERR_SHAPE);

    /* dtypes */
    const ww_series fsa = ww_series_f32(fa, fta, N, D), fsb = ww_series_f32(fb, NULL, N, D);
    EXPECT_PAIR(ctx, &fsa, &fsb, &p, WW_OK);
    EXPECT_PAIR(ctx, &a, &fsb, &p, WW_ERR_DTYPE);
    EXPECT_PAIR(ctx, &fsa, &b, &p, WW_ERR_DTYPE);
    s = a;
    s.dtype = (ww_dtype)2;
    EXPECT_PAIR(ctx, &s, &b, &p, WW_ERR_DTYPE);
    EXPECT_PAIR(ctx, &b, &s, &p, WW_ERR_DTYPE);
    CHECK_STATUS(ww_series_check(&s), WW_ERR_DTYPE);
    s.dtype = (ww_dtype)-1;
    EXPECT_PAIR(ctx, &s, &b, &p, WW_ERR_DTYPE);

    /* memory kinds: device pointers on a CPU context; an unknown kind */
    s = a;
    s.memory = WW_DEVICE;
    EXPECT_PAIR(ctx, &s, &b, &p, WW_ERR_MEMORY_KIND);
    EXPECT_PAIR(ctx, &b, &s, &p, WW_ERR_MEMORY_KIND);
    CHECK_STATUS(ww_series_check(&s), WW_ERR_MEMORY_KIND);
    s.memory = (ww_memory)9;
    EXPECT_PAIR(ctx, &s, &b, &p, WW_ERR_MEMORY_KIND);
    CHECK_STATUS(ww_series_check(&s), WW_ERR_MEMORY_KIND);

    /* non-finite values: first, middle and last sample (first and last component), f64 and f32,
     * in either series */
    const double bad[] = {NAN, INFINITY, -INFINITY};
    const size_t where[] = {0, (N / 2) * D + 1, N * D - 1};
    for (int k = 0; k < 3; k++)
        for (int w = 0; w < 3; w++) {
            double v2[N * D];
            float f2[N * D];
            memcpy(v2, va, sizeof v2);
            memcpy(f2, fa, sizeof f2);
            v2[where[w]] = bad[k];
            f2[where[w]] = (float)bad[k];
            ww_series sd = ww_series_f64(v2, ta, N, D), sf = ww_series_f32(f2, NULL, N, D);
            EXPECT_PAIR(ctx, &sd, &b, &p, WW_ERR_NONFINITE);
            EXPECT_PAIR(ctx, &b, &sd, &p, WW_ERR_NONFINITE);
            EXPECT_PAIR(ctx, &sf, &fsb, &p, WW_ERR_NONFINITE);
            EXPECT_PAIR(ctx, &fsb, &sf, &p, WW_ERR_NONFINITE);
            CHECK_STATUS(ww_series_check(&sd), WW_ERR_NONFINITE);
            CHECK_STATUS(ww_series_check(&sf), WW_ERR_NONFINITE);
        }

    /* stamps: non-finite (first, middle, last) or decreasing fail; equal stamps are fine */
    const size_t swhere[] = {0, N / 2, N - 1};
    for (int k = 0; k < 3; k++)
        for (int w = 0; w < 3; w++) {
            double t2[N];
            float ft2[N];
            memcpy(t2, ta, sizeof t2);
            memcpy(ft2, fta, sizeof ft2);
            t2[swhere[w]] = bad[k];
            ft2[swhere[w]] = (float)bad[k];
            ww_series sd = ww_series_f64(va, t2, N, D), sf = ww_series_f32(fa, ft2, N, D);
            EXPECT_PAIR(ctx, &sd, &b, &p, WW_ERR_STAMPS);
            EXPECT_PAIR(ctx, &b, &sd, &p, WW_ERR_STAMPS);
            EXPECT_PAIR(ctx, &sf, &fsb, &p, WW_ERR_STAMPS);
            CHECK_STATUS(ww_series_check(&sd), WW_ERR_STAMPS);
            CHECK_STATUS(ww_series_check(&sf), WW_ERR_STAMPS);
        }
    {
        double t2[N] = {0, 1, 2, 1.5, 4, 5}; /* one step back in the middle */
        float ft2[N] = {0, 1, 2, 3, 4, 3.999f};
        ww_series sd = ww_series_f64(va, t2, N, D), sf = ww_series_f32(fa, ft2, N, D);
        EXPECT_PAIR(ctx, &sd, &b, &p, WW_ERR_STAMPS);
        EXPECT_PAIR(ctx, &b, &sd, &p, WW_ERR_STAMPS);
        EXPECT_PAIR(ctx, &sf, &fsb, &p, WW_ERR_STAMPS);
        double t3[N] = {1, 0, 2, 3, 4, 5}; /* at the start */
        sd.stamps = t3;
        EXPECT_PAIR(ctx, &sd, &b, &p, WW_ERR_STAMPS);
        double t4[N] = {-3, -3, 0, 0, 0, 7}; /* repeated and negative stamps are allowed */
        sd.stamps = t4;
        EXPECT_PAIR(ctx, &sd, &b, &p, WW_OK);
        CHECK_STATUS(ww_series_check(&sd), WW_OK);
        double t5[N] = {2, 2, 2, 2, 2, 2};
        float ft5[N] = {2, 2, 2, 2, 2, 2};
        sd.stamps = t5;
        sf.stamps = ft5;
        EXPECT_PAIR(ctx, &sd, &b, &p, WW_OK);
        EXPECT_PAIR(ctx, &sf, &fsb, &p, WW_OK);
        /* Regression (review): stamps whose difference overflows gave an infinite cost, NaN when
         * multiplied by nu = 0, and engines that group their minimums differently disagreed on
         * it. Beyond half the type's range a stamp is refused; at half it works, even with nu = 0. */
        ww_twed_params p0 = p;
        p0.nu = 0;
        double t6[N] = {-1e308, 0, 1, 2, 3, 4}, t7[N] = {0, 1, 2, 3, 4, 1e308};
        float ft6[N] = {0, 1, 2, 3, 4, 3e38f};
        sf.stamps = ft6;
        EXPECT_PAIR(ctx, &sf, &fsb, &p0, WW_ERR_STAMPS);
        CHECK_STATUS(ww_series_check(&sf), WW_ERR_STAMPS);
        sd.stamps = t6;
        EXPECT_PAIR(ctx, &sd, &b, &p0, WW_ERR_STAMPS);
        EXPECT_PAIR(ctx, &b, &sd, &p0, WW_ERR_STAMPS);
        CHECK_STATUS(ww_series_check(&sd), WW_ERR_STAMPS);
        sd.stamps = t7;
        EXPECT_PAIR(ctx, &sd, &b, &p0, WW_ERR_STAMPS);
        double t8[N] = {-DBL_MAX / 2, 0, 1, 2, 3, DBL_MAX / 2};
        float ft8[N] = {-FLT_MAX / 2, 0, 1, 2, 3, FLT_MAX / 2};
        sd.stamps = t8;
        sf.stamps = ft8;
        EXPECT_PAIR(ctx, &sd, &b, &p0, WW_OK);
        EXPECT_PAIR(ctx, &sf, &fsb, &p0, WW_OK);
    }

    /* parameters */
    const ww_twed_params bad_params[] = {
        {-1.0, 1.0, 2},    {-1e-300, 1.0, 2}, {0.5, -1.0, 2},    {0.5, -1e-300, 2}, {0.5, 1.0, 0},
        {0.5, 1.0, -3},    {NAN, 1.0, 2},     {0.5, NAN, 2},     {INFINITY, 1.0, 2}, {0.5, INFINITY, 2},
        {-INFINITY, 1, 2}, {NAN, NAN, 0},
    };
    for (size_t k = 0; k < sizeof bad_params / sizeof bad_params[0]; k++) {
        EXPECT_PAIR(ctx, &a, &b, &bad_params[k], WW_ERR_PARAM);
        CHECK_STATUS(ww_twed_params_check(&bad_params[k]), WW_ERR_PARAM);
    }
    const ww_twed_params good_params[] = {{0, 0, 1}, {0, 1, 2}, {1e6, 0, 7}, {0.001, 1, 3}};
    for (size_t k = 0; k < sizeof good_params / sizeof good_params[0]; k++) {
        EXPECT_PAIR(ctx, &a, &b, &good_params[k], WW_OK);
        CHECK_STATUS(ww_twed_params_check(&good_params[k]), WW_OK);
    }

    /* the context still works after all of that */
    EXPECT_PAIR(ctx, &a, &b, &p, WW_OK);
    ww_ctx_destroy(ctx);
}

/* Lengths and dims whose sizes overflow size_t: an error, and no read of the (tiny) buffers. */
void test_api_overflow(void)
{
    double v[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    size_t offsets[3] = {0, 1, 2};
    ww_ctx *strip = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_AUTO, 2), *ref = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_CPU_REFERENCE, 1);
    const ww_series b = ww_series_f64(v, NULL, 4, 1);
    const size_t huge_lengths[] = {SIZE_MAX, SIZE_MAX - 1, SIZE_MAX / 2, SIZE_MAX / 24, SIZE_MAX / 8 + 1};
    for (size_t k = 0; k < sizeof huge_lengths / sizeof huge_lengths[0]; k++) {
        ww_series a = ww_series_f64(v, NULL, huge_lengths[k], 1);
        EXPECT_PAIR(strip, &a, &b, NULL, WW_ERR_OVERFLOW);
        EXPECT_PAIR(strip, &b, &a, NULL, WW_ERR_OVERFLOW);
        EXPECT_PAIR(ref, &a, &b, NULL, WW_ERR_OVERFLOW);
        CHECK_STATUS(ww_series_check(&a), WW_ERR_OVERFLOW);
        ww_series f = ww_series_f32((const float *)v, NULL, huge_lengths[k], 1);
        CHECK_STATUS(ww_series_check(&f), WW_ERR_OVERFLOW);
    }
    const size_t huge_dims[] = {SIZE_MAX, SIZE_MAX - 1, SIZE_MAX - 2, SIZE_MAX / 16};
    for (size_t k = 0; k < sizeof huge_dims / sizeof huge_dims[0]; k++) {
        ww_series a = ww_series_f64(v, NULL, 1, huge_dims[k]);
        ww_series a2 = a;
        CHECK_STATUS(ww_series_check(&a), WW_ERR_OVERFLOW);
        EXPECT_PAIR(strip, &a, &a2, NULL, WW_ERR_OVERFLOW);
    }
    if (SIZE_MAX > 0xFFFFFFFFu) {
        /* Fine for one series, but the reference engine's (n+1)^2 matrix overflows. */
        const size_t n = (size_t)1 << (sizeof(size_t) * 4 + 1);
        ww_series a = ww_series_f64(v, NULL, n, 1);
        EXPECT_PAIR(ref, &a, &a, NULL, WW_ERR_OVERFLOW);
    }

    double out[4];
    /* datasets whose prepared size overflows */
    ww_dataset xs[4];
    xs[0] = ww_dataset_f64(v, NULL, NULL, SIZE_MAX / 2, 4, 1);
    xs[1] = ww_dataset_f64(v, NULL, NULL, 1, SIZE_MAX / 8 + 1, 1);
    xs[2] = ww_dataset_f64(v, NULL, NULL, 2, 4, SIZE_MAX - 1);
    size_t big_offsets[2] = {0, SIZE_MAX / 8 + 1};
    xs[3] = ww_dataset_f64(v, NULL, big_offsets, 1, 0, 1);
    const ww_dataset small = ww_dataset_f64(v, NULL, offsets, 2, 0, 1);
    for (int k = 0; k < 4; k++) {
        CHECK_STATUS(ww_dataset_check(&xs[k]), WW_ERR_OVERFLOW);
        fill_nan(out, 4);
        CHECK_STATUS(ww_twed_pairwise(strip, &xs[k], NULL, NULL, out, NULL), WW_ERR_OVERFLOW);
        CHECK(all_nan(out, 4));
        if (k != 2) {
            CHECK_STATUS(ww_twed_pairwise(strip, &small, &xs[k], NULL, out, NULL), WW_ERR_OVERFLOW);
            CHECK_STATUS(ww_twed_pairwise(strip, &xs[k], &small, NULL, out, NULL), WW_ERR_OVERFLOW);
        }
        CHECK(all_nan(out, 4));
        size_t idx[2] = {7, 7};
        double dist[2] = {NAN, NAN};
        CHECK_STATUS(ww_twed_knn(strip, &small, &xs[k], NULL, 1, idx, dist, NULL), WW_ERR_OVERFLOW);
        CHECK(idx[0] == 7 && idx[1] == 7 && all_nan(dist, 2));
    }
    if (SIZE_MAX > 0xFFFFFFFFu) {
        /* One series small enough to pass the descriptor checks, but the SIMD engine's lane buffer
         * (16 columns interleaved) would overflow. */
        ww_dataset x = ww_dataset_f64(v, NULL, NULL, 1, (size_t)1 << 58, 1);
        CHECK_STATUS(ww_twed_pairwise(strip, &x, NULL, NULL, out, NULL), WW_ERR_OVERFLOW);
        CHECK_STATUS(ww_twed_pairwise(strip, &small, &x, NULL, out, NULL), WW_ERR_OVERFLOW);
        CHECK(all_nan(out, 4));
        size_t idx[2] = {7, 7};
        double dist[2] = {NAN, NAN};
        CHECK_STATUS(ww_twed_knn(strip, &small, &x, NULL, 1, idx, dist, NULL), WW_ERR_OVERFLOW);
        CHECK(idx[0] == 7 && idx[1] == 7);
    }
    /* an output stride whose block size overflows */
    ww_pairwise_options o = ww_pairwise_options_default();
    o.out_stride = SIZE_MAX / 4;
    CHECK_STATUS(ww_twed_pairwise(strip, &small, NULL, NULL, out, &o), WW_ERR_OVERFLOW);
    CHECK(all_nan(out, 4));
    ww_ctx_destroy(strip);
    ww_ctx_destroy(ref);
}

/* A matrix too big for memory: WW_ERR_MEMORY, then the context still works. Not under ASan (whose
 * allocator aborts on such requests) nor where the kernel promises any amount of memory. */
#if defined(__SANITIZE_ADDRESS__)
#define WW_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define WW_TEST_ASAN 1
#endif
#endif

void test_api_out_of_memory(void)
{
#ifdef WW_TEST_ASAN
    SKIP("huge allocations abort under AddressSanitizer");
#else
    FILE *f = fopen("/proc/sys/vm/overcommit_memory", "r");
    int mode = -1;
    if (f) {
        if (fscanf(f, "%d", &mode) != 1)
            mode = -1;
        fclose(f);
    }
    if (mode != 0 && mode != 2)
        SKIP("the kernel may overcommit any amount (vm.overcommit_memory is not 0 or 2)");
    /* 2^20 samples each: the reference engine wants 8 TiB */
    const size_t n = (size_t)1 << 20;
    float *v = (float *)calloc(n, sizeof(float));
    ww_ctx *ref = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_CPU_REFERENCE, 1);
    ww_series a = ww_series_f32(v, NULL, n, 1);
    double out = 42.0;
    CHECK_STATUS(ww_twed(ref, &a, &a, NULL, &out), WW_ERR_MEMORY);
    CHECK(out == 42.0);
    ww_series small = ww_series_f32(v, NULL, 10, 1);
    CHECK_STATUS(ww_twed(ref, &small, &small, NULL, &out), WW_OK);
    CHECK(out == 0.0);
    ww_ctx_destroy(ref);
    free(v);
#endif
}

/* ------------------------------------------------------------------ matrices: bad inputs */

/* Returns the status; the output (n doubles, poisoned with NaN) must be untouched on failure. */
static void expect_pairwise(ww_ctx *ctx, const ww_dataset *x, const ww_dataset *y, const ww_twed_params *p,
                            const ww_pairwise_options *o, ww_status want, int line)
{
    enum { CAP = 64 };
    double out[CAP];
    fill_nan(out, CAP);
    ww_status got = ww_twed_pairwise(ctx, x, y, p, out, o);
    if (got != want) {
        ww_test_failures++;
        fprintf(stderr, "  %s:%d: ww_twed_pairwise returned %d (%s), expected %d (%s)\n", __FILE__, line,
                (int)got, ww_strerror(got), (int)want, ww_strerror(want));
    }
    if (want != WW_OK && !all_nan(out, CAP)) {
        ww_test_failures++;
        fprintf(stderr, "  %s:%d: ww_twed_pairwise wrote its output on failure\n", __FILE__, line);
    }
}
#define EXPECT_PAIRWISE(ctx, x, y, p, o, want) expect_pairwise(ctx, x, y, p, o, want, __LINE__)

void test_api_pairwise_errors(void)
{
    ww_ctx *ctx = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_AUTO, 2);
    /* x: 5 series of dim 2, lengths 3, 1, 4, 2, 3; y: 4 series of length 3 (no offsets) */
    enum { XS = 13, YS = 12, D = 2 };
    double xv[XS * D], yv[YS * D], xt[XS], yt[YS];
    float xf[XS * D];
    for (int i = 0; i < XS * D; i++)
        xf[i] = (float)(xv[i] = 0.3 * (i % 7) - 0.5);
    for (int i = 0; i < YS * D; i++)
        yv[i] = 0.2 * (i % 5);
    for (int i = 0; i < XS; i++)
        xt[i] = i;
    for (int i = 0; i < YS; i++)
        yt[i] = i % 3;
    size_t xo[6] = {0, 3, 4, 8, 10, 13};
    const ww_dataset x = ww_dataset_f64(xv, xt, xo, 5, 0, D), y = ww_dataset_f64(yv, yt, NULL, 4, 3, D);
    const ww_twed_params p = {0.25, 0.5, 2};
    EXPECT_PAIRWISE(ctx, &x, NULL, &p, NULL, WW_OK);
    EXPECT_PAIRWISE(ctx, &x, &y, &p, NULL, WW_OK);
    EXPECT_PAIRWISE(ctx, &y, &x, NULL, NULL, WW_OK);
    CHECK_STATUS(ww_dataset_check(&x), WW_OK);
    CHECK_STATUS(ww_dataset_check(&y), WW_OK);

    /* NULL pointers */
    double out[64];
    CHECK_STATUS(ww_twed_pairwise(NULL, &x, NULL, &p, out, NULL), WW_ERR_NULL_POINTER);
    CHECK_STATUS(ww_twed_pairwise(ctx, &x, NULL, &p, NULL, NULL), WW_ERR_NULL_POINTER);
    EXPECT_PAIRWISE(ctx, NULL, NULL, &p, NULL, WW_ERR_NULL_POINTER);
    EXPECT_PAIRWISE(ctx, NULL, &y, &p, NULL, WW_ERR_NULL_POINTER);
    CHECK_STATUS(ww_dataset_check(NULL), WW_ERR_NULL_POINTER);
    ww_dataset z = x;
    z.values = NULL;
    EXPECT_PAIRWISE(ctx, &z, NULL, &p, NULL, WW_ERR_NULL_POINTER);
    EXPECT_PAIRWISE(ctx, &x, &z, &p, NULL, WW_ERR_NULL_POINTER);
    CHECK_STATUS(ww_dataset_check(&z), WW_ERR_NULL_POINTER);

    /* counts, lengths, dims */
    z = x;
    z.count = 0;
    EXPECT_PAIRWISE(ctx, &z, NULL, &p, NULL, WW_ERR_EMPTY);
    EXPECT_PAIRWISE(ctx, &y, &z, &p, NULL, WW_ERR_EMPTY);
    CHECK_STATUS(ww_dataset_check(&z), WW_ERR_EMPTY);
    z = y;
    z.length = 0;
    EXPECT_PAIRWISE(ctx, &z, NULL, &p, NULL, WW_ERR_EMPTY);
    EXPECT_PAIRWISE(ctx, &x, &z, &p, NULL, WW_ERR_EMPTY);
    z = x;
    z.dim = 0;
    EXPECT_PAIRWISE(ctx, &z, NULL, &p, NULL, WW_ERR_SHAPE);
    EXPECT_PAIRWISE(ctx, &y, &z, &p, NULL, WW_ERR_SHAPE);
    CHECK_STATUS(ww_dataset_check(&z), WW_ERR_SHAPE);
    z = ww_dataset_f64(yv, NULL, NULL, 4, 2, 3); /* dim 3 vs x's 2 */
    EXPECT_PAIRWISE(ctx, &x, &z, &p, NULL, WW_ERR_SHAPE);
    EXPECT_PAIRWISE(ctx, &z, &x, &p, NULL, WW_ERR_SHAPE);

    /* offsets */
    size_t bad_start[6] = {1, 3, 4, 8, 10, 13};
    size_t decreasing[6] = {0, 3, 4, 2, 10, 13};
    size_t empty_inside[6] = {0, 3, 4, 4, 10, 13};
    size_t empty_first[6] = {0, 0, 4, 8, 10, 13};
    size_t empty_last[6] = {0, 3, 4, 8, 13, 13};
    const struct {
        size_t *offsets;
        ww_status want;
    } bad_offsets[] = {{bad_start, WW_ERR_SHAPE},
                       {decreasing, WW_ERR_SHAPE},
                       {empty_inside, WW_ERR_EMPTY},
                       {empty_first, WW_ERR_EMPTY},
                       {empty_last, WW_ERR_EMPTY}};
    for (int k = 0; k < 5; k++) {
        z = x;
        z.offsets = bad_offsets[k].offsets;
        EXPECT_PAIRWISE(ctx, &z, NULL, &p, NULL, bad_offsets[k].want);
        EXPECT_PAIRWISE(ctx, &y, &z, &p, NULL, bad_offsets[k].want);
        CHECK_STATUS(ww_dataset_check(&z), bad_offsets[k].want);
        ww_series s;
        CHECK_STATUS(ww_dataset_series(&z, 5, &s), WW_ERR_SHAPE); /* i >= count */
    }
    {
        ww_series s;
        CHECK_STATUS(ww_dataset_series(NULL, 0, &s), WW_ERR_NULL_POINTER);
        CHECK_STATUS(ww_dataset_series(&x, 0, NULL), WW_ERR_NULL_POINTER);
        CHECK_STATUS(ww_dataset_series(&x, 2, &s), WW_OK);
        CHECK(s.length == 4 && s.dim == D && s.values == xv + 4 * D && s.stamps == xt + 4);
        CHECK_STATUS(ww_dataset_series(&y, 3, &s), WW_OK);
        CHECK(s.length == 3 && s.values == yv + 9 * D && s.stamps == yt + 9);
    }

    /* dtypes */
    const ww_dataset xf32 = ww_dataset_f32(xf, NULL, xo, 5, 0, D);
    EXPECT_PAIRWISE(ctx, &xf32, NULL, &p, NULL, WW_OK);
    EXPECT_PAIRWISE(ctx, &xf32, &x, &p, NULL, WW_ERR_DTYPE);
    EXPECT_PAIRWISE(ctx, &y, &xf32, &p, NULL, WW_ERR_DTYPE);
    z = x;
    z.dtype = (ww_dtype)5;
    EXPECT_PAIRWISE(ctx, &z, NULL, &p, NULL, WW_ERR_DTYPE);
    EXPECT_PAIRWISE(ctx, &y, &z, &p, NULL, WW_ERR_DTYPE);
    CHECK_STATUS(ww_dataset_check(&z), WW_ERR_DTYPE);

    /* memory kinds */
    z = x;
    z.memory = WW_DEVICE;
    EXPECT_PAIRWISE(ctx, &z, NULL, &p, NULL, WW_ERR_MEMORY_KIND);
    EXPECT_PAIRWISE(ctx, &y, &z, &p, NULL, WW_ERR_MEMORY_KIND);
    EXPECT_PAIRWISE(ctx, &z, &y, &p, NULL, WW_ERR_MEMORY_KIND);
    CHECK_STATUS(ww_dataset_check(&z), WW_ERR_MEMORY_KIND);
    z.memory = (ww_memory)3;
    EXPECT_PAIRWISE(ctx, &z, NULL, &p, NULL, WW_ERR_MEMORY_KIND);
    CHECK_STATUS(ww_dataset_check(&z), WW_ERR_MEMORY_KIND);

    /* values and stamps: in the last series of x, the first of y */
    {
        const double bad[] = {NAN, INFINITY, -INFINITY};
        for (int k = 0; k < 3; k++) {
            double xv2[XS * D], yv2[YS * D], xt2[XS];
            float xf2[XS * D];
            memcpy(xv2, xv, sizeof xv2);
            memcpy(yv2, yv, sizeof yv2);
            memcpy(xt2, xt, sizeof xt2);
            memcpy(xf2, xf, sizeof xf2);
            xv2[XS * D - 1] = bad[k];
            yv2[0] = bad[k];
            xf2[7] = (float)bad[k];
            xt2[11] = bad[k];
            ww_dataset bx = ww_dataset_f64(xv2, xt, xo, 5, 0, D), by = ww_dataset_f64(yv2, NULL, NULL, 4, 3, D);
            ww_dataset bf = ww_dataset_f32(xf2, NULL, xo, 5, 0, D), bt = ww_dataset_f64(xv, xt2, xo, 5, 0, D);
            EXPECT_PAIRWISE(ctx, &bx, NULL, &p, NULL, WW_ERR_NONFINITE);
            EXPECT_PAIRWISE(ctx, &y, &bx, &p, NULL, WW_ERR_NONFINITE);
            EXPECT_PAIRWISE(ctx, &x, &by, &p, NULL, WW_ERR_NONFINITE);
            EXPECT_PAIRWISE(ctx, &by, &x, &p, NULL, WW_ERR_NONFINITE);
            EXPECT_PAIRWISE(ctx, &bf, NULL, &p, NULL, WW_ERR_NONFINITE);
            EXPECT_PAIRWISE(ctx, &bt, NULL, &p, NULL, WW_ERR_STAMPS);
            EXPECT_PAIRWISE(ctx, &y, &bt, &p, NULL, WW_ERR_STAMPS);
            CHECK_STATUS(ww_dataset_check(&bx), WW_ERR_NONFINITE);
            CHECK_STATUS(ww_dataset_check(&bt), WW_ERR_STAMPS);
            /* a block that does not include the bad series is still refused: all data is checked */
            ww_pairwise_options o = ww_pairwise_options_default();
            o.row_end = 2;
            o.col_end = 2;
            EXPECT_PAIRWISE(ctx, &bx, NULL, &p, &o, WW_ERR_NONFINITE);
        }
        /* decreasing stamps inside one series; the step between two series does not count */
        double xt2[XS];
        memcpy(xt2, xt, sizeof xt2);
        xt2[6] = 4.5; /* series 2 is samples 4..7: 4, 5, 4.5, 7 */
        ww_dataset bt = ww_dataset_f64(xv, xt2, xo, 5, 0, D);
        EXPECT_PAIRWISE(ctx, &bt, NULL, &p, NULL, WW_ERR_STAMPS);
        memcpy(xt2, xt, sizeof xt2);
        xt2[4] = -100; /* series 2 starts below where series 1 ended: fine */
        bt.stamps = xt2;
        EXPECT_PAIRWISE(ctx, &bt, NULL, &p, NULL, WW_OK);
        xt2[7] = 1e308; /* beyond half the range (see test_api_twed_errors) */
        EXPECT_PAIRWISE(ctx, &bt, NULL, &p, NULL, WW_ERR_STAMPS);
        CHECK_STATUS(ww_dataset_check(&bt), WW_ERR_STAMPS);
        /* y's stamps are 0,1,2 per series: equal across series boundaries */
        EXPECT_PAIRWISE(ctx, &y, NULL, &p, NULL, WW_OK);
    }

    /* parameters */
    const ww_twed_params bad_params[] = {{-1, 1, 2}, {1, -1, 2}, {1, 1, 0}, {NAN, 1, 2}, {1, INFINITY, 2}};
    for (int k = 0; k < 5; k++) {
        EXPECT_PAIRWISE(ctx, &x, NULL, &bad_params[k], NULL, WW_ERR_PARAM);
        EXPECT_PAIRWISE(ctx, &x, &y, &bad_params[k], NULL, WW_ERR_PARAM);
    }

    /* blocks: x has 5 rows; the self matrix has 5 columns, against y 4 */
    const struct {
        size_t rb, re, cb, ce, stride;
        int against_y;
        ww_status want;
    } blocks[] = {
        {0, 6, 0, 0, 0, 0, WW_ERR_SHAPE},  /* rows past the end */
        {0, 0, 0, 6, 0, 0, WW_ERR_SHAPE},  /* columns past the end */
        {0, 0, 0, 5, 0, 1, WW_ERR_SHAPE},  /* y has only 4 */
        {3, 3, 0, 0, 0, 0, WW_ERR_SHAPE},  /* empty row range */
        {4, 2, 0, 0, 0, 0, WW_ERR_SHAPE},  /* reversed row range */
        {0, 0, 2, 2, 0, 0, WW_ERR_SHAPE},  /* empty column range */
        {0, 0, 3, 1, 0, 1, WW_ERR_SHAPE},  /* reversed column range */
        {5, 0, 0, 0, 0, 0, WW_ERR_SHAPE},  /* begin == count with end 0 ("to the end") */
        {0, 0, 4, 0, 0, 1, WW_ERR_SHAPE},  /* same for y's columns */
        {0, 0, 0, 0, 4, 0, WW_ERR_SHAPE},  /* stride < width */
        {1, 3, 1, 4, 2, 0, WW_ERR_SHAPE},  /* stride < width of the block */
        {0, 0, 0, 0, 3, 1, WW_ERR_SHAPE},  /* stride < y's width */
        {1, 3, 1, 4, 3, 0, WW_OK},         /* stride == width */
        {4, 0, 3, 0, 0, 1, WW_OK},         /* the last element */
        {0, 1, 0, 1, 0, 0, WW_OK},         /* the first element */
    };
    for (size_t k = 0; k < sizeof blocks / sizeof blocks[0]; k++) {
        ww_pairwise_options o = ww_pairwise_options_default();
        o.row_begin = blocks[k].rb;
        o.row_end = blocks[k].re;
        o.col_begin = blocks[k].cb;
        o.col_end = blocks[k].ce;
        o.out_stride = blocks[k].stride;
        EXPECT_PAIRWISE(ctx, &x, blocks[k].against_y ? &y : NULL, &p, &o, blocks[k].want);
        o.out_dtype = WW_F32;
        EXPECT_PAIRWISE(ctx, &x, blocks[k].against_y ? &y : NULL, &p, &o, blocks[k].want);
    }
    {
        ww_pairwise_options o = ww_pairwise_options_default();
        CHECK(o.row_begin == 0 && o.row_end == 0 && o.col_begin == 0 && o.col_end == 0 && o.out_stride == 0 &&
              o.out_dtype == WW_F64 && o.progress == NULL && o.progress_user == NULL);
        o.out_dtype = (ww_dtype)2;
        EXPECT_PAIRWISE(ctx, &x, NULL, &p, &o, WW_ERR_DTYPE);
        o.out_dtype = (ww_dtype)-1;
        EXPECT_PAIRWISE(ctx, &x, &y, &p, &o, WW_ERR_DTYPE);
    }
    ww_ctx_destroy(ctx);
}

/* ------------------------------------------------------------------ progress and cancelling */

typedef struct progress_log {
    int calls, cancel_at; /* cancel on call number cancel_at (1-based); 0 = never */
    int cancel_at_end;    /* cancel when done == total */
    int monotonic;        /* done never went down, total never changed */
    uint64_t last_done, total;
} progress_log;

static int progress_cb(uint64_t done, uint64_t total, void *user)
{
    progress_log *l = (progress_log *)user;
    l->calls++;
    if (l->calls > 1 && (done < l->last_done || total != l->total))
        l->monotonic = 0;
    if (done > total)
        l->monotonic = 0;
    l->last_done = done;
    l->total = total;
    if (l->cancel_at_end && done == total)
        return 1;
    return l->cancel_at != 0 && l->calls >= l->cancel_at;
}

void test_api_progress_and_cancel(void)
{
    ww_rng r = {777};
    test_set x, q;
    make_set(&r, &x, 40, 1, 1, 16, 1); /* ragged: several column groups */
    make_set(&r, &q, 300, 1, 1, 4, 0); /* more queries than one kNN chunk (256) */
    const ww_twed_params p = {0.1, 1.0, 2};
    for (int threads = 1; threads <= 2; threads++) {
        ww_ctx *ctx = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_AUTO, threads);
        double *m = (double *)malloc(40 * 40 * sizeof(double));
        /* the self matrix: each unordered pair once, so total = sum_{i<j} len_i len_j */
        uint64_t want_total = 0;
        for (size_t i = 0; i < 40; i++)
            for (size_t j = i + 1; j < 40; j++)
                want_total += (uint64_t)(x.offsets[i + 1] - x.offsets[i]) * (x.offsets[j + 1] - x.offsets[j]);
        progress_log log = {0, 0, 0, 1, 0, 0};
        ww_pairwise_options o = ww_pairwise_options_default();
        o.progress = progress_cb;
        o.progress_user = &log;
        CHECK_STATUS(ww_twed_pairwise(ctx, &x.d, NULL, &p, m, &o), WW_OK);
        CHECK(log.calls >= 1 && log.monotonic && log.total == want_total && log.last_done == want_total);

        /* cancel at the first report, or at the very end */
        progress_log stop_first = {0, 1, 0, 1, 0, 0};
        o.progress_user = &stop_first;
        CHECK_STATUS(ww_twed_pairwise(ctx, &x.d, NULL, &p, m, &o), WW_ERR_CANCELLED);
        CHECK(stop_first.calls == 1);
        progress_log stop_end = {0, 0, 1, 1, 0, 0};
        o.progress_user = &stop_end;
        CHECK_STATUS(ww_twed_pairwise(ctx, &x.d, &x.d, &p, m, &o), WW_ERR_CANCELLED);
        /* the context is fine afterwards */
        CHECK_STATUS(ww_twed_pairwise(ctx, &x.d, NULL, &p, m, NULL), WW_OK);

        /* kNN: one progress over the whole call (all chunks) */
        size_t *idx = (size_t *)malloc(300 * 3 * sizeof(size_t));
        double *dist = (double *)malloc(300 * 3 * sizeof(double));
        progress_log klog = {0, 0, 0, 1, 0, 0};
        o = ww_pairwise_options_default();
        o.progress = progress_cb;
        o.progress_user = &klog;
        CHECK_STATUS(ww_twed_knn(ctx, &q.d, &x.d, &p, 3, idx, dist, &o), WW_OK);
        uint64_t k_total = (uint64_t)q.offsets[300] * x.offsets[40];
        CHECK(klog.calls >= 2 && klog.monotonic && klog.total == k_total && klog.last_done == k_total);
        progress_log kstop = {0, 1, 0, 1, 0, 0};
        o.progress_user = &kstop;
        CHECK_STATUS(ww_twed_knn(ctx, &q.d, &x.d, &p, 3, idx, dist, &o), WW_ERR_CANCELLED);
        CHECK(kstop.calls == 1);
        progress_log kstop_end = {0, 0, 1, 1, 0, 0}; /* cancels at the end of the last chunk */
        o.progress_user = &kstop_end;
        CHECK_STATUS(ww_twed_knn(ctx, &q.d, &x.d, &p, 3, idx, dist, &o), WW_ERR_CANCELLED);
        /* a progress callback is optional */
        o.progress = NULL;
        CHECK_STATUS(ww_twed_knn(ctx, &q.d, &x.d, &p, 3, idx, dist, &o), WW_OK);
        free(idx), free(dist), free(m);
        ww_ctx_destroy(ctx);
    }
    free_set(&x), free_set(&q);
}

/* ------------------------------------------------------------------ kNN: bad inputs */

void test_api_knn_errors(void)
{
    ww_rng r = {4242};
    test_set x, q;
    make_set(&r, &x, 10, 2, 2, 9, 1);
    make_set(&r, &q, 270, 2, 1, 4, 1);
    ww_ctx *ctx = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_AUTO, 2);
    const ww_twed_params p = {0.5, 0.5, 1};
    enum { CAP = 270 * 11 };
    size_t *idx = (size_t *)malloc(CAP * sizeof(size_t));
    double *dist = (double *)malloc(CAP * sizeof(double));
#define KNN_EXPECT(qq, xx, pp, k, want)                                                                  \
    do {                                                                                                 \
        for (size_t i_ = 0; i_ < CAP; i_++)                                                              \
            idx[i_] = SIZE_MAX;                                                                          \
        fill_nan(dist, CAP);                                                                             \
        CHECK_STATUS(ww_twed_knn(ctx, qq, xx, pp, k, idx, dist, NULL), want);                            \
        if ((want) != WW_OK) {                                                                           \
            int untouched_ = all_nan(dist, CAP);                                                         \
            for (size_t i_ = 0; i_ < CAP; i_++)                                                          \
                untouched_ &= idx[i_] == SIZE_MAX;                                                       \
            CHECK(untouched_);                                                                           \
        }                                                                                                \
    } while (0)

    KNN_EXPECT(&q.d, &x.d, &p, 1, WW_OK);
    KNN_EXPECT(&q.d, &x.d, &p, 10, WW_OK);
    KNN_EXPECT(&q.d, &x.d, NULL, 4, WW_OK);
    KNN_EXPECT(&q.d, &x.d, &p, 0, WW_ERR_SHAPE);
    KNN_EXPECT(&q.d, &x.d, &p, 11, WW_ERR_SHAPE);
    KNN_EXPECT(&q.d, &x.d, &p, SIZE_MAX, WW_ERR_SHAPE);
    CHECK_STATUS(ww_twed_knn(NULL, &q.d, &x.d, &p, 1, idx, dist, NULL), WW_ERR_NULL_POINTER);
    KNN_EXPECT(NULL, &x.d, &p, 1, WW_ERR_NULL_POINTER);
    KNN_EXPECT(&q.d, NULL, &p, 1, WW_ERR_NULL_POINTER);
    CHECK_STATUS(ww_twed_knn(ctx, &q.d, &x.d, &p, 1, NULL, dist, NULL), WW_ERR_NULL_POINTER);
    CHECK_STATUS(ww_twed_knn(ctx, &q.d, &x.d, &p, 1, idx, NULL, NULL), WW_ERR_NULL_POINTER);
    ww_dataset z = x.d;
    z.count = 0;
    KNN_EXPECT(&q.d, &z, &p, 1, WW_ERR_EMPTY);
    KNN_EXPECT(&z, &x.d, &p, 1, WW_ERR_EMPTY);
    z = x.d;
    z.dim = 3;
    KNN_EXPECT(&q.d, &z, &p, 1, WW_ERR_SHAPE);
    z = x.d;
    z.dtype = WW_F32;
    KNN_EXPECT(&q.d, &z, &p, 1, WW_ERR_DTYPE);
    z.dtype = (ww_dtype)9;
    KNN_EXPECT(&q.d, &z, &p, 1, WW_ERR_DTYPE);
    z = x.d;
    z.memory = WW_DEVICE;
    KNN_EXPECT(&q.d, &z, &p, 1, WW_ERR_MEMORY_KIND);
    KNN_EXPECT(&z, &x.d, &p, 1, WW_ERR_MEMORY_KIND);
    const ww_twed_params bad = {0.5, -0.5, 1};
    KNN_EXPECT(&q.d, &x.d, &bad, 1, WW_ERR_PARAM);
    /* a bad query in the second chunk of 256: nothing of the first chunk may be written */
    double keep = q.v[q.offsets[265] * 2];
    q.v[q.offsets[265] * 2] = NAN;
    KNN_EXPECT(&q.d, &x.d, &p, 2, WW_ERR_NONFINITE);
    q.v[q.offsets[265] * 2] = keep;
    keep = q.t[q.offsets[269]];
    q.t[q.offsets[269]] = INFINITY;
    KNN_EXPECT(&q.d, &x.d, &p, 2, WW_ERR_STAMPS);
    q.t[q.offsets[269]] = keep;
    keep = x.v[x.offsets[10] * 2 - 1];
    x.v[x.offsets[10] * 2 - 1] = -INFINITY;
    KNN_EXPECT(&q.d, &x.d, &p, 2, WW_ERR_NONFINITE);
    x.v[x.offsets[10] * 2 - 1] = keep;
    KNN_EXPECT(&q.d, &x.d, &p, 2, WW_OK);
#undef KNN_EXPECT
    free(idx), free(dist);
    ww_ctx_destroy(ctx);
    free_set(&x), free_set(&q);
}

/* ------------------------------------------------------------------ matrices: values */

/* Every block (tiles of several sizes, random blocks) with strides wider than the block and both
 * output dtypes equals the full matrix; each element of the block is written, nothing outside. */
void test_api_pairwise_blocks(void)
{
    ww_rng r = {2024};
    const double sentinel = -7.25;
    for (int config = 0; config < 4; config++) {
        size_t dim = config == 0 ? 1 : (size_t)(1 + ww_rng_below(&r, 8));
        test_set x, y;
        make_set(&r, &x, 37, dim, config == 3 ? 12 : 1, config == 3 ? 12 : 16, config != 1);
        make_set(&r, &y, 21, dim, 1, 16, config != 1);
        ww_twed_params p = {0.01 + ww_rng_uniform(&r), ww_rng_uniform(&r) * 2, 1 + config % 3};
        ww_ctx *ctx = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_AUTO, 2);
        for (int against_y = 0; against_y < 2; against_y++) {
            const ww_dataset *yy = against_y ? &y.d : NULL;
            const size_t rows = 37, cols = against_y ? 21 : 37;
            double *full = (double *)malloc(rows * cols * sizeof(double));
            fill_nan(full, rows * cols);
            CHECK_STATUS(ww_twed_pairwise(ctx, &x.d, yy, &p, full, NULL), WW_OK);
            /* the full matrix itself: ww_twed, zero diagonal, mirror */
            for (size_t i = 0; i < rows; i++)
                for (size_t j = 0; j < cols; j++) {
                    ww_series a, b;
                    ww_dataset_series(&x.d, i, &a);
                    ww_dataset_series(against_y ? &y.d : &x.d, j, &b);
                    double d = -1;
                    CHECK_STATUS(ww_twed(ctx, &a, &b, &p, &d), WW_OK);
                    if (!against_y && i == j)
                        CHECK(full[i * cols + j] == 0.0);
                    else
                        CHECK_CLOSE(full[i * cols + j], d, 1e-12);
                    if (!against_y)
                        CHECK(full[i * cols + j] == full[j * cols + i]);
                }
            /* tilings and random blocks */
            const size_t tile_h[] = {1, 5, 8, 16, 37}, tile_w[] = {1, 7, 16, 17, 37};
            for (int trial = 0; trial < 16; trial++) {
                size_t rb, re, cb, ce;
                if (trial < 5) {
                    size_t th = tile_h[trial], tw = tile_w[(trial + against_y) % 5];
                    /* the tile of the tiling that contains a random element */
                    size_t i = ww_rng_below(&r, rows), j = ww_rng_below(&r, cols);
                    rb = i / th * th, cb = j / tw * tw;
                    re = rb + th < rows ? rb + th : rows;
                    ce = cb + tw < cols ? cb + tw : cols;
                } else {
                    rb = ww_rng_below(&r, rows), cb = ww_rng_below(&r, cols);
                    re = rb + 1 + ww_rng_below(&r, rows - rb), ce = cb + 1 + ww_rng_below(&r, cols - cb);
                }
                const size_t h = re - rb, w = ce - cb, stride = w + ww_rng_below(&r, 4);
                ww_pairwise_options o = ww_pairwise_options_default();
                o.row_begin = rb, o.col_begin = cb, o.out_stride = stride;
                /* end == 0 means to the end */
                o.row_end = re == rows && trial % 2 ? 0 : re;
                o.col_end = ce == cols && trial % 3 ? 0 : ce;
                o.out_dtype = trial % 2 ? WW_F32 : WW_F64;
                const size_t n = h * stride + 8; /* 8 spare elements past the end */
                double *bd = (double *)malloc(n * sizeof(double));
                float *bf = (float *)malloc(n * sizeof(float));
                for (size_t k = 0; k < n; k++) {
                    bd[k] = sentinel;
                    bf[k] = (float)sentinel;
                }
                void *out = o.out_dtype == WW_F32 ? (void *)bf : (void *)bd;
                CHECK_STATUS(ww_twed_pairwise(ctx, &x.d, yy, &p, out, &o), WW_OK);
                int inside_ok = 1, outside_ok = 1;
                for (size_t k = 0; k < n; k++) {
                    size_t bi = k / stride, bj = k % stride;
                    double got = o.out_dtype == WW_F32 ? (double)bf[k] : bd[k];
                    if (bi < h && bj < w) {
                        double want = full[(rb + bi) * cols + cb + bj];
                        double tol = o.out_dtype == WW_F32 ? 1e-6 : 1e-12;
                        if (!(fabs(got - want) <= tol * fmax(1.0, fabs(want))))
                            inside_ok = 0;
                    } else if (got != sentinel) {
                        outside_ok = 0;
                    }
                }
                CHECK(inside_ok);
                CHECK(outside_ok);
                free(bd), free(bf);
            }
            /* a tiling of the whole matrix into one wide buffer: every entry written exactly once in
             * the sense that the union of tiles reproduces the matrix and no tile spills over */
            {
                const size_t th = 6, tw = 9, stride = cols + 3;
                double *big = (double *)malloc(rows * stride * sizeof(double));
                for (size_t k = 0; k < rows * stride; k++)
                    big[k] = sentinel;
                for (size_t rb = 0; rb < rows; rb += th)
                    for (size_t cb = 0; cb < cols; cb += tw) {
                        ww_pairwise_options o = ww_pairwise_options_default();
                        o.row_begin = rb, o.row_end = rb + th < rows ? rb + th : rows;
                        o.col_begin = cb, o.col_end = cb + tw < cols ? cb + tw : cols;
                        o.out_stride = stride;
                        /* the tile's slot must still hold the sentinel when its turn comes */
                        int fresh = 1;
                        for (size_t i = o.row_begin; i < o.row_end; i++)
                            for (size_t j = o.col_begin; j < o.col_end; j++)
                                fresh &= big[i * stride + j] == sentinel;
                        CHECK(fresh);
                        CHECK_STATUS(ww_twed_pairwise(ctx, &x.d, yy, &p, big + rb * stride + cb, &o), WW_OK);
                    }
                int ok = 1;
                for (size_t i = 0; i < rows; i++)
                    for (size_t j = 0; j < stride; j++) {
                        double got = big[i * stride + j];
                        if (j >= cols)
                            ok &= got == sentinel;
                        else
                            ok &= fabs(got - full[i * cols + j]) <= 1e-12 * fmax(1.0, full[i * cols + j]);
                    }
                CHECK(ok);
                free(big);
            }
            free(full);
        }
        ww_ctx_destroy(ctx);
        free_set(&x), free_set(&y);
    }
}

/* The SIMD-across-pairs matrix engine against the pair engines on harder inputs: long and very
 * unequal lengths, dims 1 to 8, degrees 1 to 3, stamps with many repeats, F32 data and output;
 * and 1 vs 2 threads give identical bits. */
void test_api_pairwise_vs_pair_engines(void)
{
    ww_rng r = {31337};
    ww_ctx *ref = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_CPU_REFERENCE, 1), *band = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_CPU_BAND, 1);
    ww_ctx *one = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_AUTO, 1), *two = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_AUTO, 2);
    for (int trial = 0; trial < 6; trial++) {
        const size_t dim = trial == 0 ? 1 : 1 + ww_rng_below(&r, 8);
        const int degree = 1 + trial % 3;
        /* 3 rows x 5 columns; lengths from 1 to 2,000 (the longest once, against short rows) */
        const size_t nx = 3, ny = 5;
        const size_t xl[3] = {1 + (size_t)trial, 256 + (size_t)trial % 2, 17};
        const size_t yl[5] = {1, 2, 255, 130 + 40 * (size_t)trial, trial == 0 ? 2000 : 64};
        size_t xo[4] = {0}, yo[6] = {0};
        for (size_t i = 0; i < nx; i++)
            xo[i + 1] = xo[i] + xl[i];
        for (size_t j = 0; j < ny; j++)
            yo[j + 1] = yo[j] + yl[j];
        double *xv = (double *)malloc(xo[nx] * dim * sizeof(double)), *xt = (double *)malloc(xo[nx] * sizeof(double));
        double *yv = (double *)malloc(yo[ny] * dim * sizeof(double)), *yt = (double *)malloc(yo[ny] * sizeof(double));
        float *xf = (float *)malloc(xo[nx] * dim * sizeof(float)), *yf = (float *)malloc(yo[ny] * dim * sizeof(float));
        random_values(&r, xo[nx] * dim, xv);
        random_values(&r, yo[ny] * dim, yv);
        for (size_t i = 0; i < xo[nx] * dim; i++)
            xf[i] = (float)xv[i], xv[i] = xf[i]; /* float-exact data: F32 and F64 must agree exactly */
        for (size_t i = 0; i < yo[ny] * dim; i++)
            yf[i] = (float)yv[i], yv[i] = yf[i];
        for (size_t i = 0; i < nx; i++)
            random_stamps(&r, xo[i + 1] - xo[i], xt + xo[i]);
        for (size_t j = 0; j < ny; j++) /* coarse stamps: many repeats */
            for (size_t s = yo[j]; s < yo[j + 1]; s++)
                yt[s] = (double)((s - yo[j]) / 3);
        const int stamps = trial % 2;
        ww_dataset x = ww_dataset_f64(xv, stamps ? xt : NULL, xo, nx, 0, dim);
        ww_dataset y = ww_dataset_f64(yv, stamps ? yt : NULL, yo, ny, 0, dim);
        ww_dataset x32 = ww_dataset_f32(xf, NULL, xo, nx, 0, dim), y32 = ww_dataset_f32(yf, NULL, yo, ny, 0, dim);
        ww_twed_params p = {ww_rng_uniform(&r), ww_rng_uniform(&r) * 2, degree};
        double m1[15], m2[15], m64[15];
        float mf[15];
        CHECK_STATUS(ww_twed_pairwise(one, &x, &y, &p, m1, NULL), WW_OK);
        CHECK_STATUS(ww_twed_pairwise(two, &x, &y, &p, m2, NULL), WW_OK);
        CHECK(memcmp(m1, m2, sizeof m1) == 0);
        for (size_t i = 0; i < nx; i++)
            for (size_t j = 0; j < ny; j++) {
                ww_series a, b;
                ww_dataset_series(&x, i, &a);
                ww_dataset_series(&y, j, &b);
                double d_ref = -1, d_band = -2, d_strip = -3;
                CHECK_STATUS(ww_twed(band, &a, &b, &p, &d_band), WW_OK);
                CHECK_STATUS(ww_twed(one, &a, &b, &p, &d_strip), WW_OK);
                /* the reference matrix only while it stays small */
                if ((a.length + 1) * (b.length + 1) <= 200000) {
                    CHECK_STATUS(ww_twed(ref, &a, &b, &p, &d_ref), WW_OK);
                    CHECK_CLOSE(d_band, d_ref, 1e-12);
                }
                CHECK_CLOSE(d_strip, d_band, 1e-12);
                CHECK_CLOSE(m1[i * ny + j], d_band, 1e-12);
            }
        /* float data (stamps default) against the same values in double; F32 output */
        x.stamps = y.stamps = NULL;
        ww_pairwise_options o = ww_pairwise_options_default();
        CHECK_STATUS(ww_twed_pairwise(two, &x, &y, &p, m64, NULL), WW_OK);
        CHECK_STATUS(ww_twed_pairwise(two, &x32, &y32, &p, m1, NULL), WW_OK);
        o.out_dtype = WW_F32;
        CHECK_STATUS(ww_twed_pairwise(two, &x32, &y32, &p, mf, &o), WW_OK);
        for (size_t k = 0; k < 15; k++) {
            CHECK(m1[k] == m64[k]); /* the CPU engines compute in double */
            CHECK(mf[k] == (float)m64[k]);
        }
        free(xv), free(xt), free(yv), free(yt), free(xf), free(yf);
    }
    ww_ctx_destroy(ref), ww_ctx_destroy(band), ww_ctx_destroy(one), ww_ctx_destroy(two);
}

/* Ragged data whose lengths are shuffled: many distinct lengths, equal ones far apart, lengths 1
 * and a few long series. The matrix engine groups the block's columns by length, so a lane group
 * holds columns from all over the block. Every entry of the full matrix, of random blocks and of a
 * tiling must equal the single-pair ww_twed bit for bit (the same arithmetic per cell), be written
 * (the outputs are poisoned with NaN) and be computed once: with one thread, the last progress
 * report before the final one is the sum of the computed entries' cells, which must be the total. */
typedef struct once_log {
    int calls;
    uint64_t before_last, last, total;
} once_log;

static int once_cb(uint64_t done, uint64_t total, void *user)
{
    once_log *l = (once_log *)user;
    l->calls++;
    l->before_last = l->last;
    l->last = done;
    l->total = total;
    return 0;
}

/* Cells of the entries of a block that are computed (each unordered pair of the self matrix once). */
static uint64_t block_cells(const size_t *row_len, const size_t *col_len, int self, const ww_pairwise_options *o)
{
    uint64_t cells = 0;
    for (size_t i = o->row_begin; i < o->row_end; i++)
        for (size_t j = o->col_begin; j < o->col_end; j++) {
            int mirror_in_block = j >= o->row_begin && j < o->row_end && i >= o->col_begin && i < o->col_end;
            if (self && (i == j || (mirror_in_block && j < i)))
                continue;
            cells += (uint64_t)row_len[i] * col_len[j];
        }
    return cells;
}

static void shuffled_lengths(ww_rng *r, size_t count, size_t *lengths)
{
    for (size_t i = 0; i < count; i++)
        lengths[i] = 1 + (i * 13) % 29; /* 29 distinct lengths, each 2 or 3 times */
    for (size_t i = count - 1; i > 0; i--) {
        size_t k = ww_rng_below(r, i + 1), t = lengths[i];
        lengths[i] = lengths[k];
        lengths[k] = t;
    }
    lengths[3] = lengths[count - 4] = 70; /* two long ones far apart */
    lengths[count / 2] = 64;
}

void test_api_pairwise_ragged_grouping(void)
{
    ww_rng r = {0x5EED};
    enum { NX = 83, NY = 45 };
    const struct {
        size_t dim;
        int degree, stamps;
    } configs[] = {{1, 2, 1}, {3, 1, 0}, {5, 2, 1}, {2, 3, 1}};
    ww_ctx *one = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_AUTO, 1), *two = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_AUTO, 2);
    for (size_t c = 0; c < sizeof configs / sizeof configs[0]; c++) {
        size_t len_x[NX], len_y[NY];
        shuffled_lengths(&r, NX, len_x);
        shuffled_lengths(&r, NY, len_y);
        test_set x, y;
        make_set_lengths(&r, &x, NX, configs[c].dim, len_x, configs[c].stamps);
        make_set_lengths(&r, &y, NY, configs[c].dim, len_y, configs[c].stamps);
        const ww_twed_params p = {0.05 + ww_rng_uniform(&r), ww_rng_uniform(&r), configs[c].degree};
        for (int against_y = 0; against_y < 2; against_y++) {
            const ww_dataset *yy = against_y ? &y.d : NULL, *cols_set = against_y ? &y.d : &x.d;
            const size_t rows = NX, cols = against_y ? NY : NX, *col_len = against_y ? len_y : len_x;
            double *want = (double *)malloc(rows * cols * sizeof(double));
            for (size_t i = 0; i < rows; i++)
                for (size_t j = 0; j < cols; j++) {
                    ww_series a, b;
                    ww_dataset_series(&x.d, i, &a);
                    ww_dataset_series(cols_set, j, &b);
                    want[i * cols + j] = NAN;
                    if (!against_y && i == j)
                        want[i * cols + j] = 0.0;
                    else
                        CHECK_STATUS(ww_twed(one, &a, &b, &p, &want[i * cols + j]), WW_OK);
                }
            for (int trial = 0; trial < 10; trial++) {
                ww_pairwise_options o = ww_pairwise_options_default();
                if (trial == 0) { /* the whole matrix */
                    o.row_end = rows, o.col_end = cols;
                } else if (trial == 1 && !against_y) { /* rows and columns overlap in part */
                    o.row_begin = 10, o.row_end = 60, o.col_begin = 30, o.col_end = NX;
                } else {
                    o.row_begin = ww_rng_below(&r, rows), o.col_begin = ww_rng_below(&r, cols);
                    o.row_end = o.row_begin + 1 + ww_rng_below(&r, rows - o.row_begin);
                    o.col_end = o.col_begin + 1 + ww_rng_below(&r, cols - o.col_begin);
                }
                const size_t h = o.row_end - o.row_begin, w = o.col_end - o.col_begin;
                o.out_stride = w + (size_t)trial % 3;
                o.out_dtype = trial % 2 ? WW_F32 : WW_F64;
                const size_t n = h * o.out_stride;
                double *bd = (double *)malloc(n * sizeof(double));
                float *bf = (float *)malloc(n * sizeof(float));
                for (int threads = 1; threads <= 2; threads++) {
                    for (size_t k = 0; k < n; k++) {
                        bd[k] = NAN;
                        bf[k] = NAN;
                    }
                    once_log log = {0, 0, 0, 0};
                    o.progress = threads == 1 ? once_cb : NULL;
                    o.progress_user = &log;
                    void *out = o.out_dtype == WW_F32 ? (void *)bf : (void *)bd;
                    CHECK_STATUS(ww_twed_pairwise(threads == 1 ? one : two, &x.d, yy, &p, out, &o), WW_OK);
                    int same = 1, padding_untouched = 1;
                    for (size_t k = 0; k < n; k++) {
                        const size_t bi = k / o.out_stride, bj = k % o.out_stride;
                        const double got = o.out_dtype == WW_F32 ? (double)bf[k] : bd[k];
                        if (bj >= w) {
                            padding_untouched &= isnan(got);
                            continue;
                        }
                        const double v = want[(o.row_begin + bi) * cols + o.col_begin + bj];
                        same &= got == (o.out_dtype == WW_F32 ? (double)(float)v : v);
                    }
                    CHECK(same);
                    CHECK(padding_untouched);
                    if (threads == 1) {
                        const uint64_t cells = block_cells(len_x, col_len, !against_y, &o);
                        CHECK(log.calls >= 2 && log.total == cells && log.before_last == cells &&
                              log.last == cells);
                    }
                }
                free(bd), free(bf);
            }
            /* a tiling of the whole matrix into one buffer: each tile finds its slots still poisoned */
            {
                const size_t th = 9, tw = 35, stride = cols + 2;
                double *big = (double *)malloc(rows * stride * sizeof(double));
                for (size_t k = 0; k < rows * stride; k++)
                    big[k] = NAN;
                int fresh = 1;
                for (size_t rb = 0; rb < rows; rb += th)
                    for (size_t cb = 0; cb < cols; cb += tw) {
                        ww_pairwise_options o = ww_pairwise_options_default();
                        o.row_begin = rb, o.row_end = rb + th < rows ? rb + th : rows;
                        o.col_begin = cb, o.col_end = cb + tw < cols ? cb + tw : cols;
                        o.out_stride = stride;
                        for (size_t i = o.row_begin; i < o.row_end; i++)
                            for (size_t j = o.col_begin; j < o.col_end; j++)
                                fresh &= isnan(big[i * stride + j]);
                        CHECK_STATUS(ww_twed_pairwise(two, &x.d, yy, &p, big + rb * stride + cb, &o), WW_OK);
                    }
                CHECK(fresh);
                int ok = 1;
                for (size_t i = 0; i < rows; i++)
                    for (size_t j = 0; j < stride; j++)
                        ok &= j >= cols ? isnan(big[i * stride + j]) : big[i * stride + j] == want[i * cols + j];
                CHECK(ok);
                free(big);
            }
            free(want);
        }
        free_set(&x), free_set(&y);
    }
    ww_ctx_destroy(one), ww_ctx_destroy(two);
}

/* 1 vs 2 vs 3 threads on a bigger ragged self matrix: identical bits. */
void test_api_threads_identical(void)
{
    ww_rng r = {99};
    test_set x;
    enum { N = 50 };
    make_set(&r, &x, N, 3, 1, 24, 1);
    const ww_twed_params p = {0.3, 0.7, 2};
    double *m[3];
    for (int t = 0; t < 3; t++) {
        ww_ctx *ctx = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_AUTO, t + 1);
        m[t] = (double *)malloc(N * N * sizeof(double));
        fill_nan(m[t], N * N);
        CHECK_STATUS(ww_twed_pairwise(ctx, &x.d, NULL, &p, m[t], NULL), WW_OK);
        ww_ctx_destroy(ctx);
    }
    CHECK(memcmp(m[0], m[1], N * N * sizeof(double)) == 0);
    CHECK(memcmp(m[0], m[2], N * N * sizeof(double)) == 0);
    for (int t = 0; t < 3; t++)
        free(m[t]);
    free_set(&x);
}

/* Linear memory in practice: a pair of length 1,000,000 against a short one, both ways round,
 * with every pair engine (the reference matrix is only (n+1) x 4 here). */
void test_api_long_thin_pair(void)
{
    ww_rng r = {5};
    const size_t n = 1000000, m = 3;
    double *v = (double *)malloc(n * sizeof(double)), *t = (double *)malloc(n * sizeof(double));
    random_values(&r, n, v);
    random_stamps(&r, n, t);
    double w[3] = {0.25, -0.5, 0.75}, tw[3] = {1, 1000, 400000};
    ww_series a = ww_series_f64(v, t, n, 1), b = ww_series_f64(w, tw, m, 1);
    const ww_twed_params p = {0.001, 1.0, 2};
    const ww_engine engines[] = {WW_ENGINE_CPU_REFERENCE, WW_ENGINE_CPU_BAND, WW_ENGINE_CPU_STRIP};
    double d[3][2];
    for (int e = 0; e < 3; e++) {
        ww_ctx *ctx = ww_test_ctx(WW_BACKEND_CPU, engines[e], 1);
        CHECK_STATUS(ww_twed(ctx, &a, &b, &p, &d[e][0]), WW_OK);
        CHECK_STATUS(ww_twed(ctx, &b, &a, &p, &d[e][1]), WW_OK);
        ww_ctx_destroy(ctx);
    }
    for (int e = 0; e < 3; e++) {
        CHECK_CLOSE(d[e][0], d[0][0], 1e-12);
        CHECK_CLOSE(d[e][1], d[0][0], 1e-12);
    }
    /* n - 3 deletions at least lambda each */
    CHECK(d[0][0] >= (double)(n - m) * p.lambda);
    free(v), free(t);
}

/* kNN against a brute-force sort of the matrix rows (ties by the smaller index), with duplicated
 * series in x to force ties, more queries than one chunk, ragged data, k from 1 to count. */
void test_api_knn_brute_force(void)
{
    ww_rng r = {8080};
    for (int config = 0; config < 2; config++) {
        const size_t dim = config ? 2 : 1, nx = 23, nq = 263;
        test_set x, q;
        /* series 4 and 11 are copies of series 17 (values and stamps) */
        size_t lengths[23];
        for (size_t i = 0; i < nx; i++)
            lengths[i] = 3 + ww_rng_below(&r, 13);
        lengths[4] = lengths[11] = lengths[17];
        make_set_lengths(&r, &x, nx, dim, lengths, config);
        make_set(&r, &q, nq, dim, 1, 10, config);
        const size_t copies[2] = {4, 11};
        for (int c = 0; c < 2; c++) {
            memcpy(x.v + x.offsets[copies[c]] * dim, x.v + x.offsets[17] * dim, lengths[17] * dim * sizeof(double));
            memcpy(x.t + x.offsets[copies[c]], x.t + x.offsets[17], lengths[17] * sizeof(double));
        }
        ww_twed_params p = {0.05, 0.5, 2};
        ww_ctx *ctx = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_AUTO, 2);
        double *rows = (double *)malloc(nq * nx * sizeof(double));
        CHECK_STATUS(ww_twed_pairwise(ctx, &q.d, &x.d, &p, rows, NULL), WW_OK);
        const size_t ks[] = {1, 3, nx};
        size_t *idx = (size_t *)malloc(nq * nx * sizeof(size_t));
        double *dist = (double *)malloc(nq * nx * sizeof(double));
        size_t *order = (size_t *)malloc(nx * sizeof(size_t));
        for (int kk = 0; kk < 3; kk++) {
            const size_t k = ks[kk];
            CHECK_STATUS(ww_twed_knn(ctx, &q.d, &x.d, &p, k, idx, dist, NULL), WW_OK);
            int ok = 1;
            for (size_t qi = 0; qi < nq; qi++) {
                const double *row = rows + qi * nx;
                /* stable insertion sort of the indices by distance */
                for (size_t j = 0; j < nx; j++) {
                    size_t pos = j;
                    while (pos > 0 && row[order[pos - 1]] > row[j]) {
                        order[pos] = order[pos - 1];
                        pos--;
                    }
                    order[pos] = j;
                }
                for (size_t s = 0; s < k; s++)
                    ok &= idx[qi * k + s] == order[s] && dist[qi * k + s] == row[order[s]];
            }
            CHECK(ok);
        }
        /* queries == x: each series finds itself at distance 0, or an identical earlier copy */
        CHECK_STATUS(ww_twed_knn(ctx, &x.d, &x.d, &p, 2, idx, dist, NULL), WW_OK);
        for (size_t i = 0; i < nx; i++) {
            CHECK(dist[i * 2] == 0.0);
            CHECK(idx[i * 2] <= i);
            CHECK(dist[i * 2 + 1] >= 0.0);
        }
        /* 1 and 2 threads agree exactly */
        ww_ctx *one = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_AUTO, 1);
        size_t *idx1 = (size_t *)malloc(nq * 3 * sizeof(size_t));
        double *dist1 = (double *)malloc(nq * 3 * sizeof(double));
        CHECK_STATUS(ww_twed_knn(one, &q.d, &x.d, &p, 3, idx1, dist1, NULL), WW_OK);
        CHECK_STATUS(ww_twed_knn(ctx, &q.d, &x.d, &p, 3, idx, dist, NULL), WW_OK);
        CHECK(memcmp(idx1, idx, nq * 3 * sizeof(size_t)) == 0);
        CHECK(memcmp(dist1, dist, nq * 3 * sizeof(double)) == 0);
        free(idx1), free(dist1);
        ww_ctx_destroy(one);
        free(rows), free(idx), free(dist), free(order);
        ww_ctx_destroy(ctx);
        free_set(&x), free_set(&q);
    }
}
