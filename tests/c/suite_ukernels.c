/* The ukernels themselves, called through the kernel tables as the driver calls them
 * (XNNPACK's microkernel testers): every specialized NHWC kernel at its count and the
 * generic one at counts with tails, rows across block boundaries, rows of a wider
 * tensor (stride > channels: the elements between rows never written), dx in place
 * over x and over dy, streaming stores, the ReLU ukernels against the plain ones on a
 * masked dy (reduce_relu's keep words against the suite's own predicate) and the _keeps
 * ones on keep words packed apart; the NCHW ukernels on
 * whole planes of each extent and on pieces of any length. Each output against a
 * scalar float32 replica of the formula bng_ukernel.h states (the same IEEE operations
 * in the same order: bit for bit), and each sum also against float64 within the bound
 * of its order. The driver's suites reach the same ukernels only through the entry
 * points.
 */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bng_dtypes.h"
#include "bng_suites.h"

/* The replicas compute in float as the ukernels do: each operation rounded to float
 * (no wider evaluation; the build's -ffp-contract=off: no fused multiply-add). */
#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD != 0
#error "suite_ukernels.c's replicas need float arithmetic evaluated in float"
#endif
#define UNIT_ROUNDOFF (1.0 / 16777216.0)     /* float32: 2^-24 */

/* Rows of a ukernel call: `channels` as the ukernel is called with them (padded on a
 * split target), rows `stride` elements apart; per-channel arrays of `channels`. */
typedef struct {
    const bng_dtype *t;
    size_t rows, channels, stride;
    bng_buffer x, dy, y, dx;
    float *mean, *gain, *dy_mean, *slope;
} uk_case;

static float *floats(size_t n, unsigned *state, double lo, double hi)
{
    float *a = bng_test_alloc(n * sizeof *a);
    size_t i;
    for (i = 0; i < n; i++)
        a[i] = (float)bng_uniform(state, lo, hi);
    return a;
}

/* The element i of a buffer of t's type, as float (exact: every half is a float). */
static float at(const bng_dtype *t, const void *base, size_t i)
{
    return (float)bng_get(t, base, i);
}

static void uk_init(uk_case *u, const bng_dtype *t, size_t rows, size_t channels,
                    size_t stride, unsigned seed)
{
    const size_t n = rows * stride;
    unsigned state = seed * 2654435761u + 1u;
    size_t i;

    u->t = t;
    u->rows = rows;
    u->channels = channels;
    u->stride = stride;
    u->x = bng_buffer_new(n * t->size);
    u->dy = bng_buffer_new(n * t->size);
    u->y = bng_buffer_new(n * t->size);
    u->dx = bng_buffer_new(n * t->size);
    for (i = 0; i < n; i++) {
        bng_set(t, u->x.p, i, bng_uniform(&state, -2.0, 2.0));
        bng_set(t, u->dy.p, i, bng_uniform(&state, -1.0, 1.0));
        /* y: a third not kept (negative, +0, -0), a NaN and the least subnormal of
         * either sign now and then, the rest kept */
        if (i % 3 == 0)
            bng_set(t, u->y.p, i, i % 2 ? -0.5 : (i % 4 ? 0.0 : -0.0));
        else if (i % 7 == 1)
            bng_set_bits(t, u->y.p, i, i % 2 ? 0x7fc00000u : 0xffc00001u, i % 2 ? 0x7e00u : 0xfe01u);
        else if (i % 11 == 2)
            bng_set_bits(t, u->y.p, i, i % 2 ? 1u : 0x80000001u, i % 2 ? 1u : 0x8001u);
        else
            bng_set(t, u->y.p, i, bng_uniform(&state, 0.01, 1.0));
    }
    u->mean = floats(channels, &state, -0.5, 0.5);
    u->gain = floats(channels, &state, -2.0, 2.0);
    u->dy_mean = floats(channels, &state, -0.1, 0.1);
    u->slope = floats(channels, &state, -0.3, 0.3);
}

static void uk_free(uk_case *u)
{
    bng_buffer_free(&u->x);
    bng_buffer_free(&u->dy);
    bng_buffer_free(&u->y);
    bng_buffer_free(&u->dx);
    bng_test_free(u->mean);
    bng_test_free(u->gain);
    bng_test_free(u->dy_mean);
    bng_test_free(u->slope);
}

