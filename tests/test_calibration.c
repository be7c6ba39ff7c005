/* Calibration files of the GPU cost model (src/common/calibration.c): parsing good, bad and
 * other-GPU files, writing and finding them, and how contexts load them. No GPU needed; the GPU
 * side (ww_cuda_calibrate on a device) is test_cuda_calibrate in test_cuda.c. */
#define _POSIX_C_SOURCE 200809L /* setenv, mkdtemp */
#include "ww_test.h"

#include <limits.h>
#include <locale.h>
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
        "format = 1\ngpu = NVIDIA H200\nsm_count = 132\nted_block_cells = -1\n", /* the tree thresholds */
        "format = 1\ngpu = NVIDIA H200\nsm_count = 132\nted_warp_cells = many\n",
        "format = 1\ngpu = NVIDIA H200\nsm_count = 132\nted_pair_block_cells = inf\n",
        "format = 1\ngpu = NVIDIA H200\nsm_count = 132\nted_thread_cells = 1e16\n",
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
    w.ted_block_cells = 1089;
    w.ted_pair_block_cells = 1050625; /* whole numbers exactly (a 6-digit %g would give 1050620) */
    char text[2048];
    size_t n = ww_calibration_format(text, sizeof text, "Some GPU (rev 2)", 77, &w);
    CHECK(n == strlen(text));
    CHECK(strstr(text, "gpu = Some GPU (rev 2)\n") != NULL && strstr(text, "date = ") != NULL);
    m = defaults;
    CHECK_STATUS(ww_calibration_parse(text, "Some GPU (rev 2)", 77, &m, &applies), WW_OK);
    CHECK(applies == 1);
    CHECK_CLOSE(m.warp_step_seconds, w.warp_step_seconds, 1e-6);
    CHECK(m.thread_max_length == 171);
    CHECK(m.ted_block_cells == 1089 && m.ted_pair_block_cells == 1050625);
    CHECK(m.ted_thread_cells == defaults.ted_thread_cells && m.ted_warp_cells == defaults.ted_warp_cells);
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

/* The two variables that choose a calibration file, saved before a test changes them (and
 * WW_CALIBRATION unset), restored after. */
typedef struct calibration_env {
    char *xdg_cache_home, *ww_calibration;
} calibration_env;

static calibration_env calibration_env_save(void)
{
    calibration_env e;
    e.xdg_cache_home = getenv("XDG_CACHE_HOME") ? strdup(getenv("XDG_CACHE_HOME")) : NULL;
    e.ww_calibration = getenv("WW_CALIBRATION") ? strdup(getenv("WW_CALIBRATION")) : NULL;
    unsetenv("WW_CALIBRATION");
    return e;
}

static void calibration_env_restore(calibration_env e)
{
    restore_env("XDG_CACHE_HOME", e.xdg_cache_home);
    restore_env("WW_CALIBRATION", e.ww_calibration);
    free(e.xdg_cache_home);
    free(e.ww_calibration);
}

