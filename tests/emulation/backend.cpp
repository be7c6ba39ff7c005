/* The backend functions the GPU engines call (src/cuda/backend.cu on a GPU), for the emulations:
 * device memory is host memory, grow-only as the backend's, and poisoned at every reservation, so
 * that nothing left by an earlier call (or another strategy) can stand in for a value a kernel
 * failed to write; a fresh buffer is exactly the size asked for, so AddressSanitizer
 * (EMU_SANITIZE=1) sees a read past its end. */
#include "emulated_gpu.h"

size_t emu_device_limit = (size_t)-1;

ww_status ww_cuda_status(cudaError_t e)
{
    return e == cudaSuccess ? WW_OK : e == cudaErrorMemoryAllocation ? WW_ERR_DEVICE_MEMORY : WW_ERR_CUDA;
}

ww_status ww_device_reserve(ww_device_buffer *b, size_t bytes)
{
    if (bytes > emu_device_limit) {
        free(b->ptr);
        b->ptr = NULL;
        b->bytes = 0;
        return WW_ERR_DEVICE_MEMORY;
    }
    if (bytes > b->bytes || b->ptr == NULL) {
        free(b->ptr);
        b->ptr = malloc(bytes ? bytes : 1);
        b->bytes = b->ptr ? bytes : 0;
        if (b->ptr == NULL)
            return WW_ERR_DEVICE_MEMORY;
    }
    memset(b->ptr, 0x5a, bytes);
    return WW_OK;
}

ww_status ww_pinned_reserve(void **pinned, size_t *pinned_bytes, size_t bytes)
{
    if (bytes <= *pinned_bytes)
        return WW_OK;
    free(*pinned);
    *pinned = malloc(bytes);
    *pinned_bytes = *pinned ? bytes : 0;
    return *pinned ? WW_OK : WW_ERR_MEMORY;
}

/* the preparation kernels' flags: "device" memory is host memory, every launch has finished */
ww_status ww_cuda_read_flags(ww_cuda_state *, const int *dflags) { return ww_flags_status(*dflags); }

/* "device" pointers are host pointers here: any but NULL */
ww_status ww_cuda_check_device_pointer(const void *p) { return p ? WW_OK : WW_ERR_NULL_POINTER; }
ww_cuda_device_guard ww_cuda_enter(ww_cuda_state *) { return {-1}; }
void ww_cuda_leave(ww_cuda_device_guard) {}
