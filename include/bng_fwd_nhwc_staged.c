/* SPDX-License-Identifier: Apache-2.0 */
/* Copyright 2026 the batchnormgrad authors */
/* Owns: the training forward's NHWC _s, staged through the private memory of the cores
 * of core_mask: a core's job (from the launch the HAL copied), its layout of its
 * private memory per chunk, the pass over its rows for their row groups' statistics,
 * the barrier and the merge of every group, the per-channel results (the lowest
 * selected core writes them), the pass that writes y. May call: bng_fwd.h's steps,
 * bng_staging.h (the slice, the double-buffered pass, the shared scratch),
 * bng_nhwc_memory.h's tile and resident row counts, the kernel's forward ukernels
 * (traced for make model, as the backward's), bng_hal_barrier and the HAL's DMA.
 * Compiled only for a target with the forward extension. On a split target also _p,
 * on the calling core alone through the workspace the HAL gives it (the backward's
 * alone, bng_job.h): its groups merged as they end, no barrier, no shared scratch; rows
 * in private memory padded to whole vectors (BNG_PADDED), the ukernels and the
 * per-channel steps over the padding too, which no DMA puts back.
 *
 * The schedule is the backward's (bng_nhwc_staged.c): a core's rows are a contiguous
 * run of row groups; pass 1 takes each group's mean and M2 (the fwd_stats ukernel over
 * the group's tiles in row order, each continuing the merge of the ones before, which
 * gives the bits of one run over the group), puts them in the shared scratch; after a
 * barrier every core merges all groups in group order (_p's bits); pass 2 writes y.
 * x is read once where the core's rows stay in private memory between the passes (the
 * resident rows, the slice's last: x alone, so twice the backward's), twice otherwise;
 * y is written once. With GLOBAL_STATS or PARTIALS_IN there is one pass (y's), and no
 * barrier but PARTIALS_IN's before the moving statistics are written; with PARTIALS_OUT
 * one pass (the statistics'), and the lowest core writes the partials buffer instead of
 * the per-channel results and y.
 */
#include "batch_norm_fwd.h"
#include "bng_fwd.h"
#include "bng_nhwc_memory.h"

/* The forward's workspace (BNG_FWD_FLOAT_ARRAYS float arrays, BNG_FWD_STATS_ARRAYS of
 * the stats type) takes no more private memory than the backward's (BNG_WORKSPACE),
 * with which the generator checks private_bytes, and its two tile buffers are two of
 * the backward's four: a core's private memory holds a block of rows of any chunk. */
#define BNG_FWD_WORKSPACE_BYTES(max_chunk, stats_bytes) \
    (BNG_FWD_FLOAT_ARRAYS * BNG_ALIGN_UP(BNG_WORK_ARRAY_CHUNK(max_chunk) * sizeof(float)) \
     + BNG_FWD_STATS_ARRAYS * BNG_ALIGN_UP(BNG_WORK_ARRAY_CHUNK(max_chunk) * (stats_bytes)))
#define BNG_FWD_WORKSPACE_FITS(stats_bytes) \
    (BNG_FWD_WORKSPACE_BYTES(BNG_MAX_CHUNK, stats_bytes) \
     <= (0 BNG_WORKSPACE_SUM(BNG_MAX_CHUNK, stats_bytes)))
typedef char bng_fwd_workspace_fits[BNG_FWD_WORKSPACE_FITS(4) && BNG_FWD_WORKSPACE_FITS(2)
                                    ? 1 : -1];

/* One core's state in a staged call: its rows, the chunk it works on, and the chunk's
 * layout of its private memory. */
typedef struct {
    bng_fwd_copies chunk;          /* channels [first, first + n), the core's copies */
    unsigned core;
    bng_slice slice;
    size_t row_bytes;              /* a row of the chunk, packed (as DMA moves it) */
    size_t row_channels, pitch;    /* a row in private memory: padded on a split target */
    BNG_SHARED float *scratch;     /* the chunk's slot of the shared scratch */
    bng_tile_buffers tiles;        /* x[0] and x[1], and x's resident area */
    BNG_VMEM unsigned char *bits[2];    /* RELU_BITS: a tile's keep bits, per tile buffer */
    size_t tile_rows, resident_rows;
    size_t gsm_rows;                    /* the streamed rows before those, kept in GSM */
    BNG_SHARED unsigned char *x_gsm;    /* where: the core's share of the GSM rows */
    size_t merged;                 /* pass 1: the rows of the current group merged */
    size_t y_done;                 /* pass 2: the slice's rows taken, in its order */
} bng_fwd_core;

