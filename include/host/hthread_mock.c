/* SPDX-License-Identifier: Apache-2.0 */
/* Copyright 2026 the batchnormgrad authors */
/* Host mock of the hthreads device runtime, on the host's DMA engine model
 * (bng_dma_engine.h): threads for cores, barriers by id (only ids the host side
 * created), one array memory per core (vector_malloc can be made to fail),
 * dma_p2p deferred, poisoned and checked. A call ends at the group barrier (fan-out)
 * or when the SPMD launch returns: there each core's transfers must be complete and
 * its array memory is poisoned again. It is the runtime only: it starts cores on the
 * functions it is given and calls nothing of the HAL (the launcher, hthread_launch.c,
 * hands the HAL its barrier ids). Fan-out cores start late, after what core 0 does
 * first. Not for firmware.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bng_dma_engine.h"
#include "bng_kernels.h"
#include "hthread_device.h"
#include "hthread_mock.h"

#define BARRIER_IDS 16       /* core_barrier takes 0-15: a pool the firmware shares */

/* A core's AM: what the larger of the HAL's two blocks needs (the block of a parallel
 * call, and on a split target _p's workspace). */
#if BNG_SPLIT_MEMORY && BNG_P_WORKSPACE_BYTES > BNG_PRIVATE_BYTES
#define MOCK_AM_BYTES BNG_P_WORKSPACE_BYTES
#else
#define MOCK_AM_BYTES BNG_PRIVATE_BYTES
#endif

/* Fan-out cores start this long after one another (core k after k times it), the
 * first after the caller's first call is posted. */
#ifndef HTHREAD_MOCK_CORE_DELAY_NS
#define HTHREAD_MOCK_CORE_DELAY_NS 2000000l
#endif

typedef struct {
    unsigned count, arrived, generation;
    int created;
} mock_barrier;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t released = PTHREAD_COND_INITIALIZER;
static mock_barrier barriers[BARRIER_IDS];
static int allocated[BNG_TARGET_CORES];
static unsigned fail_mask;           /* cores whose vector_malloc returns NULL */
static unsigned calls[BNG_TARGET_CORES];
static pthread_once_t engine_once = PTHREAD_ONCE_INIT;
static __thread int this_core = -1;

/* A misuse of the runtime, as the mock names it: the message (and the core, on one),
 * then abort. */
static void mock_fail(const char *call, const char *what, int core)
{
    if (core >= 0)
        fprintf(stderr, "hthread_mock: %s: %s (core %d)\n", call, what, core);
    else
        fprintf(stderr, "hthread_mock: %s: %s\n", call, what);
    abort();
}

static void init_engine(void)
{
    bng_dma_engine_init(BNG_TARGET_CORES, MOCK_AM_BYTES, 0);
}

/* ---- the host side: barriers ---- */

int hthread_barrier_create(int cluster_id)
{
    int id = -1, i;
    (void)cluster_id;
    pthread_mutex_lock(&lock);
    for (i = 0; i < BARRIER_IDS && id < 0; i++)
        if (!barriers[i].created) {
            barriers[i].created = 1;
            barriers[i].arrived = 0;
            id = i;
        }
    pthread_mutex_unlock(&lock);
    return id;
}

void hthread_mock_fail_vector_malloc(unsigned core_mask)
{
    pthread_mutex_lock(&lock);
    fail_mask = core_mask;
    pthread_mutex_unlock(&lock);
}

/* The calling thread's core. A thread the mock did not start as a core (e.g. main
 * calling _s with no launch) has none: a core exists only once it is launched. */
static unsigned core_of(const char *call)
{
    if (this_core < 0)
        mock_fail(call, "called on a thread that is no core. Launch the cores first "
                  "(hthread_launch.h): in the fan-out model (BNG_HTHREADS_LAUNCH=BNG_LAUNCH_FANOUT) "
                  "call hthread_launch_fanout() once before the first _s; in the SPMD model "
                  "(the default) call _s inside the function hthread_launch_spmd(fn, arg) runs "
                  "on every core", -1);
    return (unsigned)this_core;
}

int get_thread_id(void)
{
    return (int)core_of("get_thread_id");
}

void core_barrier(unsigned int id, unsigned int num)
{
    mock_barrier *b;
    unsigned generation;

    core_of("core_barrier");
    if (id >= BARRIER_IDS || num == 0 || num > BNG_TARGET_CORES)
        mock_fail("core_barrier", "bad barrier id or core count", this_core);
    pthread_mutex_lock(&lock);
    b = &barriers[id];
    if (!b->created) {
        char what[96];
        snprintf(what, sizeof what, "barrier id %u was not created (hthread_barrier_create)", id);
        mock_fail("core_barrier", what, this_core);
    }
    if (b->arrived == 0)
        b->count = num;
    else if (b->count != num)
        mock_fail("core_barrier", "cores arrived with different counts", this_core);
    generation = b->generation;
    if (++b->arrived == b->count) {
        b->arrived = 0;
        b->generation++;
        pthread_cond_broadcast(&released);
    } else {
        while (b->generation == generation)
            pthread_cond_wait(&released, &lock);
    }
    pthread_mutex_unlock(&lock);
}

