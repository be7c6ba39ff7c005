/* CPU engine of soft-DTW gradients: the forward table row by row, then the backward recursion of
 * the expected alignment E (Cuturi and Blondel 2017, algorithm 2) from the last cell to the first,
 * the gradients gathered on the way. The cell and the backward weight are the measure's
 * (src/measures/softdtw.h); this file only schedules them.
 *
 * Memory: R is needed row by row in reverse. With keep >= na every row is stored (the compact
 * table, (na + 1)(nb + 1) doubles). Otherwise the forward pass stores every keep-th row (the
 * checkpoints) and the backward pass recomputes the keep rows of each segment from its checkpoint
 * before walking them: about (na / keep + keep)(nb + 1) doubles, O(nb sqrt(na)) with
 * keep = sqrt(na), for a second forward pass. The recomputed rows are the same operations on the
 * same inputs, so both give the same bits. Only E's two current rows are kept. */
#include "cpu_common.h"

#include <string.h>

/* Row i (1..na) of R from row i - 1: the window's columns, +inf elsewhere (column 0 too). */
static void forward_row(const ww_prepared *a, const ww_prepared *b, const ww_coef_f64 *c, const ww_pair_window *w,
                        size_t i, const double *prev, double *row)
{
    const size_t na = a->length, nb = b->length, dim = a->dim;
    size_t lo, hi;
    ww_pair_window_row(w, na, nb, i, &lo, &hi);
    for (size_t j = 0; j < lo; j++)
        row[j] = WW_INF;
    const double *x = ww_sample(a, i);
    for (size_t j = lo; j <= hi; j++) {
        const double cost = ww_softdtw_local_f64(x, ww_sample(b, j), dim, 0, 0, c);
        row[j] = ww_softdtw_cell_f64(prev[j], row[j - 1], prev[j - 1], 0, 0, cost, 0, c);
    }
    for (size_t j = hi + 1; j <= nb; j++)
        row[j] = WW_INF;
}

static void first_row(size_t nb, double *row)
{
    row[0] = 0.0;
    for (size_t j = 1; j <= nb; j++)
        row[j] = WW_INF;
}

size_t ww_cpu_softdtw_work_doubles(size_t na, size_t nb, size_t keep)
{
    if (keep < 1)
        keep = 1;
    if (keep > na)
        keep = na;
    const size_t checkpoints = na / keep + 1;
    size_t rows = checkpoints + keep + 3, total;
    if (!ww_mul_size(rows, nb + 2, &total))
        return 0;
    return total;
}

