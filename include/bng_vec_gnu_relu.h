/* SPDX-License-Identifier: Apache-2.0 */
/* Copyright 2026 the batchnormgrad authors */
/* bng_vec.h's GNU backend, its masked loads (the fused ReLU's: bng_vec.h, "Keep bits"):
 * dy masked by y, by keep words, by a plane's keep bits, the keep words recorded, and
 * packed into bits (the forward's NCHW ReLU), at one width (BNG_VEC_OPS_RELU_VECTOR) or
 * as two halves (BNG_VEC_OPS_RELU_HALVES).
 * bng_vec.h includes it once a width in its ReLU pass, after bng_vec_gnu.h's vectors
 * and half memory, whose _ld_f32 and _ld_f16 the loads end with. */
#ifndef BNG_VEC_H
#error "bng_vec_gnu_relu.h is part of bng_vec.h: include that"
#endif

#if defined(BNG_VEC_OPS) && BNG_VEC_OPS == BNG_VEC_OPS_RELU_VECTOR
/* dy masked by y (BNG_RELU_KEEPS_V), then converted as _ld_f32 and _ld_f16 convert: a
 * vector of dy's bits and one of y's, at a width the compiler has a register for. */
typedef unsigned int BNG_TN(bng_relu_u32x) __attribute__((vector_size(4 * BNG_N)));
typedef int BNG_TN(bng_relu_i32x) __attribute__((vector_size(4 * BNG_N)));
typedef unsigned short BNG_TN(bng_relu_u16x) __attribute__((vector_size(2 * BNG_N)));
typedef short BNG_TN(bng_relu_i16x) __attribute__((vector_size(2 * BNG_N)));
/* The floats of a register of masked halves, as _ld_f16 converts. On a split target the
 * register itself, widened and converted in registers: its vector unit loads vector
 * memory only, and an array on the stack is scalar memory. Elsewhere through such an
 * array, which _ld_f16 loads (by the host's conversions where it has them). */
BNG_VEC_FN BNG_F32XN BNG_OPN(f16_of_masked)(BNG_TN(bng_relu_u16x) d)
{
#if defined(BNG_SPLIT_MEMORY) && BNG_SPLIT_MEMORY
    BNG_TN(bng_relu_u32x) w;
    BNG_F32XN f;
    BNG_WIDEN_HALF_BITS(BNG_TN(bng_relu_u32x), w, d);
    BNG_HALF_BITS_TO_F32(BNG_TN(bng_relu_u32x), BNG_TN(bng_relu_i32x), w, f);
    return f;
#else
    half masked[BNG_N];
    __builtin_memcpy(masked, &d, sizeof d);
    return BNG_OPN(ld_f16)(masked);
#endif
}
BNG_VEC_FN BNG_F32XN BNG_OPN(ld_relu_f32)(const float *dy, const float *y)
{
    BNG_TN(bng_relu_u32x) d, m;
    BNG_F32XN v;
    __builtin_memcpy(&d, dy, sizeof d);
    __builtin_memcpy(&m, y, sizeof m);
    d &= BNG_RELU_KEEPS_V(BNG_TN(bng_relu_u32x), BNG_TN(bng_relu_i32x), m, 0x7fffffffu,
                          0x7f800000u, 31);
    __builtin_memcpy(&v, &d, sizeof v);
    return v;
}
BNG_VEC_FN BNG_F32XN BNG_OPN(ld_relu_f16)(const half *dy, const half *y)
{
    BNG_TN(bng_relu_u16x) d, m;
    __builtin_memcpy(&d, dy, sizeof d);
    __builtin_memcpy(&m, y, sizeof m);
    d &= BNG_RELU_KEEPS_V(BNG_TN(bng_relu_u16x), BNG_TN(bng_relu_i16x), m, 0x7fffu, 0x7c00u, 15);
    return BNG_OPN(f16_of_masked)(d);
}
typedef BNG_TN(bng_relu_u32x) BNG_KEEPSN(f32);
typedef BNG_TN(bng_relu_u16x) BNG_KEEPSN(f16);
BNG_VEC_FN BNG_KEEPSN(f32) BNG_KEEPSN(zero_f32)(void)
{
    const BNG_KEEPSN(f32) k = {0};
    return k;
}
BNG_VEC_FN BNG_KEEPSN(f16) BNG_KEEPSN(zero_f16)(void)
{
    const BNG_KEEPSN(f16) k = {0};
    return k;
}
BNG_VEC_FN void BNG_KEEPSN(st_f32)(float *p, BNG_KEEPSN(f32) k)
{
    __builtin_memcpy(p, &k, sizeof k);
}
BNG_VEC_FN void BNG_KEEPSN(st_f16)(half *p, BNG_KEEPSN(f16) k)
{
    __builtin_memcpy(p, &k, sizeof k);
}
/* Every lane of k ORed together: its two halves ORed, down to one lane (no lane taken
 * apart but the last: GCC 11, 12 and clang fold a register in its halves). */
