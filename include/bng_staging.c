/* SPDX-License-Identifier: Apache-2.0 */
/* Copyright 2026 the batchnormgrad authors */
/* Owns: the staging both layouts and the forward share: a core's rows (NHWC), its
 * private memory and tile buffers, the double-buffered pass, the per-channel values and
 * partial sums by DMA. May call:
 * the HAL's DMA and private memory, bng_steps.h; no kernel.
 */
#include "bng_staging.h"

#ifdef BNG_HOST
float bng_host_scratch[BNG_SCRATCH_FLOATS];
float bng_host_gsm[BNG_GSM_BYTES / sizeof(float) + 1];
#endif

BNG_VMEM unsigned char *bng_stage_memory(const bng_staged_job *job, unsigned core, size_t *bytes)
{
    BNG_VMEM unsigned char *base;

    if (BNG_ALONE(job)) {
        *bytes = job->workspace_bytes;
        return job->workspace;
    }
    *bytes = 0;
    base = bng_hal_private(core, bytes);
    return base != NULL && *bytes >= BNG_PRIVATE_BYTES ? base : NULL;
}

void bng_stage_slice(unsigned mask, unsigned core, size_t batch, bng_slice *slice)
{
    const unsigned cores = bng_popcount(mask);

    slice->cores = cores;
    slice->rank = bng_popcount(mask & ((1u << core) - 1u));
    slice->group_rows = bng_group_rows(batch);
    slice->groups = (batch + slice->group_rows - 1) / slice->group_rows;
    slice->begin = bng_min(slice->groups * slice->rank / cores * slice->group_rows, batch);
    slice->end = bng_min(slice->groups * (slice->rank + 1) / cores * slice->group_rows, batch);
    slice->idle = slice->begin == slice->end && slice->rank != 0;
}

BNG_VMEM void *bng_take(BNG_VMEM unsigned char **next, size_t bytes)
{
    BNG_VMEM void *p = *next;
    *next += BNG_ALIGN_UP(bytes);
    return p;
}

void bng_take_tiles(BNG_VMEM unsigned char **next, size_t bytes, int relu, int accumulate_dx,
                    bng_tile_buffers *buffers)
{
    buffers->bytes = BNG_ALIGN_UP(bytes);
    buffers->x[0] = bng_take(next, bytes);
    buffers->x[1] = bng_take(next, bytes);
    buffers->dy[0] = bng_take(next, bytes);
    buffers->dy[1] = bng_take(next, bytes);
    buffers->y = relu ? bng_take(next, bytes) : NULL;
    buffers->dx[0] = accumulate_dx ? bng_take(next, bytes) : NULL;
    buffers->dx[1] = accumulate_dx ? bng_take(next, bytes) : NULL;
}

void bng_take_resident(BNG_VMEM unsigned char *next, const BNG_VMEM unsigned char *end,
                       bng_tile_buffers *buffers)
{
    buffers->resident_bytes = (size_t)(end - next) / 2 / BNG_ALIGN * BNG_ALIGN;
    buffers->x_resident = next;
    buffers->dy_resident = next + buffers->resident_bytes;
}

/* Whether tiles[t] adds its gradient to the old dx (pass 2 of BNG_FLAG_ACCUMULATE_DX,
 * where its layout gave it a buffer for that): a third get, of the old dx. */
static int bng_pass_adds_old_dx(const bng_pass *pass, unsigned t)
{
    return pass->again && pass->tiles[t].dx != NULL;
}

/* Start the DMA of tiles[t]'s x (pass 1, and pass 2 in training: dx-only has no x) and
 * dy (the forward's job has none) into its place: from the call's arrays, from GSM (a
 * kept tile in pass 2), or not at all (a resident tile in pass 2); in pass 2 also the
 * old dx where the tile adds to it, from the call's dx (in place, that input's rows:
 * each row is fetched before its dx is put). */
