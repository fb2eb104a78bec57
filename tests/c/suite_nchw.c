/* The NCHW (channel axis 1, BNG_FLAG_NCHW) cases of the Check suite: every extended
 * call, _p and _s, every storage type, against the float64 reference. An NCHW case is
 * an NHWC case of batch * spatial rows (bng_case: its data, reference and checks) whose
 * elements the test also lays out as x[batch][channel][spatial]: section 1's operation
 * is the same on both, with m = batch * spatial.
 */
#include <check.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bng_dtypes.h"
#include "bng_suites.h"

#if BNG_HAS_NCHW

/* An NCHW case: `k` holds the NHWC layout (row b * spatial + s) and the block; x, dy, dx
 * the NCHW layout, each inside guard bytes. k's block is set for the NCHW call (batch,
 * flags, spatial) except while its results are checked. */
typedef struct {
    bng_case k;
    size_t batch, spatial;
    bng_buffer arrays[3];         /* x, dy, dx inside guards */
    void *x, *dy, *dx;
    size_t bytes;
    long long reserved_spatial;   /* k's sentinel in slot 14, put back to check it */
} nchw_case;

/* The NHWC index of NCHW element i. */
static size_t nhwc_index(const nchw_case *n, size_t i)
{
    const size_t channel = n->k.channel, s = i % n->spatial, c = i / n->spatial % channel;
    const size_t b = i / n->spatial / channel;
    return (b * n->spatial + s) * channel + c;
}

static void *guarded(nchw_case *n, int which)
{
    n->arrays[which] = bng_buffer_new(n->bytes);
    return n->arrays[which].p;
}

static void nchw_use_block(nchw_case *n, int nchw)
{
    n->k.params[BNG_PARAM_BATCH] = (long long)(nchw ? n->batch : n->batch * n->spatial);
    n->k.params[BNG_CASE_FLAGS] = nchw ? BNG_CASE_NCHW : 0;
    n->k.params[BNG_CASE_SPATIAL] = nchw ? (long long)n->spatial : n->reserved_spatial;
}

static void nchw_init(nchw_case *n, const bng_dtype *t, size_t batch, size_t channel,
                      size_t spatial, int is_train, enum bng_data data, unsigned seed)
{
    const size_t size = t->size;
    size_t i;

    bng_case_init(&n->k, t, batch * spatial, channel, is_train, data, seed);
    n->batch = batch;
    n->spatial = spatial;
    n->bytes = batch * channel * spatial * size;
    n->x = guarded(n, 0);
    n->dy = guarded(n, 1);
    n->dx = guarded(n, 2);
    for (i = 0; i < batch * channel * spatial; i++) {
        memcpy((unsigned char *)n->x + i * size, (unsigned char *)n->k.x.p + nhwc_index(n, i) * size, size);
        memcpy((unsigned char *)n->dy + i * size, (unsigned char *)n->k.dy.p + nhwc_index(n, i) * size, size);
    }
    memset(n->dx, BNG_OUTPUT_MARK, n->bytes);
    n->reserved_spatial = n->k.params[BNG_CASE_SPATIAL];
    nchw_use_block(n, 1);
}

static void nchw_free(nchw_case *n)
{
    int i;
    for (i = 0; i < 3; i++)
        bng_buffer_free(&n->arrays[i]);
    bng_case_free(&n->k);
}

static void nchw_check_guards(const nchw_case *n)
{
    int i;
    for (i = 0; i < 3; i++)
        if (!bng_buffer_guards_intact(&n->arrays[i]))
            ck_abort_msg("%s: guard bytes around NCHW array %d were written", n->k.t->name, i);
}

/* The call of `op` on the case's NCHW arrays (dx-only: dy, dx; reduce: x, dy). */
static void nchw_call(nchw_case *n, int op, int shared, int mask)
{
    bng_case_call(&n->k, op, shared, op == BNG_OP_DX ? NULL : n->x, n->dy,
                  op == BNG_OP_REDUCE ? NULL : n->dx, mask);
}

/* dx back in NHWC order into k, and k's results against the float64 reference with
 * m = batch * spatial (k has batch * spatial rows). */
static void nchw_check(nchw_case *n)
{
    const size_t size = n->k.t->size;
    size_t i;

    for (i = 0; i < n->batch * n->k.channel * n->spatial; i++)
        memcpy((unsigned char *)n->k.dx.p + nhwc_index(n, i) * size, (unsigned char *)n->dx + i * size, size);
    nchw_use_block(n, 0);
    bng_case_check(&n->k);
    nchw_use_block(n, 1);
    nchw_check_guards(n);
}

/* bng_expect_same with the case's shape in the message. */
static void expect_same(const void *a, const void *b, size_t bytes, const nchw_case *n,
                        const char *what)
{
    char shape[96];
    snprintf(shape, sizeof shape, "%s: batch %zu channel %zu spatial %zu", n->k.t->name,
             n->batch, n->k.channel, n->spatial);
    bng_expect_same(a, b, bytes, shape, what);
}

/* Extents: each specialized one, and off the plan: 1, below, at and above a vector,
 * a block and then some (two blocks and a tail). */
#define ADD_EXTENT(s) out[n++] = (s);
/* The extents a case walks: the plan's and five more (NCHW_MAX_EXTENTS, bng_suites.h;
 * the training forward's NCHW cases walk them too). */
#define MAX_EXTENTS NCHW_MAX_EXTENTS
size_t bng_nchw_extents(const bng_dtype *t, size_t *out)
{
    size_t n = 0;
    BNG_NCHW_SPATIAL(ADD_EXTENT)
    out[n++] = 1;
    out[n++] = t->lanes - 1 ? t->lanes - 1 : 2;
    out[n++] = t->lanes;
    out[n++] = t->lanes + 1;
    out[n++] = 2 * BNG_NCHW_BLOCK_VECTORS * t->lanes + 3;
    return n;
}

#define IS_EXTENT(e) || s == (e)
static int specialized(size_t s)
{
    return 0 BNG_NCHW_SPATIAL(IS_EXTENT);
}

