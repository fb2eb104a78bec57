/* SPDX-License-Identifier: Apache-2.0 */
/* Copyright 2026 the batchnormgrad authors */
/* Owns: the training forward's NHWC _p on the caller's memory where it lies, on the
 * calling core (a unified target's), a chunk of channels at a time, its float arrays of
 * the chunk on the stack: the statistics (bng_fwd.h), the per-channel results (saved
 * and moving statistics, y's coefficients), y. May call: bng_steps.h (the row groups,
 * the per-channel arrays' conversions), the kernel's forward ukernels. Compiled
 * only for a target with the forward extension (unified memory: the generator refuses
 * it on a split target).
 */
#include "bng_fwd.h"
#include "bng_steps.h"

#if BNG_SPLIT_MEMORY
#error "bng_fwd_nhwc_direct.c runs on the caller's memory: a unified target's room"
#endif

/* The float arrays of one chunk on the stack: within the backward's _p stack
 * (BNG_STACK_FLOAT_ARRAYS of the widest chunk), the figure make report gives. */
typedef struct {
    float shift[BNG_MAX_CHUNK];          /* the value every deviation is taken from */
    float mean[BNG_MAX_CHUNK];           /* the chunk's mean of x - shift */
    float m2[BNG_MAX_CHUNK];             /* its sum of squared deviations; then the variance */
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
} bng_fwd_chunk;

static const void *bng_fwd_stat(const bng_fwd_chunk *k, const void *array)
{
    return bng_at(array, k->first, k->config->sizes.stats_bytes);
}

/* Element i of the chunk's per-channel output array := v, rounded to the stats type. */
static void bng_fwd_put(const bng_fwd_chunk *k, void *array, size_t i, float v)
{
    bng_stats_store(&k->config->sizes, bng_at_mut(array, k->first, k->config->sizes.stats_bytes), i,
                    bng_vbroadcast(v));
}

/* Merge n rows' mean and M2 into the chunk's, `done` rows before them (bng_fwd.h: the
 * ukernels' block merge, on the groups). */
static void bng_fwd_merge(bng_fwd_chunk *k, size_t done, size_t n)
{
    const float n_f = (float)n;
    const float w_new = n_f / (float)(done + n), w_cross = (float)done * w_new;
    size_t c;

    for (c = 0; c < k->n; c++) {
        if (done == 0) {
            k->s.mean[c] = k->s.part_mean[c];
            k->s.m2[c] = k->s.part_m2[c];
        } else {
            const float delta = k->s.part_mean[c] - k->s.mean[c];
            k->s.mean[c] = k->s.mean[c] + delta * w_new;
            k->s.m2[c] = k->s.m2[c] + (k->s.part_m2[c] + delta * delta * w_cross);
        }
    }
}

/* The batch's statistics: the shift from the first row, every row group's in group
 * order, then m2 := the biased variance M2 / batch. */
static void bng_fwd_batch_stats(bng_fwd_chunk *k)
{
    const bng_fwd_call *call = k->call;
    const size_t element = k->config->sizes.element_bytes, group_rows = bng_group_rows(call->batch);
    const void *first_row = bng_at(k->x, k->first, element);
    size_t row, c;

    for (c = 0; c < k->n; c++)
        bng_vstore(k->s.shift + c, bng_load_sized(element, first_row, c));
    for (row = 0; row < call->batch; row += group_rows) {
        const size_t rows = bng_min(group_rows, call->batch - row);
        k->kernel->stats(rows, k->n, call->channel,
                         bng_at(k->x, row * call->channel + k->first, element), k->s.shift,
                         k->s.part_mean, k->s.part_m2);
        bng_fwd_merge(k, row, rows);
    }
    for (c = 0; c < k->n; c++)
        k->s.m2[c] = k->s.m2[c] / (float)call->batch;
}

/* The moving statistics instead (GLOBAL_STATS): the shift is the moving mean, the mean
 * about it 0, the variance the moving variance. */
static void bng_fwd_global_stats(bng_fwd_chunk *k)
{
    const bng_dtype_config *sizes = &k->config->sizes;
    size_t c;

    bng_step_stats_to_float(sizes, k->n, bng_fwd_stat(k, k->call->moving_mean), k->s.shift);
    bng_step_stats_to_float(sizes, k->n, bng_fwd_stat(k, k->call->moving_var), k->s.m2);
    for (c = 0; c < k->n; c++)
        k->s.mean[c] = 0.0f;
}

/* Per channel: invar = 1 / sqrt(var + eps), y's gain (scale * invar, or invar with
 * FIX_GAMMA) and bias; the saved mean (shift + mean) and invar; in training the moving
 * statistics, MXNet's moving * momentum + batch * (1 - momentum), or PyTorch's
 * running * (1 - momentum) + batch * momentum with the unbiased variance. */
static void bng_fwd_finalize(bng_fwd_chunk *k)
{
    const bng_fwd_call *call = k->call;
    const bng_dtype_config *sizes = &k->config->sizes;
    const int update = !call->global_stats && !call->keep_moving;
    const float other = 1.0f - call->momentum;
    const float keep = call->torch ? other : call->momentum, take = call->torch ? call->momentum : other;
    /* PyTorch's running variance is unbiased: m / (m - 1) (the check refused m = 1) */
    const float unbias = call->torch && update ? (float)call->batch / (float)(call->batch - 1) : 1.0f;
    size_t c;

    if (!call->fix_gamma)
        bng_step_stats_to_float(sizes, k->n, bng_fwd_stat(k, call->scale), k->s.gain);
    bng_step_stats_to_float(sizes, k->n, bng_fwd_stat(k, call->bias), k->s.bias);
    for (c = 0; c < k->n; c++) {
        const float var = k->s.m2[c], invar = 1.0f / bng_sqrtf(var + call->eps);
        const float mean = k->s.shift[c] + k->s.mean[c];

        k->s.gain[c] = call->fix_gamma ? invar : k->s.gain[c] * invar;
        bng_fwd_put(k, call->mean, c, mean);
        bng_fwd_put(k, call->invar, c, invar);
        if (update) {
            float moving_mean, moving_var;
            const float batch_var = call->torch ? var * unbias : var;
            bng_vstore(&moving_mean, bng_stats_load(sizes, bng_fwd_stat(k, call->moving_mean), c));
            bng_vstore(&moving_var, bng_stats_load(sizes, bng_fwd_stat(k, call->moving_var), c));
            bng_fwd_put(k, call->moving_mean, c, moving_mean * keep + mean * take);
            bng_fwd_put(k, call->moving_var, c, moving_var * keep + batch_var * take);
        }
    }
}

void bng_fwd_nhwc_p_run(const bng_fwd_config *config, const bng_fwd_call *call, const void *x,
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
    chunk = k.kernel->channels ? k.kernel->channels : config->sizes.generic_chunk;
    for (k.first = 0; k.first < call->channel; k.first += chunk) {
        k.n = bng_min(chunk, call->channel - k.first);
        if (call->global_stats)
            bng_fwd_global_stats(&k);
        else
            bng_fwd_batch_stats(&k);
        bng_fwd_finalize(&k);
        k.kernel->norm(call->batch, k.n, call->channel, bng_at(x, k.first, element),
                       bng_at_mut(y, k.first, element), k.s.shift, k.s.mean, k.s.gain, k.s.bias,
                       stream);
    }
}
