/* SPDX-License-Identifier: Apache-2.0 */
/* Copyright 2026 the batchnormgrad authors */
/* Owns: the training forward's per-channel steps, which _p (bng_fwd_nhwc_direct.c, on
 * the caller's arrays and its stack; on a split target staged) and _s
 * (bng_fwd_nhwc_staged.c, on a core's copies in private memory) both run, so that the
 * two give the same bits, in vectors of BNG_V lanes (bng_steps.h): the shift, the
 * merge of a row group's statistics, the moving statistics as the batch's, and the
 * chunk's results (bng_fwd.h). May call: bng_steps.h's per-channel helpers; no HAL, no
 * kernel. Compiled only for a target with the forward extension.
 */
#include "bng_fwd.h"
#include "bng_steps_vec.h"
#include "bng_sqrt.h"

#if BNG_SPLIT_MEMORY
/* The padded arrays are whole vectors of BNG_V lanes (contract section 5). */
typedef char bng_fwd_arrays_are_whole_vectors[BNG_PAD_LANES % BNG_V == 0 ? 1 : -1];
#endif

size_t bng_fwd_chunk_channels(const bng_fwd_config *config, const bng_fwd_kernel *kernel)
{
    return kernel->channels ? kernel->channels : config->sizes.generic_chunk;
}

void bng_fwd_step_count(size_t rows, BNG_VMEM float *limbs)
{
    bng_vstore(limbs, bng_vbroadcast((float)(rows & 0xffffffu)));
    bng_vstore(limbs + BNG_V, bng_vbroadcast((float)(rows >> 24)));
}

#if !BNG_SPLIT_MEMORY
/* ---- the direct _p's, on the caller's memory: a unified target's (a split target
 * stages _p, and reaches the caller's arrays by DMA only) ---- */

float *bng_fwd_partial(const bng_fwd_call *call, int array, size_t first)
{
    return call->partials + (size_t)array * call->channel + first;
}

void *bng_fwd_from(const void *array, size_t first, size_t element)
{
    return array == NULL ? NULL : bng_at_mut((void *)array, first, element);
}

void bng_fwd_step_point(const bng_fwd_call *call, size_t first, size_t stat_bytes,
                        bng_fwd_chunk_stats *stats)
{
    stats->scale = bng_fwd_from(call->scale, first, stat_bytes);
    stats->bias = bng_fwd_from(call->bias, first, stat_bytes);
    stats->mean = bng_fwd_from(call->mean, first, stat_bytes);
    stats->invar = bng_fwd_from(call->invar, first, stat_bytes);
    stats->moving_mean = bng_fwd_from(call->moving_mean, first, stat_bytes);
    stats->moving_var = bng_fwd_from(call->moving_var, first, stat_bytes);
}

/* The caller's partials buffer straight. */
void bng_fwd_step_partials(const bng_fwd_call *call, size_t first, size_t n,
                           const bng_fwd_arrays *a, int out)
{
    float *const stats[3] = {a->shift, a->mean, a->m2};
    size_t i, c;

    for (i = 0; i < 3; i++) {
        float *const buffer = bng_fwd_partial(call, (int)i, first);
        for (c = 0; c < n; c++) {
            if (out)
                buffer[c] = stats[i][c];
            else
                stats[i][c] = buffer[c];
        }
    }
    if (out && first == 0)
        bng_fwd_step_count(call->count, bng_fwd_partial(call, BNG_FWD_PARTIAL_COUNT, 0));
}
#endif

void bng_fwd_step_shift(size_t element_bytes, size_t n, const BNG_VMEM void *row,
                        BNG_VMEM float *shift)
{
    size_t c;

    for (c = 0; c < n; c += BNG_V)
        bng_vstore(shift + c, bng_load_sized(element_bytes, row, c));
}

/* Chan's formula (bng_fwd.h) on a vector of channels, the weights as floats formed by
 * bng_fwd_weights: mean and m2 := the merge of their `done` values with the part's. */
static void bng_fwd_chan(BNG_VMEM float *mean, BNG_VMEM float *m2, bng_vec part_mean,
                         bng_vec part_m2, bng_vec w_new, bng_vec w_cross)
{
    const bng_vec mean_a = bng_vload(mean), delta = bng_vsub(part_mean, mean_a);

    bng_vstore(mean, bng_vadd(mean_a, bng_vmul(delta, w_new)));
    bng_vstore(m2, bng_vadd(bng_vload(m2), bng_vadd(part_m2, bng_vmul(bng_vmul(delta, delta), w_cross))));
}

/* The weights of a merge of `rows` values into `done` (both not 0). */
static void bng_fwd_weights(size_t done, size_t rows, bng_vec *w_new, bng_vec *w_cross)
{
    const float w = (float)rows / (float)(done + rows);

    *w_new = bng_vbroadcast(w);
    *w_cross = bng_vbroadcast((float)done * w);
}

void bng_fwd_step_merge(size_t n, size_t done, size_t rows, const BNG_VMEM float *part_mean,
                        const BNG_VMEM float *part_m2, const bng_fwd_arrays *a)
{
    bng_vec w_new, w_cross;
    size_t c;

    if (rows == 0)
        return;
    if (done == 0) {
        for (c = 0; c < n; c += BNG_V) {
            bng_vstore(a->mean + c, bng_vload(part_mean + c));
            bng_vstore(a->m2 + c, bng_vload(part_m2 + c));
        }
        return;
    }
    bng_fwd_weights(done, rows, &w_new, &w_cross);
    for (c = 0; c < n; c += BNG_V)
        bng_fwd_chan(a->mean + c, a->m2 + c, bng_vload(part_mean + c), bng_vload(part_m2 + c),
                     w_new, w_cross);
}

