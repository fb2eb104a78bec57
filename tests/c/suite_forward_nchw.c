/* The training forward with channel axis 1 (BNG_FWD_NCHW, docs/contract.md section 15):
 * y, the saved and the moving statistics against the float64 reference under the
 * contract's bound (the NHWC suite's check on the same values as rows), at the
 * backward's NCHW extents (targets.yaml's and off it), with every flag set, on data
 * whose mean is 10^4 times its spread; the ReLU's bits in NCHW's layout; in place, _s
 * on every core mask and the synchronized forward's two calls, each the bits of one _p
 * call; the refusals NCHW adds. No cases without forward and nchw.
 */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bng_dtypes.h"
#include "bng_suites.h"

#if BNG_HAS_FWD_NCHW
#include "bng_forward_case.h"
#include "bng_fwd_nchw.h"

/* The library's row groups (bng_steps.h), which the bound counts. */
size_t bng_group_rows(size_t batch);

/* One NCHW call: k's arrays hold x and y as [batch][channel][spatial], k.batch the
 * planes, and the bits in NCHW's layout. */
typedef struct {
    fwd_case k;
    size_t spatial;
} nchw_fwd;

static size_t nf_at(const nchw_fwd *n, size_t b, size_t c, size_t s)
{
    return (b * n->k.channel + c) * n->spatial + s;
}

/* fwd_init's data for batch * spatial rows, each channel's values moved to the planes
 * (row b * spatial + s to element s of plane (b, c)); the block's shape NCHW's. */
static void nf_init(nchw_fwd *n, const bng_dtype *t, size_t batch, size_t channel, size_t spatial,
                    int data, long long flags, unsigned seed)
{
    fwd_case *k = &n->k;
    unsigned char *rows;
    size_t b, c, s;

    fwd_init(k, t, batch * spatial, channel, data, flags | BNG_FWD_NCHW, seed);
    n->spatial = spatial;
    k->batch = batch;
    rows = bng_test_alloc(k->x.bytes);
    memcpy(rows, k->x.p, k->x.bytes);
    for (b = 0; b < batch; b++)
        for (c = 0; c < channel; c++)
            for (s = 0; s < spatial; s++)
                memcpy((unsigned char *)k->x.p + nf_at(n, b, c, s) * t->size,
                       rows + ((b * spatial + s) * channel + c) * t->size, t->size);
    bng_test_free(rows);
    bng_buffer_free(&k->bits);
    k->bits = bng_buffer_new(BNG_FWD_RELU_BITS_ELEMENTS_NCHW(batch, channel, spatial, t->size) * t->size);
    memset(k->bits.p, BNG_OUTPUT_MARK, k->bits.bytes);
    k->params[BNG_FWD_PARAM_RELU_BITS] = (long long)(intptr_t)k->bits.p;
    k->params[BNG_PARAM_BATCH] = (long long)batch;
    k->params[BNG_FWD_PARAM_SPATIAL] = (long long)spatial;
}

/* Bit s of plane (b, c)'s words (the contract's layout, spelled here). */
static int nf_bit(const nchw_fwd *n, size_t b, size_t c, size_t s)
{
    const size_t e = n->k.t->size, per_word = 8 * e;
    const size_t words = (n->spatial + per_word - 1) / per_word;
    const unsigned char *at = (const unsigned char *)n->k.bits.p
                              + ((b * n->k.channel + c) * words + s / per_word) * e;
    uint32_t word = 0;
    uint16_t half;

    if (e == sizeof word) {
        memcpy(&word, at, sizeof word);
    } else {
        memcpy(&half, at, sizeof half);
        word = half;
    }
    return (int)((word >> (s % per_word)) & 1u);
}

/* With RELU_BITS each element's bit is its y's keep, a last word's missing elements'
 * 0; without it the bits are as they were. */