static void uk_fail(const uk_case *u, const bng_kernel *k, const char *what, size_t r, size_t c)
{
    ck_abort_msg("%s %s: rows %zu channels %zu stride %zu: %s (row %zu, channel %zu)",
                 u->t->name, k->name, u->rows, u->channels, u->stride, what, r, c);
}

/* A copy of a buffer's payload (in guards of its own). */
static bng_buffer uk_copy(const bng_buffer *from)
{
    bng_buffer b = bng_buffer_new(from->bytes);
    memcpy(b.p, from->p, from->bytes);
    return b;
}

/* ---- the replicas: bng_ukernel.h's formulas, in its order, in float32 ---- */

static float dx_train_of(const uk_case *u, const void *x, const void *dy, size_t i, size_t c)
{
    const float xm = at(u->t, x, i) - u->mean[c];
    const float centered = at(u->t, dy, i) - u->dy_mean[c];
    return u->gain[c] * (centered - xm * u->slope[c]);
}

/* out: every row's channels as `formula` gives them (dx_train: 1, dx_infer: 0) from x
 * and dy, and the elements between rows as `between` holds them. */
static bng_buffer expected_dx(const uk_case *u, int train, const void *x, const void *dy,
                              const bng_buffer *between)
{
    bng_buffer e = uk_copy(between);
    size_t r, c;
    for (r = 0; r < u->rows; r++)
        for (c = 0; c < u->channels; c++) {
            const size_t i = r * u->stride + c;
            bng_set(u->t, e.p, i, train ? dx_train_of(u, x, dy, i, c)
                                    : u->gain[c] * at(u->t, dy, i));
        }
    return e;
}

static void expect_bytes(const uk_case *u, const bng_kernel *k, const bng_buffer *got,
                         const bng_buffer *want, const char *what)
{
    size_t i;
    if (!bng_buffer_guards_intact(got))
        ck_abort_msg("%s %s: rows %zu channels %zu stride %zu: %s wrote past the array",
                     u->t->name, k->name, u->rows, u->channels, u->stride, what);
    for (i = 0; i < u->rows * u->stride; i++)
        if (memcmp((unsigned char *)got->p + i * u->t->size,
                   (unsigned char *)want->p + i * u->t->size, u->t->size) != 0)
            uk_fail(u, k, what, i / u->stride, i % u->stride);
}

/* reduce: per block of BNG_BLOCK_ROWS rows from the first, its sums from zero added to
 * the caller's (which hold `start`): the replica bit for bit, and float64 within the
 * bound of that order (the block's rows, then the blocks: rows + 2 roundings a term,
 * one more for x - mean and one for the product). */
static void expect_reduce(const uk_case *u, const bng_kernel *k, const void *dy,
                          const float *sum_dy, const float *sum_dyxm, const float *start)
{
    size_t c, r0, r;
    for (c = 0; c < u->channels; c++) {
        float want_dy = start[c], want_dyxm = start[c];
        double exact_dy = start[c], exact_dyxm = start[c];
        double size_dy = fabs(start[c]), size_dyxm = fabs(start[c]);
        for (r0 = 0; r0 < u->rows; r0 += BNG_BLOCK_ROWS) {
            float acc_dy = 0.0f, acc_dyxm = 0.0f;
            for (r = r0; r < u->rows && r < r0 + BNG_BLOCK_ROWS; r++) {
                const size_t i = r * u->stride + c;
                const float d = at(u->t, dy, i), xm = at(u->t, u->x.p, i) - u->mean[c];
                const double exact = (double)d * ((double)at(u->t, u->x.p, i) - u->mean[c]);
                acc_dy = acc_dy + d;
                acc_dyxm = acc_dyxm + d * xm;
                exact_dy += d;
                exact_dyxm += exact;
                size_dy += fabs(d);
                size_dyxm += fabs(exact);
            }
            want_dy = want_dy + acc_dy;
            want_dyxm = want_dyxm + acc_dyxm;
        }
        if (memcmp(&sum_dy[c], &want_dy, sizeof want_dy) != 0)
            uk_fail(u, k, "reduce: sum of dy is not the replica's", 0, c);
        if (memcmp(&sum_dyxm[c], &want_dyxm, sizeof want_dyxm) != 0)
            uk_fail(u, k, "reduce: sum of dy*(x - mean) is not the replica's", 0, c);
        if (fabs(sum_dy[c] - exact_dy) > (double)(u->rows + 2) * UNIT_ROUNDOFF * size_dy
            || fabs(sum_dyxm[c] - exact_dyxm) > (double)(u->rows + 4) * UNIT_ROUNDOFF * size_dyxm)
            uk_fail(u, k, "reduce: a sum beyond the float64 bound", 0, c);
    }
}

