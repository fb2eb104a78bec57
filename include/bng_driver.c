/* SPDX-License-Identifier: Apache-2.0 */
/* Copyright 2026 the batchnormgrad authors */
/* The driver of every entry point, written once for all storage types: parameter
 * checks, the row-group split, the fold of row groups, finalize, and the two memory
 * drivers around one compute core (the kernel's row ukernels). _p works on the
 * caller's memory directly (on a split target it stages it, like _s, on the calling
 * core alone); _s stages tiles between shared and private memory by DMA on the cores
 * of core_mask (include/bng_hal.h). A storage type enters only through
 * its bng_dtype_config: element sizes, the kernel table, the per-channel conversions.
 *
 * The vendor's call is three steps per chunk of channels: sum the rows (pass 1),
 * finalize (dbias, dscale, the dx coefficients), dx (pass 2). The entry points beyond
 * the vendor's four (batch_norm_grad_ext.h) run some of the same steps: reduce sums the
 * rows and stores the sums; apply loads global sums, finalizes and computes dx; dx-only
 * computes dx from scale and invar alone. Their code is compiled only for the families
 * targets.yaml asks for (BNG_HAS_REDUCE, ... in bng_kernels.h: a condition that is 0
 * removes the code).
 *
 * Built once per target, beside the target's generated sources (-Igenerated/<t>): it
 * takes the target's constants from bng_kernels.h.
 */
#include <stddef.h>
#include <stdint.h>
#include "batch_norm_grad.h"
#include "bng_kernels.h"
#include "bng_hal.h"
#if BNG_HAS_EXTENSIONS
#include "batch_norm_grad_ext.h"
#endif
#if BNG_SPLIT_MEMORY
/* The per-channel steps of the staged calls (_s, and _p on a split target) work on
 * vector memory with vector operations of BNG_VECTOR_LANES floats (the vector
 * register), with the kernels' backend. */
#ifndef BNG_VEC_BACKEND
#define BNG_VEC_BACKEND BNG_VECTOR_BACKEND
#endif
#include "bng_vec.h"
#endif

#define BNG_ALL_CORES ((1u << BNG_TARGET_CORES) - 1u)

/* _p writes dx this large or larger with streaming stores where the vector backend has
 * them (x86 hosts): it would not stay in the caches, and a streaming store does not
 * read each line first (half of dx's traffic). The _s tiles are private: never. */
#ifndef BNG_STREAM_DX_BYTES
#define BNG_STREAM_DX_BYTES ((size_t)8 << 20)
#endif

/* The extended parameter block's slots and flag (batch_norm_grad_ext.h, which asserts
 * below that it agrees). */
#define BNG_SLOT_SUMS 12
#define BNG_SLOT_FLAGS 13
#define BNG_ACCUMULATE_FLAG 1
#define BNG_STATUS_EFLAGS (-9)
#if BNG_HAS_EXTENSIONS
typedef char bng_ext_slots_agree[BNG_SLOT_SUMS == BNG_PARAM_SUMS && BNG_SLOT_FLAGS == BNG_PARAM_FLAGS
                                 && BNG_ACCUMULATE_FLAG == BNG_FLAG_ACCUMULATE && BNG_STATUS_EFLAGS == BNG_EFLAGS
                                 && BNG_EXT_PARAMS_LEN == BNG_SHARED_PARAMS_SLOTS ? 1 : -1];
#endif

/* Shared scratch of the _s entry points: per row group, the partial sums of dy and
 * dy*(x - mean), in two slots that alternate between chunks. Host builds emulate it,
 * and the parameter block, with arrays. Either way it is a BNG_SHARED float pointer,
 * and every pointer derived from it keeps the qualifier (an address-space qualifier
 * may not be dropped: clang rejects the conversion). */
#ifdef BNG_HOST
long long bng_host_shared_params[BNG_SHARED_PARAMS_SLOTS];   /* BNG_SHARED_PARAMS on a host */
static float bng_host_scratch[BNG_SCRATCH_FLOATS];
#define BNG_SHARED_SCRATCH ((BNG_SHARED float *)bng_host_scratch)
#else
#define BNG_SHARED_SCRATCH ((BNG_SHARED float *)BNG_SHARED_SCRATCH_ADDRESS)
#endif

/* One checked call: what it computes and on what shape. */
typedef struct {
    int op;                 /* BNG_OP_* (bng_driver.h) */
    size_t batch, channel;  /* this call's rows */
    float m;                /* the rows the sums cover, as the formulas use it */
    int is_train;
    int accumulate;         /* dbias and dscale += (BNG_FLAG_ACCUMULATE) */
} bng_call;

/* Which steps a call takes. A family the target does not have is a constant 0, so
 * the compiler drops its code. */
#define BNG_IS_REDUCE(call) (BNG_HAS_REDUCE && (call)->op == BNG_OP_REDUCE)
#define BNG_IS_APPLY(call) (BNG_HAS_APPLY && (call)->op == BNG_OP_APPLY)
#define BNG_IS_DX_ONLY(call) (BNG_HAS_DX_ONLY && (call)->op == BNG_OP_DX)
/* sums the rows itself (the vendor's call, ext, reduce) */
#define BNG_SUMS_ROWS(call) (!BNG_IS_APPLY(call) && !BNG_IS_DX_ONLY(call))
/* writes dbias, dscale and dx from sums (the vendor's call, ext, apply) */
#define BNG_FINALIZES(call) (!BNG_IS_REDUCE(call) && !BNG_IS_DX_ONLY(call))
#define BNG_ACCUMULATES(call) ((BNG_HAS_EXT || BNG_HAS_APPLY) && (call)->accumulate)

static size_t bng_address_max(void)
{
    return BNG_ADDRESS_MAX < SIZE_MAX ? (size_t)BNG_ADDRESS_MAX : SIZE_MAX;
}

/* batch * channel elements of 2^element_shift bytes fit BNG_ADDRESS_MAX. No 64-bit
 * division (a runtime-library call on 32-bit cores): 32x32-bit products only. */
static int bng_fits(unsigned long long batch, unsigned long long channel, unsigned element_shift)
{
    const unsigned long long limit = (unsigned long long)bng_address_max() >> element_shift;
    const unsigned long long low = 0xffffffffull;
    unsigned long long big = batch > channel ? batch : channel;
    unsigned long long small = batch > channel ? channel : batch;
    unsigned long long high_part, low_part;

    if (big > limit)
        return 0;                  /* both are at least 1 */
    if (big <= low)
        return big * small <= limit;
    if (small > low)
        return 0;                  /* the product passes 2^64 */
    high_part = (big >> 32) * small;
    low_part = (big & low) * small;
    if (high_part > low)
        return 0;
    high_part <<= 32;
    return low_part <= limit && high_part <= limit - low_part;
}

static unsigned bng_log2(size_t power_of_two)
{
    unsigned shift = 0;
    while ((size_t)1 << shift < power_of_two)
        shift++;
    return shift;
}

/* One array of the call: where it starts and how many bytes it spans. */
typedef struct {
    uintptr_t start, bytes;
} bng_span;

static int bng_overlap(bng_span a, bng_span b)
{
    return a.start < b.start + b.bytes && b.start < a.start + a.bytes;
}

static int bng_same(bng_span a, bng_span b)
{
    return a.start == b.start && a.bytes == b.bytes;
}

/* The arrays a call may have, in the order of its checks. */
enum { BNG_X, BNG_DY, BNG_DX, BNG_MEAN, BNG_INVAR, BNG_SCALE, BNG_DBIAS, BNG_DSCALE, BNG_SUMS,
       BNG_ARRAYS };
#define BNG_BIT(array) (1u << (array))
#define BNG_VENDOR_ARRAYS (BNG_BIT(BNG_SUMS) - 1u)

/* Per op (bng_driver.h's order): the arrays the call reads or writes, and its outputs.
 * An array a call does not use is not looked at: not read, not checked. */
