/* A small float32 vector API for the generated kernels, with two backends.
 *
 *   BNG_VEC_GNU       GCC/clang vector extensions (__attribute__((vector_size))):
 *                     the compiler maps each operation onto the target's vector unit.
 *   BNG_VEC_PORTABLE  plain C99 structs and loops, for any compiler.
 *
 * bng_f32xN holds N float lanes, N in 1, 2, 4, 8, 16, 32, 64. Loads and stores take
 * float or half memory (the _f32 and _f16 suffixes); arithmetic is always float32.
 * Every operation is one IEEE operation per lane, so both backends give identical
 * bits when the compiler does not contract a*b+c into an FMA (-ffp-contract=off).
 * Loads and stores need no alignment.
 */
#ifndef BNG_VEC_H
#define BNG_VEC_H

#include "bng_half.h"

#define BNG_VEC_GNU 1
#define BNG_VEC_PORTABLE 2

#ifndef BNG_VEC_BACKEND
#error "define BNG_VEC_BACKEND as BNG_VEC_GNU or BNG_VEC_PORTABLE"
#endif

#if BNG_VEC_BACKEND == BNG_VEC_GNU

/* A vector function that is not inlined passes its vectors through memory. */
#define BNG_VEC_FN static inline __attribute__((always_inline))

/* Half memory, lane-parallel and branch-free (GCC scalarizes vector conversions of
 * _Float16 on CPUs without half arithmetic). half -> float: move exponent and
 * mantissa into place and multiply by 2^112, exact for subnormals too; Inf and NaN
 * get an all-ones exponent (NaN made quiet). float -> half: round to nearest even on
 * the bits; below the half normal range, adding 0.5f lets the FPU round the
 * subnormal (both need IEEE subnormals, i.e. no flush-to-zero or denormals-are-zero).
 * The results equal bng_f16_bits_to_float and bng_float_to_f16_bits bit for bit. */
#define BNG_F16_MEMORY(N)                                                            \
    typedef unsigned short bng_u16x##N __attribute__((vector_size(2 * N)));          \
    typedef unsigned int bng_u32x##N __attribute__((vector_size(4 * N)));            \
    /* Masks come from sign bits, not vector compares (which GCC splits per lane). */\
    BNG_VEC_FN bng_f32x##N bng_f32x##N##_load_f16(const half *p)                  \
    {                                                                                \
        bng_u16x##N h;                                                               \
        bng_u32x##N w, bits, special, payload;                                       \
        bng_f32x##N f;                                                               \
        __builtin_memcpy(&h, p, sizeof h);                                           \
        w = __builtin_convertvector(h, bng_u32x##N);                                 \
        bits = (w & 0x7fffu) << 13;                                                  \
        __builtin_memcpy(&f, &bits, sizeof f);                                       \
        f = f * 0x1p112f;                                                            \
        __builtin_memcpy(&bits, &f, sizeof f);                                       \
        special = 0u - (((w & 0x7c00u) + 0x400u) >> 15);      /* exponent 31 */      \
        payload = ((w & 0x3ffu) + 0x3ffu) >> 10 << 22;        /* NaN: quiet bit */   \
        bits |= special & (0x7f800000u | payload);                                   \
        bits |= (w & 0x8000u) << 16;                                                 \
        __builtin_memcpy(&f, &bits, sizeof f);                                       \
        return f;                                                                    \
    }                                                                                \
    BNG_VEC_FN void bng_f32x##N##_store_f16(half *p, bng_f32x##N v)               \
    {                                                                                \
        bng_u32x##N x, a, h, sub, below, overflow, nan;                              \
        bng_f32x##N af;                                                              \
        bng_u16x##N out;                                                             \
        __builtin_memcpy(&x, &v, sizeof x);                                          \
        a = x & 0x7fffffffu;                                                         \
        h = (a - 0x38000000u + 0xfffu + ((a >> 13) & 1u)) >> 13;                     \
        __builtin_memcpy(&af, &a, sizeof af);                                        \
        af = af + 0.5f;                                                              \
        __builtin_memcpy(&sub, &af, sizeof sub);                                     \
        sub -= 0x3f000000u;                                                          \
        below = 0u - ((a - 0x38800000u) >> 31);               /* a < 2^-14 */        \
        overflow = 0u - (((a - 0x477ff000u) >> 31) ^ 1u);     /* a >= 65520 */       \
        nan = 0u - ((0x7f800000u - a) >> 31);                 /* a > Inf */          \
        h = (below & sub) | (~below & h);                                            \
        h = (overflow & 0x7c00u) | (~overflow & h);                                  \
        h = (nan & (0x7e00u | ((a >> 13) & 0x3ffu))) | (~nan & h);                   \
        h |= (x >> 16) & 0x8000u;                                                    \
        out = __builtin_convertvector(h, bng_u16x##N);                               \
        __builtin_memcpy(p, &out, sizeof out);                                       \
    }

#if defined(__AVX512F__) && defined(__x86_64__)
/* x86 with AVX-512: the hardware conversions (exact, round to nearest even) for
 * widths of 16 lanes and more; narrower tails keep the bit-level code above. */
#include <immintrin.h>
#define BNG_F16_MEMORY_WIDE(N)                                                       \
    BNG_VEC_FN bng_f32x##N bng_f32x##N##_load_f16(const half *p)                     \
    {                                                                                \
        bng_f32x##N f;                                                               \
        int i;                                                                       \
        for (i = 0; i < N; i += 16) {                                                \
            __m512 part = _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(const void *)(p + i))); \
            __builtin_memcpy((float *)(void *)&f + i, &part, sizeof part);           \
        }                                                                            \
        return f;                                                                    \
    }                                                                                \
    BNG_VEC_FN void bng_f32x##N##_store_f16(half *p, bng_f32x##N v)                  \
    {                                                                                \
        int i;                                                                       \
        for (i = 0; i < N; i += 16) {                                                \
            __m512 part;                                                             \
            __builtin_memcpy(&part, (const float *)(const void *)&v + i, sizeof part); \
            _mm256_storeu_si256((__m256i *)(void *)(p + i),                          \
                                _mm512_cvtps_ph(part, _MM_FROUND_TO_NEAREST_INT));   \
        }                                                                            \
    }