/* The word rows of the ReLU's keep bits that `rows` rows from a word boundary take. A
 * tile starts at a block boundary (a slice at a group's, a tile after whole blocks or
 * at the first resident row, one too), a whole number of words. */
static size_t bng_fwd_word_rows(const bng_dtype_config *sizes, size_t rows)
{
    const size_t word = BNG_FWD_RELU_ROWS(sizes->element_bytes);

    return (rows + word - 1) / word;
}
typedef char bng_fwd_blocks_are_words[BNG_BLOCK_ROWS % BNG_FWD_RELU_ROWS(sizeof(float)) == 0 ? 1 : -1];

/* The workspace's arrays, the two tile buffers, with RELU_BITS two of a tile's keep
 * bits, and the rest as x's resident area. 0: no private memory (bng_stage_memory). */
static int bng_fwd_lay_out(bng_fwd_core *c)
{
    const bng_dtype_config *sizes = &c->chunk.job->config->sizes;
    const size_t elements = BNG_WORK_ARRAY_CHUNK(sizes->max_chunk);
    const bng_fwd_call *call = &c->chunk.job->call;
    const int keeps = !call->global_stats && !call->partials_in && !call->partials_out;
    size_t bytes, buffer, bits;
    BNG_VMEM unsigned char *next = bng_stage_memory(&c->chunk.job->base, c->core, &bytes), *end;

    if (next == NULL)
        return 0;
    end = next + bytes;
    bng_fwd_take_copies(&c->chunk, &next, elements);
    buffer = (size_t)(end - next) / BNG_TILE_BUFFERS / BNG_ALIGN * BNG_ALIGN;
    c->tile_rows = bng_nhwc_memory_tile_rows(buffer, c->pitch, keeps);
    c->tiles.bytes = BNG_ALIGN_UP(c->tile_rows * c->pitch);
    c->tiles.x[0] = bng_take(&next, c->tiles.bytes);
    c->tiles.x[1] = bng_take(&next, c->tiles.bytes);
    /* the keep bits' word rows of a tile from a word boundary (whole blocks of rows
     * are whole words): 1/32 of its bytes (1/16 in half), which the resident area
     * gives up */
    bits = call->relu_bits == NULL ? 0
         : BNG_ALIGN_UP(bng_fwd_word_rows(sizes, c->tile_rows) * c->pitch);
    c->bits[0] = bng_take(&next, bits);
    c->bits[1] = bng_take(&next, bits);
    c->tiles.dy[0] = c->tiles.dy[1] = c->tiles.y = c->tiles.dy_resident = NULL;
    c->tiles.dx[0] = c->tiles.dx[1] = NULL;
    c->tiles.x_resident = next;
    c->tiles.resident_bytes = (size_t)(end - next) / BNG_ALIGN * BNG_ALIGN;
    c->resident_rows = keeps ? bng_nhwc_memory_last_rows(c->slice.end - c->slice.begin,
                                                         c->tiles.resident_bytes / c->pitch)
                             : 0;
    /* (GSM is _s's: _p alone keeps no rows there) */
    c->x_gsm = NULL;
    c->gsm_rows = keeps && !BNG_ALONE(&c->chunk.job->base)
                ? bng_nhwc_memory_gsm_x(c->slice.end - c->slice.begin, c->resident_rows,
                                        c->row_bytes, c->slice.rank, c->slice.cores, &c->x_gsm)
                : 0;
    if (keeps)
        BNG_TRACE_KEEP(c->slice.end - c->slice.begin, c->resident_rows, c->gsm_rows);
    return 1;
}

/* Start the chunk at channel `first`: its layout, and on a core that takes part its
 * inputs. 0: no private memory. */
static int bng_fwd_chunk(bng_fwd_core *c, size_t first, size_t slot)
{
    const bng_fwd_job *job = c->chunk.job;
    const bng_dtype_config *sizes = &job->config->sizes;

    c->chunk.first = first;
    c->chunk.n = bng_min(bng_fwd_chunk_channels(job->config, job->kernel), job->call.channel - first);
    c->row_bytes = c->chunk.n * sizes->element_bytes;
    c->row_channels = BNG_PADDED(c->chunk.n);
    c->pitch = c->row_channels * sizes->element_bytes;
    c->scratch = BNG_SHARED_SCRATCH + slot * BNG_MAX_GROUPS * 2 * sizes->max_chunk;
    if (!bng_fwd_lay_out(c))
        return 0;
    bng_fwd_step_pad(&c->chunk);
    if (!c->slice.idle)
        bng_fwd_stage_in(&c->chunk);
    return 1;
}

