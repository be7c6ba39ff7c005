/* Calibration files of the GPU cost model (src/common/calibration.c): parsing good, bad and
 * other-GPU files, writing and finding them, and how contexts load them. No GPU needed; the GPU
 * side (ww_cuda_calibrate on a device) is test_cuda_calibrate in test_cuda.c. */
#define _POSIX_C_SOURCE 200809L /* setenv, mkdtemp */
#include "ww_test.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/internal.h"

static const char good_file[] = "# made by hand\n"
                                "format = 1\n"
                                "gpu = NVIDIA H200\n"
                                "sm_count = 132\n"
                                "date = 2026-11-21T06:00:00Z\n"
                                "\n"
                                "thread_cell_seconds = 5e-12\n"
                                "  warp_step_seconds=2.5e-7  \n"
                                "grid_pair_seconds = 0.0002\n"
                                "grid_step_seconds = 3e-7\n"
                                "thread_max_length = 150\n"
                                "a_variable_of_a_later_version = 7\n";

void test_calibration_parse(void)
{
    ww_cuda_model m = ww_cuda_model_default();
    int applies = -1;
    CHECK_STATUS(ww_calibration_parse(good_file, "NVIDIA H200", 132, &m, &applies), WW_OK);
    CHECK(applies == 1);
    CHECK(m.thread_cell_seconds == 5e-12);
    CHECK(m.warp_step_seconds == 2.5e-7);
    CHECK(m.grid_pair_seconds == 2e-4);
    CHECK(m.grid_step_seconds == 3e-7);
    CHECK(m.thread_max_length == 150);

    /* another GPU, or the same name with another multiprocessor count (a MIG slice): ignored */
    const ww_cuda_model defaults = ww_cuda_model_default();
    const char *others[][2] = {{"NVIDIA H100 80GB HBM3", "132"}, {"NVIDIA H200", "66"}};
    for (int k = 0; k < 2; k++) {
        m = defaults;
        applies = -1;
        CHECK_STATUS(ww_calibration_parse(good_file, others[k][0], atoi(others[k][1]), &m, &applies), WW_OK);
        CHECK(applies == 0);
        CHECK(memcmp(&m, &defaults, sizeof m) == 0);
    }

    /* a file without some variables keeps the others' values */
    m = defaults;
    CHECK_STATUS(ww_calibration_parse("format = 1\ngpu = G\nsm_count = 2\nwarp_step_seconds = 1e-6\n", "G", 2, &m,
                                      &applies),
                 WW_OK);
    CHECK(applies == 1 && m.warp_step_seconds == 1e-6 && m.grid_pair_seconds == defaults.grid_pair_seconds);

    /* malformed: a clear status, the model untouched */
    const char *bad[] = {
        "",                                                                  /* nothing: no gpu */
        "format = 1\nsm_count = 132\n",                                      /* no gpu */
        "format = 1\ngpu = NVIDIA H200\n",                                   /* no sm_count */
        "gpu = NVIDIA H200\nsm_count = 132\n",                               /* no format */
        "format = 2\ngpu = NVIDIA H200\nsm_count = 132\n",                   /* a newer format */
        "format = 1\ngpu = NVIDIA H200\nsm_count = 132\nwarp_step_seconds\n", /* no '=' */
        "format = 1\ngpu = NVIDIA H200\nsm_count = 132\nwarp_step_seconds = fast\n",
        "format = 1\ngpu = NVIDIA H200\nsm_count = 132\nwarp_step_seconds = 1e-7x\n",
        "format = 1\ngpu = NVIDIA H200\nsm_count = 132\nwarp_step_seconds = -1e-7\n",
        "format = 1\ngpu = NVIDIA H200\nsm_count = 132\nwarp_step_seconds = nan\n",
        "format = 1\ngpu = NVIDIA H200\nsm_count = 132\nwarp_step_seconds = 1e999\n",
        "format = 1\ngpu = NVIDIA H200\nsm_count = 132\nwarp_step_seconds =\n",
        "format = 1\ngpu = NVIDIA H200\nsm_count = 13.5\n",
        "format = 1\ngpu = NVIDIA H200\nsm_count = 132\n = 3\n",
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        m = defaults;
        ww_status st = ww_calibration_parse(bad[k], "NVIDIA H200", 132, &m, &applies);
        if (st != WW_ERR_CALIBRATION)
            fprintf(stderr, "  bad file %zu: %s\n", k, ww_strerror(st));
        CHECK(st == WW_ERR_CALIBRATION);
        CHECK(memcmp(&m, &defaults, sizeof m) == 0);
    }
    /* a line longer than any real one */
    char *longline = malloc(5000);
    memset(longline, 'x', 4999);
    longline[4999] = '\0';
    CHECK_STATUS(ww_calibration_parse(longline, "G", 1, &m, &applies), WW_ERR_CALIBRATION);
    free(longline);
    CHECK_STATUS(ww_calibration_parse(NULL, "G", 1, &m, &applies), WW_ERR_NULL_POINTER);

    /* what format writes, parse reads back (to the 6 digits written) */
    ww_cuda_model w = defaults;
    w.warp_step_seconds = 1.234567e-7;
    w.thread_max_length = 171;
    char text[2048];
    size_t n = ww_calibration_format(text, sizeof text, "Some GPU (rev 2)", 77, &w);
    CHECK(n == strlen(text));
    CHECK(strstr(text, "gpu = Some GPU (rev 2)\n") != NULL && strstr(text, "date = ") != NULL);
    m = defaults;
    CHECK_STATUS(ww_calibration_parse(text, "Some GPU (rev 2)", 77, &m, &applies), WW_OK);
    CHECK(applies == 1);
    CHECK_CLOSE(m.warp_step_seconds, w.warp_step_seconds, 1e-6);
    CHECK(m.thread_max_length == 171);
    /* a small buffer: truncated, terminated, and the full length told */
    char small[16];
    const size_t full = ww_calibration_format(text, sizeof text, "G", 1, &w);
    CHECK(ww_calibration_format(small, sizeof small, "G", 1, &w) == full); /* the date has a fixed width */
    CHECK(strlen(small) == sizeof small - 1);
}

