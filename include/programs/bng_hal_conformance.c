/* SPDX-License-Identifier: Apache-2.0 */
/* Copyright 2026 the batchnormgrad authors */
/* Conformance check of an implementation of include/bng_hal.h: see bng_hal_conformance.h.
 * Freestanding: no library calls, no host code; ships in a vendor drop beside the HAL.
 */
#include <stddef.h>
#include <stdint.h>

#include "bng_hal_conformance.h"

/* Shared memory: the source matrix (4 rows of 128 bytes), then per core a destination
 * image (512 bytes), a visibility slot (64) and its result record (64). */
#define SRC_ROWS 4u
#define SRC_PITCH 128u
#define SRC_BYTES (SRC_ROWS * SRC_PITCH)
#define CORE_BYTES 640u
#define DST_AT(c) (SRC_BYTES + (c) * CORE_BYTES)
#define SLOT_AT(c) (DST_AT(c) + 512u)
#define REC_AT(c) (DST_AT(c) + 576u)
#define SLOT_WORDS 16u
/* A 2-D block: 4 rows of 48 bytes at byte 16 of each 128-byte row. */
#define BLOCK_OFFSET 16u
#define BLOCK_ROW 48u
#define PADDED_ROW 64u      /* a private row pitch wider than BLOCK_ROW */
#define GUARD 0x5Au
#define FILL 0xA5u
#define MAGIC 0xB6C0FFEEu

/* Failures, one bit each. */
enum {
    F_ARG = 1 << 0, F_PRIVATE = 1 << 1, F_PRIVATE_RW = 1 << 2, F_VISIBLE = 1 << 3,
    F_GET_2D = 1 << 4, F_OUTSTANDING = 1 << 5, F_ONE_ROW = 1 << 6, F_ZERO_ROW = 1 << 7,
    F_PUT_2D = 1 << 8, F_PITCH = 1 << 9
};
static const char *const check_names[] = {
    "the argument reached the core", "bng_hal_private: size, alignment, same memory twice",
    "bng_hal_private: all of it writable", "puts visible to other cores after bng_hal_barrier",
    "2-D get (row stride > row size)", "4 transfers outstanding, waited in any order",
    "one-row transfer (stride 0)", "zero-row transfer writes nothing",
    "2-D put (row stride > row size)",
    "private row pitch > row size (padding bytes left as they were)"
};
#define CHECKS (sizeof check_names / sizeof check_names[0])

typedef struct {
    unsigned magic, tag, mask;
    BNG_SHARED unsigned char *shared;
} round_arg;

/* The result record a core leaves in shared memory. */
typedef struct {
    uint32_t tag, runs, failures, core;
} record;

static uint8_t src_byte(unsigned tag, unsigned i)
{
    return (uint8_t)((tag * 131u + i * 7u + (i >> 7)) & 0xffu);
}

static uint32_t token(unsigned tag, unsigned core, unsigned i)
{
    return (tag * 2654435761u) ^ (core << 16) ^ i ^ 0x9e3779b9u;
}

static void fill(unsigned char *p, size_t n, unsigned char v)
{
    size_t i;
    for (i = 0; i < n; i++)
        p[i] = v;
}

static unsigned popcount(unsigned v)
{
    unsigned n = 0;
    for (; v; v &= v - 1)
        n++;
    return n;
}

/* Does the packed block `got` (rows of BLOCK_ROW) hold source rows first.. of the
 * matrix at column BLOCK_OFFSET? */
static int block_ok(const unsigned char *got, unsigned tag, unsigned first_row, unsigned rows,
                    unsigned row_step)
{
    unsigned r, b;
    for (r = 0; r < rows; r++)
        for (b = 0; b < BLOCK_ROW; b++)
            if (got[r * BLOCK_ROW + b]
                != src_byte(tag, (first_row + r * row_step) * SRC_PITCH + BLOCK_OFFSET + b))
                return 0;
    return 1;
}

/* Do `rows` (SRC_ROWS rows of PADDED_ROW) hold the block's rows, with their padding
 * still FILL? */
static int padded_rows_ok(const unsigned char *rows, unsigned tag)
{
    unsigned r, i;
    for (r = 0; r < SRC_ROWS; r++)
        for (i = 0; i < PADDED_ROW; i++)
            if (rows[r * PADDED_ROW + i]
                != (i < BLOCK_ROW ? src_byte(tag, r * SRC_PITCH + BLOCK_OFFSET + i) : FILL))
                return 0;
    return 1;
}

