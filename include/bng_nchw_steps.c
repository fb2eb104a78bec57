/* SPDX-License-Identifier: Apache-2.0 */
/* Copyright 2026 the batchnormgrad authors */
/* Owns: what NCHW's two storages compute alike (bng_nchw_steps.h): the order of a
 * channel's sums, written once for both, the kernel of a piece of a plane, a channel's
 * dx and coefficients; the staged runs' walk over a channel's tiles. May call:
 * bng_steps.h and its vectors (bng_steps_vec.h: BNG_V lanes, one on a unified target),
 * the NCHW ukernels. Compiled only for a target that lists nchw.
 */
#include "bng_nchw_steps.h"
#include "bng_steps_vec.h"

#define bng_vfold BNG_VOP(BNG_V, fold)
#define bng_vsplat BNG_VOP(BNG_V, splat)

void bng_nchw_sums_start(bng_nchw_sums *s, BNG_VMEM bng_nchw_sum_area *area, size_t batch,
                         size_t lanes)
{
    s->batch = batch;
    s->group_rows = bng_group_rows(batch);
    s->lanes = lanes;
    s->area = area;
    bng_vstore(area->total[0], bng_vzero());
    bng_vstore(area->total[1], bng_vzero());
}

void bng_nchw_plane_start(const bng_nchw_sums *s)
{
    bng_step_zero(s->lanes, s->area->lane_dy);
    bng_step_zero(s->lanes, s->area->lane_dyxm);
}

/* Step 2: the lane sums, pairwise, halving: lane i += lane i + width for i < width,
 * whole vectors while width is one at least, then the last vector's own fold. */
static bng_vec bng_nchw_lanes_sum(BNG_VMEM float *lane, size_t lanes)
{
    size_t width, i;

    for (width = lanes / 2; width >= BNG_V; width /= 2)
        for (i = 0; i < width; i += BNG_V)
            bng_vstore(lane + i, bng_vadd(bng_vload(lane + i), bng_vload(lane + i + width)));
    return bng_vfold(bng_vload(lane));
}

/* a := a + b, or 0 + b where `start` (the first plane of a's block or group): a sum
 * from zero. */
static void bng_nchw_add(BNG_VMEM float *a, bng_vec b, int start)
{
    bng_vstore(a, bng_vadd(start ? bng_vzero() : bng_vload(a), b));
}

/* Steps 2 and 3 of one of the two sums (k: dy's 0, dy*(x - mean)'s 1) at plane `plane`'s
 * end: its lane sums into its block, a finished block into its group, a finished group
 * into the total. */
static void bng_nchw_sum_done(const bng_nchw_sums *s, BNG_VMEM float *lane, unsigned k,
                              size_t plane)
{
    BNG_VMEM bng_nchw_sum_area *a = s->area;
    const size_t next = plane + 1, block_start = plane / BNG_BLOCK_ROWS * BNG_BLOCK_ROWS;

    bng_nchw_add(a->block[k], bng_nchw_lanes_sum(lane, s->lanes), plane == block_start);
    if (next % BNG_BLOCK_ROWS == 0 || next == s->batch)    /* groups are whole blocks */
        bng_nchw_add(a->group[k], bng_vload(a->block[k]), block_start % s->group_rows == 0);
    if (next % s->group_rows == 0 || next == s->batch)
        bng_nchw_add(a->total[k], bng_vload(a->group[k]), 0);
}

void bng_nchw_plane_done(const bng_nchw_sums *s, size_t plane)
{
    bng_nchw_sum_done(s, s->area->lane_dy, 0, plane);
    bng_nchw_sum_done(s, s->area->lane_dyxm, 1, plane);
}

void bng_nchw_sums_end(const bng_nchw_sums *s, BNG_VMEM bng_nchw_channel *ch)
{
    bng_vstore(ch->sum_dy, bng_vload(s->area->total[0]));
    bng_vstore(ch->sum_dyxm, bng_vload(s->area->total[1]));
}

void bng_nchw_copy(BNG_VMEM float *to, const BNG_VMEM float *from)
{
    bng_vstore(to, bng_vload(from));
}

/* (on a unified target the slot is its one lane: the value stays as it is) */
void bng_nchw_spread(BNG_VMEM float *value)
{
    const bng_vec v = bng_vsplat(bng_vload(value));
    size_t i;

    for (i = 0; i < BNG_NCHW_SLOT; i += BNG_V)
        bng_vstore(value + i, v);
}

void bng_nchw_spread_dx(BNG_VMEM bng_nchw_channel *ch)
{
    bng_nchw_spread(ch->gain);
    bng_nchw_spread(ch->dy_mean);
    bng_nchw_spread(ch->slope);
}

const bng_nchw_kernel *bng_nchw_piece_kernel(const bng_dtype_config *dtype,
                                             const bng_nchw_kernel *kernel, size_t spatial,
                                             size_t offset, size_t n)
{
    return offset == 0 && n == spatial ? kernel : dtype->nchw_kernel_for_spatial(0);
}

void bng_nchw_reduce(const bng_nchw_kernel *kernel, size_t n, const BNG_VMEM void *x,
                     const BNG_VMEM void *dy, const BNG_VMEM bng_nchw_channel *ch,
                     const bng_nchw_sums *s)
{
    kernel->reduce(n, x, dy, BNG_NCHW_COEF(ch->mean), s->area->lane_dy, s->area->lane_dyxm);
}

void bng_nchw_dx(const bng_nchw_kernel *kernel, int is_train, size_t n, const BNG_VMEM void *x,
                 const BNG_VMEM void *dy, BNG_VMEM void *dx, const BNG_VMEM bng_nchw_channel *ch,
                 int stream)
{
    if (is_train)
        kernel->dx_train(n, x, dy, dx, BNG_NCHW_COEF(ch->mean), BNG_NCHW_COEF(ch->gain),
                         BNG_NCHW_COEF(ch->dy_mean), BNG_NCHW_COEF(ch->slope), stream);
    else
        kernel->dx_infer(n, dy, dx, BNG_NCHW_COEF(ch->gain), stream);
}

