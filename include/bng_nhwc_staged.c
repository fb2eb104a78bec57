/* SPDX-License-Identifier: Apache-2.0 */
/* Copyright 2026 the batchnormgrad authors */
/* Owns: NHWC staged, the shared-storage schedule: the split of the rows across the
 * cores of core_mask, each core's passes over its rows per chunk (in the private memory
 * and the share of the GSM rows bng_nhwc_memory.c lays out), the barrier and the fold
 * of the row groups; on a split target also _p (bng_nhwc_p_run, at the end: the calling
 * core alone). May call: bng_nhwc_memory.h, bng_staging.h, bng_steps.h, the storage
 * type's relu driver (bng_relu.h), the kernel's row ukernels through bng_steps.c,
 * bng_hal_barrier and the HAL's DMA (the group sums, the rows kept in GSM, the fold's
 * reads).
 *
 * A core's rows are a contiguous run of row groups; pass 1 sums them into one partial
 * sum per group, which goes to the shared scratch; after a barrier every core folds all
 * groups in order (the same bits everywhere, and the same as _p's); pass 2 writes dx.
 * A call that reads its rows twice keeps its slice's last rows in private memory between
 * the passes (the resident rows), and the streamed rows before them in its share of the
 * GSM rows as far as that pays.
 */
#include "bng_nhwc_memory.h"
#include "bng_steps_vec.h"

/* One core's state in a staged call: its rows, and the chunk it works on. */
typedef struct {
    const bng_staged_job *job;
    const bng_kernel *kernel;      /* the job's, or the generic one on a narrower chunk */
    size_t chunk;                  /* channels a chunk: the kernel's (bng_nhwc_chunk_of) */
    unsigned core;
    bng_slice slice;               /* this core's rows */
    size_t first, channels;        /* the chunk */
    size_t row_bytes;              /* one row of the chunk */
    size_t row_channels, pitch;    /* a row in private memory: padded on a split target */
    BNG_SHARED float *scratch;     /* the chunk's slot of the shared scratch */
    bng_nhwc_memory mem;           /* the chunk's layout of private memory */
    size_t dx_done;                /* pass 2: the slice's rows taken, in its order */
} bng_nhwc_core;

/* What the zeroing of a workspace array's padding needs. */
typedef struct {
    const bng_dtype_config *dtype;
    size_t at;
} bng_work_zero;
#define BNG_WORK_ZERO_float(mem, zero, name) bng_vstore((mem)->name + (zero)->at, bng_vzero());
#define BNG_WORK_ZERO_stats(mem, zero, name) bng_stats_store((zero)->dtype, (mem)->name, (zero)->at, bng_vzero());
#define BNG_WORK_ZERO(mem, zero, name, kind) BNG_WORK_ZERO_##kind(mem, zero, name)

/* The chunk's padding lanes in every workspace array, from its last channel up to
 * whole vectors (BNG_PADDED: none on a unified target): zero. Before the chunk's
 * inputs arrive: the first vector zeroed holds the chunk's last channels too. */
static void bng_nhwc_zero_padding(bng_nhwc_core *c)
{
    bng_nhwc_memory *mem = &c->mem;
    bng_work_zero zero;

    zero.dtype = c->job->dtype;
    for (zero.at = c->channels / BNG_V * BNG_V; zero.at < BNG_PADDED(c->channels); zero.at += BNG_V) {
        BNG_WORKSPACE(BNG_WORK_ZERO, mem, &zero)
    }
}

/* Start the chunk at channel `first`: lay out private memory, bring in the
 * per-channel inputs the call uses (an idle core needs none). Only the calls that read
 * their rows twice (the vendor's, ext) keep rows between the passes. 0: no private
 * memory (bng_stage_memory). */
