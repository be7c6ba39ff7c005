/* Trees from text: the bracket notation of APTED and tree-similarity, and X-TED's pair of files,
 * with a dictionary that turns label strings into ids shared across the trees of a call. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- the label dictionary */

struct ww_labels {
    char **names;    /* by id, NUL-terminated copies */
    size_t *lengths; /* by id (a name may hold NUL bytes) */
    size_t count, capacity;
    int32_t *slots; /* open addressing: id + 1, 0 for empty */
    size_t slot_count;
};

ww_status ww_labels_create(ww_labels **out)
{
    if (out == NULL)
        return WW_ERR_NULL_POINTER;
    *out = (ww_labels *)calloc(1, sizeof(ww_labels));
    return *out ? WW_OK : WW_ERR_MEMORY;
}

void ww_labels_destroy(ww_labels *d)
{
    if (d == NULL)
        return;
    for (size_t k = 0; k < d->count; k++)
        free(d->names[k]);
    free(d->names);
    free(d->lengths);
    free(d->slots);
    free(d);
}

size_t ww_labels_count(const ww_labels *d) { return d ? d->count : 0; }

const char *ww_labels_name(const ww_labels *d, int32_t id)
{
    return d && id >= 0 && (size_t)id < d->count ? d->names[id] : NULL;
}

static uint64_t hash_bytes(const char *s, size_t len) /* FNV-1a */
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t k = 0; k < len; k++)
        h = (h ^ (unsigned char)s[k]) * 1099511628211ULL;
    return h;
}

static ww_status grow_slots(ww_labels *d)
{
    const size_t n = d->slot_count ? 2 * d->slot_count : 64;
    int32_t *slots = (int32_t *)calloc(n, sizeof(int32_t));
    if (slots == NULL)
        return WW_ERR_MEMORY;
    for (size_t id = 0; id < d->count; id++) {
        size_t s = (size_t)hash_bytes(d->names[id], d->lengths[id]) & (n - 1);
        while (slots[s])
            s = (s + 1) & (n - 1);
        slots[s] = (int32_t)id + 1;
    }
    free(d->slots);
    d->slots = slots;
    d->slot_count = n;
    return WW_OK;
}

ww_status ww_labels_intern(ww_labels *d, const char *name, size_t len, int32_t *id)
{
    if (d == NULL || id == NULL || (name == NULL && len > 0))
        return WW_ERR_NULL_POINTER;
    if (d->count >= (size_t)INT32_MAX - 1)
        return WW_ERR_OVERFLOW;
    ww_status st;
    if (2 * (d->count + 1) > d->slot_count && (st = grow_slots(d)) != WW_OK)
        return st;
    size_t s = (size_t)hash_bytes(name, len) & (d->slot_count - 1);
    for (; d->slots[s]; s = (s + 1) & (d->slot_count - 1)) {
        const size_t k = (size_t)d->slots[s] - 1;
        if (d->lengths[k] == len && (len == 0 || memcmp(d->names[k], name, len) == 0)) {
            *id = (int32_t)k;
            return WW_OK;
        }
    }
    if (d->count == d->capacity) {
        const size_t cap = d->capacity ? 2 * d->capacity : 64;
        char **names = (char **)realloc(d->names, cap * sizeof(char *));
        if (names == NULL)
            return WW_ERR_MEMORY;
        d->names = names;
        size_t *lengths = (size_t *)realloc(d->lengths, cap * sizeof(size_t));
        if (lengths == NULL)
            return WW_ERR_MEMORY;
        d->lengths = lengths;
        d->capacity = cap;
    }
    char *copy = (char *)malloc(len + 1);
    if (copy == NULL)
        return WW_ERR_MEMORY;
    if (len)
        memcpy(copy, name, len);
    copy[len] = '\0';
    d->names[d->count] = copy;
    d->lengths[d->count] = len;
    d->slots[s] = (int32_t)d->count + 1;
    *id = (int32_t)d->count++;
    return WW_OK;
}

/* ---------------------------------------------------------------- growing trees */

typedef struct tree_builder {
    int32_t *parent, *labels;
    size_t count, capacity;
} tree_builder;

