/* Readers of images for the image commands (image_io.h). Every malformed, truncated or unreadable
 * file is an error with its name and what is wrong; nothing is guessed. */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE

#include "image_io.h"

#include "io.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

static int fail(char *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, CLI_ERR_SIZE, fmt, ap);
    va_end(ap);
    return -1;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcasecmp(s + n - m, suffix) == 0;
}

static int is_pnm(const char *p) { return ends_with(p, ".pgm") || ends_with(p, ".ppm") || ends_with(p, ".pnm"); }

void cli_image_set_free(cli_image_set *s)
{
    for (size_t k = 0; k < s->count; k++) {
        if (s->images)
            free((void *)s->images[k].pixels);
        if (s->labels)
            free(s->labels[k]);
        if (s->names)
            free(s->names[k]);
    }
    free(s->images);
    free(s->labels);
    free(s->names);
    memset(s, 0, sizeof *s);
}

/* Appends an image (taking its pixels) with its name and label (copied; label may be NULL). */
static int set_append(cli_image_set *s, ww_image img, const char *name, const char *label, char *err)
{
    ww_image *im = realloc(s->images, (s->count + 1) * sizeof *im);
    if (im)
        s->images = im;
    char **nm = im ? realloc(s->names, (s->count + 1) * sizeof *nm) : NULL;
    if (nm)
        s->names = nm;
    char **lb = nm ? realloc(s->labels, (s->count + 1) * sizeof *lb) : NULL;
    if (lb)
        s->labels = lb;
    char *name_copy = lb ? strdup(name) : NULL, *label_copy = label && name_copy ? strdup(label) : NULL;
    if (lb == NULL || name_copy == NULL || (label && label_copy == NULL)) {
        free(name_copy);
        free((void *)img.pixels);
        return fail(err, "%s: out of memory", name);
    }
    s->images[s->count] = img;
    s->names[s->count] = name_copy;
    s->labels[s->count] = label_copy;
    s->count++;
    return 0;
}

/* ---------------------------------------------------------------- PGM / PPM */

