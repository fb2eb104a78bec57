/* SPDX-License-Identifier: Apache-2.0 */
/* Copyright 2026 the batchnormgrad authors */
/* What the generated code and the driver agree on, the layer under both (as XNNPACK's
 * microfnptr.h and microparams.h): the memory-space annotations, the ukernel types a
 * generated kernel table registers, a table entry, the descriptor of one storage type,
 * the per-channel arrays of a call, the ops a call can be, and the _s workspace's
 * layout. Nothing here calls anything: the entry points are bng_entry.h's, the rooms'
 * functions their own headers'. Internal to the library: callers need only
 * batch_norm_grad.h.
 *
 * Words used throughout: a *kernel* is one table entry (the ukernels for one channel
 * count, or the generic ones); a *chunk* is the span of channels one pass of a driver
 * handles; a *row group* is the unit of the summation order and of the work split
 * across cores; a *block* is BNG_BLOCK_ROWS rows summed in registers.
 */
#ifndef BNG_UKERNEL_H
#define BNG_UKERNEL_H

#include <stddef.h>

/* Memory spaces (targets.yaml memory.spaces, docs/contract.md "Memory spaces"). On a
 * split target (BNG_SPLIT_MEMORY 1, defined by bng_kernels.h before it includes this
 * header) a core has scalar memory (SM) and vector memory (AM): the scalar unit
 * reaches only SM, vector loads and stores only AM, and data crosses through registers
 * (a broadcast) or DMA. Every pointer into vector memory is declared BNG_VMEM, in the
 * style of the Linux kernel's __iomem and __user: empty for compilers, and under
 * sparse (make cross-check) an address space of its own that no code may dereference
 * (noderef), nor convert to or from another space without a BNG_FORCE cast. The casts
 * are in two places: bng_vec.h's loads and stores, and the HAL's DMA and private
 * memory (bng_hal.h). A unified target has no separate space: the macros are empty
 * there under sparse too. */
#if defined(__CHECKER__) && defined(BNG_SPLIT_MEMORY) && BNG_SPLIT_MEMORY
#define BNG_VMEM __attribute__((noderef, address_space(2)))
#define BNG_FORCE __attribute__((force))
#else
#define BNG_VMEM
#define BNG_FORCE
#endif

/* A dx store's mode, the dx ukernels' `stream` argument: plain; streaming (bng_vec.h's
 * output stores, on x86 hosts); or added to dx's old value in float32 and stored
 * plainly, rounded once to dx's type (dx accumulate, BNG_FLAG_ACCUMULATE_DX: the old
 * value read where the store goes). */
#define BNG_STORE_PLAIN 0
#define BNG_STORE_STREAM 1
#define BNG_STORE_ADD 2

/* Keep words (the fused ReLU's keep bits, bng_vec.h "Keep bits"): a word holds the
 * keeps of BNG_KEEP_ROWS(element) consecutive rows (an element-sized word, a bit a
 * row); BNG_KEEP_WORDS, the words that hold the keep bits of `values` values in a row
 * (NCHW: a plane's, or a piece's from a word boundary), the last word's missing
 * values 0. */
#define BNG_KEEP_ROWS(element_bytes) (8 * (element_bytes))
#define BNG_KEEP_WORDS(values, element_bytes) \
    (((values) + BNG_KEEP_ROWS(element_bytes) - 1) / BNG_KEEP_ROWS(element_bytes))

/* The row ukernels of one kernel, on `channels` channels of each of `rows` rows, rows
 * `stride` elements apart. x, dy and dx hold elements of the storage type; the
 * per-channel arrays and all arithmetic are float32. On a split target `channels` is
 * the count padded to whole vectors (BNG_PADDED): every row and per-channel array holds
 * that many elements, and the padding lanes are read and written like the others.
 *   reduce:   per block of BNG_BLOCK_ROWS rows (from the first row), its sums of dy and
 *             dy*(x - mean) are added to sum_dy and sum_dyxm: the caller zeroes them
 *   dx_train: dx = gain * ((dy - dy_mean) - (x - mean) * slope)
 *   dx_infer: dx = gain * dy
 * dx may be x or dy (in place). `stream`, dx's store mode (BNG_STORE_*, above):
 * plain; streaming where dx is larger than the host's caches (its stores may bypass
 * them, no bit changes); or added to the old dx (BNG_FLAG_ACCUMULATE_DX). */
