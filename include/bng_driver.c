/* SPDX-License-Identifier: Apache-2.0 */
/* Copyright 2026 the batchnormgrad authors */
/* The driver of every entry point, written once for all storage types and both memory
 * models: the row-group split, the fold of row groups, finalize, and the two memory
 * drivers around one compute core (the kernel's row ukernels). The parameter checks
 * are bng_params.c's. _p works on the caller's memory directly (on a split target it
 * stages it, like _s, on the calling core alone); _s stages tiles between shared and
 * private memory by DMA on the cores of core_mask (include/bng_hal.h). A storage type
 * enters only through its bng_dtype_config: element sizes, the kernel table.
 *
 * The vendor's call is three steps per chunk of channels: sum the rows (pass 1),
 * finalize (dbias, dscale, the dx coefficients), dx (pass 2). The entry points beyond
 * the vendor's four (batch_norm_grad_ext.h) run some of the same steps: reduce sums the
 * rows and stores the sums; apply loads global sums, finalizes and computes dx; dx-only
 * computes dx from scale and invar alone. Their code is compiled only for the families
 * targets.yaml asks for (BNG_HAS_REDUCE, ... in bng_kernels.h: a condition that is 0
 * removes the code).
 *
 * The memory model (BNG_SPLIT_MEMORY) decides where arrays live and how they move,
 * never how a step computes: each per-channel step is written once, on whole vectors
 * of BNG_V floats, and every kernel call goes through one function per kind.
 *
 * Names: the functions this file exports begin with bng_entry_ (bng_driver.h), those
 * of the checks with bng_params_ (bng_params.h). Every other function here is static:
 * bng_step_* the per-channel steps, bng_rows_* the calls of a row ukernel, bng_p_* _p,
 * bng_s_* _s, bng_job_* a staged call and bng_core_* one core's part of it; small
 * helpers are named for what they give.
 *
 * Built once per target, beside the target's generated sources (-Igenerated/<t>): it
 * takes the target's constants from bng_kernels.h.
 */
#include <stddef.h>
#include <stdint.h>
#include "batch_norm_grad.h"
#include "bng_kernels.h"
#include "bng_params.h"
#include "bng_hal.h"
/* The per-channel steps' vectors: on a split target the kernels' backend; on a unified
 * target one lane, the same scalar code under any backend (plain C99 unless one is
 * named). */
#ifndef BNG_VEC_BACKEND
#if BNG_SPLIT_MEMORY
#define BNG_VEC_BACKEND BNG_VECTOR_BACKEND
#else
#define BNG_VEC_BACKEND BNG_VEC_PORTABLE
#endif
#endif
#include "bng_vec.h"

#define BNG_ALL_CORES ((1u << BNG_TARGET_CORES) - 1u)

/* make model's trace build includes include/host/bng_hal_trace.h first, whose hooks
 * record each kernel call made on a core of _s (bng_rows_reduce, bng_rows_dx, the ReLU
 * steps, the NCHW ukernels) and, per chunk of a call that reads its rows twice, where
 * the core keeps its rows between the passes (the schedule's choice, which the model
 * reports); everywhere else they are nothing. */
#ifndef BNG_TRACE_KERNEL
#define BNG_TRACE_KERNEL(kernel, op, rows, channels) ((void)0)
#endif
#ifndef BNG_TRACE_KEEP
#define BNG_TRACE_KEEP(rows, am_rows, gsm_rows) ((void)0)
#endif

/* _p writes dx this large or larger with streaming stores where the vector backend has
 * them (x86 hosts): it would not stay in the caches, and a streaming store does not
 * read each line first (half of dx's traffic). The _s tiles are private: never. */
#ifndef BNG_STREAM_DX_BYTES
#define BNG_STREAM_DX_BYTES ((size_t)8 << 20)
#endif

/* Shared scratch of the _s entry points: per row group, the partial sums of dy and
 * dy*(x - mean), in two slots that alternate between chunks. Host builds emulate it,
 * and the parameter block, with arrays. Either way it is a BNG_SHARED float pointer,
 * and every pointer derived from it keeps the qualifier (an address-space qualifier
 * may not be dropped: clang rejects the conversion). The GSM rows (targets.yaml
 * memory.gsm: BNG_GSM_BYTES at BNG_GSM_ADDRESS, none when 0), where _s keeps rows
 * between its passes, are shared memory of the same kind, emulated the same way. */
#ifdef BNG_HOST
long long bng_host_shared_params[BNG_SHARED_PARAMS_SLOTS];   /* BNG_SHARED_PARAMS on a host */
static float bng_host_scratch[BNG_SCRATCH_FLOATS];
#define BNG_SHARED_SCRATCH ((BNG_SHARED float *)bng_host_scratch)
static float bng_host_gsm[BNG_GSM_BYTES / sizeof(float) + 1];    /* + 1: none when 0 */
#define BNG_SHARED_GSM ((BNG_SHARED unsigned char *)bng_host_gsm)
#else
#define BNG_SHARED_SCRATCH ((BNG_SHARED float *)BNG_SHARED_SCRATCH_ADDRESS)
#define BNG_SHARED_GSM ((BNG_SHARED unsigned char *)BNG_GSM_ADDRESS)
#endif

/* Rows per group (the last may be shorter): a multiple of BNG_BLOCK_ROWS. */
static size_t bng_group_rows(size_t batch)
{
    size_t groups = (batch + BNG_MIN_GROUP_ROWS - 1) / BNG_MIN_GROUP_ROWS;
    size_t rows;

    if (groups > BNG_MAX_GROUPS)
        groups = BNG_MAX_GROUPS;
    rows = (batch + groups - 1) / groups;
    return (rows + BNG_BLOCK_ROWS - 1) / BNG_BLOCK_ROWS * BNG_BLOCK_ROWS;
}

static size_t bng_min(size_t a, size_t b)
{
    return a < b ? a : b;
}

static unsigned bng_popcount(unsigned v)
{
    unsigned n = 0;
    for (; v; v &= v - 1)
        n++;
    return n;
}

/* Channels one pass handles: a specialized count, or the generic chunk. */
static size_t bng_chunk(const bng_dtype_config *dtype, const bng_kernel *kernel)
{
    return kernel->channels ? kernel->channels : dtype->generic_chunk;
}

/* ---- the per-channel steps ----
 *
 * Each works on whole vectors of BNG_V floats: lane by lane the same IEEE operations
 * in the same order at any width, so that _s and _p give the same bits. On a split
 * target BNG_V is the vector register: the arrays are in vector memory, which only
 * vector loads and stores reach, padded to whole vectors (BNG_PADDED: the padding lanes
 * are zeroed with each chunk, computed on, and never put back, as every DMA moves
 * exactly the chunk's channels), and a scalar reaches them only through a register
 * (bng_vbroadcast). On a unified target BNG_V is one lane: _p's arrays there are the
 * caller's, of any length. */
#if BNG_SPLIT_MEMORY
#define BNG_V BNG_VECTOR_LANES
#else
#define BNG_V 1
#endif
#define BNG_VT2(n) bng_f32x##n
#define BNG_VT(n) BNG_VT2(n)
#define BNG_VOP2(n, op) bng_f32x##n##_##op
#define BNG_VOP(n, op) BNG_VOP2(n, op)
typedef BNG_VT(BNG_V) bng_vec;
#define bng_vload BNG_VOP(BNG_V, load_f32)
#define bng_vstore BNG_VOP(BNG_V, store_f32)
#define bng_vload_f16 BNG_VOP(BNG_V, load_f16)
#define bng_vstore_f16 BNG_VOP(BNG_V, store_f16)
#define bng_vzero BNG_VOP(BNG_V, zero)
#define bng_vadd BNG_VOP(BNG_V, add)
#define bng_vmul BNG_VOP(BNG_V, mul)
#define bng_vdiv BNG_VOP(BNG_V, div)
#define bng_vbroadcast BNG_VOP(BNG_V, broadcast)

/* Element i (a multiple of BNG_V) of a per-channel array of the call's stats type. */
static bng_vec bng_stats_load(const bng_dtype_config *dtype, const BNG_VMEM void *stats, size_t i)
{
    if (dtype->stats_bytes == sizeof(float))
        return bng_vload((const BNG_VMEM float *)stats + i);
    return bng_vload_f16((const BNG_VMEM half *)stats + i);
}

static void bng_stats_store(const bng_dtype_config *dtype, BNG_VMEM void *stats, size_t i,
                            bng_vec v)
{
    if (dtype->stats_bytes == sizeof(float))
        bng_vstore((BNG_VMEM float *)stats + i, v);
    else
        bng_vstore_f16((BNG_VMEM half *)stats + i, v);
}

static void bng_step_zero(size_t channels, BNG_VMEM float *a)
{
    size_t c;
    for (c = 0; c < channels; c += BNG_V)
        bng_vstore(a + c, bng_vzero());
}

/* Fold one row group's partial sums into the total, in group order. */
static void bng_step_fold(size_t channels, BNG_VMEM float *sum_dy, BNG_VMEM float *sum_dyxm,
                          const BNG_VMEM float *part_dy, const BNG_VMEM float *part_dyxm)
{
    size_t c;
    for (c = 0; c < channels; c += BNG_V) {
        bng_vstore(sum_dy + c, bng_vadd(bng_vload(sum_dy + c), bng_vload(part_dy + c)));
        bng_vstore(sum_dyxm + c, bng_vadd(bng_vload(sum_dyxm + c), bng_vload(part_dyxm + c)));
    }
}

static void bng_step_stats_to_float(const bng_dtype_config *dtype, size_t channels,
                                    const BNG_VMEM void *in, BNG_VMEM float *out)
{
    size_t c;
    for (c = 0; c < channels; c += BNG_V)
        bng_vstore(out + c, bng_stats_load(dtype, in, c));
}

/* dx-only's coefficient: gain = scale * invar, as bng_step_finalize forms it. */
static void bng_step_gain(const bng_dtype_config *dtype, size_t channels,
                          const BNG_VMEM void *invar, const BNG_VMEM void *scale,
                          BNG_VMEM float *gain)
{
    size_t c;
    for (c = 0; c < channels; c += BNG_V)
        bng_vstore(gain + c, bng_vmul(bng_stats_load(dtype, scale, c),
                                      bng_stats_load(dtype, invar, c)));
}

/* Per-channel results of the sums over m rows: dbias and dscale (added to what they
 * hold when accumulating), and the dx coefficients
 * dx = gain * ((dy - dy_mean) - (x - mean) * slope). dx uses the float sums, never
 * the rounded outputs. dbias and dscale may be the very array of invar or scale: each
 * vector's inputs are loaded before its outputs are stored. */
static void bng_step_finalize(const bng_dtype_config *dtype, size_t channels, float m,
                              int accumulate, const BNG_VMEM void *invar,
                              const BNG_VMEM void *scale, const BNG_VMEM float *sum_dy,
                              const BNG_VMEM float *sum_dyxm, BNG_VMEM void *dbias,
                              BNG_VMEM void *dscale, BNG_VMEM float *gain,
                              BNG_VMEM float *dy_mean, BNG_VMEM float *slope)
{
    const bng_vec m_vec = bng_vbroadcast(m);
    size_t c;

    for (c = 0; c < channels; c += BNG_V) {
        const bng_vec invar_c = bng_stats_load(dtype, invar, c);
        const bng_vec scale_c = bng_stats_load(dtype, scale, c);
        const bng_vec sum_dy_c = bng_vload(sum_dy + c);
        const bng_vec dscale_c = bng_vmul(invar_c, bng_vload(sum_dyxm + c));
        bng_vec dbias_out = sum_dy_c, dscale_out = dscale_c;

        bng_vstore(gain + c, bng_vmul(scale_c, invar_c));
        bng_vstore(dy_mean + c, bng_vdiv(sum_dy_c, m_vec));
        bng_vstore(slope + c, bng_vdiv(bng_vmul(invar_c, dscale_c), m_vec));
        if (accumulate) {
            dbias_out = bng_vadd(bng_stats_load(dtype, dbias, c), dbias_out);
            dscale_out = bng_vadd(bng_stats_load(dtype, dscale, c), dscale_out);
        }
        bng_stats_store(dtype, dbias, c, dbias_out);
        bng_stats_store(dtype, dscale, c, dscale_out);
    }
}

/* Reduce: the limbs of a count of rows (the partial-sums buffer's count), limb i at
 * limbs + i * BNG_V, a whole vector each (packed on a unified target). */
static void bng_step_count(size_t rows, BNG_VMEM float *limbs)
{
    size_t i;
    for (i = 0; i < BNG_SUMS_COUNT_LIMBS; i++) {
        bng_vstore(limbs + i * BNG_V, bng_vbroadcast((float)(unsigned)(rows & BNG_LIMB_MAX)));
        rows >>= BNG_SUMS_LIMB_BITS;
    }
}

/* ---- the row ukernels: every call of one goes through these ---- */

/* Pass 1: the sums of `rows` rows, from a block boundary, added into part_dy and
 * part_dyxm block by block. */
static void bng_rows_reduce(const bng_kernel *kernel, size_t rows, size_t channels, size_t stride,
                            const BNG_VMEM void *x, const BNG_VMEM void *dy,
                            const BNG_VMEM float *mean, BNG_VMEM float *part_dy,
                            BNG_VMEM float *part_dyxm)
{
    BNG_TRACE_KERNEL(kernel, "reduce", rows, channels);
    kernel->reduce(rows, channels, stride, x, dy, mean, part_dy, part_dyxm);
}

/* Pass 2: dx of the rows from the chunk's coefficients, trained or inferred (x is not
 * read then, and may be NULL). */
static void bng_rows_dx(const bng_kernel *kernel, int is_train, size_t rows, size_t channels,
                        size_t stride, const BNG_VMEM void *x, const BNG_VMEM void *dy,
                        BNG_VMEM void *dx, const BNG_VMEM float *mean,
                        const BNG_VMEM float *gain, const BNG_VMEM float *dy_mean,
                        const BNG_VMEM float *slope, int stream)
{
    BNG_TRACE_KERNEL(kernel, is_train ? "dx_train" : "dx_infer", rows, channels);
    if (is_train)
        kernel->dx_train(rows, channels, stride, x, dy, dx, mean, gain, dy_mean, slope, stream);
    else
        kernel->dx_infer(rows, channels, stride, dy, dx, gain, stream);
}

#if BNG_HAS_RELU
/* The same two on dy masked by the forward output y, whose rows are `stride` apart like
 * dy's: the kernel's ReLU ukernels, which only _p runs (on the caller's arrays; _s masks
 * its tiles, below, and runs the two above), so no trace. Pass 1 also leaves the rows'
 * keep bits in `keeps` (bng_vec.h, "Keep bits"), rows keeps_stride apart. */
