/* SPDX-License-Identifier: Apache-2.0 */
/* Copyright 2026 the batchnormgrad authors */
/* Owns: the training forward's parameter checks: its block and data pointers, read
 * once, in the contract's order (docs/contract.md section 15, "Status codes"), into the
 * bng_fwd_call its runner computes. May call: bng_params.h's arithmetic of the checks;
 * no HAL, no kernel; it writes nothing but the call. Compiled only for a target with the
 * forward extension.
 */
#include <stddef.h>
#include <stdint.h>
#include "batch_norm_fwd.h"
#include "bng_fwd.h"
#include "bng_params.h"

/* The arrays a call may have, in the order of its checks. */
enum { FWD_X, FWD_Y, FWD_MEAN, FWD_INVAR, FWD_SCALE, FWD_BIAS, FWD_MOVING_MEAN, FWD_MOVING_VAR,
       FWD_PARTIALS, FWD_RELU_BITS, FWD_ARRAYS };
#define FWD_BIT(array) (1u << (array))
/* Their slots in the block (x and y are arguments). */
static const int fwd_slot[FWD_ARRAYS] = {
    -1, -1, BNG_PARAM_MEAN, BNG_PARAM_INVAR, BNG_PARAM_SCALE, BNG_FWD_PARAM_BIAS,
    BNG_FWD_PARAM_MOVING_MEAN, BNG_FWD_PARAM_MOVING_VAR, BNG_FWD_PARAM_PARTIALS,
    BNG_FWD_PARAM_RELU_BITS,
};

/* The saved statistics, unless the call saves none (BNG_FWD_NO_SAVE). */
static unsigned fwd_saved(long long flags)
{
    return flags & BNG_FWD_NO_SAVE ? 0u : FWD_BIT(FWD_MEAN) | FWD_BIT(FWD_INVAR);
}

/* Whether a call with these flags updates the moving statistics. */
static int fwd_updates(long long flags)
{
    return !(flags & (BNG_FWD_GLOBAL_STATS | BNG_FWD_KEEP_MOVING | BNG_FWD_PARTIALS_OUT));
}

/* The arrays a call with these flags uses: PARTIALS_OUT x and the partials alone; else
 * scale unless gamma is fixed, bias unless there is none, the moving statistics unless
 * they are kept, the partials with PARTIALS_IN, the ReLU's bits with RELU_BITS. */
static unsigned fwd_arrays_used(long long flags)
{
    unsigned used = FWD_BIT(FWD_X) | FWD_BIT(FWD_Y) | fwd_saved(flags);
    if (flags & BNG_FWD_PARTIALS_OUT)
        return FWD_BIT(FWD_X) | FWD_BIT(FWD_PARTIALS);
    if (flags & BNG_FWD_RELU_BITS)
        used |= FWD_BIT(FWD_RELU_BITS);
    if (!(flags & BNG_FWD_FIX_GAMMA))
        used |= FWD_BIT(FWD_SCALE);
    if (!(flags & BNG_FWD_NO_BIAS))
        used |= FWD_BIT(FWD_BIAS);
    if (!(flags & BNG_FWD_KEEP_MOVING))
        used |= FWD_BIT(FWD_MOVING_MEAN) | FWD_BIT(FWD_MOVING_VAR);
    if (flags & BNG_FWD_PARTIALS_IN)
        used |= FWD_BIT(FWD_PARTIALS);
    return used;
}

/* Its outputs: the partials (PARTIALS_OUT); else y, the saved statistics, the moving
 * ones where it updates them, the ReLU's bits where asked. */
static unsigned fwd_outputs(long long flags)
{
    unsigned out = FWD_BIT(FWD_Y) | fwd_saved(flags) | (fwd_arrays_used(flags) & FWD_BIT(FWD_RELU_BITS));
    if (flags & BNG_FWD_PARTIALS_OUT)
        return FWD_BIT(FWD_PARTIALS);
    if (fwd_updates(flags))
        out |= FWD_BIT(FWD_MOVING_MEAN) | FWD_BIT(FWD_MOVING_VAR);
    return out;
}

/* PARTIALS_IN: the rows the partials cover, from its two limbs (batch_norm_fwd.h), or 0
 * when they are not integers in [0, 2^24) (NaN included), or cover more rows than a
 * size_t counts (2^32 and more on a 32-bit part), or none. */
