/* dx accumulate (BNG_FLAG_ACCUMULATE_DX): dx += the gradient, the old dx and the new
 * value added in float32 and rounded once to x's type (docs/contract.md, "Accumulating
 * dx"). Every call that writes dx (ext, apply, dx-only) through _p, NHWC and (with
 * nchw) NCHW, plain and with the fused ReLU from y and from the forward's keep bits,
 * with and without BNG_FLAG_ACCUMULATE, against the same call without the flag:
 * float32 storage holds the value that call adds exactly, so the sum is checked bit for
 * bit; half to within the two roundings, and bit for bit where the old dx is -0; an old
 * NaN or Inf propagates. Also in place (dx over dy, over x: the old dx is that input),
 * at the size _p otherwise streams dx, and refused where this version cannot honour it
 * (_s, reduce, a split target's _p) with nothing written.
 */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "bng_dtypes.h"
#include "bng_suites.h"

enum acc_relu { ACC_PLAIN, ACC_RELU_Y, ACC_RELU_BITS };
enum acc_alias { ACC_APART, ACC_OVER_DY, ACC_OVER_X };

/* One accumulating call's shape: batch * spatial rows of channel elements a case holds
 * (NCHW reads them as planes), and what it computes. */
typedef struct {
    int op, train, nchw, alias;
    enum acc_relu relu;
    long long also;                /* BNG_CASE_ACCUMULATE beside, in both calls, or 0 */
    size_t batch, spatial, channel;
} acc_shape;

/* y for the fused ReLU: values either side of 0; its keep bits (NHWC) beside it. */
typedef struct {
    bng_buffer y, bits;
} acc_relu_input;

static acc_relu_input acc_relu_input_new(const bng_dtype *t, const acc_shape *s, unsigned seed)
{
    const size_t rows = s->batch * s->spatial, n = rows * s->channel;
    acc_relu_input in;
    unsigned state = seed * 2654435761u + 1u;
    size_t i;

    memset(&in, 0, sizeof in);
    if (s->relu == ACC_PLAIN)
        return in;
    in.y = bng_buffer_new(n * t->size);
    for (i = 0; i < n; i++)
        t->set(in.y.p, i, bng_uniform(&state, -1.0, 1.0));
    if (s->relu == ACC_RELU_BITS)
        in.bits = s->nchw ? bng_keep_plane_bits(t, in.y.p, s->batch * s->channel, s->spatial)
                          : bng_keep_bits(t, in.y.p, rows, s->channel, s->channel, s->channel);
    return in;
}

static void acc_relu_input_free(acc_relu_input *in)
{
    if (in->y.raw)
        bng_buffer_free(&in->y);
    if (in->bits.raw)
        bng_buffer_free(&in->bits);
}

/* k's block for the shape: the call's batch and layout, its flags (`flags` beside the
 * shape's), y or the bits, a valid sums buffer for apply. */
static void acc_block(bng_case *k, const acc_shape *s, const acc_relu_input *in, long long flags)
{
    k->params[BNG_PARAM_BATCH] = (long long)s->batch;
    k->params[BNG_CASE_FLAGS] = flags | s->also | (s->nchw ? BNG_CASE_NCHW : 0)
                                | (s->relu != ACC_PLAIN ? BNG_CASE_RELU : 0)
                                | (s->relu == ACC_RELU_BITS ? BNG_CASE_RELU_BITS : 0);
    if (s->nchw)
        k->params[BNG_CASE_SPATIAL] = (long long)s->spatial;
    if (s->relu != ACC_PLAIN)
        k->params[BNG_CASE_Y] = (long long)(intptr_t)(s->relu == ACC_RELU_BITS ? in->bits.p : in->y.p);
    if (s->op == BNG_OP_APPLY)
        bng_case_valid_sums(k, s->batch * s->spatial);
}

/* The old dx of element i: -0 every fifth (the sum is then the plain call's dx, bit for
 * bit, in every type), a NaN and an Inf now and then, else a value of the gradient's
 * size either way. */
static double acc_old(unsigned *state, size_t i)
{
    return i % 5 == 0 ? -0.0 : i % 37 == 3 ? NAN : i % 37 == 8 ? -INFINITY
           : bng_uniform(state, -2.0, 2.0);
}

/* Element i of the accumulating call (`got`) against the plain call's dx (`plain`) and
 * the old value: float32 exactly their float32 sum; half, where the old dx is -0, the
 * plain call's bits, else within a half rounding of the float32 value each took and of
 * their sum, and a float32 rounding of the sum (half's subnormal spacing below). */
