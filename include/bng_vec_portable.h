/* SPDX-License-Identifier: Apache-2.0 */
/* Copyright 2026 the batchnormgrad authors */
/* bng_vec.h's portable backend: plain C99 structs of lanes and loops over them, for any
 * compiler; also the native backend's widths other than the target's own (the tails).
 * The first part is included once; the per-width part, each operation written out as a
 * function of its width, once a width (bng_vec.h). */
#ifndef BNG_VEC_PORTABLE_H
#define BNG_VEC_PORTABLE_H

#ifndef BNG_VEC_H
#error "bng_vec_portable.h is part of bng_vec.h: include that"
#endif


/* Half memory lane by lane, branch-free: the GNU backend's arithmetic on one lane
 * (see there), so that a compiler can vectorize the loop; the same bits as
 * bng_f16.h's conversions. Masks come from sign bits (0 - (x >> 31)), which every
 * vector unit has; selects written as ?: lose the vectorization where GCC will not
 * evaluate the floating-point operand of both arms (AVX2). The one ?: left is an
 * unsigned minimum. C99 union punning; memcpy of one half moves its bits whatever
 * type half is. memcpy is declared here, not by <string.h>: a freestanding build has
 * no hosted headers, and its library provides memcpy as every compiler needs it. */
void *memcpy(void *dst, const void *src, size_t bytes);
typedef union { float f; uint32_t u; } bng_lane_bits;

static inline float bng_half_lane_to_float(uint32_t w)
{
    const uint32_t magnitude = (w & 0x7fffu) << 13;           /* exponent, mantissa in place */
    const uint32_t zero_exponent = 0u - ((magnitude - 0x00800000u) >> 31);
    const uint32_t max_exponent = 0u - ((0x0f7fffffu - magnitude) >> 31);
    bng_lane_bits v, sub;

    v.u = magnitude + 0x38000000u;                            /* rebias 15 -> 127 */
    sub.u = magnitude + 0x38800000u;                          /* 2^-14 (1 + m/1024) */
    sub.f -= 0x1p-14f;                                        /* m 2^-24, normal, exact */
    v.u = (zero_exponent & sub.u) | (~zero_exponent & v.u);
    v.u |= max_exponent                                       /* Inf; NaN made quiet */
        & (0x7f800000u | ((magnitude + 0x003fffffu) & 0x00400000u));
    v.u |= (w & 0x8000u) << 16;
    return v.f;
}

static inline uint32_t bng_float_lane_to_half(float value)
{
    bng_lane_bits x, sub;
    uint32_t a, h, below, nan;

    x.f = value;
    a = x.u & 0x7fffffffu;
    sub.u = a;
    sub.f += 0.5f;                                            /* the FPU rounds a subnormal */
    below = 0u - ((a - 0x38800000u) >> 31);                   /* a < 2^-14 */
    nan = 0u - ((0x7f800000u - a) >> 31);                     /* a > Inf */
    h = (a - 0x38000000u + 0xfffu + ((a >> 13) & 1u)) >> 13;  /* rebias, round to even */
    h = h < 0x7c00u ? h : 0x7c00u;                            /* >= 65520, Inf: Inf */
    h = (below & (sub.u - 0x3f000000u)) | (~below & h);
    h = (nan & (0x7e00u | ((a >> 13) & 0x3ffu))) | (~nan & h);
    return h | ((x.u >> 16) & 0x8000u);
}

#define BNG_F16_HW_LANES 0

/* No width is two halves here (that is the GNU backend's). */
#define BNG_IS_HALVES(N) 0

#endif /* BNG_VEC_PORTABLE_H */

/* One width's operations, written out (BNG_N lanes; BNG_H, half of them, for a width
 * made of two halves): bng_vec.h includes this file again for every width and part
 * (BNG_VEC_OPS), so that each operation is a function here, whose lines a debugger
 * steps through. Its names are pasted: BNG_OPN(add) is
 * bng_f32x16_add at 16 lanes. */
