/* SPDX-License-Identifier: Apache-2.0 */
/* Copyright 2026 the batchnormgrad authors */
/* Owns: NCHW _s: the channels split across the cores of core_mask (each core owns whole
 * channels, so no core waits for another), a core's private memory, the walk over a
 * channel's planes in tiles (whole planes, or pieces of one), what stays on chip between
 * the passes; on a split target _p too, staged on the calling core alone. May call:
 * bng_staging.h, bng_nchw_steps.h, bng_relu.h, the NCHW ukernels; no barrier.
 */
#include "bng_nchw_steps.h"
#include "bng_staging.h"
#include "bng_relu.h"

/* A core's per-channel values, at the start of its private memory (each of the stats
 * type in a float's room, BNG_NCHW_SLOT of them: whole vectors on a split target); then
 * the tile buffers and, in a call that reads a channel twice, the resident area, where
 * the channel's last tiles of x and dy stay from pass 1 to pass 2. On a split target
 * the channel's coefficients and sums are here too, where the vector unit reaches them
 * (elsewhere they are the core's, on the stack). */
typedef struct {
    float mean[BNG_NCHW_SLOT], invar[BNG_NCHW_SLOT], scale[BNG_NCHW_SLOT];
    float dbias[BNG_NCHW_SLOT], dscale[BNG_NCHW_SLOT];
    float sum_dy[BNG_NCHW_SLOT], sum_dyxm[BNG_NCHW_SLOT];   /* reduce: out; apply: in */
    float limbs[BNG_SUMS_COUNT_LIMBS * BNG_V];               /* reduce: the count */
#if BNG_SPLIT_MEMORY
    bng_nchw_channel ch;
    bng_nchw_sum_area sums;
#endif
} bng_nchw_area;
/* the plan's count (its layout's twin, TargetPlan.nchw_layout), and whole vectors */
typedef char bng_nchw_area_agrees[sizeof(bng_nchw_area) == BNG_NCHW_AREA_BYTES
                                  && sizeof(bng_nchw_area) % (BNG_V * sizeof(float)) == 0 ? 1 : -1];

/* One core's part of an NCHW _s call, at channel c. */
typedef struct {
    bng_nchw_walk walk;                   /* first: the pass's room is also the walk's */
    const bng_nchw_kernel *kernel;
    size_t begin, end;                    /* its channels */
    BNG_VMEM bng_nchw_area *area;
    BNG_VMEM bng_nchw_channel *ch;        /* the area's on a split target, else ch_room */
    BNG_VMEM bng_nchw_sum_area *sum_area; /* the same */
    bng_nchw_sums sums;                   /* pass 1's */
#if !BNG_SPLIT_MEMORY
    bng_nchw_channel ch_room;
    bng_nchw_sum_area sum_room;
#endif
} bng_nchw_core;

/* Lay out private memory: the area, four tile buffers (a fifth for y with
 * BNG_FLAG_RELU, two more for the old dx with BNG_FLAG_ACCUMULATE_DX); a tile holds as
 * many whole planes as fit, or a piece of a plane of whole blocks (generator/validate.py
 * checks that a buffer holds one block). In a call that reads a channel twice (`keeps`)
 * the buffers are no larger than BNG_STREAM_TILE_BYTES (and one block at least), and
 * what they leave, halved, holds x and dy of the channel's last tiles
 * (generator/plan.py computes the same numbers, TargetPlan.nchw_layout). */
static void bng_nchw_layout(bng_nchw_core *k, BNG_VMEM unsigned char *base, size_t bytes, int keeps)
{
    const bng_staged_job *job = k->walk.job;
    const size_t element = job->dtype->element_bytes;
    const size_t block = BNG_NCHW_BLOCK_VECTORS * k->kernel->lanes;
    const int relu = BNG_RELU(&job->call), accumulate_dx = BNG_ACCUMULATES_DX(&job->call);
    BNG_VMEM unsigned char *next = base;
    size_t buffer;

    k->area = bng_take(&next, sizeof(bng_nchw_area));
#if BNG_SPLIT_MEMORY
    /* its padding lanes zero, as a split target's per-channel arrays' (bng_steps.h) */
    bng_step_zero(sizeof(bng_nchw_area) / sizeof(float), (BNG_VMEM float *)k->area);
    k->ch = &k->area->ch;
    k->sum_area = &k->area->sums;
#else
    k->ch = &k->ch_room;
    k->sum_area = &k->sum_room;
#endif
    buffer = (bytes - (size_t)(next - base))
             / (BNG_TILE_BUFFERS + (relu ? 1 : 0) + (accumulate_dx ? BNG_DX_TILE_BUFFERS : 0))
             / BNG_ALIGN * BNG_ALIGN;
    if (keeps)
        buffer = bng_min(buffer, BNG_ALIGN_UP(block * element > BNG_STREAM_TILE_BYTES
                                                  ? block * element : BNG_STREAM_TILE_BYTES));
    bng_take_tiles(&next, buffer, relu, accumulate_dx, &k->walk.tiles);
    bng_take_resident(next, base + bytes, &k->walk.tiles);
    bng_nchw_walk_shape(&k->walk, buffer, block, keeps ? k->walk.tiles.resident_bytes / element : 0);
}

