/* SPDX-License-Identifier: Apache-2.0 */
/* Copyright 2026 the batchnormgrad authors */
/* bng_vec.h's GNU backend: GCC/clang vector extensions (__attribute__((vector_size))),
 * which the compiler maps onto the target's vector unit; on x86 hosts the hardware half
 * conversions and streaming stores. Widths wider than the host's vectors are two halves
 * (BNG_F32_HALVES). Each macro below is instantiated by bng_vec.h for every width. */
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
#define BNG_NEGATIVE(N, x) ((bng_u32x##N)((bng_i32x##N)(x) >> 31))
#if defined(__clang__) || (defined(__GNUC__) && __GNUC__ >= 9)
/* The halves as one vector, widened and narrowed in registers (the lane loop below goes
 * through the stack on x86: 4x slower per element with AVX2). Zero extension and
 * truncation of values below 2^16: the same bits. */
#define BNG_LOAD_HALF_BITS(N, w, p)                                                  \
    do {                                                                             \
        bng_u16x##N bng_raw_;                                                        \
        __builtin_memcpy(&bng_raw_, (p), sizeof bng_raw_);                           \
        (w) = __builtin_convertvector(bng_raw_, bng_u32x##N);                        \
    } while (0)
#define BNG_STORE_HALF_BITS(N, p, h)                                                 \
    do {                                                                             \
        const bng_u16x##N bng_raw_ = __builtin_convertvector((h), bng_u16x##N);      \
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
#endif
#define BNG_F16_MEMORY(N)                                                            \
    typedef unsigned int bng_u32x##N __attribute__((vector_size(4 * N)));            \
    typedef int bng_i32x##N __attribute__((vector_size(4 * N)));                     \
    typedef unsigned short bng_u16x##N __attribute__((vector_size(2 * N)));          \
    BNG_VEC_FN bng_f32x##N bng_f32x##N##_ld_f16(const half *p)                     \
    {                                                                                \
        bng_u32x##N w = {0}, magnitude, bits, subnormal, special;                    \
        bng_f32x##N f;                                                               \
        BNG_LOAD_HALF_BITS(N, w, p);                                                 \
        magnitude = (w & 0x7fffu) << 13;              /* exponent, mantissa in place */ \
        bits = magnitude + 0x38800000u;               /* 2^-14 (1 + m/1024) */       \
        __builtin_memcpy(&f, &bits, sizeof f);                                       \
        f -= 0x1p-14f;                                /* m 2^-24, normal, exact */   \
        __builtin_memcpy(&subnormal, &f, sizeof f);                                  \
        bits = magnitude + 0x38000000u;               /* rebias 15 -> 127 */         \
        special = BNG_NEGATIVE(N, magnitude - 0x00800000u);      /* exponent 0 */    \
        bits = (special & subnormal) | (~special & bits);                            \
        special = BNG_NEGATIVE(N, 0x0f7fffffu - magnitude);      /* exponent 31 */   \
        bits |= special & (0x7f800000u | ((magnitude + 0x003fffffu) & 0x00400000u)); \
        bits |= (w & 0x8000u) << 16;                                                 \
        __builtin_memcpy(&f, &bits, sizeof f);                                       \
        return f;                                                                    \
    }                                                                                \
    BNG_VEC_FN void bng_f32x##N##_st_f16(half *p, bng_f32x##N v)                  \
    {                                                                                \
        bng_u32x##N x, a, h, sub, mask;                                              \
        bng_f32x##N af;                                                              \
        __builtin_memcpy(&x, &v, sizeof x);                                          \
        a = x & 0x7fffffffu;                                                         \
        h = (a - 0x38000000u + 0xfffu + ((a >> 13) & 1u)) >> 13; /* round to even */ \
        mask = BNG_NEGATIVE(N, 0x7c00u - h);          /* >= 65520, Inf */            \
        h = (mask & 0x7c00u) | (~mask & h);                                          \
        __builtin_memcpy(&af, &a, sizeof af);                                        \
        af = af + 0.5f;                               /* the FPU rounds a subnormal */ \
        __builtin_memcpy(&sub, &af, sizeof sub);                                     \
        mask = BNG_NEGATIVE(N, a - 0x38800000u);      /* a < 2^-14 */                \
        h = (mask & (sub - 0x3f000000u)) | (~mask & h);                              \
        mask = BNG_NEGATIVE(N, 0x7f800000u - a);      /* NaN, quiet */               \
        h = (mask & (0x7e00u | ((a >> 13) & 0x3ffu))) | (~mask & h);                 \
        h |= (x >> 16) & 0x8000u;                                                    \
        BNG_STORE_HALF_BITS(N, p, h);                                                \
    }                                                                                \
    BNG_VEC_FN void bng_f32x##N##_st_out_f16(half *p, bng_f32x##N v, int stream)  \
    {                                                                                \
        (void)stream;                                                                \
        bng_f32x##N##_st_f16(p, v);                                               \
    }

#if defined(__x86_64__) && (defined(__AVX512F__) || defined(__F16C__))
/* x86 hosts: the hardware conversions (exact, round to nearest even, the same bits),
 * 16 lanes at a time with AVX-512, 8 with F16C (every x86 since 2012); narrower tails
 * keep the bit-level code above. Intrinsics any GCC since 4.9 has. */
#include <immintrin.h>
#if defined(__AVX512F__)
#define BNG_F16_HW_LANES 16
typedef __m512 bng_x86_f32;
#define BNG_X86_LOAD_F16(p) _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(const void *)(p)))
#define BNG_X86_STORE_F16(p, v) \
    _mm256_storeu_si256((__m256i *)(void *)(p), _mm512_cvtps_ph((v), _MM_FROUND_TO_NEAREST_INT))
#define BNG_X86_STREAM_F16(p, v) \
    _mm256_stream_si256((__m256i *)(void *)(p), _mm512_cvtps_ph((v), _MM_FROUND_TO_NEAREST_INT))
#else
#define BNG_F16_HW_LANES 8
typedef __m256 bng_x86_f32;
#define BNG_X86_LOAD_F16(p) _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)(p)))
#define BNG_X86_STORE_F16(p, v) \
    _mm_storeu_si128((__m128i *)(void *)(p), _mm256_cvtps_ph((v), _MM_FROUND_TO_NEAREST_INT))
#define BNG_X86_STREAM_F16(p, v) \
    _mm_stream_si128((__m128i *)(void *)(p), _mm256_cvtps_ph((v), _MM_FROUND_TO_NEAREST_INT))
#endif
#define BNG_F16_MEMORY_WIDE(N)                                                       \
    BNG_VEC_FN bng_f32x##N bng_f32x##N##_ld_f16(const half *p)                     \
    {                                                                                \
        bng_f32x##N f;                                                               \
        int i;                                                                       \
        for (i = 0; i < N; i += BNG_F16_HW_LANES) {                                 \
            bng_x86_f32 part = BNG_X86_LOAD_F16(p + i);                              \
            __builtin_memcpy((float *)(void *)&f + i, &part, sizeof part);           \
        }                                                                            \
        return f;                                                                    \
    }                                                                                \
    BNG_VEC_FN void bng_f32x##N##_st_f16(half *p, bng_f32x##N v)                  \
    {                                                                                \
        int i;                                                                       \
        for (i = 0; i < N; i += BNG_F16_HW_LANES) {                                 \
            bng_x86_f32 part;                                                        \
            __builtin_memcpy(&part, (const float *)(const void *)&v + i, sizeof part); \
            BNG_X86_STORE_F16(p + i, part);                                          \
        }                                                                            \
    }                                                                                \
    BNG_VEC_FN void bng_f32x##N##_st_out_f16(half *p, bng_f32x##N v, int stream)  \
    {                                                                                \
        int i;                                                                       \
        if (!stream || (unsigned long)p % (2 * BNG_F16_HW_LANES) != 0) {             \
            bng_f32x##N##_st_f16(p, v);                                           \
            return;                                                                  \
        }                                                                            \
        for (i = 0; i < N; i += BNG_F16_HW_LANES) {                                 \
            bng_x86_f32 part;                                                        \
            __builtin_memcpy(&part, (const float *)(const void *)&v + i, sizeof part); \
            BNG_X86_STREAM_F16(p + i, part);                                         \
        }                                                                            \
    }
#else
#define BNG_F16_HW_LANES 0     /* no hardware conversion: every width is bit-level */
#define BNG_F16_MEMORY_WIDE(N) BNG_F16_MEMORY(N)
#endif

/* A streaming store (x86: written without reading the line into the cache first) of
 * one register-wide vector at a register-aligned address; returns 0 (nothing stored)
 * for any other width, address, or host. */
#if defined(__AVX512F__)
#include <immintrin.h>
typedef __m512 bng_stream_register;
#define BNG_STREAM_PS _mm512_stream_ps
#elif defined(__AVX__)
#include <immintrin.h>
typedef __m256 bng_stream_register;
#define BNG_STREAM_PS _mm256_stream_ps
#elif defined(__SSE2__)
#include <immintrin.h>
typedef __m128 bng_stream_register;
#define BNG_STREAM_PS _mm_stream_ps
#endif
BNG_VEC_FN int bng_stream_f32(float *p, const void *v, unsigned long bytes)
{
#ifdef BNG_STREAM_PS
    bng_stream_register w;
    if (bytes != sizeof w || (unsigned long)p % sizeof w != 0)
        return 0;
    __builtin_memcpy(&w, v, sizeof w);
    BNG_STREAM_PS(p, w);
    return 1;
#else
    (void)p;
    (void)v;
    (void)bytes;
    return 0;
#endif
}

#define BNG_F32_VECTOR(N)                                                            \
    typedef float bng_f32x##N __attribute__((vector_size(4 * N)));                   \
    BNG_VEC_FN void bng_f32x##N##_st_out_f32(float *p, bng_f32x##N v, int stream) \
    {                                                                                \
        if (!stream || !bng_stream_f32(p, &v, sizeof v))                             \
            __builtin_memcpy(p, &v, sizeof v);                                       \
    }                                                                                \
    BNG_VEC_FN bng_f32x##N bng_f32x##N##_zero(void)                               \
    {                                                                                \
        bng_f32x##N v = {0};                                                         \
        return v;                                                                    \
    }                                                                                \
    BNG_VEC_FN bng_f32x##N bng_f32x##N##_ld_f32(const float *p)                 \
    {                                                                                \
        bng_f32x##N v;                                                               \
        __builtin_memcpy(&v, p, sizeof v);                                           \
        return v;                                                                    \
    }                                                                                \
    BNG_VEC_FN void bng_f32x##N##_st_f32(float *p, bng_f32x##N v)              \
    {                                                                                \
        __builtin_memcpy(p, &v, sizeof v);                                           \
    }                                                                                \
    BNG_VEC_FN bng_f32x##N bng_f32x##N##_add(bng_f32x##N a, bng_f32x##N b)        \
    {                                                                                \
        return a + b;                                                                \
    }                                                                                \
    BNG_VEC_FN bng_f32x##N bng_f32x##N##_sub(bng_f32x##N a, bng_f32x##N b)        \
    {                                                                                \
        return a - b;                                                                \
    }                                                                                \
    BNG_VEC_FN bng_f32x##N bng_f32x##N##_mul(bng_f32x##N a, bng_f32x##N b)        \
    {                                                                                \
        return a * b;                                                                \
    }                                                                                \
    BNG_VEC_FN bng_f32x##N bng_f32x##N##_div(bng_f32x##N a, bng_f32x##N b)        \
    {                                                                                \
        return a / b;                                                                \
    }                                                                                \
    BNG_VEC_FN bng_f32x##N bng_f32x##N##_broadcast(float s)                       \
    {                                                                                \
        bng_f32x##N v;                                                               \
        int i;                                                                       \
        for (i = 0; i < N; i++)                                                      \
            v[i] = s;                                                                \
        return v;                                                                    \
    }

/* A vector wider than the compiler's vector registers: GCC lowers such a generic vector
 * through memory, piece by piece (on AVX2 a 16-lane vector costs ~10x its two ymm
 * halves). Where the widest register is known (x86, AArch64), a wider bng_f32xN is two
 * vectors of N/2 lanes, recursively down to the register's width, and every operation
 * runs on both halves: the same per-lane IEEE operations, so the same bits. Elsewhere
 * (a DSP's GCC, whose vector unit is the target's width) every width is one vector. */
#if defined(__AVX512F__)
#define BNG_GNU_LANES 16
#elif defined(__AVX__)
#define BNG_GNU_LANES 8
#elif defined(__SSE2__) || defined(__aarch64__) || defined(__ARM_NEON)
#define BNG_GNU_LANES 4
#else
#define BNG_GNU_LANES 64
#endif
#define BNG_F32_HALVES(N, H)                                                         \
    typedef struct { bng_f32x##H lo, hi; } bng_f32x##N;                              \
    BNG_VEC_FN bng_f32x##N bng_f32x##N##_zero(void)                                  \
    {                                                                                \
        bng_f32x##N v;                                                               \
        v.lo = bng_f32x##H##_zero();                                                 \
        v.hi = bng_f32x##H##_zero();                                                 \
        return v;                                                                    \
    }                                                                                \
    BNG_VEC_FN bng_f32x##N bng_f32x##N##_ld_f32(const float *p)                    \
    {                                                                                \
        bng_f32x##N v;                                                               \
        v.lo = bng_f32x##H##_ld_f32(p);                                            \
        v.hi = bng_f32x##H##_ld_f32(p + H);                                        \
        return v;                                                                    \
    }                                                                                \
    BNG_VEC_FN void bng_f32x##N##_st_f32(float *p, bng_f32x##N v)                 \
    {                                                                                \
        bng_f32x##H##_st_f32(p, v.lo);                                            \
        bng_f32x##H##_st_f32(p + H, v.hi);                                        \
    }                                                                                \
    BNG_VEC_FN void bng_f32x##N##_st_out_f32(float *p, bng_f32x##N v, int stream) \
    {                                                                                \
        bng_f32x##H##_st_out_f32(p, v.lo, stream);                                \
        bng_f32x##H##_st_out_f32(p + H, v.hi, stream);                            \
    }                                                                                \
    BNG_VEC_FN bng_f32x##N bng_f32x##N##_ld_f16(const half *p)                     \
    {                                                                                \
        bng_f32x##N v;                                                               \
        v.lo = bng_f32x##H##_ld_f16(p);                                            \
        v.hi = bng_f32x##H##_ld_f16(p + H);                                        \
        return v;                                                                    \
    }                                                                                \
    BNG_VEC_FN void bng_f32x##N##_st_f16(half *p, bng_f32x##N v)                  \
    {                                                                                \
        bng_f32x##H##_st_f16(p, v.lo);                                            \
        bng_f32x##H##_st_f16(p + H, v.hi);                                        \
    }                                                                                \
    BNG_VEC_FN void bng_f32x##N##_st_out_f16(half *p, bng_f32x##N v, int stream)  \
    {                                                                                \
        bng_f32x##H##_st_out_f16(p, v.lo, stream);                                \
        bng_f32x##H##_st_out_f16(p + H, v.hi, stream);                            \
    }                                                                                \
    BNG_VEC_FN bng_f32x##N bng_f32x##N##_add(bng_f32x##N a, bng_f32x##N b)           \
    {                                                                                \
        a.lo = bng_f32x##H##_add(a.lo, b.lo);                                        \
        a.hi = bng_f32x##H##_add(a.hi, b.hi);                                        \
        return a;                                                                    \
    }                                                                                \
    BNG_VEC_FN bng_f32x##N bng_f32x##N##_sub(bng_f32x##N a, bng_f32x##N b)           \
    {                                                                                \
        a.lo = bng_f32x##H##_sub(a.lo, b.lo);                                        \
        a.hi = bng_f32x##H##_sub(a.hi, b.hi);                                        \
        return a;                                                                    \
    }                                                                                \
    BNG_VEC_FN bng_f32x##N bng_f32x##N##_mul(bng_f32x##N a, bng_f32x##N b)           \
    {                                                                                \
        a.lo = bng_f32x##H##_mul(a.lo, b.lo);                                        \
        a.hi = bng_f32x##H##_mul(a.hi, b.hi);                                        \
        return a;                                                                    \
    }                                                                                \
    BNG_VEC_FN bng_f32x##N bng_f32x##N##_div(bng_f32x##N a, bng_f32x##N b)           \
    {                                                                                \
        a.lo = bng_f32x##H##_div(a.lo, b.lo);                                        \
        a.hi = bng_f32x##H##_div(a.hi, b.hi);                                        \
        return a;                                                                    \
    }                                                                                \
    BNG_VEC_FN bng_f32x##N bng_f32x##N##_broadcast(float s)                          \
    {                                                                                \
        bng_f32x##N v;                                                               \
        v.lo = bng_f32x##H##_broadcast(s);                                           \
        v.hi = bng_f32x##H##_broadcast(s);                                           \
        return v;                                                                    \
    }
/* Width N is two halves. */
#define BNG_IS_HALVES(N) (N > BNG_GNU_LANES)
/* dy masked by y (BNG_RELU_KEEPS_V), then converted as _ld_f32 and _ld_f16 convert: a
 * vector of dy's bits and one of y's, at a width the compiler has a register for. */
#define BNG_RELU_VECTOR(N)                                                           \
    typedef unsigned int bng_relu_u32x##N __attribute__((vector_size(4 * N)));       \
    typedef int bng_relu_i32x##N __attribute__((vector_size(4 * N)));                \
    typedef unsigned short bng_relu_u16x##N __attribute__((vector_size(2 * N)));     \
    typedef short bng_relu_i16x##N __attribute__((vector_size(2 * N)));              \
    BNG_VEC_FN bng_f32x##N bng_f32x##N##_ld_relu_f32(const float *dy, const float *y) \
    {                                                                                \
        bng_relu_u32x##N d, m;                                                       \
        bng_f32x##N v;                                                               \
        __builtin_memcpy(&d, dy, sizeof d);                                          \
        __builtin_memcpy(&m, y, sizeof m);                                           \
        d &= BNG_RELU_KEEPS_V(bng_relu_u32x##N, bng_relu_i32x##N, m, 0x7fffffffu,     \
                              0x7f800000u, 31);                                      \
        __builtin_memcpy(&v, &d, sizeof v);                                          \
        return v;                                                                    \
    }                                                                                \
    BNG_VEC_FN bng_f32x##N bng_f32x##N##_ld_relu_f16(const half *dy, const half *y)  \
    {                                                                                \
        bng_relu_u16x##N d, m;                                                       \
        half masked[N];                                                              \
        __builtin_memcpy(&d, dy, sizeof d);                                          \
        __builtin_memcpy(&m, y, sizeof m);                                           \
        d &= BNG_RELU_KEEPS_V(bng_relu_u16x##N, bng_relu_i16x##N, m, 0x7fffu, 0x7c00u, 15); \
        __builtin_memcpy(masked, &d, sizeof d);                                      \
        return bng_f32x##N##_ld_f16(masked);                                         \
    }                                                                                \
    typedef bng_relu_u32x##N bng_keeps##N##_f32;                                     \
    typedef bng_relu_u16x##N bng_keeps##N##_f16;                                     \
    BNG_VEC_FN bng_keeps##N##_f32 bng_keeps##N##_zero_f32(void)                       \
    {                                                                                \
        const bng_keeps##N##_f32 k = {0};                                            \
        return k;                                                                    \
    }                                                                                \
    BNG_VEC_FN bng_keeps##N##_f16 bng_keeps##N##_zero_f16(void)                       \
    {                                                                                \
        const bng_keeps##N##_f16 k = {0};                                            \
        return k;                                                                    \
    }                                                                                \
    BNG_VEC_FN void bng_keeps##N##_st_f32(float *p, bng_keeps##N##_f32 k)            \
    {                                                                                \
        __builtin_memcpy(p, &k, sizeof k);                                           \
    }                                                                                \
    BNG_VEC_FN void bng_keeps##N##_st_f16(half *p, bng_keeps##N##_f16 k)             \
    {                                                                                \
        __builtin_memcpy(p, &k, sizeof k);                                           \
    }                                                                                \
    BNG_VEC_FN bng_f32x##N bng_f32x##N##_ld_relu_mark_f32(const float *dy, const float *y, \
                                                        bng_keeps##N##_f32 *keeps,   \
                                                        unsigned bit)                \
    {                                                                                \
        bng_relu_u32x##N d, m, keep;                                                 \
        bng_f32x##N v;                                                               \
        __builtin_memcpy(&d, dy, sizeof d);                                          \
        __builtin_memcpy(&m, y, sizeof m);                                           \
        keep = BNG_RELU_KEEPS_V(bng_relu_u32x##N, bng_relu_i32x##N, m, 0x7fffffffu,   \
                                0x7f800000u, 31);                                    \
        d &= keep;                                                                   \
        *keeps |= keep & (1u << bit);                                                \
        __builtin_memcpy(&v, &d, sizeof v);                                          \
        return v;                                                                    \
    }                                                                                \
    BNG_VEC_FN bng_f32x##N bng_f32x##N##_ld_relu_mark_f16(const half *dy, const half *y, \
                                                        bng_keeps##N##_f16 *keeps,   \
                                                        unsigned bit)                \
    {                                                                                \
        bng_relu_u16x##N d, m, keep;                                                 \
        half masked[N];                                                              \
        __builtin_memcpy(&d, dy, sizeof d);                                          \
        __builtin_memcpy(&m, y, sizeof m);                                           \
        keep = BNG_RELU_KEEPS_V(bng_relu_u16x##N, bng_relu_i16x##N, m, 0x7fffu, 0x7c00u, 15); \
        d &= keep;                                                                   \
        *keeps |= keep & (unsigned short)(1u << bit);                                \
        __builtin_memcpy(masked, &d, sizeof d);                                      \
        return bng_f32x##N##_ld_f16(masked);                                         \
    }                                                                                \
    BNG_VEC_FN bng_f32x##N bng_f32x##N##_ld_relu_keeps_f32(const float *dy,         \
                                                         const float *keeps, unsigned bit) \
    {                                                                                \
        bng_relu_u32x##N d, k;                                                       \
        bng_f32x##N v;                                                               \
        __builtin_memcpy(&d, dy, sizeof d);                                          \
        __builtin_memcpy(&k, keeps, sizeof k);                                       \
        d &= (bng_relu_u32x##N)((bng_relu_i32x##N)(k << (31 - bit)) >> 31);          \
        __builtin_memcpy(&v, &d, sizeof v);                                          \
        return v;                                                                    \
    }                                                                                \
    BNG_VEC_FN bng_f32x##N bng_f32x##N##_ld_relu_keeps_f16(const half *dy,          \
                                                         const half *keeps, unsigned bit) \
    {                                                                                \
        bng_relu_u16x##N d, k;                                                       \
        half masked[N];                                                              \
        __builtin_memcpy(&d, dy, sizeof d);                                          \
        __builtin_memcpy(&k, keeps, sizeof k);                                       \
        d &= (bng_relu_u16x##N)((bng_relu_i16x##N)(k << (15 - bit)) >> 15);          \
        __builtin_memcpy(masked, &d, sizeof d);                                      \
        return bng_f32x##N##_ld_f16(masked);                                         \
    }
#define BNG_RELU_HALVES(N, H)                                                        \
    BNG_VEC_FN bng_f32x##N bng_f32x##N##_ld_relu_f32(const float *dy, const float *y) \
    {                                                                                \
        bng_f32x##N v;                                                               \
        v.lo = bng_f32x##H##_ld_relu_f32(dy, y);                                     \
        v.hi = bng_f32x##H##_ld_relu_f32(dy + H, y + H);                             \
        return v;                                                                    \
    }                                                                                \
    BNG_VEC_FN bng_f32x##N bng_f32x##N##_ld_relu_f16(const half *dy, const half *y)  \
    {                                                                                \
        bng_f32x##N v;                                                               \
        v.lo = bng_f32x##H##_ld_relu_f16(dy, y);                                     \
        v.hi = bng_f32x##H##_ld_relu_f16(dy + H, y + H);                             \
        return v;                                                                    \
    }                                                                                \
    typedef struct { bng_keeps##H##_f32 lo, hi; } bng_keeps##N##_f32;                \
    typedef struct { bng_keeps##H##_f16 lo, hi; } bng_keeps##N##_f16;                \
    BNG_VEC_FN bng_keeps##N##_f32 bng_keeps##N##_zero_f32(void)                       \
    {                                                                                \
        bng_keeps##N##_f32 k;                                                        \
        k.lo = k.hi = bng_keeps##H##_zero_f32();                                     \
        return k;                                                                    \
    }                                                                                \
    BNG_VEC_FN bng_keeps##N##_f16 bng_keeps##N##_zero_f16(void)                       \
    {                                                                                \
        bng_keeps##N##_f16 k;                                                        \
        k.lo = k.hi = bng_keeps##H##_zero_f16();                                     \
        return k;                                                                    \
    }                                                                                \
    BNG_VEC_FN void bng_keeps##N##_st_f32(float *p, bng_keeps##N##_f32 k)            \
    {                                                                                \
        bng_keeps##H##_st_f32(p, k.lo);                                              \
        bng_keeps##H##_st_f32(p + H, k.hi);                                          \
    }                                                                                \
    BNG_VEC_FN void bng_keeps##N##_st_f16(half *p, bng_keeps##N##_f16 k)             \
    {                                                                                \
        bng_keeps##H##_st_f16(p, k.lo);                                              \
        bng_keeps##H##_st_f16(p + H, k.hi);                                          \
    }                                                                                \
    BNG_VEC_FN bng_f32x##N bng_f32x##N##_ld_relu_mark_f32(const float *dy, const float *y, \
                                                        bng_keeps##N##_f32 *keeps,   \
                                                        unsigned bit)                \
    {                                                                                \
        bng_f32x##N v;                                                               \
        v.lo = bng_f32x##H##_ld_relu_mark_f32(dy, y, &keeps->lo, bit);               \
        v.hi = bng_f32x##H##_ld_relu_mark_f32(dy + H, y + H, &keeps->hi, bit);       \
        return v;                                                                    \
    }                                                                                \
    BNG_VEC_FN bng_f32x##N bng_f32x##N##_ld_relu_mark_f16(const half *dy, const half *y, \
                                                        bng_keeps##N##_f16 *keeps,   \
                                                        unsigned bit)                \
    {                                                                                \
        bng_f32x##N v;                                                               \
        v.lo = bng_f32x##H##_ld_relu_mark_f16(dy, y, &keeps->lo, bit);               \
        v.hi = bng_f32x##H##_ld_relu_mark_f16(dy + H, y + H, &keeps->hi, bit);       \
        return v;                                                                    \
    }                                                                                \
    BNG_VEC_FN bng_f32x##N bng_f32x##N##_ld_relu_keeps_f32(const float *dy,         \
                                                         const float *keeps, unsigned bit) \
    {                                                                                \
        bng_f32x##N v;                                                               \
        v.lo = bng_f32x##H##_ld_relu_keeps_f32(dy, keeps, bit);                      \
        v.hi = bng_f32x##H##_ld_relu_keeps_f32(dy + H, keeps + H, bit);              \
        return v;                                                                    \
    }                                                                                \
    BNG_VEC_FN bng_f32x##N bng_f32x##N##_ld_relu_keeps_f16(const half *dy,          \
                                                         const half *keeps, unsigned bit) \
    {                                                                                \
        bng_f32x##N v;                                                               \
        v.lo = bng_f32x##H##_ld_relu_keeps_f16(dy, keeps, bit);                      \
        v.hi = bng_f32x##H##_ld_relu_keeps_f16(dy + H, keeps + H, bit);              \
        return v;                                                                    \
    }

#endif /* BNG_VEC_GNU_H */
