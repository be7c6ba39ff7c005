/* A fake CUDA runtime, found as <cuda_runtime.h> by the CUDA sources compiled as plain C++ (g++)
 * for the emulations of the GPU engines on a machine without a GPU (tests/gpu_emulation.sh,
 * tests/ted_gpu_emulation.sh; build.sh here compiles them).
 *
 * A launch runs its blocks on a few host threads at once (emu::concurrent_blocks; 1 runs them one
 * after the other, in order), so blocks that wait for each other through global memory really run
 * side by side; a block's threads are fibers (ucontext) of its host thread, resumed one at a time
 * in an order drawn anew each round, which switch at every barrier, warp shuffle and wait
 * (__nanosleep); after some block barriers a few threads sit out 1 to 64 rounds, so that warps
 * drift apart. So a thread that reads what another wrote without a barrier between them shows up,
 * and threads waiting at barriers that cannot all be met, or a wait that is never met, abort with a
 * message (on a GPU they hang; a thread that returns no longer counts at a barrier, as on a GPU).
 * Device
 * memory is host memory; global loads and stores that the kernels make with cache hints
 * (__ldcg, __stcg) are relaxed atomic 8-byte accesses, so another block may see half of a 16-byte
 * store, as on a GPU.
 *
 * What it cannot show: the timing of a GPU (a race that needs a particular warp order inside one
 * step), memory ordering weaker than the host's, anything of the instruction level (register
 * spills, SASS), a launch over 48 KiB of dynamic shared memory without its opt-in
 * (cudaFuncSetAttribute does nothing here), and static __shared__ memory left unwritten: it is a
 * thread_local, zero on a host thread's first block and the last block's values after. Shuffles
 * and warp barriers meet the lanes of their mask (a lane that calls one whose mask leaves it out,
 * or reads such a lane, or one that has returned, aborts).
 *
 * The kernels' launches (`kernel<<<grid, block, shared, stream>>>(args)`) and their dynamic shared
 * memory (`extern __shared__ T name[];`) are rewritten by rewrite.sh into
 * emu::launch([&] { kernel(args); }, grid, block, shared, stream) and emu::dynamic_shared(). A
 * stream runs in order at once: every call returns when its work is done, so events and waits
 * between streams are no-ops (what this cannot show: a missing wait between two streams). */
#ifndef WW_EMULATION_CUDA_RUNTIME_H
#define WW_EMULATION_CUDA_RUNTIME_H

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <thread>
#include <vector>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __noinline__
#define __launch_bounds__(...)
#define __align__(n) alignas(n)
/* one copy per host thread, and a block runs on one host thread from start to end */
#define __shared__ static thread_local

typedef int cudaError_t;
enum { cudaSuccess = 0, cudaErrorInvalidValue = 1, cudaErrorMemoryAllocation = 2, cudaErrorInvalidConfiguration = 9 };
enum { cudaStreamDefault = 0, cudaStreamNonBlocking = 1 };
enum { cudaEventDefault = 0, cudaEventDisableTiming = 2 };
enum cudaDeviceAttr { cudaDevAttrMultiProcessorCount = 16, cudaDevAttrMaxSharedMemoryPerBlockOptin = 97 };
enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize = 8 };
enum cudaMemcpyKind {
    cudaMemcpyHostToHost = 0,
    cudaMemcpyHostToDevice = 1,
    cudaMemcpyDeviceToHost = 2,
    cudaMemcpyDeviceToDevice = 3,
    cudaMemcpyDefault = 4
};
typedef struct emu_stream *cudaStream_t;
typedef struct emu_event *cudaEvent_t;

struct dim3 {
    unsigned x, y, z;
    constexpr dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};
struct uint3 {
    unsigned x, y, z;
};
struct alignas(16) double2 {
    double x, y;
};
struct alignas(8) float2 {
    float x, y;
};
struct alignas(16) float4 {
    float x, y, z, w;
};
static inline double2 make_double2(double x, double y) { return {x, y}; }
static inline float2 make_float2(float x, float y) { return {x, y}; }

inline thread_local uint3 threadIdx, blockIdx;
inline thread_local dim3 blockDim, gridDim;

