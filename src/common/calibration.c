/* Calibration files of the GPU cost model: reading, writing and finding them. Compiled in every
 * build (no CUDA here), so that the format is tested on machines without a GPU. The measurement
 * itself is src/cuda/calibrate.cu. */
#define _POSIX_C_SOURCE 200809L /* mkstemp, fsync, fileno, newlocale, uselocale */
#include "internal.h"
#include "settings.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#if defined(__APPLE__)
#include <xlocale.h> /* newlocale, uselocale: in <locale.h> on glibc and musl */
#endif

#define CALIBRATION_FORMAT 1 /* the `format` key; a file of a newer format is refused */
#define MAX_LINE 1024

ww_cuda_model ww_cuda_model_default(void)
{
    /* measured on an H200, 132 SMs (bench/results/gpu-batch.md); an H100 is within the model's
     * precision: the same architecture, a few SMs fewer (which the model takes as a variable) */
    ww_cuda_model m;
    m.thread_cell_seconds = 4.3e-12; /* 0.0703 us per pair of length 128 (16,384 cells) */
    m.warp_step_seconds = 1.5e-7;
    m.grid_pair_seconds = 1.2e-4;
    m.grid_step_seconds = 4.0e-7;
    m.block_step_seconds = 1.1e-7; /* 0.74-0.77 of a warp step with the GPU full (gpu-batch.md) */
    m.thread_max_length = 128;
    /* trees (bench/results/gpu-ted.md, H100 and H200): the warp fastest from 9 x 9 to 65 x 65
     * cells, the thread within a few percent of it below 9 x 9 (and it spends no warp on such a
     * table), tiles from 66 x 66 on with many tables at once; one pair's tables on one block up to
     * 1025 x 1025 (its 1000-node pair 5.93 ms against 6.25 ms with tiles from 514 x 514 on) */
    m.ted_thread_cells = 64;
    m.ted_warp_cells = 4225;
    m.ted_block_cells = 4225;
    m.ted_pair_block_cells = 1050625;
    return m;
}

/* The variables a file may set, by name. A new variable is one line here. */
typedef struct model_key {
    const char *name;
    size_t offset;
    /* accepted range: a time must be positive; thread_max_length may be 0, which gives no
     * (non-empty) pair to the one-thread strategy and so turns it off */
    double min, max;
} model_key;

static const model_key model_keys[] = {
    {"thread_cell_seconds", offsetof(ww_cuda_model, thread_cell_seconds), 1e-18, 1.0},
    {"warp_step_seconds", offsetof(ww_cuda_model, warp_step_seconds), 1e-15, 1.0},
    {"grid_pair_seconds", offsetof(ww_cuda_model, grid_pair_seconds), 1e-9, 10.0},
    {"grid_step_seconds", offsetof(ww_cuda_model, grid_step_seconds), 1e-12, 1.0},
    {"block_step_seconds", offsetof(ww_cuda_model, block_step_seconds), 1e-15, 1.0},
    {"thread_max_length", offsetof(ww_cuda_model, thread_max_length), 0.0, 1e9},
    {"ted_thread_cells", offsetof(ww_cuda_model, ted_thread_cells), 0.0, 1e15},
    {"ted_warp_cells", offsetof(ww_cuda_model, ted_warp_cells), 0.0, 1e15},
    {"ted_block_cells", offsetof(ww_cuda_model, ted_block_cells), 0.0, 1e15},
    {"ted_pair_block_cells", offsetof(ww_cuda_model, ted_pair_block_cells), 0.0, 1e15},
};
#define MODEL_KEY_COUNT (sizeof model_keys / sizeof model_keys[0])

static double *model_field(ww_cuda_model *m, const model_key *k) { return (double *)((char *)m + k->offset); }

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
    return s;
}

/* Numbers are read and written in the "C" locale whatever LC_NUMERIC the program set: strtod and
 * printf follow it, and under de_DE they would write "1,5e-07" and refuse every file written with
 * '.' (the files are shared between machines and programs). The calling thread alone switches, for
 * the duration of one parse or format (uselocale; POSIX 2008: glibc, musl, macOS). */
