/* Check suite for one target's library: both entry point families (_p and _s), every
 * storage type the target has. Built once per target and build flavour; the kernel
 * list comes from the plan via bng_kernels.h, never from a copy kept here.
 */
#include <check.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bng_dtypes.h"
#include "test_nchw.h"

#define T (bng_dtypes[_i])
#define FULL_MASK ((int)((1u << BNG_TARGET_CORES) - 1u))
/* The largest byte address of the target's data on this host (bng_params.c's limit). */
#define ADDRESS_MAX (BNG_ADDRESS_MAX < SIZE_MAX ? (size_t)BNG_ADDRESS_MAX : SIZE_MAX)

/* At the quick size (bng_test_quick) the largest sweeps shrink; every path they cover
 * still runs (several row groups, streaming tiles, half-range sums). */
#define LARGE_BATCH ((size_t)(bng_test_quick() ? 2600 : 20000))
#define SHARED_MAX_ELEMENTS ((size_t)(bng_test_quick() ? 200000 : 2000000))

static void run_and_check(const bng_dtype *t, size_t batch, size_t channel, int is_train,
                          enum bng_data data, unsigned seed)
{
    bng_case k;
    bng_case_init(&k, t, batch, channel, is_train, data, seed);
    t->entry_p(k.x.p, k.dy.p, k.dx.p, k.params);
    bng_case_check(&k);
    bng_case_free(&k);
}

static int in_plan(const bng_dtype *t, size_t channel)
{
    size_t i;
    for (i = 0; i < t->n_specialized; i++)
        if (t->specialized[i] == channel)
            return 1;
    return 0;
}

/* Channel counts off the plan: 1, 3, lanes-1, lanes+1, and odd ones that span
 * several generic chunks. */
static size_t off_plan_channels(const bng_dtype *t, size_t *out)
{
    const size_t candidates[] = {1, 3, t->lanes - 1, t->lanes + 1, 2 * t->lanes + 5,
                                 t->generic_chunk + 7, 1001};
    size_t i, n = 0;
    for (i = 0; i < sizeof candidates / sizeof candidates[0]; i++)
        if (candidates[i] >= 1 && !in_plan(t, candidates[i]))
            out[n++] = candidates[i];
    return n;
}

/* The table serves each specialized count with its own kernel: named for that count
 * and lane width, with ukernels of its own (a switch that sent 64 to the 32-channel
 * kernel, or a count to the generic one, fails here), and everything else with the
 * generic kernel. */
START_TEST(test_dispatch_serves_each_count_its_kernel)
{
    size_t off[8], n = off_plan_channels(T, off), i;
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
        ck_assert_str_eq(base->name, full->name);
        ck_assert_uint_eq(base->channels, full->channels);
        ck_assert(base->reduce == full->reduce && base->dx_train == full->dx_train
                  && base->dx_infer == full->dx_infer);
        ck_assert(base->reduce_relu == NULL && base->dx_train_relu == NULL
                  && base->dx_infer_relu == NULL && base->dx_train_keeps == NULL
                  && base->dx_infer_keeps == NULL);
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
    size_t off[8], n = off_plan_channels(T, off), i, b;
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

static void expect_same_bytes(const bng_buffer *a, const bng_buffer *b, const char *what)
{
    if (memcmp(a->p, b->p, a->bytes) != 0)
        ck_abort_msg("%s differs", what);
}

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
            expect_same_bytes(&a.dx, &b.dx, "dx");
            expect_same_bytes(&a.dbias, &b.dbias, "dbias");
            expect_same_bytes(&a.dscale, &b.dscale, "dscale");
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
                expect_same_bytes(&k.dbias, &ref.dbias, "dbias");
                expect_same_bytes(&k.dscale, &ref.dscale, "dscale");
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
            expect_same_bytes(&k.dx, &ref.dx, "dx");
            expect_same_bytes(&k.dbias, &ref.dbias, "dbias");
            expect_same_bytes(&k.dscale, &ref.dscale, "dscale");
        }
    bng_case_free(&ref);
    bng_case_free(&k);
}
END_TEST

/* An error call, through _p or through _s with core_mask = mask: the status is
 * written and nothing else. */
static void expect_status_only(bng_case *k, void *x, void *dy, void *dx, int shared, int mask,
                               long long expected, const char *what)
{
    bng_case_mark_outputs(k);
    k->params[BNG_PARAM_STATUS] = 0x77;
    if (shared)
        bng_case_run_shared(k, x, dy, dx, mask);
    else
        k->t->entry_p(x, dy, dx, k->params);
    if (k->params[BNG_PARAM_STATUS] != expected)
        ck_abort_msg("%s %s: status %lld, expected %lld", shared ? "_s" : "_p", what,
                     k->params[BNG_PARAM_STATUS], expected);
    if (!bng_case_outputs_marked(k))
        ck_abort_msg("%s %s: an output was written", shared ? "_s" : "_p", what);
    bng_case_check_guards(k);
}

#define expect_error(k, x, dy, dx, expected, what) \
    expect_status_only(k, x, dy, dx, 0, 0, expected, what)
#define expect_shared_error(k, x, dy, dx, mask, expected, what) \
    expect_status_only(k, x, dy, dx, 1, mask, expected, what)

START_TEST(test_errors_write_status_only)
{
    bng_case k;
    long long saved;
    int slot;
    const long long bad_batch[] = {0, -1, LLONG_MIN};
    const long long bad_channel[] = {0, -3, LLONG_MIN};
    size_t i;

    bng_case_init(&k, T, 4, T->specialized[0], 1, BNG_DATA_RANDOM, 1);
    expect_error(&k, NULL, k.dy.p, k.dx.p, BNG_ENULL, "x NULL");
    expect_error(&k, k.x.p, NULL, k.dx.p, BNG_ENULL, "dy NULL");
    expect_error(&k, k.x.p, k.dy.p, NULL, BNG_ENULL, "dx NULL");
    for (slot = BNG_PARAM_MEAN; slot <= BNG_PARAM_DSCALE; slot++) {
        char what[32];
        snprintf(what, sizeof what, "params[%d] NULL", slot);
        saved = k.params[slot];
        k.params[slot] = 0;
        expect_error(&k, k.x.p, k.dy.p, k.dx.p, BNG_ENULL, what);
        k.params[slot] = saved;
    }
    for (i = 0; i < 3; i++) {
        k.params[BNG_PARAM_BATCH] = bad_batch[i];
        expect_error(&k, k.x.p, k.dy.p, k.dx.p, BNG_EBATCH, "batch < 1");
    }
    k.params[BNG_PARAM_BATCH] = 4;
    for (i = 0; i < 3; i++) {
        k.params[BNG_PARAM_CHANNEL] = bad_channel[i];
        expect_error(&k, k.x.p, k.dy.p, k.dx.p, BNG_ECHANNEL, "channel < 1");
    }
    /* Beyond the target's address space: one element past 2^BNG_ADDRESS_BITS bytes,
     * an overflowing product, and LLONG_MAX on either side. */
    k.params[BNG_PARAM_CHANNEL] = 4;
    k.params[BNG_PARAM_BATCH] = (long long)(ADDRESS_MAX / T->size / 4 + 1);
    expect_error(&k, k.x.p, k.dy.p, k.dx.p, BNG_ERANGE, "batch*channel beyond the address space");
    k.params[BNG_PARAM_BATCH] = LLONG_MAX;
    expect_error(&k, k.x.p, k.dy.p, k.dx.p, BNG_ERANGE, "batch LLONG_MAX");
    k.params[BNG_PARAM_BATCH] = 1ll << 40;
    k.params[BNG_PARAM_CHANNEL] = 1ll << 40;
    expect_error(&k, k.x.p, k.dy.p, k.dx.p, BNG_ERANGE, "batch*channel overflows 64 bits");
    k.params[BNG_PARAM_BATCH] = 2;
    k.params[BNG_PARAM_CHANNEL] = LLONG_MAX;
    expect_error(&k, k.x.p, k.dy.p, k.dx.p, BNG_ERANGE, "channel LLONG_MAX");
    /* Misaligned pointers (one byte off their element type), after NULLs, before the
     * shape. f16 data is 2-byte aligned, so one byte off is misaligned for every type. */
    k.params[BNG_PARAM_BATCH] = 4;
    k.params[BNG_PARAM_CHANNEL] = (long long)k.channel;
    expect_error(&k, (char *)k.x.p + 1, k.dy.p, k.dx.p, BNG_EALIGN, "x misaligned");
    expect_error(&k, k.x.p, (char *)k.dy.p + 1, k.dx.p, BNG_EALIGN, "dy misaligned");
    expect_error(&k, k.x.p, k.dy.p, (char *)k.dx.p + 1, BNG_EALIGN, "dx misaligned");
    for (slot = BNG_PARAM_MEAN; slot <= BNG_PARAM_DSCALE; slot++) {
        char what[40];
        snprintf(what, sizeof what, "params[%d] misaligned", slot);
        k.params[slot] += 1;
        expect_error(&k, k.x.p, k.dy.p, k.dx.p, BNG_EALIGN, what);
        k.params[BNG_PARAM_BATCH] = 0;
        expect_error(&k, k.x.p, k.dy.p, k.dx.p, BNG_EALIGN, "misaligned and batch 0");
        k.params[BNG_PARAM_BATCH] = 4;
        k.params[slot] -= 1;
    }
    expect_error(&k, NULL, (char *)k.dy.p + 1, k.dx.p, BNG_ENULL, "NULL and misaligned");
    /* NULL wins over a bad shape: the first check in the documented order. */
    k.params[BNG_PARAM_BATCH] = 0;
    expect_error(&k, k.x.p, NULL, k.dx.p, BNG_ENULL, "NULL and batch 0");
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
            T->set(k.dy.p, 1 * C + 2, NAN);
            T->set(k.x.p, 3 * C + 5, INFINITY);
            T->set(k.dy.p, 6 * C + 0, -INFINITY);
            T->entry_p(k.x.p, k.dy.p, k.dx.p, k.params);
            bng_case_check(&k);     /* NaN where the reference is NaN, Inf where it is Inf */
            ck_assert(isnan(T->stats_get(k.dbias.p, 2)));
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
        T->stats_set(k.invar.p, c, 2.0);
        T->stats_set(k.scale.p, c, 2.0);
        for (b = 0; b < 4; b++) {
            T->set(k.x.p, b * C + c, T->stats_get(k.mean.p, c));
            T->set(k.dy.p, b * C + c, c % 2 ? -big : big);
        }
    }
    T->entry_p(k.x.p, k.dy.p, k.dx.p, k.params);
    bng_case_check(&k);
    ck_assert(isinf(T->get(k.dx.p, 0)) && T->get(k.dx.p, 0) > 0);
    ck_assert(isinf(T->get(k.dx.p, 1)) && T->get(k.dx.p, 1) < 0);
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
            T->stats_set(k.invar.p, c, 100.0);
            T->stats_set(k.scale.p, c, c % 2 ? -100.0 : 100.0);
            for (b = 0; b < 16; b++)
                T->set(k.dy.p, b * C + c, T->min_normal * (0.03 + 0.06 * (double)((b * 7 + c) % 16)));
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
     * stats and exact in float stats. */
    const size_t batch = 70000, channels[] = {T->specialized[0], T->lanes + 1};
    size_t c, b, j;
    int pattern;
    for (c = 0; c < 2; c++)
        for (pattern = 0; pattern <= 1; pattern++) {
            bng_case k;
            const size_t C = channels[c];
            bng_case_init(&k, T, batch, C, 1, BNG_DATA_RANDOM, 31);
            for (b = 0; b < batch; b++)
                for (j = 0; j < C; j++)
                    T->set(k.dy.p, b * C + j,
                           pattern == 0 ? (b < batch / 2 ? 2.0 : -2.0) + 0.0625 * (double)(j % 3) : 1.0);
            T->entry_p(k.x.p, k.dy.p, k.dx.p, k.params);
            bng_case_check(&k);
            bng_case_free(&k);
        }
}
END_TEST

