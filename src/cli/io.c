/* Readers and writers of the command-line tool. See io.h for the formats and conventions. */
#define _POSIX_C_SOURCE 200809L

#include "io.h"
#include "progress.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---------------------------------------------------------------- small helpers */

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

cli_format cli_input_format(const char *path)
{
    if (ends_with(path, ".npy"))
        return CLI_FORMAT_NPY;
    if (ends_with(path, ".csv"))
        return CLI_FORMAT_CSV;
    if (ends_with(path, ".ts"))
        return CLI_FORMAT_TS;
    return CLI_FORMAT_WHITESPACE;
}

cli_format cli_output_format(const char *path)
{
    if (ends_with(path, ".npy"))
        return CLI_FORMAT_NPY;
    if (ends_with(path, ".csv"))
        return CLI_FORMAT_CSV;
    if (ends_with(path, ".tsv") || ends_with(path, ".txt"))
        return CLI_FORMAT_WHITESPACE;
    return CLI_FORMAT_UNKNOWN;
}

/* Grows *buf (of *cap elements of `size` bytes) to hold at least `need` elements. */
static int reserve(void **buf, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    size_t grown = *cap ? *cap : 64;
    while (grown < need) {
        if (grown > SIZE_MAX / 2 / size)
            return -1;
        grown *= 2;
    }
    void *p = realloc(*buf, grown * size);
    if (p == NULL)
        return -1;
    *buf = p;
    *cap = grown;
    return 0;
}

/* The whole file in memory (plus a terminating NUL, so parsers may look one byte ahead). */
static int read_whole_file(const char *path, char **data, size_t *size, char *err)
{
    FILE *fp = fopen(path, "rb");
    if (fp == NULL)
        return fail(err, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fileno(fp), &st) == 0 && S_ISDIR(st.st_mode)) {
        fclose(fp);
        return fail(err, "%s: is a directory", path);
    }
    char *buf = NULL;
    size_t cap = 0, len = 0;
    for (;;) {
        if (reserve((void **)&buf, &cap, len + 65536 + 1, 1) != 0) {
            free(buf);
            fclose(fp);
            return fail(err, "%s: out of memory reading the file", path);
        }
        size_t got = fread(buf + len, 1, cap - len - 1, fp);
        len += got;
        if (got == 0)
            break;
    }
    int read_error = ferror(fp);
    int saved_errno = errno;
    fclose(fp);
    if (read_error) {
        free(buf);
        return fail(err, "%s: read error: %s", path, strerror(saved_errno));
    }
    buf[len] = '\0';
    *data = buf;
    *size = len;
    return 0;
}

void cli_dataset_free(cli_dataset *d)
{
    free(d->values);
    free(d->offsets);
    free(d->labels);
    for (size_t i = 0; d->class_names && i < d->class_count; i++)
        free(d->class_names[i]);
    free(d->class_names);
    memset(d, 0, sizeof *d);
}

int cli_align_class_labels(const cli_dataset *reference, cli_dataset *other, char *err)
{
    if (reference->class_names == NULL || other->class_names == NULL || other->labels == NULL)
        return 0;
    size_t *to = malloc(other->class_count * sizeof *to);
    if (to == NULL)
        return fail(err, "out of memory");
    size_t unknown = 0;
    for (size_t k = 0; k < other->class_count; k++) {
        size_t j = reference->class_count;
        for (size_t i = 0; i < reference->class_count && j == reference->class_count; i++)
            if (strcmp(reference->class_names[i], other->class_names[k]) == 0)
                j = i;
        for (size_t i = 0; i < reference->class_count && j == reference->class_count; i++)
            if (strcasecmp(reference->class_names[i], other->class_names[k]) == 0)
                j = i;
        to[k] = j < reference->class_count ? j : reference->class_count + unknown++;
    }
    for (size_t i = 0; i < other->count; i++)
        other->labels[i] = (double)to[(size_t)other->labels[i]];
    free(to);
    /* the labels now count in the reference's names */
    for (size_t k = 0; k < other->class_count; k++)
        free(other->class_names[k]);
    free(other->class_names);
    other->class_names = NULL;
    other->class_count = 0;
    return 0;
}

size_t cli_series_length(const cli_dataset *d, size_t i) { return d->offsets[i + 1] - d->offsets[i]; }

size_t cli_max_length(const cli_dataset *d)
{
    size_t longest = 0;
    for (size_t i = 0; i < d->count; i++)
        if (cli_series_length(d, i) > longest)
            longest = cli_series_length(d, i);
    return longest;
}

/* Allocates a dataset of `count` series and `samples` samples in all. */
static int dataset_alloc(cli_dataset *d, size_t count, size_t samples, size_t dim, int with_labels)
{
    memset(d, 0, sizeof *d);
    d->count = count;
    d->dim = dim;
    if (samples > SIZE_MAX / sizeof(double) / dim)
        return -1;
    d->values = malloc(samples * dim * sizeof(double) + 1);
    d->offsets = malloc((count + 1) * sizeof(size_t));
    d->labels = with_labels ? malloc(count * sizeof(double)) : NULL;
    if (d->values == NULL || d->offsets == NULL || (with_labels && d->labels == NULL)) {
        cli_dataset_free(d);
        return -1;
    }
    d->offsets[0] = 0;
    return 0;
}

static void mark_ragged(cli_dataset *d)
{
    d->ragged = 0;
    for (size_t i = 1; i < d->count; i++)
        if (cli_series_length(d, i) != cli_series_length(d, 0))
            d->ragged = 1;
}

/* ---------------------------------------------------------------- text files */

/* The numbers of a text file, row by row, before deciding what the columns mean. */
typedef struct text_table {
    double *cells;
    size_t cell_count, cell_cap;
    size_t *row_start; /* rows + 1 entries into cells */
    size_t *row_line;  /* 1-based line number of each row */
    size_t rows, row_cap, line_cap;
} text_table;

static void text_table_free(text_table *t)
{
    free(t->cells);
    free(t->row_start);
    free(t->row_line);
}

static int is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

/* Parses one field. Empty fields (CSV) read as NaN: a missing value. *ok = 0 on garbage. */
static double parse_field(const char *s, size_t len, int *ok)
{
    *ok = 1;
    if (len == 0)
        return NAN;
    char buf[128];
    if (len >= sizeof buf) {
        *ok = 0;
        return 0;
    }
    memcpy(buf, s, len);
    buf[len] = '\0';
    char *end = NULL;
    double v = strtod(buf, &end); /* the C locale: '.' is the decimal point */
    if (end != buf + len)
        *ok = 0;
    return v;
}

