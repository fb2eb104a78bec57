/* The vendor's shared-storage call (fp_/hp_batch_norm_grad_s): the same bits as
 * _p over every core mask, in place, its errors and the HAL's refusals.
 */
#include <check.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bng_dtypes.h"
#include "bng_suites.h"

static void expect_shared_matches_private(const bng_dtype *t, size_t batch, size_t channel,
                                          int train, unsigned seed)
{
    bng_case ref, k;
    size_t m;

    bng_case_init(&ref, t, batch, channel, train, BNG_DATA_RANDOM, seed);
    bng_case_init_like(&k, &ref);
    t->entry_p(ref.x.p, ref.dy.p, ref.dx.p, ref.params);
    bng_case_check(&ref);
    for (m = 0; m < bng_test_mask_count; m++) {
        /* The full mask, and half the others in turn: the cases of consecutive seeds
         * (the callers' channel counts of one batch) take every mask between them. */
        if ((bng_test_masks[m] & FULL_MASK) == 0 || (bng_test_masks[m] != FULL_MASK && (m + seed) % 2 != 0))
            continue;
        bng_case_mark_outputs(&k);
        bng_case_run_shared(&k, k.x.p, k.dy.p, k.dx.p, bng_test_masks[m]);
        if (k.params[BNG_PARAM_STATUS] != BNG_OK)
            ck_abort_msg("_s mask %#x: status %lld", bng_test_masks[m], k.params[BNG_PARAM_STATUS]);
        if (memcmp(k.dx.p, ref.dx.p, ref.dx.bytes) || memcmp(k.dbias.p, ref.dbias.p, ref.dbias.bytes)
            || memcmp(k.dscale.p, ref.dscale.p, ref.dscale.bytes))
            ck_abort_msg("%s %zux%zu train=%d: _s with mask %#x differs from _p", t->name,
                         batch, channel, train, bng_test_masks[m]);
        bng_case_check_guards(&k);
    }
    bng_case_free(&ref);
    bng_case_free(&k);
}

START_TEST(test_shared_matches_private_every_mask)
{
    /* Batches: one row, fewer groups than cores, a few groups per core, 64 groups of
     * several tiles (streaming through private memory when the slice does not fit). */
    size_t batches[] = {1, 33, 300, 2049, 0};   /* the last: LARGE_BATCH */
    size_t off[8], n = bng_off_plan_channels(T, off), i, b;
    int train;
    batches[4] = LARGE_BATCH;
    for (b = 0; b < sizeof batches / sizeof batches[0]; b++)
        for (train = 0; train <= 1; train++) {
            for (i = 0; i < T->n_specialized; i++)
                if (batches[b] * T->specialized[i] <= SHARED_MAX_ELEMENTS)
                    expect_shared_matches_private(T, batches[b], T->specialized[i], train,
                                                  (unsigned)(b * 10 + i));
            for (i = 0; i < n; i++)
                if (batches[b] * off[i] <= SHARED_MAX_ELEMENTS)
                    expect_shared_matches_private(T, batches[b], off[i], train,
                                                  (unsigned)(b * 10 + i + 500));
        }
}
END_TEST

START_TEST(test_shared_in_place)
{
    const size_t channels[] = {T->specialized[0], T->lanes + 1};
    size_t c;
    int train, target;
    for (c = 0; c < 2; c++)
        for (train = 0; train <= 1; train++)
            for (target = 0; target <= 1; target++) {
                bng_case ref, k;
                void *inout;
                bng_case_init(&ref, T, 3000, channels[c], train, BNG_DATA_RANDOM, 4);
                bng_case_init_like(&k, &ref);
                T->entry_p(ref.x.p, ref.dy.p, ref.dx.p, ref.params);
                inout = target ? k.x.p : k.dy.p;
                bng_case_run_shared(&k, k.x.p, k.dy.p, inout, FULL_MASK);
                ck_assert_int_eq(k.params[BNG_PARAM_STATUS], BNG_OK);
                if (memcmp(inout, ref.dx.p, ref.dx.bytes) != 0)
                    ck_abort_msg("_s dx = %s differs from _p out of place", target ? "x" : "dy");
                bng_expect_same_bytes(&k.dbias, &ref.dbias, "dbias");
                bng_case_check_guards(&k);
                bng_case_free(&ref);
                bng_case_free(&k);
            }
}
END_TEST

/* Products with a factor past 2^32: on a target whose address_bits pass 32 the range
 * check's 64-bit branch, beyond the address space on a 32-bit one. The bytes are a power
 * of two, 2^e (the element size is 2 or 4), and ADDRESS_MAX is 2^n - 1, so they fit
 * exactly when e < n: when ADDRESS_MAX >> e is not 0 (no 128-bit product, which tcc and
 * 32-bit compilers lack). A product that fits passes the range check to the overlap
 * check (the arrays, a few KiB apart, overlap at such lengths), before core_mask (0
 * here). */
static void range_products(bng_case *k)
{
    static const int shifts[][2] = {{40, 20}, {40, 22}, {40, 31}, {33, 1}, {20, 41}};
    const int size_bits = k->t->size == 4 ? 2 : 1;
    size_t i;

    ck_assert_uint_eq((size_t)1 << size_bits, k->t->size);
    for (i = 0; i < sizeof shifts / sizeof shifts[0]; i++) {
        const int e = shifts[i][0] + shifts[i][1] + size_bits;
        const int fits = e < (int)(CHAR_BIT * sizeof(size_t)) && (ADDRESS_MAX >> e) != 0;
        char what[64];
        k->params[BNG_PARAM_BATCH] = 1ll << shifts[i][0];
        k->params[BNG_PARAM_CHANNEL] = 1ll << shifts[i][1];
        snprintf(what, sizeof what, "batch 2^%d, channel 2^%d", shifts[i][0], shifts[i][1]);
        bng_expect_refused(k, BNG_OP_FULL, 1, k->x.p, k->dy.p, k->dx.p, 0, fits ? BNG_EOVERLAP : BNG_ERANGE, what);
    }
    k->params[BNG_PARAM_BATCH] = 4;
    k->params[BNG_PARAM_CHANNEL] = (long long)k->channel;
}

