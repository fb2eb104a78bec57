/* SPDX-License-Identifier: Apache-2.0 */
/* Copyright 2026 the batchnormgrad authors */
/* A small float32 vector API for the generated kernels, with three backends.
 *
 *   BNG_VEC_GNU       GCC/clang vector extensions (__attribute__((vector_size))):
 *                     the compiler maps each operation onto the target's vector unit.
 *   BNG_VEC_PORTABLE  plain C99 structs and loops, for any compiler.
 *   BNG_VEC_NATIVE    the target compiler's own vector type and intrinsics, as
 *                     targets.yaml spells them (the generated bng_native.h), at the
 *                     target's f32 width; plain C99 for the narrower tails.
 *
 * bng_f32xN holds N float lanes, N in 1, 2, 4, 8, 16, 32, 64. Loads and stores take
 * float or half memory (the _f32 and _f16 suffixes); arithmetic is always float32.
 * Every operation is one IEEE operation per lane, so all three backends give identical
 * bits when the compiler does not contract a*b+c into an FMA (-ffp-contract=off).
 * Loads and stores need element alignment only (a float, or a half).
 */
#ifndef BNG_VEC_H
#define BNG_VEC_H

#include <stddef.h>
#include "bng_half.h"

/* The memory-space annotations (bng_driver.h); a user of this header alone gets none. */
#ifndef BNG_VMEM
#define BNG_VMEM
#define BNG_FORCE
#endif

/* Fused ReLU backward (docs/contract.md, "Fused ReLU backward"): the mask is PyTorch's
 * threshold_backward, dy where y > 0 or y is NaN (y <= 0 is false there), else +0
 * whatever dy is. It works on the elements' bits, no floating-point operation: dy passes
 * unchanged (a NaN keeps its payload), the comparison is IEEE's on the stored y on any
 * FPU (a subnormal y > 0 keeps dy under flush-to-zero too), and float and half are the
 * same code. The kernels' masked loads below (_ld_relu) and the driver's steps on
 * staged tiles (include/bng_relu.c) both spell it through these two macros.
 * Whether y's bits (sign_bit the element's top bit, inf Inf's bits) let dy through:
 * neither +0 nor a sign bit with a magnitude up to Inf. 1 or 0. */
#define BNG_RELU_KEEPS(y, sign_bit, inf) \
    ((unsigned)((y) != 0) & ((unsigned)(((y) & (sign_bit)) == 0) | (unsigned)(((y) & ~(sign_bit)) > (inf))))
/* The same lane by lane, in GCC vectors U (unsigned) and S (signed) of y's bits, as all
 * ones or zero (`top` the top bit's index): y > 0, 0 - y negative and y not; or NaN,
 * Inf - |y| negative. Masks from sign bits, as the half conversions below make them. */
#define BNG_RELU_KEEPS_V(U, S, y, magnitude, inf, top) \
    ((U)((((S)(0 - (y)) >> (top)) & ~((S)(y) >> (top))) | ((S)((inf) - ((y) & (magnitude))) >> (top))))

/* Keep bits, so that the second pass of an NHWC _p call need not read y again (8
 * streams of memory traffic become 6 instead of 7): its first pass's masked load also
 * records each element's keep as bit `bit` of an element-sized word, in a register
 * (_ld_relu_mark into a bng_keepsN_f32 or _f16 from _zero, stored by _store), and its
 * second pass masks dy by that bit (_ld_relu_keeps) where the others read y. A word
 * holds the keeps of BNG_KEEP_ROWS(element) consecutive rows, from a row that is a
 * multiple of it, and lies in the last of them (bng_keep_row): in dx, which pass 2
 * overwrites only after it has read them. The mask is the same, so are the bits. */
#define BNG_KEEP_ROWS(element_bytes) (8 * (element_bytes))
/* The row, of `rows` from a multiple of `keep_rows` (a power of two), whose word holds
 * row i's keep bit (i % keep_rows). */
static inline size_t bng_keep_row(size_t i, size_t rows, size_t keep_rows)
{
    const size_t last = i | (keep_rows - 1);
    return last < rows ? last : rows - 1;
}

#define BNG_VEC_GNU 1
#define BNG_VEC_PORTABLE 2
#define BNG_VEC_NATIVE 3

#ifndef BNG_VEC_BACKEND
#error "define BNG_VEC_BACKEND as BNG_VEC_GNU, BNG_VEC_PORTABLE or BNG_VEC_NATIVE"
#endif

