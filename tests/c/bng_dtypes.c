/* The storage types of the target under test, as bng_dtype adapters. */
#include "bng_dtypes.h"
#include "batchnormgrad.h"
#include "bng_params.h"
#include "bng_entry.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#if BNG_HAS_EXTENSIONS
#include "batch_norm_grad_ext.h"
/* The tests' copy of the extended block's layout agrees with the header's. */
typedef char bng_case_block_agrees[BNG_CASE_PARAMS == BNG_EXT_PARAMS_LEN && BNG_CASE_SUMS == BNG_PARAM_SUMS
                                   && BNG_CASE_FLAGS == BNG_PARAM_FLAGS && BNG_CASE_EFLAGS == BNG_EFLAGS ? 1 : -1];
#endif


#define AS_ELEMENT(c) c,

/* bng_entry_private_kernel's status: BNG_OK, or on a split target BNG_ENOMEM when the
 * HAL had no workspace, which no test of a kernel expects. */
static void run_private_checked(int status)
{
    if (status != BNG_OK) {
        fprintf(stderr, "bng_entry_private_kernel: status %d\n", status);
        abort();
    }
}

/* ---- f32 ---- */

#if BNG_HAS_F32
static void f32_entry_p(void *x, void *dy, void *dx, long long *params)
{
    fp_batch_norm_grad_p(x, dy, dx, params);
}

static void f32_entry_s(void *x, void *dy, void *dx, int core_mask)
{
    fp_batch_norm_grad_s(x, dy, dx, core_mask);
}

static void f32_run_kernel(int generic, size_t batch, size_t channel, int is_train,
                           void *x, void *dy, void *dx, long long *params)
{
    const bng_stats s = bng_params_stats(params);

    run_private_checked(bng_entry_private_kernel(
        &bng_f32_config, generic ? &bng_f32_generic_kernel : bng_f32_config.kernel_for_channels(channel),
        batch, channel, is_train, x, dy, dx, &s));
}
#endif

/* The extension entry points the target has (batch_norm_grad_ext.h), else NULL. */
#define EXT_ENTRIES(api, T)                                                                        \
    static void api##_reduce_p(void *x, void *dy, long long *p) { api##_batch_norm_grad_reduce_p(x, dy, p); }      \
    static void api##_reduce_s(void *x, void *dy, int m) { api##_batch_norm_grad_reduce_s(x, dy, m); }             \
    static void api##_apply_p(void *x, void *dy, void *dx, long long *p) { api##_batch_norm_grad_apply_p(x, dy, dx, p); } \
    static void api##_apply_s(void *x, void *dy, void *dx, int m) { api##_batch_norm_grad_apply_s(x, dy, dx, m); } \
    static void api##_dx_p(void *dy, void *dx, long long *p) { api##_batch_norm_grad_dx_p(dy, dx, p); }            \
    static void api##_dx_s(void *dy, void *dx, int m) { api##_batch_norm_grad_dx_s(dy, dx, m); }                   \
    static void api##_ext_p(void *x, void *dy, void *dx, long long *p) { api##_batch_norm_grad_ext_p(x, dy, dx, p); } \
    static void api##_ext_s(void *x, void *dy, void *dx, int m) { api##_batch_norm_grad_ext_s(x, dy, dx, m); }
#if BNG_HAS_REDUCE && BNG_HAS_APPLY && BNG_HAS_DX_ONLY && BNG_HAS_EXT
#if BNG_HAS_F32
EXT_ENTRIES(fp, float)
#endif
#define FP_EXT fp_reduce_p, fp_reduce_s, fp_apply_p, fp_apply_s, fp_dx_p, fp_dx_s, fp_ext_p, fp_ext_s
#define HP_EXT hp_reduce_p, hp_reduce_s, hp_apply_p, hp_apply_s, hp_dx_p, hp_dx_s, hp_ext_p, hp_ext_s
#elif BNG_HAS_EXTENSIONS
#error "the suite tests targets with every extension or none"
#else
#define FP_EXT NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
#define HP_EXT NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
#endif

