/* SPDX-License-Identifier: Apache-2.0 */
/* Copyright 2026 the batchnormgrad authors */
/* bng_vec.h's GNU backend: GCC/clang vector extensions (__attribute__((vector_size))),
 * which the compiler maps onto the target's vector unit; on x86 hosts the hardware half
 * conversions and streaming stores. Widths wider than the host's vectors are two halves
 * (the part BNG_VEC_OPS_F32_HALVES). The first part is included once; the per-width part,
 * each operation written out as a function of its width, once a width (bng_vec.h). The
 * masked loads of the fused ReLU are bng_vec_gnu_relu.h. */
#ifndef BNG_VEC_GNU_H
#define BNG_VEC_GNU_H

#ifndef BNG_VEC_H
#error "bng_vec_gnu.h is part of bng_vec.h: include that"
#endif

/* A vector function that is not inlined passes its vectors through memory. */
#define BNG_VEC_FN static inline __attribute__((always_inline))

/* Half memory, lane-parallel and branch-free, in GNU C a GCC 8-era compiler has (no
 * _Float16 arithmetic; __builtin_convertvector only where the compiler has it, below).
 * half -> float: exponent and mantissa moved into place and rebiased; a subnormal half
 * m * 2^-24 is computed as 2^-14 (1 + m/1024) - 2^-14, both operands and the exact
 * result normal floats, so an FPU that flushes subnormals (FTZ/DAZ) gives the same
 * bits; Inf and NaN get an all-ones exponent (NaN made quiet). float -> half: round to
 * nearest even on the bits; below the half normal range, adding 0.5f (a normal result)
 * lets the FPU round the subnormal. Masks come from sign bits (an arithmetic shift,
 * which GCC defines for signed vectors), not vector compares, which a GCC without
 * compare patterns for the vector unit lowers lane by lane. The results equal
 * bng_f16_bits_to_float and bng_float_to_f16_bits bit for bit. */
#define BNG_NEGATIVE(N, x) BNG_NEGATIVE_T(BNG_PASTE(bng_u32x, N), BNG_PASTE(bng_i32x, N), x)
#define BNG_NEGATIVE_T(U, S, x) ((U)((S)(x) >> 31))
/* f := the floats of w's halves (w: a vector U of 32-bit lanes, each lane a half's bits
 * in its low 16; S the signed U), as described above: _ld_f16's conversion, and the
 * masked half loads' on a split target, which convert their masked register itself. */
#define BNG_HALF_BITS_TO_F32(U, S, w, f)                                             \
    do {                                                                             \
        U bng_magnitude_, bng_bits_, bng_subnormal_, bng_special_;                   \
        bng_magnitude_ = ((w) & 0x7fffu) << 13;      /* exponent, mantissa in place */ \
        bng_bits_ = bng_magnitude_ + 0x38800000u;    /* 2^-14 (1 + m/1024) */         \
        __builtin_memcpy(&(f), &bng_bits_, sizeof(f));                               \
        (f) -= 0x1p-14f;                             /* m 2^-24, normal, exact */    \
        __builtin_memcpy(&bng_subnormal_, &(f), sizeof(f));                          \
        bng_bits_ = bng_magnitude_ + 0x38000000u;    /* rebias 15 -> 127 */           \
        bng_special_ = BNG_NEGATIVE_T(U, S, bng_magnitude_ - 0x00800000u);  /* exponent 0 */ \
        bng_bits_ = (bng_special_ & bng_subnormal_) | (~bng_special_ & bng_bits_);   \
        bng_special_ = BNG_NEGATIVE_T(U, S, 0x0f7fffffu - bng_magnitude_);  /* exponent 31 */ \
        bng_bits_ |= bng_special_ & (0x7f800000u | ((bng_magnitude_ + 0x003fffffu) & 0x00400000u)); \
        bng_bits_ |= ((w) & 0x8000u) << 16;                                          \
        __builtin_memcpy(&(f), &bng_bits_, sizeof(f));                               \
    } while (0)