void bng_nchw_finalize(const bng_dtype_config *dtype, const bng_call *call,
                       const BNG_VMEM void *invar, const BNG_VMEM void *scale,
                       BNG_VMEM void *dbias, BNG_VMEM void *dscale, BNG_VMEM bng_nchw_channel *ch)
{
    bng_step_finalize(dtype, 1, call->m, BNG_ACCUMULATES(call), invar, scale, ch->sum_dy,
                      ch->sum_dyxm, dbias, dscale, ch->gain, ch->dy_mean, ch->slope);
}

void bng_nchw_core_channels(size_t channel, unsigned rank, unsigned cores, size_t *begin,
                            size_t *end)
{
    /* no multiplication: channel * rank could pass a 32-bit size_t */
    const size_t base = channel / cores, extra = channel % cores;

    *begin = base * rank + bng_min(rank, extra);
    *end = *begin + base + (rank < extra ? 1 : 0);
}

/* Where the resident tiles of a channel of `batch` planes start, in private memory's
 * places (plane * pitch + offset): at the first tile boundary from which at most `fit`
 * places follow. A tile boundary is a plane's start (every tile_planes planes when a
 * tile holds `whole` planes) or, when it holds pieces, every piece within a plane. */
static size_t bng_nchw_resident_from(size_t batch, size_t pitch, int whole, size_t tile_planes,
                                     size_t piece, size_t fit)
{
    const size_t total = batch * pitch, need = total > fit ? total - fit : 0;
    size_t plane, offset;

    if (whole) {
        const size_t tile = tile_planes * pitch;
        return bng_min((need + tile - 1) / tile * tile, total);
    }
    plane = need / pitch;
    offset = (need % pitch + piece - 1) / piece * piece;
    return offset < pitch ? plane * pitch + offset : (plane + 1) * pitch;
}

/* A piece is whole blocks, and so whole vectors of the widest lanes: a tile of pieces
 * holds a piece at most, or a plane's last, shorter piece at its own padded length (the
 * generator checks that a block is whole padding vectors on a split target). */
void bng_nchw_walk_shape(bng_nchw_walk *w, size_t buffer, size_t block, size_t resident)
{
    const size_t pitch = BNG_PADDED(w->job->call.spatial);
    const size_t fit = buffer / w->job->dtype->element_bytes;
    const int whole = pitch <= fit;

    w->pitch = pitch;
    w->tile_planes = whole ? fit / pitch : 1;
    w->piece = whole ? w->job->call.spatial : fit / block * block;
    w->resident_from = bng_nchw_resident_from(w->job->call.batch, pitch, whole, w->tile_planes,
                                              w->piece, resident);
}

/* Tiles t of channel w->c: planes [plane, plane + planes), `n` elements of each from
 * `offset`. Rows of n elements, a plane apart in the call's arrays, in private memory a
 * row's whole vectors apart (packed on a unified target): in the resident area from
 * resident_from on, else in tile buffers t (dy's NULL where the layout has none: the
 * forward's); the old dx in its buffer t in a call that adds into dx (NULL in others). */
static void bng_nchw_walk_tile(const bng_nchw_walk *w, size_t plane, size_t planes,
                               size_t offset, size_t n, unsigned t, bng_tile *tile)
{
    const bng_call *call = &w->job->call;
    const size_t element = w->job->dtype->element_bytes;
    const size_t start = plane * w->pitch + offset;

    tile->first = plane;
    tile->rows = planes;
    tile->offset = offset;
    tile->at = (plane * call->channel + w->c) * call->spatial + offset;
    tile->row_bytes = n * element;
    tile->stride = call->channel * call->spatial * element;
    tile->pitch = BNG_PADDED(n) * element;
    tile->resident = start >= w->resident_from;
    tile->kept = 0;
    tile->gsm_x = tile->gsm_dy = NULL;
    tile->dx = w->tiles.dx[t];
    if (tile->resident) {
        tile->x = w->tiles.x_resident + (start - w->resident_from) * element;
        tile->dy = w->tiles.dy_resident == NULL ? NULL
                 : w->tiles.dy_resident + (start - w->resident_from) * element;
    } else {
        tile->x = w->tiles.x[t];
        tile->dy = w->tiles.dy[t];
    }
}

void bng_nchw_walk_first(const bng_nchw_walk *w, bng_tile *tile)
{
    const bng_call *call = &w->job->call;

    bng_nchw_walk_tile(w, 0, bng_min(w->tile_planes, call->batch), 0,
                       bng_min(w->piece, call->spatial), 0, tile);
}

int bng_nchw_walk_next(bng_pass *pass, unsigned t)
{
    const bng_nchw_walk *w = pass->room;
    const bng_tile *tile = &pass->tiles[t];
    const size_t spatial = w->job->call.spatial, batch = w->job->call.batch;
    const size_t end = tile->offset + tile->row_bytes / w->job->dtype->element_bytes;
    size_t plane;

    if (end < spatial) {
        bng_nchw_walk_tile(w, tile->first, tile->rows, end, bng_min(w->piece, spatial - end),
                           t ^ 1, &pass->tiles[t ^ 1]);
        return 1;
    }
    plane = tile->first + tile->rows;
    if (plane >= batch)
        return 0;
    bng_nchw_walk_tile(w, plane, bng_min(w->tile_planes, batch - plane), 0,
                       bng_min(w->piece, spatial), t ^ 1, &pass->tiles[t ^ 1]);
    return 1;
}