/* Batch for an extent: several blocks and row groups of planes where the planes are
 * small, a few planes where they are large. */
static size_t batch_for(size_t spatial)
{
    return spatial >= 3000 ? 2 : spatial >= 100 ? 7 : 600;
}

static void run_ext_within_bound(const bng_dtype *t, size_t batch, size_t channel, size_t spatial,
                                 int is_train, enum bng_data data, unsigned seed)
{
    nchw_case n;
    nchw_init(&n, t, batch, channel, spatial, is_train, data, seed);
    nchw_call(&n, BNG_OP_EXT, 0, 0);
    nchw_check(&n);
    nchw_free(&n);
}

/* ext, training and inference, against the reference at every extent. */
START_TEST(test_nchw_within_bound)
{
    size_t spatial[MAX_EXTENTS], count = bng_nchw_extents(T, spatial), i;
    int train;
    for (i = 0; i < count; i++)
        for (train = 0; train <= 1; train++)
            run_ext_within_bound(T, batch_for(spatial[i]), 3, spatial[i], train, BNG_DATA_RANDOM,
                                 (unsigned)(i * 2 + train));
}
END_TEST

/* A large mean against a small spread, where sum(dy*x) - mean*sum(dy) cancels, at the
 * ResNet extents and one across blocks. */
START_TEST(test_nchw_large_mean)
{
    const size_t spatial[] = {49, 784, 3136, 12544, 2 * BNG_NCHW_BLOCK_VECTORS * 32 + 5};
    size_t i;
    for (i = 0; i < sizeof spatial / sizeof spatial[0]; i++)
        run_ext_within_bound(T, spatial[i] >= 3000 ? 3 : 40, 2, spatial[i], 1, BNG_DATA_LARGE_MEAN,
                             (unsigned)i + 50);
}
END_TEST

/* A copy of n elements of `size` bytes in whole vectors of the widest lanes, zero past
 * them: a split target's kernels read and write whole vectors (its rows are padded). */
static void *padded_copy(const void *from, size_t n, size_t size)
{
    const size_t bytes = BNG_PADDED(n) * size;
    unsigned char *to = bng_test_alloc(bytes);
    memset(to, 0, bytes);
    memcpy(to, from, n * size);
    return to;
}

/* Each specialized extent's kernel gives the generic kernel's bits, and so does the
 * generic kernel on the plane in pieces of whole blocks (as _s streams a large plane). */
START_TEST(test_nchw_specialized_is_generic)
{
    const bng_dtype_config *config = T->size == 4 ? &bng_f32_config :
#if BNG_HAS_F16
        &bng_f16_config;
#else
        NULL;
#endif
    size_t spatial[MAX_EXTENTS], count = bng_nchw_extents(T, spatial), i, j;
    const bng_nchw_kernel *generic = config->nchw_kernel_for_spatial(0);

    ck_assert_uint_eq(generic->spatial, 0);
    for (i = 0; i < count; i++) {
        const bng_nchw_kernel *k = config->nchw_kernel_for_spatial(spatial[i]);
        const size_t s = spatial[i], block = BNG_NCHW_BLOCK_VECTORS * k->lanes;
        nchw_case n;
        float lanes[3][2][64], mean[BNG_TEST_COEF_LANES], gain[BNG_TEST_COEF_LANES];
        float dy_mean[BNG_TEST_COEF_LANES], slope[BNG_TEST_COEF_LANES];
        const bng_nchw_coef m = bng_test_coef(mean, 0.25f), g = bng_test_coef(gain, 1.5f);
        const bng_nchw_coef dm = bng_test_coef(dy_mean, -0.125f), sl = bng_test_coef(slope, 0.75f);
        unsigned char *x, *dy, *dx[2];
        int way;

        nchw_init(&n, T, 1, 1, s, 1, BNG_DATA_RANDOM, (unsigned)i + 90);
        x = padded_copy(n.x, s, T->size);
        dy = padded_copy(n.dy, s, T->size);
        dx[0] = padded_copy(n.dx, s, T->size);
        dx[1] = padded_copy(n.dx, s, T->size);
        memset(lanes, 0, sizeof lanes);
        k->reduce(s, x, dy, m, lanes[0][0], lanes[0][1]);
        generic->reduce(s, x, dy, m, lanes[1][0], lanes[1][1]);
        for (j = 0; j < s; j += block)
            generic->reduce(s - j < block ? s - j : block, x + j * T->size, dy + j * T->size, m,
                            lanes[2][0], lanes[2][1]);
        for (way = 1; way <= 2; way++)
            expect_same(lanes[0], lanes[way], sizeof lanes[0], &n, way == 1 ? "the generic reduce differs" : "the reduce in pieces differs");
        k->dx_train(s, x, dy, dx[0], m, g, dm, sl, 0);
        generic->dx_train(s, x, dy, dx[1], m, g, dm, sl, 0);
        expect_same(dx[0], dx[1], n.bytes, &n, "the generic dx_train differs");
        k->dx_infer(s, dy, dx[0], g, 0);
        generic->dx_infer(s, dy, dx[1], g, 0);
        expect_same(dx[0], dx[1], n.bytes, &n, "the generic dx_infer differs");
        if (k->spatial != (specialized(s) ? s : 0) || (k == generic) == specialized(s))
            ck_abort_msg("%s: extent %zu dispatches to %s", T->name, s, k->name);
        bng_test_free(x);
        bng_test_free(dy);
        bng_test_free(dx[0]);
        bng_test_free(dx[1]);
        nchw_free(&n);
    }
}
END_TEST

/* reduce then apply with the buffer as reduce left it (count batch * spatial) gives
 * ext's bits; dx-only gives the NHWC dx-only's bits, element for element. */
