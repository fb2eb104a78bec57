/* The storage types of the target under test, as bng_dtype adapters. */
#include "bng_dtypes.h"

#include <stdint.h>

#define AS_ELEMENT(c) c,

/* ---- f32 ---- */

static double f32_get(const void *base, size_t i) { return ((const float *)base)[i]; }
static void f32_set(void *base, size_t i, double v) { ((float *)base)[i] = (float)v; }

static void f32_entry_p(void *x, void *dy, void *dx, long long *params)
{
    fp_batch_norm_grad_p(x, dy, dx, params);
}

static void f32_stats_from(const long long *params, bng_f32_stats *s)
{
    s->mean = (const float *)(intptr_t)params[BNG_PARAM_MEAN];
    s->invar = (const float *)(intptr_t)params[BNG_PARAM_INVAR];
    s->scale = (const float *)(intptr_t)params[BNG_PARAM_SCALE];
    s->dbias = (float *)(intptr_t)params[BNG_PARAM_DBIAS];
    s->dscale = (float *)(intptr_t)params[BNG_PARAM_DSCALE];
}

static void f32_run_kernel(int generic, size_t batch, size_t channel, int is_train,
                           void *x, void *dy, void *dx, long long *params)
{
    bng_f32_stats s;
    f32_stats_from(params, &s);
    bng_f32_run_private(generic ? &bng_f32_generic_kernel : bng_f32_kernel_for_channels(channel),
                        batch, channel, is_train, x, dy, dx, &s);
}

static size_t f32_registered(size_t channel) { return bng_f32_kernel_for_channels(channel)->channels; }

static const size_t f32_specialized[] = { BNG_F32_SPECIALIZED(AS_ELEMENT) };

const bng_dtype bng_dtype_f32 = {
    "f32", sizeof(float), sizeof(float),
    f32_get, f32_set, f32_get, f32_set, f32_entry_p, f32_run_kernel, f32_registered,
    f32_specialized, sizeof f32_specialized / sizeof f32_specialized[0], BNG_F32_LANES,
    BNG_F32_GENERIC_CHUNK,
    1.0 / 8388608.0, 0,
    3.4028235677973366e38, 3.4028235677973366e38,    /* FLT_MAX + half an ulp */
};

const bng_dtype *const bng_dtypes[] = {
    &bng_dtype_f32,
};
const int bng_dtype_count = sizeof bng_dtypes / sizeof bng_dtypes[0];