/* The first row kept in GSM; the resident rows follow those. */
static size_t bng_fwd_gsm_from(const bng_fwd_core *c)
{
    return c->slice.end - c->resident_rows - c->gsm_rows;
}

/* The tile from `row` into tile buffers t (pass 1's order: row order; pass 2's: the
 * resident rows first, then those kept in GSM). Tiles never cross a row group, nor the
 * first row kept in GSM, nor the first resident row: a group's tiles are whole blocks
 * but its last (the fwd_stats ukernel's merge). */
static void bng_fwd_tile(const bng_fwd_core *c, size_t row, unsigned t, bng_tile *tile)
{
    const size_t element = c->chunk.job->config->sizes.element_bytes, channel = c->chunk.job->call.channel;
    const size_t gsm_from = bng_fwd_gsm_from(c), resident_from = c->slice.end - c->resident_rows;
    const size_t group_end = (row / c->slice.group_rows + 1) * c->slice.group_rows;

    tile->first = row;
    tile->offset = 0;
    tile->at = row * channel + c->chunk.first;
    tile->row_bytes = c->row_bytes;
    tile->stride = channel * element;
    tile->pitch = c->pitch;
    tile->resident = row >= resident_from;
    tile->kept = !tile->resident && row >= gsm_from;
    tile->gsm_x = tile->kept ? c->x_gsm + (row - gsm_from) * c->row_bytes : NULL;
    tile->gsm_dy = NULL;
    tile->rows = bng_min(c->tile_rows,
                         bng_min(group_end, tile->resident ? c->slice.end
                                            : tile->kept ? resident_from : gsm_from) - row);
    tile->x = tile->resident ? c->tiles.x_resident + (row - resident_from) * c->pitch
                             : c->tiles.x[t];
    tile->dy = tile->dx = NULL;
}

/* ---- pass 1: the core's row groups' statistics, into the shared scratch ---- */

/* The shift, the same on every core: the chunk's values in the call's first row. */
static void bng_fwd_shift(const bng_fwd_core *c)
{
    const bng_fwd_job *job = c->chunk.job;
    const size_t element = job->config->sizes.element_bytes;

    bng_hal_dma_wait(bng_hal_dma_get(c->tiles.x[0], bng_shared_at(job->base.x, c->chunk.first, element),
                                     1, c->row_bytes, 0, 0));
    bng_fwd_step_shift(element, c->chunk.n, c->tiles.x[0], c->chunk.a.shift);
}

static int bng_fwd_stats_next(bng_pass *pass, unsigned t)
{
    const bng_fwd_core *c = pass->room;
    const size_t row = pass->tiles[t].first + pass->tiles[t].rows;

    if (row >= c->slice.end)
        return 0;
    bng_fwd_tile(c, row, t ^ 1, &pass->tiles[t ^ 1]);
    return 1;
}

static void bng_fwd_stats_work(bng_pass *pass, unsigned t)
{
    bng_fwd_core *c = pass->room;
    const bng_tile *tile = &pass->tiles[t];
    const size_t next = tile->first + tile->rows, max_chunk = c->chunk.job->config->sizes.max_chunk;
    const int group_ends = next == c->slice.end || next % c->slice.group_rows == 0;

    if (tile->first % c->slice.group_rows == 0)
        c->merged = 0;
    BNG_TRACE_KERNEL(c->chunk.job->kernel, "fwd_stats", tile->rows, c->row_channels);
    c->chunk.job->kernel->stats(c->merged, tile->rows, c->row_channels, c->row_channels, tile->x,
                                c->chunk.a.shift, c->chunk.a.part_mean, c->chunk.a.part_m2);
    c->merged += tile->rows;
    if (group_ends && BNG_ALONE(&c->chunk.job->base)) {
        /* alone: the groups end in order, each merged into the chunk's at once */
        bng_fwd_step_merge(c->chunk.n, next - c->merged, c->merged, c->chunk.a.part_mean,
                           c->chunk.a.part_m2, &c->chunk.a);
    } else if (group_ends) {
        BNG_SHARED float *group = c->scratch + tile->first / c->slice.group_rows * 2 * max_chunk;
        const size_t bytes = c->chunk.n * sizeof(float);
        const bng_hal_dma mean = bng_hal_dma_put(group, c->chunk.a.part_mean, 1, bytes, 0, 0);
        const bng_hal_dma m2 = bng_hal_dma_put(group + max_chunk, c->chunk.a.part_m2, 1, bytes, 0, 0);

        bng_hal_dma_wait(mean);
        bng_hal_dma_wait(m2);
    }
    if (tile->kept)     /* into GSM, whence pass 2 fetches it; the barrier makes it visible */
        pass->puts[t][0] = bng_hal_dma_put(tile->gsm_x, tile->x, tile->rows, c->row_bytes,
                                           c->row_bytes, c->pitch);
}

