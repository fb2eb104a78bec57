/* SPDX-License-Identifier: Apache-2.0 */
/* Copyright 2026 the batchnormgrad authors */
/* Owns: the interface of the parameter checks of every entry point (bng_params.c): from
 * an ABI parameter block and the data pointers of a call, either the call the driver
 * runs or the status that refuses it. May include: the target's headers. Internal to
 * the library: callers need only batch_norm_grad.h.
 *
 * What it offers:
 *   bng_call               one checked call: its op, shape, the rows its sums cover,
 *                          is_train, accumulate; BNG_IS_* (below) say which steps it
 *                          takes
 *   bng_params_check       an `op` call's block and pointers -> BNG_OK and its
 *                          bng_call, or the first error in the contract's order
 *                          (docs/contract.md, "Status codes")
 *   bng_params_reads_slot  whether an `op` call reads a slot of its block (an _s entry
 *                          copies only those out of shared memory)
 *   bng_params_stats       the block's per-channel arrays
 *   bng_params_block       the vendor's block of a call given by its arguments (the
 *                          explicit-argument calls of batchnormgrad.h), to check and
 *                          run as the block's calls are
 *   bng_params_sums        the block's partial-sums buffer (NULL for an op without one)
 *   BNG_LIMB_MAX           the largest limb of the buffer's row count (read here for
 *                          apply, written by the driver for reduce)
 *   bng_params_fits, bng_span, bng_params_overlap, bng_params_same
 *                          the checks' arithmetic (the address range, two arrays'
 *                          overlap, the very same array), which the training
 *                          forward's checks use too
 * What it needs: the target's constants (bng_kernels.h: the address width, the count's
 * limbs, the extension families the target has), the block's slots (batch_norm_grad.h,
 * and batch_norm_grad_ext.h, whose values bng_params.c asserts) and a storage type's
 * sizes (bng_dtype_config). It calls no HAL and no kernel, and writes nothing but the
 * bng_call it fills (and the block bng_params_block builds).
 */
#ifndef BNG_PARAMS_H
#define BNG_PARAMS_H

#include <stddef.h>
#include <stdint.h>
#include "bng_kernels.h"

/* One checked call: what it computes and on what shape. */
typedef struct {
    int op;                 /* BNG_OP_* (bng_ukernel.h) */
    size_t batch, channel;  /* this call's rows */
    float m;                /* the rows the sums cover, as the formulas use it */
    int is_train;
    int accumulate;         /* dbias and dscale += (BNG_FLAG_ACCUMULATE) */
    int accumulate_dx;      /* dx += (BNG_FLAG_ACCUMULATE_DX) */
    int nchw;               /* channel axis 1 (BNG_FLAG_NCHW): x[batch][channel][spatial] */
    size_t spatial;         /* NCHW: H*W, the elements of a plane (1 otherwise) */
    const void *y;          /* BNG_FLAG_RELU: the forward output, x's type and shape (with
                             * relu_bits its keep bits); else NULL */
    int relu_bits;          /* BNG_FLAG_RELU_BITS: y is the forward's keep bits instead */
} bng_call;

/* Which steps a call takes. A family the target does not have is a constant 0, so
 * the compiler drops its code. */
#define BNG_IS_REDUCE(call) (BNG_HAS_REDUCE && (call)->op == BNG_OP_REDUCE)
#define BNG_IS_APPLY(call) (BNG_HAS_APPLY && (call)->op == BNG_OP_APPLY)
#define BNG_IS_DX_ONLY(call) (BNG_HAS_DX_ONLY && (call)->op == BNG_OP_DX)
/* sums the rows itself (the vendor's call, ext, reduce) */
#define BNG_SUMS_ROWS(call) (!BNG_IS_APPLY(call) && !BNG_IS_DX_ONLY(call))
/* reads its rows twice, to sum them and for dx (the vendor's call, ext): _s may keep
 * them on chip between the two passes */
#define BNG_READS_TWICE(call) (BNG_SUMS_ROWS(call) && !BNG_IS_REDUCE(call))
#define BNG_ACCUMULATES(call) ((BNG_HAS_EXT || BNG_HAS_APPLY) && (call)->accumulate)
/* dx += the gradient (BNG_FLAG_ACCUMULATE_DX) */
#define BNG_ACCUMULATES_DX(call) (BNG_HAS_EXTENSIONS && (call)->accumulate_dx)
#define BNG_IS_NCHW(call) (BNG_HAS_NCHW && (call)->nchw)
/* dy masked by y > 0 (BNG_FLAG_RELU) */
#define BNG_RELU(call) (BNG_HAS_RELU && (call)->y != NULL)
/* ... by the forward's keep bits in y's slot (BNG_FLAG_RELU_BITS) */
#define BNG_RELU_BITS(call) (BNG_RELU(call) && (call)->relu_bits)

/* The partial-sums buffer's row count: limbs of BNG_SUMS_LIMB_BITS bits, least
 * significant first (batch_norm_grad_ext.h). */
#define BNG_LIMB_MAX ((1u << BNG_SUMS_LIMB_BITS) - 1u)

/* The arithmetic of the checks, for the training forward's (bng_fwd_params.c) too:
 * whether batch * channel elements of element_bytes fit BNG_ADDRESS_MAX (both at least
 * 1), whether two arrays share a byte, whether they are the very same. */
int bng_params_fits(unsigned long long batch, unsigned long long channel, size_t element_bytes);
typedef struct {
    uintptr_t start, bytes;      /* where an array starts, and the bytes it spans */
} bng_span;
int bng_params_overlap(bng_span a, bng_span b);
int bng_params_same(bng_span a, bng_span b);     /* the very same array */

/* `shared`: the partial-sums buffer is in shared memory (apply reads its count). */
int bng_params_check(const bng_dtype_config *dtype, int op, const long long *params,
                     const void *x, const void *dy, const void *dx, int shared,
                     bng_call *call);
int bng_params_reads_slot(int op, int slot);
bng_stats bng_params_stats(const long long *params);
/* params[BNG_PARAMS_LEN]: the per-channel arrays, batch, channel and is_train in their
 * slots (an int as the block's long long), the status and reserved slots 0. */
void bng_params_block(long long *params, const bng_stats *stats, int batch, int channel,
                      int is_train);
float *bng_params_sums(int op, const long long *params);

#endif /* BNG_PARAMS_H */
