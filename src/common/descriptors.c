/* Series and dataset descriptors: constructors and checks. */
#include "internal.h"
#include "../measures/twed.h" /* ww_stamp_ok */

#include <math.h>
#include <string.h>

ww_series ww_series_f64(const double *values, const double *stamps, size_t length, size_t dim)
{
    ww_series s = {values, stamps, length, dim, WW_F64, WW_HOST};
    return s;
}

ww_series ww_series_f32(const float *values, const float *stamps, size_t length, size_t dim)
{
    ww_series s = {values, stamps, length, dim, WW_F32, WW_HOST};
    return s;
}

ww_dataset ww_dataset_f64(const double *values, const double *stamps, const size_t *offsets,
                          size_t count, size_t length, size_t dim)
{
    ww_dataset d = {values, stamps, offsets, count, length, dim, WW_F64, WW_HOST};
    return d;
}

ww_dataset ww_dataset_f32(const float *values, const float *stamps, const size_t *offsets,
                          size_t count, size_t length, size_t dim)
{
    ww_dataset d = {values, stamps, offsets, count, length, dim, WW_F32, WW_HOST};
    return d;
}

static size_t dtype_size(ww_dtype t) { return t == WW_F32 ? sizeof(float) : sizeof(double); }

ww_status ww_check_series_shape(const ww_series *s)
{
    if (s == NULL)
        return WW_ERR_NULL_POINTER;
    if (s->dtype != WW_F64 && s->dtype != WW_F32)
        return WW_ERR_DTYPE;
    if (s->memory != WW_HOST && s->memory != WW_DEVICE)
        return WW_ERR_MEMORY_KIND;
    if (s->length == 0)
        return WW_ERR_EMPTY;
    if (s->dim == 0)
        return WW_ERR_SHAPE;
    if (s->values == NULL)
        return WW_ERR_NULL_POINTER;
    /* length + 1 and dim + 2 must not wrap around before the products are checked */
    size_t n;
    if (s->length > SIZE_MAX - 1 || s->dim > SIZE_MAX - 2 ||
        !ww_mul_size(s->length + 1, s->dim + 2, &n) || !ww_mul_size(n, sizeof(double), &n))
        return WW_ERR_OVERFLOW;
    return WW_OK;
}

ww_status ww_check_dataset_shape(const ww_dataset *x)
{
    if (x == NULL)
        return WW_ERR_NULL_POINTER;
    if (x->dtype != WW_F64 && x->dtype != WW_F32)
        return WW_ERR_DTYPE;
    if (x->memory != WW_HOST && x->memory != WW_DEVICE)
        return WW_ERR_MEMORY_KIND;
    if (x->count == 0)
        return WW_ERR_EMPTY;
    if (x->dim == 0)
        return WW_ERR_SHAPE;
    if (x->values == NULL)
        return WW_ERR_NULL_POINTER;
    /* The CPU engines prepare (samples + count) * (dim + 2) doubles: that many bytes must fit. */
    if (x->dim > SIZE_MAX - 2)
        return WW_ERR_OVERFLOW;
    if (x->offsets == NULL) {
        if (x->length == 0)
            return WW_ERR_EMPTY;
        size_t total;
        if (!ww_mul_size(x->count, x->length, &total) || total > SIZE_MAX - x->count ||
            !ww_mul_size(total + x->count, x->dim + 2, &total) ||
            !ww_mul_size(total, sizeof(double), &total))
            return WW_ERR_OVERFLOW;
        return WW_OK;
    }
    if (x->offsets[0] != 0)
        return WW_ERR_SHAPE;
    for (size_t i = 0; i < x->count; i++) {
        if (x->offsets[i + 1] < x->offsets[i])
            return WW_ERR_SHAPE;
        if (x->offsets[i + 1] == x->offsets[i])
            return WW_ERR_EMPTY;
    }
    size_t total = x->offsets[x->count];
    if (total > SIZE_MAX - x->count || !ww_mul_size(total + x->count, x->dim + 2, &total) ||
        !ww_mul_size(total, sizeof(double), &total))
        return WW_ERR_OVERFLOW;
    return WW_OK;
}

