/* SPDX-License-Identifier: Apache-2.0 */
/* Copyright 2026 the batchnormgrad authors */
/* Owns: what the training forward's staged runs (NHWC's bng_fwd_nhwc_staged.c, NCHW's
 * bng_fwd_nchw_staged.c) share: a core's job from the launch (the HAL's copy of it; a
 * split target's _p, its own), its copies
 * of a run of channels in private memory, and their moves by DMA: the per-channel inputs
 * in, the results out, the partials buffer in or out; and a split target's _p, a staged
 * run on the calling core alone. May call: bng_staging.h, the HAL's DMA and _p's
 * workspace; no kernel, no barrier. Compiled only for a target with the forward
 * extension.
 */
#include "batch_norm_fwd.h"
#include "bng_fwd.h"
#include "bng_staging.h"

void bng_fwd_job_init(bng_fwd_job *job, const bng_fwd_launch *launch)
{
    static const bng_stats none = {NULL, NULL, NULL, NULL, NULL};
    const bng_fwd_call *call = &launch->call;
    const bng_fwd_config *config = launch->config;
    bng_call rows;

    /* what the staging reads of a call: its rows (NCHW: its planes), and that pass 2
     * reads x again */
    rows.op = BNG_OP_FULL;
    rows.batch = call->batch;
    rows.channel = call->channel;
    rows.m = (float)call->batch;
    rows.is_train = 1;
    rows.accumulate = 0;
    rows.accumulate_dx = 0;
    rows.nchw = call->nchw;
    rows.spatial = call->spatial;
    rows.y = NULL;
    rows.relu_bits = 0;
    bng_job_init(&job->base, &config->sizes, NULL, &rows, launch->mask, launch->x, NULL, launch->y,
                 &none, NULL);
    job->config = config;
    job->kernel = config->kernel_for_channels(call->channel);
    job->nchw_kernel = config->nchw;
    job->call = *call;
    job->scale = (const BNG_SHARED void *)call->scale;
    job->bias = (const BNG_SHARED void *)call->bias;
    job->mean = (BNG_SHARED void *)call->mean;
    job->invar = (BNG_SHARED void *)call->invar;
    job->moving_mean = (BNG_SHARED void *)call->moving_mean;
    job->moving_var = (BNG_SHARED void *)call->moving_var;
    job->partials = (BNG_SHARED float *)call->partials;
    job->relu_bits = (BNG_SHARED void *)call->relu_bits;
}

void bng_fwd_take_copies(bng_fwd_copies *k, BNG_VMEM unsigned char **next, size_t elements)
{
    const size_t floats = elements * sizeof(float);
    const size_t stats = elements * k->job->config->sizes.stats_bytes;

    k->a.shift = bng_take(next, floats);
    k->a.mean = bng_take(next, floats);
    k->a.m2 = bng_take(next, floats);
    k->a.part_mean = bng_take(next, floats);
    k->a.part_m2 = bng_take(next, floats);
    k->a.gain = bng_take(next, floats);
    k->a.bias = bng_take(next, floats);
    k->stats.scale = k->scale = bng_take(next, stats);
    k->stats.bias = k->bias = bng_take(next, stats);
    k->stats.mean = bng_take(next, stats);
    k->stats.invar = bng_take(next, stats);
    k->stats.moving_mean = bng_take(next, stats);
    k->stats.moving_var = bng_take(next, stats);
}

/* One of the channels' per-channel arrays into the core's copy, and back. */
static bng_hal_dma bng_fwd_array_in(const bng_fwd_copies *k, BNG_VMEM void *copy,
                                    const BNG_SHARED void *array)
{
    const size_t stat = k->job->config->sizes.stats_bytes;

    return bng_hal_dma_get(copy, bng_shared_at(array, k->first, stat), 1, k->n * stat, 0, 0);
}

static bng_hal_dma bng_fwd_array_out(const bng_fwd_copies *k, BNG_SHARED void *array,
                                     const BNG_VMEM void *copy)
{
    const size_t stat = k->job->config->sizes.stats_bytes;

    return bng_hal_dma_put(bng_shared_at_mut(array, k->first, stat), copy, 1, k->n * stat, 0, 0);
}

