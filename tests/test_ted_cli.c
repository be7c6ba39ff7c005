/* The tree edit distance commands of the CLI (issue 13), driven through the shell in a temporary
 * directory as in test_cli.c: results equal the API's, bad input is a clear error with the right
 * exit code and no output file, Ctrl-C at each checkpoint leaves nothing behind. */
#define _POSIX_C_SOURCE 200809L

#include "ww_test.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct ted_sandbox {
    char dir[256];
} ted_sandbox;

static int sandbox_make(ted_sandbox *b)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(b->dir, sizeof b->dir, "%s/ww_ted_cli_XXXXXX", tmp && *tmp ? tmp : "/tmp");
    return mkdtemp(b->dir) ? 0 : -1;
}

static void sandbox_remove(ted_sandbox *b)
{
    DIR *d = opendir(b->dir);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
                char p[600];
                snprintf(p, sizeof p, "%s/%s", b->dir, e->d_name);
                unlink(p);
            }
        }
        closedir(d);
    }
    rmdir(b->dir);
}

static void put(const ted_sandbox *b, const char *name, const char *text)
{
    char p[600];
    snprintf(p, sizeof p, "%s/%s", b->dir, name);
    FILE *fp = fopen(p, "w");
    if (fp) {
        fputs(text, fp);
        fclose(fp);
    }
}

/* Files in the sandbox (inputs included). */
static int file_count(const ted_sandbox *b)
{
    int n = 0;
    DIR *d = opendir(b->dir);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL)
            n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
        closedir(d);
    }
    return n;
}

/* Runs the CLI with `args` (shell syntax) in the sandbox; stdout into `out` (NUL-terminated).
 * Returns the exit status. */
static int run_cli(const ted_sandbox *b, const char *env, const char *args, char *out, size_t size)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "cd '%s' && %s '%s' %s 2>stderr.log", b->dir, env ? env : "", WW_CLI_PATH, args);
    FILE *fp = popen(cmd, "r");
    if (fp == NULL)
        return -1;
    size_t len = 0;
    if (out)
        while (len + 1 < size && fgets(out + len, (int)(size - len), fp))
            len = strlen(out);
    if (out)
        out[len] = '\0';
    char sink[256];
    while (fgets(sink, sizeof sink, fp))
        ;
    int status = pclose(fp);
    char log[600];
    snprintf(log, sizeof log, "%s/stderr.log", b->dir);
    unlink(log);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Reads a CSV matrix the CLI wrote; returns the values read. */
static int read_csv(const ted_sandbox *b, const char *name, double *v, int max)
{
    char p[600];
    snprintf(p, sizeof p, "%s/%s", b->dir, name);
    FILE *fp = fopen(p, "r");
    int n = 0;
    if (fp == NULL)
        return 0;
    while (n < max && fscanf(fp, "%lf", &v[n]) == 1) {
        n++;
        int c = fgetc(fp);
        if (c != ',' && c != '\n' && c != EOF)
            break;
    }
    fclose(fp);
    return n;
}

void test_ted_cli_commands(void)
{
    ted_sandbox b;
    if (sandbox_make(&b) != 0)
        SKIP("no temporary directory");
    char out[4096];
    CHECK(run_cli(&b, NULL, "ted '{a{b}{c{d}}}' '{x{b}{a}}'", out, sizeof out) == 0);
    CHECK(strcmp(out, "3\n") == 0);
    put(&b, "one.tree", "\n {a{b}{c{d}}}\n");
    CHECK(run_cli(&b, NULL, "ted one.tree '{a{b}{c{d}}}' --threads 1 --backend cpu", out, sizeof out) == 0);
    CHECK(strcmp(out, "0\n") == 0);
    CHECK(run_cli(&b, NULL, "ted '{a{b}}' '{a{c}{b}}' --insert-cost 0.25 --mapping", out, sizeof out) == 0);
    CHECK(strcmp(out, "0.25\n-1 1\n0 0\n1 2\n") == 0);

    /* a matrix of bracket trees against itself, and against another file; costs given */
    put(&b, "trees.txt", "{a{b}{c}}\n\n{a{b{c}}}\r\n{x}\n{a{b}{c}{d{e}}}\n");
    put(&b, "other.txt", "{b}\n{a{c}}\n");
    CHECK(run_cli(&b, NULL, "ted-pairwise trees.txt -o m.csv -q --relabel-cost 2", NULL, 0) == 0);
    double m[16];
    CHECK(read_csv(&b, "m.csv", m, 16) == 16);
    const char *texts[] = {"{a{b}{c}}", "{a{b{c}}}", "{x}", "{a{b}{c}{d{e}}}", "{b}", "{a{c}}"};
    ww_labels *d = NULL;
    ww_labels_create(&d);
    ww_tree t[6];
    for (int k = 0; k < 6; k++)
        CHECK_STATUS(ww_tree_parse_bracket(d, texts[k], strlen(texts[k]), &t[k]), WW_OK);
    ww_ctx *ctx = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_AUTO, 1);
    const ww_ted_params p = {1, 1, 2};
    for (int i = 0; ctx && i < 4; i++)
        for (int j = 0; j < 4; j++) {
            double want = -1;
            CHECK_STATUS(ww_ted(ctx, &t[i], &t[j], &p, &want), WW_OK);
            CHECK(m[i * 4 + j] == want);
        }
    CHECK(run_cli(&b, NULL, "ted-pairwise trees.txt other.txt -o xy.csv -q --delete-cost 0.5", NULL, 0) == 0);
    CHECK(read_csv(&b, "xy.csv", m, 16) == 8);
    const ww_ted_params q = {0.5, 1, 1};
    for (int i = 0; ctx && i < 4; i++)
        for (int j = 0; j < 2; j++) {
            double want = -1;
            CHECK_STATUS(ww_ted(ctx, &t[i], &t[4 + j], &q, &want), WW_OK);
            CHECK(m[i * 2 + j] == want);
        }
    /* X-TED's pair of files, found by name */
    put(&b, "t_nodes_3.txt", "a b c \na c \n");
    put(&b, "t_nodes_adj_3.txt", "[[1, 2], [], []]\n[[1], []]\n");
    CHECK(run_cli(&b, NULL, "ted-pairwise t_nodes_3.txt -o x.csv -q", NULL, 0) == 0);
    CHECK(read_csv(&b, "x.csv", m, 16) == 4);
    CHECK(m[0] == 0 && m[1] == 1 && m[2] == 1 && m[3] == 0);
    CHECK(run_cli(&b, NULL, "ted-pairwise t_nodes_3.txt -o x.npy -q", NULL, 0) == 0);
    for (int k = 0; k < 6; k++)
        ww_tree_free(&t[k]);
    ww_labels_destroy(d);
    ww_ctx_destroy(ctx);
    sandbox_remove(&b);
}

