/* The vendor's private-storage call (fp_/hp_batch_norm_grad_p): the kernel
 * table's dispatch, every kernel within the bound, the summation order's bits
 * (specialized against generic, in place against out of place), the errors, and the
 * FPU's edge cases (NaN and Inf, overflow, subnormals, sums past half the range).
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

static void run_and_check(const bng_dtype *t, size_t batch, size_t channel, int is_train,
                          enum bng_data data, unsigned seed)
{
    bng_case k;
    bng_case_init(&k, t, batch, channel, is_train, data, seed);
    t->entry_p(k.x.p, k.dy.p, k.dx.p, k.params);
    bng_case_check(&k);
    bng_case_free(&k);
}

/* The table serves each specialized count with its own kernel: named for that count
 * and lane width, with ukernels of its own (a switch that sent 64 to the 32-channel
 * kernel, or a count to the generic one, fails here), and everything else with the
 * generic kernel. */
START_TEST(test_dispatch_serves_each_count_its_kernel)
{
    size_t off[8], n = bng_off_plan_channels(T, off), i;
    for (i = 0; i < T->n_specialized; i++) {
        const bng_kernel *k = T->config->kernel_for_channels(T->specialized[i]);
        char shape[48];
        snprintf(shape, sizeof shape, "_c%zu_v%zu", T->specialized[i], T->lanes);
        ck_assert_uint_eq(k->channels, T->specialized[i]);
        if (strstr(k->name, shape) == NULL)
            ck_abort_msg("%s: %zu channels dispatch to %s", T->name, T->specialized[i], k->name);
        if (k->reduce == T->generic->reduce || k->dx_train == T->generic->dx_train
            || k->dx_infer == T->generic->dx_infer)
            ck_abort_msg("%s: %s shares a ukernel with the generic kernel", T->name, k->name);
    }
    for (i = 0; i < n; i++)
        ck_assert_ptr_eq(T->config->kernel_for_channels(off[i]), T->generic);
}
END_TEST

/* The vendor's calls and the explicit-argument calls look kernels up in tables of
 * their own (bng_<dtype>_base_config): for every count the entry the extended calls'
 * table gives, with the same three ukernels and none of the relu extension's, and no
 * NCHW lookup and no driver code of either extension, so that a firmware image linking
 * only those calls carries no relu or NCHW code (a base table pointing at a relu
 * ukernel, or at another count's, fails). */
START_TEST(test_vendor_calls_tables_hold_no_extension_kernels)
{
    size_t channel;
    ck_assert(T->base_config->nchw_kernel_for_spatial == NULL);
    ck_assert(T->base_config->relu == NULL && T->base_config->nchw == NULL);
    ck_assert((T->config->relu != NULL) == (BNG_HAS_RELU != 0));
    ck_assert((T->config->nchw != NULL) == (BNG_HAS_NCHW != 0));
    for (channel = 1; channel <= 4097; channel++) {
        const bng_kernel *full = T->config->kernel_for_channels(channel);
        const bng_kernel *base = T->base_config->kernel_for_channels(channel);
        /* (not ck_assert in the loop: a passing one costs a system call, its mark point) */
        if (strcmp(base->name, full->name) != 0 || base->channels != full->channels
            || base->reduce != full->reduce || base->dx_train != full->dx_train
            || base->dx_infer != full->dx_infer)
            ck_abort_msg("%s: %zu channels: the base table gives %s, the extended table %s",
                         T->name, channel, base->name, full->name);
        if (base->reduce_relu != NULL || base->dx_train_relu != NULL
            || base->dx_infer_relu != NULL || base->dx_train_keeps != NULL
            || base->dx_infer_keeps != NULL)
            ck_abort_msg("%s: %zu channels: the base table's %s holds a relu ukernel", T->name,
                         channel, base->name);
    }
}
END_TEST

START_TEST(test_specialized_within_bound)
{
    const size_t batches[] = {1, 2, 7, 33, 300};
    size_t i, b;
    int train;
    for (i = 0; i < T->n_specialized; i++)
        for (b = 0; b < sizeof batches / sizeof batches[0]; b++)
            for (train = 0; train <= 1; train++)
                run_and_check(T, batches[b], T->specialized[i], train, BNG_DATA_RANDOM,
                              (unsigned)(i * 100 + b * 2 + train));
}
END_TEST