#if defined(BNG_VEC_OPS) && BNG_VEC_OPS == BNG_VEC_OPS_F32_VECTOR
typedef struct { float lane[BNG_N]; } BNG_F32XN;
static inline BNG_F32XN BNG_OPN(zero)(void)
{
    BNG_F32XN v;
    int i;
    for (i = 0; i < BNG_N; i++)
        v.lane[i] = 0.0f;
    return v;
}
static inline BNG_F32XN BNG_OPN(ld_f32)(const float *p)
{
    BNG_F32XN v;
    int i;
    for (i = 0; i < BNG_N; i++)
        v.lane[i] = p[i];
    return v;
}
static inline void BNG_OPN(st_f32)(float *p, BNG_F32XN v)
{
    int i;
    for (i = 0; i < BNG_N; i++)
        p[i] = v.lane[i];
}
static inline BNG_F32XN BNG_OPN(add)(BNG_F32XN a, BNG_F32XN b)
{
    int i;
    for (i = 0; i < BNG_N; i++)
        a.lane[i] += b.lane[i];
    return a;
}
static inline BNG_F32XN BNG_OPN(sub)(BNG_F32XN a, BNG_F32XN b)
{
    int i;
    for (i = 0; i < BNG_N; i++)
        a.lane[i] -= b.lane[i];
    return a;
}
static inline BNG_F32XN BNG_OPN(mul)(BNG_F32XN a, BNG_F32XN b)
{
    int i;
    for (i = 0; i < BNG_N; i++)
        a.lane[i] *= b.lane[i];
    return a;
}
static inline BNG_F32XN BNG_OPN(div)(BNG_F32XN a, BNG_F32XN b)
{
    int i;
    for (i = 0; i < BNG_N; i++)
        a.lane[i] /= b.lane[i];
    return a;
}
static inline BNG_F32XN BNG_OPN(broadcast)(float s)
{
    BNG_F32XN v;
    int i;
    for (i = 0; i < BNG_N; i++)
        v.lane[i] = s;
    return v;
}
/* bng_vec.h's "Lanes": the fold to lane 0, lane 0 to every lane, the first n lanes of
 * one vector and the rest of another, the lanes w above. */
static inline BNG_F32XN BNG_OPN(fold)(BNG_F32XN v)
{
    int width, i;
    for (width = BNG_N / 2; width != 0; width /= 2)
        for (i = 0; i < width; i++)
            v.lane[i] = v.lane[i] + v.lane[i + width];
    return v;
}
static inline BNG_F32XN BNG_OPN(splat)(BNG_F32XN v)
{
    return BNG_OPN(broadcast)(v.lane[0]);
}
static inline BNG_F32XN BNG_OPN(select_first)(BNG_F32XN a, BNG_F32XN b, unsigned n)
{
    int i;
    for (i = 0; i < BNG_N; i++)
        if ((unsigned)i >= n)
            a.lane[i] = b.lane[i];
    return a;
}
static inline BNG_F32XN BNG_OPN(lanes_above)(BNG_F32XN v, unsigned w)
{
    unsigned i;
    for (i = 0; i < w && i + w < BNG_N; i++)
        v.lane[i] = v.lane[i + w];
    return v;
}
#elif defined(BNG_VEC_OPS) && BNG_VEC_OPS == BNG_VEC_OPS_F16_MEMORY
static inline BNG_F32XN BNG_OPN(ld_f16)(const half *p)
{
    BNG_F32XN v;
    int i;
    for (i = 0; i < BNG_N; i++) {        /* memcpy: half may be _Float16 */
        uint16_t lane;
        memcpy(&lane, p + i, 2);
        v.lane[i] = bng_half_lane_to_float(lane);
    }
    return v;
}
static inline void BNG_OPN(st_f16)(half *p, BNG_F32XN v)
{
    int i;
    for (i = 0; i < BNG_N; i++) {
        const uint16_t lane = (uint16_t)bng_float_lane_to_half(v.lane[i]);
        memcpy(p + i, &lane, 2);
    }
}
#elif defined(BNG_VEC_OPS) && BNG_VEC_OPS == BNG_VEC_OPS_RELU_VECTOR
/* dy masked by y lane by lane (BNG_RELU_KEEPS) into an array, which the width's own
 * load then reads (a native width's too: the vendor spellings need no bit operation).
 * The array is on the stack, which a vector load reaches on a unified target only: the
 * generator refuses relu on a split one. */