/* Does the 512-byte image hold the block where it stands in the matrix and GUARD
 * everywhere else? */
static int image_ok(const unsigned char *image, unsigned tag)
{
    unsigned i;
    for (i = 0; i < 512; i++) {
        const unsigned col = i % SRC_PITCH;
        const int in_block = col >= BLOCK_OFFSET && col < BLOCK_OFFSET + BLOCK_ROW;
        if (image[i] != (in_block ? src_byte(tag, i) : GUARD))
            return 0;
    }
    return 1;
}

/* Private memory as the checks' scalar code sees it: its first VIEW_BYTES. On a
 * unified target that is private memory itself. On a split target private memory is
 * vector memory (AM), which scalar code may not touch: the checks work on a copy in
 * the core's scalar memory (its stack), moved to and from private memory by DMA, as
 * the driver moves data between the two memories. */
#define VIEW_BYTES 4096u

/* Bytes [at, at + n) of the view into private memory (split targets; nothing to do
 * when the view is private memory). */
static void view_out(BNG_VMEM unsigned char *mem, const unsigned char *v, size_t at, size_t n)
{
#if BNG_SPLIT_MEMORY
    bng_hal_dma_wait(bng_hal_dma_get(mem + at, (const BNG_SHARED unsigned char *)(v + at), 1, n, 0, 0));
#else
    (void)mem, (void)v, (void)at, (void)n;
#endif
}

/* Bytes [at, at + n) of private memory into the view. */
static void view_in(BNG_VMEM unsigned char *mem, unsigned char *v, size_t at, size_t n)
{
#if BNG_SPLIT_MEMORY
    bng_hal_dma_wait(bng_hal_dma_put((BNG_SHARED unsigned char *)(v + at), mem + at, 1, n, 0, 0));
#else
    (void)mem, (void)v, (void)at, (void)n;
#endif
}

/* Where scalar code reads and writes private memory at `mem`: the view (split targets),
 * or private memory itself. */
static unsigned char *scalar_view(BNG_VMEM unsigned char *mem, unsigned char *v)
{
#if BNG_SPLIT_MEMORY
    (void)mem;
    return v;
#else
    (void)v;
    return mem;
#endif
}

static uint32_t word_pattern(size_t k, unsigned tag)
{
    return (uint32_t)(k * 2654435761u) ^ tag;
}

/* All of private memory: a word pattern written, then read back, through the view
 * VIEW_BYTES at a time on a split target. */
static unsigned check_writable(BNG_VMEM unsigned char *mem, unsigned char *v, size_t bytes, unsigned tag)
{
    const size_t step = BNG_SPLIT_MEMORY ? VIEW_BYTES : bytes;
    unsigned failures = 0;
    size_t at, k;

    for (at = 0; at < bytes; at += step) {
        const size_t n = bytes - at < step ? bytes - at : step;
        uint32_t *w = (uint32_t *)(void *)scalar_view(mem + at, v);
        for (k = 0; k < n / 4; k++)
            w[k] = word_pattern(at / 4 + k, tag);
        view_out(mem + at, v, 0, n);
    }
    for (at = 0; at < bytes; at += step) {
        const size_t n = bytes - at < step ? bytes - at : step;
        const uint32_t *w = (const uint32_t *)(void *)scalar_view(mem + at, v);
        view_in(mem + at, v, 0, n);
        for (k = 0; k < n / 4; k++)
            if (w[k] != word_pattern(at / 4 + k, tag))
                failures |= F_PRIVATE_RW;
    }
    return failures;
}

/* Puts left in flight across the barrier: the matrix (rank 0) and every core's token;
 * every core reads all of them right after it, then the putting core waits. */
