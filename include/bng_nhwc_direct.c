/* SPDX-License-Identifier: Apache-2.0 */
/* Copyright 2026 the batchnormgrad authors */
/* Owns: NHWC _p on the caller's memory where it lies, on the calling core: a unified
 * target's (on a split target _p is staged: bng_nhwc_staged.c), its float arrays of a
 * chunk on the stack. May call: bng_steps.h, the storage type's relu driver
 * (bng_relu.h: the kernels' ReLU ukernels), the kernel's row ukernels. Compiled only for
 * a target with unified memory (generator/plan.py's rooms).
 */
#include "bng_steps.h"
#include "bng_relu.h"

#if BNG_SPLIT_MEMORY
#error "bng_nhwc_direct.c is a unified target's room: a split target stages _p (bng_nhwc_staged.c)"
#endif

/* The float arrays of one chunk on the stack: BNG_STACK_FLOAT_ARRAYS of the
 * widest chunk, the figure the generator and make report give. */
typedef struct {
    float mean[BNG_MAX_CHUNK], sum_dy[BNG_MAX_CHUNK], sum_dyxm[BNG_MAX_CHUNK];
    float part_dy[BNG_MAX_CHUNK], part_dyxm[BNG_MAX_CHUNK];
    float gain[BNG_MAX_CHUNK], dy_mean[BNG_MAX_CHUNK], slope[BNG_MAX_CHUNK];
} bng_p_stack;
typedef char bng_stack_agrees[sizeof(bng_p_stack) == BNG_STACK_FLOAT_ARRAYS * BNG_MAX_CHUNK * sizeof(float) ? 1 : -1];

/* A _p call on the caller's memory, at its chunk from channel `first`. */
typedef struct {
    const bng_dtype_config *dtype;
    const bng_kernel *kernel;
    const bng_call *call;
    const void *x, *dy;
    void *dx;
    const bng_stats *stats;
    size_t first, channels;
    float *sum_dy, *sum_dyxm;      /* the caller's partial-sums buffer (reduce, apply), or s's */
    int keep_bits;                 /* fused ReLU: pass 1 leaves the keep bits in dx */
    int stream;                    /* dx's store mode (bng_p_store_mode) */
    bng_p_stack s;
} bng_nhwc_p;

static const void *bng_nhwc_p_stat(const bng_nhwc_p *p, const void *array)
{
    return bng_at(array, p->first, p->dtype->stats_bytes);
}

/* Pass 1's ukernel on the caller's `rows` rows from row `row` (a block boundary) into
 * the partial sums (of dy masked by y with BNG_FLAG_RELU; the keep bits then go to dx
 * when pass 2 reads them there, else all into one row of the stack's slope, which
 * finalize writes afterwards; or masked by the forward's keep bits with
 * BNG_FLAG_RELU_BITS). */
static void bng_nhwc_p_reduce(bng_nhwc_p *p, size_t row, size_t rows)
{
    const bng_call *call = p->call;
    const size_t element = p->dtype->element_bytes, at = row * call->channel + p->first;

    if (BNG_RELU_BITS(call)) {
        p->dtype->relu->rows_reduce_keeps(p->kernel, rows, p->channels, call->channel,
                                          bng_at(p->x, at, element), bng_at(p->dy, at, element),
                                          bng_at(call->y, row / BNG_KEEP_ROWS(element)
                                                          * call->channel + p->first, element),
                                          call->channel, p->s.mean, p->s.part_dy,
                                          p->s.part_dyxm);
        return;
    }
    if (BNG_RELU(call)) {
        p->dtype->relu->rows_reduce(p->kernel, rows, p->channels, call->channel,
                                    bng_at(p->x, at, element), bng_at(p->dy, at, element),
                                    bng_at(call->y, at, element), p->s.mean, p->s.part_dy,
                                    p->s.part_dyxm,
                                    p->keep_bits ? bng_at_mut(p->dx, at, element) : p->s.slope,
                                    p->keep_bits ? call->channel : 0);
        return;
    }
    bng_rows_reduce(p->kernel, rows, p->channels, call->channel, bng_at(p->x, at, element),
                    bng_at(p->dy, at, element), p->s.mean, p->s.part_dy, p->s.part_dyxm);
}

