/* SPDX-License-Identifier: Apache-2.0 */
/* Copyright 2026 the batchnormgrad authors */
/* Owns: what both layouts' staged runs share (bng_staging.c): a core's private memory,
 * tiles and the double-buffered pass over them, the per-channel values and partial sums
 * in and out by DMA. May include: bng_steps.h; included by the staged rooms and,
 * through bng_relu.h, by every room that runs the fused ReLU. No kernel is called from here.
 */
#ifndef BNG_STAGING_H
#define BNG_STAGING_H

#include <stddef.h>
#include "bng_steps.h"

/* Shared scratch of the _s entry points: per row group, the partial sums of dy and
 * dy*(x - mean), in two slots that alternate between chunks. Host builds emulate it,
 * and the parameter block, with arrays (bng_staging.c, bng_entry.c). Either way it is a
 * BNG_SHARED float pointer, and every pointer derived from it keeps the qualifier (an
 * address-space qualifier may not be dropped: clang rejects the conversion). The GSM
 * rows (targets.yaml memory.gsm: BNG_GSM_BYTES at BNG_GSM_ADDRESS, none when 0), where
 * _s keeps rows between its passes, are shared memory of the same kind, emulated the
 * same way. */
#ifdef BNG_HOST
extern float bng_host_scratch[BNG_SCRATCH_FLOATS];
extern float bng_host_gsm[BNG_GSM_BYTES / sizeof(float) + 1];    /* + 1: none when 0 */
#define BNG_SHARED_SCRATCH ((BNG_SHARED float *)bng_host_scratch)
#define BNG_SHARED_GSM ((BNG_SHARED unsigned char *)bng_host_gsm)
#else
#define BNG_SHARED_SCRATCH ((BNG_SHARED float *)BNG_SHARED_SCRATCH_ADDRESS)
#define BNG_SHARED_GSM ((BNG_SHARED unsigned char *)BNG_GSM_ADDRESS)
#endif

/* The most DMA transfers a core has outstanding, in either layout: in a pass, the next
 * tile's two gets and this tile's two gets (until waited), or the next tile's gets and
 * this tile's two puts (its dx; NHWC: its rows into GSM, or a group's partial sums),
 * with the fused ReLU's get of y waited at once beside the next tile's two gets and a
 * put; in a pass 2 that adds into dx (BNG_FLAG_ACCUMULATE_DX), whose tiles have three
 * gets, this tile's waited before the next tile's three start, and its put beside
 * them (and y's get, waited at once); the three per-channel gets at a unit's start;
 * two at a time after them. The HAL contract allows BNG_MAX_OUTSTANDING_DMA. */
#define BNG_DRIVER_OUTSTANDING_DMA 4
typedef char bng_outstanding_dma_agrees[BNG_DRIVER_OUTSTANDING_DMA <= BNG_MAX_OUTSTANDING_DMA ? 1 : -1];

/* The core's private memory for the call: the workspace the HAL gave _p (alone), or
 * the core's from bng_hal_private. NULL when there is none (include/bng_hal.h: inside
 * body it never happens unless the HAL cannot honour its contract, and then on every
 * core): the core then writes nothing and leaves. */
BNG_VMEM unsigned char *bng_stage_memory(const bng_staged_job *job, unsigned core, size_t *bytes);
#if BNG_SPLIT_MEMORY
/* A split target's _p: the job staged on the calling core alone, through the workspace
 * the HAL gives _p (bng_hal_p_workspace, at least BNG_P_WORKSPACE_BYTES). 0: it has
 * none (the call is BNG_ENOMEM, nothing written); else the caller gives it back with
 * bng_hal_p_workspace_release before _p returns. */
int bng_stage_alone(bng_staged_job *job);
/* A split target's backward _p: the job run by its layout's s_core on the calling core
 * alone (rank 0 of one) through that workspace; BNG_ENOMEM, nothing written, without
 * one, else BNG_OK. */
int bng_stage_p_run(bng_staged_job *job, void (*s_core)(unsigned core, void *job));
#endif
/* Take bytes (rounded up to BNG_ALIGN) from a core's private memory. */
BNG_VMEM void *bng_take(BNG_VMEM unsigned char **next, size_t bytes);

