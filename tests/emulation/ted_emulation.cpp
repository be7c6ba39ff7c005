/* The GPU tree edit distance engine (src/cuda/ted.cu) run on the CPU by the fake runtime
 * (cuda_runtime.h, with ted_hooks.h: blocks one after the other, of EMU_LANES threads), compared
 * bit for bit with the CPU engine on random trees with every strategy forced in turn, on large
 * pairs, on matrices (self, blocks with strides, float output, x against y), with the depths
 * overlapped and in order, and on devices short of memory or of shared memory.
 * tests/ted_gpu_emulation.sh builds and runs it (EMU_PAIRS random pairs, EMU_LARGE_PAIRS large). */
#include "emulated_gpu.h"
#include "common/ted_internal.h"
#include "ww_test.h"

#include <cmath>
#include <cstdio>
#include <cstring>

int ww_test_failures, ww_test_skipped; /* (ww_test.h's) */

static void tree(ww_rng *r, int n, double up, int labels, int32_t *p, int32_t *l)
{
    for (int i = 0; i < n; i++) {
        l[i] = (int32_t)(ww_rng_uniform(r) * labels);
        if (i == 0) {
            p[i] = -1;
            continue;
        }
        int v = i - 1;
        while (v > 0 && ww_rng_uniform(r) < up)
            v = p[v];
        p[i] = v;
    }
}