/* The GNU backend on a processor known to have no vector unit (RISC-V without the V
 * extension, 32-bit Arm without NEON or MVE, such as a Cortex-M7): GCC lowers each
 * vector operation to one scalar operation per lane, spelled out, so that a fully
 * unrolled kernel file becomes megabytes of code and minutes of compile (mt7004's f16
 * kernels: 6 MB of .text, 109 s and 0.9 GB of compiler memory on rv64gc at -O2). Such a
 * build, a drop compiled for a host-side test or a simulator, takes the portable
 * backend's lane loops instead: the same IEEE operations lane by lane, the same bits,
 * and the kernel file in seconds (6 s, 0.2 MB). A DSP's own compiler, whose vector unit
 * is the target's width, is not among these and keeps the GNU vectors. */
#if BNG_VEC_BACKEND == BNG_VEC_GNU \
    && ((defined(__riscv) && !defined(__riscv_vector)) \
        || (defined(__arm__) && !defined(__ARM_NEON) && !defined(__ARM_FEATURE_MVE)))
#undef BNG_VEC_BACKEND
#define BNG_VEC_BACKEND BNG_VEC_PORTABLE
#endif

#if BNG_VEC_BACKEND == BNG_VEC_GNU

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

#elif BNG_VEC_BACKEND == BNG_VEC_PORTABLE || BNG_VEC_BACKEND == BNG_VEC_NATIVE

#define BNG_F32_VECTOR(N)                                                            \
    typedef struct { float lane[N]; } bng_f32x##N;                                   \
    static inline bng_f32x##N bng_f32x##N##_zero(void)                               \
    {                                                                                \
        bng_f32x##N v;                                                               \
        int i;                                                                       \
        for (i = 0; i < N; i++)                                                      \
            v.lane[i] = 0.0f;                                                        \
        return v;                                                                    \
    }                                                                                \
    static inline bng_f32x##N bng_f32x##N##_ld_f32(const float *p)                 \
    {                                                                                \
        bng_f32x##N v;                                                               \
        int i;                                                                       \
        for (i = 0; i < N; i++)                                                      \
            v.lane[i] = p[i];                                                        \
        return v;                                                                    \
    }                                                                                \
    static inline void bng_f32x##N##_st_f32(float *p, bng_f32x##N v)              \
    {                                                                                \
        int i;                                                                       \
        for (i = 0; i < N; i++)                                                      \
            p[i] = v.lane[i];                                                        \
    }                                                                                \
    static inline bng_f32x##N bng_f32x##N##_add(bng_f32x##N a, bng_f32x##N b)        \
    {                                                                                \
        int i;                                                                       \
        for (i = 0; i < N; i++)                                                      \
            a.lane[i] += b.lane[i];                                                  \
        return a;                                                                    \
    }                                                                                \
    static inline bng_f32x##N bng_f32x##N##_sub(bng_f32x##N a, bng_f32x##N b)        \
    {                                                                                \
        int i;                                                                       \
        for (i = 0; i < N; i++)                                                      \
            a.lane[i] -= b.lane[i];                                                  \
        return a;                                                                    \
    }                                                                                \
    static inline bng_f32x##N bng_f32x##N##_mul(bng_f32x##N a, bng_f32x##N b)        \
    {                                                                                \
        int i;                                                                       \
        for (i = 0; i < N; i++)                                                      \
            a.lane[i] *= b.lane[i];                                                  \
        return a;                                                                    \
    }                                                                                \
    static inline bng_f32x##N bng_f32x##N##_div(bng_f32x##N a, bng_f32x##N b)        \
    {                                                                                \
        int i;                                                                       \
        for (i = 0; i < N; i++)                                                      \
            a.lane[i] /= b.lane[i];                                                  \
        return a;                                                                    \
    }                                                                                \
    static inline bng_f32x##N bng_f32x##N##_broadcast(float s)                       \
    {                                                                                \
        bng_f32x##N v;                                                               \
        int i;                                                                       \
        for (i = 0; i < N; i++)                                                      \
            v.lane[i] = s;                                                           \
        return v;                                                                    \
    }