static void bng_rows_reduce_relu(const bng_kernel *kernel, size_t rows, size_t channels,
                                 size_t stride, const BNG_VMEM void *x, const BNG_VMEM void *dy,
                                 const BNG_VMEM void *y, const BNG_VMEM float *mean,
                                 BNG_VMEM float *part_dy, BNG_VMEM float *part_dyxm,
                                 BNG_VMEM void *keeps, size_t keeps_stride)
{
    kernel->reduce_relu(rows, channels, stride, x, dy, y, mean, part_dy, part_dyxm, keeps,
                        keeps_stride);
}

static void bng_rows_dx_relu(const bng_kernel *kernel, int is_train, size_t rows,
                             size_t channels, size_t stride, const BNG_VMEM void *x,
                             const BNG_VMEM void *dy, const BNG_VMEM void *y, BNG_VMEM void *dx,
                             const BNG_VMEM float *mean, const BNG_VMEM float *gain,
                             const BNG_VMEM float *dy_mean, const BNG_VMEM float *slope,
                             int stream)
{
    if (is_train)
        kernel->dx_train_relu(rows, channels, stride, x, dy, y, dx, mean, gain, dy_mean, slope,
                              stream);
    else
        kernel->dx_infer_relu(rows, channels, stride, dy, y, dx, gain, stream);
}

/* Pass 2 on dy masked by the keep bits pass 1 left in dx (all `rows` rows, from the
 * first one pass 1 marked). */
static void bng_rows_dx_keeps(const bng_kernel *kernel, int is_train, size_t rows,
                              size_t channels, size_t stride, const BNG_VMEM void *x,
                              const BNG_VMEM void *dy, BNG_VMEM void *dx,
                              const BNG_VMEM float *mean, const BNG_VMEM float *gain,
                              const BNG_VMEM float *dy_mean, const BNG_VMEM float *slope,
                              int stream)
{
    if (is_train)
        kernel->dx_train_keeps(rows, channels, stride, x, dy, dx, mean, gain, dy_mean, slope,
                               stream);
    else
        kernel->dx_infer_keeps(rows, channels, stride, dy, dx, gain, stream);
}
#endif

/* ---- fused ReLU backward (BNG_FLAG_RELU): dy masked by the forward output y ----
 *
 * The mask (BNG_RELU_KEEPS, include/bng_vec.h) works on the elements' bits, so that the
 * sums and dx are, bit for bit, the unfused call's on the masked dy: the separate pass
 * the fused call equals. A unified target only (the generator refuses relu on a split
 * one). An NHWC _p call runs the kernels' ReLU ukernels on the caller's arrays, which
 * load dy masked by y (_load_relu) where the others load dy; the staged tiles of _s and
 * the NCHW planes are masked in place by three steps before the ordinary ukernels run.
 *
 * The steps, each over a row a vector at a time, the row's last elements one at a
 * time: the mask by y (bng_relu_mask), the mask as bits (bng_relu_bits: a bit per
 * element, which _s keeps between its passes) and the mask by those bits
 * (bng_relu_mask_by_bits). On the gnu backend a vector is one register of GCC vector
 * lanes (BNG_RELU_VECTOR_BYTES), masks made from sign bits (BNG_RELU_KEEPS_V: a
 * compiler without vector compares for the part lowers a compare lane by lane); on the
 * others it is a step of BNG_RELU_STEP_BYTES in plain C, loaded before it is stored,
 * which a compiler that vectorizes straight-line code vectorizes (out may be dy, so a
 * loop over the row would need a run-time alias check, which GCC's -O2 does not make;
 * 32 bytes measured fastest on an x86-64 host). */
#if BNG_HAS_RELU
#if BNG_VEC_BACKEND == BNG_VEC_GNU
typedef uint32_t bng_relu_u32 __attribute__((vector_size(BNG_RELU_VECTOR_BYTES)));
typedef int32_t bng_relu_s32 __attribute__((vector_size(BNG_RELU_VECTOR_BYTES)));
typedef uint16_t bng_relu_u16 __attribute__((vector_size(BNG_RELU_VECTOR_BYTES)));
typedef int16_t bng_relu_s16 __attribute__((vector_size(BNG_RELU_VECTOR_BYTES)));
#define BNG_RELU_LANES(type) (BNG_RELU_VECTOR_BYTES / sizeof(type))
/* The vector types of an element type's bits (uint32_t or uint16_t). */
#define BNG_RELU_U_uint32_t bng_relu_u32
#define BNG_RELU_S_uint32_t bng_relu_s32
#define BNG_RELU_U_uint16_t bng_relu_u16
#define BNG_RELU_S_uint16_t bng_relu_s16
#define BNG_RELU_U(type) BNG_RELU_U_##type
#define BNG_RELU_S(type) BNG_RELU_S_##type
#define BNG_RELU_LOAD(v, p) __builtin_memcpy(&(v), (p), sizeof(v))
#define BNG_RELU_STORE(p, v) __builtin_memcpy((p), &(v), sizeof(v))

/* out[c..] = dy[c..] masked by y[c..], a vector at a time while a whole one is left. */
#define BNG_RELU_MASK_VECTORS(type, magnitude, inf)                                      \
    for (; c + BNG_RELU_LANES(type) <= channels; c += BNG_RELU_LANES(type)) {           \
        BNG_RELU_U(type) d, m;                                                          \
        BNG_RELU_LOAD(d, dy + c);                                                       \
        BNG_RELU_LOAD(m, y + c);                                                        \
        d &= BNG_RELU_KEEPS_V(BNG_RELU_U(type), BNG_RELU_S(type), m, magnitude, inf,    \
                              8 * sizeof(type) - 1);                                    \
        BNG_RELU_STORE(out + c, d);                                                     \
    }
/* out[c..] = the mask of rows [first, last) of y (rows y_stride apart), row r's in bit
 * r - first. */
#define BNG_RELU_BITS_VECTORS(type, magnitude, inf)                                      \
    for (; c + BNG_RELU_LANES(type) <= channels; c += BNG_RELU_LANES(type)) {           \
        BNG_RELU_U(type) b = {0}, m;                                                    \
        for (r = first; r < last; r++) {                                                \
            BNG_RELU_LOAD(m, y + r * y_stride + c);                                     \
            b |= (BNG_RELU_KEEPS_V(BNG_RELU_U(type), BNG_RELU_S(type), m, magnitude, inf, \
                                   8 * sizeof(type) - 1) & 1u) << (r - first);          \
        }                                                                               \
        BNG_RELU_STORE(out + c, b);                                                     \
    }
/* o[c..] = d[c..] where bit `shift` of b[c..] is set, else +0. */
#define BNG_RELU_BY_BITS_VECTORS(type)                                                   \
    for (; c + BNG_RELU_LANES(type) <= channels; c += BNG_RELU_LANES(type)) {           \
        BNG_RELU_U(type) v, w;                                                          \
        BNG_RELU_LOAD(v, d + c);                                                        \
        BNG_RELU_LOAD(w, b + c);                                                        \
        v &= 0 - ((w >> shift) & 1u);                                                   \
        BNG_RELU_STORE(o + c, v);                                                       \
    }
#else
#define BNG_RELU_STEP_BYTES 32
#define BNG_RELU_MASK_VECTORS(type, magnitude, inf)                                      \
    for (; c + BNG_RELU_STEP_BYTES / sizeof(type) <= channels;                          \
         c += BNG_RELU_STEP_BYTES / sizeof(type)) {                                     \
        type d[BNG_RELU_STEP_BYTES / sizeof(type)], m[BNG_RELU_STEP_BYTES / sizeof(type)]; \
        for (k = 0; k < BNG_RELU_STEP_BYTES / sizeof(type); k++) {                      \
            d[k] = dy[c + k];                                                           \
            m[k] = y[c + k];                                                            \
        }                                                                               \
        for (k = 0; k < BNG_RELU_STEP_BYTES / sizeof(type); k++)                        \
            out[c + k] = (type)(d[k] & (0u - BNG_RELU_KEEPS((unsigned)m[k], (magnitude) + 1u, inf))); \
    }
#define BNG_RELU_BITS_VECTORS(type, magnitude, inf)                                      \
    for (; c + BNG_RELU_STEP_BYTES / sizeof(type) <= channels;                          \
         c += BNG_RELU_STEP_BYTES / sizeof(type)) {                                     \
        type b[BNG_RELU_STEP_BYTES / sizeof(type)] = {0};                               \
        for (r = first; r < last; r++)                                                  \
            for (k = 0; k < BNG_RELU_STEP_BYTES / sizeof(type); k++)                    \
                b[k] |= (type)(BNG_RELU_KEEPS((unsigned)y[r * y_stride + c + k],        \
                                              (magnitude) + 1u, inf) << (r - first));   \
        for (k = 0; k < BNG_RELU_STEP_BYTES / sizeof(type); k++)                        \
            out[c + k] = b[k];                                                          \
    }
#define BNG_RELU_BY_BITS_VECTORS(type)                                                   \
    for (; c + BNG_RELU_STEP_BYTES / sizeof(type) <= channels;                          \
         c += BNG_RELU_STEP_BYTES / sizeof(type)) {                                     \
        type v[BNG_RELU_STEP_BYTES / sizeof(type)], w[BNG_RELU_STEP_BYTES / sizeof(type)]; \
        for (k = 0; k < BNG_RELU_STEP_BYTES / sizeof(type); k++) {                      \
            v[k] = d[c + k];                                                            \
            w[k] = b[c + k];                                                            \
        }                                                                               \
        for (k = 0; k < BNG_RELU_STEP_BYTES / sizeof(type); k++)                        \
            o[c + k] = (type)(v[k] & (0u - ((unsigned)(w[k] >> shift) & 1u)));          \
    }
#endif

/* The three steps on one element type (uint32_t for floats, uint16_t for halves; its
 * sign bit is magnitude + 1, Inf's bits `inf`), their rows' last elements one at a
 * time. */
#define BNG_RELU_STEPS(type, magnitude, inf)                                             \
    static void bng_relu_mask_##type(size_t channels, const type *dy, const type *y,    \
                                     type *out)                                         \
    {                                                                                   \
        size_t c = 0, k;                                                                \
        (void)k;                                                                        \
        BNG_RELU_MASK_VECTORS(type, magnitude, inf)                                     \
        for (; c < channels; c++)                                                       \
            out[c] = (type)(dy[c] & (0u - BNG_RELU_KEEPS((unsigned)y[c], (magnitude) + 1u, inf))); \
    }                                                                                   \
    /* Bit i of word c of part j: row j * width + i of the `rows` rows. */              \
    static void bng_relu_bits_##type(size_t rows, size_t channels, const type *y,       \
                                     size_t y_stride, type *out)                        \
    {                                                                                   \
        const size_t width = 8 * sizeof(type);                                          \
        size_t first, last, c, r, k;                                                    \
        (void)k;                                                                        \
        for (first = 0; first < rows; first += width, out += channels) {                \
            last = bng_min(rows, first + width);                                        \
            c = 0;                                                                      \
            BNG_RELU_BITS_VECTORS(type, magnitude, inf)                                 \
            for (; c < channels; c++)                                                   \
                for (out[c] = 0, r = first; r < last; r++)                              \
                    out[c] |= (type)(BNG_RELU_KEEPS((unsigned)y[r * y_stride + c],      \
                                                    (magnitude) + 1u, inf) << (r - first)); \
        }                                                                               \
    }                                                                                   \
    static void bng_relu_by_bits_##type(size_t rows, size_t channels, const type *dy,   \
                                        size_t dy_stride, const type *bits, type *out,  \
                                        size_t out_stride)                              \
    {                                                                                   \
        const size_t width = 8 * sizeof(type);                                          \
        size_t r, c, k;                                                                 \
        (void)k;                                                                        \
        for (r = 0; r < rows; r++) {                                                    \
            const type *d = dy + r * dy_stride, *b = bits + r / width * channels;       \
            const unsigned shift = (unsigned)(r % width);                               \
            type *o = out + r * out_stride;                                             \
            c = 0;                                                                      \
            BNG_RELU_BY_BITS_VECTORS(type)                                              \
            for (; c < channels; c++)                                                   \
                o[c] = (type)(d[c] & (0u - ((unsigned)(b[c] >> shift) & 1u)));          \
        }                                                                               \
    }
BNG_RELU_STEPS(uint32_t, 0x7fffffffu, 0x7f800000u)
BNG_RELU_STEPS(uint16_t, 0x7fffu, 0x7c00u)

/* `rows` rows of `channels` elements: out = dy masked by y, each array's rows `stride`
 * elements apart (its own stride each). out may be dy (in place). Rows that follow
 * each other in all three are one run. */
static void bng_relu_mask(size_t element, size_t rows, size_t channels,
                          const void *dy, size_t dy_stride, const void *y, size_t y_stride,
                          void *out, size_t out_stride)
{
    size_t r;

    if (dy_stride == channels && y_stride == channels && out_stride == channels) {
        channels *= rows;
        rows = 1;
    }
    for (r = 0; r < rows; r++) {
        if (element == sizeof(uint32_t))
            bng_relu_mask_uint32_t(channels, (const uint32_t *)dy + r * dy_stride,
                                   (const uint32_t *)y + r * y_stride,
                                   (uint32_t *)out + r * out_stride);
        else
            bng_relu_mask_uint16_t(channels, (const uint16_t *)dy + r * dy_stride,
                                   (const uint16_t *)y + r * y_stride,
                                   (uint16_t *)out + r * out_stride);
    }
}

/* The mask of a block of rows as bits, in words of the element's size (a float's 32
 * bits, a half's 16): rows of `channels` words, row j's word c holding, in bit i,
 * whether y lets dy through at row j * 32 + i (floats) or j * 16 + i (halves) of the
 * block, channel c. A block of 32 rows is one row of float words, two of half words. */
typedef char bng_relu_block_fits_bits[BNG_BLOCK_ROWS <= 32 ? 1 : -1];

static void bng_relu_bits(size_t element, size_t rows, size_t channels, const void *y,
                          size_t y_stride, void *bits)
{
    if (element == sizeof(uint32_t))
        bng_relu_bits_uint32_t(rows, channels, y, y_stride, bits);
    else
        bng_relu_bits_uint16_t(rows, channels, y, y_stride, bits);
}

/* out = dy masked by a block's bits (bng_relu_bits): dy where its bit is set, else +0,
 * the same bits as bng_relu_mask on the y they came from. out may be dy. */
static void bng_relu_mask_by_bits(size_t element, size_t rows, size_t channels,
                                  const void *dy, size_t dy_stride, const void *bits,
                                  void *out, size_t out_stride)
{
    if (element == sizeof(uint32_t))
        bng_relu_by_bits_uint32_t(rows, channels, dy, dy_stride, bits, out, out_stride);
    else
        bng_relu_by_bits_uint16_t(rows, channels, dy, dy_stride, bits, out, out_stride);
}
#endif

/* ---- staged storage: tiles by DMA; _s on the cores of core_mask, and on a split
 * target _p on the calling core alone ---- */

/* The per-channel arrays of an _s call, in shared memory. */
typedef struct {
    const BNG_SHARED void *mean, *invar, *scale;
    BNG_SHARED void *dbias, *dscale;
} bng_shared_stats;

