/* SPDX-License-Identifier: Apache-2.0 */
/* Copyright 2026 the batchnormgrad authors */
/* Reference implementation of include/bng_hal.h for NUDT's hthreads device runtime.
 *
 * Written against public MT-3000 hthreads code; every assumption about that runtime
 * (signatures' meaning, the launch model, memory ordering, AM sizing) is in
 * bng_hal_hthreads_config.h, and what firmware calls besides _s in bng_hal_hthreads.h.
 * Vendored on request (make vendor ... HAL=hthreads): the one file of the hthreads path
 * a firmware build takes. The host tests run the whole _s suite through it against a
 * mock of the runtime (include/host/hthread_mock.c), started by a host launcher
 * (include/host/hthread_launch.c), in both launch models, and
 * include/programs/bng_hal_conformance.c checks it against the contract.
 *
 * A call (bng_hal_parallel), on each selected core:
 *   1. vector_malloc its AM block (checked) and vote in GSM whether it got one;
 *   2. meet the other selected cores (barrier_id), read their votes;
 *   3. run body only when every selected core got its block;
 *   4. vector_free the block, meet at the end (done_barrier_id).
 * So either every selected core runs body, or none does and the call returns
 * BNG_HAL_ENOMEM on every one of them.
 */
#include <stddef.h>
#include <stdint.h>

#include "bng_hal.h"
#include "bng_hal_hthreads.h"
#include "bng_hal_hthreads_config.h"
#include "bng_kernels.h"
#include BNG_HTHREADS_HEADER

#if BNG_HTHREADS_AM_BYTES < BNG_PRIVATE_BYTES
#error "BNG_HTHREADS_AM_BYTES must be at least BNG_PRIVATE_BYTES (targets.yaml memory.private_bytes)"
#endif

#define BNG_MAX_PUTS BNG_MAX_OUTSTANDING_DMA  /* the contract's outstanding transfers per core (bng_kernels.h) */

/* Per core: the ids it was given, this call's AM block, its puts not yet waited for
 * (the barrier completes them), how many cores the current call has, and (fan-out) how
 * far the mailbox protocol got. Indexed by core, so it holds whether the runtime gives
 * each core its own copy of globals or one shared copy. */
typedef struct {
    int initialized;
    unsigned barrier_id, done_barrier_id;
    BNG_VMEM void *private_memory;
    unsigned puts[BNG_MAX_PUTS];   /* channel + 1 of each outstanding put; 0: none */
    unsigned cores_in_call;
    int started;                   /* fan-out caller: the workers were met */
    unsigned posted;               /* fan-out caller: jobs posted since */
} bng_core_state;
static bng_core_state bng_cores[BNG_TARGET_CORES];

/* Each core's vote for the current call: 1 when it holds its AM block. Written by the
 * core before the call's first barrier, read by the others after it. */
static BNG_HTHREADS_GSM unsigned bng_votes[BNG_TARGET_CORES];

static unsigned bng_count(unsigned mask)
{
    unsigned n = 0;
    for (; mask; mask &= mask - 1)
        n++;
    return n;
}

int bng_hal_hthreads_init(unsigned barrier_id, unsigned done_barrier_id)
{
    bng_core_state *c = &bng_cores[BNG_HTHREADS_CORE()];
    size_t i;

    c->initialized = 0;
    if (barrier_id >= BNG_HTHREADS_BARRIER_IDS || done_barrier_id >= BNG_HTHREADS_BARRIER_IDS
        || barrier_id == done_barrier_id)
        return -1;
    c->barrier_id = barrier_id;
    c->done_barrier_id = done_barrier_id;
    c->private_memory = NULL;
    for (i = 0; i < BNG_MAX_PUTS; i++)
        c->puts[i] = 0;
    c->started = 0;
    c->posted = 0;
    c->initialized = 1;
    return 0;
}

BNG_VMEM void *bng_hal_private(unsigned core, size_t *bytes)
{
    bng_core_state *c = &bng_cores[core];
    *bytes = c->private_memory ? BNG_HTHREADS_AM_BYTES : 0;
    return c->private_memory;
}

