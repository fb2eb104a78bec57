/* SPDX-License-Identifier: Apache-2.0 */
/* Copyright 2026 the batchnormgrad authors */
/* The tracing HAL: see bng_hal_trace.h. Not for firmware.
 *
 * Each selected core is a thread started for the region (the calling thread waits for
 * them): the trace needs the driver's schedule, not speed. Events go into the core's own
 * list while it runs and into the record, core by core, when the region returns, so that
 * the record is the same on every run. Built per target: the core count and arena size
 * come from bng_kernels.h.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bng_hal.h"
#include "bng_hal_trace.h"
#include "bng_kernels.h"

/* _p on a split target stages through a workspace on the calling thread: it is traced
 * as one more core after the cluster's. */
#define CORES (BNG_TARGET_CORES + 1)
#define P_CORE BNG_TARGET_CORES
#if BNG_SPLIT_MEMORY
#define ARENA_BYTES(core) \
    ((core) == P_CORE ? (size_t)BNG_P_WORKSPACE_BYTES : (size_t)BNG_PRIVATE_BYTES)
#else
#define ARENA_BYTES(core) ((size_t)BNG_PRIVATE_BYTES)
#endif
#define MAX_REGIONS 16

typedef enum { EV_GET, EV_PUT, EV_WAIT, EV_BARRIER, EV_KERNEL, EV_KEEP } event_kind;

typedef struct {
    event_kind kind;
    int handle;
    const char *from, *to;          /* transfers: memory levels */
    const char *entry, *op;         /* kernel calls */
    size_t rows, bytes;             /* row bytes (transfers), channels (kernel calls) */
    size_t am_rows, gsm_rows;       /* keep */
} event;

typedef struct {
    event *events;
    size_t count, capacity;
    int last_handle;
    unsigned char *arena;
} core_trace;

typedef struct {
    uintptr_t start, bytes;
    const char *level;
} region;

static FILE *out;
static int copying;
static region regions[MAX_REGIONS];
static unsigned region_count;
static core_trace cores[CORES];
static pthread_barrier_t barrier;
static bng_hal_body region_body;
static void *region_arg;
static __thread int current_core = -1;

static void fail(const char *what)
{
    fprintf(stderr, "bng_hal_trace: %s\n", what);
    abort();
}

void bng_hal_trace_start(FILE *record, int copy)
{
    out = record;
    copying = copy;
}

void bng_hal_trace_region(const void *start, size_t bytes, const char *level)
{
    if (region_count == MAX_REGIONS)
        fail("more than 16 regions");
    regions[region_count].start = (uintptr_t)start;
    regions[region_count].bytes = bytes;
    regions[region_count].level = level;
    region_count++;
}

void bng_hal_trace_forget(void)
{
    region_count = 0;
}

static core_trace *this_core(void)
{
    if (current_core < 0)
        fail("a HAL function called outside a core's body");
    return &cores[current_core];
}

static void record(event e)
{
    core_trace *c = this_core();

    if (c->count == c->capacity) {
        c->capacity = c->capacity ? 2 * c->capacity : 1024;
        if (!(c->events = realloc(c->events, c->capacity * sizeof *c->events)))
            fail("out of memory");
    }
    c->events[c->count++] = e;
}

/* Which memory an address is in: some core's arena, a declared region, else the
 * driver's own shared data (GSM). */
static const char *level_of(const volatile void *p)
{
    const uintptr_t a = (uintptr_t)p;
    unsigned i;

    for (i = 0; i < CORES; i++) {
        const uintptr_t start = (uintptr_t)cores[i].arena;
        if (start && a >= start && a < start + ARENA_BYTES(i))
            return "am";
    }
    for (i = 0; i < region_count; i++)
        if (a >= regions[i].start && a < regions[i].start + regions[i].bytes)
            return regions[i].level;
    return "gsm";
}

static unsigned char *arena(unsigned core)
{
    if (!cores[core].arena && !(cores[core].arena = calloc(1, ARENA_BYTES(core))))
        fail("cannot allocate a private arena");
    return cores[core].arena;
}

void bng_hal_trace_kernel(const char *entry, const char *op, size_t rows, size_t channels)
{
    event e = {EV_KERNEL, 0, NULL, NULL, NULL, NULL, 0, 0, 0, 0};

    if (current_core < 0)
        return;     /* a kernel of _p (the --copy check's reference): not traced */
    e.entry = entry;
    e.op = op;
    e.rows = rows;
    e.bytes = channels;
    record(e);
}

void bng_hal_trace_keep(size_t rows, size_t am_rows, size_t gsm_rows)
{
    event e = {EV_KEEP, 0, NULL, NULL, NULL, NULL, 0, 0, 0, 0};

    e.rows = rows;
    e.am_rows = am_rows;
    e.gsm_rows = gsm_rows;
    record(e);
}

static bng_hal_dma transfer(event_kind kind, void *dst, const void *src, size_t rows,
                            size_t row_bytes, size_t dst_stride, size_t src_stride)
{
    core_trace *c = this_core();
    event e = {EV_GET, 0, NULL, NULL, NULL, NULL, 0, 0, 0, 0};
    size_t r;

    if (rows == 0)
        return BNG_HAL_DMA_DONE;
    if (copying)
        for (r = 0; r < rows; r++)
            memcpy((unsigned char *)dst + r * dst_stride,
                   (const unsigned char *)src + r * src_stride, row_bytes);
    e.kind = kind;
    e.handle = ++c->last_handle;
    e.from = level_of(src);
    e.to = level_of(dst);
    e.rows = rows;
    e.bytes = row_bytes;
    record(e);
    return e.handle;
}

