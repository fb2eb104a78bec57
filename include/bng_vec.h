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

#if BNG_HALF_NATIVE
#define BNG_F16_MEMORY(N)                                                            \
    __extension__ typedef _Float16 bng_f16x##N __attribute__((vector_size(2 * N)));             \
    static inline bng_f32x##N bng_f32x##N##_load_f16(const half *p)                  \
    {                                                                                \
        bng_f16x##N h;                                                               \
        __builtin_memcpy(&h, p, sizeof h);                                           \
        return __builtin_convertvector(h, bng_f32x##N);                              \
    }                                                                                \
    static inline void bng_f32x##N##_store_f16(half *p, bng_f32x##N v)               \
    {                                                                                \
        bng_f16x##N h = __builtin_convertvector(v, bng_f16x##N);                     \
        __builtin_memcpy(p, &h, sizeof h);                                           \
    }
#else
#define BNG_F16_MEMORY(N)                                                            \
    static inline bng_f32x##N bng_f32x##N##_load_f16(const half *p)                  \
    {                                                                                \
        bng_f32x##N v;                                                               \
        int i;                                                                       \
        for (i = 0; i < N; i++)                                                      \
            v[i] = bng_half_to_float(p[i]);                                          \
        return v;                                                                    \
    }                                                                                \
    static inline void bng_f32x##N##_store_f16(half *p, bng_f32x##N v)               \
    {                                                                                \
        int i;                                                                       \
        for (i = 0; i < N; i++)                                                      \
            p[i] = bng_half_from_float(v[i]);                                        \
    }
#endif

#define BNG_F32_VECTOR(N)                                                            \
    typedef float bng_f32x##N __attribute__((vector_size(4 * N)));                   \
    static inline bng_f32x##N bng_f32x##N##_zero(void)                               \
    {                                                                                \
        bng_f32x##N v = {0};                                                         \
        return v;                                                                    \
    }                                                                                \
    static inline bng_f32x##N bng_f32x##N##_load_f32(const float *p)                 \
    {                                                                                \
        bng_f32x##N v;                                                               \
        __builtin_memcpy(&v, p, sizeof v);                                           \
        return v;                                                                    \
    }                                                                                \
    static inline void bng_f32x##N##_store_f32(float *p, bng_f32x##N v)              \
    {                                                                                \
        __builtin_memcpy(p, &v, sizeof v);                                           \
    }                                                                                \
    static inline bng_f32x##N bng_f32x##N##_add(bng_f32x##N a, bng_f32x##N b)        \
    {                                                                                \
        return a + b;                                                                \
    }                                                                                \
    static inline bng_f32x##N bng_f32x##N##_sub(bng_f32x##N a, bng_f32x##N b)        \
    {                                                                                \
        return a - b;                                                                \
    }                                                                                \
    static inline bng_f32x##N bng_f32x##N##_mul(bng_f32x##N a, bng_f32x##N b)        \
    {                                                                                \
        return a * b;                                                                \
    }                                                                                \
    BNG_F16_MEMORY(N)

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

#endif /* BNG_VEC_H */