typedef void bng_reduce_ukernel(size_t rows, size_t channels, size_t stride,
                                const BNG_VMEM void *x, const BNG_VMEM void *dy,
                                const BNG_VMEM float *mean,
                                BNG_VMEM float *sum_dy, BNG_VMEM float *sum_dyxm);
typedef void bng_dx_train_ukernel(size_t rows, size_t channels, size_t stride,
                                  const BNG_VMEM void *x, const BNG_VMEM void *dy,
                                  BNG_VMEM void *dx, const BNG_VMEM float *mean,
                                  const BNG_VMEM float *gain, const BNG_VMEM float *dy_mean,
                                  const BNG_VMEM float *slope, int stream);
typedef void bng_dx_infer_ukernel(size_t rows, size_t channels, size_t stride,
                                  const BNG_VMEM void *dy, BNG_VMEM void *dx,
                                  const BNG_VMEM float *gain, int stream);

/* The relu extension's: the same three on dy masked by the forward output y (rows
 * `stride` elements apart like dy's), as the three above give them on a dy masked
 * beforehand (bng_vec.h, _load_relu). reduce_relu also writes each element's keep bit
 * into `keeps` (element-sized words, rows keeps_stride elements apart: bng_vec.h, "Keep
 * bits"), which the _keeps ukernels below read from dx where reduce_relu was given it
 * (dx neither x nor dy). */
typedef void bng_reduce_relu_ukernel(size_t rows, size_t channels, size_t stride,
                                     const BNG_VMEM void *x, const BNG_VMEM void *dy,
                                     const BNG_VMEM void *y, const BNG_VMEM float *mean,
                                     BNG_VMEM float *sum_dy, BNG_VMEM float *sum_dyxm,
                                     BNG_VMEM void *keeps, size_t keeps_stride);
typedef void bng_dx_train_relu_ukernel(size_t rows, size_t channels, size_t stride,
                                       const BNG_VMEM void *x, const BNG_VMEM void *dy,
                                       const BNG_VMEM void *y, BNG_VMEM void *dx,
                                       const BNG_VMEM float *mean, const BNG_VMEM float *gain,
                                       const BNG_VMEM float *dy_mean,
                                       const BNG_VMEM float *slope, int stream);
typedef void bng_dx_infer_relu_ukernel(size_t rows, size_t channels, size_t stride,
                                       const BNG_VMEM void *dy, const BNG_VMEM void *y,
                                       BNG_VMEM void *dx, const BNG_VMEM float *gain,
                                       int stream);
/* The _keeps ukernels: the same three on dy masked by keep bits, rows from a multiple of
 * BNG_KEEP_ROWS(element): row r's bit of channel c is bit r % BNG_KEEP_ROWS(element) of
 * the element-sized word keeps[r / BNG_KEEP_ROWS(element) * keeps_stride + c] (the
 * training forward's format with keeps_stride = channel: BNG_FLAG_RELU_BITS). Those
 * reduce_relu left in dx serve as well, the words of whole groups of rows at the
 * groups' last rows (keeps_stride BNG_KEEP_ROWS(element) rows of dx), a last partial
 * group's at its last row in a call of its own (bng_nhwc_direct.c): a word is read
 * before its row of dx is stored. */
typedef void bng_reduce_keeps_ukernel(size_t rows, size_t channels, size_t stride,
                                      const BNG_VMEM void *x, const BNG_VMEM void *dy,
                                      const BNG_VMEM void *keeps, size_t keeps_stride,
                                      const BNG_VMEM float *mean, BNG_VMEM float *sum_dy,
                                      BNG_VMEM float *sum_dyxm);
typedef void bng_dx_train_keeps_ukernel(size_t rows, size_t channels, size_t stride,
                                        const BNG_VMEM void *x, const BNG_VMEM void *dy,
                                        const BNG_VMEM void *keeps, size_t keeps_stride,
                                        BNG_VMEM void *dx, const BNG_VMEM float *mean,
                                        const BNG_VMEM float *gain,
                                        const BNG_VMEM float *dy_mean,
                                        const BNG_VMEM float *slope, int stream);
typedef void bng_dx_infer_keeps_ukernel(size_t rows, size_t channels, size_t stride,
                                        const BNG_VMEM void *dy, const BNG_VMEM void *keeps,
                                        size_t keeps_stride, BNG_VMEM void *dx,
                                        const BNG_VMEM float *gain, int stream);

/* One kernel table entry (the relu ukernels NULL on a target without relu, and in the
 * tables of the vendor's and the explicit-argument calls: bng_<dtype>_base_config). */