/* ---- shared storage ---- */

/* The masks every _s comparison runs with: single low and high cores, pairs, a sparse
 * mask, the full cluster, all bits, and bits beyond the core count (ignored). */
static const int masks[] = {0x1, 0x2, 0x3, 0x5A, FULL_MASK, -1,
                            1 << (BNG_TARGET_CORES - 1), (1 << (BNG_TARGET_CORES - 1)) | 0x40000000};

static void expect_shared_matches_private(const bng_dtype *t, size_t batch, size_t channel,
                                          int train, unsigned seed)
{
    bng_case ref, k;
    size_t m;

    bng_case_init(&ref, t, batch, channel, train, BNG_DATA_RANDOM, seed);
    bng_case_init_like(&k, &ref);
    t->entry_p(ref.x.p, ref.dy.p, ref.dx.p, ref.params);
    bng_case_check(&ref);
    for (m = 0; m < sizeof masks / sizeof masks[0]; m++) {
        /* The full mask, and half the others in turn: the cases of consecutive seeds
         * (the callers' channel counts of one batch) take every mask between them. */
        if ((masks[m] & FULL_MASK) == 0 || (masks[m] != FULL_MASK && (m + seed) % 2 != 0))
            continue;
        bng_case_mark_outputs(&k);
        bng_case_run_shared(&k, k.x.p, k.dy.p, k.dx.p, masks[m]);
        if (k.params[BNG_PARAM_STATUS] != BNG_OK)
            ck_abort_msg("_s mask %#x: status %lld", masks[m], k.params[BNG_PARAM_STATUS]);
        if (memcmp(k.dx.p, ref.dx.p, ref.dx.bytes) || memcmp(k.dbias.p, ref.dbias.p, ref.dbias.bytes)
            || memcmp(k.dscale.p, ref.dscale.p, ref.dscale.bytes))
            ck_abort_msg("%s %zux%zu train=%d: _s with mask %#x differs from _p", t->name,
                         batch, channel, train, masks[m]);
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
    size_t off[8], n = off_plan_channels(T, off), i, b;
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
                expect_same_bytes(&k.dbias, &ref.dbias, "dbias");
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
        expect_shared_error(k, k->x.p, k->dy.p, k->dx.p, 0, fits ? BNG_EOVERLAP : BNG_ERANGE,
                            what);
    }
    k->params[BNG_PARAM_BATCH] = 4;
    k->params[BNG_PARAM_CHANNEL] = (long long)k->channel;
}

START_TEST(test_shared_errors_write_status_only)
{
    bng_case k;
    long long saved;
    bng_case_init(&k, T, 4, T->specialized[0], 1, BNG_DATA_RANDOM, 1);
    expect_shared_error(&k, k.x.p, k.dy.p, k.dx.p, 0, BNG_ECOREMASK, "core_mask 0");
    if (BNG_TARGET_CORES < 31)
        expect_shared_error(&k, k.x.p, k.dy.p, k.dx.p, (int)(1u << BNG_TARGET_CORES),
                            BNG_ECOREMASK, "only a core beyond the cluster");
    expect_shared_error(&k, NULL, k.dy.p, k.dx.p, FULL_MASK, BNG_ENULL, "x NULL");
    expect_shared_error(&k, k.x.p, k.dy.p, NULL, FULL_MASK, BNG_ENULL, "dx NULL");
    saved = k.params[BNG_PARAM_DSCALE];
    k.params[BNG_PARAM_DSCALE] = 0;
    expect_shared_error(&k, k.x.p, k.dy.p, k.dx.p, FULL_MASK, BNG_ENULL, "dscale NULL");
    k.params[BNG_PARAM_DSCALE] = saved;
    expect_shared_error(&k, k.x.p, (char *)k.dy.p + 1, k.dx.p, FULL_MASK, BNG_EALIGN, "dy misaligned");
    k.params[BNG_PARAM_SCALE] += 1;
    expect_shared_error(&k, k.x.p, k.dy.p, k.dx.p, FULL_MASK, BNG_EALIGN, "scale misaligned");
    k.params[BNG_PARAM_SCALE] -= 1;
    k.params[BNG_PARAM_BATCH] = 0;
    expect_shared_error(&k, k.x.p, k.dy.p, k.dx.p, FULL_MASK, BNG_EBATCH, "batch 0");
    k.params[BNG_PARAM_BATCH] = 4;
    k.params[BNG_PARAM_CHANNEL] = -1;
    expect_shared_error(&k, k.x.p, k.dy.p, k.dx.p, FULL_MASK, BNG_ECHANNEL, "channel -1");
    k.params[BNG_PARAM_CHANNEL] = LLONG_MAX;
    expect_shared_error(&k, k.x.p, k.dy.p, k.dx.p, FULL_MASK, BNG_ERANGE, "channel LLONG_MAX");
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

/* ---- aliasing (the contract: docs/contract.md) ---- */

/* The output slots and the input slots an output may be the very array of. */
static const int stats_outputs[] = {BNG_PARAM_DBIAS, BNG_PARAM_DSCALE};
static const int stats_inputs[] = {BNG_PARAM_MEAN, BNG_PARAM_INVAR, BNG_PARAM_SCALE};

static bng_buffer *stats_buffer(bng_case *k, int slot)
{
    bng_buffer *buffers[] = {&k->mean, &k->invar, &k->scale, &k->dbias, &k->dscale};
    return buffers[slot - BNG_PARAM_MEAN];
}

static void run_entry(bng_case *k, int shared)
{
    if (shared)
        bng_case_run_shared(k, k->x.p, k->dy.p, k->dx.p, FULL_MASK);
    else
        k->t->entry_p(k->x.p, k->dy.p, k->dx.p, k->params);
}

/* dbias or dscale the very array of mean, invar or scale (and both at once): the
 * results are those of separate arrays, through _p and _s alike. */
static void expect_stats_alias_matches(const bng_dtype *t, int shared, int train, int out,
                                       int in, int out2, int in2)
{
    bng_case ref, k;
    const size_t channel = 2 * t->lanes + 5;

    bng_case_init(&ref, t, 70, channel, train, BNG_DATA_RANDOM, 12);
    bng_case_init_like(&k, &ref);
    t->entry_p(ref.x.p, ref.dy.p, ref.dx.p, ref.params);
    k.params[out] = k.params[in];
    if (out2)
        k.params[out2] = k.params[in2];
    run_entry(&k, shared);
    if (k.params[BNG_PARAM_STATUS] != BNG_OK)
        ck_abort_msg("%s params[%d] = params[%d]: status %lld", shared ? "_s" : "_p", out, in,
                     k.params[BNG_PARAM_STATUS]);
    expect_same_bytes(&k.dx, &ref.dx, "dx with an aliased per-channel output");
    expect_same_bytes(stats_buffer(&k, in), stats_buffer(&ref, out), "the aliased output");
    if (out2)
        expect_same_bytes(stats_buffer(&k, in2), stats_buffer(&ref, out2), "the second aliased output");
    else
        expect_same_bytes(stats_buffer(&k, out == BNG_PARAM_DBIAS ? BNG_PARAM_DSCALE : BNG_PARAM_DBIAS),
                          stats_buffer(&ref, out == BNG_PARAM_DBIAS ? BNG_PARAM_DSCALE : BNG_PARAM_DBIAS),
                          "the other output");
    bng_case_check_guards(&k);
    bng_case_free(&ref);
    bng_case_free(&k);
}

static void stats_aliases(const bng_dtype *t, int shared)
{
    size_t o, i;
    int train;
    for (train = 0; train <= 1; train++) {
        for (o = 0; o < 2; o++)
            for (i = 0; i < 3; i++)
                expect_stats_alias_matches(t, shared, train, stats_outputs[o], stats_inputs[i], 0, 0);
        expect_stats_alias_matches(t, shared, train, BNG_PARAM_DBIAS, BNG_PARAM_SCALE,
                                   BNG_PARAM_DSCALE, BNG_PARAM_INVAR);
    }
}

START_TEST(test_stats_outputs_may_be_inputs)
{
    stats_aliases(T, 0);
}
END_TEST

START_TEST(test_shared_stats_outputs_may_be_inputs)
{
    stats_aliases(T, 1);
}
END_TEST

/* Any overlap of an output other than the very same array is refused, before anything
 * is written; overlapping inputs are only read, and allowed. */
static void overlaps_refused(const bng_dtype *t, int shared)
{
    bng_case k;
    const size_t channel = t->lanes + 3, n = 5 * channel, stats = channel * t->stats_size;
    char *x, *dy, *dx;
    long long saved[5];
    int slot, i;
    struct { int slot; long long value; const char *what; } stats_cases[8];
    int n_stats = 0;

    /* A byte offset into x, dy or dx, rounded up to the per-channel type's alignment
     * (the misalignment check comes first). */
#define STATS_ALIGNED(bytes) (((bytes) + t->stats_size - 1) / t->stats_size * t->stats_size)
    bng_case_init(&k, t, 5, channel, 1, BNG_DATA_RANDOM, 5);
    x = k.x.p;
    dy = k.dy.p;
    dx = k.dx.p;
#define EXPECT_OVERLAP(xp, dyp, dxp, what) \
    expect_status_only(&k, xp, dyp, dxp, shared, FULL_MASK, BNG_EOVERLAP, what)
    EXPECT_OVERLAP(x, dy, x + t->size, "dx = x + 1 element");
    EXPECT_OVERLAP(x, dy, x - t->size, "dx = x - 1 element");
    EXPECT_OVERLAP(x, dy, dy + t->size, "dx = dy + 1 element");
    EXPECT_OVERLAP(x, dy, x + (n - 1) * t->size, "dx's first element is x's last");
    EXPECT_OVERLAP(dx + t->size, dy, dx, "x = dx + 1 element");
    for (slot = 0; slot < 5; slot++)
        saved[slot] = k.params[slot];
    stats_cases[n_stats].slot = BNG_PARAM_DBIAS; stats_cases[n_stats].value = saved[BNG_PARAM_DSCALE];
    stats_cases[n_stats++].what = "dbias = dscale";
    stats_cases[n_stats].slot = BNG_PARAM_DBIAS; stats_cases[n_stats].value = saved[BNG_PARAM_DSCALE] + (long long)t->stats_size;
    stats_cases[n_stats++].what = "dbias = dscale + 1 element";
    stats_cases[n_stats].slot = BNG_PARAM_DSCALE; stats_cases[n_stats].value = saved[BNG_PARAM_MEAN] + (long long)t->stats_size;
    stats_cases[n_stats++].what = "dscale = mean + 1 element";
    stats_cases[n_stats].slot = BNG_PARAM_DBIAS; stats_cases[n_stats].value = (long long)(intptr_t)dx;
    stats_cases[n_stats++].what = "dbias inside dx";
    stats_cases[n_stats].slot = BNG_PARAM_DSCALE; stats_cases[n_stats].value = (long long)(intptr_t)(x + STATS_ALIGNED(2 * t->size));
    stats_cases[n_stats++].what = "dscale inside x";
    stats_cases[n_stats].slot = BNG_PARAM_MEAN; stats_cases[n_stats].value = (long long)(intptr_t)(dx + STATS_ALIGNED(t->size * channel));
    stats_cases[n_stats++].what = "mean inside dx";
    stats_cases[n_stats].slot = BNG_PARAM_SCALE; stats_cases[n_stats].value = (long long)(intptr_t)(dx + STATS_ALIGNED(n * t->size - stats / 2));
    stats_cases[n_stats++].what = "scale straddling dx's end";
    for (i = 0; i < n_stats; i++) {
        k.params[stats_cases[i].slot] = stats_cases[i].value;
        EXPECT_OVERLAP(x, dy, dx, stats_cases[i].what);
        k.params[stats_cases[i].slot] = saved[stats_cases[i].slot];
    }
#undef EXPECT_OVERLAP
#undef STATS_ALIGNED
    /* Inputs overlapping inputs: x = dy, and mean = invar = scale, run. */
    bng_case_mark_outputs(&k);
    k.params[BNG_PARAM_INVAR] = k.params[BNG_PARAM_SCALE] = k.params[BNG_PARAM_MEAN];
    if (shared)
        bng_case_run_shared(&k, x, x, dx, FULL_MASK);
    else
        t->entry_p(x, x, dx, k.params);
    ck_assert_int_eq(k.params[BNG_PARAM_STATUS], BNG_OK);
    bng_case_check_guards(&k);
    bng_case_free(&k);
}

START_TEST(test_partial_overlap_refused)
{
    overlaps_refused(T, 0);
}
END_TEST

START_TEST(test_shared_partial_overlap_refused)
{
    overlaps_refused(T, 1);
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
            T->stats_set(k.invar.p, c, 1e-40);
        T->entry_p(k.x.p, k.dy.p, k.dx.p, k.params);
        bng_case_check(&k);
        bng_case_free(&k);
    }
}
END_TEST


