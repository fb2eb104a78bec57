/* libFuzzer harness for the run-time contract of every entry point (make fuzz).
 *
 * The fuzzer's bytes choose the entry point (fp/hp, _p/_s; with flag bit 6 one of
 * batch_norm_grad_ext.h's: reduce, apply, dx-only or ext, with or without
 * BNG_FLAG_ACCUMULATE (refused on reduce and dx-only), with or without BNG_FLAG_RELU
 * and a forward output y that is its own buffer, NULL, misaligned, x, dy, dx, dbias
 * or the sums buffer (with BNG_FLAG_RELU_BITS, or that alone, the same slot as the
 * forward's keep bits, of their own length), with or without BNG_FLAG_NCHW and a spatial extent, small or
 * hostile (beside BNG_FLAG_RELU too), with or without BNG_FLAG_ACCUMULATE_DX; without it, flag bit 7 makes it the vendor's
 * call with explicit arguments, batchnormgrad.h's, whose int batch and channel a
 * hostile value reaches as the int it converts to), batch and channel (small, or a hostile value: 0, negative,
 * LLONG_MIN/MAX, beyond the address space), which pointer is NULL, core_mask,
 * is_train, in-place dx, an aliasing choice (extensions: also over the partial-sums
 * buffer, and a misaligned one), apply's global count (exact, larger, smaller than
 * batch, a limb that is a fraction or NaN), and the data. Buffers are exactly as large
 * as a small shape needs, with guard bytes around them; an entry point that accepted a
 * hostile shape would run off them (AddressSanitizer stops it). Checked on every input:
 * the status is the one docs/contract.md sections 4 and 13 give (an explicit call's:
 * bng_last_status(), after a refused call left another, and no block touched, neither
 * the caller's nor BNG_SHARED_PARAMS), the reserved slots (9-11; 14 without NCHW) and
 * the y slot are untouched, y is unchanged,
 * guards are intact, on an error dx, dbias, dscale and the sums buffer are unchanged,
 * and on success nothing the call does not write changed.
 */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "batch_norm_grad.h"
#include "batchnormgrad.h"
#include "bng_kernels.h"
#if BNG_HAS_EXTENSIONS
#include "batch_norm_grad_ext.h"
#endif
#include "fuzz_support.h"

#define MAX_BATCH 40
#define MAX_CHANNEL 300
#define MAX_NCHW_CHANNEL 8     /* with a spatial extent: buffers stay small */
#define MAX_SPATIAL 70         /* past two vectors of 32 lanes */
#define SENTINEL 0x0123456789abcdefLL

/* batch or channel as the call takes it: an explicit call's int, converted. */
static long long as_argument(int explicit_args, long long v)
{
    return explicit_args ? (long long)(int)v : v;
}

/* The arrays an op uses (x, dy, dx, mean, invar, scale, dbias, dscale, sums) and the
 * ones it writes, as docs/contract.md section 13 lists them. */
enum { A_X, A_DY, A_DX, A_MEAN, A_INVAR, A_SCALE, A_DBIAS, A_DSCALE, A_SUMS };
#define B(a) (1u << (a))
static unsigned op_uses(int op)
{
    switch (op) {
    case BNG_OP_REDUCE: return B(A_X) | B(A_DY) | B(A_MEAN) | B(A_SUMS);
    case BNG_OP_APPLY: return 0xffu | B(A_SUMS);
    case BNG_OP_DX: return B(A_DY) | B(A_DX) | B(A_INVAR) | B(A_SCALE);
    default: return 0xffu;
    }
}
static unsigned op_writes(int op)
{
    return op == BNG_OP_REDUCE ? B(A_SUMS) : op == BNG_OP_DX ? B(A_DX) : B(A_DX) | B(A_DBIAS) | B(A_DSCALE);
}

/* Whether two byte ranges share a byte. */
static int overlaps(const void *a, size_t a_bytes, const void *b, size_t b_bytes)
{
    const uintptr_t p = (uintptr_t)a, q = (uintptr_t)b;
    return p < q + b_bytes && q < p + a_bytes;
}

/* The harness's own reading of apply's count (docs/contract.md section 13): each limb a
 * whole number from 0 to 4096 * 4095, the count below 2^62 and at least the call's
 * elements per channel (batch, or batch * spatial in NCHW). */