static unsigned check_visible(BNG_VMEM unsigned char *mem, unsigned char *v, BNG_SHARED unsigned char *shared,
                              unsigned core, unsigned rank, unsigned mask, unsigned tag)
{
    bng_hal_dma own[2] = {BNG_HAL_DMA_DONE, BNG_HAL_DMA_DONE};
    uint32_t *slot = (uint32_t *)(void *)(v + 1024), *got_words = (uint32_t *)(void *)(v + 2048);
    unsigned char *got = v + 2048;
    unsigned failures = 0, other, i;

    if (rank == 0) {
        for (i = 0; i < SRC_BYTES; i++)
            v[i] = src_byte(tag, i);
        view_out(mem, v, 0, SRC_BYTES);
        own[0] = bng_hal_dma_put(shared, mem, SRC_ROWS, SRC_PITCH, SRC_PITCH, SRC_PITCH);
    }
    for (i = 0; i < SLOT_WORDS; i++)
        slot[i] = token(tag, core, i);
    view_out(mem, v, 1024, SLOT_WORDS * 4);
    own[1] = bng_hal_dma_put(shared + SLOT_AT(core), mem + 1024, 1, SLOT_WORDS * 4, 0, 0);
    bng_hal_barrier();
    for (other = 0; other < BNG_TARGET_CORES; other++)
        if (mask & (1u << other)) {
            bng_hal_dma_wait(bng_hal_dma_get(mem + 2048, shared + SLOT_AT(other), 1, SLOT_WORDS * 4, 0, 0));
            view_in(mem, v, 2048, SLOT_WORDS * 4);
            for (i = 0; i < SLOT_WORDS; i++)
                if (got_words[i] != token(tag, other, i))
                    failures |= F_VISIBLE;
        }
    bng_hal_dma_wait(bng_hal_dma_get(mem + 2048, shared, 1, SRC_BYTES, 0, 0));
    view_in(mem, v, 2048, SRC_BYTES);
    for (i = 0; i < SRC_BYTES; i++)
        if (got[i] != src_byte(tag, i))
            failures |= F_VISIBLE;
    /* Now the putting core waits: twice, and on DONE, all return at once. */
    bng_hal_dma_wait(own[0]);
    bng_hal_dma_wait(own[1]);
    bng_hal_dma_wait(own[1]);
    bng_hal_dma_wait(BNG_HAL_DMA_DONE);
    return failures;
}

/* Gets: a 2-D one alone, then four at once waited in reverse order (a 2-D get, a
 * one-row get, a zero-row get, every other row), into a, b, c, d of 256 bytes. */
static unsigned check_gets(BNG_VMEM unsigned char *mem, unsigned char *v, const BNG_SHARED unsigned char *shared,
                           unsigned tag)
{
    unsigned char *a = v, *b = v + 256, *c = v + 512, *d = v + 768;
    unsigned failures = 0, i;
    bng_hal_dma h[4];

    fill(a, 256, FILL);
    view_out(mem, v, 0, 256);
    bng_hal_dma_wait(bng_hal_dma_get(mem, shared + BLOCK_OFFSET, SRC_ROWS, BLOCK_ROW, SRC_PITCH, BLOCK_ROW));
    view_in(mem, v, 0, 256);
    if (!block_ok(a, tag, 0, SRC_ROWS, 1) || a[SRC_ROWS * BLOCK_ROW] != FILL)
        failures |= F_GET_2D;

    fill(v, 1024, FILL);
    view_out(mem, v, 0, 1024);
    h[0] = bng_hal_dma_get(mem, shared + BLOCK_OFFSET, SRC_ROWS, BLOCK_ROW, SRC_PITCH, BLOCK_ROW);
    h[1] = bng_hal_dma_get(mem + 256, shared + 2 * SRC_PITCH + BLOCK_OFFSET, 1, BLOCK_ROW, 0, 0);
    h[2] = bng_hal_dma_get(mem + 512, shared + BLOCK_OFFSET, 0, BLOCK_ROW, SRC_PITCH, BLOCK_ROW);
    h[3] = bng_hal_dma_get(mem + 768, shared + SRC_PITCH + BLOCK_OFFSET, 2, BLOCK_ROW, 2 * SRC_PITCH, BLOCK_ROW);
    bng_hal_dma_wait(h[3]);
    bng_hal_dma_wait(h[2]);
    bng_hal_dma_wait(h[1]);
    bng_hal_dma_wait(h[0]);
    view_in(mem, v, 0, 1024);
    if (!block_ok(a, tag, 0, SRC_ROWS, 1) || !block_ok(d, tag, 1, 2, 2))
        failures |= F_OUTSTANDING;
    if (!block_ok(b, tag, 2, 1, 1) || b[BLOCK_ROW] != FILL)
        failures |= F_ONE_ROW;
    for (i = 0; i < 256; i++)
        if (c[i] != FILL)
            failures |= F_ZERO_ROW;
    return failures;
}