typedef struct {
    const char *name;
    size_t channels;                 /* the one channel count it serves; 0: generic */
    bng_reduce_ukernel *reduce;
    bng_dx_train_ukernel *dx_train;
    bng_dx_infer_ukernel *dx_infer;
    bng_reduce_relu_ukernel *reduce_relu;
    bng_dx_train_relu_ukernel *dx_train_relu;
    bng_dx_infer_relu_ukernel *dx_infer_relu;
    bng_reduce_keeps_ukernel *reduce_keeps;
    bng_dx_train_keeps_ukernel *dx_train_keeps;
    bng_dx_infer_keeps_ukernel *dx_infer_keeps;
} bng_kernel;

/* NCHW (BNG_FLAG_NCHW, BNG_HAS_NCHW): the ukernels of one plane of one channel, on `n`
 * contiguous elements from a block boundary of the plane (its start, or a multiple of
 * BNG_NCHW_BLOCK_VECTORS vectors into it); the channel's coefficients are scalars,
 * broadcast, on a unified target. On a split target (bng_nchw_coef) each is a vector of
 * vector memory holding it in every lane (scalar code there cannot read a value the
 * vector unit computed), and the piece lies in vector memory, padded to whole vectors.
 *   reduce:   per block of BNG_NCHW_BLOCK_VECTORS vectors of `lanes` elements, its lane
 *             sums of dy and dy*(x - mean), from zero, are added to lane_dy and
 *             lane_dyxm (`lanes` floats each: the caller zeroes them at the plane's
 *             start); the n % lanes elements after the last whole vector are added,
 *             each from zero, to lanes 0 .. n % lanes - 1 (on a split target as one
 *             whole vector, its sums added in those lanes alone: the other lanes'
 *             sums are left as they were, bit for bit)
 *   dx_train, dx_infer: the formulas of the NHWC ukernels above, but with stream != 0
 *             their streaming stores are not fenced: the caller ends its run of dx
 *             calls with dx_end(stream) (a fence per plane cost more than the plane);
 *             on a split target whole vectors, n rounded up (the padding's lanes
 *             computed on, and never put back)
 * A kernel specialized for an extent is called only on a whole plane of it. */
#if defined(BNG_SPLIT_MEMORY) && BNG_SPLIT_MEMORY
typedef const BNG_VMEM float *bng_nchw_coef;
#else
typedef float bng_nchw_coef;
#endif
typedef void bng_nchw_reduce_ukernel(size_t n, const BNG_VMEM void *x, const BNG_VMEM void *dy,
                                     bng_nchw_coef mean, BNG_VMEM float *lane_dy,
                                     BNG_VMEM float *lane_dyxm);
typedef void bng_nchw_dx_train_ukernel(size_t n, const BNG_VMEM void *x, const BNG_VMEM void *dy,
                                       BNG_VMEM void *dx, bng_nchw_coef mean, bng_nchw_coef gain,
                                       bng_nchw_coef dy_mean, bng_nchw_coef slope, int stream);
typedef void bng_nchw_dx_infer_ukernel(size_t n, const BNG_VMEM void *dy, BNG_VMEM void *dx,
                                       bng_nchw_coef gain, int stream);
typedef void bng_nchw_dx_end_ukernel(int stream);
/* The relu extension's: the same three on dy masked by the plane's y (beside dy). */
typedef void bng_nchw_reduce_relu_ukernel(size_t n, const void *x, const void *dy,
                                          const void *y, float mean, float *lane_dy,
                                          float *lane_dyxm);
typedef void bng_nchw_dx_train_relu_ukernel(size_t n, const void *x, const void *dy,
                                            const void *y, void *dx, float mean, float gain,
                                            float dy_mean, float slope, int stream);
typedef void bng_nchw_dx_infer_relu_ukernel(size_t n, const void *dy, const void *y, void *dx,
                                            float gain, int stream);
/* ... and on dy masked by the plane's keep bits (BNG_FLAG_RELU_BITS: the training
 * forward's, batch_norm_fwd.h), the piece's words from `bits`: element i's keep is bit
 * i % W of the element-sized word bits[i / W], W the element's bits (a piece starts at a
 * block boundary, a whole word). The generic set's alone, which every entry names. */
typedef void bng_nchw_reduce_keeps_ukernel(size_t n, const void *x, const void *dy,
                                           const void *bits, float mean, float *lane_dy,
                                           float *lane_dyxm);
