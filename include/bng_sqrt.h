/* SPDX-License-Identifier: Apache-2.0 */
/* Copyright 2026 the batchnormgrad authors */
/* Owns: the square root of a float's bits, by integers, written once for one lane
 * (bng_sqrtf, bng_steps.c) and for a GNU vector of lanes: the IEEE result, round to
 * nearest even, the bits sqrtf gives (but for a signalling NaN, below), with no libm
 * and no floating-point operation (an FPU that flushes subnormals gives the same bits).
 * Every lane takes the same operations, masks in place of branches and shifts by one
 * amount for all lanes, so that a vector of lanes needs nothing a vector unit lacks:
 * no division, no square root, no lane-by-lane code. May include nothing.
 */
#ifndef BNG_SQRT_H
#define BNG_SQRT_H

/* All ones where t's top bit is set, else 0. Each use below compares two values below
 * 2^31 by the sign of their difference. */
#define BNG_SQRT_TOP(t) (0u - ((t) >> 31))

/* One step of the root, bit by bit: the operand's next two bits into the remainder,
 * the root's next bit 1 where the remainder then holds 4 root + 1 (taken off it). The
 * root stays below 2^26 and the remainder at most twice it. */
#define BNG_SQRT_STEP(pair, root, rem, take, t)                                   \
    do {                                                                             \
        (rem) = ((rem) << 2) | (pair);                                               \
        (t) = ((root) << 2) | 1u;                                                    \
        (take) = ~BNG_SQRT_TOP((rem) - (t));                                         \
        (rem) -= (take) & (t);                                                       \
        (root) = ((root) << 1) | ((take) & 1u);                                      \
    } while (0)

/* r := the bits of the square root of the float whose bits are x, lane by lane (U:
 * uint32_t, or a GNU vector of unsigned int; r must not be x). A positive finite x is
 * m * 2^p, m in [2^23, 2^24) (a subnormal normalized), p even (m doubled where p is
 * odd): the root of m * 2^26, in [2^24.5, 2^25.5), to its integer part (26 steps, two
 * bits of the operand each: m's 25 bits, then 26 zero bits), its 24 leading bits
 * rounded up where the next is 1. A root is never a tie: a midpoint between two floats
 * is an odd 25-bit integer times a power of two, whose square has 49 or 50 significant
 * bits, and x has 24; so the next bit alone decides, as ties to even would. Rounding up
 * never carries into a 25th bit: 26 bits shift out to below 2^23.5, and 25 bits are at
 * most 2^25 - 2, the root of at most 2^50 - 2^26, whose next bit is 0. +0, -0, +Inf
 * and NaN are their own roots (a signalling NaN stays signalling, where sqrtf quiets
 * it: the one difference, a NaN either way); a value below -0 has none: the quiet NaN
 * 0x7fc00000 (its sign is not the point: any NaN is one, as sqrtf's). The exponent is kept biased
 * by 32 more than the float's, so that a subnormal's stays positive. */
#define BNG_SQRT_BITS(U, x, r)                                                       \
    do {                                                                             \
        U bng_e_, bng_m_, bng_mask_, bng_odd_, bng_root_, bng_rem_, bng_take_, bng_t_; \
        U bng_half_, bng_own_, bng_none_;                                            \
        int bng_k_;                                                                  \
        bng_e_ = (((x) >> 23) & 0xffu) + 32u;                                        \
        bng_m_ = (x) & 0x7fffffu;                                                    \
        bng_mask_ = BNG_SQRT_TOP(bng_e_ - 33u);          /* exponent field 0 */      \
        bng_m_ |= ~bng_mask_ & 0x800000u;                /* a normal value's 1 */    \
        bng_e_ += bng_mask_ & 1u;                        /* a subnormal's is 1 */    \
        for (bng_k_ = 16; bng_k_ >= 1; bng_k_ /= 2) {    /* normalized */            \
            bng_mask_ = BNG_SQRT_TOP(bng_m_ - (1u << (24 - bng_k_)));                \
            bng_m_ = (bng_mask_ & (bng_m_ << bng_k_)) | (~bng_mask_ & bng_m_);       \
            bng_e_ -= bng_mask_ & (unsigned)bng_k_;                                 \
        }                                                                            \
        bng_odd_ = bng_e_ & 1u;                          /* p's parity: e's */      \
        bng_m_ += bng_m_ & (0u - bng_odd_);              /* doubled: no per-lane shift */ \
        bng_root_ = bng_m_ & 0u;                                                     \
        bng_rem_ = bng_root_;                                                        \
        for (bng_k_ = 24; bng_k_ >= 0; bng_k_ -= 2)                                  \
            BNG_SQRT_STEP((bng_m_ >> bng_k_) & 3u, bng_root_, bng_rem_, bng_take_, bng_t_); \
        for (bng_k_ = 0; bng_k_ < 13; bng_k_++)                                      \
            BNG_SQRT_STEP(0u, bng_root_, bng_rem_, bng_take_, bng_t_);            \
        bng_mask_ = ~BNG_SQRT_TOP(bng_root_ - (1u << 25));   /* 26 bits: shift 2 */  \
        bng_half_ = ((bng_mask_ & (bng_root_ >> 1)) | (~bng_mask_ & bng_root_)) & 1u; \
        bng_root_ = (bng_mask_ & (bng_root_ >> 2)) | (~bng_mask_ & (bng_root_ >> 1)); \
        bng_root_ += bng_half_;                                                      \
        bng_e_ = ((bng_e_ - bng_odd_) >> 1) + 47u + (bng_mask_ & 1u);                \
        (r) = (bng_e_ << 23) | (bng_root_ & 0x7fffffu);                              \
        bng_t_ = (x) & 0x7fffffffu;                                                  \
        bng_own_ = BNG_SQRT_TOP(bng_t_ - 1u)             /* +-0 */                  \
                   | ~BNG_SQRT_TOP(((x) >> 1) - 0x3fc00000u);   /* >= +Inf: Inf, NaN, x < 0 */ \
        bng_none_ = BNG_SQRT_TOP(x) & ~BNG_SQRT_TOP(bng_t_ - 1u)                    \
                    & BNG_SQRT_TOP(bng_t_ - 0x7f800001u);           /* -Inf <= x < -0 */ \
        (r) = (bng_own_ & (x)) | (~bng_own_ & (r));                                 \
        (r) = (bng_none_ & 0x7fc00000u) | (~bng_none_ & (r));                       \
    } while (0)

#endif /* BNG_SQRT_H */