static const unsigned bng_op_arrays[] = {
    BNG_VENDOR_ARRAYS, BNG_VENDOR_ARRAYS,
    BNG_BIT(BNG_X) | BNG_BIT(BNG_DY) | BNG_BIT(BNG_MEAN) | BNG_BIT(BNG_SUMS),
    BNG_VENDOR_ARRAYS | BNG_BIT(BNG_SUMS),
    BNG_BIT(BNG_DY) | BNG_BIT(BNG_DX) | BNG_BIT(BNG_INVAR) | BNG_BIT(BNG_SCALE),
};
#define BNG_VENDOR_OUTPUTS (BNG_BIT(BNG_DX) | BNG_BIT(BNG_DBIAS) | BNG_BIT(BNG_DSCALE))
static const unsigned bng_op_outputs[] = {
    BNG_VENDOR_OUTPUTS, BNG_VENDOR_OUTPUTS, BNG_BIT(BNG_SUMS), BNG_VENDOR_OUTPUTS, BNG_BIT(BNG_DX),
};

/* Whether an `op` call reads a slot of its parameter block: the slots of the arrays it
 * uses, batch and channel, is_train where it finalizes, the flags (ext, apply). The
 * status and reserved slots are never read. */
static int bng_reads_slot(int op, int slot)
{
    const unsigned used = bng_op_arrays[BNG_HAS_EXTENSIONS ? op : BNG_OP_FULL];

    if (slot >= BNG_PARAM_MEAN && slot <= BNG_PARAM_DSCALE)
        return (used & BNG_BIT(BNG_MEAN + slot - BNG_PARAM_MEAN)) != 0;
    if (slot == BNG_PARAM_BATCH || slot == BNG_PARAM_CHANNEL)
        return 1;
    if (slot == BNG_PARAM_IS_TRAIN)
        return op != BNG_OP_REDUCE && op != BNG_OP_DX;
    if (slot == BNG_SLOT_SUMS)
        return (used & BNG_BIT(BNG_SUMS)) != 0;
    if (slot == BNG_SLOT_FLAGS)
        return op == BNG_OP_EXT || op == BNG_OP_APPLY;
    return 0;
}

/* The aliasing contract: an output may share memory with an input only as the very
 * same array (dx with x or dy; dbias and dscale with mean, invar or scale), where every
 * chunk reads what it needs before it writes; any other overlap of an output with
 * another array would give wrong results, and is refused before anything is written.
 * Inputs may overlap each other: they are only read. The partial-sums buffer is never
 * the very same array as another (its length differs). */
static int bng_check_overlap(const bng_span *span, unsigned used, unsigned outputs)
{
    int out, other;

    for (out = 0; out < BNG_ARRAYS; out++) {
        if (!(outputs & BNG_BIT(out)))
            continue;
        for (other = 0; other < BNG_ARRAYS; other++) {
            const int may_be_same = out == BNG_DX ? other <= BNG_DY
                                  : (out == BNG_DBIAS || out == BNG_DSCALE)
                                    && other >= BNG_MEAN && other <= BNG_SCALE;
            if (other != out && (used & BNG_BIT(other)) && bng_overlap(span[out], span[other])
                && !(may_be_same && bng_same(span[out], span[other])))
                return BNG_EOVERLAP;
        }
    }
    return BNG_OK;
}

/* The partial-sums buffer's count (batch_norm_grad_ext.h): limbs of BNG_SUMS_LIMB_BITS
 * bits, least significant first. */
#define BNG_LIMB_MAX ((1u << BNG_SUMS_LIMB_BITS) - 1u)

/* Apply: the rows a (combined) buffer covers, from its limbs. Each limb must be a whole
 * number that BNG_SUMS_MAX_BUFFERS buffers can sum to (no NaN, no fraction, nothing
 * negative); the count is at most 2^62. 0 when they are not. Shifts and adds only. */
static int bng_read_count(const float *limb, unsigned long long *count)
{
    const float most = (float)BNG_SUMS_MAX_BUFFERS * (float)BNG_LIMB_MAX;
    unsigned long long total = 0;
    int i;

    for (i = BNG_SUMS_COUNT_LIMBS - 1; i >= 0; i--) {
        unsigned whole;
        if (!(limb[i] >= 0.0f && limb[i] <= most))
            return 0;
        whole = (unsigned)limb[i];
        if ((float)whole != limb[i] || total >> (62 - BNG_SUMS_LIMB_BITS))
            return 0;
        total = (total << BNG_SUMS_LIMB_BITS) + whole;
    }
    *count = total;
    return 1;
}

/* count as a float, rounded to nearest as (float)count would be, without the 64-bit
 * conversion a 32-bit core calls a library for: the bits below the top 32 fold into a
 * sticky bit (below the float's rounding bit), the power of two is exact. */
static float bng_count_to_float(unsigned long long count)
{
    unsigned sticky = 0, shift = 0;
    float m;

    while (count >> 32) {
        sticky |= (unsigned)(count & 1u);
        count >>= 1;
        shift++;
    }
    m = (float)((unsigned)count | sticky);
    while (shift--)
        m *= 2.0f;
    return m;
}

#if !BNG_SPLIT_MEMORY
/* The limbs of a count of rows (a split target writes them with vector stores:
 * bng_core_put_sums). */
static void bng_write_count(size_t rows, float *limb)
{
    int i;
    for (i = 0; i < BNG_SUMS_COUNT_LIMBS; i++) {
        limb[i] = (float)(unsigned)(rows & BNG_LIMB_MAX);
        rows >>= BNG_SUMS_LIMB_BITS;
    }
}
#endif

/* Validate the parameter block and the data pointers of an `op` call: BNG_OK or the
 * error status. The block has 12 slots for the vendor's call (slots 9-11 never read),
 * 16 for the others (of which 12 and 13 are read where the op uses them). `shared`:
 * the partial-sums buffer is in shared memory (the apply count is read from it). */
static int bng_read_params(const bng_dtype_config *dtype, int op, const long long *params,
                           const void *x, const void *dy, const void *dx, int shared,
                           bng_call *call)
{
    const unsigned used = bng_op_arrays[BNG_HAS_EXTENSIONS ? op : BNG_OP_FULL];
    const size_t element = dtype->element_bytes, stat = dtype->stats_bytes;
    uintptr_t at[BNG_ARRAYS];
    size_t align[BNG_ARRAYS];
    bng_span span[BNG_ARRAYS];
    int i;

    at[BNG_X] = (uintptr_t)x;
    at[BNG_DY] = (uintptr_t)dy;
    at[BNG_DX] = (uintptr_t)dx;
    for (i = BNG_MEAN; i <= BNG_DSCALE; i++)
        at[i] = (used & BNG_BIT(i)) ? (uintptr_t)params[BNG_PARAM_MEAN + i - BNG_MEAN] : 0;
    at[BNG_SUMS] = (used & BNG_BIT(BNG_SUMS)) ? (uintptr_t)params[BNG_SLOT_SUMS] : 0;
    for (i = 0; i < BNG_ARRAYS; i++)
        if ((used & BNG_BIT(i)) && at[i] == 0)
            return BNG_ENULL;
    /* Each pointer aligned to its element type: the kernels load whole elements (and a
     * DSP may trap on a misaligned one). */
    for (i = 0; i < BNG_ARRAYS; i++) {
        align[i] = i <= BNG_DX ? element : i <= BNG_DSCALE ? stat : sizeof(float);
        if ((used & BNG_BIT(i)) && (at[i] & (align[i] - 1)))
            return BNG_EALIGN;
    }
    if (params[BNG_PARAM_BATCH] < 1)
        return BNG_EBATCH;
    if (params[BNG_PARAM_CHANNEL] < 1)
        return BNG_ECHANNEL;
    if (!bng_fits((unsigned long long)params[BNG_PARAM_BATCH],
                  (unsigned long long)params[BNG_PARAM_CHANNEL], bng_log2(element)))
        return BNG_ERANGE;
    call->op = op;
    call->batch = (size_t)params[BNG_PARAM_BATCH];
    call->channel = (size_t)params[BNG_PARAM_CHANNEL];
    call->m = (float)call->batch;
    call->is_train = bng_reads_slot(op, BNG_PARAM_IS_TRAIN) && params[BNG_PARAM_IS_TRAIN] != 0;
    /* 2 * channel + the limbs floats: channel is below half the address space here */
    if ((used & BNG_BIT(BNG_SUMS))
        && call->channel > ((bng_address_max() >> 2) - BNG_SUMS_COUNT_LIMBS) >> 1)
        return BNG_ERANGE;
    if (bng_reads_slot(op, BNG_SLOT_FLAGS) && (params[BNG_SLOT_FLAGS] & ~(long long)BNG_ACCUMULATE_FLAG))
        return BNG_STATUS_EFLAGS;
    call->accumulate = bng_reads_slot(op, BNG_SLOT_FLAGS)
                       && (params[BNG_SLOT_FLAGS] & BNG_ACCUMULATE_FLAG);
    if (BNG_IS_APPLY(call)) {
        /* The global count: whole, at least this call's rows (read, never written). */
        float limb[BNG_SUMS_COUNT_LIMBS];
        unsigned long long count;
        for (i = 0; i < BNG_SUMS_COUNT_LIMBS; i++)
            limb[i] = shared ? ((const BNG_SHARED float *)at[BNG_SUMS])[2 * call->channel + (size_t)i]
                             : ((const float *)at[BNG_SUMS])[2 * call->channel + (size_t)i];
        if (!bng_read_count(limb, &count) || count < call->batch)
            return BNG_EBATCH;
        call->m = bng_count_to_float(count);
    }
    for (i = 0; i < BNG_ARRAYS; i++) {
        span[i].start = at[i];
        span[i].bytes = i <= BNG_DX ? (uintptr_t)(call->batch * call->channel * element)
                      : i <= BNG_DSCALE ? (uintptr_t)(call->channel * stat)
                      : (uintptr_t)((2 * call->channel + BNG_SUMS_COUNT_LIMBS) * sizeof(float));
    }
    return bng_check_overlap(span, used, bng_op_outputs[op]);
}

