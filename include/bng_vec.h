/* SPDX-License-Identifier: Apache-2.0 */
/* Copyright 2026 the batchnormgrad authors */
/* A small float32 vector API for the generated kernels, with three backends, each in
 * a file of its own that only this header includes:
 *
 *   BNG_VEC_GNU       bng_vec_gnu.h: GCC/clang vector extensions
 *                     (__attribute__((vector_size))): the compiler maps each operation
 *                     onto the target's vector unit.
 *   BNG_VEC_PORTABLE  bng_vec_portable.h: plain C99 structs and loops, for any compiler.
 *   BNG_VEC_NATIVE    bng_vec_native.h: the target compiler's own vector type and
 *                     intrinsics, as targets.yaml spells them (the generated
 *                     bng_native.h), at the target's f32 width; the portable backend's
 *                     plain C99 for the narrower tails.
 *
 * This header holds what the backends share: the choice of backend, the ReLU mask's
 * bits, and the instantiation of every width with the memory-space accessors.
 *
 * bng_f32xN holds N float lanes, N in 1, 2, 4, 8, 16, 32, 64. Loads and stores take
 * float or half memory (the _f32 and _f16 suffixes); arithmetic is always float32.
 * Every operation is one IEEE operation per lane, so all three backends give identical
 * bits when the compiler does not contract a*b+c into an FMA (-ffp-contract=off).
 * Loads and stores need element alignment only (a float, or a half).
 *
 * Lanes (a split target's NCHW rows, whose plane sums and per-channel values stay in
 * vector memory): _fold leaves in lane 0 the lanes added pairwise, halving (lane i +=
 * lane i + N/2 for i < N/2, then the same on the first N/2, ..., down to lane 0: the
 * order of a unified target's scalar fold), its other lanes unspecified; _splat gives
 * every lane lane 0's value; _select_first(a, b, n) gives a's first n lanes and b's
 * others, bit for bit; _lanes_above(v, w), w a power of two below N, gives lane i < w
 * lane i + w's value (the forward's NCHW lane statistics merged pairwise, halving), its
 * other lanes unspecified. The GNU backend permutes the register's lanes (bng_vec_gnu.h,
 * BNG_PERMUTE) and selects on their bits; the portable one loops over them. The native
 * backend spells none of them: a split target's NCHW needs the GNU backend.
 */
#ifndef BNG_VEC_H
#define BNG_VEC_H

#include <stddef.h>
#include "bng_f16.h"

/* The memory-space annotations, the dx store modes (BNG_STORE_*) and the keep words'
 * rows (BNG_KEEP_ROWS): the layer under the kernels and the driver, whose rooms that
 * compute no vector use them without this header. */
#include "bng_ukernel.h"

/* Fused ReLU backward (docs/contract.md, "Fused ReLU backward"): the mask is PyTorch's
 * threshold_backward, dy where y > 0 or y is NaN (y <= 0 is false there), else +0
 * whatever dy is. It works on the elements' bits, no floating-point operation: dy passes
 * unchanged (a NaN keeps its payload), the comparison is IEEE's on the stored y on any
 * FPU (a subnormal y > 0 keeps dy under flush-to-zero too), and float and half are the
 * same code. The kernels' masked loads (_ld_relu, in each backend's file) and the driver's steps on
 * staged tiles (include/bng_relu.c) both spell it through these two macros.
 * Whether y's bits (sign_bit the element's top bit, inf Inf's bits) let dy through:
 * neither +0 nor a sign bit with a magnitude up to Inf. 1 or 0. */
#define BNG_RELU_KEEPS(y, sign_bit, inf) \
    ((unsigned)((y) != 0) & ((unsigned)(((y) & (sign_bit)) == 0) | (unsigned)(((y) & ~(sign_bit)) > (inf))))
/* The same lane by lane, in GCC vectors U (unsigned) and S (signed) of y's bits, as all
 * ones or zero (`top` the top bit's index): y > 0, 0 - y negative and y not; or NaN,
 * Inf - |y| negative. Masks from sign bits, as bng_vec_gnu.h's half conversions make them. */
