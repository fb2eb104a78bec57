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

#define T (bng_dtypes[_i])
#define FULL_MASK ((int)((1u << BNG_TARGET_CORES) - 1u))

/* Under a sanitizer or valgrind (10x slower or more; make memcheck sets
 * BNG_TEST_QUICK) the largest sweeps shrink; every path they cover still runs (several
 * row groups, streaming tiles, half-range sums). */
static int quick(void)
{
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
    return 1;
#else
    return getenv("BNG_TEST_QUICK") != NULL;
#endif
}
#define LARGE_BATCH ((size_t)(quick() ? 2600 : 20000))
#define SHARED_MAX_ELEMENTS ((size_t)(quick() ? 200000 : 2000000))

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
        const bng_kernel *k = T->registered(T->specialized[i]);
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
        ck_assert_ptr_eq(T->registered(off[i]), T->generic);
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
            bng_case_init(&b, T, batch, channel, train, BNG_DATA_RANDOM, (unsigned)i);
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
                bng_case_init(&k, T, 77, channels[c], train, BNG_DATA_RANDOM, 3);
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
    bng_case_init(&k, T, 513, 2 * T->lanes + 5, 1, BNG_DATA_RANDOM, 9);
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
    if (!bng_buffer_is_marked(&k->dx) || !bng_buffer_is_marked(&k->dbias)
        || !bng_buffer_is_marked(&k->dscale))
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
    k.params[BNG_PARAM_CHANNEL] = 1;
    k.params[BNG_PARAM_BATCH] = (long long)((1ull << (BNG_ADDRESS_BITS < 62 ? BNG_ADDRESS_BITS : 62)) / T->size + 1);
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
    ck_assert(bng_buffer_is_marked(&k.dx));
    ck_assert(bng_buffer_is_marked(&k.dbias));
    ck_assert(bng_buffer_is_marked(&k.dscale));
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
    t->entry_p(ref.x.p, ref.dy.p, ref.dx.p, ref.params);
    bng_case_check(&ref);
    bng_case_init(&k, t, batch, channel, train, BNG_DATA_RANDOM, seed);
    for (m = 0; m < sizeof masks / sizeof masks[0]; m++) {
        if ((masks[m] & FULL_MASK) == 0)
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
                bng_case_init(&k, T, 3000, channels[c], train, BNG_DATA_RANDOM, 4);
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
    bng_case_free(&k);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("batchnormgrad " BNG_TARGET_NAME);
    struct { const char *name; const TTest *test; } tests[] = {
        {"dispatch", test_dispatch_serves_each_count_its_kernel},
        {"specialized", test_specialized_within_bound},
        {"specialized_large_batch", test_specialized_large_batch},
        {"generic", test_generic_within_bound},
        {"large_mean", test_large_mean_small_spread},
        {"specialized_is_generic", test_specialized_matches_generic_bits},
        {"in_place", test_in_place_matches_out_of_place},
        {"outputs_not_read", test_outputs_are_never_read},
        {"errors", test_errors_write_status_only},
        {"params_null", test_params_null_touches_nothing},
        {"nan_inf", test_nan_and_inf_propagate},
        {"overflow", test_overflow_gives_signed_inf},
        {"subnormal", test_subnormal_inputs_are_not_flushed},
        {"half_range_sums", test_running_sums_beyond_half_range},
        {"shared_matches_private", test_shared_matches_private_every_mask},
        {"shared_in_place", test_shared_in_place},
        {"shared_errors", test_shared_errors_write_status_only},
    };
    size_t i;

    for (i = 0; i < sizeof tests / sizeof tests[0]; i++) {
        TCase *tc = tcase_create(tests[i].name);
        tcase_set_timeout(tc, 120);
        tcase_add_loop_test(tc, tests[i].test, 0, bng_dtype_count);
        suite_add_tcase(s, tc);
    }
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(suite());
    int failed;

    bng_test_init();
    /* No fork: the error ratios gathered across tests are reported at the end. */
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_SILENT);
    bng_report_error_ratios();
    srunner_print(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
