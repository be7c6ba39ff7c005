/* The generic CPU engines (pair_engines.inc: reference, band, strip; pairwise_lanes.inc: the
 * matrix's lanes) instantiated for soft-DTW, in a translation unit of their own: it is compiled
 * with -fno-trapping-math (CMakeLists.txt), which lets gcc vectorise the soft minimum's selects,
 * without touching TWED's and DTW's code in pair.c and pairwise.c. */
#include "pair_engine.h"
#include "pairwise_lanes.h"

#define WW_ENGINE_SOFTDTW_ONLY
#define WW_ENGINE_TEMPLATE "../cpu/pair_engines.inc" /* relative to for_each_measure.h */
#include "../measures/for_each_measure.h"
#undef WW_ENGINE_TEMPLATE
#define WW_ENGINE_TEMPLATE "../cpu/pairwise_lanes.inc"
#include "../measures/for_each_measure.h"
#undef WW_ENGINE_TEMPLATE
#undef WW_ENGINE_SOFTDTW_ONLY

double ww_cpu_pair_engine_softdtw(ww_engine engine, const ww_measure *m, const ww_prepared *a, const ww_prepared *b,
                                  double *work)
{
    return pair_engine_softdtw(engine, m, a, b, work);
}

void ww_cpu_lanes_softdtw(const ww_prepared *a, const lane_group *g, const ww_coef_f64 *c, lane_band *band,
                          lane_rows *rw, double *out)
{
    lanes_softdtw(a, g, c, band, rw, out);
}