#define BNG_RELU_KEEPS_V(U, S, y, magnitude, inf, top) \
    ((U)((((S)(0 - (y)) >> (top)) & ~((S)(y) >> (top))) | ((S)((inf) - ((y) & (magnitude))) >> (top))))

/* Keep bits, so that the second pass of an NHWC _p call need not read y again (8
 * streams of memory traffic become 6 instead of 7): its first pass's masked load also
 * records each element's keep as bit `bit` of an element-sized word, in a register
 * (_ld_relu_mark into a bng_keepsN_f32 or _f16 from _zero, stored by _store), and its
 * second pass masks dy by that bit (_ld_relu_keeps) where the others read y. A word
 * holds the keeps of BNG_KEEP_ROWS(element) consecutive rows, from a row that is a
 * multiple of it, and lies in the last of them: in dx, which pass 2 overwrites only
 * after it has read them. The training forward's bits (BNG_FLAG_RELU_BITS) are words of
 * the same kind, which both passes read in place of y (bng_ukernel.h, the _keeps
 * ukernels, BNG_KEEP_ROWS and BNG_KEEP_WORDS). The mask is the same, so are the bits.
 * NCHW's planes read their words a vector at a time with _load_relu_bits (each
 * backend's _ld_relu_bits): lane i of dy kept where bit i of an integer is set, which
 * the NCHW _keeps ukernels gather from a piece's words. The forward writes them the
 * other way: bng_keepsN_pack_f32 and _f16 give bit 0 of each lane of a keeps register
 * at the lane's index in an integer, which its NCHW ReLU ukernel puts into a plane's
 * words.
 *
 * On a split target a plane's words lie in vector memory, where scalar code may not read
 * them, so NCHW's mask by them (bng_nchw_relu.c) turns them in a register:
 * bng_keepsN_turn_f32 and _f16 take a vector of N words (a word of the element's w = 8 *
 * sizeof bits: w vectors' worth of a plane's bits, element e's in bit e % w of word e /
 * w) and leave in lane j the bits of lane j of those w vectors of N elements, vector r's
 * in bit BNG_TURNED_BIT(r, N, w): a permutation of the bits, so that dy's vector r is
 * then masked as an NHWC row is by its words (_ld_relu_keeps). The GNU backend exchanges
 * a lane index bit with a bit index bit at a time (a constant lane permute, shifts and
 * masks: log2 of the smaller of N and w steps) and, with more lanes than a word has
 * bits, permutes the lanes once more; its widths of two halves (a host's only) and the
 * portable backend move each bit where the definition says (BNG_TURN_WORDS).
 *
 * The forward's NCHW ReLU on a split target writes its words the other way
 * (bng_keepsN_turn_back_f32 and _f16, the turn's inverse): vector r of a run of w marks
 * its keeps into bit BNG_TURNED_BIT(r, N, w) of each lane's word in a register, as an
 * NHWC row marks its keep words, and the register turned back is the run's N words of
 * the plane, stored as one vector. */
#define BNG_TURNED_BIT(r, n, w) \
    ((n) >= (w) ? (r) : (r) % ((w) / (n)) * (n) + (r) / ((w) / (n)))
/* A plane's vector v of n lanes, once its words (n to a vector) are turned: the first
 * word of the vector of words that holds its mask, and the bit of each lane's word. */
#define BNG_TURNED_WORD(v, n, w) ((v) / (w) * (n))
#define BNG_TURNED_VECTOR_BIT(v, n, w) BNG_TURNED_BIT((v) % (w), n, w)
/* The turn by its definition, on n words of `type` at p (n <= 64); with `back` its
 * inverse, from lanes to words. */
