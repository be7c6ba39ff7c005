/* The wavefront engine's kernels for TWED (wavefront_shapes.cuh). */
#include "../wavefront_shapes.cuh"

WW_WAVEFRONT_INSTANCE(, twed_ops, false)