static size_t fwd_partials_rows(const float *partials, size_t channel)
{
    const float low = partials[3 * channel], high = partials[3 * channel + 1];

    if (!(low >= 0.0f && low < BNG_FWD_PARTIALS_LIMB && high >= 0.0f && high < BNG_FWD_PARTIALS_LIMB)
        || low != (float)(long)low || high != (float)(long)high
        || (size_t)high > ((size_t)-1 >> 24))
        return 0;
    /* in size_t, not the header's long long reading: a 32-bit part converts a float to
     * long long through a runtime helper (__aeabi_f2lz) the library may not call */
    return (size_t)low + (size_t)high * (size_t)BNG_FWD_PARTIALS_LIMB;
}

/* The flags' combinations a call cannot honour: normalizing with moving statistics it
 * may not read; the batch's statistics both out and in, or with the moving ones; the
 * ReLU's bits without the ReLU; the ReLU where there is no y (PARTIALS_OUT). */
static int fwd_flags_conflict(long long flags)
{
    const long long partials = flags & (BNG_FWD_PARTIALS_OUT | BNG_FWD_PARTIALS_IN);

    return ((flags & BNG_FWD_GLOBAL_STATS) && (flags & (BNG_FWD_KEEP_MOVING | partials)))
           || partials == (BNG_FWD_PARTIALS_OUT | BNG_FWD_PARTIALS_IN)
           || ((flags & BNG_FWD_RELU_BITS) && !(flags & BNG_FWD_RELU))
           || ((flags & BNG_FWD_RELU) && (flags & BNG_FWD_PARTIALS_OUT));
}

/* The bytes of an element of an array: x, y and the ReLU's bits the data's, the
 * partials float, the per-channel arrays the stats type's. */
static size_t fwd_element(int array, size_t element, size_t stat)
{
    return array <= FWD_Y || array == FWD_RELU_BITS ? element
           : array == FWD_PARTIALS ? sizeof(float) : stat;
}

/* The elements of an array of a call (its batch rows of channel, planes of spatial
 * with NCHW). */
static size_t fwd_elements(int array, const bng_fwd_call *call, size_t element)
{
    const size_t bits = call->nchw
        ? call->batch * call->channel * BNG_FWD_PLANE_WORDS(call->spatial, element)
        : BNG_FWD_RELU_BITS_ELEMENTS(call->batch, call->channel, element);

    return array <= FWD_Y ? call->batch * call->spatial * call->channel
           : array == FWD_PARTIALS ? BNG_FWD_PARTIALS_FLOATS(call->channel)
           : array == FWD_RELU_BITS ? bits
           : call->channel;
}

/* A float from its slot's low 32 bits (bng_fwd_float). */
static float fwd_float(long long slot)
{
    union {
        uint32_t bits;
        float f;
    } v;
    v.bits = (uint32_t)((unsigned long long)slot & 0xffffffffu);
    return v.f;
}

/* An output may share memory with an input only as y with x, the very same array (each
 * row is read before it is written); the moving statistics are their own inputs. Any
 * other overlap of an output with another array the call uses is refused. */
static int fwd_check_overlap(const bng_span *span, unsigned used, unsigned outputs)
{
    int out, other;

    for (out = 0; out < FWD_ARRAYS; out++) {
        if (!(outputs & FWD_BIT(out)))
            continue;
        for (other = 0; other < FWD_ARRAYS; other++) {
            if (other != out && (used & FWD_BIT(other)) && bng_params_overlap(span[out], span[other])
                && !(out == FWD_Y && other == FWD_X && bng_params_same(span[out], span[other])))
                return BNG_EOVERLAP;
        }
    }
    return BNG_OK;
}

