/* SPDX-License-Identifier: Apache-2.0 */
/* Copyright 2026 the batchnormgrad authors */
/* Owns: where an NHWC staged call keeps its rows: the layout of a core's private memory
 * for one chunk and its share of the GSM rows (bng_nhwc_memory.h), the twin of
 * generator/nhwc_memory.py, number for number (but the training forward's GSM rows,
 * bng_nhwc_memory_gsm_x, which make model takes from the traced C). May call: bng_take,
 * bng_take_tiles and bng_take_resident (bng_staging.h); no DMA, no kernel.
 */
#include "bng_nhwc_memory.h"

/* Whole blocks of rows of `row_pitch` in `bytes`. */
static size_t bng_nhwc_memory_blocks_of(size_t bytes, size_t row_pitch)
{
    return bytes / row_pitch / BNG_BLOCK_ROWS * BNG_BLOCK_ROWS;
}

/* Rows per streamed tile: what a tile buffer of `buffer` bytes holds of rows of
 * `row_pitch`, in whole blocks (tiles never split a block). In a call that keeps rows
 * (`keeps`), fewer: no more than BNG_STREAM_TILE_BYTES, enough that a transfer's start-up
 * is small beside its bytes, nor than a quarter of the buffer, so that at least three
 * quarters of a small private memory are the resident area; whole blocks, at least one.
 * targets.yaml is validated so that a buffer holds a block of the widest chunk
 * (NhwcMemory.tile_rows). */
size_t bng_nhwc_memory_tile_rows(size_t buffer, size_t row_pitch, int keeps)
{
    const size_t rows = bng_nhwc_memory_blocks_of(buffer, row_pitch);
    const size_t small = bng_nhwc_memory_blocks_of(bng_min(BNG_STREAM_TILE_BYTES,
                                                           buffer / BNG_TILE_BUFFERS), row_pitch);

    return keeps ? bng_min(rows, small > BNG_BLOCK_ROWS ? small : BNG_BLOCK_ROWS) : rows;
}

/* How many of `rows` rows (from a block boundary) stay where `most` fit: all, or the
 * last ones from a block boundary (a tile starts there), or none (last_rows). */
size_t bng_nhwc_memory_last_rows(size_t rows, size_t most)
{
    const size_t over = rows > most ? rows - most : 0;
    const size_t before = (over + BNG_BLOCK_ROWS - 1) / BNG_BLOCK_ROWS * BNG_BLOCK_ROWS;

    return rows - bng_min(before, rows);
}

/* A relu call that keeps rows (it reads y in both passes) keeps the mask of its slice's
 * first blocks as bits from pass 1 to pass 2 in private memory, where pass 2 takes it
 * instead of fetching y again. Bits first, before the resident rows: a block's bits
 * (`block_bytes`) save 32 rows of y from DDR, a resident row's x and dy (two rows)
 * save three rows, x, dy and y. As many blocks as the slice has, or as `rest`
 * (aligned) holds; none when the resident area would hold the whole slice anyway (no
 * rows read twice). The bits of rows that end up resident or in GSM are unused
 * (NhwcMemory.relu_bits_blocks). */
static size_t bng_nhwc_memory_bits_blocks(size_t slice_rows, size_t row_pitch, size_t rest,
                                          size_t block_bytes)
{
    const size_t blocks = (slice_rows + BNG_BLOCK_ROWS - 1) / BNG_BLOCK_ROWS;
    const size_t whole = rest / 2 / BNG_ALIGN * BNG_ALIGN / row_pitch;

    if (bng_nhwc_memory_last_rows(slice_rows, whole) == slice_rows)
        return 0;
    return bng_min(blocks, rest / block_bytes);
}