static int bng_nhwc_chunk(bng_nhwc_core *c, size_t first, size_t slot)
{
    const bng_staged_job *job = c->job;
    const bng_dtype_config *dtype = job->dtype;
    const int keeps = BNG_READS_TWICE(&job->call);
    const size_t rows = c->slice.end - c->slice.begin;
    size_t bytes;
    BNG_VMEM unsigned char *memory = bng_stage_memory(job, c->core, &bytes);

    if (memory == NULL)
        return 0;
    c->first = first;
    c->channels = bng_min(c->chunk, job->call.channel - first);
    c->row_bytes = c->channels * dtype->element_bytes;
    c->row_channels = BNG_PADDED(c->channels);
    c->pitch = c->row_channels * dtype->element_bytes;
    c->scratch = BNG_SHARED_SCRATCH + slot * BNG_MAX_GROUPS * 2 * dtype->max_chunk;
    bng_nhwc_memory_lay_out(&c->mem, dtype, memory, bytes, rows, c->pitch, keeps,
                            BNG_RELU_BITS(&job->call) ? BNG_NHWC_RELU_BITS
                            : BNG_RELU(&job->call) ? BNG_NHWC_RELU_Y : BNG_NHWC_NO_RELU,
                            BNG_ACCUMULATES_DX(&job->call));
    bng_nhwc_memory_gsm(&c->mem, rows, c->row_bytes, c->slice.rank, c->slice.cores,
                        keeps && !BNG_ALONE(job), job->call.is_train);
    if (keeps)
        BNG_TRACE_KEEP(rows, c->mem.resident_rows, c->mem.gsm_rows);
    bng_nhwc_zero_padding(c);
    if (c->slice.idle)
        return 1;
    bng_stage_stats(job, first, c->channels, c->mem.stats_mean, c->mem.invar, c->mem.scale);
    if (!BNG_IS_DX_ONLY(&job->call))
        bng_step_stats_to_float(dtype, c->channels, c->mem.stats_mean, c->mem.mean);
    return 1;
}

/* ---- the tiles ---- */

/* The first row kept in GSM; the resident rows follow those. */
static size_t bng_nhwc_gsm_from(const bng_nhwc_core *c)
{
    return c->slice.end - c->mem.resident_rows - c->mem.gsm_rows;
}

/* Tiles never cross a row group, nor `end`. */
static size_t bng_nhwc_tile_length(const bng_nhwc_core *c, size_t row, size_t end)
{
    const size_t group_end = (row / c->slice.group_rows + 1) * c->slice.group_rows;
    return bng_min(c->mem.tile_rows, bng_min(group_end, end) - row);
}

/* The tile from `row` into tile buffers t: its rows end at a group boundary, at the
 * first row kept in GSM, at the first resident row, or at the slice's end. A resident
 * tile lies in the resident area instead (its old dx, adding into dx, in buffer t). */
static void bng_nhwc_tile(const bng_nhwc_core *c, size_t row, unsigned t, bng_tile *tile)
{
    const bng_nhwc_memory *mem = &c->mem;
    const size_t gsm_from = bng_nhwc_gsm_from(c), resident_from = gsm_from + mem->gsm_rows;
    const size_t element = c->job->dtype->element_bytes, channel = c->job->call.channel;

    tile->first = row;
    tile->offset = 0;
    tile->at = row * channel + c->first;
    tile->row_bytes = c->row_bytes;
    tile->stride = channel * element;
    tile->pitch = c->pitch;
    tile->resident = row >= resident_from;
    tile->kept = !tile->resident && row >= gsm_from;
    tile->gsm_x = tile->kept ? c->mem.x_gsm + (row - gsm_from) * c->row_bytes : NULL;
    tile->gsm_dy = tile->kept ? c->mem.dy_gsm + (row - gsm_from) * c->row_bytes : NULL;
    tile->dx = mem->tiles.dx[t];
    if (tile->resident) {
        tile->rows = bng_nhwc_tile_length(c, row, c->slice.end);
        tile->x = mem->tiles.x_resident + (row - resident_from) * c->pitch;
        tile->dy = mem->tiles.dy_resident + (row - resident_from) * c->pitch;
    } else {
        tile->rows = bng_nhwc_tile_length(c, row, tile->kept ? resident_from : gsm_from);
        tile->x = mem->tiles.x[t];
        tile->dy = mem->tiles.dy[t];
    }
}

