/* Reference implementation of include/bng_hal.h for NUDT's hthreads device runtime.
 *
 * Written against the public MT-3000 hthread_device.h; every assumption about that
 * runtime (signatures' meaning, barrier ids, the launch model, memory ordering) is in
 * bng_hal_hthreads_config.h. Vendored on request (make vendor ... HAL=hthreads). The
 * host tests run the whole _s suite through it against a mock of the runtime
 * (include/host/hthread_mock.c) in both launch models.
 */
#include <stddef.h>

#include "bng_hal.h"
#include "bng_hal_hthreads_config.h"
#include "bng_kernels.h"
#include BNG_HTHREADS_HEADER

/* Per core: its AM, its transfers not yet waited for (the barrier completes the puts),
 * and how many cores the current call has. Indexed by core, so it holds whether the
 * runtime gives each core its own copy of globals or one shared copy. */
typedef struct {
    void *private_memory;
    unsigned puts[4];          /* channel + 1 of each outstanding put; 0: none */
    unsigned cores_in_call;
} bng_core_state;
static bng_core_state bng_cores[BNG_TARGET_CORES];

static unsigned bng_count(unsigned mask)
{
    unsigned n = 0;
    for (; mask; mask &= mask - 1)
        n++;
    return n;
}

void *bng_hal_private(unsigned core, size_t *bytes)
{
    bng_core_state *c = &bng_cores[core];
    if (c->private_memory == NULL)
        c->private_memory = vector_malloc(BNG_PRIVATE_BYTES);
    *bytes = BNG_PRIVATE_BYTES;
    return c->private_memory;
}

static bng_hal_dma bng_transfer(void *dst, size_t dst_stride, const void *src,
                                size_t src_stride, size_t rows, size_t row_bytes)
{
    const unsigned channel = dma_p2p((void *)src, rows, (unsigned)row_bytes,
                                     BNG_HTHREADS_ROW_STEP(src_stride, row_bytes),
                                     dst, rows, (unsigned)row_bytes,
                                     BNG_HTHREADS_ROW_STEP(dst_stride, row_bytes), 0, 0);
    return (bng_hal_dma)(channel + 1);   /* 0 is BNG_HAL_DMA_DONE */
}

bng_hal_dma bng_hal_dma_get(void *dst, const void *src, size_t rows, size_t row_bytes,
                            size_t src_stride)
{
    return bng_transfer(dst, row_bytes, src, src_stride, rows, row_bytes);
}

bng_hal_dma bng_hal_dma_put(void *dst, const void *src, size_t rows, size_t row_bytes,
                            size_t dst_stride)
{
    bng_core_state *c = &bng_cores[BNG_HTHREADS_CORE()];
    const bng_hal_dma handle = bng_transfer(dst, dst_stride, src, row_bytes, rows, row_bytes);
    size_t i;

    for (i = 0; i < 4; i++)
        if (c->puts[i] == 0) {
            c->puts[i] = (unsigned)handle;
            break;
        }
    return handle;
}

void bng_hal_dma_wait(bng_hal_dma handle)
{
    bng_core_state *c = &bng_cores[BNG_HTHREADS_CORE()];
    size_t i;

    if (handle == BNG_HAL_DMA_DONE)
        return;
    dma_wait((unsigned)handle - 1);
    for (i = 0; i < 4; i++)
        if (c->puts[i] == (unsigned)handle)
            c->puts[i] = 0;
}

void bng_hal_barrier(void)
{
    bng_core_state *c = &bng_cores[BNG_HTHREADS_CORE()];
    size_t i;

    for (i = 0; i < 4; i++)        /* the contract: puts are visible after the barrier */
        if (c->puts[i])
            bng_hal_dma_wait((bng_hal_dma)c->puts[i]);
    core_barrier(BNG_HTHREADS_BARRIER_ID, c->cores_in_call);
}

#if BNG_HTHREADS_LAUNCH == BNG_LAUNCH_SPMD

/* Every core of the group is here with the same arguments; the selected ones work and
 * leave together. */
void bng_hal_parallel(unsigned mask, bng_hal_body body, void *arg, size_t arg_bytes)
{
    const unsigned core = BNG_HTHREADS_CORE();

    (void)arg_bytes;    /* each core built its own copy of arg */
    if (!(mask & (1u << core)))
        return;
    bng_cores[core].cores_in_call = bng_count(mask);
    body(core, arg);
    core_barrier(BNG_HTHREADS_DONE_BARRIER_ID, bng_cores[core].cores_in_call);
}

#elif BNG_HTHREADS_LAUNCH == BNG_LAUNCH_FANOUT

/* The caller's job, in global shared memory where every core reads it. */
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

static void bng_run(unsigned core, unsigned mask, bng_hal_body body, void *arg)
{
    if (mask & (1u << core)) {
        bng_cores[core].cores_in_call = bng_count(mask);
        body(core, arg);
    }
}

void bng_hal_parallel(unsigned mask, bng_hal_body body, void *arg, size_t arg_bytes)
{
    const unsigned core = BNG_HTHREADS_CORE();
    size_t i;

    if (arg_bytes > sizeof bng_mailbox.arg)
        return;    /* never: the driver's job is about 120 bytes; the host suite would fail */
    for (i = 0; i < arg_bytes; i++)
        bng_mailbox.arg.bytes[i] = ((const unsigned char *)arg)[i];
    bng_mailbox.mask = mask;
    bng_mailbox.body = body;
    BNG_HTHREADS_STORE(&bng_mailbox.generation, bng_mailbox.generation + 1);
    bng_run(core, mask, body, bng_mailbox.arg.bytes);
    /* The whole group meets here, so no core still reads this mailbox when the next
     * call rewrites it. */
    group_barrier(BNG_HTHREADS_DONE_BARRIER_ID);
}

void bng_hal_hthreads_worker(void)
{
    const unsigned core = BNG_HTHREADS_CORE();
    unsigned seen = BNG_HTHREADS_LOAD(&bng_mailbox.generation);

    for (;;) {
        unsigned now;
        while ((now = BNG_HTHREADS_LOAD(&bng_mailbox.generation)) == seen)
            BNG_HTHREADS_IDLE();
        seen = now;
        if (bng_mailbox.stop)
            return;
        bng_run(core, bng_mailbox.mask, bng_mailbox.body, bng_mailbox.arg.bytes);
        group_barrier(BNG_HTHREADS_DONE_BARRIER_ID);
    }
}

/* Make every worker return (e.g. before the group ends). */
void bng_hal_hthreads_stop_workers(void)
{
    bng_mailbox.stop = 1;
    BNG_HTHREADS_STORE(&bng_mailbox.generation, bng_mailbox.generation + 1);
}

#else
#error "BNG_HTHREADS_LAUNCH must be BNG_LAUNCH_FANOUT or BNG_LAUNCH_SPMD"
#endif