static inline BNG_F32XN BNG_OPN(ld_relu_f32)(const float *dy, const float *y)
{
    float masked[BNG_N];
    int i;
    for (i = 0; i < BNG_N; i++) {
        uint32_t d, m;
        memcpy(&d, dy + i, 4);
        memcpy(&m, y + i, 4);
        d &= 0u - BNG_RELU_KEEPS(m, 0x80000000u, 0x7f800000u);
        memcpy(masked + i, &d, 4);
    }
    return BNG_OPN(ld_f32)(masked);
}
static inline BNG_F32XN BNG_OPN(ld_relu_f16)(const half *dy, const half *y)
{
    half masked[BNG_N];
    int i;
    for (i = 0; i < BNG_N; i++) {
        uint16_t d, m;
        memcpy(&d, dy + i, 2);
        memcpy(&m, y + i, 2);
        d = (uint16_t)(d & (0u - BNG_RELU_KEEPS((unsigned)m, 0x8000u, 0x7c00u)));
        memcpy(masked + i, &d, 2);
    }
    return BNG_OPN(ld_f16)(masked);
}
typedef struct { uint32_t lane[BNG_N]; } BNG_KEEPSN(f32);
typedef struct { uint16_t lane[BNG_N]; } BNG_KEEPSN(f16);
static inline BNG_KEEPSN(f32) BNG_KEEPSN(zero_f32)(void)
{
    BNG_KEEPSN(f32) k;
    int i;
    for (i = 0; i < BNG_N; i++)
        k.lane[i] = 0;
    return k;
}
static inline BNG_KEEPSN(f16) BNG_KEEPSN(zero_f16)(void)
{
    BNG_KEEPSN(f16) k;
    int i;
    for (i = 0; i < BNG_N; i++)
        k.lane[i] = 0;
    return k;
}
static inline void BNG_KEEPSN(st_f32)(float *p, BNG_KEEPSN(f32) k)
{
    memcpy(p, k.lane, sizeof k.lane);
}
static inline void BNG_KEEPSN(st_f16)(half *p, BNG_KEEPSN(f16) k)
{
    memcpy(p, k.lane, sizeof k.lane);
}
/* Bit 0 of lane i at bit i (bng_vec.h, "Keep bits"). */
static inline unsigned long long BNG_KEEPSN(pack_f32)(BNG_KEEPSN(f32) k)
{
    unsigned long long packed = 0;
    int i;
    for (i = 0; i < BNG_N; i++)
        packed |= (unsigned long long)(k.lane[i] & 1u) << i;
    return packed;
}
static inline unsigned long long BNG_KEEPSN(pack_f16)(BNG_KEEPSN(f16) k)
{
    BNG_KEEPSN(f32) wide;   /* the lanes widened: f32's pack */
    int i;
    for (i = 0; i < BNG_N; i++)
        wide.lane[i] = k.lane[i];
    return BNG_KEEPSN(pack_f32)(wide);
}
/* A split target's NCHW keep words turned, or turned back (bng_vec.h, "Keep bits"),
 * bit by bit by the turn's definition. */
