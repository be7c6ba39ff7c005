/* The tree edit distance commands (issue 13): `ted A B` and `ted-pairwise TREES [TREES2] -o OUT`.
 * Trees come in bracket notation (arguments or files, one tree per line) or as X-TED's pair of
 * files; the outputs go through io.h's atomic writers and the runs through progress.h's bar and
 * Ctrl-C handling, as the series commands do. */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

/* ---------------------------------------------------------------- reading trees */

/* The whole file, NUL-terminated; NULL (err set) when it cannot be read. */
static char *read_file(const char *path, size_t *size, char *err)
{
    FILE *fp = fopen(path, "rb");
    if (fp == NULL) {
        snprintf(err, CLI_ERR_SIZE, "%s: cannot open the file", path);
        return NULL;
    }
    size_t cap = 1 << 16, len = 0;
    char *buf = (char *)malloc(cap);
    while (buf != NULL) {
        if (len + 1 >= cap) {
            char *grown = (char *)realloc(buf, cap * 2);
            if (grown == NULL) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = grown;
            cap *= 2;
        }
        size_t got = fread(buf + len, 1, cap - 1 - len, fp);
        len += got;
        if (got == 0)
            break;
    }
    int failed = ferror(fp);
    fclose(fp);
    if (buf == NULL || failed) {
        free(buf);
        snprintf(err, CLI_ERR_SIZE, "%s: %s", path, buf == NULL ? "out of memory" : "read error");
        return NULL;
    }
    buf[len] = '\0';
    *size = len;
    return buf;
}

/* A growing list of parsed trees. */
typedef struct tree_list {
    ww_tree *trees;
    size_t count, capacity;
} tree_list;

static int tree_list_add(tree_list *l, const ww_tree *t)
{
    if (l->count == l->capacity) {
        size_t cap = l->capacity ? 2 * l->capacity : 16;
        ww_tree *grown = (ww_tree *)realloc(l->trees, cap * sizeof(ww_tree));
        if (grown == NULL)
            return -1;
        l->trees = grown;
        l->capacity = cap;
    }
    l->trees[l->count++] = *t;
    return 0;
}

static void tree_list_free(tree_list *l)
{
    for (size_t k = 0; k < l->count; k++)
        ww_tree_free(&l->trees[k]);
    free(l->trees);
    memset(l, 0, sizeof *l);
}

/* Why a parser failed, for messages. */
static const char *parse_failure(ww_status st)
{
    return st == WW_ERR_TREE ? "malformed tree (unbalanced or empty brackets, text around the tree, or X-TED "
                               "labels and adjacency that do not match)"
                             : ww_strerror(st);
}

/* Splits text into lines in place: returns the next line (without its '\n' or "\r\n") and moves
 * *at past it; NULL at the end. */
static char *next_line(char **at, char *end, size_t *len)
{
    if (*at >= end)
        return NULL;
    char *line = *at, *nl = memchr(line, '\n', (size_t)(end - line));
    char *stop = nl ? nl : end;
    *at = nl ? nl + 1 : end;
    if (stop > line && stop[-1] == '\r')
        stop--;
    *len = (size_t)(stop - line);
    return line;
}

static int blank(const char *s, size_t len)
{
    for (size_t k = 0; k < len; k++)
        if (s[k] != ' ' && s[k] != '\t' && s[k] != '\r' && s[k] != '\v' && s[k] != '\f')
            return 0;
    return 1;
}

/* Lines of a text without the blank ones at its end. */
static size_t content_lines(char *text, size_t size)
{
    char *at = text, *end = text + size;
    size_t len, count = 0, last = 0;
    char *line;
    while ((line = next_line(&at, end, &len)) != NULL) {
        count++;
        if (!blank(line, len))
            last = count;
    }
    return last;
}