/* Half memory lane by lane, branch-free: the GNU backend's arithmetic on one lane
 * (see there), so that a compiler can vectorize the loop; the same bits as
 * bng_half.h's conversions. Masks come from sign bits (0 - (x >> 31)), which every
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

#define BNG_F16_MEMORY(N)                                                            \
    static inline bng_f32x##N bng_f32x##N##_ld_f16(const half *p)                  \
    {                                                                                \
        bng_f32x##N v;                                                               \
        int i;                                                                       \
        for (i = 0; i < N; i++) {        /* memcpy: half may be _Float16 */          \
            uint16_t lane;                                                           \
            memcpy(&lane, p + i, 2);                                                 \
            v.lane[i] = bng_half_lane_to_float(lane);                                \
        }                                                                            \
        return v;                                                                    \
    }                                                                                \
    static inline void bng_f32x##N##_st_f16(half *p, bng_f32x##N v)               \
    {                                                                                \
        int i;                                                                       \
        for (i = 0; i < N; i++) {                                                    \
            const uint16_t lane = (uint16_t)bng_float_lane_to_half(v.lane[i]);       \
            memcpy(p + i, &lane, 2);                                                 \
        }                                                                            \
    }
#define BNG_F16_MEMORY_WIDE(N) BNG_F16_MEMORY(N)
#define BNG_F16_HW_LANES 0
/* dy masked by y lane by lane (BNG_RELU_KEEPS) into an array, which the width's own
 * load then reads (a native width's too: the vendor spellings need no bit operation).
 * The array is on the stack, which a vector load reaches on a unified target only: the
 * generator refuses relu on a split one. */
#define BNG_RELU_VECTOR(N)                                                           \
    static inline bng_f32x##N bng_f32x##N##_ld_relu_f32(const float *dy, const float *y) \
    {                                                                                \
        float masked[N];                                                             \
        int i;                                                                       \
        for (i = 0; i < N; i++) {                                                    \
            uint32_t d, m;                                                           \
            memcpy(&d, dy + i, 4);                                                   \
            memcpy(&m, y + i, 4);                                                    \
            d &= 0u - BNG_RELU_KEEPS(m, 0x80000000u, 0x7f800000u);                   \
            memcpy(masked + i, &d, 4);                                               \
        }                                                                            \
        return bng_f32x##N##_ld_f32(masked);                                         \
    }                                                                                \
    static inline bng_f32x##N bng_f32x##N##_ld_relu_f16(const half *dy, const half *y) \
    {                                                                                \
        half masked[N];                                                              \
        int i;                                                                       \
        for (i = 0; i < N; i++) {                                                    \
            uint16_t d, m;                                                           \
            memcpy(&d, dy + i, 2);                                                   \
            memcpy(&m, y + i, 2);                                                    \
            d = (uint16_t)(d & (0u - BNG_RELU_KEEPS((unsigned)m, 0x8000u, 0x7c00u))); \
            memcpy(masked + i, &d, 2);                                               \
        }                                                                            \
        return bng_f32x##N##_ld_f16(masked);                                         \
    }                                                                                \
    typedef struct { uint32_t lane[N]; } bng_keeps##N##_f32;                        \
    typedef struct { uint16_t lane[N]; } bng_keeps##N##_f16;                        \
    static inline bng_keeps##N##_f32 bng_keeps##N##_zero_f32(void)                   \
    {                                                                                \
        bng_keeps##N##_f32 k;                                                        \
        int i;                                                                       \
        for (i = 0; i < N; i++)                                                      \
            k.lane[i] = 0;                                                           \
        return k;                                                                    \
    }                                                                                \
    static inline bng_keeps##N##_f16 bng_keeps##N##_zero_f16(void)                   \
    {                                                                                \
        bng_keeps##N##_f16 k;                                                        \
        int i;                                                                       \
        for (i = 0; i < N; i++)                                                      \
            k.lane[i] = 0;                                                           \
        return k;                                                                    \
    }                                                                                \
    static inline void bng_keeps##N##_st_f32(float *p, bng_keeps##N##_f32 k)        \
    {                                                                                \
        memcpy(p, k.lane, sizeof k.lane);                                            \
    }                                                                                \
    static inline void bng_keeps##N##_st_f16(half *p, bng_keeps##N##_f16 k)         \
    {                                                                                \
        memcpy(p, k.lane, sizeof k.lane);                                            \
    }                                                                                \
    static inline bng_f32x##N bng_f32x##N##_ld_relu_mark_f32(const float *dy, const float *y, \
                                                           bng_keeps##N##_f32 *keeps, \
                                                           unsigned bit)             \
    {                                                                                \
        float masked[N];                                                             \
        int i;                                                                       \
        for (i = 0; i < N; i++) {                                                    \
            uint32_t d, m, keep;                                                     \
            memcpy(&d, dy + i, 4);                                                   \
            memcpy(&m, y + i, 4);                                                    \
            keep = BNG_RELU_KEEPS(m, 0x80000000u, 0x7f800000u);                      \
            d &= 0u - keep;                                                          \
            keeps->lane[i] |= keep << bit;                                           \
            memcpy(masked + i, &d, 4);                                               \
        }                                                                            \
        return bng_f32x##N##_ld_f32(masked);                                         \
    }                                                                                \
    static inline bng_f32x##N bng_f32x##N##_ld_relu_mark_f16(const half *dy, const half *y, \
                                                           bng_keeps##N##_f16 *keeps, \
                                                           unsigned bit)             \
    {                                                                                \
        half masked[N];                                                              \
        int i;                                                                       \
        for (i = 0; i < N; i++) {                                                    \
            uint16_t d, m;                                                           \
            unsigned keep;                                                           \
            memcpy(&d, dy + i, 2);                                                   \
            memcpy(&m, y + i, 2);                                                    \
            keep = BNG_RELU_KEEPS((unsigned)m, 0x8000u, 0x7c00u);                    \
            d = (uint16_t)(d & (0u - keep));                                         \
            keeps->lane[i] = (uint16_t)(keeps->lane[i] | (keep << bit));             \
            memcpy(masked + i, &d, 2);                                               \
        }                                                                            \
        return bng_f32x##N##_ld_f16(masked);                                         \
    }                                                                                \
    static inline bng_f32x##N bng_f32x##N##_ld_relu_keeps_f32(const float *dy,      \
                                                            const float *keeps, unsigned bit) \
    {                                                                                \
        float masked[N];                                                             \
        int i;                                                                       \
        for (i = 0; i < N; i++) {                                                    \
            uint32_t d, k;                                                           \
            memcpy(&d, dy + i, 4);                                                   \
            memcpy(&k, keeps + i, 4);                                                \
            d &= 0u - ((k >> bit) & 1u);                                             \
            memcpy(masked + i, &d, 4);                                               \
        }                                                                            \
        return bng_f32x##N##_ld_f32(masked);                                         \
    }                                                                                \
    static inline bng_f32x##N bng_f32x##N##_ld_relu_keeps_f16(const half *dy,       \
                                                            const half *keeps, unsigned bit) \
    {                                                                                \
        half masked[N];                                                              \
        int i;                                                                       \
        for (i = 0; i < N; i++) {                                                    \
            uint16_t d, k;                                                           \
            memcpy(&d, dy + i, 2);                                                   \
            memcpy(&k, keeps + i, 2);                                                \
            d = (uint16_t)(d & (0u - (((unsigned)k >> bit) & 1u)));                  \
            memcpy(masked + i, &d, 2);                                               \
        }                                                                            \
        return bng_f32x##N##_ld_f16(masked);                                         \
    }