/* A staged call. For _p on a split target (`alone`) the "shared" arrays are the
 * caller's, in its vector memory (the DMA moves them; the sums stay in scalar memory),
 * the one core folds its row groups itself (no barrier, no shared scratch) and its
 * private memory is the workspace the HAL gave _p. */
typedef struct {
    const bng_dtype_config *dtype;
    const bng_kernel *kernel;
    bng_call call;
    unsigned mask;
    const BNG_SHARED void *x, *dy;
    BNG_SHARED void *dx;
    bng_shared_stats stats;
    BNG_SHARED float *sums;     /* reduce: out; apply: in */
    int alone;
    BNG_VMEM unsigned char *workspace;
    size_t workspace_bytes;
} bng_staged_job;
/* _p staged on the calling core: only a split target has it (0 elsewhere, so that the
 * compiler drops its code). */
#define BNG_ALONE(job) (BNG_SPLIT_MEMORY && (job)->alone)

/* Element `index` of a shared array of `bytes`-sized elements. */
static const BNG_SHARED void *bng_shared_at(const BNG_SHARED void *base, size_t index, size_t bytes)
{
    return (const BNG_SHARED unsigned char *)base + index * bytes;
}

static BNG_SHARED void *bng_shared_at_mut(BNG_SHARED void *base, size_t index, size_t bytes)
{
    return (BNG_SHARED unsigned char *)base + index * bytes;
}

/* The layout of a core's private memory for one chunk of a staged call: the workspace
 * (BNG_WORKSPACE), four tile buffers (x and dy, double-buffered) for the rows that
 * stream, then, in a call that reads its rows twice, the resident area: x and dy of
 * the slice's last rows, which stay from pass 1 to pass 2. All of it is vector memory
 * (BNG_VMEM) on a split target. Such a call may also keep the streamed rows just
 * before the resident ones in the core's share of the GSM rows (bng_core_gsm). */
typedef float bng_work_float;
typedef unsigned char bng_work_stats;
#define BNG_WORK_FIELD(unused1, unused2, name, kind) BNG_VMEM bng_work_##kind *name;
#define BNG_WORK_TAKE(max_chunk, stats_bytes, name, kind) \
    mem->name = bng_take(&next, BNG_WORK_ARRAY_CHUNK(max_chunk) * BNG_WORK_ELEMENT_##kind(stats_bytes));
typedef struct {
    BNG_WORKSPACE(BNG_WORK_FIELD, 0, 0)
    BNG_VMEM unsigned char *x_tiles[2], *dy_tiles[2];  /* contiguous: also the fold's area */
    size_t tile_rows;       /* rows per streamed tile: whole blocks */
    size_t tile_bytes;      /* one tile buffer */
    BNG_VMEM unsigned char *x_resident, *dy_resident;
    size_t resident_rows;   /* the slice's last rows, kept in the resident area (0: none) */
    BNG_VMEM unsigned char *y_tile;     /* BNG_FLAG_RELU: a tile of y, masking dy's */
    BNG_VMEM unsigned char *relu_bits;  /* and the masks of the slice's first blocks */
    size_t relu_bits_blocks;            /* as bits (bng_relu_bits), or 0 */
    BNG_SHARED unsigned char *x_gsm, *dy_gsm;
    size_t gsm_rows;        /* the streamed rows before those, kept in GSM (0: none) */
} bng_core_layout;
/* The tile buffers bng_layout takes: the generator's TILE_BUFFERS, with which it
 * checks private_bytes. */
#define BNG_LAYOUT_TILES (sizeof(((bng_core_layout *)0)->x_tiles) / sizeof(((bng_core_layout *)0)->x_tiles[0]) \
                          + sizeof(((bng_core_layout *)0)->dy_tiles) / sizeof(((bng_core_layout *)0)->dy_tiles[0]))
typedef char bng_tile_buffers_agree[BNG_LAYOUT_TILES == BNG_TILE_BUFFERS ? 1 : -1];

/* The most DMA transfers a core has outstanding: in pass 2, after the next tile's two
 * gets are issued, this tile's two gets (until waited), or, on a resident tile, the
 * put of the tile before the last; in pass 1, the two tiles' gets, or the next tile's
 * gets and this tile's two puts into GSM (the tile before's are waited before the next
 * fetch), or the next tile's gets and a group's two partial sums; the chunk's three
 * per-channel gets at its start, two at a time in finalize, the fold's one. The HAL
 * contract allows BNG_MAX_OUTSTANDING_DMA. */
#define BNG_DRIVER_OUTSTANDING_DMA 4
typedef char bng_outstanding_dma_agrees[BNG_DRIVER_OUTSTANDING_DMA <= BNG_MAX_OUTSTANDING_DMA ? 1 : -1];

/* Take bytes (rounded up to BNG_ALIGN) from a core's private memory. */
static BNG_VMEM void *bng_take(BNG_VMEM unsigned char **next, size_t bytes)
{
    BNG_VMEM void *p = *next;
    *next += BNG_ALIGN_UP(bytes);
    return p;
}

/* Rows per streamed tile: a quarter of what the workspace leaves, in whole blocks
 * (tiles never split a block). In a call that keeps rows (`keeps`), fewer: no more
 * than BNG_STREAM_TILE_BYTES, enough that a transfer's start-up is small beside its
 * bytes, nor than a quarter of the quarter, so that at least three quarters of a small
 * private memory are the resident area; whole blocks, at least one. targets.yaml is
 * validated so that a quarter holds a block of the widest chunk. */
static size_t bng_stream_rows(size_t quarter, size_t row_pitch, int keeps)
{
    const size_t rows = quarter / row_pitch / BNG_BLOCK_ROWS * BNG_BLOCK_ROWS;
    const size_t small = bng_min(BNG_STREAM_TILE_BYTES, quarter / BNG_TILE_BUFFERS)
                         / row_pitch / BNG_BLOCK_ROWS * BNG_BLOCK_ROWS;

    return keeps ? bng_min(rows, small > BNG_BLOCK_ROWS ? small : BNG_BLOCK_ROWS) : rows;
}

/* How many of `rows` rows (from a block boundary) stay where `most` fit: all, or the
 * last ones from a block boundary (a tile starts there), or none. */
static size_t bng_last_rows(size_t rows, size_t most)
{
    const size_t over = rows > most ? rows - most : 0;
    const size_t before = (over + BNG_BLOCK_ROWS - 1) / BNG_BLOCK_ROWS * BNG_BLOCK_ROWS;

    return rows - bng_min(before, rows);
}

/* A block's ReLU mask as bits (bng_relu_bits): a row of float words, two of half words. */
#define BNG_RELU_BITS_BLOCK_BYTES(row_pitch, element) ((row_pitch) * (sizeof(uint32_t) / (element)))

/* The relu bits area: a relu call that keeps rows (it reads y in both passes) keeps the
 * mask of its slice's first blocks as bits from pass 1 to pass 2 in private memory,
 * where pass 2 takes it instead of fetching y again. Bits first, before the resident
 * rows: a block's bits (a row of float words, two of half words: `block_bytes`) save
 * 32 rows of y from DDR, a resident row's x and dy (two rows) save three rows, x, dy
 * and y. As many blocks as the slice has, or as `rest` (aligned) holds; none when the
 * resident area would hold the whole slice anyway (no rows read twice). The bits of
 * rows that end up resident or in GSM are unused. */
static size_t bng_relu_bits_blocks(size_t slice_rows, size_t row_pitch, size_t rest,
                                   size_t block_bytes)
{
    const size_t blocks = (slice_rows + BNG_BLOCK_ROWS - 1) / BNG_BLOCK_ROWS;

    if (bng_last_rows(slice_rows, rest / 2 / BNG_ALIGN * BNG_ALIGN / row_pitch) == slice_rows)
        return 0;
    return bng_min(blocks, rest / block_bytes);
}

/* Lay out private memory (`bytes` at `base`) for rows of `row_pitch` bytes and a slice
 * of `slice_rows` rows; `keeps`: the call reads its rows twice, and as many of the
 * slice's last rows as fit the resident area stay there between the passes
 * (generator/plan.py computes the same numbers, DTypePlan.resident_rows). `relu`: a
 * tile buffer for y follows the four; its tiles are sized as a keeping call's, which
 * leaves room for it (the generator checks private_bytes for five blocks' tiles). A
 * relu call that keeps rows and cannot keep them all takes the relu bits area next
 * (bng_relu_bits_blocks), before the resident one. */
static void bng_layout(const bng_dtype_config *dtype, BNG_VMEM unsigned char *base, size_t bytes,
                       size_t row_pitch, size_t slice_rows, int keeps, int relu,
                       bng_core_layout *mem)
{
    BNG_VMEM unsigned char *next = base;
    const size_t bits_block_bytes = BNG_RELU_BITS_BLOCK_BYTES(row_pitch, dtype->element_bytes);
    size_t quarter, half_rest, rest;

    BNG_WORKSPACE(BNG_WORK_TAKE, dtype->max_chunk, dtype->stats_bytes)
    quarter = (bytes - (size_t)(next - base)) / BNG_TILE_BUFFERS / BNG_ALIGN * BNG_ALIGN;
    mem->tile_rows = bng_stream_rows(quarter, row_pitch, keeps || relu);
    mem->tile_bytes = BNG_ALIGN_UP(mem->tile_rows * row_pitch);
    mem->x_tiles[0] = bng_take(&next, mem->tile_bytes);
    mem->x_tiles[1] = bng_take(&next, mem->tile_bytes);
    mem->dy_tiles[0] = bng_take(&next, mem->tile_bytes);
    mem->dy_tiles[1] = bng_take(&next, mem->tile_bytes);
    mem->y_tile = relu ? bng_take(&next, mem->tile_bytes) : NULL;
    rest = (bytes - (size_t)(next - base)) / BNG_ALIGN * BNG_ALIGN;
    mem->relu_bits_blocks = relu && keeps ? bng_relu_bits_blocks(slice_rows, row_pitch, rest, bits_block_bytes) : 0;
    mem->relu_bits = bng_take(&next, mem->relu_bits_blocks * bits_block_bytes);
    half_rest = (bytes - (size_t)(next - base)) / 2 / BNG_ALIGN * BNG_ALIGN;
    mem->resident_rows = keeps ? bng_last_rows(slice_rows, half_rest / row_pitch) : 0;
    mem->x_resident = next;
    mem->dy_resident = next + half_rest;
}

/* The core's private memory for the call: the workspace the HAL gave _p (alone), or
 * the core's from bng_hal_private. NULL when there is none (include/bng_hal.h: inside
 * body it never happens unless the HAL cannot honour its contract, and then on every
 * core): the core then writes nothing and leaves. */
static BNG_VMEM unsigned char *bng_core_memory(const bng_staged_job *job, unsigned core,
                                              size_t *bytes)
{
    BNG_VMEM unsigned char *base;

    if (BNG_ALONE(job)) {
        *bytes = job->workspace_bytes;
        return job->workspace;
    }
    *bytes = 0;
    base = bng_hal_private(core, bytes);
    return base != NULL && *bytes >= BNG_PRIVATE_BYTES ? base : NULL;
}

/* Rows of the tile starting at `row`: tiles never cross a row group, nor the slice. */
static size_t bng_tile(size_t row, size_t end, size_t group_rows, size_t tile_rows)
{
    const size_t group_end = (row / group_rows + 1) * group_rows;
    return bng_min(tile_rows, bng_min(group_end, end) - row);
}

/* One core's state in a staged call: its rows, and the chunk it works on. */
typedef struct {
    const bng_staged_job *job;
    unsigned core, rank, cores;    /* rank: the k-th of the cores selected */
    size_t group_rows, groups;
    size_t begin, end;             /* this core's rows: the rank-th run of row groups */
    int idle;                      /* no rows, not the lowest: in the barriers only */
    size_t first, channels;        /* the chunk */
    size_t row_bytes;              /* one row of the chunk */
    size_t row_channels, pitch;    /* a row in private memory: padded on a split target */
    BNG_SHARED float *scratch;     /* the chunk's slot of the shared scratch */
    bng_core_layout mem;           /* the chunk's layout of private memory */
} bng_core;

/* The k-th selected core takes the k-th contiguous run of groups. */
static void bng_core_rows(bng_core *c, const bng_staged_job *job, unsigned core)
{
    const size_t batch = job->call.batch;
    const unsigned cores = bng_popcount(job->mask);

    c->job = job;
    c->core = core;
    c->cores = cores;
    c->rank = bng_popcount(job->mask & ((1u << core) - 1u));
    c->group_rows = bng_group_rows(batch);
    c->groups = (batch + c->group_rows - 1) / c->group_rows;
    c->begin = bng_min(c->groups * c->rank / cores * c->group_rows, batch);
    c->end = bng_min(c->groups * (c->rank + 1) / cores * c->group_rows, batch);
    c->idle = c->begin == c->end && c->rank != 0;
}

/* The chunk's padding lanes in every workspace array, from its last channel up to
 * whole vectors (BNG_PADDED: none on a unified target): zero. Before the chunk's
 * inputs arrive: the first vector zeroed holds the chunk's last channels too. */
static void bng_core_zero_padding(bng_core *c)
{
    const bng_dtype_config *dtype = c->job->dtype;
    const bng_core_layout *mem = &c->mem;
    size_t at;

#define BNG_WORK_ZERO_float(name) bng_vstore(mem->name + at, bng_vzero());
#define BNG_WORK_ZERO_stats(name) bng_stats_store(dtype, mem->name, at, bng_vzero());
#define BNG_WORK_ZERO(unused1, unused2, name, kind) BNG_WORK_ZERO_##kind(name)
    for (at = c->channels / BNG_V * BNG_V; at < BNG_PADDED(c->channels); at += BNG_V) {
        BNG_WORKSPACE(BNG_WORK_ZERO, 0, 0)
    }
}

/* rows * BNG_GSM_SHARE / 2^16, rounded down, in size_t arithmetic that a 32-bit size_t
 * holds for any rows below 2^32 (no 64-bit division: on a 32-bit part that is a library
 * routine firmware may not link). */
static size_t bng_gsm_share_of(size_t rows)
{
    return (rows >> 16) * BNG_GSM_SHARE + (((rows & 0xffffu) * BNG_GSM_SHARE) >> 16);
}

/* How many of its streamed rows a core keeps in its share of the GSM rows between the
 * passes of a call that keeps rows: the last ones before the resident rows, from a
 * block boundary; as many as fit, and no more than pay. In pass 2 the core moves
 * S + a (S - r - g) rows' arrays through DDR (dx, and x and dy again: a = 2, dy alone
 * in inference: a = 1) and a g through GSM, S its rows, r the resident ones, g those in
 * GSM; the two take the same time at g = (S / a + S - r) G / (G + D), G and D the
 * part's GSM and DDR bandwidths (BNG_GSM_SHARE / 2^16 = G / (G + D), from targets.yaml
 * part:; 1 without it, which puts no bound). More would make GSM the slower of the
 * two. */