START_TEST(test_nchw_reduce_apply_dx_only)
{
    const size_t spatial[] = {T->lanes + 1, 49, 3 * BNG_NCHW_BLOCK_VECTORS * T->lanes};
    size_t i;
    int shared;

    for (i = 0; i < sizeof spatial / sizeof spatial[0]; i++)
        for (shared = 0; shared <= 1; shared++) {
            nchw_case n;
            unsigned char *dx_ext, *dbias_ext, *dscale_ext;
            const float *limb;
            unsigned long long count = 0;
            int l;

            nchw_init(&n, T, 5, 3, spatial[i], 1, BNG_DATA_RANDOM, (unsigned)i + 120);
            dx_ext = bng_test_alloc(n.bytes);
            dbias_ext = bng_test_alloc(n.k.dbias.bytes);
            dscale_ext = bng_test_alloc(n.k.dscale.bytes);
            nchw_call(&n, BNG_OP_EXT, shared, FULL_MASK);
            ck_assert_int_eq(n.k.params[BNG_PARAM_STATUS], BNG_OK);
            memcpy(dx_ext, n.dx, n.bytes);
            memcpy(dbias_ext, n.k.dbias.p, n.k.dbias.bytes);
            memcpy(dscale_ext, n.k.dscale.p, n.k.dscale.bytes);
            bng_case_mark_outputs(&n.k);
            memset(n.dx, BNG_OUTPUT_MARK, n.bytes);
            nchw_call(&n, BNG_OP_REDUCE, shared, FULL_MASK);
            ck_assert_int_eq(n.k.params[BNG_PARAM_STATUS], BNG_OK);
            limb = (const float *)n.k.sums.p + 2 * n.k.channel;
            for (l = BNG_SUMS_COUNT_LIMBS - 1; l >= 0; l--)
                count = count << BNG_SUMS_LIMB_BITS | (unsigned long long)limb[l];
            ck_assert_uint_eq(count, 5 * spatial[i]);
            nchw_call(&n, BNG_OP_APPLY, shared, FULL_MASK);
            ck_assert_int_eq(n.k.params[BNG_PARAM_STATUS], BNG_OK);
            expect_same(n.dx, dx_ext, n.bytes, &n, "reduce + apply dx differs from ext");
            expect_same(n.k.dbias.p, dbias_ext, n.k.dbias.bytes, &n, "reduce + apply dbias differs from ext");
            expect_same(n.k.dscale.p, dscale_ext, n.k.dscale.bytes, &n, "reduce + apply dscale differs from ext");
            /* dx-only: elementwise, so NCHW's dx is NHWC's, moved. */
            nchw_call(&n, BNG_OP_DX, shared, FULL_MASK);
            ck_assert_int_eq(n.k.params[BNG_PARAM_STATUS], BNG_OK);
            memcpy(dx_ext, n.dx, n.bytes);
            nchw_use_block(&n, 0);
            bng_case_call(&n.k, BNG_OP_DX, shared, NULL, n.k.dy.p, n.k.dx.p, FULL_MASK);
            ck_assert_int_eq(n.k.params[BNG_PARAM_STATUS], BNG_OK);
            nchw_use_block(&n, 1);
            {
                size_t e;
                for (e = 0; e < n.batch * n.k.channel * n.spatial; e++)
                    if (memcmp(dx_ext + e * T->size, (unsigned char *)n.k.dx.p + nhwc_index(&n, e) * T->size, T->size))
                        ck_abort_msg("%s: dx-only element %zu differs from NHWC's", T->name, e);
            }
            nchw_check_guards(&n);
            bng_test_free(dx_ext);
            bng_test_free(dbias_ext);
            bng_test_free(dscale_ext);
            nchw_free(&n);
        }
}
END_TEST

/* _s gives _p's bits for every op and core mask: planes in whole tiles, in pieces
 * larger than a tile buffer of private memory, more cores than channels. */
START_TEST(test_nchw_shared_matches_private)
{
    const size_t beyond = BNG_PRIVATE_BYTES / 4 / T->size + 7;   /* a plane in pieces */
    const struct { size_t batch, channel, spatial; } shapes[] = {
        {3, 5, T->lanes + 1}, {40, 9, 49}, {2, 3, beyond}, {1, 1, 3},
    };
    const int masks[] = {1, FULL_MASK, FULL_MASK & 0x55, 1 << (BNG_TARGET_CORES - 1), FULL_MASK & 6};
    const int ops[] = {BNG_OP_EXT, BNG_OP_REDUCE, BNG_OP_APPLY, BNG_OP_DX};
    size_t sh, m, o;

    for (sh = 0; sh < sizeof shapes / sizeof shapes[0]; sh++)
        for (o = 0; o < sizeof ops / sizeof ops[0]; o++) {
            nchw_case n;
            unsigned char *dx, *dbias, *dscale, *sums;

            nchw_init(&n, T, shapes[sh].batch, shapes[sh].channel, shapes[sh].spatial, 1,
                      BNG_DATA_RANDOM, (unsigned)(sh * 7 + o));
            if (ops[o] == BNG_OP_APPLY)
                nchw_call(&n, BNG_OP_REDUCE, 0, 0);     /* the buffer apply reads */
            nchw_call(&n, ops[o], 0, 0);
            ck_assert_int_eq(n.k.params[BNG_PARAM_STATUS], BNG_OK);
            dx = bng_test_alloc(n.bytes);
            dbias = bng_test_alloc(n.k.dbias.bytes);
            dscale = bng_test_alloc(n.k.dscale.bytes);
            sums = bng_test_alloc(n.k.sums.bytes);
            memcpy(dx, n.dx, n.bytes);
            memcpy(dbias, n.k.dbias.p, n.k.dbias.bytes);
            memcpy(dscale, n.k.dscale.p, n.k.dscale.bytes);
            memcpy(sums, n.k.sums.p, n.k.sums.bytes);
            for (m = 0; m < sizeof masks / sizeof masks[0]; m++) {
                if (masks[m] == 0)
                    continue;
                bng_case_mark_outputs(&n.k);
                memset(n.dx, BNG_OUTPUT_MARK, n.bytes);
                if (ops[o] == BNG_OP_REDUCE)
                    memset(n.k.sums.p, BNG_OUTPUT_MARK, n.k.sums.bytes);
                nchw_call(&n, ops[o], 1, masks[m]);
                ck_assert_int_eq(n.k.params[BNG_PARAM_STATUS], BNG_OK);
                if (ops[o] != BNG_OP_REDUCE)
                    expect_same(n.dx, dx, n.bytes, &n, "_s dx differs from _p");
                if (ops[o] == BNG_OP_EXT || ops[o] == BNG_OP_APPLY) {
                    expect_same(n.k.dbias.p, dbias, n.k.dbias.bytes, &n, "_s dbias differs from _p");
                    expect_same(n.k.dscale.p, dscale, n.k.dscale.bytes, &n, "_s dscale differs from _p");
                }
                expect_same(n.k.sums.p, sums, n.k.sums.bytes, &n, "_s sums differs from _p");
                nchw_check_guards(&n);
            }
            bng_test_free(dx);
            bng_test_free(dbias);
            bng_test_free(dscale);
            bng_test_free(sums);
            nchw_free(&n);
        }
}
END_TEST

