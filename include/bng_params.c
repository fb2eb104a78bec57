/* SPDX-License-Identifier: Apache-2.0 */
/* Copyright 2026 the batchnormgrad authors */
/* Owns: the parameter checks of every entry point: the parameter block and the data
 * pointers of a call, read once, in the contract's order (docs/contract.md, "Status
 * codes"), into the bng_call the driver runs. May call: nothing of the driver, no HAL,
 * no kernel; it writes nothing but the bng_call (and the block bng_params_block builds).
 * What it offers and needs: bng_params.h.
 *
 * Built once per target, beside the target's generated sources (-Igenerated/<t>): it
 * takes the target's constants from bng_kernels.h.
 */
#include <stddef.h>
#include <stdint.h>
#include "batch_norm_grad.h"
#include "bng_params.h"
#if BNG_HAS_EXTENSIONS
#include "batch_norm_grad_ext.h"
#endif

/* The extended parameter block's slots, flag and status, as batch_norm_grad_ext.h has
 * them (asserted where the target has that header). */
#define BNG_SLOT_SUMS 12
#define BNG_SLOT_FLAGS 13
#define BNG_SLOT_SPATIAL 14
#define BNG_ACCUMULATE_FLAG 1
#define BNG_NCHW_FLAG 2
#define BNG_STATUS_EFLAGS (-9)
#define BNG_RELU_FLAG 4
#define BNG_RELU_BITS_FLAG 8
#define BNG_ACCUMULATE_DX_FLAG 16
#define BNG_SLOT_Y 15
#if BNG_HAS_NCHW
typedef char bng_nchw_slots_agree[BNG_SLOT_SPATIAL == BNG_PARAM_SPATIAL && BNG_NCHW_FLAG == BNG_FLAG_NCHW ? 1 : -1];
#endif
#if BNG_HAS_EXTENSIONS
typedef char bng_ext_slots_agree[BNG_SLOT_SUMS == BNG_PARAM_SUMS && BNG_SLOT_FLAGS == BNG_PARAM_FLAGS
                                 && BNG_ACCUMULATE_FLAG == BNG_FLAG_ACCUMULATE && BNG_STATUS_EFLAGS == BNG_EFLAGS
                                 && BNG_ACCUMULATE_DX_FLAG == BNG_FLAG_ACCUMULATE_DX
                                 && BNG_EXT_PARAMS_LEN == BNG_SHARED_PARAMS_SLOTS ? 1 : -1];
#endif
#if BNG_HAS_RELU
typedef char bng_relu_slots_agree[BNG_RELU_FLAG == BNG_FLAG_RELU && BNG_RELU_BITS_FLAG == BNG_FLAG_RELU_BITS
                                  && BNG_SLOT_Y == BNG_PARAM_Y ? 1 : -1];
#endif

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

int bng_params_fits(unsigned long long batch, unsigned long long channel, size_t element_bytes)
{
    return bng_fits(batch, channel, bng_log2(element_bytes));
}

int bng_params_overlap(bng_span a, bng_span b)
{
    return a.start < b.start + b.bytes && b.start < a.start + a.bytes;
}

int bng_params_same(bng_span a, bng_span b)
{
    return a.start == b.start && a.bytes == b.bytes;
}

/* The arrays a call may have, in the order of its checks (y: the forward output of a
 * call with BNG_FLAG_RELU, an input of x's type and shape; with BNG_FLAG_RELU_BITS as
 * well the forward's keep bits instead, an input of x's type: a word of the element's
 * 8 * element bits per channel for every 8 * element rows, in NCHW per plane for every
 * 8 * element of its values, a last word's rounded up: bng_span_bytes). */
enum { BNG_X, BNG_DY, BNG_DX, BNG_MEAN, BNG_INVAR, BNG_SCALE, BNG_DBIAS, BNG_DSCALE, BNG_SUMS,
       BNG_Y, BNG_ARRAYS };
#define BNG_BIT(array) (1u << (array))
#define BNG_VENDOR_ARRAYS (BNG_BIT(BNG_SUMS) - 1u)
/* x, dy, dx and y: batch * channel elements of the storage type (the keep bits in y's
 * slot fewer: bng_span_bytes) */