static int text_parse(const char *path, const char *data, size_t size, int csv, int labels_first_possible,
                      text_table *t, char *err)
{
    const char *p = data, *end = data + size;
    size_t line = 0;
    while (p < end) {
        line++;
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        if (eol == NULL)
            eol = end;
        const char *a = p, *b = eol;
        p = eol + 1;
        while (a < b && is_blank(*a))
            a++;
        while (b > a && is_blank(b[-1]))
            b--;
        if (a == b || *a == '#') /* blank line or comment */
            continue;
        if (reserve((void **)&t->row_start, &t->row_cap, t->rows + 2, sizeof(size_t)) != 0 ||
            reserve((void **)&t->row_line, &t->line_cap, t->rows + 1, sizeof(size_t)) != 0)
            return fail(err, "%s: out of memory", path);
        t->row_start[t->rows] = t->cell_count;
        t->row_line[t->rows] = line;
        size_t column = 0;
        const char *f = a;
        for (;;) {
            const char *fe = f;
            if (csv) {
                while (fe < b && *fe != ',')
                    fe++;
            } else {
                while (fe < b && !is_blank(*fe))
                    fe++;
            }
            const char *fa = f, *fb = fe;
            while (fa < fb && is_blank(*fa))
                fa++;
            while (fb > fa && is_blank(fb[-1]))
                fb--;
            int ok;
            double v = parse_field(fa, (size_t)(fb - fa), &ok);
            if (!ok) {
                int len = (int)((fb - fa) > 40 ? 40 : (fb - fa));
                /* a word on the first line is most likely a header, which the formats do not have */
                const char *hint = t->rows == 0 ? "; a header line must be removed or start with '#'" : "";
                if (column == 0 && labels_first_possible)
                    return fail(err,
                                "%s:%zu: non-numeric label '%.*s' (class labels must be numbers; "
                                "pass --no-labels if the file has no label column%s)",
                                path, line, len, fa, hint);
                return fail(err, "%s:%zu: column %zu: malformed number '%.*s'%s", path, line, column + 1, len,
                            fa, hint);
            }
            if (reserve((void **)&t->cells, &t->cell_cap, t->cell_count + 1, sizeof(double)) != 0)
                return fail(err, "%s: out of memory", path);
            t->cells[t->cell_count++] = v;
            column++;
            if (fe >= b)
                break;
            f = fe + 1;
            if (!csv)
                while (f < b && is_blank(*f))
                    f++;
        }
        t->rows++;
        t->row_start[t->rows] = t->cell_count;
    }
    if (t->rows == 0)
        return fail(err, "%s: file is empty (no data rows)", path);
    return 0;
}

static int is_integer_label(double v) { return isfinite(v) && v == floor(v) && fabs(v) < 9007199254740992.0; }

/* Cuts trailing NaN off one row of values, checking the rest is finite. Returns the length kept,
 * or (size_t)-1 with err set. `lines` gives the line of each value (NULL: all on `line`), and
 * `first_column` the file column of values[0]. */
static size_t trim_series(const char *path, const double *values, size_t n, const size_t *lines, size_t line,
                          size_t first_column, char *err)
{
    size_t kept = n;
    while (kept > 0 && isnan(values[kept - 1]))
        kept--;
    for (size_t i = 0; i < kept; i++) {
        size_t at_line = lines ? lines[i] : line;
        size_t column = lines ? 1 : first_column + i;
        if (isnan(values[i])) {
            fail(err,
                 "%s:%zu: column %zu: missing value (NaN or empty field) inside a series; only trailing "
                 "NaN padding is allowed",
                 path, at_line, column);
            return (size_t)-1;
        }
        if (!isfinite(values[i])) {
            fail(err, "%s:%zu: column %zu: value is not finite (%g)", path, at_line, column, values[i]);
            return (size_t)-1;
        }
    }
    if (kept == 0) {
        fail(err, "%s:%zu: the series has no values (empty or all NaN)", path, line);
        return (size_t)-1;
    }
    return kept;
}

static int parse_text_file(const char *path, const char *data, size_t size, int csv, const cli_read_options *opt,
                           cli_dataset *out, char *err)
{
    text_table t = {0};
    int rc = text_parse(path, data, size, csv, opt->labels != CLI_LABELS_NONE, &t, err);
    if (rc != 0) {
        text_table_free(&t);
        return -1;
    }
    size_t fields = t.row_start[1] - t.row_start[0];
    int one_column = 1;
    for (size_t r = 0; r < t.rows; r++)
        if (t.row_start[r + 1] - t.row_start[r] != 1)
            one_column = 0;

    /* A single-series file: one row, or one value per line. */
    if (opt->single_series && opt->labels != CLI_LABELS_FIRST && (t.rows == 1 || one_column)) {
        size_t n = t.cell_count;
        if (dataset_alloc(out, 1, n, 1, 0) != 0) {
            text_table_free(&t);
            return fail(err, "%s: out of memory", path);
        }
        size_t kept = trim_series(path, t.cells, n, t.rows == 1 ? NULL : t.row_line, t.row_line[0], 1, err);
        if (kept == (size_t)-1) {
            cli_dataset_free(out);
            text_table_free(&t);
            return -1;
        }
        memcpy(out->values, t.cells, kept * sizeof(double));
        out->offsets[1] = kept;
        out->label_guess = 0;
        out->one_column = one_column;
        text_table_free(&t);
        return 0;
    }

    for (size_t r = 1; r < t.rows; r++) {
        size_t here = t.row_start[r + 1] - t.row_start[r];
        if (here != fields) {
            fail(err,
                 "%s:%zu: row has %zu fields but line %zu has %zu (rows must have equal length; pad "
                 "shorter series with trailing NaN)",
                 path, t.row_line[r], here, t.row_line[0], fields);
            text_table_free(&t);
            return -1;
        }
    }

    int with_labels = opt->labels == CLI_LABELS_FIRST;
    if (opt->labels == CLI_LABELS_AUTO) {
        with_labels = fields >= 2;
        for (size_t r = 0; r < t.rows && with_labels; r++)
            if (!is_integer_label(t.cells[t.row_start[r]]))
                with_labels = 0;
    }
    if (with_labels && fields < 2) {
        fail(err, "%s:%zu: a row holds only its label, no values", path, t.row_line[0]);
        text_table_free(&t);
        return -1;
    }
    size_t first = with_labels ? 1 : 0;
    if (dataset_alloc(out, t.rows, t.cell_count, 1, with_labels) != 0) {
        text_table_free(&t);
        return fail(err, "%s: out of memory", path);
    }
    out->label_guess = opt->labels == CLI_LABELS_AUTO ? with_labels : 0;
    out->one_column = fields == 1;
    size_t filled = 0;
    for (size_t r = 0; r < t.rows; r++) {
        const double *row = t.cells + t.row_start[r];
        if (with_labels) {
            if (!isfinite(row[0])) {
                fail(err, "%s:%zu: the label is not a finite number", path, t.row_line[r]);
                goto failed;
            }
            out->labels[r] = row[0];
        }
        size_t kept = trim_series(path, row + first, fields - first, NULL, t.row_line[r], first + 1, err);
        if (kept == (size_t)-1)
            goto failed;
        memcpy(out->values + filled, row + first, kept * sizeof(double));
        filled += kept;
        out->offsets[r + 1] = filled;
    }
    mark_ragged(out);
    text_table_free(&t);
    return 0;
failed:
    cli_dataset_free(out);
    text_table_free(&t);
    return -1;
}

