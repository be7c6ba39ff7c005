/* Tree edit distance (issue 13): the CPU engine against a plain memoised recursion over forests,
 * the metric axioms, the mapping, the matrix call, the parsers, the shared Swissport and Python
 * trees, and every bad input. */
#define _POSIX_C_SOURCE 200809L /* setenv */

#include "ww_test.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

/* ------------------------------------------------------------------ random trees */

enum shape { SHAPE_RANDOM, SHAPE_PATH, SHAPE_STAR, SHAPE_BUSHY, SHAPE_COUNT };

/* A random tree of n nodes in preorder: node i hangs under i - 1 or one of its ancestors. */
static void random_tree(ww_rng *r, size_t n, enum shape shape, int32_t label_count, int32_t *parent, int32_t *labels)
{
    for (size_t i = 0; i < n; i++) {
        labels[i] = (int32_t)ww_rng_below(r, (size_t)label_count);
        if (i == 0) {
            parent[i] = -1;
            continue;
        }
        if (shape == SHAPE_PATH) {
            parent[i] = (int32_t)i - 1;
        } else if (shape == SHAPE_STAR) {
            parent[i] = 0;
        } else {
            /* climb a random number of steps from i - 1 (bushy: more climbing, wider trees) */
            int32_t v = (int32_t)i - 1;
            const double up = shape == SHAPE_BUSHY ? 0.7 : 0.4;
            while (v > 0 && ww_rng_uniform(r) < up)
                v = parent[v];
            parent[i] = v;
        }
    }
}

/* ------------------------------------------------------------------ the reference */

/* Forests as postorder intervals [a, b] (empty when b < a); the rightmost root of [a, b] is b and
 * its subtree [lml(b), b]. d(F, G) = min(d(F - b, G) + del, d(F, G - c) + ins,
 * d(F - T(b), G - T(c)) + d(T(b) - b, T(c) - c) + relabel(b, c)), memoised in a dense table. */
typedef struct reference {
    int32_t na, nb;
    int32_t *lml_a, *lml_b, *lab_a, *lab_b;
    double del, ins, ren;
    double *memo; /* value + 1, 0: not computed */
} reference;

static size_t memo_index(const reference *R, int32_t a1, int32_t b1, int32_t a2, int32_t b2)
{
    const size_t A = (size_t)R->na + 1, B = (size_t)R->nb + 1;
    return (((size_t)a1 * A + (size_t)(b1 + 1)) * B + (size_t)a2) * B + (size_t)(b2 + 1);
}

static double forest(reference *R, int32_t a1, int32_t b1, int32_t a2, int32_t b2)
{
    if (b1 < a1 && b2 < a2)
        return 0;
    double *m = &R->memo[memo_index(R, a1, b1, a2, b2)];
    if (*m > 0)
        return *m - 1;
    double v;
    if (b2 < a2) {
        v = forest(R, a1, b1 - 1, a2, b2) + R->del;
    } else if (b1 < a1) {
        v = forest(R, a1, b1, a2, b2 - 1) + R->ins;
    } else {
        const double d = forest(R, a1, b1 - 1, a2, b2) + R->del;
        const double i = forest(R, a1, b1, a2, b2 - 1) + R->ins;
        const double s = forest(R, a1, R->lml_a[b1] - 1, a2, R->lml_b[b2] - 1) +
                         forest(R, R->lml_a[b1], b1 - 1, R->lml_b[b2], b2 - 1) +
                         (R->lab_a[b1] == R->lab_b[b2] ? 0 : R->ren);
        v = d < i ? d : i;
        v = s < v ? s : v;
    }
    *m = v + 1;
    return v;
}

/* Postorder numbers by a recursive walk over children lists (independent of the library's). */
static void postorder_walk(const int32_t *parent, size_t n, int32_t v, int32_t *next, int32_t *post, int32_t *lml)
{
    int32_t first = -1;
    for (size_t c = (size_t)v + 1; c < n; c++)
        if (parent[c] == v) {
            postorder_walk(parent, n, (int32_t)c, next, post, lml);
            if (first < 0)
                first = lml[post[c]];
        }
    post[v] = (*next)++;
    lml[post[v]] = first < 0 ? post[v] : first;
}

static void to_postorder(const ww_tree *t, int32_t *lml, int32_t *labels)
{
    int32_t *post = (int32_t *)malloc((t->count + 1) * sizeof(int32_t)), next = 0;
    if (t->count)
        postorder_walk(t->parent, t->count, 0, &next, post, lml);
    for (size_t v = 0; v < t->count; v++)
        labels[post[v]] = t->labels ? t->labels[v] : 0;
    free(post);
}

static double reference_ted(const ww_tree *a, const ww_tree *b, const ww_ted_params *p)
{
    reference R;
    R.na = (int32_t)a->count;
    R.nb = (int32_t)b->count;
    R.lml_a = (int32_t *)malloc((a->count + 1) * sizeof(int32_t));
    R.lab_a = (int32_t *)malloc((a->count + 1) * sizeof(int32_t));
    R.lml_b = (int32_t *)malloc((b->count + 1) * sizeof(int32_t));
    R.lab_b = (int32_t *)malloc((b->count + 1) * sizeof(int32_t));
    to_postorder(a, R.lml_a, R.lab_a);
    to_postorder(b, R.lml_b, R.lab_b);
    R.del = p->delete_cost;
    R.ins = p->insert_cost;
    R.ren = p->relabel_cost;
    const size_t A = a->count + 1, B = b->count + 1;
    R.memo = (double *)calloc(A * A * B * B, sizeof(double));
    const double d = forest(&R, 0, R.na - 1, 0, R.nb - 1);
    free(R.memo);
    free(R.lml_a);
    free(R.lab_a);
    free(R.lml_b);
    free(R.lab_b);
    return d;
}

/* The cost of an edit mapping, checking that it is one: every node once, and the mapped pairs
 * keep ancestry and order (checked on the preorder numbers: ancestry by subtree intervals). */
static double mapping_cost(const ww_tree *a, const ww_tree *b, const ww_ted_params *p, const ww_ted_edit *e,
                           size_t count, int *valid)
{
    char *seen_a = (char *)calloc(a->count + 1, 1), *seen_b = (char *)calloc(b->count + 1, 1);
    int32_t *end_a = (int32_t *)malloc((a->count + 1) * sizeof(int32_t)),
            *end_b = (int32_t *)malloc((b->count + 1) * sizeof(int32_t));
    /* subtree of v: [v, end[v]) in preorder */
    for (size_t v = 0; v < a->count; v++)
        end_a[v] = (int32_t)v + 1;
    for (size_t v = a->count; v-- > 1;)
        if (end_a[v] > end_a[a->parent[v]])
            end_a[a->parent[v]] = end_a[v];
    for (size_t v = 0; v < b->count; v++)
        end_b[v] = (int32_t)v + 1;
    for (size_t v = b->count; v-- > 1;)
        if (end_b[v] > end_b[b->parent[v]])
            end_b[b->parent[v]] = end_b[v];
    double cost = 0;
    *valid = 1;
    for (size_t k = 0; k < count; k++) {
        const int32_t x = e[k].a, y = e[k].b;
        if ((x < 0 && y < 0) || x >= (int32_t)a->count || y >= (int32_t)b->count) {
            *valid = 0;
            continue;
        }
        if (x >= 0) {
            *valid &= !seen_a[x];
            seen_a[x] = 1;
        }
        if (y >= 0) {
            *valid &= !seen_b[y];
            seen_b[y] = 1;
        }
        if (x < 0)
            cost += p->insert_cost;
        else if (y < 0)
            cost += p->delete_cost;
        else if ((a->labels ? a->labels[x] : 0) != (b->labels ? b->labels[y] : 0))
            cost += p->relabel_cost;
    }
    for (size_t v = 0; v < a->count; v++)
        *valid &= seen_a[v];
    for (size_t v = 0; v < b->count; v++)
        *valid &= seen_b[v];
    /* ancestry and order between every two mapped pairs */
    for (size_t k = 0; k < count; k++)
        for (size_t l = 0; l < count; l++) {
            if (e[k].a < 0 || e[k].b < 0 || e[l].a < 0 || e[l].b < 0 || k == l)
                continue;
            const int anc_a = e[l].a > e[k].a && e[l].a < end_a[e[k].a];
            const int anc_b = e[l].b > e[k].b && e[l].b < end_b[e[k].b];
            *valid &= anc_a == anc_b;
            *valid &= (e[k].a < e[l].a) == (e[k].b < e[l].b);
        }
    free(seen_a);
    free(seen_b);
    free(end_a);
    free(end_b);
    return cost;
}

