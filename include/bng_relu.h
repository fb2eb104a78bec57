/* SPDX-License-Identifier: Apache-2.0 */
/* Copyright 2026 the batchnormgrad authors */
/* Owns: the fused ReLU backward (BNG_FLAG_RELU; bng_relu.c, and NCHW's in
 * bng_nchw_relu.c): dy masked by the forward output y on staged tiles, the mask kept as
 * bits between an NHWC tile's passes, the forward's bits fetched for a tile
 * (BNG_FLAG_RELU_BITS), and the calls of the kernels' ReLU ukernels. May include:
 * bng_staging.h; included by the rooms that run a call with the flag. Without relu
 * (BNG_HAS_RELU 0) neither room is compiled, the config's relu is NULL and NCHW's calls
 * are macros that compile to nothing (never called: BNG_RELU is a constant 0).
 */
#ifndef BNG_RELU_H
#define BNG_RELU_H

#include <stddef.h>
#include "bng_staging.h"

/* The steps' plain C on a backend other than gnu (bng_relu.c, bng_nchw_relu.c): a step
 * of this many bytes, loaded before it is stored, which a compiler that vectorizes
 * straight-line code vectorizes (out may be dy, so a loop over the row would need a
 * run-time alias check, which GCC's -O2 does not make; 32 bytes measured fastest on an
 * x86-64 host). */
#define BNG_RELU_STEP_BYTES 32

/* A block's ReLU mask as bits (bng_relu_tile_bits): a row of float words, two of half
 * words, of a tile row's pitch each. */
#define BNG_RELU_BITS_BLOCK_BYTES(row_pitch, element) ((row_pitch) * (sizeof(uint32_t) / (element)))

/* The fused ReLU's code the NHWC rooms run, reached only through the storage type's
 * config (bng_dtype_config.relu: &bng_relu_driver, which bng_relu.c defines, in the
 * extended calls' config of a target with relu; NULL elsewhere, where BNG_RELU is never
 * true). */
struct bng_relu_driver {
    /* NHWC _s: a tile's dy, just arrived from the caller's array, masked in place by
     * its rows of y (fetched into `y` at the tile's pitch and waited at once, beside the
     * next tile's two gets and a put: four transfers at most); the mask of a tile's rows
     * of y as bits, block by block from `bits`, and a tile's dy masked in place by them
     * (the same bits as mask_tile on the y they came from; how many blocks of a slice
     * keep theirs from pass 1 to pass 2: bng_nhwc_memory.c). */
    void (*fetch_y)(const bng_staged_job *job, BNG_VMEM unsigned char *y, const bng_tile *tile);
    /* BNG_FLAG_RELU_BITS: a tile's words of the forward's keep bits (the tile's rows from a
     * block boundary: bng_nhwc_tile cuts tiles there), fetched into `bits` a word row a
     * pitch, waited at once, where tile_by_bits takes them: its layout, because a
     * unified target's pitch is a row's bytes (no padding) and a block whole words. */
    void (*fetch_bits)(const bng_staged_job *job, BNG_VMEM unsigned char *bits,
                       const bng_tile *tile);
    void (*mask_tile)(size_t element, const bng_tile *tile, const BNG_VMEM unsigned char *y);
    void (*tile_bits)(size_t element, const bng_tile *tile, const BNG_VMEM unsigned char *y,
                      BNG_VMEM unsigned char *bits);
    void (*tile_by_bits)(size_t element, const bng_tile *tile, const BNG_VMEM unsigned char *bits);
    /* NHWC _p: the kernel's ReLU ukernels on the caller's rows (bng_ukernel.h). */
    void (*rows_reduce)(const bng_kernel *kernel, size_t rows, size_t channels, size_t stride,
                        const void *x, const void *dy, const void *y, const float *mean,
                        float *part_dy, float *part_dyxm, void *keeps, size_t keeps_stride);
    void (*rows_dx)(const bng_kernel *kernel, int is_train, size_t rows, size_t channels,
                    size_t stride, const void *x, const void *dy, const void *y, void *dx,
                    const float *mean, const float *gain, const float *dy_mean,
                    const float *slope, int stream);
    /* ... and their _keeps ukernels on dy masked by keep bits (bng_ukernel.h's layout):
     * the forward's, or (pass 2 only) those rows_reduce left in dx. */
    void (*rows_reduce_keeps)(const bng_kernel *kernel, size_t rows, size_t channels,
                              size_t stride, const void *x, const void *dy, const void *keeps,
                              size_t keeps_stride, const float *mean, float *part_dy,
                              float *part_dyxm);
    void (*rows_dx_keeps)(const bng_kernel *kernel, int is_train, size_t rows, size_t channels,
                          size_t stride, const void *x, const void *dy, const void *keeps,
                          size_t keeps_stride, void *dx, const float *mean, const float *gain,
                          const float *dy_mean, const float *slope, int stream);
};