namespace emu {

/* Blocks of a launch that run at once, each on a host thread of its own. */
inline int concurrent_blocks = 3;
/* What cudaOccupancyMaxActiveBlocksPerMultiprocessor answers. */
inline int blocks_per_sm = 1;
/* Seconds without a barrier passed anywhere after which a wait (__nanosleep) is a deadlock. */
inline double wait_limit_seconds = 60;
/* What cudaMemGetInfo answers as free (and total) device memory. */
inline size_t device_free_bytes = (size_t)1 << 30;
/* What cudaDeviceGetAttribute answers: multiprocessors, and shared memory per block. */
inline int multiprocessors = 4;
inline int shared_per_block = 227 << 10;
/* Each fiber's stack (the kernels' register arrays live there). */
inline size_t stack_bytes = (size_t)512 << 10;
/* The error of the last launch, for cudaGetLastError. */
inline std::atomic<int> last_error{cudaSuccess};
/* Launches so far (they number the blocks' random orders). */
inline std::atomic<long> launches{0};
/* Barriers passed, blocks started and ended, launches, by any host thread: the deadlock watch's
 * sign of life (wait_a_moment). */
inline std::atomic<unsigned long long> progress{0};
/* The host thread that runs the current block, 0 .. concurrent_blocks - 1: its multiprocessor. */
inline thread_local unsigned block_host = 0;
/* Waits in spinning loops (__nanosleep) so far: a block that waited for another. */
inline std::atomic<unsigned long long> waits{0};

[[noreturn]] inline void fail(const char *what)
{
    fprintf(stderr, "emulation: %s\n", what);
    abort();
}

/* Lanes of a warp that meet at __syncwarp(mask) and the shuffles of that mask: how many have
 * arrived, the generation, and what the lanes of a shuffle post, in two sets by the generation's
 * parity (a lane can post to a set again only two meetings later, when every lane has read it). */
struct lane_group {
    int arrived = 0;
    unsigned generation = 0;
    uint64_t posted[2][32] = {};
    unsigned members[2] = {0, 0}; /* the lanes that met, by parity (returned lanes are not) */
};

/* The threads of one block as fibers of the host thread that runs it. */
struct block_fibers {
    int threads = 0, current = 0;
    std::vector<ucontext_t> context;
    std::vector<unsigned char> done;
    /* rounds a thread sits out: after each block barrier some threads start late, so that a warp
     * that reads what another warp wrote, with no block barrier between, runs ahead of it */
    std::vector<int> delay;
    ucontext_t scheduler = {};
    const std::function<void()> *body = nullptr;
    /* the block's barrier, and each warp's: threads alive, arrived, generation */
    int alive = 0, arrived = 0;
    unsigned generation = 0;
    /* the block barrier's vote (__syncthreads_or, _and, _count): true predicates and threads, by
     * the generation's parity (a set is cleared when the barrier before its next use completes) */
    int votes[2] = {0, 0}, voters[2] = {0, 0};
    /* the lanes of each warp that have not returned, and each warp's groups of lanes that meet
     * (by mask: __syncwarp and shuffles; the whole warp is one group) */
    std::vector<unsigned> warp_lanes;
    std::vector<std::map<unsigned, lane_group>> groups;
    /* in the current round: arrivals at barriers, and waits (__nanosleep) */
    long arrivals = 0, waits = 0;
    std::mt19937 order{12345};
};

/* The dynamic shared memory of the block this host thread runs: the launch's size exactly (a read
 * past it is AddressSanitizer's), poisoned. */
inline thread_local std::unique_ptr<unsigned char[]> dynamic_shared_bytes;
inline unsigned char *dynamic_shared()
{
    if (!dynamic_shared_bytes)
        fail("dynamic shared memory used by a launch that asked for none");
    return dynamic_shared_bytes.get();
}

/* Stacks are kept per host thread: allocated once, freed when the thread ends; a page below each
 * that no access may touch, so that an overflow faults instead of writing over the heap. */
struct stack_pool {
    std::vector<char *> stacks;
    static size_t page() { return (size_t)sysconf(_SC_PAGESIZE); }
    char *add()
    {
        void *p = mmap(NULL, stack_bytes + page(), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED || mprotect(p, page(), PROT_NONE) != 0)
            fail("no memory for a fiber's stack");
        stacks.push_back((char *)p + page());
        return stacks.back();
    }
    ~stack_pool()
    {
        for (char *s : stacks)
            munmap(s - page(), stack_bytes + page());
    }
};
inline thread_local stack_pool stacks;
inline thread_local block_fibers *block = nullptr;

inline void pause() { swapcontext(&block->context[block->current], &block->scheduler); }

/* The block's barrier; returns how many of its threads passed a true `vote`, and how many voted. */
inline int block_barrier(int vote = 0, int *voters = nullptr)
{
    block_fibers *b = block;
    if (b == nullptr || b->threads == 1) {
        if (voters)
            *voters = 1;
        return vote != 0;
    }
    b->arrivals++;
    const unsigned g = b->generation;
    b->votes[g & 1] += vote != 0;
    if (++b->arrived == b->alive) {
        b->voters[g & 1] = b->arrived;
        b->votes[(g + 1) & 1] = 0; /* its last readers passed this barrier */
        b->arrived = 0;
        b->generation++;
        progress.fetch_add(1, std::memory_order_relaxed);
        /* after one barrier in 8, one thread in 8 starts 1 to 64 rounds late (blocks of several
         * warps: inside a warp the random order does it) */
        if (b->threads > 32 && b->order() % 8 == 0)
            for (int &d : b->delay)
                d = b->order() % 8 == 0 ? 1 << (b->order() % 7) : 0;
        pause(); /* the others go on in a new order */
    } else {
        while (b->generation == g)
            pause();
    }
    if (voters)
        *voters = b->voters[g & 1];
    return b->votes[g & 1];
}

/* The lanes of `mask` in the caller's warp meet (the caller one of them); returns the group and its
 * generation before the meeting. */
inline lane_group &group_barrier(unsigned mask, unsigned *generation)
{
    block_fibers *b = block;
    const int w = b->current / 32, lane = b->current % 32;
    if (!(mask >> lane & 1u))
        fail("a lane at a warp barrier or shuffle whose mask leaves it out");
    lane_group &grp = b->groups[w][mask];
    b->arrivals++;
    const unsigned g = grp.generation;
    *generation = g;
    if (++grp.arrived == __builtin_popcount(mask & b->warp_lanes[w])) {
        grp.members[g & 1] = mask & b->warp_lanes[w];
        grp.arrived = 0;
        grp.generation++;
        progress.fetch_add(1, std::memory_order_relaxed);
        pause(); /* the others go on in a new order */
    } else {
        while (grp.generation == g)
            pause();
    }
    return grp;
}

inline void warp_barrier(unsigned mask = 0xffffffffu)
{
    if (block == nullptr || block->threads == 1)
        return;
    unsigned g;
    group_barrier(mask, &g);
}

/* Every lane of `mask` posts `v` and gets lane `src(lane)`'s (or its own where src gives -1). */
template <typename T, class Src> inline T warp_exchange(unsigned mask, T v, Src src)
{
    static_assert(sizeof(T) <= sizeof(uint64_t), "shuffles of up to 8 bytes");
    block_fibers *b = block;
    if (b == nullptr || b->threads % 32 != 0)
        fail("a shuffle outside a block of whole warps");
    const int lane = b->current % 32;
    lane_group &grp = b->groups[b->current / 32][mask];
    uint64_t bits = 0;
    memcpy(&bits, &v, sizeof v);
    grp.posted[grp.generation & 1][lane] = bits;
    unsigned g;
    group_barrier(mask, &g);
    const int from = src(lane);
    if (from < 0)
        return v;
    if (!(grp.members[g & 1] >> from & 1u))
        fail("a shuffle reads a lane its mask leaves out, or one that has returned");
    T got;
    memcpy(&got, &grp.posted[g & 1][from], sizeof got);
    return got;
}

/* The lanes of `mask` vote (one meeting): the mask of those whose predicate holds; *voters: the
 * lanes that voted. */
inline unsigned warp_ballot(unsigned mask, bool pred, unsigned *voters = nullptr)
{
    block_fibers *b = block;
    if (b == nullptr || b->threads == 1) {
        if (voters)
            *voters = 1u;
        return pred ? 1u : 0u;
    }
    const int lane = b->current % 32;
    lane_group &grp = b->groups[b->current / 32][mask];
    grp.posted[grp.generation & 1][lane] = pred;
    unsigned g;
    group_barrier(mask, &g);
    unsigned votes = 0;
    for (int l = 0; l < 32; l++)
        if (grp.members[g & 1] >> l & 1u)
            votes |= (grp.posted[g & 1][l] ? 1u : 0u) << l;
    if (voters)
        *voters = grp.members[g & 1];
    return votes;
}

inline long long now_ns()
{
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

/* A wait in a spinning loop: the other fibers of the block run, and if no barrier passes anywhere
 * for wait_limit_seconds, the wait is never met (on a GPU: a hang). */
inline void wait_a_moment()
{
    waits.fetch_add(1, std::memory_order_relaxed);
    static thread_local unsigned long long seen = ~0ull;
    static thread_local long long since = 0;
    const unsigned long long passed = progress.load(std::memory_order_relaxed);
    if (passed != seen) {
        seen = passed;
        since = now_ns();
    } else if ((double)(now_ns() - since) * 1e-9 > wait_limit_seconds) {
        fail("a wait was never met (on a GPU: a hang)");
    }
    if (block != nullptr && block->threads > 1) {
        block->waits++;
        pause();
    } else {
        std::this_thread::yield();
    }
}

inline void fiber_main()
{
    block_fibers *b = block;
    (*b->body)();
    const int me = b->current, w = me / 32;
    b->done[me] = 1;
    b->alive--;
    if (b->arrived > 0 && b->arrived == b->alive) { /* the others wait for this one no more */
        b->voters[b->generation & 1] = b->arrived;
        b->votes[(b->generation + 1) & 1] = 0;
        b->arrived = 0;
        b->generation++;
    }
    b->warp_lanes[w] &= ~(1u << (me % 32));
    for (auto &entry : b->groups[w]) { /* groups that waited for this lane only */
        lane_group &grp = entry.second;
        if (grp.arrived > 0 && grp.arrived == __builtin_popcount(entry.first & b->warp_lanes[w])) {
            grp.members[grp.generation & 1] = entry.first & b->warp_lanes[w];
            grp.arrived = 0;
            grp.generation++;
        }
    }
    b->arrivals++;
    swapcontext(&b->context[me], &b->scheduler); /* never resumed */
}

inline void set_thread_index(int t)
{
    threadIdx.x = (unsigned)t % blockDim.x;
    threadIdx.y = (unsigned)t / blockDim.x % blockDim.y;
    threadIdx.z = (unsigned)t / (blockDim.x * blockDim.y);
}

/* Runs one block on this host thread: its threads as fibers, until all have returned. */
inline void run_block(const std::function<void()> &kernel, int threads, unsigned long long seed)
{
    progress.fetch_add(1, std::memory_order_relaxed);
    if (threads == 1) {
        set_thread_index(0);
        kernel();
        return;
    }
    block_fibers b;
    b.threads = threads;
    b.body = &kernel;
    b.context.resize(threads);
    b.done.assign(threads, 0);
    b.delay.assign(threads, 0);
    b.alive = threads;
    const int warps = (threads + 31) / 32;
    b.warp_lanes.assign(warps, 0xffffffffu);
    if (threads % 32)
        b.warp_lanes[warps - 1] = (1u << (threads % 32)) - 1;
    b.groups.resize(warps);
    b.order.seed((unsigned)(seed ^ (seed >> 32)));
    while (stacks.stacks.size() < (size_t)threads)
        stacks.add();
    block_fibers *outer = block;
    block = &b;
    std::vector<int> order(threads);
    for (int t = 0; t < threads; t++) {
        getcontext(&b.context[t]);
        b.context[t].uc_stack.ss_sp = stacks.stacks[t];
        b.context[t].uc_stack.ss_size = stack_bytes;
        b.context[t].uc_link = nullptr;
        makecontext(&b.context[t], fiber_main, 0);
        order[t] = t;
    }
    for (;;) {
        b.arrivals = b.waits = 0;
        bool any = false, late = false;
        std::shuffle(order.begin(), order.end(), b.order);
        for (int t : order)
            if (!b.done[t]) {
                any = true;
                if (b.delay[t] > 0) {
                    b.delay[t]--;
                    late = true;
                    continue;
                }
                b.current = t;
                set_thread_index(t);
                swapcontext(&b.scheduler, &b.context[t]);
            }
        if (!any)
            break;
        if (b.arrivals == 0 && b.waits == 0 && !late)
            fail("threads of a block wait at barriers that cannot all be met (on a GPU: a hang)");
        if (b.arrivals == 0) /* all waiting for another block */
            std::this_thread::yield();
    }
    block = outer;
}

/* A kernel launch: every block of `grid`, concurrent_blocks at a time, each on a host thread. */
template <class F> inline void launch(const F &kernel, dim3 grid, dim3 block_dim, size_t shared = 0, cudaStream_t = nullptr)
{
    const size_t blocks = (size_t)grid.x * grid.y * grid.z;
    const int threads = (int)(block_dim.x * block_dim.y * block_dim.z);
    if (blocks == 0 || threads <= 0 || threads > 1024 || shared > (size_t)shared_per_block) {
        last_error = cudaErrorInvalidConfiguration;
        return;
    }
    const long id = launches.fetch_add(1);
    progress.fetch_add(1, std::memory_order_relaxed);
    const std::function<void()> body = kernel;
    std::atomic<size_t> next{0};
    auto worker = [&](unsigned host) {
        block_host = host;
        gridDim = grid;
        blockDim = block_dim;
        for (size_t k; (k = next.fetch_add(1)) < blocks;) {
            dynamic_shared_bytes.reset(shared ? new unsigned char[shared] : nullptr);
            if (shared) /* (what an earlier block left: garbage) */
                memset(dynamic_shared_bytes.get(), 0xa5, shared);
            blockIdx.x = (unsigned)(k % grid.x);
            blockIdx.y = (unsigned)(k / grid.x % grid.y);
            blockIdx.z = (unsigned)(k / ((size_t)grid.x * grid.y));
            run_block(body, threads, (unsigned long long)id << 32 ^ k);
        }
    };
    const size_t hosts = std::min(blocks, (size_t)std::max(concurrent_blocks, 1));
    if (hosts == 1) {
        worker(0);
        return;
    }
    std::vector<std::thread> pool;
    for (size_t h = 0; h < hosts; h++)
        pool.emplace_back(worker, (unsigned)h);
    for (std::thread &t : pool)
        t.join();
}

/* Relaxed atomic accesses of 4, 8 or 16 (two 8-byte halves) bytes. */
template <typename T> inline T load_relaxed(const T *p)
{
    static_assert(sizeof(T) % 4 == 0 && sizeof(T) <= 16, "loads of 4, 8 or 16 bytes");
    T v;
    if constexpr (sizeof(T) == 4) {
        const uint32_t x = __atomic_load_n((const uint32_t *)p, __ATOMIC_RELAXED);
        memcpy(&v, &x, 4);
    } else {
        uint64_t x[sizeof(T) / 8];
        for (size_t k = 0; k < sizeof(T) / 8; k++)
            x[k] = __atomic_load_n((const uint64_t *)p + k, __ATOMIC_RELAXED);
        memcpy(&v, x, sizeof v);
    }
    return v;
}
template <typename T> inline void store_relaxed(T *p, T v)
{
    static_assert(sizeof(T) % 4 == 0 && sizeof(T) <= 16, "stores of 4, 8 or 16 bytes");
    if constexpr (sizeof(T) == 4) {
        uint32_t x;
        memcpy(&x, &v, 4);
        __atomic_store_n((uint32_t *)p, x, __ATOMIC_RELAXED);
    } else {
        uint64_t x[sizeof(T) / 8];
        memcpy(x, &v, sizeof v);
        for (size_t k = 0; k < sizeof(T) / 8; k++)
            __atomic_store_n((uint64_t *)p + k, x[k], __ATOMIC_RELAXED);
    }
}

} // namespace emu

/* ---- device functions ---- */
static inline void __syncthreads() { emu::block_barrier(); }
static inline int __syncthreads_or(int p) { return emu::block_barrier(p) != 0; }
static inline int __syncthreads_count(int p) { return emu::block_barrier(p); }
static inline int __syncthreads_and(int p)
{
    int voters = 0;
    return emu::block_barrier(p, &voters) == voters;
}
static inline void __syncwarp(unsigned mask = 0xffffffffu) { emu::warp_barrier(mask); }
template <typename T> static inline T __shfl_sync(unsigned mask, T v, int lane, int width = 32)
{
    return emu::warp_exchange(mask, v, [&](int l) { return l / width * width + (lane & (width - 1)); });
}
template <typename T> static inline T __shfl_up_sync(unsigned mask, T v, unsigned delta, int width = 32)
{
    return emu::warp_exchange(mask, v, [&](int l) { return l % width >= (int)delta ? l - (int)delta : -1; });
}
template <typename T> static inline T __shfl_down_sync(unsigned mask, T v, unsigned delta, int width = 32)
{
    return emu::warp_exchange(mask, v, [&](int l) { return l % width + (int)delta < width ? l + (int)delta : -1; });
}
template <typename T> static inline T __shfl_xor_sync(unsigned mask, T v, int bits, int width = 32)
{
    return emu::warp_exchange(mask, v, [&](int l) { return (l ^ bits) / width == l / width ? l ^ bits : -1; });
}
static inline unsigned __ballot_sync(unsigned mask, int pred) { return emu::warp_ballot(mask, pred != 0); }
static inline int __any_sync(unsigned mask, int pred) { return emu::warp_ballot(mask, pred != 0) != 0; }
static inline int __all_sync(unsigned mask, int pred)
{
    unsigned voters = 0;
    const unsigned votes = emu::warp_ballot(mask, pred != 0, &voters);
    return votes == voters;
}
static inline void __nanosleep(unsigned) { emu::wait_a_moment(); }
static inline unsigned multiprocessor_id() { return emu::block_host % (unsigned)emu::multiprocessors; }
template <typename T> static inline void hide_from_compiler(T &) {}
static inline void __threadfence() { std::atomic_thread_fence(std::memory_order_seq_cst); }
static inline long long clock64() { return emu::now_ns(); }

static inline unsigned atomicAdd(unsigned *p, unsigned v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }
static inline int atomicAdd(int *p, int v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }
static inline unsigned long long atomicAdd(unsigned long long *p, unsigned long long v)
{
    return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST);
}
template <typename T, typename Bits> static inline T emu_atomic_add_float(T *p, T v)
{
    Bits old = __atomic_load_n((Bits *)p, __ATOMIC_RELAXED), want;
    T x;
    do {
        memcpy(&x, &old, sizeof x);
        x += v;
        memcpy(&want, &x, sizeof x);
    } while (!__atomic_compare_exchange_n((Bits *)p, &old, want, false, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED));
    memcpy(&x, &old, sizeof x);
    return x;
}
static inline double atomicAdd(double *p, double v) { return emu_atomic_add_float<double, uint64_t>(p, v); }
static inline float atomicAdd(float *p, float v) { return emu_atomic_add_float<float, uint32_t>(p, v); }
static inline int atomicOr(int *p, int v) { return __atomic_fetch_or(p, v, __ATOMIC_SEQ_CST); }
static inline unsigned atomicOr(unsigned *p, unsigned v) { return __atomic_fetch_or(p, v, __ATOMIC_SEQ_CST); }
static inline int atomicExch(int *p, int v) { return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST); }