/* Puts into this core's destination image: guards first, then a 2-D put of the block
 * got by check_gets (at a), a one-row put of its row (at b) into the last row's gap, a
 * zero-row put; then the whole image read back (into c). */
static unsigned check_puts(BNG_VMEM unsigned char *mem, unsigned char *v, BNG_SHARED unsigned char *shared,
                           unsigned core, unsigned tag)
{
    unsigned char *c = v + 512;
    unsigned failures = 0, i;
    bng_hal_dma h[3];

    fill(c, 512, GUARD);
    view_out(mem, v, 512, 512);
    bng_hal_dma_wait(bng_hal_dma_put(shared + DST_AT(core), mem + 512, 1, 512, 0, 0));
    h[0] = bng_hal_dma_put(shared + DST_AT(core) + BLOCK_OFFSET, mem, SRC_ROWS, BLOCK_ROW, SRC_PITCH, BLOCK_ROW);
    h[1] = bng_hal_dma_put(shared + DST_AT(core) + 3 * SRC_PITCH + 80, mem + 256, 1, BLOCK_ROW, 0, 0);
    h[2] = bng_hal_dma_put(shared + DST_AT(core), mem + 768, 0, BLOCK_ROW, SRC_PITCH, BLOCK_ROW);
    bng_hal_dma_wait(h[2]);
    bng_hal_dma_wait(h[0]);
    bng_hal_dma_wait(h[1]);
    fill(c, 512, FILL);
    view_out(mem, v, 512, 512);
    bng_hal_dma_wait(bng_hal_dma_get(mem + 512, shared + DST_AT(core), 1, 512, 0, 0));
    view_in(mem, v, 512, 512);
    for (i = 0; i < 512; i++) {
        const unsigned row = i / SRC_PITCH, col = i % SRC_PITCH;
        const int one_row = row == 3 && col >= 80;
        unsigned char want = GUARD;
        if (one_row)
            want = src_byte(tag, 2 * SRC_PITCH + BLOCK_OFFSET + (col - 80));
        else if (col >= BLOCK_OFFSET && col < BLOCK_OFFSET + BLOCK_ROW)
            want = src_byte(tag, row * SRC_PITCH + col);
        if (c[i] != want)
            failures |= one_row ? F_ONE_ROW : F_PUT_2D;
    }
    /* (the zero-row put aimed at the image's first bytes: they must be guards) */
    for (i = 0; i < BLOCK_OFFSET; i++)
        if (c[i] != GUARD)
            failures |= F_ZERO_ROW;
    return failures;
}

/* A private row pitch (split targets pad each private row to whole vectors): the
 * block got into rows of PADDED_ROW bytes, the padding untouched, then put back from
 * them into the destination image between guards. */
static unsigned check_pitch(BNG_VMEM unsigned char *mem, unsigned char *v, BNG_SHARED unsigned char *shared,
                            unsigned core, unsigned tag)
{
    unsigned char *padded = v, *image = v + 1024;
    unsigned failures = 0;

    fill(padded, SRC_ROWS * PADDED_ROW, FILL);
    view_out(mem, v, 0, SRC_ROWS * PADDED_ROW);
    bng_hal_dma_wait(bng_hal_dma_get(mem, shared + BLOCK_OFFSET, SRC_ROWS, BLOCK_ROW, SRC_PITCH, PADDED_ROW));
    view_in(mem, v, 0, SRC_ROWS * PADDED_ROW);
    if (!padded_rows_ok(padded, tag))
        failures |= F_PITCH;
    fill(image, 512, GUARD);
    view_out(mem, v, 1024, 512);
    bng_hal_dma_wait(bng_hal_dma_put(shared + DST_AT(core), mem + 1024, 1, 512, 0, 0));
    bng_hal_dma_wait(bng_hal_dma_put(shared + DST_AT(core) + BLOCK_OFFSET, mem, SRC_ROWS, BLOCK_ROW,
                                     SRC_PITCH, PADDED_ROW));
    fill(image, 512, FILL);
    view_out(mem, v, 1024, 512);
    bng_hal_dma_wait(bng_hal_dma_get(mem + 1024, shared + DST_AT(core), 1, 512, 0, 0));
    view_in(mem, v, 1024, 512);
    if (!image_ok(image, tag))
        failures |= F_PITCH;
    return failures;
}