void test_ted_cli_bad_inputs(void)
{
    ted_sandbox b;
    if (sandbox_make(&b) != 0)
        SKIP("no temporary directory");
    put(&b, "good.txt", "{a{b}}\n{c}\n");
    put(&b, "bad.txt", "{a{b}}\n{c{d}\n");
    put(&b, "empty.txt", "\n\n");
    put(&b, "m_nodes_2.txt", "a b\nc\nd e\n");
    put(&b, "m_nodes_adj_2.txt", "[[1], []]\n[[]]\n");
    put(&b, "n_nodes_2.txt", "a b\n");
    put(&b, "n_nodes_adj_2.txt", "[[1], [0]]\n");
    /* two flat trees of a million nodes: their pair's tables would need 16 TB */
    {
        char p[600];
        snprintf(p, sizeof p, "%s/huge.txt", b.dir);
        FILE *fp = fopen(p, "w");
        for (int line = 0; fp && line < 2; line++) {
            fputs("{r", fp);
            for (int k = 1; k < 1000000; k++)
                fputs("{x}", fp);
            fputs("}\n", fp);
        }
        if (fp)
            fclose(fp);
    }
    const int inputs = file_count(&b);
    struct {
        const char *args;
        int code;
    } cases[] = {
        {"ted '{a' '{b}'", 1},                                   /* unbalanced */
        {"ted '{}' '{b}'", 1},                                   /* empty brackets */
        {"ted '{a}{b}' '{b}'", 1},                               /* two trees */
        {"ted missing.tree '{b}'", 1},                           /* no such file */
        {"ted good.txt '{b}'", 1},                               /* a file of two trees */
        {"ted '{a}' '{b}' --delete-cost -1", 2},                 /* negative cost */
        {"ted '{a}' '{b}' --relabel-cost nan", 2},               /* NaN cost */
        {"ted '{a}' '{b}' --insert-cost inf", 2},                /* infinite cost */
        {"ted '{a}' '{b}' --nu 1", 2},                           /* a series option */
        {"ted '{a}'", 2},                                        /* one tree */
        {"ted-pairwise bad.txt -o out.npy", 1},                  /* bad line */
        {"ted-pairwise empty.txt -o out.npy", 1},                /* no trees */
        {"ted-pairwise good.txt bad.txt -o out.npy", 1},         /* bad second file */
        {"ted-pairwise m_nodes_2.txt -o out.npy", 1},            /* labels/adjacency counts differ */
        {"ted-pairwise n_nodes_2.txt -o out.npy", 1},            /* adjacency not a tree */
        {"ted-pairwise good.txt", 2},                            /* no -o */
        {"ted-pairwise good.txt -o out.xyz", 2},                 /* unknown format */
        {"ted-pairwise good.txt -o out.npy --mapping", 2},       /* ted only */
        {"ted-pairwise good.txt -o missing_dir/out.npy", 1},     /* unwritable */
        {"ted-pairwise huge.txt -o out.npy", 1},                 /* a pair too large for memory */
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const int code = run_cli(&b, NULL, cases[k].args, NULL, 0);
        if (code != cases[k].code)
            fprintf(stderr, "  '%s': exit %d, expected %d\n", cases[k].args, code, cases[k].code);
        CHECK(code == cases[k].code);
        CHECK(file_count(&b) == inputs); /* nothing written */
    }
    /* Ctrl-C at each checkpoint (after computing, before publishing): exit 130, nothing left */
    for (int at = 1; at <= 2; at++) {
        char env[64];
        snprintf(env, sizeof env, "WW_CLI_INTERRUPT_AT=%d", at);
        CHECK(run_cli(&b, env, "ted-pairwise good.txt -o out.npy", NULL, 0) == 130);
        CHECK(file_count(&b) == inputs);
    }
    sandbox_remove(&b);
}
