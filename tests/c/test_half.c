/* (Checks use if + ck_abort_msg: a ck_assert costs a system call, millions here.)
 *
 * include/bng_f16.h conversions, and the lane-parallel ones of include/bng_vec.h
 * (GNU backend) against them, exhaustively: every binary16 bit pattern to float, and
 * float to binary16 at every representable value, every midpoint between neighbours
 * (ties to even) and one float ulp either side of it, against an independent
 * reference (exact double arithmetic) and against the compiler's _Float16 where it
 * has one. And bng_sqrt.h's square root, on one lane and on GNU vectors, against sqrtf.
 */
#include <check.h>
#include "bng_ftz.h"
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bng_f16.h"
#include "bng_vec.h"        /* built with BNG_VEC_GNU: its lane-parallel half memory */
#include "bng_sqrt.h"

/* Reference: the value of a binary16 pattern, exactly, in double. */
static double ref_value(uint16_t h)
{
    const int exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
    const double sign = (h & 0x8000) ? -1.0 : 1.0;
    if (exponent == 0x1f)
        return mantissa ? NAN : sign * INFINITY;
    if (exponent == 0)
        return sign * ldexp(mantissa, -24);
    return sign * ldexp(1024 + mantissa, exponent - 25);
}

/* Reference: float -> binary16 by search over the finite positive patterns (ordered
 * by value), round to nearest, ties to the even pattern, 65520 and up to Inf. */
static uint16_t ref_round(float f)
{
    const double a = fabs((double)f);
    const uint16_t sign = signbit(f) ? 0x8000 : 0;
    uint16_t lo = 0, hi = 0x7bff;

    if (a >= 65520.0)
        return sign | 0x7c00;
    while (lo < hi) {                 /* largest pattern with value <= a */
        const uint16_t mid = (uint16_t)((lo + hi + 1) / 2);
        if (ref_value(mid) <= a)
            lo = mid;
        else
            hi = (uint16_t)(mid - 1);
    }
    if (lo < 0x7bff) {
        const double below = a - ref_value(lo), above = ref_value((uint16_t)(lo + 1)) - a;
        if (above < below || (above == below && (lo & 1)))
            lo++;
    }
    return sign | lo;
}

