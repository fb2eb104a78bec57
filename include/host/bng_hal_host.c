/* SPDX-License-Identifier: Apache-2.0 */
/* Copyright 2026 the batchnormgrad authors */
/* Host emulation of include/bng_hal.h: not for firmware.
 *
 * The cores are threads that live across calls (created on first use; the calling
 * thread is the first selected core), so that a race shows under ThreadSanitizer and a
 * call costs a wake-up, not a thread start. A core spins a little (BNG_HOST_SPIN_NS)
 * for its next call and at a barrier before it sleeps, as a DSP core waiting on its
 * cluster would, so that back-to-back calls do not each pay the host's thread wake-ups;
 * only while the call's cores fit the host's CPUs, though (see spin_ns).
 * Each core's private memory is an arena of BNG_PRIVATE_BYTES (on a split target _p's
 * workspace is one more, with an engine of its own), and DMA goes through the
 * host's model of the DSP's engine (bng_dma_engine.h): deferred, poisoned and checked,
 * or with BNG_HAL_HOST=fast in the environment plain synchronous copies (what make
 * bench times). Built per target: the core count and arena size come from
 * bng_kernels.h.
 *
 * fork(): only the forking thread exists in the child, so the child forgets the core
 * threads (pthread_atfork) and starts its own on its next call; a fork waits for a call
 * running in another thread to finish, so that the child's state is between calls.
 */
#define _GNU_SOURCE     /* sched_getaffinity, CPU_COUNT */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "bng_dma_engine.h"
#include "bng_hal.h"
#include "bng_hal_host.h"
#include "bng_kernels.h"

#define BNG_HOST_SPIN_NS 200000     /* then sleep */

static pthread_mutex_t cluster = PTHREAD_MUTEX_INITIALIZER;   /* one parallel region at a time */
/* Each wait below spins on an atomic, then sleeps on its condition variable; a change
 * is published under wake_lock, so that no sleeper misses it. */
static pthread_mutex_t wake_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t call_posted[BNG_TARGET_CORES], barrier_passed, core_finished;
static atomic_uint calls_of[BNG_TARGET_CORES];  /* calls each core was started for */
static atomic_uint cores_done;                  /* cores other than the caller's, this call */
static atomic_uint barrier_arrived, barrier_phase;
static unsigned barrier_cores;
static int started;                             /* core threads of this process */
static pthread_once_t engine_once = PTHREAD_ONCE_INIT;   /* arenas: kept across fork() */
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
static unsigned generation;
static bng_hal_body call_body;
static void *call_arg;
static __thread int current_core = -1;
/* How long a waiting core spins before it sleeps, set per call: BNG_HOST_SPIN_NS when
 * the call's cores fit the host's CPUs, else 0. A spin pays only on a CPU of its own:
 * with more cores than CPUs (8 cores on a 2-CPU machine, as the tests run them) the
 * spinning core holds the CPU the core it waits for needs. Measured on 2 CPUs,
 * mt7004's suite: 19.5 CPU-seconds spinning 200 us, 13.1 sleeping at once. The CPUs
 * counted are those the process may run on. */
static atomic_llong spin_ns;
static long host_cpus;

static long long elapsed_ns(const struct timespec *since)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (now.tv_sec - since->tv_sec) * 1000000000LL + (now.tv_nsec - since->tv_nsec);
}

/* Wait until *value != old; returns the new value. */
static unsigned wait_for_change(atomic_uint *value, unsigned old, pthread_cond_t *changed)
{
    struct timespec since;
    unsigned spins = 0, now;

    clock_gettime(CLOCK_MONOTONIC, &since);
    while ((now = atomic_load_explicit(value, memory_order_acquire)) == old)
        if (++spins % 256 == 0
            && elapsed_ns(&since) >= atomic_load_explicit(&spin_ns, memory_order_relaxed)) {
            pthread_mutex_lock(&wake_lock);
            while ((now = atomic_load_explicit(value, memory_order_acquire)) == old)
                pthread_cond_wait(changed, &wake_lock);
            pthread_mutex_unlock(&wake_lock);
            break;
        }
    return now;
}

/* *value += 1, waking whoever sleeps on `changed`. */
static void publish_increment(atomic_uint *value, pthread_cond_t *changed)
{
    pthread_mutex_lock(&wake_lock);
    atomic_fetch_add_explicit(value, 1, memory_order_acq_rel);
    pthread_cond_broadcast(changed);
    pthread_mutex_unlock(&wake_lock);
}

