/* SPDX-License-Identifier: Apache-2.0 */
/* Copyright 2026 the batchnormgrad authors */
/* Owns: the fused ReLU backward (BNG_FLAG_RELU, bng_relu.c): dy masked by the forward
 * output y on staged tiles, the mask kept as bits between an NHWC tile's passes, and the
 * calls of the kernels' ReLU ukernels. May include: bng_stage.h; included by the rooms
 * that run a call with the flag. Without relu (BNG_HAS_RELU 0) bng_relu.c is not
 * compiled and these are macros that compile to nothing (never called: BNG_RELU is a
 * constant 0).
 */
#ifndef BNG_RELU_H
#define BNG_RELU_H

#include <stddef.h>
#include "bng_stage.h"

/* A block's ReLU mask as bits (bng_relu_tile_bits): a row of float words, two of half
 * words, of a tile row's pitch each. */
#define BNG_RELU_BITS_BLOCK_BYTES(row_pitch, element) ((row_pitch) * (sizeof(uint32_t) / (element)))

#if BNG_HAS_RELU
/* A tile's dy, just arrived from the caller's array, is masked in place by its rows of
 * y: fetched into `y` at the tile's pitch and waited at once (beside the next tile's two
 * gets and a put, four transfers at most), then the mask. */
void bng_relu_fetch_y(const bng_staged_job *job, BNG_VMEM unsigned char *y, const bng_tile *tile);
void bng_relu_mask_tile(size_t element, const bng_tile *tile, const BNG_VMEM unsigned char *y);
/* The mask of a tile's rows of y (in private memory at the tile's pitch) as bits, block
 * by block from `bits`; and a tile's dy masked in place by them: the same bits as
 * bng_relu_mask_tile on the y they came from. */
void bng_relu_tile_bits(size_t element, const bng_tile *tile, const BNG_VMEM unsigned char *y,
                        BNG_VMEM unsigned char *bits);
void bng_relu_tile_by_bits(size_t element, const bng_tile *tile, const BNG_VMEM unsigned char *bits);
/* How many of a slice's first blocks keep their mask as bits from pass 1 to pass 2 in
 * `rest` bytes of private memory (bng_relu.c says which). */
size_t bng_relu_bits_blocks(size_t slice_rows, size_t row_pitch, size_t rest, size_t block_bytes);

/* NHWC _p: the kernel's ReLU ukernels on the caller's rows (bng_ukernel.h). */
void bng_relu_rows_reduce(const bng_kernel *kernel, size_t rows, size_t channels, size_t stride,
                          const void *x, const void *dy, const void *y, const float *mean,
                          float *part_dy, float *part_dyxm, void *keeps, size_t keeps_stride);
void bng_relu_rows_dx(const bng_kernel *kernel, int is_train, size_t rows, size_t channels,
                      size_t stride, const void *x, const void *dy, const void *y, void *dx,
                      const float *mean, const float *gain, const float *dy_mean,
                      const float *slope, int stream);
void bng_relu_rows_dx_keeps(const bng_kernel *kernel, int is_train, size_t rows, size_t channels,
                            size_t stride, const void *x, const void *dy, void *dx,
                            const float *mean, const float *gain, const float *dy_mean,
                            const float *slope, int stream);
/* NCHW _p: the kernel's ReLU ukernels on a whole plane of the caller's arrays. */
void bng_relu_plane_reduce(const bng_nchw_kernel *kernel, size_t n, const void *x, const void *dy,
                           const void *y, float mean, float *lane_dy, float *lane_dyxm);
void bng_relu_plane_dx(const bng_nchw_kernel *kernel, int is_train, size_t n, const void *x,
                       const void *dy, const void *y, void *dx, float mean, float gain,
                       float dy_mean, float slope, int stream);
#else
/* Without relu no call has y (BNG_RELU is a constant 0): the calls below are never made.
 * Macros, not functions, so that such a target compiles no code for them even
 * unoptimized (a debug build), where stub functions would be emitted. */
#define bng_relu_fetch_y(job, y, tile) ((void)(job), (void)(y), (void)(tile))
#define bng_relu_mask_tile(element, tile, y) ((void)(element), (void)(tile), (void)(y))
#define bng_relu_tile_bits(element, tile, y, bits) \
    ((void)(element), (void)(tile), (void)(y), (void)(bits))
#define bng_relu_tile_by_bits(element, tile, bits) ((void)(element), (void)(tile), (void)(bits))
#define bng_relu_bits_blocks(slice_rows, row_pitch, rest, block_bytes) \
    ((void)(slice_rows), (void)(row_pitch), (void)(rest), (void)(block_bytes), (size_t)0)
#define bng_relu_rows_reduce(kernel, rows, channels, stride, x, dy, y, mean, part_dy, \
                             part_dyxm, keeps, keeps_stride) \
    ((void)(kernel), (void)(rows), (void)(channels), (void)(stride), (void)(x), (void)(dy), \
     (void)(y), (void)(mean), (void)(part_dy), (void)(part_dyxm), (void)(keeps), \
     (void)(keeps_stride))
#define bng_relu_rows_dx(kernel, is_train, rows, channels, stride, x, dy, y, dx, mean, gain, \
                         dy_mean, slope, stream) \
    ((void)(kernel), (void)(is_train), (void)(rows), (void)(channels), (void)(stride), \
     (void)(x), (void)(dy), (void)(y), (void)(dx), (void)(mean), (void)(gain), (void)(dy_mean), \
     (void)(slope), (void)(stream))
#define bng_relu_rows_dx_keeps(kernel, is_train, rows, channels, stride, x, dy, dx, mean, gain, \
                               dy_mean, slope, stream) \
    ((void)(kernel), (void)(is_train), (void)(rows), (void)(channels), (void)(stride), \
     (void)(x), (void)(dy), (void)(dx), (void)(mean), (void)(gain), (void)(dy_mean), \
     (void)(slope), (void)(stream))
#define bng_relu_plane_reduce(kernel, n, x, dy, y, mean, lane_dy, lane_dyxm) \
    ((void)(kernel), (void)(n), (void)(x), (void)(dy), (void)(y), (void)(mean), \
     (void)(lane_dy), (void)(lane_dyxm))
#define bng_relu_plane_dx(kernel, is_train, n, x, dy, y, dx, mean, gain, dy_mean, slope, \
                          stream) \
    ((void)(kernel), (void)(is_train), (void)(n), (void)(x), (void)(dy), (void)(y), (void)(dx), \
     (void)(mean), (void)(gain), (void)(dy_mean), (void)(slope), (void)(stream))
#endif

#endif /* BNG_RELU_H */