#if defined(__clang__) || (defined(__GNUC__) && __GNUC__ >= 9)
/* The halves as one vector, widened and narrowed in registers (the lane loop below goes
 * through the stack on x86: 4x slower per element with AVX2). Zero extension and
 * truncation of values below 2^16: the same bits. */
/* w (a vector U32 of 32-bit lanes) := the halves' bits in register d, zero extended */
#define BNG_WIDEN_HALF_BITS(U32, w, d) ((w) = __builtin_convertvector((d), U32))
#define BNG_LOAD_HALF_BITS(N, w, p)                                                  \
    do {                                                                             \
        BNG_PASTE(bng_u16x, N) bng_raw_;                                             \
        __builtin_memcpy(&bng_raw_, (p), sizeof bng_raw_);                           \
        BNG_WIDEN_HALF_BITS(BNG_PASTE(bng_u32x, N), w, bng_raw_);                    \
    } while (0)
#define BNG_STORE_HALF_BITS(N, p, h)                                                 \
    do {                                                                             \
        const BNG_PASTE(bng_u16x, N) bng_raw_ = __builtin_convertvector((h), BNG_PASTE(bng_u16x, N)); \
        __builtin_memcpy((p), &bng_raw_, sizeof bng_raw_);                           \
    } while (0)
#else
/* GCC 8 and older (no __builtin_convertvector): lane by lane. memcpy: half may be
 * _Float16. */
#define BNG_LOAD_HALF_BITS(N, w, p)                                                  \
    do {                                                                             \
        int bng_i_;                                                                  \
        for (bng_i_ = 0; bng_i_ < N; bng_i_++) {                                     \
            unsigned short bng_lane_;                                                \
            __builtin_memcpy(&bng_lane_, (p) + bng_i_, 2);                           \
            (w)[bng_i_] = bng_lane_;                                                 \
        }                                                                            \
    } while (0)
#define BNG_STORE_HALF_BITS(N, p, h)                                                 \
    do {                                                                             \
        int bng_i_;                                                                  \
        for (bng_i_ = 0; bng_i_ < N; bng_i_++) {                                     \
            const unsigned short bng_lane_ = (unsigned short)(h)[bng_i_];            \
            __builtin_memcpy((p) + bng_i_, &bng_lane_, 2);                           \
        }                                                                            \
    } while (0)
#define BNG_WIDEN_HALF_BITS(U32, w, d)                                               \
    do {                                                                             \
        unsigned bng_i_;                                                             \
        for (bng_i_ = 0; bng_i_ < sizeof(d) / sizeof((d)[0]); bng_i_++)              \
            (w)[bng_i_] = (d)[bng_i_];                                               \
    } while (0)
#endif

/* x86 hosts: the hardware half conversions and the streaming stores, spelled as the
 * compiler builtins that <immintrin.h>'s intrinsics wrap (the same instructions) rather
 * than through that header, whose tens of thousands of lines cost more than the rest of
 * a driver room's compile on our 2-core test machines (docs/design.md, Budgets). The
 * builtins below are GCC's (since 4.9) and clang's alike, but for the streaming stores:
 * clang's is one generic builtin, GCC's one per instruction. Compiler, not version: tested by
 * __clang_major__, which make cross-check's GCC 8 feature set keeps (it hides __clang__
 * for version tests, tests/scripts/gcc8_features.h). */
#if defined(__x86_64__) || defined(__i386__)
/* v stored as a vector of type to p, through GCC's builtin taking a pointer to pointee */
#if defined(__clang_major__)
#define BNG_X86_STREAM_AS(type, builtin, pointee, p, v) \
    __builtin_nontemporal_store((type)(v), (type *)(void *)(p))
#else
#define BNG_X86_STREAM_AS(type, builtin, pointee, p, v) builtin((pointee *)(void *)(p), (type)(v))
#endif
#endif

/* The hardware conversions (exact, round to nearest even, the same bits), 16 lanes at a
 * time with AVX-512, 8 with F16C; narrower tails keep the bit-level code above. */