static ww_ctx *cpu_ctx(int threads) { return ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_AUTO, threads); }

/* ------------------------------------------------------------------ tests */

void test_ted_matches_reference(void)
{
    ww_ctx *ctx = cpu_ctx(1);
    if (!ctx)
        return;
    ww_rng r = {0x7eed1};
    enum { MAXN = 60 };
    int32_t pa[MAXN], la[MAXN], pb[MAXN], lb[MAXN];
    ww_ted_edit edits[2 * MAXN];
    const ww_ted_params costs[] = {{1, 1, 1}, {0.5, 2, 1.25}, {3, 1, 0.3}, {1, 1, 0}, {0.1, 0.7, 5}};
    int compared = 0;
    for (int trial = 0; trial < 400; trial++) {
        /* mostly small (the reference is O(n^2 m^2)), some up to 60 nodes */
        const size_t limit = trial % 10 == 0 ? MAXN : 14;
        const size_t na = ww_rng_below(&r, limit + 1), nb = ww_rng_below(&r, limit + 1);
        const int32_t labels = trial % 3 == 0 ? 2 : 26;
        random_tree(&r, na, (enum shape)(trial % SHAPE_COUNT), labels, pa, la);
        random_tree(&r, nb, (enum shape)((trial / SHAPE_COUNT) % SHAPE_COUNT), labels, pb, lb);
        const ww_tree a = {na, pa, la}, b = {nb, pb, lb};
        const ww_ted_params *p = &costs[trial % 5];
        double d = -1, md = -1;
        size_t count = 0;
        CHECK_STATUS(ww_ted(ctx, &a, &b, p, &d), WW_OK);
        CHECK_STATUS(ww_ted_mapping(ctx, &a, &b, p, edits, &count, &md), WW_OK);
        CHECK(md == d);
        int valid = 0;
        const double mc = mapping_cost(&a, &b, p, edits, count, &valid);
        CHECK(valid);
        CHECK_CLOSE(mc, d, 1e-12);
        if ((na + 1) * (na + 1) * (nb + 1) * (nb + 1) <= 4000000) {
            const double want = reference_ted(&a, &b, p);
            CHECK_CLOSE(d, want, 1e-12);
            if (p->delete_cost == 1 && p->insert_cost == 1 && p->relabel_cost == 1)
                CHECK(d == want); /* unit costs: exact integers */
            compared++;
        }
    }
    CHECK(compared > 300);
    ww_ctx_destroy(ctx);
}

void test_ted_metric_axioms(void)
{
    ww_ctx *ctx = cpu_ctx(0);
    if (!ctx)
        return;
    ww_rng r = {0xa110};
    enum { N = 30 };
    int32_t par[3][N], lab[3][N];
    for (int trial = 0; trial < 60; trial++) {
        ww_tree t[3];
        for (int k = 0; k < 3; k++) {
            const size_t n = ww_rng_below(&r, N + 1);
            random_tree(&r, n, (enum shape)((trial + k) % SHAPE_COUNT), trial % 2 ? 3 : 10, par[k], lab[k]);
            t[k] = (ww_tree){n, par[k], lab[k]};
        }
        const ww_ted_params p = {0.5 + (double)(trial % 3), 1.0 + (double)(trial % 2), 0.75 + (double)(trial % 4)};
        const ww_ted_params swapped = {p.insert_cost, p.delete_cost, p.relabel_cost};
        double self, ab, ba, bc, ac;
        CHECK_STATUS(ww_ted(ctx, &t[0], &t[0], &p, &self), WW_OK);
        CHECK(self == 0);
        CHECK_STATUS(ww_ted(ctx, &t[0], &t[1], &p, &ab), WW_OK);
        CHECK_STATUS(ww_ted(ctx, &t[1], &t[0], &swapped, &ba), WW_OK);
        CHECK_CLOSE(ab, ba, 1e-12);
        /* the triangle inequality with symmetric costs (a metric then) */
        const ww_ted_params sym = {p.delete_cost, p.delete_cost, p.relabel_cost};
        CHECK_STATUS(ww_ted(ctx, &t[0], &t[1], &sym, &ab), WW_OK);
        CHECK_STATUS(ww_ted(ctx, &t[1], &t[2], &sym, &bc), WW_OK);
        CHECK_STATUS(ww_ted(ctx, &t[0], &t[2], &sym, &ac), WW_OK);
        CHECK(ac <= ab + bc + 1e-9);
        CHECK(ab >= 0 && bc >= 0 && ac >= 0);
        /* bounds: at most delete everything and insert everything */
        CHECK(ab <= (double)t[0].count * sym.delete_cost + (double)t[1].count * sym.insert_cost + 1e-9);
    }
    ww_ctx_destroy(ctx);
}

typedef struct cancel_log {
    int calls, cancel_at;
    uint64_t last_done, total;
    int monotone;
} cancel_log;

static int on_progress(uint64_t done, uint64_t total, void *user)
{
    cancel_log *log = (cancel_log *)user;
    log->calls++;
    log->monotone &= done >= log->last_done && done <= total;
    log->last_done = done;
    log->total = total;
    return log->cancel_at > 0 && log->calls >= log->cancel_at;
}

void test_ted_pairwise(void)
{
    ww_rng r = {0xb10c};
    enum { COUNT = 9, N = 25 };
    int32_t par[COUNT][N], lab[COUNT][N];
    ww_tree t[COUNT];
    for (int k = 0; k < COUNT; k++) {
        const size_t n = k == 3 ? 0 : 1 + ww_rng_below(&r, N);
        random_tree(&r, n, (enum shape)(k % SHAPE_COUNT), 5, par[k], lab[k]);
        t[k] = (ww_tree){n, par[k], lab[k]};
    }
    const int thread_counts[3] = {1, 2, 8};
    for (int tc = 0; tc < 3; tc++) {
        const int threads = thread_counts[tc];
        ww_ctx *ctx = cpu_ctx(threads);
        if (!ctx)
            return;
        const ww_ted_params costs[] = {{1, 1, 1}, {0.5, 2, 1.5}};
        for (int c = 0; c < 2; c++) {
            const ww_ted_params *p = &costs[c];
            double full[COUNT * COUNT], want;
            for (int k = 0; k < COUNT * COUNT; k++)
                full[k] = -7; /* poison */
            CHECK_STATUS(ww_ted_pairwise(ctx, t, COUNT, NULL, 0, p, full, NULL), WW_OK);
            for (int i = 0; i < COUNT; i++)
                for (int j = 0; j < COUNT; j++) {
                    CHECK_STATUS(ww_ted(ctx, &t[i], &t[j], p, &want), WW_OK);
                    CHECK(full[i * COUNT + j] == want);
                }
            /* x against y, a block with a stride, float output */
            double xy[4 * COUNT];
            CHECK_STATUS(ww_ted_pairwise(ctx, t, 4, t + 2, COUNT - 2, p, xy, NULL), WW_OK);
            for (int i = 0; i < 4; i++)
                for (int j = 0; j < COUNT - 2; j++)
                    CHECK(xy[i * (COUNT - 2) + j] == full[i * COUNT + j + 2]);
            float block[3 * 10];
            for (int k = 0; k < 30; k++)
                block[k] = -7;
            ww_pairwise_options o = ww_pairwise_options_default();
            o.row_begin = 2;
            o.row_end = 5;
            o.col_begin = 1;
            o.col_end = 8;
            o.out_stride = 10;
            o.out_dtype = WW_F32;
            CHECK_STATUS(ww_ted_pairwise(ctx, t, COUNT, NULL, 0, p, (double *)(void *)block, &o), WW_OK);
            for (int i = 2; i < 5; i++)
                for (int j = 1; j < 8; j++)
                    CHECK(block[(i - 2) * 10 + (j - 1)] == (float)full[i * COUNT + j]);
            for (int i = 0; i < 3; i++)
                for (int j = 7; j < 10; j++)
                    CHECK(block[i * 10 + j] == -7); /* past the block's width: untouched */
        }
        /* progress, then cancel */
        double out[COUNT * COUNT];
        ww_pairwise_options o = ww_pairwise_options_default();
        cancel_log log = {0, 0, 0, 0, 1};
        o.progress = on_progress;
        o.progress_user = &log;
        CHECK_STATUS(ww_ted_pairwise(ctx, t, COUNT, NULL, 0, NULL, out, &o), WW_OK);
        CHECK(log.calls >= 1 && log.monotone && log.last_done == log.total && log.total > 0);
        cancel_log stop = {0, 1, 0, 0, 1};
        o.progress_user = &stop;
        CHECK_STATUS(ww_ted_pairwise(ctx, t, COUNT, NULL, 0, NULL, out, &o), WW_ERR_CANCELLED);
        ww_ctx_destroy(ctx);
    }
}

