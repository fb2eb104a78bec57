/* SPDX-License-Identifier: Apache-2.0 */
/* Copyright 2026 the batchnormgrad authors */
/* Owns: the training forward's NCHW _s, staged through the private memory of the cores
 * of core_mask: the channels split across the cores (each owns whole channels, so no
 * core waits for another), a core's layout of its private memory, per channel the pass
 * for its statistics over its planes' tiles and the pass that writes y (and the ReLU's
 * bits), what stays on chip between the two. May call: bng_fwd_nchw.h's and bng_fwd.h's
 * steps, bng_fwd_staging.c's copies, bng_nchw_steps.h's walk, the double-buffered pass
 * (bng_staging.h), the forward's NCHW ukernels (traced for make model, as the
 * backward's); no barrier. Compiled only for a target with forward and nchw; on a split
 * target it runs _p too, staged on the calling core alone, and the channel's values,
 * its statistics' area and a tile's keep words lie in vector memory (the kernels take
 * the values as vectors, bng_nchw_coef; a plane at a pitch of whole vectors).
 *
 * x is read once where the channel's last tiles stay in private memory between the
 * passes (x alone: the backward's NCHW _s keeps x and dy), twice otherwise; y is
 * written once. With GLOBAL_STATS or PARTIALS_IN there is one pass (y's), with
 * PARTIALS_OUT one (the statistics').
 */
#include "batch_norm_fwd.h"
#include "bng_fwd_nchw.h"

/* One core's part of an NCHW _s call, at channel walk.c. */
typedef struct {
    bng_nchw_walk walk;                   /* first: the passes' room is also the walk's */
    const bng_fwd_job *job;
    size_t begin, end;                    /* its channels */
    bng_fwd_copies channel;               /* the channel's copies (first = c, n = 1) */
    BNG_VMEM float *limbs;                /* PARTIALS_OUT: the count's two limbs */
    BNG_VMEM unsigned char *bits[2];      /* RELU_BITS: a tile's keep words, per buffer */
    size_t bits_pitch;                    /* a plane's (or a piece's) words apart in them */
    BNG_VMEM bng_fwd_nchw_sum_area *sum_area;
    bng_fwd_nchw_sums sums;               /* pass 1's */
} bng_fwd_nchw_core;

/* The keep words of a plane's `n` elements from a word boundary. */
static size_t bng_fwd_nchw_words(const bng_fwd_nchw_core *k, size_t n)
{
    return BNG_FWD_PLANE_WORDS(n, k->job->config->sizes.element_bytes);
}

/* Lay out private memory: the channel's copies (a slot each, BNG_NCHW_SLOT: their
 * padding lanes zero), the count's floats, the statistics' area, two tile buffers of x
 * (pass 2 writes y over them), with RELU_BITS two of a tile's keep words (a plane's
 * words, or a piece's, whole vectors of them apart on a split target), and the
 * rest as x's resident area in a call that reads a channel twice (`keeps`), whose
 * buffers are then no larger than BNG_STREAM_TILE_BYTES (one block at least), as the
 * backward's NCHW _s. 0: no private memory (bng_stage_memory). */
static int bng_fwd_nchw_layout(bng_fwd_nchw_core *k, unsigned core, int keeps)
{
    const bng_fwd_job *job = k->job;
    const size_t element = job->config->sizes.element_bytes;
    const size_t block = BNG_NCHW_BLOCK_VECTORS * job->nchw_kernel->lanes;
    size_t bytes, buffer, bits;
    BNG_VMEM unsigned char *next = bng_stage_memory(&job->base, core, &bytes), *end;

    if (next == NULL)
        return 0;
    end = next + bytes;
    bng_fwd_take_copies(&k->channel, &next, BNG_NCHW_SLOT);
    bng_fwd_step_pad(&k->channel);
    k->limbs = bng_take(&next, 2 * BNG_V * sizeof(float));
    k->sum_area = bng_take(&next, sizeof(bng_fwd_nchw_sum_area));
    buffer = (size_t)(end - next) / BNG_TILE_BUFFERS / BNG_ALIGN * BNG_ALIGN;
    if (keeps)
        buffer = bng_min(buffer, BNG_ALIGN_UP(block * element > BNG_STREAM_TILE_BYTES
                                                  ? block * element : BNG_STREAM_TILE_BYTES));
    k->walk.tiles.x[0] = bng_take(&next, buffer);
    k->walk.tiles.x[1] = bng_take(&next, buffer);
    k->walk.tiles.dy[0] = k->walk.tiles.dy[1] = k->walk.tiles.y = k->walk.tiles.dy_resident = NULL;
    k->walk.tiles.dx[0] = k->walk.tiles.dx[1] = NULL;
    bng_nchw_walk_shape(&k->walk, buffer, block, 0);
    k->bits_pitch = BNG_PADDED(bng_fwd_nchw_words(k, k->walk.piece)) * element;
    bits = job->relu_bits == NULL ? 0 : BNG_ALIGN_UP(k->walk.tile_planes * k->bits_pitch);
    k->bits[0] = bng_take(&next, bits);
    k->bits[1] = bng_take(&next, bits);
    k->walk.tiles.x_resident = next;
    k->walk.tiles.resident_bytes = (size_t)(end - next) / BNG_ALIGN * BNG_ALIGN;
    bng_nchw_walk_shape(&k->walk, buffer, block, keeps ? k->walk.tiles.resident_bytes / element : 0);
    return 1;
}