/* ---- one NHWC kernel on one shape ---- */

static void reduce_case(const uk_case *u, const bng_kernel *k, const void *dy,
                        bng_reduce_ukernel *reduce)
{
    unsigned state = 7u;
    float *start = floats(u->channels, &state, -4.0, 4.0);
    float *sum_dy = bng_test_alloc(u->channels * sizeof *sum_dy);
    float *sum_dyxm = bng_test_alloc(u->channels * sizeof *sum_dyxm);

    memcpy(sum_dy, start, u->channels * sizeof *start);
    memcpy(sum_dyxm, start, u->channels * sizeof *start);
    reduce(u->rows, u->channels, u->stride, u->x.p, dy, u->mean, sum_dy, sum_dyxm);
    expect_reduce(u, k, dy, sum_dy, sum_dyxm, start);
    bng_test_free(start);
    bng_test_free(sum_dy);
    bng_test_free(sum_dyxm);
}

/* dx_train and dx_infer out of place (dx's elements between rows untouched), in place
 * over dy and (dx_train) over x, and with streaming stores: each the replica's bytes. */
static void dx_cases(uk_case *u, const bng_kernel *k)
{
    const size_t bytes = u->rows * u->stride * u->t->size;
    bng_buffer want, inout;
    int stream;

    for (stream = 0; stream <= 1; stream++) {
        memset(u->dx.p, BNG_OUTPUT_MARK, bytes);
        want = expected_dx(u, 1, u->x.p, u->dy.p, &u->dx);
        k->dx_train(u->rows, u->channels, u->stride, u->x.p, u->dy.p, u->dx.p, u->mean,
                    u->gain, u->dy_mean, u->slope, stream);
        expect_bytes(u, k, &u->dx, &want, stream ? "dx_train, streaming" : "dx_train");
        bng_buffer_free(&want);

        memset(u->dx.p, BNG_OUTPUT_MARK, bytes);
        want = expected_dx(u, 0, NULL, u->dy.p, &u->dx);
        k->dx_infer(u->rows, u->channels, u->stride, u->dy.p, u->dx.p, u->gain, stream);
        expect_bytes(u, k, &u->dx, &want, stream ? "dx_infer, streaming" : "dx_infer");
        bng_buffer_free(&want);
    }

    inout = uk_copy(&u->dy);
    want = expected_dx(u, 1, u->x.p, u->dy.p, &u->dy);
    k->dx_train(u->rows, u->channels, u->stride, u->x.p, inout.p, inout.p, u->mean, u->gain,
                u->dy_mean, u->slope, 0);
    expect_bytes(u, k, &inout, &want, "dx_train in place over dy");
    bng_buffer_free(&want);
    bng_buffer_free(&inout);

    inout = uk_copy(&u->x);
    want = expected_dx(u, 1, u->x.p, u->dy.p, &u->x);
    k->dx_train(u->rows, u->channels, u->stride, inout.p, u->dy.p, inout.p, u->mean, u->gain,
                u->dy_mean, u->slope, 0);
    expect_bytes(u, k, &inout, &want, "dx_train in place over x");
    bng_buffer_free(&want);
    bng_buffer_free(&inout);

    inout = uk_copy(&u->dy);
    want = expected_dx(u, 0, NULL, u->dy.p, &u->dy);
    k->dx_infer(u->rows, u->channels, u->stride, inout.p, inout.p, u->gain, 0);
    expect_bytes(u, k, &inout, &want, "dx_infer in place over dy");
    bng_buffer_free(&want);
    bng_buffer_free(&inout);
}

#if BNG_HAS_RELU
static size_t uk_word_rows(const uk_case *u)
{
    return 8 * u->t->size;
}

