/* SPDX-License-Identifier: Apache-2.0 */
/* Copyright 2026 the batchnormgrad authors */
/* Owns: what NCHW's two storages compute alike (bng_nchw_steps.c): the order of a
 * channel's sums, the kernel of a piece of a plane, a channel's coefficients; and the
 * runners of NCHW's rooms, and the staged runs' walk over a channel's tiles. May
 * include: bng_staging.h; included by NCHW's rooms only (bng_nchw_steps.c,
 * bng_nchw_direct.c, bng_nchw_staged.c, and the training forward's NCHW rooms), which a
 * target without nchw does not compile.
 *
 * x, dy and dx are x[batch][channel][spatial]: a channel is `batch` planes of `spatial`
 * contiguous elements, channel * spatial elements apart, and its sums run over the
 * batch * spatial elements in a fixed order that depends only on batch and spatial:
 *   1. a plane's vectors (of the dtype's lanes) in blocks of BNG_NCHW_BLOCK_VECTORS,
 *      each block summed lane-wise from zero in registers and added to the plane's
 *      lane sums, which start at zero; the plane's last spatial % lanes elements each
 *      added, from zero, to its lane's sum (the ukernel, bng_nchw_kernel);
 *   2. the plane's lane sums added pairwise, halving (lane i += lane i + lanes/2, ...,
 *      down to lane 0): the plane's sum;
 *   3. the planes' sums in the NHWC order over batch, a plane as a row: blocks of
 *      BNG_BLOCK_ROWS planes from zero, each added to its group's sum, the groups of
 *      bng_group_rows(batch) planes added to the total in order.
 * Steps 2 and 3 are this scalar code, the same for _p and _s. A plane _s streams in
 * pieces (each starting at a block boundary) runs step 1 piece by piece: the same
 * operations in the same order. _s splits the channels across the selected cores, each
 * owning whole channels (no core waits for another); _p runs them in order on the
 * caller's arrays. The generator refuses nchw on a split target.
 */
#ifndef BNG_NCHW_STEPS_H
#define BNG_NCHW_STEPS_H

#include <stddef.h>
#include "bng_staging.h"

#if BNG_SPLIT_MEMORY
#error "nchw needs a unified memory: generator/validate.py refuses it on a split target"
#endif

/* The widest vector bng_vec.h has: the lane sums' arrays. */
#define BNG_NCHW_MAX_LANES 64

/* One channel's sums as steps 2 and 3 build them, plane by plane. */
typedef struct {
    size_t batch, group_rows, lanes;
    float total_dy, total_dyxm;      /* the groups so far */
    float group_dy, group_dyxm;      /* this group's blocks */
    float block_dy, block_dyxm;      /* this block's planes */
    float lane_dy[BNG_NCHW_MAX_LANES], lane_dyxm[BNG_NCHW_MAX_LANES];   /* this plane's */
} bng_nchw_sums;

/* One channel's coefficients: its mean, sums, and dx = gain * ((dy - dy_mean) -
 * (x - mean) * slope). */
typedef struct {
    float mean, sum_dy, sum_dyxm, gain, dy_mean, slope;
} bng_nchw_channel;

void bng_nchw_sums_start(bng_nchw_sums *s, size_t batch, size_t lanes);
/* A plane's start (its lane sums from zero), and its end (steps 2 and 3: plane `plane`'s
 * sum into its block, a finished block into its group, a finished group into the
 * total; groups are whole blocks). */
void bng_nchw_plane_start(bng_nchw_sums *s);
void bng_nchw_plane_done(bng_nchw_sums *s, size_t plane);
/* The kernel for a piece of `n` elements at `offset` into a plane: the call's (its
 * extent's, or the generic one) for a whole plane, else the generic one. */
const bng_nchw_kernel *bng_nchw_piece_kernel(const bng_dtype_config *dtype,
                                             const bng_nchw_kernel *kernel, size_t spatial,
                                             size_t offset, size_t n);
/* dx of `n` elements of a plane (x unread in inference, may be NULL). */
void bng_nchw_dx(const bng_nchw_kernel *kernel, int is_train, size_t n, const void *x,
                 const void *dy, void *dx, const bng_nchw_channel *ch, int stream);
/* The channel's dx coefficients from its sums, and dbias, dscale (the call's arrays at
 * the channel, or its copies in private memory): bng_step_finalize on one channel. */
void bng_nchw_finalize(const bng_dtype_config *dtype, const bng_call *call, const void *invar,
                       const void *scale, void *dbias, void *dscale, bng_nchw_channel *ch);

/* ---- the staged runs' walk over a channel's tiles (_s: the backward's
 * bng_nchw_staged.c and the training forward's bng_fwd_nchw_staged.c) ---- */

/* The k-th selected core of `cores` takes the k-th of as many runs of channels, the
 * first channel % cores runs one channel longer: [*begin, *end). */
void bng_nchw_core_channels(size_t channel, unsigned rank, unsigned cores, size_t *begin,
                            size_t *end);

/* A core's walk over channel c's tiles: whole planes (tile_planes of them) when one fits
 * a tile buffer, else pieces of one plane, from block boundaries; from resident_from on
 * (a channel's element, plane * spatial + offset; batch * spatial for none) in the
 * resident area, where they stay from pass 1 to pass 2. The layout's core state begins
 * with it: a pass's room is also its walk (bng_nchw_walk_next). */
typedef struct {
    const bng_staged_job *job;
    size_t c;
    bng_tile_buffers tiles;               /* x[2] (and dy[2], dx[2]), the resident area */
    size_t tile_planes, piece;            /* planes of a tile, elements of a piece */
    size_t resident_from;
} bng_nchw_walk;
/* The tiles' shape from a tile buffer's bytes (at least a block of `block` elements)
 * and where the resident ones start, the last of the channel's tiles that fit
 * `resident` elements (0: none). */
void bng_nchw_walk_shape(bng_nchw_walk *w, size_t buffer, size_t block, size_t resident);
/* The channel's first tile, into tile buffers 0; the tile after tiles[t] (the plane's
 * next piece, else the next planes), 0 after the last: a pass's `next`. */
void bng_nchw_walk_first(const bng_nchw_walk *w, bng_tile *tile);
int bng_nchw_walk_next(bng_pass *pass, unsigned t);

/* The runners (bng_job.h's struct bng_nchw_driver: bng_nchw_driver, which
 * bng_nchw_direct.c defines): _p on the caller's arrays (bng_nchw_direct.c), and one
 * core's part of _s (bng_nchw_staged.c). */
int bng_nchw_p_run(const bng_dtype_config *dtype, const bng_call *call, const void *x,
                   const void *dy, void *dx, const bng_stats *stats, float *sums);
void bng_nchw_s_core(unsigned core, void *job);

#endif /* BNG_NCHW_STEPS_H */