/* ------------------------------------------------------------------ parsers */

static ww_status bracket(ww_labels *d, const char *text, ww_tree *t) { return ww_tree_parse_bracket(d, text, strlen(text), t); }

void test_ted_parsers(void)
{
    ww_labels *d = NULL;
    CHECK_STATUS(ww_labels_create(&d), WW_OK);
    if (!d)
        return;
    ww_tree t = {0}, u = {0};
    CHECK_STATUS(bracket(d, "  {a{b}{c{d}}}\n", &t), WW_OK);
    CHECK(t.count == 4);
    if (t.count == 4) {
        CHECK(t.parent[0] == -1 && t.parent[1] == 0 && t.parent[2] == 0 && t.parent[3] == 2);
        CHECK(strcmp(ww_labels_name(d, t.labels[0]), "a") == 0 && strcmp(ww_labels_name(d, t.labels[3]), "d") == 0);
    }
    /* escapes, labels shared across trees, white space between nodes */
    CHECK_STATUS(bracket(d, "{x\\{y\\}\\\\z{b} {a}}", &u), WW_OK);
    CHECK(u.count == 3);
    if (u.count == 3 && t.count == 4) {
        CHECK(strcmp(ww_labels_name(d, u.labels[0]), "x{y}\\z") == 0);
        CHECK(u.labels[1] == t.labels[1] && u.labels[2] == t.labels[0]);
    }
    CHECK(ww_labels_count(d) == 5);
    const int32_t id_a = t.count == 4 ? t.labels[0] : -1;
    CHECK(ww_labels_name(d, 5) == NULL && ww_labels_name(d, -1) == NULL);
    ww_ctx *ctx = cpu_ctx(1);
    double dist = -1;
    if (ctx) {
        /* {a{b}{c{d}}} -> {x{b}{a}}: relabel a->x, delete c (d moves up)? best: a->x, b=b, c->a, delete d: 3 */
        CHECK_STATUS(ww_ted(ctx, &t, &u, NULL, &dist), WW_OK);
        ww_ted_params p = ww_ted_params_default();
        CHECK(dist == reference_ted(&t, &u, &p));
    }
    ww_tree_free(&t);
    ww_tree_free(&u);
    CHECK(t.count == 0 && t.parent == NULL);
    ww_tree_free(&t); /* twice: nothing */
    ww_tree_free(NULL);

    /* X-TED's lines */
    const char *labels = "r a b c\n", *adj = "[[1, 3], [2], [], []]\n";
    CHECK_STATUS(ww_tree_parse_xted(d, labels, strlen(labels), adj, strlen(adj), &t), WW_OK);
    CHECK(t.count == 4);
    if (t.count == 4)
        CHECK(t.parent[1] == 0 && t.parent[2] == 1 && t.parent[3] == 0 && t.labels[1] == id_a);
    ww_tree_free(&t);
    CHECK_STATUS(ww_tree_parse_xted(d, "", 0, "[]", 2, &t), WW_OK); /* the empty tree */
    CHECK(t.count == 0);

    /* bad text: each WW_ERR_TREE, nothing returned */
    const char *bad_brackets[] = {"", "   ", "{", "{a", "{a}}", "}", "{}", "{a{}}", "{a}{b}", "a", "{a}x", "x{a}",
                                  "{a{b}", "{{a}}", "{a}\n{b}"};
    for (size_t k = 0; k < sizeof bad_brackets / sizeof bad_brackets[0]; k++) {
        ww_tree bad = {7, NULL, NULL};
        CHECK_STATUS(bracket(d, bad_brackets[k], &bad), WW_ERR_TREE);
        CHECK(bad.count == 0 && bad.parent == NULL);
    }
    const char *bad_xted[][2] = {
        {"a b", "[[1], [], []]"},   /* more lists than labels */
        {"a b c", "[[1], []]"},     /* fewer */
        {"a b", "[[1], [1]]"},      /* listed twice, and a child before its parent */
        {"a b c", "[[1], [], []]"}, /* node 2 nowhere: two roots */
        {"a b c", "[[2, 1], [], []]"}, /* siblings out of order */
        {"a b c d", "[[1, 2], [3], [], []]"}, /* not a preorder numbering */
        {"a b", "[[1], []"},        /* unbalanced */
        {"a b", "[[1] []]"},        /* no comma */
        {"a b", "[[x], []]"},       /* not a number */
        {"a b", "[[1], []] tail"},  /* text after */
        {"a", ""},                  /* no adjacency */
        {"a b", "[[5], []]"},       /* out of range */
    };
    for (size_t k = 0; k < sizeof bad_xted / sizeof bad_xted[0]; k++) {
        ww_tree bad = {0};
        CHECK_STATUS(ww_tree_parse_xted(d, bad_xted[k][0], strlen(bad_xted[k][0]), bad_xted[k][1],
                                        strlen(bad_xted[k][1]), &bad),
                     WW_ERR_TREE);
        CHECK(bad.count == 0 && bad.parent == NULL);
    }
    CHECK_STATUS(ww_tree_parse_bracket(NULL, "{a}", 3, &t), WW_ERR_NULL_POINTER);
    CHECK_STATUS(ww_tree_parse_bracket(d, "{a}", 3, NULL), WW_ERR_NULL_POINTER);
    CHECK_STATUS(ww_labels_create(NULL), WW_ERR_NULL_POINTER);
    ww_labels_destroy(d);
    ww_labels_destroy(NULL);
    ww_ctx_destroy(ctx);
}

