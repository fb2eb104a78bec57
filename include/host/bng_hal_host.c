/* Host emulation of include/bng_hal.h: not for firmware.
 *
 * Each selected core runs on its own thread, so that a race shows under
 * ThreadSanitizer. Private memory is one arena per core of BNG_PRIVATE_BYTES; a DMA
 * whose private side leaves the calling core's arena aborts the program (a test
 * failure, never a silent overrun). DMA is a synchronous copy.
 * Built per target: it takes the core count and arena size from bng_kernels.h.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bng_hal.h"
#include "bng_kernels.h"

long long bng_host_shared_params[BNG_PARAMS_LEN];

static pthread_mutex_t cluster = PTHREAD_MUTEX_INITIALIZER;   /* one parallel region at a time */
static pthread_barrier_t barrier;
static unsigned char *arenas[BNG_TARGET_CORES];
static __thread int current_core = -1;

static void fail(const char *what)
{
    fprintf(stderr, "bng_hal_host: %s\n", what);
    abort();
}

void *bng_hal_private(unsigned core, size_t *bytes)
{
    if ((int)core != current_core)
        fail("bng_hal_private: a core asked for another core's memory");
    *bytes = BNG_PRIVATE_BYTES;
    return arenas[core];
}

/* The private side of a transfer must lie in the calling core's arena. */
static void check_private(const void *p, size_t bytes)
{
    const uintptr_t base = (uintptr_t)arenas[current_core], at = (uintptr_t)p;
    if (current_core < 0 || at < base || at - base > BNG_PRIVATE_BYTES
        || bytes > BNG_PRIVATE_BYTES - (at - base))
        fail("DMA outside the calling core's private memory");
}

static void copy_rows(unsigned char *dst, size_t dst_stride, const unsigned char *src,
                      size_t src_stride, size_t rows, size_t row_bytes)
{
    size_t r;
    for (r = 0; r < rows; r++)
        memcpy(dst + r * dst_stride, src + r * src_stride, row_bytes);
}

bng_hal_dma bng_hal_dma_get(void *dst, const void *src, size_t rows, size_t row_bytes,
                            size_t src_stride)
{
    check_private(dst, rows * row_bytes);
    copy_rows(dst, row_bytes, src, src_stride, rows, row_bytes);
    return BNG_HAL_DMA_DONE;
}

bng_hal_dma bng_hal_dma_put(void *dst, const void *src, size_t rows, size_t row_bytes,
                            size_t dst_stride)
{
    check_private(src, rows * row_bytes);
    copy_rows(dst, dst_stride, src, row_bytes, rows, row_bytes);
    return BNG_HAL_DMA_DONE;
}

void bng_hal_dma_wait(bng_hal_dma handle)
{
    (void)handle;   /* the copies above are synchronous */
}

void bng_hal_barrier(void)
{
    pthread_barrier_wait(&barrier);
}

typedef struct {
    unsigned core;
    bng_hal_body body;
    void *arg;
} core_start;

static void *core_main(void *p)
{
    const core_start *start = p;
    current_core = (int)start->core;
    start->body(start->core, start->arg);
    current_core = -1;
    return NULL;
}

void bng_hal_parallel(unsigned mask, bng_hal_body body, void *arg)
{
    pthread_t threads[BNG_TARGET_CORES];
    core_start starts[BNG_TARGET_CORES];
    unsigned core, n = 0, i;

    pthread_mutex_lock(&cluster);
    for (core = 0; core < BNG_TARGET_CORES; core++)
        if (mask & (1u << core)) {
            if (!arenas[core] && !(arenas[core] = aligned_alloc(64, BNG_PRIVATE_BYTES)))
                fail("cannot allocate a private arena");
            starts[n].core = core;
            starts[n].body = body;
            starts[n].arg = arg;
            n++;
        }
    if (n == 0 || (mask >> BNG_TARGET_CORES) != 0)
        fail("bng_hal_parallel: bad core mask");
    pthread_barrier_init(&barrier, NULL, n);
    for (i = 0; i < n; i++)
        if (pthread_create(&threads[i], NULL, core_main, &starts[i]) != 0)
            fail("pthread_create");
    for (i = 0; i < n; i++)
        pthread_join(threads[i], NULL);
    pthread_barrier_destroy(&barrier);
    pthread_mutex_unlock(&cluster);
}
