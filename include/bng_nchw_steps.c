/* SPDX-License-Identifier: Apache-2.0 */
/* Copyright 2026 the batchnormgrad authors */
/* Owns: what NCHW's two storages compute alike (bng_nchw_steps.h): the order of a
 * channel's sums, written once for both, the kernel of a piece of a plane, a channel's
 * dx and coefficients; the staged runs' walk over a channel's tiles. May call:
 * bng_steps.h, the NCHW ukernels. Compiled only for a target that lists nchw.
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

void bng_nchw_core_channels(size_t channel, unsigned rank, unsigned cores, size_t *begin,
                            size_t *end)
{
    /* no multiplication: channel * rank could pass a 32-bit size_t */
    const size_t base = channel / cores, extra = channel % cores;

    *begin = base * rank + bng_min(rank, extra);
    *end = *begin + base + (rank < extra ? 1 : 0);
}

/* Where the resident tiles of a channel of `total` elements (batch * spatial, in
 * plane order) start: at the first tile boundary from which at most `fit` elements
 * follow. A tile boundary is a plane's start (every tile_planes planes when a tile
 * holds whole planes) or, when it holds pieces, every piece within a plane. */
static size_t bng_nchw_resident_from(size_t total, size_t spatial, size_t tile_planes,
                                     size_t piece, size_t fit)
{
    const size_t need = total > fit ? total - fit : 0;
    size_t plane, offset;

    if (piece == spatial) {
        const size_t tile = tile_planes * spatial;
        return bng_min((need + tile - 1) / tile * tile, total);
    }
    plane = need / spatial;
    offset = (need % spatial + piece - 1) / piece * piece;
    return offset < spatial ? plane * spatial + offset : (plane + 1) * spatial;
}

void bng_nchw_walk_shape(bng_nchw_walk *w, size_t buffer, size_t block, size_t resident)
{
    const size_t spatial = w->job->call.spatial, fit = buffer / w->job->dtype->element_bytes;

    w->tile_planes = spatial <= fit ? fit / spatial : 1;
    w->piece = spatial <= fit ? spatial : fit / block * block;
    w->resident_from = bng_nchw_resident_from(w->job->call.batch * spatial, spatial,
                                              w->tile_planes, w->piece, resident);
}

/* Tiles t of channel w->c: planes [plane, plane + planes), `n` elements of each from
 * `offset`. Rows of n elements, a plane apart in the call's arrays, packed in private
 * memory: in the resident area from resident_from on, else in tile buffers t (dy's
 * NULL where the layout has none: the forward's); the old dx in its buffer t in a call
 * that adds into dx (NULL in others). */
static void bng_nchw_walk_tile(const bng_nchw_walk *w, size_t plane, size_t planes,
                               size_t offset, size_t n, unsigned t, bng_tile *tile)
{
    const bng_call *call = &w->job->call;
    const size_t element = w->job->dtype->element_bytes;
    const size_t start = plane * call->spatial + offset;

    tile->first = plane;
    tile->rows = planes;
    tile->offset = offset;
    tile->at = (plane * call->channel + w->c) * call->spatial + offset;
    tile->row_bytes = n * element;
    tile->stride = call->channel * call->spatial * element;
    tile->pitch = tile->row_bytes;
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