/* A dx of 8 MiB or more, which _p writes with streaming stores on x86 hosts
 * (include/bng_steps.h BNG_STREAM_DX_BYTES) and fences once at the end of the call:
 * within the bound, and _s's bits (whose private tiles are stored plainly). At 196
 * elements a plane (784 bytes in f32) most planes start off a vector boundary, so a
 * call mixes streaming and plain stores. Not on a split target, whose _p stages
 * through private tiles too: no streaming store to test. */
START_TEST(test_nchw_streaming_dx)
{
    const size_t batch = 16, spatial = 196;
    const size_t channel = ((size_t)8 << 20) / T->size / (batch * spatial) + 1;
    nchw_case n;
    unsigned char *dx;

    if (BNG_SPLIT_MEMORY)
        return;
    nchw_init(&n, T, batch, channel, spatial, 1, BNG_DATA_RANDOM, 170);
    ck_assert_uint_ge(n.bytes, (size_t)8 << 20);
    nchw_call(&n, BNG_OP_EXT, 0, 0);
    ck_assert_int_eq(n.k.params[BNG_PARAM_STATUS], BNG_OK);
    dx = bng_test_alloc(n.bytes);
    memcpy(dx, n.dx, n.bytes);
    nchw_check(&n);
    memset(n.dx, BNG_OUTPUT_MARK, n.bytes);
    nchw_call(&n, BNG_OP_EXT, 1, FULL_MASK);
    ck_assert_int_eq(n.k.params[BNG_PARAM_STATUS], BNG_OK);
    expect_same(n.dx, dx, n.bytes, &n, "_s dx differs from _p's streamed dx");
    bng_test_free(dx);
    nchw_free(&n);
}
END_TEST

/* NCHW with ACCUMULATE (ext, apply; _p and _s): onto zeros, the plain call's bits;
 * dx unchanged by the flag. */
START_TEST(test_nchw_accumulate)
{
    int shared;
    for (shared = 0; shared <= 1; shared++) {
        nchw_case n;
        unsigned char *dbias, *dscale, *dx;

        nchw_init(&n, T, 4, 3, 49, 1, BNG_DATA_RANDOM, 77);
        nchw_call(&n, BNG_OP_EXT, shared, FULL_MASK);
        dbias = bng_test_alloc(n.k.dbias.bytes);
        dscale = bng_test_alloc(n.k.dscale.bytes);
        dx = bng_test_alloc(n.bytes);
        memcpy(dbias, n.k.dbias.p, n.k.dbias.bytes);
        memcpy(dscale, n.k.dscale.p, n.k.dscale.bytes);
        memcpy(dx, n.dx, n.bytes);
        memset(n.k.dbias.p, 0, n.k.dbias.bytes);
        memset(n.k.dscale.p, 0, n.k.dscale.bytes);
        memset(n.dx, BNG_OUTPUT_MARK, n.bytes);
        n.k.params[BNG_CASE_FLAGS] = BNG_CASE_NCHW | BNG_CASE_ACCUMULATE;
        nchw_call(&n, BNG_OP_EXT, shared, FULL_MASK);
        ck_assert_int_eq(n.k.params[BNG_PARAM_STATUS], BNG_OK);
        expect_same(n.k.dbias.p, dbias, n.k.dbias.bytes, &n, "dbias accumulated onto zeros differs");
        expect_same(n.k.dscale.p, dscale, n.k.dscale.bytes, &n, "dscale accumulated onto zeros differs");
        expect_same(n.dx, dx, n.bytes, &n, "dx differs with ACCUMULATE");
        /* onto the plain results: twice them */
        nchw_call(&n, BNG_OP_EXT, shared, FULL_MASK);
        if (bng_stats_get(T, n.k.dbias.p, 0) != 2 * bng_stats_get(T, dbias, 0))
            ck_abort_msg("%s: accumulating onto dbias %g gave %g", T->name, bng_stats_get(T, dbias, 0),
                         bng_stats_get(T, n.k.dbias.p, 0));
        bng_test_free(dbias);
        bng_test_free(dscale);
        bng_test_free(dx);
        nchw_free(&n);
    }
}
END_TEST

/* dx in place over dy or x, and dbias over mean, dscale over invar (the very arrays,
 * section 7): the bits of separate arrays, _p and _s. */
