/* SPDX-License-Identifier: Apache-2.0 */
/* Copyright 2026 the batchnormgrad authors */
/* Owns: the driver's entry points (bng_entry.h): the vendor's four calls, the
 * explicit-argument calls, the extended family; each checks its call (bng_params.c),
 * picks the runner of its layout and storage, and reports the status. May call:
 * bng_params.h, bng_hal_parallel and the runners of bng_job.h (NCHW's through the
 * storage type's config), bng_status.h; no DMA, no kernel.
 *
 * The driver is written once for all storage types and both memory models, in rooms
 * by concern (generator/plan.py's DRIVER_ROOMS): a storage type enters only through its
 * bng_dtype_config (element sizes, the kernel tables). Names: the functions this file
 * exports begin with bng_entry_, those of the checks with bng_params_; a layout's room's
 * and the ReLU's begin with the room's name (bng_nhwc_, bng_nchw_, bng_relu_,
 * bng_nhwc_memory_); the shared rooms' are named for what they do, listed in their headers
 * (bng_steps.h, bng_staging.h).
 */
#include <stddef.h>
#include "batch_norm_grad.h"
#include "bng_entry.h"
#include "bng_job.h"

int bng_entry_private_kernel(const bng_dtype_config *dtype, const bng_kernel *kernel,
                             size_t batch, size_t channel, int is_train,
                             const void *x, const void *dy, void *dx, const bng_stats *stats)
{
    bng_call call;

    call.op = BNG_OP_FULL;
    call.batch = batch;
    call.channel = channel;
    call.m = (float)batch;
    call.is_train = is_train;
    call.accumulate = 0;
    call.accumulate_dx = 0;
    call.nchw = 0;
    call.spatial = 1;
    call.y = NULL;
    call.relu_bits = 0;
    return bng_nhwc_p_run(dtype, kernel, &call, x, dy, dx, stats, NULL);
}

/* An `op` call of _p on a block: check it, run; the status. */
static int bng_p_block(const bng_dtype_config *dtype, int op, const long long *params,
                       void *x, void *dy, void *dx)
{
    bng_call call;
    int status = bng_params_check(dtype, op, params, x, dy, dx, 0, &call);

    if (status == BNG_OK) {
        const bng_stats stats = bng_params_stats(params);
        float *sums = bng_params_sums(op, params);

        status = BNG_IS_NCHW(&call)
                 ? dtype->nchw->p_run(dtype, &call, x, dy, dx, &stats, sums)
                 : bng_nhwc_p_run(dtype, dtype->kernel_for_channels(call.channel), &call, x, dy,
                                  dx, &stats, sums);
    }
    return status;
}

/* An `op` call of _p: its status goes to the block. */
static void bng_p_call(const bng_dtype_config *dtype, int op, void *x, void *dy, void *dx,
                       long long *params)
{
    if (params == NULL)
        return;     /* nowhere to report: touch nothing */
    params[BNG_PARAM_STATUS] = bng_p_block(dtype, op, params, x, dy, dx);
}

void bng_entry_private(const bng_dtype_config *dtype, void *x, void *dy, void *dx,
                       long long *params)
{
    bng_p_call(dtype, BNG_OP_FULL, x, dy, dx, params);
}

/* An `op` call of _s on `params`, a plain copy of its block: the status (BNG_ENOMEM when
 * the HAL could not reserve a selected core's private memory, in which case no output
 * was touched), or BNG_STATUS_NOT_SELECTED on a core outside core_mask that the SPMD
 * launch model made call it: it took no part, the selected cores have the outcome. */
static int bng_s_block(const bng_dtype_config *dtype, int op, const long long *params,
                       void *x, void *dy, void *dx, int core_mask)
{
    const unsigned mask = (unsigned)core_mask & BNG_ALL_CORES;
    bng_staged_job job;
    bng_call call;
    bng_stats stats;
    int status = bng_params_check(dtype, op, params, x, dy, dx, 1, &call);

    if (status == BNG_OK && mask == 0)
        status = BNG_ECOREMASK;
    if (status != BNG_OK)
        return status;
    stats = bng_params_stats(params);
    bng_job_init(&job, dtype, dtype->kernel_for_channels(call.channel), &call, mask, x, dy, dx,
                 &stats, bng_params_sums(op, params));
    return bng_status_of_hal(bng_hal_parallel(
        mask, BNG_IS_NCHW(&call) ? dtype->nchw->s_core : bng_nhwc_s_core, &job, sizeof job));
}

/* An `op` call of _s. The parameter block lives in shared memory (BNG_SHARED_PARAMS, a
 * BNG_SHARED pointer): its input slots are read once into a plain copy, the status is
 * written back, after bng_hal_parallel returns, on every core that took part (SPMD:
 * the selected ones). */
static void bng_s_call(const bng_dtype_config *dtype, int op, void *x, void *dy, void *dx,
                       int core_mask)
{
    BNG_SHARED long long *shared_params = BNG_SHARED_PARAMS;
    long long params[BNG_SHARED_PARAMS_SLOTS];
    int status, slot;

    /* The input slots the call uses; the status and reserved slots are never read,
     * nor are the extended block's slots by the vendor's call. */
    for (slot = 0; slot < BNG_SHARED_PARAMS_SLOTS; slot++)
        params[slot] = bng_params_reads_slot(op, slot) ? shared_params[slot] : 0;
    status = bng_s_block(dtype, op, params, x, dy, dx, core_mask);
    if (status != BNG_STATUS_NOT_SELECTED)
        bng_status_report(shared_params, status);
}

void bng_entry_shared(const bng_dtype_config *dtype, void *x, void *dy, void *dx,
                      int core_mask)
{
    bng_s_call(dtype, BNG_OP_FULL, x, dy, dx, core_mask);
}

/* ---- the explicit-argument calls (batchnormgrad.h) ----
 *
 * The vendor's call on a block built from the arguments (bng_params_block) in the
 * caller's frame: the same checks and the same run as the block's calls, and never
 * BNG_SHARED_PARAMS, which firmware may be using for the block's _s. There is no status
 * slot: the status is kept for the core that made the call (bng_status_keep). */

void bng_entry_private_args(const bng_dtype_config *dtype, void *x, void *dy, void *dx,
                            const bng_stats *stats, int batch, int channel, int is_train)
{
    long long params[BNG_PARAMS_LEN];

    bng_params_block(params, stats, batch, channel, is_train);
    bng_status_keep(bng_p_block(dtype, BNG_OP_FULL, params, x, dy, dx));
}

void bng_entry_shared_args(const bng_dtype_config *dtype, void *x, void *dy, void *dx,
                           const bng_stats *stats, int batch, int channel, int is_train,
                           int core_mask)
{
    long long params[BNG_PARAMS_LEN];

    bng_params_block(params, stats, batch, channel, is_train);
    bng_status_keep(bng_s_block(dtype, BNG_OP_FULL, params, x, dy, dx, core_mask));
}

#if BNG_HAS_EXTENSIONS
/* ---- the entry points of batch_norm_grad_ext.h ---- */

void bng_entry_ext_private(const bng_dtype_config *dtype, int op, void *x, void *dy,
                           void *dx, long long *params)
{
    bng_p_call(dtype, op, x, dy, dx, params);
}

void bng_entry_ext_shared(const bng_dtype_config *dtype, int op, void *x, void *dy,
                          void *dx, int core_mask)
{
    bng_s_call(dtype, op, x, dy, dx, core_mask);
}
#endif
