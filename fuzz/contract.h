/* What the fuzzers check besides the sanitizers' findings, shared with the C test that replays the
 * seed corpus (tests/test_fuzz_regressions.c): the contracts of the file readers and of the
 * calibration parser. Each function runs one input and returns NULL, or what broke. */
#ifndef WW_FUZZ_CONTRACT_H
#define WW_FUZZ_CONTRACT_H

#include "cli/io.h"
#include "common/internal.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define WW_FUZZ_NAME "fuzz.input"

/* One reader input: the first byte picks the options (label mode, single-series files), the rest
 * is the file, read as `format`. An accepted file gives at least one series, each of at least one
 * sample, finite values and labels (class numbers when the classes have names), offsets from 0
 * upwards, a right ragged flag, no labels under --no-labels; a refused one says why, naming the
 * file. */
static inline const char *ww_fuzz_reader(cli_format format, const uint8_t *data, size_t size)
{
    if (size == 0)
        return NULL;
    cli_read_options opt;
    opt.labels = (cli_label_mode)(data[0] % 3); /* AUTO, FIRST, NONE */
    opt.single_series = (data[0] >> 2) & 1;
    char err[CLI_ERR_SIZE];
    err[0] = '\0';
    cli_dataset d;
    if (cli_parse_dataset(WW_FUZZ_NAME, format, data + 1, size - 1, &opt, &d, err) != 0) {
        if (strncmp(err, WW_FUZZ_NAME, strlen(WW_FUZZ_NAME)) != 0 || memchr(err, '\0', CLI_ERR_SIZE) == NULL)
            return "an error that does not name the file";
        return NULL;
    }
    const char *broken = NULL;
    if (d.count == 0 || d.dim == 0 || d.values == NULL || d.offsets == NULL || d.offsets[0] != 0)
        broken = "an empty dataset accepted";
    for (size_t i = 0; broken == NULL && i < d.count; i++) {
        if (d.offsets[i + 1] <= d.offsets[i])
            broken = "a series without samples";
        else if (d.labels && !isfinite(d.labels[i]))
            broken = "a label that is not finite";
        else if (d.class_names && !(d.labels && d.labels[i] >= 0 && d.labels[i] < (double)d.class_count &&
                                    d.labels[i] == floor(d.labels[i]) && d.class_names[(size_t)d.labels[i]]))
            broken = "a label that is not the number of a class name";
    }
    if (broken == NULL) {
        int ragged = 0;
        for (size_t i = 1; i < d.count; i++)
            ragged |= cli_series_length(&d, i) != cli_series_length(&d, 0);
        if (ragged != d.ragged)
            broken = "the ragged flag is wrong";
    }
    for (size_t i = 0; broken == NULL && i < d.offsets[d.count] * d.dim; i++)
        if (!isfinite(d.values[i]))
            broken = "a value that is not finite";
    if (broken == NULL && opt.labels == CLI_LABELS_NONE && d.labels != NULL)
        broken = "labels read with --no-labels";
    cli_dataset_free(&d);
    return broken;
}

/* One calibration file's text (any bytes; NUL-terminated here): a refused file leaves the model
 * as it was, another GPU's file too, and a file that applies survives a round trip through
 * ww_calibration_format (the library reads back what it writes, to 6 digits). */
static inline const char *ww_fuzz_calibration(const uint8_t *data, size_t size)
{
    _Static_assert(sizeof(ww_cuda_model) % sizeof(double) == 0, "ww_cuda_model holds doubles only");
    static const char gpu[] = "NVIDIA H200";
    enum { SM = 132 };
    char text[8192];
    if (size >= sizeof text)
        size = sizeof text - 1;
    memcpy(text, data, size);
    text[size] = '\0';
    ww_cuda_model model = ww_cuda_model_default(), before = model;
    int applies = -1;
    ww_status st = ww_calibration_parse(text, gpu, SM, &model, &applies);
    if (st != WW_OK) {
        if (st != WW_ERR_CALIBRATION && st != WW_ERR_MEMORY)
            return "an unexpected status";
        if (memcmp(&model, &before, sizeof model) != 0 || applies != 0)
            return "a refused file changed the model";
        return NULL;
    }
    if (!applies)
        return memcmp(&model, &before, sizeof model) != 0 ? "another GPU's file changed the model" : NULL;
    char written[4096];
    if (ww_calibration_format(written, sizeof written, gpu, SM, &model) >= sizeof written)
        return "the formatted file does not fit 4 KiB";
    ww_cuda_model again = ww_cuda_model_default();
    int applies_again = 0;
    if (ww_calibration_parse(written, gpu, SM, &again, &applies_again) != WW_OK || !applies_again)
        return "the library refuses a file it wrote";
    double a[sizeof model / sizeof(double)], b[sizeof model / sizeof(double)];
    memcpy(a, &model, sizeof model);
    memcpy(b, &again, sizeof again);
    for (size_t i = 0; i < sizeof a / sizeof a[0]; i++)
        if (!(fabs(a[i] - b[i]) <= 1e-5 * fabs(a[i])))
            return "a value changed in the round trip";
    return NULL;
}

#endif