static unsigned long uk_word_at(const uk_case *u, const void *base, size_t i)
{
    if (u->t->size == sizeof(uint32_t)) {
        uint32_t v;
        memcpy(&v, (const char *)base + i * sizeof v, sizeof v);
        return v;
    } else {
        uint16_t v;
        memcpy(&v, (const char *)base + i * sizeof v, sizeof v);
        return v;
    }
}

/* reduce_relu's keep words, where it was told to leave them (keeps_stride = stride: a
 * word at its group's last row, a last partial group's at the last row), are the
 * predicate's. */
static void expect_words_in_rows(const uk_case *u, const bng_kernel *k, const bng_buffer *keeps)
{
    const size_t w = uk_word_rows(u);
    size_t g, c;

    for (g = 0; g * w < u->rows; g++) {
        const size_t row = g * w + w - 1 < u->rows ? g * w + w - 1 : u->rows - 1;
        for (c = 0; c < u->channels; c++)
            if (uk_word_at(u, keeps->p, row * u->stride + c)
                != bng_keep_word(u->t, u->y.p, u->rows, u->stride, g, c))
                uk_fail(u, k, "reduce_relu's keep word", row, c);
    }
}

/* dx over the words reduce_relu left in it (NHWC _p's pass 2 of a call that sums its
 * rows, dx neither x nor dy): the whole runs' words at their last rows, W rows of dx
 * apart, and a last, shorter run's at the last row in a call of its own
 * (bng_nhwc_p_dx_by_dx_keeps): each word read before its row is stored. */
static void keeps_in_dx_case(uk_case *u, const bng_kernel *k, int train, const void *masked)
{
    const size_t w = uk_word_rows(u), whole = u->rows / w * w, size = u->t->size;
    unsigned state = 12u;
    float *ignored = floats(u->channels, &state, 0.0, 1.0);
    bng_buffer want;
    unsigned char *dx = u->dx.p;
    size_t part;

    memset(u->dx.p, BNG_OUTPUT_MARK, u->rows * u->stride * size);
    k->reduce_relu(u->rows, u->channels, u->stride, u->x.p, u->dy.p, u->y.p, u->mean, ignored,
                   ignored, u->dx.p, u->stride);
    want = expected_dx(u, train, u->x.p, masked, &u->dx);
    for (part = 0; part < 2; part++) {
        const size_t from = part ? whole : 0, rows = part ? u->rows - whole : whole;
        const size_t at = from * u->stride;
        const void *keeps = dx + (part ? u->rows - 1 : w - 1) * u->stride * size;
        if (rows == 0)
            continue;
        if (train)
            k->dx_train_keeps(rows, u->channels, u->stride, (const char *)u->x.p + at * size,
                              (const char *)u->dy.p + at * size, keeps, w * u->stride,
                              dx + at * size, u->mean, u->gain, u->dy_mean, u->slope, 0);
        else
            k->dx_infer_keeps(rows, u->channels, u->stride, (const char *)u->dy.p + at * size,
                              keeps, w * u->stride, dx + at * size, u->gain, 0);
    }
    expect_bytes(u, k, &u->dx, &want, train ? "dx_train_keeps over its words in dx"
                                            : "dx_infer_keeps over its words in dx");
    bng_buffer_free(&want);
    bng_test_free(ignored);
}

/* The ReLU ukernels: reduce_relu's sums are reduce's on dy masked by y, and it leaves
 * the keep words where it is told; dx_*_relu give dx_*'s bytes on the masked dy; the
 * _keeps ones give reduce's sums and dx_*'s bytes from keep words packed apart (the
 * forward's layout, here at a stride of their own), dx out of place and in place over
 * dy and (dx_train) over x, and from the words reduce_relu left in dx. */