int main(void)
{
    ww_ctx_options o = ww_ctx_options_default();
    o.backend = WW_BACKEND_CPU;
    ww_ctx *cpu;
    if (ww_ctx_create(&cpu, &o) != WW_OK)
        return 2;
    emu::concurrent_blocks = 1; /* the blocks in order (ted_hooks.h) */
    emulated_gpu gpu(4, 3);     /* the plan of a matrix's batch over three threads */
    ww_cuda_state &fs = gpu.state;
    ww_ctx &fake = gpu.ctx;
    /* the depths overlapped (their own forest slots, td marked, every read checked) in every other
     * batch below, in order with shared slots (GPUs before compute capability 9.0) in the others */
    fs.programmatic_launch = true;
    /* every table on a block, a warp, a thread, in tiles over many warps (multi-block); mixes */
    const size_t all = (size_t)1 << 40;
    const ww_ted_gpu_thresholds limits[] = {{0, 0, all},      {0, all, all},       {all, all, all},
                                            {16, 200, all},   {1024, 65536, all}, {0, 0, 0},
                                            {16, 200, 2000}, {64, 4225, 16641}};
    enum { STRATEGIES = sizeof limits / sizeof limits[0] };
    const ww_ted_params costs[] = {{1, 1, 1}, {0.5, 2, 1.25}, {3, 1, 0.3}};
    ww_rng r = {99};
    static int32_t pa[300], la[300], pb[300], lb[300];
    int bad = 0, compared = 0;
    for (int t = 0; t < EMU_PAIRS; t++) {
        const int na = (int)ww_rng_below(&r, t % 10 == 0 ? 300 : 60), nb = (int)ww_rng_below(&r, t % 10 == 0 ? 300 : 60);
        const double up = t % 3 == 0 ? 0.2 : t % 3 == 1 ? 0.5 : 0.8;
        tree(&r, na, up, t % 2 ? 3 : 20, pa, la);
        tree(&r, nb, 1.0 - up, t % 2 ? 3 : 20, pb, lb);
        const ww_tree a = {(size_t)na, pa, la}, b = {(size_t)nb, pb, lb};
        double want = -1;
        bad += ww_ted(cpu, &a, &b, &costs[t % 3], &want) != WW_OK; /* (the CPU's) */
        for (int k = 0; k < STRATEGIES; k++) {
            fs.programmatic_launch = (t + k) % 2 == 0;
            double got = -1;
            const ww_status st = ww_cuda_ted(&fake, &a, &b, &costs[t % 3], &limits[k], &got);
            compared++;
            if (st != WW_OK || got != want) {
                bad++;
                printf("pair %d (%d x %d), thresholds %d: %.17g, cpu %.17g (%s)\n", t, na, nb, k, got, want, ww_strerror(st));
            }
        }
    }
    /* larger tables: a block sweep of many rows in shared memory, and (2100-node paths in doubles)
     * in global memory */
    static int32_t pl[2100], ll[2100], pm[2100], lm[2100];
    for (int t = 0; t < EMU_LARGE_PAIRS; t++) {
        const int na = t ? 2100 : 800, nb = t ? 2050 : 900;
        tree(&r, na, t ? 0.0 : 0.4, 6, pl, ll);
        tree(&r, nb, t ? 0.0 : 0.6, 6, pm, lm);
        const ww_tree a = {(size_t)na, pl, ll}, b = {(size_t)nb, pm, lm};
        for (int c = 0; c < (t ? 2 : 3); c++) {
            double want = -1;
            bad += ww_ted(cpu, &a, &b, &costs[c], &want) != WW_OK; /* (the CPU's) */
            for (int k = 0; k < STRATEGIES; k += 1 + (k < 4) * 3) { /* 0, 4, 5, 6, 7 */
                fs.programmatic_launch = (c + k) % 2 == 0;
                double got = -1;
                const ww_status st = ww_cuda_ted(&fake, &a, &b, &costs[c], &limits[k], &got);
                compared++;
                if (st != WW_OK || got != want) {
                    bad++;
                    printf("large pair %d (%d x %d), thresholds %d: %.17g, cpu %.17g (%s)\n", t, na, nb, k, got, want,
                           ww_strerror(st));
                }
            }
        }
    }
    /* a matrix whose small pairs are exact on the CPU and whose large ones are not (costs of 2^20:
     * int32 tables only up to about 170 nodes per pair): the GPU computes the batch in doubles, the
     * same values */
    {
        static int32_t pp[4][150], ll2[4][150];
        const int sizes[4] = {40, 60, 120, 150};
        ww_tree big[4];
        for (int k = 0; k < 4; k++) {
            tree(&r, sizes[k], 0.5, 5, pp[k], ll2[k]);
            big[k] = ww_tree{(size_t)sizes[k], pp[k], ll2[k]};
        }
        const ww_ted_params heavy[2] = {{1048576, 1048576, 1048576}, {1048576, 3145728, 524288}};
        for (int c = 0; c < 2; c++)
            for (int k = 0; k < STRATEGIES; k += 1 + (k < 4) * 3) {
                double got[16], want[16];
                fs.programmatic_launch = (c + k) % 2 == 0;
                ww_pairwise_options po = ww_pairwise_options_default();
                po.row_end = po.col_end = po.out_stride = 4;
                const ww_status st = ww_cuda_ted_pairwise(&fake, big, NULL, &heavy[c], &limits[k], got, &po);
                bad += ww_ted_pairwise(cpu, big, 4, NULL, 0, &heavy[c], want, NULL) != WW_OK; /* (the CPU's) */
                for (int e = 0; e < 16; e++)
                    bad += st != WW_OK || got[e] != want[e];
                compared++;
            }
    }
    enum { C = 9, N = 50 };
    static int32_t par[C][N], lab[C][N];
    ww_tree trees[C];
    for (int k = 0; k < C; k++) {
        const int n = k == 4 ? 0 : 1 + (int)ww_rng_below(&r, N);
        tree(&r, n, 0.5, 4, par[k], lab[k]);
        trees[k] = ww_tree{(size_t)n, par[k], lab[k]};
    }
    for (int c = 0; c < 2; c++)
        for (int k = 0; k < STRATEGIES; k++) {
            double got[C * C], want[C * C];
            fs.programmatic_launch = (c + k) % 2 == 0;
            for (int e = 0; e < C * C; e++)
                got[e] = NAN;
            ww_pairwise_options po = ww_pairwise_options_default();
            po.row_end = po.col_end = po.out_stride = C;
            ww_status st = ww_cuda_ted_pairwise(&fake, trees, NULL, &costs[c], &limits[k], got, &po);
            bad += ww_ted_pairwise(cpu, trees, C, NULL, 0, &costs[c], want, NULL) != WW_OK; /* (the CPU's) */
            for (int e = 0; e < C * C; e++)
                bad += st != WW_OK || got[e] != want[e];
            float f[30];
            for (int e = 0; e < 30; e++)
                f[e] = -7;
            po.row_begin = 2, po.row_end = 5, po.col_begin = 1, po.col_end = 8, po.out_stride = 10, po.out_dtype = WW_F32;
            st = ww_cuda_ted_pairwise(&fake, trees, NULL, &costs[c], &limits[k], f, &po);
            for (int i = 2; i < 5; i++)
                for (int j = 0; j < 10; j++)
                    bad += st != WW_OK || f[(i - 2) * 10 + j] != (j < 7 ? (float)want[i * C + j + 1] : -7.0f);
            double xy[18], xy_want[18];
            ww_pairwise_options q = ww_pairwise_options_default();
            q.row_end = 3, q.col_end = 6, q.out_stride = 6;
            st = ww_cuda_ted_pairwise(&fake, trees, trees + 3, &costs[c], &limits[k], xy, &q);
            bad += ww_ted_pairwise(cpu, trees, 3, trees + 3, 6, &costs[c], xy_want, NULL) != WW_OK; /* (the CPU's) */
            for (int e = 0; e < 18; e++)
                bad += st != WW_OK || xy[e] != xy_want[e];
            compared += 3;
        }
    /* a device with the memory of the depths in order but not of their overlap (its own forest
     * slots per launch): the call falls back to the order, the same value, no launch overlapped */
    {
        static int32_t pf[160], lf[160], qf[160], mf[160];
        tree(&r, 150, 0.4, 6, pf, lf);
        tree(&r, 160, 0.6, 6, qf, mf);
        const ww_tree a = {150, pf, lf}, b = {160, qf, mf};
        double want = -1, in_order = -1, fallback = -1;
        bad += ww_ted(cpu, &a, &b, &costs[0], &want) != WW_OK; /* (the CPU's) */
        gpu.release_buffers(); /* (grow-only: their sizes then are this call's) */
        fs.programmatic_launch = false;
        const ww_status st0 = ww_cuda_ted(&fake, &a, &b, &costs[0], &limits[0], &in_order);
        emu_device_limit = fs.prepared.bytes > fs.input.bytes ? fs.prepared.bytes : fs.input.bytes;
        free(fs.prepared.ptr);
        fs.prepared.ptr = NULL, fs.prepared.bytes = 0;
        fs.programmatic_launch = true;
        const long overlapped = emu_ted_overlapped_launches;
        const ww_status st1 = ww_cuda_ted(&fake, &a, &b, &costs[0], &limits[0], &fallback);
        emu_device_limit = (size_t)-1;
        if (st0 != WW_OK || st1 != WW_OK || in_order != want || fallback != want ||
            emu_ted_overlapped_launches != overlapped) {
            bad++;
            printf("overlap refused by memory: %s %s, %.17g %.17g, cpu %.17g, %ld overlapped launches\n",
                   ww_strerror(st0), ww_strerror(st1), in_order, fallback, want, emu_ted_overlapped_launches - overlapped);
        }
        compared += 2;
    }
    /* a GPU whose blocks may not have the depth kernel's shared memory: a clear error, nothing
     * written, whatever the strategy (the closed forms alone would fit) */
    fs.smem_optin = (size_t)64 << 10;
    for (int k = 0; k < STRATEGIES; k++) {
        double got = -7;
        const ww_status st = ww_cuda_ted(&fake, &trees[0], &trees[1], &costs[0], &limits[k], &got);
        bad += st != WW_ERR_UNSUPPORTED || got != -7;
        compared++;
    }
    /* the overlapped launches ran (their depths in order here, every td read checked for the mark) */
    if (emu_ted_overlapped_launches == 0) {
        printf("no depth was launched overlapped\n");
        bad++;
    }
    printf("ted_gpu_emulation, blocks of %d thread(s): %d comparisons, %d differences\n", EMU_LANES, compared, bad);
    ww_ctx_destroy(cpu);
    return bad != 0;
}