/* The next header number of a PNM file, after whitespace and # comments. */
static int pnm_number(const char *data, size_t size, size_t *at, unsigned long *out)
{
    size_t i = *at;
    for (;;) {
        while (i < size && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r'))
            i++;
        if (i < size && data[i] == '#') {
            while (i < size && data[i] != '\n')
                i++;
            continue;
        }
        break;
    }
    if (i >= size || data[i] < '0' || data[i] > '9')
        return -1;
    unsigned long v = 0;
    while (i < size && data[i] >= '0' && data[i] <= '9') {
        if (v > 100000000UL)
            return -1;
        v = v * 10 + (unsigned long)(data[i] - '0');
        i++;
    }
    *at = i;
    *out = v;
    return 0;
}

static int parse_pnm(const char *path, const char *data, size_t size, ww_image *img, char *err)
{
    if (size < 2 || data[0] != 'P' || (data[1] != '2' && data[1] != '3' && data[1] != '5' && data[1] != '6'))
        return fail(err, "%s: not a PGM/PPM file (expected P2, P3, P5 or P6 at the start)", path);
    const int binary = data[1] == '5' || data[1] == '6', channels = data[1] == '3' || data[1] == '6' ? 3 : 1;
    size_t at = 2;
    unsigned long w, h, maxval;
    if (pnm_number(data, size, &at, &w) || pnm_number(data, size, &at, &h) || pnm_number(data, size, &at, &maxval))
        return fail(err, "%s: malformed or truncated PGM/PPM header", path);
    if (w == 0 || h == 0)
        return fail(err, "%s: the image is empty (%lu x %lu)", path, h, w);
    if (maxval == 0 || maxval > 65535)
        return fail(err, "%s: invalid maximum value %lu (expected 1..65535)", path, maxval);
    const size_t n = (size_t)w * h * channels;
    const int wide = maxval > 255;
    /* the pixels must be there before memory is taken for them: binary, 1 or 2 bytes each; text, at
     * least a digit and a separator each */
    const size_t need = binary ? n * (wide ? 2 : 1) : 2 * n - 1;
    if (at >= size || size - at - 1 < need - (binary ? 0 : 1))
        return fail(err, "%s: truncated: the data are shorter than %lu x %lu x %d pixels need", path, h, w, channels);
    void *pixels = malloc(n * (wide ? sizeof(float) : 1));
    if (pixels == NULL)
        return fail(err, "%s: out of memory", path);
    if (binary) {
        at++; /* the single whitespace after maxval */
        const unsigned char *u = (const unsigned char *)data + at;
        for (size_t k = 0; k < n; k++) {
            unsigned v = wide ? (unsigned)u[2 * k] << 8 | u[2 * k + 1] : u[k];
            if (v > maxval) {
                free(pixels);
                return fail(err, "%s: pixel %zu is %u, above the maximum value %lu", path, k, v, maxval);
            }
            if (wide)
                ((float *)pixels)[k] = (float)v;
            else
                ((unsigned char *)pixels)[k] = (unsigned char)v;
        }
    } else {
        for (size_t k = 0; k < n; k++) {
            unsigned long v;
            if (pnm_number(data, size, &at, &v) != 0) {
                free(pixels);
                return fail(err, "%s: truncated or malformed: pixel %zu of %zu is missing", path, k, n);
            }
            if (v > maxval) {
                free(pixels);
                return fail(err, "%s: pixel %zu is %lu, above the maximum value %lu", path, k, v, maxval);
            }
            if (wide)
                ((float *)pixels)[k] = (float)v;
            else
                ((unsigned char *)pixels)[k] = (unsigned char)v;
        }
    }
    *img = ww_image_make(pixels, h, w, (size_t)channels, wide ? WW_F32 : WW_U8);
    return 0;
}

/* ---------------------------------------------------------------- .npy */

/* The images of a .npy array: `single` reads (h, w) or (h, w, c) as one image; else (h, w) is one
 * image, (count, h, w) gray images and (count, h, w, c) images with channels. */
static int parse_npy_images(const char *path, const char *data, size_t size, int single, cli_image_set *out,
                            char *err)
{
    char descr[32];
    int fortran = 0, ndim = 0;
    size_t shape[8], start;
    if (cli_npy_header(path, data, size, descr, sizeof descr, &fortran, shape, &ndim, &start, err) != 0)
        return -1;
    size_t item;
    ww_dtype dt;
    if (strcmp(descr, "|u1") == 0 || strcmp(descr, "<u1") == 0)
        item = 1, dt = WW_U8;
    else if (strcmp(descr, "<f4") == 0)
        item = 4, dt = WW_F32;
    else if (strcmp(descr, "<f8") == 0)
        item = 8, dt = WW_F64;
    else
        return fail(err, "%s: unsupported .npy dtype '%s' (expected uint8, float32 or float64)", path, descr);
    if (fortran && ndim > 1)
        return fail(err, "%s: Fortran-ordered .npy arrays are not read (save with numpy.ascontiguousarray)", path);
    size_t count, h, w, c;
    if (ndim == 2)
        count = 1, h = shape[0], w = shape[1], c = 1;
    else if (ndim == 3 && single)
        count = 1, h = shape[0], w = shape[1], c = shape[2];
    else if (ndim == 3)
        count = shape[0], h = shape[1], w = shape[2], c = 1;
    else if (ndim == 4 && !single)
        count = shape[0], h = shape[1], w = shape[2], c = shape[3];
    else
        return fail(err, "%s: an array of %d dimensions is not %s", path, ndim,
                    single ? "an image (height, width) or (height, width, channels)"
                           : "images (count, height, width) or (count, height, width, channels)");
    if (count == 0 || h == 0 || w == 0 || c == 0)
        return fail(err, "%s: the array is empty (its shape has a zero)", path);
    const size_t px = h * w * c;
    if (w > SIZE_MAX / h / c || count > SIZE_MAX / px / item)
        return fail(err, "%s: the array is too large", path);
    if (size - start != count * px * item)
        return fail(err, "%s: the file holds %zu bytes of data but its shape needs %zu (truncated or corrupt)", path,
                    size - start, count * px * item);
    for (size_t k = 0; k < count; k++) {
        void *pixels = malloc(px * item);
        if (pixels == NULL)
            return fail(err, "%s: out of memory", path);
        memcpy(pixels, data + start + k * px * item, px * item); /* little-endian hosts */
        char name[4096];
        snprintf(name, sizeof name, count > 1 ? "%s[%zu]" : "%s", path, k);
        if (set_append(out, ww_image_make(pixels, h, w, c, dt), name, NULL, err) != 0)
            return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------- files, folders */

static int read_image_file(const char *path, int single, const char *label, cli_image_set *out, char *err)
{
    if (ends_with(path, ".png"))
        return fail(err, "%s: PNG is not decoded by the command-line tool; convert it to PGM (e.g. "
                         "'convert a.png a.pgm') or use the Python package, which reads it through Pillow",
                    path);
    if (!is_pnm(path) && !ends_with(path, ".npy"))
        return fail(err, "%s: unknown image format (expected .pgm, .ppm, .pnm or .npy)", path);
    char *data = NULL;
    size_t size = 0;
    if (cli_read_file(path, &data, &size, err) != 0)
        return -1;
    int rc;
    if (is_pnm(path)) {
        ww_image img;
        rc = parse_pnm(path, data, size, &img, err);
        if (rc == 0)
            rc = set_append(out, img, path, label, err);
    } else {
        const size_t before = out->count;
        rc = parse_npy_images(path, data, size, single, out, err);
        for (size_t k = before; rc == 0 && label && k < out->count; k++)
            if ((out->labels[k] = strdup(label)) == NULL)
                rc = fail(err, "%s: out of memory", path);
    }
    free(data);
    return rc;
}

static int is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int by_name(const struct dirent **a, const struct dirent **b) { return strcmp((*a)->d_name, (*b)->d_name); }

static int skip_entry(const char *name) { return name[0] == '.'; }

/* The image files of a folder (sorted by name), labelled `label`; with recurse, its sub-folders too,
 * each labelled by its name. Files of other types are skipped. */
static int read_folder(const char *dir, const char *label, int recurse, cli_image_set *out, char *err)
{
    struct dirent **list = NULL;
    int n = scandir(dir, &list, NULL, by_name);
    if (n < 0)
        return fail(err, "%s: cannot read the folder: %s", dir, strerror(errno));
    int rc = 0;
    for (int i = 0; i < n; i++) {
        const char *name = list[i]->d_name;
        char path[4096];
        if (rc != 0 || skip_entry(name) || snprintf(path, sizeof path, "%s/%s", dir, name) >= (int)sizeof path)
            continue;
        if (is_dir(path)) {
            if (recurse)
                rc = read_folder(path, name, 0, out, err);
        } else if (is_pnm(name) || ends_with(name, ".npy") || ends_with(name, ".png")) {
            rc = read_image_file(path, 1, label, out, err);
        }
    }
    for (int i = 0; i < n; i++)
        free(list[i]);
    free(list);
    return rc;
}

/* Labels of a .npy stack: the lines of NAME.labels.txt, one per image. */
static int read_stack_labels(const char *path, cli_image_set *out, char *err)
{
    char lpath[4096];
    size_t n = strlen(path);
    if (n - 4 + strlen(".labels.txt") >= sizeof lpath)
        return fail(err, "%s: path too long", path);
    snprintf(lpath, sizeof lpath, "%.*s.labels.txt", (int)(n - 4), path);
    char *data = NULL;
    size_t size = 0;
    if (cli_read_file(lpath, &data, &size, err) != 0)
        return fail(err, "%s: the labels of %s are read from %s, which cannot be read (%s)", path, path, lpath,
                    strerror(errno));
    size_t k = 0;
    char *save = NULL;
    for (char *line = strtok_r(data, "\r\n", &save); line; line = strtok_r(NULL, "\r\n", &save)) {
        if (k == out->count) {
            k++;
            break;
        }
        if ((out->labels[k++] = strdup(line)) == NULL) {
            free(data);
            return fail(err, "%s: out of memory", lpath);
        }
    }
    free(data);
    if (k != out->count)
        return fail(err, "%s: %s labels for the %zu images of %s", lpath, k > out->count ? "more" : "fewer",
                    out->count, path);
    return 0;
}

int cli_read_image(const char *path, cli_image_set *out, char *err)
{
    memset(out, 0, sizeof *out);
    if (is_dir(path))
        return fail(err, "%s: is a folder; image-distance takes two image files", path);
    int rc = read_image_file(path, 1, NULL, out, err);
    if (rc != 0)
        cli_image_set_free(out);
    return rc;
}

int cli_read_image_set(const char *path, int want_labels, cli_image_set *out, char *err)
{
    memset(out, 0, sizeof *out);
    int rc;
    if (is_dir(path)) {
        rc = read_folder(path, NULL, 1, out, err);
        if (rc == 0 && out->count == 0)
            rc = fail(err, "%s: no images (.pgm, .ppm, .pnm or .npy files) in the folder or its sub-folders", path);
    } else {
        rc = read_image_file(path, 0, NULL, out, err);
        if (rc == 0 && want_labels && ends_with(path, ".npy"))
            rc = read_stack_labels(path, out, err);
    }
    for (size_t k = 0; rc == 0 && want_labels && k < out->count; k++)
        if (out->labels[k] == NULL)
            rc = fail(err, "%s: has no class label (images of a folder are labelled by their sub-folder's name)",
                      out->names[k]);
    for (size_t k = 0; rc == 0 && k < out->count; k++)
        if (ww_image_check(&out->images[k]) == WW_ERR_NONFINITE)
            rc = fail(err, "%s: has a NaN or infinite pixel", out->names[k]);
    if (rc != 0)
        cli_image_set_free(out);
    return rc;
}