#else
#error "BNG_VEC_BACKEND must be BNG_VEC_GNU, BNG_VEC_PORTABLE or BNG_VEC_NATIVE"
#endif

#if BNG_VEC_BACKEND == BNG_VEC_NATIVE
/* The target's own vector type at BNG_F32_LANES (bng_kernels.h) lanes, through the
 * spellings of bng_native.h; half memory through its half spellings when targets.yaml
 * gives them, else lane by lane (bng_half_lane_to_float above). Loads and stores are handed
 * element-aligned pointers: the spelled load must accept them. _div and _broadcast serve
 * the split driver's per-channel steps (include/bng_steps.c bng_step_finalize: a broadcast
 * batch count divides each sum); tests/c/test_native_spelling.c checks both spellings
 * for any float. */
#include "bng_native.h"
#define BNG_NATIVE_LANES BNG_F32_LANES
#ifdef BNG_NATIVE_HALF_LOAD
#define BNG_NATIVE_LOAD_F16(p) BNG_NATIVE_HALF_LOAD(p)
#else
static inline bng_native_f32 bng_native_load_f16(const half *p)
{
    float lanes[BNG_NATIVE_LANES];
    int i;
    for (i = 0; i < BNG_NATIVE_LANES; i++) {
        uint16_t lane;
        memcpy(&lane, p + i, 2);
        lanes[i] = bng_half_lane_to_float(lane);
    }
    return BNG_NATIVE_LOAD(lanes);
}
#define BNG_NATIVE_LOAD_F16(p) bng_native_load_f16(p)
#endif
#ifdef BNG_NATIVE_HALF_STORE
#define BNG_NATIVE_STORE_F16(p, v) BNG_NATIVE_HALF_STORE(p, v)
#else
static inline void bng_native_store_f16(half *p, bng_native_f32 v)
{
    float lanes[BNG_NATIVE_LANES];
    int i;
    BNG_NATIVE_STORE(lanes, v);
    for (i = 0; i < BNG_NATIVE_LANES; i++) {
        const uint16_t lane = (uint16_t)bng_float_lane_to_half(lanes[i]);
        memcpy(p + i, &lane, 2);
    }
}
#define BNG_NATIVE_STORE_F16(p, v) bng_native_store_f16(p, v)
#endif
#define BNG_NATIVE_VECTOR(N)                                                         \
    typedef bng_native_f32 bng_f32x##N;                                              \
    static inline bng_f32x##N bng_f32x##N##_zero(void) { return BNG_NATIVE_BROADCAST(0.0f); } \
    static inline bng_f32x##N bng_f32x##N##_ld_f32(const float *p) { return BNG_NATIVE_LOAD(p); } \
    static inline void bng_f32x##N##_st_f32(float *p, bng_f32x##N v) { BNG_NATIVE_STORE(p, v); } \
    static inline bng_f32x##N bng_f32x##N##_add(bng_f32x##N a, bng_f32x##N b) { return BNG_NATIVE_ADD(a, b); } \
    static inline bng_f32x##N bng_f32x##N##_sub(bng_f32x##N a, bng_f32x##N b) { return BNG_NATIVE_SUB(a, b); } \
    static inline bng_f32x##N bng_f32x##N##_mul(bng_f32x##N a, bng_f32x##N b) { return BNG_NATIVE_MUL(a, b); } \
    static inline bng_f32x##N bng_f32x##N##_div(bng_f32x##N a, bng_f32x##N b) { return BNG_NATIVE_DIV(a, b); } \
    static inline bng_f32x##N bng_f32x##N##_broadcast(float s) { return BNG_NATIVE_BROADCAST(s); } \
    static inline bng_f32x##N bng_f32x##N##_ld_f16(const half *p) { return BNG_NATIVE_LOAD_F16(p); } \
    static inline void bng_f32x##N##_st_f16(half *p, bng_f32x##N v) { BNG_NATIVE_STORE_F16(p, v); }