BNG_VEC_FN unsigned int BNG_KEEPSN(or_f32)(BNG_KEEPSN(f32) k)
{
#if BNG_N == 1
    return k[0];
#else
    BNG_KEEPSH(f32) lo, hi;
    BNG_GNU_SPLIT(k, lo, hi);
    return BNG_KEEPSH(or_f32)(lo | hi);
#endif
}
/* Bit 0 of each lane at the lane's index (bng_vec.h, "Keep bits": the forward's NCHW
 * bits): up to a lane type's width of lanes (32 of float keeps, 16 of half) each lane
 * shifted to its place and the lanes ORed together, half keeps two lanes a word (either
 * half of which the fold ORs in); wider, each half so. */
BNG_VEC_FN unsigned long long BNG_KEEPSN(pack_f32)(BNG_KEEPSN(f32) k)
{
#if BNG_N > 32
    BNG_KEEPSH(f32) lo, hi;
    BNG_GNU_SPLIT(k, lo, hi);
    return BNG_KEEPSH(pack_f32)(lo) | BNG_KEEPSH(pack_f32)(hi) << BNG_H;
#else
    static const unsigned int lane_index[32] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13,
        14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31};
    BNG_KEEPSN(f32) at;
    __builtin_memcpy(&at, lane_index, sizeof at);
    return BNG_KEEPSN(or_f32)((k & 1u) << at);
#endif
}
BNG_VEC_FN unsigned long long BNG_KEEPSN(pack_f16)(BNG_KEEPSN(f16) k)
{
#if BNG_N == 1
    return k[0] & 1u;
#elif BNG_N > 16
    BNG_KEEPSH(f16) lo, hi;
    BNG_GNU_SPLIT(k, lo, hi);
    return BNG_KEEPSH(pack_f16)(lo) | BNG_KEEPSH(pack_f16)(hi) << BNG_H;
#else
    static const unsigned short lane_index[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
        13, 14, 15};
    BNG_KEEPSN(f16) at, placed;
    BNG_KEEPSH(f32) pairs;
    unsigned int both;
    __builtin_memcpy(&at, lane_index, sizeof at);
    placed = (k & (unsigned short)1) << at;
    __builtin_memcpy(&pairs, &placed, sizeof pairs);
    both = BNG_KEEPSH(or_f32)(pairs);
    return (both | both >> 16) & 0xffffu;
#endif
}
BNG_VEC_FN BNG_F32XN BNG_OPN(ld_relu_mark_f32)(const float *dy, const float *y,
                                                    BNG_KEEPSN(f32) *keeps,
                                                    unsigned bit)
{
    BNG_TN(bng_relu_u32x) d, m, keep;
    BNG_F32XN v;
    __builtin_memcpy(&d, dy, sizeof d);
    __builtin_memcpy(&m, y, sizeof m);
    keep = BNG_RELU_KEEPS_V(BNG_TN(bng_relu_u32x), BNG_TN(bng_relu_i32x), m, 0x7fffffffu,
                            0x7f800000u, 31);
    d &= keep;
    *keeps |= keep & (1u << bit);
    __builtin_memcpy(&v, &d, sizeof v);
    return v;
}
BNG_VEC_FN BNG_F32XN BNG_OPN(ld_relu_mark_f16)(const half *dy, const half *y,
                                                    BNG_KEEPSN(f16) *keeps,
                                                    unsigned bit)
{
    BNG_TN(bng_relu_u16x) d, m, keep;
    __builtin_memcpy(&d, dy, sizeof d);
    __builtin_memcpy(&m, y, sizeof m);
    keep = BNG_RELU_KEEPS_V(BNG_TN(bng_relu_u16x), BNG_TN(bng_relu_i16x), m, 0x7fffu, 0x7c00u, 15);
    d &= keep;
    *keeps |= keep & (unsigned short)(1u << bit);
    return BNG_OPN(f16_of_masked)(d);
}
BNG_VEC_FN BNG_F32XN BNG_OPN(ld_relu_keeps_f32)(const float *dy,
                                                     const float *keeps, unsigned bit)
{
    BNG_TN(bng_relu_u32x) d, k;
    BNG_F32XN v;
    __builtin_memcpy(&d, dy, sizeof d);
    __builtin_memcpy(&k, keeps, sizeof k);
    d &= (BNG_TN(bng_relu_u32x))((BNG_TN(bng_relu_i32x))(k << (31 - bit)) >> 31);
    __builtin_memcpy(&v, &d, sizeof v);
    return v;
}
BNG_VEC_FN BNG_F32XN BNG_OPN(ld_relu_keeps_f16)(const half *dy,
                                                     const half *keeps, unsigned bit)
{
    BNG_TN(bng_relu_u16x) d, k;
    __builtin_memcpy(&d, dy, sizeof d);
    __builtin_memcpy(&k, keeps, sizeof k);
    d &= (BNG_TN(bng_relu_u16x))((BNG_TN(bng_relu_i16x))(k << (15 - bit)) >> 15);
    return BNG_OPN(f16_of_masked)(d);
}
/* dy masked by keep bits of consecutive elements (NCHW's planes): lane i where bit i of
 * `bits` is set. Each lane shifts its part of `bits` (the lane type's width of it, from
 * a multiple of that width) by its index in it: a broadcast and a shift per lane type's
 * width, no lane taken apart. */