/* The inputs the call reads (the check left the others NULL): scale (not with
 * FIX_GAMMA), bias (not with NO_BIAS), the moving statistics (not with KEEP_MOVING);
 * none with PARTIALS_OUT. Four in flight at once. */
void bng_fwd_stage_in(const bng_fwd_copies *k)
{
    const bng_fwd_job *job = k->job;
    bng_hal_dma gets[4] = {BNG_HAL_DMA_DONE, BNG_HAL_DMA_DONE, BNG_HAL_DMA_DONE, BNG_HAL_DMA_DONE};
    size_t i;

    if (job->scale != NULL)
        gets[0] = bng_fwd_array_in(k, k->scale, job->scale);
    if (job->bias != NULL)
        gets[1] = bng_fwd_array_in(k, k->bias, job->bias);
    if (job->moving_mean != NULL) {
        gets[2] = bng_fwd_array_in(k, k->stats.moving_mean, job->moving_mean);
        gets[3] = bng_fwd_array_in(k, k->stats.moving_var, job->moving_var);
    }
    for (i = 0; i < 4; i++)
        bng_hal_dma_wait(gets[i]);
}

/* The saved statistics (not with NO_SAVE), and the moving ones where the call updates
 * them. */
void bng_fwd_stage_out(const bng_fwd_copies *k)
{
    const bng_fwd_job *job = k->job;
    bng_hal_dma puts[4] = {BNG_HAL_DMA_DONE, BNG_HAL_DMA_DONE, BNG_HAL_DMA_DONE, BNG_HAL_DMA_DONE};
    size_t i;

    if (job->mean != NULL) {
        puts[0] = bng_fwd_array_out(k, job->mean, k->stats.mean);
        puts[1] = bng_fwd_array_out(k, job->invar, k->stats.invar);
    }
    if (!job->call.global_stats && !job->call.keep_moving) {
        puts[2] = bng_fwd_array_out(k, job->moving_mean, k->stats.moving_mean);
        puts[3] = bng_fwd_array_out(k, job->moving_var, k->stats.moving_var);
    }
    for (i = 0; i < 4; i++)
        bng_hal_dma_wait(puts[i]);
}

/* Array `array` of the partials buffer (BNG_FWD_PARTIAL_*), from the first channel. */
static BNG_SHARED float *bng_fwd_partials_at(const bng_fwd_copies *k, int array)
{
    return k->job->partials + (size_t)array * k->job->call.channel + k->first;
}

void bng_fwd_stage_partials(const bng_fwd_copies *k, int out, BNG_VMEM float *limbs)
{
    const size_t bytes = k->n * sizeof(float);
    BNG_VMEM float *const stats[3] = {k->a.shift, k->a.mean, k->a.m2};
    bng_hal_dma moves[3];
    int i;

    for (i = 0; i < 3; i++)
        moves[i] = out ? bng_hal_dma_put(bng_fwd_partials_at(k, i), stats[i], 1, bytes, 0, 0)
                       : bng_hal_dma_get(stats[i], bng_fwd_partials_at(k, i), 1, bytes, 0, 0);
    for (i = 0; i < 3; i++)
        bng_hal_dma_wait(moves[i]);
    if (out && k->first == 0) {
        bng_fwd_step_count(k->job->call.count, limbs);
        bng_stage_put_limbs(bng_fwd_partials_at(k, BNG_FWD_PARTIAL_COUNT), limbs, 2);
    }
}

#if BNG_SPLIT_MEMORY
int bng_fwd_stage_p_run(const bng_fwd_config *config, const bng_fwd_call *call, const void *x,
                        void *y, void (*run)(const bng_fwd_job *job, unsigned core))
{
    bng_fwd_launch launch;
    bng_fwd_job job;

    launch.config = config;
    launch.call = *call;
    launch.mask = 1u;               /* rank 0 of one */
    launch.x = x;
    launch.y = y;
    bng_fwd_job_init(&job, &launch);
    if (!bng_stage_alone(&job.base))
        return BNG_ENOMEM;
    run(&job, 0);
    bng_hal_p_workspace_release(job.base.workspace);
    return BNG_OK;
}
#endif