#if defined(__x86_64__) && (defined(__AVX512F__) || defined(__F16C__))
#if defined(__AVX512F__)
#define BNG_F16_HW_LANES 16
#else
#define BNG_F16_HW_LANES 8
#endif
typedef float bng_x86_f32 __attribute__((vector_size(4 * BNG_F16_HW_LANES)));
typedef short bng_x86_f16 __attribute__((vector_size(2 * BNG_F16_HW_LANES)));
typedef long long bng_x86_f16_stream __attribute__((vector_size(2 * BNG_F16_HW_LANES)));
#if defined(__AVX512F__)
/* vcvtph2ps (its operand 4, _MM_FROUND_CUR_DIRECTION: no exception suppression, as
 * _mm512_cvtph_ps passes; the conversion is exact), vcvtps2ph (0: to nearest even);
 * every lane, the pass-through operand unread. */
#define BNG_X86_CVTPH_PS(h) \
    __builtin_ia32_vcvtph2ps512_mask((h), (bng_x86_f32){0}, (unsigned short)0xffff, 4)
#define BNG_X86_CVTPS_PH(v) \
    __builtin_ia32_vcvtps2ph512_mask((v), 0, (bng_x86_f16){0}, (unsigned short)0xffff)
#define BNG_X86_STREAM_F16_BUILTIN __builtin_ia32_movntdq256
#else
#define BNG_X86_CVTPH_PS(h) __builtin_ia32_vcvtph2ps256(h)
#define BNG_X86_CVTPS_PH(v) __builtin_ia32_vcvtps2ph256((v), 0)
#define BNG_X86_STREAM_F16_BUILTIN __builtin_ia32_movntdq
#endif
BNG_VEC_FN bng_x86_f32 bng_x86_load_f16(const half *p)
{
    bng_x86_f16 h;
    __builtin_memcpy(&h, p, sizeof h);
    return BNG_X86_CVTPH_PS(h);
}
BNG_VEC_FN void bng_x86_store_f16(half *p, bng_x86_f32 v)
{
    const bng_x86_f16 h = BNG_X86_CVTPS_PH(v);
    __builtin_memcpy(p, &h, sizeof h);
}
/* p aligned to the halves' width */
BNG_VEC_FN void bng_x86_stream_f16(half *p, bng_x86_f32 v)
{
    BNG_X86_STREAM_AS(bng_x86_f16_stream, BNG_X86_STREAM_F16_BUILTIN, bng_x86_f16_stream, p,
                      BNG_X86_CVTPS_PH(v));
}
#else
#define BNG_F16_HW_LANES 0     /* no hardware conversion: every width is bit-level */
#endif

/* A streaming store (x86: written without reading the line into the cache first) of
 * one register-wide vector at a register-aligned address; returns 0 (nothing stored)
 * for any other width, address, or host. */
#if !defined(BNG_X86_STREAM_AS)
/* not x86 (a compiler elsewhere may define __SSE2__ over an emulation): none */
#elif defined(__AVX512F__)
#define BNG_STREAM_PS __builtin_ia32_movntps512
#define BNG_STREAM_BYTES 64
#elif defined(__AVX__)
#define BNG_STREAM_PS __builtin_ia32_movntps256
#define BNG_STREAM_BYTES 32
#elif defined(__SSE2__)
#define BNG_STREAM_PS __builtin_ia32_movntps
#define BNG_STREAM_BYTES 16
#endif
#ifdef BNG_STREAM_PS
typedef float bng_stream_register __attribute__((vector_size(BNG_STREAM_BYTES)));
#endif
BNG_VEC_FN int bng_stream_f32(float *p, const void *v, unsigned long bytes)
{
#ifdef BNG_STREAM_PS
    bng_stream_register w;
    if (bytes != sizeof w || (unsigned long)p % sizeof w != 0)
        return 0;
    __builtin_memcpy(&w, v, sizeof w);
    BNG_X86_STREAM_AS(bng_stream_register, BNG_STREAM_PS, float, p, w);
    return 1;
#else
    (void)p;
    (void)v;
    (void)bytes;
    return 0;
#endif
}