void test_ted_bad_inputs(void)
{
    ww_ctx *ctx = cpu_ctx(1);
    if (!ctx)
        return;
    const int32_t good_parent[] = {-1, 0, 1, 0}, labels[] = {1, 2, 3, 4};
    const ww_tree good = {4, good_parent, labels};
    double d = -1;
    /* parents: not preorder, two roots, a root that is not first, parents after children */
    const int32_t not_preorder[] = {-1, 0, 1, 0, 1}, two_roots[] = {-1, 0, -1}, root_late[] = {0, -1},
                  forward[] = {-1, 2, 0}, self_parent[] = {-1, 1}, below[] = {-1, -5};
    const ww_tree bad_trees[] = {{5, not_preorder, NULL}, {3, two_roots, NULL}, {2, root_late, NULL},
                                 {3, forward, NULL},      {2, self_parent, NULL}, {2, below, NULL}};
    for (size_t k = 0; k < sizeof bad_trees / sizeof bad_trees[0]; k++) {
        CHECK_STATUS(ww_tree_check(&bad_trees[k]), WW_ERR_TREE);
        CHECK_STATUS(ww_ted(ctx, &bad_trees[k], &good, NULL, &d), WW_ERR_TREE);
        CHECK_STATUS(ww_ted(ctx, &good, &bad_trees[k], NULL, &d), WW_ERR_TREE);
        double out[4];
        const ww_tree pair[2] = {good, bad_trees[k]};
        CHECK_STATUS(ww_ted_pairwise(ctx, pair, 2, NULL, 0, NULL, out, NULL), WW_ERR_TREE);
    }
    const ww_tree no_parent = {3, NULL, labels};
    CHECK_STATUS(ww_ted(ctx, &no_parent, &good, NULL, &d), WW_ERR_NULL_POINTER);
    CHECK_STATUS(ww_ted(ctx, &good, &good, NULL, NULL), WW_ERR_NULL_POINTER);
    CHECK_STATUS(ww_ted(NULL, &good, &good, NULL, &d), WW_ERR_NULL_POINTER);
    CHECK_STATUS(ww_ted(ctx, NULL, &good, NULL, &d), WW_ERR_NULL_POINTER);
    /* the empty tree is valid, NULL labels are one label */
    const ww_tree empty = {0, NULL, NULL}, unlabelled = {4, good_parent, NULL};
    CHECK_STATUS(ww_ted(ctx, &empty, &good, NULL, &d), WW_OK);
    CHECK(d == 4);
    CHECK_STATUS(ww_ted(ctx, &empty, &empty, NULL, &d), WW_OK);
    CHECK(d == 0);
    CHECK_STATUS(ww_ted(ctx, &unlabelled, &good, NULL, &d), WW_OK);
    CHECK(d == 4);
    /* costs */
    const double bad_costs[] = {-1, NAN, INFINITY, -INFINITY, -1e-300};
    for (size_t k = 0; k < 5; k++) {
        const ww_ted_params ps[3] = {{bad_costs[k], 1, 1}, {1, bad_costs[k], 1}, {1, 1, bad_costs[k]}};
        for (int w = 0; w < 3; w++) {
            CHECK_STATUS(ww_ted_params_check(&ps[w]), WW_ERR_PARAM);
            CHECK_STATUS(ww_ted(ctx, &good, &good, &ps[w], &d), WW_ERR_PARAM);
            double out[1];
            CHECK_STATUS(ww_ted_pairwise(ctx, &good, 1, NULL, 0, &ps[w], out, NULL), WW_ERR_PARAM);
        }
    }
    ww_ted_params zero = {0, 0, 0};
    CHECK_STATUS(ww_ted(ctx, &good, &unlabelled, &zero, &d), WW_OK);
    CHECK(d == 0);
    /* matrix: empty collections, bad blocks */
    double out[16];
    CHECK_STATUS(ww_ted_pairwise(ctx, &good, 0, NULL, 0, NULL, out, NULL), WW_ERR_EMPTY);
    CHECK_STATUS(ww_ted_pairwise(ctx, &good, 1, &good, 0, NULL, out, NULL), WW_ERR_EMPTY);
    CHECK_STATUS(ww_ted_pairwise(ctx, NULL, 2, NULL, 0, NULL, out, NULL), WW_ERR_NULL_POINTER);
    CHECK_STATUS(ww_ted_pairwise(ctx, &good, 1, NULL, 0, NULL, NULL, NULL), WW_ERR_NULL_POINTER);
    ww_pairwise_options o = ww_pairwise_options_default();
    o.row_end = 2;
    CHECK_STATUS(ww_ted_pairwise(ctx, &good, 1, NULL, 0, NULL, out, &o), WW_ERR_SHAPE);
    o = ww_pairwise_options_default();
    o.out_stride = 1;
    const ww_tree two[2] = {good, good};
    CHECK_STATUS(ww_ted_pairwise(ctx, two, 2, NULL, 0, NULL, out, &o), WW_ERR_SHAPE);
    o = ww_pairwise_options_default();
    o.out_dtype = (ww_dtype)7;
    CHECK_STATUS(ww_ted_pairwise(ctx, two, 2, NULL, 0, NULL, out, &o), WW_ERR_DTYPE);
    /* the mapping */
    ww_ted_edit edits[8];
    size_t count;
    CHECK_STATUS(ww_ted_mapping(ctx, &good, &good, NULL, edits, NULL, &d), WW_ERR_NULL_POINTER);
    CHECK_STATUS(ww_ted_mapping(ctx, &good, &good, NULL, NULL, &count, &d), WW_ERR_NULL_POINTER);
    CHECK_STATUS(ww_ted_mapping(ctx, &bad_trees[0], &good, NULL, edits, &count, &d), WW_ERR_TREE);
    ww_ctx_destroy(ctx);
}

void test_ted_too_large(void)
{
    ww_ctx *ctx = cpu_ctx(2);
    if (!ctx)
        return;
    /* two flat trees of a million nodes: 16 TB of tables, refused up front (nothing allocated) */
    const size_t n = 1000000;
    int32_t *parent = (int32_t *)malloc(n * sizeof(int32_t));
    if (!parent) {
        ww_ctx_destroy(ctx);
        SKIP("no memory for the test's tree");
    }
    parent[0] = -1;
    for (size_t i = 1; i < n; i++)
        parent[i] = 0;
    const ww_tree big = {n, parent, NULL};
    double d = -1, out[4];
    CHECK_STATUS(ww_ted(ctx, &big, &big, NULL, &d), WW_ERR_TREE_SIZE);
    CHECK(d == -1);
    ww_ted_edit edit;
    size_t count;
    CHECK_STATUS(ww_ted_mapping(ctx, &big, &big, NULL, &edit, &count, &d), WW_ERR_TREE_SIZE);
    const ww_tree pair[2] = {big, big};
    CHECK_STATUS(ww_ted_pairwise(ctx, pair, 2, NULL, 0, NULL, out, NULL), WW_ERR_TREE_SIZE);
    CHECK(ww_ted_pair_bytes(SIZE_MAX / 2, 3) == SIZE_MAX);
    /* a lowered limit: a pair of 10,000 and 50 nodes fits in 16 MB, two 2,000-node trees do not */
    ww_ted_set_memory_limit((size_t)16 << 20);
    CHECK(ww_ted_memory_limit() == (size_t)16 << 20);
    const ww_tree ten_k = {10000, parent, NULL}, fifty = {50, parent, NULL}, two_k = {2000, parent, NULL};
    CHECK_STATUS(ww_ted(ctx, &ten_k, &fifty, NULL, &d), WW_OK);
    CHECK(d == 9950); /* flat trees, one label: delete 9,950 leaves */
    CHECK_STATUS(ww_ted(ctx, &two_k, &two_k, NULL, &d), WW_ERR_TREE_SIZE);
    ww_ted_set_memory_limit(0);
    CHECK(ww_ted_memory_limit() > ((size_t)16 << 20));
    free(parent);
    ww_ctx_destroy(ctx);
}

/* ------------------------------------------------------------------ the shared trees */

/* Reads X-TED's pair of files into trees (labels shared through d). Returns the count, 0 when
 * absent. */
static size_t read_xted(ww_labels *d, const char *dataset, int nodes, ww_tree *trees, size_t max)
{
    const char *shared = ww_test_shared_dir();
    if (!shared)
        return 0;
    char lp[4200], ap[4200];
    snprintf(lp, sizeof lp, "%s/data/trees/%s/%s_nodes_%d.txt", shared, dataset, dataset, nodes);
    snprintf(ap, sizeof ap, "%s/data/trees/%s/%s_nodes_adj_%d.txt", shared, dataset, dataset, nodes);
    FILE *fl = fopen(lp, "r"), *fa = fopen(ap, "r");
    size_t count = 0;
    static char lbuf[1 << 20], abuf[1 << 20];
    while (fl && fa && count < max && fgets(lbuf, sizeof lbuf, fl) && fgets(abuf, sizeof abuf, fa)) {
        ww_status st = ww_tree_parse_xted(d, lbuf, strlen(lbuf), abuf, strlen(abuf), &trees[count]);
        CHECK_STATUS(st, WW_OK);
        if (st != WW_OK)
            break;
        count++;
    }
    if (fl)
        fclose(fl);
    if (fa)
        fclose(fa);
    return count;
}

void test_ted_shared_trees(void)
{
    if (!ww_test_shared_dir())
        SKIP("../shared is absent (no Swissport or Python trees)");
    ww_ctx *ctx = cpu_ctx(0);
    if (!ctx)
        return;
    /* X-TED's own results for Swissport pair (0, 1) */
    const int sizes[] = {100, 500, 1000};
    const double want[] = {44, 424, 767};
    for (int k = 0; k < 3; k++) {
        ww_labels *d;
        ww_labels_create(&d);
        ww_tree t[16];
        const size_t n = read_xted(d, "swissport", sizes[k], t, 16);
        CHECK(n >= 2);
        double got = -1;
        if (n >= 2)
            CHECK_STATUS(ww_ted(ctx, &t[0], &t[1], NULL, &got), WW_OK);
        CHECK(got == want[k]);
        for (size_t i = 0; i < n; i++)
            ww_tree_free(&t[i]);
        ww_labels_destroy(d);
    }
    /* pairs (i, i + 1) of the 100- to 500-node files against apted's values */
    FILE *f = fopen(WW_SOURCE_DIR "/tests/data/ted_expected.txt", "r");
    CHECK(f != NULL);
    char line[256], dataset[64];
    int nodes = 0, loaded_nodes = -1, i, j, checked = 0;
    char loaded[64] = "";
    double expected;
    ww_tree t[16];
    size_t n = 0;
    ww_labels *d = NULL;
    while (f && fgets(line, sizeof line, f)) {
        if (line[0] == '#' || sscanf(line, "%63s %d %d %d %lf", dataset, &nodes, &i, &j, &expected) != 5)
            continue;
        if (nodes != loaded_nodes || strcmp(dataset, loaded) != 0) {
            for (size_t k = 0; k < n; k++)
                ww_tree_free(&t[k]);
            ww_labels_destroy(d);
            ww_labels_create(&d);
            n = read_xted(d, dataset, nodes, t, 16);
            loaded_nodes = nodes;
            snprintf(loaded, sizeof loaded, "%s", dataset);
        }
        if ((size_t)j >= n) {
            CHECK((size_t)j < n);
            continue;
        }
        double got = -1;
        CHECK_STATUS(ww_ted(ctx, &t[i], &t[j], NULL, &got), WW_OK);
        if (got != expected)
            fprintf(stderr, "  %s %d (%d, %d): %g, apted %g\n", dataset, nodes, i, j, got, expected);
        CHECK(got == expected);
        checked++;
    }
    for (size_t k = 0; k < n; k++)
        ww_tree_free(&t[k]);
    ww_labels_destroy(d);
    if (f)
        fclose(f);
    CHECK(checked >= 60);
    ww_ctx_destroy(ctx);
}