static void nf_check_bits(const nchw_fwd *n, const char *what)
{
    const fwd_case *k = &n->k;
    const size_t per_word = 8 * k->t->size;
    const size_t padded = (n->spatial + per_word - 1) / per_word * per_word;
    size_t b, c, s, i;

    if (!(k->params[BNG_PARAM_FLAGS] & BNG_FWD_RELU_BITS)) {
        for (i = 0; i < k->bits.bytes; i++)
            if (((const unsigned char *)k->bits.p)[i] != BNG_OUTPUT_MARK)
                ck_abort_msg("%s NCHW %s: the ReLU's bits written without RELU_BITS", k->t->name, what);
        return;
    }
    for (b = 0; b < k->batch; b++)
        for (c = 0; c < k->channel; c++)
            for (s = 0; s < padded; s++)
                if (nf_bit(n, b, c, s) != (s < n->spatial && fwd_keeps(k->t, k->y.p, nf_at(n, b, c, s))))
                    ck_abort_msg("%s NCHW %zux%zux%zu %s: ReLU bit of y[%zu][%zu][%zu] is %d",
                                 k->t->name, k->batch, k->channel, n->spatial, what, b, c, s,
                                 nf_bit(n, b, c, s));
}

static size_t nf_log2(size_t v)
{
    size_t l = 0;
    while (((size_t)1 << l) < v)
        l++;
    return l;
}

/* n's outputs against float64 (x as NCHW doubles, the moving statistics before): the
 * NHWC check on a view of the same values as batch * spatial rows, with NCHW's K (a
 * block's 32, a plane's blocks, its lanes pairwise, its tail, the planes of a row
 * group, the groups: docs/contract.md section 15); then the bits and slot 14. */
static void nf_check(const nchw_fwd *n, const double *x, const double *mm, const double *mv,
                     const char *what)
{
    const fwd_case *k = &n->k;
    const size_t rows = k->batch * n->spatial, group = bng_group_rows(k->batch);
    const size_t block = 32 * k->t->lanes;    /* BNG_NCHW_BLOCK_VECTORS vectors */
    fwd_case view = *k;
    double *x_rows = bng_test_alloc(rows * k->channel * sizeof *x_rows);
    size_t b, c, s;

    view.batch = rows;
    view.chain = 2.0 * (32 + (double)((n->spatial + block - 1) / block) + (double)nf_log2(k->t->lanes)
                        + 1 + (double)group + (double)((k->batch + group - 1) / group)) + 16;
    view.y = bng_buffer_new(k->y.bytes);
    view.bits = bng_buffer_new(k->t->size);
    memset(view.bits.p, BNG_OUTPUT_MARK, view.bits.bytes);
    view.params[BNG_PARAM_BATCH] = (long long)rows;
    view.params[BNG_FWD_PARAM_SPATIAL] = 0x5EED0000 + BNG_FWD_PARAM_SPATIAL;
    view.params[BNG_FWD_PARAM_RELU_BITS] = (long long)(intptr_t)view.bits.p;
    view.params[BNG_PARAM_FLAGS] &= ~(long long)(BNG_FWD_NCHW | BNG_FWD_RELU_BITS);
    for (b = 0; b < k->batch; b++)
        for (c = 0; c < k->channel; c++)
            for (s = 0; s < n->spatial; s++) {
                const size_t row = (b * n->spatial + s) * k->channel + c;
                x_rows[row] = x[nf_at(n, b, c, s)];
                memcpy((unsigned char *)view.y.p + row * k->t->size,
                       (const unsigned char *)k->y.p + nf_at(n, b, c, s) * k->t->size, k->t->size);
            }
    fwd_check(&view, x_rows, mm, mv, what);
    nf_check_bits(n, what);
    if (k->params[BNG_FWD_PARAM_SPATIAL] != (long long)n->spatial)
        ck_abort_msg("%s NCHW %s: slot 14 (spatial) was written", k->t->name, what);
    bng_buffer_free(&view.y);
    bng_buffer_free(&view.bits);
    bng_test_free(x_rows);
}