static ww_status builder_add(tree_builder *b, int32_t parent, int32_t label)
{
    if (b->count >= (size_t)INT32_MAX / 2)
        return WW_ERR_TREE;
    if (b->count == b->capacity) {
        const size_t cap = b->capacity ? 2 * b->capacity : 16;
        int32_t *p = (int32_t *)realloc(b->parent, cap * sizeof(int32_t));
        if (p == NULL)
            return WW_ERR_MEMORY;
        b->parent = p;
        int32_t *l = (int32_t *)realloc(b->labels, cap * sizeof(int32_t));
        if (l == NULL)
            return WW_ERR_MEMORY;
        b->labels = l;
        b->capacity = cap;
    }
    b->parent[b->count] = parent;
    b->labels[b->count++] = label;
    return WW_OK;
}

static void builder_free(tree_builder *b)
{
    free(b->parent);
    free(b->labels);
}

static void builder_give(tree_builder *b, ww_tree *out)
{
    out->count = b->count;
    out->parent = b->parent;
    out->labels = b->labels;
}

void ww_tree_free(ww_tree *t)
{
    if (t == NULL)
        return;
    free((void *)t->parent);
    free((void *)t->labels);
    t->count = 0;
    t->parent = NULL;
    t->labels = NULL;
}

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

/* ---------------------------------------------------------------- bracket notation */

ww_status ww_tree_parse_bracket(ww_labels *d, const char *text, size_t len, ww_tree *out)
{
    if (d == NULL || out == NULL || (text == NULL && len > 0))
        return WW_ERR_NULL_POINTER;
    out->count = 0;
    out->parent = out->labels = NULL;
    tree_builder b = {0};
    int32_t *open = NULL; /* the nodes whose '}' is still to come */
    size_t depth = 0, open_cap = 0;
    char *label = NULL;
    size_t label_cap = 0;
    ww_status st = WW_OK;
    size_t pos = 0;
    while (pos < len && is_space(text[pos]))
        pos++;
    if (pos == len || text[pos] != '{')
        st = WW_ERR_TREE;
    while (st == WW_OK && pos < len) {
        const char c = text[pos];
        if (c == '{') {
            if (depth == 0 && b.count > 0) { /* a second tree */
                st = WW_ERR_TREE;
                break;
            }
            pos++;
            size_t n = 0;
            while (pos < len && text[pos] != '{' && text[pos] != '}') {
                char ch = text[pos++];
                if (ch == '\\' && pos < len && (text[pos] == '{' || text[pos] == '}' || text[pos] == '\\'))
                    ch = text[pos++];
                if (n == label_cap) {
                    const size_t cap = label_cap ? 2 * label_cap : 64;
                    char *l = (char *)realloc(label, cap);
                    if (l == NULL) {
                        st = WW_ERR_MEMORY;
                        break;
                    }
                    label = l;
                    label_cap = cap;
                }
                label[n++] = ch;
            }
            if (st != WW_OK)
                break;
            if (n == 0) { /* "{}", "{{" or a '{' at the end: a node without a label */
                st = WW_ERR_TREE;
                break;
            }
            int32_t id;
            if ((st = ww_labels_intern(d, label, n, &id)) != WW_OK)
                break;
            if ((st = builder_add(&b, depth ? open[depth - 1] : -1, id)) != WW_OK)
                break;
            if (depth == open_cap) {
                const size_t cap = open_cap ? 2 * open_cap : 16;
                int32_t *o = (int32_t *)realloc(open, cap * sizeof(int32_t));
                if (o == NULL) {
                    st = WW_ERR_MEMORY;
                    break;
                }
                open = o;
                open_cap = cap;
            }
            open[depth++] = (int32_t)b.count - 1;
        } else if (c == '}') {
            if (depth == 0) {
                st = WW_ERR_TREE;
                break;
            }
            depth--;
            pos++;
            while (pos < len && is_space(text[pos])) /* between nodes, and after the tree */
                pos++;
        } else {
            st = WW_ERR_TREE; /* text between nodes, or after the tree */
        }
    }
    if (st == WW_OK && (depth != 0 || b.count == 0))
        st = WW_ERR_TREE; /* unbalanced */
    free(open);
    free(label);
    if (st != WW_OK) {
        builder_free(&b);
        return st;
    }
    builder_give(&b, out);
    return WW_OK;
}