static void bng_core_gsm(bng_core *c, int keeps)
{
    bng_core_layout *mem = &c->mem;
    const size_t streamed = c->end - c->begin - mem->resident_rows;
    const size_t arrays = c->job->call.is_train ? 2 : 1;
    size_t share, half, fit, pays;

    mem->gsm_rows = 0;
    mem->x_gsm = mem->dy_gsm = BNG_SHARED_GSM;     /* read only where rows are kept */
    if (!BNG_GSM_BYTES || !keeps || BNG_ALONE(c->job))
        return;
    share = BNG_GSM_BYTES / c->cores / BNG_ALIGN * BNG_ALIGN;
    half = share / 2 / BNG_ALIGN * BNG_ALIGN;
    fit = half / c->row_bytes;
    pays = bng_gsm_share_of((c->end - c->begin) / arrays + streamed);
    mem->gsm_rows = bng_last_rows(streamed, bng_min(pays, fit));
    mem->x_gsm = BNG_SHARED_GSM + c->rank * share;
    mem->dy_gsm = mem->x_gsm + half;
}

/* Start the chunk at channel `first`: lay out private memory, bring in the
 * per-channel inputs the call uses (an idle core needs none). Only the calls that read
 * their rows twice (the vendor's, ext) keep rows between the passes. 0: no private
 * memory (bng_core_memory). */
static int bng_core_chunk(bng_core *c, size_t first, size_t slot)
{
    const bng_staged_job *job = c->job;
    const bng_dtype_config *dtype = job->dtype;
    const bng_call *call = &job->call;
    const size_t stat = dtype->stats_bytes;
    const int keeps = BNG_READS_TWICE(call);
    bng_hal_dma stats[3] = {BNG_HAL_DMA_DONE, BNG_HAL_DMA_DONE, BNG_HAL_DMA_DONE};
    size_t bytes, i;
    BNG_VMEM unsigned char *memory = bng_core_memory(job, c->core, &bytes);

    if (memory == NULL)
        return 0;
    c->first = first;
    c->channels = bng_min(bng_chunk(dtype, job->kernel), call->channel - first);
    c->row_bytes = c->channels * dtype->element_bytes;
    c->row_channels = BNG_PADDED(c->channels);
    c->pitch = c->row_channels * dtype->element_bytes;
    c->scratch = BNG_SHARED_SCRATCH + slot * BNG_MAX_GROUPS * 2 * dtype->max_chunk;
    bng_layout(dtype, memory, bytes, c->pitch, c->end - c->begin, keeps, BNG_RELU(call), &c->mem);
    bng_core_gsm(c, keeps);
    if (keeps)
        BNG_TRACE_KEEP(c->end - c->begin, c->mem.resident_rows, c->mem.gsm_rows);
    bng_core_zero_padding(c);
    if (c->idle)
        return 1;
    /* The three in flight at once: one transfer's start-up for all. */
    if (!BNG_IS_DX_ONLY(call))
        stats[0] = bng_hal_dma_get(c->mem.stats_mean, bng_shared_at(job->stats.mean, first, stat), 1, c->channels * stat, 0, 0);
    if (!BNG_IS_REDUCE(call)) {
        stats[1] = bng_hal_dma_get(c->mem.invar, bng_shared_at(job->stats.invar, first, stat), 1, c->channels * stat, 0, 0);
        stats[2] = bng_hal_dma_get(c->mem.scale, bng_shared_at(job->stats.scale, first, stat), 1, c->channels * stat, 0, 0);
    }
    for (i = 0; i < 3; i++)
        bng_hal_dma_wait(stats[i]);
    if (!BNG_IS_DX_ONLY(call))
        bng_step_stats_to_float(dtype, c->channels, c->mem.stats_mean, c->mem.mean);
    return 1;
}

/* The end of a row group's partial sums: into the shared scratch, or alone added to the
 * total at once (the groups come in order). */
static void bng_core_group_done(bng_core *c, size_t row)
{
    const bng_core_layout *mem = &c->mem;
    const size_t max_chunk = c->job->dtype->max_chunk;
    BNG_SHARED float *group;
    bng_hal_dma puts[2];

    if (BNG_ALONE(c->job)) {
        bng_step_fold(c->channels, mem->sum_dy, mem->sum_dyxm, mem->part_dy, mem->part_dyxm);
        return;
    }
    group = c->scratch + row / c->group_rows * 2 * max_chunk;
    puts[0] = bng_hal_dma_put(group, mem->part_dy, 1, c->channels * sizeof(float), 0, 0);
    puts[1] = bng_hal_dma_put(group + max_chunk, mem->part_dyxm, 1, c->channels * sizeof(float), 0, 0);
    bng_hal_dma_wait(puts[0]);
    bng_hal_dma_wait(puts[1]);
}

/* A tile of the chunk: its rows, where they lie in private memory (a streamed tile in
 * tile buffer t, else rows of the resident area) and where pass 2 finds them. Its rows
 * end at a group boundary, at the first row kept in GSM, at the first resident row, or
 * at the slice's end. */
typedef struct {
    size_t row, rows;
    BNG_VMEM unsigned char *x, *dy;
    int streamed;          /* fetched in pass 1 and again in pass 2 (else resident) */
    int kept;              /* streamed, and between the passes in GSM: fetched from there */
} bng_tile_place;

/* The first row kept in GSM; the resident rows follow those. */
static size_t bng_core_gsm_from(const bng_core *c)
{
    return c->end - c->mem.resident_rows - c->mem.gsm_rows;
}

static bng_tile_place bng_core_tile(const bng_core *c, size_t row, unsigned t)
{
    const bng_core_layout *mem = &c->mem;
    const size_t gsm_from = bng_core_gsm_from(c), resident_from = gsm_from + mem->gsm_rows;
    bng_tile_place tile;

    tile.row = row;
    tile.streamed = row < resident_from;
    tile.kept = tile.streamed && row >= gsm_from;
    if (tile.streamed) {
        tile.rows = bng_tile(row, tile.kept ? resident_from : gsm_from, c->group_rows,
                             mem->tile_rows);
        tile.x = mem->x_tiles[t];
        tile.dy = mem->dy_tiles[t];
    } else {
        tile.rows = bng_tile(row, c->end, c->group_rows, mem->tile_rows);
        tile.x = mem->x_resident + (row - resident_from) * c->pitch;
        tile.dy = mem->dy_resident + (row - resident_from) * c->pitch;
    }
    return tile;
}

/* Start the DMA of a tile's rows of x (when with_x) and dy into private memory: from
 * the caller's arrays, or (from_gsm) from their copy in the core's share of GSM (packed
 * rows); handles[0] for x, handles[1] for dy. */
static void bng_core_fetch(const bng_core *c, const bng_tile_place *tile, int with_x, int from_gsm,
                           bng_hal_dma handles[2])
{
    const bng_staged_job *job = c->job;
    const size_t element = job->dtype->element_bytes, channel = job->call.channel;
    const BNG_SHARED void *x, *dy;
    size_t stride;

    if (from_gsm) {
        const size_t at = (tile->row - bng_core_gsm_from(c)) * c->row_bytes;
        x = c->mem.x_gsm + at;
        dy = c->mem.dy_gsm + at;
        stride = c->row_bytes;
    } else {
        const size_t at = tile->row * channel + c->first;
        x = with_x ? bng_shared_at(job->x, at, element) : NULL;    /* dx-only has no x */
        dy = bng_shared_at(job->dy, at, element);
        stride = channel * element;
    }
    handles[0] = with_x ? bng_hal_dma_get(tile->x, x, tile->rows, c->row_bytes, stride, c->pitch)
                        : BNG_HAL_DMA_DONE;
    handles[1] = bng_hal_dma_get(tile->dy, dy, tile->rows, c->row_bytes, stride, c->pitch);
}

#if BNG_HAS_RELU
/* BNG_FLAG_RELU: a tile's dy, just arrived from the caller's array, masked in place by
 * the tile's rows of y (fetched into the y tile and waited at once: with the next
 * tile's two gets and a put in flight, four transfers at most). Once per tile a pass
 * fetches from the caller: the resident rows and those kept in GSM keep the masked dy
 * from pass 1 to pass 2. */
static void bng_core_relu(const bng_core *c, const bng_tile_place *tile)
{
    const bng_staged_job *job = c->job;
    const size_t element = job->dtype->element_bytes, channel = job->call.channel;

    bng_hal_dma_wait(bng_hal_dma_get(c->mem.y_tile,
                                     bng_shared_at((const BNG_SHARED void *)job->call.y,
                                                   tile->row * channel + c->first, element),
                                     tile->rows, c->row_bytes, channel * element, c->pitch));
    BNG_TRACE_KERNEL(job->kernel, "relu_mask", tile->rows, c->channels);
    bng_relu_mask(element, tile->rows, c->channels, tile->dy, c->pitch / element, c->mem.y_tile,
                  c->pitch / element, tile->dy, c->pitch / element);
}

/* Whether a streamed tile's blocks all have their bits in the relu bits area (tiles
 * start at a block boundary of the slice). */
static int bng_core_relu_bits_cover(const bng_core *c, const bng_tile_place *tile)
{
    const size_t end = tile->row - c->begin + tile->rows;

    return (end + BNG_BLOCK_ROWS - 1) / BNG_BLOCK_ROWS <= c->mem.relu_bits_blocks;
}

/* The relu bits of the tile's block at row `row` of the slice. */
static BNG_VMEM unsigned char *bng_core_relu_bits_at(const bng_core *c, size_t row)
{
    return c->mem.relu_bits + (row - c->begin) / BNG_BLOCK_ROWS
                              * BNG_RELU_BITS_BLOCK_BYTES(c->pitch, c->job->dtype->element_bytes);
}

/* Pass 1, a tile that streams from the caller again in pass 2: after bng_core_relu, its
 * blocks' masks from the y tile to the bits area, when they fit there. */
static void bng_core_relu_keep_bits(const bng_core *c, const bng_tile_place *tile)
{
    const size_t element = c->job->dtype->element_bytes, stride = c->pitch / element;
    size_t r;

    if (!tile->streamed || tile->kept || !bng_core_relu_bits_cover(c, tile))
        return;
    BNG_TRACE_KERNEL(c->job->kernel, "relu_bits", tile->rows, c->channels);
    for (r = 0; r < tile->rows; r += BNG_BLOCK_ROWS)
        bng_relu_bits(element, bng_min(BNG_BLOCK_ROWS, tile->rows - r), c->channels,
                      c->mem.y_tile + r * c->pitch, stride,
                      bng_core_relu_bits_at(c, tile->row + r));
}

/* Pass 2, a tile fetched from the caller again: its dy masked by its bits where pass 1
 * kept them, else by y fetched again (bng_core_relu). */
static void bng_core_relu_again(const bng_core *c, const bng_tile_place *tile)
{
    const size_t element = c->job->dtype->element_bytes, stride = c->pitch / element;
    size_t r;

    if (!bng_core_relu_bits_cover(c, tile)) {
        bng_core_relu(c, tile);
        return;
    }
    BNG_TRACE_KERNEL(c->job->kernel, "relu_by_bits", tile->rows, c->channels);
    for (r = 0; r < tile->rows; r += BNG_BLOCK_ROWS)
        bng_relu_mask_by_bits(element, bng_min(BNG_BLOCK_ROWS, tile->rows - r), c->channels,
                              tile->dy + r * c->pitch, stride,
                              bng_core_relu_bits_at(c, tile->row + r), tile->dy + r * c->pitch,
                              stride);
}
#endif

/* Pass 1: start the DMA of a kept tile's rows of x (when with_x: pass 2 reads it) and
 * dy into the core's share of GSM, where pass 2 fetches them. */
static void bng_core_keep(const bng_core *c, const bng_tile_place *tile, int with_x,
                          bng_hal_dma handles[2])
{
    const size_t at = (tile->row - bng_core_gsm_from(c)) * c->row_bytes;

    handles[0] = with_x ? bng_hal_dma_put(c->mem.x_gsm + at, tile->x, tile->rows, c->row_bytes,
                                          c->row_bytes, c->pitch)
                        : BNG_HAL_DMA_DONE;
    handles[1] = bng_hal_dma_put(c->mem.dy_gsm + at, tile->dy, tile->rows, c->row_bytes,
                                 c->row_bytes, c->pitch);
}

/* Pass 1: this core's groups to their partial sums, in row order (the summation
 * order); the next tile arrives while this one is reduced. The streamed rows come
 * first (those kept in GSM go there from their tile buffer once reduced: the buffer is
 * refilled only after), then the resident ones land in the resident area, where pass
 * 2 finds them. */
static void bng_core_sum_rows(bng_core *c)
{
    const bng_core_layout *mem = &c->mem;
    const size_t begin = c->begin, end = c->end, group_rows = c->group_rows;
    const int is_train = c->job->call.is_train;
    bng_hal_dma gets[2][2];
    bng_hal_dma keeps[2][2] = {{BNG_HAL_DMA_DONE, BNG_HAL_DMA_DONE},
                               {BNG_HAL_DMA_DONE, BNG_HAL_DMA_DONE}};
    bng_tile_place tiles[2];
    size_t row;
    unsigned t;

    if (BNG_ALONE(c->job)) {
        bng_step_zero(c->channels, mem->sum_dy);
        bng_step_zero(c->channels, mem->sum_dyxm);
    }
    if (begin < end) {
        tiles[0] = bng_core_tile(c, begin, 0);
        bng_core_fetch(c, &tiles[0], 1, 0, gets[0]);
    }
    for (row = begin, t = 0; row < end; t ^= 1) {
        const size_t n = tiles[t].rows, next = row + n;

        bng_hal_dma_wait(keeps[t ^ 1][0]);
        bng_hal_dma_wait(keeps[t ^ 1][1]);
        if (next < end) {
            tiles[t ^ 1] = bng_core_tile(c, next, t ^ 1);
            bng_core_fetch(c, &tiles[t ^ 1], 1, 0, gets[t ^ 1]);
        }
        bng_hal_dma_wait(gets[t][0]);
        bng_hal_dma_wait(gets[t][1]);
#if BNG_HAS_RELU
        if (BNG_RELU(&c->job->call)) {
            bng_core_relu(c, &tiles[t]);
            bng_core_relu_keep_bits(c, &tiles[t]);
        }
#endif
        if (row % group_rows == 0) {
            bng_step_zero(c->channels, mem->part_dy);
            bng_step_zero(c->channels, mem->part_dyxm);
        }
        bng_rows_reduce(c->job->kernel, n, c->row_channels, c->row_channels, tiles[t].x,
                        tiles[t].dy, mem->mean, mem->part_dy, mem->part_dyxm);
        if (next == end || next % group_rows == 0)
            bng_core_group_done(c, row);
        if (tiles[t].kept)
            bng_core_keep(c, &tiles[t], is_train, keeps[t]);
        row = next;
    }
    /* The last tiles' puts into GSM complete at the barrier that follows (a call that
     * keeps rows there is never alone), before the fold reuses their buffers. */
}