bng_stats bng_stats_from_params(const long long *params)
{
    bng_stats stats;

    stats.mean = (const void *)(intptr_t)params[BNG_PARAM_MEAN];
    stats.invar = (const void *)(intptr_t)params[BNG_PARAM_INVAR];
    stats.scale = (const void *)(intptr_t)params[BNG_PARAM_SCALE];
    stats.dbias = (void *)(intptr_t)params[BNG_PARAM_DBIAS];
    stats.dscale = (void *)(intptr_t)params[BNG_PARAM_DSCALE];
    return stats;
}

/* Rows per group (the last may be shorter): a multiple of BNG_BLOCK_ROWS. */
static size_t bng_group_rows(size_t batch)
{
    size_t groups = (batch + BNG_MIN_GROUP_ROWS - 1) / BNG_MIN_GROUP_ROWS;
    size_t rows;

    if (groups > BNG_MAX_GROUPS)
        groups = BNG_MAX_GROUPS;
    rows = (batch + groups - 1) / groups;
    return (rows + BNG_BLOCK_ROWS - 1) / BNG_BLOCK_ROWS * BNG_BLOCK_ROWS;
}

static size_t bng_min(size_t a, size_t b)
{
    return a < b ? a : b;
}

static unsigned bng_popcount(unsigned v)
{
    unsigned n = 0;
    for (; v; v &= v - 1)
        n++;
    return n;
}

/* Channels one pass handles: a specialized count, or the generic chunk. */
static size_t bng_chunk(const bng_dtype_config *dtype, const bng_kernel *kernel)
{
    return kernel->channels ? kernel->channels : dtype->generic_chunk;
}

#if !BNG_SPLIT_MEMORY
/* ---- the per-channel steps in scalar code (unified targets: both units reach
 * private memory; a split target has their vector twins below) ---- */

/* Element `index` of an array of `bytes`-sized elements. */
static const void *bng_at(const void *base, size_t index, size_t bytes)
{
    return (const unsigned char *)base + index * bytes;
}

static void *bng_at_mut(void *base, size_t index, size_t bytes)
{
    return (unsigned char *)base + index * bytes;
}

static void bng_zero(size_t n, float *a)
{
    size_t i;
    for (i = 0; i < n; i++)
        a[i] = 0.0f;
}

/* Fold one row group's partial sums into the total, in group order. */
static void bng_fold(size_t channels, float *sum_dy, float *sum_dyxm,
                     const float *part_dy, const float *part_dyxm)
{
    size_t c;
    for (c = 0; c < channels; c++) {
        sum_dy[c] += part_dy[c];
        sum_dyxm[c] += part_dyxm[c];
    }
}

static void bng_stats_to_float(const bng_dtype_config *dtype, size_t channels,
                               const void *in, float *out)
{
    size_t c;
    for (c = 0; c < channels; c++)
        out[c] = dtype->stats_load(in, c);
}

/* dx-only's coefficient: gain = scale * invar, as bng_finalize forms it. */
static void bng_gain(const bng_dtype_config *dtype, size_t channels, const void *invar,
                     const void *scale, float *gain)
{
    size_t c;
    for (c = 0; c < channels; c++)
        gain[c] = dtype->stats_load(scale, c) * dtype->stats_load(invar, c);
}

/* Per-channel results of the sums over m rows: dbias and dscale (added to what they
 * hold when accumulating), and the dx coefficients
 * dx = gain * ((dy - dy_mean) - (x - mean) * slope). dx uses the float sums, never
 * the rounded outputs. */
static void bng_finalize(const bng_dtype_config *dtype, size_t channels, float m, int accumulate,
                         const void *invar, const void *scale,
                         const float *sum_dy, const float *sum_dyxm, void *dbias, void *dscale,
                         float *gain, float *dy_mean, float *slope)
{
    size_t c;

    /* dbias and dscale may be the very array of invar or scale: each channel's inputs
     * are read before its outputs are written. */
    for (c = 0; c < channels; c++) {
        const float invar_c = dtype->stats_load(invar, c);
        const float scale_c = dtype->stats_load(scale, c);
        const float dscale_c = invar_c * sum_dyxm[c];
        float dbias_out = sum_dy[c], dscale_out = dscale_c;

        gain[c] = scale_c * invar_c;
        dy_mean[c] = sum_dy[c] / m;
        slope[c] = invar_c * dscale_c / m;
        if (accumulate) {
            dbias_out = dtype->stats_load(dbias, c) + dbias_out;
            dscale_out = dtype->stats_load(dscale, c) + dscale_out;
        }
        dtype->stats_store(dbias, c, dbias_out);
        dtype->stats_store(dscale, c, dscale_out);
    }
}
#endif

#if BNG_SPLIT_MEMORY
/* ---- the per-channel steps on vector memory (split targets) ----
 *
 * On a split target the _s workspace is in vector memory (AM), which scalar code may
 * not touch: each step above has a twin here that works on whole vectors of
 * BNG_VECTOR_LANES floats, the workspace arrays padded to whole vectors (the padding
 * lanes are zeroed with the chunk, computed on, and never put back: every DMA moves
 * exactly the chunk's channels). Lane by lane, the same IEEE operations in the same
 * order as the scalar steps, so _s on a split target gives _p's bits. A scalar value
 * reaches vector memory only through a register (bng_vbroadcast). */
#define BNG_VT2(n) bng_f32x##n
#define BNG_VT(n) BNG_VT2(n)
#define BNG_VOP2(n, op) bng_f32x##n##_##op
#define BNG_VOP(n, op) BNG_VOP2(n, op)
#define BNG_V BNG_VECTOR_LANES
typedef BNG_VT(BNG_V) bng_vec;
#define bng_vload BNG_VOP(BNG_V, load_f32)
#define bng_vstore BNG_VOP(BNG_V, store_f32)
#define bng_vload_f16 BNG_VOP(BNG_V, load_f16)
#define bng_vstore_f16 BNG_VOP(BNG_V, store_f16)
#define bng_vzero_vec BNG_VOP(BNG_V, zero)
#define bng_vadd BNG_VOP(BNG_V, add)
#define bng_vmul BNG_VOP(BNG_V, mul)
#define bng_vdiv BNG_VOP(BNG_V, div)
#define bng_vbroadcast BNG_VOP(BNG_V, broadcast)

/* Element i (a multiple of BNG_V) of a per-channel array of the call's stats type. */
static bng_vec bng_vstats_load(const bng_dtype_config *dtype, const BNG_VMEM void *stats, size_t i)
{
    if (dtype->stats_bytes == sizeof(float))
        return bng_vload((const BNG_VMEM float *)stats + i);
    return bng_vload_f16((const BNG_VMEM half *)stats + i);
}

static void bng_vstats_store(const bng_dtype_config *dtype, BNG_VMEM void *stats, size_t i,
                             bng_vec v)
{
    if (dtype->stats_bytes == sizeof(float))
        bng_vstore((BNG_VMEM float *)stats + i, v);
    else
        bng_vstore_f16((BNG_VMEM half *)stats + i, v);
}

