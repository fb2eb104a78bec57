/* SPDX-License-Identifier: Apache-2.0 */
/* Copyright 2026 the batchnormgrad authors */
/* bng_vec.h's GNU backend, its masked loads (the fused ReLU's: bng_vec.h, "Keep bits"):
 * dy masked by y, by keep words, by a plane's keep bits, and the keep words recorded,
 * at one width (BNG_VEC_OPS_RELU_VECTOR) or as two halves (BNG_VEC_OPS_RELU_HALVES).
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
    half masked[BNG_N];
    __builtin_memcpy(&d, dy, sizeof d);
    __builtin_memcpy(&m, y, sizeof m);
    d &= BNG_RELU_KEEPS_V(BNG_TN(bng_relu_u16x), BNG_TN(bng_relu_i16x), m, 0x7fffu, 0x7c00u, 15);
    __builtin_memcpy(masked, &d, sizeof d);
    return BNG_OPN(ld_f16)(masked);
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
/* Bit 0 of each lane at the lane's index (bng_vec.h, "Keep bits": the forward's NCHW
 * bits): each lane shifted to its place among a lane type's width of lanes (lane 32 of
 * f32 keeps is bit 0 of its lane's group), then each group's lanes ORed together, which
 * a compiler folds half a register at a time: no lane taken apart but the last. */
BNG_VEC_FN unsigned long long BNG_KEEPSN(pack_f32)(BNG_KEEPSN(f32) k)
{
    BNG_KEEPSN(f32) at, placed;
    unsigned int lanes[BNG_N];
    unsigned long long packed = 0;
    int i, group;
    for (i = 0; i < BNG_N; i++)
        at[i] = (unsigned)(i & 31);
    placed = (k & 1u) << at;
    __builtin_memcpy(lanes, &placed, sizeof lanes);
    for (group = 0; group < BNG_N; group += 32) {
        unsigned int word = 0;
        for (i = group; i < BNG_N && i < group + 32; i++)
            word |= lanes[i];
        packed |= (unsigned long long)word << group;
    }
    return packed;
}
BNG_VEC_FN unsigned long long BNG_KEEPSN(pack_f16)(BNG_KEEPSN(f16) k)
{
    BNG_KEEPSN(f16) at, placed;
    unsigned short lanes[BNG_N];
    unsigned long long packed = 0;
    int i, group;
    for (i = 0; i < BNG_N; i++)
        at[i] = (unsigned short)(i & 15);
    placed = (k & (unsigned short)1) << at;
    __builtin_memcpy(lanes, &placed, sizeof lanes);
    for (group = 0; group < BNG_N; group += 16) {
        unsigned short word = 0;
        for (i = group; i < BNG_N && i < group + 16; i++)
            word = (unsigned short)(word | lanes[i]);
        packed |= (unsigned long long)word << group;
    }
    return packed;
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
    half masked[BNG_N];
    __builtin_memcpy(&d, dy, sizeof d);
    __builtin_memcpy(&m, y, sizeof m);
    keep = BNG_RELU_KEEPS_V(BNG_TN(bng_relu_u16x), BNG_TN(bng_relu_i16x), m, 0x7fffu, 0x7c00u, 15);
    d &= keep;
    *keeps |= keep & (unsigned short)(1u << bit);
    __builtin_memcpy(masked, &d, sizeof d);
    return BNG_OPN(ld_f16)(masked);
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
    half masked[BNG_N];
    __builtin_memcpy(&d, dy, sizeof d);
    __builtin_memcpy(&k, keeps, sizeof k);
    d &= (BNG_TN(bng_relu_u16x))((BNG_TN(bng_relu_i16x))(k << (15 - bit)) >> 15);
    __builtin_memcpy(masked, &d, sizeof d);
    return BNG_OPN(ld_f16)(masked);
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
    half masked[BNG_N];
    int i;
    __builtin_memcpy(&d, dy, sizeof d);
    for (i = 0; i < BNG_N; i++) {
        part[i] = (unsigned short)(bits >> (i & ~15));
        at[i] = (unsigned short)(i & 15);
    }
    d &= (unsigned short)0 - ((part >> at) & 1u);
    __builtin_memcpy(masked, &d, sizeof d);
    return BNG_OPN(ld_f16)(masked);
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
#endif