static void bng_fwd_stats_pass(bng_fwd_core *c)
{
    bng_pass pass;

    if (c->slice.begin == c->slice.end)
        return;
    bng_pass_init(&pass, &c->chunk.job->base, c, 0, bng_fwd_stats_next, bng_fwd_stats_work);
    bng_fwd_tile(c, c->slice.begin, 0, &pass.tiles[0]);
    bng_pass_run(&pass);
}

/* After the barrier: every core merges all groups in group order (the same bits
 * everywhere, and _p's), their statistics from the shared scratch a piece at a time
 * through the tile buffers (free between the passes): rows of part_mean and part_m2
 * alternate there as in the scratch. */
static void bng_fwd_merge_groups(bng_fwd_core *c)
{
    const size_t batch = c->chunk.job->call.batch, group_rows = c->slice.group_rows;
    const size_t max_chunk = c->chunk.job->config->sizes.max_chunk, n = c->chunk.n;
    const size_t rc = c->row_channels;
    const size_t piece = 2 * c->tiles.bytes / (2 * rc * sizeof(float));   /* x[0], x[1] */
    BNG_VMEM float *area = (BNG_VMEM float *)c->tiles.x[0];
    size_t g, i;

    for (g = 0; g < c->slice.groups; g += piece) {
        const size_t groups = bng_min(piece, c->slice.groups - g);

        bng_step_pad_rows(n, rc, 2 * groups, area);
        bng_hal_dma_wait(bng_hal_dma_get(area, c->scratch + g * 2 * max_chunk, 2 * groups,
                                         n * sizeof(float), max_chunk * sizeof(float),
                                         rc * sizeof(float)));
        for (i = 0; i < groups; i++) {
            const size_t done = (g + i) * group_rows;
            bng_fwd_step_merge(n, done, bng_min(group_rows, batch - done), area + 2 * i * rc,
                               area + (2 * i + 1) * rc, &c->chunk.a);
        }
    }
}

/* ---- pass 2: y for the core's rows, in place over their x in private memory ----
 *
 * The k-th row of its order: the resident rows first (already in private memory: their
 * y goes out while the first tile arrives), then those kept in GSM, then the others from
 * the first. y's rows are independent: any order gives the same bits. */
static size_t bng_fwd_y_row(const bng_fwd_core *c, size_t k)
{
    if (k < c->resident_rows)
        return c->slice.end - c->resident_rows + k;
    k -= c->resident_rows;
    return k < c->gsm_rows ? bng_fwd_gsm_from(c) + k : c->slice.begin + (k - c->gsm_rows);
}

static int bng_fwd_y_next(bng_pass *pass, unsigned t)
{
    bng_fwd_core *c = pass->room;

    c->y_done += pass->tiles[t].rows;
    if (c->y_done >= c->slice.end - c->slice.begin)
        return 0;
    bng_fwd_tile(c, bng_fwd_y_row(c, c->y_done), t ^ 1, &pass->tiles[t ^ 1]);
    return 1;
}

/* A tile's keep bits (the chunk's columns of its word rows) to the caller's array,
 * beside its y. */
static void bng_fwd_put_bits(bng_pass *pass, unsigned t)
{
    const bng_fwd_core *c = pass->room;
    const bng_tile *tile = &pass->tiles[t];
    const bng_dtype_config *sizes = &c->chunk.job->config->sizes;
    const size_t word_row = tile->first / BNG_FWD_RELU_ROWS(sizes->element_bytes);

    pass->puts[t][1] = bng_hal_dma_put(
        bng_shared_at_mut(c->chunk.job->relu_bits, word_row * c->chunk.job->call.channel + c->chunk.first,
                          sizes->element_bytes),
        c->bits[t], bng_fwd_word_rows(sizes, tile->rows), c->row_bytes, tile->stride, c->pitch);
}