/* A vector wider than the compiler's vector registers: GCC lowers such a generic vector
 * through memory, piece by piece (on AVX2 a 16-lane vector costs ~10x its two ymm
 * halves). Where the widest register is known (x86, AArch64), a wider bng_f32xN is two
 * vectors of N/2 lanes, recursively down to the register's width, and every operation
 * runs on both halves: the same per-lane IEEE operations, so the same bits. Elsewhere
 * (a DSP's GCC, whose vector unit is the target's width) every width is one vector.
 * A build may set BNG_GNU_LANES itself (the tests' GCC 8 build: 64, as on a DSP). */
#if defined(BNG_GNU_LANES)
#elif defined(__AVX512F__)
#define BNG_GNU_LANES 16
#elif defined(__AVX__)
#define BNG_GNU_LANES 8
#elif defined(__SSE2__) || defined(__aarch64__) || defined(__ARM_NEON)
#define BNG_GNU_LANES 4
#else
#define BNG_GNU_LANES 64
#endif
/* Width N is two halves. */
#define BNG_IS_HALVES(N) (N > BNG_GNU_LANES)
/* A vector's lanes as two vectors of half as many, lo its first (the keep bits' folds
 * and packs, bng_vec_gnu_relu.h). */
#define BNG_GNU_SPLIT(v, lo, hi) \
    (__builtin_memcpy(&(lo), &(v), sizeof(lo)), \
     __builtin_memcpy(&(hi), (const char *)&(v) + sizeof(lo), sizeof(hi)))

/* A vector's lanes permuted by constant indices, lane i from lane F(i, a) (the plane
 * sums' fold and the per-channel coefficients' broadcast on a split target's NCHW
 * rows, below): GCC's __builtin_shuffle of an index vector, clang's
 * __builtin_shufflevector of the index list, both an operation on a register. The list
 * is written out for each lane count by BNG_LANE_LIST. Compiler, not version: as
 * BNG_X86_STREAM_AS's test, above. */
#define BNG_LANES_1(F, a, b) F((b), a)
#define BNG_LANES_2(F, a, b) BNG_LANES_1(F, a, b), BNG_LANES_1(F, a, (b) + 1)
#define BNG_LANES_4(F, a, b) BNG_LANES_2(F, a, b), BNG_LANES_2(F, a, (b) + 2)
#define BNG_LANES_8(F, a, b) BNG_LANES_4(F, a, b), BNG_LANES_4(F, a, (b) + 4)
#define BNG_LANES_16(F, a, b) BNG_LANES_8(F, a, b), BNG_LANES_8(F, a, (b) + 8)
#define BNG_LANES_32(F, a, b) BNG_LANES_16(F, a, b), BNG_LANES_16(F, a, (b) + 16)
#define BNG_LANES_64(F, a, b) BNG_LANES_32(F, a, b), BNG_LANES_32(F, a, (b) + 32)
#define BNG_LANE_LIST(n, F, a) BNG_PASTE(BNG_LANES_, n)(F, a, 0)
#if defined(__clang_major__)
#define BNG_PERMUTE(n, index_type, v, F, a) \
    __builtin_shufflevector((v), (v), BNG_LANE_LIST(n, F, a))
#else
#define BNG_PERMUTE(n, index_type, v, F, a) \
    __builtin_shuffle((v), (index_type){BNG_LANE_LIST(n, F, a)})
#endif
/* Lane i's source, in a width's operations (BNG_N lanes): lane i + w, the lanes
 * counted around; lane 0; lane i itself (an index vector's lanes: constants, not a
 * lane loop, which GCC may build on the stack); lane i ^ b; lane (i % w) * (N / w) + i / w,
 * and its inverse. (The last three: the turn of a split target's NCHW keep words, below.) */