static bng_hal_dma bng_transfer(void *dst, size_t dst_stride, void *src, size_t src_stride,
                                size_t rows, size_t row_bytes)
{
    unsigned channel;

    if (rows == 0 || row_bytes == 0)
        return BNG_HAL_DMA_DONE;         /* nothing to copy: nothing issued */
    if (rows == 1)
        dst_stride = src_stride = row_bytes;      /* row step 0, as public code passes */
    channel = dma_p2p(src, rows, (unsigned)row_bytes, BNG_HTHREADS_ROW_STEP(src_stride, row_bytes),
                      dst, rows, (unsigned)row_bytes, BNG_HTHREADS_ROW_STEP(dst_stride, row_bytes),
                      0, 0);
    return (bng_hal_dma)(channel + 1);   /* 0 is BNG_HAL_DMA_DONE */
}

bng_hal_dma bng_hal_dma_get(BNG_VMEM void *dst, const BNG_SHARED void *src, size_t rows,
                            size_t row_bytes, size_t shared_stride, size_t private_stride)
{
    return bng_transfer((BNG_FORCE void *)dst, private_stride, BNG_HTHREADS_RUNTIME_POINTER(src), shared_stride,
                        rows, row_bytes);
}

bng_hal_dma bng_hal_dma_put(BNG_SHARED void *dst, const BNG_VMEM void *src, size_t rows,
                            size_t row_bytes, size_t shared_stride, size_t private_stride)
{
    bng_core_state *c = &bng_cores[BNG_HTHREADS_CORE()];
    const bng_hal_dma handle = bng_transfer(BNG_HTHREADS_RUNTIME_POINTER(dst), shared_stride,
                                            (BNG_FORCE void *)(uintptr_t)src, private_stride, rows,
                                            row_bytes);
    size_t i;

    for (i = 0; handle != BNG_HAL_DMA_DONE && i < BNG_MAX_PUTS; i++)
        if (c->puts[i] == 0) {
            c->puts[i] = (unsigned)handle;
            return handle;
        }
    if (handle != BNG_HAL_DMA_DONE)
        BNG_HTHREADS_CONTRACT_BREACH("bng_hal_dma_put: a fifth outstanding put, a breach of "
                                     "bng_hal.h's contract (it allows four)");
    return handle;
}

void bng_hal_dma_wait(bng_hal_dma handle)
{
    bng_core_state *c = &bng_cores[BNG_HTHREADS_CORE()];
    size_t i;

    if (handle == BNG_HAL_DMA_DONE)
        return;
    dma_wait((unsigned)handle - 1);
    for (i = 0; i < BNG_MAX_PUTS; i++)
        if (c->puts[i] == (unsigned)handle)
            c->puts[i] = 0;
}

static void bng_complete_puts(bng_core_state *c)
{
    size_t i;
    for (i = 0; i < BNG_MAX_PUTS; i++)
        if (c->puts[i])
            bng_hal_dma_wait((bng_hal_dma)c->puts[i]);
}

void bng_hal_barrier(void)
{
    bng_core_state *c = &bng_cores[BNG_HTHREADS_CORE()];

    bng_complete_puts(c);          /* the contract: puts are visible after the barrier */
    core_barrier(c->barrier_id, c->cores_in_call);
}

/* A block of AM from vector_malloc, checked: NULL unless 64-byte aligned, as the
 * contract promises. AM is vector memory (BNG_VMEM): this file only hands it to the
 * runtime and the driver, never dereferences it (make cross-check runs sparse over it
 * for a split target); the casts below are where it crosses the runtime's plain
 * pointers. */
static BNG_VMEM void *bng_vector_block(size_t bytes)
{
    void *block = vector_malloc((unsigned)bytes);

    if (block != NULL && ((uintptr_t)block & 63u) != 0) {
        vector_free(block);
        block = NULL;
    }
    return (BNG_FORCE BNG_VMEM void *)block;
}