/* An XML-like tree: a random tree of `elements` nodes whose leaves get, most of them, one text
 * child (a leaf): the keyroots of two nodes that the engine takes in closed form. Preorder
 * parents and labels (texts with labels of their own range) into parent/labels; returns the size. */
static size_t emit_xml(const int32_t *first_child, const int32_t *next_sibling, int32_t v, int32_t parent, ww_rng *r,
                       int32_t *out_parent, int32_t *out_labels, const int32_t *labels, size_t n)
{
    const int32_t me = (int32_t)n;
    out_parent[n] = parent;
    out_labels[n++] = labels[v];
    if (first_child[v] < 0 && ww_rng_uniform(r) < 0.8) { /* a text */
        out_parent[n] = me;
        out_labels[n++] = 100 + (int32_t)ww_rng_below(r, 3);
    }
    for (int32_t c = first_child[v]; c >= 0; c = next_sibling[c])
        n = emit_xml(first_child, next_sibling, c, me, r, out_parent, out_labels, labels, n);
    return n;
}

static size_t xml_tree(ww_rng *r, size_t elements, int32_t *parent, int32_t *labels)
{
    enum { MAXE = 16 };
    int32_t p[MAXE], lab[MAXE], first_child[MAXE], next_sibling[MAXE], last_child[MAXE];
    random_tree(r, elements, SHAPE_RANDOM, 3, p, lab);
    for (size_t v = 0; v < elements; v++)
        first_child[v] = next_sibling[v] = last_child[v] = -1;
    for (size_t v = 1; v < elements; v++) { /* children in preorder = in order */
        const int32_t q = p[v];
        if (last_child[q] < 0)
            first_child[q] = (int32_t)v;
        else
            next_sibling[last_child[q]] = (int32_t)v;
        last_child[q] = (int32_t)v;
    }
    return elements ? emit_xml(first_child, next_sibling, 0, -1, r, parent, labels, lab, 0) : 0;
}

/* The closed forms of the int32 tables (keyroots of one and two nodes) against the reference, on
 * XML-like trees, with costs that make every case of them the cheapest somewhere: zero deletions,
 * insertions or relabellings, relabelling dearer than deleting and inserting, fractions. */
void test_ted_two_node_keyroots(void)
{
    ww_ctx *ctx = cpu_ctx(1);
    if (!ctx)
        return;
    ww_rng r = {0x2d0de};
    const ww_ted_params costs[] = {{1, 1, 1}, {0, 1, 1}, {1, 0, 1}, {1, 1, 0}, {2, 1, 5}, {1, 3, 0.5}, {0.25, 0.5, 4}};
    int32_t pa[32], la[32], pb[32], lb[32];
    for (int trial = 0; trial < 300; trial++) {
        const size_t na = xml_tree(&r, ww_rng_below(&r, 9), pa, la), nb = xml_tree(&r, 1 + ww_rng_below(&r, 8), pb, lb);
        const ww_tree a = {na, pa, la}, b = {nb, pb, lb};
        const ww_ted_params *p = &costs[trial % 7];
        double d = -1;
        CHECK_STATUS(ww_ted(ctx, &a, &b, p, &d), WW_OK);
        CHECK(d == reference_ted(&a, &b, p)); /* dyadic costs: exact in both */
        CHECK_STATUS(ww_ted(ctx, &b, &a, p, &d), WW_OK);
        const ww_ted_params swapped = {p->insert_cost, p->delete_cost, p->relabel_cost};
        CHECK(d == reference_ted(&a, &b, &swapped));
    }
    ww_ctx_destroy(ctx);
}

/* One large pair over 2, 3 and 8 threads (keyroot tables by dependency depth, largest runs first)
 * equals one thread bit for bit, and the int32 tables (costs integers after a power-of-two
 * scale) equal the double tables (the mapping's, the same pair): random shapes, few and many
 * labels, unit, dyadic and other costs. */
void test_ted_threads_identical(void)
{
    ww_ctx *ctx[4] = {cpu_ctx(1), cpu_ctx(2), cpu_ctx(3), cpu_ctx(8)};
    if (!ctx[0] || !ctx[1] || !ctx[2] || !ctx[3]) {
        for (int k = 0; k < 4; k++)
            ww_ctx_destroy(ctx[k]);
        return;
    }
    ww_rng r = {0x2222};
    enum { N = 1100 }; /* at least 1e6 cells: past the threshold of the threaded schedule */
    int32_t *buf = (int32_t *)malloc(4 * N * sizeof(int32_t));
    ww_ted_edit *edits = (ww_ted_edit *)malloc(2 * N * sizeof(ww_ted_edit));
    const ww_ted_params costs[] = {{1, 1, 1}, {1, 1.5, 0.75}, {0.3, 0.7, 1.1}};
    const enum shape shapes[][2] = {{SHAPE_BUSHY, SHAPE_RANDOM}, {SHAPE_RANDOM, SHAPE_BUSHY}, {SHAPE_BUSHY, SHAPE_STAR}};
    for (int trial = 0; trial < 3; trial++) {
        const size_t na = N - 37 * (size_t)trial, nb = N - 100 + 50 * (size_t)trial;
        random_tree(&r, na, shapes[trial][0], trial == 1 ? 3 : 40, buf, buf + N);
        random_tree(&r, nb, shapes[trial][1], 40, buf + 2 * N, buf + 3 * N);
        const ww_tree a = {na, buf, buf + N}, b = {nb, buf + 2 * N, buf + 3 * N};
        const ww_ted_params *p = &costs[trial];
        double d[4] = {-1, -2, -3, -4}, mapped = -5;
        for (int k = 0; k < 4; k++)
            CHECK_STATUS(ww_ted(ctx[k], &a, &b, p, &d[k]), WW_OK);
        CHECK(d[0] == d[1] && d[0] == d[2] && d[0] == d[3]);
        /* called from the caller's own parallel region with nesting off: the library's region has
         * one thread, whatever the context asked for */
        double nested = -6;
        ww_ctx *fresh = cpu_ctx(8); /* no tables left from the calls above */
#ifdef _OPENMP
        const int levels = omp_get_max_active_levels();
        omp_set_max_active_levels(1);
#pragma omp parallel num_threads(2)
#pragma omp single
#endif
        CHECK_STATUS(ww_ted(fresh, &a, &b, p, &nested), WW_OK);
        ww_ctx_destroy(fresh);
#ifdef _OPENMP
        omp_set_max_active_levels(levels);
#endif
        CHECK(nested == d[0]);
        if (trial < 2) { /* the mapping on the double tables: the same distance */
            size_t count = 0;
            CHECK_STATUS(ww_ted_mapping(ctx[0], &a, &b, p, edits, &count, &mapped), WW_OK);
            CHECK(mapped == d[0]);
        }
    }
    free(edits);
    free(buf);
    for (int k = 0; k < 4; k++)
        ww_ctx_destroy(ctx[k]);
}

/* A matrix block with one long pair to compute (a 1 x 1 block, or the one pair of a self matrix of
 * two trees), or a few (two pairs on 8 threads): each pair over the threads, with progress inside
 * it (several calls before the end, monotone) and cancel at the first report (WW_ERR_CANCELLED,
 * then a later call still right). */