static int count_ok(const float *limb, long long batch)
{
    unsigned long long count = 0;
    int i;
    for (i = BNG_SUMS_COUNT_LIMBS - 1; i >= 0; i--) {
        const double v = limb[i];
        if (!(v >= 0 && v <= 4096.0 * 4095.0) || v != (double)(unsigned long)v || count >= (1ull << 50))
            return 0;
        count = (count << BNG_SUMS_LIMB_BITS) + (unsigned long long)v;
    }
    return count >= (unsigned long long)batch;
}

static void call(int op, int half_data, int shared, void *x, void *dy, void *dx, long long *params,
                 int core_mask)
{
    (void)half_data;
    if (shared)
        memcpy(BNG_SHARED_PARAMS, params, BNG_SHARED_PARAMS_SLOTS * sizeof *params);
#if BNG_HAS_EXTENSIONS
#define EXT_CALLS(api)                                                                   \
    switch (op) {                                                                        \
    case BNG_OP_EXT: shared ? api##_batch_norm_grad_ext_s(x, dy, dx, core_mask)          \
                            : api##_batch_norm_grad_ext_p(x, dy, dx, params); return;    \
    case BNG_OP_REDUCE: shared ? api##_batch_norm_grad_reduce_s(x, dy, core_mask)        \
                               : api##_batch_norm_grad_reduce_p(x, dy, params); return;  \
    case BNG_OP_APPLY: shared ? api##_batch_norm_grad_apply_s(x, dy, dx, core_mask)      \
                              : api##_batch_norm_grad_apply_p(x, dy, dx, params); return; \
    case BNG_OP_DX: shared ? api##_batch_norm_grad_dx_s(dy, dx, core_mask)               \
                           : api##_batch_norm_grad_dx_p(dy, dx, params); return;         \
    default: break;                                                                      \
    }
#if BNG_HAS_F16
    if (half_data) {
        EXT_CALLS(hp)
    } else
#endif
    {
        EXT_CALLS(fp)
    }
#endif
#if BNG_HAS_F16
    if (half_data && shared)
        hp_batch_norm_grad_s(x, dy, dx, core_mask);
    else if (half_data)
        hp_batch_norm_grad_p(x, dy, dx, params);
    else
#endif
    if (shared)
        fp_batch_norm_grad_s(x, dy, dx, core_mask);
    else
        fp_batch_norm_grad_p(x, dy, dx, params);
}

/* The vendor's call with explicit arguments (batchnormgrad.h): the arrays of the block's
 * slots 0-4, its batch, channel and is_train as int. */
static void call_explicit(int half_data, int shared, void *x, void *dy, void *dx,
                          const long long *params, int core_mask)
{
    void *stats[5];
    const int batch = (int)params[BNG_PARAM_BATCH], channel = (int)params[BNG_PARAM_CHANNEL];
    const int is_train = (int)params[BNG_PARAM_IS_TRAIN];
    int i;

    (void)half_data;
    for (i = 0; i < 5; i++)
        stats[i] = (void *)(intptr_t)params[BNG_PARAM_MEAN + i];
#if BNG_HAS_F16
    if (half_data && shared)
        hp_batchnormgrad_s(x, dy, stats[0], stats[1], stats[2], batch, channel, is_train, dx,
                           stats[3], stats[4], core_mask);
    else if (half_data)
        hp_batchnormgrad_p(x, dy, stats[0], stats[1], stats[2], batch, channel, is_train, dx,
                           stats[3], stats[4]);
    else
#endif
    if (shared)
        fp_batchnormgrad_s(x, dy, stats[0], stats[1], stats[2], batch, channel, is_train, dx,
                           stats[3], stats[4], core_mask);
    else
        fp_batchnormgrad_p(x, dy, stats[0], stats[1], stats[2], batch, channel, is_train, dx,
                           stats[3], stats[4]);
}

/* Leave this core's last status other than `expected`: an explicit call refused for its
 * shape (batch 0, or channel 0 when BNG_EBATCH is expected), on `any` for every array. */
