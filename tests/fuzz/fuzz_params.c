/* libFuzzer harness for the run-time contract of every entry point (make fuzz).
 *
 * The fuzzer's bytes choose the entry point (fp/hp, _p/_s), batch and channel (small,
 * or a hostile value: 0, negative, LLONG_MIN/MAX, beyond the address space), which
 * pointer is NULL, core_mask, is_train, in-place dx, and the data. Buffers are exactly
 * as large as a small shape needs, with guard bytes around them; an entry point that
 * accepted a hostile shape would run off them (AddressSanitizer stops it). Checked on
 * every input: the status is the one docs/contract.md section 4 gives, params[9..11] are untouched,
 * guards are intact, and on an error dx, dbias and dscale are unchanged.
 */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "batch_norm_grad.h"
#include "bng_kernels.h"

#define GUARD 32
#define MAX_BATCH 40
#define MAX_CHANNEL 300
#define SENTINEL 0x0123456789abcdefLL

typedef struct {
    const uint8_t *p;
    size_t n;
} bytes;

static unsigned take(bytes *b)
{
    unsigned v = 0;
    if (b->n) {
        v = *b->p++;
        b->n--;
    }
    return v;
}

/* A small value, or a hostile one. */
static long long shape(bytes *b, long long small_max)
{
    static const long long hostile[] = {0, -1, -300, LLONG_MIN, LLONG_MAX, 1ll << 40,
                                        (1ll << 31) + 1, 1ll << 62};
    const unsigned kind = take(b), raw = take(b);
    if (kind < 224)
        return 1 + (long long)(raw % (unsigned)small_max);
    return hostile[kind % (sizeof hostile / sizeof hostile[0])];
}

static unsigned char *guarded(size_t bytes_n)
{
    unsigned char *raw = malloc(bytes_n + 2 * GUARD);
    if (!raw)
        abort();
    memset(raw, 0xA5, bytes_n + 2 * GUARD);
    return raw + GUARD;
}

