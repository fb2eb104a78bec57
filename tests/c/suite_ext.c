/* The entry points beyond the vendor's four (batch_norm_grad_ext.h): reduce then
 * apply is the vendor's call, a batch split across devices within the bound, dx-only,
 * accumulate, the block without flags, the errors, the count's limit (_p and _s).
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

/* The sums buffer's count, from its limbs (least significant first). */
static unsigned long long sums_count(const bng_case *k, const float *sums)
{
    unsigned long long count = 0;
    int i;
    for (i = BNG_SUMS_COUNT_LIMBS - 1; i >= 0; i--)
        count = (count << BNG_SUMS_LIMB_BITS) + (unsigned long long)sums[2 * k->channel + (size_t)i];
    return count;
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
    for (m = 0; m < (shared ? bng_test_mask_count : 1); m++) {
        const int mask = shared ? bng_test_masks[m] : 0;
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
    size_t batches[] = {1, 33, 300, 2049, 0}, ch[3], n = bng_ext_channels(t, ch), b, c;
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
    float *total = bng_test_alloc(floats * sizeof(float));
    float *part = bng_test_alloc(floats * sizeof(float));
    unsigned char *first_dbias = bng_test_alloc(channel * t->stats_size);
    unsigned char *first_dscale = bng_test_alloc(channel * t->stats_size);
    bng_case k;
    size_t d, row, i;

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
    bng_test_free(total);
    bng_test_free(part);
    bng_test_free(first_dbias);
    bng_test_free(first_dscale);
}

static void split_within_bound(const bng_dtype *t, int shared)
{
    static const size_t three[] = {1, 700, 799}, five[] = {300, 33, 1024, 2, 141};
    size_t ch[3], n = bng_ext_channels(t, ch), c;
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
    size_t batches[] = {1, 300, 2049}, ch[3], n = bng_ext_channels(t, ch), b, c, m;
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
                for (m = 0; m < (shared ? bng_test_mask_count : 1); m++) {
                    void *out = in_place ? k.dy.p : k.dx.p;
                    if (shared && (bng_test_masks[m] & FULL_MASK) == 0)
                        continue;
                    if (in_place)
                        memcpy(k.dy.p, ref.dy.p, ref.dy.bytes);
                    bng_case_call(&k, BNG_OP_DX, shared, NULL, k.dy.p, out, bng_test_masks[m]);
                    ck_assert_int_eq(k.params[BNG_PARAM_STATUS], BNG_OK);
                    if (memcmp(out, ref.dx.p, ref.dx.bytes))
                        ck_abort_msg("%s %zux%zu dx-only%s mask %#x differs from the vendor's inference dx",
                                     t->name, batches[b], ch[c], in_place ? " in place" : "", bng_test_masks[m]);
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
    size_t ch[3], n = bng_ext_channels(t, ch), c, i;
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
                    double *old_dbias = bng_test_alloc(C * sizeof(double));
                    double *old_dscale = bng_test_alloc(C * sizeof(double));
                    bng_case_init(&ref, t, batch, C, train, BNG_DATA_RANDOM, seed);
                    bng_case_init_like(&k, &ref);
                    t->entry_p(ref.x.p, ref.dy.p, ref.dx.p, ref.params);
                    bng_case_call(&ref, BNG_OP_REDUCE, 0, ref.x.p, ref.dy.p, NULL, 0);
                    sums = ref.sums.p;
                    for (i = 0; i < C; i++) {
                        bng_stats_set(t, k.dbias.p, i, 0.25 * (double)(i % 9) - 1.0);
                        bng_stats_set(t, k.dscale.p, i, 3.0 - 0.5 * (double)(i % 5));
                    }
                    if (alias) {
                        memcpy(k.dbias.p, k.scale.p, k.scale.bytes);
                        k.params[BNG_PARAM_DBIAS] = k.params[BNG_PARAM_SCALE];
                    }
                    for (i = 0; i < C; i++) {
                        old_dbias[i] = bng_stats_get(t, k.dbias.p, i);
                        old_dscale[i] = bng_stats_get(t, k.dscale.p, i);
                    }
                    k.params[BNG_CASE_FLAGS] = 1;   /* BNG_FLAG_ACCUMULATE */
                    if (op == 1)
                        memcpy(k.sums.p, ref.sums.p, ref.sums.bytes);
                    bng_case_call(&k, op ? BNG_OP_APPLY : BNG_OP_EXT, shared, k.x.p, k.dy.p, k.dx.p, FULL_MASK);
                    ck_assert_int_eq(k.params[BNG_PARAM_STATUS], BNG_OK);
                    bng_expect_same_bytes(&k.dx, &ref.dx, "dx when accumulating");
                    for (i = 0; i < C; i++) {
                        const float invar = (float)bng_stats_get(t, k.invar.p, i);
                        bng_buffer one = ref.dbias;
                        double want_b, want_s;
                        /* old + new in float32, rounded once to the per-channel type */
                        bng_stats_set(t, one.p, 0, (double)((float)old_dbias[i] + sums[i]));
                        want_b = bng_stats_get(t, one.p, 0);
                        bng_stats_set(t, one.p, 0, (double)((float)old_dscale[i] + invar * sums[C + i]));
                        want_s = bng_stats_get(t, one.p, 0);
                        if (bng_stats_get(t, alias ? k.scale.p : k.dbias.p, i) != want_b
                            || bng_stats_get(t, k.dscale.p, i) != want_s)
                            ck_abort_msg("%s %s%s train=%d channel %zu: accumulated dbias %.9g dscale %.9g, expected %.9g %.9g",
                                         t->name, op ? "apply" : "ext", alias ? " (dbias = scale)" : "", train, i,
                                         bng_stats_get(t, alias ? k.scale.p : k.dbias.p, i),
                                         bng_stats_get(t, k.dscale.p, i), want_b, want_s);
                    }
                    bng_case_check_guards(&k);
                    bng_case_free(&ref);
                    bng_case_free(&k);
                    bng_test_free(old_dbias);
                    bng_test_free(old_dscale);
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
        bng_expect_same_outputs(&k, &ref);
        bng_case_check_guards(&k);
    }
    bng_case_free(&ref);
    bng_case_free(&k);
}
END_TEST

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

        bng_case_valid_sums(&k, 5);
        /* NULLs: each array the op uses; the ones it does not use may be NULL. */
        if (op != BNG_OP_DX)
            bng_expect_refused(&k, op, shared, NULL, dy, dxp, mask, BNG_ENULL, "x NULL");
        bng_expect_refused(&k, op, shared, xp, NULL, dxp, mask, BNG_ENULL, "dy NULL");
        if (op != BNG_OP_REDUCE)
            bng_expect_refused(&k, op, shared, xp, dy, NULL, mask, BNG_ENULL, "dx NULL");
        for (slot = 0; slot < 6; slot++) {
            const int at = slot < 5 ? BNG_PARAM_MEAN + slot : BNG_CASE_SUMS;
            char what[40];
            saved = k.params[at];
            k.params[at] = 0;
            snprintf(what, sizeof what, "params[%d] NULL", at);
            if (reads[o][slot]) {
                bng_expect_refused(&k, op, shared, xp, dy, dxp, mask, BNG_ENULL, what);
                /* misaligned, then */
                k.params[at] = saved + 1;
                snprintf(what, sizeof what, "params[%d] misaligned", at);
                bng_expect_refused(&k, op, shared, xp, dy, dxp, mask, BNG_EALIGN, what);
            }
            k.params[at] = saved;
        }
        /* Shapes. */
        k.params[BNG_PARAM_BATCH] = 0;
        bng_expect_refused(&k, op, shared, xp, dy, dxp, mask, BNG_EBATCH, "batch 0");
        k.params[BNG_PARAM_BATCH] = 5;
        k.params[BNG_PARAM_CHANNEL] = -1;
        bng_expect_refused(&k, op, shared, xp, dy, dxp, mask, BNG_ECHANNEL, "channel -1");
        k.params[BNG_PARAM_CHANNEL] = LLONG_MAX;
        bng_expect_refused(&k, op, shared, xp, dy, dxp, mask, BNG_ERANGE, "channel LLONG_MAX");
        if (reads[o][5]) {
            /* The data within the address space, the sums (2 * channel floats and the
             * count's) beyond it. */
            k.params[BNG_PARAM_BATCH] = 1;
            k.params[BNG_PARAM_CHANNEL] = (long long)(ADDRESS_MAX >> 3) + 1;
            bng_expect_refused(&k, op, shared, xp, dy, dxp, mask, BNG_ERANGE, "sums beyond the address space");
            k.params[BNG_PARAM_BATCH] = 5;
        }
        k.params[BNG_PARAM_CHANNEL] = (long long)channel;
        /* A flag bit the call cannot honour (every extended call reads the flags):
         * refused, not ignored; ACCUMULATE only where dbias and dscale are written. */
        k.params[BNG_CASE_FLAGS] = (long long)1 << 30;
        bng_expect_refused(&k, op, shared, xp, dy, dxp, mask, BNG_CASE_EFLAGS, "an unknown flag bit");
        k.params[BNG_CASE_FLAGS] = (long long)1 << 40 | (op == BNG_OP_APPLY || op == BNG_OP_EXT);
        bng_expect_refused(&k, op, shared, xp, dy, dxp, mask, BNG_CASE_EFLAGS, "an unknown high flag bit");
        if (op == BNG_OP_REDUCE || op == BNG_OP_DX) {
            k.params[BNG_CASE_FLAGS] = BNG_CASE_ACCUMULATE;
            bng_expect_refused(&k, op, shared, xp, dy, dxp, mask, BNG_CASE_EFLAGS, "ACCUMULATE");
        }
        k.params[BNG_CASE_FLAGS] = 0;
        if (shared)
            bng_expect_refused(&k, op, shared, xp, dy, dxp, 0, BNG_ECOREMASK, "core_mask 0");
        /* Counts that do not add up (apply): fewer rows than this call's, a limb that
         * is negative, a fraction, NaN, Inf, or more than the buffers could sum to. */
        if (op == BNG_OP_APPLY) {
            float *limb = (float *)k.sums.p + 2 * channel;
            const float bad[] = {-1.0f, 0.5f, NAN, INFINITY, 16773121.0f};
            size_t b;
            bng_case_valid_sums(&k, 4);
            bng_expect_refused(&k, op, shared, xp, dy, dxp, mask, BNG_EBATCH, "global count below batch");
            bng_case_valid_sums(&k, 0);
            bng_expect_refused(&k, op, shared, xp, dy, dxp, mask, BNG_EBATCH, "global count 0");
            for (b = 0; b < sizeof bad / sizeof bad[0]; b++) {
                bng_case_valid_sums(&k, 5);
                limb[b % BNG_SUMS_COUNT_LIMBS] = bad[b];
                bng_expect_refused(&k, op, shared, xp, dy, dxp, mask, BNG_EBATCH, "a bad limb");
            }
            bng_case_valid_sums(&k, 5);
            limb[BNG_SUMS_COUNT_LIMBS - 1] = 16773120.0f;   /* 2^72-ish: beyond 2^62 */
            bng_expect_refused(&k, op, shared, xp, dy, dxp, mask, BNG_EBATCH, "a count beyond 2^62");
            /* a valid count larger than batch runs */
            bng_case_valid_sums(&k, 5000);
            bng_case_call(&k, op, shared, xp, dy, dxp, mask);
            ck_assert_int_eq(k.params[BNG_PARAM_STATUS], BNG_OK);
            bng_case_valid_sums(&k, 5);
        }
        /* Overlaps: the sums buffer with another array of the call (reduce: an
         * output; apply: an input against the outputs), dx partly over dy. */
        if (op == BNG_OP_REDUCE) {
            k.params[BNG_CASE_SUMS] = (long long)(intptr_t)(x + 4);
            bng_expect_refused(&k, op, shared, xp, dy, dxp, mask, BNG_EOVERLAP, "sums inside x");
            k.params[BNG_CASE_SUMS] = k.params[BNG_PARAM_MEAN];
            bng_expect_refused(&k, op, shared, xp, dy, dxp, mask, BNG_EOVERLAP, "sums = mean");
            k.params[BNG_CASE_SUMS] = sums_at;
            /* its unused arrays may be anything: dbias over x */
            k.params[BNG_PARAM_DBIAS] = (long long)(intptr_t)x;
            bng_case_call(&k, op, shared, xp, dy, dxp, mask);
            ck_assert_int_eq(k.params[BNG_PARAM_STATUS], BNG_OK);
            k.params[BNG_PARAM_DBIAS] = (long long)(intptr_t)k.dbias.p;
        }
        if (op == BNG_OP_APPLY) {
            char *sums = k.sums.p;
            bng_expect_refused(&k, op, shared, xp, dy, sums, mask, BNG_EOVERLAP, "dx = sums");
            k.params[BNG_PARAM_DSCALE] = (long long)(intptr_t)(sums + 4 * channel);
            bng_expect_refused(&k, op, shared, xp, dy, dxp, mask, BNG_EOVERLAP, "dscale inside sums");
            k.params[BNG_PARAM_DSCALE] = (long long)(intptr_t)k.dscale.p;
            /* sums may overlap the inputs: x over the sums buffer reads both */
        }
        if (op != BNG_OP_REDUCE)
            bng_expect_refused(&k, op, shared, xp, dy, dy + t->size, mask, BNG_EOVERLAP, "dx = dy + 1 element");
        if (op == BNG_OP_DX) {
            k.params[BNG_PARAM_INVAR] = (long long)(intptr_t)(dx + t->stats_size * 2);
            bng_expect_refused(&k, op, shared, xp, dy, dxp, mask, BNG_EOVERLAP, "invar inside dx");
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
    bng_case_valid_sums(&k, 5);
    for (i = 0; i < BNG_SUMS_COUNT_LIMBS; i++)
        limb[i] = at_limit[i];
    bng_expect_refused(&k, BNG_OP_APPLY, shared, k.x.p, k.dy.p, k.dx.p, FULL_MASK, BNG_EBATCH, "a count of 2^62 whose last limb reaches it");
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

void bng_ext_add_tests(Suite *s)
{
    const bng_test_case cases[] = {
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
    };
    bng_add_cases(s, cases, sizeof cases / sizeof cases[0]);
}
