/* libFuzzer harness of the GPU calibration file parser (ww_calibration_parse, src/common/
 * calibration.c, compiled in every build): the input is the file's text. Besides the sanitizers'
 * findings, a result that breaks the parser's contract (fuzz/contract.h) aborts. */
#include "contract.h"

#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* calibration.c is linked alone (not the whole library); its one call outside, for messages */
const char *ww_strerror(ww_status status)
{
    (void)status;
    return "error";
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *broken = ww_fuzz_calibration(data, size);
    if (broken) {
        fprintf(stderr, "calibration contract broken: %s\n", broken);
        abort();
    }
    return 0;
}
