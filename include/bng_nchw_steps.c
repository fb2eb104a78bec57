/* SPDX-License-Identifier: Apache-2.0 */
/* Copyright 2026 the batchnormgrad authors */
/* Owns: what NCHW's two storages compute alike (bng_nchw_steps.h): the order of a
 * channel's sums, written once for both, the kernel of a piece of a plane, a channel's
 * dx and coefficients. May call: bng_steps.h, the NCHW ukernels. Compiled only for a
 * target that lists nchw.
 */
#include "bng_nchw_steps.h"

void bng_nchw_sums_start(bng_nchw_sums *s, size_t batch, size_t lanes)
{
    s->batch = batch;
    s->group_rows = bng_group_rows(batch);
    s->lanes = lanes;
    s->total_dy = s->total_dyxm = 0.0f;
}

void bng_nchw_plane_start(bng_nchw_sums *s)
{
    size_t i;
    for (i = 0; i < s->lanes; i++)
        s->lane_dy[i] = s->lane_dyxm[i] = 0.0f;
}

/* Step 2: the lane sums, pairwise, halving. */
static float bng_nchw_lanes_sum(float *lane, size_t lanes)
{
    size_t width, i;

    for (width = lanes / 2; width != 0; width /= 2)
        for (i = 0; i < width; i++)
            lane[i] = lane[i] + lane[i + width];
    return lane[0];
}

void bng_nchw_plane_done(bng_nchw_sums *s, size_t plane)
{
    const float dy = bng_nchw_lanes_sum(s->lane_dy, s->lanes);
    const float dyxm = bng_nchw_lanes_sum(s->lane_dyxm, s->lanes);
    const size_t next = plane + 1;

    if (plane % s->group_rows == 0)
        s->group_dy = s->group_dyxm = 0.0f;
    if (plane % BNG_BLOCK_ROWS == 0)
        s->block_dy = s->block_dyxm = 0.0f;
    s->block_dy = s->block_dy + dy;
    s->block_dyxm = s->block_dyxm + dyxm;
    if (next % BNG_BLOCK_ROWS == 0 || next == s->batch) {
        s->group_dy = s->group_dy + s->block_dy;
        s->group_dyxm = s->group_dyxm + s->block_dyxm;
    }
    if (next % s->group_rows == 0 || next == s->batch) {
        s->total_dy = s->total_dy + s->group_dy;
        s->total_dyxm = s->total_dyxm + s->group_dyxm;
    }
}

const bng_nchw_kernel *bng_nchw_piece_kernel(const bng_dtype_config *dtype,
                                             const bng_nchw_kernel *kernel, size_t spatial,
                                             size_t offset, size_t n)
{
    return offset == 0 && n == spatial ? kernel : dtype->nchw_kernel_for_spatial(0);
}

void bng_nchw_dx(const bng_nchw_kernel *kernel, int is_train, size_t n, const void *x,
                 const void *dy, void *dx, const bng_nchw_channel *ch, int stream)
{
    if (is_train)
        kernel->dx_train(n, x, dy, dx, ch->mean, ch->gain, ch->dy_mean, ch->slope, stream);
    else
        kernel->dx_infer(n, dy, dx, ch->gain, stream);
}

void bng_nchw_finalize(const bng_dtype_config *dtype, const bng_call *call, const void *invar,
                       const void *scale, void *dbias, void *dscale, bng_nchw_channel *ch)
{
    bng_step_finalize(dtype, 1, call->m, BNG_ACCUMULATES(call), invar, scale, &ch->sum_dy,
                      &ch->sum_dyxm, dbias, dscale, &ch->gain, &ch->dy_mean, &ch->slope);
}
