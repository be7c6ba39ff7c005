/* The CPU threading layer (work_queue.h). */
#include "work_queue.h"

#ifdef _OPENMP
#include <omp.h>
#endif

/* Records a failure and tells every thread to stop. */
static void stop_all(ww_status why, ww_status *failure, int *stop)
{
#ifdef _OPENMP
#pragma omp critical(ww_work_queue_failure)
#endif
    {
        if (*failure == WW_OK)
            *failure = why;
    }
#ifdef _OPENMP
#pragma omp atomic write
#endif
    *stop = 1;
}

ww_status ww_cpu_run_items(ww_ctx *ctx, int threads, size_t items, uint64_t total, const ww_pairwise_options *o,
                           ww_cpu_thread_start_fn start, ww_cpu_item_fn run, void *job)
{
    size_t next_item = 0;
    uint64_t done = 0;
    int stop = 0; /* set on cancel or failure */
    ww_status failure = WW_OK;
    if ((size_t)threads > items)
        threads = (int)items;
    if (threads < 1)
        threads = 1;
#ifdef _OPENMP
#pragma omp parallel num_threads(threads)
#endif
    {
        int tid = 0;
#ifdef _OPENMP
        tid = omp_get_thread_num();
#endif
        ww_cpu_scratch *sc = &ctx->cpu[tid];
        ww_status s = start ? start(job, sc) : WW_OK;
        if (s != WW_OK)
            stop_all(s, &failure, &stop);
        while (s == WW_OK) {
            int stopped;
#ifdef _OPENMP
#pragma omp atomic read
#endif
            stopped = stop;
            if (stopped)
                break;
            size_t item;
#ifdef _OPENMP
#pragma omp atomic capture
#endif
            item = next_item++;
            if (item >= items)
                break;
            uint64_t cells = 0;
            if ((s = run(job, item, sc, &cells)) != WW_OK) {
                stop_all(s, &failure, &stop);
                break;
            }
            if (cells == 0)
                continue;
            uint64_t now;
#ifdef _OPENMP
#pragma omp atomic capture
#endif
            now = done += cells;
            /* only the calling thread talks to the user's callback */
            if (tid == 0 && o->progress && o->progress(now, total, o->progress_user))
                stop_all(WW_ERR_CANCELLED, &failure, &stop);
        }
    }
    return failure;
}
