/* Aliasing, as the contract allows and refuses it: outputs never read, the
 * per-channel outputs over inputs, partial overlaps refused (_p and _s).
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
    bng_expect_same_bytes(&k.dx, &ref.dx, "dx with an aliased per-channel output");
    bng_expect_same_bytes(stats_buffer(&k, in), stats_buffer(&ref, out), "the aliased output");
    if (out2)
        bng_expect_same_bytes(stats_buffer(&k, in2), stats_buffer(&ref, out2), "the second aliased output");
    else
        bng_expect_same_bytes(stats_buffer(&k, out == BNG_PARAM_DBIAS ? BNG_PARAM_DSCALE : BNG_PARAM_DBIAS),
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
    bng_expect_refused(&k, BNG_OP_FULL, shared, xp, dyp, dxp, FULL_MASK, BNG_EOVERLAP, what)
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

void bng_aliasing_add_tests(Suite *s)
{
    const bng_test_case cases[] = {
        {"stats_aliases", test_stats_outputs_may_be_inputs, "private"},
        {"overlap", test_partial_overlap_refused, "private"},
        {"shared_stats_aliases", test_shared_stats_outputs_may_be_inputs, "shared"},
        {"shared_overlap", test_shared_partial_overlap_refused, "shared"},
    };
    bng_add_cases(s, cases, sizeof cases / sizeof cases[0]);
}