/* ---- the entry points beyond the vendor's four (batch_norm_grad_ext.h) ---- */

#define EXT_OPS_PRESENT(t) (bng_dtype_has(t, BNG_OP_REDUCE))

/* The sums buffer's count, from its limbs (least significant first). */
static unsigned long long sums_count(const bng_case *k, const float *sums)
{
    unsigned long long count = 0;
    int i;
    for (i = BNG_SUMS_COUNT_LIMBS - 1; i >= 0; i--)
        count = (count << BNG_SUMS_LIMB_BITS) + (unsigned long long)sums[2 * k->channel + (size_t)i];
    return count;
}

/* Channel counts every extension test walks: a specialized one, one off the plan
 * within a chunk, one spanning chunks. */
static size_t ext_channels(const bng_dtype *t, size_t *out)
{
    out[0] = t->specialized[0];
    out[1] = t->lanes + 1;
    out[2] = t->generic_chunk + 7;
    return 3;
}

/* On one device, reduce then apply is the vendor's call bit for bit: the same
 * summation order, the same finalize. Through _p, and through _s with every mask. */
static void expect_reduce_apply_is_vendor(const bng_dtype *t, int shared, size_t batch,
                                          size_t channel, int train, unsigned seed)
{
    bng_case ref, k;
    size_t m;
    bng_case_init(&ref, t, batch, channel, train, BNG_DATA_RANDOM, seed);
    bng_case_init_like(&k, &ref);
    t->entry_p(ref.x.p, ref.dy.p, ref.dx.p, ref.params);
    for (m = 0; m < (shared ? sizeof masks / sizeof masks[0] : 1); m++) {
        const int mask = shared ? masks[m] : 0;
        if (shared && (mask & FULL_MASK) == 0)
            continue;
        bng_case_mark_outputs(&k);
        memset(k.sums.p, BNG_OUTPUT_MARK, k.sums.bytes);
        bng_case_call(&k, BNG_OP_REDUCE, shared, k.x.p, k.dy.p, NULL, mask);
        ck_assert_int_eq(k.params[BNG_PARAM_STATUS], BNG_OK);
        if (!bng_case_outputs_marked(&k))
            ck_abort_msg("%s reduce wrote dx, dbias or dscale", t->name);
        if (sums_count(&k, k.sums.p) != batch)
            ck_abort_msg("%s reduce %zux%zu: count %llu", t->name, batch, channel, sums_count(&k, k.sums.p));
        bng_case_call(&k, BNG_OP_APPLY, shared, k.x.p, k.dy.p, k.dx.p, mask);
        ck_assert_int_eq(k.params[BNG_PARAM_STATUS], BNG_OK);
        if (memcmp(k.dx.p, ref.dx.p, ref.dx.bytes) || memcmp(k.dbias.p, ref.dbias.p, ref.dbias.bytes)
            || memcmp(k.dscale.p, ref.dscale.p, ref.dscale.bytes))
            ck_abort_msg("%s %zux%zu train=%d %s mask %#x: reduce + apply differ from the vendor's _p",
                         t->name, batch, channel, train, shared ? "_s" : "_p", mask);
        bng_case_check_guards(&k);
    }
    bng_case_free(&ref);
    bng_case_free(&k);
}

static void reduce_apply_is_vendor(const bng_dtype *t, int shared)
{
    size_t batches[] = {1, 33, 300, 2049, 0}, ch[3], n = ext_channels(t, ch), b, c;
    int train;
    batches[4] = LARGE_BATCH;
    if (!EXT_OPS_PRESENT(t))
        return;
    for (b = 0; b < sizeof batches / sizeof batches[0]; b++)
        for (c = 0; c < n; c++)
            for (train = 0; train <= 1; train++)
                if (batches[b] * ch[c] <= SHARED_MAX_ELEMENTS / (shared ? 4 : 1))
                    expect_reduce_apply_is_vendor(t, shared, batches[b], ch[c], train,
                                                  (unsigned)(b * 10 + c * 2 + train));
}

START_TEST(test_ext_reduce_apply_is_vendor)
{
    reduce_apply_is_vendor(T, 0);
}
END_TEST

START_TEST(test_ext_shared_reduce_apply_is_vendor)
{
    reduce_apply_is_vendor(T, 1);
}
END_TEST

/* A batch split over devices of different sizes: reduce each slice, add the buffers
 * in device order, apply each slice. dx, dbias and dscale meet the bound of the whole
 * batch; every device's dbias and dscale are the same bits; the count is the batch. */
static void expect_split_within_bound(const bng_dtype *t, int shared, size_t batch, size_t channel,
                                      const size_t *rows, size_t devices, int train, unsigned seed)
{
    const size_t floats = 2 * channel + BNG_SUMS_COUNT_LIMBS;
    float *total = malloc(floats * sizeof(float)), *part = malloc(floats * sizeof(float));
    unsigned char *first_dbias = malloc(channel * t->stats_size), *first_dscale = malloc(channel * t->stats_size);
    bng_case k;
    size_t d, row, i;

    ck_assert_ptr_nonnull(total);
    ck_assert_ptr_nonnull(first_dscale);
    bng_case_init(&k, t, batch, channel, train, BNG_DATA_RANDOM, seed);
    for (d = 0, row = 0; d < devices; row += rows[d], d++) {
        const size_t at = row * channel * t->size;
        k.params[BNG_PARAM_BATCH] = (long long)rows[d];
        bng_case_call(&k, BNG_OP_REDUCE, shared, (char *)k.x.p + at, (char *)k.dy.p + at, NULL, FULL_MASK);
        ck_assert_int_eq(k.params[BNG_PARAM_STATUS], BNG_OK);
        memcpy(d == 0 ? total : part, k.sums.p, floats * sizeof(float));
        for (i = 0; d > 0 && i < floats; i++)      /* device order, from device 0's buffer */
            total[i] += part[i];
    }
    ck_assert_uint_eq(row, batch);
    memcpy(k.sums.p, total, floats * sizeof(float));
    if (sums_count(&k, total) != batch)
        ck_abort_msg("%s: combined count %llu, batch %zu", t->name, sums_count(&k, total), batch);
    for (d = 0, row = 0; d < devices; row += rows[d], d++) {
        const size_t at = row * channel * t->size;
        k.params[BNG_PARAM_BATCH] = (long long)rows[d];
        bng_case_call(&k, BNG_OP_APPLY, shared, (char *)k.x.p + at, (char *)k.dy.p + at,
                      (char *)k.dx.p + at, FULL_MASK);
        ck_assert_int_eq(k.params[BNG_PARAM_STATUS], BNG_OK);
        if (d == 0) {
            memcpy(first_dbias, k.dbias.p, k.dbias.bytes);
            memcpy(first_dscale, k.dscale.p, k.dscale.bytes);
        } else if (memcmp(first_dbias, k.dbias.p, k.dbias.bytes) || memcmp(first_dscale, k.dscale.p, k.dscale.bytes)) {
            ck_abort_msg("%s: device %zu's dbias or dscale differ from device 0's", t->name, d);
        }
    }
    k.params[BNG_PARAM_BATCH] = (long long)batch;
    bng_case_check(&k);         /* the whole batch's reference and bound */
    bng_case_free(&k);
    free(total);
    free(part);
    free(first_dbias);
    free(first_dscale);
}

static void split_within_bound(const bng_dtype *t, int shared)
{
    static const size_t three[] = {1, 700, 799}, five[] = {300, 33, 1024, 2, 141};
    size_t ch[3], n = ext_channels(t, ch), c;
    int train;
    if (!EXT_OPS_PRESENT(t))
        return;
    for (c = 0; c < n; c++)
        for (train = 0; train <= 1; train++) {
            expect_split_within_bound(t, shared, 1500, ch[c], three, 3, train, (unsigned)(c * 2 + train));
            expect_split_within_bound(t, shared, 1500, ch[c], five, 5, train, (unsigned)(c * 2 + train + 50));
        }
}

START_TEST(test_ext_split_within_bound)
{
    split_within_bound(T, 0);
}
END_TEST

START_TEST(test_ext_shared_split_within_bound)
{
    split_within_bound(T, 1);
}
END_TEST

/* dx-only is the vendor's inference dx bit for bit, reads neither x nor mean (NULL in
 * its block), writes neither dbias nor dscale; in place over dy too. */
static void dx_only_is_inference(const bng_dtype *t, int shared)
{
    size_t batches[] = {1, 300, 2049}, ch[3], n = ext_channels(t, ch), b, c, m;
    int in_place;
    if (!bng_dtype_has(t, BNG_OP_DX))
        return;
    for (b = 0; b < sizeof batches / sizeof batches[0]; b++)
        for (c = 0; c < n; c++)
            for (in_place = 0; in_place <= 1; in_place++) {
                bng_case ref, k;
                bng_case_init(&ref, t, batches[b], ch[c], 0, BNG_DATA_RANDOM, (unsigned)(b + c));
                bng_case_init_like(&k, &ref);
                t->entry_p(ref.x.p, ref.dy.p, ref.dx.p, ref.params);
                k.params[BNG_PARAM_MEAN] = k.params[BNG_PARAM_DBIAS] = k.params[BNG_PARAM_DSCALE] = 0;
                k.params[BNG_PARAM_IS_TRAIN] = 1;       /* not read */
                for (m = 0; m < (shared ? sizeof masks / sizeof masks[0] : 1); m++) {
                    void *out = in_place ? k.dy.p : k.dx.p;
                    if (shared && (masks[m] & FULL_MASK) == 0)
                        continue;
                    if (in_place)
                        memcpy(k.dy.p, ref.dy.p, ref.dy.bytes);
                    bng_case_call(&k, BNG_OP_DX, shared, NULL, k.dy.p, out, masks[m]);
                    ck_assert_int_eq(k.params[BNG_PARAM_STATUS], BNG_OK);
                    if (memcmp(out, ref.dx.p, ref.dx.bytes))
                        ck_abort_msg("%s %zux%zu dx-only%s mask %#x differs from the vendor's inference dx",
                                     t->name, batches[b], ch[c], in_place ? " in place" : "", masks[m]);
                    if (!bng_buffer_is_marked(&k.dbias) || !bng_buffer_is_marked(&k.dscale))
                        ck_abort_msg("%s: dx-only wrote dbias or dscale", t->name);
                    bng_case_check_guards(&k);
                }
                bng_case_free(&ref);
                bng_case_free(&k);
            }
}

START_TEST(test_ext_dx_only)
{
    dx_only_is_inference(T, 0);
}
END_TEST

START_TEST(test_ext_shared_dx_only)
{
    dx_only_is_inference(T, 1);
}
END_TEST

/* BNG_FLAG_ACCUMULATE, through ext (the vendor-shaped call) and apply: dbias and
 * dscale become old + new, in float32, rounded once (old as stored, new from the
 * float sums: sum dy, and invar * sum dy*(x - mean)); dx is the vendor's. The aliased
 * case (dbias the very array of scale) reads the old value from the same array. */
