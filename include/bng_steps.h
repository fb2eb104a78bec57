/* SPDX-License-Identifier: Apache-2.0 */
/* Copyright 2026 the batchnormgrad authors */
/* Owns: what both layouts compute alike (bng_steps.c): the per-channel steps, the calls
 * of a row ukernel, the op's step list, and the small helpers every room uses. May
 * include: bng_job.h; included by every room but the entry points. The steps' vectors
 * are bng_steps_vec.h's, for the rooms that compute with them.
 */
#ifndef BNG_STEPS_H
#define BNG_STEPS_H

#include <stddef.h>
#include <stdint.h>
#include "bng_job.h"

/* make model's trace build includes include/host/bng_hal_trace.h first, whose hooks
 * record each kernel call made on a core of _s (the row ukernels, the ReLU steps, the
 * NCHW ukernels) with the channels of a row as the call runs over them (on a split
 * target the padded row; an NCHW ukernel's, a plane's elements) and, per chunk of a call
 * that reads its rows twice, where the core keeps its rows between the passes (the
 * schedule's choice, which the model reports); everywhere else they are nothing. */
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

static inline size_t bng_min(size_t a, size_t b)
{
    return a < b ? a : b;
}

/* How a _p call's dx ukernels store (BNG_STORE_*, bng_ukernel.h): added to the old dx with
 * BNG_FLAG_ACCUMULATE_DX (a read of dx: nothing to stream), streamed at `dx_bytes` of
 * BNG_STREAM_DX_BYTES or more, else plainly. */
static inline int bng_p_store_mode(const bng_call *call, size_t dx_bytes)
{
    return BNG_ACCUMULATES_DX(call) ? BNG_STORE_ADD
           : dx_bytes >= BNG_STREAM_DX_BYTES ? BNG_STORE_STREAM : BNG_STORE_PLAIN;
}

static inline unsigned bng_popcount(unsigned v)
{
    unsigned n = 0;
    for (; v; v &= v - 1)
        n++;
    return n;
}

/* Element `index` of an array of `bytes`-sized elements: the caller's (_p on a unified
 * target), or one in shared memory (the DMA's side of a staged call). */
static inline const void *bng_at(const void *base, size_t index, size_t bytes)
{
    return (const unsigned char *)base + index * bytes;
}

static inline void *bng_at_mut(void *base, size_t index, size_t bytes)
{
    return (unsigned char *)base + index * bytes;
}

static inline const BNG_SHARED void *bng_shared_at(const BNG_SHARED void *base, size_t index,
                                                   size_t bytes)
{
    return (const BNG_SHARED unsigned char *)base + index * bytes;
}

