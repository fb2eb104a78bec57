/* SPDX-License-Identifier: Apache-2.0 */
/* Copyright 2026 the batchnormgrad authors */
/* Owns: the training forward's entry points (fp_/hp_batch_norm_forward_p's and _s's
 * bodies, and the vendor's inference calls' on a block of their arguments): check the
 * call (bng_fwd_params.c), run it (_p: bng_fwd_nhwc_direct.c, or with BNG_FWD_NCHW
 * bng_fwd_nchw_direct.c, on a split target their staged rooms; _s:
 * bng_fwd_nhwc_staged.c or bng_fwd_nchw_staged.c on the cores of core_mask, through
 * bng_hal_parallel), report the status. May call:
 * bng_fwd.h, bng_hal_parallel, bng_status.h. Compiled only for a target with the
 * forward extension.
 */
#include <stddef.h>
#include <stdint.h>
#include "batch_norm_fwd.h"
#include "bng_status.h"
#include "bng_fwd.h"

void bng_fwd_entry_private(const bng_fwd_config *config, void *x, void *y, long long *params)
{
    bng_fwd_call call;
    int status;

    if (params == NULL)
        return;     /* nowhere to report: touch nothing */
    status = bng_fwd_params_check(config, params, x, y, BNG_FWD_FLAGS, &call);
#if BNG_HAS_FWD_NCHW
    if (status == BNG_OK && call.nchw)
        status = bng_fwd_nchw_p_run(config, &call, x, y);
    else
#endif
    if (status == BNG_OK)
        status = bng_fwd_nhwc_p_run(config, &call, x, y);
    params[BNG_PARAM_STATUS] = status;
}

/* The slots _s reads of its block: all but the status and the reserved ones (the
 * partials', the ReLU bits' and NCHW's spatial slot too: the check looks at them only
 * where the flags use them). */
static int bng_fwd_reads_slot(int slot)
{
    return slot != BNG_PARAM_STATUS && (slot != BNG_FWD_SLOT_SPATIAL || BNG_HAS_FWD_NCHW) && slot != 15;
}

/* A call of _s on `params`, a plain copy of its block: the status (BNG_ENOMEM when the
 * HAL could not reserve a selected core's private memory: nothing written), or
 * BNG_STATUS_NOT_SELECTED on a core outside core_mask that the SPMD launch model made
 * call it (as the backward's _s, bng_entry.c). */
static int bng_fwd_s_block(const bng_fwd_config *config, const long long *params,
                           long long allowed, const void *x, void *y, int core_mask)
{
    bng_fwd_launch launch;
    int status = bng_fwd_params_check(config, params, x, y, allowed, &launch.call);

    launch.mask = (unsigned)core_mask & BNG_ALL_CORES;
    if (status == BNG_OK && launch.mask == 0)
        status = BNG_ECOREMASK;
    if (status != BNG_OK)
        return status;
    launch.config = config;
    launch.x = x;
    launch.y = y;
#if BNG_HAS_FWD_NCHW
    if (launch.call.nchw)
        return bng_status_of_hal(bng_hal_parallel(launch.mask, bng_fwd_nchw_s_core, &launch,
                                                  sizeof launch));
#endif
    return bng_status_of_hal(bng_hal_parallel(launch.mask, bng_fwd_nhwc_s_core, &launch,
                                              sizeof launch));
}

void bng_fwd_entry_shared(const bng_fwd_config *config, void *x, void *y, int core_mask)
{
    BNG_SHARED long long *shared_params = BNG_SHARED_PARAMS;
    long long params[BNG_FWD_PARAMS_LEN];
    int status, slot;

    for (slot = 0; slot < BNG_FWD_PARAMS_LEN; slot++)
        params[slot] = bng_fwd_reads_slot(slot) ? shared_params[slot] : 0;
    status = bng_fwd_s_block(config, params, BNG_FWD_FLAGS, x, y, core_mask);
    if (status != BNG_STATUS_NOT_SELECTED)
        bng_status_report(shared_params, status);
}

/* A pointer in a block's slot. */
static long long bng_fwd_slot(const void *array)
{
    return (long long)(uintptr_t)array;
}

void bng_fwd_entry_inference(const bng_fwd_config *config, long long flags, const void *input,
                             void *output, const void *scale, const void *offset,
                             const void *mean, const void *variance, int unit, int channel,
                             float epsilon, int core_mask)
{
    long long params[BNG_FWD_PARAMS_LEN] = {0};

    params[BNG_PARAM_SCALE] = bng_fwd_slot(scale);
    params[BNG_FWD_PARAM_BIAS] = bng_fwd_slot(offset);
    params[BNG_FWD_PARAM_MOVING_MEAN] = bng_fwd_slot(mean);
    params[BNG_FWD_PARAM_MOVING_VAR] = bng_fwd_slot(variance);
    params[BNG_PARAM_BATCH] = unit;
    params[BNG_PARAM_CHANNEL] = channel;
    params[BNG_FWD_PARAM_EPS] = bng_fwd_float(epsilon);
    params[BNG_PARAM_FLAGS] = BNG_FWD_GLOBAL_STATS | BNG_FWD_NO_SAVE | flags;
    bng_status_keep(bng_fwd_s_block(config, params,
                                          BNG_FWD_FLAGS | BNG_FWD_NO_BIAS | BNG_FWD_NO_SAVE,
                                          input, output, core_mask));
}