static void accumulate(const bng_dtype *t, int shared)
{
    size_t ch[3], n = ext_channels(t, ch), c, i;
    int train, op, alias;
    if (!EXT_OPS_PRESENT(t))
        return;
    for (c = 0; c < n; c++)
        for (train = 0; train <= 1; train++)
            for (op = 0; op < 2; op++)
                for (alias = 0; alias <= 1; alias++) {
                    const size_t batch = 301, C = ch[c];
                    const unsigned seed = (unsigned)(c * 8 + train * 4 + op * 2 + alias);
                    bng_case ref, k;
                    float *sums;
                    double *old_dbias = malloc(C * sizeof(double)), *old_dscale = malloc(C * sizeof(double));
                    bng_case_init(&ref, t, batch, C, train, BNG_DATA_RANDOM, seed);
                    bng_case_init_like(&k, &ref);
                    t->entry_p(ref.x.p, ref.dy.p, ref.dx.p, ref.params);
                    bng_case_call(&ref, BNG_OP_REDUCE, 0, ref.x.p, ref.dy.p, NULL, 0);
                    sums = ref.sums.p;
                    for (i = 0; i < C; i++) {
                        t->stats_set(k.dbias.p, i, 0.25 * (double)(i % 9) - 1.0);
                        t->stats_set(k.dscale.p, i, 3.0 - 0.5 * (double)(i % 5));
                    }
                    if (alias) {
                        memcpy(k.dbias.p, k.scale.p, k.scale.bytes);
                        k.params[BNG_PARAM_DBIAS] = k.params[BNG_PARAM_SCALE];
                    }
                    for (i = 0; i < C; i++) {
                        old_dbias[i] = t->stats_get(k.dbias.p, i);
                        old_dscale[i] = t->stats_get(k.dscale.p, i);
                    }
                    k.params[BNG_CASE_FLAGS] = 1;   /* BNG_FLAG_ACCUMULATE */
                    if (op == 1)
                        memcpy(k.sums.p, ref.sums.p, ref.sums.bytes);
                    bng_case_call(&k, op ? BNG_OP_APPLY : BNG_OP_EXT, shared, k.x.p, k.dy.p, k.dx.p, FULL_MASK);
                    ck_assert_int_eq(k.params[BNG_PARAM_STATUS], BNG_OK);
                    expect_same_bytes(&k.dx, &ref.dx, "dx when accumulating");
                    for (i = 0; i < C; i++) {
                        const float invar = (float)t->stats_get(k.invar.p, i);
                        bng_buffer one = ref.dbias;
                        double want_b, want_s;
                        /* old + new in float32, rounded once to the per-channel type */
                        t->stats_set(one.p, 0, (double)((float)old_dbias[i] + sums[i]));
                        want_b = t->stats_get(one.p, 0);
                        t->stats_set(one.p, 0, (double)((float)old_dscale[i] + invar * sums[C + i]));
                        want_s = t->stats_get(one.p, 0);
                        if (t->stats_get(alias ? k.scale.p : k.dbias.p, i) != want_b
                            || t->stats_get(k.dscale.p, i) != want_s)
                            ck_abort_msg("%s %s%s train=%d channel %zu: accumulated dbias %.9g dscale %.9g, expected %.9g %.9g",
                                         t->name, op ? "apply" : "ext", alias ? " (dbias = scale)" : "", train, i,
                                         t->stats_get(alias ? k.scale.p : k.dbias.p, i), t->stats_get(k.dscale.p, i), want_b, want_s);
                    }
                    bng_case_check_guards(&k);
                    bng_case_free(&ref);
                    bng_case_free(&k);
                    free(old_dbias);
                    free(old_dscale);
                }
}

START_TEST(test_ext_accumulate)
{
    accumulate(T, 0);
}
END_TEST

START_TEST(test_ext_shared_accumulate)
{
    accumulate(T, 1);
}
END_TEST

/* Without the flag, ext is the vendor's call (outputs never read), and the reserved
 * slots stay untouched. */
START_TEST(test_ext_without_flags_is_vendor)
{
    bng_case ref, k;
    int shared;
    if (!EXT_OPS_PRESENT(T))
        return;
    bng_case_init(&ref, T, 513, 2 * T->lanes + 5, 1, BNG_DATA_RANDOM, 9);
    bng_case_init_like(&k, &ref);
    T->entry_p(ref.x.p, ref.dy.p, ref.dx.p, ref.params);
    for (shared = 0; shared <= 1; shared++) {
        memset(k.dbias.p, 0xFF, k.dbias.bytes);
        bng_case_call(&k, BNG_OP_EXT, shared, k.x.p, k.dy.p, k.dx.p, FULL_MASK);
        ck_assert_int_eq(k.params[BNG_PARAM_STATUS], BNG_OK);
        expect_same_bytes(&k.dx, &ref.dx, "dx");
        expect_same_bytes(&k.dbias, &ref.dbias, "dbias");
        expect_same_bytes(&k.dscale, &ref.dscale, "dscale");
        bng_case_check_guards(&k);
    }
    bng_case_free(&ref);
    bng_case_free(&k);
}
END_TEST

/* An error call of `op`: the status is written and nothing else (dx, dbias, dscale,
 * and the sums buffer when the op writes it). */
static void expect_op_error(bng_case *k, int op, int shared, void *x, void *dy, void *dx, int mask,
                            long long expected, const char *what)
{
    unsigned char *sums_before = malloc(k->sums.bytes);
    ck_assert_ptr_nonnull(sums_before);
    bng_case_mark_outputs(k);
    memcpy(sums_before, k->sums.p, k->sums.bytes);
    k->params[BNG_PARAM_STATUS] = 0x77;
    bng_case_call(k, op, shared, x, dy, dx, mask);
    if (k->params[BNG_PARAM_STATUS] != expected)
        ck_abort_msg("%s op %d %s %s: status %lld, expected %lld", k->t->name, op, shared ? "_s" : "_p",
                     what, k->params[BNG_PARAM_STATUS], expected);
    if (!bng_case_outputs_marked(k) || memcmp(sums_before, k->sums.p, k->sums.bytes))
        ck_abort_msg("%s op %d %s %s: an output was written", k->t->name, op, shared ? "_s" : "_p", what);
    bng_case_check_guards(k);
    free(sums_before);
}

/* A case whose sums buffer holds a valid count for apply. */
static void valid_sums(bng_case *k, size_t count)
{
    float *sums = k->sums.p;
    size_t i;
    for (i = 0; i < 2 * k->channel; i++)
        sums[i] = 0.5f;
    for (i = 0; i < BNG_SUMS_COUNT_LIMBS; i++, count >>= BNG_SUMS_LIMB_BITS)
        sums[2 * k->channel + i] = (float)(count & ((1u << BNG_SUMS_LIMB_BITS) - 1u));
}

static void ext_errors(const bng_dtype *t, int shared)
{
    static const int ops[] = {BNG_OP_EXT, BNG_OP_REDUCE, BNG_OP_APPLY, BNG_OP_DX};
    /* the slots each op reads (mean, invar, scale, dbias, dscale; the sums) */
    static const int reads[][6] = {{1, 1, 1, 1, 1, 0}, {1, 0, 0, 0, 0, 1}, {1, 1, 1, 1, 1, 1}, {0, 1, 1, 0, 0, 0}};
    const int mask = FULL_MASK;
    size_t o, channel = (t->lanes + 3);
    bng_case k;
    if (!EXT_OPS_PRESENT(t))
        return;
    bng_case_init(&k, t, 5, channel, 1, BNG_DATA_RANDOM, 3);
    for (o = 0; o < 4; o++) {
        const int op = ops[o];
        char *x = k.x.p, *dy = k.dy.p, *dx = k.dx.p;
        void *xp = op == BNG_OP_DX ? NULL : x, *dxp = op == BNG_OP_REDUCE ? NULL : dx;
        const long long sums_at = k.params[BNG_CASE_SUMS];
        long long saved;
        int slot;

        valid_sums(&k, 5);
        /* NULLs: each array the op uses; the ones it does not use may be NULL. */
        if (op != BNG_OP_DX)
            expect_op_error(&k, op, shared, NULL, dy, dxp, mask, BNG_ENULL, "x NULL");
        expect_op_error(&k, op, shared, xp, NULL, dxp, mask, BNG_ENULL, "dy NULL");
        if (op != BNG_OP_REDUCE)
            expect_op_error(&k, op, shared, xp, dy, NULL, mask, BNG_ENULL, "dx NULL");
        for (slot = 0; slot < 6; slot++) {
            const int at = slot < 5 ? BNG_PARAM_MEAN + slot : BNG_CASE_SUMS;
            char what[40];
            saved = k.params[at];
            k.params[at] = 0;
            snprintf(what, sizeof what, "params[%d] NULL", at);
            if (reads[o][slot]) {
                expect_op_error(&k, op, shared, xp, dy, dxp, mask, BNG_ENULL, what);
                /* misaligned, then */
                k.params[at] = saved + 1;
                snprintf(what, sizeof what, "params[%d] misaligned", at);
                expect_op_error(&k, op, shared, xp, dy, dxp, mask, BNG_EALIGN, what);
            }
            k.params[at] = saved;
        }
        /* Shapes. */
        k.params[BNG_PARAM_BATCH] = 0;
        expect_op_error(&k, op, shared, xp, dy, dxp, mask, BNG_EBATCH, "batch 0");
        k.params[BNG_PARAM_BATCH] = 5;
        k.params[BNG_PARAM_CHANNEL] = -1;
        expect_op_error(&k, op, shared, xp, dy, dxp, mask, BNG_ECHANNEL, "channel -1");
        k.params[BNG_PARAM_CHANNEL] = LLONG_MAX;
        expect_op_error(&k, op, shared, xp, dy, dxp, mask, BNG_ERANGE, "channel LLONG_MAX");
        if (reads[o][5]) {
            /* The data within the address space, the sums (2 * channel floats and the
             * count's) beyond it. */
            k.params[BNG_PARAM_BATCH] = 1;
            k.params[BNG_PARAM_CHANNEL] = (long long)(ADDRESS_MAX >> 3) + 1;
            expect_op_error(&k, op, shared, xp, dy, dxp, mask, BNG_ERANGE, "sums beyond the address space");
            k.params[BNG_PARAM_BATCH] = 5;
        }
        k.params[BNG_PARAM_CHANNEL] = (long long)channel;
        /* A flag bit the call cannot honour (every extended call reads the flags):
         * refused, not ignored; ACCUMULATE only where dbias and dscale are written. */
        k.params[BNG_CASE_FLAGS] = (long long)1 << 30;
        expect_op_error(&k, op, shared, xp, dy, dxp, mask, BNG_CASE_EFLAGS, "an unknown flag bit");
        k.params[BNG_CASE_FLAGS] = (long long)1 << 40 | (op == BNG_OP_APPLY || op == BNG_OP_EXT);
        expect_op_error(&k, op, shared, xp, dy, dxp, mask, BNG_CASE_EFLAGS, "an unknown high flag bit");
        if (op == BNG_OP_REDUCE || op == BNG_OP_DX) {
            k.params[BNG_CASE_FLAGS] = BNG_CASE_ACCUMULATE;
            expect_op_error(&k, op, shared, xp, dy, dxp, mask, BNG_CASE_EFLAGS, "ACCUMULATE");
        }
        k.params[BNG_CASE_FLAGS] = 0;
        if (shared)
            expect_op_error(&k, op, shared, xp, dy, dxp, 0, BNG_ECOREMASK, "core_mask 0");
        /* Counts that do not add up (apply): fewer rows than this call's, a limb that
         * is negative, a fraction, NaN, Inf, or more than the buffers could sum to. */
        if (op == BNG_OP_APPLY) {
            float *limb = (float *)k.sums.p + 2 * channel;
            const float bad[] = {-1.0f, 0.5f, NAN, INFINITY, 16773121.0f};
            size_t b;
            valid_sums(&k, 4);
            expect_op_error(&k, op, shared, xp, dy, dxp, mask, BNG_EBATCH, "global count below batch");
            valid_sums(&k, 0);
            expect_op_error(&k, op, shared, xp, dy, dxp, mask, BNG_EBATCH, "global count 0");
            for (b = 0; b < sizeof bad / sizeof bad[0]; b++) {
                valid_sums(&k, 5);
                limb[b % BNG_SUMS_COUNT_LIMBS] = bad[b];
                expect_op_error(&k, op, shared, xp, dy, dxp, mask, BNG_EBATCH, "a bad limb");
            }
            valid_sums(&k, 5);
            limb[BNG_SUMS_COUNT_LIMBS - 1] = 16773120.0f;   /* 2^72-ish: beyond 2^62 */
            expect_op_error(&k, op, shared, xp, dy, dxp, mask, BNG_EBATCH, "a count beyond 2^62");
            /* a valid count larger than batch runs */
            valid_sums(&k, 5000);
            bng_case_call(&k, op, shared, xp, dy, dxp, mask);
            ck_assert_int_eq(k.params[BNG_PARAM_STATUS], BNG_OK);
            valid_sums(&k, 5);
        }
        /* Overlaps: the sums buffer with another array of the call (reduce: an
         * output; apply: an input against the outputs), dx partly over dy. */
        if (op == BNG_OP_REDUCE) {
            k.params[BNG_CASE_SUMS] = (long long)(intptr_t)(x + 4);
            expect_op_error(&k, op, shared, xp, dy, dxp, mask, BNG_EOVERLAP, "sums inside x");
            k.params[BNG_CASE_SUMS] = k.params[BNG_PARAM_MEAN];
            expect_op_error(&k, op, shared, xp, dy, dxp, mask, BNG_EOVERLAP, "sums = mean");
            k.params[BNG_CASE_SUMS] = sums_at;
            /* its unused arrays may be anything: dbias over x */
            k.params[BNG_PARAM_DBIAS] = (long long)(intptr_t)x;
            bng_case_call(&k, op, shared, xp, dy, dxp, mask);
            ck_assert_int_eq(k.params[BNG_PARAM_STATUS], BNG_OK);
            k.params[BNG_PARAM_DBIAS] = (long long)(intptr_t)k.dbias.p;
        }
        if (op == BNG_OP_APPLY) {
            char *sums = k.sums.p;
            expect_op_error(&k, op, shared, xp, dy, sums, mask, BNG_EOVERLAP, "dx = sums");
            k.params[BNG_PARAM_DSCALE] = (long long)(intptr_t)(sums + 4 * channel);
            expect_op_error(&k, op, shared, xp, dy, dxp, mask, BNG_EOVERLAP, "dscale inside sums");
            k.params[BNG_PARAM_DSCALE] = (long long)(intptr_t)k.dscale.p;
            /* sums may overlap the inputs: x over the sums buffer reads both */
        }
        if (op != BNG_OP_REDUCE)
            expect_op_error(&k, op, shared, xp, dy, dy + t->size, mask, BNG_EOVERLAP, "dx = dy + 1 element");
        if (op == BNG_OP_DX) {
            k.params[BNG_PARAM_INVAR] = (long long)(intptr_t)(dx + t->stats_size * 2);
            expect_op_error(&k, op, shared, xp, dy, dxp, mask, BNG_EOVERLAP, "invar inside dx");
            k.params[BNG_PARAM_INVAR] = (long long)(intptr_t)k.invar.p;
        }
    }
    bng_case_free(&k);
}

