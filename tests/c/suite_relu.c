/* The fused ReLU backward (BNG_FLAG_RELU, batch_norm_grad_ext.h) against the
 * separate pass, from y and from the forward's keep bits (BNG_FLAG_RELU_BITS: packed
 * here by the suite's own predicate, and as the training forward writes them); on a
 * target without relu, the flags refused.
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

#if BNG_HAS_RELU
#if BNG_HAS_FORWARD
#include "bng_forward_case.h"
#endif

/* The kinds of forward output the fused tests mask by: nothing masked, everything
 * masked, a random half, and the edge values of the rule (+0, -0, NaN of either sign,
 * +-Inf, tiny of either sign, the least subnormal of either sign) mixed with ordinary
 * ones; where the target has the forward, y and its bits as the training forward with
 * BNG_FWD_RELU | BNG_FWD_RELU_BITS writes them. */
enum { Y_ALL_POSITIVE, Y_ALL_MASKED, Y_RANDOM, Y_EDGES, Y_FORWARD, Y_KINDS };

/* The least subnormal of t's type, as bits: a double rounded to it would be flushed to
 * 0 in the suite's ftz mode. */
static void set_least_subnormal(const bng_dtype *t, void *y, size_t i, int negative)
{
    bng_set_bits(t, y, i, negative ? 0x80000001u : 1u, negative ? 0x8001u : 1u);
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
        case Y_ALL_POSITIVE: bng_set(t, y, i, 0.25 + (state >> 20) / 4096.0); break;
        case Y_ALL_MASKED: bng_set(t, y, i, (state & 1) ? -0.0 : -(double)(state >> 20)); break;
        case Y_RANDOM: bng_set(t, y, i, ((double)(state >> 8) / 16777216.0) - 0.5); break;
        default:
            if (state % (n_edges + 2) < n_edges)
                bng_set(t, y, i, edges[state % (n_edges + 2)]);
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
            bng_set(t, dy, i, spoilers[(i / 3) % 4]);
}

/* A pair of cases with the same data: `fused` runs with BNG_FLAG_RELU and y (or, with
 * BNG_FLAG_RELU_BITS as well, y's keep bits), `apart` with dy through bng_relu_backward
 * first and no flag. */
typedef struct {
    bng_case fused, apart;
    bng_buffer y, bits;
} relu_pair;

/* y and its bits from the training forward with its fused ReLU, on x of the forward's
 * suite (Y_FORWARD). Without the forward, y as Y_RANDOM's and the suite's bits. */
static void forward_y(relu_pair *p, const bng_dtype *t, size_t batch, size_t channel,
                      unsigned seed)
{
#if BNG_HAS_FORWARD
    fwd_case f;

    fwd_init(&f, t, batch, channel, DATA_RANDOM, BNG_FWD_RELU | BNG_FWD_RELU_BITS, seed);
    t->forward_p(f.x.p, f.y.p, f.params);
    if (f.params[BNG_PARAM_STATUS] != BNG_OK)
        ck_abort_msg("%s: the forward's status %lld", t->name, f.params[BNG_PARAM_STATUS]);
    memcpy(p->y.p, f.y.p, f.y.bytes);
    p->bits = bng_buffer_new(f.bits.bytes);
    memcpy(p->bits.p, f.bits.p, f.bits.bytes);
    fwd_free(&f);
#else
    fill_y(t, p->y.p, batch * channel, Y_RANDOM, seed);
    p->bits = bng_keep_bits(t, p->y.p, batch, channel, channel, channel);
#endif
}

/* The fused case's slot 15 and flag: y (on 0), or the bits (1). */
static void relu_pair_use_bits(relu_pair *p, int bits)
{
    p->fused.params[BNG_CASE_FLAGS] = bits ? p->fused.params[BNG_CASE_FLAGS] | BNG_CASE_RELU_BITS
                                           : p->fused.params[BNG_CASE_FLAGS] & ~(long long)BNG_CASE_RELU_BITS;
    p->fused.params[BNG_CASE_Y] = (long long)(intptr_t)(bits ? p->bits.p : p->y.p);
}