/* A width is native when it is the target's f32 width. */
#define BNG_IS_NATIVE(N) (BNG_NATIVE_LANES == N)
#else
#define BNG_IS_NATIVE(N) 0
#endif
#if BNG_VEC_BACKEND != BNG_VEC_GNU
#define BNG_IS_HALVES(N) 0
#endif

#if BNG_IS_NATIVE(1)
BNG_NATIVE_VECTOR(1)
#else
BNG_F32_VECTOR(1)
BNG_F16_MEMORY(1)
#endif
#if BNG_IS_NATIVE(2)
BNG_NATIVE_VECTOR(2)
#else
BNG_F32_VECTOR(2)
BNG_F16_MEMORY(2)
#endif
#if BNG_IS_NATIVE(4)
BNG_NATIVE_VECTOR(4)
#else
BNG_F32_VECTOR(4)
BNG_F16_MEMORY(4)
#endif
#if BNG_IS_NATIVE(8)
BNG_NATIVE_VECTOR(8)
#elif BNG_IS_HALVES(8)
BNG_F32_HALVES(8, 4)
#else
BNG_F32_VECTOR(8)
#if BNG_F16_HW_LANES && BNG_F16_HW_LANES <= 8
BNG_F16_MEMORY_WIDE(8)
#else
BNG_F16_MEMORY(8)
#endif
#endif
#if BNG_IS_NATIVE(16)
BNG_NATIVE_VECTOR(16)
#elif BNG_IS_HALVES(16)
BNG_F32_HALVES(16, 8)
#else
BNG_F32_VECTOR(16)
#if BNG_F16_HW_LANES && BNG_F16_HW_LANES <= 16
BNG_F16_MEMORY_WIDE(16)
#else
BNG_F16_MEMORY(16)
#endif
#endif
#if BNG_IS_NATIVE(32)
BNG_NATIVE_VECTOR(32)
#elif BNG_IS_HALVES(32)
BNG_F32_HALVES(32, 16)
#else
BNG_F32_VECTOR(32)
BNG_F16_MEMORY_WIDE(32)
#endif
#if BNG_IS_NATIVE(64)
BNG_NATIVE_VECTOR(64)
#elif BNG_IS_HALVES(64)
BNG_F32_HALVES(64, 32)
#else
BNG_F32_VECTOR(64)
BNG_F16_MEMORY_WIDE(64)
#endif