START_TEST(test_shared_errors_write_status_only)
{
    bng_case k;
    long long saved;
    bng_case_init(&k, T, 4, T->specialized[0], 1, BNG_DATA_RANDOM, 1);
    bng_expect_refused(&k, BNG_OP_FULL, 1, k.x.p, k.dy.p, k.dx.p, 0, BNG_ECOREMASK, "core_mask 0");
    if (BNG_TARGET_CORES < 31)
        bng_expect_refused(&k, BNG_OP_FULL, 1, k.x.p, k.dy.p, k.dx.p, (int)(1u << BNG_TARGET_CORES), BNG_ECOREMASK, "only a core beyond the cluster");
    bng_expect_refused(&k, BNG_OP_FULL, 1, NULL, k.dy.p, k.dx.p, FULL_MASK, BNG_ENULL, "x NULL");
    bng_expect_refused(&k, BNG_OP_FULL, 1, k.x.p, k.dy.p, NULL, FULL_MASK, BNG_ENULL, "dx NULL");
    saved = k.params[BNG_PARAM_DSCALE];
    k.params[BNG_PARAM_DSCALE] = 0;
    bng_expect_refused(&k, BNG_OP_FULL, 1, k.x.p, k.dy.p, k.dx.p, FULL_MASK, BNG_ENULL, "dscale NULL");
    k.params[BNG_PARAM_DSCALE] = saved;
    bng_expect_refused(&k, BNG_OP_FULL, 1, k.x.p, (char *)k.dy.p + 1, k.dx.p, FULL_MASK, BNG_EALIGN, "dy misaligned");
    k.params[BNG_PARAM_SCALE] += 1;
    bng_expect_refused(&k, BNG_OP_FULL, 1, k.x.p, k.dy.p, k.dx.p, FULL_MASK, BNG_EALIGN, "scale misaligned");
    k.params[BNG_PARAM_SCALE] -= 1;
    k.params[BNG_PARAM_BATCH] = 0;
    bng_expect_refused(&k, BNG_OP_FULL, 1, k.x.p, k.dy.p, k.dx.p, FULL_MASK, BNG_EBATCH, "batch 0");
    k.params[BNG_PARAM_BATCH] = 4;
    k.params[BNG_PARAM_CHANNEL] = -1;
    bng_expect_refused(&k, BNG_OP_FULL, 1, k.x.p, k.dy.p, k.dx.p, FULL_MASK, BNG_ECHANNEL, "channel -1");
    k.params[BNG_PARAM_CHANNEL] = LLONG_MAX;
    bng_expect_refused(&k, BNG_OP_FULL, 1, k.x.p, k.dy.p, k.dx.p, FULL_MASK, BNG_ERANGE, "channel LLONG_MAX");
    range_products(&k);
    bng_case_free(&k);
}
END_TEST

/* A HAL that cannot keep bng_hal.h's promises (the host HAL told to fail): with no
 * private memory on any core, _s writes no output (every core returns from its body,
 * none waits at a barrier); on a split target, _p given a workspace short of
 * BNG_P_WORKSPACE_BYTES gives it back and reports BNG_ENOMEM, writing nothing. The
 * next call, the HAL restored, is within the bound. */
START_TEST(test_hal_refusals_write_nothing)
{
    bng_case k;
    if (!bng_test_hal_refuse(1, 0))
        return;
    bng_case_init(&k, T, 5, T->specialized[0], 1, BNG_DATA_RANDOM, 11);
    bng_case_mark_outputs(&k);
    bng_case_call(&k, BNG_OP_FULL, 1, k.x.p, k.dy.p, k.dx.p, FULL_MASK);
    bng_test_hal_refuse(0, 0);
    if (!bng_case_outputs_marked(&k))
        ck_abort_msg("%s: _s without private memory wrote an output", T->name);
#if BNG_SPLIT_MEMORY
    bng_test_hal_refuse(0, 1);
    bng_case_call(&k, BNG_OP_FULL, 0, k.x.p, k.dy.p, k.dx.p, 0);
    bng_test_hal_refuse(0, 0);
    if (k.params[BNG_PARAM_STATUS] != BNG_ENOMEM || !bng_case_outputs_marked(&k))
        ck_abort_msg("%s: _p with a short workspace: status %lld (not BNG_ENOMEM), or an output "
                     "was written", T->name, k.params[BNG_PARAM_STATUS]);
#endif
    bng_case_call(&k, BNG_OP_FULL, 1, k.x.p, k.dy.p, k.dx.p, FULL_MASK);
    bng_case_check(&k);
    bng_case_free(&k);
}
END_TEST

void bng_shared_add_tests(Suite *s)
{
    const bng_test_case cases[] = {
        {"shared_matches_private", test_shared_matches_private_every_mask, "shared"},
        {"shared_in_place", test_shared_in_place, "shared"},
        {"shared_errors", test_shared_errors_write_status_only, "shared"},
        {"hal_refusals", test_hal_refusals_write_nothing, "shared"},
    };
    bng_add_cases(s, cases, sizeof cases / sizeof cases[0]);
}