/* ---------------------------------------------------------------- .npy files */

static uint64_t load_le(const unsigned char *p, int bytes)
{
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

static const char *skip_spaces(const char *p)
{
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
        p++;
    return p;
}

/* A Python string literal in quotes ('...' or "..."), copied into out (cap bytes). */
static const char *parse_quoted(const char *p, char *out, size_t cap)
{
    char quote = *p;
    if (quote != '\'' && quote != '"')
        return NULL;
    const char *close = strchr(p + 1, quote);
    if (close == NULL || (size_t)(close - p - 1) >= cap)
        return NULL;
    memcpy(out, p + 1, (size_t)(close - p - 1));
    out[close - p - 1] = '\0';
    return close + 1;
}

#define NPY_MAX_DIMS 8

/* The header dictionary, e.g. {'descr': '<f8', 'fortran_order': False, 'shape': (600, 60), } */
static int parse_npy_header(const char *h, char *descr, size_t descr_cap, int *fortran, size_t *shape,
                            int *ndim)
{
    int seen = 0;
    const char *p = skip_spaces(h);
    if (*p++ != '{')
        return -1;
    for (;;) {
        p = skip_spaces(p);
        if (*p == '}')
            break;
        char key[32];
        if ((p = parse_quoted(p, key, sizeof key)) == NULL)
            return -1;
        p = skip_spaces(p);
        if (*p++ != ':')
            return -1;
        p = skip_spaces(p);
        if (strcmp(key, "descr") == 0) {
            if ((p = parse_quoted(p, descr, descr_cap)) == NULL)
                return -1;
            seen |= 1;
        } else if (strcmp(key, "fortran_order") == 0) {
            if (strncmp(p, "True", 4) == 0) {
                *fortran = 1;
                p += 4;
            } else if (strncmp(p, "False", 5) == 0) {
                *fortran = 0;
                p += 5;
            } else {
                return -1;
            }
            seen |= 2;
        } else if (strcmp(key, "shape") == 0) {
            if (*p++ != '(')
                return -1;
            *ndim = 0;
            for (;;) {
                p = skip_spaces(p);
                if (*p == ')')
                    break;
                if (*p < '0' || *p > '9' || *ndim == NPY_MAX_DIMS)
                    return -1;
                errno = 0;
                char *after;
                unsigned long long v = strtoull(p, &after, 10);
                if (errno != 0 || v > SIZE_MAX)
                    return -1;
                shape[(*ndim)++] = (size_t)v;
                p = skip_spaces(after);
                if (*p == ',')
                    p++;
                else if (*p != ')')
                    return -1;
            }
            p++;
            seen |= 4;
        } else {
            return -1;
        }
        p = skip_spaces(p);
        if (*p == ',')
            p++;
        else if (*p != '}')
            return -1;
    }
    return seen == 7 ? 0 : -1;
}

static int parse_npy_file(const char *path, const char *data, size_t size, const cli_read_options *opt,
                          cli_dataset *out, char *err)
{
    if (opt->labels == CLI_LABELS_FIRST)
        return fail(err, "%s: .npy files hold no labels (--labels needs a text file with the label first)",
                    path);
    const unsigned char *u = (const unsigned char *)data;
    int rc = -1;
    char *header = NULL;
    if (size == 0) {
        fail(err, "%s: file is empty", path);
        goto done;
    }
    if (size < 10 || memcmp(data, "\x93NUMPY", 6) != 0) {
        fail(err, "%s: not a .npy file (bad magic string)", path);
        goto done;
    }
    int major = u[6], minor = u[7];
    size_t header_len, header_start;
    if (major == 1) {
        header_len = (size_t)load_le(u + 8, 2);
        header_start = 10;
    } else if ((major == 2 || major == 3) && size >= 12) {
        header_len = (size_t)load_le(u + 8, 4);
        header_start = 12;
    } else {
        fail(err, "%s: unsupported .npy format version %d.%d", path, major, minor);
        goto done;
    }
    if (header_len > size - header_start) {
        fail(err, "%s: truncated .npy header", path);
        goto done;
    }
    header = malloc(header_len + 1);
    if (header == NULL) {
        fail(err, "%s: out of memory", path);
        goto done;
    }
    memcpy(header, data + header_start, header_len);
    header[header_len] = '\0';
    char descr[32];
    int fortran = 0, ndim = 0;
    size_t shape[NPY_MAX_DIMS];
    if (parse_npy_header(header, descr, sizeof descr, &fortran, shape, &ndim) != 0) {
        fail(err, "%s: malformed .npy header", path);
        goto done;
    }
    size_t item;
    if (strcmp(descr, "<f8") == 0) {
        item = 8;
    } else if (strcmp(descr, "<f4") == 0) {
        item = 4;
    } else {
        fail(err, "%s: unsupported .npy dtype '%s' (expected float64 '<f8' or float32 '<f4')", path, descr);
        goto done;
    }
    size_t count, length, dim;
    if (ndim == 1) {
        count = 1, length = shape[0], dim = 1;
    } else if (ndim == 2) {
        count = shape[0], length = shape[1], dim = 1;
    } else if (ndim == 3) {
        count = shape[0], length = shape[1], dim = shape[2];
    } else {
        fail(err,
             "%s: unsupported .npy shape with %d dimensions (expected (length,), (count, length) or "
             "(count, length, dim))",
             path, ndim);
        goto done;
    }
    if (count == 0 || length == 0 || dim == 0) {
        fail(err, "%s: the array is empty (shape has a zero)", path);
        goto done;
    }
    if (length > SIZE_MAX / dim || count > SIZE_MAX / (length * dim) ||
        count * length * dim > SIZE_MAX / item) {
        fail(err, "%s: the array is too large", path);
        goto done;
    }
    size_t elements = count * length * dim;
    size_t data_start = header_start + header_len, available = size - data_start;
    if (available != elements * item) {
        fail(err, "%s: the file holds %zu bytes of data but its shape needs %zu (truncated or corrupt)", path,
             available, elements * item);
        goto done;
    }
    if (dataset_alloc(out, count, count * length, dim, 0) != 0) {
        fail(err, "%s: out of memory", path);
        goto done;
    }
    const unsigned char *raw = u + data_start;
    size_t filled = 0;
    double *step = out->values; /* each series is decoded in place, then trimmed */
    for (size_t i = 0; i < count; i++) {
        double *series = step + filled * dim;
        for (size_t t = 0; t < length; t++)
            for (size_t k = 0; k < dim; k++) {
                size_t at = fortran ? i + count * (t + length * k) : (i * length + t) * dim + k;
                uint64_t bits = load_le(raw + at * item, (int)item);
                double v;
                if (item == 8) {
                    memcpy(&v, &bits, 8);
                } else {
                    uint32_t b32 = (uint32_t)bits;
                    float f;
                    memcpy(&f, &b32, 4);
                    v = (double)f;
                }
                series[t * dim + k] = v;
            }
        /* trailing samples that are NaN in every dimension are padding */
        size_t kept = length;
        for (;;) {
            if (kept == 0)
                break;
            int all_nan = 1;
            for (size_t k = 0; k < dim; k++)
                all_nan &= isnan(series[(kept - 1) * dim + k]) != 0;
            if (!all_nan)
                break;
            kept--;
        }
        if (kept == 0) {
            fail(err, "%s: series %zu (0-based) has no values (all NaN)", path, i);
            cli_dataset_free(out);
            goto done;
        }
        for (size_t t = 0; t < kept * dim; t++)
            if (!isfinite(series[t])) {
                fail(err, "%s: series %zu (0-based), sample %zu: %s", path, i, t / dim,
                     isnan(series[t])
                         ? "missing value (NaN) inside a series; only trailing NaN padding is allowed"
                         : "value is not finite");
                cli_dataset_free(out);
                goto done;
            }
        filled += kept;
        out->offsets[i + 1] = filled;
    }
    out->label_guess = 0;
    mark_ragged(out);
    rc = 0;
done:
    free(header);
    return rc;
}

/* ---------------------------------------------------------------- .ts files */

/* The .ts format of the UEA/UCR archive, aeon and sktime, read from its description:
 *
 *   # comments, anywhere
 *   @problemName NAME
 *   @timeStamps true|false          (true: "(stamp,value)" tuples, not supported here)
 *   @missing true|false             ('?' marks a missing value: an error here, naming the line)
 *   @univariate true|false
 *   @dimensions N                   (aeon writes @dimension N)
 *   @equalLength true|false
 *   @seriesLength N                 (with @equalLength true)
 *   @classLabel true NAME... | false
 *   @targetLabel true|false         (a regression target, a number, last on the line)
 *   @data
 *   v,v,v:v,v,v:LABEL               one case a line: dimensions split by ':', values by ',',
 *                                   the label (if any) last; aeon ends unlabelled cases with ':'
 *
 * Tags are case-insensitive, booleans too (aeon writes "@missing False"). Without @dimensions a file
 * is univariate unless it says @univariate false (then the first case gives the count, as in aeon).
 * Without @classLabel and @targetLabel, a field left over after the dimensions is a label (aeon's
 * default is a label). Class labels become
 * numbers as the CLI's labels are: when every name of @classLabel is a number, that number; else
 * the name's 0-based position in @classLabel (so files with one header agree). Trailing NaN of a
 * series is padding, cut off as in the other formats; all dimensions of a case must then have one
 * length. */

typedef struct ts_span {
    const char *s;
    size_t n;
} ts_span;

static int span_is(ts_span a, const char *word) { return strlen(word) == a.n && strncasecmp(a.s, word, a.n) == 0; }

static ts_span span_trim(const char *a, const char *b)
{
    while (a < b && is_blank(*a))
        a++;
    while (b > a && is_blank(b[-1]))
        b--;
    ts_span t = {a, (size_t)(b - a)};
    return t;
}

/* The next whitespace-separated token of [*p, end), or an empty span at the end. */
static ts_span next_token(const char **p, const char *end)
{
    const char *a = *p;
    while (a < end && is_blank(*a))
        a++;
    const char *b = a;
    while (b < end && !is_blank(*b))
        b++;
    *p = b;
    ts_span t = {a, (size_t)(b - a)};
    return t;
}

/* A whole span as a finite number (a label, a class name); 0 when it is not one. */
static int span_number(ts_span t, double *v)
{
    if (t.n == 0 || t.n >= 128)
        return 0;
    char buf[128];
    memcpy(buf, t.s, t.n);
    buf[t.n] = '\0';
    char *end = NULL;
    *v = strtod(buf, &end);
    return end == buf + t.n && isfinite(*v);
}

/* A whole span as a positive integer (at most 2^40: a header count, not an allocation size). */
static int span_count(ts_span t, size_t *v)
{
    if (t.n == 0 || t.n > 13)
        return 0;
    size_t x = 0;
    for (size_t i = 0; i < t.n; i++) {
        if (t.s[i] < '0' || t.s[i] > '9')
            return 0;
        x = x * 10 + (size_t)(t.s[i] - '0');
    }
    *v = x;
    return x >= 1 && x <= ((size_t)1 << 40);
}

typedef struct ts_header {
    int timestamps, univariate, equal_length, class_label, target_label; /* -1: not given */
    size_t dimensions, series_length;                                    /* 0: not given */
    ts_span *classes;
    size_t class_count;
    int numeric_classes; /* every class name is a distinct number */
} ts_header;

/* One header line (trimmed, starting with '@'); 1 when it is @data. */
static int ts_header_line(const char *path, size_t line, ts_span l, ts_header *h, char *err)
{
    const char *p = l.s, *end = l.s + l.n;
    ts_span tag = next_token(&p, end);
    ts_span value = next_token(&p, end);
    const char *rest = p;
    int printable = (int)(tag.n > 40 ? 40 : tag.n);
    if (span_is(tag, "@data")) {
        if (value.n)
            return fail(err, "%s:%zu: @data takes no value", path, line);
        return 1;
    }
    int missing = -1; /* @missing is information only: '?' is an error whatever it says */
    int *flag = span_is(tag, "@timestamps")    ? &h->timestamps
                : span_is(tag, "@missing")     ? &missing
                : span_is(tag, "@univariate")  ? &h->univariate
                : span_is(tag, "@equallength") ? &h->equal_length
                : span_is(tag, "@targetlabel") ? &h->target_label
                : span_is(tag, "@classlabel")  ? &h->class_label
                                               : NULL;
    if (flag != NULL) {
        int yes = span_is(value, "true"), no = span_is(value, "false");
        if (!yes && !no)
            return fail(err, "%s:%zu: %.*s needs true or false, not '%.*s'", path, line, printable, tag.s,
                        (int)(value.n > 40 ? 40 : value.n), value.s);
        int is_class = span_is(tag, "@classlabel");
        const char *after = rest;
        if (next_token(&after, end).n && !(is_class && yes))
            return fail(err, "%s:%zu: %.*s takes one value, true or false", path, line, printable, tag.s);
        *flag = yes;
        if (is_class && yes) {
            /* the class names: tokens after "true" */
            size_t count = 0;
            for (const char *q = rest; next_token(&q, end).n;)
                count++;
            if (count == 0)
                return fail(err, "%s:%zu: @classLabel true needs the class names after it", path, line);
            free(h->classes);
            h->classes = malloc(count * sizeof *h->classes);
            if (h->classes == NULL)
                return fail(err, "%s: out of memory", path);
            h->class_count = count;
            h->numeric_classes = 1;
            const char *q = rest;
            for (size_t i = 0; i < count; i++) {
                h->classes[i] = next_token(&q, end);
                double v = 0, w = 0;
                if (!span_number(h->classes[i], &v))
                    h->numeric_classes = 0;
                for (size_t j = 0; j < i && h->numeric_classes; j++)
                    if (span_number(h->classes[j], &w) && w == v)
                        h->numeric_classes = 0; /* "1" and "1.0": two classes, one number */
            }
        }
        return 0;
    }
    if (span_is(tag, "@dimensions") || span_is(tag, "@dimension") || span_is(tag, "@serieslength")) {
        size_t *count = span_is(tag, "@serieslength") ? &h->series_length : &h->dimensions;
        const char *after = rest;
        if (!span_count(value, count) || next_token(&after, end).n)
            return fail(err, "%s:%zu: %.*s needs one positive whole number", path, line, printable, tag.s);
        return 0;
    }
    if (span_is(tag, "@problemname"))
        return 0;
    return fail(err,
                "%s:%zu: unknown .ts header line '%.*s' (expected @problemName, @timeStamps, @missing, "
                "@univariate, @dimensions, @equalLength, @seriesLength, @classLabel, @targetLabel or @data)",
                path, line, printable, tag.s);
}

/* The label of a case as a number (see the format's comment above). */
static int ts_label(const char *path, size_t line, ts_span label, const ts_header *h, double *out, char *err)
{
    int printable = (int)(label.n > 40 ? 40 : label.n);
    if (h->class_count) {
        size_t match = h->class_count;
        for (size_t i = 0; i < h->class_count && match == h->class_count; i++)
            if (h->classes[i].n == label.n && memcmp(h->classes[i].s, label.s, label.n) == 0)
                match = i;
        for (size_t i = 0; i < h->class_count && match == h->class_count; i++)
            if (h->classes[i].n == label.n && strncasecmp(h->classes[i].s, label.s, label.n) == 0)
                match = i;
        double v;
        if (match == h->class_count && h->numeric_classes && span_number(label, &v))
            for (size_t i = 0; i < h->class_count && match == h->class_count; i++) {
                double w;
                if (span_number(h->classes[i], &w) && w == v)
                    match = i;
            }
        if (match == h->class_count)
            return fail(err, "%s:%zu: class label '%.*s' is not one of those of @classLabel", path, line,
                        printable, label.s);
        if (h->numeric_classes)
            span_number(h->classes[match], out);
        else
            *out = (double)match;
        return 0;
    }
    if (!span_number(label, out))
        return fail(err, "%s:%zu: the %s '%.*s' is not a finite number%s", path, line,
                    h->target_label == 1 ? "target" : "label", printable, label.s,
                    h->target_label == 1 ? "" : " (and @classLabel names no classes)");
    return 0;
}

static int parse_ts_file(const char *path, const char *data, size_t size, const cli_read_options *opt,
                         cli_dataset *out, char *err)
{
    ts_header h = {-1, -1, -1, -1, -1, 0, 0, NULL, 0, 0};
    double *values = NULL, *labels = NULL, *scratch = NULL;
    size_t *offsets = NULL, *dim_len = NULL;
    size_t values_cap = 0, labels_cap = 0, scratch_cap = 0, offsets_cap = 0, dim_cap = 0;
    size_t count = 0, filled = 0, dim = 0, first_length = 0, data_line = 0;
    int in_data = 0, with_labels = -1, rc = -1;

    const char *p = data, *end = data + size;
    size_t line = 0;
    while (p < end) {
        line++;
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        if (eol == NULL)
            eol = end;
        ts_span l = span_trim(p, eol);
        p = eol + 1;
        if (l.n == 0 || l.s[0] == '#')
            continue;
        if (l.s[0] == '@') {
            if (in_data) {
                fail(err, "%s:%zu: a header line after @data", path, line);
                goto done;
            }
            int r = ts_header_line(path, line, l, &h, err);
            if (r < 0)
                goto done;
            if (r == 1) {
                in_data = 1;
                if (h.timestamps == 1) {
                    fail(err, "%s: @timeStamps true is not supported (the CLI reads no time stamps)", path);
                    goto done;
                }
                if (h.univariate == 1 && h.dimensions > 1) {
                    fail(err, "%s: @univariate true but @dimensions %zu", path, h.dimensions);
                    goto done;
                }
                if (h.class_label == 1 && h.target_label == 1) {
                    fail(err, "%s: both @classLabel true and @targetLabel true", path);
                    goto done;
                }
                /* without @dimensions: one, unless @univariate false (then the first case's count) */
                dim = h.dimensions ? h.dimensions : h.univariate == 0 ? 0 : 1;
                if (h.class_label == 1 || h.target_label == 1)
                    with_labels = 1;
                else if (h.class_label == 0 || h.target_label == 0)
                    with_labels = 0;
            }
            continue;
        }
        if (!in_data) {
            fail(err, "%s:%zu: data before the @data line (a .ts file starts with its @ header)", path, line);
            goto done;
        }

        /* one case: fields split by ':' */
        size_t fields = 1;
        for (size_t i = 0; i < l.n; i++)
            fields += l.s[i] == ':';
        const char *last_colon = l.s + l.n;
        while (last_colon > l.s && last_colon[-1] != ':')
            last_colon--;
        ts_span last = span_trim(last_colon, l.s + l.n); /* the whole line when it has no ':' */
        int trailing_empty = fields > 1 && last.n == 0;
        if (with_labels == -1) /* no @classLabel, no @targetLabel: a label when a field is left over */
            with_labels = dim && fields - (size_t)trailing_empty == dim + 1;
        size_t channels = fields - (size_t)(with_labels ? 1 : trailing_empty);
        if (with_labels && (fields == 1 || last.n == 0)) {
            fail(err, "%s:%zu: the case has no label (expected last, after the values and a ':')", path, line);
            goto done;
        }
        if (dim == 0)
            dim = channels;
        if (channels != dim) {
            fail(err, "%s:%zu: the case has %zu dimension%s but %s %zu (dimensions are separated by ':'%s)", path,
                 line, channels, channels == 1 ? "" : "s",
                 h.dimensions ? "@dimensions says" : h.univariate != 0 ? "a univariate file has" : "the first case has",
                 dim, with_labels ? ", the label last" : "");
            goto done;
        }
        if (reserve((void **)&dim_len, &dim_cap, dim, sizeof(size_t)) != 0)
            goto oom;
        size_t case_values = 0;
        const char *f = l.s;
        for (size_t k = 0; k < dim; k++) {
            const char *fe = memchr(f, ':', (size_t)(l.s + l.n - f));
            if (fe == NULL)
                fe = l.s + l.n;
            size_t n = 0;
            const char *v = f;
            for (;;) {
                const char *ve = v;
                while (ve < fe && *ve != ',')
                    ve++;
                ts_span t = span_trim(v, ve);
                int printable = (int)(t.n > 40 ? 40 : t.n);
                if (t.n == 1 && t.s[0] == '?') {
                    fail(err, "%s:%zu: dimension %zu, value %zu: missing value '?' (the CLI does not fill in "
                              "missing values)", path, line, k + 1, n + 1);
                    goto done;
                }
                int ok;
                double x = parse_field(t.s, t.n, &ok);
                if (!ok || t.n == 0) {
                    fail(err, "%s:%zu: dimension %zu, value %zu: %s '%.*s'", path, line, k + 1, n + 1,
                         t.n ? "malformed number" : "empty value", printable, t.s);
                    goto done;
                }
                if (reserve((void **)&scratch, &scratch_cap, case_values + 1, sizeof(double)) != 0)
                    goto oom;
                scratch[case_values++] = x;
                n++;
                if (ve >= fe)
                    break;
                v = ve + 1;
            }
            dim_len[k] = n;
            f = fe + 1;
        }
        size_t raw = dim_len[0];
        for (size_t k = 1; k < dim; k++)
            if (dim_len[k] != raw) {
                fail(err, "%s:%zu: dimension %zu has %zu values but dimension 1 has %zu (the dimensions of a "
                          "case must have one length)", path, line, k + 1, dim_len[k], raw);
                goto done;
            }
        if (h.series_length && h.equal_length != 0 && raw != h.series_length) {
            fail(err, "%s:%zu: the case has %zu values per dimension but @seriesLength is %zu", path, line, raw,
                 h.series_length);
            goto done;
        }
        if (h.equal_length == 1 && count > 0 && raw != first_length) {
            fail(err, "%s:%zu: the case has %zu values per dimension but line %zu has %zu, and the header says "
                      "@equalLength true", path, line, raw, data_line, first_length);
            goto done;
        }
        if (count == 0)
            first_length = raw, data_line = line;
        /* trailing NaN in every dimension is padding; then every value must be finite */
        size_t kept = raw;
        for (; kept > 0; kept--) {
            int all_nan = 1;
            for (size_t k = 0; k < dim; k++)
                all_nan &= isnan(scratch[k * raw + kept - 1]) != 0;
            if (!all_nan)
                break;
        }
        if (kept == 0) {
            fail(err, "%s:%zu: the case has no values (empty or all NaN)", path, line);
            goto done;
        }
        for (size_t k = 0; k < dim; k++)
            for (size_t t = 0; t < kept; t++) {
                double x = scratch[k * raw + t];
                if (!isfinite(x)) {
                    fail(err, "%s:%zu: dimension %zu, value %zu: %s", path, line, k + 1, t + 1,
                         isnan(x) ? "missing value (NaN) inside a series; only trailing NaN padding is allowed"
                                  : "value is not finite");
                    goto done;
                }
            }
        if (kept > (SIZE_MAX / sizeof(double) - filled * dim) / dim ||
            reserve((void **)&values, &values_cap, (filled + kept) * dim + 1, sizeof(double)) != 0 ||
            reserve((void **)&offsets, &offsets_cap, count + 2, sizeof(size_t)) != 0 ||
            reserve((void **)&labels, &labels_cap, count + 1, sizeof(double)) != 0)
            goto oom;
        for (size_t t = 0; t < kept; t++)
            for (size_t k = 0; k < dim; k++)
                values[(filled + t) * dim + k] = scratch[k * raw + t];
        if (with_labels && ts_label(path, line, last, &h, &labels[count], err) != 0)
            goto done;
        offsets[count] = filled;
        filled += kept;
        count++;
        offsets[count] = filled;
    }
    if (!in_data) {
        fail(err, "%s: no @data line (not a .ts file?)", path);
        goto done;
    }
    if (count == 0) {
        fail(err, "%s: file is empty (no cases after @data)", path);
        goto done;
    }
    if (opt->labels == CLI_LABELS_FIRST && !with_labels) {
        fail(err, "%s: the file has no class labels (@classLabel false or absent), but --labels was given", path);
        goto done;
    }
    memset(out, 0, sizeof *out);
    out->values = values;
    out->offsets = offsets;
    out->count = count;
    out->dim = dim;
    if (with_labels && opt->labels != CLI_LABELS_NONE) {
        if (h.class_count && !h.numeric_classes) {
            out->class_names = calloc(h.class_count, sizeof *out->class_names);
            if (out->class_names == NULL)
                goto oom_out;
            out->class_count = h.class_count;
            for (size_t k = 0; k < h.class_count; k++) {
                out->class_names[k] = malloc(h.classes[k].n + 1);
                if (out->class_names[k] == NULL)
                    goto oom_out;
                memcpy(out->class_names[k], h.classes[k].s, h.classes[k].n);
                out->class_names[k][h.classes[k].n] = '\0';
            }
        }
        out->labels = labels;
        labels = NULL;
    }
    out->label_guess = out->labels != NULL;
    values = NULL;
    offsets = NULL;
    mark_ragged(out);
    rc = 0;
    goto done;
oom_out:
    values = NULL; /* owned by out now */
    offsets = NULL;
    cli_dataset_free(out);
oom:
    fail(err, "%s: out of memory", path);
done:
    free(values);
    free(offsets);
    free(labels);
    free(scratch);
    free(dim_len);
    free(h.classes);
    return rc;
}

/* data: size bytes followed by a NUL (parsers may look one byte ahead) */
static int parse_dataset(const char *name, cli_format format, const char *data, size_t size,
                         const cli_read_options *opt, cli_dataset *out, char *err)
{
    memset(out, 0, sizeof *out);
    /* a text file saved with a UTF-8 byte order mark (spreadsheets on Windows): the mark is not data
     * (it made the first field "non-numeric", with the mark invisible in the message) */
    if (format != CLI_FORMAT_NPY && size >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0)
        data += 3, size -= 3;
    switch (format) {
    case CLI_FORMAT_NPY: return parse_npy_file(name, data, size, opt, out, err);
    case CLI_FORMAT_TS: return parse_ts_file(name, data, size, opt, out, err);
    case CLI_FORMAT_CSV: return parse_text_file(name, data, size, 1, opt, out, err);
    default: return parse_text_file(name, data, size, 0, opt, out, err);
    }
}

int cli_read_dataset(const char *path, const cli_read_options *opt, cli_dataset *out, char *err)
{
    memset(out, 0, sizeof *out);
    char *data = NULL;
    size_t size = 0;
    if (read_whole_file(path, &data, &size, err) != 0)
        return -1;
    int rc = parse_dataset(path, cli_input_format(path), data, size, opt, out, err);
    free(data);
    return rc;
}

int cli_parse_dataset(const char *name, cli_format format, const void *data, size_t size,
                      const cli_read_options *opt, cli_dataset *out, char *err)
{
    memset(out, 0, sizeof *out);
    char *copy = malloc(size + 1);
    if (copy == NULL)
        return fail(err, "%s: out of memory", name);
    if (size)
        memcpy(copy, data, size);
    copy[size] = '\0';
    int rc = parse_dataset(name, format, copy, size, opt, out, err);
    free(copy);
    return rc;
}

/* ---------------------------------------------------------------- atomic output files */

void cli_output_discard(cli_output *o)
{
    if (o->fp) {
        fclose(o->fp);
        o->fp = NULL;
    }
    if (o->temp_path) {
        unlink(o->temp_path);
        cli_temp_unregister(o->temp_path);
        free(o->temp_path);
        o->temp_path = NULL;
    }
    free(o->path);
    o->path = NULL;
}

int cli_output_open(cli_output *o, const char *path, char *err)
{
    memset(o, 0, sizeof *o);
    const char *slash = strrchr(path, '/');
    size_t dir_len = slash ? (size_t)(slash - path + 1) : 0;
    const char *base = path + dir_len;
    struct stat st;
    if (*base == '\0' || (stat(path, &st) == 0 && S_ISDIR(st.st_mode)))
        return fail(err, "%s: the output name is a directory", path);
    o->path = strdup(path);
    o->temp_path = malloc(strlen(path) + 32);
    if (o->path == NULL || o->temp_path == NULL) {
        cli_output_discard(o);
        return fail(err, "out of memory");
    }
    /* hidden, in the same directory (rename is atomic only within one file system); registered
     * before it exists, so that a second Ctrl-C at any moment removes it */
    sprintf(o->temp_path, "%.*s.%s.tmp-XXXXXX", (int)dir_len, path, base);
    if (cli_temp_register(o->temp_path) != 0) {
        free(o->temp_path);
        o->temp_path = NULL;
        cli_output_discard(o);
        return fail(err, "%s: too many output files at once", path);
    }
    int fd = mkstemp(o->temp_path);
    if (fd < 0) {
        int e = errno;
        cli_temp_unregister(o->temp_path);
        free(o->temp_path);
        o->temp_path = NULL;
        cli_output_discard(o);
        return fail(err, "%s: cannot create the output file: %s", path, strerror(e));
    }
    cli_checkpoint();
    /* mkstemp makes the file private (0600); give it the permissions a plain fopen would */
    mode_t mask = umask(0);
    umask(mask);
    fchmod(fd, 0666 & ~mask);
    o->fp = fdopen(fd, "wb");
    if (o->fp == NULL) {
        close(fd);
        cli_output_discard(o);
        return fail(err, "%s: cannot open the output file: %s", path, strerror(errno));
    }
    return 0;
}

int cli_output_finish(cli_output *o, char *err)
{
    int ok = fflush(o->fp) == 0 && !ferror(o->fp);
    int e = errno;
    if (ok && fsync(fileno(o->fp)) != 0 && errno != EINVAL && errno != EROFS)
        ok = 0, e = errno;
    int closed = fclose(o->fp) == 0;
    o->fp = NULL;
    if (ok && !closed)
        ok = 0, e = errno;
    cli_checkpoint();
    if (!ok) {
        fail(err, "%s: cannot write the output file: %s", o->path, strerror(e));
        cli_output_discard(o);
        return -1;
    }
    return 0;
}

int cli_output_publish(cli_output *o, char *err)
{
    if (rename(o->temp_path, o->path) != 0) {
        fail(err, "%s: cannot write the output file: %s", o->path, strerror(errno));
        cli_output_discard(o);
        return -1;
    }
    cli_temp_unregister(o->temp_path);
    free(o->temp_path);
    o->temp_path = NULL;
    cli_output_discard(o);
    return 0;
}

int cli_output_commit(cli_output *o, char *err)
{
    return cli_output_finish(o, err) != 0 ? -1 : cli_output_publish(o, err);
}

/* ---------------------------------------------------------------- writers */

int cli_write_npy_header(FILE *fp, const char *descr, const size_t *shape, int ndim)
{
    char dims[160] = "";
    size_t used = 0;
    for (int i = 0; i < ndim; i++) /* numpy writes (5,) for one dimension, (2, 3) for more */
        used += (size_t)snprintf(dims + used, sizeof dims - used, i == 0 ? "%zu" : ", %zu", shape[i]);
    char dict[256];
    int n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (%s%s), }", descr,
                     dims, ndim == 1 ? "," : "");
    /* magic, version, header length, dict, spaces, '\n': the data starts 64-byte aligned */
    size_t prefix = 10;
    size_t total = (prefix + (size_t)n + 1 + 63) / 64 * 64;
    int version = 1;
    if (total - prefix > 65535) {
        prefix = 12;
        total = (prefix + (size_t)n + 1 + 63) / 64 * 64;
        version = 2;
    }
    size_t header_len = total - prefix;
    unsigned char head[12] = {0x93, 'N', 'U', 'M', 'P', 'Y', (unsigned char)version, 0};
    for (size_t i = 0; i < prefix - 8; i++)
        head[8 + i] = (unsigned char)(header_len >> (8 * i));
    if (fwrite(head, 1, prefix, fp) != prefix || fwrite(dict, 1, (size_t)n, fp) != (size_t)n)
        return -1;
    for (size_t i = prefix + (size_t)n; i + 1 < total; i++)
        if (fputc(' ', fp) == EOF)
            return -1;
    return fputc('\n', fp) == EOF ? -1 : 0;
}