/* Run n with _p (y apart, or over x with in_place) and check it. */
static void nf_run_checked(nchw_fwd *n, int in_place, const char *what)
{
    fwd_case *k = &n->k;
    const bng_dtype *t = k->t;
    const size_t elements = k->batch * k->channel * n->spatial;
    double *x = bng_test_alloc(elements * sizeof *x), *mm = bng_test_alloc(k->channel * sizeof *mm);
    double *mv = bng_test_alloc(k->channel * sizeof *mv);
    size_t i;

    for (i = 0; i < elements; i++)
        x[i] = bng_get(t, k->x.p, i);
    for (i = 0; i < k->channel; i++) {
        mm[i] = bng_stats_get(t, k->moving_mean.p, i);
        mv[i] = bng_stats_get(t, k->moving_var.p, i);
    }
    if (in_place) {
        t->forward_p(k->x.p, k->x.p, k->params);
        memcpy(k->y.p, k->x.p, k->y.bytes);
    } else {
        t->forward_p(k->x.p, k->y.p, k->params);
    }
    nf_check(n, x, mm, mv, what);
    bng_test_free(x);
    bng_test_free(mm);
    bng_test_free(mv);
}

/* Planes for an extent: several row groups where they are small, a few where large. */
static size_t nf_batch_for(size_t spatial)
{
    return spatial >= 3000 ? 2 : spatial >= 100 ? 5 : 300;
}

/* Every extent, the flag sets in turn, random and large-mean data, against float64. */
START_TEST(test_forward_nchw_within_bound)
{
    size_t spatial[NCHW_MAX_EXTENTS], count = bng_nchw_extents(T, spatial), i;
    int data;

    for (i = 0; i < count; i++)
        for (data = DATA_RANDOM; data <= DATA_LARGE_MEAN; data++) {
            const size_t batch = nf_batch_for(spatial[i]);
            long long flags = fwd_flag_sets[(i * 2 + (size_t)data) % FWD_FLAG_SETS];
            nchw_fwd n;
            char what[64];

            if (batch * spatial[i] == 1 && (flags & BNG_FWD_TORCH))
                flags = 0;      /* refused with one value (the refusals below) */
            nf_init(&n, T, batch, 3, spatial[i], data, flags, (unsigned)(i * 2 + (size_t)data));
            snprintf(what, sizeof what, "spatial %zu flags %lld", spatial[i], flags);
            nf_run_checked(&n, 0, what);
            fwd_free(&n.k);
        }
}
END_TEST

/* The ReLU and its bits at every extent: y the plain call's y masked, bit for bit, the
 * bits y's keeps (nf_check), in place too. */
START_TEST(test_forward_nchw_relu)
{
    size_t spatial[NCHW_MAX_EXTENTS], count = bng_nchw_extents(T, spatial), i;

    for (i = 0; i < count; i++) {
        const size_t batch = nf_batch_for(spatial[i]);
        nchw_fwd plain, relu;
        size_t e;

        nf_init(&plain, T, batch, 2, spatial[i], DATA_RANDOM, 0, (unsigned)i + 40);
        nf_init(&relu, T, batch, 2, spatial[i], DATA_RANDOM, BNG_FWD_RELU | BNG_FWD_RELU_BITS,
                (unsigned)i + 40);
        T->forward_p(plain.k.x.p, plain.k.y.p, plain.k.params);
        nf_run_checked(&relu, (int)(i % 2), "relu and bits");
        for (e = 0; e < batch * 2 * spatial[i]; e++) {
            const double v = bng_get(T, plain.k.y.p, e), got = bng_get(T, relu.k.y.p, e);
            const int keep = fwd_keeps(T, plain.k.y.p, e);
            if (keep ? memcmp((unsigned char *)plain.k.y.p + e * T->size,
                              (unsigned char *)relu.k.y.p + e * T->size, T->size) != 0
                     : !(got == 0 && !signbit(got)))
                ck_abort_msg("%s NCHW spatial %zu: relu y[%zu] = %g, plain %g", T->name, spatial[i],
                             e, got, v);
        }
        fwd_free(&plain.k);
        fwd_free(&relu.k);
    }
}
END_TEST