/* The masked loads at every width: two halves where the width is (GNU, wide). */
BNG_RELU_VECTOR(1)
BNG_RELU_VECTOR(2)
BNG_RELU_VECTOR(4)
#if BNG_IS_HALVES(8)
BNG_RELU_HALVES(8, 4)
#else
BNG_RELU_VECTOR(8)
#endif
#if BNG_IS_HALVES(16)
BNG_RELU_HALVES(16, 8)
#else
BNG_RELU_VECTOR(16)
#endif
#if BNG_IS_HALVES(32)
BNG_RELU_HALVES(32, 16)
#else
BNG_RELU_VECTOR(32)
#endif
#if BNG_IS_HALVES(64)
BNG_RELU_HALVES(64, 32)
#else
BNG_RELU_VECTOR(64)
#endif

/* Output stores (dx): with stream != 0 the caller asks for streaming stores because the
 * output is larger than the caches; the GNU backend gives them on x86 hosts (above),
 * every other backend stores plainly (a DSP has no cache to bypass). */
#if BNG_VEC_BACKEND == BNG_VEC_GNU
#define BNG_STORE_OUT(N)
#else
#define BNG_STORE_OUT(N)                                                             \
    static inline void bng_f32x##N##_st_out_f32(float *p, bng_f32x##N v, int stream) \
    {                                                                                \
        (void)stream;                                                                \
        bng_f32x##N##_st_f32(p, v);                                               \
    }                                                                                \
    static inline void bng_f32x##N##_st_out_f16(half *p, bng_f32x##N v, int stream) \
    {                                                                                \
        (void)stream;                                                                \
        bng_f32x##N##_st_f16(p, v);                                               \
    }
#endif
BNG_STORE_OUT(1)
BNG_STORE_OUT(2)
BNG_STORE_OUT(4)
BNG_STORE_OUT(8)
BNG_STORE_OUT(16)
BNG_STORE_OUT(32)
BNG_STORE_OUT(64)

/* Streaming stores are weakly ordered: a dx ukernel ends with this, so that its stores
 * are visible to every core before anything stored after it. */
#if BNG_VEC_BACKEND == BNG_VEC_GNU && defined(__SSE2__)
static inline void bng_store_out_end(int stream)
{
    if (stream)
        _mm_sfence();
}
#else
static inline void bng_store_out_end(int stream)
{
    (void)stream;
}
#endif

/* Memory spaces (docs/contract.md, "Memory spaces"). The kernels' loads and stores take
 * pointers into vector memory, BNG_VMEM (bng_driver.h: empty for compilers; under
 * sparse, on a split target, a noderef address space, so that scalar code cannot
 * dereference vector memory and a pointer into scalar memory cannot reach a vector
 * load). Here, in one place, each access drops the space with a BNG_FORCE cast and
 * goes to the backend's load or store above (_ld, _st); inlined, they are the same
 * code. */
