/* SPDX-License-Identifier: Apache-2.0 */
/* Copyright 2026 the batchnormgrad authors */
/* Owns: the training forward's NCHW order of a channel's statistics past its planes'
 * lanes (bng_fwd_nchw.h, steps 2 and 3), written once for _p and _s, in vectors of
 * BNG_V lanes (bng_steps_vec.h: one on a unified target). May call: bng_fwd.h's merge,
 * bng_steps.h's row groups, bng_steps_vec.h's vectors (a register's lanes selected and
 * brought down); no HAL, no kernel. Compiled only for a target with forward and nchw.
 */
#include "bng_fwd_nchw.h"
#include "bng_steps_vec.h"

#define bng_vselect_first BNG_VOP(BNG_V, select_first)
#define bng_vlanes_above BNG_VOP(BNG_V, lanes_above)

void bng_fwd_nchw_sums_start(bng_fwd_nchw_sums *s, BNG_VMEM bng_fwd_nchw_sum_area *area,
                             size_t batch, size_t spatial, size_t lanes)
{
    s->batch = batch;
    s->spatial = spatial;
    s->lanes = lanes;
    s->group_rows = bng_group_rows(batch);
    s->area = area;
    bng_step_zero(sizeof *area / sizeof(float), (BNG_VMEM float *)area);
}

/* The lanes of `mean` and `m2` (a vector each) merged with those at `above_mean` and
 * `above_m2`, every lane of `done` values and its partner of `rows`
 * (bng_fwd_step_merge): into the area's run. */
static void bng_fwd_nchw_merge_run(const bng_fwd_nchw_sums *s, const BNG_VMEM float *mean,
                                   const BNG_VMEM float *m2, const BNG_VMEM float *above_mean,
                                   const BNG_VMEM float *above_m2, size_t done, size_t rows)
{
    BNG_VMEM bng_fwd_nchw_sum_area *a = s->area;
    bng_fwd_arrays run = {NULL, NULL, NULL, NULL, NULL, NULL, NULL};

    run.mean = a->run_mean;
    run.m2 = a->run_m2;
    bng_vstore(a->run_mean, bng_vload(mean));
    bng_vstore(a->run_m2, bng_vload(m2));
    bng_fwd_step_merge(BNG_V, done, rows, above_mean, above_m2, &run);
}

/* Of a vector's BNG_V lanes from lane `first` on, how many lie below lane `more`. */
static unsigned bng_fwd_nchw_below(size_t more, size_t first)
{
    return more <= first ? 0u : (unsigned)bng_min(more - first, BNG_V);
}

/* Lanes of three runs of counts (below `both`: lane and partner one more than `base`,
 * below `lane`: the lane alone, the rest neither), each run's merge selected into its
 * lanes. */
static void bng_fwd_nchw_merge_runs(const bng_fwd_nchw_sums *s, BNG_VMEM float *mean,
                                    BNG_VMEM float *m2, const BNG_VMEM float *above_mean,
                                    const BNG_VMEM float *above_m2, size_t base, unsigned both,
                                    unsigned lane)
{
    const unsigned from[3] = {0u, both, lane}, to[3] = {both, lane, BNG_V};
    const size_t done[3] = {base + 1, base + 1, base}, rows[3] = {base + 1, base, base};
    bng_vec merged_mean = bng_vzero(), merged_m2 = bng_vzero();
    unsigned r;

    for (r = 0; r < 3; r++) {
        if (from[r] == to[r])
            continue;       /* no lane: the first run with lanes starts at lane 0 */
        bng_fwd_nchw_merge_run(s, mean, m2, above_mean, above_m2, done[r], rows[r]);
        merged_mean = bng_vselect_first(merged_mean, bng_vload(s->area->run_mean), from[r]);
        merged_m2 = bng_vselect_first(merged_m2, bng_vload(s->area->run_m2), from[r]);
    }
    bng_vstore(mean, merged_mean);
    bng_vstore(m2, merged_m2);
}

/* Lanes at .. at + BNG_V - 1 of step 2's width `width` (mean and m2 at them) merged
 * with their partners `width` above (above_mean and above_m2): a lane of `base` values,
 * one more below lane `more` (bng_fwd_nchw_lanes). Where one run of counts has every
 * lane (one lane always: a unified target's scalar merge) the merge is made in place;
 * else in runs (bng_fwd_nchw_merge_runs). */
