/* SPDX-License-Identifier: Apache-2.0 */
/* Copyright 2026 the batchnormgrad authors */
/* half: IEEE binary16 storage for the hp entry points, and exact conversions.
 *
 * With a compiler that has _Float16 (it defines __FLT16_MAX__), half is _Float16 and
 * the conversions are casts. Elsewhere half is a 16-bit storage type and the
 * conversions below are exact: round to nearest even, subnormals, Inf and NaN
 * included, integer arithmetic only (no dependence on the FPU's rounding or
 * flush-to-zero modes). Define BNG_HALF_PORTABLE to force the storage type, or
 * BNG_HAVE_HALF if the toolchain's own headers already define half.
 */
#ifndef BNG_F16_H
#define BNG_F16_H

#include <stdint.h>

#if defined(__FLT16_MAX__) && !defined(BNG_HALF_PORTABLE)
#define BNG_HALF_NATIVE 1
#else
#define BNG_HALF_NATIVE 0
#endif

#ifndef BNG_HAVE_HALF
#if BNG_HALF_NATIVE
__extension__ typedef _Float16 half;
#else
typedef struct { uint16_t bits; } half;
#endif
#endif

typedef union { float f; uint32_t u; } bng_f32_bits;

/* binary16 bits -> float, exact. A signalling NaN comes back quiet, as IEEE asks. */
static inline float bng_f16_bits_to_float(uint16_t h)
{
    bng_f32_bits out;
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exponent = (h >> 10) & 0x1fu;
    uint32_t mantissa = h & 0x3ffu;

    if (exponent == 0x1fu) {
        out.u = sign | 0x7f800000u | (mantissa << 13) | (mantissa ? 0x00400000u : 0u);
    } else if (exponent != 0) {
        out.u = sign | ((exponent + 112u) << 23) | (mantissa << 13);
    } else if (mantissa == 0) {
        out.u = sign;
    } else {
        /* Subnormal: shift the leading 1 up to the implicit bit. */
        uint32_t biased = 113u;
        while (!(mantissa & 0x400u)) {
            mantissa <<= 1;
            biased--;
        }
        out.u = sign | (biased << 23) | ((mantissa & 0x3ffu) << 13);
    }
    return out.f;
}

/* float -> binary16 bits, round to nearest even. NaN keeps its top payload bits, quiet. */
static inline uint16_t bng_float_to_f16_bits(float f)
{
    bng_f32_bits in;
    uint32_t sign, a;

    in.f = f;
    sign = (in.u >> 16) & 0x8000u;
    a = in.u & 0x7fffffffu;
    if (a > 0x7f800000u)                       /* NaN */
        return (uint16_t)(sign | 0x7e00u | ((a >> 13) & 0x3ffu));
    if (a >= 0x477ff000u)                      /* >= 65520: rounds to Inf */
        return (uint16_t)(sign | 0x7c00u);
    if (a >= 0x38800000u) {                    /* normal half */
        uint32_t h = (a - 0x38000000u) >> 13;  /* rebias 127 -> 15, truncate */
        uint32_t rest = a & 0x1fffu;
        if (rest > 0x1000u || (rest == 0x1000u && (h & 1u)))
            h++;                               /* a carry into the exponent is right */
        return (uint16_t)(sign | h);
    }
    if (a <= 0x33000000u)                      /* <= 2^-25: rounds to zero */
        return (uint16_t)sign;
    {
        /* Subnormal half: count units of 2^-24. */
        uint32_t shift = 126u - (a >> 23);     /* 14..24 */
        uint32_t mantissa = (a & 0x7fffffu) | 0x800000u;
        uint32_t q = mantissa >> shift;
        uint32_t rest = mantissa & ((1u << shift) - 1u);
        uint32_t halfway = 1u << (shift - 1u);
        if (rest > halfway || (rest == halfway && (q & 1u)))
            q++;
        return (uint16_t)(sign | q);
    }
}

#if BNG_HALF_NATIVE
static inline float bng_half_to_float(half h) { return (float)h; }
static inline half bng_half_from_float(float f) { return (half)f; }
#else
static inline float bng_half_to_float(half h) { return bng_f16_bits_to_float(h.bits); }
static inline half bng_half_from_float(float f)
{
    half h;
    h.bits = bng_float_to_f16_bits(f);
    return h;
}
#endif

#endif /* BNG_F16_H */
