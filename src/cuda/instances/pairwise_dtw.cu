/* The matrix engine's kernels for DTW (pairwise_launch.cuh). */
#include "../pairwise_launch.cuh"

WW_PAIRWISE_INSTANCE(, dtw_ops, false)