static inline void BNG_KEEPSN(turn_words_f32)(float *p, int back)
{
    uint32_t words[BNG_N];
    memcpy(words, p, sizeof words);
    BNG_TURN_WORDS(uint32_t, words, BNG_N, back);
    memcpy(p, words, sizeof words);
}
static inline void BNG_KEEPSN(turn_words_f16)(half *p, int back)
{
    uint16_t words[BNG_N];
    memcpy(words, p, sizeof words);
    BNG_TURN_WORDS(uint16_t, words, BNG_N, back);
    memcpy(p, words, sizeof words);
}
static inline BNG_F32XN BNG_OPN(ld_relu_mark_f32)(const float *dy, const float *y,
                                                       BNG_KEEPSN(f32) *keeps,
                                                       unsigned bit)
{
    float masked[BNG_N];
    int i;
    for (i = 0; i < BNG_N; i++) {
        uint32_t d, m, keep;
        memcpy(&d, dy + i, 4);
        memcpy(&m, y + i, 4);
        keep = BNG_RELU_KEEPS(m, 0x80000000u, 0x7f800000u);
        d &= 0u - keep;
        keeps->lane[i] |= keep << bit;
        memcpy(masked + i, &d, 4);
    }
    return BNG_OPN(ld_f32)(masked);
}
static inline BNG_F32XN BNG_OPN(ld_relu_mark_f16)(const half *dy, const half *y,
                                                       BNG_KEEPSN(f16) *keeps,
                                                       unsigned bit)
{
    half masked[BNG_N];
    int i;
    for (i = 0; i < BNG_N; i++) {
        uint16_t d, m;
        unsigned keep;
        memcpy(&d, dy + i, 2);
        memcpy(&m, y + i, 2);
        keep = BNG_RELU_KEEPS((unsigned)m, 0x8000u, 0x7c00u);
        d = (uint16_t)(d & (0u - keep));
        keeps->lane[i] = (uint16_t)(keeps->lane[i] | (keep << bit));
        memcpy(masked + i, &d, 2);
    }
    return BNG_OPN(ld_f16)(masked);
}
static inline BNG_F32XN BNG_OPN(ld_relu_keeps_f32)(const float *dy,
                                                        const float *keeps, unsigned bit)
{
    float masked[BNG_N];
    int i;
    for (i = 0; i < BNG_N; i++) {
        uint32_t d, k;
        memcpy(&d, dy + i, 4);
        memcpy(&k, keeps + i, 4);
        d &= 0u - ((k >> bit) & 1u);
        memcpy(masked + i, &d, 4);
    }
    return BNG_OPN(ld_f32)(masked);
}
static inline BNG_F32XN BNG_OPN(ld_relu_keeps_f16)(const half *dy,
                                                        const half *keeps, unsigned bit)
{
    half masked[BNG_N];
    int i;
    for (i = 0; i < BNG_N; i++) {
        uint16_t d, k;
        memcpy(&d, dy + i, 2);
        memcpy(&k, keeps + i, 2);
        d = (uint16_t)(d & (0u - (((unsigned)k >> bit) & 1u)));
        memcpy(masked + i, &d, 2);
    }
    return BNG_OPN(ld_f16)(masked);
}
/* dy masked by keep bits of consecutive elements (NCHW's planes): lane i where bit i of
 * `bits` is set, else +0. */
static inline BNG_F32XN BNG_OPN(ld_relu_bits_f32)(const float *dy, unsigned long long bits)
{
    float masked[BNG_N];
    int i;
    for (i = 0; i < BNG_N; i++) {
        uint32_t d;
        memcpy(&d, dy + i, 4);
        d &= 0u - (uint32_t)((bits >> i) & 1u);
        memcpy(masked + i, &d, 4);
    }
    return BNG_OPN(ld_f32)(masked);
}
static inline BNG_F32XN BNG_OPN(ld_relu_bits_f16)(const half *dy, unsigned long long bits)
{
    half masked[BNG_N];
    int i;
    for (i = 0; i < BNG_N; i++) {
        uint16_t d;
        memcpy(&d, dy + i, 2);
        d = (uint16_t)(d & (0u - (unsigned)((bits >> i) & 1u)));
        memcpy(masked + i, &d, 2);
    }
    return BNG_OPN(ld_f16)(masked);
}
#endif
