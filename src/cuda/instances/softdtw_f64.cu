/* Soft-DTW's kernels for f64 data (softdtw_launch.cuh). */
#define WW_SDTW_INSTANTIATE
#include "../softdtw_launch.cuh"

template cudaError_t sdtw_launch<double>(const sdtw_launch_args &L, const sdtw_pairs &pairs, const double *X, const double *Y,
                                     const coef_of<double>::type &c, double *work, double *values, double *gx, double *gy, double scale,
                                     int backward);
