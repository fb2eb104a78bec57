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
 * Steps 2 and 3 are this scalar code, the same for _p and _s; _s streams a plane larger
 * than its tile buffer in pieces from block boundaries, step 1 continuing over them:
 * the same operations in the same order. _s splits the channels across the cores, each
 * owning whole channels, as the backward's NCHW _s does.
 */
#ifndef BNG_FWD_NCHW_H
#define BNG_FWD_NCHW_H

#include <stddef.h>
#include "bng_fwd.h"
#include "bng_nchw_steps.h"

/* One channel's statistics as steps 2 and 3 build them, plane by plane. */
typedef struct {
    size_t batch, spatial, lanes, group_rows;
    float lane_mean[BNG_NCHW_MAX_LANES], lane_m2[BNG_NCHW_MAX_LANES];   /* this plane's */
    float group_mean, group_m2;          /* this group's planes so far */
    float mean, m2;                      /* the groups so far: the channel's at the end */
} bng_fwd_nchw_sums;
void bng_fwd_nchw_sums_start(bng_fwd_nchw_sums *s, size_t batch, size_t spatial, size_t lanes);
/* Plane `plane`'s lanes (the ukernel's, over the whole plane) merged into the plane's
 * statistics, those into its group's, a finished group into the channel's. */
void bng_fwd_nchw_plane_done(bng_fwd_nchw_sums *s, size_t plane);

/* One channel's float values (a core's private memory in _s, the stack in _p), and the
 * arrays of one channel bng_fwd.h's steps work on, pointing at them. */
typedef struct {
    float shift, mean, m2, part_mean, part_m2, gain, bias;
} bng_fwd_nchw_values;
void bng_fwd_nchw_arrays(BNG_VMEM bng_fwd_nchw_values *v, bng_fwd_arrays *a);

#endif /* BNG_FWD_NCHW_H */
