/* Prints one line per case, "name hash", where hash is a 64-bit FNV-1a of the exact bits of every
 * TWED result of the case (distances, matrices, kNN indices and distances). Built against any
 * version of the library that has ww_twed, ww_twed_pairwise and ww_twed_knn, so that the output of
 * an old commit and of a new one can be compared line by line: equal lines mean bit-identical
 * results. tests/twed_checksums_cpu.txt holds the CPU lines of the commit before the measure
 * refactor (test_twed_checksums compares them); scripts/gpu_run.sh compares the GPU lines of two
 * commits in one device call.
 *
 *   ww_twed_checksums cpu|cuda     (cuda: exit 0 with no output when no GPU is usable)
 */
#include "wavewarp.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct rng {
    unsigned long long s;
} rng;
static double uniform(rng *r)
{
    r->s ^= r->s >> 12;
    r->s ^= r->s << 25;
    r->s ^= r->s >> 27;
    return (double)((r->s * 2685821657736338717ULL) >> 11) * (1.0 / 9007199254740992.0);
}

static unsigned long long fnv(unsigned long long h, const void *p, size_t n)
{
    const unsigned char *b = (const unsigned char *)p;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 1099511628211ULL;
    }
    return h;
}
#define FNV0 14695981039346656037ULL

static void print_case(const char *name, unsigned long long h, ww_status st)
{
    if (st != WW_OK)
        printf("%s status-%d\n", name, (int)st);
    else
        printf("%s %016llx\n", name, h);
}

static ww_ctx *make_ctx(ww_backend backend, ww_engine engine, int threads)
{
    ww_ctx_options o = ww_ctx_options_default();
    o.backend = backend;
    o.engine = engine;
    o.num_threads = threads;
    ww_ctx *ctx = NULL;
    if (ww_ctx_create(&ctx, &o) != WW_OK)
        return NULL;
    return ctx;
}

/* A dataset of `count` random series, lengths in [lo, hi], stamps optional (irregular, increasing). */
typedef struct data {
    double *v, *t;
    float *vf, *tf;
    size_t *offsets;
    size_t count, dim, samples;
} data;

static data make_data(unsigned long long seed, size_t count, size_t lo, size_t hi, size_t dim, int stamps)
{
    rng r = {seed};
    data d;
    memset(&d, 0, sizeof d);
    d.count = count;
    d.dim = dim;
    d.offsets = (size_t *)malloc((count + 1) * sizeof(size_t));
    d.offsets[0] = 0;
    for (size_t i = 0; i < count; i++)
        d.offsets[i + 1] = d.offsets[i] + lo + (size_t)(uniform(&r) * (double)(hi - lo + 1));
    d.samples = d.offsets[count];
    d.v = (double *)malloc(d.samples * dim * sizeof(double));
    d.vf = (float *)malloc(d.samples * dim * sizeof(float));
    d.t = (double *)malloc(d.samples * sizeof(double));
    d.tf = (float *)malloc(d.samples * sizeof(float));
    for (size_t k = 0; k < d.samples * dim; k++) {
        d.v[k] = uniform(&r) * 4.0 - 2.0;
        d.vf[k] = (float)d.v[k];
    }
    for (size_t i = 0; i < count; i++) {
        double t = uniform(&r);
        for (size_t s = d.offsets[i]; s < d.offsets[i + 1]; s++) {
            t += 0.25 + uniform(&r);
            d.t[s] = t;
            d.tf[s] = (float)t;
        }
    }
    if (!stamps) {
        free(d.t);
        free(d.tf);
        d.t = NULL;
        d.tf = NULL;
    }
    return d;
}

static void free_data(data *d)
{
    free(d->v);
    free(d->vf);
    free(d->t);
    free(d->tf);
    free(d->offsets);
}

static ww_dataset view(const data *d, int f32, int ragged, size_t length)
{
    if (f32)
        return ww_dataset_f32(d->vf, d->tf, ragged ? d->offsets : NULL, d->count, length, d->dim);
    return ww_dataset_f64(d->v, d->t, ragged ? d->offsets : NULL, d->count, length, d->dim);
}