void test_ted_pair_progress(void)
{
    ww_rng r = {0x9e55};
    enum { N = 1200 };
    int32_t *buf = (int32_t *)malloc(4 * N * sizeof(int32_t));
    random_tree(&r, N, SHAPE_BUSHY, 30, buf, buf + N);
    random_tree(&r, N, SHAPE_RANDOM, 30, buf + 2 * N, buf + 3 * N);
    const ww_tree t[2] = {{N, buf, buf + N}, {N, buf + 2 * N, buf + 3 * N}};
    const ww_ted_params costs[2] = {{1, 1, 1}, {0.3, 0.3, 1.1}}; /* int32 tables, double tables */
    const int thread_counts[3] = {1, 2, 8};
    for (int tc = 0; tc < 3; tc++) {
        const int threads = thread_counts[tc];
        ww_ctx *ctx = cpu_ctx(threads);
        if (!ctx)
            continue;
        for (int c = 0; c < 2; c++) {
            double want = -1;
            CHECK_STATUS(ww_ted(ctx, &t[0], &t[1], &costs[c], &want), WW_OK);
            /* x = {t0}, y = {t1}: one entry */
            ww_pairwise_options o = ww_pairwise_options_default();
            cancel_log log = {0, 0, 0, 0, 1};
            o.progress = on_progress;
            o.progress_user = &log;
            double out[4] = {-1, -1, -1, -1};
            CHECK_STATUS(ww_ted_pairwise(ctx, &t[0], 1, &t[1], 1, &costs[c], out, &o), WW_OK);
            CHECK(out[0] == want);
            CHECK(log.calls >= 3);
            CHECK(log.monotone && log.last_done == log.total && log.total > 0);
            /* cancelled at the first report inside the pair */
            cancel_log stop = {0, 1, 0, 0, 1};
            o.progress_user = &stop;
            out[0] = -7;
            CHECK_STATUS(ww_ted_pairwise(ctx, &t[0], 1, &t[1], 1, &costs[c], out, &o), WW_ERR_CANCELLED);
            CHECK(stop.calls == 1 && stop.last_done < stop.total);
            CHECK(out[0] == -7);
            /* a self matrix of the two trees (one pair computed, mirrored): the same value */
            cancel_log self = {0, 0, 0, 0, 1};
            o.progress_user = &self;
            CHECK_STATUS(ww_ted_pairwise(ctx, t, 2, NULL, 0, &costs[c], out, &o), WW_OK);
            CHECK(out[0] == 0 && out[3] == 0 && out[1] == want && out[2] == want);
            CHECK(self.calls >= 3 && self.monotone && self.last_done == self.total);
            /* two pairs: t0 against t1 and t0 */
            cancel_log two = {0, 0, 0, 0, 1};
            o.progress_user = &two;
            out[0] = out[1] = -1;
            CHECK_STATUS(ww_ted_pairwise(ctx, &t[0], 1, t, 2, &costs[c], out, &o), WW_OK);
            CHECK(out[0] == 0 && out[1] == want);
            CHECK(two.monotone && two.last_done == two.total);
            CHECK(threads < 8 || two.calls >= 3); /* 8 threads: the pairs one after the other, inside */
            if (threads == 8) {
                cancel_log stop2 = {0, 2, 0, 0, 1};
                o.progress_user = &stop2;
                CHECK_STATUS(ww_ted_pairwise(ctx, &t[0], 1, t, 2, &costs[c], out, &o), WW_ERR_CANCELLED);
                CHECK(stop2.calls == 2);
            }
        }
        ww_ctx_destroy(ctx);
    }
    free(buf);
}

/* Overwrites the GPU context's tables with another pair's values (the engine keeps its device
 * buffers between calls: a pair computed again under another strategy must not find the entries
 * it fails to compute left there by the last one). */
static void scrub_gpu_tables(ww_ctx *gpu)
{
    enum { N = 1300 };
    int32_t *p = malloc(2 * N * sizeof(int32_t)), *l = malloc(2 * N * sizeof(int32_t));
    if (p && l) {
        ww_rng r = {0x5c7b};
        random_tree(&r, N, SHAPE_RANDOM, 50, p, l);
        random_tree(&r, N, SHAPE_BUSHY, 50, p + N, l + N);
        const ww_tree a = {N, p, l}, b = {N, p + N, l + N};
        double d = -1;
        CHECK_STATUS(ww_ted(gpu, &a, &b, NULL, &d), WW_OK);
        CHECK_STATUS(ww_ted(gpu, &a, &b, &(ww_ted_params){0.3, 0.7, 0.1}, &d), WW_OK);
    }
    free(p);
    free(l);
}

/* WW_TED_THREAD_CELLS, WW_TED_WARP_CELLS, WW_TED_BLOCK_CELLS forcing each GPU strategy in turn:
 * every table on a block, on a warp, on a thread, in tiles over many warps of several blocks
 * (multi-block), a mix of all four in each launch, the built-in thresholds. */
static const char *const ted_gpu_strategies[][3] = {
    {"0", "0", "1000000000000"}, {"0", "1000000000000", "1000000000000"},
    {"1000000000000", "1000000000000", "1000000000000"}, {"0", "0", "0"}, {"16", "200", "2000"}, {"", "", ""}};
enum { TED_GPU_STRATEGIES = sizeof ted_gpu_strategies / sizeof ted_gpu_strategies[0] };

static void force_ted_gpu_strategy(int k, char *name, size_t size)
{
    setenv("WW_TED_THREAD_CELLS", ted_gpu_strategies[k][0], 1);
    setenv("WW_TED_WARP_CELLS", ted_gpu_strategies[k][1], 1);
    setenv("WW_TED_BLOCK_CELLS", ted_gpu_strategies[k][2], 1);
    snprintf(name, size, "%s/%s/%s", ted_gpu_strategies[k][0], ted_gpu_strategies[k][1], ted_gpu_strategies[k][2]);
}

static void unforce_ted_gpu_strategy(void)
{
    unsetenv("WW_TED_THREAD_CELLS");
    unsetenv("WW_TED_WARP_CELLS");
    unsetenv("WW_TED_BLOCK_CELLS");
}

/* The GPU engine against the CPU engine, bit for bit, with each strategy forced in turn
 * (ted_gpu_strategies): random trees of every shape
 * (sizes 0 to 60, unit and other costs), the shared Swissport pairs, a matrix; outputs poisoned
 * first. A context with backend AUTO computes trees on the CPU. */
static void ted_cuda_compare(const char *strategy);

/* The GPU's matrix of `trees` (poisoned first) equals the CPU's bit for bit (mg, mc: count^2). */
static void check_matrix_matches(ww_ctx *gpu, ww_ctx *cpu, const ww_tree *trees, size_t count, const ww_ted_params *p,
                                 double *mg, double *mc, const char *strategy, int costs_index)
{
    for (size_t k = 0; k < count * count; k++)
        mg[k] = NAN;
    CHECK_STATUS(ww_ted_pairwise(gpu, trees, count, NULL, 0, p, mg, NULL), WW_OK);
    CHECK_STATUS(ww_ted_pairwise(cpu, trees, count, NULL, 0, p, mc, NULL), WW_OK);
    int differ = 0;
    for (size_t k = 0; k < count * count; k++)
        differ += mg[k] != mc[k];
    if (differ)
        fprintf(stderr, "  WW_TED_THREAD/WARP/BLOCK_CELLS %s, matrix, costs %d: %d entries differ\n", strategy,
                costs_index, differ);
    CHECK(differ == 0);
}

void test_ted_cuda_matches_cpu(void)
{
    if (!ww_cuda_available())
        SKIP("no usable CUDA GPU (or a build without CUDA): the GPU tree engine is not tested here");
    for (int k = 0; k < TED_GPU_STRATEGIES; k++) {
        char name[96];
        force_ted_gpu_strategy(k, name, sizeof name);
        ted_cuda_compare(name);
    }
    unforce_ted_gpu_strategy();
}

