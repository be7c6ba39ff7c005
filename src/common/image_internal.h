/* Elastic image matching: what the API layer (src/common/image.c) and the CPU engine
 * (src/cpu/image.c) share. Not installed. */
#ifndef WW_IMAGE_INTERNAL_H
#define WW_IMAGE_INTERNAL_H

#include "internal.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes of one pixel component. */
static inline size_t ww_image_dtype_size(ww_dtype t)
{
    return t == WW_U8 ? 1 : t == WW_F32 ? sizeof(float) : sizeof(double);
}

/* Cells of one pair of images, as progress counts them: H1 H2 W1 W2 inner plus H1 H2 outer. */
static inline uint64_t ww_image_pair_cells(const ww_image *a, const ww_image *b)
{
    const uint64_t rows = (uint64_t)a->height * b->height;
    return rows * a->width * b->width + rows;
}

/* A block of the distance matrix of x against y (y == NULL: x itself) on the CPU. Images checked,
 * on the host, with one channel count; opt complete (block resolved, stride set). */
ww_status ww_cpu_image_pairwise(ww_ctx *ctx, const ww_image *x, size_t nx, const ww_image *y, size_t ny, int squared,
                                void *out, const ww_pairwise_options *opt);
/* The distance and matched pixels (i, n, j, m) of one pair on the CPU (see ww_image_map). */
ww_status ww_cpu_image_map(ww_ctx *ctx, const ww_image *a, const ww_image *b, int squared, double *distance,
                           size_t *matches, size_t *count);
/* The same block on the GPU (src/cuda/image.cu; WW_ERR_NO_CUDA without CUDA): float arithmetic, one
 * block per pair. WW_ERR_UNSUPPORTED for images wider than 128 pixels or a pair that does not fit in
 * a block's shared memory. */
ww_status ww_cuda_image_pairwise(ww_ctx *ctx, const ww_image *x, size_t nx, const ww_image *y, size_t ny, int squared,
                                 void *out, const ww_pairwise_options *opt);

#ifdef __cplusplus
}
#endif
#endif