/* The end of a call in the fan-out model: every core's transfers are complete, and its
 * array memory is poisoned for the next call. */
void group_barrier(unsigned id)
{
    const unsigned core = core_of("group_barrier");
    core_barrier(id, BNG_TARGET_CORES);
    bng_dma_engine_end(core);
    bng_dma_engine_begin(core, ++calls[core]);
}

/* One block of at most MOCK_AM_BYTES per core at a time (the mock's AM); NULL
 * when that is taken, asked for more, or the core is in the failure mask. */
void *vector_malloc(unsigned int bytes)
{
    const unsigned core = core_of("vector_malloc");
    int fail;
    pthread_once(&engine_once, init_engine);
    pthread_mutex_lock(&lock);
    fail = (fail_mask >> core) & 1u;
    pthread_mutex_unlock(&lock);
    if (fail || bytes > MOCK_AM_BYTES || allocated[core])
        return NULL;
    allocated[core] = 1;
    return bng_dma_engine_arena(core);
}

void vector_free(void *p)
{
    const unsigned core = core_of("vector_free");
    if (!allocated[core] || p != (void *)bng_dma_engine_arena(core))
        mock_fail("vector_free", "not the block vector_malloc gave this core", (int)core);
    allocated[core] = 0;
}

unsigned int dma_p2p(void *src, unsigned long src_row_num, unsigned int src_row_size, int src_row_step,
                     void *dst, unsigned long dst_row_num, unsigned int dst_row_size, int dst_row_step,
                     bool row_syn, unsigned int synmask)
{
    const unsigned core = core_of("dma_p2p");
    const uintptr_t arena = (uintptr_t)bng_dma_engine_arena(core), at = (uintptr_t)dst;
    const void *private_side = at >= arena && at - arena < MOCK_AM_BYTES ? dst : src;

    if (src_row_num != dst_row_num || src_row_size != dst_row_size || row_syn || synmask)
        mock_fail("dma_p2p", "the mock copies rows of equal shape only", (int)core);
    if (src_row_step < 0 || dst_row_step < 0)     /* public code passes 0 for packed rows */
        mock_fail("dma_p2p", "a negative row step", (int)core);
    return (unsigned)bng_dma_engine_issue(core, "dma_p2p", dst, dst_row_size + (size_t)dst_row_step,
                                          src, src_row_size + (size_t)src_row_step, src_row_num,
                                          src_row_size, private_side);
}

void dma_wait(unsigned int ch)
{
    bng_dma_engine_wait(core_of("dma_wait"), (int)ch);
}

void hthread_mock_breach(const char *what)
{
    fprintf(stderr, "bng_hal_hthreads: %s\n", what);
    abort();
}

/* The cores are threads here, and more of them than the host has CPUs: a wait that has
 * just begun polls every 20 us, and one that goes on (a worker parked between calls,
 * while the caller checks results) backs off to 320 us, so that seven waiting cores do
 * not take the CPUs the working ones need (at 20 us each asked to wake 50,000 times a
 * second; under ThreadSanitizer the fanout suite's CPU time was 199 s, now 137 s).
 * A pause that follows the last one within twice its length continues that wait. */
#define IDLE_FIRST_NS 20000L
#define IDLE_LONGEST_NS 320000L

static long elapsed_since_ns(const struct timespec *then, const struct timespec *now)
{
    return (long)(now->tv_sec - then->tv_sec) * 1000000000L + (now->tv_nsec - then->tv_nsec);
}

void hthread_mock_idle(void)
{
    static __thread long pause_ns;
    static __thread struct timespec last_end;
    struct timespec now, pause;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (pause_ns == 0 || elapsed_since_ns(&last_end, &now) > 2 * pause_ns)
        pause_ns = IDLE_FIRST_NS;
    else if (pause_ns < IDLE_LONGEST_NS)
        pause_ns *= 2;
    pause.tv_sec = 0;
    pause.tv_nsec = pause_ns;
    nanosleep(&pause, NULL);
    clock_gettime(CLOCK_MONOTONIC, &last_end);
}

/* ---- starting cores ---- */

typedef struct {
    unsigned core;
    void (*core_main)(void);
} core_start;

static void *run_late_core(void *p)
{
    const core_start *s = p;
    const long long delay = HTHREAD_MOCK_CORE_DELAY_NS * (long long)s->core;
    const struct timespec late = {(time_t)(delay / 1000000000), (long)(delay % 1000000000)};
    nanosleep(&late, NULL);        /* core 0's first call is posted meanwhile */
    this_core = (int)s->core;
    bng_dma_engine_begin(s->core, 0);
    s->core_main();
    this_core = -1;
    return NULL;
}

void hthread_mock_adopt_core_0(void)
{
    pthread_once(&engine_once, init_engine);
    this_core = 0;
    bng_dma_engine_begin(0, 0);
}