static void relu_pair_init(relu_pair *p, const bng_dtype *t, size_t batch, size_t channel,
                           int train, int kind, unsigned seed)
{
    const size_t n = batch * channel;
    bng_case_init(&p->fused, t, batch, channel, train, BNG_DATA_RANDOM, seed);
    bng_case_init_like(&p->apart, &p->fused);
    p->y = bng_buffer_new(n * t->size);
    if (kind == Y_FORWARD)
        forward_y(p, t, batch, channel, seed);
    else {
        fill_y(t, p->y.p, n, kind, seed);
        p->bits = bng_keep_bits(t, p->y.p, batch, channel, channel, channel);
    }
    spoil_masked_dy(t, p->fused.dy.p, p->y.p, n);
    memcpy(p->apart.dy.p, p->fused.dy.p, p->fused.dy.bytes);
    bng_relu_backward(t, p->apart.dy.p, p->y.p, n);
    p->fused.params[BNG_CASE_FLAGS] = BNG_CASE_RELU;
    p->fused.params[BNG_CASE_Y] = (long long)(intptr_t)p->y.p;
}

/* The block's y slot is the caller's: never written. Back to the case's sentinel for
 * bng_case_check_guards. */
static void relu_pair_free(relu_pair *p)
{
    if (p->fused.params[BNG_CASE_Y] != (long long)(intptr_t)p->y.p)
        ck_abort_msg("%s: the y slot was written", p->fused.t->name);
    p->fused.params[BNG_CASE_Y] = p->apart.params[BNG_CASE_Y];
    bng_case_check_guards(&p->fused);
    bng_case_check_guards(&p->apart);
    if (!bng_buffer_guards_intact(&p->y) || !bng_buffer_guards_intact(&p->bits))
        ck_abort_msg("%s: guard bytes around y or the bits were written", p->fused.t->name);
    bng_case_free(&p->fused);
    bng_case_free(&p->apart);
    bng_buffer_free(&p->y);
    bng_buffer_free(&p->bits);
}

/* The same bits element by element, except that two NaNs match whatever their signs
 * and payloads: which of two NaN operands an operation returns is left open by IEEE
 * 754, and the fused call's kernels are compiled apart from the unfused call's
 * (docs/contract.md, "Fused ReLU backward"). A NaN against a number still differs. */
static void expect_same_or_both_nan(const bng_buffer *a, const bng_buffer *b, size_t size,
                                    const char *what)
{
    size_t i;
    if (memcmp(a->p, b->p, a->bytes) == 0)   /* the usual case, in one call */
        return;
    for (i = 0; i < a->bytes / size; i++)
        if (memcmp((const unsigned char *)a->p + i * size, (const unsigned char *)b->p + i * size,
                   size) != 0
            && !(isnan(bng_value_get(size, a->p, i)) && isnan(bng_value_get(size, b->p, i))))
            ck_abort_msg("%s differs at element %zu", what, i);
}

static void expect_pair_same(const relu_pair *p, int op, const char *what)
{
    const bng_case *a = &p->fused, *b = &p->apart;
    const bng_dtype *t = a->t;
    if (op != BNG_OP_REDUCE) {
        expect_same_or_both_nan(&a->dx, &b->dx, t->size, what);
        if (op != BNG_OP_DX) {
            expect_same_or_both_nan(&a->dbias, &b->dbias, t->stats_size, what);
            expect_same_or_both_nan(&a->dscale, &b->dscale, t->stats_size, what);
        }
    } else {
        expect_same_or_both_nan(&a->sums, &b->sums, sizeof(float), what);
    }
}