/* ---- pass 1: the channel's statistics, its planes in the order of bng_fwd_nchw.h ---- */

/* The shift: the channel's first value (in every lane of its slot, as the kernels take
 * it). */
static void bng_fwd_nchw_shift(const bng_fwd_nchw_core *k)
{
    const bng_fwd_job *job = k->job;
    const size_t element = job->config->sizes.element_bytes;

    bng_hal_dma_wait(bng_hal_dma_get(k->walk.tiles.x[0],
                                     bng_shared_at(job->base.x, k->walk.c * job->call.spatial,
                                                   element),
                                     1, element, 0, 0));
    bng_fwd_step_shift(element, 1, k->walk.tiles.x[0], k->channel.a.shift);
    bng_nchw_spread(k->channel.a.shift);
}

/* A piece continues its plane's lane statistics: its offset, a multiple of a block,
 * over the vectors before it. */
static void bng_fwd_nchw_stats_work(bng_pass *pass, unsigned t)
{
    bng_fwd_nchw_core *k = pass->room;
    const bng_tile *tile = &pass->tiles[t];
    const bng_fwd_nchw_kernel *kernel = k->job->nchw_kernel;
    const size_t n = tile->row_bytes / k->job->config->sizes.element_bytes;
    size_t p;

    BNG_TRACE_KERNEL(kernel, "fwd_nchw_stats", tile->rows, n);
    for (p = 0; p < tile->rows; p++) {
        kernel->stats(n, tile->offset / kernel->lanes, tile->x + p * tile->pitch,
                      BNG_NCHW_COEF(k->channel.a.shift), k->sum_area->lane_mean,
                      k->sum_area->lane_m2);
        if (tile->offset + n == k->job->call.spatial)
            bng_fwd_nchw_plane_done(&k->sums, tile->first + p);
    }
}

static void bng_fwd_nchw_stats_pass(bng_fwd_nchw_core *k)
{
    const bng_fwd_call *call = &k->job->call;
    bng_pass pass;

    bng_fwd_nchw_shift(k);
    bng_fwd_nchw_sums_start(&k->sums, k->sum_area, call->batch, call->spatial,
                            k->job->nchw_kernel->lanes);
    bng_pass_init(&pass, &k->job->base, k, 0, bng_nchw_walk_next, bng_fwd_nchw_stats_work);
    bng_nchw_walk_first(&k->walk, &pass.tiles[0]);
    bng_pass_run(&pass);
    bng_fwd_nchw_sums_end(&k->sums, &k->channel.a);
}

/* ---- pass 2: y over the tile's x, put back with the keep words beside it ---- */

/* A tile's keep words to the caller's array: per plane, its piece's words. */
static void bng_fwd_nchw_put_bits(bng_pass *pass, unsigned t)
{
    const bng_fwd_nchw_core *k = pass->room;
    const bng_tile *tile = &pass->tiles[t];
    const bng_fwd_call *call = &k->job->call;
    const size_t element = k->job->config->sizes.element_bytes;
    const size_t plane_words = bng_fwd_nchw_words(k, call->spatial);
    const size_t words = bng_fwd_nchw_words(k, tile->row_bytes / element);
    const size_t at = (tile->first * call->channel + k->walk.c) * plane_words
                      + tile->offset / BNG_FWD_RELU_ROWS(element);

    pass->puts[t][1] = bng_hal_dma_put(bng_shared_at_mut(k->job->relu_bits, at, element), k->bits[t],
                                       tile->rows, words * element,
                                       call->channel * plane_words * element, k->bits_pitch);
}

