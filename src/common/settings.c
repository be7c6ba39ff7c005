/* The environment variables the library reads (settings.h). */
#include "settings.h"

#include <stdlib.h>

static const char *const names[WW_SETTING_COUNT] = {
    [WW_SETTING_CALIBRATION] = "WW_CALIBRATION",
    [WW_SETTING_XDG_CACHE_HOME] = "XDG_CACHE_HOME",
    [WW_SETTING_HOME] = "HOME",
    [WW_SETTING_WAVEFRONT_TILE] = "WW_WAVEFRONT_TILE",
    [WW_SETTING_WAVEFRONT_RESIDENT] = "WW_WAVEFRONT_RESIDENT",
    [WW_SETTING_MATRIX_STRATEGY] = "WW_MATRIX_STRATEGY",
    [WW_SETTING_MATRIX_GROUPS] = "WW_MATRIX_GROUPS",
    [WW_SETTING_STAGED] = "WW_STAGED",
    [WW_SETTING_STAGED_ROWS] = "WW_STAGED_ROWS",
    [WW_SETTING_STAGED_THREADS] = "WW_STAGED_THREADS",
    [WW_SETTING_STAGED_LANES] = "WW_STAGED_LANES",
    [WW_SETTING_BAND] = "WW_BAND",
    [WW_SETTING_TED_THREAD_CELLS] = "WW_TED_THREAD_CELLS",
    [WW_SETTING_TED_WARP_CELLS] = "WW_TED_WARP_CELLS",
    [WW_SETTING_TED_BLOCK_CELLS] = "WW_TED_BLOCK_CELLS",
    [WW_SETTING_SOFTDTW_MEMORY] = "WW_SOFTDTW_MEMORY",
};

const char *ww_setting_name(ww_setting s) { return s >= 0 && s < WW_SETTING_COUNT ? names[s] : ""; }

const char *ww_setting_value(ww_setting s)
{
    if (s < 0 || s >= WW_SETTING_COUNT)
        return NULL;
    const char *v = getenv(names[s]);
    return v && *v ? v : NULL;
}
