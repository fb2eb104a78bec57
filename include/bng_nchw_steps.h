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
 * Steps 2 and 3 are this code, the same for _p and _s, in vectors of BNG_V lanes
 * (bng_steps.h): one lane on a unified target, scalar code; on a split target, where
 * the lane sums, the channel's sums and its coefficients stay in vector memory, the
 * vector register's (step 2's last halvings the register's own fold, bng_vec.h
 * "Lanes"), lane 0 the channel's, the same operations in the same order. A plane _s
 * streams in pieces (each starting at a block boundary) runs step 1 piece by piece: the
 * same operations in the same order. _s splits the channels across the selected cores,
 * each owning whole channels (no core waits for another); _p runs them in order on the
 * caller's arrays (a split target's _p stages like _s, on the calling core alone).
 */
#ifndef BNG_NCHW_STEPS_H
#define BNG_NCHW_STEPS_H

#include <stddef.h>
#include "bng_staging.h"

/* The widest vector bng_vec.h has: the lane sums' arrays. */
#define BNG_NCHW_MAX_LANES 64
typedef char bng_nchw_lanes_fit[BNG_NCHW_MAX_LANES % BNG_V == 0 ? 1 : -1];

/* A channel's value as the steps hold it: a float on a unified target; on a split one
 * a whole vector of the widest lanes (BNG_PADDED(1)), which the kernels load (their
 * coefficients: every lane the value, bng_nchw_spread). */
#define BNG_NCHW_SLOT BNG_PADDED(1)

/* One channel's sums as steps 2 and 3 build them, plane by plane: the lane sums, and
 * the block's, group's and total's sums of dy and dy*(x - mean) (index 0 and 1), each
 * a vector of BNG_V (lane 0 the value). In the staged core's private memory on a split
 * target (vector memory), else on the stack. */
typedef struct {
    float lane_dy[BNG_NCHW_MAX_LANES], lane_dyxm[BNG_NCHW_MAX_LANES];   /* this plane's */
    float block[2][BNG_V];          /* this block's planes */
    float group[2][BNG_V];          /* this group's blocks */
    float total[2][BNG_V];          /* the groups so far */
} bng_nchw_sum_area;
typedef struct {
    size_t batch, group_rows, lanes;
    BNG_VMEM bng_nchw_sum_area *area;
} bng_nchw_sums;

/* One channel's coefficients: its mean, sums, and dx = gain * ((dy - dy_mean) -
 * (x - mean) * slope), as the steps hold them (BNG_NCHW_SLOT); where they lie, as the
 * sums'. */
typedef struct {
    float mean[BNG_NCHW_SLOT], sum_dy[BNG_NCHW_SLOT], sum_dyxm[BNG_NCHW_SLOT];
    float gain[BNG_NCHW_SLOT], dy_mean[BNG_NCHW_SLOT], slope[BNG_NCHW_SLOT];
} bng_nchw_channel;

/* A coefficient as the kernels take it (bng_nchw_coef): its slot on a split target, the
 * float elsewhere. */
#if BNG_SPLIT_MEMORY
#define BNG_NCHW_COEF(slot) (slot)
#else
#define BNG_NCHW_COEF(slot) ((slot)[0])
#endif

void bng_nchw_sums_start(bng_nchw_sums *s, BNG_VMEM bng_nchw_sum_area *area, size_t batch,
                         size_t lanes);
/* A plane's start (its lane sums from zero), and its end (steps 2 and 3: plane `plane`'s
 * sum into its block, a finished block into its group, a finished group into the
 * total; groups are whole blocks). */
void bng_nchw_plane_start(const bng_nchw_sums *s);
void bng_nchw_plane_done(const bng_nchw_sums *s, size_t plane);
/* The channel's sums, after its last plane: the total's into ch. */
void bng_nchw_sums_end(const bng_nchw_sums *s, BNG_VMEM bng_nchw_channel *ch);
/* A value's slot (its first vector: the value's lane) := another's. */
void bng_nchw_copy(BNG_VMEM float *to, const BNG_VMEM float *from);
/* A coefficient's value (lane 0) in every lane of its slot, where a split target's
 * kernels load it: the mean once it is a float (pass 1's, and pass 2's), the other dx
 * coefficients before pass 2. */
void bng_nchw_spread(BNG_VMEM float *value);
void bng_nchw_spread_dx(BNG_VMEM bng_nchw_channel *ch);
/* The kernel for a piece of `n` elements at `offset` into a plane: the call's (its
 * extent's, or the generic one) for a whole plane, else the generic one. */
const bng_nchw_kernel *bng_nchw_piece_kernel(const bng_dtype_config *dtype,
                                             const bng_nchw_kernel *kernel, size_t spatial,
                                             size_t offset, size_t n);
/* The sums of `n` elements of a plane (pass 1), and their dx (x unread in inference,
 * may be NULL). */
void bng_nchw_reduce(const bng_nchw_kernel *kernel, size_t n, const BNG_VMEM void *x,
                     const BNG_VMEM void *dy, const BNG_VMEM bng_nchw_channel *ch,
                     const bng_nchw_sums *s);
void bng_nchw_dx(const bng_nchw_kernel *kernel, int is_train, size_t n, const BNG_VMEM void *x,
                 const BNG_VMEM void *dy, BNG_VMEM void *dx, const BNG_VMEM bng_nchw_channel *ch,
                 int stream);
/* The channel's dx coefficients from its sums, and dbias, dscale (the call's arrays at
 * the channel, or its copies in private memory): bng_step_finalize on one channel. */
void bng_nchw_finalize(const bng_dtype_config *dtype, const bng_call *call,
                       const BNG_VMEM void *invar, const BNG_VMEM void *scale,
                       BNG_VMEM void *dbias, BNG_VMEM void *dscale, BNG_VMEM bng_nchw_channel *ch);

/* ---- the staged runs' walk over a channel's tiles (_s: the backward's
 * bng_nchw_staged.c and the training forward's bng_fwd_nchw_staged.c) ---- */

/* The k-th selected core of `cores` takes the k-th of as many runs of channels, the
 * first channel % cores runs one channel longer: [*begin, *end). */
void bng_nchw_core_channels(size_t channel, unsigned rank, unsigned cores, size_t *begin,
                            size_t *end);

/* A core's walk over channel c's tiles: whole planes (tile_planes of them) when one fits
 * a tile buffer, else pieces of one plane, from block boundaries; from resident_from on
 * (a channel's element at its place in private memory, plane * pitch + offset; batch *
 * pitch for none) in the resident area, where they stay from pass 1 to pass 2. In
 * private memory a plane (or a piece) lies at a pitch of whole vectors on a split
 * target (BNG_PADDED: the kernels read whole vectors), packed elsewhere. The layout's
 * core state begins with it: a pass's room is also its walk (bng_nchw_walk_next). */
typedef struct {
    const bng_staged_job *job;
    size_t c;
    bng_tile_buffers tiles;               /* x[2] (and dy[2], dx[2]), the resident area */
    size_t tile_planes, piece;            /* planes of a tile, elements of a piece */
    size_t pitch;                         /* a whole plane's elements in private memory */
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
