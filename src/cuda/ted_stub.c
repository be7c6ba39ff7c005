/* The GPU tree edit distance of a build without CUDA: it says so. */
#include "../common/ted_internal.h"

ww_status ww_cuda_ted(ww_ctx *ctx, const ww_tree *a, const ww_tree *b, const ww_ted_params *p,
                      const ww_ted_gpu_thresholds *limits, double *out)
{
    (void)ctx, (void)a, (void)b, (void)p, (void)limits, (void)out;
    return WW_ERR_NO_CUDA;
}

ww_status ww_cuda_ted_pairwise(ww_ctx *ctx, const ww_tree *x, const ww_tree *y, const ww_ted_params *p,
                               const ww_ted_gpu_thresholds *limits, void *out, const ww_pairwise_options *o)
{
    (void)ctx, (void)x, (void)y, (void)p, (void)limits, (void)out, (void)o;
    return WW_ERR_NO_CUDA;
}