/* Pass 1 on the caller's memory: every row group of the chunk to its partial sums,
 * folded in group order into sum_dy and sum_dyxm. */
static void bng_nhwc_p_sum(void *unit)
{
    bng_nhwc_p *p = unit;
    const size_t batch = p->call->batch, group_rows = bng_group_rows(batch);
    size_t row;

    bng_step_zero(p->channels, p->sum_dy);
    bng_step_zero(p->channels, p->sum_dyxm);
    for (row = 0; row < batch; row += group_rows) {
        bng_step_zero(p->channels, p->s.part_dy);
        bng_step_zero(p->channels, p->s.part_dyxm);
        bng_nhwc_p_reduce(p, row, bng_min(group_rows, batch - row));
        bng_step_fold(p->channels, p->sum_dy, p->sum_dyxm, p->s.part_dy, p->s.part_dyxm);
    }
}

static void bng_nhwc_p_gain(void *unit)
{
    bng_nhwc_p *p = unit;

    bng_step_gain(p->dtype, p->channels, bng_nhwc_p_stat(p, p->stats->invar),
                  bng_nhwc_p_stat(p, p->stats->scale), p->s.gain);
}

static void bng_nhwc_p_finalize(void *unit)
{
    bng_nhwc_p *p = unit;
    const size_t stat = p->dtype->stats_bytes;

    bng_step_finalize(p->dtype, p->channels, p->call->m, BNG_ACCUMULATES(p->call),
                      bng_nhwc_p_stat(p, p->stats->invar), bng_nhwc_p_stat(p, p->stats->scale),
                      p->sum_dy, p->sum_dyxm, bng_at_mut(p->stats->dbias, p->first, stat),
                      bng_at_mut(p->stats->dscale, p->first, stat), p->s.gain, p->s.dy_mean,
                      p->s.slope);
}

/* Pass 2's _keeps ukernel on `rows` of the caller's rows of the chunk from row `row`,
 * the words of those rows from `keeps` (bng_ukernel.h). */
static void bng_nhwc_p_dx_keeps(const bng_nhwc_p *p, size_t row, size_t rows, const void *keeps,
                                size_t keeps_stride)
{
    const bng_call *call = p->call;
    const size_t element = p->dtype->element_bytes, at = row * call->channel + p->first;

    p->dtype->relu->rows_dx_keeps(p->kernel, call->is_train, rows, p->channels, call->channel,
                                  call->is_train ? bng_at(p->x, at, element) : NULL,
                                  bng_at(p->dy, at, element), keeps, keeps_stride,
                                  bng_at_mut(p->dx, at, element), p->s.mean, p->s.gain,
                                  p->s.dy_mean, p->s.slope, p->stream);
}

/* Pass 2 by the keep bits pass 1 left in dx: a word of each whole group of
 * BNG_KEEP_ROWS(element) rows at the group's last row, a last partial group's at the
 * batch's last row (reduce_relu's layout), which a call of its own reads. */
static void bng_nhwc_p_dx_by_dx_keeps(const bng_nhwc_p *p)
{
    const size_t element = p->dtype->element_bytes, channel = p->call->channel;
    const size_t batch = p->call->batch, word_rows = BNG_KEEP_ROWS(element);
    const size_t whole = batch / word_rows * word_rows;

    if (whole != 0)
        bng_nhwc_p_dx_keeps(p, 0, whole,
                            bng_at(p->dx, (word_rows - 1) * channel + p->first, element),
                            word_rows * channel);
    if (whole != batch)
        bng_nhwc_p_dx_keeps(p, whole, batch - whole,
                            bng_at(p->dx, (batch - 1) * channel + p->first, element), 0);
}

/* Pass 2's ukernel on all the caller's rows of the chunk (dy masked by y with
 * BNG_FLAG_RELU, or by the keep bits pass 1 left in dx, or by the forward's with
 * BNG_FLAG_RELU_BITS). */