#define BNG_TURN_WORDS(type, p, n, back)                                                   \
    do {                                                                                   \
        const unsigned w_ = 8 * sizeof(type);                                              \
        type turned_[64] = {0};                                                            \
        unsigned q_;                                                                       \
        (void)sizeof(char[(n) <= 64 ? 1 : -1]);    /* the lanes fit turned_ */             \
        for (q_ = 0; q_ < (n) * w_; q_++) {                                                \
            const unsigned bit_ = BNG_TURNED_BIT(q_ / (n), (n), w_);                       \
            if (back)                                                                      \
                turned_[q_ / w_] |= (type)(((p)[q_ % (n)] >> bit_ & 1u) << (q_ % w_));     \
            else                                                                           \
                turned_[q_ % (n)] |= (type)(((p)[q_ / w_] >> (q_ % w_) & 1u) << bit_);     \
        }                                                                                  \
        for (q_ = 0; q_ < (n); q_++)                                                       \
            (p)[q_] = turned_[q_];                                                         \
    } while (0)

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

/* Names of one width's operations, pasted from the width the backends' per-width
 * parts are included at (BNG_N lanes; BNG_H, half of them): BNG_F32XN is bng_f32x16
 * at 16 lanes, BNG_OPN(add) bng_f32x16_add, BNG_OPH(add) bng_f32x8_add, BNG_KEEPSN(f32)
 * bng_keeps16_f32, BNG_TN(bng_u32x) bng_u32x16. */
#define BNG_PASTE_(a, b) a##b
#define BNG_PASTE(a, b) BNG_PASTE_(a, b)
#define BNG_PASTE3(a, b, c) BNG_PASTE(BNG_PASTE(a, b), c)
#define BNG_F32XN BNG_PASTE(bng_f32x, BNG_N)
#define BNG_F32XH BNG_PASTE(bng_f32x, BNG_H)
#define BNG_OPN(op) BNG_PASTE3(bng_f32x, BNG_N, _##op)
#define BNG_OPH(op) BNG_PASTE3(bng_f32x, BNG_H, _##op)
#define BNG_KEEPSN(what) BNG_PASTE3(bng_keeps, BNG_N, _##what)
#define BNG_KEEPSH(what) BNG_PASTE3(bng_keeps, BNG_H, _##what)
#define BNG_TN(prefix) BNG_PASTE(prefix, BNG_N)
/* The parts of a width's operations (BNG_VEC_OPS), each a section of a backend's file. */
#define BNG_VEC_OPS_F32_VECTOR 1        /* the vector type, arithmetic, float memory */
#define BNG_VEC_OPS_F32_HALVES 2        /* the same as two vectors of half the width */
#define BNG_VEC_OPS_NATIVE_VECTOR 3     /* the same in the target's own spellings */
#define BNG_VEC_OPS_F16_MEMORY 4        /* half memory, bit by bit */
#define BNG_VEC_OPS_F16_MEMORY_WIDE 5   /* half memory, by the host's conversions */
#define BNG_VEC_OPS_RELU_VECTOR 6       /* dy masked by y, keep bits */
#define BNG_VEC_OPS_RELU_HALVES 7       /* the same as two halves */

/* The backend's operations, each in a file of its own: GNU vectors, or plain C (the
 * portable backend, which the native backend also uses for the widths other than the
 * target's own). Each file's first part is included once; its per-width part, again
 * for every width (below). */
#if BNG_VEC_BACKEND == BNG_VEC_GNU
#include "bng_vec_gnu.h"
#define BNG_VEC_BACKEND_HEADER "bng_vec_gnu.h"
#elif BNG_VEC_BACKEND == BNG_VEC_PORTABLE || BNG_VEC_BACKEND == BNG_VEC_NATIVE
#include "bng_vec_portable.h"
#define BNG_VEC_BACKEND_HEADER "bng_vec_portable.h"
#else
#error "BNG_VEC_BACKEND must be BNG_VEC_GNU, BNG_VEC_PORTABLE or BNG_VEC_NATIVE"
#endif
#if BNG_VEC_BACKEND == BNG_VEC_NATIVE
#include "bng_vec_native.h"
#else
#define BNG_IS_NATIVE(N) 0
#endif

/* Every width's operations, 1 to 64 lanes, in passes: a pass at a width uses the
 * earlier passes' operations at that width and its own at half of it. This file's last
 * sections include the backend's parts once a width and pass (BNG_VEC_PASS). */