START_TEST(test_specialized_large_batch)
{
    size_t i;
    /* 20000 rows: 64 row groups of several blocks each (2600: 11 groups). */
    for (i = 0; i < T->n_specialized; i++)
        run_and_check(T, LARGE_BATCH, T->specialized[i], 1, BNG_DATA_RANDOM, (unsigned)i + 7);
}
END_TEST

START_TEST(test_generic_within_bound)
{
    const size_t batches[] = {1, 2, 33, 300};
    size_t off[8], n = bng_off_plan_channels(T, off), i, b;
    int train;
    for (i = 0; i < n; i++)
        for (b = 0; b < sizeof batches / sizeof batches[0]; b++)
            for (train = 0; train <= 1; train++)
                run_and_check(T, batches[b], off[i], train, BNG_DATA_RANDOM,
                              (unsigned)(i * 100 + b * 2 + train + 5000));
}
END_TEST

START_TEST(test_large_mean_small_spread)
{
    const size_t channels[] = {T->specialized[0], T->lanes + 1};
    const size_t batches[] = {64, 1000};
    size_t c, b;
    int train;
    for (c = 0; c < 2; c++)
        for (b = 0; b < 2; b++)
            for (train = 0; train <= 1; train++)
                run_and_check(T, batches[b], channels[c], train, BNG_DATA_LARGE_MEAN,
                              (unsigned)(c * 10 + b * 2 + train));
}
END_TEST

START_TEST(test_specialized_matches_generic_bits)
{
    size_t i;
    int train;
    for (i = 0; i < T->n_specialized; i++)
        for (train = 0; train <= 1; train++) {
            const size_t batch = 301, channel = T->specialized[i];
            bng_case a, b;
            bng_case_init(&a, T, batch, channel, train, BNG_DATA_RANDOM, (unsigned)i);
            bng_case_init_like(&b, &a);
            T->run_kernel(0, batch, channel, train, a.x.p, a.dy.p, a.dx.p, a.params);
            T->run_kernel(1, batch, channel, train, b.x.p, b.dy.p, b.dx.p, b.params);
            bng_expect_same_outputs(&a, &b);
            bng_case_free(&a);
            bng_case_free(&b);
        }
}
END_TEST

START_TEST(test_in_place_matches_out_of_place)
{
    const size_t channels[] = {T->specialized[0], T->lanes + 1};
    size_t c;
    int train, target;
    for (c = 0; c < 2; c++)
        for (train = 0; train <= 1; train++)
            for (target = 0; target <= 1; target++) {   /* dx = dy, then dx = x */
                bng_case ref, k;
                void *inout;
                bng_case_init(&ref, T, 77, channels[c], train, BNG_DATA_RANDOM, 3);
                bng_case_init_like(&k, &ref);
                T->entry_p(ref.x.p, ref.dy.p, ref.dx.p, ref.params);
                inout = target ? k.x.p : k.dy.p;
                T->entry_p(k.x.p, k.dy.p, inout, k.params);
                ck_assert_int_eq(k.params[BNG_PARAM_STATUS], BNG_OK);
                if (memcmp(inout, ref.dx.p, ref.dx.bytes) != 0)
                    ck_abort_msg("dx = %s differs from out of place", target ? "x" : "dy");
                bng_expect_same_bytes(&k.dbias, &ref.dbias, "dbias");
                bng_expect_same_bytes(&k.dscale, &ref.dscale, "dscale");
                bng_case_check_guards(&k);
                bng_case_free(&ref);
                bng_case_free(&k);
            }
}
END_TEST

/* Outputs are written, never read: dx, dbias and dscale filled with zeros or with NaN
 * patterns before the call give the same bits, through _p and _s. */
START_TEST(test_outputs_are_never_read)
{
    const int fills[] = {0x00, 0xFF, 0x7F};
    bng_case ref, k;
    size_t f;
    int shared;

    bng_case_init(&ref, T, 513, 2 * T->lanes + 5, 1, BNG_DATA_RANDOM, 9);
    bng_case_init_like(&k, &ref);
    T->entry_p(ref.x.p, ref.dy.p, ref.dx.p, ref.params);
    for (shared = 0; shared <= 1; shared++)
        for (f = 0; f < sizeof fills / sizeof fills[0]; f++) {
            memset(k.dx.p, fills[f], k.dx.bytes);
            memset(k.dbias.p, fills[f], k.dbias.bytes);
            memset(k.dscale.p, fills[f], k.dscale.bytes);
            if (shared)
                bng_case_run_shared(&k, k.x.p, k.dy.p, k.dx.p, FULL_MASK);
            else
                T->entry_p(k.x.p, k.dy.p, k.dx.p, k.params);
            ck_assert_int_eq(k.params[BNG_PARAM_STATUS], BNG_OK);
            bng_expect_same_outputs(&k, &ref);
        }
    bng_case_free(&ref);
    bng_case_free(&k);
}
END_TEST