static void relu_cases(uk_case *u, const bng_kernel *k)
{
    const size_t n = u->rows * u->stride, keeps_stride = u->channels + 5;
    bng_buffer masked = uk_copy(&u->dy), want, keeps, words, inout;
    unsigned state = 11u;
    float *start = floats(u->channels, &state, -4.0, 4.0);
    float *sum_dy = bng_test_alloc(u->channels * sizeof *sum_dy);
    float *sum_dyxm = bng_test_alloc(u->channels * sizeof *sum_dyxm);
    int train;

    bng_relu_backward(u->t, masked.p, u->y.p, n);
    memcpy(sum_dy, start, u->channels * sizeof *start);
    memcpy(sum_dyxm, start, u->channels * sizeof *start);
    keeps = bng_buffer_new(n * u->t->size);
    memset(keeps.p, BNG_OUTPUT_MARK, n * u->t->size);
    k->reduce_relu(u->rows, u->channels, u->stride, u->x.p, u->dy.p, u->y.p, u->mean, sum_dy,
                   sum_dyxm, keeps.p, u->stride);
    expect_reduce(u, k, masked.p, sum_dy, sum_dyxm, start);
    expect_words_in_rows(u, k, &keeps);

    words = bng_keep_bits(u->t, u->y.p, u->rows, u->channels, u->stride, keeps_stride);
    memcpy(sum_dy, start, u->channels * sizeof *start);
    memcpy(sum_dyxm, start, u->channels * sizeof *start);
    k->reduce_keeps(u->rows, u->channels, u->stride, u->x.p, u->dy.p, words.p, keeps_stride,
                    u->mean, sum_dy, sum_dyxm);
    expect_reduce(u, k, masked.p, sum_dy, sum_dyxm, start);

    for (train = 0; train <= 1; train++) {
        memset(u->dx.p, BNG_OUTPUT_MARK, n * u->t->size);
        want = expected_dx(u, train, u->x.p, masked.p, &u->dx);
        if (train)
            k->dx_train_relu(u->rows, u->channels, u->stride, u->x.p, u->dy.p, u->y.p, u->dx.p,
                             u->mean, u->gain, u->dy_mean, u->slope, train);
        else
            k->dx_infer_relu(u->rows, u->channels, u->stride, u->dy.p, u->y.p, u->dx.p, u->gain,
                             train);
        expect_bytes(u, k, &u->dx, &want, train ? "dx_train_relu" : "dx_infer_relu");

        memset(u->dx.p, BNG_OUTPUT_MARK, n * u->t->size);
        if (train)
            k->dx_train_keeps(u->rows, u->channels, u->stride, u->x.p, u->dy.p, words.p,
                              keeps_stride, u->dx.p, u->mean, u->gain, u->dy_mean, u->slope, 1);
        else
            k->dx_infer_keeps(u->rows, u->channels, u->stride, u->dy.p, words.p, keeps_stride,
                              u->dx.p, u->gain, 1);
        expect_bytes(u, k, &u->dx, &want, train ? "dx_train_keeps" : "dx_infer_keeps");
        bng_buffer_free(&want);

        inout = uk_copy(&u->dy);
        want = expected_dx(u, train, u->x.p, masked.p, &u->dy);
        if (train)
            k->dx_train_keeps(u->rows, u->channels, u->stride, u->x.p, inout.p, words.p,
                              keeps_stride, inout.p, u->mean, u->gain, u->dy_mean, u->slope, 0);
        else
            k->dx_infer_keeps(u->rows, u->channels, u->stride, inout.p, words.p, keeps_stride,
                              inout.p, u->gain, 0);
        expect_bytes(u, k, &inout, &want, train ? "dx_train_keeps in place over dy"
                                                : "dx_infer_keeps in place over dy");
        bng_buffer_free(&want);
        bng_buffer_free(&inout);
    }
    inout = uk_copy(&u->x);
    want = expected_dx(u, 1, u->x.p, masked.p, &u->x);
    k->dx_train_keeps(u->rows, u->channels, u->stride, inout.p, u->dy.p, words.p, keeps_stride,
                      inout.p, u->mean, u->gain, u->dy_mean, u->slope, 0);
    expect_bytes(u, k, &inout, &want, "dx_train_keeps in place over x");
    bng_buffer_free(&want);
    bng_buffer_free(&inout);
    for (train = 0; train <= 1; train++)
        keeps_in_dx_case(u, k, train, masked.p);
    bng_buffer_free(&words);
    bng_buffer_free(&keeps);
    bng_buffer_free(&masked);
    bng_test_free(start);
    bng_test_free(sum_dy);
    bng_test_free(sum_dyxm);
}
#endif

/* Every ukernel of kernel k on rows of `channels` (as the driver passes them: padded
 * on a split target), tight and inside a wider tensor (unified targets: a split
 * target's rows lie at the padded pitch), rows across block boundaries. */
