/* dx accumulate (BNG_FLAG_ACCUMULATE_DX): dx += the gradient, the old dx and the new
 * value added in float32 and rounded once to x's type (docs/contract.md, "Accumulating
 * dx"). Every call that writes dx (ext, apply, dx-only) through _p and through _s
 * (core masks in rotation), NHWC and (with nchw) NCHW, plain and with the fused ReLU
 * from y and from the forward's keep bits, with and without BNG_FLAG_ACCUMULATE,
 * against _p's same call without the flag: float32 storage holds the value that call
 * adds exactly, so the sum is checked bit for bit; half to within the two roundings,
 * and bit for bit where the old dx is -0; an old NaN or Inf propagates. Also in place
 * (dx over dy, over x: the old dx is that input), at the size _p otherwise streams dx,
 * _s with slices that stream through private memory and GSM, and refused by reduce
 * (no dx) with nothing written.
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
 * (NCHW reads them as planes), what it computes, and where: _p, or _s with `mask`. */
typedef struct {
    int op, train, nchw, alias;
    enum acc_relu relu;
    long long also;                /* BNG_CASE_ACCUMULATE beside, in both calls, or 0 */
    size_t batch, spatial, channel;
    int mask;                      /* 0: _p */
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
        bng_set(t, in.y.p, i, bng_uniform(&state, -1.0, 1.0));
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
    const double d = bng_get(t, plain, i), g = bng_get(t, got, i);

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

/* The shape's call with the flag, through _p (`mask` 0) or _s, on a copy of `plain`'s
 * inputs and the same old dx (seeded by `seed`): k holds it, the dx it wrote (over
 * dx, dy or x) returned, the old values in `old` when given. */
static void *acc_run(const bng_dtype *t, const acc_shape *s, const acc_relu_input *in,
                     const bng_case *plain, int mask, unsigned seed, bng_case *k, double *old)
{
    const size_t n = s->batch * s->spatial * s->channel;
    unsigned state = seed + 7u;
    void *dx;
    size_t i;

    bng_case_init_like(k, plain);
    acc_block(k, s, in, BNG_CASE_ACCUMULATE_DX);
    dx = s->alias == ACC_OVER_DY ? k->dy.p : s->alias == ACC_OVER_X ? k->x.p : k->dx.p;
    for (i = 0; i < n; i++) {
        if (s->alias == ACC_APART)
            bng_set(t, dx, i, acc_old(&state, i));
        if (old != NULL)
            old[i] = bng_get(t, dx, i);
    }
    bng_case_call(k, s->op, mask != 0, k->x.p, k->dy.p, dx, mask);
    ck_assert_int_eq(k->params[BNG_PARAM_STATUS], BNG_OK);
    return dx;
}

/* The shape's call with the flag against _p's same call without it; through _s, also
 * against _p's with the flag, byte for byte (half too: _s adds before it rounds). */
static void acc_check(const bng_dtype *t, const acc_shape *s, unsigned seed)
{
    const size_t rows = s->batch * s->spatial, n = rows * s->channel;
    acc_relu_input in = acc_relu_input_new(t, s, seed);
    bng_case plain, k, kp;
    double *old = bng_test_alloc(n * sizeof(double));
    void *dx;
    char what[96];
    size_t i;

    snprintf(what, sizeof what, "op %d %zux%zux%zu train=%d %s relu=%d alias=%d %s mask %#x",
             s->op, s->batch, s->channel, s->spatial, s->train, s->nchw ? "NCHW" : "NHWC",
             (int)s->relu, s->alias, s->mask ? "_s" : "_p", (unsigned)s->mask);
    bng_case_init(&plain, t, rows, s->channel, s->train, BNG_DATA_RANDOM, seed);
    acc_block(&plain, s, &in, 0);
    bng_case_call(&plain, s->op, 0, plain.x.p, plain.dy.p, plain.dx.p, 0);
    ck_assert_int_eq(plain.params[BNG_PARAM_STATUS], BNG_OK);
    dx = acc_run(t, s, &in, &plain, s->mask, seed, &k, old);
    for (i = 0; i < n; i++)
        acc_expect(t, dx, plain.dx.p, i, old[i], what);
    if (s->op != BNG_OP_DX) {
        bng_expect_same_bytes(&k.dbias, &plain.dbias, "dbias when accumulating dx");
        bng_expect_same_bytes(&k.dscale, &plain.dscale, "dscale when accumulating dx");
    }
    if (s->mask) {
        const void *dx_p = acc_run(t, s, &in, &plain, 0, seed, &kp, NULL);
        if (memcmp(dx, dx_p, n * t->size) != 0)
            ck_abort_msg("%s %s: dx differs from _p's with the flag", t->name, what);
        bng_case_free(&kp);
    }
    bng_case_check_guards(&k);
    bng_test_free(old);
    acc_relu_input_free(&in);
    bng_case_free(&plain);
    bng_case_free(&k);
}

/* The ReLU forms the target has: none, or also from y and from the keep bits. */
#define ACC_RELU_FORMS (BNG_HAS_RELU ? 3 : 1)

/* The core mask of the k-th _s call of a case (0: _p): the masks in rotation. */
static int acc_mask(int shared, size_t k)
{
    return shared ? bng_test_masks[k % bng_test_mask_count] : 0;
}

static void acc_shapes(const bng_dtype *t, int op, int nchw, int shared)
{
    const size_t batches[] = {1, 33, 300}, spatials[] = {7, 49};
    /* each op starts the masks' rotation at a mask of its own */
    size_t ch[3], n = bng_ext_channels(t, ch), c, b, k = (size_t)op;
    int train, relu;

    for (c = 0; c < n; c++)
        for (b = 0; b < sizeof batches / sizeof batches[0]; b++)
            for (train = op == BNG_OP_DX; train <= 1; train++)
                for (relu = 0; relu < ACC_RELU_FORMS; relu++, k++) {
                    /* with BNG_FLAG_ACCUMULATE in every other case where it applies */
                    const acc_shape s = {op, train, nchw, ACC_APART, (enum acc_relu)relu,
                                         op != BNG_OP_DX && (b + relu) % 2 ? BNG_CASE_ACCUMULATE : 0,
                                         nchw ? batches[b] % 7 + 1 : batches[b],
                                         nchw ? spatials[b % 2] : 1, ch[c],
                                         acc_mask(shared, k)};
                    acc_check(t, &s, (unsigned)(c * 64 + b * 8 + train * 4 + relu));
                }
}

static void acc_every_call(const bng_dtype *t, int shared)
{
    static const int ops[] = {BNG_OP_EXT, BNG_OP_APPLY, BNG_OP_DX};
    size_t o;
    int nchw;

    if (!EXT_OPS_PRESENT(t))
        return;
    for (o = 0; o < sizeof ops / sizeof ops[0]; o++)
        for (nchw = 0; nchw <= BNG_HAS_NCHW; nchw++)
            acc_shapes(t, ops[o], nchw, shared);
}

START_TEST(test_accumulate_dx_adds_the_gradient)
{
    acc_every_call(T, 0);
}
END_TEST

START_TEST(test_accumulate_dx_adds_the_gradient_in_s)
{
    acc_every_call(T, 1);
}
END_TEST

/* dx over dy and over x: the old dx is that input's value. */
static void acc_in_place(const bng_dtype *t, int shared)
{
    static const int ops[] = {BNG_OP_EXT, BNG_OP_APPLY, BNG_OP_DX};
    size_t ch[3], n, c, o, k = 0;
    int alias, relu, nchw;

    if (!EXT_OPS_PRESENT(t))
        return;
    n = bng_ext_channels(t, ch);
    for (o = 0; o < sizeof ops / sizeof ops[0]; o++)
        for (alias = ACC_OVER_DY; alias <= ACC_OVER_X; alias++)
            for (nchw = 0; nchw <= BNG_HAS_NCHW; nchw++)
                for (relu = 0; relu < ACC_RELU_FORMS; relu++)
                    for (c = 0; c < n; c++, k++) {
                        const acc_shape s = {ops[o], ops[o] != BNG_OP_DX && c % 2 == 0, nchw, alias,
                                             (enum acc_relu)relu, 0, nchw ? 3 : 67, nchw ? 20 : 1,
                                             ch[c], acc_mask(shared, k)};
                        if (ops[o] == BNG_OP_DX && alias == ACC_OVER_X)
                            continue;    /* dx-only reads no x */
                        acc_check(t, &s, (unsigned)(o * 97 + (size_t)alias * 31 + c * 5 + (size_t)relu));
                    }
}

START_TEST(test_accumulate_dx_in_place)
{
    acc_in_place(T, 0);
}
END_TEST

START_TEST(test_accumulate_dx_in_place_in_s)
{
    acc_in_place(T, 1);
}
END_TEST

/* _s where a core's slice outgrows its private memory: each core's rows stream
 * through the tile buffers (and, where the target has them, GSM) before its last ones
 * stay resident; every op, training and inference, plain and with the fused ReLU, on
 * all cores and on one, one of each op's in place (dx over dy). NHWC on the generic
 * kernel past its chunk, which a small private memory (tiny's) narrows to the widest
 * whole vectors that hold the old dx's buffers too; NCHW with planes larger than a tile
 * buffer, in pieces. */
START_TEST(test_accumulate_dx_streams_in_s)
{
    static const int ops[] = {BNG_OP_EXT, BNG_OP_APPLY, BNG_OP_DX};
    const size_t channel = T->generic_chunk + 7;
    const size_t slice = BNG_PRIVATE_BYTES / (channel * T->size) + 40;
    size_t o;
    int relu;

    if (!EXT_OPS_PRESENT(T))
        return;
    for (o = 0; o < sizeof ops / sizeof ops[0]; o++)
        for (relu = 0; relu < ACC_RELU_FORMS; relu++) {
            const int mask = (o + (size_t)relu) % 2 ? 0x1 : FULL_MASK;
            const acc_shape s = {ops[o], ops[o] == BNG_OP_DX || relu != 1, 0,
                                 relu == 0 ? ACC_OVER_DY : ACC_APART, (enum acc_relu)relu, 0,
                                 slice * (size_t)(mask == 0x1 ? 1 : BNG_TARGET_CORES), 1, channel,
                                 mask};
            if (bng_test_quick() && s.batch > 2000)
                continue;       /* under a sanitizer or valgrind, tiny's alone */
            acc_check(T, &s, 300u + (unsigned)(o * 3 + (size_t)relu));
        }
    if (BNG_HAS_NCHW)
        for (relu = 0; relu < ACC_RELU_FORMS; relu++) {
            const acc_shape s = {BNG_OP_EXT, 1, 1, ACC_APART, (enum acc_relu)relu, 0, 2,
                                 BNG_PRIVATE_BYTES / 4 / T->size + 7, 3, FULL_MASK};
            acc_check(T, &s, 320u + (unsigned)relu);
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
                             ((size_t)8 << 20) / T->size / channel / spatial + 1, spatial, channel,
                             0};
        acc_check(T, &s, 71u + (unsigned)nchw);
    }
}
END_TEST