/* BNG_FLAG_RELU: a tile's dy, just arrived from the caller's array, masked by its y,
 * or (BNG_FLAG_RELU_BITS) by its planes' words of the forward's keep bits, fetched into
 * y's buffer (a piece starts at a block, a whole word: NCHW_BLOCK_VECTORS words' rows). */
typedef char bng_nchw_pieces_at_words[BNG_NCHW_BLOCK_VECTORS % BNG_KEEP_ROWS(sizeof(float)) == 0
                                      ? 1 : -1];
static void bng_nchw_relu(const bng_nchw_core *k, const bng_tile *tile)
{
    const bng_staged_job *job = k->walk.job;
    const size_t element = job->dtype->element_bytes;

    if (BNG_RELU_BITS(&job->call)) {
        const size_t plane_words = BNG_KEEP_WORDS(job->call.spatial, element);
        bng_relu_fetch_plane_bits(job, k->walk.tiles.y, tile,
                                  (tile->first * job->call.channel + k->walk.c) * plane_words
                                  + tile->offset / BNG_KEEP_ROWS(element), plane_words);
        BNG_TRACE_KERNEL(k->kernel, "relu_by_bits", tile->rows, tile->row_bytes / element);
        bng_relu_mask_planes_by_bits(element, tile, k->walk.tiles.y);
        return;
    }
    bng_relu_fetch_y(job, k->walk.tiles.y, tile);
    BNG_TRACE_KERNEL(k->kernel, "relu_mask", tile->rows, tile->pitch / element);
    bng_relu_mask_tile(element, tile, k->walk.tiles.y);
}

/* Pass 1 of the channel: its planes' sums in the order of bng_nchw_steps.h. */
static void bng_nchw_sum_work(bng_pass *pass, unsigned t)
{
    bng_nchw_core *k = pass->room;
    const bng_tile *tile = &pass->tiles[t];
    const size_t element = k->walk.job->dtype->element_bytes, spatial = k->walk.job->call.spatial;
    const size_t n = tile->row_bytes / element;
    const bng_nchw_kernel *kernel = bng_nchw_piece_kernel(k->walk.job->dtype, k->kernel, spatial,
                                                          tile->offset, n);
    size_t p;

    if (BNG_RELU(&k->walk.job->call))
        bng_nchw_relu(k, tile);
    BNG_TRACE_KERNEL(kernel, "reduce", tile->rows, n);
    for (p = 0; p < tile->rows; p++) {
        if (tile->offset == 0)
            bng_nchw_plane_start(&k->sums);
        bng_nchw_reduce(kernel, n, tile->x + p * tile->pitch, tile->dy + p * tile->pitch, k->ch,
                        &k->sums);
        if (tile->offset + n == spatial)
            bng_nchw_plane_done(&k->sums, tile->first + p);
    }
}

static void bng_nchw_s_sum(void *unit)
{
    bng_nchw_core *k = unit;
    bng_pass pass;

    bng_nchw_sums_start(&k->sums, k->sum_area, k->walk.job->call.batch, k->kernel->lanes);
    bng_pass_init(&pass, k->walk.job, k, 0, bng_nchw_walk_next, bng_nchw_sum_work);
    bng_nchw_walk_first(&k->walk, &pass.tiles[0]);
    bng_pass_run(&pass);
    bng_nchw_sums_end(&k->sums, k->ch);
}

/* Pass 2 of the channel: dx in place over the dy tile (or added to the old dx in its
 * buffer), put back while the next tile arrives (a resident tile holds the dy pass 1
 * masked). */
static void bng_nchw_dx_work(bng_pass *pass, unsigned t)
{
    const bng_nchw_core *k = pass->room;
    const bng_tile *tile = &pass->tiles[t];
    const int is_train = k->walk.job->call.is_train;
    const size_t n = tile->row_bytes / k->walk.job->dtype->element_bytes;
    const bng_nchw_kernel *kernel = bng_nchw_piece_kernel(k->walk.job->dtype, k->kernel,
                                                          k->walk.job->call.spatial, tile->offset, n);
    size_t p;

    if (BNG_RELU(&k->walk.job->call) && !tile->resident)
        bng_nchw_relu(k, tile);
    BNG_TRACE_KERNEL(kernel, is_train ? "dx_train" : "dx_infer", tile->rows, n);
    for (p = 0; p < tile->rows; p++)
        bng_nchw_dx(kernel, is_train, n, tile->x + p * tile->pitch, tile->dy + p * tile->pitch,
                    bng_tile_dx(tile) + p * tile->pitch, k->ch, bng_tile_dx_store(tile));
    bng_pass_put_dx(pass, t, bng_tile_dx(tile));
}