/* The global count's limit (apply): a count of 2^62 or more is refused, however its
 * limbs spell it. A combined buffer's limbs are sums, not carried: {4096, 4095, 4095,
 * 4095, 4095, 3} is 2^62 with the most significant limbs below 2^50, so that only the
 * last limb added reaches the limit; one row fewer, {4095, ...}, is 2^62 - 1 and runs. */
static void count_limit(const bng_dtype *t, int shared)
{
    static const float at_limit[] = {4096.0f, 4095.0f, 4095.0f, 4095.0f, 4095.0f, 3.0f};
    const size_t channel = t->lanes + 3;
    float *limb;
    bng_case k;
    int i;
    if (!EXT_OPS_PRESENT(t))
        return;
    ck_assert_int_eq(BNG_SUMS_COUNT_LIMBS, sizeof at_limit / sizeof at_limit[0]);
    bng_case_init(&k, t, 5, channel, 1, BNG_DATA_RANDOM, 4);
    limb = (float *)k.sums.p + 2 * channel;
    valid_sums(&k, 5);
    for (i = 0; i < BNG_SUMS_COUNT_LIMBS; i++)
        limb[i] = at_limit[i];
    expect_op_error(&k, BNG_OP_APPLY, shared, k.x.p, k.dy.p, k.dx.p, FULL_MASK, BNG_EBATCH,
                    "a count of 2^62 whose last limb reaches it");
    limb[0] = 4095.0f;
    bng_case_call(&k, BNG_OP_APPLY, shared, k.x.p, k.dy.p, k.dx.p, FULL_MASK);
    ck_assert_int_eq(k.params[BNG_PARAM_STATUS], BNG_OK);
    bng_case_check_guards(&k);
    bng_case_free(&k);
}

START_TEST(test_ext_count_limit)
{
    count_limit(T, 0);
}
END_TEST

START_TEST(test_ext_shared_count_limit)
{
    count_limit(T, 1);
}
END_TEST

START_TEST(test_ext_errors_write_status_only)
{
    ext_errors(T, 0);
}
END_TEST

START_TEST(test_ext_shared_errors_write_status_only)
{
    ext_errors(T, 1);
}
END_TEST

/* ---- the explicit-argument calls (batchnormgrad.h) ---- */

static void expect_all_bytes_same(const bng_case *a, const bng_case *b, const char *what)
{
    const bng_buffer *in_a[] = {&a->x, &a->dy, &a->dx, &a->mean, &a->invar, &a->scale, &a->dbias, &a->dscale};
    const bng_buffer *in_b[] = {&b->x, &b->dy, &b->dx, &b->mean, &b->invar, &b->scale, &b->dbias, &b->dscale};
    const char *names[] = {"x", "dy", "dx", "mean", "invar", "scale", "dbias", "dscale"};
    size_t i;
    for (i = 0; i < sizeof names / sizeof names[0]; i++)
        if (memcmp(in_a[i]->p, in_b[i]->p, in_a[i]->bytes) != 0)
            ck_abort_msg("%s %zux%zu train=%d %s: %s differs from the parameter-block call",
                         a->t->name, a->batch, a->channel, a->is_train, what, names[i]);
}

/* An explicit call and its parameter-block twin (_p, or _s with `mask`) on the same
 * data: both BNG_OK, every array the same bytes after. in_place: dx is 1 dy, 2 x;
 * stats_alias: dbias is mean and dscale is scale. */
static void expect_explicit_matches_block(const bng_dtype *t, int shared, size_t batch,
                                          size_t channel, int is_train, int mask,
                                          int in_place, int stats_alias, unsigned seed)
{
    bng_case block, args;
    bng_case *both[2];
    void *dx[2];
    int i;

    bng_case_init(&block, t, batch, channel, is_train, BNG_DATA_RANDOM, seed);
    bng_case_init_like(&args, &block);
    both[0] = &block;
    both[1] = &args;
    for (i = 0; i < 2; i++) {
        bng_case *k = both[i];
        dx[i] = in_place == 1 ? k->dy.p : in_place == 2 ? k->x.p : k->dx.p;
        if (stats_alias) {
            k->params[BNG_PARAM_DBIAS] = k->params[BNG_PARAM_MEAN];
            k->params[BNG_PARAM_DSCALE] = k->params[BNG_PARAM_SCALE];
        }
    }
    if (shared)
        bng_case_run_shared(&block, block.x.p, block.dy.p, dx[0], mask);
    else
        t->entry_p(block.x.p, block.dy.p, dx[0], block.params);
    bng_case_run_explicit(&args, shared, args.x.p, args.dy.p, dx[1], mask);
    if (block.params[BNG_PARAM_STATUS] != BNG_OK || args.params[BNG_PARAM_STATUS] != BNG_OK)
        ck_abort_msg("%s %zux%zu mask %#x: status %lld (block), %lld (explicit)", t->name, batch,
                     channel, (unsigned)mask, block.params[BNG_PARAM_STATUS], args.params[BNG_PARAM_STATUS]);
    expect_all_bytes_same(&args, &block, shared ? "explicit _s" : "explicit _p");
    if (!in_place && !stats_alias)
        bng_case_check(&args);
    bng_case_check_guards(&args);
    bng_case_check_guards(&block);
    bng_case_free(&block);
    bng_case_free(&args);
}

/* is_train as the explicit calls take it: any nonzero int trains. */
static const int explicit_trains[] = {0, 1, -7};

START_TEST(test_explicit_matches_block)
{
    const size_t batches[] = {1, 33, 300};
    size_t off[8], n = off_plan_channels(T, off), i, b, r;
    int in_place, alias;
    for (b = 0; b < sizeof batches / sizeof batches[0]; b++)
        for (r = 0; r < 3; r++) {
            for (i = 0; i < T->n_specialized; i++)
                expect_explicit_matches_block(T, 0, batches[b], T->specialized[i], explicit_trains[r],
                                              0, 0, 0, (unsigned)(b * 10 + r + i * 100));
            for (i = 0; i < n; i++)
                expect_explicit_matches_block(T, 0, batches[b], off[i], explicit_trains[r], 0, 0, 0,
                                              (unsigned)(b * 10 + r + i * 100 + 7000));
        }
    for (r = 0; r < 2; r++)
        for (in_place = 0; in_place <= 2; in_place++)
            for (alias = 0; alias <= 1; alias++) {
                expect_explicit_matches_block(T, 0, 77, T->specialized[0], (int)r, 0, in_place, alias, 3);
                expect_explicit_matches_block(T, 0, 77, T->lanes + 1, (int)r, 0, in_place, alias, 4);
            }
}
END_TEST

/* Every mask on one row and on a few groups per core; several tiles per core (2049
 * rows) on the full cluster and a sparse mask. */
START_TEST(test_explicit_shared_matches_block)
{
    const size_t batches[] = {1, 300};
    const size_t channels[] = {T->specialized[0], T->lanes + 1};
    size_t m, b, c, r;
    int in_place, alias;
    for (m = 0; m < sizeof masks / sizeof masks[0]; m++)
        for (b = 0; b < sizeof batches / sizeof batches[0]; b++)
            for (c = 0; c < 2; c++)
                for (r = 0; r < 3; r++)
                    if (masks[m] & FULL_MASK)
                        expect_explicit_matches_block(T, 1, batches[b], channels[c], explicit_trains[r],
                                                      masks[m], 0, 0, (unsigned)(m * 100 + b * 10 + c * 3 + r));
    for (c = 0; c < 2; c++)
        for (r = 0; r < 2; r++) {
            expect_explicit_matches_block(T, 1, 2049, channels[c], (int)r, FULL_MASK, 0, 0, (unsigned)(c + 2 * r));
            expect_explicit_matches_block(T, 1, 2049, channels[c], (int)r, 0x5A, 0, 0, (unsigned)(c + 2 * r + 9));
        }
    for (r = 0; r < 2; r++)
        for (in_place = 0; in_place <= 2; in_place++)
            for (alias = 0; alias <= 1; alias++) {
                expect_explicit_matches_block(T, 1, 300, T->specialized[0], (int)r, FULL_MASK, in_place, alias, 5);
                expect_explicit_matches_block(T, 1, 300, T->lanes + 1, (int)r, 0x5A, in_place, alias, 6);
            }
}
END_TEST

/* An explicit call that fails a check: bng_last_status() is that check's status, and
 * nothing is written. */