/* Whether a streamed tile's blocks all have their bits in the relu bits area (tiles
 * start at a block boundary of the slice), and where its bits are. */
static int bng_nhwc_bits_cover(const bng_nhwc_core *c, const bng_tile *tile)
{
    const size_t end = tile->first - c->slice.begin + tile->rows;

    return (end + BNG_BLOCK_ROWS - 1) / BNG_BLOCK_ROWS <= c->mem.relu_bits_blocks;
}

static BNG_VMEM unsigned char *bng_nhwc_bits_at(const bng_nhwc_core *c, const bng_tile *tile)
{
    return c->mem.relu_bits + (tile->first - c->slice.begin) / BNG_BLOCK_ROWS
                              * BNG_RELU_BITS_BLOCK_BYTES(c->pitch, c->job->dtype->element_bytes);
}

/* BNG_FLAG_RELU: a tile fetched from the caller's arrays, its dy masked by y (fetched
 * with it), in pass 1 and again in pass 2; or in pass 2 by the bits pass 1 kept of it.
 * Pass 1 keeps the bits of a tile that streams again in pass 2 (neither resident nor in
 * GSM, which keep the masked dy), as far as the bits area holds them. With
 * BNG_FLAG_RELU_BITS, dy masked by the forward's bits of the tile's rows, fetched into
 * the bits area each time. */
static void bng_nhwc_relu(const bng_nhwc_core *c, const bng_tile *tile, int again)
{
    const bng_staged_job *job = c->job;
    const struct bng_relu_driver *relu = job->dtype->relu;
    const size_t element = job->dtype->element_bytes;
    int in_bits;

    if (BNG_RELU_BITS(&job->call)) {
        relu->fetch_bits(job, c->mem.relu_bits, tile);
        BNG_TRACE_KERNEL(c->kernel, "relu_by_bits", tile->rows, c->row_channels);
        relu->tile_by_bits(element, tile, c->mem.relu_bits);
        return;
    }
    in_bits = !tile->resident && !tile->kept && bng_nhwc_bits_cover(c, tile);
    if (again && in_bits) {
        BNG_TRACE_KERNEL(c->kernel, "relu_by_bits", tile->rows, c->row_channels);
        relu->tile_by_bits(element, tile, bng_nhwc_bits_at(c, tile));
        return;
    }
    relu->fetch_y(job, c->mem.tiles.y, tile);
    BNG_TRACE_KERNEL(c->kernel, "relu_mask", tile->rows, c->row_channels);
    relu->mask_tile(element, tile, c->mem.tiles.y);
    if (!again && in_bits) {
        BNG_TRACE_KERNEL(c->kernel, "relu_bits", tile->rows, c->row_channels);
        relu->tile_bits(element, tile, c->mem.tiles.y, bng_nhwc_bits_at(c, tile));
    }
}

/* ---- pass 1: this core's groups to their partial sums, in row order (the summation
 * order); the streamed rows first (those kept in GSM go there from their tile buffer
 * once reduced), then the resident ones, which land in the resident area ---- */

static int bng_nhwc_sum_next(bng_pass *pass, unsigned t)
{
    const bng_nhwc_core *c = pass->room;
    const size_t row = pass->tiles[t].first + pass->tiles[t].rows;

    if (row >= c->slice.end)
        return 0;
    bng_nhwc_tile(c, row, t ^ 1, &pass->tiles[t ^ 1]);
    return 1;
}

/* The end of a row group's partial sums: into the shared scratch, or alone added to the
 * total at once (the groups come in order). */
static void bng_nhwc_group_done(const bng_nhwc_core *c, size_t row)
{
    const bng_nhwc_memory *mem = &c->mem;
    const size_t max_chunk = c->job->dtype->max_chunk;
    BNG_SHARED float *group;
    bng_hal_dma puts[2];

    if (BNG_ALONE(c->job)) {
        bng_step_fold(c->channels, mem->sum_dy, mem->sum_dyxm, mem->part_dy, mem->part_dyxm);
        return;
    }
    group = c->scratch + row / c->slice.group_rows * 2 * max_chunk;
    puts[0] = bng_hal_dma_put(group, mem->part_dy, 1, c->channels * sizeof(float), 0, 0);
    puts[1] = bng_hal_dma_put(group + max_chunk, mem->part_dyxm, 1, c->channels * sizeof(float), 0, 0);
    bng_hal_dma_wait(puts[0]);
    bng_hal_dma_wait(puts[1]);
}