static void bng_vzero(size_t channels, BNG_VMEM float *a)
{
    size_t c;
    for (c = 0; c < channels; c += BNG_V)
        bng_vstore(a + c, bng_vzero_vec());
}

static void bng_vzero_stats(const bng_dtype_config *dtype, size_t channels, BNG_VMEM void *a)
{
    size_t c;
    for (c = 0; c < channels; c += BNG_V)
        bng_vstats_store(dtype, a, c, bng_vzero_vec());
}

static void bng_vfold(size_t channels, BNG_VMEM float *sum_dy, BNG_VMEM float *sum_dyxm,
                      const BNG_VMEM float *part_dy, const BNG_VMEM float *part_dyxm)
{
    size_t c;
    for (c = 0; c < channels; c += BNG_V) {
        bng_vstore(sum_dy + c, bng_vadd(bng_vload(sum_dy + c), bng_vload(part_dy + c)));
        bng_vstore(sum_dyxm + c, bng_vadd(bng_vload(sum_dyxm + c), bng_vload(part_dyxm + c)));
    }
}

static void bng_vstats_to_float(const bng_dtype_config *dtype, size_t channels,
                                const BNG_VMEM void *in, BNG_VMEM float *out)
{
    size_t c;
    for (c = 0; c < channels; c += BNG_V)
        bng_vstore(out + c, bng_vstats_load(dtype, in, c));
}

static void bng_vgain(const bng_dtype_config *dtype, size_t channels, const BNG_VMEM void *invar,
                      const BNG_VMEM void *scale, BNG_VMEM float *gain)
{
    size_t c;
    for (c = 0; c < channels; c += BNG_V)
        bng_vstore(gain + c, bng_vmul(bng_vstats_load(dtype, scale, c),
                                      bng_vstats_load(dtype, invar, c)));
}

/* bng_finalize on vectors; dbias and dscale are workspace arrays of their own here. */
static void bng_vfinalize(const bng_dtype_config *dtype, size_t channels, float m, int accumulate,
                          const BNG_VMEM void *invar, const BNG_VMEM void *scale,
                          const BNG_VMEM float *sum_dy, const BNG_VMEM float *sum_dyxm,
                          BNG_VMEM void *dbias, BNG_VMEM void *dscale, BNG_VMEM float *gain,
                          BNG_VMEM float *dy_mean, BNG_VMEM float *slope)
{
    const bng_vec m_vec = bng_vbroadcast(m);
    size_t c;

    for (c = 0; c < channels; c += BNG_V) {
        const bng_vec invar_c = bng_vstats_load(dtype, invar, c);
        const bng_vec scale_c = bng_vstats_load(dtype, scale, c);
        const bng_vec sum_dy_c = bng_vload(sum_dy + c);
        const bng_vec dscale_c = bng_vmul(invar_c, bng_vload(sum_dyxm + c));
        bng_vec dbias_out = sum_dy_c, dscale_out = dscale_c;

        bng_vstore(gain + c, bng_vmul(scale_c, invar_c));
        bng_vstore(dy_mean + c, bng_vdiv(sum_dy_c, m_vec));
        bng_vstore(slope + c, bng_vdiv(bng_vmul(invar_c, dscale_c), m_vec));
        if (accumulate) {
            dbias_out = bng_vadd(bng_vstats_load(dtype, dbias, c), dbias_out);
            dscale_out = bng_vadd(bng_vstats_load(dtype, dscale, c), dscale_out);
        }
        bng_vstats_store(dtype, dbias, c, dbias_out);
        bng_vstats_store(dtype, dscale, c, dscale_out);
    }
}
#endif

/* ---- private storage: the caller's memory, one core ---- */

/* On a split target _p's arrays are in the calling core's vector memory, which the
 * driver's scalar code may not touch and whose rows the kernels may not read part of a
 * vector of: there _p stages them through padded tiles in a workspace of the same
 * memory, with the staged pipeline below on the calling core alone
 * (bng_staged_private_run). On a unified target it works on them directly. */
#if BNG_SPLIT_MEMORY
static int bng_staged_private_run(const bng_dtype_config *dtype, const bng_kernel *kernel,
                                  const bng_call *call, const void *x, const void *dy,
                                  void *dx, const bng_stats *stats, float *sums);
#else
/* The float arrays of one chunk, on the stack: BNG_STACK_FLOAT_ARRAYS of the widest
 * chunk, the figure the generator and make report give. */
typedef struct {
    float mean[BNG_MAX_CHUNK], sum_dy[BNG_MAX_CHUNK], sum_dyxm[BNG_MAX_CHUNK];
    float part_dy[BNG_MAX_CHUNK], part_dyxm[BNG_MAX_CHUNK];
    float gain[BNG_MAX_CHUNK], dy_mean[BNG_MAX_CHUNK], slope[BNG_MAX_CHUNK];
} bng_stack;
typedef char bng_stack_agrees[sizeof(bng_stack) == BNG_STACK_FLOAT_ARRAYS * BNG_MAX_CHUNK * sizeof(float) ? 1 : -1];

/* Pass 1 on the caller's memory: every row group of the chunk to its partial sums,
 * folded in group order. */
static void bng_private_sum_rows(const bng_dtype_config *dtype, const bng_kernel *kernel,
                                 const bng_call *call, size_t first, size_t channels,
                                 const void *x, const void *dy, bng_stack *s)
{
    const size_t batch = call->batch, channel = call->channel;
    const size_t group_rows = bng_group_rows(batch), element = dtype->element_bytes;
    size_t row;

    bng_zero(channels, s->sum_dy);
    bng_zero(channels, s->sum_dyxm);
    for (row = 0; row < batch; row += group_rows) {
        bng_zero(channels, s->part_dy);
        bng_zero(channels, s->part_dyxm);
        kernel->reduce(bng_min(group_rows, batch - row), channels, channel,
                       bng_at(x, row * channel + first, element),
                       bng_at(dy, row * channel + first, element), s->mean, s->part_dy,
                       s->part_dyxm);
        bng_fold(channels, s->sum_dy, s->sum_dyxm, s->part_dy, s->part_dyxm);
    }
}

/* Pass 2 on the caller's memory: dx of every row of the chunk. */
static void bng_private_dx(const bng_dtype_config *dtype, const bng_kernel *kernel,
                           const bng_call *call, size_t first, size_t channels,
                           const void *x, const void *dy, void *dx, const bng_stack *s)
{
    const size_t element = dtype->element_bytes;
    const int stream = call->batch * call->channel * element >= BNG_STREAM_DX_BYTES;

    if (call->is_train)
        kernel->dx_train(call->batch, channels, call->channel, bng_at(x, first, element),
                         bng_at(dy, first, element), bng_at_mut(dx, first, element), s->mean,
                         s->gain, s->dy_mean, s->slope, stream);
    else
        kernel->dx_infer(call->batch, channels, call->channel, bng_at(dy, first, element),
                         bng_at_mut(dx, first, element), s->gain, stream);
}

/* One checked call on the caller's memory. Chunks are independent: each is summed,
 * finalized and written in turn. `sums`: the partial-sums buffer (reduce: written,
 * apply: read), else NULL. */