/* Pairs: every series of d against the next one. */
static void pair_cases(const char *prefix, ww_ctx *ctx, const data *d, int f32, const ww_twed_params *p)
{
    char name[128];
    unsigned long long h = FNV0;
    ww_status st = WW_OK;
    for (size_t i = 0; i + 1 < d->count && st == WW_OK; i++) {
        ww_dataset ds = view(d, f32, 1, 0);
        ww_series a, b;
        ww_dataset_series(&ds, i, &a);
        ww_dataset_series(&ds, i + 1, &b);
        double out = 0;
        st = ww_twed(ctx, &a, &b, p, &out);
        h = fnv(h, &out, sizeof out);
    }
    snprintf(name, sizeof name, "%s-pairs-dim%zu-%s-nu%g-l%g-p%d%s", prefix, d->dim, f32 ? "f32" : "f64", p->nu,
             p->lambda, p->degree, d->t ? "-stamps" : "");
    print_case(name, h, st);
}

static void matrix_cases(const char *prefix, ww_ctx *ctx, const data *x, const data *y, int f32, int ragged,
                         size_t length, const ww_twed_params *p, ww_dtype out_dtype)
{
    char name[160];
    ww_dataset dx = view(x, f32, ragged, length), dy;
    if (y)
        dy = view(y, f32, ragged, length);
    size_t rows = x->count, cols = y ? y->count : x->count;
    double *m = (double *)calloc(rows * cols, sizeof(double));
    ww_pairwise_options o = ww_pairwise_options_default();
    o.out_dtype = out_dtype;
    ww_status st = ww_twed_pairwise(ctx, &dx, y ? &dy : NULL, p, m, &o);
    size_t es = out_dtype == WW_F32 ? sizeof(float) : sizeof(double);
    unsigned long long h = fnv(FNV0, m, rows * cols * es);
    snprintf(name, sizeof name, "%s-matrix-%s-%zux%zu-dim%zu-%s-%s-out%s-nu%g-l%g-p%d%s", prefix, y ? "cross" : "self",
             rows, cols, x->dim, ragged ? "ragged" : "equal", f32 ? "f32" : "f64", es == 4 ? "f32" : "f64", p->nu,
             p->lambda, p->degree, x->t ? "-stamps" : "");
    print_case(name, h, st);
    /* a block of the self matrix with a stride: the mirror rule inside a block */
    if (!y && rows >= 8) {
        memset(m, 0, rows * cols * sizeof(double));
        o.row_begin = 1;
        o.row_end = rows - 2;
        o.col_begin = 2;
        o.col_end = cols - 1;
        o.out_stride = cols;
        st = ww_twed_pairwise(ctx, &dx, NULL, p, m, &o);
        h = fnv(FNV0, m, rows * cols * es);
        snprintf(name, sizeof name, "%s-block-%zux%zu-dim%zu-%s-%s-out%s", prefix, rows, cols, x->dim,
                 ragged ? "ragged" : "equal", f32 ? "f32" : "f64", es == 4 ? "f32" : "f64");
        print_case(name, h, st);
    }
    free(m);
}

static void knn_case(const char *prefix, ww_ctx *ctx, const data *q, const data *x, int f32, const ww_twed_params *p,
                     size_t k)
{
    char name[128];
    ww_dataset dq = view(q, f32, 1, 0), dx = view(x, f32, 1, 0);
    size_t *idx = (size_t *)calloc(q->count * k, sizeof(size_t));
    double *dist = (double *)calloc(q->count * k, sizeof(double));
    ww_status st = ww_twed_knn(ctx, &dq, &dx, p, k, idx, dist, NULL);
    unsigned long long h = FNV0;
    for (size_t i = 0; i < q->count * k; i++) {
        unsigned long long v = (unsigned long long)idx[i];
        h = fnv(h, &v, sizeof v);
    }
    h = fnv(h, dist, q->count * k * sizeof(double));
    snprintf(name, sizeof name, "%s-knn-%zuq-%zux-k%zu-dim%zu-%s", prefix, q->count, x->count, k, x->dim,
             f32 ? "f32" : "f64");
    print_case(name, h, st);
    free(idx);
    free(dist);
}