#define BNG_IS_ROWS(array) ((array) <= BNG_DX || (array) == BNG_Y)

/* The bytes an array of the call spans: its rows, the keep bits' words in y's slot, a
 * per-channel array, the partial-sums buffer. */
static uintptr_t bng_span_bytes(const bng_call *call, int array, size_t element, size_t stat)
{
    const size_t rows = call->batch * call->spatial;
    const unsigned word_shift = bng_log2(element) + 3;     /* 8 * element rows a word */

    if (array == BNG_Y && call->relu_bits)     /* NCHW: a plane's words, a last one its own */
        return call->nchw ? (uintptr_t)(call->batch * call->channel
                                        * (((call->spatial - 1) >> word_shift) + 1) * element)
                          : (uintptr_t)((((rows - 1) >> word_shift) + 1) * call->channel * element);
    if (BNG_IS_ROWS(array))
        return (uintptr_t)(rows * call->channel * element);
    return array <= BNG_DSCALE ? (uintptr_t)(call->channel * stat)
                               : (uintptr_t)((2 * call->channel + BNG_SUMS_COUNT_LIMBS) * sizeof(float));
}

/* Per op (bng_ukernel.h's order): the arrays the call reads or writes, and its outputs.
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

/* The arrays an `op` call uses (a target without extensions has the vendor's call only). */
static unsigned bng_arrays_used(int op)
{
    return bng_op_arrays[BNG_HAS_EXTENSIONS ? op : BNG_OP_FULL];
}

/* Whether an `op` call reads a slot of its parameter block: the slots of the arrays it
 * uses, batch and channel, is_train where it finalizes, the flags (every extended
 * call), the spatial extent (where the target has nchw) and y (where it has relu): the
 * extent's value is looked at only with BNG_FLAG_NCHW, y's only with BNG_FLAG_RELU. The
 * status and reserved slots are never read. */
int bng_params_reads_slot(int op, int slot)
{
    const unsigned used = bng_arrays_used(op);

    if (slot >= BNG_PARAM_MEAN && slot <= BNG_PARAM_DSCALE)
        return (used & BNG_BIT(BNG_MEAN + slot - BNG_PARAM_MEAN)) != 0;
    if (slot == BNG_PARAM_BATCH || slot == BNG_PARAM_CHANNEL)
        return 1;
    if (slot == BNG_PARAM_IS_TRAIN)
        return op != BNG_OP_REDUCE && op != BNG_OP_DX;
    if (slot == BNG_SLOT_SUMS)
        return (used & BNG_BIT(BNG_SUMS)) != 0;
    if (slot == BNG_SLOT_FLAGS)
        return op != BNG_OP_FULL;
    if (slot == BNG_SLOT_SPATIAL)
        return BNG_HAS_NCHW && op != BNG_OP_FULL;
    if (slot == BNG_SLOT_Y)
        return BNG_HAS_RELU && op != BNG_OP_FULL;
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
            if (other != out && (used & BNG_BIT(other)) && bng_params_overlap(span[out], span[other])
                && !(may_be_same && bng_params_same(span[out], span[other])))
                return BNG_EOVERLAP;
        }
    }
    return BNG_OK;
}

/* Apply: the rows a (combined) buffer covers, from its limbs. Each limb must be a whole
 * number that BNG_SUMS_MAX_BUFFERS buffers can sum to (no NaN, no fraction, nothing
 * negative); the count is below 2^62. 0 when they are not. Shifts and adds only. */
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
            return 0;              /* the shift would reach 2^62 */
        total = (total << BNG_SUMS_LIMB_BITS) + whole;
    }
    if (total >> 62)
        return 0;                  /* the last limb added reached 2^62 */
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

/* The flags an `op` call honours: ACCUMULATE where it writes dbias and dscale (apply,
 * ext), ACCUMULATE_DX where it writes dx (apply, dx, ext), RELU and NCHW on every
 * extended call where the target has them, RELU_BITS with RELU. */
