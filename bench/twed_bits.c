/* Prints the bit patterns of TWED results on many random cases, one per line, for comparing two
 * builds of the library byte for byte (the check that a change of the CPU engines left every TWED
 * result unchanged, beyond the recorded checksums of tests/twed_checksums_cpu.txt):
 *
 *   cc -O2 -Iinclude bench/twed_bits.c -o bits-new build-cpu/libwavewarp.a -lm -fopenmp
 *   cc -O2 -I$OLD/include bench/twed_bits.c -o bits-old $OLD/build-cpu/libwavewarp.a -lm -fopenmp
 *   ./bits-old > old.txt && ./bits-new > new.txt && cmp old.txt new.txt
 *
 * It uses only the TWED calls of version 0.1. Cases: 400 pairs (lengths 1 to 900, so one to four
 * strips of the strip engine, dims 1 to 9, degrees 1 to 3, nu and lambda varied, stamps given or
 * not, double and float32 input) on the reference (pairs up to 300,000 cells), band and strip
 * engines; then 40 matrices on two threads (ragged and equal lengths, dims 1 to 8, the self matrix
 * and a rectangle). A failed call prints its status as a negative number. */
#include "wavewarp.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = 0x9E3779B97F4A7C15ULL;
static uint64_t next(void)
{
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return rng * 2685821657736338717ULL;
}
static double uniform(void) { return (double)(next() >> 11) * (1.0 / 9007199254740992.0); }
static size_t below(size_t n) { return (size_t)(next() % n); }

static void *alloc(size_t bytes)
{
    void *p = malloc(bytes);
    if (p == NULL) {
        fprintf(stderr, "twed_bits: out of memory\n");
        exit(1);
    }
    return p;
}

static ww_ctx *make_ctx(ww_engine engine, int threads)
{
    ww_ctx_options o = ww_ctx_options_default();
    o.backend = WW_BACKEND_CPU;
    o.engine = engine;
    o.num_threads = threads;
    ww_ctx *c = NULL;
    if (ww_ctx_create(&c, &o) != WW_OK) {
        fprintf(stderr, "twed_bits: ww_ctx_create failed\n");
        exit(1);
    }
    return c;
}

static void print_bits(double d)
{
    uint64_t b;
    memcpy(&b, &d, sizeof b);
    printf("%016llx\n", (unsigned long long)b);
}

static void print_result(ww_status st, double d) { print_bits(st == WW_OK ? d : -(double)st); }

int main(void)
{
    ww_ctx *engines[3] = {make_ctx(WW_ENGINE_CPU_REFERENCE, 1), make_ctx(WW_ENGINE_CPU_BAND, 1),
                          make_ctx(WW_ENGINE_CPU_STRIP, 1)};
    ww_ctx *matrices = make_ctx(WW_ENGINE_AUTO, 2);
    for (int trial = 0; trial < 400; trial++) {
        const size_t dim = 1 + (trial % 4 == 0 ? below(9) : 0);
        const size_t big = trial % 7 == 0 ? 900 : trial % 3 == 0 ? 300 : 70;
        const size_t na = 1 + below(big), nb = 1 + below(big);
        double *a = (double *)alloc(na * dim * sizeof(double)), *b = (double *)alloc(nb * dim * sizeof(double));
        double *ta = (double *)alloc(na * sizeof(double)), *tb = (double *)alloc(nb * sizeof(double));
        float *af = (float *)alloc(na * dim * sizeof(float)), *bf = (float *)alloc(nb * dim * sizeof(float));
        for (size_t k = 0; k < na * dim; k++)
            af[k] = (float)(a[k] = uniform() * 4 - 2);
        for (size_t k = 0; k < nb * dim; k++)
            bf[k] = (float)(b[k] = uniform() * 4 - 2);
        ta[0] = uniform();
        for (size_t k = 1; k < na; k++)
            ta[k] = ta[k - 1] + uniform();
        tb[0] = uniform();
        for (size_t k = 1; k < nb; k++)
            tb[k] = tb[k - 1] + uniform();
        const ww_twed_params p = {trial % 2 ? 0.5 : 0.001, trial % 3 ? 1.0 : 0.25, 1 + trial % 3};
        ww_series sa = ww_series_f64(a, trial % 5 ? ta : NULL, na, dim);
        ww_series sb = ww_series_f64(b, trial % 5 ? tb : NULL, nb, dim);
        ww_series fa = ww_series_f32(af, NULL, na, dim), fb = ww_series_f32(bf, NULL, nb, dim);
        for (int e = 0; e < 3; e++) {
            if (e == 0 && na * nb > 300000)
                continue;
            double d = 0;
            ww_status st = ww_twed(engines[e], &sa, &sb, &p, &d);
            print_result(st, d);
            st = ww_twed(engines[e], &fa, &fb, &p, &d);
            print_result(st, d);
        }
        free(a), free(b), free(ta), free(tb), free(af), free(bf);
    }
    for (int trial = 0; trial < 40; trial++) {
        const size_t dim = 1 + below(trial % 2 ? 8 : 1), count = 20 + below(60), cols = 7;
        const int ragged = trial % 3 != 0;
        size_t *off = (size_t *)alloc((count + 1) * sizeof(size_t));
        off[0] = 0;
        for (size_t i = 0; i < count; i++)
            off[i + 1] = off[i] + (ragged ? 5 + below(80) : 50);
        double *v = (double *)alloc(off[count] * dim * sizeof(double)), *t = (double *)alloc(off[count] * sizeof(double));
        for (size_t k = 0; k < off[count] * dim; k++)
            v[k] = uniform();
        for (size_t i = 0; i < count; i++)
            for (size_t s = off[i]; s < off[i + 1]; s++)
                t[s] = (s == off[i] ? 0 : t[s - 1]) + 0.5 + uniform();
        const ww_twed_params p = {trial % 2 ? 1.0 : 0.001, 1.0, 1 + trial % 3};
        ww_dataset x = ww_dataset_f64(v, t, off, count, 0, dim), y = ww_dataset_f64(v, t, off, cols, 0, dim);
        double *out = (double *)alloc(count * count * sizeof(double));
        ww_status st = ww_twed_pairwise(matrices, &x, NULL, &p, out, NULL);
        for (size_t k = 0; k < count * count; k++)
            print_result(st, out[k]);
        st = ww_twed_pairwise(matrices, &x, &y, &p, out, NULL);
        for (size_t k = 0; k < count * cols; k++)
            print_result(st, out[k]);
        free(off), free(v), free(t), free(out);
    }
    for (int e = 0; e < 3; e++)
        ww_ctx_destroy(engines[e]);
    ww_ctx_destroy(matrices);
    return 0;
}