BNG_VEC_FN BNG_F32XN BNG_OPN(ld_relu_bits_f32)(const float *dy, unsigned long long bits)
{
    BNG_TN(bng_relu_u32x) d, part, at;
    BNG_F32XN v;
    int i;
    __builtin_memcpy(&d, dy, sizeof d);
    for (i = 0; i < BNG_N; i++) {
        part[i] = (unsigned)(bits >> (i & ~31));
        at[i] = (unsigned)(i & 31);
    }
    d &= 0u - ((part >> at) & 1u);
    __builtin_memcpy(&v, &d, sizeof v);
    return v;
}
BNG_VEC_FN BNG_F32XN BNG_OPN(ld_relu_bits_f16)(const half *dy, unsigned long long bits)
{
    BNG_TN(bng_relu_u16x) d, part, at;
    int i;
    __builtin_memcpy(&d, dy, sizeof d);
    for (i = 0; i < BNG_N; i++) {
        part[i] = (unsigned short)(bits >> (i & ~15));
        at[i] = (unsigned short)(i & 15);
    }
    d &= (unsigned short)0 - ((part >> at) & 1u);
    return BNG_OPN(f16_of_masked)(d);
}
/* A split target's NCHW keep words turned in a register (bng_vec.h, "Keep bits";
 * bng_vec_gnu.h, BNG_TURN_STEP), or turned back: each step is its own inverse and the
 * steps exchange different bits, so the inverse is the same steps after the last
 * permute's inverse (BNG_LANE_SPREAD). */