static int bng_flags_allowed(int op, long long flags)
{
    const int writes_stats = op == BNG_OP_EXT || op == BNG_OP_APPLY;
    const int writes_dx = writes_stats || op == BNG_OP_DX;
    const long long allowed = (writes_stats ? BNG_ACCUMULATE_FLAG : 0)
                              | (writes_dx ? BNG_ACCUMULATE_DX_FLAG : 0)
                              | (BNG_HAS_RELU ? BNG_RELU_FLAG | BNG_RELU_BITS_FLAG : 0)
                              | (BNG_HAS_NCHW ? BNG_NCHW_FLAG : 0);

    const int bits = (flags & BNG_RELU_BITS_FLAG) != 0;

    return !(flags & ~allowed) && (!bits || (flags & BNG_RELU_FLAG));
}

/* The flags of an `op` call's block (0 for the vendor's call, which has none). */
static long long bng_flags_of(int op, const long long *params)
{
    return bng_params_reads_slot(op, BNG_SLOT_FLAGS) ? params[BNG_SLOT_FLAGS] : 0;
}

/* Validate the parameter block and the data pointers of an `op` call: BNG_OK and the
 * call, or the first error status (the call then not to be run). The block has 12
 * slots for the vendor's call (slots 9-11 never read), 16 for the others (of which 12
 * and 13, 14 with BNG_FLAG_NCHW and 15 with BNG_FLAG_RELU, are read where the op uses
 * them). `shared`: an _s call, whose partial-sums buffer is in shared memory (the apply
 * count is read from it) and which cannot accumulate dx. */
int bng_params_check(const bng_dtype_config *dtype, int op, const long long *params,
                     const void *x, const void *dy, const void *dx, int shared,
                     bng_call *call)
{
    const long long flags = bng_flags_of(op, params);
    const int relu = BNG_HAS_RELU && (flags & BNG_RELU_FLAG) != 0;
    const unsigned used = bng_arrays_used(op) | (relu ? BNG_BIT(BNG_Y) : 0u);
    const size_t element = dtype->element_bytes, stat = dtype->stats_bytes;
    uintptr_t at[BNG_ARRAYS];
    size_t align[BNG_ARRAYS];
    bng_span span[BNG_ARRAYS];
    unsigned long long spatial;
    int i;

    at[BNG_X] = (uintptr_t)x;
    at[BNG_DY] = (uintptr_t)dy;
    at[BNG_DX] = (uintptr_t)dx;
    for (i = BNG_MEAN; i <= BNG_DSCALE; i++)
        at[i] = (used & BNG_BIT(i)) ? (uintptr_t)params[BNG_PARAM_MEAN + i - BNG_MEAN] : 0;
    at[BNG_SUMS] = (used & BNG_BIT(BNG_SUMS)) ? (uintptr_t)params[BNG_SLOT_SUMS] : 0;
    at[BNG_Y] = relu ? (uintptr_t)params[BNG_SLOT_Y] : 0;
    for (i = 0; i < BNG_ARRAYS; i++)
        if ((used & BNG_BIT(i)) && at[i] == 0)
            return BNG_ENULL;
    /* Each pointer aligned to its element type: the kernels load whole elements (and a
     * DSP may trap on a misaligned one). */
    for (i = 0; i < BNG_ARRAYS; i++) {
        align[i] = BNG_IS_ROWS(i) ? element : i <= BNG_DSCALE ? stat : sizeof(float);
        if ((used & BNG_BIT(i)) && (at[i] & (align[i] - 1)))
            return BNG_EALIGN;
    }
    call->nchw = BNG_HAS_NCHW && (flags & BNG_NCHW_FLAG);
    /* NCHW: a bad spatial extent is a bad batch (batch * spatial elements a channel) */
    if (params[BNG_PARAM_BATCH] < 1 || (call->nchw && params[BNG_SLOT_SPATIAL] < 1))
        return BNG_EBATCH;
    if (params[BNG_PARAM_CHANNEL] < 1)
        return BNG_ECHANNEL;
    spatial = call->nchw ? (unsigned long long)params[BNG_SLOT_SPATIAL] : 1;
    if (!bng_fits((unsigned long long)params[BNG_PARAM_BATCH], spatial, 0)
        || !bng_fits((unsigned long long)params[BNG_PARAM_BATCH] * spatial,
                     (unsigned long long)params[BNG_PARAM_CHANNEL], bng_log2(element)))
        return BNG_ERANGE;
    call->op = op;
    call->batch = (size_t)params[BNG_PARAM_BATCH];
    call->channel = (size_t)params[BNG_PARAM_CHANNEL];
    call->spatial = (size_t)spatial;
    call->m = call->nchw ? bng_count_to_float((unsigned long long)call->batch * spatial)
                         : (float)call->batch;
    call->is_train = bng_params_reads_slot(op, BNG_PARAM_IS_TRAIN) && params[BNG_PARAM_IS_TRAIN] != 0;
    /* 2 * channel + the limbs floats: channel is below half the address space here */
    if ((used & BNG_BIT(BNG_SUMS))
        && call->channel > ((bng_address_max() >> 2) - BNG_SUMS_COUNT_LIMBS) >> 1)
        return BNG_ERANGE;
    if (!bng_flags_allowed(op, flags))
        return BNG_STATUS_EFLAGS;
    call->accumulate = (flags & BNG_ACCUMULATE_FLAG) != 0;
    call->accumulate_dx = (flags & BNG_ACCUMULATE_DX_FLAG) != 0;
    call->y = relu ? (const void *)at[BNG_Y] : NULL;
    call->relu_bits = relu && (flags & BNG_RELU_BITS_FLAG) != 0;
    if (BNG_IS_APPLY(call)) {
        /* The global count: whole, at least this call's rows (read, never written). */
        float limb[BNG_SUMS_COUNT_LIMBS];
        unsigned long long count;
        for (i = 0; i < BNG_SUMS_COUNT_LIMBS; i++)
            limb[i] = shared ? ((const BNG_SHARED float *)at[BNG_SUMS])[2 * call->channel + (size_t)i]
                             : ((const float *)at[BNG_SUMS])[2 * call->channel + (size_t)i];
        if (!bng_read_count(limb, &count) || count < (unsigned long long)call->batch * call->spatial)
            return BNG_EBATCH;
        call->m = bng_count_to_float(count);
    }
    for (i = 0; i < BNG_ARRAYS; i++) {
        span[i].start = at[i];
        span[i].bytes = bng_span_bytes(call, i, element, stat);
    }
    return bng_check_overlap(span, used, bng_op_outputs[op]);
}

