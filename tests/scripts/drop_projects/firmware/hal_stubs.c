/* The six functions of bng_hal.h as a firmware without a HAL of its own yet links
 * them: stubs (docs/porting.md: a build that calls only _p may supply stubs). */
#include "bng_hal.h"

int bng_hal_parallel(unsigned mask, bng_hal_body body, void *arg, size_t arg_bytes)
{
    (void)mask; (void)body; (void)arg; (void)arg_bytes;
    return BNG_HAL_ENOMEM;
}

void bng_hal_barrier(void) {}

BNG_VMEM void *bng_hal_private(unsigned core, size_t *bytes)
{
    (void)core;
    *bytes = 0;
    return 0;
}

bng_hal_dma bng_hal_dma_get(BNG_VMEM void *dst, const BNG_SHARED void *src, size_t rows,
                            size_t row_bytes, size_t shared_stride, size_t private_stride)
{
    (void)dst; (void)src; (void)rows; (void)row_bytes; (void)shared_stride; (void)private_stride;
    return BNG_HAL_DMA_DONE;
}

bng_hal_dma bng_hal_dma_put(BNG_SHARED void *dst, const BNG_VMEM void *src, size_t rows,
                            size_t row_bytes, size_t shared_stride, size_t private_stride)
{
    (void)dst; (void)src; (void)rows; (void)row_bytes; (void)shared_stride; (void)private_stride;
    return BNG_HAL_DMA_DONE;
}

void bng_hal_dma_wait(bng_hal_dma handle) { (void)handle; }