void test_calibration_files(void)
{
    char dir[512], path[700], cache[4096];
    CHECK(scratch_dir(dir, sizeof dir) == 0);
    calibration_env saved = calibration_env_save();

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
    /* malformed, named through the environment or an option: an error (the cache: ignored, see
     * test_calibration_cache_never_fails) */
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
    CHECK_STATUS(ww_calibration_resolve(NULL, "NVIDIA H200", 132, &m, source, sizeof source), WW_OK);
    CHECK(strncmp(source, "built-in defaults (ignored ", 27) == 0 && memcmp(&m, &defaults, sizeof m) == 0);
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

    calibration_env_restore(saved);
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

/* Puts back the LC_NUMERIC a test changed (a copy of setlocale's answer, which the next call may
 * overwrite). */
static void restore_numeric_locale(char *saved)
{
    setlocale(LC_NUMERIC, saved ? saved : "C");
    free(saved);
}

/* A program that set a comma-decimal LC_NUMERIC (a GUI, Python's locale.setlocale, a C program
 * calling setlocale(LC_ALL, "")) still writes files with '.' and reads the files of other
 * programs: strtod and printf follow LC_NUMERIC, the calibration code must not. */
void test_calibration_locale(void)
{
    const char *current = setlocale(LC_NUMERIC, NULL);
    char *saved = current ? strdup(current) : NULL;
    static const char *const names[] = {"de_DE.UTF-8", "de_DE.utf8", "de_DE", "fr_FR.UTF-8", "fr_FR.utf8",
                                        "fr_FR", "nl_NL.UTF-8", "it_IT.UTF-8", "es_ES.UTF-8", "pt_BR.UTF-8",
                                        "ru_RU.UTF-8", "de_DE.ISO8859-1", "de_DE.ISO-8859-1"};
    const char *chosen = NULL;
    for (size_t k = 0; k < sizeof names / sizeof names[0] && chosen == NULL; k++)
        if (setlocale(LC_NUMERIC, names[k]) != NULL && strcmp(localeconv()->decimal_point, ",") == 0)
            chosen = names[k];
    if (chosen == NULL) {
        restore_numeric_locale(saved);
        SKIP("no locale with a decimal comma installed (de_DE.UTF-8, fr_FR.UTF-8, ...)");
    }
    /* the locale is in effect: printf writes a comma (else this test would prove nothing) */
    char probe[32];
    snprintf(probe, sizeof probe, "%.1f", 1.5);
    CHECK(strcmp(probe, "1,5") == 0);

    /* written with '.', read back */
    const ww_cuda_model defaults = ww_cuda_model_default();
    ww_cuda_model w = defaults;
    w.warp_step_seconds = 1.234567e-7;
    w.grid_pair_seconds = 2.5e-4;
    w.thread_max_length = 171;
    w.ted_block_cells = 1089;
    w.ted_pair_block_cells = 1050625; /* whole numbers exactly (a 6-digit %g would give 1050620) */
    char text[2048];
    ww_calibration_format(text, sizeof text, "G", 7, &w);
    CHECK(strchr(text, ',') == NULL);
    CHECK(strstr(text, "warp_step_seconds = 1.23457e-07\n") != NULL);
    CHECK(strstr(text, "grid_pair_seconds = 0.00025\n") != NULL);
    char dir[512], path[700];
    CHECK(scratch_dir(dir, sizeof dir) == 0);
    snprintf(path, sizeof path, "%s/model.txt", dir);
    CHECK_STATUS(ww_calibration_write(path, text), WW_OK);
    ww_cuda_model m = defaults;
    int applies = 0;
    CHECK_STATUS(ww_calibration_load(path, "G", 7, &m, &applies), WW_OK);
    CHECK(applies == 1);
    CHECK_CLOSE(m.warp_step_seconds, w.warp_step_seconds, 1e-6);
    CHECK(m.grid_pair_seconds == 2.5e-4 && m.thread_max_length == 171);
    CHECK(m.thread_cell_seconds == defaults.thread_cell_seconds);
    /* a file of a C-locale program (the test's own, written by hand) too, named as contexts do */
    char source[4096];
    snprintf(path, sizeof path, "%s/good.txt", dir);
    write_text_file(path, good_file);
    CHECK_STATUS(ww_calibration_resolve(path, "NVIDIA H200", 132, &m, source, sizeof source), WW_OK);
    CHECK(strcmp(source, path) == 0 && m.warp_step_seconds == 2.5e-7 && m.grid_pair_seconds == 2e-4);
    /* and a comma is still no decimal point in a file */
    CHECK_STATUS(ww_calibration_parse("format = 1\ngpu = G\nsm_count = 7\nwarp_step_seconds = 1,5e-07\n", "G", 7, &m,
                                      &applies),
                 WW_ERR_CALIBRATION);
    /* the program's locale is left as it was */
    CHECK(strcmp(localeconv()->decimal_point, ",") == 0);
    restore_numeric_locale(saved);
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
}

/* Values at the edges of the accepted ranges: a multiprocessor count must fit an int (it is
 * compared with the GPU's), a thread_max_length of 0 turns the one-thread strategy off. */
void test_calibration_ranges(void)
{
    const ww_cuda_model defaults = ww_cuda_model_default();
    const char *bad[] = {
        "format = 1\ngpu = G\nsm_count = 1e12\n", /* was (int)1e12: undefined behaviour */
        "format = 1\ngpu = G\nsm_count = 2147483648\n",
        "format = 1\ngpu = G\nsm_count = 0\n",
        "format = 1\ngpu = G\nsm_count = 4\nthread_max_length = -1\n",
        "format = 1\ngpu = G\nsm_count = 4\nthread_max_length = 2e9\n",
    };
    ww_cuda_model m;
    int applies;
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        m = defaults;
        applies = -1;
        CHECK_STATUS(ww_calibration_parse(bad[k], "G", 4, &m, &applies), WW_ERR_CALIBRATION);
        CHECK(applies == 0 && memcmp(&m, &defaults, sizeof m) == 0);
    }
    m = defaults;
    CHECK_STATUS(ww_calibration_parse("format = 1\ngpu = G\nsm_count = 2147483647\n", "G", INT_MAX, &m, &applies),
                 WW_OK);
    CHECK(applies == 1);
    CHECK_STATUS(ww_calibration_parse("format = 1\ngpu = G\nsm_count = 2147483647\n", "G", 132, &m, &applies), WW_OK);
    CHECK(applies == 0);
    m = defaults;
    CHECK_STATUS(ww_calibration_parse("format = 1\ngpu = G\nsm_count = 4\nthread_max_length = 0\n", "G", 4, &m,
                                      &applies),
                 WW_OK);
    CHECK(applies == 1 && m.thread_max_length == 0);
    /* and it is written back as 0 */
    char text[2048];
    ww_calibration_format(text, sizeof text, "G", 4, &m);
    CHECK(strstr(text, "thread_max_length = 0\n") != NULL);
}