/* What NCHW's rooms call by name (an NCHW call is an extended call already): a staged
 * plane's y fetched and its dy masked (as fetch_y and mask_tile above); with
 * BNG_FLAG_RELU_BITS a staged tile's words of its planes' keep bits fetched (from word
 * `word` of the caller's bits, the tile's first plane's piece's first, its planes'
 * `plane_words` words a plane of the call's apart: batch_norm_fwd.h's layout) into
 * `bits`, a tile row's words after another (on a split target whole vectors apart, and
 * turned in place by the mask), and its dy masked by them; and the kernel's
 * ReLU ukernels on a whole plane of the caller's arrays (_p), by y, or with `from_bits`
 * by the plane's keep bits (the _keeps ukernels, the generic set's). */
#if BNG_HAS_RELU
void bng_relu_fetch_y(const bng_staged_job *job, BNG_VMEM unsigned char *y, const bng_tile *tile);
void bng_relu_mask_tile(size_t element, const bng_tile *tile, const BNG_VMEM unsigned char *y);
void bng_relu_fetch_plane_bits(const bng_staged_job *job, BNG_VMEM unsigned char *bits,
                               const bng_tile *tile, size_t word, size_t plane_words);
void bng_relu_mask_planes_by_bits(size_t element, const bng_tile *tile,
                                  BNG_VMEM unsigned char *bits);
#else
/* Without relu no call has y (BNG_RELU is a constant 0): the calls below are never made.
 * Macros, not functions, so that such a target compiles no code for them even
 * unoptimized (a debug build), where stub functions would be emitted. */
#define bng_relu_fetch_y(job, y, tile) ((void)(job), (void)(y), (void)(tile))
#define bng_relu_mask_tile(element, tile, y) ((void)(element), (void)(tile), (void)(y))
#define bng_relu_fetch_plane_bits(job, bits, tile, word, plane_words) \
    ((void)(job), (void)(bits), (void)(tile), (void)(word), (void)(plane_words))
#define bng_relu_mask_planes_by_bits(element, tile, bits) \
    ((void)(element), (void)(tile), (void)(bits))
#endif
#if BNG_HAS_RELU && BNG_SPLIT_MEMORY
/* A split target's staged tile: its vector of dy at value `at` masked in place by bit
 * `bit` of each lane's word of the vector of words at word `word` of `words` (NHWC's
 * words of a block's rows, NCHW's turned words of a plane). */
void bng_relu_vector_by_bits(size_t element, const bng_tile *tile, size_t at,
                             const BNG_VMEM unsigned char *words, size_t word, unsigned bit);
#endif
#if BNG_HAS_RELU && !BNG_SPLIT_MEMORY
void bng_relu_plane_reduce(const bng_nchw_kernel *kernel, int from_bits, size_t n, const void *x,
                           const void *dy, const void *y, float mean, float *lane_dy,
                           float *lane_dyxm);
void bng_relu_plane_dx(const bng_nchw_kernel *kernel, int from_bits, int is_train, size_t n,
                       const void *x, const void *dy, const void *y, void *dx, float mean,
                       float gain, float dy_mean, float slope, int stream);
#else
/* ... and these neither without relu nor on a split target, whose _p stages (NCHW's
 * plane kernels on the caller's arrays are a unified target's direct room). */
#define bng_relu_plane_reduce(kernel, from_bits, n, x, dy, y, mean, lane_dy, lane_dyxm) \
    ((void)(kernel), (void)(from_bits), (void)(n), (void)(x), (void)(dy), (void)(y), \
     (void)(mean), (void)(lane_dy), (void)(lane_dyxm))
#define bng_relu_plane_dx(kernel, from_bits, is_train, n, x, dy, y, dx, mean, gain, dy_mean, \
                          slope, stream) \
    ((void)(kernel), (void)(from_bits), (void)(is_train), (void)(n), (void)(x), (void)(dy), \
     (void)(y), (void)(dx), (void)(mean), (void)(gain), (void)(dy_mean), (void)(slope), \
     (void)(stream))
#endif

#endif /* BNG_RELU_H */