#define BNG_VEC_PASS_VECTORS 1       /* the vectors, their arithmetic and memory */
#define BNG_VEC_PASS_RELU 2          /* the masked loads: two halves where the width is */
#define BNG_VEC_PASS_STORE_OUT 3     /* output stores (dx) */
#define BNG_VEC_PASS_ACCESS 4        /* the memory-space accessors the kernels call */
#define BNG_VEC_PASS BNG_VEC_PASS_VECTORS
#include "bng_vec.h"
#undef BNG_VEC_PASS
#define BNG_VEC_PASS BNG_VEC_PASS_RELU
#include "bng_vec.h"
#undef BNG_VEC_PASS
/* Output stores (dx): with stream != 0 the caller asks for streaming stores because the
 * output is larger than the caches; the GNU backend gives them on x86 hosts
 * (bng_vec_gnu.h), every other backend stores plainly (a DSP has no cache to bypass). */
#if BNG_VEC_BACKEND != BNG_VEC_GNU
#define BNG_VEC_PASS BNG_VEC_PASS_STORE_OUT
#include "bng_vec.h"
#undef BNG_VEC_PASS
#endif

/* Streaming stores are weakly ordered: a dx ukernel ends with this, so that its stores
 * are visible to every core before anything stored after it. */
#if BNG_VEC_BACKEND == BNG_VEC_GNU && defined(BNG_STREAM_PS)
static inline void bng_store_out_end(int stream)
{
    if (stream == BNG_STORE_STREAM)
        __builtin_ia32_sfence();    /* _mm_sfence, without <immintrin.h> (bng_vec_gnu.h) */
}
#else
static inline void bng_store_out_end(int stream)
{
    (void)stream;
}
#endif


/* Memory spaces (docs/contract.md, "Memory spaces"). The kernels' loads and stores take
 * pointers into vector memory, BNG_VMEM (bng_ukernel.h: empty for compilers; under
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
#define BNG_VEC_PASS BNG_VEC_PASS_ACCESS
#include "bng_vec.h"
#undef BNG_VEC_PASS

#endif /* BNG_VEC_H */

/* A pass (BNG_VEC_PASS) at every width: this file again, once a width. */
#if defined(BNG_VEC_PASS) && !defined(BNG_N)
#define BNG_N 1
#include "bng_vec.h"
#undef BNG_N
#define BNG_N 2
#define BNG_H 1
#include "bng_vec.h"
#undef BNG_N
#undef BNG_H
#define BNG_N 4
#define BNG_H 2
#include "bng_vec.h"
#undef BNG_N
#undef BNG_H
#define BNG_N 8
#define BNG_H 4
#include "bng_vec.h"
#undef BNG_N
#undef BNG_H
#define BNG_N 16
#define BNG_H 8
#include "bng_vec.h"
#undef BNG_N
#undef BNG_H
#define BNG_N 32
#define BNG_H 16
#include "bng_vec.h"
#undef BNG_N
#undef BNG_H
#define BNG_N 64
#define BNG_H 32
#include "bng_vec.h"
#undef BNG_N
#undef BNG_H

/* One width of a pass: the backend's parts for it (the native width: the target's own
 * spellings; a width wider than the host's registers: two halves, GNU), or the
 * accessors written out here. */
#elif defined(BNG_VEC_PASS) && BNG_VEC_PASS == BNG_VEC_PASS_VECTORS
#if BNG_IS_NATIVE(BNG_N)
#define BNG_VEC_OPS BNG_VEC_OPS_NATIVE_VECTOR
#include "bng_vec_native.h"
#elif BNG_IS_HALVES(BNG_N)
#define BNG_VEC_OPS BNG_VEC_OPS_F32_HALVES
#include BNG_VEC_BACKEND_HEADER
#else
#define BNG_VEC_OPS BNG_VEC_OPS_F32_VECTOR
#include BNG_VEC_BACKEND_HEADER
#undef BNG_VEC_OPS
#if BNG_F16_HW_LANES && BNG_F16_HW_LANES <= BNG_N
#define BNG_VEC_OPS BNG_VEC_OPS_F16_MEMORY_WIDE
#else
#define BNG_VEC_OPS BNG_VEC_OPS_F16_MEMORY
#endif
#include BNG_VEC_BACKEND_HEADER
#endif
#undef BNG_VEC_OPS

