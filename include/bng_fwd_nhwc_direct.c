/* SPDX-License-Identifier: Apache-2.0 */
/* Copyright 2026 the batchnormgrad authors */
/* Owns: the training forward's NHWC _p on the caller's memory where it lies, on the
 * calling core (a unified target's: a split target stages _p), a chunk of channels at
 * a time, its float arrays of the chunk on the stack: the statistics (bng_fwd.h), the
 * per-channel results (saved and moving statistics, y's coefficients), y. May call: bng_fwd.h's steps, bng_steps.h
 * (the row groups), the kernel's forward ukernels. Compiled
 * only for a target with the forward extension and unified memory (generator/plan.py's
 * rooms).
 */
#include "bng_fwd.h"
#include "bng_steps.h"

#if BNG_SPLIT_MEMORY
#error "bng_fwd_nhwc_direct.c is a unified target's room: a split target stages _p (bng_fwd_nhwc_staged.c)"
#endif

/* The float arrays of one chunk on the stack: within the backward's _p stack
 * (BNG_STACK_FLOAT_ARRAYS of the widest chunk), the figure make report gives. */
typedef struct {
    float shift[BNG_MAX_CHUNK];          /* the value every deviation is taken from */
    float mean[BNG_MAX_CHUNK];           /* the chunk's mean of x - shift */
    float m2[BNG_MAX_CHUNK];             /* its M2 (GLOBAL_STATS: the moving variance) */
    float part_mean[BNG_MAX_CHUNK], part_m2[BNG_MAX_CHUNK];    /* a row group's */
    float gain[BNG_MAX_CHUNK], bias[BNG_MAX_CHUNK];            /* y's coefficients */
} bng_fwd_stack;
typedef char bng_fwd_stack_fits[sizeof(bng_fwd_stack) <= BNG_STACK_FLOAT_ARRAYS * BNG_MAX_CHUNK * sizeof(float) ? 1 : -1];

/* One chunk of a call: channels [first, first + n). */
typedef struct {
    const bng_fwd_config *config;
    const bng_fwd_kernel *kernel;
    const bng_fwd_call *call;
    const void *x;
    void *y;
    size_t first, n;
    bng_fwd_stack s;
    bng_fwd_arrays a;                   /* pointing at s */
    bng_fwd_chunk_stats stats;          /* the caller's arrays from the chunk's first channel */
} bng_fwd_chunk;

/* The batch's statistics: the shift from the first row, every row group's in group
 * order (bng_fwd_step_merge). */
static void bng_fwd_batch_stats(bng_fwd_chunk *k)
{
    const bng_fwd_call *call = k->call;
    const size_t element = k->config->sizes.element_bytes, group_rows = bng_group_rows(call->batch);
    size_t row;

    bng_fwd_step_shift(element, k->n, bng_at(k->x, k->first, element), k->a.shift);
    for (row = 0; row < call->batch; row += group_rows) {
        const size_t rows = bng_min(group_rows, call->batch - row);
        k->kernel->stats(0, rows, k->n, call->channel,
                         bng_at(k->x, row * call->channel + k->first, element), k->a.shift,
                         k->a.part_mean, k->a.part_m2);
        bng_fwd_step_merge(k->n, row, rows, k->a.part_mean, k->a.part_m2, &k->a);
    }
}

/* The chunk's y from its coefficients, over every row; with RELU the ReLU's, and its
 * keep bits where asked (the chunk's columns of every word row of them). */
static void bng_fwd_y(const bng_fwd_chunk *k, int stream)
{
    const bng_fwd_call *call = k->call;
    const size_t element = k->config->sizes.element_bytes;
    const void *x = bng_at(k->x, k->first, element);
    void *y = bng_at_mut(k->y, k->first, element);

    if (call->relu)
        k->kernel->norm_relu(call->batch, k->n, call->channel, x, y, k->s.shift, k->s.mean,
                             k->s.gain, k->s.bias, bng_fwd_from(call->relu_bits, k->first, element),
                             call->channel, stream);
    else
        k->kernel->norm(call->batch, k->n, call->channel, x, y, k->s.shift, k->s.mean, k->s.gain,
                        k->s.bias, stream);
}

int bng_fwd_nhwc_p_run(const bng_fwd_config *config, const bng_fwd_call *call, const void *x,
                       void *y)
{
    const size_t element = config->sizes.element_bytes;
    const int stream = call->batch * call->channel * element >= BNG_STREAM_DX_BYTES;
    bng_fwd_chunk k;
    size_t chunk;

    k.config = config;
    k.kernel = config->kernel_for_channels(call->channel);
    k.call = call;
    k.x = x;
    k.y = y;
    k.a.shift = k.s.shift;
    k.a.mean = k.s.mean;
    k.a.m2 = k.s.m2;
    k.a.part_mean = k.s.part_mean;
    k.a.part_m2 = k.s.part_m2;
    k.a.gain = k.s.gain;
    k.a.bias = k.s.bias;
    chunk = bng_fwd_chunk_channels(config, k.kernel);
    for (k.first = 0; k.first < call->channel; k.first += chunk) {
        k.n = bng_min(chunk, call->channel - k.first);
        bng_fwd_step_point(call, k.first, config->sizes.stats_bytes, &k.stats);
        if (call->global_stats)
            bng_fwd_step_global(&config->sizes, k.n, &k.stats, &k.a);
        else if (call->partials_in)
            bng_fwd_step_partials(call, k.first, k.n, &k.a, 0);
        else
            bng_fwd_batch_stats(&k);
        if (call->partials_out) {
            bng_fwd_step_partials(call, k.first, k.n, &k.a, 1);
            continue;
        }
        bng_fwd_step_finalize(&config->sizes, call, k.n, &k.a, &k.stats);
        bng_fwd_y(&k, stream);
    }
    return BNG_OK;
}