static void bng_direct_private_run(const bng_dtype_config *dtype, const bng_kernel *kernel,
                                   const bng_call *call, const void *x, const void *dy,
                                   void *dx, const bng_stats *stats, float *sums)
{
    const size_t chunk = bng_chunk(dtype, kernel), channel = call->channel;
    const size_t stat = dtype->stats_bytes;
    bng_stack s;
    size_t first;

    for (first = 0; first < channel; first += chunk) {
        const size_t channels = bng_min(chunk, channel - first);
        size_t c;

        if (BNG_IS_DX_ONLY(call)) {
            bng_gain(dtype, channels, bng_at(stats->invar, first, stat),
                     bng_at(stats->scale, first, stat), s.gain);
            bng_private_dx(dtype, kernel, call, first, channels, x, dy, dx, &s);
            continue;
        }
        bng_stats_to_float(dtype, channels, bng_at(stats->mean, first, stat), s.mean);
        if (BNG_SUMS_ROWS(call))
            bng_private_sum_rows(dtype, kernel, call, first, channels, x, dy, &s);
        if (BNG_IS_REDUCE(call)) {
            for (c = 0; c < channels; c++) {
                sums[first + c] = s.sum_dy[c];
                sums[channel + first + c] = s.sum_dyxm[c];
            }
            continue;
        }
        if (BNG_IS_APPLY(call))
            for (c = 0; c < channels; c++) {
                s.sum_dy[c] = sums[first + c];
                s.sum_dyxm[c] = sums[channel + first + c];
            }
        bng_finalize(dtype, channels, call->m, BNG_ACCUMULATES(call),
                     bng_at(stats->invar, first, stat), bng_at(stats->scale, first, stat),
                     s.sum_dy, s.sum_dyxm, bng_at_mut(stats->dbias, first, stat),
                     bng_at_mut(stats->dscale, first, stat), s.gain, s.dy_mean, s.slope);
        bng_private_dx(dtype, kernel, call, first, channels, x, dy, dx, &s);
    }
    if (BNG_IS_REDUCE(call))
        bng_write_count(call->batch, sums + 2 * channel);
}
#endif

/* One checked call on the caller's memory: BNG_OK, or BNG_ENOMEM when a split target's
 * HAL had no workspace for it (nothing written). */
static int bng_private_run(const bng_dtype_config *dtype, const bng_kernel *kernel,
                           const bng_call *call, const void *x, const void *dy, void *dx,
                           const bng_stats *stats, float *sums)
{
#if BNG_SPLIT_MEMORY
    return bng_staged_private_run(dtype, kernel, call, x, dy, dx, stats, sums);
#else
    bng_direct_private_run(dtype, kernel, call, x, dy, dx, stats, sums);
    return BNG_OK;
#endif
}

int bng_run_private(const bng_dtype_config *dtype, const bng_kernel *kernel,
                    size_t batch, size_t channel, int is_train,
                    const void *x, const void *dy, void *dx, const bng_stats *stats)
{
    bng_call call;

    call.op = BNG_OP_FULL;
    call.batch = batch;
    call.channel = channel;
    call.m = (float)batch;
    call.is_train = is_train;
    call.accumulate = 0;
    return bng_private_run(dtype, kernel, &call, x, dy, dx, stats, NULL);
}

static void bng_private_entry(const bng_dtype_config *dtype, int op, void *x, void *dy,
                              void *dx, long long *params)
{
    bng_call call;
    int status;

    if (params == NULL)
        return;     /* nowhere to report: touch nothing */
    status = bng_read_params(dtype, op, params, x, dy, dx, 0, &call);
    if (status == BNG_OK) {
        const bng_stats stats = bng_stats_from_params(params);
        float *sums = (bng_op_arrays[op] & BNG_BIT(BNG_SUMS))
                      ? (float *)(intptr_t)params[BNG_SLOT_SUMS] : NULL;

        status = bng_private_run(dtype, dtype->kernel_for_channels(call.channel), &call, x, dy,
                                 dx, &stats, sums);
    }
    params[BNG_PARAM_STATUS] = status;
}

void bng_entry_private(const bng_dtype_config *dtype, void *x, void *dy, void *dx,
                       long long *params)
{
    bng_private_entry(dtype, BNG_OP_FULL, x, dy, dx, params);
}

/* ---- staged storage: tiles by DMA; _s on the cores of core_mask, and on a split
 * target _p on the calling core alone ---- */

/* The per-channel steps of _s on the core's private memory: the scalar ones, or on a
 * split target their vector twins (private memory is vector memory there). */
#if BNG_SPLIT_MEMORY
#define BNG_S_ZERO bng_vzero
#define BNG_S_FOLD bng_vfold
#define BNG_S_STATS_TO_FLOAT bng_vstats_to_float
#define BNG_S_GAIN bng_vgain
#define BNG_S_FINALIZE bng_vfinalize
#else
#define BNG_S_ZERO bng_zero
#define BNG_S_FOLD bng_fold
#define BNG_S_STATS_TO_FLOAT bng_stats_to_float
#define BNG_S_GAIN bng_gain
#define BNG_S_FINALIZE bng_finalize
#endif

/* The per-channel arrays of an _s call, in shared memory. */
typedef struct {
    const BNG_SHARED void *mean, *invar, *scale;
    BNG_SHARED void *dbias, *dscale;
} bng_shared_stats;

/* A staged call. For _p on a split target (`alone`) the "shared" arrays are the
 * caller's, in its vector memory (the DMA moves them; the sums stay in scalar memory),
 * the one core folds its row groups itself (no barrier, no shared scratch) and its
 * private memory is the workspace the HAL gave _p. */
typedef struct {
    const bng_dtype_config *dtype;
    const bng_kernel *kernel;
    bng_call call;
    unsigned mask;
    const BNG_SHARED void *x, *dy;
    BNG_SHARED void *dx;
    bng_shared_stats stats;
    BNG_SHARED float *sums;     /* reduce: out; apply: in */
    int alone;
    BNG_VMEM unsigned char *workspace;
    size_t workspace_bytes;
} bng_staged_job;
/* _p staged on the calling core: only a split target has it (0 elsewhere, so that the
 * compiler drops its code). */
#define BNG_ALONE(job) (BNG_SPLIT_MEMORY && (job)->alone)

/* Element `index` of a shared array of `bytes`-sized elements. */
static const BNG_SHARED void *bng_shared_at(const BNG_SHARED void *base, size_t index, size_t bytes)
{
    return (const BNG_SHARED unsigned char *)base + index * bytes;
}

static BNG_SHARED void *bng_shared_at_mut(BNG_SHARED void *base, size_t index, size_t bytes)
{
    return (BNG_SHARED unsigned char *)base + index * bytes;
}

/* A core's private memory: the workspace (BNG_WORKSPACE), then x and dy tile buffers. */
typedef float bng_work_float;
typedef unsigned char bng_work_stats;
#define BNG_WORK_FIELD(unused1, unused2, name, kind) BNG_VMEM bng_work_##kind *name;
#define BNG_WORK_TAKE(max_chunk, stats_bytes, name, kind) \
    p->name = bng_take(&next, BNG_WORK_ARRAY_CHUNK(max_chunk) * BNG_WORK_ELEMENT_##kind(stats_bytes));
/* All of it is vector memory (BNG_VMEM) on a split target. */
typedef struct {
    BNG_WORKSPACE(BNG_WORK_FIELD, 0, 0)
    BNG_VMEM unsigned char *x_tiles[2], *dy_tiles[2];
    size_t tile_rows;   /* rows per tile buffer; the whole slice when resident */
    int resident;       /* the core's rows of x and dy stay in private memory for pass 2 */
} bng_private;
/* The tile buffers bng_layout splits the rest of private memory into: the generator's
 * TILE_BUFFERS, with which it checks private_bytes. */
#define BNG_LAYOUT_TILES (sizeof(((bng_private *)0)->x_tiles) / sizeof(((bng_private *)0)->x_tiles[0]) \
                          + sizeof(((bng_private *)0)->dy_tiles) / sizeof(((bng_private *)0)->dy_tiles[0]))
typedef char bng_tile_buffers_agree[BNG_LAYOUT_TILES == BNG_TILE_BUFFERS ? 1 : -1];

/* The most DMA transfers a core has outstanding: in pass 2, after the next tile's two
 * gets are issued, this tile's two gets (until waited) or its put and the previous
 * tile's put; pass 1 has at most the two tiles' gets; the per-channel transfers are
 * waited one at a time. The HAL contract allows BNG_MAX_OUTSTANDING_DMA. */
#define BNG_DRIVER_OUTSTANDING_DMA 4
typedef char bng_outstanding_dma_agrees[BNG_DRIVER_OUTSTANDING_DMA <= BNG_MAX_OUTSTANDING_DMA ? 1 : -1];

/* Take bytes (rounded up to BNG_ALIGN) from a core's private memory. */
static BNG_VMEM void *bng_take(BNG_VMEM unsigned char **next, size_t bytes)
{
    BNG_VMEM void *p = *next;
    *next += BNG_ALIGN_UP(bytes);
    return p;
}

/* Lay out private memory (`bytes` at `base`) for rows of `row_pitch` bytes and
 * `slice_rows` rows: resident when `may_stay` and x and dy of the whole slice fit, else
 * double-buffered tiles of a multiple of BNG_BLOCK_ROWS rows (so that tiles never split
 * a block). */
