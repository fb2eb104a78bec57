/* The channel walk: every specialized count of a walk target (tests/walk/walk_targets.py
 * puts every boundary of the kernel plan in its channel list) through fp and hp, _p and
 * _s, against the float64 reference and its bound, with guard bytes around every
 * output; _s, and the generic kernel, must give _p's bits.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bng_dtypes.h"

#define T (bng_dtypes[_i])
#define FULL_MASK ((int)((1u << BNG_TARGET_CORES) - 1u))

/* One row, a few rows, and more than a block of BNG_BLOCK_ROWS rows: every core's
 * slice stays whole in its private memory between the passes of _s. */
static const size_t batches[] = {1, 3, BNG_BLOCK_ROWS + 13};

/* Rows whose x and dy overflow a core's private memory: on core 1 alone (mask 0x2) the
 * slice's first rows stream and only its last ones stay between the passes of _s. */
static size_t overflow_batch(const bng_dtype *t, size_t channel)
{
    return BNG_PRIVATE_BYTES / (2 * channel * t->size) + BNG_BLOCK_ROWS + 13;
}

static void expect_same(const bng_buffer *got, const bng_buffer *want, const char *what,
                        const bng_dtype *t, size_t batch, size_t channel, int train)
{
    if (memcmp(got->p, want->p, want->bytes) != 0)
        ck_abort_msg("%s %zux%zu train=%d: %s differs from _p", t->name, batch, channel,
                     train, what);
}

static void walk_one(const bng_dtype *t, size_t batch, size_t channel, int train, unsigned seed)
{
    static const int masks[] = {FULL_MASK, 0x2};
    bng_case ref, k;
    size_t m;

    bng_case_init(&ref, t, batch, channel, train, BNG_DATA_RANDOM, seed);
    bng_case_init_like(&k, &ref);
    t->entry_p(ref.x.p, ref.dy.p, ref.dx.p, ref.params);
    ck_assert_int_eq(ref.params[BNG_PARAM_STATUS], BNG_OK);
    bng_case_check(&ref);
    bng_case_check_guards(&ref);

    for (m = 0; m < sizeof masks / sizeof masks[0]; m++) {
        bng_case_mark_outputs(&k);
        bng_case_run_shared(&k, k.x.p, k.dy.p, k.dx.p, masks[m]);
        ck_assert_int_eq(k.params[BNG_PARAM_STATUS], BNG_OK);
        expect_same(&k.dx, &ref.dx, "_s dx", t, batch, channel, train);
        expect_same(&k.dbias, &ref.dbias, "_s dbias", t, batch, channel, train);
        expect_same(&k.dscale, &ref.dscale, "_s dscale", t, batch, channel, train);
        bng_case_check_guards(&k);
    }
    bng_case_mark_outputs(&k);
    t->run_kernel(1, batch, channel, train, k.x.p, k.dy.p, k.dx.p, k.params);
    expect_same(&k.dx, &ref.dx, "the generic kernel's dx", t, batch, channel, train);
    expect_same(&k.dbias, &ref.dbias, "the generic kernel's dbias", t, batch, channel, train);
    bng_case_check_guards(&k);
    bng_case_free(&ref);
    bng_case_free(&k);
}

/* Whether count i of n walks the overflow batch: every count, or at the quick size
 * (bng_test_quick: under a sanitizer or valgrind) every fourth and the last: the
 * overflow batch is a core's private memory of data whatever the count, nearly all of
 * the walk's elements. */
static int walks_overflow(size_t i, size_t n)
{
    return !bng_test_quick() || i % 4 == 0 || i + 1 == n;
}

START_TEST(test_walk_every_count)
{
    size_t i, b;
    int train;
    for (i = 0; i < T->n_specialized; i++) {
        ck_assert_uint_eq(T->config->kernel_for_channels(T->specialized[i])->channels, T->specialized[i]);
        for (b = 0; b < sizeof batches / sizeof batches[0]; b++)
            for (train = 0; train <= 1; train++)
                walk_one(T, batches[b], T->specialized[i], train, (unsigned)(i * 10 + b * 2 + train));
        if (walks_overflow(i, T->n_specialized))
            walk_one(T, overflow_batch(T, T->specialized[i]), T->specialized[i], 1,
                     (unsigned)(i * 10 + 9));
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("channel walk " BNG_TARGET_NAME);
    TCase *tc = tcase_create("walk");

    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, test_walk_every_count, 0, bng_dtype_count);
    suite_add_tcase(s, tc);
    return bng_run_suite(s);
}
