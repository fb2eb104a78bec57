/* SPDX-License-Identifier: Apache-2.0 */
/* Copyright 2026 the batchnormgrad authors */
/* Owns: the training forward's NCHW _p on the caller's memory where it lies, on the
 * calling core: channel by channel, each channel's planes straight from the caller's
 * arrays, its values on the stack. May call: bng_fwd_nchw.h's and bng_fwd.h's steps,
 * the forward's NCHW ukernels. Compiled only for a target with forward and nchw on
 * unified memory (a split target's _p stages, bng_fwd_nchw_staged.c).
 */
#include "bng_fwd_nchw.h"

/* One channel's float values, on the stack, and the arrays of one channel bng_fwd.h's
 * steps work on, pointing at them. */
typedef struct {
    float shift, mean, m2, part_mean, part_m2, gain, bias;
} bng_fwd_nchw_values;

static void bng_fwd_nchw_arrays(bng_fwd_nchw_values *v, bng_fwd_arrays *a)
{
    a->shift = &v->shift;
    a->mean = &v->mean;
    a->m2 = &v->m2;
    a->part_mean = &v->part_mean;
    a->part_m2 = &v->part_m2;
    a->gain = &v->gain;
    a->bias = &v->bias;
}

/* A _p call at channel c. */
typedef struct {
    const bng_fwd_config *config;
    const bng_fwd_nchw_kernel *kernel;
    const bng_fwd_call *call;
    const void *x;
    void *y;
    size_t c;
    int stream;                         /* y bypasses the caches (BNG_STREAM_DX_BYTES) */
    bng_fwd_nchw_values v;
    bng_fwd_arrays a;                   /* pointing at v */
    bng_fwd_chunk_stats stats;          /* the caller's arrays at the channel */
} bng_fwd_nchw_p;

/* Element `at` of plane b of the channel in the call's arrays. */
static size_t bng_fwd_nchw_p_plane(const bng_fwd_nchw_p *p, size_t b)
{
    return (b * p->call->channel + p->c) * p->call->spatial;
}

/* The channel's batch statistics: the shift from its first value, its planes in the
 * order of bng_fwd_nchw.h. */
static void bng_fwd_nchw_p_batch_stats(bng_fwd_nchw_p *p)
{
    const bng_fwd_call *call = p->call;
    const size_t element = p->config->sizes.element_bytes;
    bng_fwd_nchw_sum_area area;
    bng_fwd_nchw_sums s;
    size_t b;

    bng_fwd_step_shift(element, 1, bng_at(p->x, bng_fwd_nchw_p_plane(p, 0), element), p->a.shift);
    bng_fwd_nchw_sums_start(&s, &area, call->batch, call->spatial, p->kernel->lanes);
    for (b = 0; b < call->batch; b++) {
        p->kernel->stats(call->spatial, 0, bng_at(p->x, bng_fwd_nchw_p_plane(p, b), element),
                         p->v.shift, area.lane_mean, area.lane_m2);
        bng_fwd_nchw_plane_done(&s, b);
    }
    bng_fwd_nchw_sums_end(&s, &p->a);
}

/* The channel's y plane by plane; with RELU the ReLU's, and its keep bits where asked
 * (each plane's words, bng_fwd_nchw.h). */
static void bng_fwd_nchw_p_y(const bng_fwd_nchw_p *p)
{
    const bng_fwd_call *call = p->call;
    const size_t element = p->config->sizes.element_bytes;
    const size_t words = BNG_FWD_PLANE_WORDS(call->spatial, element);
    size_t b;

    for (b = 0; b < call->batch; b++) {
        const size_t at = bng_fwd_nchw_p_plane(p, b);
        const void *x = bng_at(p->x, at, element);
        void *y = bng_at_mut(p->y, at, element);

        if (call->relu)
            p->kernel->norm_relu(call->spatial, x, y, p->v.shift, p->v.mean, p->v.gain, p->v.bias,
                                 bng_fwd_from(call->relu_bits, (b * call->channel + p->c) * words,
                                              element),
                                 p->stream);
        else
            p->kernel->norm(call->spatial, x, y, p->v.shift, p->v.mean, p->v.gain, p->v.bias,
                            p->stream);
    }
}

int bng_fwd_nchw_p_run(const bng_fwd_config *config, const bng_fwd_call *call, const void *x,
                       void *y)
{
    bng_fwd_nchw_p p;

    p.config = config;
    p.kernel = config->nchw;
    p.call = call;
    p.x = x;
    p.y = y;
    p.stream = call->batch * call->channel * call->spatial * config->sizes.element_bytes
               >= BNG_STREAM_DX_BYTES;
    bng_fwd_nchw_arrays(&p.v, &p.a);
    for (p.c = 0; p.c < call->channel; p.c++) {
        bng_fwd_step_point(call, p.c, config->sizes.stats_bytes, &p.stats);
        if (call->global_stats)
            bng_fwd_step_global(&config->sizes, 1, &p.stats, &p.a);
        else if (call->partials_in)
            bng_fwd_step_partials(call, p.c, 1, &p.a, 0);
        else
            bng_fwd_nchw_p_batch_stats(&p);
        if (call->partials_out) {
            bng_fwd_step_partials(call, p.c, 1, &p.a, 1);
            continue;
        }
        bng_fwd_step_finalize(&config->sizes, call, 1, &p.a, &p.stats);
        bng_fwd_nchw_p_y(&p);
    }
    if (!call->partials_out)
        p.kernel->end(p.stream);    /* one fence for the call's planes */
    return BNG_OK;
}