/* The per-user cache file is found, not chosen: whatever is wrong with it, a context gets the
 * built-in model (and a note in ww_ctx_calibration()); the same file named is an error. */
void test_calibration_cache_never_fails(void)
{
    char dir[512], cache[4096], source[4096];
    CHECK(scratch_dir(dir, sizeof dir) == 0);
    calibration_env saved = calibration_env_save();
    setenv("XDG_CACHE_HOME", dir, 1);
    CHECK_STATUS(ww_calibration_default_path("NVIDIA H200", 1, cache, sizeof cache), WW_OK);
    const ww_cuda_model defaults = ww_cuda_model_default();
    ww_cuda_model m;

    const char *texts[][2] = {
        {"a newer format", "format = 2\ngpu = NVIDIA H200\nsm_count = 132\nwarp_step_seconds = 1e-6\n"},
        {"a bad number", "format = 1\ngpu = NVIDIA H200\nsm_count = 132\nwarp_step_seconds = soon\n"},
        {"out of range", "format = 1\ngpu = NVIDIA H200\nsm_count = 1e12\n"},
        {"no calibration", "garbage\n"},
        {"empty", ""},
    };
    for (size_t k = 0; k < sizeof texts / sizeof texts[0]; k++) {
        write_text_file(cache, texts[k][1]);
        memset(&m, 0, sizeof m);
        ww_status st = ww_calibration_resolve(NULL, "NVIDIA H200", 132, &m, source, sizeof source);
        if (st != WW_OK || strncmp(source, "built-in defaults (ignored ", 27) != 0)
            fprintf(stderr, "  cache file, %s: %s, source \"%s\"\n", texts[k][0], ww_strerror(st), source);
        CHECK(st == WW_OK);
        CHECK(strncmp(source, "built-in defaults (ignored ", 27) == 0 && strstr(source, cache) != NULL);
        CHECK(memcmp(&m, &defaults, sizeof m) == 0);
        /* named, by an option or the environment: an error */
        CHECK_STATUS(ww_calibration_resolve(cache, "NVIDIA H200", 132, &m, source, sizeof source), WW_ERR_CALIBRATION);
        setenv("WW_CALIBRATION", cache, 1);
        CHECK_STATUS(ww_calibration_resolve(NULL, "NVIDIA H200", 132, &m, source, sizeof source), WW_ERR_CALIBRATION);
        unsetenv("WW_CALIBRATION");
    }

    /* a directory where the file should be: an I/O error, ignored in the cache */
    CHECK(remove(cache) == 0);
    CHECK(mkdir(cache, 0755) == 0);
    CHECK_STATUS(ww_calibration_resolve(NULL, "NVIDIA H200", 132, &m, source, sizeof source), WW_OK);
    CHECK(strncmp(source, "built-in defaults (ignored ", 27) == 0 && memcmp(&m, &defaults, sizeof m) == 0);
    CHECK_STATUS(ww_calibration_resolve(cache, "NVIDIA H200", 132, &m, source, sizeof source), WW_ERR_IO);
    CHECK(rmdir(cache) == 0);

    /* a file that cannot be read (not testable as root, who reads it anyway) */
    write_text_file(cache, good_file);
    CHECK(chmod(cache, 0) == 0);
    if (access(cache, R_OK) == 0) {
        fprintf(stderr, "  note: running as root, the unreadable cache file case is not tested\n");
    } else {
        CHECK_STATUS(ww_calibration_resolve(NULL, "NVIDIA H200", 132, &m, source, sizeof source), WW_OK);
        CHECK(strncmp(source, "built-in defaults (ignored ", 27) == 0 && memcmp(&m, &defaults, sizeof m) == 0);
        CHECK_STATUS(ww_calibration_resolve(cache, "NVIDIA H200", 132, &m, source, sizeof source), WW_ERR_IO);
    }
    CHECK(chmod(cache, 0644) == 0);
    /* a good one applies; "" still means the built-in model */
    CHECK_STATUS(ww_calibration_resolve(NULL, "NVIDIA H200", 132, &m, source, sizeof source), WW_OK);
    CHECK(strcmp(source, cache) == 0 && m.thread_max_length == 150);
    CHECK_STATUS(ww_calibration_resolve("", "NVIDIA H200", 132, &m, source, sizeof source), WW_OK);
    CHECK(strcmp(source, "built-in defaults") == 0);

    calibration_env_restore(saved);
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
}

