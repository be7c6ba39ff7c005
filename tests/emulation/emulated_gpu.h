/* What the emulations' drivers share (tests/gpu_emulation.sh, tests/ted_gpu_emulation.sh):
 * a context whose GPU is the fake runtime of cuda_runtime.h, the fake backend functions the engines
 * call (backend.cpp: device memory is host memory, poisoned at every reservation).
 *
 * build.sh renames the engines' entry points and the backend's functions (ww_cuda_pair to
 * emu_cuda_pair, ...) on the compiler's command line, so that the library linked beside them keeps
 * its own (stub or real) and the calls here reach the emulated ones. */
#ifndef WW_EMULATION_EMULATED_GPU_H
#define WW_EMULATION_EMULATED_GPU_H

#include "cuda/cuda_common.cuh"

#include <cstdlib>
#include <cstring>

/* A reservation of more device memory than this fails, as cudaMalloc would (the old buffer freed):
 * for the engines' fallbacks when a device lacks memory. */
extern size_t emu_device_limit;
/* Reservations that do not grow keep the buffers' contents, as on a GPU (backend.cpp). */
extern bool emu_keep_contents;

/* A CUDA context over the fake runtime: sm_count multiprocessors, num_threads host threads for the
 * engines' host-side plans (each with its scratch). */
struct emulated_gpu {
    ww_cuda_state state;
    ww_ctx ctx;
    ww_cpu_scratch scratch[4];
    explicit emulated_gpu(int sm_count, int num_threads = 1)
    {
        memset(&state, 0, sizeof state);
        memset(&ctx, 0, sizeof ctx);
        memset(scratch, 0, sizeof scratch);
        state.sm_count = sm_count;
        state.smem_optin = (size_t)227 << 10; /* an H100's */
        ctx.backend = ctx.requested = WW_BACKEND_CUDA;
        ctx.cuda = &state;
        ctx.num_threads = num_threads < 1 ? 1 : num_threads > 4 ? 4 : num_threads;
        ctx.cpu = scratch;
    }
    emulated_gpu(const emulated_gpu &) = delete;
    emulated_gpu &operator=(const emulated_gpu &) = delete;
    /* the device buffers given back (the next call reserves them anew) */
    void release_buffers()
    {
        ww_device_buffer *all[] = {&state.input, &state.prepared, &state.work, &state.result};
        for (ww_device_buffer *b : all) {
            free(b->ptr);
            b->ptr = NULL;
            b->bytes = 0;
        }
    }
    ~emulated_gpu()
    {
        release_buffers();
        free(state.pinned);
    }
};

/* A CPU context of one thread: what the emulations compare with. */
static inline ww_ctx *emu_cpu_context()
{
    ww_ctx_options o = ww_ctx_options_default();
    o.backend = WW_BACKEND_CPU;
    o.num_threads = 1;
    ww_ctx *cpu = NULL;
    return ww_ctx_create(&cpu, &o) == WW_OK ? cpu : NULL;
}

/* A progress callback that cancels the call at once. */
static inline int emu_cancel_at_once(uint64_t, uint64_t, void *) { return 1; }

#endif
