/* The test runner: runs every test of test_list.h (or those whose name contains argv[1]). */
#include "ww_test.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int ww_test_failures;
int ww_test_skipped;

typedef struct test_entry {
    const char *name;
    void (*fn)(void);
} test_entry;

static const test_entry all_tests[] = {
#define X(name) {#name, name},
#include "test_list.h"
#undef X
};

ww_ctx *ww_test_ctx(ww_backend backend, ww_engine engine, int threads)
{
    ww_ctx_options o = ww_ctx_options_default();
    o.backend = backend;
    o.engine = engine;
    o.num_threads = threads;
    ww_ctx *ctx = NULL;
    CHECK_STATUS(ww_ctx_create(&ctx, &o), WW_OK);
    return ctx;
}

const char *ww_test_shared_dir(void)
{
    static char path[4096];
    const char *env = getenv("WW_SHARED_DIR");
    snprintf(path, sizeof path, "%s", env ? env : WW_SOURCE_DIR "/../shared");
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode) ? path : NULL;
}

int main(int argc, char **argv)
{
    int passed = 0, failed = 0, skipped = 0;
    for (size_t t = 0; t < sizeof all_tests / sizeof all_tests[0]; t++) {
        if (argc > 1 && strstr(all_tests[t].name, argv[1]) == NULL)
            continue;
        ww_test_failures = 0;
        ww_test_skipped = 0;
        fprintf(stderr, "%s\n", all_tests[t].name);
        all_tests[t].fn();
        if (ww_test_failures) {
            failed++;
            fprintf(stderr, "FAIL %s (%d failed checks)\n", all_tests[t].name, ww_test_failures);
        } else if (ww_test_skipped) {
            skipped++;
        } else {
            passed++;
        }
    }
    printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
    return failed ? 1 : 0;
}