static uint32_t float_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static float bits_float(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

START_TEST(test_every_half_to_float)
{
    unsigned h;
    for (h = 0; h < 0x10000; h++) {
        const float f = bng_f16_bits_to_float((uint16_t)h);
        const double ref = ref_value((uint16_t)h);
        if (isnan(ref)) {
            if (!(isnan(f) && (float_bits(f) & 0x00400000u) && !signbit(f) == !(h & 0x8000)))
                ck_abort_msg("%#06x: not a quiet NaN of the same sign", h);
        } else {
            if (!((double)f == ref && !signbit(f) == !signbit(ref)))
                ck_abort_msg("%#06x: %.9g != %.9g", h, f, ref);
        }
#ifdef __FLT16_MAX__
        {
            __extension__ _Float16 native;
            const uint16_t bits = (uint16_t)h;
            memcpy(&native, &bits, sizeof bits);
            if (!isnan(ref) && float_bits((float)native) != float_bits(f))
                ck_abort_msg("%#06x: native differs", h);
        }
#endif
    }
}
END_TEST

/* The vector stores of a lane, 32 lanes wide (hardware conversions where the CPU has
 * them) and 8 wide (the bit-level code), must equal the scalar conversion. */
static void expect_vector_round(float f)
{
    float lanes[32];
    half out[32];
    uint16_t wide, narrow;
    int i;
    for (i = 0; i < 32; i++)
        lanes[i] = i == 7 ? f : 1.0f;
    bng_f32x32_store_f16(out, bng_f32x32_load_f32(lanes));
    memcpy(&wide, &out[7], sizeof wide);
    bng_f32x8_store_f16(out, bng_f32x8_load_f32(lanes));
    memcpy(&narrow, &out[7], sizeof narrow);
    if (!(wide == bng_float_to_f16_bits(f) && narrow == wide))
        ck_abort_msg("%a: vector %#06x / %#06x, scalar %#06x", (double)f, wide, narrow,
                     bng_float_to_f16_bits(f));
}

static void expect_round(float f)
{
    const uint16_t got = bng_float_to_f16_bits(f), want = ref_round(f);
    expect_vector_round(f);
    if (got != want)
        ck_abort_msg("%a (%#010x): got %#06x, want %#06x", (double)f, float_bits(f), got, want);
#ifdef __FLT16_MAX__
    {
        __extension__ const _Float16 native = (__extension__ (_Float16)f);
        uint16_t bits;
        memcpy(&bits, &native, sizeof bits);
        if (got != bits)
            ck_abort_msg("%a: got %#06x, native %#06x", (double)f, got, bits);
    }
#endif
}

START_TEST(test_vector_load_every_half)
{
    unsigned h, i;
    for (h = 0; h < 0x10000; h += 32) {
        uint16_t bits[32];
        half in[32];
        float out[32];
        for (i = 0; i < 32; i++)
            bits[i] = (uint16_t)(h + i);
        memcpy(in, bits, sizeof in);
        float narrow[32];
        bng_f32x32_store_f32(out, bng_f32x32_load_f16(in));
        for (i = 0; i < 32; i += 8)
            bng_f32x8_store_f32(narrow + i, bng_f32x8_load_f16(in + i));
        for (i = 0; i < 32; i++)
            if (float_bits(out[i]) != float_bits(bng_f16_bits_to_float(bits[i]))
                || float_bits(narrow[i]) != float_bits(out[i]))
                ck_abort_msg("%#06x: vector %#010x / %#010x, scalar %#010x", bits[i],
                             float_bits(out[i]), float_bits(narrow[i]),
                             float_bits(bng_f16_bits_to_float(bits[i])));
    }
}
END_TEST

START_TEST(test_float_to_half_at_values_and_midpoints)
{
    unsigned h;
    for (h = 0; h < 0x7c00; h++) {
        const double v = ref_value((uint16_t)h);
        const double next = h < 0x7bff ? ref_value((uint16_t)(h + 1)) : 65536.0;
        const float mid = (float)((v + next) / 2);   /* exact: a half midpoint fits a float */
        int s;
        for (s = 0; s < 2; s++) {
            const float k = s ? -1.0f : 1.0f;
            expect_round(k * (float)v);
            expect_round(k * mid);
            expect_round(k * bits_float(float_bits(mid) + 1));
            expect_round(k * bits_float(float_bits(mid) - 1));
        }
    }
}
END_TEST

START_TEST(test_float_to_half_special_and_random)
{
    /* BNG_TEST_QUICK (make memcheck): fewer random floats; the exhaustive parts stay. */
    const uint32_t count = getenv("BNG_TEST_QUICK") ? 100000u : 2000000u;
    uint32_t state = 0x9e3779b9u, i;
    expect_round(INFINITY);
    expect_round(-INFINITY);
    expect_round(0x1p-25f);          /* half of the smallest subnormal: ties to zero */
    expect_round(0x1.000002p-25f);   /* just above: rounds up */
    expect_round(0x1.8p-24f);        /* 1.5 units: ties to even (2) */
    expect_round(65519.99f);
    expect_round(65520.0f);
    expect_round(3.4e38f);
    expect_round(1e-45f);
    ck_assert_uint_eq(bng_float_to_f16_bits(NAN) & 0x7e00u, 0x7e00u);
    expect_vector_round(NAN);
    expect_vector_round(-NAN);
    for (i = 0; i < count; i++) {    /* random bit patterns, NaNs aside */
        float f;
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        f = bits_float(state);
        if (!isnan(f))
            expect_round(f);
    }
}
END_TEST

START_TEST(test_half_round_trip)
{
    unsigned h;
    for (h = 0; h < 0x10000; h++)
        if ((h & 0x7c00) != 0x7c00 || !(h & 0x3ff))     /* NaNs come back quiet */
            if (bng_float_to_f16_bits(bng_f16_bits_to_float((uint16_t)h)) != h)
                ck_abort_msg("%#06x does not round-trip", h);
}
END_TEST

/* The keep bits of lanes[0, n): bit 0 of lane i at bit i. */
static unsigned long long ref_pack(const uint32_t *lanes, int n)
{
    unsigned long long packed = 0;
    int i;
    for (i = 0; i < n; i++)
        packed |= (unsigned long long)(lanes[i] & 1u) << i;
    return packed;
}

/* bng_keepsN_pack_f32 and _f16 at width N on the first N of lanes32 and lanes16. */
#define CHECK_PACK(N)                                                                      \
    do {                                                                                   \
        bng_keeps##N##_f32 k32;                                                            \
        bng_keeps##N##_f16 k16;                                                            \
        memcpy(&k32, lanes32, sizeof k32);                                                 \
        memcpy(&k16, lanes16, sizeof k16);                                                 \
        if (bng_keeps##N##_pack_f32(k32) != ref_pack(lanes32, N))                          \
            ck_abort_msg("float keeps, %d lanes, round %d: %#llx", N, round,               \
                         bng_keeps##N##_pack_f32(k32));                                    \
        if (bng_keeps##N##_pack_f16(k16) != ref_pack(wide16, N))                           \
            ck_abort_msg("half keeps, %d lanes, round %d: %#llx", N, round,                \
                         bng_keeps##N##_pack_f16(k16));                                    \
    } while (0)

/* bng_vec.h's keep-bit packing (the forward's NCHW ReLU bits) at every width, on lanes
 * whose other bits are set at random too (only bit 0 counts). The GCC 8 build has every
 * width one vector, as a DSP's GCC (BNG_GNU_LANES 64): the widths the host splits into
 * halves run whole there. */
START_TEST(test_keeps_pack_every_width)
{
    uint32_t lanes32[64], wide16[64], state = 12345u;
    uint16_t lanes16[64];
    int round, i;

    for (round = 0; round < 2000; round++) {
        for (i = 0; i < 64; i++) {
            state = state * 1664525u + 1013904223u;
            lanes32[i] = state >> (round % 3 == 0 ? 0 : 31);    /* a third garbage above bit 0 */
            lanes16[i] = (uint16_t)(state >> (round % 3 == 0 ? 8 : 30));
            wide16[i] = lanes16[i];
        }
        CHECK_PACK(1); CHECK_PACK(2); CHECK_PACK(4); CHECK_PACK(8);
        CHECK_PACK(16); CHECK_PACK(32); CHECK_PACK(64);
    }
}
END_TEST

/* bng_vec.h's "Lanes" (a split target's NCHW sums and coefficients) at width N, on the
 * first N of a and b: _fold's lane 0 against the loop over the lanes that a unified
 * target's NCHW sums run (lane i += lane i + w, w halving), _splat's every lane against
 * lane 0, _select_first(a, b, n) against a's first n lanes and b's others, for every n,
 * _lanes_above(b, w)'s lanes below w against b's w above, for every w; bit for bit. */
#define CHECK_LANES(N)                                                                     \
    do {                                                                                   \
        const bng_f32x##N va = bng_f32x##N##_ld_f32(a), vb = bng_f32x##N##_ld_f32(b);     \
        float out[64], want[64];                                                           \
        int w, i, n;                                                                       \
        memcpy(want, a, sizeof want);                                                      \
        for (w = N / 2; w != 0; w /= 2)                                                    \
            for (i = 0; i < w; i++)                                                        \
                want[i] = want[i] + want[i + w];                                           \
        bng_f32x##N##_st_f32(out, bng_f32x##N##_fold(va));                                 \
        if (float_bits(out[0]) != float_bits(want[0]))                                     \
            ck_abort_msg("fold, %d lanes, round %d: %a, not %a", N, round, out[0], want[0]); \
        bng_f32x##N##_st_f32(out, bng_f32x##N##_splat(vb));                                \
        for (i = 0; i < N; i++)                                                            \
            if (float_bits(out[i]) != float_bits(b[0]))                                    \
                ck_abort_msg("splat, %d lanes, round %d: lane %d", N, round, i);           \
        for (n = 0; n <= N; n++) {                                                         \
            bng_f32x##N##_st_f32(out, bng_f32x##N##_select_first(va, vb, (unsigned)n));    \
            for (i = 0; i < N; i++)                                                        \
                if (float_bits(out[i]) != float_bits(i < n ? a[i] : b[i]))                 \
                    ck_abort_msg("select_first, %d lanes, %d first, round %d: lane %d", N, \
                                 n, round, i);                                             \
        }                                                                                  \
        for (w = N / 2; w != 0; w /= 2) {                                                  \
            bng_f32x##N##_st_f32(out, bng_f32x##N##_lanes_above(vb, (unsigned)w));         \
            for (i = 0; i < w; i++)                                                        \
                if (float_bits(out[i]) != float_bits(b[i + w]))                            \
                    ck_abort_msg("lanes_above, %d lanes, %d above, round %d: lane %d", N,  \
                                 w, round, i);                                             \
        }                                                                                  \
    } while (0)

/* The lanes' operations at every width, on values with -0, subnormals and Inf among
 * them (a's, whose sums the fold checks: no NaN, whose payload an add may take from
 * either operand) and NaNs (b's, which are only moved). The GCC 8 build has every width
 * one vector, as a DSP's GCC (BNG_GNU_LANES 64): the widths the host splits into halves
 * run whole there. */
START_TEST(test_lanes_every_width)
{
    static const uint32_t specials[] = {0x80000000u, 0x00000001u, 0x80000003u, 0x7f800000u,
                                        0x00000000u, 0x3f800000u};
    static const uint32_t nans[] = {0x7fc00000u, 0xffc00001u, 0x7f800001u};
    float a[64], b[64];
    uint32_t state = 777u;
    int round, i;

    for (round = 0; round < 300; round++) {
        for (i = 0; i < 64; i++) {
            state = state * 1664525u + 1013904223u;
            a[i] = (i + round) % 7 == 0 ? bits_float(specials[(i + round) % 6])
                                        : bits_float((state >> 9 | 0x3f800000u) ^ (state & 1u) << 31) - 1.5f;
            b[i] = i % 5 == 1 ? bits_float(nans[i % 3]) : bits_float(state);
        }
        CHECK_LANES(1); CHECK_LANES(2); CHECK_LANES(4); CHECK_LANES(8);
        CHECK_LANES(16); CHECK_LANES(32); CHECK_LANES(64);
    }
}
END_TEST

/* bng_keepsN_turn_words_f32 and _f16 at width N on the first N of words32 and words16:
 * lane j's bit BNG_TURNED_BIT(r, N, w) is bit r * N + j of the words taken as one run
 * of bits (word i's bits i * w to i * w + w - 1), for each of the w vectors r they
 * cover, every bit of every lane checked; and turned back (the forward's NCHW words on
 * a split target), the words again. */
static int stream_bit32(const uint32_t *words, unsigned q)
{
    return (int)(words[q / 32] >> (q % 32) & 1u);
}
static int stream_bit16(const uint16_t *words, unsigned q)
{
    return (int)(words[q / 16] >> (q % 16) & 1u);
}
#define CHECK_TURN(N)                                                                      \
    do {                                                                                   \
        uint32_t t32[64];                                                                  \
        uint16_t t16[64];                                                                  \
        float f32[64];                                                                     \
        half f16[64];                                                                      \
        unsigned r, j;                                                                     \
        memcpy(f32, words32, sizeof f32);                                                  \
        memcpy(f16, words16, sizeof f16);                                                  \
        bng_keeps##N##_turn_words_f32(f32, 0);                                             \
        bng_keeps##N##_turn_words_f16(f16, 0);                                             \
        memcpy(t32, f32, sizeof t32);                                                      \
        memcpy(t16, f16, sizeof t16);                                                      \
        bng_keeps##N##_turn_words_f32(f32, 1);                                             \
        bng_keeps##N##_turn_words_f16(f16, 1);                                             \
        if (memcmp(f32, words32, N * sizeof words32[0]) != 0                               \
            || memcmp(f16, words16, N * sizeof words16[0]) != 0)                           \
            ck_abort_msg("%d lanes, round %d: turned back, not the words", N, round);      \
        for (j = 0; j < N; j++) {                                                          \
            for (r = 0; r < 32; r++)                                                       \
                if ((int)(t32[j] >> BNG_TURNED_BIT(r, N, 32u) & 1u)                        \
                    != stream_bit32(words32, r * N + j))                                   \
                    ck_abort_msg("float words, %d lanes, round %d: lane %u, vector %u", N, \
                                 round, j, r);                                             \
            for (r = 0; r < 16; r++)                                                       \
                if ((int)(t16[j] >> BNG_TURNED_BIT(r, N, 16u) & 1u)                        \
                    != stream_bit16(words16, r * N + j))                                   \
                    ck_abort_msg("half words, %d lanes, round %d: lane %u, vector %u", N,  \
                                 round, j, r);                                             \
        }                                                                                  \
    } while (0)

/* The turn of a split target's NCHW keep words (bng_vec.h, "Keep bits") at every width,
 * on random words, some rounds sparse (a few bits set: a bit moved to a wrong place
 * shows), some dense. The GCC 8 build has every width one vector, as a DSP's GCC
 * (BNG_GNU_LANES 64): the steps a host runs for its wide widths bit by bit run there. */
START_TEST(test_turn_every_width)
{
    uint32_t words32[64], state = 4242u;
    uint16_t words16[64];
    int round, i;

    for (round = 0; round < 200; round++) {
        for (i = 0; i < 64; i++) {
            state = state * 1664525u + 1013904223u;
            words32[i] = round % 2 ? state : 1u << (state >> 27);
            words16[i] = (uint16_t)(round % 2 ? state >> 8 : 1u << (state >> 28));
        }
        CHECK_TURN(1); CHECK_TURN(2); CHECK_TURN(4); CHECK_TURN(8);
        CHECK_TURN(16); CHECK_TURN(32); CHECK_TURN(64);
    }
}
END_TEST

/* A plane's mask as a split target's driver applies it (bng_relu.c,
 * bng_relu_mask_planes_by_bits) at width N: three vectors of N words turned in place,
 * then each of the 3 w vectors of dy they cover masked by the masked load at its word
 * vector and bit (BNG_TURNED_WORD, BNG_TURNED_VECTOR_BIT): lane j of vector v is dy's
 * value where bit v * N + j of the words (one run of bits) is set, else +0. f32's words
 * and then f16's, every width: fewer lanes than a word's bits too, which no test
 * target's driver runs. */
#define CHECK_PLANE_MASK(N)                                                                \
    do {                                                                                   \
        float words32[3 * N], out[N];                                                      \
        half words16[3 * N];                                                               \
        unsigned v, j;                                                                     \
        memcpy(words32, run32, sizeof words32);                                            \
        memcpy(words16, run16, sizeof words16);                                            \
        for (v = 0; v < 3; v++) {                                                          \
            bng_keeps##N##_turn_f32(words32 + v * N);                                      \
            bng_keeps##N##_turn_f16(words16 + v * N);                                      \
        }                                                                                  \
        for (v = 0; v < 3 * 32; v++) {                                                     \
            bng_f32x##N##_store_f32(out, bng_f32x##N##_load_relu_keeps_f32(                \
                dy32 + v * N, words32 + BNG_TURNED_WORD(v, N, 32u),                        \
                (unsigned)BNG_TURNED_VECTOR_BIT(v, N, 32u)));                              \
            for (j = 0; j < N; j++)                                                        \
                if (float_bits(out[j]) != (stream_bit32(run32, v * N + j)                  \
                                           ? float_bits(dy32[v * N + j]) : 0u))            \
                    ck_abort_msg("float plane, %d lanes, round %d: vector %u lane %u", N,  \
                                 round, v, j);                                             \
        }                                                                                  \
        for (v = 0; v < 3 * 16; v++) {                                                     \
            bng_f32x##N##_store_f32(out, bng_f32x##N##_load_relu_keeps_f16(                \
                dy16 + v * N, words16 + BNG_TURNED_WORD(v, N, 16u),                        \
                (unsigned)BNG_TURNED_VECTOR_BIT(v, N, 16u)));                              \
            for (j = 0; j < N; j++)                                                        \
                if (float_bits(out[j]) != (stream_bit16(run16, v * N + j)                  \
                                           ? float_bits(bng_f16_bits_to_float(             \
                                                 dy16_bits[v * N + j])) : 0u))             \
                    ck_abort_msg("half plane, %d lanes, round %d: vector %u lane %u", N,   \
                                 round, v, j);                                             \
        }                                                                                  \
    } while (0)

START_TEST(test_plane_mask_every_width)
{
    static float dy32[3 * 32 * 64];
    static uint16_t dy16_bits[3 * 16 * 64];
    static half dy16[3 * 16 * 64];
    uint32_t run32[3 * 64], state = 99u;
    uint16_t run16[3 * 64];
    int round, i;

    for (i = 0; i < 3 * 32 * 64; i++) {
        state = state * 1664525u + 1013904223u;
        dy32[i] = bits_float((state >> 9 | 0x3f800000u) ^ (state & 1u) << 31);
    }
    for (i = 0; i < 3 * 16 * 64; i++)
        dy16_bits[i] = (uint16_t)(0x3c00u + (unsigned)i % 0x3ff);
    memcpy(dy16, dy16_bits, sizeof dy16);
    for (round = 0; round < 20; round++) {
        for (i = 0; i < 3 * 64; i++) {
            state = state * 1664525u + 1013904223u;
            run32[i] = state;
            run16[i] = (uint16_t)(state >> 8);
        }
        CHECK_PLANE_MASK(1); CHECK_PLANE_MASK(2); CHECK_PLANE_MASK(4); CHECK_PLANE_MASK(8);
        CHECK_PLANE_MASK(16); CHECK_PLANE_MASK(32); CHECK_PLANE_MASK(64);
    }
}
END_TEST

/* The masked half loads (the fused ReLU's, bng_vec.h "Keep bits") on every half dy,
 * against y's edge patterns, at 8 and 32 lanes: each lane is dy's float where the rule
 * keeps it (BNG_RELU_KEEPS on y's bits; by the keep bit for the words' and the bits'
 * forms), else +0, bit for bit. The GCC 8 build is a split target's (BNG_SPLIT_MEMORY):
 * its masked halves are converted in the register, widened lane by lane as GCC 8 must,
 * where the others go through an array. */
static const uint16_t y_edges[] = {0x0000, 0x8000, 0x0001, 0x8001, 0x3c00, 0xbc00, 0x7bff,
                                   0x7c00, 0xfc00, 0x7e00, 0xfe00, 0x7c01, 0x03ff, 0x83ff};
#define Y_EDGE_COUNT (sizeof y_edges / sizeof y_edges[0])

static void expect_masked(const uint16_t *dy, const int *keep, const float *got, int n,
                          const char *form)
{
    int i;
    for (i = 0; i < n; i++) {
        const float want = keep[i] ? bng_f16_bits_to_float(dy[i]) : 0.0f;
        if (float_bits(got[i]) != float_bits(want))
            ck_abort_msg("%s, dy %#06x keep %d: %#010x, want %#010x", form, dy[i], keep[i],
                         float_bits(got[i]), float_bits(want));
    }
}

#define CHECK_MASKED(N, first)                                                             \
    do {                                                                                   \
        uint16_t dy_bits[N], y_bits[N], word_bits[N];                                      \
        half dy[N], y[N], words[N];                                                        \
        int keep[N], i;                                                                    \
        unsigned long long bits = 0;                                                       \
        float out[N];                                                                      \
        bng_keeps##N##_f16 k = bng_keeps##N##_zero_f16();                                  \
        for (i = 0; i < N; i++) {                                                          \
            dy_bits[i] = (uint16_t)((first) + i);                                          \
            y_bits[i] = y_edges[((first) / N + (unsigned)i) % Y_EDGE_COUNT];               \
            keep[i] = (int)BNG_RELU_KEEPS((unsigned)y_bits[i], 0x8000u, 0x7c00u);          \
            word_bits[i] = (uint16_t)(keep[i] << 5 | (0xffffu ^ 1u << 5) * (i & 1));       \
            bits |= (unsigned long long)keep[i] << i;                                      \
        }                                                                                  \
        memcpy(dy, dy_bits, sizeof dy);                                                    \
        memcpy(y, y_bits, sizeof y);                                                       \
        memcpy(words, word_bits, sizeof words);                                            \
        bng_f32x##N##_store_f32(out, bng_f32x##N##_load_relu_f16(dy, y));                  \
        expect_masked(dy_bits, keep, out, N, "by y");                                      \
        bng_f32x##N##_store_f32(out, bng_f32x##N##_load_relu_mark_f16(dy, y, &k, 3));      \
        expect_masked(dy_bits, keep, out, N, "by y, marked");                              \
        bng_f32x##N##_store_f32(out, bng_f32x##N##_load_relu_keeps_f16(dy, words, 5));     \
        expect_masked(dy_bits, keep, out, N, "by keep words");                             \
        bng_f32x##N##_store_f32(out, bng_f32x##N##_load_relu_bits_f16(dy, bits));          \
        expect_masked(dy_bits, keep, out, N, "by bits");                                   \
    } while (0)

START_TEST(test_masked_half_loads_every_half)
{
    unsigned h;
    for (h = 0; h < 0x10000; h += 32) {
        CHECK_MASKED(32, h);
        CHECK_MASKED(8, h);
        CHECK_MASKED(8, h + 8);
    }
}
END_TEST

/* bng_sqrt.h's square root, on one lane and on GNU vectors of 16 and 64 lanes (one
 * register as on a DSP's GCC; the host splits it): sqrtf's bits (any NaN where sqrtf
 * gives one) on every 4099th float bit pattern and at the ends, each lane of a vector
 * the one-lane result. Under FTZ the reference, whose FPU reads a subnormal as 0, is
 * asked about normal values only: the root is integer code, the same in either mode.
 * (Every one of the 2^32 patterns was checked once, on one lane and on 16: 5 min.) */
typedef unsigned sqrt_lanes16 __attribute__((vector_size(4 * 16)));
typedef unsigned sqrt_lanes64 __attribute__((vector_size(4 * 64)));
static void expect_root(uint32_t x, uint32_t got, int flushes, const char *form)
{
    float v, want;
    uint32_t want_bits;

    memcpy(&v, &x, sizeof v);
    if (flushes && (x & 0x7f800000u) == 0 && (x & 0x7fffffu) != 0)
        return;
    want = sqrtf(v);
    want_bits = float_bits(want);
    if (isnan(want) ? (got & 0x7fffffffu) <= 0x7f800000u : got != want_bits)
        ck_abort_msg("%s: root of %#x is %#x, sqrtf's %#x", form, (unsigned)x, (unsigned)got,
                     (unsigned)want_bits);
}
START_TEST(test_sqrt_bits_one_lane_and_vectors)
{
    static const uint32_t ends[] = {0, 1, 2, 3, 0x7fffff, 0x800000, 0x800001, 0x3f800000,
                                    0x3f800001, 0x40000000, 0x7f7fffff, 0x7f800000,
                                    0x7f800001, 0x7fc00000, 0x7fffffff};
    volatile float least = 1e-45f;
    const int flushes = least * 1.0f == 0.0f;
    const size_t n_ends = sizeof ends / sizeof ends[0];
    const uint64_t count = n_ends + (0x100000000ull / 4099) + 1;
    uint64_t i;

    for (i = 0; i < count; i += 64) {
        sqrt_lanes16 x16, r16;
        sqrt_lanes64 x64, r64;
        int lane;
        for (lane = 0; lane < 64; lane++) {
            const uint64_t k = i + (uint64_t)lane;
            const uint32_t x = (uint32_t)(k < n_ends ? ends[k] : (k - n_ends) * 4099u);
            x64[lane] = x ^ (lane & 1 ? 0x80000000u : 0);     /* negatives too */
            if (lane < 16)
                x16[lane] = x64[lane];
        }
        BNG_SQRT_BITS(sqrt_lanes16, x16, r16);
        BNG_SQRT_BITS(sqrt_lanes64, x64, r64);
        for (lane = 0; lane < 64; lane++) {
            uint32_t r1;
            BNG_SQRT_BITS(uint32_t, x64[lane], r1);
            expect_root(x64[lane], r1, flushes, "one lane");
            if (r64[lane] != r1 || (lane < 16 && r16[lane] != r1))
                ck_abort_msg("root of %#x: a vector's lane %d differs from one lane's %#x",
                             (unsigned)x64[lane], lane, (unsigned)r1);
        }
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("half conversions");
    TCase *tc = tcase_create("exhaustive");
    SRunner *sr;
    int failed;

    bng_test_enable_ftz();
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_every_half_to_float);
    tcase_add_test(tc, test_float_to_half_at_values_and_midpoints);
    tcase_add_test(tc, test_float_to_half_special_and_random);
    tcase_add_test(tc, test_half_round_trip);
    tcase_add_test(tc, test_vector_load_every_half);
    tcase_add_test(tc, test_keeps_pack_every_width);
    tcase_add_test(tc, test_lanes_every_width);
    tcase_add_test(tc, test_turn_every_width);
    tcase_add_test(tc, test_plane_mask_every_width);
    tcase_add_test(tc, test_masked_half_loads_every_half);
    tcase_add_test(tc, test_sqrt_bits_one_lane_and_vectors);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