static void acc_expect(const bng_dtype *t, const void *got, const void *plain, size_t i,
                       double old, const char *what)
{
    const double d = t->get(plain, i), g = t->get(got, i);

    if (isnan(old) || isinf(old)) {     /* the gradient is finite here */
        if (!(isnan(old) ? isnan(g) : g == old))
            ck_abort_msg("%s %s: dx[%zu] = %.9g over an old %g", t->name, what, i, g, old);
    } else if (t->size == sizeof(float)) {
        const float want = (float)old + (float)d;
        const float have = (float)g;
        if (memcmp(&want, &have, sizeof want) != 0)
            ck_abort_msg("%s %s: dx[%zu] = %.9g, old %.9g + gradient %.9g = %.9g", t->name, what,
                         i, g, old, d, (double)want);
    } else if (old == 0 && signbit(old)) {
        if (memcmp((const unsigned char *)got + 2 * i, (const unsigned char *)plain + 2 * i, 2) != 0)
            ck_abort_msg("%s %s: dx[%zu] = %.9g over an old -0, the plain call's %.9g", t->name,
                         what, i, g, d);
    } else {
        const double u16 = 1.0 / 2048, u32 = 1.0 / 16777216, sum = old + d;
        const double bound = u16 * fabs(d) * (1 + 2 * u16) + (u16 + u32) * (fabs(sum) + u16 * fabs(d))
                             + 1.0 / 33554432;
        if (!(fabs(g - sum) <= bound))
            ck_abort_msg("%s %s: dx[%zu] = %.9g, old %.9g + gradient %.9g, bound %.3g", t->name,
                         what, i, g, old, d, bound);
    }
}

/* The shape's call with the flag against the same call without it. */
static void acc_check(const bng_dtype *t, const acc_shape *s, unsigned seed)
{
    const size_t rows = s->batch * s->spatial, n = rows * s->channel;
    acc_relu_input in = acc_relu_input_new(t, s, seed);
    bng_case plain, k;
    double *old = bng_test_alloc(n * sizeof(double));
    unsigned state = seed + 7u;
    void *dx;
    char what[96];
    size_t i;

    snprintf(what, sizeof what, "op %d %zux%zux%zu train=%d %s relu=%d alias=%d", s->op,
             s->batch, s->channel, s->spatial, s->train, s->nchw ? "NCHW" : "NHWC", (int)s->relu,
             s->alias);
    bng_case_init(&plain, t, rows, s->channel, s->train, BNG_DATA_RANDOM, seed);
    bng_case_init_like(&k, &plain);
    acc_block(&plain, s, &in, 0);
    acc_block(&k, s, &in, BNG_CASE_ACCUMULATE_DX);
    bng_case_call(&plain, s->op, 0, plain.x.p, plain.dy.p, plain.dx.p, 0);
    ck_assert_int_eq(plain.params[BNG_PARAM_STATUS], BNG_OK);
    dx = s->alias == ACC_OVER_DY ? k.dy.p : s->alias == ACC_OVER_X ? k.x.p : k.dx.p;
    for (i = 0; i < n; i++) {
        if (s->alias == ACC_APART)
            t->set(dx, i, acc_old(&state, i));
        old[i] = t->get(dx, i);
    }
    bng_case_call(&k, s->op, 0, k.x.p, k.dy.p, dx, 0);
    ck_assert_int_eq(k.params[BNG_PARAM_STATUS], BNG_OK);
    for (i = 0; i < n; i++)
        acc_expect(t, dx, plain.dx.p, i, old[i], what);
    if (s->op != BNG_OP_DX) {
        bng_expect_same_bytes(&k.dbias, &plain.dbias, "dbias when accumulating dx");
        bng_expect_same_bytes(&k.dscale, &plain.dscale, "dscale when accumulating dx");
    }
    bng_case_check_guards(&k);
    bng_test_free(old);
    acc_relu_input_free(&in);
    bng_case_free(&plain);
    bng_case_free(&k);
}

/* The ReLU forms the target has: none, or also from y and from the keep bits. */
#define ACC_RELU_FORMS (BNG_HAS_RELU ? 3 : 1)

static void acc_shapes(const bng_dtype *t, int op, int nchw)
{
    const size_t batches[] = {1, 33, 300}, spatials[] = {7, 49};
    size_t ch[3], n = bng_ext_channels(t, ch), c, b;
    int train, relu;

    for (c = 0; c < n; c++)
        for (b = 0; b < sizeof batches / sizeof batches[0]; b++)
            for (train = op == BNG_OP_DX; train <= 1; train++)
                for (relu = 0; relu < ACC_RELU_FORMS; relu++) {
                    /* with BNG_FLAG_ACCUMULATE in every other case where it applies */
                    const acc_shape s = {op, train, nchw, ACC_APART, (enum acc_relu)relu,
                                         op != BNG_OP_DX && (b + relu) % 2 ? BNG_CASE_ACCUMULATE : 0,
                                         nchw ? batches[b] % 7 + 1 : batches[b],
                                         nchw ? spatials[b % 2] : 1, ch[c]};
                    acc_check(t, &s, (unsigned)(c * 64 + b * 8 + train * 4 + relu));
                }
}

START_TEST(test_accumulate_dx_adds_the_gradient)
{
    static const int ops[] = {BNG_OP_EXT, BNG_OP_APPLY, BNG_OP_DX};
    size_t o;
    int nchw;

    if (!EXT_OPS_PRESENT(T) || BNG_SPLIT_MEMORY)
        return;
    for (o = 0; o < sizeof ops / sizeof ops[0]; o++)
        for (nchw = 0; nchw <= BNG_HAS_NCHW; nchw++)
            acc_shapes(T, ops[o], nchw);
}
END_TEST