static void bng_layout(const bng_dtype_config *dtype, BNG_VMEM unsigned char *base, size_t bytes,
                       size_t row_pitch, size_t slice_rows, int may_stay, bng_private *p)
{
    size_t tile_bytes;
    BNG_VMEM unsigned char *next = base;

    BNG_WORKSPACE(BNG_WORK_TAKE, dtype->max_chunk, dtype->stats_bytes)
    /* targets.yaml is validated so that this leaves room for BNG_BLOCK_ROWS-row tiles. */
    tile_bytes = (bytes - (size_t)(next - base)) / BNG_TILE_BUFFERS / BNG_ALIGN * BNG_ALIGN;
    p->resident = may_stay && slice_rows * row_pitch <= 2 * tile_bytes;
    if (p->resident) {
        p->tile_rows = slice_rows;
        p->x_tiles[0] = p->x_tiles[1] = bng_take(&next, slice_rows * row_pitch);
        p->dy_tiles[0] = p->dy_tiles[1] = bng_take(&next, slice_rows * row_pitch);
    } else {
        p->tile_rows = tile_bytes / row_pitch / BNG_BLOCK_ROWS * BNG_BLOCK_ROWS;
        p->x_tiles[0] = bng_take(&next, tile_bytes);
        p->x_tiles[1] = bng_take(&next, tile_bytes);
        p->dy_tiles[0] = bng_take(&next, tile_bytes);
        p->dy_tiles[1] = bng_take(&next, tile_bytes);
    }
#if BNG_SPLIT_MEMORY
    {   /* the padding lanes of every workspace array: zero, with vector stores */
        const size_t n = BNG_WORK_ARRAY_CHUNK(dtype->max_chunk);
#define BNG_WORK_ZERO_float(name) bng_vzero(n, p->name);
#define BNG_WORK_ZERO_stats(name) bng_vzero_stats(dtype, n, p->name);
#define BNG_WORK_ZERO(unused1, unused2, name, kind) BNG_WORK_ZERO_##kind(name)
        BNG_WORKSPACE(BNG_WORK_ZERO, 0, 0)
    }
#endif
}

/* The core's private memory for the call: the workspace the HAL gave _p (alone), or
 * the core's from bng_hal_private. NULL when there is none (include/bng_hal.h: inside
 * body it never happens unless the HAL cannot honour its contract, and then on every
 * core): the core then writes nothing and leaves. */
static BNG_VMEM unsigned char *bng_core_memory(const bng_staged_job *job, unsigned core,
                                              size_t *bytes)
{
    BNG_VMEM unsigned char *base;

    if (BNG_ALONE(job)) {
        *bytes = job->workspace_bytes;
        return job->workspace;
    }
    *bytes = 0;
    base = bng_hal_private(core, bytes);
    return base != NULL && *bytes >= BNG_PRIVATE_BYTES ? base : NULL;
}

/* Rows of the tile starting at `row`: tiles never cross a row group, nor the slice. */
static size_t bng_tile(size_t row, size_t end, size_t group_rows, size_t tile_rows)
{
    const size_t group_end = (row / group_rows + 1) * group_rows;
    return bng_min(tile_rows, bng_min(group_end, end) - row);
}

/* One core's state in a staged call: its rows, and the chunk it works on. */
typedef struct {
    const bng_staged_job *job;
    unsigned core, rank;           /* rank: the k-th selected core */
    size_t group_rows, groups;
    size_t begin, end;             /* this core's rows: the rank-th run of row groups */
    size_t first, channels;        /* the chunk */
    size_t row_bytes;              /* one row of the chunk */
    size_t row_channels, pitch;    /* a row in private memory: padded on a split target */
    BNG_SHARED float *scratch;     /* the chunk's slot of the shared scratch */
    bng_private p;                 /* the chunk's layout of private memory */
} bng_core;

/* The k-th selected core takes the k-th contiguous run of groups. */
static void bng_core_rows(bng_core *c, const bng_staged_job *job, unsigned core)
{
    const size_t batch = job->call.batch;
    const unsigned cores = bng_popcount(job->mask);

    c->job = job;
    c->core = core;
    c->rank = bng_popcount(job->mask & ((1u << core) - 1u));
    c->group_rows = bng_group_rows(batch);
    c->groups = (batch + c->group_rows - 1) / c->group_rows;
    c->begin = bng_min(c->groups * c->rank / cores * c->group_rows, batch);
    c->end = bng_min(c->groups * (c->rank + 1) / cores * c->group_rows, batch);
}

/* Start the chunk at channel `first`: lay out private memory, bring in the
 * per-channel inputs the call uses. Only the vendor's call (two passes over the same
 * rows) keeps the slice resident. 0: no private memory (bng_core_memory). */
static int bng_core_chunk(bng_core *c, size_t first, size_t slot)
{
    const bng_staged_job *job = c->job;
    const bng_dtype_config *dtype = job->dtype;
    const bng_call *call = &job->call;
    const size_t stat = dtype->stats_bytes;
    size_t bytes;
    BNG_VMEM unsigned char *memory = bng_core_memory(job, c->core, &bytes);

    if (memory == NULL)
        return 0;
    c->first = first;
    c->channels = bng_min(bng_chunk(dtype, job->kernel), call->channel - first);
    c->row_bytes = c->channels * dtype->element_bytes;
    c->row_channels = BNG_PADDED(c->channels);
    c->pitch = c->row_channels * dtype->element_bytes;
    c->scratch = BNG_SHARED_SCRATCH + slot * BNG_MAX_GROUPS * 2 * dtype->max_chunk;
    bng_layout(dtype, memory, bytes, c->pitch, c->end - c->begin,
               BNG_SUMS_ROWS(call) && !BNG_IS_REDUCE(call), &c->p);
    if (!BNG_IS_DX_ONLY(call))
        bng_hal_dma_wait(bng_hal_dma_get(c->p.stats_mean, bng_shared_at(job->stats.mean, first, stat), 1, c->channels * stat, 0, 0));
    if (!BNG_IS_REDUCE(call)) {
        bng_hal_dma_wait(bng_hal_dma_get(c->p.invar, bng_shared_at(job->stats.invar, first, stat), 1, c->channels * stat, 0, 0));
        bng_hal_dma_wait(bng_hal_dma_get(c->p.scale, bng_shared_at(job->stats.scale, first, stat), 1, c->channels * stat, 0, 0));
    }
    if (!BNG_IS_DX_ONLY(call))
        BNG_S_STATS_TO_FLOAT(dtype, c->channels, c->p.stats_mean, c->p.mean);
    return 1;
}

/* Start the DMA of rows [row, row + n) of the chunk's x (when with_x) and dy into a
 * tile buffer: handles[0] for x, handles[1] for dy. */
static void bng_fetch(const bng_core *c, size_t row, size_t n, int with_x, BNG_VMEM void *x_tile,
                      BNG_VMEM void *dy_tile, bng_hal_dma handles[2])
{
    const bng_staged_job *job = c->job;
    const size_t element = job->dtype->element_bytes, channel = job->call.channel;
    const size_t at = row * channel + c->first;

    handles[0] = with_x ? bng_hal_dma_get(x_tile, bng_shared_at(job->x, at, element), n,
                                          c->row_bytes, channel * element, c->pitch)
                        : BNG_HAL_DMA_DONE;
    handles[1] = bng_hal_dma_get(dy_tile, bng_shared_at(job->dy, at, element), n,
                                 c->row_bytes, channel * element, c->pitch);
}

/* The end of a row group's partial sums: into the shared scratch, or alone added to the
 * total at once (the groups come in order). */
static void bng_core_group_done(bng_core *c, size_t row)
{
    const bng_private *p = &c->p;
    const size_t max_chunk = c->job->dtype->max_chunk;
    BNG_SHARED float *group;

    if (BNG_ALONE(c->job)) {
        BNG_S_FOLD(c->channels, p->sum_dy, p->sum_dyxm, p->part_dy, p->part_dyxm);
        return;
    }
    group = c->scratch + row / c->group_rows * 2 * max_chunk;
    bng_hal_dma_wait(bng_hal_dma_put(group, p->part_dy, 1, c->channels * sizeof(float), 0, 0));
    bng_hal_dma_wait(bng_hal_dma_put(group + max_chunk, p->part_dyxm, 1, c->channels * sizeof(float), 0, 0));
}