/* X-TED's adjacency file of a labels file NAME_nodes_N.txt: NAME_nodes_adj_N.txt, when it exists. */
static char *xted_adjacency_path(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *mark = NULL;
    for (const char *p = strstr(base, "_nodes_"); p; p = strstr(p + 1, "_nodes_"))
        mark = p;
    size_t n = strlen(path);
    if (mark == NULL || strncmp(mark, "_nodes_adj_", 11) == 0 || n < 4 || strcmp(path + n - 4, ".txt") != 0)
        return NULL;
    char *adj = (char *)malloc(n + 5);
    if (adj == NULL)
        return NULL;
    size_t head = (size_t)(mark - path) + 7; /* through "_nodes_" */
    memcpy(adj, path, head);
    memcpy(adj + head, "adj_", 4);
    memcpy(adj + head + 4, path + head, n - head + 1);
    struct stat st;
    if (stat(adj, &st) != 0) {
        free(adj);
        return NULL;
    }
    return adj;
}

/* The trees of a file: X-TED's pair, or one bracket tree per non-blank line. 0, or -1 (err set). */
static int read_tree_file(ww_labels *d, const char *path, tree_list *out, char *err)
{
    size_t size, adj_size = 0;
    char *text = read_file(path, &size, err);
    if (text == NULL)
        return -1;
    char *adj_path = xted_adjacency_path(path), *adj = NULL;
    if (adj_path && (adj = read_file(adj_path, &adj_size, err)) == NULL) {
        free(text);
        free(adj_path);
        return -1;
    }
    int rc = 0;
    if (adj) {
        const size_t nl = content_lines(text, size), na = content_lines(adj, adj_size);
        if (nl != na) {
            snprintf(err, CLI_ERR_SIZE, "%s has %zu trees but its adjacency file %s has %zu lines: they do not match",
                     path, nl, adj_path, na);
            rc = -1;
        }
        char *at = text, *end = text + size, *aat = adj, *aend = adj + adj_size;
        for (size_t k = 0; rc == 0 && k < nl; k++) {
            size_t ll = 0, al = 0;
            char *l = next_line(&at, end, &ll), *a = next_line(&aat, aend, &al);
            ww_tree t;
            ww_status st = ww_tree_parse_xted(d, l, ll, a ? a : "", a ? al : 0, &t);
            if (st != WW_OK) {
                snprintf(err, CLI_ERR_SIZE, "%s:%zu (with %s:%zu): %s", path, k + 1, adj_path, k + 1,
                         parse_failure(st));
                rc = -1;
            } else if (tree_list_add(out, &t) != 0) {
                ww_tree_free(&t);
                snprintf(err, CLI_ERR_SIZE, "%s: out of memory", path);
                rc = -1;
            }
        }
    } else {
        char *at = text, *end = text + size, *line;
        size_t len, number = 0;
        while (rc == 0 && (line = next_line(&at, end, &len)) != NULL) {
            number++;
            if (blank(line, len))
                continue;
            ww_tree t;
            ww_status st = ww_tree_parse_bracket(d, line, len, &t);
            if (st != WW_OK) {
                snprintf(err, CLI_ERR_SIZE, "%s:%zu: %s", path, number, parse_failure(st));
                rc = -1;
            } else if (tree_list_add(out, &t) != 0) {
                ww_tree_free(&t);
                snprintf(err, CLI_ERR_SIZE, "%s: out of memory", path);
                rc = -1;
            }
        }
    }
    if (rc == 0 && out->count == 0) {
        snprintf(err, CLI_ERR_SIZE, "%s: no trees in the file", path);
        rc = -1;
    }
    free(text);
    free(adj);
    free(adj_path);
    return rc;
}

/* One tree: an argument in bracket notation (starting with '{'), or a file holding one. */
static int read_tree_arg(ww_labels *d, const char *arg, ww_tree *out, char *err)
{
    const char *p = arg;
    while (*p == ' ' || *p == '\t' || *p == '\n')
        p++;
    if (*p == '{') {
        ww_status st = ww_tree_parse_bracket(d, arg, strlen(arg), out);
        if (st != WW_OK)
            snprintf(err, CLI_ERR_SIZE, "'%s': %s", arg, parse_failure(st));
        return st == WW_OK ? 0 : -1;
    }
    size_t size;
    char *text = read_file(arg, &size, err);
    if (text == NULL)
        return -1;
    ww_status st = ww_tree_parse_bracket(d, text, size, out);
    free(text);
    if (st != WW_OK)
        snprintf(err, CLI_ERR_SIZE, "%s: %s (the file must hold one tree in bracket notation)", arg,
                 parse_failure(st));
    return st == WW_OK ? 0 : -1;
}