static void ted_cuda_compare(const char *strategy)
{
    ww_ctx *gpu = ww_test_ctx(WW_BACKEND_CUDA, WW_ENGINE_AUTO, 0), *cpu = cpu_ctx(0),
           *autox = ww_test_ctx(WW_BACKEND_AUTO, WW_ENGINE_AUTO, 0);
    if (!gpu || !cpu || !autox) {
        ww_ctx_destroy(gpu);
        ww_ctx_destroy(cpu);
        ww_ctx_destroy(autox);
        return;
    }
    ww_rng r = {0x6e0};
    enum { MAXN = 60, COUNT = 8 };
    int32_t par[COUNT][MAXN], lab[COUNT][MAXN];
    const ww_ted_params costs[] = {{1, 1, 1}, {0.5, 2, 1.25}, {3, 1, 0.3}};
    for (int trial = 0; trial < 80; trial++) {
        const size_t na = ww_rng_below(&r, MAXN + 1), nb = ww_rng_below(&r, MAXN + 1);
        random_tree(&r, na, (enum shape)(trial % SHAPE_COUNT), trial % 2 ? 3 : 20, par[0], lab[0]);
        random_tree(&r, nb, (enum shape)((trial / 4) % SHAPE_COUNT), trial % 2 ? 3 : 20, par[1], lab[1]);
        const ww_tree a = {na, par[0], lab[0]}, b = {nb, par[1], lab[1]};
        double g = NAN, c = -1;
        CHECK_STATUS(ww_ted(gpu, &a, &b, &costs[trial % 3], &g), WW_OK);
        CHECK(ww_ctx_last_backend(gpu) == WW_BACKEND_CUDA);
        CHECK_STATUS(ww_ted(cpu, &a, &b, &costs[trial % 3], &c), WW_OK);
        if (g != c)
            fprintf(stderr, "  WW_TED_THREAD/WARP/BLOCK_CELLS %s, trial %d (%zu x %zu): gpu %.17g, cpu %.17g\n", strategy, trial,
                    na, nb, g, c);
        CHECK(g == c);
    }
    /* a matrix, x against itself and against y, poisoned */
    ww_tree t[COUNT];
    for (int k = 0; k < COUNT; k++) {
        const size_t n = k == 2 ? 0 : 1 + ww_rng_below(&r, MAXN);
        random_tree(&r, n, (enum shape)(k % SHAPE_COUNT), 6, par[k], lab[k]);
        t[k] = (ww_tree){n, par[k], lab[k]};
    }
    double mg[COUNT * COUNT], mc[COUNT * COUNT];
    for (int c = 0; c < 2; c++) {
        for (int k = 0; k < COUNT * COUNT; k++)
            mg[k] = NAN;
        CHECK_STATUS(ww_ted_pairwise(gpu, t, COUNT, NULL, 0, &costs[c], mg, NULL), WW_OK);
        CHECK_STATUS(ww_ted_pairwise(cpu, t, COUNT, NULL, 0, &costs[c], mc, NULL), WW_OK);
        for (int k = 0; k < COUNT * COUNT; k++)
            CHECK(mg[k] == mc[k]);
        for (int k = 0; k < COUNT * COUNT; k++)
            mg[k] = NAN;
        CHECK_STATUS(ww_ted_pairwise(gpu, t, 3, t + 3, COUNT - 3, &costs[c], mg, NULL), WW_OK);
        CHECK_STATUS(ww_ted_pairwise(cpu, t, 3, t + 3, COUNT - 3, &costs[c], mc, NULL), WW_OK);
        for (int k = 0; k < 3 * (COUNT - 3); k++)
            CHECK(mg[k] == mc[k]);
    }
    /* the shared trees: X-TED's values */
    if (ww_test_shared_dir()) {
        scrub_gpu_tables(gpu);
        const int sizes[] = {100, 500, 1000};
        const double want[] = {44, 424, 767};
        for (int k = 0; k < 3; k++) {
            ww_labels *d;
            ww_labels_create(&d);
            ww_tree s[16];
            const size_t n = read_xted(d, "swissport", sizes[k], s, 16);
            double g = NAN;
            if (n >= 2)
                CHECK_STATUS(ww_ted(gpu, &s[0], &s[1], NULL, &g), WW_OK);
            if (g != want[k])
                fprintf(stderr, "  WW_TED_THREAD/WARP/BLOCK_CELLS %s, Swissport %d: gpu %g\n", strategy, sizes[k], g);
            CHECK(g == want[k]);
            for (size_t i = 0; i < n; i++)
                ww_tree_free(&s[i]);
            ww_labels_destroy(d);
        }
    }
    /* the context's other engines after the tree engine used its buffers: a TWED pair and a TWED
     * matrix on the GPU give what they gave before */
    {
        double va[300], vb[257], before = -1, after = -2, mb[4], ma[4];
        for (int k = 0; k < 300; k++)
            va[k] = ww_rng_uniform(&r);
        for (int k = 0; k < 257; k++)
            vb[k] = ww_rng_uniform(&r);
        const ww_series sa = ww_series_f64(va, NULL, 300, 1), sb = ww_series_f64(vb, NULL, 257, 1);
        const size_t offsets[3] = {0, 300, 557};
        double both[557];
        memcpy(both, va, sizeof va);
        memcpy(both + 300, vb, sizeof vb);
        const ww_dataset ds = ww_dataset_f64(both, NULL, offsets, 2, 0, 1);
        CHECK_STATUS(ww_twed(gpu, &sa, &sb, NULL, &before), WW_OK);
        CHECK_STATUS(ww_twed_pairwise(gpu, &ds, NULL, NULL, mb, NULL), WW_OK);
        double big = -1;
        CHECK_STATUS(ww_ted(gpu, &t[0], &t[1], &costs[1], &big), WW_OK);
        CHECK_STATUS(ww_ted_pairwise(gpu, t, COUNT, NULL, 0, NULL, mg, NULL), WW_OK);
        CHECK_STATUS(ww_twed(gpu, &sa, &sb, NULL, &after), WW_OK);
        CHECK_STATUS(ww_twed_pairwise(gpu, &ds, NULL, NULL, ma, NULL), WW_OK);
        CHECK(before == after);
        for (int k = 0; k < 4; k++)
            CHECK(mb[k] == ma[k]);
    }
    /* backend AUTO: the CPU */
    const int32_t parent[] = {-1, 0, 0}, labels[] = {1, 2, 3};
    const ww_tree x3 = {3, parent, labels}, x2 = {2, parent, labels};
    double d = -1;
    CHECK_STATUS(ww_ted(autox, &x3, &x2, NULL, &d), WW_OK);
    CHECK(d == 1 && ww_ctx_last_backend(autox) == WW_BACKEND_CPU);
    ww_ctx_destroy(gpu);
    ww_ctx_destroy(cpu);
    ww_ctx_destroy(autox);
}

/* The GPU engine's larger tables against the CPU, bit for bit, each strategy forced in turn: pairs
 * whose block-strategy tables have more rows than a block has threads (two rows per thread in the
 * shared-memory sweep) and more than it holds (the sweep in global memory: a path of 1100 nodes is
 * one table of 1101 rows), in exact int32 tables and in doubles (costs that no power-of-two scale
 * makes integers); and a matrix of many small pairs, whose tables outnumber the units of each
 * role. Outputs poisoned first. */