/* Pass 1: this core's groups to their partial sums; the next tile arrives while this
 * one is reduced. Resident, the slice fills one buffer tile by tile. */
static void bng_core_sum_rows(bng_core *c)
{
    const bng_private *p = &c->p;
    const size_t begin = c->begin, end = c->end, group_rows = c->group_rows;
    bng_hal_dma gets[2][2];
    size_t row, t;

    if (BNG_ALONE(c->job)) {
        BNG_S_ZERO(c->channels, p->sum_dy);
        BNG_S_ZERO(c->channels, p->sum_dyxm);
    }
    if (begin < end)
        bng_fetch(c, begin, bng_tile(begin, end, group_rows, p->tile_rows), 1,
                  p->x_tiles[0], p->dy_tiles[0], gets[0]);
    for (row = begin, t = 0; row < end; t ^= 1) {
        const size_t n = bng_tile(row, end, group_rows, p->tile_rows), next = row + n;
        const size_t at = p->resident ? (row - begin) * c->pitch : 0;
        const size_t next_at = p->resident ? (next - begin) * c->pitch : 0;

        if (next < end)
            bng_fetch(c, next, bng_tile(next, end, group_rows, p->tile_rows), 1,
                      p->x_tiles[t ^ 1] + next_at, p->dy_tiles[t ^ 1] + next_at, gets[t ^ 1]);
        bng_hal_dma_wait(gets[t][0]);
        bng_hal_dma_wait(gets[t][1]);
        if (row % group_rows == 0) {
            BNG_S_ZERO(c->channels, p->part_dy);
            BNG_S_ZERO(c->channels, p->part_dyxm);
        }
        c->job->kernel->reduce(n, c->row_channels, c->row_channels, p->x_tiles[t] + at,
                               p->dy_tiles[t] + at, p->mean, p->part_dy, p->part_dyxm);
        if (next == end || next % group_rows == 0)
            bng_core_group_done(c, row);
        row = next;
    }
}

/* After the barrier: every core folds all groups in order (the same bits everywhere). */
static void bng_core_fold(bng_core *c)
{
    const bng_private *p = &c->p;
    const size_t max_chunk = c->job->dtype->max_chunk;
    size_t g;

    BNG_S_ZERO(c->channels, p->sum_dy);
    BNG_S_ZERO(c->channels, p->sum_dyxm);
    for (g = 0; g < c->groups; g++) {
        const BNG_SHARED float *group = c->scratch + g * 2 * max_chunk;
        bng_hal_dma_wait(bng_hal_dma_get(p->part_dy, group, 1, c->channels * sizeof(float), 0, 0));
        bng_hal_dma_wait(bng_hal_dma_get(p->part_dyxm, group + max_chunk, 1, c->channels * sizeof(float), 0, 0));
        BNG_S_FOLD(c->channels, p->sum_dy, p->sum_dyxm, p->part_dy, p->part_dyxm);
    }
}

/* Where limb i of the count stands in part_dy before its put: one vector each on a
 * split target (a limb reaches vector memory through a register), packed otherwise. */
#if BNG_SPLIT_MEMORY
#define BNG_LIMB_STRIDE ((size_t)BNG_V)
#else
#define BNG_LIMB_STRIDE ((size_t)1)
#endif

/* Reduce: the lowest selected core writes the chunk's sums (and, with the first chunk,
 * the count) into the partial-sums buffer. */
static void bng_core_put_sums(bng_core *c)
{
    const bng_staged_job *job = c->job;
    const size_t channel = job->call.channel;

    if (c->rank != 0)
        return;
    bng_hal_dma_wait(bng_hal_dma_put(job->sums + c->first, c->p.sum_dy, 1, c->channels * sizeof(float), 0, 0));
    bng_hal_dma_wait(bng_hal_dma_put(job->sums + channel + c->first, c->p.sum_dyxm, 1, c->channels * sizeof(float), 0, 0));
    if (c->first == 0) {
        size_t i;
        /* The count's limbs into part_dy (free after the fold), limb i at
         * i * BNG_LIMB_STRIDE; then one float put each (one call site for every kind
         * of target, so that make dma-mutants removes its wait everywhere). */
#if BNG_SPLIT_MEMORY
        /* Each limb through a register into vector memory (part_dy holds at least one
         * vector per limb). */
        size_t rows = job->call.batch;
        for (i = 0; i < BNG_SUMS_COUNT_LIMBS; i++) {
            bng_vstore(c->p.part_dy + i * BNG_LIMB_STRIDE,
                       bng_vbroadcast((float)(unsigned)(rows & BNG_LIMB_MAX)));
            rows >>= BNG_SUMS_LIMB_BITS;
        }
#else
        bng_write_count(job->call.batch, c->p.part_dy);
#endif
        for (i = 0; i < BNG_SUMS_COUNT_LIMBS; i++)
            bng_hal_dma_wait(bng_hal_dma_put(job->sums + 2 * channel + i, c->p.part_dy + i * BNG_LIMB_STRIDE, 1, sizeof(float), 0, 0));
    }
}

/* Apply: the chunk's global sums from the partial-sums buffer. */
static void bng_core_get_sums(bng_core *c)
{
    const bng_staged_job *job = c->job;

    bng_hal_dma_wait(bng_hal_dma_get(c->p.sum_dy, job->sums + c->first, 1, c->channels * sizeof(float), 0, 0));
    bng_hal_dma_wait(bng_hal_dma_get(c->p.sum_dyxm, job->sums + job->call.channel + c->first, 1, c->channels * sizeof(float), 0, 0));
}

/* Every core computes the dx coefficients; the lowest selected core writes dbias and
 * dscale (accumulating: onto what they held, which it reads first). */
static void bng_core_finalize(bng_core *c)
{
    const bng_staged_job *job = c->job;
    const bng_private *p = &c->p;
    const size_t stat = job->dtype->stats_bytes, bytes = c->channels * stat;
    const int accumulate = BNG_ACCUMULATES(&job->call) && c->rank == 0;

    if (accumulate) {
        bng_hal_dma_wait(bng_hal_dma_get(p->dbias, bng_shared_at(job->stats.dbias, c->first, stat), 1, bytes, 0, 0));
        bng_hal_dma_wait(bng_hal_dma_get(p->dscale, bng_shared_at(job->stats.dscale, c->first, stat), 1, bytes, 0, 0));
    }
    BNG_S_FINALIZE(job->dtype, c->channels, job->call.m, accumulate, p->invar, p->scale,
                   p->sum_dy, p->sum_dyxm, p->dbias, p->dscale, p->gain, p->dy_mean, p->slope);
    if (c->rank == 0) {
        bng_hal_dma_wait(bng_hal_dma_put(bng_shared_at_mut(job->stats.dbias, c->first, stat), p->dbias, 1, bytes, 0, 0));
        bng_hal_dma_wait(bng_hal_dma_put(bng_shared_at_mut(job->stats.dscale, c->first, stat), p->dscale, 1, bytes, 0, 0));
    }
}

/* Pass 2: dx for this core's rows, in place over the dy tile, put back while the next
 * tile arrives. A buffer is refilled only once its last put completed. Resident, x and
 * dy are still in private memory from pass 1. */