/* The phase count of the GPU block strategy (ww_block_phases, internal.h), which the kernel and
 * the cost model share: it passes INT_MAX for series of about 3 million samples, where the int
 * version went negative (the kernel then wrote nothing and the call returned WW_OK). */
static int block_phases_int(int rows, int cols, int warps) /* the former int arithmetic */
{
    const int strips = (rows + 31) / 32, per_strip = (cols + 31 + 32 - 1) / 32;
    const int round = per_strip > 2 * warps ? per_strip : 2 * warps, last = strips - 1;
    return (last / warps) * round + 2 * (last % warps) + per_strip;
}

void test_block_phases_64bit(void)
{
    /* where an int holds it, the same count */
    ww_rng rng = {0x5eedULL};
    int differ = 0;
    for (int k = 0; k < 2000; k++) {
        const int rows = 1 + (int)ww_rng_below(&rng, 100000), cols = rows + (int)ww_rng_below(&rng, 100000);
        differ += ww_block_phases(rows, cols, 4, 32) != block_phases_int(rows, cols, 4);
    }
    CHECK(differ == 0);
    CHECK(ww_block_phases(1, 1, 4, 32) == 1); /* one strip of ceil((1 + 31) / 32) phases */
    CHECK(ww_block_phases(33, 100, 4, 32) == 2 + 5); /* the second strip starts two phases behind */
    /* the boundary: the longest square pair whose count fits an int (bisection: the count grows
     * with the lengths) */
    long long lo = 1, hi = 1LL << 31;
    CHECK(ww_block_phases(hi, hi, 4, 32) > INT_MAX);
    while (hi - lo > 1) {
        const long long mid = lo + (hi - lo) / 2;
        if (ww_block_phases(mid, mid, 4, 32) <= INT_MAX)
            lo = mid;
        else
            hi = mid;
    }
    CHECK(lo == 2965760);
    CHECK(ww_block_phases(lo, lo, 4, 32) == 2147418776LL);
    CHECK(ww_block_phases(lo + 1, lo + 1, 4, 32) == 2147511451LL);
    /* 3 million samples: 2,197,335,940 phases, exactly (strips 93,750, 93,751 phases each) */
    CHECK(ww_block_phases(3000000, 3000000, 4, 32) == 2197335940LL);
    /* the longest series the GPU takes (INT32_MAX / 2 samples): no overflow in 64 bits either */
    const long long longest = INT32_MAX / 2 - 1;
    CHECK(ww_block_phases(longest, longest, 4, 32) > 0);
}

