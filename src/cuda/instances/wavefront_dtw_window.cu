/* The wavefront engine's kernels for DTW with a window (wavefront_shapes.cuh). */
#include "../wavefront_shapes.cuh"

WW_WAVEFRONT_INSTANCE(, dtw_ops, true)