static int write_le(FILE *fp, const void *v, size_t n, size_t item)
{
    unsigned char buf[8 * 512];
    const unsigned char *src = v;
    while (n > 0) {
        size_t chunk = n < 512 ? n : 512;
        for (size_t i = 0; i < chunk; i++) {
            uint64_t bits = 0;
            memcpy(&bits, src + i * item, item);
            for (size_t b = 0; b < item; b++)
                buf[i * item + b] = (unsigned char)(bits >> (8 * b));
        }
        if (fwrite(buf, item, chunk, fp) != chunk)
            return -1;
        src += chunk * item;
        n -= chunk;
    }
    return 0;
}

int cli_write_f64_le(FILE *fp, const double *v, size_t n) { return write_le(fp, v, n, 8); }
int cli_write_i64_le(FILE *fp, const int64_t *v, size_t n) { return write_le(fp, v, n, 8); }
int cli_write_f32_le(FILE *fp, const float *v, size_t n) { return write_le(fp, v, n, 4); }

int cli_matrix_begin(cli_matrix_writer *w, cli_output *o, cli_format format, size_t rows, size_t cols,
                     int float32, char *err)
{
    w->out = o;
    w->format = format;
    w->rows = rows;
    w->cols = cols;
    w->rows_written = 0;
    w->float32 = float32;
    if (float32 && format != CLI_FORMAT_NPY)
        return fail(err, "%s: float32 matrices are written as .npy only", o->path);
    if (format != CLI_FORMAT_NPY)
        return 0; /* text has no header */
    size_t shape[2] = {rows, cols};
    errno = 0;
    if (cli_write_npy_header(o->fp, float32 ? "<f4" : "<f8", shape, 2) != 0 || fflush(o->fp) != 0)
        return fail(err, "%s: write error: %s", o->path, strerror(errno));
    return 0;
}

