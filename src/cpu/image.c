/* CPU engine of elastic image matching: the row-pair DPAs of a row of x against the same row of
 * LANES column images of one size side by side (SIMD across images, image_group), or for a single
 * pair and tall images against LANES rows of y (SIMD across row pairs, image_rows); then the outer
 * DPA over the row distances; many pairs over all cores. The kernels are in image_lanes.inc,
 * written once for float and double: u8 and f32 pixels are computed in float, f64 in double. */
#include "cpu_common.h"
#include "../common/image_internal.h"
#include "../measures/dpa.h"
#include "work_queue.h"

#include <stdlib.h>
#include <string.h>


#define LANES 16      /* rows of y per step: two AVX2 vectors of floats (8 lanes were slower: gcc unrolls them whole) */
/* Row pairs of a group side by side in one call of the lanes (image_lanes_body's sets) */
#define IMAGE_SETS 2
#define COLS_PER_ITEM LANES /* pairs of one row of the matrix per work item: a group's worth */
/* Columns of one size up to this many rows go by groups of LANES images side by side (image_group):
 * every lane then computes the same row pair (i, j) of another image, all lanes busy, where by rows
 * (image_rows) a row of x meets only the band of y's rows a path can use, about a third of them,
 * and the lanes past it idle. Measured on one core (u8, 1 and 3 channels): 1.4x at 28 x 28, 1.7x
 * at 40 x 40, 1.45x at 64 x 64, 1.25x at 100 x 100. Above it a group's row distances (2 LANES h1 h2
 * per thread) pass a few MB, and the band holds enough rows to fill the lanes. */
#define GROUP_MAX_HEIGHT 128
/* Pixels of up to this many components are copied to the stack in the lanes' loop (see there). */
#define IMAGE_LANES_MAX_CHANNELS 4

/* Groups of images exactly this many pixels wide (x's too) go through image_lanes_fixed: a row pair's
 * DP unrolled whole, in registers (at 8 x 8 a call's fixed costs weigh most; its D rows to clear
 * after each call cost as many stores as its cells). */
#define IMAGE_FIXED_WIDTH 8
#define IMAGE_FIXED_MAX_WIDTH 8 /* image_lanes_fixed's arrays */
#if defined(__GNUC__)
#define IMAGE_NOINLINE __attribute__((noinline))
#else
#define IMAGE_NOINLINE
#endif

/* Does a path from (0, 0) to (w-1, w-1) of a w x w DPA visit cell (i, j)? When one reaches it from
 * (0, 0) and one leads from it to the end (ww_dpa_feasible both ways); such cells lie in the band of
 * ww_dpa_band_row, as do the intermediate cells of the bent moves between two of them (both checked
 * against the DP over the band for all sizes up to 100 x 100). */
static inline int image_on_path(long long i, long long j, long long w)
{
    return i >= 0 && j >= 0 && i < w && j < w && ww_dpa_feasible(i + 1, j + 1) && ww_dpa_feasible(w - i, w - j);
}

/* Bytes k0 .. k0 + 15 of 16 images (src[l] + k0) transposed: out[k][l] = src[l][k0 + k]. Turning the
 * stored u8 images into a group's layout (component-major, 16 images side by side) byte by byte cost
 * 12-15% of a query at 8 x 8; four rounds of interleaving rows i and i + 8 byte by byte (the perfect
 * shuffle, log2 16 times) transpose the 16 x 16 block in vector registers. */
