/* SPDX-License-Identifier: Apache-2.0 */
/* Copyright 2026 the batchnormgrad authors */
/* Owns: where an NHWC staged call keeps its rows (bng_nhwc_memory.c): the layout of a
 * core's private memory for one chunk (the workspace, the tile buffers, the fused ReLU's
 * bits, the resident rows) and the core's share of the GSM rows. The twin of
 * generator/nhwc_memory.py, which checks targets.yaml and counts for make report and
 * make model with the same numbers (the training forward's GSM rows excepted: make
 * model takes those from the traced C; and a call that adds into dx, which nothing in
 * the generator counts). May include: bng_relu.h (and through it
 * bng_staging.h: a core's tile buffers, bng_take); included by the NHWC staged room.
 */
#ifndef BNG_NHWC_MEMORY_H
#define BNG_NHWC_MEMORY_H

#include <stddef.h>
#include "bng_relu.h"

/* The layout of a core's private memory for one chunk: the workspace (BNG_WORKSPACE,
 * the per-channel arrays of the widest chunk), the tile buffers, with the fused ReLU
 * the bits of the slice's first blocks, the resident area. All of it is vector memory
 * (BNG_VMEM) on a split target. A call that keeps rows may also keep the streamed rows
 * just before the resident ones in the core's share of the GSM rows. */
typedef float bng_work_float;
typedef unsigned char bng_work_stats;
#define BNG_WORK_FIELD(unused1, unused2, name, kind) BNG_VMEM bng_work_##kind *name;
typedef struct {
    BNG_WORKSPACE(BNG_WORK_FIELD, 0, 0)
    bng_tile_buffers tiles;
    size_t tile_rows;                   /* rows per streamed tile: whole blocks */
    size_t resident_rows;               /* the slice's last rows, kept on chip (0: none) */
    BNG_VMEM unsigned char *relu_bits;  /* BNG_FLAG_RELU: the slice's first blocks' masks
                                         * as bits (bng_relu_tile_bits); BNG_FLAG_RELU_BITS:
                                         * a streamed tile's words of the forward's */
    size_t relu_bits_blocks;            /* the blocks of the first kind, or 0 */
    BNG_SHARED unsigned char *x_gsm, *dy_gsm;
    size_t gsm_rows;                    /* the streamed rows before those, kept in GSM */
} bng_nhwc_memory;

/* Lay out a core's private memory (`bytes` at `base`) for a chunk of a storage type
 * whose rows lie `pitch` bytes apart there, for a slice of `slice` rows. `keeps`: the
 * call reads its rows twice, and as many of the slice's last rows as fit the resident
 * area stay there between the passes (DTypePlan.resident_rows). `relu` (below): with
 * y, a tile buffer for y follows the four; its tiles are sized as a keeping call's,
 * which leaves room for it (the generator checks private_bytes for five blocks' tiles).
 * A relu call that keeps rows and cannot keep them all takes the relu bits area next,
 * before the resident one. With the forward's bits, the tiles are sized as with y and
 * the bits area holds a streamed tile's words instead. `accumulate_dx`: two tile
 * buffers more, for the old dx: after the small tiles of a call that keeps rows or
 * masks (out of the resident area), else the six share what the workspace leaves (its
 * chunk is one whose buffers all hold a block: bng_nhwc_memory_dx_chunk). No GSM rows
 * (bng_nhwc_memory_gsm). */
enum { BNG_NHWC_NO_RELU, BNG_NHWC_RELU_Y, BNG_NHWC_RELU_BITS };
void bng_nhwc_memory_lay_out(bng_nhwc_memory *mem, const bng_dtype_config *dtype,
                             BNG_VMEM unsigned char *base, size_t bytes, size_t slice,
                             size_t pitch, int keeps, int relu, int accumulate_dx);
/* A call that adds into dx (BNG_FLAG_ACCUMULATE_DX) takes seven tile buffers (six
 * without the fused ReLU), where targets.yaml is checked for four (five with the fused
 * ReLU) of a block of the widest chunk: its chunk is `chunk`, or the widest of whole
 * vectors whose buffers each hold a block in private memory of `bytes` (the contract's
 * size on every core of _s; the workspace's in a split target's _p). At least one
 * vector: the check's four blocks of the widest chunk, itself at least the generic
 * kernel's eight vectors, hold seven blocks of one. */
size_t bng_nhwc_memory_dx_chunk(const bng_dtype_config *dtype, size_t bytes, size_t chunk,
                                int relu);
/* Rows per streamed tile of a tile buffer of `buffer` bytes, rows `row_pitch` apart:
 * whole blocks; in a call that reads its rows twice (`keeps`) small ones, which leave
 * the most to the resident area. Also the forward's (bng_fwd_nhwc_staged.c). */
size_t bng_nhwc_memory_tile_rows(size_t buffer, size_t row_pitch, int keeps);
/* How many of `rows` rows from a block boundary stay where `most` fit: all, the last
 * ones from a block boundary, or none. */
size_t bng_nhwc_memory_last_rows(size_t rows, size_t most);

/* The core's share of the GSM rows for the chunk (`rank` of `cores`; `row_bytes` a row
 * of the chunk), in a call that keeps rows (`keeps`, not on the calling core alone):
 * its last streamed rows as far as they fit and pay (NhwcGsm.gsm_rows); `is_train`:
 * pass 2 reads x again as well as dy. */
void bng_nhwc_memory_gsm(bng_nhwc_memory *mem, size_t slice, size_t row_bytes, unsigned rank,
                         unsigned cores, int keeps, int is_train);
/* The training forward's (bng_fwd_nhwc_staged.c), which keeps x alone: how many of a
 * slice's streamed rows (its `slice` rows but the `resident_rows`) the core keeps in its
 * whole share of the GSM rows, at *x_gsm, as far as they fit and pay (pass 2 writes y
 * and reads x again: one array each way). */
size_t bng_nhwc_memory_gsm_x(size_t slice, size_t resident_rows, size_t row_bytes, unsigned rank,
                             unsigned cores, BNG_SHARED unsigned char **x_gsm);

#endif /* BNG_NHWC_MEMORY_H */