static void bng_fwd_nchw_merge_pairs(const bng_fwd_nchw_sums *s, BNG_VMEM float *mean,
                                     BNG_VMEM float *m2, const BNG_VMEM float *above_mean,
                                     const BNG_VMEM float *above_m2, size_t at, size_t width,
                                     size_t base, size_t more)
{
    const unsigned both = bng_fwd_nchw_below(more, at + width), lane = bng_fwd_nchw_below(more, at);
    bng_fwd_arrays lanes = {NULL, NULL, NULL, NULL, NULL, NULL, NULL};

    if (!(lane == 0 || both == BNG_V || (both == 0 && lane == BNG_V))) {
        bng_fwd_nchw_merge_runs(s, mean, m2, above_mean, above_m2, base, both, lane);
        return;
    }
    lanes.mean = mean;
    lanes.m2 = m2;
    bng_fwd_step_merge(BNG_V, base + (lane != 0), base + (both != 0), above_mean, above_m2, &lanes);
}

/* Step 2: lane i covers the plane's values i, i + lanes, ...: spatial / lanes of them,
 * one more below spatial % lanes; after the halvings down to width w, lane i < 2w covers
 * lanes i, i + 2w, ..., whose values number lanes / 2w * (spatial / lanes) +
 * (spatial % lanes) / 2w, one more below (spatial % lanes) % 2w. Pairwise, halving,
 * each merge weighted by the two lanes' counts (a lane of none, in a plane narrower
 * than a vector, changes nothing): whole vectors while the width is one at least, then
 * the register's lanes w above. */
static void bng_fwd_nchw_lanes(const bng_fwd_nchw_sums *s)
{
    BNG_VMEM bng_fwd_nchw_sum_area *a = s->area;
    const size_t per_lane = s->spatial / s->lanes, left = s->spatial % s->lanes;
    size_t width, at;

    for (width = s->lanes / 2; width != 0; width /= 2) {
        const size_t span = 2 * width, base = s->lanes / span * per_lane + left / span;

        if (width >= BNG_V) {
            for (at = 0; at < width; at += BNG_V)
                bng_fwd_nchw_merge_pairs(s, a->lane_mean + at, a->lane_m2 + at,
                                         a->lane_mean + at + width, a->lane_m2 + at + width, at,
                                         width, base, left % span);
            continue;
        }
        bng_vstore(a->above_mean, bng_vlanes_above(bng_vload(a->lane_mean), (unsigned)width));
        bng_vstore(a->above_m2, bng_vlanes_above(bng_vload(a->lane_m2), (unsigned)width));
        bng_fwd_nchw_merge_pairs(s, a->lane_mean, a->lane_m2, a->above_mean, a->above_m2, 0,
                                 width, base, left % span);
    }
}

/* Step 3: the plane into its group, `in_group` planes of it before; a finished group
 * into the channel, `plane - in_group` planes before it. */
void bng_fwd_nchw_plane_done(const bng_fwd_nchw_sums *s, size_t plane)
{
    BNG_VMEM bng_fwd_nchw_sum_area *a = s->area;
    const size_t in_group = plane % s->group_rows, next = plane + 1;
    bng_fwd_arrays group = {NULL, NULL, NULL, NULL, NULL, NULL, NULL}, channel = group;

    group.mean = a->group_mean;
    group.m2 = a->group_m2;
    channel.mean = a->mean;
    channel.m2 = a->m2;
    bng_fwd_nchw_lanes(s);
    bng_fwd_step_merge(1, in_group * s->spatial, s->spatial, a->lane_mean, a->lane_m2, &group);
    if (next % s->group_rows == 0 || next == s->batch)
        bng_fwd_step_merge(1, (plane - in_group) * s->spatial, (in_group + 1) * s->spatial,
                           a->group_mean, a->group_m2, &channel);
}

void bng_fwd_nchw_sums_end(const bng_fwd_nchw_sums *s, const bng_fwd_arrays *a)
{
    bng_vstore(a->mean, bng_vload(s->area->mean));
    bng_vstore(a->m2, bng_vload(s->area->m2));
}