/* y over x gives y apart, and the statistics, bit for bit: at every extent. */
START_TEST(test_forward_nchw_in_place)
{
    size_t spatial[NCHW_MAX_EXTENTS], count = bng_nchw_extents(T, spatial), i, f;

    for (i = 0; i < count; i++)
        for (f = 0; f < 2; f++) {
            const long long flags = f ? BNG_FWD_RELU | BNG_FWD_RELU_BITS : BNG_FWD_TORCH;
            nchw_fwd a, p;

            nf_init(&a, T, nf_batch_for(spatial[i]), 3, spatial[i], DATA_LARGE_MEAN, flags,
                    (unsigned)i + 60);
            fwd_copy(&p.k, &a.k);
            p.spatial = a.spatial;
            T->forward_p(a.k.x.p, a.k.y.p, a.k.params);
            ck_assert_int_eq(a.k.params[BNG_PARAM_STATUS], BNG_OK);
            T->forward_p(p.k.x.p, p.k.x.p, p.k.params);
            fwd_expect_same_outputs(&a.k, a.k.y.p, &p.k, p.k.x.p, "NCHW in place");
            fwd_free(&a.k);
            fwd_free(&p.k);
        }
}
END_TEST

/* _s gives _p's bits on every core mask (each case on the full mask and half the
 * others; the largest on the full mask alone), in place too: planes whole in a tile
 * (several to a tile, with the ReLU's bits too), streamed in pieces, kept on chip
 * between the passes, a channel larger than a core's private memory (its last tiles
 * kept, the rest read twice), pieces in a call that reads x once; each flag set in
 * turn where the case names none. */
START_TEST(test_forward_nchw_shared_matches_private)
{
    const long long bits = BNG_FWD_RELU | BNG_FWD_RELU_BITS, sets = -1;
    const struct {
        size_t batch, channel, spatial;
        long long flags;        /* sets: the flag sets in turn */
    } cases[] = {
        {1, 1, 1, sets}, {3, 5, 7, sets}, {2, 9, 196, sets}, {4, 3, 3136, sets},
        {2, 2, 12544, sets}, {40, 3, 49, sets}, {1, 2, 2 * 32 * 64 + 5, sets}, {2, 17, 784, sets},
        {3, 5, 49, bits}, {4, 3, 3136, bits}, {3, 2, 100000, bits}, {3, 2, 100000, 0},
        {2, 1, 200003, BNG_FWD_GLOBAL_STATS},
    };
    size_t i, m;

    if (T->forward_s == NULL)
        return;
    for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const size_t elements = cases[i].batch * cases[i].channel * cases[i].spatial;
        long long flags = cases[i].flags == sets ? fwd_flag_sets[i % FWD_FLAG_SETS] : cases[i].flags;
        nchw_fwd orig, ref;

        if (cases[i].batch * cases[i].spatial == 1 && (flags & BNG_FWD_TORCH))
            flags = 0;
        nf_init(&orig, T, cases[i].batch, cases[i].channel, cases[i].spatial, DATA_LARGE_MEAN,
                flags, (unsigned)i + 80);
        fwd_copy(&ref.k, &orig.k);
        fwd_null_unread(&ref.k);
        T->forward_p(ref.k.x.p, ref.k.y.p, ref.k.params);
        ck_assert_int_eq(ref.k.params[BNG_PARAM_STATUS], BNG_OK);
        for (m = 0; m < bng_test_mask_count; m++) {
            const int in_place = (int)((m + i) % 3 == 0);
            fwd_case k;
            char what[64];

            if ((bng_test_masks[m] & FULL_MASK) == 0
                || (bng_test_masks[m] != FULL_MASK && ((m + i) % 2 != 0 || elements > 100000)))
                continue;
            fwd_copy(&k, &orig.k);
            fwd_null_unread(&k);
            fwd_run_shared_on(&k, k.x.p, in_place ? k.x.p : k.y.p, bng_test_masks[m]);
            snprintf(what, sizeof what, "NCHW _s on mask %#x%s", (unsigned)bng_test_masks[m],
                     in_place ? " in place" : "");
            fwd_expect_same_outputs(&ref.k, ref.k.y.p, &k, in_place ? k.x.p : k.y.p, what);
            if (!in_place)
                bng_expect_same(orig.k.x.p, k.x.p, k.x.bytes, T->name, "forward NCHW _s's x");
            fwd_free(&k);
        }
        fwd_free(&orig.k);
        fwd_free(&ref.k);
    }
}
END_TEST