/* The padding lanes of `rows` float rows of the chunk at `area` (none on a unified
 * target): zero, before a transfer that leaves them as they are fills the rows. */
static void bng_core_zero_row_padding(const bng_core *c, BNG_VMEM float *area, size_t rows)
{
    size_t r, at;

    for (r = 0; r < rows; r++)
        for (at = c->channels / BNG_V * BNG_V; at < c->row_channels; at += BNG_V)
            bng_vstore(area + r * c->row_channels + at, bng_vzero());
}

/* After the barrier: every core folds all groups in order (the same bits everywhere).
 * The groups' partial sums come from the shared scratch a piece at a time, one
 * transfer for as many groups as the tile buffers hold (free between the passes):
 * rows of part_dy and part_dyxm alternate there as in the scratch. */
static void bng_core_fold(bng_core *c)
{
    const bng_core_layout *mem = &c->mem;
    const size_t max_chunk = c->job->dtype->max_chunk, rc = c->row_channels;
    const size_t piece = BNG_TILE_BUFFERS * mem->tile_bytes / (2 * rc * sizeof(float));
    BNG_VMEM float *area = (BNG_VMEM float *)mem->x_tiles[0];
    size_t g, i;

    bng_step_zero(c->channels, mem->sum_dy);
    bng_step_zero(c->channels, mem->sum_dyxm);
    for (g = 0; g < c->groups; g += piece) {
        const size_t n = bng_min(piece, c->groups - g);

        bng_core_zero_row_padding(c, area, 2 * n);
        bng_hal_dma_wait(bng_hal_dma_get(area, c->scratch + g * 2 * max_chunk, 2 * n,
                                         c->channels * sizeof(float), max_chunk * sizeof(float),
                                         rc * sizeof(float)));
        for (i = 0; i < n; i++)
            bng_step_fold(c->channels, mem->sum_dy, mem->sum_dyxm, area + 2 * i * rc,
                          area + (2 * i + 1) * rc);
    }
}

/* Reduce: the lowest selected core writes the chunk's sums (and, with the first chunk,
 * the count) into the partial-sums buffer. */
static void bng_core_put_sums(bng_core *c)
{
    const bng_staged_job *job = c->job;
    const bng_core_layout *mem = &c->mem;
    const size_t channel = job->call.channel;

    if (c->rank != 0)
        return;
    bng_hal_dma_wait(bng_hal_dma_put(job->sums + c->first, mem->sum_dy, 1, c->channels * sizeof(float), 0, 0));
    bng_hal_dma_wait(bng_hal_dma_put(job->sums + channel + c->first, mem->sum_dyxm, 1, c->channels * sizeof(float), 0, 0));
    if (c->first == 0) {
        size_t i;
        /* The count's limbs into part_dy (free after the fold: it holds a vector per
         * limb), then one float put each. */
        bng_step_count(job->call.batch, mem->part_dy);
        for (i = 0; i < BNG_SUMS_COUNT_LIMBS; i++)
            bng_hal_dma_wait(bng_hal_dma_put(job->sums + 2 * channel + i, mem->part_dy + i * BNG_V, 1, sizeof(float), 0, 0));
    }
}

/* Apply: the chunk's global sums from the partial-sums buffer. */
static void bng_core_get_sums(bng_core *c)
{
    const bng_staged_job *job = c->job;

    bng_hal_dma_wait(bng_hal_dma_get(c->mem.sum_dy, job->sums + c->first, 1, c->channels * sizeof(float), 0, 0));
    bng_hal_dma_wait(bng_hal_dma_get(c->mem.sum_dyxm, job->sums + job->call.channel + c->first, 1, c->channels * sizeof(float), 0, 0));
}

/* Every core computes the dx coefficients; the lowest selected core writes dbias and
 * dscale (accumulating: onto what they held, which it reads first). */
static void bng_core_finalize(bng_core *c)
{
    const bng_staged_job *job = c->job;
    const bng_core_layout *mem = &c->mem;
    const size_t stat = job->dtype->stats_bytes, bytes = c->channels * stat;
    const int accumulate = BNG_ACCUMULATES(&job->call) && c->rank == 0;
    bng_hal_dma both[2];

    if (accumulate) {
        both[0] = bng_hal_dma_get(mem->dbias, bng_shared_at(job->stats.dbias, c->first, stat), 1, bytes, 0, 0);
        both[1] = bng_hal_dma_get(mem->dscale, bng_shared_at(job->stats.dscale, c->first, stat), 1, bytes, 0, 0);
        bng_hal_dma_wait(both[0]);
        bng_hal_dma_wait(both[1]);
    }
    bng_step_finalize(job->dtype, c->channels, job->call.m, accumulate, mem->invar, mem->scale,
                      mem->sum_dy, mem->sum_dyxm, mem->dbias, mem->dscale, mem->gain,
                      mem->dy_mean, mem->slope);
    if (c->rank == 0) {
        both[0] = bng_hal_dma_put(bng_shared_at_mut(job->stats.dbias, c->first, stat), mem->dbias, 1, bytes, 0, 0);
        both[1] = bng_hal_dma_put(bng_shared_at_mut(job->stats.dscale, c->first, stat), mem->dscale, 1, bytes, 0, 0);
        bng_hal_dma_wait(both[0]);
        bng_hal_dma_wait(both[1]);
    }
}

/* The k-th row of pass 2's order: the resident rows first (already in private memory,
 * their dx goes out while the next tile arrives), then those kept in GSM, then the
 * others. dx rows are independent: any order gives the same bits. */
static size_t bng_core_dx_row(const bng_core *c, size_t k)
{
    const size_t resident = c->mem.resident_rows, kept = c->mem.gsm_rows;
    const size_t gsm_from = bng_core_gsm_from(c);

    if (k < resident)
        return c->end - resident + k;
    k -= resident;
    return k < kept ? gsm_from + k : c->begin + (k - kept);
}

/* Pass 2: dx for this core's rows, in place over the dy rows in private memory, put
 * back while the next tile arrives. A tile buffer is refilled only once its last put
 * completed. */
static void bng_core_dx(bng_core *c)
{
    const bng_staged_job *job = c->job;
    const bng_core_layout *mem = &c->mem;
    const size_t slice = c->end - c->begin;
    const size_t element = job->dtype->element_bytes, channel = job->call.channel;
    const int is_train = job->call.is_train;
    bng_hal_dma gets[2][2], puts[2] = {BNG_HAL_DMA_DONE, BNG_HAL_DMA_DONE};
    bng_tile_place tiles[2];
    size_t k;
    unsigned t;

    if (slice > 0) {
        tiles[0] = bng_core_tile(c, bng_core_dx_row(c, 0), 0);
        if (tiles[0].streamed)
            bng_core_fetch(c, &tiles[0], is_train, tiles[0].kept, gets[0]);
    }
    for (k = 0, t = 0; k < slice; t ^= 1) {
        const size_t row = tiles[t].row, n = tiles[t].rows;

        k += n;
        if (k < slice) {
            tiles[t ^ 1] = bng_core_tile(c, bng_core_dx_row(c, k), t ^ 1);
            if (tiles[t ^ 1].streamed) {
                bng_hal_dma_wait(puts[t ^ 1]);
                bng_core_fetch(c, &tiles[t ^ 1], is_train, tiles[t ^ 1].kept, gets[t ^ 1]);
            }
        }
        if (tiles[t].streamed) {
            bng_hal_dma_wait(gets[t][0]);
            bng_hal_dma_wait(gets[t][1]);
#if BNG_HAS_RELU
            /* a tile kept in GSM holds the dy pass 1 masked (so do the resident ones) */
            if (BNG_RELU(&job->call) && !tiles[t].kept)
                bng_core_relu_again(c, &tiles[t]);
#endif
        }
        bng_rows_dx(job->kernel, is_train, n, c->row_channels, c->row_channels, tiles[t].x,
                    tiles[t].dy, tiles[t].dy, mem->mean, mem->gain, mem->dy_mean, mem->slope, 0);
        bng_hal_dma_wait(puts[t]);
        puts[t] = bng_hal_dma_put(bng_shared_at_mut(job->dx, row * channel + c->first, element),
                                  tiles[t].dy, n, c->row_bytes, channel * element, c->pitch);
    }
    bng_hal_dma_wait(puts[0]);
    bng_hal_dma_wait(puts[1]);
}

/* One core's part of a staged call, chunk by chunk: the steps of the call's op. */
static void bng_core_steps(unsigned core, void *arg)
{
    const bng_staged_job *job = arg;
    const bng_call *call = &job->call;
    const size_t chunk = bng_chunk(job->dtype, job->kernel);
    bng_core c;
    size_t first, slot = 0;

    bng_core_rows(&c, job, core);
    for (first = 0; first < call->channel; first += chunk, slot ^= 1) {
        if (!bng_core_chunk(&c, first, slot))
            return;
        if (c.idle) {
            /* More cores than row groups: this one only meets the others at the
             * chunk's barrier (the one below, of the calls that sum rows or apply). */
            if (BNG_SUMS_ROWS(call) || BNG_IS_APPLY(call))
                bng_hal_barrier();
            continue;
        }
        if (BNG_SUMS_ROWS(call)) {
            bng_core_sum_rows(&c);
            if (!BNG_ALONE(job)) {
                bng_hal_barrier();
                bng_core_fold(&c);
            }
        }
        if (BNG_IS_REDUCE(call)) {
            bng_core_put_sums(&c);
            continue;
        }
        if (BNG_IS_DX_ONLY(call)) {
            bng_step_gain(job->dtype, c.channels, c.mem.invar, c.mem.scale, c.mem.gain);
        } else {
            if (BNG_IS_APPLY(call)) {
                bng_core_get_sums(&c);
                /* dbias and dscale may be the very array of mean, invar or scale: every
                 * core has the chunk's copy before the lowest one writes them. */
                if (!BNG_ALONE(job))
                    bng_hal_barrier();
            }
            bng_core_finalize(&c);
        }
        bng_core_dx(&c);
    }
}

/* A staged job's storage type, kernel and arrays; the rest is the caller's to set.
 * The ABI's x, dy, dx, per-channel and sums pointers are where the DMA's "shared" side
 * reads and writes (_s: shared memory; _p on a split target: the caller's memories):
 * they take the qualifier here, once, and keep it through the HAL. */
static void bng_job_init(bng_staged_job *job, const bng_dtype_config *dtype,
                         const bng_kernel *kernel, const void *x, const void *dy, void *dx,
                         const bng_stats *stats, float *sums)
{
    job->dtype = dtype;
    job->kernel = kernel;
    job->x = (const BNG_SHARED void *)x;
    job->dy = (const BNG_SHARED void *)dy;
    job->dx = (BNG_SHARED void *)dx;
    job->stats.mean = (const BNG_SHARED void *)stats->mean;
    job->stats.invar = (const BNG_SHARED void *)stats->invar;
    job->stats.scale = (const BNG_SHARED void *)stats->scale;
    job->stats.dbias = (BNG_SHARED void *)stats->dbias;
    job->stats.dscale = (BNG_SHARED void *)stats->dscale;
    job->sums = (BNG_SHARED float *)sums;
    job->alone = 0;
    job->workspace = NULL;
    job->workspace_bytes = 0;
}

/* ---- private storage: _p on the caller's memory, one core ----
 *
 * Where the memory model puts _p's arrays decides how it runs a checked call
 * (bng_p_run): BNG_OK, or on a split target BNG_ENOMEM when the HAL had no workspace
 * (nothing written). `sums`: the partial-sums buffer (reduce: written, apply: read),
 * else NULL. */
#if BNG_SPLIT_MEMORY
/* Split: _p's arrays are in the calling core's vector memory, which the driver's
 * scalar code may not touch and whose rows a kernel may not read part of a vector of.
 * _p stages them like _s, through padded tiles in a workspace of that memory
 * (bng_hal_p_workspace), on the calling core alone: the caller's arrays are reached by
 * DMA only; the partial-sums buffer is in scalar memory with the parameter block. */
static int bng_p_run(const bng_dtype_config *dtype, const bng_kernel *kernel,
                     const bng_call *call, const void *x, const void *dy, void *dx,
                     const bng_stats *stats, float *sums)
{
    bng_staged_job job;

    bng_job_init(&job, dtype, kernel, x, dy, dx, stats, sums);
    job.call = *call;
    job.mask = 1u;      /* one core: rank 0 of one, all row groups */
    job.alone = 1;
    job.workspace = bng_hal_p_workspace(&job.workspace_bytes);
    if (job.workspace == NULL)
        return BNG_ENOMEM;
    if (job.workspace_bytes < BNG_P_WORKSPACE_BYTES) {
        bng_hal_p_workspace_release(job.workspace);     /* a HAL that broke its contract */
        return BNG_ENOMEM;
    }
    bng_core_steps(0, &job);
    bng_hal_p_workspace_release(job.workspace);
    return BNG_OK;
}
#else
/* Unified: _p works on the caller's arrays where they are. Its float arrays of one
 * chunk are on the stack: BNG_STACK_FLOAT_ARRAYS of the widest chunk, the figure the
 * generator and make report give. */
typedef struct {
    float mean[BNG_MAX_CHUNK], sum_dy[BNG_MAX_CHUNK], sum_dyxm[BNG_MAX_CHUNK];
    float part_dy[BNG_MAX_CHUNK], part_dyxm[BNG_MAX_CHUNK];
    float gain[BNG_MAX_CHUNK], dy_mean[BNG_MAX_CHUNK], slope[BNG_MAX_CHUNK];
} bng_p_stack;
typedef char bng_stack_agrees[sizeof(bng_p_stack) == BNG_STACK_FLOAT_ARRAYS * BNG_MAX_CHUNK * sizeof(float) ? 1 : -1];

/* Element `index` of an array of `bytes`-sized elements. */
static const void *bng_at(const void *base, size_t index, size_t bytes)
{
    return (const unsigned char *)base + index * bytes;
}

static void *bng_at_mut(void *base, size_t index, size_t bytes)
{
    return (unsigned char *)base + index * bytes;
}

/* Pass 1's ukernel on the caller's `rows` rows from element `at` (a block boundary)
 * into the partial sums (of dy masked by y with BNG_FLAG_RELU; the keep bits then go to
 * `keep_bits`, dx when pass 2 reads them there, else all into one row of the stack's
 * slope, which finalize writes afterwards). */
static void bng_p_rows_reduce(const bng_kernel *kernel, const bng_call *call, size_t element,
                              size_t rows, size_t channels, size_t at, const void *x,
                              const void *dy, void *keep_bits, bng_p_stack *s)
{
#if BNG_HAS_RELU
    if (BNG_RELU(call)) {
        bng_rows_reduce_relu(kernel, rows, channels, call->channel, bng_at(x, at, element),
                             bng_at(dy, at, element), bng_at(call->y, at, element), s->mean,
                             s->part_dy, s->part_dyxm,
                             keep_bits != NULL ? bng_at_mut(keep_bits, at, element) : s->slope,
                             keep_bits != NULL ? call->channel : 0);
        return;
    }
#else
    (void)keep_bits;
#endif
    bng_rows_reduce(kernel, rows, channels, call->channel, bng_at(x, at, element),
                    bng_at(dy, at, element), s->mean, s->part_dy, s->part_dyxm);
}