START_TEST(test_errors_write_status_only)
{
    bng_case k;
    long long saved;
    int slot;
    const long long bad_batch[] = {0, -1, LLONG_MIN};
    const long long bad_channel[] = {0, -3, LLONG_MIN};
    size_t i;

    bng_case_init(&k, T, 4, T->specialized[0], 1, BNG_DATA_RANDOM, 1);
    bng_expect_refused(&k, BNG_OP_FULL, 0, NULL, k.dy.p, k.dx.p, 0, BNG_ENULL, "x NULL");
    bng_expect_refused(&k, BNG_OP_FULL, 0, k.x.p, NULL, k.dx.p, 0, BNG_ENULL, "dy NULL");
    bng_expect_refused(&k, BNG_OP_FULL, 0, k.x.p, k.dy.p, NULL, 0, BNG_ENULL, "dx NULL");
    for (slot = BNG_PARAM_MEAN; slot <= BNG_PARAM_DSCALE; slot++) {
        char what[32];
        snprintf(what, sizeof what, "params[%d] NULL", slot);
        saved = k.params[slot];
        k.params[slot] = 0;
        bng_expect_refused(&k, BNG_OP_FULL, 0, k.x.p, k.dy.p, k.dx.p, 0, BNG_ENULL, what);
        k.params[slot] = saved;
    }
    for (i = 0; i < 3; i++) {
        k.params[BNG_PARAM_BATCH] = bad_batch[i];
        bng_expect_refused(&k, BNG_OP_FULL, 0, k.x.p, k.dy.p, k.dx.p, 0, BNG_EBATCH, "batch < 1");
    }
    k.params[BNG_PARAM_BATCH] = 4;
    for (i = 0; i < 3; i++) {
        k.params[BNG_PARAM_CHANNEL] = bad_channel[i];
        bng_expect_refused(&k, BNG_OP_FULL, 0, k.x.p, k.dy.p, k.dx.p, 0, BNG_ECHANNEL, "channel < 1");
    }
    /* Beyond the target's address space: one element past 2^BNG_ADDRESS_BITS bytes,
     * an overflowing product, and LLONG_MAX on either side. */
    k.params[BNG_PARAM_CHANNEL] = 4;
    k.params[BNG_PARAM_BATCH] = (long long)(ADDRESS_MAX / T->size / 4 + 1);
    bng_expect_refused(&k, BNG_OP_FULL, 0, k.x.p, k.dy.p, k.dx.p, 0, BNG_ERANGE, "batch*channel beyond the address space");
    k.params[BNG_PARAM_BATCH] = LLONG_MAX;
    bng_expect_refused(&k, BNG_OP_FULL, 0, k.x.p, k.dy.p, k.dx.p, 0, BNG_ERANGE, "batch LLONG_MAX");
    k.params[BNG_PARAM_BATCH] = 1ll << 40;
    k.params[BNG_PARAM_CHANNEL] = 1ll << 40;
    bng_expect_refused(&k, BNG_OP_FULL, 0, k.x.p, k.dy.p, k.dx.p, 0, BNG_ERANGE, "batch*channel overflows 64 bits");
    k.params[BNG_PARAM_BATCH] = 2;
    k.params[BNG_PARAM_CHANNEL] = LLONG_MAX;
    bng_expect_refused(&k, BNG_OP_FULL, 0, k.x.p, k.dy.p, k.dx.p, 0, BNG_ERANGE, "channel LLONG_MAX");
    /* Misaligned pointers (one byte off their element type), after NULLs, before the
     * shape. f16 data is 2-byte aligned, so one byte off is misaligned for every type. */
    k.params[BNG_PARAM_BATCH] = 4;
    k.params[BNG_PARAM_CHANNEL] = (long long)k.channel;
    bng_expect_refused(&k, BNG_OP_FULL, 0, (char *)k.x.p + 1, k.dy.p, k.dx.p, 0, BNG_EALIGN, "x misaligned");
    bng_expect_refused(&k, BNG_OP_FULL, 0, k.x.p, (char *)k.dy.p + 1, k.dx.p, 0, BNG_EALIGN, "dy misaligned");
    bng_expect_refused(&k, BNG_OP_FULL, 0, k.x.p, k.dy.p, (char *)k.dx.p + 1, 0, BNG_EALIGN, "dx misaligned");
    for (slot = BNG_PARAM_MEAN; slot <= BNG_PARAM_DSCALE; slot++) {
        char what[40];
        snprintf(what, sizeof what, "params[%d] misaligned", slot);
        k.params[slot] += 1;
        bng_expect_refused(&k, BNG_OP_FULL, 0, k.x.p, k.dy.p, k.dx.p, 0, BNG_EALIGN, what);
        k.params[BNG_PARAM_BATCH] = 0;
        bng_expect_refused(&k, BNG_OP_FULL, 0, k.x.p, k.dy.p, k.dx.p, 0, BNG_EALIGN, "misaligned and batch 0");
        k.params[BNG_PARAM_BATCH] = 4;
        k.params[slot] -= 1;
    }
    bng_expect_refused(&k, BNG_OP_FULL, 0, NULL, (char *)k.dy.p + 1, k.dx.p, 0, BNG_ENULL, "NULL and misaligned");
    /* NULL wins over a bad shape: the first check in the documented order. */
    k.params[BNG_PARAM_BATCH] = 0;
    bng_expect_refused(&k, BNG_OP_FULL, 0, k.x.p, NULL, k.dx.p, 0, BNG_ENULL, "NULL and batch 0");
    bng_case_free(&k);
}
END_TEST