/* The synchronized forward's two calls on one device, _p and _s, NCHW: the bits of the
 * one call. */
START_TEST(test_forward_nchw_partials_one_device)
{
    const size_t spatial[] = {7, 784};
    size_t i, shared;

    for (i = 0; i < 2; i++)
        for (shared = 0; shared < (T->forward_s != NULL ? 2u : 1u); shared++) {
            nchw_fwd one, two;
            bng_buffer partials = bng_buffer_new(BNG_FWD_PARTIALS_FLOATS(3) * sizeof(float));

            nf_init(&one, T, 6, 3, spatial[i], DATA_LARGE_MEAN, BNG_FWD_RELU, (unsigned)i + 90);
            fwd_copy(&two.k, &one.k);
            T->forward_p(one.k.x.p, one.k.y.p, one.k.params);
            two.k.params[BNG_FWD_PARAM_PARTIALS] = (long long)(intptr_t)partials.p;
            two.k.params[BNG_PARAM_FLAGS] = BNG_FWD_NCHW | BNG_FWD_PARTIALS_OUT;
            if (shared)
                fwd_run_shared_on(&two.k, two.k.x.p, two.k.y.p, FULL_MASK);
            else
                T->forward_p(two.k.x.p, two.k.y.p, two.k.params);
            ck_assert_int_eq(two.k.params[BNG_PARAM_STATUS], BNG_OK);
            two.k.params[BNG_PARAM_FLAGS] = BNG_FWD_NCHW | BNG_FWD_PARTIALS_IN | BNG_FWD_RELU;
            if (shared)
                fwd_run_shared_on(&two.k, two.k.x.p, two.k.y.p, FULL_MASK);
            else
                T->forward_p(two.k.x.p, two.k.y.p, two.k.params);
            two.k.params[BNG_FWD_PARAM_PARTIALS] = one.k.params[BNG_FWD_PARAM_PARTIALS];
            fwd_expect_same_outputs(&one.k, one.k.y.p, &two.k, two.k.y.p,
                                    shared ? "NCHW partials out, in (_s)" : "NCHW partials out, in");
            fwd_free(&one.k);
            fwd_free(&two.k);
            bng_buffer_free(&partials);
        }
}
END_TEST

/* ---- steps 2 and 3 of a channel's statistics (bng_fwd_nchw.h), spelled here ---- */

/* Chan's merge of `rows` values' mean and M2 into the `done` values' at *mean and *m2,
 * with the contract's float weights: the first taken as it is, none changing nothing. */
static void lo_merge(float *mean, float *m2, size_t done, size_t rows, float part_mean,
                     float part_m2)
{
    float w_new, w_cross, delta;

    if (rows == 0)
        return;
    if (done == 0) {
        *mean = part_mean;
        *m2 = part_m2;
        return;
    }
    w_new = (float)rows / (float)(done + rows);
    w_cross = (float)done * w_new;
    delta = part_mean - *mean;
    *mean = *mean + delta * w_new;
    *m2 = *m2 + (part_m2 + delta * delta * w_cross);
}

static uint32_t lo_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* One channel of `batch` planes of `spatial` through the library's steps 2 and 3 (in
 * vectors of its steps' lanes, in the register below them: a split target's), each
 * plane's lane statistics drawn (a lane of no value: garbage, which must not count),
 * against the order spelled one lane at a time: lane i with lane i + lanes/2, ...,
 * each weighted by its count, then the planes by row group. Bit for bit. */
