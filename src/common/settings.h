/* Every value the library reads from the environment, in one table (settings.c): a user setting
 * (the calibration file) and switches that tests and benchmarks use to force a choice the library
 * otherwise makes itself. Nothing else in the library calls getenv(). README.md lists them. */
#ifndef WW_SETTINGS_H
#define WW_SETTINGS_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum ww_setting {
    WW_SETTING_CALIBRATION,     /* WW_CALIBRATION: the GPU cost-model file (wavewarp.h) */
    WW_SETTING_XDG_CACHE_HOME,  /* XDG_CACHE_HOME, then HOME: where the calibration cache lives */
    WW_SETTING_HOME,
    WW_SETTING_WAVEFRONT_TILE,  /* WW_WAVEFRONT_TILE=RxCsSYNC[lLAG]: the GPU pair engine's tile shape; a value
                                 * that names no shape built for the call's samples, measure and window
                                 * makes GPU pair calls fail with WW_ERR_BACKEND (the library never
                                 * prints, and a benchmark must not time another shape unawares) */
    WW_SETTING_WAVEFRONT_RESIDENT, /* WW_WAVEFRONT_RESIDENT=N: N bands of the GPU pair engine per
                                    * multiprocessor at once (at most as many as fit) instead of pair.cu's
                                    * choice, more or fewer: benchmarks */
    WW_SETTING_MATRIX_STRATEGY, /* WW_MATRIX_STRATEGY=thread|warp|block|grid: the GPU matrix strategy */
    WW_SETTING_MATRIX_GROUPS,   /* WW_MATRIX_GROUPS=0: keep a mixed-length matrix whole on the GPU */
    WW_SETTING_STAGED,          /* WW_STAGED=0: no shared-memory staging in the GPU thread strategy */
    WW_SETTING_STAGED_ROWS,     /* WW_STAGED_ROWS=1|2: rows per pass of the staged kernel */
    WW_SETTING_STAGED_THREADS,  /* WW_STAGED_THREADS=32|64|128: block size of the staged kernel */
    WW_SETTING_STAGED_LANES,    /* WW_STAGED_LANES=1|2: lanes per pair of the staged kernel (default: by pair count) */
    WW_SETTING_BAND,            /* WW_BAND=0: no register band in the GPU thread strategy (the row sweep instead) */
    WW_SETTING_TED_THREAD_CELLS, /* WW_TED_THREAD_CELLS=N: GPU tree tables of at most N cells on one thread */
    WW_SETTING_TED_WARP_CELLS,   /* WW_TED_WARP_CELLS=N: ... at most N on one warp */
    WW_SETTING_TED_BLOCK_CELLS,  /* WW_TED_BLOCK_CELLS=N: ... at most N on one block, larger over many
                                  * warps of several blocks (the multi-block strategy) */
    WW_SETTING_SOFTDTW_MEMORY,  /* WW_SOFTDTW_MEMORY=bytes: default soft-DTW gradient table budget per
                                 * pair (ww_softdtw_set_memory_budget; 0 forces checkpointing) */
    WW_SETTING_COUNT
} ww_setting;

/* The variable's value, or NULL when it is unset or empty. */
const char *ww_setting_value(ww_setting s);
/* Its name, e.g. "WW_WAVEFRONT_TILE". */
const char *ww_setting_name(ww_setting s);

#ifdef __cplusplus
}
#endif
#endif