ww_status ww_check_values_host(const void *values, const void *stamps, size_t length, size_t dim,
                               ww_dtype dtype)
{
    size_t n = length * dim;
    if (dtype == WW_F64) {
        const double *v = (const double *)values;
        for (size_t i = 0; i < n; i++)
            if (!isfinite(v[i]))
                return WW_ERR_NONFINITE;
        if (stamps) {
            const double *t = (const double *)stamps;
            for (size_t i = 0; i < length; i++)
                if (!ww_stamp_ok_f64(t[i]) || (i > 0 && t[i] < t[i - 1]))
                    return WW_ERR_STAMPS;
        }
    } else {
        const float *v = (const float *)values;
        for (size_t i = 0; i < n; i++)
            if (!isfinite(v[i]))
                return WW_ERR_NONFINITE;
        if (stamps) {
            const float *t = (const float *)stamps;
            for (size_t i = 0; i < length; i++)
                if (!ww_stamp_ok_f32(t[i]) || (i > 0 && t[i] < t[i - 1]))
                    return WW_ERR_STAMPS;
        }
    }
    return WW_OK;
}

ww_status ww_dataset_series(const ww_dataset *x, size_t i, ww_series *out)
{
    if (x == NULL || out == NULL)
        return WW_ERR_NULL_POINTER;
    if (i >= x->count)
        return WW_ERR_SHAPE;
    size_t begin = x->offsets ? x->offsets[i] : i * x->length;
    size_t end = x->offsets ? x->offsets[i + 1] : (i + 1) * x->length;
    if (end < begin)
        return WW_ERR_SHAPE;
    size_t es = dtype_size(x->dtype);
    out->values = (const char *)x->values + begin * x->dim * es;
    out->stamps = x->stamps ? (const char *)x->stamps + begin * es : NULL;
    out->length = end - begin;
    out->dim = x->dim;
    out->dtype = x->dtype;
    out->memory = x->memory;
    return WW_OK;
}

ww_status ww_series_check(const ww_series *s)
{
    ww_status st = ww_check_series_shape(s);
    if (st != WW_OK)
        return st;
    if (s->memory != WW_HOST)
        return WW_ERR_MEMORY_KIND;
    return ww_check_values_host(s->values, s->stamps, s->length, s->dim, s->dtype);
}

ww_status ww_dataset_check(const ww_dataset *x)
{
    ww_status st = ww_check_dataset_shape(x);
    if (st != WW_OK)
        return st;
    if (x->memory != WW_HOST)
        return WW_ERR_MEMORY_KIND;
    return ww_check_dataset_values(x);
}


ww_status ww_check_dataset_values(const ww_dataset *x)
{
    for (size_t i = 0; i < x->count; i++) {
        ww_series s;
        ww_dataset_series(x, i, &s);
        ww_status st = ww_check_values_host(s.values, s.stamps, s.length, s.dim, s.dtype);
        if (st != WW_OK)
            return st;
    }
    return WW_OK;
}

uint64_t ww_dataset_samples(const ww_dataset *x)
{
    return x->offsets ? (uint64_t)x->offsets[x->count] : (uint64_t)x->count * x->length;
}

ww_pairwise_options ww_pairwise_options_default(void)
{
    ww_pairwise_options o;
    memset(&o, 0, sizeof o);
    o.out_dtype = WW_F64;
    return o;
}

ww_status ww_resolve_pairwise(const ww_dataset *x, const ww_dataset *y,
                                  const ww_pairwise_options *in, ww_pairwise_options *out)
{
    ww_status st = ww_check_dataset_shape(x);
    if (st != WW_OK)
        return st;
    if (y) {
        st = ww_check_dataset_shape(y);
        if (st != WW_OK)
            return st;
        if (y->dim != x->dim)
            return WW_ERR_SHAPE;
        if (y->dtype != x->dtype)
            return WW_ERR_DTYPE;
    }
    *out = in ? *in : ww_pairwise_options_default();
    size_t rows = x->count, cols = y ? y->count : x->count;
    if (out->row_end == 0)
        out->row_end = rows;
    if (out->col_end == 0)
        out->col_end = cols;
    if (out->row_begin >= out->row_end || out->row_end > rows || out->col_begin >= out->col_end ||
        out->col_end > cols)
        return WW_ERR_SHAPE;
    size_t width = out->col_end - out->col_begin;
    if (out->out_stride == 0)
        out->out_stride = width;
    if (out->out_stride < width)
        return WW_ERR_SHAPE;
    if (out->out_dtype != WW_F64 && out->out_dtype != WW_F32)
        return WW_ERR_DTYPE;
    size_t cells;
    if (!ww_mul_size(out->row_end - out->row_begin, out->out_stride, &cells) ||
        !ww_mul_size(cells, sizeof(double), &cells))
        return WW_ERR_OVERFLOW;
    return WW_OK;
}