static void expect_explicit_error(bng_case *k, int shared, void *x, void *dy, void *dx, int mask,
                                  long long expected, const char *what)
{
    bng_case_mark_outputs(k);
    bng_case_run_explicit(k, shared, x, dy, dx, mask);
    if (k->params[BNG_PARAM_STATUS] != expected)
        ck_abort_msg("%s explicit %s %s: last status %lld, expected %lld", k->t->name,
                     shared ? "_s" : "_p", what, k->params[BNG_PARAM_STATUS], expected);
    if (!bng_case_outputs_marked(k))
        ck_abort_msg("%s explicit %s %s: an output was written", k->t->name, shared ? "_s" : "_p", what);
    bng_case_check_guards(k);
}

/* Every status the checks give, in their order, through the explicit call's int
 * arguments; then a valid call reports BNG_OK again. */
static void explicit_errors(const bng_dtype *t, int shared)
{
    const int bad_batch[] = {0, -1, INT_MIN};
    const int bad_channel[] = {0, -3, INT_MIN};
    const int mask = FULL_MASK;
    bng_case k;
    char *x, *dy, *dx;
    long long saved;
    size_t i;
    int slot;

    bng_case_init(&k, t, 4, t->specialized[0], 1, BNG_DATA_RANDOM, 1);
    x = k.x.p;
    dy = k.dy.p;
    dx = k.dx.p;
    expect_explicit_error(&k, shared, NULL, dy, dx, mask, BNG_ENULL, "x NULL");
    expect_explicit_error(&k, shared, x, NULL, dx, mask, BNG_ENULL, "dy NULL");
    expect_explicit_error(&k, shared, x, dy, NULL, mask, BNG_ENULL, "dx NULL");
    for (slot = BNG_PARAM_MEAN; slot <= BNG_PARAM_DSCALE; slot++) {
        saved = k.params[slot];
        k.params[slot] = 0;
        expect_explicit_error(&k, shared, x, dy, dx, mask, BNG_ENULL, "a per-channel array NULL");
        k.params[slot] = saved + 1;
        expect_explicit_error(&k, shared, x, dy, dx, mask, BNG_EALIGN, "a per-channel array misaligned");
        k.params[slot] = saved;
    }
    expect_explicit_error(&k, shared, x + 1, dy, dx, mask, BNG_EALIGN, "x misaligned");
    expect_explicit_error(&k, shared, x, dy + 1, dx, mask, BNG_EALIGN, "dy misaligned");
    expect_explicit_error(&k, shared, x, dy, dx + 1, mask, BNG_EALIGN, "dx misaligned");
    for (i = 0; i < 3; i++) {
        k.params[BNG_PARAM_BATCH] = bad_batch[i];
        expect_explicit_error(&k, shared, x, dy, dx, mask, BNG_EBATCH, "batch < 1");
        expect_explicit_error(&k, shared, x, NULL, dx, mask, BNG_ENULL, "dy NULL and batch < 1");
    }
    k.params[BNG_PARAM_BATCH] = 4;
    for (i = 0; i < 3; i++) {
        k.params[BNG_PARAM_CHANNEL] = bad_channel[i];
        expect_explicit_error(&k, shared, x, dy, dx, mask, BNG_ECHANNEL, "channel < 1");
    }
    /* INT_MAX rows of INT_MAX channels: beyond the address space where it is (32 bits
     * on every shipped target). */
    if (ldexp((double)INT_MAX * (double)INT_MAX * (double)t->size, -BNG_ADDRESS_BITS) >= 1.0) {
        k.params[BNG_PARAM_BATCH] = INT_MAX;
        k.params[BNG_PARAM_CHANNEL] = INT_MAX;
        expect_explicit_error(&k, shared, x, dy, dx, mask, BNG_ERANGE, "batch and channel INT_MAX");
    }
    k.params[BNG_PARAM_BATCH] = 4;
    k.params[BNG_PARAM_CHANNEL] = (long long)k.channel;
    expect_explicit_error(&k, shared, x, dy, x + t->size, mask, BNG_EOVERLAP, "dx = x + 1 element");
    saved = k.params[BNG_PARAM_DBIAS];
    k.params[BNG_PARAM_DBIAS] = k.params[BNG_PARAM_DSCALE];
    expect_explicit_error(&k, shared, x, dy, dx, mask, BNG_EOVERLAP, "dbias = dscale");
    k.params[BNG_PARAM_DBIAS] = saved;
    if (shared) {
        expect_explicit_error(&k, shared, x, dy, dx, 0, BNG_ECOREMASK, "core_mask 0");
        if (BNG_TARGET_CORES < 31)
            expect_explicit_error(&k, shared, x, dy, dx, (int)(1u << BNG_TARGET_CORES), BNG_ECOREMASK,
                                  "only a core beyond the cluster");
        expect_explicit_error(&k, shared, x, dy, x + t->size, 0, BNG_EOVERLAP, "an overlap and core_mask 0");
    }
    bng_case_run_explicit(&k, shared, x, dy, dx, mask);
    ck_assert_int_eq(k.params[BNG_PARAM_STATUS], BNG_OK);
    bng_case_check(&k);
    bng_case_free(&k);
}

START_TEST(test_explicit_errors_write_nothing)
{
    explicit_errors(T, 0);
}
END_TEST

START_TEST(test_explicit_shared_errors_write_nothing)
{
    explicit_errors(T, 1);
}
END_TEST

/* ---- the order of the checks, as batch_norm_grad.h states it ---- */

/* The arguments of one explicit call, and whether the HAL refuses its memory. */
typedef struct {
    char *x, *dy, *dx;
    int mask, refuse;
} explicit_call;

/* Make the call fail check `status` (and k's parameters with it). */
static void break_check(bng_case *k, explicit_call *call, int status)
{
    switch (status) {
    case BNG_ENULL: call->x = NULL; break;
    case BNG_EALIGN: call->dy += 1; break;
    case BNG_EBATCH: k->params[BNG_PARAM_BATCH] = 0; break;
    case BNG_ECHANNEL: k->params[BNG_PARAM_CHANNEL] = 0; break;
    case BNG_ERANGE:
        k->params[BNG_PARAM_BATCH] = INT_MAX;
        k->params[BNG_PARAM_CHANNEL] = INT_MAX;
        break;
    case BNG_EOVERLAP: k->params[BNG_PARAM_DBIAS] = k->params[BNG_PARAM_DSCALE]; break;
    case BNG_ECOREMASK: call->mask = 0; break;
    case BNG_ENOMEM: call->refuse = 1; break;
    default: ck_abort_msg("status %d: the suite has no way to cause it", status);
    }
}

/* What break_check changes for `status`, a bit each: x, dy, batch, channel, dbias,
 * mask, the HAL. Two checks whose breaks share one cannot both fail in one call. */
static unsigned check_inputs(int status)
{
    switch (status) {
    case BNG_ENULL: return 1u;
    case BNG_EALIGN: return 2u;
    case BNG_EBATCH: return 4u;
    case BNG_ECHANNEL: return 8u;
    case BNG_ERANGE: return 4u | 8u;
    case BNG_EOVERLAP: return 16u;
    case BNG_ECOREMASK: return 32u;
    default: return 64u;    /* BNG_ENOMEM */
    }
}

/* Whether a call of this kind can fail check `status` here. */
static int check_reachable(const bng_dtype *t, int shared, int status)
{
    switch (status) {
    case BNG_ERANGE:        /* INT_MAX rows of INT_MAX channels beyond the address space */
        return ldexp((double)INT_MAX * (double)INT_MAX * (double)t->size, -BNG_ADDRESS_BITS) >= 1.0;
    case BNG_ECOREMASK: return shared;
    case BNG_ENOMEM: return shared && bng_test_hal_refuse(0, 0);
    default: return 1;
    }
}

/* BNG_STATUS_CHECK_ORDER, the header's list, against the code: for every pair of the
 * statuses this kind of call can give whose breaks touch different inputs, a call that
 * fails both checks gets the one listed first, with nothing written. (ERANGE needs a
 * batch and a channel of at least 1: its place beside EBATCH and ECHANNEL is not one a
 * call can see.) */
static void status_order(const bng_dtype *t, int shared)
{
    const int stated[] = {BNG_STATUS_CHECK_ORDER};
    const size_t count = sizeof stated / sizeof stated[0];
    int order[sizeof stated / sizeof stated[0]];
    long long params[BNG_CASE_PARAMS];
    size_t n = 0, i, j;
    bng_case k;

    for (i = 0; i < count; i++)
        if (check_reachable(t, shared, stated[i]))
            order[n++] = stated[i];
    bng_case_init(&k, t, 4, t->specialized[0], 1, BNG_DATA_RANDOM, 1);
    memcpy(params, k.params, sizeof params);
    for (i = 0; i < n; i++)
        for (j = i + 1; j < n; j++) {
            explicit_call call = {k.x.p, k.dy.p, k.dx.p, FULL_MASK, 0};
            char what[64];

            if (check_inputs(order[i]) & check_inputs(order[j]))
                continue;
            break_check(&k, &call, order[i]);
            break_check(&k, &call, order[j]);
            bng_test_hal_refuse(call.refuse, 0);
            snprintf(what, sizeof what, "status %d and %d", order[i], order[j]);
            expect_explicit_error(&k, shared, call.x, call.dy, call.dx, call.mask, order[i], what);
            bng_test_hal_refuse(0, 0);
            memcpy(k.params, params, sizeof params);
        }
    bng_case_free(&k);
}

START_TEST(test_status_order_is_the_headers)
{
    status_order(T, 0);
}
END_TEST

START_TEST(test_shared_status_order_is_the_headers)
{
    status_order(T, 1);
}
END_TEST

/* ---- fused ReLU backward (BNG_FLAG_RELU, batch_norm_grad_ext.h) ---- */

#if BNG_HAS_RELU
#define RELU_FLAG 4          /* BNG_FLAG_RELU */
#define RELU_Y_SLOT 15       /* BNG_PARAM_Y */
#define ACCUMULATE_FLAG 1    /* BNG_FLAG_ACCUMULATE */

/* The kinds of forward output the fused tests mask by: nothing masked, everything
 * masked, a random half, and the edge values of the rule (+0, -0, NaN of either sign,
 * +-Inf, tiny of either sign, the least subnormal of either sign) mixed with ordinary
 * ones. */
enum { Y_ALL_POSITIVE, Y_ALL_MASKED, Y_RANDOM, Y_EDGES, Y_KINDS };

/* The least subnormal of t's type, as bits: a double rounded to it would be flushed to
 * 0 in the suite's ftz mode. */
static void set_least_subnormal(const bng_dtype *t, void *y, size_t i, int negative)
{
    const uint32_t f32 = negative ? 0x80000001u : 1u;
    const uint16_t f16 = negative ? 0x8001u : 1u;
    if (t->size == 2)
        memcpy((unsigned char *)y + i * 2, &f16, 2);
    else
        memcpy((unsigned char *)y + i * 4, &f32, 4);
}

static void fill_y(const bng_dtype *t, void *y, size_t n, int kind, unsigned seed)
{
    const double edges[] = {0.0, -0.0, NAN, -NAN, INFINITY, -INFINITY, 6.103515625e-05,
                            -6.103515625e-05, 1.5, -1.5};
    const unsigned n_edges = sizeof edges / sizeof edges[0];
    unsigned state = seed * 2654435761u + 99u;
    size_t i;
    for (i = 0; i < n; i++) {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        switch (kind) {
        case Y_ALL_POSITIVE: t->set(y, i, 0.25 + (state >> 20) / 4096.0); break;
        case Y_ALL_MASKED: t->set(y, i, (state & 1) ? -0.0 : -(double)(state >> 20)); break;
        case Y_RANDOM: t->set(y, i, ((double)(state >> 8) / 16777216.0) - 0.5); break;
        default:
            if (state % (n_edges + 2) < n_edges)
                t->set(y, i, edges[state % (n_edges + 2)]);
            else
                set_least_subnormal(t, y, i, state % (n_edges + 2) == n_edges + 1);
            break;
        }
    }
}

