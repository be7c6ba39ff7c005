/* libFuzzer harness of the CLI's file readers (src/cli/io.c): the bytes of a file read as the format
 * FUZZ_FORMAT (one binary per format: text/UCR, CSV, .ts, .npy). Besides the sanitizers' findings,
 * a result that breaks the reader's contract (fuzz/contract.h) aborts. */
#include "contract.h"

#include <stdio.h>
#include <stdlib.h>

#ifndef FUZZ_FORMAT
#error "compile with -DFUZZ_FORMAT=CLI_FORMAT_WHITESPACE, CLI_FORMAT_CSV, CLI_FORMAT_TS or CLI_FORMAT_NPY"
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *broken = ww_fuzz_reader(FUZZ_FORMAT, data, size);
    if (broken) {
        fprintf(stderr, "reader contract broken: %s\n", broken);
        abort();
    }
    return 0;
}
