/* SPDX-License-Identifier: Apache-2.0 */
/* Copyright 2026 the batchnormgrad authors */
/* The host's model of a DSP's DMA engine: see bng_dma_engine.h. Not for firmware. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bng_dma_engine.h"
#include "bng_kernels.h"

/* The engine refuses what the HAL contract refuses: the plan's BNG_MAX_OUTSTANDING_DMA. */
typedef char bng_dma_engine_limit_agrees[BNG_DMA_MAX_OUTSTANDING == BNG_MAX_OUTSTANDING_DMA ? 1 : -1];

typedef struct {
    int handle;                    /* 0: the slot is free */
    int is_put;
    const char *call;              /* the function that issued it */
    unsigned char *dst;
    const unsigned char *src;
    size_t rows, row_bytes, dst_stride, src_stride;
    unsigned char *snapshot;       /* the source as it was at issue */
    size_t snapshot_bytes;         /* its size: one more than the slot's largest transfer */
} transfer;

typedef struct {
    transfer slots[BNG_DMA_MAX_OUTSTANDING];
    int last_handle;
    unsigned random;
    unsigned char *arena;
    size_t arena_bytes;
} core_state;

static int checking = 1;
static core_state *cores;

void bng_dma_engine_fail(const char *call, const char *what, int core)
{
    fprintf(stderr, "bng_hal_host: %s: %s (core %d)\n", call, what, core);
    abort();
}

void bng_dma_engine_init(unsigned count, size_t arena_bytes, size_t extra_arena_bytes)
{
    const char *mode = getenv("BNG_HAL_HOST");
    const unsigned engines = count + (extra_arena_bytes != 0);
    unsigned c;

    checking = !(mode && strcmp(mode, "fast") == 0);
    if (!(cores = calloc(engines, sizeof *cores)))
        bng_dma_engine_fail("bng_dma_engine_init", "out of memory", -1);
    for (c = 0; c < engines; c++) {
        cores[c].arena_bytes = c < count ? arena_bytes : extra_arena_bytes;
        if (!(cores[c].arena = aligned_alloc(64, cores[c].arena_bytes)))
            bng_dma_engine_fail("bng_dma_engine_init", "cannot allocate a private arena", (int)c);
    }
}

unsigned char *bng_dma_engine_arena(unsigned core)
{
    return cores[core].arena;
}

/* Under ThreadSanitizer the arena's poison is written unseen. It stands for what a
 * private memory holds before a call writes it, no access of the program's, so there is
 * no race in it to find; seen, each core's whole arena checked at every call was a fifth
 * of the SPMD suites' time (mt7004: 768,000 bytes a core). The program's accesses to the
 * arena (the kernels', the transfers') are checked as before. */
#if defined(__SANITIZE_THREAD__)   /* GCC's spelling */
#define BNG_UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)  /* clang's */
#define BNG_UNDER_TSAN 1
#endif
#endif
/* A transfer's own accesses to the program's memory are told to ThreadSanitizer
 * (seen_rows): its reads of the source, at issue and at completion (a transfer reads
 * its source at some time in between: a write to it that neither end orders is a
 * race), and its writes of the destination (the poison at issue, the data at
 * completion). The engine's own copies into and out of a slot's snapshot, and its
 * comparison of the source with it, are unseen: the snapshot is the engine's. Seen,
 * they were three of a transfer's seven passes over its bytes, each a range check
 * (mt7004's suite: 13% of its time in the engine's copies). */