START_TEST(test_nchw_in_place_and_aliases)
{
    int shared, way;
    for (shared = 0; shared <= 1; shared++) {
        nchw_case n;
        unsigned char *dx, *dbias, *dscale, *copy;

        nchw_init(&n, T, 3, 4, 2 * BNG_NCHW_BLOCK_VECTORS * T->lanes + 5, 1, BNG_DATA_RANDOM, 31);
        nchw_call(&n, BNG_OP_EXT, shared, FULL_MASK);
        ck_assert_int_eq(n.k.params[BNG_PARAM_STATUS], BNG_OK);
        dx = bng_test_alloc(n.bytes);
        dbias = bng_test_alloc(n.k.dbias.bytes);
        dscale = bng_test_alloc(n.k.dscale.bytes);
        copy = bng_test_alloc(n.bytes);
        memcpy(dx, n.dx, n.bytes);
        memcpy(dbias, n.k.dbias.p, n.k.dbias.bytes);
        memcpy(dscale, n.k.dscale.p, n.k.dscale.bytes);
        for (way = 0; way < 2; way++) {      /* dx = dy, dx = x */
            void *target = way == 0 ? n.dy : n.x;
            memcpy(copy, target, n.bytes);
            bng_case_call(&n.k, BNG_OP_EXT, shared, n.x, n.dy, target, FULL_MASK);
            ck_assert_int_eq(n.k.params[BNG_PARAM_STATUS], BNG_OK);
            expect_same(target, dx, n.bytes, &n, way == 0 ? "dx over dy differs" : "dx over x differs");
            memcpy(target, copy, n.bytes);
        }
        /* dbias over mean, dscale over invar: copies, as the call overwrites them */
        memcpy(n.k.dbias.p, n.k.mean.p, n.k.dbias.bytes);
        memcpy(n.k.dscale.p, n.k.invar.p, n.k.dscale.bytes);
        n.k.params[BNG_PARAM_MEAN] = n.k.params[BNG_PARAM_DBIAS];
        n.k.params[BNG_PARAM_INVAR] = n.k.params[BNG_PARAM_DSCALE];
        nchw_call(&n, BNG_OP_EXT, shared, FULL_MASK);
        ck_assert_int_eq(n.k.params[BNG_PARAM_STATUS], BNG_OK);
        expect_same(n.k.dbias.p, dbias, n.k.dbias.bytes, &n, "dbias over mean differs");
        expect_same(n.k.dscale.p, dscale, n.k.dscale.bytes, &n, "dscale over invar differs");
        expect_same(n.dx, dx, n.bytes, &n, "dx with dbias over mean differs");
        nchw_check_guards(&n);
        bng_test_free(dx);
        bng_test_free(dbias);
        bng_test_free(dscale);
        bng_test_free(copy);
        nchw_free(&n);
    }
}
END_TEST

/* 1 when none of n's outputs (its dx, dbias, dscale) was written since they were marked. */
static int nchw_outputs_marked(const nchw_case *n)
{
    return bng_bytes_are_marked(n->dx, n->bytes) && bng_buffer_is_marked(&n->k.dbias)
        && bng_buffer_is_marked(&n->k.dscale);
}

/* An error: the status alone is written (the NCHW dx, and what bng_expect_refused
 * checks: dbias, dscale, the buffer). */
static void expect_error(nchw_case *n, int op, int shared, long long expected, const char *what)
{
    memset(n->dx, BNG_OUTPUT_MARK, n->bytes);
    bng_expect_refused(&n->k, op, shared, op == BNG_OP_DX ? NULL : n->x, n->dy,
                       op == BNG_OP_REDUCE ? NULL : n->dx, FULL_MASK, expected, what);
    if (!bng_bytes_are_marked(n->dx, n->bytes))
        ck_abort_msg("%s op %d %s: the NCHW dx was written", n->k.t->name, op, what);
    nchw_check_guards(n);
}

/* NCHW _s on a HAL that gives no private memory to any core (the host HAL told to,
 * bng_test_hal_refuse): no output written; the next call, the HAL restored, is within
 * the bound. */
START_TEST(test_nchw_hal_refusal_writes_nothing)
{
    nchw_case n;

    if (!bng_test_hal_refuse(1, 0))
        return;
    nchw_init(&n, T, 2, 3, 20, 1, BNG_DATA_RANDOM, 9);
    bng_case_mark_outputs(&n.k);
    nchw_call(&n, BNG_OP_EXT, 1, FULL_MASK);
    bng_test_hal_refuse(0, 0);
    if (!nchw_outputs_marked(&n))
        ck_abort_msg("%s: NCHW _s without private memory wrote an output", T->name);
    nchw_call(&n, BNG_OP_EXT, 1, FULL_MASK);
    nchw_check(&n);
    nchw_free(&n);
}
END_TEST

#if BNG_HAS_RELU
/* NCHW's keep bits in slot 15 (BNG_FLAG_RELU_BITS), nothing written on error: NULL
 * (BNG_ENULL), over dx (BNG_EOVERLAP) by their own length, batch * channel planes of
 * ceil(spatial / W) words (ending just before dx accepted, one element further
 * refused), on the case's shape and on 2x3x40, whose planes' words differ in number
 * from those of its batch * spatial rows taken as NHWC's in either type. */
static void nchw_bits_span(nchw_case *n, int op, int shared)
{
    const size_t size = n->k.t->size, rows = 8 * size;
    const size_t bits_bytes = n->batch * n->k.channel * ((n->spatial + rows - 1) / rows) * size;
    bng_buffer after = bng_buffer_new(bits_bytes + n->bytes);
    void *own_dx = n->dx;

    memset(after.p, 0, bits_bytes);
    n->k.params[BNG_CASE_FLAGS] = BNG_CASE_NCHW | BNG_CASE_RELU | BNG_CASE_RELU_BITS;
    n->k.params[BNG_CASE_Y] = 0;
    expect_error(n, op, shared, BNG_ENULL, "NCHW and RELU_BITS, the bits NULL");
    if (op != BNG_OP_REDUCE) {
        n->k.params[BNG_CASE_Y] = (long long)(intptr_t)after.p;
        n->dx = (unsigned char *)after.p + bits_bytes - size;
        expect_error(n, op, shared, BNG_EOVERLAP, "NCHW and RELU_BITS, the bits' last under dx");
        n->dx = (unsigned char *)after.p + bits_bytes;
        nchw_call(n, op, shared, FULL_MASK);
        ck_assert_int_eq(n->k.params[BNG_PARAM_STATUS], BNG_OK);
        n->dx = own_dx;
    }
    n->k.params[BNG_CASE_FLAGS] = BNG_CASE_NCHW;
    bng_buffer_free(&after);
}