/* Pass 2's ukernel on all the caller's rows of the chunk at channel `first` (dy masked
 * by y with BNG_FLAG_RELU, or by the keep bits pass 1 left in dx with `keep_bits`). */
static void bng_p_rows_dx(const bng_kernel *kernel, const bng_call *call, size_t element,
                          size_t first, size_t channels, const void *x, const void *dy,
                          void *dx, int keep_bits, const bng_p_stack *s, int stream)
{
    const void *x_at = call->is_train ? bng_at(x, first, element) : NULL;

#if BNG_HAS_RELU
    if (keep_bits) {
        bng_rows_dx_keeps(kernel, call->is_train, call->batch, channels, call->channel, x_at,
                          bng_at(dy, first, element), bng_at_mut(dx, first, element), s->mean,
                          s->gain, s->dy_mean, s->slope, stream);
        return;
    }
    if (BNG_RELU(call)) {
        bng_rows_dx_relu(kernel, call->is_train, call->batch, channels, call->channel, x_at,
                         bng_at(dy, first, element), bng_at(call->y, first, element),
                         bng_at_mut(dx, first, element), s->mean, s->gain, s->dy_mean,
                         s->slope, stream);
        return;
    }
#else
    (void)keep_bits;
#endif
    bng_rows_dx(kernel, call->is_train, call->batch, channels, call->channel, x_at,
                bng_at(dy, first, element), bng_at_mut(dx, first, element), s->mean, s->gain,
                s->dy_mean, s->slope, stream);
}

/* Pass 1 on the caller's memory: every row group of the chunk to its partial sums,
 * folded in group order into sum_dy and sum_dyxm. */
static void bng_p_sum_rows(const bng_kernel *kernel, const bng_call *call, size_t element,
                           size_t first, size_t channels, const void *x, const void *dy,
                           void *keep_bits, float *sum_dy, float *sum_dyxm, bng_p_stack *s)
{
    const size_t batch = call->batch, channel = call->channel;
    const size_t group_rows = bng_group_rows(batch);
    size_t row;

    bng_step_zero(channels, sum_dy);
    bng_step_zero(channels, sum_dyxm);
    for (row = 0; row < batch; row += group_rows) {
        const size_t rows = bng_min(group_rows, batch - row), at = row * channel + first;

        bng_step_zero(channels, s->part_dy);
        bng_step_zero(channels, s->part_dyxm);
        bng_p_rows_reduce(kernel, call, element, rows, channels, at, x, dy, keep_bits, s);
        bng_step_fold(channels, sum_dy, sum_dyxm, s->part_dy, s->part_dyxm);
    }
}

/* Whether pass 1 of a fused ReLU call leaves the keep bits in dx for pass 2: a call that
 * sums its rows and then writes dx, where dx is neither x nor dy (pass 2 reads x and dy
 * in every row, the rows that hold the words too). A word covers rows that lie in one
 * block (and so in one row group). */
typedef char bng_keep_words_in_blocks[BNG_BLOCK_ROWS % BNG_KEEP_ROWS(sizeof(float)) == 0
                                       ? 1 : -1];
static int bng_p_keeps_in_dx(const bng_call *call, const void *x, const void *dy,
                             const void *dx)
{
    return BNG_RELU(call) && BNG_SUMS_ROWS(call) && !BNG_IS_REDUCE(call) && dx != x
           && dx != dy;
}

/* Chunks are independent: each is summed, finalized and written in turn; dx in one
 * pass over all rows. reduce sums straight into the caller's buffer, apply finalizes
 * from it. */
static int bng_p_run(const bng_dtype_config *dtype, const bng_kernel *kernel,
                     const bng_call *call, const void *x, const void *dy, void *dx,
                     const bng_stats *stats, float *sums)
{
    const size_t chunk = bng_chunk(dtype, kernel), channel = call->channel;
    const size_t element = dtype->element_bytes, stat = dtype->stats_bytes;
    const int stream = call->batch * channel * element >= BNG_STREAM_DX_BYTES;
    const int keep_bits = bng_p_keeps_in_dx(call, x, dy, dx);
    bng_p_stack s;
    size_t first;

    for (first = 0; first < channel; first += chunk) {
        const size_t channels = bng_min(chunk, channel - first);
        float *sum_dy = sums != NULL ? sums + first : s.sum_dy;
        float *sum_dyxm = sums != NULL ? sums + channel + first : s.sum_dyxm;

        if (BNG_IS_DX_ONLY(call)) {
            bng_step_gain(dtype, channels, bng_at(stats->invar, first, stat),
                          bng_at(stats->scale, first, stat), s.gain);
        } else {
            bng_step_stats_to_float(dtype, channels, bng_at(stats->mean, first, stat), s.mean);
            if (BNG_SUMS_ROWS(call))
                bng_p_sum_rows(kernel, call, element, first, channels, x, dy,
                               keep_bits ? dx : NULL, sum_dy, sum_dyxm, &s);
            if (BNG_IS_REDUCE(call))
                continue;
            bng_step_finalize(dtype, channels, call->m, BNG_ACCUMULATES(call),
                              bng_at(stats->invar, first, stat), bng_at(stats->scale, first, stat),
                              sum_dy, sum_dyxm, bng_at_mut(stats->dbias, first, stat),
                              bng_at_mut(stats->dscale, first, stat), s.gain, s.dy_mean, s.slope);
        }
        bng_p_rows_dx(kernel, call, element, first, channels, x, dy, dx, keep_bits, &s, stream);
    }
    if (BNG_IS_REDUCE(call))
        bng_step_count(call->batch, sums + 2 * channel);
    return BNG_OK;
}
#endif

#if BNG_HAS_NCHW
/* ---- channel axis 1: NCHW (BNG_FLAG_NCHW) ----
 *
 * x, dy and dx are x[batch][channel][spatial]: a channel is `batch` planes of `spatial`
 * contiguous elements, channel * spatial elements apart, and its sums run over the
 * batch * spatial elements in a fixed order that depends only on batch and spatial:
 *   1. a plane's vectors (of the dtype's lanes) in blocks of BNG_NCHW_BLOCK_VECTORS,
 *      each block summed lane-wise from zero in registers and added to the plane's
 *      lane sums, which start at zero; the plane's last spatial % lanes elements each
 *      added, from zero, to its lane's sum (the ukernel, bng_nchw_kernel);
 *   2. the plane's lane sums added pairwise, halving (lane i += lane i + lanes/2, ...,
 *      down to lane 0): the plane's sum;
 *   3. the planes' sums in section 6's order over batch, a plane as a row: blocks of
 *      BNG_BLOCK_ROWS planes from zero, each added to its group's sum, the groups of
 *      bng_group_rows(batch) planes added to the total in order.
 * Steps 2 and 3 are this scalar code, the same for _p and _s. A plane _s streams in
 * pieces (each starting at a block boundary) runs step 1 piece by piece: the same
 * operations in the same order. _s splits the channels across the selected cores, each
 * owning whole channels (no core waits for another); _p runs them in order on the
 * caller's arrays. The generator refuses nchw on a split target. */
#if BNG_SPLIT_MEMORY
#error "nchw needs a unified memory: generator/validate.py refuses it on a split target"
#endif
/* The widest vector bng_vec.h has: the lane sums' arrays. */
#define BNG_NCHW_MAX_LANES 64

/* One channel's sums as steps 2 and 3 build them, plane by plane. */
typedef struct {
    size_t batch, group_rows, lanes;
    float total_dy, total_dyxm;      /* the groups so far */
    float group_dy, group_dyxm;      /* this group's blocks */
    float block_dy, block_dyxm;      /* this block's planes */
    float lane_dy[BNG_NCHW_MAX_LANES], lane_dyxm[BNG_NCHW_MAX_LANES];   /* this plane's */
} bng_nchw_sums;

/* One channel's coefficients: its mean, sums, and dx = gain * ((dy - dy_mean) -
 * (x - mean) * slope). */
typedef struct {
    float mean, sum_dy, sum_dyxm, gain, dy_mean, slope;
} bng_nchw_channel;

static void bng_nchw_sums_start(bng_nchw_sums *s, size_t batch, size_t lanes)
{
    s->batch = batch;
    s->group_rows = bng_group_rows(batch);
    s->lanes = lanes;
    s->total_dy = s->total_dyxm = 0.0f;
}

static void bng_nchw_plane_start(bng_nchw_sums *s)
{
    size_t i;
    for (i = 0; i < s->lanes; i++)
        s->lane_dy[i] = s->lane_dyxm[i] = 0.0f;
}

/* Step 2: the lane sums, pairwise, halving. */
static float bng_nchw_lanes_sum(float *lane, size_t lanes)
{
    size_t width, i;

    for (width = lanes / 2; width != 0; width /= 2)
        for (i = 0; i < width; i++)
            lane[i] = lane[i] + lane[i + width];
    return lane[0];
}

/* Step 3: plane `plane`'s sum into its block, a finished block into its group, a
 * finished group into the total (groups are whole blocks). */
static void bng_nchw_plane_done(bng_nchw_sums *s, size_t plane)
{
    const float dy = bng_nchw_lanes_sum(s->lane_dy, s->lanes);
    const float dyxm = bng_nchw_lanes_sum(s->lane_dyxm, s->lanes);
    const size_t next = plane + 1;

    if (plane % s->group_rows == 0)
        s->group_dy = s->group_dyxm = 0.0f;
    if (plane % BNG_BLOCK_ROWS == 0)
        s->block_dy = s->block_dyxm = 0.0f;
    s->block_dy = s->block_dy + dy;
    s->block_dyxm = s->block_dyxm + dyxm;
    if (next % BNG_BLOCK_ROWS == 0 || next == s->batch) {
        s->group_dy = s->group_dy + s->block_dy;
        s->group_dyxm = s->group_dyxm + s->block_dyxm;
    }
    if (next % s->group_rows == 0 || next == s->batch) {
        s->total_dy = s->total_dy + s->group_dy;
        s->total_dyxm = s->total_dyxm + s->group_dyxm;
    }
}

/* The kernel for a piece of `n` elements at `offset` into a plane: the call's (its
 * extent's, or the generic one) for a whole plane, else the generic one. */
static const bng_nchw_kernel *bng_nchw_piece_kernel(const bng_dtype_config *dtype,
                                                    const bng_nchw_kernel *kernel,
                                                    size_t spatial, size_t offset, size_t n)
{
    return offset == 0 && n == spatial ? kernel : dtype->nchw_kernel_for_spatial(0);
}

/* dx of `n` elements of a plane (x unread in inference, may be NULL). */
static void bng_nchw_dx(const bng_nchw_kernel *kernel, int is_train, size_t n, const void *x,
                        const void *dy, void *dx, const bng_nchw_channel *ch, int stream)
{
    if (is_train)
        kernel->dx_train(n, x, dy, dx, ch->mean, ch->gain, ch->dy_mean, ch->slope, stream);
    else
        kernel->dx_infer(n, dy, dx, ch->gain, stream);
}

/* The channel's dx coefficients from its sums, and dbias, dscale (the call's arrays at
 * the channel, or its copies in private memory): bng_step_finalize on one channel. */
static void bng_nchw_finalize(const bng_dtype_config *dtype, const bng_call *call,
                              const void *invar, const void *scale, void *dbias, void *dscale,
                              bng_nchw_channel *ch)
{
    bng_step_finalize(dtype, 1, call->m, BNG_ACCUMULATES(call), invar, scale, &ch->sum_dy,
                      &ch->sum_dyxm, dbias, dscale, &ch->gain, &ch->dy_mean, &ch->slope);
}

#if BNG_HAS_RELU
/* bng_nchw_dx on dy masked by y (BNG_FLAG_RELU): the kernel's ReLU ukernels, which _p
 * runs on whole planes of the caller's arrays. */
static void bng_nchw_dx_relu(const bng_nchw_kernel *kernel, int is_train, size_t n,
                             const void *x, const void *dy, const void *y, void *dx,
                             const bng_nchw_channel *ch, int stream)
{
    if (is_train)
        kernel->dx_train_relu(n, x, dy, y, dx, ch->mean, ch->gain, ch->dy_mean, ch->slope,
                              stream);
    else
        kernel->dx_infer_relu(n, dy, y, dx, ch->gain, stream);
}
#endif

/* _p: channel c's sums, its planes straight from the caller's arrays (dy masked by y
 * with BNG_FLAG_RELU). */
static void bng_nchw_p_sum(const bng_dtype_config *dtype, const bng_nchw_kernel *kernel,
                           const bng_call *call, size_t c, const void *x, const void *dy,
                           bng_nchw_channel *ch)
{
    const size_t element = dtype->element_bytes;
    bng_nchw_sums s;
    size_t b;

    bng_nchw_sums_start(&s, call->batch, kernel->lanes);
    for (b = 0; b < call->batch; b++) {
        const size_t at = (b * call->channel + c) * call->spatial;

        bng_nchw_plane_start(&s);
#if BNG_HAS_RELU
        if (BNG_RELU(call))
            kernel->reduce_relu(call->spatial, bng_at(x, at, element), bng_at(dy, at, element),
                                bng_at(call->y, at, element), ch->mean, s.lane_dy, s.lane_dyxm);
        else
#endif
            kernel->reduce(call->spatial, bng_at(x, at, element), bng_at(dy, at, element),
                           ch->mean, s.lane_dy, s.lane_dyxm);
        bng_nchw_plane_done(&s, b);
    }
    ch->sum_dy = s.total_dy;
    ch->sum_dyxm = s.total_dyxm;
}

/* _p in NCHW: channel by channel, its sums (or apply's from the buffer), finalize, dx
 * plane by plane. */
