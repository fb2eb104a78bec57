/* The explicit-argument calls (batchnormgrad.h): the block's results from int
 * arguments, and their errors through bng_last_status (_p and _s).
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
    size_t off[8], n = bng_off_plan_channels(T, off), i, b, r;
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
    for (m = 0; m < bng_test_mask_count; m++)
        for (b = 0; b < sizeof batches / sizeof batches[0]; b++)
            for (c = 0; c < 2; c++)
                for (r = 0; r < 3; r++)
                    if (bng_test_masks[m] & FULL_MASK)
                        expect_explicit_matches_block(T, 1, batches[b], channels[c], explicit_trains[r],
                                                      bng_test_masks[m], 0, 0, (unsigned)(m * 100 + b * 10 + c * 3 + r));
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
    bng_expect_refused(&k, BNG_CASE_EXPLICIT, shared, NULL, dy, dx, mask, BNG_ENULL, "x NULL");
    bng_expect_refused(&k, BNG_CASE_EXPLICIT, shared, x, NULL, dx, mask, BNG_ENULL, "dy NULL");
    bng_expect_refused(&k, BNG_CASE_EXPLICIT, shared, x, dy, NULL, mask, BNG_ENULL, "dx NULL");
    for (slot = BNG_PARAM_MEAN; slot <= BNG_PARAM_DSCALE; slot++) {
        saved = k.params[slot];
        k.params[slot] = 0;
        bng_expect_refused(&k, BNG_CASE_EXPLICIT, shared, x, dy, dx, mask, BNG_ENULL, "a per-channel array NULL");
        k.params[slot] = saved + 1;
        bng_expect_refused(&k, BNG_CASE_EXPLICIT, shared, x, dy, dx, mask, BNG_EALIGN, "a per-channel array misaligned");
        k.params[slot] = saved;
    }
    bng_expect_refused(&k, BNG_CASE_EXPLICIT, shared, x + 1, dy, dx, mask, BNG_EALIGN, "x misaligned");
    bng_expect_refused(&k, BNG_CASE_EXPLICIT, shared, x, dy + 1, dx, mask, BNG_EALIGN, "dy misaligned");
    bng_expect_refused(&k, BNG_CASE_EXPLICIT, shared, x, dy, dx + 1, mask, BNG_EALIGN, "dx misaligned");
    for (i = 0; i < 3; i++) {
        k.params[BNG_PARAM_BATCH] = bad_batch[i];
        bng_expect_refused(&k, BNG_CASE_EXPLICIT, shared, x, dy, dx, mask, BNG_EBATCH, "batch < 1");
        bng_expect_refused(&k, BNG_CASE_EXPLICIT, shared, x, NULL, dx, mask, BNG_ENULL, "dy NULL and batch < 1");
    }
    k.params[BNG_PARAM_BATCH] = 4;
    for (i = 0; i < 3; i++) {
        k.params[BNG_PARAM_CHANNEL] = bad_channel[i];
        bng_expect_refused(&k, BNG_CASE_EXPLICIT, shared, x, dy, dx, mask, BNG_ECHANNEL, "channel < 1");
    }
    /* INT_MAX rows of INT_MAX channels: beyond the address space where it is (32 bits
     * on every shipped target). */
    if (ldexp((double)INT_MAX * (double)INT_MAX * (double)t->size, -BNG_ADDRESS_BITS) >= 1.0) {
        k.params[BNG_PARAM_BATCH] = INT_MAX;
        k.params[BNG_PARAM_CHANNEL] = INT_MAX;
        bng_expect_refused(&k, BNG_CASE_EXPLICIT, shared, x, dy, dx, mask, BNG_ERANGE, "batch and channel INT_MAX");
    }
    k.params[BNG_PARAM_BATCH] = 4;
    k.params[BNG_PARAM_CHANNEL] = (long long)k.channel;
    bng_expect_refused(&k, BNG_CASE_EXPLICIT, shared, x, dy, x + t->size, mask, BNG_EOVERLAP, "dx = x + 1 element");
    saved = k.params[BNG_PARAM_DBIAS];
    k.params[BNG_PARAM_DBIAS] = k.params[BNG_PARAM_DSCALE];
    bng_expect_refused(&k, BNG_CASE_EXPLICIT, shared, x, dy, dx, mask, BNG_EOVERLAP, "dbias = dscale");
    k.params[BNG_PARAM_DBIAS] = saved;
    if (shared) {
        bng_expect_refused(&k, BNG_CASE_EXPLICIT, shared, x, dy, dx, 0, BNG_ECOREMASK, "core_mask 0");
        if (BNG_TARGET_CORES < 31)
            bng_expect_refused(&k, BNG_CASE_EXPLICIT, shared, x, dy, dx, (int)(1u << BNG_TARGET_CORES), BNG_ECOREMASK, "only a core beyond the cluster");
        bng_expect_refused(&k, BNG_CASE_EXPLICIT, shared, x, dy, x + t->size, 0, BNG_EOVERLAP, "an overlap and core_mask 0");
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

void bng_explicit_add_tests(Suite *s)
{
    const bng_test_case cases[] = {
        {"explicit", test_explicit_matches_block, "private"},
        {"explicit_errors", test_explicit_errors_write_nothing, "private"},
        {"explicit_shared", test_explicit_shared_matches_block, "shared"},
        {"explicit_shared_errors", test_explicit_shared_errors_write_nothing, "shared"},
    };
    bng_add_cases(s, cases, sizeof cases / sizeof cases[0]);
}