static unsigned this_core(const char *call)
{
    if (current_core < 0)
        bng_dma_engine_fail(call, "called outside a core's body: this call belongs in the body "
                            "bng_hal_parallel runs on each core (or, on a split target, between "
                            "bng_hal_p_workspace and its release), where the library makes it",
                            current_core);
    return (unsigned)current_core;
}

/* bng_hal_host_refuse's settings: written between calls by the calling thread, read by
 * the cores after the call's hand-over (the engine's lock orders them). */
static int refuse_private, short_workspace;

void bng_hal_host_refuse(int private_memory, int workspace)
{
    refuse_private = private_memory;
    short_workspace = workspace;
}

void *bng_hal_private(unsigned core, size_t *bytes)
{
    if (core != this_core("bng_hal_private"))
        bng_dma_engine_fail("bng_hal_private", "a core asked for another core's memory", current_core);
    *bytes = refuse_private ? 0 : BNG_PRIVATE_BYTES;
    return refuse_private ? NULL : bng_dma_engine_arena(core);
}

bng_hal_dma bng_hal_dma_get(void *dst, const BNG_SHARED void *src, size_t rows,
                            size_t row_bytes, size_t shared_stride, size_t private_stride)
{
    return bng_dma_engine_issue(this_core("bng_hal_dma_get"), "bng_hal_dma_get", dst,
                                private_stride, src, shared_stride, rows, row_bytes, dst);
}

bng_hal_dma bng_hal_dma_put(BNG_SHARED void *dst, const void *src, size_t rows,
                            size_t row_bytes, size_t shared_stride, size_t private_stride)
{
    return bng_dma_engine_issue(this_core("bng_hal_dma_put"), "bng_hal_dma_put", dst,
                                shared_stride, src, private_stride, rows, row_bytes, src);
}

void bng_hal_dma_wait(bng_hal_dma handle)
{
    bng_dma_engine_wait(this_core("bng_hal_dma_wait"), handle);
}

void bng_hal_barrier(void)
{
    unsigned phase;

    bng_dma_engine_complete_puts(this_core("bng_hal_barrier"));   /* puts visible after it */
    phase = atomic_load_explicit(&barrier_phase, memory_order_acquire);
    if (atomic_fetch_add_explicit(&barrier_arrived, 1, memory_order_acq_rel) + 1 == barrier_cores) {
        atomic_store_explicit(&barrier_arrived, 0, memory_order_relaxed);
        publish_increment(&barrier_phase, &barrier_passed);
    } else
        wait_for_change(&barrier_phase, phase, &barrier_passed);
}

static void run_body(unsigned core, unsigned call)
{
    current_core = (int)core;
    bng_dma_engine_begin(core, call);
    call_body(core, call_arg);
    bng_dma_engine_end(core);
    current_core = -1;
}

static void *core_main(void *p)
{
    const unsigned core = (unsigned)(uintptr_t)p;
    unsigned calls = 0;

    for (;;) {
        calls = wait_for_change(&calls_of[core], calls, &call_posted[core]);
        run_body(core, generation);
        publish_increment(&cores_done, &core_finished);
    }
    return NULL;
}

/* Before fork(): no call in progress, no one inside wake_lock. */
static void before_fork(void)
{
    pthread_mutex_lock(&cluster);
    pthread_mutex_lock(&wake_lock);
}

static void after_fork_parent(void)
{
    pthread_mutex_unlock(&wake_lock);
    pthread_mutex_unlock(&cluster);
}

/* The child has no core threads: its next call starts them afresh. The arenas are the
 * child's copies (no transfer is outstanding between calls) and stay. */
static void after_fork_child(void)
{
    unsigned core;

    pthread_mutex_init(&wake_lock, NULL);
    pthread_mutex_init(&cluster, NULL);
    for (core = 0; core < BNG_TARGET_CORES; core++)
        atomic_store_explicit(&calls_of[core], 0, memory_order_relaxed);
    atomic_store_explicit(&cores_done, 0, memory_order_relaxed);
    atomic_store_explicit(&barrier_arrived, 0, memory_order_relaxed);
    started = 0;
}