static void lo_check(size_t lanes, size_t batch, size_t spatial, uint32_t *state)
{
    static bng_fwd_nchw_sum_area area;
    const size_t group_rows = bng_group_rows(batch);
    float mean[BNG_NCHW_MAX_LANES], m2[BNG_NCHW_MAX_LANES];
    float group_mean = 0.0f, group_m2 = 0.0f, channel_mean = 0.0f, channel_m2 = 0.0f;
    size_t count[BNG_NCHW_MAX_LANES], b, i, width;
    bng_fwd_nchw_sums sums;

    bng_fwd_nchw_sums_start(&sums, &area, batch, spatial, lanes);
    for (b = 0; b < batch; b++) {
        const size_t in_group = b % group_rows;

        for (i = 0; i < lanes; i++) {
            count[i] = spatial / lanes + (i < spatial % lanes ? 1 : 0);
            *state = *state * 1664525u + 1013904223u;
            mean[i] = (float)(*state >> 8) / 16777216.0f - 0.5f;
            m2[i] = (float)(*state & 0xffu) / 64.0f;
            if (count[i] == 0)
                mean[i] = m2[i] = 1e30f * (mean[i] + 1.0f);
            area.lane_mean[i] = mean[i];
            area.lane_m2[i] = m2[i];
        }
        bng_fwd_nchw_plane_done(&sums, b);
        for (width = lanes / 2; width != 0; width /= 2)
            for (i = 0; i < width; i++) {
                lo_merge(&mean[i], &m2[i], count[i], count[i + width], mean[i + width], m2[i + width]);
                count[i] += count[i + width];
            }
        lo_merge(&group_mean, &group_m2, in_group * spatial, spatial, mean[0], m2[0]);
        if ((b + 1) % group_rows == 0 || b + 1 == batch)
            lo_merge(&channel_mean, &channel_m2, (b - in_group) * spatial,
                     (in_group + 1) * spatial, group_mean, group_m2);
    }
    if (lo_bits(area.mean[0]) != lo_bits(channel_mean) || lo_bits(area.m2[0]) != lo_bits(channel_m2))
        ck_abort_msg("%zu lanes, %zu planes of %zu: mean %a, M2 %a, not %a, %a", lanes, batch,
                     spatial, area.mean[0], area.m2[0], channel_mean, channel_m2);
}

/* Steps 2 and 3 at the storage type's lanes, on planes narrower than a vector, at one,
 * between and past them, and over row groups: the one check of this order at a split
 * target's f16 lanes (64, wider than its steps' 32), which no unified target shares. */
START_TEST(test_forward_nchw_lane_order)
{
    const size_t spatials[] = {1, 2, 3, 5, 7, 15, 16, 17, 31, 32, 33, 49, 63, 64, 65, 100,
                               127, 128, 196, 1001};
    const size_t batches[] = {1, 2, 3, 37};
    uint32_t state = 77u + (uint32_t)T->lanes;
    size_t s, b;

    for (s = 0; s < sizeof spatials / sizeof spatials[0]; s++)
        for (b = 0; b < sizeof batches / sizeof batches[0]; b++)
            lo_check(T->lanes, batches[b], spatials[s], &state);
}
END_TEST

/* What NCHW adds to the refusals, each the status alone, _p and _s: a spatial extent
 * below 1 (BNG_EBATCH), one value with TORCH (BNG_EBATCH), batch * spatial * channel
 * past the address space (BNG_ERANGE), the bits (NCHW's length) over x
 * (BNG_EOVERLAP); _s without a core's private memory (BNG_ENOMEM, or from a HAL that
 * breaks its promise, nothing written); on a split target, _p's workspace short
 * (BNG_ENOMEM). */