static int bng_nchw_p_run(const bng_dtype_config *dtype, const bng_call *call, const void *x,
                          const void *dy, void *dx, const bng_stats *stats, float *sums)
{
    const bng_nchw_kernel *kernel = dtype->nchw_kernel_for_spatial(call->spatial);
    const size_t element = dtype->element_bytes, stat = dtype->stats_bytes;
    const size_t channel = call->channel, spatial = call->spatial;
    const int stream = call->batch * channel * spatial * element >= BNG_STREAM_DX_BYTES;
    size_t c, b;

    for (c = 0; c < channel; c++) {
        bng_nchw_channel ch;

        if (BNG_IS_DX_ONLY(call)) {
            bng_step_gain(dtype, 1, bng_at(stats->invar, c, stat), bng_at(stats->scale, c, stat),
                          &ch.gain);
        } else {
            bng_step_stats_to_float(dtype, 1, bng_at(stats->mean, c, stat), &ch.mean);
            if (BNG_SUMS_ROWS(call)) {
                bng_nchw_p_sum(dtype, kernel, call, c, x, dy, &ch);
            } else {
                ch.sum_dy = sums[c];
                ch.sum_dyxm = sums[channel + c];
            }
            if (BNG_IS_REDUCE(call)) {
                sums[c] = ch.sum_dy;
                sums[channel + c] = ch.sum_dyxm;
                continue;
            }
            bng_nchw_finalize(dtype, call, bng_at(stats->invar, c, stat),
                              bng_at(stats->scale, c, stat), bng_at_mut(stats->dbias, c, stat),
                              bng_at_mut(stats->dscale, c, stat), &ch);
        }
        for (b = 0; b < call->batch; b++) {
            const size_t at = (b * channel + c) * spatial;
            const void *x_at = call->is_train ? bng_at(x, at, element) : NULL;
#if BNG_HAS_RELU
            if (BNG_RELU(call)) {
                bng_nchw_dx_relu(kernel, call->is_train, spatial, x_at, bng_at(dy, at, element),
                                 bng_at(call->y, at, element), bng_at_mut(dx, at, element), &ch,
                                 stream);
                continue;
            }
#endif
            bng_nchw_dx(kernel, call->is_train, spatial, x_at, bng_at(dy, at, element),
                        bng_at_mut(dx, at, element), &ch, stream);
        }
    }
    if (BNG_IS_REDUCE(call))
        bng_step_count(call->batch * spatial, sums + 2 * channel);
    else
        kernel->dx_end(stream);    /* one fence for the call's planes */
    return BNG_OK;
}

/* _s in NCHW: a core's per-channel values, at the start of its private memory (each of
 * the stats type in a float's room), then four tile buffers: x and dy, double-buffered;
 * in a call that reads a channel twice, then the resident area, where the channel's
 * last tiles of x and dy stay from pass 1 to pass 2. */
typedef struct {
    float mean, invar, scale, dbias, dscale;
    float sums[2];                        /* reduce: out; apply: in */
    float limbs[BNG_SUMS_COUNT_LIMBS];    /* reduce: the count */
} bng_nchw_area;

/* A tile: planes [plane, plane + planes) of the channel, `n` elements of each from
 * `offset`: whole planes (offset 0, n = spatial) when one fits a tile buffer, else one
 * piece of one plane, from a block boundary. */
typedef struct {
    size_t plane, planes, offset, n;
} bng_nchw_tile;

/* One core's part of an NCHW _s call. */
typedef struct {
    const bng_staged_job *job;
    const bng_nchw_kernel *kernel;
    size_t begin, end;                    /* its channels */
    int lowest;                           /* the lowest selected core: writes the count */
    bng_nchw_area *area;
    unsigned char *x_tiles[2], *dy_tiles[2];
    size_t tile_planes, piece;            /* planes of a tile, elements of a piece */
    unsigned char *y_tile;                /* BNG_FLAG_RELU: a tile of y, masking dy's */
    unsigned char *x_resident, *dy_resident;
    size_t resident_from;                 /* a channel's element (plane * spatial + offset)
                                             from which its tiles stay: batch * spatial
                                             for none */
} bng_nchw_core;

/* The k-th selected core of `cores` takes the k-th of as many runs of channels, the
 * first channel % cores runs one channel longer (no multiplication: channel * k could
 * pass a 32-bit size_t). */
static void bng_nchw_core_channels(bng_nchw_core *k, size_t channel, unsigned rank,
                                   unsigned cores)
{
    const size_t base = channel / cores, extra = channel % cores;

    k->begin = base * rank + bng_min(rank, extra);
    k->end = k->begin + base + (rank < extra ? 1 : 0);
}

/* Where the resident tiles of a channel of `total` elements (batch * spatial, in
 * plane order) start: at the first tile boundary from which at most `fit` elements
 * follow. A tile boundary is a plane's start (every tile_planes planes when a tile
 * holds whole planes) or, when it holds pieces, every piece within a plane. */
static size_t bng_nchw_resident_from(size_t total, size_t spatial, size_t tile_planes,
                                     size_t piece, size_t fit)
{
    const size_t need = total > fit ? total - fit : 0;
    size_t plane, offset;

    if (piece == spatial) {
        const size_t tile = tile_planes * spatial;
        return bng_min((need + tile - 1) / tile * tile, total);
    }
    plane = need / spatial;
    offset = (need % spatial + piece - 1) / piece * piece;
    return offset < spatial ? plane * spatial + offset : (plane + 1) * spatial;
}

/* Lay out private memory: the area, four tile buffers (a fifth for y with
 * BNG_FLAG_RELU); a tile holds as many whole planes as fit, or a piece of a plane of
 * whole blocks (generator/validate.py checks that a buffer holds one block). In a call
 * that reads a channel twice (`keeps`) the buffers are no larger than
 * BNG_STREAM_TILE_BYTES (and one block at least), and what they leave, halved, holds x
 * and dy of the channel's last tiles (generator/plan.py computes the same numbers,
 * TargetPlan.nchw_layout). */
static void bng_nchw_core_layout(bng_nchw_core *k, unsigned char *base, size_t bytes, int keeps)
{
    const bng_staged_job *job = k->job;
    const size_t element = job->dtype->element_bytes, spatial = job->call.spatial;
    const size_t block = BNG_NCHW_BLOCK_VECTORS * k->kernel->lanes;
    const size_t buffers = BNG_TILE_BUFFERS + (BNG_RELU(&job->call) ? 1 : 0);
    unsigned char *next = base;
    size_t quarter, fit, half_rest;

    k->area = bng_take(&next, sizeof(bng_nchw_area));
    quarter = (bytes - (size_t)(next - base)) / buffers / BNG_ALIGN * BNG_ALIGN;
    if (keeps)
        quarter = bng_min(quarter, BNG_ALIGN_UP(block * element > BNG_STREAM_TILE_BYTES
                                                    ? block * element : BNG_STREAM_TILE_BYTES));
    fit = quarter / element;
    k->tile_planes = spatial <= fit ? fit / spatial : 1;
    k->piece = spatial <= fit ? spatial : fit / block * block;
    k->x_tiles[0] = bng_take(&next, quarter);
    k->x_tiles[1] = bng_take(&next, quarter);
    k->dy_tiles[0] = bng_take(&next, quarter);
    k->dy_tiles[1] = bng_take(&next, quarter);
    k->y_tile = BNG_RELU(&job->call) ? bng_take(&next, quarter) : NULL;
    half_rest = (bytes - (size_t)(next - base)) / 2 / BNG_ALIGN * BNG_ALIGN;
    k->x_resident = next;
    k->dy_resident = next + half_rest;
    k->resident_from = bng_nchw_resident_from(job->call.batch * spatial, spatial, k->tile_planes,
                                              k->piece, keeps ? half_rest / element : 0);
}

/* The tile's first element in the channel, in plane order. */
static size_t bng_nchw_tile_start(const bng_nchw_core *k, const bng_nchw_tile *tile)
{
    return tile->plane * k->job->call.spatial + tile->offset;
}

/* Whether a tile stays in the resident area between the passes. */
static int bng_nchw_resident(const bng_nchw_core *k, const bng_nchw_tile *tile)
{
    return bng_nchw_tile_start(k, tile) >= k->resident_from;
}

/* Where a tile of the channel lies in private memory: its place in the resident area,
 * or tile buffers t. */
static void bng_nchw_place(const bng_nchw_core *k, const bng_nchw_tile *tile, unsigned t,
                           unsigned char **x, unsigned char **dy)
{
    if (bng_nchw_resident(k, tile)) {
        const size_t offset = (bng_nchw_tile_start(k, tile) - k->resident_from)
                              * k->job->dtype->element_bytes;
        *x = k->x_resident + offset;
        *dy = k->dy_resident + offset;
    } else {
        *x = k->x_tiles[t];
        *dy = k->dy_tiles[t];
    }
}

static bng_nchw_tile bng_nchw_first_tile(const bng_nchw_core *k)
{
    bng_nchw_tile tile;

    tile.plane = 0;
    tile.planes = bng_min(k->tile_planes, k->job->call.batch);
    tile.offset = 0;
    tile.n = bng_min(k->piece, k->job->call.spatial);
    return tile;
}

/* The tile after `tile`: the plane's next piece, else the next planes; 0 after the last. */
static int bng_nchw_next_tile(const bng_nchw_core *k, const bng_nchw_tile *tile,
                              bng_nchw_tile *next)
{
    const size_t spatial = k->job->call.spatial, batch = k->job->call.batch;

    *next = *tile;
    if (tile->offset + tile->n < spatial) {
        next->offset = tile->offset + tile->n;
        next->n = bng_min(k->piece, spatial - next->offset);
        return 1;
    }
    next->plane = tile->plane + tile->planes;
    next->planes = bng_min(k->tile_planes, batch - bng_min(next->plane, batch));
    next->offset = 0;
    next->n = bng_min(k->piece, spatial);
    return next->plane < batch;
}

/* Where a tile of channel c starts in the call's arrays, in elements. */
static size_t bng_nchw_tile_at(const bng_nchw_core *k, const bng_nchw_tile *tile, size_t c)
{
    return (tile->plane * k->job->call.channel + c) * k->job->call.spatial + tile->offset;
}

/* Start the DMA of a tile's x (when with_x) and dy into its place (bng_nchw_place,
 * tile buffers t): rows of n elements, a plane apart in the call's arrays, packed in
 * private memory. */
static void bng_nchw_fetch(const bng_nchw_core *k, const bng_nchw_tile *tile, size_t c,
                           unsigned t, int with_x, bng_hal_dma handles[2])
{
    const bng_staged_job *job = k->job;
    const size_t element = job->dtype->element_bytes, at = bng_nchw_tile_at(k, tile, c);
    const size_t row = tile->n * element, stride = job->call.channel * job->call.spatial * element;
    unsigned char *x, *dy;

    bng_nchw_place(k, tile, t, &x, &dy);
    handles[0] = with_x ? bng_hal_dma_get(x, bng_shared_at(job->x, at, element),
                                          tile->planes, row, stride, row)
                        : BNG_HAL_DMA_DONE;
    handles[1] = bng_hal_dma_get(dy, bng_shared_at(job->dy, at, element),
                                 tile->planes, row, stride, row);
}

#if BNG_HAS_RELU
/* BNG_FLAG_RELU: a tile's dy, just arrived from the caller's array, masked in place by
 * its y (fetched into the y tile and waited at once: with the next tile's two gets and
 * a put in flight, four transfers at most), as NHWC's bng_core_relu. A tile resident
 * between the passes keeps the masked dy. */
static void bng_nchw_relu(const bng_nchw_core *k, const bng_nchw_tile *tile, size_t c,
                          unsigned char *dy)
{
    const bng_staged_job *job = k->job;
    const size_t element = job->dtype->element_bytes, row = tile->n * element;
    const size_t stride = job->call.channel * job->call.spatial * element;

    bng_hal_dma_wait(bng_hal_dma_get(k->y_tile,
                                     bng_shared_at((const BNG_SHARED void *)job->call.y,
                                                   bng_nchw_tile_at(k, tile, c), element),
                                     tile->planes, row, stride, row));
    BNG_TRACE_KERNEL(k->kernel, "relu_mask", tile->planes, tile->n);
    bng_relu_mask(element, 1, tile->planes * tile->n, dy, 0, k->y_tile, 0, dy, 0);
}
#endif

/* Pass 1 of channel c: its planes' sums in the order above; the next tile arrives while
 * this one is reduced. */
static void bng_nchw_core_sum(const bng_nchw_core *k, size_t c, bng_nchw_channel *ch)
{
    const bng_staged_job *job = k->job;
    const size_t element = job->dtype->element_bytes, spatial = job->call.spatial;
    bng_nchw_tile tiles[2];
    bng_hal_dma gets[2][2];
    bng_nchw_sums s;
    unsigned t;
    int more;

    bng_nchw_sums_start(&s, job->call.batch, k->kernel->lanes);
    tiles[0] = bng_nchw_first_tile(k);
    bng_nchw_fetch(k, &tiles[0], c, 0, 1, gets[0]);
    for (t = 0, more = 1; more; t ^= 1) {
        const bng_nchw_tile *tile = &tiles[t];
        const bng_nchw_kernel *kernel = bng_nchw_piece_kernel(job->dtype, k->kernel, spatial,
                                                              tile->offset, tile->n);
        unsigned char *x, *dy;
        size_t p;

        more = bng_nchw_next_tile(k, tile, &tiles[t ^ 1]);
        if (more)
            bng_nchw_fetch(k, &tiles[t ^ 1], c, t ^ 1, 1, gets[t ^ 1]);
        bng_hal_dma_wait(gets[t][0]);
        bng_hal_dma_wait(gets[t][1]);
        bng_nchw_place(k, tile, t, &x, &dy);
#if BNG_HAS_RELU
        if (BNG_RELU(&job->call))
            bng_nchw_relu(k, tile, c, dy);
#endif
        BNG_TRACE_KERNEL(kernel, "reduce", tile->planes, tile->n);
        for (p = 0; p < tile->planes; p++) {
            if (tile->offset == 0)
                bng_nchw_plane_start(&s);
            kernel->reduce(tile->n, x + p * tile->n * element, dy + p * tile->n * element,
                           ch->mean, s.lane_dy, s.lane_dyxm);
            if (tile->offset + tile->n == spatial)
                bng_nchw_plane_done(&s, tile->plane + p);
        }
    }
    ch->sum_dy = s.total_dy;
    ch->sum_dyxm = s.total_dyxm;
}

/* Start the DMA of pass 2's tile (x only in training) unless it stayed resident. */
static void bng_nchw_fetch_again(const bng_nchw_core *k, const bng_nchw_tile *tile, size_t c,
                                 unsigned t, bng_hal_dma handles[2])
{
    if (bng_nchw_resident(k, tile)) {
        handles[0] = handles[1] = BNG_HAL_DMA_DONE;
        return;
    }
    bng_nchw_fetch(k, tile, c, t, k->job->call.is_train, handles);
}

/* Pass 2 of channel c: dx in place over the dy tile, put back while the next tile
 * arrives; a tile buffer is refilled only once its put completed. */