static void bng_fwd_y_work(bng_pass *pass, unsigned t)
{
    const bng_fwd_core *c = pass->room;
    const bng_tile *tile = &pass->tiles[t];
    const bng_fwd_kernel *kernel = c->chunk.job->kernel;

    if (c->chunk.job->call.relu) {
        BNG_TRACE_KERNEL(kernel, "fwd_norm_relu", tile->rows, c->row_channels);
        kernel->norm_relu(tile->rows, c->row_channels, c->row_channels, tile->x, tile->x,
                          c->chunk.a.shift, c->chunk.a.mean, c->chunk.a.gain, c->chunk.a.bias,
                          c->chunk.job->relu_bits == NULL ? NULL : c->bits[t], c->row_channels, 0);
    } else {
        BNG_TRACE_KERNEL(kernel, "fwd_norm", tile->rows, c->row_channels);
        kernel->norm(tile->rows, c->row_channels, c->row_channels, tile->x, tile->x,
                     c->chunk.a.shift, c->chunk.a.mean, c->chunk.a.gain, c->chunk.a.bias, 0);
    }
    bng_pass_put_dx(pass, t, tile->x);
    if (c->chunk.job->relu_bits != NULL)
        bng_fwd_put_bits(pass, t);
}

static void bng_fwd_y_pass(bng_fwd_core *c)
{
    bng_pass pass;

    if (c->slice.begin == c->slice.end)
        return;
    bng_pass_init(&pass, &c->chunk.job->base, c, 1, bng_fwd_y_next, bng_fwd_y_work);
    c->y_done = 0;
    bng_fwd_tile(c, bng_fwd_y_row(c, 0), 0, &pass.tiles[0]);
    bng_pass_run(&pass);
    bng_pass_drain(&pass, 0);
    bng_pass_drain(&pass, 1);
}

/* ---- a chunk's steps ---- */

/* The chunk's statistics on a core that takes part: the moving ones (GLOBAL_STATS), the
 * partials' (PARTIALS_IN), or the batch's, for which every core meets the others at the
 * barrier (an idle core, with no rows and not the lowest, there only: 0, it has no more
 * to do). PARTIALS_IN that updates the moving statistics meets the others too: every
 * core has its copy of them before the lowest writes them. _p alone meets no one: its
 * groups were merged as they ended. */
static int bng_fwd_statistics(bng_fwd_core *c)
{
    const bng_fwd_call *call = &c->chunk.job->call;

    if (call->global_stats) {
        if (c->slice.idle)
            return 0;
        bng_fwd_step_global(&c->chunk.job->config->sizes, c->chunk.n, &c->chunk.stats, &c->chunk.a);
        return 1;
    }
    if (call->partials_in) {
        if (!c->slice.idle)
            bng_fwd_stage_partials(&c->chunk, 0, NULL);
        if (!call->keep_moving && !BNG_ALONE(&c->chunk.job->base))
            bng_hal_barrier();
        return !c->slice.idle;
    }
    if (!c->slice.idle) {
        bng_fwd_shift(c);
        bng_fwd_stats_pass(c);
    }
    if (BNG_ALONE(&c->chunk.job->base))
        return 1;
    bng_hal_barrier();
    if (c->slice.idle)
        return 0;
    bng_fwd_merge_groups(c);
    return 1;
}

/* One core's part of a staged call, chunk by chunk. */
static void bng_fwd_nhwc_run(const bng_fwd_job *job, unsigned core)
{
    const size_t chunk = bng_fwd_chunk_channels(job->config, job->kernel);
    bng_fwd_core c;
    size_t first, slot = 0;

    c.chunk.job = job;
    c.core = core;
    bng_stage_slice(job->base.mask, core, job->call.batch, &c.slice);
    for (first = 0; first < job->call.channel; first += chunk, slot ^= 1) {
        if (!bng_fwd_chunk(&c, first, slot))
            return;
        if (!bng_fwd_statistics(&c))
            continue;
        if (job->call.partials_out) {
            if (c.slice.rank == 0)
                bng_fwd_stage_partials(&c.chunk, 1, c.chunk.a.part_mean);
            continue;
        }
        bng_fwd_step_finalize(&job->config->sizes, &job->call, c.chunk.n, &c.chunk.a, &c.chunk.stats);
        if (c.slice.rank == 0)
            bng_fwd_stage_out(&c.chunk);
        bng_fwd_y_pass(&c);
    }
}

void bng_fwd_nhwc_s_core(unsigned core, void *launch)
{
    bng_fwd_job job;

    bng_fwd_job_init(&job, launch);
    bng_fwd_nhwc_run(&job, core);
}

#if BNG_SPLIT_MEMORY
/* Split: _p's arrays are in the calling core's vector memory; _p stages them like _s,
 * on the calling core alone through the workspace the HAL gives it (bng_stage_alone),
 * the partials buffer in scalar memory with the parameter block. */
int bng_fwd_nhwc_p_run(const bng_fwd_config *config, const bng_fwd_call *call, const void *x,
                       void *y)
{
    return bng_fwd_stage_p_run(config, call, x, y, bng_fwd_nhwc_run);
}
#endif