#else
#define BNG_F16_MEMORY_WIDE(N) BNG_F16_MEMORY(N)
#endif

#define BNG_F32_VECTOR(N)                                                            \
    typedef float bng_f32x##N __attribute__((vector_size(4 * N)));                   \
    BNG_VEC_FN bng_f32x##N bng_f32x##N##_zero(void)                               \
    {                                                                                \
        bng_f32x##N v = {0};                                                         \
        return v;                                                                    \
    }                                                                                \
    BNG_VEC_FN bng_f32x##N bng_f32x##N##_load_f32(const float *p)                 \
    {                                                                                \
        bng_f32x##N v;                                                               \
        __builtin_memcpy(&v, p, sizeof v);                                           \
        return v;                                                                    \
    }                                                                                \
    BNG_VEC_FN void bng_f32x##N##_store_f32(float *p, bng_f32x##N v)              \
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
    }

#elif BNG_VEC_BACKEND == BNG_VEC_PORTABLE

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
    static inline bng_f32x##N bng_f32x##N##_load_f32(const float *p)                 \
    {                                                                                \
        bng_f32x##N v;                                                               \
        int i;                                                                       \
        for (i = 0; i < N; i++)                                                      \
            v.lane[i] = p[i];                                                        \
        return v;                                                                    \
    }                                                                                \
    static inline void bng_f32x##N##_store_f32(float *p, bng_f32x##N v)              \
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
    }

#define BNG_F16_MEMORY(N)                                                            \
    static inline bng_f32x##N bng_f32x##N##_load_f16(const half *p)                  \
    {                                                                                \
        bng_f32x##N v;                                                               \
        int i;                                                                       \
        for (i = 0; i < N; i++)                                                      \
            v.lane[i] = bng_half_to_float(p[i]);                                     \
        return v;                                                                    \
    }                                                                                \
    static inline void bng_f32x##N##_store_f16(half *p, bng_f32x##N v)               \
    {                                                                                \
        int i;                                                                       \
        for (i = 0; i < N; i++)                                                      \
            p[i] = bng_half_from_float(v.lane[i]);                                   \
    }
#define BNG_F16_MEMORY_WIDE(N) BNG_F16_MEMORY(N)

#else
#error "BNG_VEC_BACKEND must be BNG_VEC_GNU or BNG_VEC_PORTABLE"
#endif

BNG_F32_VECTOR(1)
BNG_F32_VECTOR(2)
BNG_F32_VECTOR(4)
BNG_F32_VECTOR(8)
BNG_F32_VECTOR(16)
BNG_F32_VECTOR(32)
BNG_F32_VECTOR(64)

BNG_F16_MEMORY(1)
BNG_F16_MEMORY(2)
BNG_F16_MEMORY(4)
BNG_F16_MEMORY(8)
BNG_F16_MEMORY_WIDE(16)
BNG_F16_MEMORY_WIDE(32)
BNG_F16_MEMORY_WIDE(64)

#endif /* BNG_VEC_H */