/* One call of a case of the pair (its outputs marked first). */
static void relu_pair_call(bng_case *k, int op, int shared, int mask, int accumulate,
                           const char *what, const char *side)
{
    bng_case_mark_outputs(k);
    if (accumulate) {
        memcpy(k->dbias.p, k->scale.p, k->scale.bytes);     /* some old values */
        memcpy(k->dscale.p, k->mean.p, k->mean.bytes);
        k->params[BNG_CASE_FLAGS] |= BNG_CASE_ACCUMULATE;
    }
    bng_case_call(k, op, shared, k->x.p, k->dy.p, k->dx.p, mask);
    k->params[BNG_CASE_FLAGS] &= ~(long long)BNG_CASE_ACCUMULATE;
    if (k->params[BNG_PARAM_STATUS] != BNG_OK)
        ck_abort_msg("%s %s (%s): status %lld", k->t->name, what, side,
                     k->params[BNG_PARAM_STATUS]);
}

/* One op apart and fused, from y and from its keep bits, on the same pair: the same
 * bits, all three. apply takes the sums the separate pass's reduce gives (the same
 * buffer in each). */
static void expect_fused_is_apart(relu_pair *p, int op, int shared, int mask, int accumulate)
{
    char what[160];
    int bits;
    snprintf(what, sizeof what, "relu op %d %s mask %#x accumulate %d %zux%zu train %d",
             op, shared ? "_s" : "_p", mask, accumulate, p->fused.batch, p->fused.channel,
             p->fused.is_train);
    if (op == BNG_OP_APPLY) {
        bng_case_call(&p->apart, BNG_OP_REDUCE, 0, p->apart.x.p, p->apart.dy.p, NULL, 0);
        ck_assert_int_eq(p->apart.params[BNG_PARAM_STATUS], BNG_OK);
        memcpy(p->fused.sums.p, p->apart.sums.p, p->apart.sums.bytes);
    }
    relu_pair_call(&p->apart, op, shared, mask, accumulate, what, "apart");
    for (bits = 0; bits <= 1; bits++) {
        const char *from = bits ? "fused from the bits" : "fused from y";
        char label[200];
        snprintf(label, sizeof label, "%s, %s", what, from);
        relu_pair_use_bits(p, bits);
        relu_pair_call(&p->fused, op, shared, mask, accumulate, what, from);
        relu_pair_use_bits(p, 0);
        expect_pair_same(p, op, label);
    }
}

/* Every extended call, fused, equals the separate ReLU backward pass followed by the
 * unfused call, bit for bit: _p, or _s over several core masks; training and
 * inference; with and without accumulating; every kind of mask; channel counts on and
 * off the plan and across chunks; batches of one block, several groups, many tiles. */