/* A scratch directory for the file tests. */
static int scratch_dir(char *path, size_t size)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(path, size, "%s/ww_calibration_XXXXXX", tmp && *tmp ? tmp : "/tmp");
    return mkdtemp(path) != NULL ? 0 : -1;
}

static void write_text_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

/* Restores an environment variable as it was. */
static void restore_env(const char *name, const char *saved)
{
    if (saved)
        setenv(name, saved, 1);
    else
        unsetenv(name);
}

void test_calibration_files(void)
{
    char dir[512], path[700], cache[4096];
    CHECK(scratch_dir(dir, sizeof dir) == 0);
    char *saved_xdg = getenv("XDG_CACHE_HOME") ? strdup(getenv("XDG_CACHE_HOME")) : NULL;
    char *saved_env = getenv("WW_CALIBRATION") ? strdup(getenv("WW_CALIBRATION")) : NULL;
    unsetenv("WW_CALIBRATION");

    /* write replaces atomically (no temporary left), load reads it back */
    snprintf(path, sizeof path, "%s/model.txt", dir);
    CHECK_STATUS(ww_calibration_write(path, good_file), WW_OK);
    CHECK_STATUS(ww_calibration_write(path, good_file), WW_OK);
    ww_cuda_model m = ww_cuda_model_default();
    int applies = 0;
    CHECK_STATUS(ww_calibration_load(path, "NVIDIA H200", 132, &m, &applies), WW_OK);
    CHECK(applies == 1 && m.thread_max_length == 150);
    char missing[700];
    snprintf(missing, sizeof missing, "%s/none.txt", dir);
    CHECK_STATUS(ww_calibration_load(missing, "NVIDIA H200", 132, &m, &applies), WW_ERR_IO);
    snprintf(missing, sizeof missing, "%s/no/such/dir/model.txt", dir);
    CHECK_STATUS(ww_calibration_write(missing, good_file), WW_ERR_IO);

    /* the cache path follows XDG_CACHE_HOME; the GPU's name becomes a safe file name */
    setenv("XDG_CACHE_HOME", dir, 1);
    CHECK_STATUS(ww_calibration_default_path("NVIDIA H200", 1, cache, sizeof cache), WW_OK);
    char want[700];
    snprintf(want, sizeof want, "%s/wavewarp/calibration-NVIDIA-H200.txt", dir);
    CHECK(strcmp(cache, want) == 0);
    struct stat st;
    snprintf(want, sizeof want, "%s/wavewarp", dir);
    CHECK(stat(want, &st) == 0 && S_ISDIR(st.st_mode));

    /* resolve: nothing -> defaults; the cache file -> it; WW_CALIBRATION -> it; "" -> defaults */
    char source[4096];
    const ww_cuda_model defaults = ww_cuda_model_default();
    CHECK_STATUS(ww_calibration_resolve(NULL, "NVIDIA H200", 132, &m, source, sizeof source), WW_OK);
    CHECK(strcmp(source, "built-in defaults") == 0 && memcmp(&m, &defaults, sizeof m) == 0);
    write_text_file(cache, good_file);
    CHECK_STATUS(ww_calibration_resolve(NULL, "NVIDIA H200", 132, &m, source, sizeof source), WW_OK);
    CHECK(strcmp(source, cache) == 0 && m.thread_max_length == 150);
    CHECK_STATUS(ww_calibration_resolve("", "NVIDIA H200", 132, &m, source, sizeof source), WW_OK);
    CHECK(strcmp(source, "built-in defaults") == 0 && memcmp(&m, &defaults, sizeof m) == 0);
    /* a file for another GPU in the cache or named: ignored, the defaults used */
    CHECK_STATUS(ww_calibration_resolve(path, "NVIDIA H100 80GB HBM3", 132, &m, source, sizeof source), WW_OK);
    CHECK(strcmp(source, "built-in defaults") == 0 && memcmp(&m, &defaults, sizeof m) == 0);
    /* malformed, named through the environment or an option, or in the cache: an error */
    char bad[700];
    snprintf(bad, sizeof bad, "%s/bad.txt", dir);
    write_text_file(bad, "format = 1\ngpu = NVIDIA H200\nsm_count = 132\nthread_max_length = many\n");
    setenv("WW_CALIBRATION", bad, 1);
    CHECK_STATUS(ww_calibration_resolve(NULL, "NVIDIA H200", 132, &m, source, sizeof source), WW_ERR_CALIBRATION);
    CHECK_STATUS(ww_calibration_resolve(path, "NVIDIA H200", 132, &m, source, sizeof source), WW_OK);
    CHECK(strcmp(source, path) == 0); /* the option before the environment */
    unsetenv("WW_CALIBRATION");
    CHECK_STATUS(ww_calibration_resolve(bad, "NVIDIA H200", 132, &m, source, sizeof source), WW_ERR_CALIBRATION);
    CHECK_STATUS(ww_calibration_resolve(missing, "NVIDIA H200", 132, &m, source, sizeof source), WW_ERR_IO);
    write_text_file(cache, "garbage\n");
    CHECK_STATUS(ww_calibration_resolve(NULL, "NVIDIA H200", 132, &m, source, sizeof source), WW_ERR_CALIBRATION);
    /* a binary file is no calibration */
    FILE *f = fopen(bad, "wb");
    if (f) {
        fwrite("format = 1\0\0\0", 1, 13, f);
        fclose(f);
    }
    CHECK_STATUS(ww_calibration_load(bad, "NVIDIA H200", 132, &m, &applies), WW_ERR_CALIBRATION);

    /* contexts: a CPU context never reads the file; without HOME and XDG there is no cache path */
    ww_ctx_options o = ww_ctx_options_default();
    o.backend = WW_BACKEND_CPU;
    o.calibration = bad;
    ww_ctx *ctx = NULL;
    CHECK_STATUS(ww_ctx_create(&ctx, &o), WW_OK);
    CHECK(ctx != NULL && strcmp(ww_ctx_calibration(ctx), "") == 0);
    ww_ctx_destroy(ctx);
    unsetenv("XDG_CACHE_HOME");
    char *saved_home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
    unsetenv("HOME");
    CHECK_STATUS(ww_calibration_default_path("G", 0, cache, sizeof cache), WW_ERR_IO);
    restore_env("HOME", saved_home);
    free(saved_home);

    restore_env("XDG_CACHE_HOME", saved_xdg);
    restore_env("WW_CALIBRATION", saved_env);
    free(saved_xdg);
    free(saved_env);
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
}