/* Steps 1-2: this core's AM block and the selected cores' agreement. */
static int bng_reserve(unsigned core, unsigned mask)
{
    bng_core_state *c = &bng_cores[core];
    unsigned other, all = 1;
    BNG_VMEM void *block = bng_vector_block(BNG_HTHREADS_AM_BYTES);

    c->private_memory = block;
    c->cores_in_call = bng_count(mask);
    BNG_HTHREADS_STORE(&bng_votes[core], block != NULL ? 1u : 0u);
    core_barrier(c->barrier_id, c->cores_in_call);
    for (other = 0; other < BNG_TARGET_CORES; other++)
        if ((mask & (1u << other)) && BNG_HTHREADS_LOAD(&bng_votes[other]) != 1u)
            all = 0;
    return all;
}

/* Step 4's first half: nothing in flight from this core, its block given back. */
static void bng_release(unsigned core)
{
    bng_core_state *c = &bng_cores[core];

    bng_complete_puts(c);
    if (c->private_memory != NULL)
        vector_free((BNG_FORCE void *)c->private_memory);
    c->private_memory = NULL;
}

#if BNG_SPLIT_MEMORY
/* _p on a split target: its workspace from the calling core's AM for the call. */
BNG_VMEM void *bng_hal_p_workspace(size_t *bytes)
{
    BNG_VMEM void *block = bng_vector_block(BNG_P_WORKSPACE_BYTES);

    *bytes = block != NULL ? BNG_P_WORKSPACE_BYTES : 0;
    return block;
}

void bng_hal_p_workspace_release(BNG_VMEM void *block)
{
    vector_free((BNG_FORCE void *)block);
}
#endif

/* Steps 1-4 but the final meeting, on a selected core: 1 when body ran. */
static int bng_run_selected(unsigned core, unsigned mask, bng_hal_body body, void *arg)
{
    const int all = bng_reserve(core, mask);

    if (all)
        body(core, arg);
    bng_release(core);
    return all;
}

#if BNG_HTHREADS_LAUNCH == BNG_LAUNCH_SPMD

/* Every core of the group is here with the same arguments; the selected ones work and
 * leave together. */
int bng_hal_parallel(unsigned mask, bng_hal_body body, void *arg, size_t arg_bytes)
{
    const unsigned core = BNG_HTHREADS_CORE();
    bng_core_state *c = &bng_cores[core];
    int all;

    (void)arg_bytes;    /* each core built its own copy of arg */
    if (!(mask & (1u << core)))
        return BNG_HAL_IDLE;
    if (!c->initialized)
        return BNG_HAL_ENOMEM;     /* no barrier ids: bng_hal_hthreads_init was not called */
    all = bng_run_selected(core, mask, body, arg);
    core_barrier(c->done_barrier_id, c->cores_in_call);
    return all ? BNG_HAL_OK : BNG_HAL_ENOMEM;
}

/* No workers in this model: a core that runs the worker is start-up code written for
 * fan-out, and its _s caller would wait for it at the call's first barrier forever. */
void bng_hal_hthreads_worker(void)
{
    BNG_HTHREADS_CONTRACT_BREACH("bng_hal_hthreads_worker: this HAL is built for the SPMD launch "
                                 "model (BNG_HTHREADS_LAUNCH=BNG_LAUNCH_SPMD, the default), which "
                                 "has no workers: call _s on every core of the group, or build the "
                                 "HAL with -DBNG_HTHREADS_LAUNCH=BNG_LAUNCH_FANOUT for one caller "
                                 "and workers");
}

void bng_hal_hthreads_stop_workers(void)
{
}

#elif BNG_HTHREADS_LAUNCH == BNG_LAUNCH_FANOUT

/* The caller's job, in global shared memory where every core reads it. The generation
 * counts the jobs posted since the caller met the workers (0 then): a worker waits for
 * a generation other than the last it ran, so a worker that starts late cannot miss a
 * job (none is posted before every worker is in its loop). */
