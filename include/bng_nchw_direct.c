/* SPDX-License-Identifier: Apache-2.0 */
/* Copyright 2026 the batchnormgrad authors */
/* Owns: NCHW _p on the caller's memory: channel by channel, each channel's planes
 * straight from the caller's arrays. May call: bng_nchw_steps.h, bng_relu.h (the
 * kernels' ReLU ukernels), the NCHW ukernels. Compiled only for a unified target that
 * lists nchw (a split target's _p stages: bng_nchw_staged.c).
 */
#include "bng_nchw_steps.h"
#include "bng_relu.h"

/* A _p call at channel c. */
typedef struct {
    const bng_dtype_config *dtype;
    const bng_nchw_kernel *kernel;
    const bng_call *call;
    const void *x, *dy;
    void *dx;
    const bng_stats *stats;
    float *sums;                   /* reduce: out; apply: in */
    int stream;                    /* dx's store mode (bng_p_store_mode) */
    size_t c;
    bng_nchw_channel ch;
} bng_nchw_p;

static const void *bng_nchw_p_stat(const bng_nchw_p *p, const void *array)
{
    return bng_at(array, p->c, p->dtype->stats_bytes);
}

/* Element `at` of plane b of the channel in the call's arrays. */
static size_t bng_nchw_p_plane(const bng_nchw_p *p, size_t b)
{
    return (b * p->call->channel + p->c) * p->call->spatial;
}

/* What masks plane b's dy with BNG_FLAG_RELU: its y, or its words of the forward's keep
 * bits (BNG_FLAG_RELU_BITS: a plane's words a plane apart, batch_norm_fwd.h). */
static const void *bng_nchw_p_mask(const bng_nchw_p *p, size_t b)
{
    const bng_call *call = p->call;
    const size_t element = p->dtype->element_bytes;

    if (BNG_RELU_BITS(call))
        return bng_at(call->y, (b * call->channel + p->c) * BNG_KEEP_WORDS(call->spatial, element),
                      element);
    return bng_at(call->y, bng_nchw_p_plane(p, b), element);
}

static void bng_nchw_p_gain(void *unit)
{
    bng_nchw_p *p = unit;

    bng_step_gain(p->dtype, 1, bng_nchw_p_stat(p, p->stats->invar),
                  bng_nchw_p_stat(p, p->stats->scale), p->ch.gain);
}

/* The channel's sums, its planes straight from the caller's arrays (dy masked by y,
 * or its keep bits, with BNG_FLAG_RELU). */
static void bng_nchw_p_sum(void *unit)
{
    bng_nchw_p *p = unit;
    const bng_call *call = p->call;
    const size_t element = p->dtype->element_bytes;
    bng_nchw_sum_area area;
    bng_nchw_sums s;
    size_t b;

    bng_nchw_sums_start(&s, &area, call->batch, p->kernel->lanes);
    for (b = 0; b < call->batch; b++) {
        const size_t at = bng_nchw_p_plane(p, b);
        const void *x = bng_at(p->x, at, element), *dy = bng_at(p->dy, at, element);

        bng_nchw_plane_start(&s);
        if (BNG_RELU(call))
            bng_relu_plane_reduce(p->kernel, BNG_RELU_BITS(call), call->spatial, x, dy,
                                  bng_nchw_p_mask(p, b), p->ch.mean[0], area.lane_dy,
                                  area.lane_dyxm);
        else
            bng_nchw_reduce(p->kernel, call->spatial, x, dy, &p->ch, &s);
        bng_nchw_plane_done(&s, b);
    }
    bng_nchw_sums_end(&s, &p->ch);
}

static void bng_nchw_p_get_sums(void *unit)
{
    bng_nchw_p *p = unit;

    p->ch.sum_dy[0] = p->sums[p->c];
    p->ch.sum_dyxm[0] = p->sums[p->call->channel + p->c];
}

static void bng_nchw_p_put_sums(void *unit)
{
    bng_nchw_p *p = unit;

    p->sums[p->c] = p->ch.sum_dy[0];
    p->sums[p->call->channel + p->c] = p->ch.sum_dyxm[0];
}

static void bng_nchw_p_finalize(void *unit)
{
    bng_nchw_p *p = unit;
    const size_t stat = p->dtype->stats_bytes;

    bng_nchw_finalize(p->dtype, p->call, bng_nchw_p_stat(p, p->stats->invar),
                      bng_nchw_p_stat(p, p->stats->scale), bng_at_mut(p->stats->dbias, p->c, stat),
                      bng_at_mut(p->stats->dscale, p->c, stat), &p->ch);
}

/* dx plane by plane. */
static void bng_nchw_p_dx(void *unit)
{
    bng_nchw_p *p = unit;
    const bng_call *call = p->call;
    const size_t element = p->dtype->element_bytes;
    size_t b;

    for (b = 0; b < call->batch; b++) {
        const size_t at = bng_nchw_p_plane(p, b);
        const void *x = call->is_train ? bng_at(p->x, at, element) : NULL;

        if (BNG_RELU(call))
            bng_relu_plane_dx(p->kernel, BNG_RELU_BITS(call), call->is_train, call->spatial, x,
                              bng_at(p->dy, at, element), bng_nchw_p_mask(p, b),
                              bng_at_mut(p->dx, at, element), p->ch.mean[0], p->ch.gain[0],
                              p->ch.dy_mean[0], p->ch.slope[0], p->stream);
        else
            bng_nchw_dx(p->kernel, call->is_train, call->spatial, x, bng_at(p->dy, at, element),
                        bng_at_mut(p->dx, at, element), &p->ch, p->stream);
    }
}

static const bng_unit_steps bng_nchw_p_steps = {
    bng_nchw_p_gain, bng_nchw_p_sum, bng_nchw_p_get_sums, bng_nchw_p_put_sums,
    bng_nchw_p_finalize, bng_nchw_p_dx,
};

int bng_nchw_p_run(const bng_dtype_config *dtype, const bng_call *call, const void *x,
                   const void *dy, void *dx, const bng_stats *stats, float *sums)
{
    bng_nchw_p p;

    p.dtype = dtype;
    p.kernel = dtype->nchw_kernel_for_spatial(call->spatial);
    p.call = call;
    p.x = x;
    p.dy = dy;
    p.dx = dx;
    p.stats = stats;
    p.sums = sums;
    p.stream = bng_p_store_mode(call, call->batch * call->channel * call->spatial
                                          * dtype->element_bytes);
    for (p.c = 0; p.c < call->channel; p.c++) {
        if (!BNG_IS_DX_ONLY(call))
            bng_step_stats_to_float(dtype, 1, bng_nchw_p_stat(&p, stats->mean), p.ch.mean);
        bng_run_steps(call, &bng_nchw_p_steps, &p);
    }
    if (BNG_IS_REDUCE(call))
        bng_step_count(call->batch * call->spatial, sums + 2 * call->channel);
    else
        p.kernel->dx_end(p.stream);    /* one fence for the call's planes */
    return BNG_OK;
}

/* What the extended calls' config points at (bng_dtype_config.nchw). */
const struct bng_nchw_driver bng_nchw_driver = { bng_nchw_p_run, bng_nchw_s_core };
