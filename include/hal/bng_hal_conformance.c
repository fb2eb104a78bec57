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

static void body(unsigned core, void *p)
{
    const round_arg *arg = p;
    const unsigned tag = arg->tag, mask = arg->mask;
    BNG_SHARED unsigned char *const shared = arg->shared;
    unsigned rank = 0, other, failures = 0, i;
    size_t bytes = 0, bytes2 = 0;
    unsigned char *mem = bng_hal_private(core, &bytes), *mem2 = bng_hal_private(core, &bytes2);
    bng_hal_dma own[2] = {BNG_HAL_DMA_DONE, BNG_HAL_DMA_DONE};

    if (arg->magic != MAGIC || !(mask & (1u << core)))
        failures |= F_ARG;
    rank = popcount(mask & ((1u << core) - 1u));
    if (mem == NULL || bytes < BNG_PRIVATE_BYTES || ((uintptr_t)mem & 63u) != 0 || mem2 != mem
        || bytes2 != bytes) {
        failures |= F_PRIVATE;
        mem = NULL;
    }
    if (mem != NULL) {
        /* All of it: a word pattern written, then read back. */
        uint32_t *w = (uint32_t *)(void *)mem;
        size_t words = bytes / 4, k;
        for (k = 0; k < words; k++)
            w[k] = (uint32_t)(k * 2654435761u) ^ tag;
        for (k = 0; k < words; k++)
            if (w[k] != ((uint32_t)(k * 2654435761u) ^ tag))
                failures |= F_PRIVATE_RW;
    }

    /* Puts left in flight across the barrier: the matrix (rank 0) and every core's
     * token. The other cores read them right after it. */
    if (mem != NULL) {
        uint32_t *slot = (uint32_t *)(void *)(mem + 1024);
        if (rank == 0) {
            for (i = 0; i < SRC_BYTES; i++)
                mem[i] = src_byte(tag, i);
            own[0] = bng_hal_dma_put(shared, mem, SRC_ROWS, SRC_PITCH, SRC_PITCH, SRC_PITCH);
        }
        for (i = 0; i < SLOT_WORDS; i++)
            slot[i] = token(tag, core, i);
        own[1] = bng_hal_dma_put(shared + SLOT_AT(core), slot, 1, SLOT_WORDS * 4, 0, 0);
    }
    bng_hal_barrier();
    if (mem != NULL) {
        unsigned char *got = mem + 2048;
        for (other = 0; other < BNG_TARGET_CORES; other++)
            if (mask & (1u << other)) {
                const uint32_t *w = (const uint32_t *)(void *)got;
                bng_hal_dma_wait(bng_hal_dma_get(got, shared + SLOT_AT(other), 1, SLOT_WORDS * 4, 0, 0));
                for (i = 0; i < SLOT_WORDS; i++)
                    if (w[i] != token(tag, other, i))
                        failures |= F_VISIBLE;
            }
        bng_hal_dma_wait(bng_hal_dma_get(got, shared, 1, SRC_BYTES, 0, 0));
        for (i = 0; i < SRC_BYTES; i++)
            if (got[i] != src_byte(tag, i))
                failures |= F_VISIBLE;
        /* Now the putting core waits: twice, and on DONE, all return at once. */
        bng_hal_dma_wait(own[0]);
        bng_hal_dma_wait(own[1]);
        bng_hal_dma_wait(own[1]);
        bng_hal_dma_wait(BNG_HAL_DMA_DONE);
    }
    bng_hal_barrier();      /* every put waited for: the checks below do not depend on it */

    if (mem != NULL) {
        unsigned char *a = mem, *b = mem + 256, *c = mem + 512, *d = mem + 768;
        bng_hal_dma h[4];

        /* One 2-D get on its own. */
        fill(a, 256, FILL);
        bng_hal_dma_wait(bng_hal_dma_get(a, shared + BLOCK_OFFSET, SRC_ROWS, BLOCK_ROW, SRC_PITCH, BLOCK_ROW));
        if (!block_ok(a, tag, 0, SRC_ROWS, 1) || a[SRC_ROWS * BLOCK_ROW] != FILL)
            failures |= F_GET_2D;

        /* Four at once, waited in reverse order: a 2-D get, a one-row get (stride 0),
         * a zero-row get, and every other row. */
        fill(mem, 1024, FILL);
        h[0] = bng_hal_dma_get(a, shared + BLOCK_OFFSET, SRC_ROWS, BLOCK_ROW, SRC_PITCH, BLOCK_ROW);
        h[1] = bng_hal_dma_get(b, shared + 2 * SRC_PITCH + BLOCK_OFFSET, 1, BLOCK_ROW, 0, 0);
        h[2] = bng_hal_dma_get(c, shared + BLOCK_OFFSET, 0, BLOCK_ROW, SRC_PITCH, BLOCK_ROW);
        h[3] = bng_hal_dma_get(d, shared + SRC_PITCH + BLOCK_OFFSET, 2, BLOCK_ROW, 2 * SRC_PITCH, BLOCK_ROW);
        bng_hal_dma_wait(h[3]);
        bng_hal_dma_wait(h[2]);
        bng_hal_dma_wait(h[1]);
        bng_hal_dma_wait(h[0]);
        if (!block_ok(a, tag, 0, SRC_ROWS, 1) || !block_ok(d, tag, 1, 2, 2))
            failures |= F_OUTSTANDING;
        if (!block_ok(b, tag, 2, 1, 1) || b[BLOCK_ROW] != FILL)
            failures |= F_ONE_ROW;
        for (i = 0; i < 256; i++)
            if (c[i] != FILL)
                failures |= F_ZERO_ROW;

        /* Puts into this core's destination image: guards first, then a 2-D put of the
         * block, a one-row put (stride 0) into the last row's gap, a zero-row put;
         * then the whole image read back. */
        fill(c, 512, GUARD);
        bng_hal_dma_wait(bng_hal_dma_put(shared + DST_AT(core), c, 1, 512, 0, 0));
        h[0] = bng_hal_dma_put(shared + DST_AT(core) + BLOCK_OFFSET, a, SRC_ROWS, BLOCK_ROW, SRC_PITCH, BLOCK_ROW);
        h[1] = bng_hal_dma_put(shared + DST_AT(core) + 3 * SRC_PITCH + 80, b, 1, BLOCK_ROW, 0, 0);
        h[2] = bng_hal_dma_put(shared + DST_AT(core), d, 0, BLOCK_ROW, SRC_PITCH, BLOCK_ROW);
        bng_hal_dma_wait(h[2]);
        bng_hal_dma_wait(h[0]);
        bng_hal_dma_wait(h[1]);
        fill(c, 512, FILL);
        bng_hal_dma_wait(bng_hal_dma_get(c, shared + DST_AT(core), 1, 512, 0, 0));
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
    }

    /* A private row pitch (split targets pad each private row to whole vectors): the
     * block got into rows of PADDED_ROW bytes, the padding untouched, then put back
     * from them into the destination image between guards. */
    if (mem != NULL) {
        unsigned char *padded = mem, *image = mem + 1024;
        unsigned r;

        fill(padded, SRC_ROWS * PADDED_ROW, FILL);
        bng_hal_dma_wait(bng_hal_dma_get(padded, shared + BLOCK_OFFSET, SRC_ROWS, BLOCK_ROW,
                                         SRC_PITCH, PADDED_ROW));
        for (r = 0; r < SRC_ROWS; r++)
            for (i = 0; i < PADDED_ROW; i++)
                if (padded[r * PADDED_ROW + i]
                    != (i < BLOCK_ROW ? src_byte(tag, r * SRC_PITCH + BLOCK_OFFSET + i) : FILL))
                    failures |= F_PITCH;
        fill(image, 512, GUARD);
        bng_hal_dma_wait(bng_hal_dma_put(shared + DST_AT(core), image, 1, 512, 0, 0));
        bng_hal_dma_wait(bng_hal_dma_put(shared + DST_AT(core) + BLOCK_OFFSET, padded, SRC_ROWS,
                                         BLOCK_ROW, SRC_PITCH, PADDED_ROW));
        fill(image, 512, FILL);
        bng_hal_dma_wait(bng_hal_dma_get(image, shared + DST_AT(core), 1, 512, 0, 0));
        for (i = 0; i < 512; i++) {
            const unsigned col = i % SRC_PITCH;
            const int in_block = col >= BLOCK_OFFSET && col < BLOCK_OFFSET + BLOCK_ROW;
            if (image[i] != (in_block ? src_byte(tag, i) : GUARD))
                failures |= F_PITCH;
        }
    }

    /* The record: runs counted across bodies on this core in this round. */
    if (mem != NULL) {
        record *rec = (record *)(void *)(mem + 3072);
        bng_hal_dma_wait(bng_hal_dma_get(rec, shared + REC_AT(core), 1, sizeof *rec, 0, 0));
        rec->runs = rec->tag == tag ? rec->runs + 1 : 1;
        rec->tag = tag;
        rec->failures = failures;
        rec->core = core;
        bng_hal_dma_wait(bng_hal_dma_put(shared + REC_AT(core), rec, 1, sizeof *rec, 0, 0));
    }
    bng_hal_barrier();
}

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
    return (int)failures;
}
