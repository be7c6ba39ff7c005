/* The matrix engine's kernels for TWED with a window (pairwise_launch.cuh). */
#include "../pairwise_launch.cuh"

WW_PAIRWISE_INSTANCE(, twed_ops, true)