template <typename T> static inline T __ldg(const T *p) { return *p; }
template <typename T> static inline T __ldcg(const T *p) { return emu::load_relaxed(p); }
template <typename T> static inline void __stcg(T *p, T v) { emu::store_relaxed(p, v); }

static inline long long __double_as_longlong(double v)
{
    long long x;
    memcpy(&x, &v, 8);
    return x;
}
static inline double __longlong_as_double(long long x)
{
    double v;
    memcpy(&v, &x, 8);
    return v;
}
static inline int __float_as_int(float v)
{
    int x;
    memcpy(&x, &v, 4);
    return x;
}
static inline float __int_as_float(int x)
{
    float v;
    memcpy(&v, &x, 4);
    return v;
}
using std::isfinite;
using std::isnan;
/* CUDA's min and max of two numbers of one type */
#define WW_EMU_MIN_MAX(T)                                                                          \
    static inline T min(T a, T b) { return b < a ? b : a; }                                        \
    static inline T max(T a, T b) { return a < b ? b : a; }
WW_EMU_MIN_MAX(int)
WW_EMU_MIN_MAX(unsigned)
WW_EMU_MIN_MAX(long)
WW_EMU_MIN_MAX(unsigned long)
WW_EMU_MIN_MAX(long long)
WW_EMU_MIN_MAX(unsigned long long)
WW_EMU_MIN_MAX(float)
WW_EMU_MIN_MAX(double)
#undef WW_EMU_MIN_MAX