typedef struct c_numeric {
    locale_t c, previous;
} c_numeric;

static int c_numeric_enter(c_numeric *g)
{
    g->c = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    if (g->c == (locale_t)0)
        return 0;
    g->previous = uselocale(g->c);
    if (g->previous == (locale_t)0) {
        freelocale(g->c);
        g->c = (locale_t)0;
        return 0;
    }
    return 1;
}

static void c_numeric_leave(c_numeric *g)
{
    if (g->c != (locale_t)0) {
        uselocale(g->previous);
        freelocale(g->c);
    }
}

static int parse_number(const char *text, double *out)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(text, &end);
    if (*text == '\0' || *end != '\0' || errno == ERANGE || !isfinite(v))
        return 0;
    *out = v;
    return 1;
}

static ww_status parse_text(const char *text, const char *gpu_name, int sm_count, ww_cuda_model *model,
                            int *applies)
{
    /* parsed into a copy: a malformed or foreign file leaves the caller's model as it was */
    ww_cuda_model parsed = *model;
    char file_gpu[MAX_LINE] = "";
    double file_sm = -1, format = -1;
    int have_gpu = 0;
    const char *p = text;
    while (*p) {
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        if (len >= MAX_LINE)
            return WW_ERR_CALIBRATION;
        char line[MAX_LINE];
        memcpy(line, p, len);
        line[len] = '\0';
        p += len + (eol ? 1 : 0);
        char *s = trim(line);
        if (*s == '\0' || *s == '#')
            continue;
        char *eq = strchr(s, '=');
        if (eq == NULL)
            return WW_ERR_CALIBRATION;
        *eq = '\0';
        char *key = trim(s), *value = trim(eq + 1);
        if (*key == '\0' || *value == '\0')
            return WW_ERR_CALIBRATION;
        if (strcmp(key, "gpu") == 0) {
            snprintf(file_gpu, sizeof file_gpu, "%s", value);
            have_gpu = 1;
            continue;
        }
        if (strcmp(key, "date") == 0)
            continue; /* for people */
        double v;
        if (!parse_number(value, &v))
            return WW_ERR_CALIBRATION;
        if (strcmp(key, "format") == 0) {
            format = v;
            continue;
        }
        if (strcmp(key, "sm_count") == 0) {
            if (v < 1 || v > INT_MAX || v != floor(v)) /* compared with an int below */
                return WW_ERR_CALIBRATION;
            file_sm = v;
            continue;
        }
        const model_key *k = NULL;
        for (size_t i = 0; i < MODEL_KEY_COUNT; i++)
            if (strcmp(key, model_keys[i].name) == 0)
                k = &model_keys[i];
        /* a key this version does not know comes from a newer one of the same format: its other
         * variables still apply */
        if (k == NULL)
            continue;
        if (v < k->min || v > k->max)
            return WW_ERR_CALIBRATION;
        *model_field(&parsed, k) = v;
    }
    if (!have_gpu || file_sm < 0 || format != CALIBRATION_FORMAT)
        return WW_ERR_CALIBRATION;
    if (strcmp(file_gpu, gpu_name) != 0 || (int)file_sm != sm_count)
        return WW_OK; /* another GPU's file: ignored */
    *model = parsed;
    *applies = 1;
    return WW_OK;
}

ww_status ww_calibration_parse(const char *text, const char *gpu_name, int sm_count, ww_cuda_model *model,
                               int *applies)
{
    if (text == NULL || gpu_name == NULL || model == NULL || applies == NULL)
        return WW_ERR_NULL_POINTER;
    *applies = 0;
    c_numeric guard;
    if (!c_numeric_enter(&guard))
        return WW_ERR_MEMORY; /* newlocale fails only for want of memory */
    ww_status st = parse_text(text, gpu_name, sm_count, model, applies);
    c_numeric_leave(&guard);
    return st;
}