static void bng_pass_fetch(bng_pass *pass, unsigned t)
{
    const bng_staged_job *job = pass->job;
    const bng_tile *tile = &pass->tiles[t];
    const size_t element = job->dtype->element_bytes;
    const int with_x = !pass->again || job->call.is_train, with_dy = job->dy != NULL;
    const BNG_SHARED void *x, *dy;
    size_t stride;

    pass->gets[t][2] = bng_pass_adds_old_dx(pass, t)
                       ? bng_hal_dma_get(tile->dx, bng_shared_at(job->dx, tile->at, element),
                                         tile->rows, tile->row_bytes, tile->stride, tile->pitch)
                       : BNG_HAL_DMA_DONE;
    if (pass->again && tile->resident) {
        pass->gets[t][0] = pass->gets[t][1] = BNG_HAL_DMA_DONE;
        return;
    }
    if (pass->again && tile->kept) {
        x = tile->gsm_x;
        dy = tile->gsm_dy;
        stride = tile->row_bytes;
    } else {
        x = with_x ? bng_shared_at(job->x, tile->at, element) : NULL;
        dy = with_dy ? bng_shared_at(job->dy, tile->at, element) : NULL;
        stride = tile->stride;
    }
    pass->gets[t][0] = with_x ? bng_hal_dma_get(tile->x, x, tile->rows, tile->row_bytes, stride,
                                                tile->pitch)
                              : BNG_HAL_DMA_DONE;
    pass->gets[t][1] = with_dy ? bng_hal_dma_get(tile->dy, dy, tile->rows, tile->row_bytes, stride,
                                                 tile->pitch)
                               : BNG_HAL_DMA_DONE;
}

void bng_pass_drain(bng_pass *pass, unsigned t)
{
    bng_hal_dma_wait(pass->puts[t][0]);
    bng_hal_dma_wait(pass->puts[t][1]);
}

static void bng_pass_wait_gets(bng_pass *pass, unsigned t)
{
    bng_hal_dma_wait(pass->gets[t][0]);
    bng_hal_dma_wait(pass->gets[t][1]);
    bng_hal_dma_wait(pass->gets[t][2]);
}

void bng_pass_run(bng_pass *pass)
{
    unsigned t = 0;
    int more;

    pass->puts[0][0] = pass->puts[0][1] = pass->puts[1][0] = pass->puts[1][1] = BNG_HAL_DMA_DONE;
    bng_pass_fetch(pass, 0);
    do {
        /* three gets a tile (the old dx's too): this one's done before the next one's
         * start, the contract's outstanding transfers (BNG_DRIVER_OUTSTANDING_DMA);
         * else after it, both tiles' in flight. Each handle is waited once. */
        const int three = bng_pass_adds_old_dx(pass, t);

        more = pass->next(pass, t);
        if (three)
            bng_pass_wait_gets(pass, t);
        if (more) {
            bng_pass_drain(pass, t ^ 1);
            bng_pass_fetch(pass, t ^ 1);
        }
        if (!three)
            bng_pass_wait_gets(pass, t);
        pass->work(pass, t);
        t ^= 1;
    } while (more);
}

void bng_pass_put_dx(bng_pass *pass, unsigned t, const BNG_VMEM unsigned char *rows)
{
    const bng_staged_job *job = pass->job;
    const bng_tile *tile = &pass->tiles[t];

    pass->puts[t][0] = bng_hal_dma_put(bng_shared_at_mut(job->dx, tile->at, job->dtype->element_bytes),
                                       rows, tile->rows, tile->row_bytes, tile->stride,
                                       tile->pitch);
}

void bng_stage_stats(const bng_staged_job *job, size_t first, size_t n, BNG_VMEM void *mean,
                     BNG_VMEM void *invar, BNG_VMEM void *scale)
{
    const bng_call *call = &job->call;
    const size_t stat = job->dtype->stats_bytes, bytes = n * stat;
    bng_hal_dma gets[3] = {BNG_HAL_DMA_DONE, BNG_HAL_DMA_DONE, BNG_HAL_DMA_DONE};
    size_t i;

    /* The three in flight at once: one transfer's start-up for all. */
    if (!BNG_IS_DX_ONLY(call))
        gets[0] = bng_hal_dma_get(mean, bng_shared_at(job->stats.mean, first, stat), 1, bytes, 0, 0);
    if (!BNG_IS_REDUCE(call)) {
        gets[1] = bng_hal_dma_get(invar, bng_shared_at(job->stats.invar, first, stat), 1, bytes, 0, 0);
        gets[2] = bng_hal_dma_get(scale, bng_shared_at(job->stats.scale, first, stat), 1, bytes, 0, 0);
    }
    for (i = 0; i < 3; i++)
        bng_hal_dma_wait(gets[i]);
}

