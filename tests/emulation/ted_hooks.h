/* The GPU tree engine's switches for its emulation (tests/ted_gpu_emulation.sh), read by
 * src/cuda/ted.cu before its own defaults: included ahead of it on the compiler's command line,
 * beside the fake runtime (cuda_runtime.h).
 *
 * A launch runs its blocks one after the other on one host thread (emu::concurrent_blocks = 1, set
 * by the driver), in the order of the launches: the dependency order the engine relies on. Each
 * block is EMU_LANES threads whatever the launch asks for:
 *  - 1: one thread owns every row of a table (every block- or grid-stride loop then covers all its
 *    tasks);
 *  - 32: one warp of fibers with the GPU's rows per thread, so that the 32-lane code (the tiles'
 *    sweep from registers and shuffles, the one- and two-row steps) runs too.
 * Waits that a GPU makes for another block or launch must here be met before they start; if not,
 * the order is wrong (on a GPU, a deadlock or a read of an unwritten entry): they abort. */
#ifndef WW_EMULATION_TED_HOOKS_H
#define WW_EMULATION_TED_HOOKS_H

#include <cuda_runtime.h>

#ifndef EMU_LANES
#error "EMU_LANES (1 or 32) must be defined"
#endif

#if EMU_LANES == 1 /* one thread owns every row */
#define WW_TED_ROWS_PER_THREAD 4096
#define WW_TED_WARP_ROWS_PER_LANE 4096
#else /* the GPU's rows per thread (ted.cu): the same sweeps as there, K = 1 and 2 */
#define WW_TED_ROWS_PER_THREAD 2
#define WW_TED_WARP_ROWS_PER_LANE 1
#endif
#define WW_TED_EARLY_EXIT 1
#define WW_TED_MULTI_SLOT_BYTES (1u << 18) /* a depth's multi-block tables over several launches */
#define WW_TED_PLAN_TABLES_PER_WORKER 8    /* a matrix's plan over several threads */
#define WW_TED_TWO_PART_UPLOAD_TASKS 256   /* the larger batches uploaded in two parts */

#define WW_TED_LAUNCH(kernel, grid, threads, shared, stream, ...)                                  \
    emu::launch([&] { kernel(__VA_ARGS__); }, (grid), EMU_LANES)

/* Launches that may overlap the one before on a GPU: here in order, as every launch, counted. */
inline long emu_ted_overlapped_launches = 0;
#define WW_TED_LAUNCH_OVERLAPPED(kernel, grid, threads, shared, stream, ...)                       \
    ([&] {                                                                                         \
        WW_TED_LAUNCH(kernel, grid, threads, shared, stream, __VA_ARGS__);                         \
        emu_ted_overlapped_launches++;                                                             \
        return cudaSuccess;                                                                        \
    }())

/* one block's dynamic shared memory, the same array wherever the kernels name it (the blocks run
 * one at a time) */
alignas(16) inline unsigned char emu_ted_dynamic_shared[1 << 18];
#define WW_TED_DYNAMIC_SHARED(name) unsigned char *const name = emu_ted_dynamic_shared

/* The multi-block strategy's wait on the band above: the bands run in queue order, so the wait
 * must be met already; if not, the queue's order is wrong (on a GPU, a deadlock risk). */
#define WW_TED_SPIN_WAIT(flag, value, failed)                                                      \
    do {                                                                                           \
        if (*(flag) < (value))                                                                     \
            emu::fail("multi-block wait on a band not yet done");                                  \
    } while (0)

/* A read of a td entry not yet written: on a GPU, where depths overlap, it waits; here, where the
 * launches run in order, the entry should have been written (a wrong order or a missed entry). */
#define WW_TED_TD_RELOAD
template <typename T> static T td_reload(const T *) { emu::fail("a td entry read before it was written"); }

/* The engine only asks for any(v) && v, which is v: no lane needs the others' (the sweeps' lanes
 * here may leave their loops early, WW_TED_EARLY_EXIT, so a real vote could wait for lanes that
 * left). */
#define __activemask() 1u
#define __any_sync(mask, v) ((void)(mask), (bool)(v))

#endif