static void bng_core_dx(bng_core *c)
{
    const bng_staged_job *job = c->job;
    const bng_private *p = &c->p;
    const size_t begin = c->begin, end = c->end, group_rows = c->group_rows;
    const size_t element = job->dtype->element_bytes, channel = job->call.channel;
    const int is_train = job->call.is_train;
    bng_hal_dma gets[2][2], puts[2] = {BNG_HAL_DMA_DONE, BNG_HAL_DMA_DONE};
    size_t row, t;

    if (begin < end && !p->resident)
        bng_fetch(c, begin, bng_tile(begin, end, group_rows, p->tile_rows), is_train,
                  p->x_tiles[0], p->dy_tiles[0], gets[0]);
    for (row = begin, t = 0; row < end; t ^= 1) {
        const size_t n = bng_tile(row, end, group_rows, p->tile_rows), next = row + n;
        const size_t at = p->resident ? (row - begin) * c->pitch : 0;
        BNG_VMEM unsigned char *x_tile = p->x_tiles[t] + at, *dy_tile = p->dy_tiles[t] + at;

        if (next < end && !p->resident) {
            bng_hal_dma_wait(puts[t ^ 1]);
            bng_fetch(c, next, bng_tile(next, end, group_rows, p->tile_rows), is_train,
                      p->x_tiles[t ^ 1], p->dy_tiles[t ^ 1], gets[t ^ 1]);
        }
        if (!p->resident) {
            bng_hal_dma_wait(gets[t][0]);
            bng_hal_dma_wait(gets[t][1]);
        }
        if (is_train)
            job->kernel->dx_train(n, c->row_channels, c->row_channels, x_tile, dy_tile, dy_tile,
                                  p->mean, p->gain, p->dy_mean, p->slope, 0);
        else
            job->kernel->dx_infer(n, c->row_channels, c->row_channels, dy_tile, dy_tile, p->gain, 0);
        bng_hal_dma_wait(puts[t]);
        puts[t] = bng_hal_dma_put(bng_shared_at_mut(job->dx, row * channel + c->first, element),
                                  dy_tile, n, c->row_bytes, channel * element, c->pitch);
        row = next;
    }
    bng_hal_dma_wait(puts[0]);
    bng_hal_dma_wait(puts[1]);
}

/* One core's part of a staged call, chunk by chunk: the steps of the call's op. */
static void bng_staged_core(unsigned core, void *arg)
{
    const bng_staged_job *job = arg;
    const bng_call *call = &job->call;
    const size_t chunk = bng_chunk(job->dtype, job->kernel);
    bng_core c;
    size_t first, slot = 0;

    bng_core_rows(&c, job, core);
    for (first = 0; first < call->channel; first += chunk, slot ^= 1) {
        if (!bng_core_chunk(&c, first, slot))
            return;
        if (BNG_SUMS_ROWS(call)) {
            bng_core_sum_rows(&c);
            if (!BNG_ALONE(job)) {
                bng_hal_barrier();
                bng_core_fold(&c);
            }
        }
        if (BNG_IS_REDUCE(call)) {
            bng_core_put_sums(&c);
            continue;
        }
        if (BNG_IS_DX_ONLY(call)) {
            BNG_S_GAIN(job->dtype, c.channels, c.p.invar, c.p.scale, c.p.gain);
        } else {
            if (BNG_IS_APPLY(call)) {
                bng_core_get_sums(&c);
                /* dbias and dscale may be the very array of mean, invar or scale: every
                 * core has the chunk's copy before the lowest one writes them. */
                if (!BNG_ALONE(job))
                    bng_hal_barrier();
            }
            bng_core_finalize(&c);
        }
        bng_core_dx(&c);
    }
}

/* A staged job's storage type, kernel and arrays; the rest is the caller's to set.
 * The ABI's x, dy, dx, per-channel and sums pointers are where the DMA's "shared" side
 * reads and writes (_s: shared memory; _p on a split target: the caller's memories):
 * they take the qualifier here, once, and keep it through the HAL. */
static void bng_job_init(bng_staged_job *job, const bng_dtype_config *dtype,
                         const bng_kernel *kernel, const void *x, const void *dy, void *dx,
                         const bng_stats *stats, float *sums)
{
    job->dtype = dtype;
    job->kernel = kernel;
    job->x = (const BNG_SHARED void *)x;
    job->dy = (const BNG_SHARED void *)dy;
    job->dx = (BNG_SHARED void *)dx;
    job->stats.mean = (const BNG_SHARED void *)stats->mean;
    job->stats.invar = (const BNG_SHARED void *)stats->invar;
    job->stats.scale = (const BNG_SHARED void *)stats->scale;
    job->stats.dbias = (BNG_SHARED void *)stats->dbias;
    job->stats.dscale = (BNG_SHARED void *)stats->dscale;
    job->sums = (BNG_SHARED float *)sums;
    job->alone = 0;
    job->workspace = NULL;
    job->workspace_bytes = 0;
}

/* The status of an _s call. In the SPMD launch model every core of the group that
 * computes it writes the same value here, at the same time: harmless on the part, a
 * race by the letter of C11, which ThreadSanitizer is told to accept for this one store
 * (tests/tsan.supp). */
static void bng_report_status(BNG_SHARED long long *shared_params, int status)
{
    shared_params[BNG_PARAM_STATUS] = status;
}

/* The parameter block lives in shared memory (BNG_SHARED_PARAMS, a BNG_SHARED pointer):
 * its input slots are read once into a plain copy, the status is written back. The
 * status is written after bng_hal_parallel returns, on every core that took part (SPMD:
 * the selected ones); BNG_ENOMEM when the HAL could not reserve a selected core's
 * private memory, in which case no output was touched. */
static void bng_shared_entry(const bng_dtype_config *dtype, int op, void *x, void *dy, void *dx,
                             int core_mask)
{
    BNG_SHARED long long *shared_params = BNG_SHARED_PARAMS;
    long long params[BNG_SHARED_PARAMS_SLOTS];
    bng_staged_job job;
    int status, slot;

    /* The input slots the call uses; the status and reserved slots are never read,
     * nor are the extended block's slots by the vendor's call. */
    for (slot = 0; slot < BNG_SHARED_PARAMS_SLOTS; slot++)
        params[slot] = bng_reads_slot(op, slot) ? shared_params[slot] : 0;
    status = bng_read_params(dtype, op, params, x, dy, dx, 1, &job.call);
    job.mask = (unsigned)core_mask & BNG_ALL_CORES;
    if (status == BNG_OK && job.mask == 0)
        status = BNG_ECOREMASK;
    if (status == BNG_OK) {
        const bng_stats stats = bng_stats_from_params(params);

        bng_job_init(&job, dtype, dtype->kernel_for_channels(job.call.channel), x, dy, dx,
                     &stats, (bng_op_arrays[op] & BNG_BIT(BNG_SUMS))
                             ? (float *)(intptr_t)params[BNG_SLOT_SUMS] : NULL);
        switch (bng_hal_parallel(job.mask, bng_staged_core, &job, sizeof job)) {
        case BNG_HAL_OK:
            break;
        case BNG_HAL_IDLE:
            return;             /* not selected (SPMD): the selected cores report */
        default:
            status = BNG_ENOMEM;
            break;
        }
    }
    bng_report_status(shared_params, status);
}

void bng_entry_shared(const bng_dtype_config *dtype, void *x, void *dy, void *dx,
                      int core_mask)
{
    bng_shared_entry(dtype, BNG_OP_FULL, x, dy, dx, core_mask);
}

#if BNG_SPLIT_MEMORY
/* _p on a split target: the staged pipeline on the calling core alone, its private
 * memory the workspace bng_hal_p_workspace gives. The caller's arrays are reached by
 * DMA only; the partial-sums buffer is in scalar memory with the parameter block. */
static int bng_staged_private_run(const bng_dtype_config *dtype, const bng_kernel *kernel,
                                  const bng_call *call, const void *x, const void *dy,
                                  void *dx, const bng_stats *stats, float *sums)
{
    bng_staged_job job;

    bng_job_init(&job, dtype, kernel, x, dy, dx, stats, sums);
    job.call = *call;
    job.mask = 1u;      /* one core: rank 0 of one, all row groups */
    job.alone = 1;
    job.workspace = bng_hal_p_workspace(&job.workspace_bytes);
    if (job.workspace == NULL)
        return BNG_ENOMEM;
    if (job.workspace_bytes < BNG_P_WORKSPACE_BYTES) {
        bng_hal_p_workspace_release(job.workspace);     /* a HAL that broke its contract */
        return BNG_ENOMEM;
    }
    bng_staged_core(0, &job);
    bng_hal_p_workspace_release(job.workspace);
    return BNG_OK;
}
#endif

#if BNG_HAS_EXTENSIONS
/* ---- the entry points of batch_norm_grad_ext.h ---- */

void bng_entry_ext_private(const bng_dtype_config *dtype, int op, void *x, void *dy,
                           void *dx, long long *params)
{
    bng_private_entry(dtype, op, x, dy, dx, params);
}

void bng_entry_ext_shared(const bng_dtype_config *dtype, int op, void *x, void *dy,
                          void *dx, int core_mask)
{
    bng_shared_entry(dtype, op, x, dy, dx, core_mask);
}
#endif