static void leave_other_status(void *any, long long expected)
{
    fp_batchnormgrad_p(any, any, any, any, any, expected == BNG_EBATCH, 0, 1, any, any, any);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    bytes in = {data, size};
    const unsigned flags = take(&in);
    const unsigned ext = BNG_HAS_EXTENSIONS && (flags & 0x40);
    const unsigned op_byte = ext ? take(&in) : 0;
    /* BNG_OP_FULL, _EXT, _REDUCE, _APPLY, _DX */
    const int op = ext ? (int)((op_byte & 7) % 5) : BNG_OP_FULL;
    const int accumulate = (op_byte >> 3) & 1;
    /* a flag bit this version does not know, beside the others (BNG_EFLAGS) */
    const int unknown_flag = ext && (flags & 0x80);
    /* BNG_FLAG_RELU, and where y points (relu_y below); the vendor's call (op 0) reads
     * no flags */
    const unsigned relu_byte = BNG_HAS_RELU && ext ? take(&in) : 0;
    const int relu = (relu_byte & 1) && op != BNG_OP_FULL;
    const unsigned relu_y = (relu_byte >> 1) % 8;
    /* BNG_FLAG_RELU_BITS: the slot holds the forward's keep bits instead of y (refused
     * without BNG_FLAG_RELU) */
    const int relu_bits = (relu_byte & 0x10) && op != BNG_OP_FULL;
    /* channel axis 1 with a spatial extent (a byte of its own); the vendor's call reads
     * neither the flag nor the extent */
    const unsigned layout_byte = BNG_HAS_NCHW && ext ? take(&in) : 0;
    const int nchw = BNG_HAS_NCHW && (layout_byte & 1);
    const int nchw_call = nchw && op != BNG_OP_FULL;
    /* BNG_FLAG_ACCUMULATE_DX (bit 5 of the same byte, which no seed of the corpus sets):
     * refused on reduce */
    const int accumulate_dx = (layout_byte & 0x20) && op != BNG_OP_FULL;
    const int shared = flags & 2;
    const int flag_refused = op != BNG_OP_FULL
                             && (unknown_flag || (accumulate && (op == BNG_OP_REDUCE || op == BNG_OP_DX))
                                 || (relu_bits && !relu)
                                 || (accumulate_dx && op == BNG_OP_REDUCE));
    /* the vendor's call with explicit arguments */
    const int explicit_args = !ext && (flags & 0x80);
    const unsigned count_kind = (op_byte >> 4) % 5;   /* apply: exact, larger, smaller, fraction, NaN */
    const unsigned null_slot = take(&in) % 12;          /* 0-7 an array, 8 the sums (ext), else none */
    const int half_data = BNG_HAS_F16 && (flags & 1);
    const unsigned in_place = (flags >> 2) % 3;       /* 0: no, 1: dx = dy, 2: dx = x */
    const unsigned alias = take(&in) % (ext ? 11 : 8);   /* an aliasing choice (below) */
    const int is_train = (flags >> 4) & 1;
    const long long batch = as_argument(explicit_args, shape(&in, MAX_BATCH));
    const long long channel = as_argument(explicit_args, shape(&in, nchw ? MAX_NCHW_CHANNEL : MAX_CHANNEL));
    const long long spatial = nchw ? shape(&in, MAX_SPATIAL) : 1;
    const long long spatial_used = nchw_call ? spatial : 1;   /* the vendor's ignores it */
    int core_mask = (int)(take(&in) | take(&in) << 8 | take(&in) << 16 | take(&in) << 24);
    const int small = batch >= 1 && batch <= MAX_BATCH && channel >= 1 && channel <= MAX_CHANNEL
                      && spatial_used >= 1 && spatial_used <= MAX_SPATIAL;
    /* Buffers for the shape when it is small, else for a 1x1 call that must never run. */
    const size_t n = small ? (size_t)(batch * channel * spatial_used) : 1, c = small ? (size_t)channel : 1;
    /* the elements per channel the sums count */
    const long long count_per_channel = small ? batch * spatial_used : batch;
    const size_t elem = half_data ? 2 : 4, sums_bytes = (2 * c + BNG_SUMS_COUNT_LIMBS) * sizeof(float);
    const unsigned uses = op_uses(op), writes = op_writes(op);
    size_t stats_elem = 4, i;
    unsigned char *x, *dy, *dx, *stats[5], *sums, *before, *y, *y_before;
    void *yp = NULL;
    long long params[16], *block;
    long long expected, status;
    int refused_alias = 0, null_used, misaligned = 0, no_null;
    void *xp, *dyp, *dxp;

#if BNG_HAS_F16
    if (half_data)
        stats_elem = sizeof(bng_hp_stats_t);
#endif
    if (flags & 0x20)
        core_mask = (int)((take(&in) & 0x3u) << 30);  /* only bits beyond the cluster */
    x = guarded(n * elem);
    dy = guarded(n * elem);
    dx = guarded(n * elem);
    y = guarded(n * elem);
    for (i = 0; i < n * elem; i++) {
        x[i] = (unsigned char)take(&in);
        dy[i] = (unsigned char)take(&in);
        dx[i] = (unsigned char)i;
        y[i] = (unsigned char)(relu ? take(&in) : 0);
    }
    for (i = 0; i < 5; i++) {
        size_t j;
        stats[i] = guarded(c * stats_elem);
        for (j = 0; j < c * stats_elem; j++)
            stats[i][j] = (unsigned char)(i < 3 ? take(&in) : j);
    }
    /* The partial-sums buffer: fuzzed sums, then apply's count as count_kind says. */
    sums = guarded(sums_bytes);
    for (i = 0; i < 2 * c * sizeof(float); i++)
        sums[i] = (unsigned char)take(&in);
    {
        float limb[BNG_SUMS_COUNT_LIMBS];
        unsigned long long count = small ? (unsigned long long)count_per_channel : 1;
        count = count_kind == 1 ? count + 1000 + take(&in) : count_kind == 2 ? count - 1 : count;
        for (i = 0; i < BNG_SUMS_COUNT_LIMBS; i++, count >>= BNG_SUMS_LIMB_BITS)
            limb[i] = (float)(count & 4095u);
        if (count_kind == 3)
            limb[take(&in) % BNG_SUMS_COUNT_LIMBS] += 0.5f;
        if (count_kind == 4)
            limb[take(&in) % BNG_SUMS_COUNT_LIMBS] = (float)NAN;
        memcpy(sums + 2 * c * sizeof(float), limb, sizeof limb);
    }
    for (i = 0; i < 5; i++)
        params[i] = (long long)(intptr_t)stats[i];
    params[BNG_PARAM_BATCH] = batch;
    params[BNG_PARAM_CHANNEL] = channel;
    params[BNG_PARAM_IS_TRAIN] = is_train;
    params[BNG_PARAM_STATUS] = SENTINEL;
    params[9] = params[10] = params[11] = SENTINEL;
    params[12] = (long long)(intptr_t)sums;
    params[13] = accumulate | (relu ? 4 : 0) | (relu_bits ? 8 : 0) | (unknown_flag ? 64 : 0)
                 | (nchw ? 2 : 0) | (accumulate_dx ? 16 : 0);
    params[14] = nchw ? spatial : SENTINEL;
    params[15] = SENTINEL;
    if (null_slot >= 3 && null_slot < 8)
        params[null_slot - 3] = 0;
    if (null_slot == 8 && ext)
        params[12] = 0;
    no_null = null_slot >= 9 || (null_slot == 8 && !ext);
    null_used = null_slot < 8 ? (uses & B(null_slot)) != 0 : null_slot == 8 && ext && (uses & B(A_SUMS));
    /* Aliasing, on calls without a NULL: 1-3 dbias or dscale the very array of an
     * input (allowed); 4 dbias = dscale, 5 dscale one element into mean, 6 dbias inside
     * x, 7 dx one element into x: refused with BNG_EOVERLAP where the call uses both
     * arrays (5 and 7 overlap only when the arrays have two elements or more; 7 yields
     * to dx in place; 7 only where the call uses x, so that dx stays in a buffer of its
     * size). Extensions: 8 dscale at the start of the sums buffer (refused where the call
     * uses both), 9 the sums buffer at x (reduce only: refused), 10 a misaligned sums
     * buffer (BNG_EALIGN where the call uses it). */
    if (no_null) {
        if (alias == 1)
            params[BNG_PARAM_DBIAS] = params[BNG_PARAM_MEAN];
        else if (alias == 2)
            params[BNG_PARAM_DSCALE] = params[BNG_PARAM_INVAR];
        else if (alias == 3)
            params[BNG_PARAM_DBIAS] = params[BNG_PARAM_SCALE];
        else if (alias == 4) {
            params[BNG_PARAM_DBIAS] = params[BNG_PARAM_DSCALE];
            refused_alias = (uses & B(A_DBIAS)) != 0;
        } else if (alias == 5 && c >= 2) {
            params[BNG_PARAM_DSCALE] = params[BNG_PARAM_MEAN] + (long long)stats_elem;
            refused_alias = (uses & B(A_DSCALE)) && (uses & B(A_MEAN));
        } else if (alias == 6) {
            params[BNG_PARAM_DBIAS] = (long long)(intptr_t)x;
            refused_alias = (uses & B(A_DBIAS)) && (uses & B(A_X));
        } else if (alias == 7) {
            refused_alias = !in_place && n >= 2 && (uses & B(A_X)) && (uses & B(A_DX));
        } else if (alias == 8 && (uses & B(A_DSCALE)) && c * stats_elem <= sums_bytes) {
            params[BNG_PARAM_DSCALE] = (long long)(intptr_t)sums;
            refused_alias = (uses & B(A_SUMS)) != 0;
        } else if (alias == 9 && op == BNG_OP_REDUCE) {
            params[12] = (long long)(intptr_t)x;
            refused_alias = 1;
        } else if (alias == 10 && (uses & B(A_SUMS))) {
            params[12] += 2;
            misaligned = 1;
        }
    }

    xp = null_slot == 0 ? NULL : x;
    dyp = null_slot == 1 ? NULL : dy;
    dxp = null_slot == 2 ? NULL : in_place == 1 ? dyp : in_place == 2 ? xp
        : alias == 7 && no_null && n >= 2 && (uses & B(A_X)) ? x + elem : dx;
    if (op == BNG_OP_DX && in_place == 2)
        dxp = null_slot == 2 ? NULL : dx;       /* dx-only has no x */
    /* The forward output y (relu): 0 its own buffer, 1 NULL (BNG_ENULL), 2 misaligned
     * (BNG_EALIGN), 3 x and 4 dy (inputs: allowed unless dx is that array), 5 the dx
     * buffer (refused where the call writes dx there), 6 the block's dbias (apply, ext:
     * refused), 7 its sums buffer (reduce: refused); 6 and 7 elsewhere its own buffer
     * (an allowed y is read over batch * channel elements, beyond those buffers). */
    if (relu) {
        yp = relu_y == 1 ? NULL : relu_y == 2 ? (void *)(y + 1) : relu_y == 3 ? (void *)x
           : relu_y == 4 ? (void *)dy : relu_y == 5 ? (void *)dx
           : relu_y == 6 && (uses & B(A_DBIAS)) ? (void *)(intptr_t)params[BNG_PARAM_DBIAS]
           : relu_y == 7 && op == BNG_OP_REDUCE ? (void *)(intptr_t)params[12] : (void *)y;
        /* the bits span a word per channel for every 8 * elem rows (NCHW: per plane for
         * every 8 * elem of its values) */
        const size_t word_rows = 8 * elem;
        const size_t y_bytes = !relu_bits ? n * elem
                             : nchw_call ? (size_t)batch * c * (((size_t)spatial_used + word_rows - 1) / word_rows) * elem
                             : ((size_t)batch + word_rows - 1) / word_rows * c * elem;
        params[15] = (long long)(intptr_t)yp;
        null_used = null_used || yp == NULL;
        misaligned = misaligned || ((uintptr_t)yp & (elem - 1));
        /* y against every output the call writes, as the block has them */
        if (!null_used
            && (((writes & B(A_DX)) && overlaps(yp, y_bytes, dxp, n * elem))
                || ((writes & B(A_DBIAS)) && overlaps(yp, y_bytes, (void *)(intptr_t)params[BNG_PARAM_DBIAS], c * stats_elem))
                || ((writes & B(A_DSCALE)) && overlaps(yp, y_bytes, (void *)(intptr_t)params[BNG_PARAM_DSCALE], c * stats_elem))
                || ((writes & B(A_SUMS)) && overlaps(yp, y_bytes, (void *)(intptr_t)params[12], sums_bytes))))
            refused_alias = 1;
    }

    /* What docs/contract.md sections 4 and 13 say the status must be, in their order. */
    if (null_used)
        expected = BNG_ENULL;
    else if (misaligned)
        expected = BNG_EALIGN;
    else if (batch < 1 || (nchw_call && spatial < 1))
        expected = BNG_EBATCH;
    else if (channel < 1)
        expected = BNG_ECHANNEL;
    else if (!small)
        expected = BNG_ERANGE;
    else if (flag_refused)
        expected = BNG_EFLAGS;
    else if (op == BNG_OP_APPLY
             && !count_ok((const float *)(const void *)(sums + 2 * c * sizeof(float)), count_per_channel))
        expected = BNG_EBATCH;
    else if (refused_alias)
        expected = BNG_EOVERLAP;
    else if (shared && (core_mask & ((1 << BNG_TARGET_CORES) - 1)) == 0)
        expected = BNG_ECOREMASK;
    else
        expected = BNG_OK;
    /* A hostile shape that still fits the address space would be legal: with 32-bit
     * addresses every hostile value above is either < 1 or beyond it. */

    before = malloc(n * elem + 2 * c * stats_elem + sums_bytes);
    memcpy(before, dx, n * elem);
    memcpy(before + n * elem, stats[3], c * stats_elem);
    memcpy(before + n * elem + c * stats_elem, stats[4], c * stats_elem);
    memcpy(before + n * elem + 2 * c * stats_elem, sums, sums_bytes);
    y_before = malloc(n * elem);
    memcpy(y_before, y, n * elem);
    if (explicit_args) {
        for (i = 0; i < BNG_SHARED_PARAMS_SLOTS; i++)
            BNG_SHARED_PARAMS[i] = SENTINEL;
        leave_other_status(x, expected);
        call_explicit(half_data, shared, xp, dyp, dxp, params, core_mask);
        for (i = 0; i < BNG_SHARED_PARAMS_SLOTS; i++)
            if (BNG_SHARED_PARAMS[i] != SENTINEL)
                abort();
    } else {
        call(op, half_data, shared, xp, dyp, dxp, params, core_mask);
    }
    block = shared && !explicit_args ? BNG_SHARED_PARAMS : params;
    status = explicit_args ? bng_last_status() : block[BNG_PARAM_STATUS];
    if (status != expected || (explicit_args && block[BNG_PARAM_STATUS] != SENTINEL)
        || block[9] != SENTINEL || block[10] != SENTINEL || block[11] != SENTINEL)
        abort();
    if ((!shared || explicit_args)
        && (params[14] != (nchw ? spatial : SENTINEL)
            || params[15] != (relu ? (long long)(intptr_t)yp : SENTINEL)))
        abort();
    if (shared && !explicit_args && BNG_SHARED_PARAMS_SLOTS > 14
        && (block[14] != (nchw ? spatial : SENTINEL)
            || block[15] != (relu ? (long long)(intptr_t)yp : SENTINEL)))
        abort();
    if (memcmp(y_before, y, n * elem))
        abort();
    /* Unchanged: everything on an error; on success what the call does not write (dx
     * when dx is not an input, dbias and dscale when they are not aliased). */
    if ((expected != BNG_OK || !(writes & B(A_DX))) && memcmp(before, dx, n * elem))
        abort();
    if ((expected != BNG_OK || !(writes & B(A_DBIAS)))
        && (memcmp(before + n * elem, stats[3], c * stats_elem)
            || memcmp(before + n * elem + c * stats_elem, stats[4], c * stats_elem)))
        abort();
    if ((expected != BNG_OK || !(writes & B(A_SUMS))) && alias != 8
        && memcmp(before + n * elem + 2 * c * stats_elem, sums, sums_bytes))
        abort();
    check_guards(x, n * elem);
    check_guards(dy, n * elem);
    check_guards(dx, n * elem);
    check_guards(sums, sums_bytes);
    check_guards(y, n * elem);
    for (i = 0; i < 5; i++) {
        check_guards(stats[i], c * stats_elem);
        free(stats[i] - GUARD);
    }
    free(before);
    free(y_before);
    free(y - GUARD);
    free(x - GUARD);
    free(dy - GUARD);
    free(dx - GUARD);
    free(sums - GUARD);
    return 0;
}