START_TEST(test_params_null_touches_nothing)
{
    bng_case k;
    bng_case_init(&k, T, 4, T->specialized[0], 1, BNG_DATA_RANDOM, 1);
    T->entry_p(k.x.p, k.dy.p, k.dx.p, NULL);
    ck_assert(bng_case_outputs_marked(&k));
    bng_case_check_guards(&k);
    bng_case_free(&k);
}
END_TEST

START_TEST(test_nan_and_inf_propagate)
{
    const size_t channels[] = {T->specialized[0], T->lanes + 1};
    size_t c;
    int train;
    for (c = 0; c < 2; c++)
        for (train = 0; train <= 1; train++) {
            bng_case k;
            const size_t C = channels[c];
            bng_case_init(&k, T, 8, C, train, BNG_DATA_RANDOM, 11);
            bng_set(T, k.dy.p, 1 * C + 2, NAN);
            bng_set(T, k.x.p, 3 * C + 5, INFINITY);
            bng_set(T, k.dy.p, 6 * C + 0, -INFINITY);
            T->entry_p(k.x.p, k.dy.p, k.dx.p, k.params);
            bng_case_check(&k);     /* NaN where the reference is NaN, Inf where it is Inf */
            ck_assert(isnan(bng_stats_get(T, k.dbias.p, 2)));
            bng_case_free(&k);
        }
}
END_TEST

START_TEST(test_overflow_gives_signed_inf)
{
    /* Inference: dx = scale*invar*dy beyond the type's range must be Inf. x = mean
     * keeps xhat = 0, so no product inside the sums overflows first. */
    const double big = T->overflow_dx / 3.0;
    const size_t C = T->specialized[0];
    bng_case k;
    size_t b, c;

    bng_case_init(&k, T, 4, C, 0, BNG_DATA_RANDOM, 5);
    for (c = 0; c < C; c++) {
        bng_stats_set(T, k.invar.p, c, 2.0);
        bng_stats_set(T, k.scale.p, c, 2.0);
        for (b = 0; b < 4; b++) {
            bng_set(T, k.x.p, b * C + c, bng_stats_get(T, k.mean.p, c));
            bng_set(T, k.dy.p, b * C + c, c % 2 ? -big : big);
        }
    }
    T->entry_p(k.x.p, k.dy.p, k.dx.p, k.params);
    bng_case_check(&k);
    ck_assert(isinf(bng_get(T, k.dx.p, 0)) && bng_get(T, k.dx.p, 0) > 0);
    ck_assert(isinf(bng_get(T, k.dx.p, 1)) && bng_get(T, k.dx.p, 1) < 0);
    bng_case_free(&k);
}
END_TEST