/* ---------------------------------------------------------------- running */

static int open_ted_context(const cli_settings *s, ww_ctx **ctx)
{
    ww_ctx_options o = ww_ctx_options_default();
    o.backend = s->backend;
    o.num_threads = s->threads;
    ww_status st = ww_ctx_create(ctx, &o);
    if (st != WW_OK) {
        cli_error("cannot use the %s backend: %s", s->backend == WW_BACKEND_CUDA ? "cuda" : "requested",
                  ww_strerror(st));
        *ctx = NULL;
        return CLI_EXIT_RUNTIME;
    }
    return CLI_EXIT_OK;
}

static int ted_failure(ww_status st, const char *what)
{
    if (st == WW_ERR_CANCELLED || cli_interrupted()) {
        fprintf(stderr, "wavewarp: interrupted; no output written\n");
        return CLI_EXIT_INTERRUPTED;
    }
    if (st == WW_ERR_UNSUPPORTED)
        cli_error("%s: the tree edit distance has no GPU engine in this version; --backend cpu or auto computes it",
                  what);
    else
        cli_error("%s: %s", what, ww_strerror(st));
    return CLI_EXIT_RUNTIME;
}

static int check_costs(const cli_settings *s)
{
    ww_status st = ww_ted_params_check(&s->ted);
    if (st != WW_OK) /* the option parser refuses what the library would: kept for safety */
        return cli_usage_error(s, "invalid costs: %s", ww_strerror(st));
    return CLI_EXIT_OK;
}

int cli_cmd_ted(const cli_settings *s)
{
    char err[CLI_ERR_SIZE];
    int rc = check_costs(s);
    if (rc != CLI_EXIT_OK)
        return rc;
    ww_labels *d = NULL;
    ww_tree a = {0, NULL, NULL}, b = {0, NULL, NULL};
    ww_ctx *ctx = NULL;
    if (ww_labels_create(&d) != WW_OK) {
        cli_error("out of memory");
        return CLI_EXIT_RUNTIME;
    }
    if (read_tree_arg(d, s->positional[0], &a, err) != 0 || read_tree_arg(d, s->positional[1], &b, err) != 0) {
        cli_error("%s", err);
        rc = CLI_EXIT_RUNTIME;
    }
    if (rc == CLI_EXIT_OK)
        rc = open_ted_context(s, &ctx);
    if (rc == CLI_EXIT_OK) {
        double dist = 0;
        ww_status st;
        ww_ted_edit *edits = NULL;
        size_t count = 0;
        if (s->ted_mapping) {
            /* the mapping is computed on the CPU, whatever the backend */
            edits = (ww_ted_edit *)malloc((a.count + b.count + 1) * sizeof(ww_ted_edit));
            st = edits ? ww_ted_mapping(ctx, &a, &b, &s->ted, edits, &count, &dist) : WW_ERR_MEMORY;
        } else {
            st = ww_ted(ctx, &a, &b, &s->ted, &dist);
        }
        if (st != WW_OK || cli_interrupted()) {
            rc = ted_failure(st, "ted");
        } else {
            printf("%.17g\n", dist);
            for (size_t k = 0; k < count; k++)
                printf("%d %d\n", (int)edits[k].a, (int)edits[k].b);
            if (fflush(stdout) != 0) {
                cli_error("cannot write the result to standard output");
                rc = CLI_EXIT_RUNTIME;
            }
        }
        free(edits);
    }
    ww_ctx_destroy(ctx);
    ww_tree_free(&a);
    ww_tree_free(&b);
    ww_labels_destroy(d);
    return rc;
}