static void kernel_cases(const bng_dtype *t, const bng_kernel *k, size_t channels, unsigned seed)
{
    const size_t rows[] = {1, BNG_BLOCK_ROWS + 1, 2 * BNG_BLOCK_ROWS + 6};
    const size_t padded = BNG_PADDED(channels);
    const size_t strides[] = {padded, BNG_SPLIT_MEMORY ? padded : padded + 7};
    size_t r, s;

    for (r = 0; r < sizeof rows / sizeof rows[0]; r++)
        for (s = 0; s < (BNG_SPLIT_MEMORY ? 1u : 2u); s++) {
            uk_case u;
            uk_init(&u, t, rows[r], padded, strides[s], seed + (unsigned)(r * 2 + s));
            reduce_case(&u, k, u.dy.p, k->reduce);
            dx_cases(&u, k);
#if BNG_HAS_RELU
            if (k->reduce_relu != NULL)
                relu_cases(&u, k);
#endif
            uk_free(&u);
        }
}

/* Each specialized kernel at its count, from the extended calls' table (the base
 * table's entries are the same ukernels: the vendor_tables case). */
START_TEST(test_ukernels_specialized)
{
    size_t i;
    for (i = 0; i < T->n_specialized; i++) {
        const bng_kernel *k = T->config->kernel_for_channels(T->specialized[i]);
        ck_assert_uint_eq(k->channels, T->specialized[i]);
        kernel_cases(T, k, T->specialized[i], (unsigned)i);
    }
}
END_TEST

/* The generic kernel at counts with every kind of tail, up to its chunk (the most the
 * driver passes it). */
START_TEST(test_ukernels_generic)
{
    const size_t counts[] = {1, T->lanes - 1, T->lanes, T->lanes + 1, 2 * T->lanes + 3,
                             T->generic_chunk - 1, T->generic_chunk};
    size_t i;
    for (i = 0; i < sizeof counts / sizeof counts[0]; i++)
        if (counts[i] >= 1)
            kernel_cases(T, T->generic, counts[i], 100u + (unsigned)i);
}
END_TEST

#if BNG_HAS_NCHW
/* ---- NCHW: a plane (or a piece of one) of n elements ---- */

/* reduce over n elements into lane sums that hold `start`: blocks of
 * BNG_NCHW_BLOCK_VECTORS vectors summed lane-wise from zero, then the tail's elements
 * each from zero into lanes 0, 1, ...: the replica bit for bit, and float64 within the
 * bound of that order (a lane's blocks, its blocks, 2 roundings more for the term). */
static void expect_nchw_reduce(const bng_dtype *t, const bng_nchw_kernel *k, size_t n,
                               const void *x, const void *dy, float mean,
                               const float *lane_dy, const float *lane_dyxm, float start)
{
    const size_t lanes = k->lanes, vectors = n / lanes;
    float want_dy[64], want_dyxm[64];
    double exact_dy[64], exact_dyxm[64], size_dy[64], size_dyxm[64];
    size_t l, i;

    ck_assert_uint_le(lanes, 64);
    for (l = 0; l < lanes; l++) {
        want_dy[l] = want_dyxm[l] = start;
        exact_dy[l] = exact_dyxm[l] = start;
        size_dy[l] = size_dyxm[l] = fabs(start);
    }
    for (i = 0; i < n; i += lanes * BNG_NCHW_BLOCK_VECTORS)
        for (l = 0; l < lanes; l++) {
            float acc_dy = 0.0f, acc_dyxm = 0.0f;
            size_t v;
            for (v = i / lanes; v < vectors && v < i / lanes + BNG_NCHW_BLOCK_VECTORS; v++) {
                const float d = at(t, dy, v * lanes + l);
                acc_dy = acc_dy + d;
                acc_dyxm = acc_dyxm + d * (at(t, x, v * lanes + l) - mean);
            }
            want_dy[l] = want_dy[l] + acc_dy;
            want_dyxm[l] = want_dyxm[l] + acc_dyxm;
        }
    for (l = 0; l < n % lanes; l++) {
        const float d = at(t, dy, vectors * lanes + l);
        const float acc_dy = 0.0f + d;
        const float acc_dyxm = 0.0f + d * (at(t, x, vectors * lanes + l) - mean);
        want_dy[l] = want_dy[l] + acc_dy;
        want_dyxm[l] = want_dyxm[l] + acc_dyxm;
    }
    for (i = 0; i < n; i++) {
        const double d = at(t, dy, i), term = d * ((double)at(t, x, i) - mean);
        l = i < vectors * lanes ? i % lanes : i - vectors * lanes;
        exact_dy[l] += d;
        exact_dyxm[l] += term;
        size_dy[l] += fabs(d);
        size_dyxm[l] += fabs(term);
    }
    if (memcmp(lane_dy, want_dy, lanes * sizeof(float)) != 0
        || memcmp(lane_dyxm, want_dyxm, lanes * sizeof(float)) != 0)
        ck_abort_msg("%s %s: reduce over %zu elements is not the replica's", t->name, k->name, n);
    for (l = 0; l < lanes; l++) {
        const double terms = (double)(n / lanes + BNG_NCHW_BLOCK_VECTORS + 4);
        if (fabs(lane_dy[l] - exact_dy[l]) > terms * UNIT_ROUNDOFF * size_dy[l]
            || fabs(lane_dyxm[l] - exact_dyxm[l]) > terms * UNIT_ROUNDOFF * size_dyxm[l])
            ck_abort_msg("%s %s: reduce over %zu elements: lane %zu beyond the float64 bound",
                         t->name, k->name, n, l);
    }
}