/* dx over dy and over x: the old dx is that input's value. */
START_TEST(test_accumulate_dx_in_place)
{
    static const int ops[] = {BNG_OP_EXT, BNG_OP_APPLY, BNG_OP_DX};
    size_t ch[3], n, c, o;
    int alias, relu, nchw;

    if (!EXT_OPS_PRESENT(T) || BNG_SPLIT_MEMORY)
        return;
    n = bng_ext_channels(T, ch);
    for (o = 0; o < sizeof ops / sizeof ops[0]; o++)
        for (alias = ACC_OVER_DY; alias <= ACC_OVER_X; alias++)
            for (nchw = 0; nchw <= BNG_HAS_NCHW; nchw++)
                for (relu = 0; relu < ACC_RELU_FORMS; relu++)
                    for (c = 0; c < n; c++) {
                        const acc_shape s = {ops[o], ops[o] != BNG_OP_DX && c % 2 == 0, nchw, alias,
                                             (enum acc_relu)relu, 0, nchw ? 3 : 67, nchw ? 20 : 1,
                                             ch[c]};
                        if (ops[o] == BNG_OP_DX && alias == ACC_OVER_X)
                            continue;    /* dx-only reads no x */
                        acc_check(T, &s, (unsigned)(o * 97 + (size_t)alias * 31 + c * 5 + (size_t)relu));
                    }
}
END_TEST

/* A dx of 8 MiB or more, which _p without the flag writes with streaming stores on x86
 * hosts (include/bng_steps.h BNG_STREAM_DX_BYTES): accumulating, it adds instead, NHWC
 * and NCHW, on the generic kernel's chunks. Plain runs only (under a sanitizer or
 * valgrind, bng_test_quick(), it is too slow). */
START_TEST(test_accumulate_dx_at_the_streaming_size)
{
    const size_t channel = T->generic_chunk + 3;
    int nchw;

    if (!EXT_OPS_PRESENT(T) || BNG_SPLIT_MEMORY || bng_test_quick())
        return;
    for (nchw = 0; nchw <= BNG_HAS_NCHW; nchw++) {
        const size_t spatial = nchw ? 49 : 1;
        const acc_shape s = {BNG_OP_EXT, 1, nchw, ACC_APART, ACC_PLAIN, 0,
                             ((size_t)8 << 20) / T->size / channel / spatial + 1, spatial, channel};
        acc_check(T, &s, 71u + (unsigned)nchw);
    }
}
END_TEST

/* A call that cannot honour the flag: reduce (no dx), _s, and on a split target _p
 * (staged through its workspace) in this version: BNG_EFLAGS, nothing written. */
static void acc_expect_refused(const bng_dtype *t, int op, int shared)
{
    bng_case k;
    bng_case_init(&k, t, 40, 24, 1, BNG_DATA_RANDOM, 5u);
    k.params[BNG_CASE_FLAGS] = BNG_CASE_ACCUMULATE_DX;
    if (op == BNG_OP_APPLY)
        bng_case_valid_sums(&k, 40);
    bng_case_mark_outputs(&k);
    bng_expect_refused(&k, op, shared, k.x.p, k.dy.p, op == BNG_OP_REDUCE ? NULL : k.dx.p,
                       FULL_MASK, BNG_CASE_EFLAGS, "BNG_FLAG_ACCUMULATE_DX");
    bng_case_free(&k);
}

START_TEST(test_accumulate_dx_refused_in_p)
{
    if (!EXT_OPS_PRESENT(T))
        return;
    acc_expect_refused(T, BNG_OP_REDUCE, 0);
    if (BNG_SPLIT_MEMORY) {
        acc_expect_refused(T, BNG_OP_EXT, 0);
        acc_expect_refused(T, BNG_OP_APPLY, 0);
        acc_expect_refused(T, BNG_OP_DX, 0);
    }
}
END_TEST

START_TEST(test_accumulate_dx_refused_in_s)
{
    if (!EXT_OPS_PRESENT(T))
        return;
    acc_expect_refused(T, BNG_OP_EXT, 1);
    acc_expect_refused(T, BNG_OP_APPLY, 1);
    acc_expect_refused(T, BNG_OP_DX, 1);
    acc_expect_refused(T, BNG_OP_REDUCE, 1);
}
END_TEST

void bng_accumulate_dx_add_tests(Suite *s)
{
    const bng_test_case cases[] = {
        {"accumulate_dx", test_accumulate_dx_adds_the_gradient, "private"},
        {"accumulate_dx_in_place", test_accumulate_dx_in_place, "private"},
        {"accumulate_dx_streaming_size", test_accumulate_dx_at_the_streaming_size, "private"},
        {"accumulate_dx_refused", test_accumulate_dx_refused_in_p, "private"},
        {"accumulate_dx_shared_refused", test_accumulate_dx_refused_in_s, "shared"},
    };
    bng_add_cases(s, cases, sizeof cases / sizeof cases[0]);
}
