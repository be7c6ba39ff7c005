/* The matrix engine's kernels for DTW with a window (pairwise_launch.cuh). */
#include "../pairwise_launch.cuh"

WW_PAIRWISE_INSTANCE(, dtw_ops, true)