/* Without a GPU: the API says so clearly (no CUDA in the build, or no device). */
void test_calibration_without_gpu(void)
{
    char report[64] = "untouched";
    CHECK_STATUS(ww_cuda_calibrate(NULL, NULL, report, sizeof report), WW_ERR_NULL_POINTER);
    ww_ctx *cpu = ww_test_ctx(WW_BACKEND_CPU, WW_ENGINE_AUTO, 1);
    ww_status st = ww_cuda_calibrate(cpu, "/nonexistent/never-written.txt", report, sizeof report);
    CHECK(st == WW_ERR_NO_DEVICE || st == WW_ERR_NO_CUDA);
    CHECK(strcmp(report, "untouched") == 0);
    ww_ctx_destroy(cpu);
    /* device lists are checked before anything else */
    ww_ctx_options o = ww_ctx_options_default();
    ww_ctx *ctx = NULL;
    o.device_count = 2;
    CHECK_STATUS(ww_ctx_create(&ctx, &o), WW_ERR_NULL_POINTER);
    int negative[] = {0, -1};
    o.devices = negative;
    CHECK_STATUS(ww_ctx_create(&ctx, &o), WW_ERR_NO_DEVICE);
    o.device_count = WW_MAX_DEVICES + 1;
    CHECK_STATUS(ww_ctx_create(&ctx, &o), WW_ERR_NO_DEVICE);
    CHECK(ctx == NULL);
    if (!ww_cuda_available()) {
        CHECK(ww_cuda_device_count() == 0);
        int twice[] = {0, 0};
        o.devices = twice;
        o.device_count = 2;
        o.backend = WW_BACKEND_CUDA;
        st = ww_ctx_create(&ctx, &o);
        CHECK(st == WW_ERR_NO_DEVICE || st == WW_ERR_NO_CUDA);
        o.backend = WW_BACKEND_AUTO; /* auto: the CPU, as with one device */
        CHECK_STATUS(ww_ctx_create(&ctx, &o), WW_OK);
        CHECK(ww_ctx_backend(ctx) == WW_BACKEND_CPU);
        ww_ctx_destroy(ctx);
    }
}