static void bng_nhwc_sum_work(bng_pass *pass, unsigned t)
{
    const bng_nhwc_core *c = pass->room;
    const bng_nhwc_memory *mem = &c->mem;
    const bng_tile *tile = &pass->tiles[t];
    const size_t row = tile->first, next = row + tile->rows;

    if (BNG_RELU(&c->job->call))
        bng_nhwc_relu(c, tile, 0);
    if (row % c->slice.group_rows == 0) {
        bng_step_zero(c->channels, mem->part_dy);
        bng_step_zero(c->channels, mem->part_dyxm);
    }
    bng_rows_reduce(c->kernel, tile->rows, c->row_channels, c->row_channels, tile->x,
                    tile->dy, mem->mean, mem->part_dy, mem->part_dyxm);
    if (next == c->slice.end || next % c->slice.group_rows == 0)
        bng_nhwc_group_done(c, row);
    if (tile->kept) {
        /* into GSM, whence pass 2 fetches it (x only when pass 2 reads it) */
        pass->puts[t][0] = c->job->call.is_train
                           ? bng_hal_dma_put(tile->gsm_x, tile->x, tile->rows, c->row_bytes,
                                             c->row_bytes, c->pitch)
                           : BNG_HAL_DMA_DONE;
        pass->puts[t][1] = bng_hal_dma_put(tile->gsm_dy, tile->dy,
                                           tile->rows, c->row_bytes, c->row_bytes, c->pitch);
    }
}

/* After the barrier: every core folds all groups in order (the same bits everywhere).
 * The groups' partial sums come from the shared scratch a piece at a time, one
 * transfer for as many groups as the tile buffers hold (free between the passes):
 * rows of part_dy and part_dyxm alternate there as in the scratch. */
static void bng_nhwc_fold(const bng_nhwc_core *c)
{
    const bng_nhwc_memory *mem = &c->mem;
    const size_t max_chunk = c->job->dtype->max_chunk, rc = c->row_channels;
    const size_t piece = BNG_TILE_BUFFERS * mem->tiles.bytes / (2 * rc * sizeof(float));
    BNG_VMEM float *area = (BNG_VMEM float *)mem->tiles.x[0];
    size_t g, i;

    bng_step_zero(c->channels, mem->sum_dy);
    bng_step_zero(c->channels, mem->sum_dyxm);
    for (g = 0; g < c->slice.groups; g += piece) {
        const size_t n = bng_min(piece, c->slice.groups - g);

        bng_step_pad_rows(c->channels, rc, 2 * n, area);
        bng_hal_dma_wait(bng_hal_dma_get(area, c->scratch + g * 2 * max_chunk, 2 * n,
                                         c->channels * sizeof(float), max_chunk * sizeof(float),
                                         rc * sizeof(float)));
        for (i = 0; i < n; i++)
            bng_step_fold(c->channels, mem->sum_dy, mem->sum_dyxm, area + 2 * i * rc,
                          area + (2 * i + 1) * rc);
    }
}

/* Pass 1 and the fold. The last tiles' puts into GSM complete at the barrier (a call
 * that keeps rows there is never alone), before the fold reuses their buffers. */
static void bng_nhwc_sum(void *unit)
{
    bng_nhwc_core *c = unit;
    bng_pass pass;

    if (BNG_ALONE(c->job)) {
        bng_step_zero(c->channels, c->mem.sum_dy);
        bng_step_zero(c->channels, c->mem.sum_dyxm);
    }
    if (c->slice.begin < c->slice.end) {
        bng_pass_init(&pass, c->job, c, 0, bng_nhwc_sum_next, bng_nhwc_sum_work);
        bng_nhwc_tile(c, c->slice.begin, 0, &pass.tiles[0]);
        bng_pass_run(&pass);
    }
    if (!BNG_ALONE(c->job)) {
        bng_hal_barrier();
        bng_nhwc_fold(c);
    }
}