/* The NCHW coefficients of a plane: scalars, as the NHWC replica's per-channel arrays
 * (one a lane); as the kernels take them (bng_test_coef). */
#define NCHW_MEAN 0.25f
#define NCHW_GAIN (-1.5f)
#define NCHW_DY_MEAN 0.0625f
#define NCHW_SLOPE 0.125f
typedef struct {
    float room[4][BNG_TEST_COEF_LANES];
    bng_nchw_coef mean, gain, dy_mean, slope;
} nchw_coefs;

static void nchw_coefs_init(nchw_coefs *c)
{
    c->mean = bng_test_coef(c->room[0], NCHW_MEAN);
    c->gain = bng_test_coef(c->room[1], NCHW_GAIN);
    c->dy_mean = bng_test_coef(c->room[2], NCHW_DY_MEAN);
    c->slope = bng_test_coef(c->room[3], NCHW_SLOPE);
}

/* dx_train (train) or dx_infer of an NCHW kernel over n elements, dy masked by y with
 * `relu` (a unified target's), into dx; then the run's end. */
static void nchw_dx(const bng_nchw_kernel *k, const nchw_coefs *c, int train, int relu, size_t n,
                    const void *x, const void *dy, const void *y, void *dx, int stream)
{
#if BNG_SPLIT_MEMORY
    (void)y;
    if (relu)
        ck_abort_msg("%s: a split target's kernels have no _relu ukernels", k->name);
#else
    if (train && relu)
        k->dx_train_relu(n, x, dy, y, dx, NCHW_MEAN, NCHW_GAIN, NCHW_DY_MEAN, NCHW_SLOPE, stream);
    else if (relu)
        k->dx_infer_relu(n, dy, y, dx, NCHW_GAIN, stream);
    else
#endif
    if (train)
        k->dx_train(n, x, dy, dx, c->mean, c->gain, c->dy_mean, c->slope, stream);
    else
        k->dx_infer(n, dy, dx, c->gain, stream);
    k->dx_end(stream);
}

/* The plane's n elements (a split target's kernels also write the padding lanes of its
 * last vector, which no one reads). */
static void expect_plane(const uk_case *u, const bng_nchw_kernel *k, const bng_buffer *got,
                         const bng_buffer *want, const char *what)
{
    if (!bng_buffer_guards_intact(got) || memcmp(got->p, want->p, u->channels * u->t->size) != 0)
        ck_abort_msg("%s %s: %s over %zu elements", u->t->name, k->name, what, u->channels);
}

/* The plane's ukernels (and with relu their _relu twins, on dy masked by y) on n
 * elements: reduce, dx_train and dx_infer out of place with and without streaming
 * stores, dx_train and dx_infer in place over dy. */