typedef struct {
    unsigned generation;       /* bumped (release) once the rest is written */
    unsigned mask;
    int stop;
    bng_hal_body body;
    union {
        unsigned char bytes[BNG_HTHREADS_MAX_ARG];
        long long align_ll;
        void *align_p;
    } arg;
} bng_mailbox_t;
static BNG_HTHREADS_GSM bng_mailbox_t bng_mailbox;

/* A call on any core of the group: the selected ones work, then the whole group meets,
 * so that no core still reads the mailbox when the next call rewrites it. */
static void bng_run(unsigned core, unsigned mask, bng_hal_body body, void *arg)
{
    if (mask & (1u << core))
        (void)bng_run_selected(core, mask, body, arg);
    group_barrier(bng_cores[core].done_barrier_id);
}

/* The caller's first use: the mailbox written (the .gsm section is not zeroed), then
 * every worker met. A worker's first act is this barrier, so none reads the mailbox
 * before it holds generation 0, and none can have missed a job. */
static void bng_start(bng_core_state *c)
{
    if (c->started)
        return;
    bng_mailbox.mask = 0;
    bng_mailbox.body = NULL;
    BNG_HTHREADS_STORE(&bng_mailbox.stop, 0);
    BNG_HTHREADS_STORE(&bng_mailbox.generation, 0u);
    group_barrier(c->done_barrier_id);
    c->posted = 0;
    c->started = 1;
}

int bng_hal_parallel(unsigned mask, bng_hal_body body, void *arg, size_t arg_bytes)
{
    const unsigned core = BNG_HTHREADS_CORE();
    bng_core_state *c = &bng_cores[core];
    unsigned other;
    size_t i;

    if (!c->initialized || arg_bytes > sizeof bng_mailbox.arg)
        return BNG_HAL_ENOMEM;    /* no barrier ids, or an argument the mailbox cannot hold */
    bng_start(c);
    for (i = 0; i < arg_bytes; i++)
        bng_mailbox.arg.bytes[i] = ((const unsigned char *)arg)[i];
    bng_mailbox.mask = mask;
    bng_mailbox.body = body;
    BNG_HTHREADS_STORE(&bng_mailbox.generation, ++c->posted);
    bng_run(core, mask, body, bng_mailbox.arg.bytes);
    /* Every selected core voted before the group barrier; no vote changes before the
     * next job is posted. */
    for (other = 0; other < BNG_TARGET_CORES; other++)
        if ((mask & (1u << other)) && BNG_HTHREADS_LOAD(&bng_votes[other]) != 1u)
            return BNG_HAL_ENOMEM;
    return BNG_HAL_OK;
}

void bng_hal_hthreads_worker(void)
{
    const unsigned core = BNG_HTHREADS_CORE();
    unsigned seen = 0;

    if (!bng_cores[core].initialized)
        return;                    /* no barrier ids: bng_hal_hthreads_init was not called */
    group_barrier(bng_cores[core].done_barrier_id);     /* the caller's bng_start */
    for (;;) {
        unsigned now;
        while ((now = BNG_HTHREADS_LOAD(&bng_mailbox.generation)) == seen)
            BNG_HTHREADS_IDLE();
        seen = now;
        if (BNG_HTHREADS_LOAD(&bng_mailbox.stop))
            return;
        bng_run(core, bng_mailbox.mask, bng_mailbox.body, bng_mailbox.arg.bytes);
    }
}

/* Make every worker return (e.g. before the group ends). A worker that has not started
 * yet is met first, so it returns too. */
void bng_hal_hthreads_stop_workers(void)
{
    bng_core_state *c = &bng_cores[BNG_HTHREADS_CORE()];

    if (!c->initialized)
        return;
    bng_start(c);
    BNG_HTHREADS_STORE(&bng_mailbox.stop, 1);
    BNG_HTHREADS_STORE(&bng_mailbox.generation, ++c->posted);
    c->started = 0;                /* workers restarted later meet the caller again */
}

#else
#error "BNG_HTHREADS_LAUNCH must be BNG_LAUNCH_FANOUT or BNG_LAUNCH_SPMD"
#endif