int cli_matrix_append(cli_matrix_writer *w, const void *block, size_t block_rows, char *err)
{
    FILE *fp = w->out->fp;
    if (block_rows > w->rows - w->rows_written)
        return fail(err, "%s: %zu more rows than the matrix's %zu", w->out->path,
                    block_rows - (w->rows - w->rows_written), w->rows);
    size_t n = block_rows * w->cols;
    int bad = 0;
    cli_checkpoint();
    errno = 0;
    if (w->format == CLI_FORMAT_NPY) {
        bad = w->float32 ? cli_write_f32_le(fp, block, n) != 0 : cli_write_f64_le(fp, block, n) != 0;
    } else {
        const double *m = block;
        char sep = w->format == CLI_FORMAT_CSV ? ',' : '\t';
        for (size_t i = 0; i < n && !bad; i++) {
            /* text is slow to write (minutes for a large matrix): stop at Ctrl-C, row by row */
            if (i % w->cols == 0 && cli_interrupted())
                return fail(err, "%s: interrupted", w->out->path);
            bad = fprintf(fp, "%.17g%c", m[i], (i + 1) % w->cols != 0 ? sep : '\n') < 0;
        }
    }
    bad = bad || fflush(fp) != 0;
    if (bad)
        return fail(err, "%s: write error: %s", w->out->path, errno ? strerror(errno) : "unknown cause");
    w->rows_written += block_rows;
    return 0;
}