void bng_fwd_step_global(const bng_dtype_config *sizes, size_t n, const bng_fwd_chunk_stats *stats,
                         const bng_fwd_arrays *a)
{
    bng_step_stats_to_float(sizes, n, stats->moving_mean, a->shift);
    bng_step_stats_to_float(sizes, n, stats->moving_var, a->m2);
    bng_step_zero(n, a->mean);
}

/* The square root of each lane (bng_sqrt.h): bng_sqrtf's on a unified target's one
 * lane; on a split target, whose generator takes the forward with the GNU backend only,
 * a GNU vector of BNG_V lanes, in registers. */
static bng_vec bng_fwd_sqrt(bng_vec v)
{
#if BNG_SPLIT_MEMORY
    typedef unsigned bng_fwd_lanes __attribute__((vector_size(4 * BNG_V)));
    bng_fwd_lanes bits, root;

    __builtin_memcpy(&bits, &v, sizeof bits);
    BNG_SQRT_BITS(bng_fwd_lanes, bits, root);
    __builtin_memcpy(&v, &root, sizeof v);
    return v;
#else
    float f;

    bng_vstore(&f, v);
    return bng_vbroadcast(bng_sqrtf(f));
#endif
}

/* Per channel: the variance (the batch's biased one, M2 / batch, or the moving one),
 * invar = 1 / sqrt(var + eps), y's gain (scale * invar, or invar with FIX_GAMMA) and
 * bias; the saved mean (shift + mean) and invar; in training the moving statistics,
 * MXNet's moving * momentum + batch * (1 - momentum), or PyTorch's
 * running * (1 - momentum) + batch * momentum with the unbiased variance. */
void bng_fwd_step_finalize(const bng_dtype_config *sizes, const bng_fwd_call *call, size_t n,
                           const bng_fwd_arrays *a, const bng_fwd_chunk_stats *stats)
{
    const int update = !call->global_stats && !call->keep_moving;
    const float other = 1.0f - call->momentum;
    const bng_vec keep = bng_vbroadcast(call->torch ? other : call->momentum);
    const bng_vec take = bng_vbroadcast(call->torch ? call->momentum : other);
    /* PyTorch's running variance is unbiased: m / (m - 1) (the check refused m = 1) */
    const bng_vec unbias = bng_vbroadcast(call->torch && update
                                          ? (float)call->count / (float)(call->count - 1) : 1.0f);
    const bng_vec count = bng_vbroadcast((float)call->count), eps = bng_vbroadcast(call->eps);
    const bng_vec one = bng_vbroadcast(1.0f);
    size_t c;

    if (!call->fix_gamma)
        bng_step_stats_to_float(sizes, n, stats->scale, a->gain);
    if (call->bias != NULL)
        bng_step_stats_to_float(sizes, n, stats->bias, a->bias);
    else
        bng_step_zero(n, a->bias);          /* BNG_FWD_NO_BIAS: y's bias 0 */
    for (c = 0; c < n; c += BNG_V) {
        const bng_vec m2 = bng_vload(a->m2 + c);
        const bng_vec var = call->global_stats ? m2 : bng_vdiv(m2, count);
        const bng_vec invar = bng_vdiv(one, bng_fwd_sqrt(bng_vadd(var, eps)));
        const bng_vec mean = bng_vadd(bng_vload(a->shift + c), bng_vload(a->mean + c));

        bng_vstore(a->gain + c, call->fix_gamma ? invar : bng_vmul(bng_vload(a->gain + c), invar));
        bng_stats_store(sizes, stats->mean, c, mean);
        bng_stats_store(sizes, stats->invar, c, invar);
        if (update) {
            const bng_vec batch_var = call->torch ? bng_vmul(var, unbias) : var;
            const bng_vec moving_mean = bng_stats_load(sizes, stats->moving_mean, c);
            const bng_vec moving_var = bng_stats_load(sizes, stats->moving_var, c);

            bng_stats_store(sizes, stats->moving_mean, c,
                            bng_vadd(bng_vmul(moving_mean, keep), bng_vmul(mean, take)));
            bng_stats_store(sizes, stats->moving_var, c,
                            bng_vadd(bng_vmul(moving_var, keep), bng_vmul(batch_var, take)));
        }
    }
}

void bng_fwd_step_pad(const bng_fwd_copies *k)
{
    const bng_dtype_config *sizes = &k->job->config->sizes;
    BNG_VMEM float *const floats[BNG_FWD_FLOAT_ARRAYS] = {
        k->a.shift, k->a.mean, k->a.m2, k->a.part_mean, k->a.part_m2, k->a.gain, k->a.bias};
    BNG_VMEM void *const stats[BNG_FWD_STATS_ARRAYS] = {
        k->scale, k->bias, k->stats.mean, k->stats.invar, k->stats.moving_mean, k->stats.moving_var};
    size_t at, i;

    for (i = 0; i < BNG_FWD_FLOAT_ARRAYS; i++)
        bng_step_pad_rows(k->n, BNG_PADDED(k->n), 1, floats[i]);
    for (at = k->n / BNG_V * BNG_V; at < BNG_PADDED(k->n); at += BNG_V)
        for (i = 0; i < BNG_FWD_STATS_ARRAYS; i++)
            bng_stats_store(sizes, stats[i], at, bng_vzero());
}