double ww_cpu_softdtw_gradient(const ww_measure *m, const ww_prepared *a, const ww_prepared *b, size_t keep,
                               double scale, double *grad_a, double *grad_b, double *work)
{
    const size_t na = a->length, nb = b->length, dim = a->dim, wd = nb + 2;
    const ww_coef_f64 c = ww_measure_coef_f64(m);
    const ww_pair_window w = ww_pair_window_of(m, na, nb);
    if (keep < 1)
        keep = 1;
    if (keep > na)
        keep = na;
    const size_t checkpoints = na / keep + 1; /* rows 0, keep, 2 keep, ... */
    double *ckpt = work;                      /* checkpoint k: row k * keep */
    double *seg = ckpt + checkpoints * wd;    /* segment row s: row base + 1 + s */
    double *r_next = seg + keep * wd;         /* R of the row below the one walked back */
    double *e_next = r_next + wd, *e_cur = e_next + wd;

    /* forward: the checkpoints (with a single segment, only row 0) */
    first_row(nb, ckpt);
    double value;
    if (checkpoints > 1) {
        double *prev = seg, *cur = seg + wd; /* two rolling rows in the segment buffer */
        memcpy(prev, ckpt, wd * sizeof(double));
        for (size_t i = 1; i <= na; i++) {
            forward_row(a, b, &c, &w, i, prev, cur);
            if (i % keep == 0)
                memcpy(ckpt + (i / keep) * wd, cur, wd * sizeof(double));
            double *t = prev;
            prev = cur;
            cur = t;
        }
        value = prev[nb];
    } else {
        value = NAN; /* from the segment below */
    }

    /* backward, segment by segment from the last: rows (base, base + keep] */
    for (size_t j = 0; j < wd; j++)
        e_next[j] = 0.0, r_next[j] = WW_INF;
    for (size_t segment = (na - 1) / keep + 1; segment-- > 0;) {
        const size_t base = segment * keep;
        const size_t end = base + keep < na ? base + keep : na;
        const double *prev = ckpt + (base / keep) * wd;
        for (size_t i = base + 1; i <= end; i++) {
            double *row = seg + (i - base - 1) * wd;
            forward_row(a, b, &c, &w, i, prev, row);
            prev = row;
        }
        if (end == na && checkpoints == 1)
            value = seg[(end - base - 1) * wd + nb];
        for (size_t i = end; i > base; i--) {
            const double *r = seg + (i - base - 1) * wd;
            const double *x = ww_sample(a, i), *x_next = i < na ? ww_sample(a, i + 1) : NULL;
            size_t lo, hi;
            ww_pair_window_row(&w, na, nb, i, &lo, &hi);
            for (size_t j = 0; j < wd; j++)
                e_cur[j] = 0.0;
            double ga[64], *gacc = dim <= 64 ? ga : NULL; /* grad of sample i, accumulated */
            if (gacc)
                for (size_t k = 0; k < dim; k++)
                    gacc[k] = 0.0;
            for (size_t j = hi; j >= lo; j--) {
                double e;
                if (i == na && j == nb) {
                    e = 1.0;
                } else {
                    const double here = r[j];
                    const double *y = ww_sample(b, j);
                    /* successors: below (i + 1, j), right (i, j + 1), diagonal (i + 1, j + 1) */
                    const int below_in = i < na && r_next[j] < WW_INF;
                    const int right_in = j < nb && r[j + 1] < WW_INF;
                    const int diag_in = i < na && j < nb && r_next[j + 1] < WW_INF;
                    const double cost_below = below_in ? ww_softdtw_local_f64(x_next, y, dim, 0, 0, &c) : 0.0;
                    const double cost_right = right_in ? ww_softdtw_local_f64(x, ww_sample(b, j + 1), dim, 0, 0, &c) : 0.0;
                    const double cost_diag =
                        diag_in ? ww_softdtw_local_f64(x_next, ww_sample(b, j + 1), dim, 0, 0, &c) : 0.0;
                    e = (below_in ? e_next[j] * ww_softdtw_back_weight_f64(r_next[j], here, cost_below, c.inv_gamma, 1)
                                  : 0.0) +
                        (right_in ? e_cur[j + 1] * ww_softdtw_back_weight_f64(r[j + 1], here, cost_right, c.inv_gamma, 1)
                                  : 0.0) +
                        (diag_in ? e_next[j + 1] *
                                       ww_softdtw_back_weight_f64(r_next[j + 1], here, cost_diag, c.inv_gamma, 1)
                                 : 0.0);
                }
                e_cur[j] = e;
                if (e != 0.0) {
                    const double *y = ww_sample(b, j);
                    const double f = 2.0 * scale * e;
                    for (size_t k = 0; k < dim; k++) {
                        const double g = f * (x[k] - y[k]);
                        if (grad_a) {
                            if (gacc)
                                gacc[k] += g;
                            else
                                grad_a[(i - 1) * dim + k] += g;
                        }
                        if (grad_b)
                            grad_b[(j - 1) * dim + k] -= g;
                    }
                }
                if (j == lo)
                    break;
            }
            if (grad_a && gacc)
                for (size_t k = 0; k < dim; k++)
                    grad_a[(i - 1) * dim + k] += gacc[k];
            memcpy(r_next, r, wd * sizeof(double));
            double *t = e_next;
            e_next = e_cur;
            e_cur = t;
        }
    }
    return value;
}