#define BNG_LANE_ROTATED(i, w) (((i) + (w)) % BNG_N)
#define BNG_LANE_FIRST(i, a) 0
#define BNG_LANE_SELF(i, a) (i)
#define BNG_LANE_XOR(i, b) ((i) ^ (b))
#define BNG_LANE_UNSPREAD(i, w) ((i) % (w) * (BNG_N / (w)) + (i) / (w))
#define BNG_LANE_SPREAD(i, w) ((i) % (BNG_N / (w)) * (w) + (i) / (BNG_N / (w)))
/* A step of the turn of a split target's NCHW keep words in a register (bng_vec.h,
 * "Keep bits"; bng_vec_gnu_relu.h), at BNG_N lanes of w-bit words. With g = N / w lanes
 * a bit index (BNG_TURN_G: 1 with fewer lanes than w), each step exchanges lane index
 * bit g * b with bit index bit b, for b = 1, 2, ... below both N and w: a lane whose
 * index has g * b clear keeps its bits whose index has b clear (`keep`) and takes its
 * partner's (lane ^ g * b) in the others, shifted up; its partner the other way round.
 * Lane j then holds vector r's bit at r (with fewer lanes than w: at BNG_TURNED_BIT),
 * but with more lanes than w, vector r's lane j lies in lane (j % w) * g + j / w, which
 * one permute more (BNG_LANE_UNSPREAD) puts right. U the words' vector, I its lanes'
 * index type. */
#define BNG_TURN_G(w) (BNG_N > (w) ? BNG_N / (w) : 1)
#define BNG_TURN_STEP(U, I, k, lane, bit, keep)                                            \
    do {                                                                                   \
        const I at_ = {BNG_LANE_LIST(BNG_N, BNG_LANE_SELF, 0)};                            \
        const U low_ = (U)(((at_ & (lane)) - 1) >> (8 * sizeof at_[0] - 1));               \
        const U keep_ = (U){0} + (keep);                                                   \
        const U part_ = BNG_PERMUTE(BNG_N, I, k, BNG_LANE_XOR, lane);                      \
        k = (low_ & ((k & keep_) | (part_ << (bit) & ~keep_)))                             \
            | (~low_ & ((k & ~keep_) | (part_ >> (bit) & keep_)));                         \
    } while (0)

#endif /* BNG_VEC_GNU_H */

/* One width's operations, written out (BNG_N lanes; BNG_H, half of them, for a width
 * made of two halves): bng_vec.h includes this file again for every width and part
 * (BNG_VEC_OPS), so that each operation is a function here, whose lines a debugger
 * steps through. Its names are pasted: BNG_OPN(add) is
 * bng_f32x16_add at 16 lanes. */