#if defined(BNG_UNDER_TSAN)
/* (The runtime ignores every access of the thread between the two, reads too.) */
void AnnotateIgnoreWritesBegin(const char *file, int line);
void AnnotateIgnoreWritesEnd(const char *file, int line);
void __tsan_read_range(void *addr, long size);   /* GCC's builtin's types */
void __tsan_write_range(void *addr, long size);
#define UNSEEN_BY_TSAN_BEGIN() AnnotateIgnoreWritesBegin(__FILE__, __LINE__)
#define UNSEEN_BY_TSAN_END() AnnotateIgnoreWritesEnd(__FILE__, __LINE__)
static void seen_rows(const void *p, size_t stride, size_t rows, size_t row_bytes, int is_write)
{
    size_t r;
    for (r = 0; r < rows; r++) {
        void *row = (unsigned char *)(uintptr_t)p + r * stride;
        if (is_write)
            __tsan_write_range(row, (long)row_bytes);
        else
            __tsan_read_range(row, (long)row_bytes);
    }
}
#else
#define UNSEEN_BY_TSAN_BEGIN() ((void)0)
#define UNSEEN_BY_TSAN_END() ((void)0)
#define seen_rows(p, stride, rows, row_bytes, is_write) ((void)0)
#endif

void bng_dma_engine_begin(unsigned core, unsigned call)
{
    cores[core].random = 2654435761u * (core + 1) + call;
    if (checking) {
        UNSEEN_BY_TSAN_BEGIN();
        memset(cores[core].arena, BNG_DMA_POISON, cores[core].arena_bytes);
        UNSEEN_BY_TSAN_END();
    }
}

void bng_dma_engine_end(unsigned core)
{
    size_t i;
    for (i = 0; i < BNG_DMA_MAX_OUTSTANDING; i++)
        if (cores[core].slots[i].handle)
            bng_dma_engine_fail(cores[core].slots[i].call,
                                "a transfer is still outstanding when the core's work returns",
                                (int)core);
}

static void copy_rows(unsigned char *dst, size_t dst_stride, const unsigned char *src,
                      size_t src_stride, size_t rows, size_t row_bytes)
{
    size_t r;
    if (dst_stride == row_bytes && src_stride == row_bytes) {     /* one block */
        memmove(dst, src, rows * row_bytes);
        return;
    }
    for (r = 0; r < rows; r++)
        memmove(dst + r * dst_stride, src + r * src_stride, row_bytes);
}

/* A put in fast mode: a DMA engine writes memory without going through the core's
 * cache, so on x86 the rows are written with streaming stores (no read of the lines
 * first, nothing evicted); the ends that are not 16-byte aligned are plain copies. */
#if defined(__SSE2__)
#include <emmintrin.h>
static void stream_block(unsigned char *dst, const unsigned char *src, size_t bytes)
{
    size_t head = (16 - (uintptr_t)dst % 16) % 16, i;
    if (head > bytes)
        head = bytes;
    memcpy(dst, src, head);
    for (i = head; i + 16 <= bytes; i += 16)
        _mm_stream_si128((__m128i *)(void *)(dst + i), _mm_loadu_si128((const __m128i *)(const void *)(src + i)));
    memcpy(dst + i, src + i, bytes - i);
}

static void put_rows(unsigned char *dst, size_t dst_stride, const unsigned char *src,
                     size_t rows, size_t row_bytes)
{
    size_t r;
    if (dst_stride == row_bytes)
        stream_block(dst, src, rows * row_bytes);
    else
        for (r = 0; r < rows; r++)
            stream_block(dst + r * dst_stride, src + r * row_bytes, row_bytes);
    _mm_sfence();       /* the puts are visible to every core when the call returns */
}
#else
static void put_rows(unsigned char *dst, size_t dst_stride, const unsigned char *src,
                     size_t rows, size_t row_bytes)
{
    copy_rows(dst, dst_stride, src, row_bytes, rows, row_bytes);
}
#endif

static void complete(unsigned core, transfer *t)
{
    size_t r;
    UNSEEN_BY_TSAN_BEGIN();
    for (r = 0; r < t->rows; r++)
        if (memcmp(t->src + r * t->src_stride, t->snapshot + r * t->row_bytes, t->row_bytes))
            bng_dma_engine_fail(t->call, "its source was written while the transfer was in flight",
                                (int)core);
    copy_rows(t->dst, t->dst_stride, t->snapshot, t->row_bytes, t->rows, t->row_bytes);
    UNSEEN_BY_TSAN_END();
    seen_rows(t->src, t->src_stride, t->rows, t->row_bytes, 0);
    seen_rows(t->dst, t->dst_stride, t->rows, t->row_bytes, 1);
    t->handle = 0;
}