/* The record: runs counted across bodies on this core in this round. */
static void write_record(BNG_VMEM unsigned char *mem, unsigned char *v, BNG_SHARED unsigned char *shared,
                         unsigned core, unsigned tag, unsigned failures)
{
    record *rec = (record *)(void *)(v + 3072);

    bng_hal_dma_wait(bng_hal_dma_get(mem + 3072, shared + REC_AT(core), 1, sizeof *rec, 0, 0));
    view_in(mem, v, 3072, sizeof *rec);
    rec->runs = rec->tag == tag ? rec->runs + 1 : 1;
    rec->tag = tag;
    rec->failures = failures;
    rec->core = core;
    view_out(mem, v, 3072, sizeof *rec);
    bng_hal_dma_wait(bng_hal_dma_put(shared + REC_AT(core), mem + 3072, 1, sizeof *rec, 0, 0));
}

static void body(unsigned core, void *p)
{
    const round_arg *arg = p;
    const unsigned tag = arg->tag, mask = arg->mask;
    BNG_SHARED unsigned char *const shared = arg->shared;
    const unsigned rank = popcount(mask & ((1u << core) - 1u));
    unsigned failures = 0;
    size_t bytes = 0, bytes2 = 0;
    BNG_VMEM unsigned char *mem = bng_hal_private(core, &bytes), *mem2 = bng_hal_private(core, &bytes2);
#if BNG_SPLIT_MEMORY
    uint32_t copy[VIEW_BYTES / 4];          /* the view: scalar memory */
    unsigned char *v = scalar_view(mem, (unsigned char *)copy);
#else
    unsigned char *v = scalar_view(mem, NULL);   /* the view: private memory itself */
#endif

    if (arg->magic != MAGIC || !(mask & (1u << core)))
        failures |= F_ARG;
    if (mem == NULL || bytes < BNG_PRIVATE_BYTES || ((uintptr_t)mem & 63u) != 0 || mem2 != mem
        || bytes2 != bytes) {
        failures |= F_PRIVATE;
        mem = NULL;
    }
    if (mem != NULL)
        failures |= check_writable(mem, v, bytes, tag);
    if (mem != NULL)
        failures |= check_visible(mem, v, shared, core, rank, mask, tag);
    else
        bng_hal_barrier();
    bng_hal_barrier();      /* every put waited for: the checks below do not depend on it */
    if (mem != NULL) {
        failures |= check_gets(mem, v, shared, tag);
        failures |= check_puts(mem, v, shared, core, tag);
        failures |= check_pitch(mem, v, shared, core, tag);
        write_record(mem, v, shared, core, tag, failures);
    }
    bng_hal_barrier();
}

#if BNG_SPLIT_MEMORY
/* _p's workspace (split targets), outside any parallel call: its size and alignment,
 * and the transfers _p makes with it, with the workspace's own start standing in for
 * the caller's arrays in the same AM: the caller's rows into padded tile rows, the
 * padded rows back into the caller's rows (dx: the padding must not reach them), and a
 * single float between AM and scalar memory (the partial-sums count). Layout of the
 * workspace: the matrix at 0, the tile at 1024, the caller's dx image at 2048, the
 * float at 3072. */