void bng_stage_outputs(const bng_staged_job *job, size_t first, size_t n, BNG_VMEM void *dbias,
                       BNG_VMEM void *dscale, int put)
{
    const size_t stat = job->dtype->stats_bytes, bytes = n * stat;
    bng_hal_dma both[2];

    if (put) {
        both[0] = bng_hal_dma_put(bng_shared_at_mut(job->stats.dbias, first, stat), dbias, 1, bytes, 0, 0);
        both[1] = bng_hal_dma_put(bng_shared_at_mut(job->stats.dscale, first, stat), dscale, 1, bytes, 0, 0);
    } else {
        both[0] = bng_hal_dma_get(dbias, bng_shared_at(job->stats.dbias, first, stat), 1, bytes, 0, 0);
        both[1] = bng_hal_dma_get(dscale, bng_shared_at(job->stats.dscale, first, stat), 1, bytes, 0, 0);
    }
    bng_hal_dma_wait(both[0]);
    bng_hal_dma_wait(both[1]);
}

void bng_stage_sums(const bng_staged_job *job, size_t first, size_t n, BNG_VMEM float *sum_dy,
                    BNG_VMEM float *sum_dyxm, int put)
{
    BNG_SHARED float *dy = job->sums + first, *dyxm = job->sums + job->call.channel + first;
    const size_t bytes = n * sizeof(float);
    bng_hal_dma both[2];

    if (put) {
        both[0] = bng_hal_dma_put(dy, sum_dy, 1, bytes, 0, 0);
        both[1] = bng_hal_dma_put(dyxm, sum_dyxm, 1, bytes, 0, 0);
    } else {
        both[0] = bng_hal_dma_get(sum_dy, dy, 1, bytes, 0, 0);
        both[1] = bng_hal_dma_get(sum_dyxm, dyxm, 1, bytes, 0, 0);
    }
    bng_hal_dma_wait(both[0]);
    bng_hal_dma_wait(both[1]);
}

#if BNG_SPLIT_MEMORY
int bng_stage_alone(bng_staged_job *job)
{
    job->alone = 1;
    job->workspace = bng_hal_p_workspace(&job->workspace_bytes);
    if (job->workspace == NULL)
        return 0;
    if (job->workspace_bytes < BNG_P_WORKSPACE_BYTES) {
        bng_hal_p_workspace_release(job->workspace);     /* a HAL that broke its contract */
        return 0;
    }
    return 1;
}

int bng_stage_p_run(bng_staged_job *job, void (*s_core)(unsigned core, void *job))
{
    if (!bng_stage_alone(job))
        return BNG_ENOMEM;
    s_core(0, job);
    bng_hal_p_workspace_release(job->workspace);
    return BNG_OK;
}
#endif

void bng_stage_put_limbs(BNG_SHARED float *count, const BNG_VMEM float *limbs, size_t n)
{
#if BNG_SPLIT_MEMORY
    size_t i;
    for (i = 0; i < n; i++)
        bng_hal_dma_wait(bng_hal_dma_put(count + i, limbs + i * BNG_V, 1, sizeof(float), 0, 0));
#else
    bng_hal_dma_wait(bng_hal_dma_put(count, limbs, 1, n * sizeof(float), 0, 0));
#endif
}

void bng_stage_count(const bng_staged_job *job, size_t rows, BNG_VMEM float *limbs)
{
    bng_step_count(rows, limbs);
    bng_stage_put_limbs(job->sums + 2 * job->call.channel, limbs, BNG_SUMS_COUNT_LIMBS);
}
