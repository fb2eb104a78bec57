/* Hardware abstraction for the shared-storage entry points (fp/hp_batch_norm_grad_s).
 *
 * Firmware implements these functions for its DSP cluster, or vendors the reference
 * implementation for NUDT's hthreads device runtime (include/hal/bng_hal_hthreads.c);
 * include/host/bng_hal_host.c emulates them on a host (a thread per core, a bounded
 * arena per core, DMA deferred and checked). The private-storage entry points (_p) use
 * none of them.
 *
 * Contracts:
 * - bng_hal_parallel(mask, body, arg, arg_bytes): run body(core, arg') once on every
 *   core whose bit is set in mask (mask is never 0 and has no bit at or above the core
 *   count), and return when all have returned. arg points to arg_bytes bytes that
 *   every selected core must read: arg' is arg, or a copy the HAL made where every core
 *   can read it (the caller's stack may be private to its core). One call at a time per
 *   cluster.
 * - bng_hal_barrier(): called by every core inside body; returns on each once all cores
 *   of the current bng_hal_parallel have called it, with their DMA puts visible.
 * - bng_hal_private(core, &bytes): the core's private (array) memory the library may use
 *   during body, at least BNG_PRIVATE_BYTES (targets.yaml memory.private_bytes), aligned
 *   to 64 bytes; *bytes receives its size.
 * - bng_hal_dma_get(dst, src, rows, row_bytes, src_stride): copy rows rows of row_bytes
 *   from shared memory (rows src_stride bytes apart) to private memory (rows packed).
 *   bng_hal_dma_put(dst, src, rows, row_bytes, dst_stride): the reverse. Both may run
 *   asynchronously: the returned handle is passed to bng_hal_dma_wait, after which the
 *   transfer is complete. Waiting twice on a handle, or on BNG_HAL_DMA_DONE, returns at
 *   once. At most 4 transfers are outstanding at once per core.
 */
#ifndef BNG_HAL_H
#define BNG_HAL_H

#include <stddef.h>

typedef void (*bng_hal_body)(unsigned core, void *arg);
typedef int bng_hal_dma;
#define BNG_HAL_DMA_DONE 0

void bng_hal_parallel(unsigned mask, bng_hal_body body, void *arg, size_t arg_bytes);
void bng_hal_barrier(void);
void *bng_hal_private(unsigned core, size_t *bytes);
bng_hal_dma bng_hal_dma_get(void *dst, const void *src, size_t rows, size_t row_bytes,
                            size_t src_stride);
bng_hal_dma bng_hal_dma_put(void *dst, const void *src, size_t rows, size_t row_bytes,
                            size_t dst_stride);
void bng_hal_dma_wait(bng_hal_dma handle);

#endif /* BNG_HAL_H */