static void bng_nchw_s_dx(void *unit)
{
    bng_nchw_core *k = unit;
    bng_pass pass;

    bng_nchw_spread_dx(k->ch);
    bng_pass_init(&pass, k->walk.job, k, 1, bng_nchw_walk_next, bng_nchw_dx_work);
    bng_nchw_walk_first(&k->walk, &pass.tiles[0]);
    bng_pass_run(&pass);
    bng_pass_drain(&pass, 0);
    bng_pass_drain(&pass, 1);
}

static void bng_nchw_s_gain(void *unit)
{
    bng_nchw_core *k = unit;

    bng_step_gain(k->walk.job->dtype, 1, k->area->invar, k->area->scale, k->ch->gain);
}

/* The partial-sums buffer's sums of the channel, in and out, through the area, which the
 * DMA reaches. */
static void bng_nchw_s_get_sums(void *unit)
{
    bng_nchw_core *k = unit;

    bng_stage_sums(k->walk.job, k->walk.c, 1, k->area->sum_dy, k->area->sum_dyxm, 0);
    bng_nchw_copy(k->ch->sum_dy, k->area->sum_dy);
    bng_nchw_copy(k->ch->sum_dyxm, k->area->sum_dyxm);
}

static void bng_nchw_s_put_sums(void *unit)
{
    bng_nchw_core *k = unit;

    bng_nchw_copy(k->area->sum_dy, k->ch->sum_dy);
    bng_nchw_copy(k->area->sum_dyxm, k->ch->sum_dyxm);
    bng_stage_sums(k->walk.job, k->walk.c, 1, k->area->sum_dy, k->area->sum_dyxm, 1);
}

/* The channel's dbias and dscale: (accumulating) the old values in, the new ones out. */
static void bng_nchw_s_finalize(void *unit)
{
    bng_nchw_core *k = unit;
    BNG_VMEM bng_nchw_area *area = k->area;

    if (BNG_ACCUMULATES(&k->walk.job->call))
        bng_stage_outputs(k->walk.job, k->walk.c, 1, area->dbias, area->dscale, 0);
    bng_nchw_finalize(k->walk.job->dtype, &k->walk.job->call, area->invar, area->scale,
                      area->dbias, area->dscale, k->ch);
    bng_stage_outputs(k->walk.job, k->walk.c, 1, area->dbias, area->dscale, 1);
}

static const bng_unit_steps bng_nchw_s_steps = {
    bng_nchw_s_gain, bng_nchw_s_sum, bng_nchw_s_get_sums, bng_nchw_s_put_sums,
    bng_nchw_s_finalize, bng_nchw_s_dx,
};

/* One core's part: its channels, each whole; reduce's count from the lowest selected
 * core. A core without private memory (bng_stage_memory) writes nothing. */
void bng_nchw_s_core(unsigned core, void *arg)
{
    const bng_staged_job *job = arg;
    const bng_call *call = &job->call;
    const unsigned cores = bng_popcount(job->mask);
    const unsigned rank = bng_popcount(job->mask & ((1u << core) - 1u));
    bng_nchw_core k;
    size_t bytes;
    BNG_VMEM unsigned char *memory = bng_stage_memory(job, core, &bytes);

    if (memory == NULL)
        return;
    k.walk.job = job;
    k.kernel = job->dtype->nchw_kernel_for_spatial(call->spatial);
    bng_nchw_core_channels(call->channel, rank, cores, &k.begin, &k.end);
    bng_nchw_layout(&k, memory, bytes, BNG_READS_TWICE(call));
    for (k.walk.c = k.begin; k.walk.c < k.end; k.walk.c++) {
        bng_stage_stats(job, k.walk.c, 1, k.area->mean, k.area->invar, k.area->scale);
        if (!BNG_IS_DX_ONLY(call)) {
            bng_step_stats_to_float(job->dtype, 1, k.area->mean, k.ch->mean);
            bng_nchw_spread(k.ch->mean);
        }
        bng_run_steps(call, &bng_nchw_s_steps, &k);
    }
    if (BNG_IS_REDUCE(call) && rank == 0)
        bng_stage_count(job, call->batch * call->spatial, k.area->limbs);
}

#if BNG_SPLIT_MEMORY
/* Split: _p's arrays are in the calling core's vector memory, as in NHWC
 * (bng_nhwc_p_run): _p stages them like _s, through the workspace the HAL gives it, on
 * the calling core alone, which owns every channel. */
int bng_nchw_p_run(const bng_dtype_config *dtype, const bng_call *call, const void *x,
                   const void *dy, void *dx, const bng_stats *stats, float *sums)
{
    bng_staged_job job;

    bng_job_init(&job, dtype, NULL, call, 1u, x, dy, dx, stats, sums);
    return bng_stage_p_run(&job, bng_nchw_s_core);
}

/* What the extended calls' config points at (bng_dtype_config.nchw); bng_nchw_direct.c's
 * on a unified target. */
const struct bng_nchw_driver bng_nchw_driver = { bng_nchw_p_run, bng_nchw_s_core };
#endif