/* A core's rows in an NHWC staged call (the backward's and the forward's): the k-th
 * of the cores selected takes the k-th contiguous run of row groups (bng_group_rows),
 * so that a group's rows are one core's. */
typedef struct {
    unsigned rank, cores;          /* rank: the k-th of the `cores` selected */
    size_t group_rows, groups;
    size_t begin, end;             /* the core's rows */
    int idle;                      /* no rows, not the lowest: in the barriers only */
} bng_slice;
void bng_stage_slice(unsigned mask, unsigned core, size_t batch, bng_slice *slice);

/* The tile buffers of a core's private memory: x and dy double-buffered, y's with the
 * fused ReLU, the old dx's double-buffered in a call that adds into dx; then, in a call
 * that reads its rows twice, the resident area, x and dy of the last tiles, which stay
 * from pass 1 to pass 2. */
typedef struct {
    BNG_VMEM unsigned char *x[2], *dy[2];   /* contiguous: also NHWC's fold area */
    BNG_VMEM unsigned char *y;              /* BNG_FLAG_RELU: a tile of y, masking dy's */
    BNG_VMEM unsigned char *dx[2];          /* BNG_FLAG_ACCUMULATE_DX: pass 2's old dx,
                                             * to which a tile's gradient is added; else NULL */
    size_t bytes;                           /* one tile buffer */
    BNG_VMEM unsigned char *x_resident, *dy_resident;
    size_t resident_bytes;                  /* each of the two */
} bng_tile_buffers;
/* The generator's TILE_BUFFERS, with which it checks private_bytes. */
#define BNG_LAYOUT_TILES (sizeof(((bng_tile_buffers *)0)->x) / sizeof(((bng_tile_buffers *)0)->x[0]) \
                          + sizeof(((bng_tile_buffers *)0)->dy) / sizeof(((bng_tile_buffers *)0)->dy[0]))
typedef char bng_tile_buffers_agree[BNG_LAYOUT_TILES == BNG_TILE_BUFFERS ? 1 : -1];
/* ... and its DX_TILE_BUFFERS, the old dx's of a call that adds into dx
 * (BNG_FLAG_ACCUMULATE_DX), with which it checks NCHW's. */
#define BNG_LAYOUT_DX_TILES (sizeof(((bng_tile_buffers *)0)->dx) / sizeof(((bng_tile_buffers *)0)->dx[0]))
typedef char bng_dx_tile_buffers_agree[BNG_LAYOUT_DX_TILES == BNG_DX_TILE_BUFFERS ? 1 : -1];
/* The four buffers of `bytes` each (a fifth for y with `relu`, two for the old dx with
 * `accumulate_dx`) from *next. */
void bng_take_tiles(BNG_VMEM unsigned char **next, size_t bytes, int relu, int accumulate_dx,
                    bng_tile_buffers *buffers);
/* The resident area: what is left up to `end`, halved, aligned. */
void bng_take_resident(BNG_VMEM unsigned char *next, const BNG_VMEM unsigned char *end,
                       bng_tile_buffers *buffers);

/* A tile: `rows` rows of row_bytes, in the call's arrays from element `at` with rows
 * `stride` bytes apart, and in private memory at x and dy with rows `pitch` apart.
 * NHWC's rows; NCHW's planes of a channel, whole or a piece each. */
typedef struct {
    size_t at, rows, row_bytes, stride, pitch;
    BNG_VMEM unsigned char *x, *dy;
    BNG_VMEM unsigned char *dx;     /* pass 2 adds the gradient to the old dx fetched here
                                     * (BNG_FLAG_ACCUMULATE_DX); NULL: dx over dy */
    size_t first;       /* NHWC: its first row; NCHW: its first plane */
    size_t offset;      /* NCHW: the piece's first element in its planes (0 in NHWC) */
    int resident;       /* stays on chip from pass 1 to pass 2: fetched once */
    /* NHWC: between the passes in GSM (gsm_x, gsm_dy, packed rows), whence pass 2
     * fetches it */
    int kept;
    BNG_SHARED unsigned char *gsm_x, *gsm_dy;
} bng_tile;