/* The cores' arenas and, on a split target, the engine _p stages through (P_ENGINE). */
#if BNG_SPLIT_MEMORY
#define BNG_HOST_P_ARENA_BYTES BNG_P_WORKSPACE_BYTES
#else
#define BNG_HOST_P_ARENA_BYTES 0        /* _p needs no workspace */
#endif
static void init_engine(void)
{
    bng_dma_engine_init(BNG_TARGET_CORES, BNG_PRIVATE_BYTES, BNG_HOST_P_ARENA_BYTES);
}

static void register_atfork(void)
{
    if (pthread_atfork(before_fork, after_fork_parent, after_fork_child) != 0)
        bng_dma_engine_fail("bng_hal_parallel", "cannot register the fork handlers", -1);
}

/* The CPUs this process may run on (a cpuset or taskset gives fewer than are online). */
static long usable_cpus(void)
{
    cpu_set_t set;
    return sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set)
                                                        : sysconf(_SC_NPROCESSORS_ONLN);
}

static void start_cores(void)
{
    unsigned core;

    pthread_once(&atfork_once, register_atfork);
    pthread_once(&engine_once, init_engine);
    if (pthread_cond_init(&barrier_passed, NULL) != 0 || pthread_cond_init(&core_finished, NULL) != 0)
        bng_dma_engine_fail("bng_hal_parallel", "cannot create a condition variable", -1);
    for (core = 0; core < BNG_TARGET_CORES; core++) {
        pthread_t thread;
        if (pthread_cond_init(&call_posted[core], NULL) != 0
            || pthread_create(&thread, NULL, core_main, (void *)(uintptr_t)core) != 0
            || pthread_detach(thread) != 0)
            bng_dma_engine_fail("bng_hal_parallel", "cannot start a core thread", (int)core);
    }
    host_cpus = usable_cpus();
    started = 1;
}

#if BNG_SPLIT_MEMORY
/* _p on a split target: the calling thread plays its core, on an engine and arena of its
 * own (the engine after the cores'). _p calls on a host take turns on it. */
#define P_ENGINE BNG_TARGET_CORES
static pthread_mutex_t p_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned p_calls;

void *bng_hal_p_workspace(size_t *bytes)
{
    if (current_core >= 0)
        bng_dma_engine_fail("bng_hal_p_workspace", "_p called inside a core's body", current_core);
    pthread_once(&engine_once, init_engine);
    pthread_mutex_lock(&p_lock);
    current_core = P_ENGINE;
    bng_dma_engine_begin(P_ENGINE, ++p_calls);
    *bytes = BNG_P_WORKSPACE_BYTES - (short_workspace ? 1 : 0);
    return bng_dma_engine_arena(P_ENGINE);
}

void bng_hal_p_workspace_release(void *block)
{
    if (current_core != P_ENGINE || block != bng_dma_engine_arena(P_ENGINE))
        bng_dma_engine_fail("bng_hal_p_workspace_release", "not the block bng_hal_p_workspace gave",
                            current_core);
    bng_dma_engine_end(P_ENGINE);
    current_core = -1;
    pthread_mutex_unlock(&p_lock);
}
#endif

int bng_hal_parallel(unsigned mask, bng_hal_body body, void *arg, size_t arg_bytes)
{
    unsigned n = 0, core, first = BNG_TARGET_CORES, done = 0;

    (void)arg_bytes;    /* one address space: every core reads arg where it is */
    for (core = 0; core < BNG_TARGET_CORES; core++)
        if (mask & (1u << core)) {
            n++;
            if (first == BNG_TARGET_CORES)
                first = core;
        }
    if (n == 0 || (mask >> BNG_TARGET_CORES) != 0)
        bng_dma_engine_fail("bng_hal_parallel", "bad core mask", -1);
    pthread_mutex_lock(&cluster);
    if (!started)
        start_cores();
    barrier_cores = n;
    atomic_store_explicit(&spin_ns, (long)n <= host_cpus ? BNG_HOST_SPIN_NS : 0,
                          memory_order_relaxed);
    call_body = body;
    call_arg = arg;
    generation++;
    atomic_store_explicit(&cores_done, 0, memory_order_relaxed);
    for (core = first + 1; core < BNG_TARGET_CORES; core++)
        if (mask & (1u << core))
            publish_increment(&calls_of[core], &call_posted[core]);
    run_body(first, generation);
    while (done != n - 1)
        done = wait_for_change(&cores_done, done, &core_finished);
    pthread_mutex_unlock(&cluster);
    return BNG_HAL_OK;      /* the arenas are static: nothing to reserve */
}