static void bng_nhwc_p_dx(void *unit)
{
    bng_nhwc_p *p = unit;
    const bng_call *call = p->call;
    const size_t element = p->dtype->element_bytes, first = p->first;
    const void *x = call->is_train ? bng_at(p->x, first, element) : NULL;
    const void *dy = bng_at(p->dy, first, element);
    void *dx = bng_at_mut(p->dx, first, element);

    if (BNG_RELU_BITS(call))
        bng_nhwc_p_dx_keeps(p, 0, call->batch, bng_at(call->y, first, element), call->channel);
    else if (p->keep_bits)
        bng_nhwc_p_dx_by_dx_keeps(p);
    else if (BNG_RELU(call))
        p->dtype->relu->rows_dx(p->kernel, call->is_train, call->batch, p->channels,
                                call->channel, x, dy, bng_at(call->y, first, element), dx,
                                p->s.mean, p->s.gain, p->s.dy_mean, p->s.slope, p->stream);
    else
        bng_rows_dx(p->kernel, call->is_train, call->batch, p->channels, call->channel, x, dy, dx,
                    p->s.mean, p->s.gain, p->s.dy_mean, p->s.slope, p->stream);
}

/* reduce sums straight into the caller's buffer, apply finalizes from it: no steps of
 * their own. */
static const bng_unit_steps bng_nhwc_p_steps = {
    bng_nhwc_p_gain, bng_nhwc_p_sum, NULL, NULL, bng_nhwc_p_finalize, bng_nhwc_p_dx,
};

/* Whether pass 1 of a fused ReLU call leaves the keep bits in dx for pass 2: a call that
 * sums its rows and then writes dx, where dx is neither x nor dy (pass 2 reads x and dy
 * in every row, the rows that hold the words too) nor accumulated (pass 2 reads its old
 * values). A word covers rows that lie in one block (and so in one row group). */
typedef char bng_keep_words_in_blocks[BNG_BLOCK_ROWS % BNG_KEEP_ROWS(sizeof(float)) == 0
                                       ? 1 : -1];
static int bng_nhwc_p_keeps_in_dx(const bng_call *call, const void *x, const void *dy,
                                  const void *dx)
{
    return BNG_RELU(call) && !BNG_RELU_BITS(call) && BNG_READS_TWICE(call) && dx != x
           && dx != dy && !BNG_ACCUMULATES_DX(call);
}

/* Chunks are independent: each is summed, finalized and written in turn; dx in one
 * pass over all rows. */
int bng_nhwc_p_run(const bng_dtype_config *dtype, const bng_kernel *kernel, const bng_call *call,
                   const void *x, const void *dy, void *dx, const bng_stats *stats, float *sums)
{
    const size_t chunk = bng_chunk(dtype, kernel), channel = call->channel;
    bng_nhwc_p p;

    p.dtype = dtype;
    p.kernel = kernel;
    p.call = call;
    p.x = x;
    p.dy = dy;
    p.dx = dx;
    p.stats = stats;
    p.keep_bits = bng_nhwc_p_keeps_in_dx(call, x, dy, dx);
    p.stream = bng_p_store_mode(call, call->batch * channel * dtype->element_bytes);
    for (p.first = 0; p.first < channel; p.first += chunk) {
        p.channels = bng_min(chunk, channel - p.first);
        p.sum_dy = sums != NULL ? sums + p.first : p.s.sum_dy;
        p.sum_dyxm = sums != NULL ? sums + channel + p.first : p.s.sum_dyxm;
        if (!BNG_IS_DX_ONLY(call))
            bng_step_stats_to_float(dtype, p.channels, bng_nhwc_p_stat(&p, stats->mean), p.s.mean);
        bng_run_steps(call, &bng_nhwc_p_steps, &p);
    }
    if (BNG_IS_REDUCE(call))
        bng_step_count(call->batch, sums + 2 * channel);
    return BNG_OK;
}