typedef void bng_nchw_dx_train_keeps_ukernel(size_t n, const void *x, const void *dy,
                                             const void *bits, void *dx, float mean, float gain,
                                             float dy_mean, float slope, int stream);
typedef void bng_nchw_dx_infer_keeps_ukernel(size_t n, const void *dy, const void *bits,
                                             void *dx, float gain, int stream);
typedef struct {
    const char *name;
    size_t spatial;                  /* the one extent it serves; 0: generic */
    size_t lanes;                    /* the lanes of its lane sums */
    bng_nchw_dx_end_ukernel *dx_end;     /* the dtype's one, in every set */
    bng_nchw_reduce_ukernel *reduce;
    bng_nchw_dx_train_ukernel *dx_train;
    bng_nchw_dx_infer_ukernel *dx_infer;
    bng_nchw_reduce_relu_ukernel *reduce_relu;       /* NULL without relu */
    bng_nchw_dx_train_relu_ukernel *dx_train_relu;
    bng_nchw_dx_infer_relu_ukernel *dx_infer_relu;
    bng_nchw_reduce_keeps_ukernel *reduce_keeps;      /* NULL without relu */
    bng_nchw_dx_train_keeps_ukernel *dx_train_keeps;
    bng_nchw_dx_infer_keeps_ukernel *dx_infer_keeps;
} bng_nchw_kernel;

/* The training forward (the forward extension, batch_norm_fwd.h): the row ukernels of
 * one kernel, on `channels` channels of each of `rows` rows, rows `stride` elements
 * apart, x and y of the storage type, the per-channel arrays float32. Every value is
 * taken as its deviation from the channel's shift (x - shift), which keeps the sums
 * small where the data's mean is large against its spread.
 *   fwd_stats: the mean and the sum of squared deviations (M2) of `rows` rows from a
 *              block boundary: per block of BNG_BLOCK_ROWS rows, its mean (its sum over
 *              its count) and its M2 about that mean (a second sweep over the block's
 *              rows), merged in block order by Chan's formula (bng_fwd.h) into the
 *              `merged` rows' mean and m2 (0: nothing is read from them, the first
 *              block writes them). A row group's run in pieces from its start, each
 *              of whole blocks but the last, gives the bits of one run over it (the
 *              staged forward's tiles)
 *   fwd_norm:  y = ((x - shift) - mean) * gain + bias; y may be x (in place); stream as
 *              for dx
 *   fwd_norm_relu: (the generic kernel's, which every table entry names: plan.py)
 *              the same y, +0 unless it is above 0 or NaN as stored (BNG_FWD_RELU:
 *              bng_vec.h's mask on its bits); and unless bits is NULL each element's
 *              keep bit (1 where y passes), rows from a word boundary: row i's of
 *              channel c is bit i % BNG_KEEP_ROWS(element) of the element-sized word
 *              bits[i / BNG_KEEP_ROWS(element) * bits_stride + c] (a word of the
 *              rows' last, partial group has its rows' bits, the others 0) */
typedef void bng_fwd_stats_ukernel(size_t merged, size_t rows, size_t channels, size_t stride,
                                   const BNG_VMEM void *x, const BNG_VMEM float *shift,
                                   BNG_VMEM float *mean, BNG_VMEM float *m2);
typedef void bng_fwd_norm_ukernel(size_t rows, size_t channels, size_t stride,
                                  const BNG_VMEM void *x, BNG_VMEM void *y,
                                  const BNG_VMEM float *shift, const BNG_VMEM float *mean,
                                  const BNG_VMEM float *gain, const BNG_VMEM float *bias,
                                  int stream);
typedef void bng_fwd_norm_relu_ukernel(size_t rows, size_t channels, size_t stride,
                                       const BNG_VMEM void *x, BNG_VMEM void *y,
                                       const BNG_VMEM float *shift, const BNG_VMEM float *mean,
                                       const BNG_VMEM float *gain, const BNG_VMEM float *bias,
                                       BNG_VMEM void *bits, size_t bits_stride, int stream);