#if defined(BNG_VEC_OPS) && BNG_VEC_OPS == BNG_VEC_OPS_F16_MEMORY
typedef unsigned int BNG_TN(bng_u32x) __attribute__((vector_size(4 * BNG_N)));
typedef int BNG_TN(bng_i32x) __attribute__((vector_size(4 * BNG_N)));
typedef unsigned short BNG_TN(bng_u16x) __attribute__((vector_size(2 * BNG_N)));
BNG_VEC_FN BNG_F32XN BNG_OPN(ld_f16)(const half *p)
{
    BNG_TN(bng_u32x) w = {0};
    BNG_F32XN f;
    BNG_LOAD_HALF_BITS(BNG_N, w, p);
    BNG_HALF_BITS_TO_F32(BNG_TN(bng_u32x), BNG_TN(bng_i32x), w, f);
    return f;
}
BNG_VEC_FN void BNG_OPN(st_f16)(half *p, BNG_F32XN v)
{
    BNG_TN(bng_u32x) x, a, h, sub, mask;
    BNG_F32XN af;
    __builtin_memcpy(&x, &v, sizeof x);
    a = x & 0x7fffffffu;
    h = (a - 0x38000000u + 0xfffu + ((a >> 13) & 1u)) >> 13; /* round to even */
    mask = BNG_NEGATIVE(BNG_N, 0x7c00u - h);          /* >= 65520, Inf */
    h = (mask & 0x7c00u) | (~mask & h);
    __builtin_memcpy(&af, &a, sizeof af);
    af = af + 0.5f;                               /* the FPU rounds a subnormal */
    __builtin_memcpy(&sub, &af, sizeof sub);
    mask = BNG_NEGATIVE(BNG_N, a - 0x38800000u);      /* a < 2^-14 */
    h = (mask & (sub - 0x3f000000u)) | (~mask & h);
    mask = BNG_NEGATIVE(BNG_N, 0x7f800000u - a);      /* NaN, quiet */
    h = (mask & (0x7e00u | ((a >> 13) & 0x3ffu))) | (~mask & h);
    h |= (x >> 16) & 0x8000u;
    BNG_STORE_HALF_BITS(BNG_N, p, h);
}
BNG_VEC_FN void BNG_OPN(st_out_f16)(half *p, BNG_F32XN v, int stream)
{
    (void)stream;
    BNG_OPN(st_f16)(p, v);
}
#elif defined(BNG_VEC_OPS) && BNG_VEC_OPS == BNG_VEC_OPS_F16_MEMORY_WIDE
BNG_VEC_FN BNG_F32XN BNG_OPN(ld_f16)(const half *p)
{
    BNG_F32XN f;
    int i;
    for (i = 0; i < BNG_N; i += BNG_F16_HW_LANES) {
        bng_x86_f32 part = bng_x86_load_f16(p + i);
        __builtin_memcpy((float *)(void *)&f + i, &part, sizeof part);
    }
    return f;
}
BNG_VEC_FN void BNG_OPN(st_f16)(half *p, BNG_F32XN v)
{
    int i;
    for (i = 0; i < BNG_N; i += BNG_F16_HW_LANES) {
        bng_x86_f32 part;
        __builtin_memcpy(&part, (const float *)(const void *)&v + i, sizeof part);
        bng_x86_store_f16(p + i, part);
    }
}
BNG_VEC_FN void BNG_OPN(st_out_f16)(half *p, BNG_F32XN v, int stream)
{
    int i;
    if (!stream || (unsigned long)p % (2 * BNG_F16_HW_LANES) != 0) {
        BNG_OPN(st_f16)(p, v);
        return;
    }
    for (i = 0; i < BNG_N; i += BNG_F16_HW_LANES) {
        bng_x86_f32 part;
        __builtin_memcpy(&part, (const float *)(const void *)&v + i, sizeof part);
        bng_x86_stream_f16(p + i, part);
    }
}
#elif defined(BNG_VEC_OPS) && BNG_VEC_OPS == BNG_VEC_OPS_F32_VECTOR
typedef float BNG_F32XN __attribute__((vector_size(4 * BNG_N)));
BNG_VEC_FN void BNG_OPN(st_out_f32)(float *p, BNG_F32XN v, int stream)
{
    if (!stream || !bng_stream_f32(p, &v, sizeof v))
        __builtin_memcpy(p, &v, sizeof v);
}
BNG_VEC_FN BNG_F32XN BNG_OPN(zero)(void)
{
    BNG_F32XN v = {0};
    return v;
}
BNG_VEC_FN BNG_F32XN BNG_OPN(ld_f32)(const float *p)
{
    BNG_F32XN v;
    __builtin_memcpy(&v, p, sizeof v);
    return v;
}
BNG_VEC_FN void BNG_OPN(st_f32)(float *p, BNG_F32XN v)
{
    __builtin_memcpy(p, &v, sizeof v);
}
BNG_VEC_FN BNG_F32XN BNG_OPN(add)(BNG_F32XN a, BNG_F32XN b)
{
    return a + b;
}
BNG_VEC_FN BNG_F32XN BNG_OPN(sub)(BNG_F32XN a, BNG_F32XN b)
{
    return a - b;
}
BNG_VEC_FN BNG_F32XN BNG_OPN(mul)(BNG_F32XN a, BNG_F32XN b)
{
    return a * b;
}
BNG_VEC_FN BNG_F32XN BNG_OPN(div)(BNG_F32XN a, BNG_F32XN b)
{
    return a / b;
}
BNG_VEC_FN BNG_F32XN BNG_OPN(broadcast)(float s)
{
    BNG_F32XN v;
    int i;
    for (i = 0; i < BNG_N; i++)
        v[i] = s;
    return v;
}
/* The operations on a register's lanes that a split target's NCHW rows need (bng_vec.h,
 * "Lanes"): the fold to lane 0, lane 0 to every lane, the first n lanes of one vector
 * and the rest of another, the lanes w above. */