#if BNG_VEC_BACKEND == BNG_VEC_GNU
#define BNG_VMEM_FN BNG_VEC_FN
#else
#define BNG_VMEM_FN static inline
#endif
#define BNG_VMEM_ACCESS(N)                                                           \
    BNG_VMEM_FN bng_f32x##N bng_f32x##N##_load_f32(const BNG_VMEM float *p)          \
    {                                                                                \
        return bng_f32x##N##_ld_f32((const BNG_FORCE float *)p);                     \
    }                                                                                \
    BNG_VMEM_FN void bng_f32x##N##_store_f32(BNG_VMEM float *p, bng_f32x##N v)       \
    {                                                                                \
        bng_f32x##N##_st_f32((BNG_FORCE float *)p, v);                               \
    }                                                                                \
    BNG_VMEM_FN void bng_f32x##N##_store_out_f32(BNG_VMEM float *p, bng_f32x##N v,   \
                                                 int stream)                         \
    {                                                                                \
        bng_f32x##N##_st_out_f32((BNG_FORCE float *)p, v, stream);                   \
    }                                                                                \
    BNG_VMEM_FN bng_f32x##N bng_f32x##N##_load_f16(const BNG_VMEM half *p)           \
    {                                                                                \
        return bng_f32x##N##_ld_f16((const BNG_FORCE half *)p);                      \
    }                                                                                \
    BNG_VMEM_FN void bng_f32x##N##_store_f16(BNG_VMEM half *p, bng_f32x##N v)        \
    {                                                                                \
        bng_f32x##N##_st_f16((BNG_FORCE half *)p, v);                                \
    }                                                                                \
    BNG_VMEM_FN void bng_f32x##N##_store_out_f16(BNG_VMEM half *p, bng_f32x##N v,    \
                                                 int stream)                         \
    {                                                                                \
        bng_f32x##N##_st_out_f16((BNG_FORCE half *)p, v, stream);                    \
    }                                                                                \
    BNG_VMEM_FN bng_f32x##N bng_f32x##N##_load_relu_f32(const BNG_VMEM float *dy,    \
                                                        const BNG_VMEM float *y)     \
    {                                                                                \
        return bng_f32x##N##_ld_relu_f32((const BNG_FORCE float *)dy,                \
                                         (const BNG_FORCE float *)y);                \
    }                                                                                \
    BNG_VMEM_FN bng_f32x##N bng_f32x##N##_load_relu_f16(const BNG_VMEM half *dy,     \
                                                        const BNG_VMEM half *y)      \
    {                                                                                \
        return bng_f32x##N##_ld_relu_f16((const BNG_FORCE half *)dy,                 \
                                          (const BNG_FORCE half *)y);                 \
    }                                                                                \
    BNG_VMEM_FN bng_f32x##N bng_f32x##N##_load_relu_mark_f32(                        \
        const BNG_VMEM float *dy, const BNG_VMEM float *y, bng_keeps##N##_f32 *keeps, unsigned bit) \
    {                                                                                \
        return bng_f32x##N##_ld_relu_mark_f32((const BNG_FORCE float *)dy,           \
                                              (const BNG_FORCE float *)y, keeps, bit); \
    }                                                                                \
    BNG_VMEM_FN bng_f32x##N bng_f32x##N##_load_relu_mark_f16(                        \
        const BNG_VMEM half *dy, const BNG_VMEM half *y, bng_keeps##N##_f16 *keeps, unsigned bit) \
    {                                                                                \
        return bng_f32x##N##_ld_relu_mark_f16((const BNG_FORCE half *)dy,            \
                                              (const BNG_FORCE half *)y, keeps, bit); \
    }                                                                                \
    BNG_VMEM_FN void bng_keeps##N##_store_f32(BNG_VMEM float *p, bng_keeps##N##_f32 k) \
    {                                                                                \
        bng_keeps##N##_st_f32((BNG_FORCE float *)p, k);                              \
    }                                                                                \
    BNG_VMEM_FN void bng_keeps##N##_store_f16(BNG_VMEM half *p, bng_keeps##N##_f16 k) \
    {                                                                                \
        bng_keeps##N##_st_f16((BNG_FORCE half *)p, k);                               \
    }                                                                                \
    BNG_VMEM_FN bng_f32x##N bng_f32x##N##_load_relu_keeps_f32(                       \
        const BNG_VMEM float *dy, const BNG_VMEM float *keeps, unsigned bit)         \
    {                                                                                \
        return bng_f32x##N##_ld_relu_keeps_f32((const BNG_FORCE float *)dy,          \
                                               (const BNG_FORCE float *)keeps, bit); \
    }                                                                                \
    BNG_VMEM_FN bng_f32x##N bng_f32x##N##_load_relu_keeps_f16(                       \
        const BNG_VMEM half *dy, const BNG_VMEM half *keeps, unsigned bit)           \
    {                                                                                \
        return bng_f32x##N##_ld_relu_keeps_f16((const BNG_FORCE half *)dy,           \
                                               (const BNG_FORCE half *)keeps, bit);  \
    }
BNG_VMEM_ACCESS(1)
BNG_VMEM_ACCESS(2)
BNG_VMEM_ACCESS(4)
BNG_VMEM_ACCESS(8)
BNG_VMEM_ACCESS(16)
BNG_VMEM_ACCESS(32)
BNG_VMEM_ACCESS(64)

#endif /* BNG_VEC_H */