static void bng_nchw_core_dx(const bng_nchw_core *k, size_t c, const bng_nchw_channel *ch)
{
    const bng_staged_job *job = k->job;
    const size_t element = job->dtype->element_bytes, spatial = job->call.spatial;
    const size_t stride = job->call.channel * spatial * element;
    const int is_train = job->call.is_train;
    bng_hal_dma gets[2][2], puts[2] = {BNG_HAL_DMA_DONE, BNG_HAL_DMA_DONE};
    bng_nchw_tile tiles[2];
    unsigned t;
    int more;

    tiles[0] = bng_nchw_first_tile(k);
    bng_nchw_fetch_again(k, &tiles[0], c, 0, gets[0]);
    for (t = 0, more = 1; more; t ^= 1) {
        const bng_nchw_tile *tile = &tiles[t];
        const bng_nchw_kernel *kernel = bng_nchw_piece_kernel(job->dtype, k->kernel, spatial,
                                                              tile->offset, tile->n);
        const size_t row = tile->n * element;
        unsigned char *x, *dy;
        size_t p;

        more = bng_nchw_next_tile(k, tile, &tiles[t ^ 1]);
        if (more) {
            bng_hal_dma_wait(puts[t ^ 1]);
            bng_nchw_fetch_again(k, &tiles[t ^ 1], c, t ^ 1, gets[t ^ 1]);
        }
        bng_hal_dma_wait(gets[t][0]);
        bng_hal_dma_wait(gets[t][1]);
        bng_nchw_place(k, tile, t, &x, &dy);
#if BNG_HAS_RELU
        /* a resident tile holds the dy pass 1 masked */
        if (BNG_RELU(&job->call) && !bng_nchw_resident(k, tile))
            bng_nchw_relu(k, tile, c, dy);
#endif
        BNG_TRACE_KERNEL(kernel, is_train ? "dx_train" : "dx_infer", tile->planes, tile->n);
        for (p = 0; p < tile->planes; p++)
            bng_nchw_dx(kernel, is_train, tile->n, x + p * row, dy + p * row, dy + p * row, ch, 0);
        puts[t] = bng_hal_dma_put(bng_shared_at_mut(job->dx, bng_nchw_tile_at(k, tile, c), element),
                                  dy, tile->planes, row, stride, row);
    }
    bng_hal_dma_wait(puts[0]);
    bng_hal_dma_wait(puts[1]);
}

/* Channel c's per-channel values the call reads, into the area (three in flight). */
static void bng_nchw_core_stats(const bng_nchw_core *k, size_t c)
{
    const bng_staged_job *job = k->job;
    const bng_call *call = &job->call;
    const size_t stat = job->dtype->stats_bytes;
    bng_hal_dma gets[3] = {BNG_HAL_DMA_DONE, BNG_HAL_DMA_DONE, BNG_HAL_DMA_DONE};
    size_t i;

    if (!BNG_IS_DX_ONLY(call))
        gets[0] = bng_hal_dma_get(&k->area->mean, bng_shared_at(job->stats.mean, c, stat), 1, stat, 0, 0);
    if (!BNG_IS_REDUCE(call)) {
        gets[1] = bng_hal_dma_get(&k->area->invar, bng_shared_at(job->stats.invar, c, stat), 1, stat, 0, 0);
        gets[2] = bng_hal_dma_get(&k->area->scale, bng_shared_at(job->stats.scale, c, stat), 1, stat, 0, 0);
    }
    for (i = 0; i < 3; i++)
        bng_hal_dma_wait(gets[i]);
}

/* Channel c's sums to and from the partial-sums buffer (reduce: put; apply: get). */
static void bng_nchw_core_sums(const bng_nchw_core *k, size_t c, int put)
{
    const bng_staged_job *job = k->job;
    const size_t channel = job->call.channel;
    bng_hal_dma both[2];

    if (put) {
        both[0] = bng_hal_dma_put(job->sums + c, &k->area->sums[0], 1, sizeof(float), 0, 0);
        both[1] = bng_hal_dma_put(job->sums + channel + c, &k->area->sums[1], 1, sizeof(float), 0, 0);
    } else {
        both[0] = bng_hal_dma_get(&k->area->sums[0], job->sums + c, 1, sizeof(float), 0, 0);
        both[1] = bng_hal_dma_get(&k->area->sums[1], job->sums + channel + c, 1, sizeof(float), 0, 0);
    }
    bng_hal_dma_wait(both[0]);
    bng_hal_dma_wait(both[1]);
}

/* Channel c's dbias and dscale: (accumulating) the old values in, the new ones out. */
static void bng_nchw_core_outputs(const bng_nchw_core *k, size_t c, int put)
{
    const bng_staged_job *job = k->job;
    const size_t stat = job->dtype->stats_bytes;
    bng_hal_dma both[2];

    if (put) {
        both[0] = bng_hal_dma_put(bng_shared_at_mut(job->stats.dbias, c, stat), &k->area->dbias, 1, stat, 0, 0);
        both[1] = bng_hal_dma_put(bng_shared_at_mut(job->stats.dscale, c, stat), &k->area->dscale, 1, stat, 0, 0);
    } else {
        both[0] = bng_hal_dma_get(&k->area->dbias, bng_shared_at(job->stats.dbias, c, stat), 1, stat, 0, 0);
        both[1] = bng_hal_dma_get(&k->area->dscale, bng_shared_at(job->stats.dscale, c, stat), 1, stat, 0, 0);
    }
    bng_hal_dma_wait(both[0]);
    bng_hal_dma_wait(both[1]);
}

/* One channel of an NCHW _s call: the steps of its op. */
static void bng_nchw_core_channel(const bng_nchw_core *k, size_t c)
{
    const bng_staged_job *job = k->job;
    const bng_dtype_config *dtype = job->dtype;
    const bng_call *call = &job->call;
    bng_nchw_channel ch;

    bng_nchw_core_stats(k, c);
    if (BNG_IS_DX_ONLY(call)) {
        bng_step_gain(dtype, 1, &k->area->invar, &k->area->scale, &ch.gain);
    } else {
        bng_step_stats_to_float(dtype, 1, &k->area->mean, &ch.mean);
        if (BNG_SUMS_ROWS(call)) {
            bng_nchw_core_sum(k, c, &ch);
            k->area->sums[0] = ch.sum_dy;
            k->area->sums[1] = ch.sum_dyxm;
        } else {
            bng_nchw_core_sums(k, c, 0);
            ch.sum_dy = k->area->sums[0];
            ch.sum_dyxm = k->area->sums[1];
        }
        if (BNG_IS_REDUCE(call)) {
            bng_nchw_core_sums(k, c, 1);
            return;
        }
        if (BNG_ACCUMULATES(call))
            bng_nchw_core_outputs(k, c, 0);
        bng_nchw_finalize(dtype, call, &k->area->invar, &k->area->scale, &k->area->dbias,
                          &k->area->dscale, &ch);
        bng_nchw_core_outputs(k, c, 1);
    }
    bng_nchw_core_dx(k, c, &ch);
}

/* One core's part of an NCHW _s call: its channels, each whole; reduce's count from the
 * lowest selected core. A core without private memory (bng_core_memory) writes nothing. */
static void bng_nchw_core_steps(unsigned core, void *arg)
{
    const bng_staged_job *job = arg;
    const unsigned cores = bng_popcount(job->mask);
    const unsigned rank = bng_popcount(job->mask & ((1u << core) - 1u));
    bng_nchw_core k;
    size_t bytes, c;
    unsigned char *memory = bng_core_memory(job, core, &bytes);

    if (memory == NULL)
        return;
    k.job = job;
    k.kernel = job->dtype->nchw_kernel_for_spatial(job->call.spatial);
    k.lowest = rank == 0;
    bng_nchw_core_channels(&k, job->call.channel, rank, cores);
    bng_nchw_core_layout(&k, memory, bytes, BNG_READS_TWICE(&job->call));
    for (c = k.begin; c < k.end; c++)
        bng_nchw_core_channel(&k, c);
    if (BNG_IS_REDUCE(&job->call) && k.lowest) {
        bng_step_count(job->call.batch * job->call.spatial, k.area->limbs);
        bng_hal_dma_wait(bng_hal_dma_put(job->sums + 2 * job->call.channel, k.area->limbs, 1,
                                         sizeof k.area->limbs, 0, 0));
    }
}
#else
/* Without nchw no call is NCHW (BNG_IS_NCHW is a constant 0): never reached. */
#define bng_nchw_p_run(dtype, call, x, dy, dx, stats, sums) BNG_OK
#define bng_nchw_core_steps bng_core_steps
#endif

/* ---- the entry points ---- */

int bng_entry_private_kernel(const bng_dtype_config *dtype, const bng_kernel *kernel,
                             size_t batch, size_t channel, int is_train,
                             const void *x, const void *dy, void *dx, const bng_stats *stats)
{
    bng_call call;

    call.op = BNG_OP_FULL;
    call.batch = batch;
    call.channel = channel;
    call.m = (float)batch;
    call.is_train = is_train;
    call.accumulate = 0;
    call.nchw = 0;
    call.spatial = 1;
    call.y = NULL;
    return bng_p_run(dtype, kernel, &call, x, dy, dx, stats, NULL);
}

/* An `op` call of _p on a block: check it, run; the status. */
static int bng_p_block(const bng_dtype_config *dtype, int op, const long long *params,
                       void *x, void *dy, void *dx)
{
    bng_call call;
    int status = bng_params_check(dtype, op, params, x, dy, dx, 0, &call);

    if (status == BNG_OK) {
        const bng_stats stats = bng_params_stats(params);

        status = BNG_IS_NCHW(&call)
                 ? bng_nchw_p_run(dtype, &call, x, dy, dx, &stats, bng_params_sums(op, params))
                 : bng_p_run(dtype, dtype->kernel_for_channels(call.channel), &call, x, dy, dx,
                             &stats, bng_params_sums(op, params));
    }
    return status;
}

/* An `op` call of _p: its status goes to the block. */
static void bng_p_call(const bng_dtype_config *dtype, int op, void *x, void *dy, void *dx,
                       long long *params)
{
    if (params == NULL)
        return;     /* nowhere to report: touch nothing */
    params[BNG_PARAM_STATUS] = bng_p_block(dtype, op, params, x, dy, dx);
}

void bng_entry_private(const bng_dtype_config *dtype, void *x, void *dy, void *dx,
                       long long *params)
{
    bng_p_call(dtype, BNG_OP_FULL, x, dy, dx, params);
}

/* The status of an _s call. In the SPMD launch model every core of the group that
 * computes it writes the same value here, at the same time: harmless on the part, a
 * race by the letter of C11, which ThreadSanitizer is told to accept for this one store
 * (tests/tsan.supp). */
static void bng_report_status(BNG_SHARED long long *shared_params, int status)
{
    shared_params[BNG_PARAM_STATUS] = status;
}

/* An `op` call of _s on `params`, a plain copy of its block: the status (BNG_ENOMEM when
 * the HAL could not reserve a selected core's private memory, in which case no output
 * was touched), or BNG_ENTRY_NOT_SELECTED on a core outside core_mask that the SPMD
 * launch model made call it: it took no part, the selected cores have the outcome. */
static int bng_s_block(const bng_dtype_config *dtype, int op, const long long *params,
                       void *x, void *dy, void *dx, int core_mask)
{
    bng_staged_job job;
    bng_stats stats;
    int status = bng_params_check(dtype, op, params, x, dy, dx, 1, &job.call);

    job.mask = (unsigned)core_mask & BNG_ALL_CORES;
    if (status == BNG_OK && job.mask == 0)
        status = BNG_ECOREMASK;
    if (status != BNG_OK)
        return status;
    stats = bng_params_stats(params);
    bng_job_init(&job, dtype, dtype->kernel_for_channels(job.call.channel), x, dy, dx, &stats,
                 bng_params_sums(op, params));
    switch (bng_hal_parallel(job.mask, BNG_IS_NCHW(&job.call) ? bng_nchw_core_steps : bng_core_steps,
                             &job, sizeof job)) {
    case BNG_HAL_OK:
        return BNG_OK;
    case BNG_HAL_IDLE:
        return BNG_ENTRY_NOT_SELECTED;
    default:
        return BNG_ENOMEM;
    }
}

/* An `op` call of _s. The parameter block lives in shared memory (BNG_SHARED_PARAMS, a
 * BNG_SHARED pointer): its input slots are read once into a plain copy, the status is
 * written back, after bng_hal_parallel returns, on every core that took part (SPMD:
 * the selected ones). */
static void bng_s_call(const bng_dtype_config *dtype, int op, void *x, void *dy, void *dx,
                       int core_mask)
{
    BNG_SHARED long long *shared_params = BNG_SHARED_PARAMS;
    long long params[BNG_SHARED_PARAMS_SLOTS];
    int status, slot;

    /* The input slots the call uses; the status and reserved slots are never read,
     * nor are the extended block's slots by the vendor's call. */
    for (slot = 0; slot < BNG_SHARED_PARAMS_SLOTS; slot++)
        params[slot] = bng_params_reads_slot(op, slot) ? shared_params[slot] : 0;
    status = bng_s_block(dtype, op, params, x, dy, dx, core_mask);
    if (status != BNG_ENTRY_NOT_SELECTED)
        bng_report_status(shared_params, status);
}

void bng_entry_shared(const bng_dtype_config *dtype, void *x, void *dy, void *dx,
                      int core_mask)
{
    bng_s_call(dtype, BNG_OP_FULL, x, dy, dx, core_mask);
}

/* ---- the explicit-argument calls (batchnormgrad.h) ----
 *
 * The vendor's call on a block built from the arguments (bng_params_block) in the
 * caller's frame: the same checks and the same run as the block's calls, and never
 * BNG_SHARED_PARAMS, which firmware may be using for the block's _s. There is no status
 * slot: the status is kept for the core that made the call.
 *
 * BNG_CORE_LOCAL: the storage class of a variable of which every core has its own copy.
 * By default none, for firmware whose cores each have their own copy of the library's
 * static data (as when a core's data section lies in its private memory); firmware
 * whose cores share one copy defines it as its per-core storage. Host builds emulate
 * the cores with threads: thread-local there, but under tcc, which has no thread-local
 * storage and builds only with the host HAL, where the calling thread alone enters the
 * entry points. */
#ifndef BNG_CORE_LOCAL
#if defined(BNG_HOST) && !defined(__TINYC__)
#define BNG_CORE_LOCAL __thread
#else
#define BNG_CORE_LOCAL
#endif
#endif
static BNG_CORE_LOCAL int bng_last_status = BNG_OK;

void bng_entry_private_args(const bng_dtype_config *dtype, void *x, void *dy, void *dx,
                            const bng_stats *stats, int batch, int channel, int is_train)
{
    long long params[BNG_PARAMS_LEN];

    bng_params_block(params, stats, batch, channel, is_train);
    bng_last_status = bng_p_block(dtype, BNG_OP_FULL, params, x, dy, dx);
}

void bng_entry_shared_args(const bng_dtype_config *dtype, void *x, void *dy, void *dx,
                           const bng_stats *stats, int batch, int channel, int is_train,
                           int core_mask)
{
    long long params[BNG_PARAMS_LEN];

    bng_params_block(params, stats, batch, channel, is_train);
    bng_last_status = bng_s_block(dtype, BNG_OP_FULL, params, x, dy, dx, core_mask);
}

int bng_entry_last_status(void)
{
    return bng_last_status;
}

#if BNG_HAS_EXTENSIONS
/* ---- the entry points of batch_norm_grad_ext.h ---- */

void bng_entry_ext_private(const bng_dtype_config *dtype, int op, void *x, void *dy,
                           void *dx, long long *params)
{
    bng_p_call(dtype, op, x, dy, dx, params);
}

void bng_entry_ext_shared(const bng_dtype_config *dtype, int op, void *x, void *dy,
                          void *dx, int core_mask)
{
    bng_s_call(dtype, op, x, dy, dx, core_mask);
}
#endif
