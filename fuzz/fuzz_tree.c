/* libFuzzer harness of the tree parsers (ww_tree_parse_bracket, ww_tree_parse_xted, src/common/
 * tree_parse.c) and of the tree edit distance on what they accept. The input's first byte picks
 * the parser: even, the bracket notation of the rest; odd, X-TED's pair of lines (the rest up to
 * its first newline is the labels line, after it the adjacency line). Besides the sanitizers'
 * findings it aborts when the contract breaks: an accepted tree passes ww_tree_check and has label
 * ids of its dictionary, and (up to 200 nodes) its distance to itself and its mapping's cost are 0
 * with every node mapped; a refused one leaves the output tree empty. */
#include "wavewarp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void broken(const char *what)
{
    fprintf(stderr, "tree contract broken: %s\n", what);
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static ww_ctx *ctx;
    if (size < 1)
        return 0;
    if (ctx == NULL) {
        ww_ctx_options o = ww_ctx_options_default();
        o.backend = WW_BACKEND_CPU;
        o.num_threads = 1;
        if (ww_ctx_create(&ctx, &o) != WW_OK)
            broken("no CPU context");
    }
    ww_labels *d;
    if (ww_labels_create(&d) != WW_OK)
        return 0;
    ww_tree t = {99, NULL, NULL};
    const char *text = (const char *)data + 1;
    const size_t len = size - 1;
    ww_status st;
    if (data[0] & 1) {
        const char *nl = memchr(text, '\n', len);
        const size_t labels_len = nl ? (size_t)(nl - text) : len;
        st = ww_tree_parse_xted(d, text, labels_len, nl ? nl + 1 : "", nl ? len - labels_len - 1 : 0, &t);
    } else {
        st = ww_tree_parse_bracket(d, text, len, &t);
    }
    if (st == WW_OK) {
        if (ww_tree_check(&t) != WW_OK)
            broken("an accepted tree fails ww_tree_check");
        for (size_t i = 0; i < t.count; i++)
            if (t.labels[i] < 0 || (size_t)t.labels[i] >= ww_labels_count(d))
                broken("a label id outside the dictionary");
        if (t.count <= 200) {
            double v = -1;
            ww_ted_edit edits[400];
            size_t count = 0;
            if (ww_ted(ctx, &t, &t, NULL, &v) != WW_OK || v != 0)
                broken("the distance of a tree to itself is not 0");
            if (ww_ted_mapping(ctx, &t, &t, NULL, edits, &count, &v) != WW_OK || v != 0 || count != t.count)
                broken("the mapping of a tree to itself is not the identity");
        }
    } else if (st != WW_ERR_TREE && st != WW_ERR_MEMORY) {
        broken("a refused text with another status than WW_ERR_TREE");
    } else if (t.count != 0 || t.parent != NULL || t.labels != NULL) {
        broken("a refused text leaves a tree");
    }
    ww_tree_free(&t);
    ww_labels_destroy(d);
    return 0;
}
