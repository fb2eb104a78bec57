/* Host emulation of include/bng_hal.h: not for firmware.
 *
 * The cores are threads that live across calls (created on first use; the calling
 * thread is the first selected core), so that a race shows under ThreadSanitizer and a
 * call costs a wake-up, not a thread start. Each core's private memory is an arena of
 * BNG_PRIVATE_BYTES, and DMA goes through the host's model of the DSP's engine
 * (bng_dma_engine.h): deferred, poisoned and checked, or with BNG_HAL_HOST=fast in the
 * environment plain synchronous copies (what make bench times). Built per target: the
 * core count and arena size come from bng_kernels.h.
 */
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>

#include "bng_dma_engine.h"
#include "bng_hal.h"
#include "bng_kernels.h"

/* Each core thread sleeps on its own semaphore, so a call wakes only the cores it
 * selects. */
static pthread_mutex_t cluster = PTHREAD_MUTEX_INITIALIZER;   /* one parallel region at a time */
static pthread_barrier_t barrier;
static sem_t start[BNG_TARGET_CORES], finished;
static int started;
static unsigned generation;
static bng_hal_body call_body;
static void *call_arg;
static __thread int current_core = -1;

static unsigned this_core(const char *call)
{
    if (current_core < 0)
        bng_dma_engine_fail(call, "called outside a core's body", current_core);
    return (unsigned)current_core;
}

void *bng_hal_private(unsigned core, size_t *bytes)
{
    if (core != this_core("bng_hal_private"))
        bng_dma_engine_fail("bng_hal_private", "a core asked for another core's memory", current_core);
    *bytes = BNG_PRIVATE_BYTES;
    return bng_dma_engine_arena(core);
}

bng_hal_dma bng_hal_dma_get(void *dst, const void *src, size_t rows, size_t row_bytes,
                            size_t src_stride)
{
    return bng_dma_engine_issue(this_core("bng_hal_dma_get"), "bng_hal_dma_get", dst, row_bytes,
                                src, src_stride, rows, row_bytes, dst);
}

bng_hal_dma bng_hal_dma_put(void *dst, const void *src, size_t rows, size_t row_bytes,
                            size_t dst_stride)
{
    return bng_dma_engine_issue(this_core("bng_hal_dma_put"), "bng_hal_dma_put", dst, dst_stride,
                                src, row_bytes, rows, row_bytes, src);
}

void bng_hal_dma_wait(bng_hal_dma handle)
{
    bng_dma_engine_wait(this_core("bng_hal_dma_wait"), handle);
}

void bng_hal_barrier(void)
{
    bng_dma_engine_complete_puts(this_core("bng_hal_barrier"));   /* puts visible after it */
    pthread_barrier_wait(&barrier);
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

    for (;;) {
        while (sem_wait(&start[core]) != 0)
            ;   /* EINTR */
        run_body(core, generation);
        sem_post(&finished);
    }
    return NULL;
}

static void start_cores(void)
{
    unsigned core;

    bng_dma_engine_init(BNG_TARGET_CORES, BNG_PRIVATE_BYTES);
    if (sem_init(&finished, 0, 0) != 0)
        bng_dma_engine_fail("bng_hal_parallel", "cannot create a semaphore", -1);
    for (core = 0; core < BNG_TARGET_CORES; core++) {
        pthread_t thread;
        if (sem_init(&start[core], 0, 0) != 0
            || pthread_create(&thread, NULL, core_main, (void *)(uintptr_t)core) != 0
            || pthread_detach(thread) != 0)
            bng_dma_engine_fail("bng_hal_parallel", "cannot start a core thread", (int)core);
    }
    started = 1;
}

void bng_hal_parallel(unsigned mask, bng_hal_body body, void *arg, size_t arg_bytes)
{
    unsigned n = 0, core, first = BNG_TARGET_CORES;

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
    pthread_barrier_init(&barrier, NULL, n);
    call_body = body;
    call_arg = arg;
    generation++;
    for (core = first + 1; core < BNG_TARGET_CORES; core++)
        if (mask & (1u << core))
            sem_post(&start[core]);
    run_body(first, generation);
    for (core = 1; core < n; core++)
        while (sem_wait(&finished) != 0)
            ;
    pthread_barrier_destroy(&barrier);
    pthread_mutex_unlock(&cluster);
}