static inline BNG_SHARED void *bng_shared_at_mut(BNG_SHARED void *base, size_t index, size_t bytes)
{
    return (BNG_SHARED unsigned char *)base + index * bytes;
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
 * caller's, of any length, and NCHW's steps run on one channel. The vector type and its
 * operations at BNG_V lanes: bng_steps_vec.h. */
#if BNG_SPLIT_MEMORY
#define BNG_V BNG_VECTOR_LANES
#else
#define BNG_V 1
#endif

/* Rows per group of a batch (the last may be shorter): a multiple of BNG_BLOCK_ROWS. */
size_t bng_group_rows(size_t batch);
/* Channels one pass handles: a specialized count, or the generic chunk. */
size_t bng_chunk(const bng_dtype_config *dtype, const bng_kernel *kernel);

void bng_step_zero(size_t channels, BNG_VMEM float *a);
/* The padding lanes of `rows` float rows of `channels` at `area`, each `row_channels`
 * long (none on a unified target): zero, before a transfer that leaves them as they
 * are fills the rows. */
void bng_step_pad_rows(size_t channels, size_t row_channels, size_t rows, BNG_VMEM float *area);
/* Fold one row group's partial sums into the total, in group order. */
void bng_step_fold(size_t channels, BNG_VMEM float *sum_dy, BNG_VMEM float *sum_dyxm,
                   const BNG_VMEM float *part_dy, const BNG_VMEM float *part_dyxm);
void bng_step_stats_to_float(const bng_dtype_config *dtype, size_t channels,
                             const BNG_VMEM void *in, BNG_VMEM float *out);
/* dx-only's coefficient: gain = scale * invar, as bng_step_finalize forms it. */
void bng_step_gain(const bng_dtype_config *dtype, size_t channels, const BNG_VMEM void *invar,
                   const BNG_VMEM void *scale, BNG_VMEM float *gain);
/* Per-channel results of the sums over m rows: dbias and dscale (added to what they
 * hold when accumulating), and the dx coefficients
 * dx = gain * ((dy - dy_mean) - (x - mean) * slope). dx uses the float sums, never
 * the rounded outputs. dbias and dscale may be the very array of invar or scale: each
 * vector's inputs are loaded before its outputs are stored. */
void bng_step_finalize(const bng_dtype_config *dtype, size_t channels, float m, int accumulate,
                       const BNG_VMEM void *invar, const BNG_VMEM void *scale,
                       const BNG_VMEM float *sum_dy, const BNG_VMEM float *sum_dyxm,
                       BNG_VMEM void *dbias, BNG_VMEM void *dscale, BNG_VMEM float *gain,
                       BNG_VMEM float *dy_mean, BNG_VMEM float *slope);
/* The IEEE square root of v (sqrtf's bits, without libm; a NaN where sqrtf gives one). */
float bng_sqrtf(float v);
/* Reduce: the limbs of a count of rows (the partial-sums buffer's count), limb i at
 * limbs + i * BNG_V, a whole vector each (packed on a unified target). */
void bng_step_count(size_t rows, BNG_VMEM float *limbs);

/* ---- the row ukernels: every call of one of the three goes through these ---- */

/* Pass 1: the sums of `rows` rows, from a block boundary, added into part_dy and
 * part_dyxm block by block. */
void bng_rows_reduce(const bng_kernel *kernel, size_t rows, size_t channels, size_t stride,
                     const BNG_VMEM void *x, const BNG_VMEM void *dy, const BNG_VMEM float *mean,
                     BNG_VMEM float *part_dy, BNG_VMEM float *part_dyxm);
/* Pass 2: dx of the rows from the chunk's coefficients, trained or inferred (x is not
 * read then, and may be NULL). */
void bng_rows_dx(const bng_kernel *kernel, int is_train, size_t rows, size_t channels,
                 size_t stride, const BNG_VMEM void *x, const BNG_VMEM void *dy, BNG_VMEM void *dx,
                 const BNG_VMEM float *mean, const BNG_VMEM float *gain,
                 const BNG_VMEM float *dy_mean, const BNG_VMEM float *slope, int stream);

/* ---- the op's step list ----
 *
 * Every runner works in units (NHWC: a chunk of channels; NCHW: one channel) and runs
 * the steps of the call's op on each in this order, written once here: what a step
 * does is the runner's (where the arrays are, how they move, which cores meet). A step
 * the op does not take is never called, and is NULL where the runner has nothing to do
 * for it. The vendor's call and ext: sum, finalize, dx; reduce: sum, put_sums; apply:
 * get_sums, finalize, dx; dx-only: gain, dx. */
typedef struct {
    void (*gain)(void *unit);          /* dx-only: gain = scale * invar */
    void (*sum)(void *unit);           /* pass 1: the unit's sums over the call's rows */
    void (*get_sums)(void *unit);      /* apply: the sums from the partial-sums buffer */
    void (*put_sums)(void *unit);      /* reduce: the sums into it */
    void (*finalize)(void *unit);      /* dbias, dscale, the dx coefficients */
    void (*dx)(void *unit);            /* pass 2 */
} bng_unit_steps;

static inline void bng_run_step(void (*step)(void *unit), void *unit)
{
    if (step != NULL)
        step(unit);
}

static inline void bng_run_steps(const bng_call *call, const bng_unit_steps *steps, void *unit)
{
    if (BNG_IS_DX_ONLY(call)) {
        bng_run_step(steps->gain, unit);
    } else {
        bng_run_step(BNG_SUMS_ROWS(call) ? steps->sum : steps->get_sums, unit);
        if (BNG_IS_REDUCE(call)) {
            bng_run_step(steps->put_sums, unit);
            return;
        }
        bng_run_step(steps->finalize, unit);
    }
    bng_run_step(steps->dx, unit);
}

#endif /* BNG_STEPS_H */