/* ---- host runtime: memory is host memory, a stream runs in order at once ---- */
static inline cudaError_t cudaGetLastError() { return emu::last_error.exchange(cudaSuccess); }
static inline cudaError_t cudaPeekAtLastError() { return emu::last_error.load(); }
static inline const char *cudaGetErrorString(cudaError_t e) { return e ? "emulated CUDA error" : "no error"; }
static inline cudaError_t cudaMemcpyAsync(void *d, const void *s, size_t n, cudaMemcpyKind, cudaStream_t = nullptr)
{
    memcpy(d, s, n);
    return cudaSuccess;
}
static inline cudaError_t cudaMemcpy(void *d, const void *s, size_t n, cudaMemcpyKind k)
{
    return cudaMemcpyAsync(d, s, n, k);
}
static inline cudaError_t cudaMemsetAsync(void *d, int v, size_t n, cudaStream_t = nullptr)
{
    memset(d, v, n);
    return cudaSuccess;
}
static inline cudaError_t cudaStreamSynchronize(cudaStream_t) { return cudaSuccess; }
static inline cudaError_t cudaDeviceSynchronize() { return cudaSuccess; }
/* streams and events: distinct handles that order nothing (every call has finished its work) */
static inline cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned)
{
    *s = (cudaStream_t)malloc(1);
    return *s ? cudaSuccess : cudaErrorMemoryAllocation;
}
static inline cudaError_t cudaStreamDestroy(cudaStream_t s)
{
    free(s);
    return cudaSuccess;
}
static inline cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned)
{
    *e = (cudaEvent_t)malloc(1);
    return *e ? cudaSuccess : cudaErrorMemoryAllocation;
}
static inline cudaError_t cudaEventDestroy(cudaEvent_t e)
{
    free(e);
    return cudaSuccess;
}
static inline cudaError_t cudaEventRecord(cudaEvent_t, cudaStream_t = nullptr) { return cudaSuccess; }
static inline cudaError_t cudaEventSynchronize(cudaEvent_t) { return cudaSuccess; }
static inline cudaError_t cudaStreamWaitEvent(cudaStream_t, cudaEvent_t, unsigned = 0) { return cudaSuccess; }
static inline cudaError_t cudaMalloc(void **p, size_t n)
{
    *p = malloc(n ? n : 1);
    return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}
