/* SPDX-License-Identifier: Apache-2.0 */
/* Copyright 2026 the batchnormgrad authors */
/* Owns: the training forward's per-channel steps, which _p (bng_fwd_nhwc_direct.c, on
 * the caller's arrays and its stack) and _s (bng_fwd_nhwc_staged.c, on a core's copies
 * in private memory) both run, so that the two give the same bits: the shift, the
 * merge of a row group's statistics, the moving statistics as the batch's, and the
 * chunk's results (bng_fwd.h). May call: bng_steps.h's per-channel helpers; no HAL, no
 * kernel. Compiled only for a target with the forward extension.
 */
#include "bng_fwd.h"
#include "bng_steps_vec.h"

size_t bng_fwd_chunk_channels(const bng_fwd_config *config, const bng_fwd_kernel *kernel)
{
    return kernel->channels ? kernel->channels : config->sizes.generic_chunk;
}

float *bng_fwd_partial(const bng_fwd_call *call, int array, size_t first)
{
    return call->partials + (size_t)array * call->channel + first;
}

void bng_fwd_step_count(size_t rows, float *limbs)
{
    limbs[0] = (float)(rows & 0xffffffu);
    limbs[1] = (float)(rows >> 24);
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

/* The caller's partials buffer straight (on the caller's memory: _p). */
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

void bng_fwd_step_shift(size_t element_bytes, size_t n, const BNG_VMEM void *row,
                        BNG_VMEM float *shift)
{
    size_t c;

    for (c = 0; c < n; c += BNG_V)
        bng_vstore(shift + c, bng_load_sized(element_bytes, row, c));
}

/* Chan's formula (bng_fwd.h), the weights as floats. */
void bng_fwd_merge_one(BNG_VMEM float *mean, BNG_VMEM float *m2, size_t done, size_t rows,
                       float part_mean, float part_m2)
{
    const float n_f = (float)rows;
    float w_new, w_cross, delta;

    if (rows == 0)
        return;
    if (done == 0) {
        *mean = part_mean;
        *m2 = part_m2;
        return;
    }
    w_new = n_f / (float)(done + rows);
    w_cross = (float)done * w_new;
    delta = part_mean - *mean;
    *mean = *mean + delta * w_new;
    *m2 = *m2 + (part_m2 + delta * delta * w_cross);
}

void bng_fwd_step_merge(size_t n, size_t done, size_t rows, const BNG_VMEM float *part_mean,
                        const BNG_VMEM float *part_m2, const bng_fwd_arrays *a)
{
    size_t c;

    for (c = 0; c < n; c++)
        bng_fwd_merge_one(&a->mean[c], &a->m2[c], done, rows, part_mean[c], part_m2[c]);
}

void bng_fwd_step_global(const bng_dtype_config *sizes, size_t n, const bng_fwd_chunk_stats *stats,
                         const bng_fwd_arrays *a)
{
    size_t c;

    bng_step_stats_to_float(sizes, n, stats->moving_mean, a->shift);
    bng_step_stats_to_float(sizes, n, stats->moving_var, a->m2);
    for (c = 0; c < n; c++)
        a->mean[c] = 0.0f;
}

/* Element c of a per-channel array := v, rounded to the stats type. */
static void bng_fwd_put(const bng_dtype_config *sizes, BNG_VMEM void *array, size_t c, float v)
{
    bng_stats_store(sizes, array, c, bng_vbroadcast(v));
}

static float bng_fwd_get(const bng_dtype_config *sizes, const BNG_VMEM void *array, size_t c)
{
    float v;

    bng_vstore(&v, bng_stats_load(sizes, array, c));
    return v;
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
    const float keep = call->torch ? other : call->momentum, take = call->torch ? call->momentum : other;
    /* PyTorch's running variance is unbiased: m / (m - 1) (the check refused m = 1) */
    const float unbias = call->torch && update ? (float)call->count / (float)(call->count - 1) : 1.0f;
    size_t c;

    if (!call->fix_gamma)
        bng_step_stats_to_float(sizes, n, stats->scale, a->gain);
    if (call->bias != NULL)
        bng_step_stats_to_float(sizes, n, stats->bias, a->bias);
    else
        bng_step_zero(n, a->bias);          /* BNG_FWD_NO_BIAS: y's bias 0 */
    for (c = 0; c < n; c++) {
        const float var = call->global_stats ? a->m2[c] : a->m2[c] / (float)call->count;
        const float invar = 1.0f / bng_sqrtf(var + call->eps);
        const float mean = a->shift[c] + a->mean[c];

        a->gain[c] = call->fix_gamma ? invar : a->gain[c] * invar;
        bng_fwd_put(sizes, stats->mean, c, mean);
        bng_fwd_put(sizes, stats->invar, c, invar);
        if (update) {
            const float batch_var = call->torch ? var * unbias : var;
            const float moving_mean = bng_fwd_get(sizes, stats->moving_mean, c);
            const float moving_var = bng_fwd_get(sizes, stats->moving_var, c);

            bng_fwd_put(sizes, stats->moving_mean, c, moving_mean * keep + mean * take);
            bng_fwd_put(sizes, stats->moving_var, c, moving_var * keep + batch_var * take);
        }
    }
}