BNG_VEC_FN void BNG_KEEPSN(turn_words_f32)(float *p, int back)
{
    BNG_KEEPSN(f32) k;
    (void)back;    /* the steps alone, up to 32 lanes */
    __builtin_memcpy(&k, p, sizeof k);
#if BNG_N > 32
    if (back)
        k = BNG_PERMUTE(BNG_N, BNG_TN(bng_relu_i32x), k, BNG_LANE_SPREAD, 32);
#endif
#if BNG_N > 1
    BNG_TURN_STEP(BNG_KEEPSN(f32), BNG_TN(bng_relu_i32x), k, BNG_TURN_G(32), 1, 0x55555555u);
#endif
#if BNG_N > 2
    BNG_TURN_STEP(BNG_KEEPSN(f32), BNG_TN(bng_relu_i32x), k, 2 * BNG_TURN_G(32), 2, 0x33333333u);
#endif
#if BNG_N > 4
    BNG_TURN_STEP(BNG_KEEPSN(f32), BNG_TN(bng_relu_i32x), k, 4 * BNG_TURN_G(32), 4, 0x0f0f0f0fu);
#endif
#if BNG_N > 8
    BNG_TURN_STEP(BNG_KEEPSN(f32), BNG_TN(bng_relu_i32x), k, 8 * BNG_TURN_G(32), 8, 0x00ff00ffu);
#endif
#if BNG_N > 16
    BNG_TURN_STEP(BNG_KEEPSN(f32), BNG_TN(bng_relu_i32x), k, 16 * BNG_TURN_G(32), 16, 0x0000ffffu);
#endif
#if BNG_N > 32
    if (!back)
        k = BNG_PERMUTE(BNG_N, BNG_TN(bng_relu_i32x), k, BNG_LANE_UNSPREAD, 32);
#endif
    __builtin_memcpy(p, &k, sizeof k);
}
BNG_VEC_FN void BNG_KEEPSN(turn_words_f16)(half *p, int back)
{
    BNG_KEEPSN(f16) k;
    (void)back;    /* the steps alone, up to 16 lanes */
    __builtin_memcpy(&k, p, sizeof k);
#if BNG_N > 16
    if (back)
        k = BNG_PERMUTE(BNG_N, BNG_TN(bng_relu_i16x), k, BNG_LANE_SPREAD, 16);
#endif
#if BNG_N > 1
    BNG_TURN_STEP(BNG_KEEPSN(f16), BNG_TN(bng_relu_i16x), k, BNG_TURN_G(16), 1, 0x5555u);
#endif
#if BNG_N > 2
    BNG_TURN_STEP(BNG_KEEPSN(f16), BNG_TN(bng_relu_i16x), k, 2 * BNG_TURN_G(16), 2, 0x3333u);
#endif
#if BNG_N > 4
    BNG_TURN_STEP(BNG_KEEPSN(f16), BNG_TN(bng_relu_i16x), k, 4 * BNG_TURN_G(16), 4, 0x0f0fu);
#endif
#if BNG_N > 8
    BNG_TURN_STEP(BNG_KEEPSN(f16), BNG_TN(bng_relu_i16x), k, 8 * BNG_TURN_G(16), 8, 0x00ffu);
#endif
#if BNG_N > 16
    if (!back)
        k = BNG_PERMUTE(BNG_N, BNG_TN(bng_relu_i16x), k, BNG_LANE_UNSPREAD, 16);
#endif
    __builtin_memcpy(p, &k, sizeof k);
}
#elif defined(BNG_VEC_OPS) && BNG_VEC_OPS == BNG_VEC_OPS_RELU_HALVES
BNG_VEC_FN BNG_F32XN BNG_OPN(ld_relu_f32)(const float *dy, const float *y)
{
    BNG_F32XN v;
    v.lo = BNG_OPH(ld_relu_f32)(dy, y);
    v.hi = BNG_OPH(ld_relu_f32)(dy + BNG_H, y + BNG_H);
    return v;
}
BNG_VEC_FN BNG_F32XN BNG_OPN(ld_relu_f16)(const half *dy, const half *y)
{
    BNG_F32XN v;
    v.lo = BNG_OPH(ld_relu_f16)(dy, y);
    v.hi = BNG_OPH(ld_relu_f16)(dy + BNG_H, y + BNG_H);
    return v;
}
typedef struct { BNG_KEEPSH(f32) lo, hi; } BNG_KEEPSN(f32);
typedef struct { BNG_KEEPSH(f16) lo, hi; } BNG_KEEPSN(f16);
BNG_VEC_FN BNG_KEEPSN(f32) BNG_KEEPSN(zero_f32)(void)
{
    BNG_KEEPSN(f32) k;
    k.lo = k.hi = BNG_KEEPSH(zero_f32)();
    return k;
}
BNG_VEC_FN BNG_KEEPSN(f16) BNG_KEEPSN(zero_f16)(void)
{
    BNG_KEEPSN(f16) k;
    k.lo = k.hi = BNG_KEEPSH(zero_f16)();
    return k;
}
BNG_VEC_FN void BNG_KEEPSN(st_f32)(float *p, BNG_KEEPSN(f32) k)
{
    BNG_KEEPSH(st_f32)(p, k.lo);
    BNG_KEEPSH(st_f32)(p + BNG_H, k.hi);
}
BNG_VEC_FN void BNG_KEEPSN(st_f16)(half *p, BNG_KEEPSN(f16) k)
{
    BNG_KEEPSH(st_f16)(p, k.lo);
    BNG_KEEPSH(st_f16)(p + BNG_H, k.hi);
}
BNG_VEC_FN unsigned long long BNG_KEEPSN(pack_f32)(BNG_KEEPSN(f32) k)
{
    return BNG_KEEPSH(pack_f32)(k.lo) | BNG_KEEPSH(pack_f32)(k.hi) << BNG_H;
}
BNG_VEC_FN unsigned long long BNG_KEEPSN(pack_f16)(BNG_KEEPSN(f16) k)
{
    return BNG_KEEPSH(pack_f16)(k.lo) | BNG_KEEPSH(pack_f16)(k.hi) << BNG_H;
}
BNG_VEC_FN BNG_F32XN BNG_OPN(ld_relu_mark_f32)(const float *dy, const float *y,
                                                    BNG_KEEPSN(f32) *keeps,
                                                    unsigned bit)
{
    BNG_F32XN v;
    v.lo = BNG_OPH(ld_relu_mark_f32)(dy, y, &keeps->lo, bit);
    v.hi = BNG_OPH(ld_relu_mark_f32)(dy + BNG_H, y + BNG_H, &keeps->hi, bit);
    return v;
}
BNG_VEC_FN BNG_F32XN BNG_OPN(ld_relu_mark_f16)(const half *dy, const half *y,
                                                    BNG_KEEPSN(f16) *keeps,
                                                    unsigned bit)
{
    BNG_F32XN v;
    v.lo = BNG_OPH(ld_relu_mark_f16)(dy, y, &keeps->lo, bit);
    v.hi = BNG_OPH(ld_relu_mark_f16)(dy + BNG_H, y + BNG_H, &keeps->hi, bit);
    return v;
}
BNG_VEC_FN BNG_F32XN BNG_OPN(ld_relu_keeps_f32)(const float *dy,
                                                     const float *keeps, unsigned bit)
{
    BNG_F32XN v;
    v.lo = BNG_OPH(ld_relu_keeps_f32)(dy, keeps, bit);
    v.hi = BNG_OPH(ld_relu_keeps_f32)(dy + BNG_H, keeps + BNG_H, bit);
    return v;
}
BNG_VEC_FN BNG_F32XN BNG_OPN(ld_relu_keeps_f16)(const half *dy,
                                                     const half *keeps, unsigned bit)
{
    BNG_F32XN v;
    v.lo = BNG_OPH(ld_relu_keeps_f16)(dy, keeps, bit);
    v.hi = BNG_OPH(ld_relu_keeps_f16)(dy + BNG_H, keeps + BNG_H, bit);
    return v;
}
BNG_VEC_FN BNG_F32XN BNG_OPN(ld_relu_bits_f32)(const float *dy, unsigned long long bits)
{
    BNG_F32XN v;
    v.lo = BNG_OPH(ld_relu_bits_f32)(dy, bits);
    v.hi = BNG_OPH(ld_relu_bits_f32)(dy + BNG_H, bits >> BNG_H);
    return v;
}
BNG_VEC_FN BNG_F32XN BNG_OPN(ld_relu_bits_f16)(const half *dy, unsigned long long bits)
{
    BNG_F32XN v;
    v.lo = BNG_OPH(ld_relu_bits_f16)(dy, bits);
    v.hi = BNG_OPH(ld_relu_bits_f16)(dy + BNG_H, bits >> BNG_H);
    return v;
}
/* The turn of two halves' words, or its inverse (a host's wide widths, never a DSP's:
 * bng_vec_gnu.h, BNG_GNU_LANES), bit by bit by its definition. */
BNG_VEC_FN void BNG_KEEPSN(turn_words_f32)(float *p, int back)
{
    unsigned int words[BNG_N];
    __builtin_memcpy(words, p, sizeof words);
    BNG_TURN_WORDS(unsigned int, words, BNG_N, back);
    __builtin_memcpy(p, words, sizeof words);
}
BNG_VEC_FN void BNG_KEEPSN(turn_words_f16)(half *p, int back)
{
    unsigned short words[BNG_N];
    __builtin_memcpy(words, p, sizeof words);
    BNG_TURN_WORDS(unsigned short, words, BNG_N, back);
    __builtin_memcpy(p, words, sizeof words);
}
#endif