static inline cudaError_t cudaMallocHost(void **p, size_t n) { return cudaMalloc(p, n); }
static inline cudaError_t cudaFree(void *p)
{
    free(p);
    return cudaSuccess;
}
static inline cudaError_t cudaFreeHost(void *p) { return cudaFree(p); }
static inline cudaError_t cudaMemGetInfo(size_t *free_bytes, size_t *total_bytes)
{
    *free_bytes = *total_bytes = emu::device_free_bytes;
    return cudaSuccess;
}
static inline cudaError_t cudaMemset(void *d, int v, size_t n) { return cudaMemsetAsync(d, v, n); }
static inline cudaError_t cudaGetDevice(int *d)
{
    *d = 0;
    return cudaSuccess;
}
static inline cudaError_t cudaSetDevice(int) { return cudaSuccess; }
static inline cudaError_t cudaDeviceGetAttribute(int *v, cudaDeviceAttr a, int)
{
    *v = a == cudaDevAttrMultiProcessorCount ? emu::multiprocessors : emu::shared_per_block;
    return cudaSuccess;
}
template <typename F>
static inline cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int *n, F, int, size_t)
{
    *n = emu::blocks_per_sm;
    return cudaSuccess;
}
template <typename F> static inline cudaError_t cudaFuncSetAttribute(F, int, int) { return cudaSuccess; }

#endif
