/* The fuzzers' seed corpus (fuzz/corpus/), replayed through the same contracts the fuzzers check
 * (fuzz/contract.h): every file reader on every text, CSV, .ts and .npy input, the calibration
 * parser on every calibration input. A crash or broken contract a fuzzer finds is kept there as an
 * input named crash-* (listed in fuzz/README.md), so this test is its regression test;
 * under .ci/run it runs under AddressSanitizer and UndefinedBehaviorSanitizer too. */
#define _POSIX_C_SOURCE 200809L

#include "ww_test.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "../fuzz/contract.h"

static unsigned char *slurp_bytes(const char *path, size_t *size)
{
    FILE *fp = fopen(path, "rb");
    if (fp == NULL)
        return NULL;
    unsigned char *buf = malloc(1 << 16);
    *size = buf ? fread(buf, 1, 1 << 16, fp) : 0;
    fclose(fp);
    return buf;
}

/* Replays fuzz/corpus/<kind>; returns how many inputs it held. */
static size_t replay(const char *kind, int is_calibration, cli_format format)
{
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/fuzz/corpus/%s", WW_SOURCE_DIR, kind);
    DIR *d = opendir(dir);
    CHECK(d != NULL);
    if (d == NULL)
        return 0;
    size_t inputs = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char path[2048];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        size_t size = 0;
        unsigned char *data = slurp_bytes(path, &size);
        CHECK(data != NULL);
        if (data == NULL)
            continue;
        const char *broken = is_calibration ? ww_fuzz_calibration(data, size) : ww_fuzz_reader(format, data, size);
        if (broken)
            fprintf(stderr, "  %s: %s\n", path, broken);
        CHECK(broken == NULL);
        free(data);
        inputs++;
    }
    closedir(d);
    return inputs;
}

void test_fuzz_corpus_replay(void)
{
    CHECK(replay("text", 0, CLI_FORMAT_WHITESPACE) >= 5);
    CHECK(replay("csv", 0, CLI_FORMAT_CSV) >= 5);
    CHECK(replay("ts", 0, CLI_FORMAT_TS) >= 20);
    CHECK(replay("npy", 0, CLI_FORMAT_NPY) >= 5);
    CHECK(replay("calibration", 1, CLI_FORMAT_UNKNOWN) >= 3);
    /* text inputs are read as CSV and .ts too, and the other way round: more shapes for each */
    replay("text", 0, CLI_FORMAT_CSV);
    replay("csv", 0, CLI_FORMAT_WHITESPACE);
    replay("ts", 0, CLI_FORMAT_WHITESPACE);
    replay("text", 0, CLI_FORMAT_TS);
}