ww_status ww_calibration_load(const char *path, const char *gpu_name, int sm_count, ww_cuda_model *model,
                              int *applies)
{
    if (path == NULL)
        return WW_ERR_NULL_POINTER;
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return WW_ERR_IO;
    /* a calibration is a few hundred bytes: anything much larger is not one */
    enum { LIMIT = 64 * 1024 };
    char *text = (char *)malloc(LIMIT + 1);
    if (text == NULL) {
        fclose(f);
        return WW_ERR_MEMORY;
    }
    size_t n = fread(text, 1, LIMIT + 1, f);
    int failed = ferror(f);
    fclose(f);
    ww_status st;
    if (failed)
        st = WW_ERR_IO;
    else if (n > LIMIT || memchr(text, '\0', n) != NULL)
        st = WW_ERR_CALIBRATION;
    else {
        text[n] = '\0';
        st = ww_calibration_parse(text, gpu_name, sm_count, model, applies);
    }
    free(text);
    return st;
}

/* snprintf at buf + *used that counts what did not fit, so that the caller learns the full length */
static void append(char *buf, size_t size, size_t *used, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void append(char *buf, size_t size, size_t *used, const char *fmt, ...)
{
    char scratch[1];
    va_list ap;
    va_start(ap, fmt);
    int n = *used < size ? vsnprintf(buf + *used, size - *used, fmt, ap) : vsnprintf(scratch, 1, fmt, ap);
    va_end(ap);
    if (n > 0)
        *used += (size_t)n;
}

/* A variable's value as "%.6g" writes it in the "C" locale. Under the c_numeric guard snprintf
 * writes '.' already; should the guard be unavailable (no memory for a locale object), the current
 * locale's decimal point is replaced here, so the file is the same either way. */
static void format_number(char *out, size_t size, double v)
{
    /* whole numbers (lengths, cells) exactly; times to 6 digits */
    if (v == floor(v) && fabs(v) < 1e15)
        snprintf(out, size, "%.0f", v);
    else
        snprintf(out, size, "%.6g", v);
    const struct lconv *lc = localeconv();
    const char *point = lc && lc->decimal_point && lc->decimal_point[0] ? lc->decimal_point : ".";
    char *at = strcmp(point, ".") != 0 ? strstr(out, point) : NULL;
    if (at != NULL) {
        const size_t n = strlen(point);
        *at = '.';
        memmove(at + 1, at + n, strlen(at + n) + 1);
    }
}

size_t ww_calibration_format(char *buf, size_t size, const char *gpu_name, int sm_count, const ww_cuda_model *model)
{
    char date[32] = "unknown";
    time_t now = time(NULL);
    struct tm utc;
    if (gmtime_r(&now, &utc) != NULL)
        strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &utc);
    size_t used = 0;
    append(buf, size, &used, "# wavewarp calibration: cost model of the GPU engines (wavewarp calibrate)\n");
    append(buf, size, &used, "format = %d\ngpu = %s\nsm_count = %d\ndate = %s\n", CALIBRATION_FORMAT, gpu_name,
           sm_count, date);
    ww_cuda_model copy = *model;
    c_numeric guard;
    (void)c_numeric_enter(&guard); /* without it, format_number still writes '.' */
    for (size_t i = 0; i < MODEL_KEY_COUNT; i++) {
        char number[64];
        format_number(number, sizeof number, *model_field(&copy, &model_keys[i]));
        append(buf, size, &used, "%s = %s\n", model_keys[i].name, number);
    }
    c_numeric_leave(&guard);
    return used;
}