static void nchw_bits_errors(nchw_case *n, int op, int shared)
{
    nchw_case wide;

    nchw_bits_span(n, op, shared);
    nchw_init(&wide, n->k.t, 2, 3, 40, 1, BNG_DATA_RANDOM, 6);
    nchw_call(&wide, BNG_OP_REDUCE, 0, 0);          /* apply's buffer: count 80 */
    nchw_bits_span(&wide, op, shared);
    nchw_free(&wide);
}
#endif

/* Hostile blocks: spatial 0, negative or overflowing; flags the call cannot honour;
 * arrays that overlap only over the NCHW extent (y with BNG_FLAG_RELU too, and its keep
 * bits); apply's count below batch * spatial. */
START_TEST(test_nchw_errors)
{
    const int ops[] = {BNG_OP_EXT, BNG_OP_REDUCE, BNG_OP_APPLY, BNG_OP_DX};
    size_t o;
    int shared;

    for (shared = 0; shared <= 1; shared++)
        for (o = 0; o < sizeof ops / sizeof ops[0]; o++) {
            const int op = ops[o];
            nchw_case n;

            nchw_init(&n, T, 2, 3, 20, 1, BNG_DATA_RANDOM, 5);
            nchw_call(&n, BNG_OP_REDUCE, 0, 0);          /* apply's buffer: count 40 */
            n.k.params[BNG_CASE_SPATIAL] = 0;
            expect_error(&n, op, shared, BNG_EBATCH, "spatial 0");
            n.k.params[BNG_CASE_SPATIAL] = -3;
            expect_error(&n, op, shared, BNG_EBATCH, "spatial -3");
            n.k.params[BNG_CASE_SPATIAL] = LLONG_MAX;
            expect_error(&n, op, shared, BNG_ERANGE, "spatial LLONG_MAX");
            n.k.params[BNG_CASE_SPATIAL] = (long long)1 << 31;
            expect_error(&n, op, shared, BNG_ERANGE, "spatial 2^31 (beyond the address space)");
            n.k.params[BNG_CASE_SPATIAL] = 20;
            n.k.params[BNG_CASE_FLAGS] = BNG_CASE_NCHW | (long long)1 << 30;
            expect_error(&n, op, shared, BNG_CASE_EFLAGS, "NCHW and an unknown flag bit");
            if (op == BNG_OP_REDUCE || op == BNG_OP_DX) {
                n.k.params[BNG_CASE_FLAGS] = BNG_CASE_NCHW | BNG_CASE_ACCUMULATE;
                expect_error(&n, op, shared, BNG_CASE_EFLAGS, "NCHW and ACCUMULATE");
            }
#if BNG_HAS_RELU
            {
                const long long y_slot = n.k.params[BNG_CASE_Y];
                n.k.params[BNG_CASE_FLAGS] = BNG_CASE_NCHW | BNG_CASE_RELU;
                n.k.params[BNG_CASE_Y] = 0;
                expect_error(&n, op, shared, BNG_ENULL, "NCHW and RELU, y NULL");
                if (op != BNG_OP_REDUCE) {
                    /* y over dx's NCHW extent, past its first batch * channel elements */
                    n.k.params[BNG_CASE_Y] = (long long)(intptr_t)((unsigned char *)n.dx + 2 * 3 * T->size);
                    expect_error(&n, op, shared, BNG_EOVERLAP, "NCHW and RELU, y inside dx");
                }
                nchw_bits_errors(&n, op, shared);
                n.k.params[BNG_CASE_Y] = y_slot;
            }
#endif
            n.k.params[BNG_CASE_FLAGS] = BNG_CASE_NCHW;
            /* dx over dy's NCHW extent, past its first batch * channel elements */
            if (op != BNG_OP_REDUCE) {
                bng_buffer dy = bng_buffer_new(n.bytes);
                memcpy(dy.p, n.dy, n.bytes);
                bng_expect_refused(&n.k, op, shared, op == BNG_OP_DX ? NULL : n.x, n.dy,
                                   (unsigned char *)n.dy + 2 * 3 * T->size, FULL_MASK,
                                   BNG_EOVERLAP, "dx inside dy's NCHW extent");
                expect_same(n.dy, dy.p, n.bytes, &n, "dx inside dy's NCHW extent: dy written");
                bng_buffer_free(&dy);
            }
            if (op == BNG_OP_APPLY) {
                n.k.params[BNG_PARAM_BATCH] = 3;         /* 60 elements, the buffer counts 40 */
                expect_error(&n, op, shared, BNG_EBATCH, "a count below batch * spatial");
                n.k.params[BNG_PARAM_BATCH] = 2;
            }
            nchw_free(&n);
        }
}
END_TEST

#if BNG_HAS_RELU
/* NCHW with the fused ReLU: y in the NCHW layout, every element kind the mask decides on
 * (positive, negative, +0, -0, NaN of either sign, infinities, subnormals of either
 * sign) beside random values. */
static size_t nchw_relu_y_kind(size_t i)
{
    return (i * 7 + i / 5) % 16;
}

static void nchw_relu_y(const nchw_case *n, unsigned char *y)
{
    static const uint32_t f32[] = {0x3f800000u, 0xbf800000u, 0, 0x80000000u, 0x7fc00000u,
                                   0xffc00001u, 0x7f800000u, 0xff800000u, 1, 0x80000001u};
    static const uint16_t f16[] = {0x3c00, 0xbc00, 0, 0x8000, 0x7e00, 0xfe01, 0x7c00, 0xfc00,
                                   1, 0x8001};
    const size_t size = n->k.t->size, count = n->bytes / size;
    size_t i;

    for (i = 0; i < count; i++) {
        const size_t kind = nchw_relu_y_kind(i);
        if (kind >= 10)     /* x's value: about half of them positive */
            memcpy(y + i * size, (const unsigned char *)n->x + i * size, size);
        else if (size == 4)
            memcpy(y + i * size, &f32[kind], 4);
        else
            memcpy(y + i * size, &f16[kind], 2);
    }
}

/* What one call left: dx, dbias, dscale and the sums buffer. */
typedef struct {
    unsigned char *dx, *dbias, *dscale, *sums;
} nchw_results;