void hthread_mock_start_other_cores(void (*core_main)(void))
{
    static core_start starts[BNG_TARGET_CORES];
    unsigned core;

    pthread_once(&engine_once, init_engine);
    for (core = 1; core < BNG_TARGET_CORES; core++) {
        pthread_t thread;
        starts[core].core = core;
        starts[core].core_main = core_main;
        if (pthread_create(&thread, NULL, run_late_core, &starts[core]) != 0 || pthread_detach(thread) != 0)
            mock_fail("hthread_mock_start_other_cores", "cannot start a core", (int)core);
    }
}

/* The SPMD group: one thread per core, started at the first launch and kept, as a
 * part's cores are the same cores every launch. A launch posts fn and arg, each core
 * runs them once (a call of the runtime from its start to its end), and the launch
 * waits for the last; the handover is the lock's, which orders a launch's work after
 * what the caller did before it and before what it does after, as thread creation and
 * join would. (Under ThreadSanitizer a thread created and joined per launch, 8 a call,
 * cost a third of the SPMD suites' time, faulting in fresh stacks and their shadow.) */
static pthread_cond_t group_posted = PTHREAD_COND_INITIALIZER;
static pthread_cond_t group_finished = PTHREAD_COND_INITIALIZER;
static pthread_mutex_t launch_lock = PTHREAD_MUTEX_INITIALIZER;   /* one launch at a time */
static int group_started;                 /* the group's threads exist in this process */
static unsigned group_launches, group_cores_done;
static unsigned group_launches_before;    /* the count when the threads were started */
static void (*group_fn)(void *);
static void *group_arg;

static __thread int is_group_thread;       /* a thread of the group, not the host's */

static void *run_group_core(void *p)
{
    const unsigned core = (unsigned)(uintptr_t)p;
    unsigned launches_seen = group_launches_before;   /* started for the launch after it */
    is_group_thread = 1;
    for (;;) {
        void (*fn)(void *);
        void *arg;
        pthread_mutex_lock(&lock);
        while (group_launches == launches_seen)
            pthread_cond_wait(&group_posted, &lock);
        launches_seen = group_launches;
        fn = group_fn;
        arg = group_arg;
        pthread_mutex_unlock(&lock);

        this_core = (int)core;
        bng_dma_engine_begin(core, ++calls[core]);
        fn(arg);
        bng_dma_engine_end(core);
        this_core = -1;

        pthread_mutex_lock(&lock);
        if (++group_cores_done == BNG_TARGET_CORES)
            pthread_cond_signal(&group_finished);
        pthread_mutex_unlock(&lock);
    }
    return NULL;
}

/* fork(): only the forking thread exists in the child, which starts the group's threads
 * afresh at its next launch; a fork waits for a launch running in another thread. */
static void before_fork(void)
{
    pthread_mutex_lock(&launch_lock);
    pthread_mutex_lock(&lock);
}

static void after_fork_parent(void)
{
    pthread_mutex_unlock(&lock);
    pthread_mutex_unlock(&launch_lock);
}

static void after_fork_child(void)
{
    pthread_mutex_init(&lock, NULL);
    pthread_mutex_init(&launch_lock, NULL);
    pthread_cond_init(&group_posted, NULL);     /* the parent's group threads waited on it */
    pthread_cond_init(&group_finished, NULL);
    group_started = 0;
}

static void register_fork_handlers(void)
{
    if (pthread_atfork(before_fork, after_fork_parent, after_fork_child) != 0)
        mock_fail("hthread_mock_run_group", "cannot register the fork handlers", -1);
}

/* The group's threads, under launch_lock, at the first launch of this process. */
static void start_group_cores(void)
{
    static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
    unsigned core;

    if (group_started)
        return;
    pthread_once(&atfork_once, register_fork_handlers);
    group_launches_before = group_launches;     /* read by the threads, created after */
    for (core = 0; core < BNG_TARGET_CORES; core++) {
        pthread_t thread;
        if (pthread_create(&thread, NULL, run_group_core, (void *)(uintptr_t)core) != 0 ||
            pthread_detach(thread) != 0)
            mock_fail("hthread_mock_run_group", "cannot start a core", (int)core);
    }
    group_started = 1;
}

void hthread_mock_run_group(void (*fn)(void *), void *arg)
{
    if (is_group_thread)      /* the runtime's launch is the host's, never a core's */
        mock_fail("hthread_mock_run_group", "a group launched from a core", this_core);
    pthread_once(&engine_once, init_engine);
    pthread_mutex_lock(&launch_lock);
    start_group_cores();
    pthread_mutex_lock(&lock);
    group_fn = fn;
    group_arg = arg;
    group_cores_done = 0;
    group_launches++;
    pthread_cond_broadcast(&group_posted);
    while (group_cores_done != BNG_TARGET_CORES)
        pthread_cond_wait(&group_finished, &lock);
    pthread_mutex_unlock(&lock);
    pthread_mutex_unlock(&launch_lock);
}