typedef int BNG_TN(bng_lane_index) __attribute__((vector_size(4 * BNG_N)));
typedef unsigned BNG_TN(bng_lane_bits) __attribute__((vector_size(4 * BNG_N)));
#define BNG_FOLD_STEP(w) \
    (v = v + BNG_PERMUTE(BNG_N, BNG_TN(bng_lane_index), v, BNG_LANE_ROTATED, w))
BNG_VEC_FN BNG_F32XN BNG_OPN(fold)(BNG_F32XN v)
{
#if BNG_N > 32
    BNG_FOLD_STEP(32);
#endif
#if BNG_N > 16
    BNG_FOLD_STEP(16);
#endif
#if BNG_N > 8
    BNG_FOLD_STEP(8);
#endif
#if BNG_N > 4
    BNG_FOLD_STEP(4);
#endif
#if BNG_N > 2
    BNG_FOLD_STEP(2);
#endif
#if BNG_N > 1
    BNG_FOLD_STEP(1);
#endif
    return v;
}
#undef BNG_FOLD_STEP
BNG_VEC_FN BNG_F32XN BNG_OPN(splat)(BNG_F32XN v)
{
#if BNG_N > 1
    v = BNG_PERMUTE(BNG_N, BNG_TN(bng_lane_index), v, BNG_LANE_FIRST, 0);
#endif
    return v;
}
BNG_VEC_FN BNG_F32XN BNG_OPN(select_first)(BNG_F32XN a, BNG_F32XN b, unsigned n)
{
    const BNG_TN(bng_lane_index) at = {BNG_LANE_LIST(BNG_N, BNG_LANE_SELF, 0)};
    const BNG_TN(bng_lane_bits) first = (BNG_TN(bng_lane_bits))((at - (int)n) >> 31); /* i < n */
    BNG_TN(bng_lane_bits) bits_a, bits_b;
    __builtin_memcpy(&bits_a, &a, sizeof bits_a);
    __builtin_memcpy(&bits_b, &b, sizeof bits_b);
    bits_a = (bits_a & first) | (bits_b & ~first);
    __builtin_memcpy(&a, &bits_a, sizeof a);
    return a;
}
#define BNG_ABOVE_CASE(w) \
    case w: return BNG_PERMUTE(BNG_N, BNG_TN(bng_lane_index), v, BNG_LANE_ROTATED, w)