/* NCHW's keep bits of y (bng_keep_plane_bits). */
static bng_buffer nchw_relu_bits(const nchw_case *n, const unsigned char *y)
{
    return bng_keep_plane_bits(n->k.t, y, n->batch * n->k.channel, n->spatial);
}

/* `op` on the case, fused (y, BNG_FLAG_RELU; with `from_bits` y its keep bits and
 * BNG_FLAG_RELU_BITS too) or apart (dy the separate pass's output, no flag): apply after
 * a reduce of the same kind (its buffer), into `out`. */
static void nchw_relu_run(nchw_case *n, int op, int shared, int mask, const void *y,
                          int from_bits, void *dy, nchw_results *out)
{
    void *own_dy = n->dy;

    n->dy = dy;
    n->k.params[BNG_CASE_FLAGS] = BNG_CASE_NCHW | (y != NULL ? BNG_CASE_RELU : 0)
                                  | (from_bits ? BNG_CASE_RELU_BITS : 0);
    n->k.params[BNG_CASE_Y] = (long long)(intptr_t)y;
    bng_case_mark_outputs(&n->k);
    memset(n->dx, BNG_OUTPUT_MARK, n->bytes);
    memset(n->k.sums.p, BNG_OUTPUT_MARK, n->k.sums.bytes);
    if (op == BNG_OP_APPLY) {
        nchw_call(n, BNG_OP_REDUCE, shared, mask);
        ck_assert_int_eq(n->k.params[BNG_PARAM_STATUS], BNG_OK);
    }
    nchw_call(n, op, shared, mask);
    ck_assert_int_eq(n->k.params[BNG_PARAM_STATUS], BNG_OK);
    memcpy(out->dx, n->dx, n->bytes);
    memcpy(out->dbias, n->k.dbias.p, n->k.dbias.bytes);
    memcpy(out->dscale, n->k.dscale.p, n->k.dscale.bytes);
    memcpy(out->sums, n->k.sums.p, n->k.sums.bytes);
    nchw_check_guards(n);
    n->dy = own_dy;
    n->k.params[BNG_CASE_FLAGS] = BNG_CASE_NCHW;
    n->k.params[BNG_CASE_Y] = 0;
}

static void nchw_results_init(nchw_results *r, const nchw_case *n)
{
    r->dx = bng_test_alloc(n->bytes);
    r->dbias = bng_test_alloc(n->k.dbias.bytes);
    r->dscale = bng_test_alloc(n->k.dscale.bytes);
    r->sums = bng_test_alloc(n->k.sums.bytes);
}

static void nchw_results_free(nchw_results *r)
{
    bng_test_free(r->dx);
    bng_test_free(r->dbias);
    bng_test_free(r->dscale);
    bng_test_free(r->sums);
}

/* One shape through `ops`, fused (from y and from its keep bits) and apart, on _p (mask
 * 0) or _s over `masks`: the fused call equals PyTorch's ReLU backward
 * (bng_relu_backward, on y's bits) followed by the unfused NCHW call, bit for bit. */
static void nchw_relu_is_apart(const bng_dtype *t, size_t batch, size_t channel,
                               size_t spatial, int train, unsigned seed, const int *ops,
                               size_t n_ops, const int *masks, size_t n_masks)
{
    nchw_case n;
    unsigned char *y, *masked;
    bng_buffer bits;
    nchw_results fused, apart;
    size_t o, m;
    int from_bits;

    nchw_init(&n, t, batch, channel, spatial, train, BNG_DATA_RANDOM, seed);
    y = bng_test_alloc(n.bytes);
    masked = bng_test_alloc(n.bytes);
    nchw_relu_y(&n, y);
    bits = nchw_relu_bits(&n, y);
    memcpy(masked, n.dy, n.bytes);
    bng_relu_backward(t, masked, y, n.bytes / t->size);
    nchw_results_init(&fused, &n);
    nchw_results_init(&apart, &n);
    for (o = 0; o < n_ops; o++)
        for (m = 0; m < n_masks; m++) {
            const int shared = masks[m] != 0;
            if (shared && (masks[m] & FULL_MASK) == 0)
                continue;
            nchw_relu_run(&n, ops[o], shared, masks[m], NULL, 0, masked, &apart);
            for (from_bits = 0; from_bits <= 1; from_bits++) {
                nchw_relu_run(&n, ops[o], shared, masks[m], from_bits ? bits.p : y, from_bits,
                              n.dy, &fused);
                if (memcmp(fused.dx, apart.dx, n.bytes)
                    || memcmp(fused.sums, apart.sums, n.k.sums.bytes)
                    || memcmp(fused.dbias, apart.dbias, n.k.dbias.bytes)
                    || memcmp(fused.dscale, apart.dscale, n.k.dscale.bytes))
                    ck_abort_msg("%s op %d %s mask %#x %zux%zux%zu train %d: fused from %s "
                                 "differs from the separate pass", t->name, ops[o],
                                 shared ? "_s" : "_p", (unsigned)masks[m], n.batch, n.k.channel,
                                 n.spatial, train, from_bits ? "the bits" : "y");
            }
        }
    if (!bng_buffer_guards_intact(&bits))
        ck_abort_msg("%s: guard bytes around the keep bits were written", t->name);
    bng_buffer_free(&bits);
    nchw_results_free(&fused);
    nchw_results_free(&apart);
    bng_test_free(y);
    bng_test_free(masked);
    nchw_free(&n);
}

static const int nchw_relu_ops[] = {BNG_OP_EXT, BNG_OP_REDUCE, BNG_OP_APPLY, BNG_OP_DX};

/* Every op, _p and _s over core masks, training and inference, planes in one tile and
 * in pieces of _s's tile buffers, a plane of several blocks and a tail, channels kept
 * whole and in part between _s's passes. */