static void relu_is_separate_pass(const bng_dtype *t, int shared)
{
    static const int ops[] = {BNG_OP_EXT, BNG_OP_REDUCE, BNG_OP_APPLY, BNG_OP_DX};
    static const int relu_masks[] = {0x1, 0x5A, FULL_MASK};
    /* (64: whole words of either type, no shorter last run) */
    size_t batches[] = {1, 45, 700, 0, 64}, ch[3], n = bng_ext_channels(t, ch), b, c, o;
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
 * Plain runs only (under a sanitizer or valgrind, bng_test_quick(), it is too slow);
 * not on a split target, whose _p stages its tiles and never streams. */
START_TEST(test_relu_streaming_dx)
{
    const size_t channel = T->generic_chunk + T->lanes + 3;
    const size_t batch = ((size_t)8 << 20) / T->size / channel + 33;
    int train;
    if (bng_test_quick() || BNG_SPLIT_MEMORY)
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
 * (dx the very array of dy, or of x) the fused call equals the separate pass in place,
 * from y and from the bits: an in-place _p call may not leave its keep bits in dx,
 * which it still reads. */
START_TEST(test_relu_y_shares_inputs)
{
    const size_t batch = 97, channel = 2 * T->lanes + 5, n = batch * channel;
    static const char *const whats[] = {"y = x", "y = dy", "in place of dy", "in place of x",
                                        "in place of dy, the bits", "in place of x, the bits"};
    int shared, which;
    for (shared = 0; shared <= 1; shared++)
        for (which = 0; which < 6; which++) {
            relu_pair p;
            relu_pair_init(&p, T, batch, channel, 1, Y_RANDOM, (unsigned)(7 + which));
            if (which < 2) {
                /* y := x or dy: the separate pass masks by that array */
                bng_case *k = &p.fused;
                const void *y = which == 0 ? k->x.p : k->dy.p;
                memcpy(p.apart.dy.p, k->dy.p, k->dy.bytes);
                bng_relu_backward(T, p.apart.dy.p, y, n);
                k->params[BNG_CASE_Y] = (long long)(intptr_t)y;
                bng_case_call(k, BNG_OP_EXT, shared, k->x.p, k->dy.p, k->dx.p, FULL_MASK);
                k->params[BNG_CASE_Y] = (long long)(intptr_t)p.y.p;
            } else {
                /* in place: dx is dy (2, 4) or x (3, 5), in both; from the bits (4, 5) */
                bng_buffer *into = which % 2 == 0 ? &p.fused.dy : &p.fused.x;
                relu_pair_use_bits(&p, which >= 4);
                bng_case_call(&p.fused, BNG_OP_EXT, shared, p.fused.x.p, p.fused.dy.p, into->p, FULL_MASK);
                relu_pair_use_bits(&p, 0);
                memcpy(p.fused.dx.p, into->p, into->bytes);
            }
            ck_assert_int_eq(p.fused.params[BNG_PARAM_STATUS], BNG_OK);
            {
                bng_buffer *into = which < 2 ? &p.apart.dx : which % 2 == 0 ? &p.apart.dy : &p.apart.x;
                bng_case_call(&p.apart, BNG_OP_EXT, shared, p.apart.x.p, p.apart.dy.p, into->p, FULL_MASK);
                ck_assert_int_eq(p.apart.params[BNG_PARAM_STATUS], BNG_OK);
                if (which >= 2)
                    memcpy(p.apart.dx.p, into->p, into->bytes);
            }
            expect_pair_same(&p, BNG_OP_EXT, whats[which]);
            relu_pair_free(&p);
        }
}
END_TEST

/* The bits in slot 15 (BNG_FLAG_RELU_BITS), hostile as y is, nothing written on error:
 * NULL, misaligned, over an output (dx, its very array, dbias, dscale, reduce's sums:
 * BNG_EOVERLAP; ending just before dx accepted, one element further refused: the
 * span is the bits' length, not y's), RELU_BITS without RELU (BNG_EFLAGS); over x, an
 * input, accepted. (NCHW's: suite_nchw.c.) */
static void relu_bits_errors(relu_pair *p, int op, int shared)
{
    bng_case *k = &p->fused;
    const size_t size = k->t->size, bits_bytes = p->bits.bytes;
    const long long bits = (long long)(intptr_t)p->bits.p;
    bng_buffer after;
    unsigned char *dx_after;

    k->params[BNG_CASE_FLAGS] = BNG_CASE_RELU;
    relu_pair_use_bits(p, 1);
    k->params[BNG_CASE_Y] = 0;
    bng_expect_refused(k, op, shared, k->x.p, k->dy.p, k->dx.p, FULL_MASK, BNG_ENULL, "bits NULL");
    k->params[BNG_CASE_Y] = bits + 1;
    bng_expect_refused(k, op, shared, k->x.p, k->dy.p, k->dx.p, FULL_MASK, BNG_EALIGN, "bits misaligned");
    if (op != BNG_OP_REDUCE) {
        k->params[BNG_CASE_Y] = (long long)(intptr_t)k->dx.p;
        bng_expect_refused(k, op, shared, k->x.p, k->dy.p, k->dx.p, FULL_MASK, BNG_EOVERLAP, "bits the very dx");
        /* dx right after the bits' last element, then one element into it */
        after = bng_buffer_new(bits_bytes + k->dx.bytes);
        dx_after = (unsigned char *)after.p + bits_bytes;
        memcpy(after.p, p->bits.p, bits_bytes);
        k->params[BNG_CASE_Y] = (long long)(intptr_t)after.p;
        bng_case_call(k, op, shared, k->x.p, k->dy.p, dx_after, FULL_MASK);
        ck_assert_int_eq(k->params[BNG_PARAM_STATUS], BNG_OK);
        bng_expect_refused(k, op, shared, k->x.p, k->dy.p, dx_after - size, FULL_MASK,
                           BNG_EOVERLAP, "bits' last element under dx");
        bng_buffer_free(&after);
    }
    if (op == BNG_OP_EXT || op == BNG_OP_APPLY) {
        k->params[BNG_CASE_Y] = (long long)(intptr_t)k->dbias.p;
        bng_expect_refused(k, op, shared, k->x.p, k->dy.p, k->dx.p, FULL_MASK, BNG_EOVERLAP, "bits over dbias");
        k->params[BNG_CASE_Y] = (long long)(intptr_t)k->dscale.p;
        bng_expect_refused(k, op, shared, k->x.p, k->dy.p, k->dx.p, FULL_MASK, BNG_EOVERLAP, "bits over dscale");
    }
    if (op == BNG_OP_REDUCE) {
        k->params[BNG_CASE_Y] = (long long)(intptr_t)k->sums.p;
        bng_expect_refused(k, op, shared, k->x.p, k->dy.p, k->dx.p, FULL_MASK, BNG_EOVERLAP, "bits over the sums");
    }
    k->params[BNG_CASE_Y] = (long long)(intptr_t)k->x.p;
    bng_case_call(k, op, shared, k->x.p, k->dy.p, k->dx.p, FULL_MASK);
    ck_assert_int_eq(k->params[BNG_PARAM_STATUS], BNG_OK);
    k->params[BNG_CASE_Y] = p->apart.params[BNG_CASE_Y];    /* without RELU: the sentinel */
    k->params[BNG_CASE_FLAGS] = BNG_CASE_RELU_BITS;
    bng_expect_refused(k, op, shared, k->x.p, k->dy.p, k->dx.p, FULL_MASK, BNG_CASE_EFLAGS, "RELU_BITS without RELU");
    k->params[BNG_CASE_Y] = bits;
    k->params[BNG_CASE_FLAGS] = BNG_CASE_RELU;
    relu_pair_use_bits(p, 0);
}

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
        y = k->params[BNG_CASE_Y];
        bng_case_valid_sums(k, k->batch);
        k->params[BNG_CASE_Y] = 0;
        bng_expect_refused(k, op, shared, k->x.p, k->dy.p, k->dx.p, mask, BNG_ENULL, "y NULL");
        k->params[BNG_PARAM_BATCH] = 0;
        bng_expect_refused(k, op, shared, k->x.p, k->dy.p, k->dx.p, mask, BNG_ENULL, "y NULL before batch 0");
        k->params[BNG_PARAM_BATCH] = (long long)k->batch;
        k->params[BNG_CASE_Y] = (long long)(intptr_t)((char *)p.y.p + 1);
        bng_expect_refused(k, op, shared, k->x.p, k->dy.p, k->dx.p, mask, BNG_EALIGN, "y misaligned");
        k->params[BNG_CASE_Y] = y;
        if (op != BNG_OP_REDUCE) {
            k->params[BNG_CASE_Y] = (long long)(intptr_t)((char *)k->dx.p + t->size);
            bng_expect_refused(k, op, shared, k->x.p, k->dy.p, k->dx.p, mask, BNG_EOVERLAP, "y over dx");
            k->params[BNG_CASE_Y] = (long long)(intptr_t)k->dx.p;
            bng_expect_refused(k, op, shared, k->x.p, k->dy.p, k->dx.p, mask, BNG_EOVERLAP, "y the very dx");
        }
        if (op == BNG_OP_EXT || op == BNG_OP_APPLY) {
            k->params[BNG_CASE_Y] = (long long)(intptr_t)k->dscale.p;
            bng_expect_refused(k, op, shared, k->x.p, k->dy.p, k->dx.p, mask, BNG_EOVERLAP, "y over dscale");
            k->params[BNG_CASE_Y] = (long long)(intptr_t)k->dbias.p;
            bng_expect_refused(k, op, shared, k->x.p, k->dy.p, k->dx.p, mask, BNG_EOVERLAP, "y over dbias");
        }
        if (op == BNG_OP_REDUCE) {
            k->params[BNG_CASE_Y] = (long long)(intptr_t)k->sums.p;
            bng_expect_refused(k, op, shared, k->x.p, k->dy.p, k->dx.p, mask, BNG_EOVERLAP, "y over the sums");
        }
        k->params[BNG_CASE_Y] = y;
        if (op == BNG_OP_REDUCE || op == BNG_OP_DX) {
            k->params[BNG_CASE_FLAGS] = BNG_CASE_RELU | BNG_CASE_ACCUMULATE;
            bng_expect_refused(k, op, shared, k->x.p, k->dy.p, k->dx.p, mask, BNG_CASE_EFLAGS, "relu + accumulate");
        }
        k->params[BNG_CASE_FLAGS] = BNG_CASE_RELU | 64;
        bng_expect_refused(k, op, shared, k->x.p, k->dy.p, k->dx.p, mask, BNG_CASE_EFLAGS, "an unknown bit");
        relu_bits_errors(&p, op, shared);
        /* without the flag the y slot is not looked at */
        k->params[BNG_CASE_FLAGS] = 0;
        k->params[BNG_CASE_Y] = 3;
        bng_case_call(k, op, shared, k->x.p, k->dy.p, k->dx.p, mask);
        ck_assert_int_eq(k->params[BNG_PARAM_STATUS], BNG_OK);
        k->params[BNG_CASE_Y] = y;
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
/* A target without relu refuses BNG_FLAG_RELU (4) and BNG_FLAG_RELU_BITS (8), alone
 * and together, on every extended call, whatever slot 15 holds. */
START_TEST(test_relu_flag_refused_without_relu)
{
    static const int ops[] = {BNG_OP_EXT, BNG_OP_REDUCE, BNG_OP_APPLY, BNG_OP_DX};
    static const long long flags[] = {BNG_CASE_RELU, BNG_CASE_RELU_BITS,
                                      BNG_CASE_RELU | BNG_CASE_RELU_BITS};
    bng_case k;
    size_t o, f;
    if (!EXT_OPS_PRESENT(T))
        return;
    bng_case_init(&k, T, 9, T->lanes + 1, 1, BNG_DATA_RANDOM, 2);
    bng_case_valid_sums(&k, k.batch);
    for (f = 0; f < sizeof flags / sizeof flags[0]; f++) {
        k.params[BNG_CASE_FLAGS] = flags[f];
        for (o = 0; o < sizeof ops / sizeof ops[0]; o++) {
            bng_expect_refused(&k, ops[o], 0, k.x.p, k.dy.p, k.dx.p, FULL_MASK, BNG_CASE_EFLAGS, "relu flag");
            bng_expect_refused(&k, ops[o], 1, k.x.p, k.dy.p, k.dx.p, FULL_MASK, BNG_CASE_EFLAGS, "relu flag");
        }
    }
    bng_case_free(&k);
}
END_TEST
#endif

void bng_relu_add_tests(Suite *s)
{
    const bng_test_case cases[] = {
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
    bng_add_cases(s, cases, sizeof cases / sizeof cases[0]);
}