#if BNG_HAS_FORWARD
#include "batch_norm_fwd.h"
#define FWD_ENTRY(api, T) \
    static void api##_forward_p(void *x, void *y, long long *p) { api##_batch_norm_forward_p(x, y, p); } \
    static void api##_forward_s(void *x, void *y, int m) { api##_batch_norm_forward_s(x, y, m); } \
    static void api##_batchnorm(void *in, void *out, float *mean, float *var, int unit, int channel, \
                                float eps, int m) \
    { api##_batchnorm_s(in, out, mean, var, unit, channel, eps, m); } \
    static void api##_fusedbatchnorm(const void *in, const void *scale, const void *offset, \
                                     const void *mean, const void *var, float eps, int channel, \
                                     int unit, int m, void *out) \
    { api##_fusedbatchnorm_s(in, scale, offset, mean, var, eps, channel, unit, m, out); }
#if BNG_HAS_F32
FWD_ENTRY(fp, float)
#endif
#define FP_FWD fp_forward_p, fp_forward_s, fp_batchnorm, fp_fusedbatchnorm, &bng_f32_fwd_config
#define HP_FWD hp_forward_p, hp_forward_s, hp_batchnorm, hp_fusedbatchnorm, &bng_f16_fwd_config
#else
#define FP_FWD NULL, NULL, NULL, NULL, NULL
#define HP_FWD NULL, NULL, NULL, NULL, NULL
#endif

/* The explicit-argument calls (batchnormgrad.h) on a block's arrays and shape. */
#define SLOT_ARRAY(params, slot) ((void *)(intptr_t)(params)[slot])
#define EXPLICIT_ARGS(x, dy, dx, p)                                                                \
    x, dy, SLOT_ARRAY(p, BNG_PARAM_MEAN), SLOT_ARRAY(p, BNG_PARAM_INVAR), SLOT_ARRAY(p, BNG_PARAM_SCALE), \
    (int)(p)[BNG_PARAM_BATCH], (int)(p)[BNG_PARAM_CHANNEL], (int)(p)[BNG_PARAM_IS_TRAIN], dx,      \
    SLOT_ARRAY(p, BNG_PARAM_DBIAS), SLOT_ARRAY(p, BNG_PARAM_DSCALE)
#define EXPLICIT_ENTRIES(api)                                                                      \
    static void api##_explicit_p(void *x, void *dy, void *dx, const long long *p)                 \
    {                                                                                              \
        api##_batchnormgrad_p(EXPLICIT_ARGS(x, dy, dx, p));                                        \
    }                                                                                              \
    static void api##_explicit_s(void *x, void *dy, void *dx, const long long *p, int core_mask)  \
    {                                                                                              \
        api##_batchnormgrad_s(EXPLICIT_ARGS(x, dy, dx, p), core_mask);                             \
    }
#if BNG_HAS_F32
EXPLICIT_ENTRIES(fp)

static const size_t f32_specialized[] = { BNG_F32_SPECIALIZED(AS_ELEMENT) };

const bng_dtype bng_dtype_f32 = {
    "f32", sizeof(float), sizeof(float),
    f32_entry_p, f32_entry_s, f32_run_kernel,
    &bng_f32_config, &bng_f32_base_config, &bng_f32_generic_kernel,
    f32_specialized, sizeof f32_specialized / sizeof f32_specialized[0], BNG_F32_LANES,
    BNG_F32_GENERIC_CHUNK,
    1.0 / 8388608.0, 1.1754943508222875e-38, 0,
    3.4028235677973366e38, 3.4028235677973366e38,    /* FLT_MAX + half an ulp */
    FP_EXT,
    fp_explicit_p, fp_explicit_s,
    FP_FWD
};
#endif

#if BNG_HAS_F16

/* ---- f16, with bng_hp_stats_t half or float as the target chose ---- */

#define HP_STATS_ARE_HALF (sizeof(bng_hp_stats_t) == sizeof(half))

static void f16_entry_p(void *x, void *dy, void *dx, long long *params)
{
    hp_batch_norm_grad_p(x, dy, dx, params);
}

static void f16_entry_s(void *x, void *dy, void *dx, int core_mask)
{
    hp_batch_norm_grad_s(x, dy, dx, core_mask);
}

static void f16_run_kernel(int generic, size_t batch, size_t channel, int is_train,
                           void *x, void *dy, void *dx, long long *params)
{
    const bng_stats s = bng_params_stats(params);

    run_private_checked(bng_entry_private_kernel(
        &bng_f16_config, generic ? &bng_f16_generic_kernel : bng_f16_config.kernel_for_channels(channel),
        batch, channel, is_train, x, dy, dx, &s));
}

#if BNG_HAS_EXTENSIONS
EXT_ENTRIES(hp, half)
#endif
#if BNG_HAS_FORWARD
FWD_ENTRY(hp, half)
#endif
EXPLICIT_ENTRIES(hp)

static const size_t f16_specialized[] = { BNG_F16_SPECIALIZED(AS_ELEMENT) };

const bng_dtype bng_dtype_f16 = {
    HP_STATS_ARE_HALF ? "f16 (stats f16)" : "f16 (stats f32)",
    sizeof(half), sizeof(bng_hp_stats_t),
    f16_entry_p, f16_entry_s, f16_run_kernel,
    &bng_f16_config, &bng_f16_base_config, &bng_f16_generic_kernel,
    f16_specialized, sizeof f16_specialized / sizeof f16_specialized[0], BNG_F16_LANES,
    BNG_F16_GENERIC_CHUNK,
    1.0 / 1024.0, 1.0 / 16384.0, HP_STATS_ARE_HALF ? BNG_REF_HALF_DX | BNG_REF_HALF_STATS : BNG_REF_HALF_DX,
    65520.0, HP_STATS_ARE_HALF ? 65520.0 : 3.4028235677973366e38,   /* max + half an ulp */
    HP_EXT,
    hp_explicit_p, hp_explicit_s,
    HP_FWD
};
#endif

const bng_dtype *const bng_dtypes[] = {
#if BNG_HAS_F32
    &bng_dtype_f32,
#endif
#if BNG_HAS_F16
    &bng_dtype_f16,
#endif
};
const int bng_dtype_count = sizeof bng_dtypes / sizeof bng_dtypes[0];