typedef struct {
    const char *name;
    size_t channels;                 /* the one channel count it serves; 0: generic */
    bng_fwd_stats_ukernel *stats;
    bng_fwd_norm_ukernel *norm;
    bng_fwd_norm_relu_ukernel *norm_relu;
} bng_fwd_kernel;
/* The training forward's NCHW plane ukernels (BNG_FWD_NCHW, a target with forward and
 * nchw), one set for every extent: on `n` contiguous elements of one plane of one
 * channel from a block boundary of the plane (its start, or a multiple of
 * BNG_NCHW_BLOCK_VECTORS vectors into it); the channel's shift and coefficients are
 * scalars, broadcast, on a unified target, and on a split target vectors of vector
 * memory holding each in every lane (bng_nchw_coef, as the backward's), the piece in
 * vector memory padded to whole vectors, which the kernels read whole (the padding's
 * lanes computed on: their y never put back, their statistics and keep bits left out).
 *   fwd_nchw_stats: per lane of `lanes` (the vector's), the mean and M2 of the lane's
 *              elements: per block of BNG_NCHW_BLOCK_VECTORS vectors, its lane sums of
 *              x - shift (vector j of the block into accumulator j % 4 from zero, then
 *              (a0 + a1) + (a2 + a3)) over its count give its mean, its M2 about it
 *              likewise, merged by Chan's formula into lane_mean and lane_m2, `merged`
 *              vectors of the plane before it (0: nothing is read from them); the n %
 *              lanes elements after the last whole vector, each a block of one, into
 *              lanes 0 .. n % lanes - 1 (on a split target one whole vector, merged in
 *              those lanes alone: the others left as they were, bit for bit). Lane i
 *              then covers the plane's elements i, i + lanes, ...; bng_fwd_nchw_steps.c
 *              merges the lanes
 *   fwd_nchw_norm: y = ((x - shift) - mean) * gain + bias; y may be x; with stream
 *              != 0 its streaming stores are not fenced: the caller ends its run of
 *              planes with end(stream)
 *   fwd_nchw_norm_relu: the same y, +0
 *              unless above 0 or NaN as stored; unless bits is NULL each element's keep
 *              bit, from a word boundary of the plane: element i's is bit i % (8 e) of
 *              the element-sized word bits[i / (8 e)], e x's element size (the last,
 *              partial word's missing elements 0); on a split target the words of
 *              each run of 8 e vectors stored as one vector of `lanes` words (turned
 *              back in a register, bng_vec.h "Keep bits"), bits past the piece's 0 */
typedef void bng_fwd_nchw_stats_ukernel(size_t n, size_t merged, const BNG_VMEM void *x,
                                        bng_nchw_coef shift, BNG_VMEM float *lane_mean,
                                        BNG_VMEM float *lane_m2);
typedef void bng_fwd_nchw_norm_ukernel(size_t n, const BNG_VMEM void *x, BNG_VMEM void *y,
                                       bng_nchw_coef shift, bng_nchw_coef mean,
                                       bng_nchw_coef gain, bng_nchw_coef bias, int stream);
typedef void bng_fwd_nchw_norm_relu_ukernel(size_t n, const BNG_VMEM void *x, BNG_VMEM void *y,
                                            bng_nchw_coef shift, bng_nchw_coef mean,
                                            bng_nchw_coef gain, bng_nchw_coef bias,
                                            BNG_VMEM void *bits, int stream);
typedef void bng_fwd_nchw_end_ukernel(int stream);
typedef struct {
    const char *name;
    size_t lanes;                    /* the lanes of its lane statistics */
    bng_fwd_nchw_end_ukernel *end;
    bng_fwd_nchw_stats_ukernel *stats;
    bng_fwd_nchw_norm_ukernel *norm;
    bng_fwd_nchw_norm_relu_ukernel *norm_relu;
} bng_fwd_nchw_kernel;
/* The extensions' driver code, which the driver's rooms reach only through a storage
 * type's config (below): bng_relu.c's for the fused ReLU (bng_relu.h), bng_nchw_direct.c's
 * runners for NCHW (bng_job.h), each defined only on a target with the extension. */
struct bng_relu_driver;
struct bng_nchw_driver;
extern const struct bng_relu_driver bng_relu_driver;
extern const struct bng_nchw_driver bng_nchw_driver;

/* One storage type of one target, as the generator describes it. The per-channel
 * arrays are float (stats_bytes 4) or half (2). */
typedef struct {
    size_t element_bytes;            /* x, dy, dx */
    size_t stats_bytes;              /* mean, invar, scale, dbias, dscale */
    size_t max_chunk;                /* widest chunk: a specialized count or the generic chunk */
    size_t generic_chunk;            /* channels per pass of the generic kernel */
    size_t lanes;                    /* a vector of the storage type */
    const bng_kernel *(*kernel_for_channels)(size_t channel);   /* else the generic one */
    /* NCHW: the kernel of an extent, else the generic one (NULL without BNG_HAS_NCHW,
     * and in the vendor's calls' config) */
    const bng_nchw_kernel *(*nchw_kernel_for_spatial)(size_t spatial);
    /* The extensions' driver code (&bng_relu_driver, &bng_nchw_driver): NULL without
     * the extension and in the vendor's calls' config, so that an image that links only
     * the vendor's calls links none of it. */
    const struct bng_relu_driver *relu;
    const struct bng_nchw_driver *nchw;
} bng_dtype_config;