/* ---------------------------------------------------------------- X-TED's files */

/* Reads a non-negative decimal integer at *pos (after white space). */
static int read_index(const char *s, size_t len, size_t *pos, long long *value)
{
    while (*pos < len && is_space(s[*pos]))
        (*pos)++;
    if (*pos == len || s[*pos] < '0' || s[*pos] > '9')
        return 0;
    long long v = 0;
    while (*pos < len && s[*pos] >= '0' && s[*pos] <= '9') {
        v = v * 10 + (s[*pos] - '0');
        if (v > INT32_MAX)
            return 0;
        (*pos)++;
    }
    *value = v;
    return 1;
}

/* The next non-space character at *pos (0 at the end). */
static char peek(const char *s, size_t len, size_t *pos)
{
    while (*pos < len && is_space(s[*pos]))
        (*pos)++;
    return *pos < len ? s[*pos] : 0;
}

ww_status ww_tree_parse_xted(ww_labels *d, const char *labels, size_t labels_len, const char *adjacency,
                             size_t adjacency_len, ww_tree *out)
{
    if (d == NULL || out == NULL || (labels == NULL && labels_len > 0) || (adjacency == NULL && adjacency_len > 0))
        return WW_ERR_NULL_POINTER;
    out->count = 0;
    out->parent = out->labels = NULL;
    tree_builder b = {0};
    ww_status st = WW_OK;
    /* the labels: parents are filled from the adjacency below */
    for (size_t pos = 0; pos < labels_len && st == WW_OK;) {
        while (pos < labels_len && is_space(labels[pos]))
            pos++;
        const size_t start = pos;
        while (pos < labels_len && !is_space(labels[pos]))
            pos++;
        if (pos > start) {
            int32_t id;
            st = ww_labels_intern(d, labels + start, pos - start, &id);
            if (st == WW_OK)
                st = builder_add(&b, -2, id);
        }
    }
    const size_t n = b.count;
    size_t pos = 0, node = 0;
    if (st == WW_OK && peek(adjacency, adjacency_len, &pos) != '[')
        st = WW_ERR_TREE;
    pos++;
    /* "[" then per node "[c, c, ...]" separated by commas, then "]" */
    while (st == WW_OK) {
        char c = peek(adjacency, adjacency_len, &pos);
        if (c == ']') {
            pos++;
            break;
        }
        if (node > 0) {
            if (c != ',') {
                st = WW_ERR_TREE;
                break;
            }
            pos++;
            c = peek(adjacency, adjacency_len, &pos);
        }
        if (c != '[' || node >= n) { /* syntax, or more lists than labels */
            st = WW_ERR_TREE;
            break;
        }
        pos++;
        long long previous = (long long)node;
        for (int first = 1;; first = 0) {
            c = peek(adjacency, adjacency_len, &pos);
            if (c == ']') {
                pos++;
                break;
            }
            if (!first) {
                if (c != ',') {
                    st = WW_ERR_TREE;
                    break;
                }
                pos++;
            }
            long long child;
            /* a child comes after its parent and its earlier siblings, once */
            if (!read_index(adjacency, adjacency_len, &pos, &child) || child <= previous || (size_t)child >= n ||
                b.parent[child] != -2) {
                st = WW_ERR_TREE;
                break;
            }
            b.parent[child] = (int32_t)node;
            previous = child;
        }
        node++;
    }
    if (st == WW_OK && (peek(adjacency, adjacency_len, &pos) != 0 || node != n))
        st = WW_ERR_TREE; /* text after the lists, or fewer lists than labels */
    if (st == WW_OK && n > 0) {
        /* one root (node 0), every other node listed once, numbered in preorder */
        if (b.parent[0] != -2)
            st = WW_ERR_TREE;
        b.parent[0] = -1;
        for (size_t k = 1; k < n && st == WW_OK; k++)
            if (b.parent[k] == -2)
                st = WW_ERR_TREE;
        ww_tree t = {n, b.parent, b.labels};
        if (st == WW_OK)
            st = ww_tree_check(&t);
    }
    if (st != WW_OK) {
        builder_free(&b);
        return st;
    }
    builder_give(&b, out);
    return WW_OK;
}
