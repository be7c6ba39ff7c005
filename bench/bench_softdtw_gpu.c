/* Soft-DTW batches on the GPU (issue 14) without Python: B pairs of N samples in R^2, float32 (and
 * float64 with --f64), on the device, through ww_softdtw_batch; the value alone and the value with
 * both gradients, timed with CUDA events after a warm-up, median of the repetitions. The budget
 * per pair can be set to force the checkpointed backward pass. Prints a Markdown table.
 *
 *   ww_bench_softdtw_gpu [--f64] [--reps R] [--budget BYTES] [B:N ...]   (default 512:512 512:1024
 *                        512:4096 64:8192) */
#include <wavewarp.h>

#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int compare_float(const void *a, const void *b)
{
    const float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* Median of `reps` timed calls (ms); -1 on an error (printed). */
static float time_calls(ww_ctx *ctx, const ww_measure *m, const ww_dataset *x, const ww_dataset *y, void *values,
                        void *gx, void *gy, int reps)
{
    cudaEvent_t start, stop;
    cudaEventCreate(&start), cudaEventCreate(&stop);
    float *times = malloc((size_t)reps * sizeof(float)), result = -1;
    ww_status st = ww_softdtw_batch(ctx, m, x, y, values, gx, gy); /* warm-up */
    for (int r = 0; r < reps && st == WW_OK; r++) {
        cudaEventRecord(start, 0);
        st = ww_softdtw_batch(ctx, m, x, y, values, gx, gy);
        cudaEventRecord(stop, 0);
        cudaEventSynchronize(stop);
        cudaEventElapsedTime(&times[r], start, stop);
    }
    if (st != WW_OK)
        fprintf(stderr, "ww_softdtw_batch: %s\n", ww_strerror(st));
    else {
        qsort(times, (size_t)reps, sizeof(float), compare_float);
        result = times[reps / 2];
    }
    free(times);
    cudaEventDestroy(start), cudaEventDestroy(stop);
    return result;
}

int main(int argc, char **argv)
{
    int f64 = 0, reps = 11, first = 1;
    size_t budget = SIZE_MAX;
    double window = -1; /* a Sakoe-Chiba radius of this fraction of N; < 0: none */
    size_t dim = 2;
    for (; first < argc && strncmp(argv[first], "--", 2) == 0; first++) {
        if (strcmp(argv[first], "--f64") == 0)
            f64 = 1;
        else if (strcmp(argv[first], "--reps") == 0 && first + 1 < argc)
            reps = atoi(argv[++first]);
        else if (strcmp(argv[first], "--budget") == 0 && first + 1 < argc)
            budget = (size_t)strtoull(argv[++first], NULL, 10);
        else if (strcmp(argv[first], "--window") == 0 && first + 1 < argc)
            window = atof(argv[++first]);
        else if (strcmp(argv[first], "--dim") == 0 && first + 1 < argc && atoi(argv[first + 1]) > 0)
            dim = (size_t)atoi(argv[++first]);
        else {
            fprintf(stderr, "usage: %s [--f64] [--reps R] [--budget BYTES] [--window FRACTION] [--dim D] [B:N ...]\n", argv[0]);
            return 2;
        }
    }
    const char *defaults[] = {"512:512", "512:1024", "512:4096", "64:8192"};
    const int cases = argc > first ? argc - first : 4;
    ww_ctx_options o = ww_ctx_options_default();
    o.backend = WW_BACKEND_CUDA;
    ww_ctx *ctx = NULL;
    ww_status st = ww_ctx_create(&ctx, &o);
    if (st != WW_OK) {
        printf("no GPU: %s\n", ww_strerror(st));
        return 0;
    }
    if (budget != SIZE_MAX)
        ww_softdtw_set_memory_budget(ctx, budget);
    printf("| B | N | D | dtype | window radius | forward (ms) | forward + backward (ms) | Gcells/s forward | Gcells/s both |\n");
    printf("| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
    const size_t es = f64 ? sizeof(double) : sizeof(float);
    for (int c = 0; c < cases; c++) {
        size_t B = 0, N = 0;
        if (sscanf(argc > first ? argv[first + c] : defaults[c], "%zu:%zu", &B, &N) != 2 || B == 0 || N == 0)
            continue;
        const size_t count = B * N * dim;
        void *hx = malloc(count * es), *dx = NULL, *dy = NULL, *dv = NULL, *dgx = NULL, *dgy = NULL;
        uint64_t s = 0x9e3779b97f4a7c15ull ^ N;
        for (size_t k = 0; k < count; k++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            const double u = (double)(s >> 11) / 9007199254740992.0 * 2 - 1;
            f64 ? (void)(((double *)hx)[k] = u) : (void)(((float *)hx)[k] = (float)u);
        }
        if (cudaMalloc(&dx, count * es) != cudaSuccess || cudaMalloc(&dy, count * es) != cudaSuccess ||
            cudaMalloc(&dv, B * es) != cudaSuccess || cudaMalloc(&dgx, count * es) != cudaSuccess ||
            cudaMalloc(&dgy, count * es) != cudaSuccess) {
            printf("| %zu | %zu | %zu | %s | out of device memory for the data | | | | |\n", B, N, dim, f64 ? "f64" : "f32");
            free(hx);
            continue;
        }
        cudaMemcpy(dx, hx, count * es, cudaMemcpyHostToDevice);
        cudaMemcpy(dy, hx, count * es, cudaMemcpyHostToDevice); /* y: x reversed in pairs (below) */
        ww_dataset x = f64 ? ww_dataset_f64(dx, NULL, NULL, B, N, dim) : ww_dataset_f32(dx, NULL, NULL, B, N, dim);
        ww_dataset y = f64 ? ww_dataset_f64(dy, NULL, NULL, B, N, dim) : ww_dataset_f32(dy, NULL, NULL, B, N, dim);
        x.memory = y.memory = WW_DEVICE;
        if (B > 1) /* pair b with b + 1 */
            cudaMemcpy((char *)dy, (char *)dx + N * dim * es, (B - 1) * N * dim * es, cudaMemcpyDeviceToDevice);
        ww_measure m = ww_measure_softdtw(1.0);
        const size_t radius = window >= 0 ? (size_t)(window * (double)N) : SIZE_MAX;
        if (window >= 0)
            ww_measure_set_window(&m, radius);
        const float fwd = time_calls(ctx, &m, &x, &y, dv, NULL, NULL, reps);
        const float both = time_calls(ctx, &m, &x, &y, dv, dgx, dgy, reps);
        /* the cells computed: the window's band (|i - j| <= radius for equal lengths) */
        const double r = window >= 0 && radius < N ? (double)radius : (double)N;
        const double cells = (double)B * ((double)N * N - (N - 1 - r) * (N - r) * (r < N ? 1 : 0));
        char rtext[32] = "none";
        if (window >= 0)
            snprintf(rtext, sizeof rtext, "%zu", radius);
        printf("| %zu | %zu | %zu | %s | %s | %.3f | %.3f | %.1f | %.1f |\n", B, N, dim, f64 ? "f64" : "f32", rtext, fwd, both,
               fwd > 0 ? cells / fwd / 1e6 : 0, both > 0 ? cells / both / 1e6 : 0);
        fflush(stdout);
        cudaFree(dx), cudaFree(dy), cudaFree(dv), cudaFree(dgx), cudaFree(dgy);
        free(hx);
    }
    ww_ctx_destroy(ctx);
    return 0;
}
