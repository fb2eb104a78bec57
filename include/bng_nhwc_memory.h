/* SPDX-License-Identifier: Apache-2.0 */
/* Copyright 2026 the batchnormgrad authors */
/* Owns: the arithmetic of where an NHWC staged call's rows lie (bng_nhwc_memory.c): rows per
 * tile, which rows stay on chip between the passes, how many a core keeps in GSM. Pure
 * functions, the twins of generator/plan.py's (DTypePlan.tile_rows, resident_rows,
 * TargetPlan.gsm_rows), which check targets.yaml with the same numbers. May include:
 * the target's constants (bng_kernels.h) only.
 */
#ifndef BNG_NHWC_MEMORY_H
#define BNG_NHWC_MEMORY_H

#include <stddef.h>
#include "bng_kernels.h"

/* Rows per streamed tile: what a tile buffer of `buffer` bytes holds of rows of
 * `row_pitch`, in whole blocks (tiles never split a block). In a call that keeps rows
 * (`keeps`), fewer: no more than BNG_STREAM_TILE_BYTES, enough that a transfer's start-up
 * is small beside its bytes, nor than a quarter of the buffer, so that at least three
 * quarters of a small private memory are the resident area; whole blocks, at least one.
 * targets.yaml is validated so that a buffer holds a block of the widest chunk. */
size_t bng_nhwc_memory_tile_rows(size_t buffer, size_t row_pitch, int keeps);
/* How many of `rows` rows (from a block boundary) stay where `most` fit: all, or the
 * last ones from a block boundary (a tile starts there), or none. */
size_t bng_nhwc_memory_last_rows(size_t rows, size_t most);
/* How many of its streamed rows a core keeps in its share (of `share_bytes`, x's and
 * dy's halves) of the GSM rows between the passes of a call that keeps rows: the last
 * ones of the `streamed` before the resident rows, from a block boundary; as many as
 * fit, and no more than pay (bng_nhwc_memory.c). `slice` the core's rows, `arrays` those
 * pass 2 reads again (2, x and dy; 1 in inference), `row_bytes` a row of the chunk. */
size_t bng_nhwc_memory_gsm_rows(size_t slice, size_t streamed, size_t row_bytes, size_t share_bytes,
                           size_t arrays);

#endif /* BNG_NHWC_MEMORY_H */
