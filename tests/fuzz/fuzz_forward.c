/* libFuzzer harness for the training forward's run-time contract (make fuzz):
 * fp_/hp_batch_norm_forward_p and _s (docs/contract.md section 15).
 *
 * The fuzzer's bytes choose the storage type, _p or _s (its block through
 * BNG_SHARED_PARAMS, any core_mask: none of the cluster's cores is BNG_ECOREMASK, after
 * every other check), batch and channel (small, or hostile: 0,
 * negative, LLONG_MIN/MAX, beyond the address space), NCHW and its spatial extent
 * (likewise; BNG_EFLAGS where the target has no nchw), the flags (any of the eight, the
 * synchronized forward's two and the ReLU's two among them, and an unknown bit; the
 * partials buffer's count valid or the bytes' own), eps and momentum (any float's bits, so NaN, Inf, negative, 0, subnormal),
 * which array is NULL and which misaligned (both at once too), and an aliasing choice
 * (y over x, partly over x, over the moving mean; an output over another array, the
 * ReLU's bits over y), and
 * the data. Buffers are exactly as large as a small
 * shape needs, between guard bytes. Checked on every input: the status is the one the
 * contract's order gives (the harness's own reading of it); the reserved slots and
 * every slot but the status are untouched; guards are intact; on an error no array
 * changed; on success x (unless y is x), scale and bias are unchanged, and the moving
 * statistics too where the call does not update them.
 */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "batch_norm_fwd.h"
#include "bng_kernels.h"
#include "fuzz_support.h"

#define MAX_BATCH 40
#define MAX_CHANNEL 300
#define MAX_SPATIAL 70
#define SENTINEL 0x0123456789abcdefLL

/* A float: mostly an ordinary one, else any bits. */
static float any_float(bytes *b, float ordinary)
{
    const unsigned kind = take(b);
    uint32_t bits = take(b) | take(b) << 8 | take(b) << 16 | (uint32_t)take(b) << 24;
    float f;
    if (kind < 160)
        return ordinary;
    memcpy(&f, &bits, sizeof f);
    return f;
}

/* The arrays: x, y, then the per-channel ones, the partials buffer and the ReLU's bits
 * in their slots. */
enum { A_X, A_Y, A_MEAN, A_INVAR, A_SCALE, A_BIAS, A_MM, A_MV, A_PART, A_BITS, A_COUNT };
static const int slot_of[A_COUNT] = {-1, -1, BNG_PARAM_MEAN, BNG_PARAM_INVAR, BNG_PARAM_SCALE,
                                     BNG_FWD_PARAM_BIAS, BNG_FWD_PARAM_MOVING_MEAN,
                                     BNG_FWD_PARAM_MOVING_VAR, BNG_FWD_PARAM_PARTIALS,
                                     BNG_FWD_PARAM_RELU_BITS};
#define NCHW_FLAG 2LL     /* BNG_FWD_NCHW, where the target has nchw */
#define KNOWN_FLAGS (0x7F8LL | (BNG_HAS_NCHW ? NCHW_FLAG : 0))

/* The harness's own reading of a partials buffer's rows: the two limbs as integers in
 * [0, 2^24), else -1. */
static long long partials_rows(const unsigned char *buf, size_t channel)
{
    float limb[2];
    memcpy(limb, buf + 3 * channel * sizeof(float), sizeof limb);
    if (!(limb[0] >= 0 && limb[0] < 16777216.0f && limb[1] >= 0 && limb[1] < 16777216.0f)
        || limb[0] != floorf(limb[0]) || limb[1] != floorf(limb[1]))
        return -1;
    return (long long)limb[0] + (long long)limb[1] * 16777216LL;
}