BNG_VMEM void *bng_hal_private(unsigned core, size_t *bytes)
{
    if ((int)core != current_core)
        fail("a core asked for another core's memory");
    *bytes = BNG_PRIVATE_BYTES;
    return cores[core].arena;
}

bng_hal_dma bng_hal_dma_get(BNG_VMEM void *dst, const BNG_SHARED void *src, size_t rows,
                            size_t row_bytes, size_t shared_stride, size_t private_stride)
{
    return transfer(EV_GET, (void *)dst, (const void *)src, rows, row_bytes, private_stride,
                    shared_stride);
}

bng_hal_dma bng_hal_dma_put(BNG_SHARED void *dst, const BNG_VMEM void *src, size_t rows,
                            size_t row_bytes, size_t shared_stride, size_t private_stride)
{
    return transfer(EV_PUT, (void *)dst, (const void *)src, rows, row_bytes, shared_stride,
                    private_stride);
}

/* Transfers copy when issued: a wait only goes into the record. */
void bng_hal_dma_wait(bng_hal_dma handle)
{
    event e = {EV_WAIT, 0, NULL, NULL, NULL, NULL, 0, 0, 0, 0};

    if (handle == BNG_HAL_DMA_DONE)
        return;
    e.handle = handle;
    record(e);
}

void bng_hal_barrier(void)
{
    event e = {EV_BARRIER, 0, NULL, NULL, NULL, NULL, 0, 0, 0, 0};

    record(e);
    pthread_barrier_wait(&barrier);
}

/* A core's events into the record, then forgotten. */
static void flush(unsigned core)
{
    core_trace *c = &cores[core];
    size_t i;

    for (i = 0; out && i < c->count; i++) {
        const event *e = &c->events[i];
        switch (e->kind) {
        case EV_GET:
        case EV_PUT:
            fprintf(out, "%u %s %d %s %s %zu %zu\n", core, e->kind == EV_GET ? "get" : "put",
                    e->handle, e->from, e->to, e->rows, e->bytes);
            break;
        case EV_WAIT:
            fprintf(out, "%u wait %d\n", core, e->handle);
            break;
        case EV_BARRIER:
            fprintf(out, "%u barrier\n", core);
            break;
        case EV_KERNEL:
            fprintf(out, "%u kernel %s %s %zu %zu\n", core, e->entry, e->op, e->rows, e->bytes);
            break;
        case EV_KEEP:
            fprintf(out, "%u keep %zu %zu %zu\n", core, e->rows, e->am_rows, e->gsm_rows);
            break;
        }
    }
    c->count = 0;
    c->last_handle = 0;
}

static void *core_main(void *p)
{
    const unsigned core = (unsigned)(uintptr_t)p;

    current_core = (int)core;
    region_body(core, region_arg);
    current_core = -1;
    return NULL;
}

int bng_hal_parallel(unsigned mask, bng_hal_body body, void *arg, size_t arg_bytes)
{
    pthread_t threads[BNG_TARGET_CORES];
    unsigned core, n = 0;

    (void)arg_bytes;    /* one address space: every core reads arg where it is */
    if (mask == 0 || (mask >> BNG_TARGET_CORES) != 0)
        fail("bad core mask");
    for (core = 0; core < BNG_TARGET_CORES; core++)
        if (mask & (1u << core)) {
            arena(core);
            n++;
        }
    if (pthread_barrier_init(&barrier, NULL, n) != 0)
        fail("cannot create the barrier");
    region_body = body;
    region_arg = arg;
    if (out)
        fprintf(out, "parallel %#x\n", mask);
    for (core = 0; core < BNG_TARGET_CORES; core++)
        if ((mask & (1u << core))
            && pthread_create(&threads[core], NULL, core_main, (void *)(uintptr_t)core) != 0)
            fail("cannot start a core thread");
    for (core = 0; core < BNG_TARGET_CORES; core++)
        if (mask & (1u << core)) {
            pthread_join(threads[core], NULL);
            flush(core);
        }
    if (out)
        fprintf(out, "done\n");
    pthread_barrier_destroy(&barrier);
    return BNG_HAL_OK;
}

#if BNG_SPLIT_MEMORY
/* _p's workspace: the calling thread becomes core P_CORE until the release. */
BNG_VMEM void *bng_hal_p_workspace(size_t *bytes)
{
    if (current_core >= 0)
        fail("_p called inside a core's body");
    current_core = P_CORE;
    if (out)
        fprintf(out, "parallel p\n");
    *bytes = ARENA_BYTES(P_CORE);
    return arena(P_CORE);
}

void bng_hal_p_workspace_release(BNG_VMEM void *block)
{
    if (current_core != P_CORE || (unsigned char *)block != cores[P_CORE].arena)
        fail("not the block bng_hal_p_workspace gave");
    current_core = -1;
    flush(P_CORE);
    if (out)
        fprintf(out, "done\n");
}
#endif