ww_status ww_calibration_write(const char *path, const char *text)
{
    if (path == NULL || text == NULL)
        return WW_ERR_NULL_POINTER;
    size_t len = strlen(path);
    char *temp = (char *)malloc(len + 16);
    if (temp == NULL)
        return WW_ERR_MEMORY;
    /* in the same directory, so that the rename is atomic: readers see the old file or the new */
    snprintf(temp, len + 16, "%s.tmp-XXXXXX", path);
    int fd = mkstemp(temp);
    if (fd < 0) {
        free(temp);
        return WW_ERR_IO;
    }
    FILE *f = fdopen(fd, "w");
    if (f == NULL) {
        close(fd);
        unlink(temp);
        free(temp);
        return WW_ERR_IO;
    }
    fchmod(fd, 0644); /* mkstemp makes it 0600; the cache is no secret */
    int bad = fputs(text, f) < 0;
    bad |= fflush(f) != 0;
    bad |= fsync(fileno(f)) != 0;
    bad |= fclose(f) != 0;
    if (!bad)
        bad = rename(temp, path) != 0;
    if (bad)
        unlink(temp);
    free(temp);
    return bad ? WW_ERR_IO : WW_OK;
}

/* mkdir -p of the directories above `path`'s last component */
static int make_parent_dirs(char *path)
{
    for (char *p = path + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        int failed = mkdir(path, 0755) != 0 && errno != EEXIST;
        *p = '/';
        if (failed)
            return -1;
    }
    return 0;
}

ww_status ww_calibration_default_path(const char *gpu_name, int create_dir, char *buf, size_t size)
{
    if (gpu_name == NULL || buf == NULL)
        return WW_ERR_NULL_POINTER;
    const char *xdg = ww_setting_value(WW_SETTING_XDG_CACHE_HOME), *home = ww_setting_value(WW_SETTING_HOME);
    char base[4096];
    if (xdg && xdg[0] == '/') /* the XDG rule: a relative value is ignored */
        snprintf(base, sizeof base, "%s", xdg);
    else if (home && home[0])
        snprintf(base, sizeof base, "%s/.cache", home);
    else
        return WW_ERR_IO;
    /* the GPU's name made safe for a file name: "NVIDIA H200" -> "NVIDIA-H200" */
    char name[128];
    size_t n = 0;
    for (const char *c = gpu_name; *c && n + 1 < sizeof name; c++)
        name[n++] = isalnum((unsigned char)*c) || *c == '.' || *c == '_' ? *c : '-';
    name[n] = '\0';
    int w = snprintf(buf, size, "%s/wavewarp/calibration-%s.txt", base, name[0] ? name : "gpu");
    if (w < 0 || (size_t)w >= size)
        return WW_ERR_IO;
    if (create_dir && make_parent_dirs(buf) != 0)
        return WW_ERR_IO;
    return WW_OK;
}

ww_status ww_calibration_resolve(const char *explicit_path, const char *gpu_name, int sm_count, ww_cuda_model *model,
                                 char *source, size_t source_size)
{
    *model = ww_cuda_model_default();
    snprintf(source, source_size, "built-in defaults");
    if (explicit_path && explicit_path[0] == '\0')
        return WW_OK;
    const char *env = ww_setting_value(WW_SETTING_CALIBRATION);
    const char *named = explicit_path ? explicit_path : env && env[0] ? env : NULL;
    int applies = 0;
    if (named != NULL) { /* the user's choice: whatever is wrong with it is an error */
        ww_status status = ww_calibration_load(named, gpu_name, sm_count, model, &applies);
        if (status == WW_OK && applies)
            snprintf(source, source_size, "%s", named);
        return status;
    }
    char cache[4096];
    struct stat st;
    if (ww_calibration_default_path(gpu_name, 0, cache, sizeof cache) != WW_OK || stat(cache, &st) != 0)
        return WW_OK; /* no cache file: the defaults */
    /* The cache file was found, not chosen: one that cannot be read, is malformed or of another
     * format (a newer version's) does not apply, and the defaults stand (`model` is untouched
     * then); `source` says why, for ww_ctx_calibration(). */
    ww_status status = ww_calibration_load(cache, gpu_name, sm_count, model, &applies);
    if (status != WW_OK)
        snprintf(source, source_size, "built-in defaults (ignored %s: %s)", cache,
                 status == WW_ERR_CALIBRATION ? "malformed or of another format" : ww_strerror(status));
    else if (applies)
        snprintf(source, source_size, "%s", cache);
    return WW_OK;
}