static void ted_cuda_large(const char *strategy, ww_ctx *gpu, ww_ctx *cpu)
{
    ww_rng r = {0x1a7e};
    scrub_gpu_tables(gpu);
    const ww_ted_params costs[] = {{1, 1, 1}, {3, 1, 0.3}, {0.5, 2, 1.25}};
    const struct {
        size_t na, nb;
        enum shape sa, sb;
    } pairs[] = {{800, 900, SHAPE_RANDOM, SHAPE_BUSHY}, {700, 1000, SHAPE_PATH, SHAPE_RANDOM},
                 {1100, 1200, SHAPE_PATH, SHAPE_PATH}, {1030, 600, SHAPE_BUSHY, SHAPE_STAR}};
    int32_t *pa = malloc(1200 * sizeof(int32_t)), *la = malloc(1200 * sizeof(int32_t));
    int32_t *pb = malloc(1200 * sizeof(int32_t)), *lb = malloc(1200 * sizeof(int32_t));
    if (!pa || !la || !pb || !lb) {
        CHECK(0);
        free(pa), free(la), free(pb), free(lb);
        return;
    }
    for (int k = 0; k < 4; k++) {
        random_tree(&r, pairs[k].na, pairs[k].sa, k % 2 ? 4 : 30, pa, la);
        random_tree(&r, pairs[k].nb, pairs[k].sb, k % 2 ? 4 : 30, pb, lb);
        const ww_tree a = {pairs[k].na, pa, la}, b = {pairs[k].nb, pb, lb};
        for (int c = 0; c < 3; c++) {
            double g = NAN, want = -1;
            CHECK_STATUS(ww_ted(gpu, &a, &b, &costs[c], &g), WW_OK);
            CHECK_STATUS(ww_ted(cpu, &a, &b, &costs[c], &want), WW_OK);
            if (g != want)
                fprintf(stderr, "  WW_TED_THREAD/WARP/BLOCK_CELLS %s, pair %d (%zu x %zu), costs %d: gpu %.17g, cpu %.17g\n",
                        strategy, k, pairs[k].na, pairs[k].nb, c, g, want);
            CHECK(g == want);
        }
    }
    free(pa), free(la), free(pb), free(lb);
    enum { COUNT = 40, MAXN = 200 };
    int32_t *par = malloc(COUNT * MAXN * sizeof(int32_t)), *lab = malloc(COUNT * MAXN * sizeof(int32_t));
    double *mg = malloc(COUNT * COUNT * sizeof(double)), *mc = malloc(COUNT * COUNT * sizeof(double));
    ww_tree t[COUNT];
    if (par && lab && mg && mc) {
        for (int k = 0; k < COUNT; k++) {
            const size_t n = 1 + ww_rng_below(&r, MAXN);
            random_tree(&r, n, (enum shape)(k % SHAPE_COUNT), 5, par + k * MAXN, lab + k * MAXN);
            t[k] = (ww_tree){n, par + k * MAXN, lab + k * MAXN};
        }
        for (int c = 0; c < 2; c++)
            check_matrix_matches(gpu, cpu, t, COUNT, &costs[c], mg, mc, strategy, c);
    } else {
        CHECK(0);
    }
    free(par), free(lab), free(mg), free(mc);
    /* costs of 2^20: the CPU has int32 tables for the small pairs (up to about 170 nodes per pair)
     * and doubles for the others; a GPU batch holding both is in doubles: the same values */
    {
        enum { M = 4 };
        static int32_t hp[M][150], hl[M][150];
        const size_t sizes[M] = {40, 60, 120, 150};
        ww_tree h[M];
        for (int k = 0; k < M; k++) {
            random_tree(&r, sizes[k], (enum shape)(k % SHAPE_COUNT), 5, hp[k], hl[k]);
            h[k] = (ww_tree){sizes[k], hp[k], hl[k]};
        }
        const ww_ted_params heavy[2] = {{1048576, 1048576, 1048576}, {1048576, 3145728, 524288}};
        for (int c = 0; c < 2; c++) {
            double hg[M * M], hc[M * M];
            for (int k = 0; k < M * M; k++)
                hg[k] = NAN;
            CHECK_STATUS(ww_ted_pairwise(gpu, h, M, NULL, 0, &heavy[c], hg, NULL), WW_OK);
            CHECK_STATUS(ww_ted_pairwise(cpu, h, M, NULL, 0, &heavy[c], hc, NULL), WW_OK);
            for (int k = 0; k < M * M; k++)
                CHECK(hg[k] == hc[k]);
        }
    }
}

void test_ted_cuda_large_tables(void)
{
    if (!ww_cuda_available())
        SKIP("no usable CUDA GPU (or a build without CUDA): the GPU tree engine's large tables are not tested here");
    ww_ctx *gpu = ww_test_ctx(WW_BACKEND_CUDA, WW_ENGINE_AUTO, 0), *cpu = cpu_ctx(0);
    for (int k = 0; gpu && cpu && k < TED_GPU_STRATEGIES; k++) {
        char name[96];
        force_ted_gpu_strategy(k, name, sizeof name);
        ted_cuda_large(name, gpu, cpu);
    }
    unforce_ted_gpu_strategy();
    ww_ctx_destroy(gpu);
    ww_ctx_destroy(cpu);
}

/* The GPU's multi-block strategy (tiles of 32 x 32 cells over many warps) against the CPU, bit for
 * bit, forced on every table and mixed with the other strategies in each launch: sizes around
 * multiples of the tile (partial tiles in both directions, one tile, many), tables of one row or
 * one column (a path against a star's leaves: in doubles, where a keyroot of one node has a
 * table), unit and non-integral costs (int32 and double tables), and a matrix of many pairs whose
 * largest tables share one queue. Outputs poisoned first. */
void test_ted_cuda_multi_block(void)
{
    if (!ww_cuda_available())
        SKIP("no usable CUDA GPU (or a build without CUDA): the GPU tree engine's multi-block strategy is not tested here");
    ww_ctx *gpu = ww_test_ctx(WW_BACKEND_CUDA, WW_ENGINE_AUTO, 0), *cpu = cpu_ctx(0);
    enum { MAXN = 200, COUNT = 30 };
    int32_t *par = malloc(COUNT * MAXN * sizeof(int32_t)), *lab = malloc(COUNT * MAXN * sizeof(int32_t));
    double *mg = malloc(COUNT * COUNT * sizeof(double)), *mc = malloc(COUNT * COUNT * sizeof(double));
    if (!gpu || !cpu || !par || !lab || !mg || !mc) {
        CHECK(0);
        ww_ctx_destroy(gpu), ww_ctx_destroy(cpu);
        free(par), free(lab), free(mg), free(mc);
        return;
    }
    const ww_ted_params costs[] = {{1, 1, 1}, {0.5, 2, 1.25}, {3, 1, 0.3}};
    const size_t sizes[] = {1, 2, 31, 32, 33, 63, 64, 65, 97, 160, 200};
    const int forced[] = {3, 4}; /* ted_gpu_strategies: all multi-block; a mix of the four */
    ww_rng r = {0x711e};
    for (int f = 0; f < 2; f++) {
        char name[96];
        force_ted_gpu_strategy(forced[f], name, sizeof name);
        scrub_gpu_tables(gpu);
        for (int trial = 0; trial < 40; trial++) {
            const size_t na = sizes[ww_rng_below(&r, sizeof sizes / sizeof sizes[0])];
            const size_t nb = sizes[ww_rng_below(&r, sizeof sizes / sizeof sizes[0])];
            /* paths against stars first: tables of one row and one column */
            const enum shape sa = trial < 8 ? SHAPE_PATH : (enum shape)(trial % SHAPE_COUNT);
            const enum shape sb = trial < 8 ? SHAPE_STAR : (enum shape)((trial / 4) % SHAPE_COUNT);
            random_tree(&r, na, sa, trial % 2 ? 3 : 40, par, lab);
            random_tree(&r, nb, sb, trial % 2 ? 3 : 40, par + MAXN, lab + MAXN);
            const ww_tree a = {na, par, lab}, b = {nb, par + MAXN, lab + MAXN};
            for (int c = 0; c < 3; c++) {
                double g = NAN, want = -1, back = NAN, back_want = -1;
                CHECK_STATUS(ww_ted(gpu, &a, &b, &costs[c], &g), WW_OK);
                CHECK_STATUS(ww_ted(cpu, &a, &b, &costs[c], &want), WW_OK);
                CHECK_STATUS(ww_ted(gpu, &b, &a, &costs[c], &back), WW_OK);
                CHECK_STATUS(ww_ted(cpu, &b, &a, &costs[c], &back_want), WW_OK);
                if (g != want || back != back_want)
                    fprintf(stderr, "  WW_TED_THREAD/WARP/BLOCK_CELLS %s, trial %d (%zu x %zu), costs %d: gpu %.17g %.17g, cpu %.17g %.17g\n",
                            name, trial, na, nb, c, g, back, want, back_want);
                CHECK(g == want && back == back_want);
            }
        }
        ww_tree t[COUNT];
        for (int k = 0; k < COUNT; k++) {
            const size_t n = 20 + ww_rng_below(&r, MAXN - 19);
            random_tree(&r, n, (enum shape)(k % SHAPE_COUNT), 6, par + k * MAXN, lab + k * MAXN);
            t[k] = (ww_tree){n, par + k * MAXN, lab + k * MAXN};
        }
        for (int c = 0; c < 2; c++)
            check_matrix_matches(gpu, cpu, t, COUNT, &costs[c], mg, mc, name, c);
    }
    unforce_ted_gpu_strategy();
    free(par), free(lab), free(mg), free(mc);
    ww_ctx_destroy(gpu);
    ww_ctx_destroy(cpu);
}
