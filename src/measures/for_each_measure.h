/* Includes WW_ENGINE_TEMPLATE once per measure of WW_FOR_EACH_MEASURE, with WW_M and WW_MU set
 * to the measure's tokens (an engine template names its instances WW_CAT(name_, WW_M), calls the
 * measure through WW_MEASURE_FN(WW_M, ...) and reads its traits as WW_MEASURE_TRAIT(WW_MU, ...)).
 * No include guard on purpose. Keep the list in step with WW_FOR_EACH_MEASURE (measures.h). */
#ifndef WW_ENGINE_SOFTDTW_ONLY
#define WW_M twed
#define WW_MU TWED
#include WW_ENGINE_TEMPLATE
#undef WW_M
#undef WW_MU
#define WW_M dtw
#define WW_MU DTW
#include WW_ENGINE_TEMPLATE
#undef WW_M
#undef WW_MU
#endif
/* soft-DTW's instances live in a translation unit of their own (src/cpu/softdtw_engines.c, built
 * with the flag that lets its soft minimum vectorise) when WW_ENGINE_SOFTDTW_ELSEWHERE is set;
 * WW_ENGINE_SOFTDTW_ONLY instantiates them alone. */
#ifndef WW_ENGINE_SOFTDTW_ELSEWHERE
#define WW_M softdtw
#define WW_MU SOFTDTW
#include WW_ENGINE_TEMPLATE
#undef WW_M
#undef WW_MU
#endif