int main(int argc, char **argv)
{
    const int gpu = argc > 1 && strcmp(argv[1], "cuda") == 0;
    if (gpu && !ww_cuda_available())
        return 0;
    const ww_backend backend = gpu ? WW_BACKEND_CUDA : WW_BACKEND_CPU;
    ww_twed_params params[3] = {{0.001, 1.0, 2}, {0.5, 0.25, 1}, {0.0, 0.0, 3}};

    /* one pair, every engine of the backend */
    const ww_engine cpu_engines[] = {WW_ENGINE_CPU_REFERENCE, WW_ENGINE_CPU_BAND, WW_ENGINE_CPU_STRIP};
    const ww_engine gpu_engines[] = {WW_ENGINE_CUDA_DIAGONAL, WW_ENGINE_CUDA_WAVEFRONT};
    const char *cpu_names[] = {"reference", "band", "strip"}, *gpu_names[] = {"diagonal", "wavefront"};
    const size_t dims[] = {1, 2, 3, 8, 13};
    for (int e = 0; e < (gpu ? 2 : 3); e++) {
        ww_ctx *ctx = make_ctx(backend, gpu ? gpu_engines[e] : cpu_engines[e], 1);
        if (ctx == NULL) {
            printf("%s context-failed\n", gpu ? gpu_names[e] : cpu_names[e]);
            continue;
        }
        for (size_t di = 0; di < sizeof dims / sizeof dims[0]; di++) {
            /* the GPU pair engines see lengths past the small-work threshold only with backend cuda */
            data d = make_data(100 + di, 7, gpu ? 300 : 1, gpu ? 2100 : 300, dims[di], (int)(di % 2));
            for (int p = 0; p < 3; p++)
                for (int f32 = 0; f32 < 2; f32++)
                    pair_cases(gpu ? gpu_names[e] : cpu_names[e], ctx, &d, f32, &params[p]);
            free_data(&d);
        }
        ww_ctx_destroy(ctx);
    }

    /* matrices and kNN with the default engine of the backend */
    ww_ctx *ctx = make_ctx(backend, WW_ENGINE_AUTO, gpu ? 0 : 2);
    if (ctx == NULL) {
        printf("matrix context-failed\n");
        return 1;
    }
    const size_t mdims[] = {1, 2, 5, 8, 33};
    for (size_t di = 0; di < sizeof mdims / sizeof mdims[0]; di++) {
        const size_t nx = mdims[di] > 8 ? 12 : 45, ny = mdims[di] > 8 ? 9 : 37; /* pow() is slow */
        data x = make_data(200 + di, nx, 20, 90, mdims[di], (int)(di % 2));
        data y = make_data(300 + di, ny, 5, 140, mdims[di], (int)(di % 2));
        data eq = make_data(400 + di, 40, 64, 64, mdims[di], 0);
        for (int f32 = 0; f32 < 2; f32++) {
            matrix_cases("default", ctx, &x, NULL, f32, 1, 0, &params[di % 3], WW_F64);
            matrix_cases("default", ctx, &x, &y, f32, 1, 0, &params[(di + 1) % 3], f32 ? WW_F32 : WW_F64);
            matrix_cases("default", ctx, &eq, NULL, f32, 0, 64, &params[0], WW_F64);
            knn_case("default", ctx, &y, &x, f32, &params[di % 3], 3);
        }
        free_data(&x);
        free_data(&y);
        free_data(&eq);
    }
    /* long series: the GPU's block and whole-GPU strategies */
    data lx = make_data(500, 6, 500, 3000, 1, 0);
    matrix_cases("default", ctx, &lx, NULL, 0, 1, 0, &params[0], WW_F64);
    free_data(&lx);
    ww_ctx_destroy(ctx);
    return 0;
}
