/* SPDX-License-Identifier: Apache-2.0 */
/* Copyright 2026 the batchnormgrad authors */
/* Owns: what the training forward's NCHW rooms share (bng_fwd_nchw_steps.c): the order
 * in which a channel's planes' statistics merge, and a channel's run of the steps both
 * storages take. May include: bng_fwd.h, bng_nchw_steps.h; included by the forward's
 * NCHW rooms only (bng_fwd_nchw_steps.c, bng_fwd_nchw_direct.c, bng_fwd_nchw_staged.c),
 * which a target without forward and nchw does not compile.
 *
 * x and y are x[batch][channel][spatial]: a channel is `batch` planes of `spatial`
 * contiguous values, and its mean and M2 (every value taken from the channel's shift,
 * its first value x[0][c][0]) merge by Chan's formula in an order that depends only on
 * batch, spatial and the storage type's lanes:
 *   1. a plane's lanes: the fwd_nchw_stats ukernel (bng_ukernel.h) gives lane i the
 *      statistics of the plane's values i, i + lanes, ...: blocks of
 *      BNG_NCHW_BLOCK_VECTORS vectors, each's mean and M2 from its own values,
 *      merged in order; the last spatial % lanes values each a block of one;
 *   2. the plane's lanes merged pairwise, halving (lane i with lane i + lanes/2, ...,
 *      down to lane 0), each lane weighted by its count: the plane's statistics;
 *   3. the planes in the NHWC order over batch, a plane as a row: merged in order into
 *      their row group's (bng_group_rows(batch) planes), the groups in order into the
 *      channel's.
 * Steps 2 and 3 are this code, the same for _p and _s, in vectors of BNG_V lanes
 * (bng_steps.h): one lane on a unified target, scalar code; on a split target, where
 * the lane statistics and the channel's values stay in vector memory, the vector
 * register's (step 2's last halvings the register's own, its lanes w above taken by
 * bng_vec.h's _lanes_above), lane 0 the value, the same operations in the same order.
 * Lanes whose counts differ (a plane's first spatial % lanes have one value more) merge
 * in runs of lanes of the same counts, each run's merge selected into its lanes. _s
 * streams a plane larger than its tile buffer in pieces from block boundaries, step 1
 * continuing over them: the same operations in the same order. _s splits the channels
 * across the cores, each owning whole channels, as the backward's NCHW _s does (a split
 * target's _p stages like it, on the calling core alone).
 */
#ifndef BNG_FWD_NCHW_H
#define BNG_FWD_NCHW_H

#include <stddef.h>
#include "bng_fwd.h"
#include "bng_nchw_steps.h"

/* One channel's statistics as steps 2 and 3 build them, plane by plane, each a vector
 * of BNG_V (lane 0 the value): in the staged core's private memory (vector memory on a
 * split target), on the stack in a unified target's _p. */
typedef struct {
    float lane_mean[BNG_NCHW_MAX_LANES], lane_m2[BNG_NCHW_MAX_LANES];   /* this plane's */
    float above_mean[BNG_V], above_m2[BNG_V];    /* step 2 in a register: the lanes above */
    float run_mean[BNG_V], run_m2[BNG_V];        /* step 2: a run of lanes' merge */
    float group_mean[BNG_V], group_m2[BNG_V];    /* this group's planes so far */
    float mean[BNG_V], m2[BNG_V];                /* the groups so far: the channel's at the end */
} bng_fwd_nchw_sum_area;
typedef struct {
    size_t batch, spatial, lanes, group_rows;
    BNG_VMEM bng_fwd_nchw_sum_area *area;
} bng_fwd_nchw_sums;
/* A channel's start: the area zeroed (no lane of it is then read undefined). */
void bng_fwd_nchw_sums_start(bng_fwd_nchw_sums *s, BNG_VMEM bng_fwd_nchw_sum_area *area,
                             size_t batch, size_t spatial, size_t lanes);
/* Plane `plane`'s lanes (the ukernel's, over the whole plane) merged into the plane's
 * statistics, those into its group's, a finished group into the channel's. */
void bng_fwd_nchw_plane_done(const bng_fwd_nchw_sums *s, size_t plane);
/* The channel's statistics, after its last plane, into a's mean and m2. */
void bng_fwd_nchw_sums_end(const bng_fwd_nchw_sums *s, const bng_fwd_arrays *a);

#endif /* BNG_FWD_NCHW_H */
