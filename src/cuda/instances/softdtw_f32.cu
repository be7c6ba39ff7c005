/* Soft-DTW's kernels for f32 data (softdtw_launch.cuh). */
#define WW_SDTW_INSTANTIATE
#include "../softdtw_launch.cuh"

template cudaError_t sdtw_launch<float>(const sdtw_launch_args &L, const sdtw_pairs &pairs, const float *X, const float *Y,
                                     const coef_of<float>::type &c, float *work, float *values, float *gx, float *gy, float scale,
                                     int backward);
