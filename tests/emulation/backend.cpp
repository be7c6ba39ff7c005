/* The backend functions the GPU engines call (src/cuda/backend.cu on a GPU), for the emulations:
 * device memory is host memory, grow-only as the backend's. Every reservation is filled with a
 * poison, in turn 0x00 (what fresh device memory often holds), 0xff (NaN), 0xa5 (a small negative
 * number) and 0x5a (about 1e127 as a double: +inf to a minimum), so that nothing left by an
 * earlier call, and no value a kernel failed to write, can pass for a right one; unless
 * emu_keep_contents is set: then a reservation that does not grow keeps what the buffer holds, as
 * on a GPU (a call must not take an earlier call's leftovers for its own). A fresh buffer is exactly
 * the size asked for, so AddressSanitizer (EMU_SANITIZE=1) sees a read past its end. */
#include "emulated_gpu.h"

#include <atomic>

size_t emu_device_limit = (size_t)-1;
bool emu_keep_contents = false;

static unsigned char next_poison()
{
    static const unsigned char poisons[] = {0x00, 0xff, 0xa5, 0x5a};
    static std::atomic<unsigned> turn{0};
    return poisons[turn++ % 4];
}

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
    const bool grows = bytes > b->bytes || b->ptr == NULL;
    if (grows) {
        free(b->ptr);
        b->ptr = malloc(bytes ? bytes : 1);
        b->bytes = b->ptr ? bytes : 0;
        if (b->ptr == NULL)
            return WW_ERR_DEVICE_MEMORY;
    }
    if (grows || !emu_keep_contents)
        memset(b->ptr, next_poison(), bytes);
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
