/* SPDX-License-Identifier: Apache-2.0 */
/* Copyright 2026 the batchnormgrad authors */
/* Owns: where an NHWC staged call's rows lie: pure arithmetic, the twin of
 * generator/plan.py's. May call: nothing.
 */
#include "bng_nhwc_memory.h"

static size_t bng_nhwc_memory_min(size_t a, size_t b)
{
    return a < b ? a : b;
}

/* Whole blocks of rows of `row_pitch` in `bytes`. */
static size_t bng_nhwc_memory_blocks_of(size_t bytes, size_t row_pitch)
{
    return bytes / row_pitch / BNG_BLOCK_ROWS * BNG_BLOCK_ROWS;
}

size_t bng_nhwc_memory_tile_rows(size_t buffer, size_t row_pitch, int keeps)
{
    const size_t rows = bng_nhwc_memory_blocks_of(buffer, row_pitch);
    const size_t small = bng_nhwc_memory_blocks_of(bng_nhwc_memory_min(BNG_STREAM_TILE_BYTES,
                                                             buffer / BNG_TILE_BUFFERS), row_pitch);

    return keeps ? bng_nhwc_memory_min(rows, small > BNG_BLOCK_ROWS ? small : BNG_BLOCK_ROWS) : rows;
}

size_t bng_nhwc_memory_last_rows(size_t rows, size_t most)
{
    const size_t over = rows > most ? rows - most : 0;
    const size_t before = (over + BNG_BLOCK_ROWS - 1) / BNG_BLOCK_ROWS * BNG_BLOCK_ROWS;

    return rows - bng_nhwc_memory_min(before, rows);
}

/* rows * BNG_GSM_SHARE / 2^16, rounded down, in size_t arithmetic that a 32-bit size_t
 * holds for any rows below 2^32 (no 64-bit division: on a 32-bit part that is a library
 * routine firmware may not link). */
static size_t bng_nhwc_memory_gsm_share_of(size_t rows)
{
    return (rows >> 16) * BNG_GSM_SHARE + (((rows & 0xffffu) * BNG_GSM_SHARE) >> 16);
}

/* In pass 2 the core moves S + a (S - r - g) rows' arrays through DDR (dx, and x and dy
 * again: a = 2, dy alone in inference: a = 1) and a g through GSM, S its rows, r the
 * resident ones, g those in GSM; the two take the same time at
 * g = (S / a + S - r) G / (G + D), G and D the part's GSM and DDR bandwidths
 * (BNG_GSM_SHARE / 2^16 = G / (G + D), from targets.yaml part:; 1 without it, which puts
 * no bound). More would make GSM the slower of the two. */
size_t bng_nhwc_memory_gsm_rows(size_t slice, size_t streamed, size_t row_bytes, size_t share_bytes,
                           size_t arrays)
{
    const size_t half = share_bytes / 2 / BNG_ALIGN * BNG_ALIGN;
    const size_t fit = half / row_bytes;
    const size_t pays = bng_nhwc_memory_gsm_share_of(slice / arrays + streamed);

    return bng_nhwc_memory_last_rows(streamed, bng_nhwc_memory_min(pays, fit));
}