static void check_guards(const unsigned char *p, size_t bytes_n)
{
    size_t i;
    for (i = 0; i < GUARD; i++)
        if (p[-1 - (long)i] != 0xA5 || p[bytes_n + i] != 0xA5)
            abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    bytes in = {data, size};
    const unsigned flags = take(&in), null_slot = take(&in) % 12;
    const int half_data = BNG_HAS_F16 && (flags & 1), shared = flags & 2;
    const unsigned in_place = (flags >> 2) % 3;       /* 0: no, 1: dx = dy, 2: dx = x */
    const unsigned alias = take(&in) % 8;   /* an aliasing choice (below) */
    const int is_train = (flags >> 4) & 1;
    const long long batch = shape(&in, MAX_BATCH), channel = shape(&in, MAX_CHANNEL);
    int core_mask = (int)(take(&in) | take(&in) << 8 | take(&in) << 16 | take(&in) << 24);
    const int small = batch >= 1 && batch <= MAX_BATCH && channel >= 1 && channel <= MAX_CHANNEL;
    /* Buffers for the shape when it is small, else for a 1x1 call that must never run. */
    const size_t n = small ? (size_t)(batch * channel) : 1, c = small ? (size_t)channel : 1;
    const size_t elem = half_data ? 2 : 4;
    size_t stats_elem = 4, i;
    unsigned char *x, *dy, *dx, *stats[5], *before;
    long long params[BNG_PARAMS_LEN], *block;
    long long expected;
    int refused_alias;

#if BNG_HAS_F16
    if (half_data)
        stats_elem = sizeof(bng_hp_stats_t);
#endif
    if (flags & 0x20)
        core_mask = (int)((take(&in) & 0x3u) << 30);  /* only bits beyond the cluster */
    x = guarded(n * elem);
    dy = guarded(n * elem);
    dx = guarded(n * elem);
    for (i = 0; i < n * elem; i++) {
        x[i] = (unsigned char)take(&in);
        dy[i] = (unsigned char)take(&in);
        dx[i] = (unsigned char)i;
    }
    for (i = 0; i < 5; i++) {
        size_t j;
        stats[i] = guarded(c * stats_elem);
        for (j = 0; j < c * stats_elem; j++)
            stats[i][j] = (unsigned char)(i < 3 ? take(&in) : j);
    }
    for (i = 0; i < 5; i++)
        params[i] = (long long)(intptr_t)stats[i];
    params[BNG_PARAM_BATCH] = batch;
    params[BNG_PARAM_CHANNEL] = channel;
    params[BNG_PARAM_IS_TRAIN] = is_train;
    params[BNG_PARAM_STATUS] = SENTINEL;
    params[9] = params[10] = params[11] = SENTINEL;
    if (null_slot >= 3 && null_slot < 8)
        params[null_slot - 3] = 0;
    /* Aliasing, on calls without a NULL: 1-3 dbias or dscale the very array of an
     * input (allowed); 4 dbias = dscale, 5 dscale one element into mean, 6 dbias inside
     * x, 7 dx one element into x: refused with BNG_EOVERLAP (5 and 7 overlap only when
     * the arrays have two elements or more; 7 yields to dx in place). */
    refused_alias = null_slot >= 8 && (alias == 4 || alias == 6 || (alias == 5 && c >= 2)
                                       || (alias == 7 && !in_place && n >= 2));
    if (null_slot >= 8) {
        if (alias == 1)
            params[BNG_PARAM_DBIAS] = params[BNG_PARAM_MEAN];
        else if (alias == 2)
            params[BNG_PARAM_DSCALE] = params[BNG_PARAM_INVAR];
        else if (alias == 3)
            params[BNG_PARAM_DBIAS] = params[BNG_PARAM_SCALE];
        else if (alias == 4)
            params[BNG_PARAM_DBIAS] = params[BNG_PARAM_DSCALE];
        else if (alias == 5 && c >= 2)
            params[BNG_PARAM_DSCALE] = params[BNG_PARAM_MEAN] + (long long)stats_elem;
        else if (alias == 6)
            params[BNG_PARAM_DBIAS] = (long long)(intptr_t)x;
    }

    /* What docs/contract.md section 4 says the status must be, in its order. */
    if (null_slot < 8)
        expected = BNG_ENULL;
    else if (batch < 1)
        expected = BNG_EBATCH;
    else if (channel < 1)
        expected = BNG_ECHANNEL;
    else if (!small)
        expected = BNG_ERANGE;
    else if (refused_alias)
        expected = BNG_EOVERLAP;
    else if (shared && (core_mask & ((1 << BNG_TARGET_CORES) - 1)) == 0)
        expected = BNG_ECOREMASK;
    else
        expected = BNG_OK;
    /* A hostile shape that still fits the address space would be legal: with 32-bit
     * addresses every hostile value above is either < 1 or beyond it. */

    before = malloc(n * elem + 2 * c * stats_elem);
    memcpy(before, dx, n * elem);
    memcpy(before + n * elem, stats[3], c * stats_elem);
    memcpy(before + n * elem + c * stats_elem, stats[4], c * stats_elem);
    {
        void *xp = null_slot == 0 ? NULL : x, *dyp = null_slot == 1 ? NULL : dy;
        void *dxp = null_slot == 2 ? NULL : in_place == 1 ? dyp : in_place == 2 ? xp
                  : alias == 7 && null_slot >= 8 && n >= 2 ? x + elem : dx;
        block = params;
        if (shared) {
            memcpy(BNG_SHARED_PARAMS, params, sizeof params);
            block = BNG_SHARED_PARAMS;
        }
#if BNG_HAS_F16
        if (half_data && shared)
            hp_batch_norm_grad_s(xp, dyp, dxp, core_mask);
        else if (half_data)
            hp_batch_norm_grad_p(xp, dyp, dxp, params);
        else
#endif
        if (shared)
            fp_batch_norm_grad_s(xp, dyp, dxp, core_mask);
        else
            fp_batch_norm_grad_p(xp, dyp, dxp, params);
    }
    if (block[BNG_PARAM_STATUS] != expected || block[9] != SENTINEL || block[10] != SENTINEL
        || block[11] != SENTINEL)
        abort();
    if (expected != BNG_OK
        && (memcmp(before, dx, n * elem) || memcmp(before + n * elem, stats[3], c * stats_elem)
            || memcmp(before + n * elem + c * stats_elem, stats[4], c * stats_elem)))
        abort();
    check_guards(x, n * elem);
    check_guards(dy, n * elem);
    check_guards(dx, n * elem);
    for (i = 0; i < 5; i++) {
        check_guards(stats[i], c * stats_elem);
        free(stats[i] - GUARD);
    }
    free(before);
    free(x - GUARD);
    free(dy - GUARD);
    free(dx - GUARD);
    return 0;
}