static unsigned check_p_workspace(unsigned tag)
{
    uint32_t copy[VIEW_BYTES / 4];
    unsigned char *v = (unsigned char *)copy;
    BNG_VMEM unsigned char *ws;
    uint32_t word = 0x3f800000u ^ tag, back = 0;
    size_t bytes = 0;
    unsigned i;
    int ok;

    ws = bng_hal_p_workspace(&bytes);
    if (ws == NULL)
        return 1;
    if (bytes < BNG_P_WORKSPACE_BYTES || ((uintptr_t)ws & 63u) != 0 || bytes < VIEW_BYTES) {
        bng_hal_p_workspace_release(ws);
        return 1;
    }
    for (i = 0; i < SRC_BYTES; i++)
        v[i] = src_byte(tag, i);
    fill(v + 1024, SRC_ROWS * PADDED_ROW, FILL);
    fill(v + 2048, 512, GUARD);
    view_out(ws, v, 0, SRC_BYTES);
    view_out(ws, v, 1024, SRC_ROWS * PADDED_ROW);
    view_out(ws, v, 2048, 512);
    bng_hal_dma_wait(bng_hal_dma_get(ws + 1024, (const BNG_SHARED unsigned char *)(BNG_FORCE unsigned char *)(ws + BLOCK_OFFSET),
                                     SRC_ROWS, BLOCK_ROW, SRC_PITCH, PADDED_ROW));
    bng_hal_dma_wait(bng_hal_dma_put((BNG_SHARED unsigned char *)(BNG_FORCE unsigned char *)(ws + 2048 + BLOCK_OFFSET),
                                     ws + 1024, SRC_ROWS, BLOCK_ROW, SRC_PITCH, PADDED_ROW));
    view_in(ws, v, 1024, SRC_ROWS * PADDED_ROW);
    view_in(ws, v, 2048, 512);
    ok = padded_rows_ok(v + 1024, tag) && image_ok(v + 2048, tag);
    bng_hal_dma_wait(bng_hal_dma_get(ws + 3072, (const BNG_SHARED uint32_t *)&word, 1, sizeof word, 0, 0));
    bng_hal_dma_wait(bng_hal_dma_put((BNG_SHARED uint32_t *)&back, ws + 3072, 1, sizeof back, 0, 0));
    ok = ok && back == word;
    bng_hal_p_workspace_release(ws);
    return ok ? 0 : 1;
}
#endif

static unsigned report_failures(unsigned bits, unsigned core, bng_hal_conformance_report report,
                                void *ctx)
{
    unsigned k, n = 0;
    for (k = 0; k < CHECKS; k++)
        if (bits & (1u << k)) {
            n++;
            if (report)
                report(ctx, check_names[k], core);
        }
    return n;
}

int bng_hal_conformance(BNG_SHARED void *shared_memory, unsigned seed,
                        bng_hal_conformance_report report, bng_hal_conformance_sync sync,
                        void *ctx)
{
    const unsigned all = BNG_TARGET_CORES >= 32 ? 0xffffffffu : (1u << BNG_TARGET_CORES) - 1u;
    const unsigned masks[4] = {all, 1u << (BNG_TARGET_CORES - 1), all & 0x55555555u, 1u};
    BNG_SHARED unsigned char *const shared = (BNG_SHARED unsigned char *)shared_memory;
    unsigned failures = 0, m, core;

    for (m = 0; m < 4; m++) {
        round_arg arg;
        int result;

        arg.magic = MAGIC;
        arg.tag = seed * 8u + m + 1u;
        arg.mask = masks[m];
        arg.shared = shared;
        if (m > 0 && sync)
            sync(ctx);
        result = bng_hal_parallel(arg.mask, body, &arg, sizeof arg);
        if (result == BNG_HAL_IDLE)
            continue;          /* this core is not selected: the selected ones check */
        if (result != BNG_HAL_OK) {
            failures++;
            if (report)
                report(ctx, "bng_hal_parallel returned BNG_HAL_OK", BNG_TARGET_CORES);
            continue;
        }
        for (core = 0; core < BNG_TARGET_CORES; core++) {
            const BNG_SHARED record *rec = (const BNG_SHARED record *)(shared + REC_AT(core));
            if (arg.mask & (1u << core)) {
                if (rec->tag != arg.tag || rec->runs != 1 || rec->core != core) {
                    failures++;
                    if (report)
                        report(ctx, "body ran exactly once on every selected core", core);
                } else
                    failures += report_failures(rec->failures, core, report, ctx);
            } else if (rec->tag == arg.tag) {
                failures++;
                if (report)
                    report(ctx, "body ran on no core outside the mask", core);
            }
        }
    }
    if (sync)
        sync(ctx);
#if BNG_SPLIT_MEMORY
    if (check_p_workspace(seed * 8u + 7u)) {
        failures++;
        if (report)
            report(ctx, "bng_hal_p_workspace: size, alignment, transfers within vector memory "
                        "and with scalar memory", BNG_TARGET_CORES);
    }
#endif
    return (int)failures;
}