static void bng_fwd_nchw_y_work(bng_pass *pass, unsigned t)
{
    const bng_fwd_nchw_core *k = pass->room;
    const bng_tile *tile = &pass->tiles[t];
    const bng_fwd_nchw_kernel *kernel = k->job->nchw_kernel;
    const bng_fwd_arrays *a = &k->channel.a;
    const size_t n = tile->row_bytes / k->job->config->sizes.element_bytes;
    size_t p;

    BNG_TRACE_KERNEL(kernel, k->job->call.relu ? "fwd_nchw_norm_relu" : "fwd_nchw_norm",
                     tile->rows, n);
    for (p = 0; p < tile->rows; p++) {
        BNG_VMEM unsigned char *x = tile->x + p * tile->pitch;

        if (k->job->call.relu)
            kernel->norm_relu(n, x, x, BNG_NCHW_COEF(a->shift), BNG_NCHW_COEF(a->mean),
                              BNG_NCHW_COEF(a->gain), BNG_NCHW_COEF(a->bias),
                              k->job->relu_bits == NULL ? NULL : k->bits[t] + p * k->bits_pitch,
                              0);
        else
            kernel->norm(n, x, x, BNG_NCHW_COEF(a->shift), BNG_NCHW_COEF(a->mean),
                         BNG_NCHW_COEF(a->gain), BNG_NCHW_COEF(a->bias), 0);
    }
    bng_pass_put_dx(pass, t, tile->x);
    if (k->job->relu_bits != NULL)
        bng_fwd_nchw_put_bits(pass, t);
}

static void bng_fwd_nchw_y_pass(bng_fwd_nchw_core *k)
{
    bng_pass pass;

    bng_pass_init(&pass, &k->job->base, k, 1, bng_nchw_walk_next, bng_fwd_nchw_y_work);
    bng_nchw_walk_first(&k->walk, &pass.tiles[0]);
    bng_pass_run(&pass);
    bng_pass_drain(&pass, 0);
    bng_pass_drain(&pass, 1);
}

/* One channel: its statistics (the moving ones, the partials', or the batch's), then
 * the partials out, or its results and y. */
static void bng_fwd_nchw_channel(bng_fwd_nchw_core *k)
{
    const bng_fwd_call *call = &k->job->call;
    bng_fwd_copies *ch = &k->channel;

    ch->first = k->walk.c;
    bng_fwd_stage_in(ch);
    if (call->global_stats)
        bng_fwd_step_global(&k->job->config->sizes, 1, &ch->stats, &ch->a);
    else if (call->partials_in)
        bng_fwd_stage_partials(ch, 0, NULL);
    else
        bng_fwd_nchw_stats_pass(k);
    if (call->partials_out) {
        bng_fwd_stage_partials(ch, 1, k->limbs);
        return;
    }
    bng_fwd_step_finalize(&k->job->config->sizes, call, 1, &ch->a, &ch->stats);
    bng_fwd_stage_out(ch);
    bng_nchw_spread(ch->a.shift);
    bng_nchw_spread(ch->a.mean);
    bng_nchw_spread(ch->a.gain);
    bng_nchw_spread(ch->a.bias);
    bng_fwd_nchw_y_pass(k);
}

/* One core's part of the job: its channels, each whole. A core without private memory
 * (bng_stage_memory) writes nothing. */
static void bng_fwd_nchw_run(const bng_fwd_job *job, unsigned core)
{
    const bng_fwd_call *call = &job->call;
    const unsigned cores = bng_popcount(job->base.mask);
    const unsigned rank = bng_popcount(job->base.mask & ((1u << core) - 1u));
    bng_fwd_nchw_core k;

    k.job = job;
    k.walk.job = &job->base;
    k.channel.job = job;
    k.channel.n = 1;
    bng_nchw_core_channels(call->channel, rank, cores, &k.begin, &k.end);
    if (!bng_fwd_nchw_layout(&k, core, !call->global_stats && !call->partials_in
                                           && !call->partials_out))
        return;
    for (k.walk.c = k.begin; k.walk.c < k.end; k.walk.c++)
        bng_fwd_nchw_channel(&k);
}

void bng_fwd_nchw_s_core(unsigned core, void *launch)
{
    bng_fwd_job job;

    bng_fwd_job_init(&job, launch);
    bng_fwd_nchw_run(&job, core);
}

#if BNG_SPLIT_MEMORY
/* Split: _p's arrays are in the calling core's vector memory, as in NHWC
 * (bng_fwd_nhwc_p_run): _p stages them like _s, on the calling core alone through the
 * workspace the HAL gives it, which owns every channel. */
int bng_fwd_nchw_p_run(const bng_fwd_config *config, const bng_fwd_call *call, const void *x,
                       void *y)
{
    return bng_fwd_stage_p_run(config, call, x, y, bng_fwd_nchw_run);
}
#endif