/* ---- pass 2: dx for this core's rows, in place over the dy rows in private memory
 * (or added to the old dx, fetched into its own tile buffers) ----
 *
 * The k-th row of its order: the resident rows first (already in private memory, their
 * dx goes out while the next tile arrives), then those kept in GSM, then the others.
 * dx rows are independent: any order gives the same bits. */
static size_t bng_nhwc_dx_row(const bng_nhwc_core *c, size_t k)
{
    const size_t resident = c->mem.resident_rows, kept = c->mem.gsm_rows;

    if (k < resident)
        return c->slice.end - resident + k;
    k -= resident;
    return k < kept ? bng_nhwc_gsm_from(c) + k : c->slice.begin + (k - kept);
}

static int bng_nhwc_dx_next(bng_pass *pass, unsigned t)
{
    bng_nhwc_core *c = pass->room;

    c->dx_done += pass->tiles[t].rows;
    if (c->dx_done >= c->slice.end - c->slice.begin)
        return 0;
    bng_nhwc_tile(c, bng_nhwc_dx_row(c, c->dx_done), t ^ 1, &pass->tiles[t ^ 1]);
    return 1;
}

static void bng_nhwc_dx_work(bng_pass *pass, unsigned t)
{
    const bng_nhwc_core *c = pass->room;
    const bng_nhwc_memory *mem = &c->mem;
    const bng_tile *tile = &pass->tiles[t];

    /* a tile kept in GSM holds the dy pass 1 masked (so do the resident ones) */
    if (BNG_RELU(&c->job->call) && !tile->resident && !tile->kept)
        bng_nhwc_relu(c, tile, 1);
    bng_rows_dx(c->kernel, c->job->call.is_train, tile->rows, c->row_channels,
                c->row_channels, tile->x, tile->dy, bng_tile_dx(tile), mem->mean, mem->gain,
                mem->dy_mean, mem->slope, bng_tile_dx_store(tile));
    bng_pass_put_dx(pass, t, bng_tile_dx(tile));
}

static void bng_nhwc_dx(void *unit)
{
    bng_nhwc_core *c = unit;
    bng_pass pass;

    if (c->slice.begin == c->slice.end)
        return;
    bng_pass_init(&pass, c->job, c, 1, bng_nhwc_dx_next, bng_nhwc_dx_work);
    c->dx_done = 0;
    bng_nhwc_tile(c, bng_nhwc_dx_row(c, 0), 0, &pass.tiles[0]);
    bng_pass_run(&pass);
    bng_pass_drain(&pass, 0);
    bng_pass_drain(&pass, 1);
}

/* ---- the other steps of the op ---- */

static void bng_nhwc_gain(void *unit)
{
    bng_nhwc_core *c = unit;

    bng_step_gain(c->job->dtype, c->channels, c->mem.invar, c->mem.scale, c->mem.gain);
}

/* Apply: the chunk's global sums from the partial-sums buffer. dbias and dscale may be
 * the very array of mean, invar or scale: every core has the chunk's copy before the
 * lowest one writes them. */
static void bng_nhwc_get_sums(void *unit)
{
    bng_nhwc_core *c = unit;

    bng_stage_sums(c->job, c->first, c->channels, c->mem.sum_dy, c->mem.sum_dyxm, 0);
    if (!BNG_ALONE(c->job))
        bng_hal_barrier();
}

/* Reduce: the lowest selected core writes the chunk's sums (and, with the first chunk,
 * the count, from part_dy: free after the fold, it holds a vector per limb). */
static void bng_nhwc_put_sums(void *unit)
{
    bng_nhwc_core *c = unit;

    if (c->slice.rank != 0)
        return;
    bng_stage_sums(c->job, c->first, c->channels, c->mem.sum_dy, c->mem.sum_dyxm, 1);
    if (c->first == 0)
        bng_stage_count(c->job, c->job->call.batch, c->mem.part_dy);
}

