/* SPDX-License-Identifier: Apache-2.0 */
/* Copyright 2026 the batchnormgrad authors */
/* Owns: the training forward's NCHW order of a channel's statistics past its planes'
 * lanes (bng_fwd_nchw.h, steps 2 and 3), written once for _p and _s, and a channel's
 * arrays. May call: bng_fwd.h's merge, bng_steps.h's row groups; no HAL, no kernel.
 * Compiled only for a target with forward and nchw.
 */
#include "bng_fwd_nchw.h"

void bng_fwd_nchw_sums_start(bng_fwd_nchw_sums *s, size_t batch, size_t spatial, size_t lanes)
{
    s->batch = batch;
    s->spatial = spatial;
    s->lanes = lanes;
    s->group_rows = bng_group_rows(batch);
}

/* Step 2: lane i covers the plane's values i, i + lanes, ...: spatial / lanes of them,
 * one more below spatial % lanes. Pairwise, halving, each merge weighted by the two
 * lanes' counts (a lane of none, in a plane narrower than a vector, changes nothing). */
static void bng_fwd_nchw_lanes(bng_fwd_nchw_sums *s)
{
    size_t count[BNG_NCHW_MAX_LANES];
    size_t width, i;

    for (i = 0; i < s->lanes; i++)
        count[i] = s->spatial / s->lanes + (i < s->spatial % s->lanes ? 1 : 0);
    for (width = s->lanes / 2; width != 0; width /= 2) {
        for (i = 0; i < width; i++) {
            bng_fwd_merge_one(&s->lane_mean[i], &s->lane_m2[i], count[i], count[i + width],
                              s->lane_mean[i + width], s->lane_m2[i + width]);
            count[i] += count[i + width];
        }
    }
}

/* Step 3: the plane into its group, `in_group` planes of it before; a finished group
 * into the channel, `plane - in_group` planes before it. */
void bng_fwd_nchw_plane_done(bng_fwd_nchw_sums *s, size_t plane)
{
    const size_t in_group = plane % s->group_rows, next = plane + 1;

    bng_fwd_nchw_lanes(s);
    bng_fwd_merge_one(&s->group_mean, &s->group_m2, in_group * s->spatial, s->spatial,
                      s->lane_mean[0], s->lane_m2[0]);
    if (next % s->group_rows == 0 || next == s->batch)
        bng_fwd_merge_one(&s->mean, &s->m2, (plane - in_group) * s->spatial,
                          (in_group + 1) * s->spatial, s->group_mean, s->group_m2);
}

void bng_fwd_nchw_arrays(BNG_VMEM bng_fwd_nchw_values *v, bng_fwd_arrays *a)
{
    a->shift = &v->shift;
    a->mean = &v->mean;
    a->m2 = &v->m2;
    a->part_mean = &v->part_mean;
    a->part_m2 = &v->part_m2;
    a->gain = &v->gain;
    a->bias = &v->bias;
}