static unsigned next_random(core_state *c)
{
    c->random ^= c->random << 13;
    c->random ^= c->random >> 17;
    c->random ^= c->random << 5;
    return c->random;
}

/* A slot keeps its snapshot from transfer to transfer, as a core keeps its arena, grown
 * to the largest: a block of its own per transfer was, under ThreadSanitizer, a mapping
 * and a shadow faulted in afresh each time (a tile is hundreds of KiB). */
static void make_snapshot_room(transfer *t, size_t bytes, const char *call, int core)
{
    if (bytes < t->snapshot_bytes)
        return;
    free(t->snapshot);
    if (!(t->snapshot = malloc(bytes + 1)))
        bng_dma_engine_fail(call, "out of memory", core);
    t->snapshot_bytes = bytes + 1;
}

int bng_dma_engine_issue(unsigned core, const char *call, void *dst, size_t dst_stride,
                         const void *src, size_t src_stride, size_t rows, size_t row_bytes,
                         const void *private_side)
{
    core_state *c = &cores[core];
    const uintptr_t base = (uintptr_t)c->arena, at = (uintptr_t)private_side;
    const size_t bytes = rows * row_bytes;
    const size_t private_stride = private_side == src ? src_stride : dst_stride;
    const size_t span = rows ? (rows - 1) * private_stride + row_bytes : 0;
    transfer *t = NULL;
    size_t i;

    if (at < base || at - base > c->arena_bytes || span > c->arena_bytes - (at - base))
        bng_dma_engine_fail(call, "the private side leaves the calling core's private memory",
                            (int)core);
    if (!checking) {
        if (private_side == src && src_stride == row_bytes)
            put_rows(dst, dst_stride, src, rows, row_bytes);
        else
            copy_rows(dst, dst_stride, src, src_stride, rows, row_bytes);
        return 0;
    }
    /* A random earlier transfer completes now: the engine's timing is not ours. */
    if (next_random(c) % 4 == 0) {
        transfer *pick = &c->slots[next_random(c) % BNG_DMA_MAX_OUTSTANDING];
        if (pick->handle)
            complete(core, pick);
    }
    for (i = 0; i < BNG_DMA_MAX_OUTSTANDING && !t; i++)
        if (!c->slots[i].handle)
            t = &c->slots[i];
    if (!t)
        bng_dma_engine_fail(call, "more than 4 transfers outstanding on one core", (int)core);
    make_snapshot_room(t, bytes, call, (int)core);
    UNSEEN_BY_TSAN_BEGIN();
    copy_rows(t->snapshot, row_bytes, src, src_stride, rows, row_bytes);
    UNSEEN_BY_TSAN_END();
    seen_rows(src, src_stride, rows, row_bytes, 0);
    for (i = 0; i < rows; i++)
        memset((unsigned char *)dst + i * dst_stride, BNG_DMA_POISON, row_bytes);
    c->last_handle = c->last_handle == 0x7fffffff ? 1 : c->last_handle + 1;
    t->handle = c->last_handle;
    t->is_put = private_side == src;
    t->call = call;
    t->dst = dst;
    t->src = src;
    t->rows = rows;
    t->row_bytes = row_bytes;
    t->dst_stride = dst_stride;
    t->src_stride = src_stride;
    return t->handle;
}

void bng_dma_engine_wait(unsigned core, int handle)
{
    size_t i;
    for (i = 0; handle != 0 && i < BNG_DMA_MAX_OUTSTANDING; i++)
        if (cores[core].slots[i].handle == handle)
            complete(core, &cores[core].slots[i]);
}

void bng_dma_engine_complete_puts(unsigned core)
{
    size_t i;
    for (i = 0; i < BNG_DMA_MAX_OUTSTANDING; i++)
        if (cores[core].slots[i].handle && cores[core].slots[i].is_put)
            complete(core, &cores[core].slots[i]);
}