/* Every core computes the dx coefficients; the lowest selected core writes dbias and
 * dscale (accumulating: onto what they held, which it reads first). */
static void bng_nhwc_finalize(void *unit)
{
    bng_nhwc_core *c = unit;
    const bng_staged_job *job = c->job;
    bng_nhwc_memory *mem = &c->mem;
    const int accumulate = BNG_ACCUMULATES(&job->call) && c->slice.rank == 0;

    if (accumulate)
        bng_stage_outputs(job, c->first, c->channels, mem->dbias, mem->dscale, 0);
    bng_step_finalize(job->dtype, c->channels, job->call.m, accumulate, mem->invar, mem->scale,
                      mem->sum_dy, mem->sum_dyxm, mem->dbias, mem->dscale, mem->gain,
                      mem->dy_mean, mem->slope);
    if (c->slice.rank == 0)
        bng_stage_outputs(job, c->first, c->channels, mem->dbias, mem->dscale, 1);
}

static const bng_unit_steps bng_nhwc_s_steps = {
    bng_nhwc_gain, bng_nhwc_sum, bng_nhwc_get_sums, bng_nhwc_put_sums, bng_nhwc_finalize,
    bng_nhwc_dx,
};

/* The kernel and chunk of a core's call: the job's; adding into dx, where the old dx's
 * tile buffers would not each hold a block of the kernel's chunk, the generic kernel on
 * the widest chunk that fits (the same bits: every kernel's channels are computed
 * alike). From the contract's memory size, not the HAL's: every core chunks alike. */
static void bng_nhwc_chunk_of(bng_nhwc_core *c)
{
    const bng_staged_job *job = c->job;
    const size_t chunk = bng_chunk(job->dtype, job->kernel);
    size_t fits;

    c->kernel = job->kernel;
    c->chunk = chunk;
    if (!BNG_ACCUMULATES_DX(&job->call))
        return;
    fits = bng_nhwc_memory_dx_chunk(job->dtype, BNG_ALONE(job) ? job->workspace_bytes
                                                               : BNG_PRIVATE_BYTES,
                                    chunk, BNG_RELU(&job->call));
    if (fits < chunk) {
        c->kernel = job->dtype->kernel_for_channels(0);     /* no count is 0: the generic */
        c->chunk = fits;
    }
}

void bng_nhwc_s_core(unsigned core, void *arg)
{
    const bng_staged_job *job = arg;
    const bng_call *call = &job->call;
    bng_nhwc_core c;
    size_t first, slot = 0;

    c.job = job;
    c.core = core;
    bng_nhwc_chunk_of(&c);
    bng_stage_slice(job->mask, core, call->batch, &c.slice);
    for (first = 0; first < call->channel; first += c.chunk, slot ^= 1) {
        if (!bng_nhwc_chunk(&c, first, slot))
            return;
        if (c.slice.idle) {
            /* More cores than row groups: this one only meets the others at the
             * chunk's barrier (of the calls that sum rows or apply). */
            if (BNG_SUMS_ROWS(call) || BNG_IS_APPLY(call))
                bng_hal_barrier();
            continue;
        }
        bng_run_steps(call, &bng_nhwc_s_steps, &c);
    }
}

#if BNG_SPLIT_MEMORY
/* Split: _p's arrays are in the calling core's vector memory, which the driver's
 * scalar code may not touch and whose rows a kernel may not read part of a vector of.
 * _p stages them like _s, through padded tiles in a workspace of that memory
 * (bng_hal_p_workspace), on the calling core alone: the caller's arrays are reached by
 * DMA only; the partial-sums buffer is in scalar memory with the parameter block. */
int bng_nhwc_p_run(const bng_dtype_config *dtype, const bng_kernel *kernel, const bng_call *call,
                   const void *x, const void *dy, void *dx, const bng_stats *stats, float *sums)
{
    bng_staged_job job;

    bng_job_init(&job, dtype, kernel, call, 1u, x, dy, dx, stats, sums);
    return bng_stage_p_run(&job, bng_nhwc_s_core);
}
#endif