/* The workspace's arrays in turn from `next`, each of `elements` of its kind. */
typedef struct {
    BNG_VMEM unsigned char *next;
    size_t elements, stats_bytes;
} bng_work_take;
#define BNG_WORK_TAKE(mem, take, name, kind) \
    (mem)->name = bng_take(&(take)->next, (take)->elements * BNG_WORK_ELEMENT_##kind((take)->stats_bytes));

/* Bytes of the workspace's arrays (BNG_WORKSPACE) for the storage type. */
static size_t bng_nhwc_memory_workspace_bytes(const bng_dtype_config *dtype)
{
    return 0 BNG_WORKSPACE_SUM(BNG_WORK_ARRAY_CHUNK(dtype->max_chunk), dtype->stats_bytes);
}

size_t bng_nhwc_memory_dx_chunk(const bng_dtype_config *dtype, size_t bytes, size_t chunk,
                                int relu)
{
    const size_t buffers = BNG_TILE_BUFFERS + (relu ? 1 : 0) + BNG_DX_TILE_BUFFERS;
    const size_t buffer = (bytes - bng_nhwc_memory_workspace_bytes(dtype)) / buffers
                          / BNG_ALIGN * BNG_ALIGN;
    /* whole vectors of the storage type (of the padding's, as wide or wider, on a split
     * target, whose rows are whole vectors of it) */
    const size_t step = BNG_PADDED(dtype->lanes);
    const size_t fits = buffer / (BNG_BLOCK_ROWS * dtype->element_bytes) / step * step;

    return bng_min(chunk, fits);
}

/* How many tile buffers share what the workspace leaves. A call that keeps rows or
 * masks by the fused ReLU streams small tiles (bng_nhwc_memory_tile_rows) from the four's
 * share, leaving room for y's buffer, the bits and the resident area, and so for the old
 * dx's two where it adds into dx; one that reads its rows once and adds into dx (apply,
 * dx-only) has no resident area, and the six share it all, in tiles as large as fit. */
static size_t bng_nhwc_memory_full_tiles(int keeps, int relu, int accumulate_dx)
{
    return BNG_TILE_BUFFERS
           + (accumulate_dx && !keeps && relu == BNG_NHWC_NO_RELU ? BNG_DX_TILE_BUFFERS : 0);
}

void bng_nhwc_memory_lay_out(bng_nhwc_memory *mem, const bng_dtype_config *dtype,
                             BNG_VMEM unsigned char *base, size_t bytes, size_t slice,
                             size_t pitch, int keeps, int relu, int accumulate_dx)
{
    const size_t bits_block_bytes = BNG_RELU_BITS_BLOCK_BYTES(pitch, dtype->element_bytes);
    bng_work_take take;
    size_t buffer, rest;

    take.next = base;
    take.elements = BNG_WORK_ARRAY_CHUNK(dtype->max_chunk);
    take.stats_bytes = dtype->stats_bytes;
    BNG_WORKSPACE(BNG_WORK_TAKE, mem, &take)
    buffer = (bytes - (size_t)(take.next - base)) / bng_nhwc_memory_full_tiles(keeps, relu, accumulate_dx)
             / BNG_ALIGN * BNG_ALIGN;
    mem->tile_rows = bng_nhwc_memory_tile_rows(buffer, pitch, keeps || relu != BNG_NHWC_NO_RELU);
    bng_take_tiles(&take.next, mem->tile_rows * pitch, relu == BNG_NHWC_RELU_Y, accumulate_dx,
                   &mem->tiles);
    rest = (bytes - (size_t)(take.next - base)) / BNG_ALIGN * BNG_ALIGN;
    mem->relu_bits_blocks = relu == BNG_NHWC_RELU_Y && keeps
                            ? bng_nhwc_memory_bits_blocks(slice, pitch, rest, bits_block_bytes) : 0;
    mem->relu_bits = bng_take(&take.next, (relu == BNG_NHWC_RELU_BITS
                                           ? mem->tile_rows / BNG_BLOCK_ROWS
                                           : mem->relu_bits_blocks) * bits_block_bytes);
    bng_take_resident(take.next, base + bytes, &mem->tiles);
    mem->resident_rows = keeps ? bng_nhwc_memory_last_rows(slice, mem->tiles.resident_bytes / pitch) : 0;
    mem->gsm_rows = 0;
    mem->x_gsm = mem->dy_gsm = BNG_SHARED_GSM;     /* read only where rows are kept */
}

/* rows * BNG_GSM_SHARE / 2^16, rounded down, in size_t arithmetic that a 32-bit size_t
 * holds for any rows below 2^32 (no 64-bit division: on a 32-bit part that is a library
 * routine firmware may not link). */
static size_t bng_nhwc_memory_gsm_share_of(size_t rows)
{
    return (rows >> 16) * BNG_GSM_SHARE + (((rows & 0xffffu) * BNG_GSM_SHARE) >> 16);
}

/* How many of its streamed rows a core keeps in its share (of `share_bytes`, split
 * between the `kept` arrays: x's and dy's halves, or x's whole for the forward) of the
 * GSM rows between the passes of a call that keeps rows: the last ones of the `streamed`
 * before the resident rows, from a block boundary; as many as fit, and no more than
 * pay. `slice` the core's rows, `arrays` those pass 2 reads again (2, x and dy; 1 in
 * inference and in the forward, x), `row_bytes` a row of the chunk.
 *
 * In pass 2 the core moves S + a (S - r - g) rows' arrays through DDR (dx, and x and dy
 * again: a = 2, dy alone in inference: a = 1) and a g through GSM, S its rows, r the
 * resident ones, g those in GSM; the two take the same time at
 * g = (S / a + S - r) G / (G + D), G and D the part's GSM and DDR bandwidths
 * (BNG_GSM_SHARE / 2^16 = G / (G + D), from targets.yaml part:; 1 without it, which puts
 * no bound). More would make GSM the slower of the two. */
static size_t bng_nhwc_memory_gsm_rows(size_t slice, size_t streamed, size_t row_bytes,
                                       size_t share_bytes, size_t kept, size_t arrays)
{
    const size_t part = share_bytes / kept / BNG_ALIGN * BNG_ALIGN;
    const size_t fit = part / row_bytes;
    const size_t pays = bng_nhwc_memory_gsm_share_of(slice / arrays + streamed);

    return bng_nhwc_memory_last_rows(streamed, bng_min(pays, fit));
}

void bng_nhwc_memory_gsm(bng_nhwc_memory *mem, size_t slice, size_t row_bytes, unsigned rank,
                         unsigned cores, int keeps, int is_train)
{
    size_t share;

    if (!BNG_GSM_BYTES || !keeps)
        return;
    share = BNG_GSM_BYTES / cores / BNG_ALIGN * BNG_ALIGN;
    mem->gsm_rows = bng_nhwc_memory_gsm_rows(slice, slice - mem->resident_rows, row_bytes, share,
                                             2, is_train ? 2 : 1);
    mem->x_gsm = BNG_SHARED_GSM + rank * share;
    mem->dy_gsm = mem->x_gsm + share / 2 / BNG_ALIGN * BNG_ALIGN;
}

size_t bng_nhwc_memory_gsm_x(size_t slice, size_t resident_rows, size_t row_bytes, unsigned rank,
                             unsigned cores, BNG_SHARED unsigned char **x_gsm)
{
    const size_t share = BNG_GSM_BYTES / cores / BNG_ALIGN * BNG_ALIGN;

    *x_gsm = BNG_SHARED_GSM + rank * share;
    /* no GSM rows (BNG_GSM_BYTES 0): no share, no row fits */
    return bng_nhwc_memory_gsm_rows(slice, slice - resident_rows, row_bytes, share, 1, 1);
}