int cli_write_matrix(cli_output *o, cli_format format, const double *m, size_t rows, size_t cols, char *err)
{
    cli_matrix_writer w;
    if (cli_matrix_begin(&w, o, format, rows, cols, 0, err) != 0)
        return -1;
    return cli_matrix_append(&w, m, rows, err);
}

int cli_write_dataset(cli_output *o, cli_format format, const double *values, const double *labels,
                      size_t count, size_t length, char *err)
{
    if (format == CLI_FORMAT_NPY)
        return cli_write_matrix(o, format, values, count, length, err);
    char sep = format == CLI_FORMAT_CSV ? ',' : '\t';
    int bad = 0;
    for (size_t i = 0; i < count && !bad; i++) {
        if (labels)
            bad = fprintf(o->fp, "%.17g%c", labels[i], sep) < 0;
        for (size_t t = 0; t < length && !bad; t++)
            bad = fprintf(o->fp, "%.17g%c", values[i * length + t], t + 1 < length ? sep : '\n') < 0;
    }
    return bad ? fail(err, "%s: write error: %s", o->path, strerror(errno)) : 0;
}

/* ---------------------------------------------------------------- for the image commands (image_io.c) */

int cli_read_file(const char *path, char **data, size_t *size, char *err)
{
    return read_whole_file(path, data, size, err);
}