static void nchw_cases(const bng_dtype *t, const bng_nchw_kernel *k, size_t n, unsigned seed)
{
    const float start = 3.0f;
    uk_case u;
    nchw_coefs c;
    float lane_dy[64], lane_dyxm[64];
    bng_buffer masked, want, inout;
    size_t l, i;
    int relu, train, stream;

    /* on a split target the plane padded to whole vectors, its padding x NaN and dy
     * Inf, which the reduce must keep out of every lane sum */
    uk_init(&u, t, 1, n, BNG_PADDED(n), seed);
    for (i = n; i < BNG_PADDED(n); i++) {
        bng_set_bits(t, u.x.p, i, 0x7fc00000u, 0x7e00u);
        bng_set_bits(t, u.dy.p, i, 0x7f800000u, 0x7c00u);
    }
    nchw_coefs_init(&c);
    masked = uk_copy(&u.dy);
    bng_relu_backward(t, masked.p, u.y.p, n);
    for (i = 0; i < n; i++) {
        u.mean[i] = NCHW_MEAN;
        u.gain[i] = NCHW_GAIN;
        u.dy_mean[i] = NCHW_DY_MEAN;
        u.slope[i] = NCHW_SLOPE;
    }
    for (relu = 0; relu <= (k->reduce_relu != NULL); relu++) {
        const void *dy = relu ? masked.p : u.dy.p;
        for (l = 0; l < k->lanes; l++)
            lane_dy[l] = lane_dyxm[l] = start;
#if !BNG_SPLIT_MEMORY
        if (relu)
            k->reduce_relu(n, u.x.p, u.dy.p, u.y.p, NCHW_MEAN, lane_dy, lane_dyxm);
        else
#endif
            k->reduce(n, u.x.p, u.dy.p, c.mean, lane_dy, lane_dyxm);
        expect_nchw_reduce(t, k, n, u.x.p, dy, NCHW_MEAN, lane_dy, lane_dyxm, start);
        for (train = 0; train <= 1; train++) {
            for (stream = 0; stream <= 1; stream++) {
                memset(u.dx.p, BNG_OUTPUT_MARK, n * t->size);
                want = expected_dx(&u, train, u.x.p, dy, &u.dx);
                nchw_dx(k, &c, train, relu, n, u.x.p, u.dy.p, u.y.p, u.dx.p, stream);
                expect_plane(&u, k, &u.dx, &want, relu ? "a _relu dx ukernel" : "a dx ukernel");
                bng_buffer_free(&want);
            }
            inout = uk_copy(&u.dy);
            want = expected_dx(&u, train, u.x.p, dy, &u.dy);
            nchw_dx(k, &c, train, relu, n, u.x.p, inout.p, u.y.p, inout.p, 0);
            expect_plane(&u, k, &inout, &want, "a dx ukernel in place over dy");
            bng_buffer_free(&want);
            bng_buffer_free(&inout);
        }
    }
    bng_buffer_free(&masked);
    uk_free(&u);
}

/* Each specialized extent's kernel on its whole plane, the generic one on pieces of
 * every kind of length (blocks and tails). */
START_TEST(test_ukernels_nchw)
{
#define UK_NCHW_EXTENT(s) nchw_cases(T, T->config->nchw_kernel_for_spatial(s), (s), (unsigned)(s));
    const bng_nchw_kernel *generic = T->config->nchw_kernel_for_spatial(0);
    const size_t lanes = generic->lanes, block = lanes * BNG_NCHW_BLOCK_VECTORS;
    const size_t pieces[] = {1, lanes - 1, lanes, lanes + 3, block, block + lanes + 5,
                             2 * block + 1};
    size_t i;

    ck_assert_uint_eq(generic->spatial, 0);
    BNG_NCHW_SPATIAL(UK_NCHW_EXTENT)
    for (i = 0; i < sizeof pieces / sizeof pieces[0]; i++)
        if (pieces[i] >= 1)
            nchw_cases(T, generic, pieces[i], 500u + (unsigned)i);
#undef UK_NCHW_EXTENT
}
END_TEST
#endif

void bng_ukernel_add_tests(Suite *s)
{
    const bng_test_case cases[] = {
        {"ukernels_specialized", test_ukernels_specialized, "private"},
        {"ukernels_generic", test_ukernels_generic, "private"},
#if BNG_HAS_NCHW
        {"ukernels_nchw", test_ukernels_nchw, "private"},
#endif
    };
    bng_add_cases(s, cases, sizeof cases / sizeof cases[0]);
}