/* A call that cannot honour the flag, reduce (it writes no dx): BNG_EFLAGS, nothing
 * written. */
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

START_TEST(test_accumulate_dx_refused_by_reduce)
{
    if (!EXT_OPS_PRESENT(T))
        return;
    acc_expect_refused(T, BNG_OP_REDUCE, 0);
}
END_TEST

START_TEST(test_accumulate_dx_refused_by_reduce_in_s)
{
    if (!EXT_OPS_PRESENT(T))
        return;
    acc_expect_refused(T, BNG_OP_REDUCE, 1);
}
END_TEST

void bng_accumulate_dx_add_tests(Suite *s)
{
    const bng_test_case cases[] = {
        {"accumulate_dx", test_accumulate_dx_adds_the_gradient, "private"},
        {"accumulate_dx_in_place", test_accumulate_dx_in_place, "private"},
        {"accumulate_dx_streaming_size", test_accumulate_dx_at_the_streaming_size, "private"},
        {"accumulate_dx_refused", test_accumulate_dx_refused_by_reduce, "private"},
        {"accumulate_dx_shared", test_accumulate_dx_adds_the_gradient_in_s, "shared"},
        {"accumulate_dx_shared_in_place", test_accumulate_dx_in_place_in_s, "shared"},
        {"accumulate_dx_shared_streams", test_accumulate_dx_streams_in_s, "shared"},
        {"accumulate_dx_shared_refused", test_accumulate_dx_refused_by_reduce_in_s, "shared"},
    };
    bng_add_cases(s, cases, sizeof cases / sizeof cases[0]);
}