#elif defined(BNG_VEC_PASS) && BNG_VEC_PASS == BNG_VEC_PASS_RELU
#if BNG_IS_HALVES(BNG_N)
#define BNG_VEC_OPS BNG_VEC_OPS_RELU_HALVES
#else
#define BNG_VEC_OPS BNG_VEC_OPS_RELU_VECTOR
#endif
/* (the GNU backend's masked loads are a file of their own) */
#if BNG_VEC_BACKEND == BNG_VEC_GNU
#include "bng_vec_gnu_relu.h"
#else
#include BNG_VEC_BACKEND_HEADER
#endif
#undef BNG_VEC_OPS

#elif defined(BNG_VEC_PASS) && BNG_VEC_PASS == BNG_VEC_PASS_STORE_OUT
static inline void BNG_OPN(st_out_f32)(float *p, BNG_F32XN v, int stream)
{
    (void)stream;
    BNG_OPN(st_f32)(p, v);
}
static inline void BNG_OPN(st_out_f16)(half *p, BNG_F32XN v, int stream)
{
    (void)stream;
    BNG_OPN(st_f16)(p, v);
}

#elif defined(BNG_VEC_PASS) && BNG_VEC_PASS == BNG_VEC_PASS_ACCESS
BNG_VMEM_FN BNG_F32XN BNG_OPN(load_f32)(const BNG_VMEM float *p)
{
    return BNG_OPN(ld_f32)((const BNG_FORCE float *)p);
}
BNG_VMEM_FN void BNG_OPN(store_f32)(BNG_VMEM float *p, BNG_F32XN v)
{
    BNG_OPN(st_f32)((BNG_FORCE float *)p, v);
}
BNG_VMEM_FN void BNG_OPN(store_out_f32)(BNG_VMEM float *p, BNG_F32XN v,
                                             int stream)
{
    BNG_OPN(st_out_f32)((BNG_FORCE float *)p, v, stream);
}
BNG_VMEM_FN BNG_F32XN BNG_OPN(load_f16)(const BNG_VMEM half *p)
{
    return BNG_OPN(ld_f16)((const BNG_FORCE half *)p);
}
BNG_VMEM_FN void BNG_OPN(store_f16)(BNG_VMEM half *p, BNG_F32XN v)
{
    BNG_OPN(st_f16)((BNG_FORCE half *)p, v);
}
BNG_VMEM_FN void BNG_OPN(store_out_f16)(BNG_VMEM half *p, BNG_F32XN v,
                                             int stream)
{
    BNG_OPN(st_out_f16)((BNG_FORCE half *)p, v, stream);
}
/* dx's stores, in the mode `stream` gives (BNG_STORE_*, above): one store either way,
 * the old value added first when accumulating (a store of its own in that branch cost
 * every unrolled store site a second copy). */