/* A pass over a core's tiles, double-buffered: tile t ^ 1 arrives while tile t is
 * worked on, and a buffer is refilled only once the puts from its last tile are done.
 * The layout gives the order of the tiles (next) and their work; in pass 2 (`again`) a
 * resident tile is not fetched, a kept one comes from GSM, x only in training, and the
 * old dx where the tile has a buffer for it (tile->dx), from the call's dx. */
typedef struct bng_pass bng_pass;
struct bng_pass {
    const bng_staged_job *job;
    void *room;                 /* the layout's core state */
    int again;
    /* tiles[t ^ 1] := the tile after tiles[t]; 0: none */
    int (*next)(bng_pass *pass, unsigned t);
    /* tiles[t] has arrived: its work, which may start puts[t] */
    void (*work)(bng_pass *pass, unsigned t);
    bng_tile tiles[2];
    bng_hal_dma gets[2][3], puts[2][2];     /* gets: x, dy, the old dx */
};
/* The pass of `room` (the layout's core state) over the tiles `next` orders, each
 * worked by `work`; the caller then sets tiles[0], the first tile, and runs it. */
static inline void bng_pass_init(bng_pass *pass, const bng_staged_job *job, void *room,
                                 int again, int (*next)(bng_pass *, unsigned),
                                 void (*work)(bng_pass *, unsigned))
{
    pass->job = job;
    pass->room = room;
    pass->again = again;
    pass->next = next;
    pass->work = work;
}
/* Run the pass from tiles[0] (the caller's). Pass 1 leaves the last tiles' puts to the
 * barrier that follows it; pass 2 waits for them (bng_pass_drain). */
void bng_pass_run(bng_pass *pass);
/* Wait for the puts of tile buffers t. */
void bng_pass_drain(bng_pass *pass, unsigned t);
/* Pass 2: start the put of tiles[t]'s output rows, at `rows` in private memory (the
 * backward's dx in place of its dy or in its old dx's buffer; the forward's y in place
 * of its x), back to the call's output (the job's dx). */
void bng_pass_put_dx(bng_pass *pass, unsigned t, const BNG_VMEM unsigned char *rows);
/* Where pass 2 computes a tile's dx, and how its ukernels store it (BNG_STORE_*,
 * bng_ukernel.h): added to the old dx in its buffer, else over dy, plainly (a private
 * tile is never streamed). */
static inline BNG_VMEM unsigned char *bng_tile_dx(const bng_tile *tile)
{
    return tile->dx != NULL ? tile->dx : tile->dy;
}

static inline int bng_tile_dx_store(const bng_tile *tile)
{
    return tile->dx != NULL ? BNG_STORE_ADD : BNG_STORE_PLAIN;
}

/* The per-channel values of `n` channels from `first` in and out of private memory:
 * the inputs the call reads (mean, invar, scale: three in flight); dbias and dscale
 * (in when accumulating, then out); the partial sums (apply: in; reduce: out); the
 * count's limbs (reduce; bng_step_count). */
void bng_stage_stats(const bng_staged_job *job, size_t first, size_t n, BNG_VMEM void *mean,
                     BNG_VMEM void *invar, BNG_VMEM void *scale);
void bng_stage_outputs(const bng_staged_job *job, size_t first, size_t n, BNG_VMEM void *dbias,
                       BNG_VMEM void *dscale, int put);
void bng_stage_sums(const bng_staged_job *job, size_t first, size_t n, BNG_VMEM float *sum_dy,
                    BNG_VMEM float *sum_dyxm, int put);
void bng_stage_count(const bng_staged_job *job, size_t rows, BNG_VMEM float *limbs);
/* n limbs of a count (the backward's partial sums', the forward's partials') from
 * `limbs` (limb i at limbs + i * BNG_V) to `count`, waited for: on a split target a
 * transfer of one float each, from its vector; packed elsewhere, one transfer. */
void bng_stage_put_limbs(BNG_SHARED float *count, const BNG_VMEM float *limbs, size_t n);

#endif /* BNG_STAGING_H */
