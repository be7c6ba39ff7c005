/* The matrix engine's kernels for TWED (pairwise_launch.cuh). */
#include "../pairwise_launch.cuh"

WW_PAIRWISE_INSTANCE(, twed_ops, false)