BNG_VMEM_FN void BNG_OPN(store_dx_f32)(BNG_VMEM float *p, BNG_F32XN v, int stream)
{
    if (stream == BNG_STORE_ADD)
        v = BNG_OPN(add)(BNG_OPN(ld_f32)((const BNG_FORCE float *)p), v);
    BNG_OPN(st_out_f32)((BNG_FORCE float *)p, v, stream == BNG_STORE_STREAM);
}
BNG_VMEM_FN void BNG_OPN(store_dx_f16)(BNG_VMEM half *p, BNG_F32XN v, int stream)
{
    if (stream == BNG_STORE_ADD)
        v = BNG_OPN(add)(BNG_OPN(ld_f16)((const BNG_FORCE half *)p), v);
    BNG_OPN(st_out_f16)((BNG_FORCE half *)p, v, stream == BNG_STORE_STREAM);
}
BNG_VMEM_FN BNG_F32XN BNG_OPN(load_relu_f32)(const BNG_VMEM float *dy,
                                                    const BNG_VMEM float *y)
{
    return BNG_OPN(ld_relu_f32)((const BNG_FORCE float *)dy,
                                     (const BNG_FORCE float *)y);
}
BNG_VMEM_FN BNG_F32XN BNG_OPN(load_relu_f16)(const BNG_VMEM half *dy,
                                                    const BNG_VMEM half *y)
{
    return BNG_OPN(ld_relu_f16)((const BNG_FORCE half *)dy,
                                      (const BNG_FORCE half *)y);
}
BNG_VMEM_FN BNG_F32XN BNG_OPN(load_relu_mark_f32)(
    const BNG_VMEM float *dy, const BNG_VMEM float *y, BNG_KEEPSN(f32) *keeps, unsigned bit)
{
    return BNG_OPN(ld_relu_mark_f32)((const BNG_FORCE float *)dy,
                                          (const BNG_FORCE float *)y, keeps, bit);
}
BNG_VMEM_FN BNG_F32XN BNG_OPN(load_relu_mark_f16)(
    const BNG_VMEM half *dy, const BNG_VMEM half *y, BNG_KEEPSN(f16) *keeps, unsigned bit)
{
    return BNG_OPN(ld_relu_mark_f16)((const BNG_FORCE half *)dy,
                                          (const BNG_FORCE half *)y, keeps, bit);
}
BNG_VMEM_FN void BNG_KEEPSN(store_f32)(BNG_VMEM float *p, BNG_KEEPSN(f32) k)
{
    BNG_KEEPSN(st_f32)((BNG_FORCE float *)p, k);
}
BNG_VMEM_FN void BNG_KEEPSN(store_f16)(BNG_VMEM half *p, BNG_KEEPSN(f16) k)
{
    BNG_KEEPSN(st_f16)((BNG_FORCE half *)p, k);
}
BNG_VMEM_FN void BNG_KEEPSN(turn_f32)(BNG_VMEM float *p)
{
    BNG_KEEPSN(turn_words_f32)((BNG_FORCE float *)p, 0);
}
BNG_VMEM_FN void BNG_KEEPSN(turn_f16)(BNG_VMEM half *p)
{
    BNG_KEEPSN(turn_words_f16)((BNG_FORCE half *)p, 0);
}
BNG_VMEM_FN void BNG_KEEPSN(turn_back_f32)(BNG_VMEM float *p)
{
    BNG_KEEPSN(turn_words_f32)((BNG_FORCE float *)p, 1);
}
BNG_VMEM_FN void BNG_KEEPSN(turn_back_f16)(BNG_VMEM half *p)
{
    BNG_KEEPSN(turn_words_f16)((BNG_FORCE half *)p, 1);
}
BNG_VMEM_FN BNG_F32XN BNG_OPN(load_relu_keeps_f32)(
    const BNG_VMEM float *dy, const BNG_VMEM float *keeps, unsigned bit)
{
    return BNG_OPN(ld_relu_keeps_f32)((const BNG_FORCE float *)dy,
                                           (const BNG_FORCE float *)keeps, bit);
}
BNG_VMEM_FN BNG_F32XN BNG_OPN(load_relu_keeps_f16)(
    const BNG_VMEM half *dy, const BNG_VMEM half *keeps, unsigned bit)
{
    return BNG_OPN(ld_relu_keeps_f16)((const BNG_FORCE half *)dy,
                                           (const BNG_FORCE half *)keeps, bit);
}
BNG_VMEM_FN BNG_F32XN BNG_OPN(load_relu_bits_f32)(const BNG_VMEM float *dy,
                                                         unsigned long long bits)
{
    return BNG_OPN(ld_relu_bits_f32)((const BNG_FORCE float *)dy, bits);
}
BNG_VMEM_FN BNG_F32XN BNG_OPN(load_relu_bits_f16)(const BNG_VMEM half *dy,
                                                         unsigned long long bits)
{
    return BNG_OPN(ld_relu_bits_f16)((const BNG_FORCE half *)dy, bits);
}
#endif
