/* SPDX-License-Identifier: Apache-2.0 */
/* Copyright 2026 the batchnormgrad authors */
/* Host emulation of the MT-3000 compiler's vector spellings (compiler/m3000.h), as the
 * native backend's defaults use them: lvector, vec_ld, vec_st, vec_svbcast, vec_add,
 * vec_sub, vec_muli, and the / operator on lvector float. Over GCC vectors, one IEEE
 * operation per lane, so the native backend gives the bits of the others. Not for firmware: firmware includes the vendor's
 * header. The host's lvector float holds the target's BNG_F32_LANES floats (the DSP's
 * holds 32) and needs only element alignment.
 *
 * Each spelling does what the public material shows it doing, not what the caller may
 * have hoped: vec_svbcast broadcasts one 64-bit scalar into every 64-bit element of the
 * register (the SVBCAST instruction; VVinstonSmith/BLAS-for-multi-core-DSP
 * sgemm_release_V1.3.2/device_code/sgemm_kernel.c, C_plus_beta, packs an fp32 scalar
 * into both halves of a 64-bit register with SBALE2 before SVBCAST). From C, public code
 * passes a double for an lvector double (ydyhello/studydemo daxpy_mt3000/daxpy_l4.dev.c)
 * and, for an lvector float, a 64-bit integer holding the float's bits in both halves,
 * cast to lvector float (357877200/PolyBenchMT-vec operators/2DCONV/2DConvolution.dev.c:
 * (lvector float)vec_svbcast(0x3F0000003F000000) for 0.5f). So here a float or double
 * argument becomes a double's 64 bits, an integer its own 64 bits, repeated over the
 * register; seen as lvector float, lane 2k holds the low half and lane 2k+1 the high
 * half (a little-endian layout: an assumption; packed-both-halves spellings do not
 * depend on it). vec_svbcast(1.5f) therefore does not give 1.5f in every lane, and a
 * wrong spelling fails tests/c/test_native_spelling.c. The result converts to lvector
 * float with or without a cast (as GCC's -flax-vector-conversions would); whether the
 * target compiler wants the cast is for the firmware team to check.
 *
 * Division: the public material shows no division among the compiler's intrinsics.
 * The compiler is GCC 8.3 based (ydyhello/studydemo
 * BlackScholes_mt3000/libvm_mt_public/README.md) and public code applies GCC's vector
 * operators to lvector float (BlackScholes_mt3000/bsKernel.dev.c there: d1 + d4, d7 -
 * ...); lvector here is a GCC vector, so a / b is GCC's: an IEEE division in every
 * lane, which is what the native default {a} / {b} needs from the target compiler.
 * libvm's vm_fdivf32 and vm_frecf32 (helloSin/libvm_mt_public/include/vector_math.h
 * there) are library functions, not the compiler header's, and are not emulated: a
 * division spelled through a reciprocal would differ in the last bit for some inputs,
 * which tests/c/test_native_spelling.c checks.
 */
#ifndef BNG_HOST_M3000_H
#define BNG_HOST_M3000_H

#ifndef BNG_F32_LANES
#error "include bng_kernels.h first: the emulated lvector float holds BNG_F32_LANES floats"
#endif

#define lvector __attribute__((vector_size(4 * BNG_F32_LANES), aligned(4)))
typedef lvector float bng_host_lvector_float;

static inline bng_host_lvector_float bng_host_vec_ld(int offset, const bng_host_lvector_float *p)
{
    bng_host_lvector_float v;
    __builtin_memcpy(&v, (const char *)p + offset, sizeof v);
    return v;
}

static inline void bng_host_vec_st(bng_host_lvector_float v, int offset, bng_host_lvector_float *p)
{
    __builtin_memcpy((char *)p + offset, &v, sizeof v);
}

static inline unsigned long long bng_host_double_bits(double d)
{
    unsigned long long bits;
    __builtin_memcpy(&bits, &d, sizeof bits);
    return bits;
}

/* bits repeated over the register, 8 bytes at a time (a 1-lane register gets the low
 * half). */
static inline bng_host_lvector_float bng_host_vec_svbcast64(unsigned long long bits)
{
    bng_host_lvector_float v;
    unsigned i;
    for (i = 0; i < sizeof v; i += 8)
        __builtin_memcpy((char *)&v + i, &bits, sizeof v - i < 8 ? sizeof v - i : 8);
    return v;
}

/* A 64-bit scalar argument, as a function taking one would receive it: a float or a
 * double as a double, anything else as an unsigned 64-bit integer. */
#define bng_host_is_floating(s) (__builtin_types_compatible_p(__typeof__(s), float) \
                                 || __builtin_types_compatible_p(__typeof__(s), double))
#define vec_svbcast(s) bng_host_vec_svbcast64(__builtin_choose_expr(bng_host_is_floating(s), \
    bng_host_double_bits((double)(s)), (unsigned long long)(s)))

static inline bng_host_lvector_float vec_add(bng_host_lvector_float a, bng_host_lvector_float b)
{
    return a + b;
}

static inline bng_host_lvector_float vec_sub(bng_host_lvector_float a, bng_host_lvector_float b)
{
    return a - b;
}

static inline bng_host_lvector_float vec_muli(bng_host_lvector_float a, bng_host_lvector_float b)
{
    return a * b;
}

#define vec_ld(offset, p) bng_host_vec_ld((offset), (p))
#define vec_st(v, offset, p) bng_host_vec_st((v), (offset), (p))

#endif