/* dy values the mask must turn into +0 where y masks them: NaN, Inf, -0. */
static void spoil_masked_dy(const bng_dtype *t, void *dy, const void *y, size_t n)
{
    const double spoilers[] = {NAN, -INFINITY, -0.0, INFINITY};
    size_t i;
    for (i = 0; i < n; i++)
        if (!bng_relu_keeps(t, y, i) && i % 3 == 0)
            t->set(dy, i, spoilers[(i / 3) % 4]);
}

/* A pair of cases with the same data: `fused` runs with BNG_FLAG_RELU and y, `apart`
 * with dy through bng_relu_backward first and no flag. */
typedef struct {
    bng_case fused, apart;
    bng_buffer y;
} relu_pair;

static void relu_pair_init(relu_pair *p, const bng_dtype *t, size_t batch, size_t channel,
                           int train, int kind, unsigned seed)
{
    const size_t n = batch * channel;
    bng_case_init(&p->fused, t, batch, channel, train, BNG_DATA_RANDOM, seed);
    bng_case_init_like(&p->apart, &p->fused);
    p->y.raw = malloc(n * t->size + 2 * BNG_GUARD);
    ck_assert_ptr_nonnull(p->y.raw);
    memset(p->y.raw, BNG_GUARD_BYTE, n * t->size + 2 * BNG_GUARD);
    p->y.p = p->y.raw + BNG_GUARD;
    p->y.bytes = n * t->size;
    fill_y(t, p->y.p, n, kind, seed);
    spoil_masked_dy(t, p->fused.dy.p, p->y.p, n);
    memcpy(p->apart.dy.p, p->fused.dy.p, p->fused.dy.bytes);
    bng_relu_backward(t, p->apart.dy.p, p->y.p, n);
    p->fused.params[BNG_CASE_FLAGS] = RELU_FLAG;
    p->fused.params[RELU_Y_SLOT] = (long long)(intptr_t)p->y.p;
}

/* The block's y slot is the caller's: never written. Back to the case's sentinel for
 * bng_case_check_guards. */
static void relu_pair_free(relu_pair *p)
{
    if (p->fused.params[RELU_Y_SLOT] != (long long)(intptr_t)p->y.p)
        ck_abort_msg("%s: the y slot was written", p->fused.t->name);
    p->fused.params[RELU_Y_SLOT] = p->apart.params[RELU_Y_SLOT];
    bng_case_check_guards(&p->fused);
    bng_case_check_guards(&p->apart);
    if (!bng_buffer_guards_intact(&p->y))
        ck_abort_msg("%s: guard bytes around y were written", p->fused.t->name);
    bng_case_free(&p->fused);
    bng_case_free(&p->apart);
    free(p->y.raw);
}

static double float_at(const void *base, size_t i)
{
    float f;
    memcpy(&f, (const unsigned char *)base + i * sizeof f, sizeof f);
    return f;
}

/* The same bits element by element, except that two NaNs match whatever their signs
 * and payloads: which of two NaN operands an operation returns is left open by IEEE
 * 754, and the fused call's kernels are compiled apart from the unfused call's
 * (docs/contract.md, "Fused ReLU backward"). A NaN against a number still differs. */
static void expect_same_or_both_nan(const bng_buffer *a, const bng_buffer *b, size_t size,
                                    double (*get)(const void *, size_t), const char *what)
{
    size_t i;
    for (i = 0; i < a->bytes / size; i++)
        if (memcmp((const unsigned char *)a->p + i * size, (const unsigned char *)b->p + i * size,
                   size) != 0
            && !(isnan(get(a->p, i)) && isnan(get(b->p, i))))
            ck_abort_msg("%s differs at element %zu", what, i);
}

static void expect_pair_same(const relu_pair *p, int op, const char *what)
{
    const bng_case *a = &p->fused, *b = &p->apart;
    const bng_dtype *t = a->t;
    if (op != BNG_OP_REDUCE) {
        expect_same_or_both_nan(&a->dx, &b->dx, t->size, t->get, what);
        if (op != BNG_OP_DX) {
            expect_same_or_both_nan(&a->dbias, &b->dbias, t->stats_size, t->stats_get, what);
            expect_same_or_both_nan(&a->dscale, &b->dscale, t->stats_size, t->stats_get, what);
        }
    } else {
        expect_same_or_both_nan(&a->sums, &b->sums, sizeof(float), float_at, what);
    }
}

/* One op, fused and apart, on the same pair: the same bits. apply takes the sums the
 * separate pass's reduce gives (the same buffer in both). */
static void expect_fused_is_apart(relu_pair *p, int op, int shared, int mask, int accumulate)
{
    char what[160];
    int side;
    snprintf(what, sizeof what, "relu op %d %s mask %#x accumulate %d %zux%zu train %d",
             op, shared ? "_s" : "_p", mask, accumulate, p->fused.batch, p->fused.channel,
             p->fused.is_train);
    if (op == BNG_OP_APPLY) {
        bng_case_call(&p->apart, BNG_OP_REDUCE, 0, p->apart.x.p, p->apart.dy.p, NULL, 0);
        ck_assert_int_eq(p->apart.params[BNG_PARAM_STATUS], BNG_OK);
        memcpy(p->fused.sums.p, p->apart.sums.p, p->apart.sums.bytes);
    }
    for (side = 0; side < 2; side++) {
        bng_case *k = side ? &p->apart : &p->fused;
        bng_case_mark_outputs(k);
        if (accumulate) {
            memcpy(k->dbias.p, k->scale.p, k->scale.bytes);     /* some old values */
            memcpy(k->dscale.p, k->mean.p, k->mean.bytes);
            k->params[BNG_CASE_FLAGS] |= ACCUMULATE_FLAG;
        }
        bng_case_call(k, op, shared, k->x.p, k->dy.p, k->dx.p, mask);
        k->params[BNG_CASE_FLAGS] &= ~(long long)ACCUMULATE_FLAG;
        if (k->params[BNG_PARAM_STATUS] != BNG_OK)
            ck_abort_msg("%s %s (%s): status %lld", k->t->name, what, side ? "apart" : "fused",
                         k->params[BNG_PARAM_STATUS]);
    }
    expect_pair_same(p, op, what);
}

/* Every extended call, fused, equals the separate ReLU backward pass followed by the
 * unfused call, bit for bit: _p, or _s over several core masks; training and
 * inference; with and without accumulating; every kind of mask; channel counts on and
 * off the plan and across chunks; batches of one block, several groups, many tiles. */
static void relu_is_separate_pass(const bng_dtype *t, int shared)
{
    static const int ops[] = {BNG_OP_EXT, BNG_OP_REDUCE, BNG_OP_APPLY, BNG_OP_DX};
    static const int relu_masks[] = {0x1, 0x5A, FULL_MASK};
    size_t batches[] = {1, 45, 700, 0}, ch[3], n = ext_channels(t, ch), b, c, o;
    int kind, train;
    batches[3] = LARGE_BATCH / 2 + 17;
    for (b = 0; b < sizeof batches / sizeof batches[0]; b++)
        for (c = 0; c < n; c++)
            for (kind = 0; kind < Y_KINDS; kind++)
                for (train = 0; train <= 1; train++) {
                    const unsigned seed = (unsigned)(b * 100 + c * 10 + (size_t)kind * 2 + (size_t)train);
                    relu_pair p;
                    if (batches[b] * ch[c] > SHARED_MAX_ELEMENTS / (shared ? 4 : 1))
                        continue;
                    relu_pair_init(&p, t, batches[b], ch[c], train, kind, seed);
                    for (o = 0; o < sizeof ops / sizeof ops[0]; o++) {
                        /* _s: one mask per (case, call), in rotation: every mask meets
                         * every call over the cases, not every case. */
                        const size_t m = (seed + o) % (sizeof relu_masks / sizeof relu_masks[0]);
                        const int cores = relu_masks[m] & FULL_MASK;
                        const int mask = shared ? (cores ? cores : FULL_MASK) : 0;
                        const int can_accumulate = ops[o] == BNG_OP_EXT || ops[o] == BNG_OP_APPLY;
                        expect_fused_is_apart(&p, ops[o], shared, mask, 0);
                        if (can_accumulate && (seed + o) % 2 == 0)
                            expect_fused_is_apart(&p, ops[o], shared, mask, 1);
                    }
                    relu_pair_free(&p);
                }
}

START_TEST(test_relu_is_separate_pass)
{
    relu_is_separate_pass(T, 0);
}
END_TEST

START_TEST(test_relu_shared_is_separate_pass)
{
    relu_is_separate_pass(T, 1);
}
END_TEST

/* Each kernel's own ReLU ukernels, which an NHWC _p call runs on the caller's arrays:
 * every specialized count's and the generic kernel's (on a count whose second chunk has
 * a vector and a single-lane tail, so that the rows' stride is not the chunk's
 * channels), in training and inference, through the vendor-shaped call, reduce and dx-only,
 * on the rule's edge values with the masked dy spoiled, over a block and a partial one:
 * the fused call equals the separate pass bit for bit. */
START_TEST(test_relu_every_kernel_is_separate_pass)
{
    static const int ops[] = {BNG_OP_EXT, BNG_OP_REDUCE, BNG_OP_DX};
    size_t i, o;
    int train;
    for (i = 0; i <= T->n_specialized; i++)
        for (train = 0; train <= 1; train++) {
            const size_t channel = i < T->n_specialized ? T->specialized[i]
                                                         : T->generic_chunk + T->lanes + 3;
            relu_pair p;
            relu_pair_init(&p, T, 45, channel, train, Y_EDGES, (unsigned)(i * 2) + (unsigned)train);
            for (o = 0; o < sizeof ops / sizeof ops[0]; o++)
                expect_fused_is_apart(&p, ops[o], 0, 0, 0);
            relu_pair_free(&p);
        }
}
END_TEST

/* A dx of 8 MiB or more, which _p writes with streaming stores on x86 hosts
 * (include/bng_steps.h BNG_STREAM_DX_BYTES): pass 2 reads each keep word pass 1 left in
 * dx before its streaming stores overwrite that row. On the generic kernel's chunks and
 * single-lane tail, training and inference, the fused call equals the separate pass.
 * Plain runs only (under a sanitizer or valgrind, bng_test_quick(), it is too slow). */
START_TEST(test_relu_streaming_dx)
{
    const size_t channel = T->generic_chunk + T->lanes + 3;
    const size_t batch = ((size_t)8 << 20) / T->size / channel + 33;
    int train;
    if (bng_test_quick())
        return;
    for (train = 0; train <= 1; train++) {
        relu_pair p;
        relu_pair_init(&p, T, batch, channel, train, Y_RANDOM, 90u + (unsigned)train);
        ck_assert_uint_ge(p.fused.dx.bytes, (size_t)8 << 20);
        expect_fused_is_apart(&p, BNG_OP_EXT, 0, 0, 0);
        relu_pair_free(&p);
    }
}
END_TEST

/* The rule itself on the edge values, against the float64 reference: dx of a fused
 * ext call meets the bound of the reference run on dy masked as PyTorch masks it (a
 * masked element is +0 whatever dy held: no NaN reaches the sums from there). */
START_TEST(test_relu_edges_within_bound)
{
    relu_pair p;
    relu_pair_init(&p, T, 333, T->lanes + 3, 1, Y_EDGES, 5);
    bng_case_call(&p.fused, BNG_OP_EXT, 0, p.fused.x.p, p.fused.dy.p, p.fused.dx.p, 0);
    ck_assert_int_eq(p.fused.params[BNG_PARAM_STATUS], BNG_OK);
    memcpy(p.apart.dx.p, p.fused.dx.p, p.fused.dx.bytes);
    memcpy(p.apart.dbias.p, p.fused.dbias.p, p.fused.dbias.bytes);
    memcpy(p.apart.dscale.p, p.fused.dscale.p, p.fused.dscale.bytes);
    p.apart.params[BNG_PARAM_STATUS] = BNG_OK;
    bng_case_check(&p.apart);       /* the reference on the masked dy */
    relu_pair_free(&p);
}
END_TEST

