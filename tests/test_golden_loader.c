/* Parses the golden file: "case id nA nB dim degree nu lambda", then lines A, TA, B, TB, expect. */
#include "golden.h"
#include "ww_test.h"

#include <stdlib.h>
#include <string.h>

static int read_values(FILE *f, const char *tag, size_t n, double **out)
{
    char word[16];
    if (fscanf(f, "%15s", word) != 1 || strcmp(word, tag) != 0)
        return -1;
    *out = malloc((n ? n : 1) * sizeof(double));
    for (size_t i = 0; i < n; i++)
        if (fscanf(f, "%lf", &(*out)[i]) != 1)
            return -1;
    return 0;
}

int ww_golden_load(ww_golden_set *set)
{
    memset(set, 0, sizeof *set);
    const char *dir = ww_test_shared_dir();
    if (!dir)
        return -1;
    char path[4200];
    snprintf(path, sizeof path, "%s/golden/twed.txt", dir);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char line[256];
    size_t cap = 0;
    int rc = 0;
    while (fscanf(f, "%255s", line) == 1) {
        if (line[0] == '#') {
            if (!fgets(line, sizeof line, f))
                break;
            continue;
        }
        if (strcmp(line, "case") != 0) {
            rc = -1;
            break;
        }
        if (set->count == cap) {
            cap = cap ? 2 * cap : 64;
            set->cases = realloc(set->cases, cap * sizeof *set->cases);
        }
        ww_golden_case *c = &set->cases[set->count];
        memset(c, 0, sizeof *c);
        int id;
        if (fscanf(f, "%d %zu %zu %zu %d %lf %lf", &id, &c->na, &c->nb, &c->dim, &c->params.degree,
                   &c->params.nu, &c->params.lambda) != 7 ||
            read_values(f, "A", c->na * c->dim, &c->a) || read_values(f, "TA", c->na, &c->ta) ||
            read_values(f, "B", c->nb * c->dim, &c->b) || read_values(f, "TB", c->nb, &c->tb) ||
            fscanf(f, "%255s %lf", line, &c->expect) != 2 || strcmp(line, "expect") != 0) {
            rc = -1;
            set->count++;
            break;
        }
        set->count++;
    }
    fclose(f);
    if (rc != 0)
        ww_golden_free(set);
    return rc;
}

void ww_golden_free(ww_golden_set *set)
{
    for (size_t i = 0; i < set->count; i++) {
        free(set->cases[i].a);
        free(set->cases[i].ta);
        free(set->cases[i].b);
        free(set->cases[i].tb);
    }
    free(set->cases);
    memset(set, 0, sizeof *set);
}