int bng_fwd_params_check(const bng_fwd_config *config, const long long *params, const void *x,
                         const void *y, long long allowed, bng_fwd_call *call)
{
    const long long flags = params[BNG_PARAM_FLAGS];
    /* the arrays of the flags the caller may set: a bit it may not is unknown (below) */
    const unsigned used = fwd_arrays_used(flags & allowed);
    const size_t element = config->sizes.element_bytes, stat = config->sizes.stats_bytes;
    const float eps = fwd_float(params[BNG_FWD_PARAM_EPS]);
    /* NCHW: the spatial slot, read only with the flag (and where the caller may set it) */
    const int nchw = (flags & allowed & BNG_FWD_NCHW_FLAG) != 0;
    const long long spatial = nchw ? params[BNG_FWD_SLOT_SPATIAL] : 1;
    uintptr_t at[FWD_ARRAYS];
    bng_span span[FWD_ARRAYS];
    int i;

    for (i = 0; i < FWD_ARRAYS; i++)
        at[i] = !(used & FWD_BIT(i)) ? 0
              : i == FWD_X ? (uintptr_t)x : i == FWD_Y ? (uintptr_t)y
              : (uintptr_t)params[fwd_slot[i]];
    for (i = 0; i < FWD_ARRAYS; i++)
        if ((used & FWD_BIT(i)) && at[i] == 0)
            return BNG_ENULL;
    for (i = 0; i < FWD_ARRAYS; i++)
        if ((used & FWD_BIT(i)) && (at[i] & (fwd_element(i, element, stat) - 1)))
            return BNG_EALIGN;
    /* A bad spatial extent is a bad batch (a channel's batch * spatial values), as in
     * the backward's NCHW. PyTorch's unbiased variance divides by m - 1: one value has
     * none (with PARTIALS_IN, the partials' rows: BNG_EVALUE below). */
    if (params[BNG_PARAM_BATCH] < 1 || spatial < 1
        || (params[BNG_PARAM_BATCH] == 1 && spatial == 1 && (flags & BNG_FWD_TORCH)
            && fwd_updates(flags) && !(flags & BNG_FWD_PARTIALS_IN)))
        return BNG_EBATCH;
    if (params[BNG_PARAM_CHANNEL] < 1)
        return BNG_ECHANNEL;
    if (!bng_params_fits((unsigned long long)params[BNG_PARAM_BATCH], (unsigned long long)spatial, 1)
        || !bng_params_fits((unsigned long long)params[BNG_PARAM_BATCH] * (unsigned long long)spatial,
                            (unsigned long long)params[BNG_PARAM_CHANNEL], element))
        return BNG_ERANGE;
    if ((flags & ~allowed) || fwd_flags_conflict(flags))
        return BNG_EFLAGS;
    call->batch = (size_t)params[BNG_PARAM_BATCH];
    call->channel = (size_t)params[BNG_PARAM_CHANNEL];
    call->nchw = nchw;
    call->spatial = (size_t)spatial;
    call->fix_gamma = (flags & BNG_FWD_FIX_GAMMA) != 0;
    call->global_stats = (flags & BNG_FWD_GLOBAL_STATS) != 0;
    call->torch = (flags & BNG_FWD_TORCH) != 0;
    call->keep_moving = (flags & BNG_FWD_KEEP_MOVING) != 0;
    call->partials_out = (flags & BNG_FWD_PARTIALS_OUT) != 0;
    call->partials_in = (flags & BNG_FWD_PARTIALS_IN) != 0;
    call->relu = (flags & BNG_FWD_RELU) != 0;
    call->relu_bits = (void *)at[FWD_RELU_BITS];
    call->partials = (float *)at[FWD_PARTIALS];
    call->count = call->partials_in ? fwd_partials_rows(call->partials, call->channel)
                                    : call->batch * call->spatial;
    call->eps = eps;
    call->momentum = fwd_float(params[BNG_FWD_PARAM_MOMENTUM]);
    /* eps finite and above 0 (NaN fails every comparison), where it is used; momentum
     * in [0, 1] where it is used; the partials' rows, at least one (two for PyTorch's
     * unbiased variance). */
    if (!call->partials_out && !(eps > 0.0f && eps <= 3.40282347e38f))
        return BNG_EVALUE;
    if (fwd_updates(flags) && !(call->momentum >= 0.0f && call->momentum <= 1.0f))
        return BNG_EVALUE;
    if (call->partials_in && (call->count == 0 || (call->torch && fwd_updates(flags) && call->count == 1)))
        return BNG_EVALUE;
    call->mean = (void *)at[FWD_MEAN];
    call->invar = (void *)at[FWD_INVAR];
    call->scale = (const void *)at[FWD_SCALE];
    call->bias = (const void *)at[FWD_BIAS];
    call->moving_mean = (void *)at[FWD_MOVING_MEAN];
    call->moving_var = (void *)at[FWD_MOVING_VAR];
    for (i = 0; i < FWD_ARRAYS; i++) {
        span[i].start = at[i];
        span[i].bytes = (uintptr_t)(fwd_element(i, element, stat)
                                    * fwd_elements(i, call, element));
    }
    return fwd_check_overlap(span, used, fwd_outputs(flags & allowed));
}
