/* The native backend's spellings (a target's generated bng_native.h) on the host's
 * emulation of the MT-3000 compiler (include/host/compiler/m3000.h), which does what the
 * public material shows each spelling doing. Run by make cross-check.
 *
 * Checked, lane by lane and bit for bit: load, store, add, sub, mul, div, and the
 * broadcast of 0.0f (the only scalar the kernels broadcast today) and of other floats:
 * on MT-3000 vec_svbcast broadcasts a 64-bit scalar, so a spelling that passes a float
 * as it is (vec_svbcast({scalar}), the public spelling for lvector double) gets 0.0f
 * right by luck and fills the lanes of any other float wrongly. Division must be the
 * scalar IEEE a / b in every lane (the driver's dy_mean = sum_dy / m on a split target
 * must give the bits of the other backends): a spelling through a reciprocal, a times
 * 1/b, is one rounding too many and fails on the quotients below whose reciprocal
 * product is off by one ulp.
 */
#include <stdio.h>
#include <string.h>

#include "bng_kernels.h"
#include "bng_native.h"

static int failures;

/* How many lanes of v hold exactly (bitwise) `want`. */
static unsigned lanes_equal(bng_native_f32 v, float want)
{
    float lanes[BNG_F32_LANES];
    unsigned i, n = 0;
    BNG_NATIVE_STORE(lanes, v);
    for (i = 0; i < BNG_F32_LANES; i++)
        n += memcmp(&lanes[i], &want, sizeof want) == 0;
    return n;
}

static void expect(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "test_native_spelling: FAIL: %s\n", what);
        failures++;
    }
}

/* How many lanes of the configured division of num by den are not, bit for bit, the
 * scalar num[i] / den[i]. */
static unsigned div_lanes_wrong(const float *num, const float *den)
{
    float out[BNG_F32_LANES];
    unsigned i, n = 0;
    BNG_NATIVE_STORE(out, BNG_NATIVE_DIV(BNG_NATIVE_LOAD(num), BNG_NATIVE_LOAD(den)));
    for (i = 0; i < BNG_F32_LANES; i++) {
        const float want = num[i] / den[i];
        n += memcmp(&out[i], &want, sizeof want) != 0;
    }
    return n;
}

static void expect_division(const float *num, const float *den, const char *what)
{
    const unsigned wrong = div_lanes_wrong(num, den);
    if (wrong)
        fprintf(stderr, "test_native_spelling: the division (%s) is wrong in %u of %u lanes\n",
                what, wrong, (unsigned)BNG_F32_LANES);
    expect(wrong == 0, "the configured division is the scalar IEEE division in every lane");
}

int main(void)
{
    static const float values[] = {1.5f, -2.25f, 3.0e-3f, 65504.0f};
    /* Quotients where a * (1 / b) rounds to the neighbour of a / b (3/7: 0x1.b6db7p-2
     * against 0x1.b6db6ep-2). */
    static const float reciprocal_num[] = {3.0f, 3.0f, -3.0f};
    static const float reciprocal_den[] = {7.0f, 15.0f, 13.0f};
    const unsigned n_reciprocal = sizeof reciprocal_num / sizeof reciprocal_num[0];
    float a[BNG_F32_LANES], b[BNG_F32_LANES], out[BNG_F32_LANES];
    float num[BNG_F32_LANES], den[BNG_F32_LANES];
    unsigned i, k;

    for (i = 0; i < BNG_F32_LANES; i++) {
        a[i] = 0.25f * (float)i - 1.0f;
        b[i] = 3.0f - 0.5f * (float)i;
    }
    BNG_NATIVE_STORE(out, BNG_NATIVE_ADD(BNG_NATIVE_LOAD(a), BNG_NATIVE_LOAD(b)));
    for (i = 0; i < BNG_F32_LANES; i++)
        expect(out[i] == a[i] + b[i], "load, add, store");
    BNG_NATIVE_STORE(out, BNG_NATIVE_SUB(BNG_NATIVE_LOAD(a), BNG_NATIVE_LOAD(b)));
    for (i = 0; i < BNG_F32_LANES; i++)
        expect(out[i] == a[i] - b[i], "sub");
    BNG_NATIVE_STORE(out, BNG_NATIVE_MUL(BNG_NATIVE_LOAD(a), BNG_NATIVE_LOAD(b)));
    for (i = 0; i < BNG_F32_LANES; i++)
        expect(out[i] == a[i] * b[i], "mul");

    for (i = 0; i < BNG_F32_LANES; i++)
        den[i] = 3.0f + 0.5f * (float)i;     /* a over it: a different quotient per lane */
    expect_division(a, den, "lane by lane");
    for (k = 0; k < n_reciprocal; k++) {
        const float recip = reciprocal_num[k] * (1.0f / reciprocal_den[k]);
        const float quot = reciprocal_num[k] / reciprocal_den[k];
        expect(memcmp(&recip, &quot, sizeof quot) != 0,
               "the reciprocal cases differ from division on this host (else they test nothing)");
    }
    for (i = 0; i < BNG_F32_LANES; i++) {
        num[i] = reciprocal_num[i % n_reciprocal];
        den[i] = reciprocal_den[i % n_reciprocal];
    }
    expect_division(num, den, "where a reciprocal product is one ulp off");

    expect(lanes_equal(BNG_NATIVE_BROADCAST(0.0f), 0.0f) == BNG_F32_LANES,
           "the configured broadcast of 0.0f (what the kernels use)");
    for (k = 0; k < sizeof values / sizeof values[0]; k++) {
        const unsigned got = lanes_equal(BNG_NATIVE_BROADCAST(values[k]), values[k]);
        if (got != BNG_F32_LANES)
            fprintf(stderr, "test_native_spelling: the broadcast of %g fills %u of %u lanes\n",
                    (double)values[k], got, (unsigned)BNG_F32_LANES);
        expect(got == BNG_F32_LANES, "the configured broadcast of a float");
    }
    printf("test_native_spelling: %u lanes: load, store, add, sub, mul, div, broadcast: %s\n",
           (unsigned)BNG_F32_LANES, failures ? "FAILED" : "ok");
    return failures ? 1 : 0;
}
