/* SPDX-License-Identifier: Apache-2.0 */
/* Copyright 2026 the batchnormgrad authors */
/* Owns: the per-channel steps both layouts and both storages run (zero, fold, finalize,
 * gain, the count's limbs), the summation order's row groups, and the calls of the row
 * ukernels. May call: bng_vec.h and a kernel's ukernels; no HAL, no DMA.
 */
#include "bng_steps_vec.h"
#include "bng_sqrt.h"

size_t bng_group_rows(size_t batch)
{
    size_t groups = (batch + BNG_MIN_GROUP_ROWS - 1) / BNG_MIN_GROUP_ROWS;
    size_t rows;

    if (groups > BNG_MAX_GROUPS)
        groups = BNG_MAX_GROUPS;
    rows = (batch + groups - 1) / groups;
    return (rows + BNG_BLOCK_ROWS - 1) / BNG_BLOCK_ROWS * BNG_BLOCK_ROWS;
}

size_t bng_chunk(const bng_dtype_config *dtype, const bng_kernel *kernel)
{
    return kernel->channels ? kernel->channels : dtype->generic_chunk;
}

bng_vec bng_load_sized(size_t bytes, const BNG_VMEM void *array, size_t i)
{
    if (bytes == sizeof(float))
        return bng_vload((const BNG_VMEM float *)array + i);
    return bng_vload_f16((const BNG_VMEM half *)array + i);
}

bng_vec bng_stats_load(const bng_dtype_config *dtype, const BNG_VMEM void *stats, size_t i)
{
    return bng_load_sized(dtype->stats_bytes, stats, i);
}

void bng_stats_store(const bng_dtype_config *dtype, BNG_VMEM void *stats, size_t i, bng_vec v)
{
    if (dtype->stats_bytes == sizeof(float))
        bng_vstore((BNG_VMEM float *)stats + i, v);
    else
        bng_vstore_f16((BNG_VMEM half *)stats + i, v);
}

void bng_step_zero(size_t channels, BNG_VMEM float *a)
{
    size_t c;
    for (c = 0; c < channels; c += BNG_V)
        bng_vstore(a + c, bng_vzero());
}

void bng_step_pad_rows(size_t channels, size_t row_channels, size_t rows, BNG_VMEM float *area)
{
    size_t r, at;

    for (r = 0; r < rows; r++)
        for (at = channels / BNG_V * BNG_V; at < row_channels; at += BNG_V)
            bng_vstore(area + r * row_channels + at, bng_vzero());
}

void bng_step_fold(size_t channels, BNG_VMEM float *sum_dy, BNG_VMEM float *sum_dyxm,
                   const BNG_VMEM float *part_dy, const BNG_VMEM float *part_dyxm)
{
    size_t c;
    for (c = 0; c < channels; c += BNG_V) {
        bng_vstore(sum_dy + c, bng_vadd(bng_vload(sum_dy + c), bng_vload(part_dy + c)));
        bng_vstore(sum_dyxm + c, bng_vadd(bng_vload(sum_dyxm + c), bng_vload(part_dyxm + c)));
    }
}

void bng_step_stats_to_float(const bng_dtype_config *dtype, size_t channels,
                             const BNG_VMEM void *in, BNG_VMEM float *out)
{
    size_t c;
    for (c = 0; c < channels; c += BNG_V)
        bng_vstore(out + c, bng_stats_load(dtype, in, c));
}

void bng_step_gain(const bng_dtype_config *dtype, size_t channels, const BNG_VMEM void *invar,
                   const BNG_VMEM void *scale, BNG_VMEM float *gain)
{
    size_t c;
    for (c = 0; c < channels; c += BNG_V)
        bng_vstore(gain + c, bng_vmul(bng_stats_load(dtype, scale, c),
                                      bng_stats_load(dtype, invar, c)));
}

void bng_step_finalize(const bng_dtype_config *dtype, size_t channels, float m, int accumulate,
                       const BNG_VMEM void *invar, const BNG_VMEM void *scale,
                       const BNG_VMEM float *sum_dy, const BNG_VMEM float *sum_dyxm,
                       BNG_VMEM void *dbias, BNG_VMEM void *dscale, BNG_VMEM float *gain,
                       BNG_VMEM float *dy_mean, BNG_VMEM float *slope)
{
    const bng_vec m_vec = bng_vbroadcast(m);
    size_t c;

    for (c = 0; c < channels; c += BNG_V) {
        const bng_vec invar_c = bng_stats_load(dtype, invar, c);
        const bng_vec scale_c = bng_stats_load(dtype, scale, c);
        const bng_vec sum_dy_c = bng_vload(sum_dy + c);
        const bng_vec dscale_c = bng_vmul(invar_c, bng_vload(sum_dyxm + c));
        bng_vec dbias_out = sum_dy_c, dscale_out = dscale_c;

        bng_vstore(gain + c, bng_vmul(scale_c, invar_c));
        bng_vstore(dy_mean + c, bng_vdiv(sum_dy_c, m_vec));
        bng_vstore(slope + c, bng_vdiv(bng_vmul(invar_c, dscale_c), m_vec));
        if (accumulate) {
            dbias_out = bng_vadd(bng_stats_load(dtype, dbias, c), dbias_out);
            dscale_out = bng_vadd(bng_stats_load(dtype, dscale, c), dscale_out);
        }
        bng_stats_store(dtype, dbias, c, dbias_out);
        bng_stats_store(dtype, dscale, c, dscale_out);
    }
}

/* The square root by integers (bng_sqrt.h): the firmware's C library need have no libm. */
float bng_sqrtf(float v)
{
    union {
        float f;
        uint32_t bits;
    } word;
    uint32_t root;

    word.f = v;
    BNG_SQRT_BITS(uint32_t, word.bits, root);
    word.bits = root;
    return word.f;
}

void bng_step_count(size_t rows, BNG_VMEM float *limbs)
{
    size_t i;
    for (i = 0; i < BNG_SUMS_COUNT_LIMBS; i++) {
        bng_vstore(limbs + i * BNG_V, bng_vbroadcast((float)(unsigned)(rows & BNG_LIMB_MAX)));
        rows >>= BNG_SUMS_LIMB_BITS;
    }
}

void bng_rows_reduce(const bng_kernel *kernel, size_t rows, size_t channels, size_t stride,
                     const BNG_VMEM void *x, const BNG_VMEM void *dy, const BNG_VMEM float *mean,
                     BNG_VMEM float *part_dy, BNG_VMEM float *part_dyxm)
{
    BNG_TRACE_KERNEL(kernel, "reduce", rows, channels);
    kernel->reduce(rows, channels, stride, x, dy, mean, part_dy, part_dyxm);
}

void bng_rows_dx(const bng_kernel *kernel, int is_train, size_t rows, size_t channels,
                 size_t stride, const BNG_VMEM void *x, const BNG_VMEM void *dy, BNG_VMEM void *dx,
                 const BNG_VMEM float *mean, const BNG_VMEM float *gain,
                 const BNG_VMEM float *dy_mean, const BNG_VMEM float *slope, int stream)
{
    BNG_TRACE_KERNEL(kernel, is_train ? "dx_train" : "dx_infer", rows, channels);
    if (is_train)
        kernel->dx_train(rows, channels, stride, x, dy, dx, mean, gain, dy_mean, slope, stream);
    else
        kernel->dx_infer(rows, channels, stride, dy, dx, gain, stream);
}