START_TEST(test_nchw_relu_is_separate_pass)
{
    const size_t beyond_s = BNG_PRIVATE_BYTES / 4 / T->size + 7;
    const size_t blocks = 3 * BNG_NCHW_BLOCK_VECTORS * T->lanes + 5;
    const struct { size_t batch, channel, spatial; } shapes[] = {
        {3, 5, T->lanes + 1}, {40, 9, 49}, {2, 3, beyond_s}, {2, 2, blocks}, {1, 1, 3},
    };
    const int masks[] = {0, 1, FULL_MASK, FULL_MASK & 6};
    size_t sh;
    int train;

    for (sh = 0; sh < sizeof shapes / sizeof shapes[0]; sh++)
        for (train = 0; train <= 1; train++)
            nchw_relu_is_apart(T, shapes[sh].batch, shapes[sh].channel, shapes[sh].spatial, train,
                               (unsigned)(sh * 2 + (size_t)train) + 400, nchw_relu_ops,
                               sizeof nchw_relu_ops / sizeof nchw_relu_ops[0], masks,
                               sizeof masks / sizeof masks[0]);
}
END_TEST

/* Each set's own ReLU ukernels, which _p runs on whole planes: every specialized
 * extent's and the generic set's (an extent with a tail), every op, training and
 * inference. */
START_TEST(test_nchw_relu_every_kernel)
{
#define NCHW_EXTENT(s) s,
    const size_t extents[] = {BNG_NCHW_SPATIAL(NCHW_EXTENT) 2 * T->lanes + 3};
#undef NCHW_EXTENT
    const int p_only[] = {0};
    size_t e;
    int train;

    for (e = 0; e < sizeof extents / sizeof extents[0]; e++)
        for (train = 0; train <= 1; train++)
            nchw_relu_is_apart(T, 2, 3, extents[e], train, (unsigned)(e * 2 + (size_t)train) + 500,
                               nchw_relu_ops, sizeof nchw_relu_ops / sizeof nchw_relu_ops[0],
                               p_only, 1);
}
END_TEST
#endif

/* The walk: every boundary of the spatial plan for this storage type's lanes (a
 * vector, a block, two blocks, a tile buffer of _s's private memory, where a plane
 * starts to stream in pieces), and of the planes' order over batch (a block of planes,
 * a row group), through ext against the reference, _s against _p. */
static size_t walk_extents(const bng_dtype *t, size_t *out)
{
    const size_t lanes = t->lanes, block = BNG_NCHW_BLOCK_VECTORS * lanes;
    /* a tile buffer, as bng_nchw_layout takes it: a quarter of what the area
     * (64 bytes, aligned) leaves, in whole BNG_ALIGN units */
    const size_t tile = (BNG_PRIVATE_BYTES - 64) / 4 / BNG_ALIGN * BNG_ALIGN / t->size;
    const size_t edges[] = {lanes, block, 2 * block, tile, tile / block * block + block};
    size_t n = 0, e;
    int d;

    out[n++] = 1;
    for (e = 0; e < sizeof edges / sizeof edges[0]; e++)
        for (d = -1; d <= 1; d++)
            if (edges[e] + (size_t)d >= 1)
                out[n++] = edges[e] + (size_t)d;
    return n;
}

START_TEST(test_nchw_walk)
{
    const size_t plane_batches[] = {BNG_BLOCK_ROWS + 1, 2 * BNG_MIN_GROUP_ROWS + 1};
    size_t spatial[16], count = walk_extents(T, spatial), i;

    for (i = 0; i < count; i++) {
        const size_t batch = spatial[i] > 1000 ? 2 : 3;
        nchw_case n;
        unsigned char *dx;
        int mask;

        nchw_init(&n, T, batch, 2, spatial[i], 1, BNG_DATA_RANDOM, (unsigned)i + 300);
        nchw_call(&n, BNG_OP_EXT, 0, 0);
        dx = bng_test_alloc(n.bytes);
        memcpy(dx, n.dx, n.bytes);
        nchw_check(&n);
        for (mask = 1; mask <= FULL_MASK; mask += FULL_MASK - 1) {
            memset(n.dx, BNG_OUTPUT_MARK, n.bytes);
            nchw_call(&n, BNG_OP_EXT, 1, mask);
            ck_assert_int_eq(n.k.params[BNG_PARAM_STATUS], BNG_OK);
            expect_same(n.dx, dx, n.bytes, &n, "_s dx differs from _p");
        }
        bng_test_free(dx);
        nchw_free(&n);
    }
    for (i = 0; i < sizeof plane_batches / sizeof plane_batches[0]; i++)
        run_ext_within_bound(T, plane_batches[i], 2, 3, 1, BNG_DATA_RANDOM, (unsigned)i + 400);
}
END_TEST

void bng_nchw_add_tests(Suite *s)
{
    const bng_test_case cases[] = {
        {"nchw", test_nchw_within_bound, "private"},
        {"nchw_large_mean", test_nchw_large_mean, "private"},
        {"nchw_specialized_is_generic", test_nchw_specialized_is_generic, "private"},
        {"nchw_reduce_apply_dx_only", test_nchw_reduce_apply_dx_only, "private shared"},
        {"nchw_shared_matches_private", test_nchw_shared_matches_private, "shared"},
        {"nchw_streaming_dx", test_nchw_streaming_dx, "private shared"},
        {"nchw_accumulate", test_nchw_accumulate, "private shared"},
        {"nchw_errors", test_nchw_errors, "private shared"},
        {"nchw_hal_refusal", test_nchw_hal_refusal_writes_nothing, "shared"},
        {"nchw_walk", test_nchw_walk, "private shared"},
        {"nchw_in_place_and_aliases", test_nchw_in_place_and_aliases, "private shared"},
#if BNG_HAS_RELU
        {"nchw_relu", test_nchw_relu_is_separate_pass, "private shared"},
        {"nchw_relu_every_kernel", test_nchw_relu_every_kernel, "private"},
#endif
    };
    bng_add_cases(s, cases, sizeof cases / sizeof cases[0]);
}
#else
void bng_nchw_add_tests(Suite *s)
{
    (void)s;     /* the target has no nchw */
}
#endif