#if defined(__GNUC__) && (defined(__clang__) || __GNUC__ >= 12)
typedef unsigned char image_bytes16 __attribute__((vector_size(16)));
static inline void image_transpose_bytes16(const unsigned char *const src[16], size_t k0, unsigned char out[16][16])
{
    image_bytes16 v[16], t[16];
#pragma GCC unroll 16
    for (int l = 0; l < 16; l++)
        memcpy(&v[l], src[l] + k0, 16);
#pragma GCC unroll 4
    for (int round = 0; round < 4; round++) {
#pragma GCC unroll 8
        for (int i = 0; i < 8; i++) {
            t[2 * i] = __builtin_shufflevector(v[i], v[i + 8], 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
            t[2 * i + 1] =
                __builtin_shufflevector(v[i], v[i + 8], 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
        }
#pragma GCC unroll 16
        for (int l = 0; l < 16; l++)
            v[l] = t[l];
    }
#pragma GCC unroll 16
    for (int l = 0; l < 16; l++)
        memcpy(out[l], &v[l], 16);
}
#else
static inline void image_transpose_bytes16(const unsigned char *const src[16], size_t k0, unsigned char out[16][16])
{
    for (int k = 0; k < 16; k++)
        for (int l = 0; l < 16; l++)
            out[k][l] = src[l][k0 + (size_t)k];
}
#endif

#define WW_REAL double
#define WW_T(name) name##_f64
#define WW_FABS fabs
#define WW_SQRT sqrt
#define WW_FMA fma
#define WW_REAL_INF ((double)INFINITY)
#define IMAGE_CHUNK 4 /* lanes of image_lanes_fixed: one AVX2 vector */
#include "image_lanes.inc"
#undef WW_REAL
#undef WW_T
#undef WW_FABS
#undef WW_SQRT
#undef WW_FMA
#undef WW_REAL_INF
#undef IMAGE_CHUNK

#define WW_REAL float
#define WW_T(name) name##_f32
#define WW_FABS fabsf
#define WW_SQRT sqrtf
#define WW_FMA fmaf
#define WW_REAL_INF INFINITY
#define IMAGE_CHUNK 8
#include "image_lanes.inc"
#undef WW_REAL
#undef WW_T
#undef WW_FABS
#undef WW_SQRT
#undef WW_FMA
#undef WW_REAL_INF
#undef IMAGE_CHUNK

/* One call's images converted: x row-major, y interleaved (x itself for a self matrix). */
typedef struct image_job {
    const ww_image *x, *y;
    size_t nx, ny;
    int self, squared, wide; /* wide: computed in double */
    size_t elem;             /* bytes of WW_REAL */
    char *x_rows, *y_lanes;
    size_t *x_off, *y_off; /* element offsets into x_rows, y_lanes */
    size_t work_elems, r_elems, wcap; /* wcap: the widest column image (the lanes' scratch layout) */
    /* groups: a run of 2 to LANES columns of one size, at most GROUP_MAX_HEIGHT rows, inside one
     * item's columns; group_of[j - col_begin] is the group of column j or -1. group_r_elems: a
     * group's row distances (LANES h1 h2) at most. */
    long *group_of;
    size_t *group_first, *group_count, *group_off, groups, group_r_elems;
    /* u8_norms: every image u8 (computed in float) with 3 channels, on a CPU with fused multiply-adds:
     * groups IMAGE_FIXED_WIDTH wide carry |y|^2 of their pixels after them (at group_norms[g]; for
     * image_local_u8) */
    int u8_norms;
    size_t *group_norms;
    char *group_pixels;
    const ww_pairwise_options *o;
    void *out;
} image_job;

static int any_f64(const ww_image *a, size_t na, const ww_image *b, size_t nb)
{
    for (size_t k = 0; k < na; k++)
        if (a[k].dtype == WW_F64)
            return 1;
    for (size_t k = 0; b && k < nb; k++)
        if (b[k].dtype == WW_F64)
            return 1;
    return 0;
}

static int all_u8(const ww_image *a, size_t na, const ww_image *b, size_t nb)
{
    for (size_t k = 0; k < na; k++)
        if (a[k].dtype != WW_U8)
            return 0;
    for (size_t k = 0; b && k < nb; k++)
        if (b[k].dtype != WW_U8)
            return 0;
    return na > 0;
}

/* Fused multiply-adds in hardware (image_local_u8 calls fmaf: one instruction in the multiversioned
 * clones that run on such CPUs, a library call in the baseline clone, which runs only where they
 * cannot; there this keeps the plain path). */
static int cpu_has_fma(void)
{
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    return __builtin_cpu_supports("fma") && __builtin_cpu_supports("avx2");
#else
    return 1;
#endif
}

static size_t image_pixels(const ww_image *img) { return img->height * img->width * img->channels; }
static size_t image_lane_elems(const ww_image *img) { return img->width * img->channels * (img->height + LANES - 1); }

/* Is y image k a column of the block that goes in a group (then it needs no interleaved rows)? */
static int column_grouped(const image_job *job, size_t k)
{
    const ww_pairwise_options *o = job->o;
    return k >= o->col_begin && k < o->col_end && job->group_of[k - o->col_begin] >= 0;
}

/* Converts x (row-major) and the column images that go by rows (interleaved) into one allocation;
 * after job_groups. */
static ww_status job_prepare(image_job *job)
{
    size_t xe = 0, ye = 0, wmax = 0, hx = 0, hy = 0, wx = 0, tmp = 0;
    for (size_t k = 0; k < job->nx; k++) {
        xe += image_pixels(&job->x[k]);
        hx = job->x[k].height > hx ? job->x[k].height : hx;
        wx = job->x[k].width > wx ? job->x[k].width : wx;
    }
    for (size_t k = 0; k < job->ny; k++) {
        ye += column_grouped(job, k) ? 0 : image_lane_elems(&job->y[k]);
        hy = job->y[k].height > hy ? job->y[k].height : hy;
        wmax = job->y[k].width > wmax ? job->y[k].width : wmax;
        tmp = image_pixels(&job->y[k]) > tmp ? image_pixels(&job->y[k]) : tmp;
    }
    (void)wx;
    job->wcap = wmax;
    job->work_elems = (3 * (wmax + 2) + 2 * (wmax + 1)) * IMAGE_SETS * LANES + IMAGE_SETS * LANES;
    job->r_elems = hx * hy;
    const size_t total = xe + ye + tmp;
    job->x_off = (size_t *)malloc((job->nx + job->ny) * sizeof(size_t));
    job->x_rows = (char *)malloc(total * job->elem);
    if (job->x_off == NULL || job->x_rows == NULL) /* job_free frees what was allocated */
        return WW_ERR_MEMORY;
    job->y_off = job->x_off + job->nx;
    job->y_lanes = job->x_rows + xe * job->elem;
    char *scratch = job->y_lanes + ye * job->elem;
    size_t at = 0;
    for (size_t k = 0; k < job->nx; k++) {
        job->x_off[k] = at;
        if (job->wide)
            image_convert_f64(&job->x[k], (double *)job->x_rows + at);
        else
            image_convert_f32(&job->x[k], (float *)job->x_rows + at);
        at += image_pixels(&job->x[k]);
    }
    at = 0;
    for (size_t k = 0; k < job->ny; k++) {
        job->y_off[k] = at;
        if (column_grouped(job, k))
            continue;
        if (job->wide) {
            image_convert_f64(&job->y[k], (double *)scratch);
            image_interleave_f64((const double *)scratch, &job->y[k], (double *)job->y_lanes + at);
        } else {
            image_convert_f32(&job->y[k], (float *)scratch);
            image_interleave_f32((const float *)scratch, &job->y[k], (float *)job->y_lanes + at);
        }
        at += image_lane_elems(&job->y[k]);
    }
    return WW_OK;
}

/* Does group g carry |y|^2 of its pixels (image_local_u8)? */
static int group_has_norms(const image_job *job, size_t g)
{
    return job->u8_norms && job->y[job->group_first[g]].width == IMAGE_FIXED_WIDTH;
}

/* The groups of the block's columns (see image_job), their interleaved pixels in one allocation. */
static ww_status job_groups(image_job *job)
{
    const ww_pairwise_options *o = job->o;
    const size_t cols = o->col_end - o->col_begin;
    job->group_of = (long *)malloc(cols * sizeof(long));
    job->group_first = (size_t *)malloc(3 * (cols + 1) * sizeof(size_t));
    if (job->group_of == NULL || job->group_first == NULL)
        return WW_ERR_MEMORY;
    job->group_count = job->group_first + cols + 1;
    job->group_off = job->group_count + cols + 1;
    job->group_norms = (size_t *)malloc((cols + 1) * sizeof(size_t));
    if (job->group_norms == NULL)
        return WW_ERR_MEMORY;
    size_t elems = 0, biggest = 0, hx = 0;
    for (size_t k = 0; k < job->nx; k++)
        hx = job->x[k].height > hx ? job->x[k].height : hx;
    for (size_t c0 = 0; c0 < cols; c0 += COLS_PER_ITEM) {
        const size_t c1 = c0 + COLS_PER_ITEM < cols ? c0 + COLS_PER_ITEM : cols;
        for (size_t a = c0; a < c1;) {
            const ww_image *first = &job->y[o->col_begin + a];
            size_t b = a + 1;
            while (b < c1 && job->y[o->col_begin + b].height == first->height &&
                   job->y[o->col_begin + b].width == first->width)
                b++;
            const int grouped = b - a >= 2 && first->height <= GROUP_MAX_HEIGHT;
            for (size_t k = a; k < b; k++)
                job->group_of[k] = grouped ? (long)job->groups : -1;
            if (grouped) {
                const size_t per = first->height * first->width * first->channels;
                job->group_first[job->groups] = o->col_begin + a;
                job->group_count[job->groups] = b - a;
                job->group_off[job->groups] = elems;
                elems += per * LANES;
                job->group_norms[job->groups] = elems;
                if (job->u8_norms && first->width == IMAGE_FIXED_WIDTH)
                    elems += first->height * first->width * LANES;
                /* x images of more than 2 h2 - 1 rows admit no path: image_group writes no r then */
                const size_t h1 = hx < 2 * first->height - 1 ? hx : 2 * first->height - 1;
                if (LANES * h1 * first->height > job->group_r_elems)
                    job->group_r_elems = LANES * h1 * first->height;
                biggest = per > biggest ? per : biggest;
                job->groups++;
            }
            a = b;
        }
    }
    if (job->groups == 0)
        return WW_OK;
    job->group_pixels = (char *)malloc((elems + biggest) * job->elem);
    if (job->group_pixels == NULL)
        return WW_ERR_MEMORY;
    char *scratch = job->group_pixels + elems * job->elem;
    for (size_t g = 0; g < job->groups; g++) {
        const ww_image *imgs = &job->y[job->group_first[g]];
        if (job->wide)
            image_group_interleave_f64(imgs, job->group_count[g], (double *)scratch,
                                       (double *)job->group_pixels + job->group_off[g]);
        else
            image_group_interleave_f32(imgs, job->group_count[g], (float *)scratch,
                                       (float *)job->group_pixels + job->group_off[g]);
        if (group_has_norms(job, g))
            image_group_norms_f32((const float *)job->group_pixels + job->group_off[g],
                                  imgs[0].height * imgs[0].width, (float *)job->group_pixels + job->group_norms[g]);
    }
    return WW_OK;
}

static void job_free(image_job *job)
{
    free(job->group_norms);
    free(job->x_off);
    free(job->x_rows);
    free(job->group_of);
    free(job->group_first);
    free(job->group_pixels);
}

/* x image i against group g: the LANES results (lanes past the group's count are padding). */
static void job_group(const image_job *job, size_t i, size_t g, void *work, void *r, void *outer, double *result)
{
    const ww_image *shape = &job->y[job->group_first[g]];
    if (job->wide)
        image_group_f64((const double *)job->x_rows + job->x_off[i], &job->x[i],
                        (const double *)job->group_pixels + job->group_off[g], NULL, shape, job->squared,
                        (double *)work,
                        job->wcap, (double *)r, (double *)outer, result);
    else
        image_group_f32((const float *)job->x_rows + job->x_off[i], &job->x[i],
                        (const float *)job->group_pixels + job->group_off[g],
                        group_has_norms(job, g) ? (const float *)job->group_pixels + job->group_norms[g] : NULL,
                        shape, job->squared, (float *)work,
                        job->wcap, (float *)r, (float *)outer, result);
}

static double job_pair(const image_job *job, size_t i, size_t j, void *work, void *r, void *outer)
{
    if (job->wide)
        return image_pair_f64((const double *)job->x_rows + job->x_off[i], &job->x[i],
                              (const double *)job->y_lanes + job->y_off[j], &job->y[j], job->squared, (double *)work,
                              job->wcap, (double *)r, (double *)outer);
    return image_pair_f32((const float *)job->x_rows + job->x_off[i], &job->x[i],
                          (const float *)job->y_lanes + job->y_off[j], &job->y[j], job->squared, (float *)work,
                          job->wcap, (float *)r, (float *)outer);
}

/* In a self matrix (i, j) is computed when i < j, or when its mirror (j, i) is outside the block. */
static int entry_needed(const image_job *job, size_t i, size_t j)
{
    if (!job->self)
        return 1;
    if (i == j)
        return 0;
    const ww_pairwise_options *o = job->o;
    const int mirror_in_block = j >= o->row_begin && j < o->row_end && i >= o->col_begin && i < o->col_end;
    return i < j || !mirror_in_block;
}

/* Stores entry (i, j); a self matrix's computed entry also to its mirror when that lies in the block. */
static void store(const image_job *job, size_t i, size_t j, double v)
{
    const ww_pairwise_options *o = job->o;
    const size_t at = (i - o->row_begin) * o->out_stride + (j - o->col_begin);
    if (o->out_dtype == WW_F32)
        ((float *)job->out)[at] = (float)v;
    else
        ((double *)job->out)[at] = v;
}

/* A matrix of images as work items: item = (row, chunk of COLS_PER_ITEM columns); a thread's
 * scratch holds the lanes' work, the row distances and the outer DP. */
typedef struct image_matrix_run {
    const image_job *job;
    size_t chunks, r_elems, per_thread;
} image_matrix_run;

static ww_status image_thread_start(void *run_, ww_cpu_scratch *sc)
{
    const image_matrix_run *run = (const image_matrix_run *)run_;
    ww_status s = ww_buffer_reserve(&sc->work, run->per_thread);
    if (s != WW_OK)
        return s;
    if (run->job->wide)
        image_lanes_reset_f64((double *)sc->work.ptr, run->job->wcap);
    else
        image_lanes_reset_f32((float *)sc->work.ptr, run->job->wcap);
    return WW_OK;
}

static ww_status image_matrix_item(void *run_, size_t item, ww_cpu_scratch *sc, uint64_t *cells)
{
    const image_matrix_run *run = (const image_matrix_run *)run_;
    const image_job *job = run->job;
    const ww_pairwise_options *o = job->o;
    char *work = (char *)sc->work.ptr, *r = work + job->work_elems * job->elem, *outer = r + run->r_elems * job->elem;
    double group_result[LANES];
    const size_t i = o->row_begin + item / run->chunks, j0 = o->col_begin + (item % run->chunks) * COLS_PER_ITEM;
    const size_t j1 = j0 + COLS_PER_ITEM < o->col_end ? j0 + COLS_PER_ITEM : o->col_end;
    for (size_t j = j0; j < j1; j++) {
        const long g = job->group_of[j - o->col_begin];
        if (g >= 0) { /* the whole group at its first column, if any of it is needed */
            const size_t first = job->group_first[g], count = job->group_count[g];
            if (j != first)
                continue;
            int any = 0;
            for (size_t l = 0; l < count; l++)
                any |= entry_needed(job, i, first + l);
            if (!any)
                continue;
            job_group(job, i, (size_t)g, work, r, outer, group_result);
            for (size_t l = 0; l < count; l++)
                if (entry_needed(job, i, first + l)) {
                    store(job, i, first + l, group_result[l]);
                    *cells += ww_image_pair_cells(&job->x[i], &job->y[first + l]);
                }
            continue;
        }
        if (!entry_needed(job, i, j))
            continue;
        store(job, i, j, job_pair(job, i, j, work, r, outer));
        *cells += ww_image_pair_cells(&job->x[i], &job->y[j]);
    }
    return WW_OK;
}

ww_status ww_cpu_image_pairwise(ww_ctx *ctx, const ww_image *x, size_t nx, const ww_image *y, size_t ny, int squared,
                                void *out, const ww_pairwise_options *o)
{
    image_job job;
    memset(&job, 0, sizeof job);
    job.self = y == NULL;
    job.x = x;
    job.nx = nx;
    job.y = y ? y : x;
    job.ny = y ? ny : nx;
    job.squared = squared;
    job.wide = any_f64(x, nx, y, ny);
    job.elem = job.wide ? sizeof(double) : sizeof(float);
    job.u8_norms = all_u8(x, nx, y, ny) && x[0].channels == 3 && cpu_has_fma();
    job.o = o;
    job.out = out;
    ww_status st = job_groups(&job);
    if (st == WW_OK)
        st = job_prepare(&job);
    if (st != WW_OK) {
        job_free(&job);
        return st;
    }

    const size_t rows = o->row_end - o->row_begin, cols = o->col_end - o->col_begin;
    const size_t chunks = (cols + COLS_PER_ITEM - 1) / COLS_PER_ITEM, items = rows * chunks;
    uint64_t total = 0;
    for (size_t i = o->row_begin; i < o->row_end; i++)
        for (size_t j = o->col_begin; j < o->col_end; j++)
            if (entry_needed(&job, i, j))
                total += ww_image_pair_cells(&x[i], &job.y[j]);

    image_matrix_run run = {&job, chunks, job.r_elems > job.group_r_elems ? job.r_elems : job.group_r_elems, 0};
    run.per_thread = (job.work_elems + 2 * run.r_elems) * job.elem; /* work, row distances, outer DP */
    const ww_status failure =
        ww_cpu_run_items(ctx, ctx->num_threads, items, total, o, image_thread_start, image_matrix_item, &run);
    job_free(&job);
    if (failure != WW_OK)
        return failure;
    if (job.self)
        ww_matrix_fill_mirror(o, out, ctx->num_threads);
    if (o->progress && o->progress(total, total, o->progress_user))
        return WW_ERR_CANCELLED;
    return WW_OK;
}

/* The map of one pair, in WW_REAL = double or float (the precision of the distance). */
#define IMAGE_MAP(T, R)                                                                                        \
    static ww_status image_map_##T(const ww_image *a, const ww_image *b, int squared, double *distance,         \
                                   size_t *matches, size_t *count)                                              \
    {                                                                                                           \
        const size_t h1 = a->height, w1 = a->width, h2 = b->height, w2 = b->width, ch = a->channels;          \
        const size_t hm = h1 > h2 ? h1 : h2, wm = w1 > w2 ? w1 : w2;                                          \
        const size_t elems = image_pixels(a) + image_pixels(b) + image_lane_elems(b) +                         \
                             image_lanes_work_##T(w2) + LANES + 2 * h1 * h2 + 2 * w1 * w2;                    \
        R *buf = (R *)malloc(elems * sizeof(R));                                                               \
        size_t *path = (size_t *)malloc(2 * (2 * hm + 2 * wm) * sizeof(size_t));                              \
        if (buf == NULL || path == NULL) {                                                                     \
            free(buf);                                                                                          \
            free(path);                                                                                         \
            return WW_ERR_MEMORY;                                                                               \
        }                                                                                                       \
        R *xa = buf, *xb = xa + image_pixels(a), *yt = xb + image_pixels(b), *work = yt + image_lane_elems(b); \
        R *r = work + image_lanes_work_##T(w2) + LANES, *outer = r + h1 * h2, *cost = outer + h1 * h2;        \
        R *inner = cost + w1 * w2;                                                                              \
        image_convert_##T(a, xa);                                                                               \
        image_convert_##T(b, xb);                                                                               \
        image_interleave_##T(xb, b, yt);                                                                        \
        image_lanes_reset_##T(work, w2);                                                                        \
        *distance = image_pair_##T(xa, a, yt, b, squared, work, w2, r, outer);                                 \
        *count = 0;                                                                                             \
        if (*distance < INFINITY) {                                                                             \
            size_t *row_path = path, *pixel_path = path + 2 * (h1 + h2);                                       \
            const size_t rows = dpa_trace_##T(r, outer, h1, h2, row_path);                                    \
            for (size_t k = 0; k < rows; k++) {                                                                 \
                const size_t i = row_path[2 * k], j = row_path[2 * k + 1];                                    \
                const R *ra = xa + i * w1 * ch, *rb = xb + j * w2 * ch;                                        \
                for (size_t n = 0; n < w1; n++)                                                                 \
                    for (size_t m = 0; m < w2; m++)                                                             \
                        cost[n * w2 + m] = ww_dpa_local_##T(ra + n * ch, rb + m * ch, 1, ch, squared);        \
                ww_dpa_full_##T(cost, w1, w2, inner);                                                              \
                const size_t pixels = dpa_trace_##T(cost, inner, w1, w2, pixel_path);                         \
                for (size_t q = 0; q < pixels; q++, (*count)++) {                                               \
                    size_t *e = matches + 4 * *count;                                                           \
                    e[0] = i, e[1] = pixel_path[2 * q], e[2] = j, e[3] = pixel_path[2 * q + 1];                \
                }                                                                                               \
            }                                                                                                   \
        }                                                                                                       \
        free(buf);                                                                                              \
        free(path);                                                                                             \
        return WW_OK;                                                                                           \
    }
IMAGE_MAP(f64, double)
IMAGE_MAP(f32, float)

ww_status ww_cpu_image_map(ww_ctx *ctx, const ww_image *a, const ww_image *b, int squared, double *distance,
                           size_t *matches, size_t *count)
{
    (void)ctx;
    return a->dtype == WW_F64 || b->dtype == WW_F64 ? image_map_f64(a, b, squared, distance, matches, count)
                                                    : image_map_f32(a, b, squared, distance, matches, count);
}