/* One storage type's training forward: its sizes, as a bng_dtype_config without
 * kernels (for the per-channel steps the forward shares with the backward), and its own
 * table, apart from the backward's, so that a firmware image that calls only one of
 * the two links none of the other's kernels. */
typedef struct {
    bng_dtype_config sizes;          /* element_bytes, stats_bytes, chunks; no tables */
    const bng_fwd_kernel *(*kernel_for_channels)(size_t channel);   /* else the generic one */
    /* BNG_FWD_NCHW: the plane ukernels (NULL without nchw, and in the vendor's inference
     * calls' configs, which are NHWC) */
    const bng_fwd_nchw_kernel *nchw;
} bng_fwd_config;

/* The per-channel arrays of one call (params[0..4], bng_params_stats), of the type's
 * stats_bytes. */
typedef struct {
    const void *mean, *invar, *scale;
    void *dbias, *dscale;
} bng_stats;

/* The ops a call can be: the vendor's call (BNG_OP_FULL) and the entry points of
 * batch_norm_grad_ext.h (compiled only for the families the target's targets.yaml asks
 * for: BNG_HAS_REDUCE, ... in bng_kernels.h), on the extended parameter block:
 *   BNG_OP_REDUCE  this call's rows -> the partial-sums buffer (x, dy; dx unused)
 *   BNG_OP_APPLY   a global partial-sums buffer -> dbias, dscale, dx of this call's rows
 *   BNG_OP_DX      dx = scale * invar * dy (dy, dx; x unused)
 *   BNG_OP_EXT     the vendor's call with the block's flags */
enum { BNG_OP_FULL, BNG_OP_EXT, BNG_OP_REDUCE, BNG_OP_APPLY, BNG_OP_DX };

/* The _s workspace in a core's private memory: BNG_WORKSPACE(X, a, b) (from the
 * generator's plan) lists its arrays in order as X(a, b, name, float) or
 * X(a, b, name, stats), each of BNG_WORK_ARRAY_CHUNK(max_chunk)
 * elements rounded up to BNG_ALIGN bytes; the tiles take the rest. The generator
 * checks private_bytes with the same sum, and the generated sources assert that the
 * two agree (BNG_ASSERT_WORKSPACE_BYTES). */
#define BNG_ALIGN_UP(bytes) (((bytes) + BNG_ALIGN - 1) / BNG_ALIGN * BNG_ALIGN)
/* A row of `channels` as it lies in vector memory: whole vectors of BNG_PAD_LANES on a
 * split target (the kernels and the per-channel steps work on whole vectors only
 * there), else just the channels. Also the elements of each workspace array for a
 * widest chunk of max_chunk. */
#if defined(BNG_SPLIT_MEMORY) && BNG_SPLIT_MEMORY
#define BNG_PADDED(channels) (((channels) + BNG_PAD_LANES - 1) / BNG_PAD_LANES * BNG_PAD_LANES)
#else
#define BNG_PADDED(channels) (channels)
#endif
#define BNG_WORK_ARRAY_CHUNK(max_chunk) BNG_PADDED(max_chunk)
#define BNG_WORK_ELEMENT_float(stats_bytes) sizeof(float)
#define BNG_WORK_ELEMENT_stats(stats_bytes) (stats_bytes)
#define BNG_WORK_ARRAY_BYTES(max_chunk, stats_bytes, name, kind) \
    + BNG_ALIGN_UP((max_chunk) * BNG_WORK_ELEMENT_##kind(stats_bytes))
#define BNG_WORKSPACE_SUM(max_chunk, stats_bytes) \
    BNG_WORKSPACE(BNG_WORK_ARRAY_BYTES, max_chunk, stats_bytes)
/* C99 has no _Static_assert: a negative array size stops the build. */
#define BNG_ASSERT_WORKSPACE_BYTES(tag, max_chunk, stats_bytes, expected) \
    typedef char bng_workspace_agrees_##tag[(0 BNG_WORKSPACE_SUM(max_chunk, stats_bytes)) == (expected) ? 1 : -1]

#endif /* BNG_UKERNEL_H */