int cli_cmd_ted_pairwise(const cli_settings *s)
{
    char err[CLI_ERR_SIZE];
    int rc = check_costs(s);
    if (rc != CLI_EXIT_OK)
        return rc;
    if (s->output == NULL)
        return cli_usage_error(s, "missing the output file (-o FILE)");
    const cli_format format = cli_output_format(s->output);
    if (format == CLI_FORMAT_UNKNOWN)
        return cli_usage_error(s, "%s: unknown output format; use .npy, .csv, .tsv or .txt", s->output);
    ww_labels *d = NULL;
    tree_list x = {0}, y = {0};
    ww_ctx *ctx = NULL;
    double *matrix = NULL;
    cli_output out = {0};
    if (ww_labels_create(&d) != WW_OK) {
        cli_error("out of memory");
        return CLI_EXIT_RUNTIME;
    }
    const int two = s->positional_count == 2;
    if (read_tree_file(d, s->positional[0], &x, err) != 0 || (two && read_tree_file(d, s->positional[1], &y, err) != 0)) {
        cli_error("%s", err);
        rc = CLI_EXIT_RUNTIME;
    }
    const size_t rows = x.count, cols = two ? y.count : x.count;
    if (rc == CLI_EXIT_OK) {
        if (cols == 0 || rows <= SIZE_MAX / sizeof(double) / cols)
            matrix = (double *)malloc((rows * cols > 0 ? rows * cols : 1) * sizeof(double));
        if (matrix == NULL) {
            cli_error("out of memory for the %zu x %zu matrix", rows, cols);
            rc = CLI_EXIT_RUNTIME;
        }
    }
    if (rc == CLI_EXIT_OK)
        rc = open_ted_context(s, &ctx);
    /* create the output before computing: an unwritable place fails now, not after hours */
    if (rc == CLI_EXIT_OK && cli_output_open(&out, s->output, err) != 0) {
        cli_error("%s", err);
        rc = CLI_EXIT_RUNTIME;
    }
    if (rc == CLI_EXIT_OK) {
        uint64_t cells = 0;
        for (size_t i = 0; i < rows; i++)
            for (size_t j = 0; j < cols; j++)
                cells += (uint64_t)x.trees[i].count * (two ? y.trees[j].count : x.trees[j].count);
        cli_progress progress;
        cli_progress_start(&progress, "ted-pairwise", s->progress, cells);
        ww_pairwise_options po = ww_pairwise_options_default();
        po.progress = cli_progress_callback;
        po.progress_user = &progress;
        const double start = cli_now();
        ww_status st = ww_ted_pairwise(ctx, x.trees, x.count, two ? y.trees : NULL, y.count, &s->ted, matrix, &po);
        const double seconds = cli_now() - start;
        cli_progress_finish(&progress);
        cli_checkpoint();
        if (st != WW_OK || cli_interrupted()) {
            rc = ted_failure(st, "ted-pairwise");
        } else if (cli_write_matrix(&out, format, matrix, rows, cols, err) != 0 || cli_output_finish(&out, err) != 0 ||
                   (cli_checkpoint(), cli_interrupted()) || cli_output_publish(&out, err) != 0) {
            if (cli_interrupted()) {
                fprintf(stderr, "wavewarp: interrupted; no output written\n");
                rc = CLI_EXIT_INTERRUPTED;
            } else {
                cli_error("%s", err);
                rc = CLI_EXIT_RUNTIME;
            }
        } else if (!s->quiet) {
            fprintf(stderr, "wavewarp: %zu x %zu tree edit distances (costs %g, %g, %g) in %.3f s on %s -> %s\n", rows,
                    cols, s->ted.delete_cost, s->ted.insert_cost, s->ted.relabel_cost, seconds, ww_ctx_describe(ctx),
                    s->output);
        }
    }
    cli_output_discard(&out);
    ww_ctx_destroy(ctx);
    free(matrix);
    tree_list_free(&x);
    tree_list_free(&y);
    ww_labels_destroy(d);
    return rc;
}