static int overlaps(uintptr_t a, size_t a_bytes, uintptr_t b, size_t b_bytes)
{
    return a < b + b_bytes && b < a + a_bytes;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    bytes in = {data, size};
    const unsigned choice = take(&in);
    const int half_data = BNG_HAS_F16 && (choice & 1), shared = (choice & 4) != 0;
    const unsigned mask_low = take(&in), mask_high = take(&in);
    const int core_mask = (int)(mask_low | mask_high << 8);
    const long long flags = (long long)(take(&in) & 0xF8) | ((choice & 8) ? 0x100 : 0)
                            | ((choice & 2) ? BNG_FWD_RELU : 0) | ((choice & 32) ? BNG_FWD_RELU_BITS : 0)
                            | ((choice & 64) ? 0x800 : 0) | ((choice & 128) ? NCHW_FLAG : 0);
    const long long batch = shape(&in, MAX_BATCH), channel = shape(&in, MAX_CHANNEL);
    /* read only with the flag, where the target knows it */
    const int nchw = BNG_HAS_NCHW && (flags & NCHW_FLAG) != 0;
    const long long spatial = nchw ? shape(&in, MAX_SPATIAL) : 1;
    const float eps = any_float(&in, 1e-3f), momentum = any_float(&in, 0.9f);
    const unsigned null_at = take(&in) % 12, misalign_at = take(&in) % 12, alias = take(&in) % 11;
    const int small = batch >= 1 && batch <= MAX_BATCH && channel >= 1 && channel <= MAX_CHANNEL
                      && spatial >= 1 && spatial <= MAX_SPATIAL;
    const size_t n = small ? (size_t)(batch * spatial * channel) : 1, c = small ? (size_t)channel : 1;
    const size_t elem = half_data ? 2 : 4;
    size_t stat = 4, bytes_of[A_COUNT], i;
    const int fix_gamma = (flags & BNG_FWD_FIX_GAMMA) != 0, global = (flags & BNG_FWD_GLOBAL_STATS) != 0;
    const int torch = (flags & BNG_FWD_TORCH) != 0, keep = (flags & BNG_FWD_KEEP_MOVING) != 0;
    const int out = (flags & BNG_FWD_PARTIALS_OUT) != 0, in_ = (flags & BNG_FWD_PARTIALS_IN) != 0;
    const int relu = (flags & BNG_FWD_RELU) != 0, bits = (flags & BNG_FWD_RELU_BITS) != 0;
    const int update = !global && !keep && !out;
    unsigned char *buf[A_COUNT], *before[A_COUNT];
    uintptr_t at[A_COUNT];
    unsigned used = 0, outputs;
    long long params[BNG_FWD_PARAMS_LEN], saved[BNG_FWD_PARAMS_LEN], expected = BNG_OK;
    int a, b;

#if BNG_HAS_F16
    if (half_data)
        stat = sizeof(bng_hp_stats_t);
#endif
    for (a = 0; a < A_COUNT; a++) {
        bytes_of[a] = a <= A_Y ? n * elem : a == A_PART ? BNG_FWD_PARTIALS_FLOATS(c) * sizeof(float)
                    : a == A_BITS ? (!small ? 1 : nchw ? (size_t)batch * c * (((size_t)spatial + 8 * elem - 1) / (8 * elem))
                                     : BNG_FWD_RELU_BITS_ELEMENTS((size_t)batch, c, elem)) * elem
                    : c * stat;
        buf[a] = guarded(bytes_of[a]);
        for (i = 0; i < bytes_of[a]; i++)
            buf[a][i] = (unsigned char)take(&in);
        at[a] = (uintptr_t)buf[a];
    }
    /* aliasing: y over x (allowed), y one element into x, invar over mean, mean over
     * scale, moving variance over bias, y over the moving mean's bytes */
    if (alias == 1)
        at[A_Y] = at[A_X];
    else if (alias == 2 && n >= 2)      /* overlapping, and refused before it could write */
        at[A_Y] = at[A_X] + elem;
    else if (alias == 3)
        at[A_INVAR] = at[A_MEAN];
    else if (alias == 4)
        at[A_MEAN] = at[A_SCALE];
    else if (alias == 5)
        at[A_MV] = at[A_BIAS];
    else if (alias == 6 && !keep)           /* refused: a call never writes past them */
        at[A_Y] = at[A_MM];                 /* y over the moving mean's bytes */
    else if (alias == 7)
        at[A_MEAN] = at[A_MM];              /* the saved mean over the moving mean */
    else if (alias == 8 && (!in_ || n * elem >= bytes_of[A_PART]))
        at[A_PART] = at[A_X];               /* the partials over x (OUT: refused; IN: read) */
    else if (alias == 9 && (out || in_))    /* OUT: y unused; IN: refused */
        at[A_Y] = at[A_PART];               /* y over the partials */
    else if (alias == 10)                   /* RELU_BITS: refused; else unread */
        at[A_BITS] = at[A_Y];               /* the ReLU's bits over y */
    if (choice & 16) {                      /* a valid count: some PARTIALS_IN calls run */
        const float limbs[2] = {(float)(take(&in) % 4), 0.0f};
        memcpy(buf[A_PART] + 3 * c * sizeof(float), limbs, sizeof limbs);
    }
    if (misalign_at < A_COUNT && at[misalign_at])
        at[misalign_at] += 1;
    if (null_at < A_COUNT)                  /* both: NULL comes first in the order */
        at[null_at] = 0;
    for (i = 0; i < BNG_FWD_PARAMS_LEN; i++)
        params[i] = SENTINEL + (long long)i;
    for (a = A_MEAN; a < A_COUNT; a++)
        params[slot_of[a]] = (long long)at[a];
    params[BNG_PARAM_BATCH] = batch;
    params[BNG_PARAM_CHANNEL] = channel;
    if (nchw)
        params[14] = spatial;       /* BNG_FWD_PARAM_SPATIAL */
    params[BNG_PARAM_FLAGS] = flags;
    params[BNG_FWD_PARAM_EPS] = bng_fwd_float(eps);
    params[BNG_FWD_PARAM_MOMENTUM] = bng_fwd_float(momentum);
    memcpy(saved, params, sizeof saved);
    for (a = 0; a < A_COUNT; a++) {
        before[a] = malloc(bytes_of[a] + 1);
        memcpy(before[a], buf[a], bytes_of[a]);
    }

    /* the contract's order, read independently of the driver */
    for (a = 0; a < A_COUNT; a++)
        if (!((a == A_SCALE && fix_gamma) || ((a == A_MM || a == A_MV) && keep) || (a == A_PART && !in_)
              || (a == A_BITS && !bits)))
            used |= 1u << a;
    outputs = (1u << A_Y) | (1u << A_MEAN) | (1u << A_INVAR)
              | (update ? (1u << A_MM) | (1u << A_MV) : 0u) | (bits ? 1u << A_BITS : 0u);
    if (out) {
        used = (1u << A_X) | (1u << A_PART);
        outputs = 1u << A_PART;
    }
    for (a = 0; a < A_COUNT && expected == BNG_OK; a++)
        if ((used >> a & 1) && at[a] == 0)
            expected = BNG_ENULL;
    for (a = 0; a < A_COUNT && expected == BNG_OK; a++)
        if ((used >> a & 1) && at[a] % (a <= A_Y || a == A_BITS ? elem : stat))
            expected = BNG_EALIGN;
    if (expected == BNG_OK
        && (batch < 1 || spatial < 1 || (batch == 1 && spatial == 1 && torch && update && !in_)))
        expected = BNG_EBATCH;
    if (expected == BNG_OK && channel < 1)
        expected = BNG_ECHANNEL;
    if (expected == BNG_OK && !small) {
        /* hostile shapes: every one of them is past a 64-bit address space's elements
         * or refused above, except a large batch or channel that fits (refused by the
         * range check only if beyond it): the harness cannot run those, so it asks for
         * BNG_ERANGE where the product passes the target's address space, and skips the
         * rest */
        const double elements = (double)batch * (double)spatial * (double)channel * (double)elem;
        if (elements > (double)BNG_ADDRESS_MAX)
            expected = BNG_ERANGE;
        else
            goto done;       /* a valid shape too large for the harness's buffers */
    }
    if (expected == BNG_OK && ((flags & ~KNOWN_FLAGS) || (global && (keep || out || in_)) || (out && in_)
                               || (bits && !relu) || (relu && out)))
        expected = BNG_EFLAGS;
    if (expected == BNG_OK && !out && !(eps > 0.0f && isfinite(eps)))
        expected = BNG_EVALUE;
    if (expected == BNG_OK && update && !(momentum >= 0.0f && momentum <= 1.0f))
        expected = BNG_EVALUE;
    if (expected == BNG_OK && in_) {
        const long long rows = partials_rows((const unsigned char *)at[A_PART], c);
        if (rows < 1 || (torch && update && rows == 1))
            expected = BNG_EVALUE;
    }
    for (a = 0; a < A_COUNT && expected == BNG_OK; a++)
        for (b = 0; b < A_COUNT; b++)
            if (a != b && (outputs >> a & 1) && (used >> b & 1)
                && overlaps(at[a], bytes_of[a], at[b], bytes_of[b])
                && !(a == A_Y && b == A_X && at[a] == at[b]))
                expected = BNG_EOVERLAP;
    if (expected == BNG_OK && shared && (core_mask & ((1 << BNG_TARGET_CORES) - 1)) == 0)
        expected = BNG_ECOREMASK;

    if (shared) {
        memcpy(BNG_SHARED_PARAMS, params, sizeof params);
#if BNG_HAS_F16
        if (half_data)
            hp_batch_norm_forward_s((half *)at[A_X], (half *)at[A_Y], core_mask);
        else
#endif
            fp_batch_norm_forward_s((float *)at[A_X], (float *)at[A_Y], core_mask);
        memcpy(params, BNG_SHARED_PARAMS, sizeof params);
    } else {
#if BNG_HAS_F16
        if (half_data)
            hp_batch_norm_forward_p((half *)at[A_X], (half *)at[A_Y], params);
        else
#endif
            fp_batch_norm_forward_p((float *)at[A_X], (float *)at[A_Y], params);
    }

    if (params[BNG_PARAM_STATUS] != expected)
        abort();
    for (i = 0; i < BNG_FWD_PARAMS_LEN; i++)
        if (i != BNG_PARAM_STATUS && params[i] != saved[i])
            abort();
    /* A buffer may have changed only where a call that ran has an output in it. */
    for (a = 0; a < A_COUNT; a++) {
        int may_change = 0;
        for (b = 0; b < A_COUNT; b++)
            may_change |= expected == BNG_OK && (outputs >> b & 1)
                          && overlaps(at[b], bytes_of[b], (uintptr_t)buf[a], bytes_of[a]);
        check_guards(buf[a], bytes_of[a]);
        if (!may_change && memcmp(before[a], buf[a], bytes_of[a]) != 0)
            abort();
    }
done:
    for (a = 0; a < A_COUNT; a++) {
        free(buf[a] - GUARD);
        free(before[a]);
    }
    return 0;
}