/* The per-channel arrays of a block (params[0..4]). */
bng_stats bng_params_stats(const long long *params)
{
    bng_stats stats;

    stats.mean = (const void *)(intptr_t)params[BNG_PARAM_MEAN];
    stats.invar = (const void *)(intptr_t)params[BNG_PARAM_INVAR];
    stats.scale = (const void *)(intptr_t)params[BNG_PARAM_SCALE];
    stats.dbias = (void *)(intptr_t)params[BNG_PARAM_DBIAS];
    stats.dscale = (void *)(intptr_t)params[BNG_PARAM_DSCALE];
    return stats;
}

/* The inverse of bng_params_stats, with the shape: the block an explicit-argument call
 * is checked and run on, so that it meets every check, and gives every bit, of the
 * vendor's call given that block. */
void bng_params_block(long long *params, const bng_stats *stats, int batch, int channel,
                      int is_train)
{
    int slot;

    for (slot = 0; slot < BNG_PARAMS_LEN; slot++)
        params[slot] = 0;
    params[BNG_PARAM_MEAN] = (long long)(intptr_t)stats->mean;
    params[BNG_PARAM_INVAR] = (long long)(intptr_t)stats->invar;
    params[BNG_PARAM_SCALE] = (long long)(intptr_t)stats->scale;
    params[BNG_PARAM_DBIAS] = (long long)(intptr_t)stats->dbias;
    params[BNG_PARAM_DSCALE] = (long long)(intptr_t)stats->dscale;
    params[BNG_PARAM_BATCH] = batch;
    params[BNG_PARAM_CHANNEL] = channel;
    params[BNG_PARAM_IS_TRAIN] = is_train;
}

/* The partial-sums buffer of an `op` call's block (reduce: written; apply: read), else
 * NULL. */
float *bng_params_sums(int op, const long long *params)
{
    return (bng_arrays_used(op) & BNG_BIT(BNG_SUMS)) ? (float *)(intptr_t)params[BNG_SLOT_SUMS] : NULL;
}