/* On a GPU: an AUTO context whose later set-up step fails falls back to the CPU with no
 * calibration source; a malformed cache file does not stop a GPU context; ww_cuda_calibrate
 * applies a model it could not write. */
void test_calibration_gpu_regressions(void)
{
    if (!ww_cuda_available())
        SKIP("GPU test: no CUDA backend in this build or no GPU on this machine");
    char dir[512], cache[4096], path[700];
    CHECK(scratch_dir(dir, sizeof dir) == 0);
    calibration_env saved = calibration_env_save();
    setenv("XDG_CACHE_HOME", dir, 1);

    /* device 0 set up (and its model named), then a device that does not exist: auto takes the CPU */
    int devices[2] = {0, ww_cuda_device_count()};
    ww_ctx_options o = ww_ctx_options_default();
    o.devices = devices;
    o.device_count = 2;
    ww_ctx *ctx = NULL;
    CHECK_STATUS(ww_ctx_create(&ctx, &o), WW_OK);
    CHECK(ctx && ww_ctx_backend(ctx) == WW_BACKEND_CPU && strcmp(ww_ctx_calibration(ctx), "") == 0);
    ww_ctx_destroy(ctx);

    /* the GPU's name, from the description "cuda (<name>, sm_..." */
    o = ww_ctx_options_default();
    o.backend = WW_BACKEND_CUDA;
    o.calibration = "";
    ctx = NULL;
    CHECK_STATUS(ww_ctx_create(&ctx, &o), WW_OK);
    char name[256] = "";
    if (ctx) {
        const char *d = ww_ctx_describe(ctx), *end = strstr(d, ", sm_");
        if (strncmp(d, "cuda (", 6) == 0 && end)
            snprintf(name, sizeof name, "%.*s", (int)(end - d - 6), d + 6);
    }
    CHECK(name[0] != '\0');
    /* a malformed cache file of this GPU: the context is made, on the GPU, with the built-in model */
    if (name[0] && ww_calibration_default_path(name, 1, cache, sizeof cache) == WW_OK) {
        write_text_file(cache, "format = 1\ngpu = x\nsm_count = 1\nwarp_step_seconds = soon\n");
        for (int b = 0; b < 2; b++) {
            ww_ctx *c = NULL;
            ww_ctx_options co = ww_ctx_options_default();
            co.backend = b == 0 ? WW_BACKEND_AUTO : WW_BACKEND_CUDA;
            CHECK_STATUS(ww_ctx_create(&c, &co), WW_OK);
            CHECK(c && ww_ctx_backend(c) == WW_BACKEND_CUDA);
            CHECK(c && strncmp(ww_ctx_calibration(c), "built-in defaults (ignored ", 27) == 0);
            ww_ctx_destroy(c);
        }
    }
    /* calibrate into a directory that does not exist: WW_ERR_IO, yet the model measured is in use */
    if (ctx) {
        char report[2048] = "";
        snprintf(path, sizeof path, "%s/no/such/dir/model.txt", dir);
        CHECK_STATUS(ww_cuda_calibrate(ctx, path, report, sizeof report), WW_ERR_IO);
        CHECK(strstr(report, "thread_max_length = ") != NULL);
        CHECK(strcmp(ww_ctx_calibration(ctx), "measured (not saved)") == 0);
        ww_ctx_destroy(ctx);
    }

    calibration_env_restore(saved);
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
}