START_TEST(test_subnormal_inputs_are_not_flushed)
{
    /* dy below the smallest normal, a gain of 1e4 so that dx is normal again: a kernel
     * that flushed subnormal inputs to zero would return dx = 0. */
    const size_t C = T->specialized[0];
    int train;
    for (train = 0; train <= 1; train++) {
        bng_case k;
        size_t b, c;
        bng_case_init(&k, T, 16, C, train, BNG_DATA_RANDOM, 21);
        for (c = 0; c < C; c++) {
            bng_stats_set(T, k.invar.p, c, 100.0);
            bng_stats_set(T, k.scale.p, c, c % 2 ? -100.0 : 100.0);
            for (b = 0; b < 16; b++)
                bng_set(T, k.dy.p, b * C + c, T->min_normal * (0.03 + 0.06 * (double)((b * 7 + c) % 16)));
        }
        T->entry_p(k.x.p, k.dy.p, k.dx.p, k.params);
        bng_case_check(&k);
        bng_case_free(&k);
    }
}
END_TEST

START_TEST(test_running_sums_beyond_half_range)
{
    /* 70000 rows of dy = +2 then -2: the running sum of dy reaches 70000, past half's
     * 65504, and comes back to a small total. A half accumulator would turn it into Inf
     * or NaN; the float32 one must not. Then all rows +1: dbias = 70000 is Inf in half
     * stats and exact in float stats. Half data only: float data's sums are nowhere
     * near their type's range, and the rows' count and chunks are the same driver code
     * whatever the type. */
    const size_t batch = 70000, channels[] = {T->specialized[0], T->lanes + 1};
    size_t c, b, j;
    int pattern;
    if (T->size != 2)
        return;
    for (c = 0; c < 2; c++)
        for (pattern = 0; pattern <= 1; pattern++) {
            bng_case k;
            const size_t C = channels[c];
            bng_case_init(&k, T, batch, C, 1, BNG_DATA_RANDOM, 31);
            for (b = 0; b < batch; b++)
                for (j = 0; j < C; j++)
                    bng_set(T, k.dy.p, b * C + j,
                           pattern == 0 ? (b < batch / 2 ? 2.0 : -2.0) + 0.0625 * (double)(j % 3) : 1.0);
            T->entry_p(k.x.p, k.dy.p, k.dx.p, k.params);
            bng_case_check(&k);
            bng_case_free(&k);
        }
}
END_TEST

/* A gain below the normal range (invar = 1e-40): dx is a float32 subnormal, correctly
 * rounded; the bound's absolute term for results below the normal range covers it. */
START_TEST(test_subnormal_gain_within_bound)
{
    const size_t C = T->lanes + 1;
    int train;
    if (T->stats_size != sizeof(float))
        return;     /* half per-channel arrays cannot hold 1e-40 */
    for (train = 0; train <= 1; train++) {
        bng_case k;
        size_t c;
        bng_case_init(&k, T, 9, C, train, BNG_DATA_RANDOM, 8);
        for (c = 0; c < C; c++)
            bng_stats_set(T, k.invar.p, c, 1e-40);
        T->entry_p(k.x.p, k.dy.p, k.dx.p, k.params);
        bng_case_check(&k);
        bng_case_free(&k);
    }
}
END_TEST

void bng_private_add_tests(Suite *s)
{
    const bng_test_case cases[] = {
        {"dispatch", test_dispatch_serves_each_count_its_kernel, "private"},
        {"vendor_tables", test_vendor_calls_tables_hold_no_extension_kernels, "private"},
        {"specialized", test_specialized_within_bound, "private"},
        {"specialized_large_batch", test_specialized_large_batch, "private"},
        {"generic", test_generic_within_bound, "private"},
        {"large_mean", test_large_mean_small_spread, "private"},
        {"specialized_is_generic", test_specialized_matches_generic_bits, "private"},
        {"in_place", test_in_place_matches_out_of_place, "private"},
        {"outputs_not_read", test_outputs_are_never_read, "private shared"},
        {"errors", test_errors_write_status_only, "private"},
        {"params_null", test_params_null_touches_nothing, "private"},
        {"nan_inf", test_nan_and_inf_propagate, "private"},
        {"overflow", test_overflow_gives_signed_inf, "private"},
        {"subnormal", test_subnormal_inputs_are_not_flushed, "private"},
        {"subnormal_gain", test_subnormal_gain_within_bound, "private"},
        {"half_range_sums", test_running_sums_beyond_half_range, "private"},
    };
    bng_add_cases(s, cases, sizeof cases / sizeof cases[0]);
}
