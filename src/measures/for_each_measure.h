/* Includes WW_ENGINE_TEMPLATE once per measure of WW_FOR_EACH_MEASURE, with WW_M and WW_MU set
 * to the measure's tokens (an engine template names its instances WW_CAT(name_, WW_M), calls the
 * measure through WW_MEASURE_FN(WW_M, ...) and reads its traits as WW_MEASURE_TRAIT(WW_MU, ...)).
 * No include guard on purpose. Keep the list in step with WW_FOR_EACH_MEASURE (measures.h). */
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
#define WW_M softdtw
#define WW_MU SOFTDTW
#include WW_ENGINE_TEMPLATE
#undef WW_M
#undef WW_MU