int cli_npy_header(const char *path, const void *data, size_t size, char *descr, size_t descr_cap, int *fortran,
                   size_t *shape, int *ndim, size_t *data_start, char *err)
{
    const unsigned char *u = (const unsigned char *)data;
    if (size == 0)
        return fail(err, "%s: file is empty", path);
    if (size < 10 || memcmp(data, "\x93NUMPY", 6) != 0)
        return fail(err, "%s: not a .npy file (bad magic string)", path);
    size_t header_len, header_start;
    if (u[6] == 1) {
        header_len = (size_t)load_le(u + 8, 2);
        header_start = 10;
    } else if ((u[6] == 2 || u[6] == 3) && size >= 12) {
        header_len = (size_t)load_le(u + 8, 4);
        header_start = 12;
    } else {
        return fail(err, "%s: unsupported .npy format version %d.%d", path, u[6], u[7]);
    }
    if (header_len > size - header_start)
        return fail(err, "%s: truncated .npy header", path);
    char *header = malloc(header_len + 1);
    if (header == NULL)
        return fail(err, "%s: out of memory", path);
    memcpy(header, u + header_start, header_len);
    header[header_len] = '\0';
    int rc = parse_npy_header(header, descr, descr_cap, fortran, shape, ndim);
    free(header);
    if (rc != 0)
        return fail(err, "%s: malformed .npy header", path);
    *data_start = header_start + header_len;
    return 0;
}