START_TEST(test_forward_nchw_refusals)
{
    int shared;

    for (shared = 0; shared < (T->forward_s != NULL ? 2 : 1); shared++) {
        nchw_fwd n;

        nf_init(&n, T, 2, 3, 5, DATA_RANDOM, BNG_FWD_RELU | BNG_FWD_RELU_BITS, 7);
        n.k.params[BNG_FWD_PARAM_SPATIAL] = 0;
        fwd_expect_refused_by(&n.k, n.k.x.p, n.k.y.p, shared, FULL_MASK, BNG_EBATCH, "spatial 0");
        n.k.params[BNG_FWD_PARAM_SPATIAL] = -5;
        fwd_expect_refused_by(&n.k, n.k.x.p, n.k.y.p, shared, FULL_MASK, BNG_EBATCH, "spatial -5");
        n.k.params[BNG_FWD_PARAM_SPATIAL] = (long long)(ADDRESS_MAX / 2);
        fwd_expect_refused_by(&n.k, n.k.x.p, n.k.y.p, shared, FULL_MASK, BNG_ERANGE,
                              "batch * spatial past the address space");
        n.k.params[BNG_FWD_PARAM_SPATIAL] = 5;
        /* the bits ending in x's first element: NCHW's length, batch * channel words
         * here, reaches it where NHWC's, channel words, would end before x */
        n.k.params[BNG_FWD_PARAM_RELU_BITS] =
            (long long)(intptr_t)((unsigned char *)n.k.x.p - (2 * 3 - 1) * n.k.t->size);
        fwd_expect_refused_by(&n.k, n.k.x.p, n.k.y.p, shared, FULL_MASK, BNG_EOVERLAP,
                              "bits of NCHW's length into x");
        n.k.params[BNG_FWD_PARAM_RELU_BITS] = (long long)(intptr_t)n.k.bits.p;
#if BNG_SPLIT_MEMORY
        if (!shared && bng_test_hal_refuse(0, 1)) {
            fwd_expect_refused_by(&n.k, n.k.x.p, n.k.y.p, 0, FULL_MASK, BNG_ENOMEM,
                                  "_p with a short workspace");
            bng_test_hal_refuse(0, 0);
        }
#endif
        if (shared && bng_test_fail_private_memory(1u << (BNG_TARGET_CORES / 2))) {
            fwd_expect_refused_by(&n.k, n.k.x.p, n.k.y.p, 1, FULL_MASK, BNG_ENOMEM,
                                  "a selected core without private memory");
            bng_test_fail_private_memory(0);
        }
        if (shared && bng_test_hal_refuse(1, 0)) {
            /* a host HAL that breaks its promise of private memory: nothing written */
            fwd_case before;
            fwd_copy(&before, &n.k);
            fwd_run_shared_on(&n.k, n.k.x.p, n.k.y.p, FULL_MASK);
            bng_test_hal_refuse(0, 0);
            if (memcmp(n.k.y.p, before.y.p, n.k.y.bytes) || memcmp(n.k.mean.p, before.mean.p, n.k.mean.bytes)
                || memcmp(n.k.bits.p, before.bits.p, n.k.bits.bytes))
                ck_abort_msg("%s forward NCHW _s without private memory wrote an output", T->name);
            fwd_free(&before);
        }
        fwd_free(&n.k);
        nf_init(&n, T, 1, 3, 1, DATA_RANDOM, BNG_FWD_TORCH, 8);
        fwd_expect_refused_by(&n.k, n.k.x.p, n.k.y.p, shared, FULL_MASK, BNG_EBATCH,
                              "one value with TORCH");
        fwd_free(&n.k);
    }
}
END_TEST
#endif

void bng_forward_nchw_add_tests(Suite *s)
{
#if BNG_HAS_FWD_NCHW
    const bng_test_case cases[] = {
        {"forward_nchw_lane_order", test_forward_nchw_lane_order, "private"},
        {"forward_nchw_within_bound", test_forward_nchw_within_bound, "private"},
        {"forward_nchw_relu", test_forward_nchw_relu, "private"},
        {"forward_nchw_in_place", test_forward_nchw_in_place, "private"},
        {"forward_nchw_refusals", test_forward_nchw_refusals, "shared forward"},
        {"forward_nchw_shared_matches_private", test_forward_nchw_shared_matches_private,
         "shared forward"},
        {"forward_nchw_partials_one_device", test_forward_nchw_partials_one_device,
         "shared forward"},
    };
    bng_add_cases(s, cases, sizeof cases / sizeof cases[0]);
#else
    (void)s;
#endif
}