/* y may be the very array of x or dy, or overlap them: inputs are only read. In place
 * (dx the very array of dy, or of x) the fused call equals the separate pass in place:
 * an in-place _p call may not leave its keep bits in dx, which it still reads. */
START_TEST(test_relu_y_shares_inputs)
{
    const size_t batch = 97, channel = 2 * T->lanes + 5, n = batch * channel;
    int shared, which;
    for (shared = 0; shared <= 1; shared++)
        for (which = 0; which < 4; which++) {
            relu_pair p;
            relu_pair_init(&p, T, batch, channel, 1, Y_RANDOM, (unsigned)(7 + which));
            if (which < 2) {
                /* y := x or dy: the separate pass masks by that array */
                bng_case *k = &p.fused;
                const void *y = which == 0 ? k->x.p : k->dy.p;
                memcpy(p.apart.dy.p, k->dy.p, k->dy.bytes);
                bng_relu_backward(T, p.apart.dy.p, y, n);
                k->params[RELU_Y_SLOT] = (long long)(intptr_t)y;
                bng_case_call(k, BNG_OP_EXT, shared, k->x.p, k->dy.p, k->dx.p, FULL_MASK);
                k->params[RELU_Y_SLOT] = (long long)(intptr_t)p.y.p;
            } else {
                /* in place: dx is dy (2) or x (3), in both */
                bng_buffer *into = which == 2 ? &p.fused.dy : &p.fused.x;
                bng_case_call(&p.fused, BNG_OP_EXT, shared, p.fused.x.p, p.fused.dy.p, into->p, FULL_MASK);
                memcpy(p.fused.dx.p, into->p, into->bytes);
            }
            ck_assert_int_eq(p.fused.params[BNG_PARAM_STATUS], BNG_OK);
            {
                bng_buffer *into = which == 2 ? &p.apart.dy : which == 3 ? &p.apart.x : &p.apart.dx;
                bng_case_call(&p.apart, BNG_OP_EXT, shared, p.apart.x.p, p.apart.dy.p, into->p, FULL_MASK);
                ck_assert_int_eq(p.apart.params[BNG_PARAM_STATUS], BNG_OK);
                if (which >= 2)
                    memcpy(p.apart.dx.p, into->p, into->bytes);
            }
            expect_pair_same(&p, BNG_OP_EXT, which == 0 ? "y = x" : which == 1 ? "y = dy"
                                           : which == 2 ? "in place of dy" : "in place of x");
            relu_pair_free(&p);
        }
}
END_TEST

/* Hostile y and flags, in section 4's order, nothing written on error: y NULL
 * (BNG_ENULL, before a bad batch), misaligned (BNG_EALIGN), y overlapping an output
 * (dx, dbias, dscale, reduce's sums: BNG_EOVERLAP), ACCUMULATE on reduce and dx-only,
 * an unknown bit (BNG_EFLAGS); a y slot holding garbage without the flag is not read. */
static void relu_errors(const bng_dtype *t, int shared)
{
    static const int ops[] = {BNG_OP_EXT, BNG_OP_REDUCE, BNG_OP_APPLY, BNG_OP_DX};
    const int mask = FULL_MASK;
    size_t o;
    for (o = 0; o < sizeof ops / sizeof ops[0]; o++) {
        const int op = ops[o];
        relu_pair p;
        bng_case *k = &p.fused;
        long long y;
        relu_pair_init(&p, t, 37, t->lanes + 3, 1, Y_RANDOM, 4);
        y = k->params[RELU_Y_SLOT];
        valid_sums(k, k->batch);
        k->params[RELU_Y_SLOT] = 0;
        expect_op_error(k, op, shared, k->x.p, k->dy.p, k->dx.p, mask, BNG_ENULL, "y NULL");
        k->params[BNG_PARAM_BATCH] = 0;
        expect_op_error(k, op, shared, k->x.p, k->dy.p, k->dx.p, mask, BNG_ENULL, "y NULL before batch 0");
        k->params[BNG_PARAM_BATCH] = (long long)k->batch;
        k->params[RELU_Y_SLOT] = (long long)(intptr_t)((char *)p.y.p + 1);
        expect_op_error(k, op, shared, k->x.p, k->dy.p, k->dx.p, mask, BNG_EALIGN, "y misaligned");
        k->params[RELU_Y_SLOT] = y;
        if (op != BNG_OP_REDUCE) {
            k->params[RELU_Y_SLOT] = (long long)(intptr_t)((char *)k->dx.p + t->size);
            expect_op_error(k, op, shared, k->x.p, k->dy.p, k->dx.p, mask, BNG_EOVERLAP, "y over dx");
            k->params[RELU_Y_SLOT] = (long long)(intptr_t)k->dx.p;
            expect_op_error(k, op, shared, k->x.p, k->dy.p, k->dx.p, mask, BNG_EOVERLAP, "y the very dx");
        }
        if (op == BNG_OP_EXT || op == BNG_OP_APPLY) {
            k->params[RELU_Y_SLOT] = (long long)(intptr_t)k->dscale.p;
            expect_op_error(k, op, shared, k->x.p, k->dy.p, k->dx.p, mask, BNG_EOVERLAP, "y over dscale");
            k->params[RELU_Y_SLOT] = (long long)(intptr_t)k->dbias.p;
            expect_op_error(k, op, shared, k->x.p, k->dy.p, k->dx.p, mask, BNG_EOVERLAP, "y over dbias");
        }
        if (op == BNG_OP_REDUCE) {
            k->params[RELU_Y_SLOT] = (long long)(intptr_t)k->sums.p;
            expect_op_error(k, op, shared, k->x.p, k->dy.p, k->dx.p, mask, BNG_EOVERLAP, "y over the sums");
        }
        k->params[RELU_Y_SLOT] = y;
        if (op == BNG_OP_REDUCE || op == BNG_OP_DX) {
            k->params[BNG_CASE_FLAGS] = RELU_FLAG | ACCUMULATE_FLAG;
            expect_op_error(k, op, shared, k->x.p, k->dy.p, k->dx.p, mask, BNG_CASE_EFLAGS, "relu + accumulate");
        }
        k->params[BNG_CASE_FLAGS] = RELU_FLAG | 8;
        expect_op_error(k, op, shared, k->x.p, k->dy.p, k->dx.p, mask, BNG_CASE_EFLAGS, "an unknown bit");
        /* without the flag the y slot is not looked at */
        k->params[BNG_CASE_FLAGS] = 0;
        k->params[RELU_Y_SLOT] = 3;
        bng_case_call(k, op, shared, k->x.p, k->dy.p, k->dx.p, mask);
        ck_assert_int_eq(k->params[BNG_PARAM_STATUS], BNG_OK);
        k->params[RELU_Y_SLOT] = y;
        relu_pair_free(&p);
    }
}

START_TEST(test_relu_errors_write_status_only)
{
    relu_errors(T, 0);
}
END_TEST

START_TEST(test_relu_shared_errors_write_status_only)
{
    relu_errors(T, 1);
}
END_TEST
#endif

#if !BNG_HAS_RELU
/* A target without relu refuses BNG_FLAG_RELU (4) on every extended call, whatever
 * slot 15 holds. */
START_TEST(test_relu_flag_refused_without_relu)
{
    static const int ops[] = {BNG_OP_EXT, BNG_OP_REDUCE, BNG_OP_APPLY, BNG_OP_DX};
    bng_case k;
    size_t o;
    if (!EXT_OPS_PRESENT(T))
        return;
    bng_case_init(&k, T, 9, T->lanes + 1, 1, BNG_DATA_RANDOM, 2);
    valid_sums(&k, k.batch);
    k.params[BNG_CASE_FLAGS] = 4;
    for (o = 0; o < sizeof ops / sizeof ops[0]; o++) {
        expect_op_error(&k, ops[o], 0, k.x.p, k.dy.p, k.dx.p, FULL_MASK, BNG_CASE_EFLAGS, "relu flag");
        expect_op_error(&k, ops[o], 1, k.x.p, k.dy.p, k.dx.p, FULL_MASK, BNG_CASE_EFLAGS, "relu flag");
    }
    bng_case_free(&k);
}
END_TEST
#endif

static Suite *suite(void)
{
    Suite *s = suite_create("batchnormgrad " BNG_TARGET_NAME);
    /* Tags: the cases a build flavour can change (make runs a HAL flavour's "shared"
     * cases, an arithmetic flavour's "private" ones, and every case on gnu). */
    struct { const char *name; const TTest *test; const char *tags; } tests[] = {
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
        {"stats_aliases", test_stats_outputs_may_be_inputs, "private"},
        {"overlap", test_partial_overlap_refused, "private"},
        {"shared_matches_private", test_shared_matches_private_every_mask, "shared"},
        {"shared_in_place", test_shared_in_place, "shared"},
        {"shared_errors", test_shared_errors_write_status_only, "shared"},
        {"hal_refusals", test_hal_refusals_write_nothing, "shared"},
        {"shared_stats_aliases", test_shared_stats_outputs_may_be_inputs, "shared"},
        {"shared_overlap", test_shared_partial_overlap_refused, "shared"},
        {"ext_reduce_apply", test_ext_reduce_apply_is_vendor, "private"},
        {"ext_split", test_ext_split_within_bound, "private"},
        {"ext_dx_only", test_ext_dx_only, "private"},
        {"ext_accumulate", test_ext_accumulate, "private"},
        {"ext_no_flags", test_ext_without_flags_is_vendor, "private shared"},
        {"ext_errors", test_ext_errors_write_status_only, "private"},
        {"ext_count_limit", test_ext_count_limit, "private"},
        {"ext_shared_reduce_apply", test_ext_shared_reduce_apply_is_vendor, "shared"},
        {"ext_shared_split", test_ext_shared_split_within_bound, "shared"},
        {"ext_shared_dx_only", test_ext_shared_dx_only, "shared"},
        {"ext_shared_accumulate", test_ext_shared_accumulate, "shared"},
        {"ext_shared_errors", test_ext_shared_errors_write_status_only, "shared"},
        {"ext_shared_count_limit", test_ext_shared_count_limit, "shared"},
        {"explicit", test_explicit_matches_block, "private"},
        {"explicit_errors", test_explicit_errors_write_nothing, "private"},
        {"explicit_shared", test_explicit_shared_matches_block, "shared"},
        {"explicit_shared_errors", test_explicit_shared_errors_write_nothing, "shared"},
        {"status_order", test_status_order_is_the_headers, "private"},
        {"shared_status_order", test_shared_status_order_is_the_headers, "shared"},
#if BNG_HAS_RELU
        {"relu", test_relu_is_separate_pass, "private"},
        {"relu_every_kernel", test_relu_every_kernel_is_separate_pass, "private"},
        {"relu_streaming_dx", test_relu_streaming_dx, "private"},
        {"relu_edges", test_relu_edges_within_bound, "private"},
        {"relu_y_shares_inputs", test_relu_y_shares_inputs, "private shared"},
        {"relu_errors", test_relu_errors_write_status_only, "private"},
        {"relu_shared", test_relu_shared_is_separate_pass, "shared"},
        {"relu_shared_errors", test_relu_shared_errors_write_status_only, "shared"},
#else
        {"relu_refused", test_relu_flag_refused_without_relu, "private shared"},
#endif
    };
    size_t i;

    for (i = 0; i < sizeof tests / sizeof tests[0]; i++) {
        TCase *tc = tcase_create(tests[i].name);
        tcase_set_tags(tc, tests[i].tags);
        tcase_set_timeout(tc, 120);
        tcase_add_loop_test(tc, tests[i].test, 0, bng_dtype_count);
        suite_add_tcase(s, tc);
    }
    bng_nchw_add_tests(s);
    return s;
}

int main(void)
{
    return bng_run_suite(suite());
}
