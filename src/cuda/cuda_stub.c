/* The CUDA entry points of a build without CUDA: every one says so. */
#include "../common/image_internal.h"

int ww_cuda_device_count(void) { return 0; }
ww_status ww_cuda_init(ww_ctx *ctx)
{
    (void)ctx;
    return WW_ERR_NO_CUDA;
}
void ww_cuda_shutdown(ww_ctx *ctx) { (void)ctx; }
ww_status ww_cuda_distance(ww_ctx *ctx, const ww_measure *m, const ww_series *a, const ww_series *b, double *out)
{
    (void)ctx, (void)m, (void)a, (void)b, (void)out;
    return WW_ERR_NO_CUDA;
}
ww_status ww_cuda_pairwise(ww_ctx *ctx, const ww_measure *m, const ww_dataset *x, const ww_dataset *y, void *out,
                           const ww_pairwise_options *opt)
{
    (void)ctx, (void)m, (void)x, (void)y, (void)out, (void)opt;
    return WW_ERR_NO_CUDA;
}
ww_status ww_cuda_index_create(ww_ctx *ctx, const ww_dataset *x, const ww_measure *m, ww_index *ix)
{
    (void)ctx, (void)x, (void)m, (void)ix;
    return WW_ERR_NO_CUDA;
}
void ww_cuda_index_destroy(ww_index *ix) { (void)ix; }
int ww_cuda_describe_plan(ww_ctx *ctx, const ww_dataset *x, const ww_dataset *y, char *buf, size_t size)
{
    (void)ctx, (void)x, (void)y;
    if (size)
        buf[0] = 0;
    return -1;
}
ww_status ww_cuda_index_pairwise(ww_ctx *ctx, const ww_index *ix, const ww_dataset *queries, void *out,
                                 const ww_pairwise_options *opt)
{
    (void)ctx, (void)ix, (void)queries, (void)out, (void)opt;
    return WW_ERR_NO_CUDA;
}
ww_cuda_model ww_cuda_context_model(const ww_ctx *ctx)
{
    (void)ctx;
    return ww_cuda_model_default();
}
ww_status ww_cuda_calibrate(ww_ctx *ctx, const char *path, char *report, size_t report_size)
{
    (void)path, (void)report, (void)report_size;
    return ctx == NULL ? WW_ERR_NULL_POINTER : WW_ERR_NO_CUDA;
}
ww_status ww_cuda_image_pairwise(ww_ctx *ctx, const ww_image *x, size_t nx, const ww_image *y, size_t ny, int squared,
                                 void *out, const ww_pairwise_options *opt)
{
    (void)ctx, (void)x, (void)nx, (void)y, (void)ny, (void)squared, (void)out, (void)opt;
    return WW_ERR_NO_CUDA;
}
ww_status ww_cuda_softdtw_batch(ww_ctx *ctx, const ww_measure *m, const ww_dataset *x, const ww_dataset *y,
                                void *values, void *grad_x, void *grad_y)
{
    (void)ctx, (void)m, (void)x, (void)y, (void)values, (void)grad_x, (void)grad_y;
    return WW_ERR_NO_CUDA;
}
ww_status ww_cuda_softdtw_gradient(ww_ctx *ctx, const ww_measure *m, const ww_series *a, const ww_series *b,
                                   double *value, double *grad_a, double *grad_b)
{
    (void)ctx, (void)m, (void)a, (void)b, (void)value, (void)grad_a, (void)grad_b;
    return WW_ERR_NO_CUDA;
}
