/* The CPU threading layer: the items of a matrix (row chunks, column groups, pairs) taken from one
 * counter by the context's threads, with progress and cancel, shared by the engines (pairwise.c,
 * ted.c, image.c). An engine says what an item is; this file says who runs it and when to stop. */
#ifndef WW_CPU_WORK_QUEUE_H
#define WW_CPU_WORK_QUEUE_H

#include "../common/internal.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Computes item `item` with this thread's scratch; *cells: the DP cells it computed (0: nothing
 * to do, no progress reported). A failure stops every thread at its next item. */
typedef ww_status (*ww_cpu_item_fn)(void *job, size_t item, ww_cpu_scratch *sc, uint64_t *cells);
/* Once per thread before its first item (its scratch), or NULL. */
typedef ww_status (*ww_cpu_thread_start_fn)(void *job, ww_cpu_scratch *sc);

/* Runs items [0, items) on min(threads, items) threads (at least 1). Only the calling thread calls
 * o->progress (cells done so far, of `total`); a nonzero answer stops all with WW_ERR_CANCELLED.
 * Returns the first failure, else WW_OK. The caller reports the end (total, total) itself, after
 * its own finishing steps. */
ww_status ww_cpu_run_items(ww_ctx *ctx, int threads, size_t items, uint64_t total, const ww_pairwise_options *o,
                           ww_cpu_thread_start_fn start, ww_cpu_item_fn run, void *job);

#ifdef __cplusplus
}
#endif

#endif