BNG_VEC_FN BNG_F32XN BNG_OPN(lanes_above)(BNG_F32XN v, unsigned w)
{
    switch (w) {
#if BNG_N > 32
    BNG_ABOVE_CASE(32);
#endif
#if BNG_N > 16
    BNG_ABOVE_CASE(16);
#endif
#if BNG_N > 8
    BNG_ABOVE_CASE(8);
#endif
#if BNG_N > 4
    BNG_ABOVE_CASE(4);
#endif
#if BNG_N > 2
    BNG_ABOVE_CASE(2);
#endif
#if BNG_N > 1
    BNG_ABOVE_CASE(1);
#endif
    default: return v;
    }
}
#undef BNG_ABOVE_CASE
#elif defined(BNG_VEC_OPS) && BNG_VEC_OPS == BNG_VEC_OPS_F32_HALVES
typedef struct { BNG_F32XH lo, hi; } BNG_F32XN;
BNG_VEC_FN BNG_F32XN BNG_OPN(zero)(void)
{
    BNG_F32XN v;
    v.lo = BNG_OPH(zero)();
    v.hi = BNG_OPH(zero)();
    return v;
}
BNG_VEC_FN BNG_F32XN BNG_OPN(ld_f32)(const float *p)
{
    BNG_F32XN v;
    v.lo = BNG_OPH(ld_f32)(p);
    v.hi = BNG_OPH(ld_f32)(p + BNG_H);
    return v;
}
BNG_VEC_FN void BNG_OPN(st_f32)(float *p, BNG_F32XN v)
{
    BNG_OPH(st_f32)(p, v.lo);
    BNG_OPH(st_f32)(p + BNG_H, v.hi);
}
BNG_VEC_FN void BNG_OPN(st_out_f32)(float *p, BNG_F32XN v, int stream)
{
    BNG_OPH(st_out_f32)(p, v.lo, stream);
    BNG_OPH(st_out_f32)(p + BNG_H, v.hi, stream);
}
BNG_VEC_FN BNG_F32XN BNG_OPN(ld_f16)(const half *p)
{
    BNG_F32XN v;
    v.lo = BNG_OPH(ld_f16)(p);
    v.hi = BNG_OPH(ld_f16)(p + BNG_H);
    return v;
}
BNG_VEC_FN void BNG_OPN(st_f16)(half *p, BNG_F32XN v)
{
    BNG_OPH(st_f16)(p, v.lo);
    BNG_OPH(st_f16)(p + BNG_H, v.hi);
}
BNG_VEC_FN void BNG_OPN(st_out_f16)(half *p, BNG_F32XN v, int stream)
{
    BNG_OPH(st_out_f16)(p, v.lo, stream);
    BNG_OPH(st_out_f16)(p + BNG_H, v.hi, stream);
}
BNG_VEC_FN BNG_F32XN BNG_OPN(add)(BNG_F32XN a, BNG_F32XN b)
{
    a.lo = BNG_OPH(add)(a.lo, b.lo);
    a.hi = BNG_OPH(add)(a.hi, b.hi);
    return a;
}
BNG_VEC_FN BNG_F32XN BNG_OPN(sub)(BNG_F32XN a, BNG_F32XN b)
{
    a.lo = BNG_OPH(sub)(a.lo, b.lo);
    a.hi = BNG_OPH(sub)(a.hi, b.hi);
    return a;
}
BNG_VEC_FN BNG_F32XN BNG_OPN(mul)(BNG_F32XN a, BNG_F32XN b)
{
    a.lo = BNG_OPH(mul)(a.lo, b.lo);
    a.hi = BNG_OPH(mul)(a.hi, b.hi);
    return a;
}
BNG_VEC_FN BNG_F32XN BNG_OPN(div)(BNG_F32XN a, BNG_F32XN b)
{
    a.lo = BNG_OPH(div)(a.lo, b.lo);
    a.hi = BNG_OPH(div)(a.hi, b.hi);
    return a;
}
BNG_VEC_FN BNG_F32XN BNG_OPN(broadcast)(float s)
{
    BNG_F32XN v;
    v.lo = BNG_OPH(broadcast)(s);
    v.hi = BNG_OPH(broadcast)(s);
    return v;
}
/* The first step of the fold adds the halves; the rest folds the first (the second's
 * lanes are the other lanes, unspecified). */
BNG_VEC_FN BNG_F32XN BNG_OPN(fold)(BNG_F32XN v)
{
    v.lo = BNG_OPH(fold)(BNG_OPH(add)(v.lo, v.hi));
    return v;
}
BNG_VEC_FN BNG_F32XN BNG_OPN(splat)(BNG_F32XN v)
{
    v.lo = BNG_OPH(splat)(v.lo);
    v.hi = v.lo;
    return v;
}
BNG_VEC_FN BNG_F32XN BNG_OPN(select_first)(BNG_F32XN a, BNG_F32XN b, unsigned n)
{
    a.lo = BNG_OPH(select_first)(a.lo, b.lo, n);
    a.hi = BNG_OPH(select_first)(a.hi, b.hi, n > BNG_H ? n - BNG_H : 0u);
    return a;
}
/* The lanes below w (at most half of them) are the first half's: its own lanes w above,
 * or the second half. */
BNG_VEC_FN BNG_F32XN BNG_OPN(lanes_above)(BNG_F32XN v, unsigned w)
{
    v.lo = w == BNG_H ? v.hi : BNG_OPH(lanes_above)(v.lo, w);
    return v;
}
#endif
