/* SPDX-License-Identifier: Apache-2.0 */
/* Copyright 2026 the batchnormgrad authors */
/* The calibration program: see bng_calibrate.h. Freestanding: no library calls (its
 * own number formatting and 64-bit division, which a 32-bit core would otherwise take
 * from its runtime library); ships in a vendor drop beside the HAL conformance check.
 */
#include <stddef.h>

#include "bng_calibrate.h"

#define ROUNDS 2                /* each measurement's best of */
#define LATENCY_TRANSFERS 64u
#define LATENCY_BYTES 64u
#define LINE 128

typedef struct {
    BNG_SHARED unsigned char *memory;       /* the buffer measured */
    BNG_SHARED unsigned long long *ticks;   /* where the lowest core leaves the time */
    unsigned mask, size, count;             /* cores; bytes and number of transfers per core */
    int put;
    bng_calibrate_clock clock;
    void *ctx;
} run_arg;

static unsigned popcount(unsigned v)
{
    unsigned n = 0;
    for (; v; v &= v - 1)
        n++;
    return n;
}

/* n / d for d > 0, by shifts: no runtime-library division on a 32-bit core. */
static unsigned long long divide(unsigned long long n, unsigned long long d)
{
    unsigned long long q = 0, r = 0;
    int bit;

    for (bit = 63; bit >= 0; bit--) {
        r = r << 1 | (n >> bit & 1u);
        if (r >= d) {
            r -= d;
            q |= 1ull << bit;
        }
    }
    return q;
}

/* Each selected core moves `count` transfers of `size` bytes between its private memory
 * (four buffers, one per transfer in flight) and its slice of the buffer, keeping
 * BNG_MAX_OUTSTANDING_DMA in flight; the lowest core times it between two barriers. */
static void body(unsigned core, void *p)
{
    const run_arg *a = p;
    const unsigned rank = popcount(a->mask & ((1u << core) - 1u));
    BNG_SHARED unsigned char *const slice = a->memory + (size_t)rank * BNG_CALIBRATE_SLICE_BYTES;
    const unsigned per_slice = BNG_CALIBRATE_SLICE_BYTES / a->size;
    bng_hal_dma in_flight[BNG_MAX_OUTSTANDING_DMA];
    unsigned long long start = 0;
    size_t bytes = 0;
    BNG_VMEM unsigned char *mem = bng_hal_private(core, &bytes);
    unsigned i;

    for (i = 0; i < BNG_MAX_OUTSTANDING_DMA; i++)
        in_flight[i] = BNG_HAL_DMA_DONE;
    bng_hal_barrier();
    if (rank == 0)
        start = a->clock(a->ctx);
    for (i = 0; mem != NULL && i < a->count; i++) {
        const unsigned k = i % BNG_MAX_OUTSTANDING_DMA;
        BNG_SHARED unsigned char *shared = slice + (size_t)(i % per_slice) * a->size;
        BNG_VMEM unsigned char *private_side = mem + (size_t)k * a->size;

        bng_hal_dma_wait(in_flight[k]);
        in_flight[k] = a->put ? bng_hal_dma_put(shared, private_side, 1, a->size, 0, 0)
                              : bng_hal_dma_get(private_side, shared, 1, a->size, 0, 0);
    }
    for (i = 0; i < BNG_MAX_OUTSTANDING_DMA; i++)
        bng_hal_dma_wait(in_flight[i]);
    bng_hal_barrier();
    if (rank == 0)
        *a->ticks = mem != NULL ? a->clock(a->ctx) - start : 0;
}

/* One small get at a time, issued and waited, on the lowest core. */
static void latency_body(unsigned core, void *p)
{
    const run_arg *a = p;
    size_t bytes = 0;
    BNG_VMEM unsigned char *mem = bng_hal_private(core, &bytes);
    unsigned long long start;
    unsigned i;

    if (mem == NULL) {
        *a->ticks = 0;
        return;
    }
    start = a->clock(a->ctx);
    for (i = 0; i < a->count; i++)
        bng_hal_dma_wait(bng_hal_dma_get(mem, a->memory, 1, a->size, 0, 0));
    *a->ticks = a->clock(a->ctx) - start;
}

typedef struct {
    const bng_calibrate_setup *setup;
    BNG_SHARED unsigned long long *ticks;
    int calls, refused;
} session;

/* The best of ROUNDS calls of `fn` on `mask` (0: the HAL refused, or a core had no
 * private memory). */
static unsigned long long measure(session *s, bng_hal_body fn, BNG_SHARED void *memory,
                                  unsigned mask, unsigned size, unsigned count, int put)
{
    unsigned long long best = 0;
    run_arg arg;
    int round;

    arg.memory = (BNG_SHARED unsigned char *)memory;
    arg.ticks = s->ticks;
    arg.mask = mask;
    arg.size = size;
    arg.count = count;
    arg.put = put;
    arg.clock = s->setup->clock;
    arg.ctx = s->setup->ctx;
    for (round = 0; round < ROUNDS; round++) {
        int result;
        if (s->calls++ > 0 && s->setup->sync)
            s->setup->sync(s->setup->ctx);
        result = bng_hal_parallel(mask, fn, &arg, sizeof arg);
        if (result == BNG_HAL_ENOMEM)
            s->refused = 1;
        if (result != BNG_HAL_OK)
            continue;       /* (BNG_HAL_IDLE: this core is not selected) */
        if (*s->ticks != 0 && (best == 0 || *s->ticks < best))
            best = *s->ticks;
    }
    return best;
}

/* ---- output: a line assembled piece by piece ---- */

typedef struct {
    char text[LINE];
    unsigned at;
} line;

static void add_text(line *l, const char *s)
{
    while (*s && l->at < LINE - 1)
        l->text[l->at++] = *s++;
}

static void add_number(line *l, unsigned long long v, unsigned width)
{
    char digits[24];
    unsigned n = sizeof digits - 1;

    digits[n] = '\0';
    do {
        const unsigned long long rest = divide(v, 10);
        digits[--n] = (char)('0' + (int)(v - rest * 10));
        v = rest;
    } while (v);
    while (width > sizeof digits - 1 - n) {
        add_text(l, " ");
        width--;
    }
    add_text(l, digits + n);
}

static void emit(const bng_calibrate_setup *setup, line *l)
{
    l->text[l->at] = '\0';
    if (setup->print)
        setup->print(setup->ctx, l->text);
    l->at = 0;
}

/* MB (10^6 bytes) per second of `bytes` in `ticks`. */
static unsigned long mb_per_s(const bng_calibrate_setup *setup, unsigned long long bytes,
                              unsigned long long ticks)
{
    return (unsigned long)divide(divide(bytes * setup->ticks_per_second, ticks), 1000000u);
}

static unsigned long ns_of(const bng_calibrate_setup *setup, unsigned long long ticks)
{
    const unsigned long long ns = divide(ticks * 1000000000ull, setup->ticks_per_second);
    return (unsigned long)divide(ns, LATENCY_TRANSFERS);
}

/* 1, 2, 4, ... and last every core of the cluster. */
static unsigned next_core_count(unsigned cores)
{
    if (cores == BNG_TARGET_CORES)
        return cores + 1;
    return cores * 2 < BNG_TARGET_CORES ? cores * 2 : BNG_TARGET_CORES;
}

/* One memory: every size, direction and core count; returns the bandwidth to paste. */
static unsigned long calibrate_memory(session *s, const char *name, BNG_SHARED void *memory)
{
    static const unsigned sizes[] = BNG_CALIBRATE_SIZES;
    const bng_calibrate_setup *setup = s->setup;
    unsigned long best[2] = {0, 0};
    unsigned z, cores;
    int put;
    line l = {{0}, 0};

    for (put = 0; put < 2; put++)
        for (z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
            if (BNG_MAX_OUTSTANDING_DMA * sizes[z] > BNG_PRIVATE_BYTES)
                continue;       /* private memory holds fewer buffers of this size */
            for (cores = 1; cores <= BNG_TARGET_CORES; cores = next_core_count(cores)) {
                const unsigned mask = (1u << cores) - 1u;
                const unsigned count = BNG_CALIBRATE_CORE_BYTES / sizes[z];
                const unsigned long long ticks = measure(s, body, memory, mask, sizes[z], count,
                                                         put);
                unsigned long rate;

                if (ticks == 0)
                    continue;
                rate = mb_per_s(setup, (unsigned long long)cores * BNG_CALIBRATE_CORE_BYTES, ticks);
                if (sizes[z] == BNG_CALIBRATE_LARGEST && rate > best[put])
                    best[put] = rate;
                add_text(&l, "# ");
                add_text(&l, name);
                add_text(&l, put ? " put " : " get ");
                add_number(&l, sizes[z], 6);
                add_text(&l, " B ");
                add_number(&l, cores, 2);
                add_text(&l, " cores ");
                add_number(&l, rate, 8);
                add_text(&l, " MB/s");
                emit(setup, &l);
            }
        }
    return (best[0] + best[1]) / 2;
}

static unsigned long calibrate_latency(session *s, const char *name, BNG_SHARED void *memory)
{
    const unsigned long long ticks = measure(s, latency_body, memory, 1u, LATENCY_BYTES,
                                             LATENCY_TRANSFERS, 0);
    const unsigned long ns = ticks ? ns_of(s->setup, ticks) : 0;
    line l = {{0}, 0};

    add_text(&l, "# ");
    add_text(&l, name);
    add_text(&l, " latency: one 64-byte get issued and waited on one core: ");
    add_number(&l, ns, 0);
    add_text(&l, " ns");
    emit(s->setup, &l);
    return ns;
}

static void paste(const bng_calibrate_setup *setup, const char *key, unsigned long value)
{
    line l = {{0}, 0};

    add_text(&l, "      ");
    add_text(&l, key);
    add_text(&l, ": ");
    add_number(&l, value, 0);
    emit(setup, &l);
}

int bng_calibrate(const bng_calibrate_setup *setup, bng_calibrate_result *result)
{
    session s;
    line l = {{0}, 0};

    s.setup = setup;
    s.ticks = (BNG_SHARED unsigned long long *)(void *)((BNG_SHARED unsigned char *)setup->ddr
              + (size_t)BNG_TARGET_CORES * BNG_CALIBRATE_SLICE_BYTES);
    s.calls = 0;
    s.refused = 0;
    add_text(&l, "# bng_calibrate: " BNG_TARGET_NAME ", ");
    add_number(&l, BNG_TARGET_CORES, 0);
    add_text(&l, " cores, the clock at ");
    add_number(&l, setup->ticks_per_second, 0);
    add_text(&l, " ticks/s");
    emit(setup, &l);
    result->ddr_mb_per_s = calibrate_memory(&s, "ddr", setup->ddr);
    result->gsm_mb_per_s = setup->gsm ? calibrate_memory(&s, "gsm", setup->gsm) : 0;
    result->dma_latency_ns = calibrate_latency(&s, "ddr", setup->ddr);
    result->gsm_latency_ns = setup->gsm ? calibrate_latency(&s, "gsm", setup->gsm) : 0;
    if (setup->sync)
        setup->sync(setup->ctx);
    if (s.refused) {
        add_text(&l, "# bng_calibrate: the HAL refused a call (BNG_HAL_ENOMEM): nothing to paste");
        emit(setup, &l);
        return -1;
    }
    add_text(&l, "# paste into targets.yaml, targets." BNG_TARGET_NAME ".part:");
    emit(setup, &l);
    paste(setup, "ddr_mb_per_s", result->ddr_mb_per_s);
    if (setup->gsm)
        paste(setup, "gsm_mb_per_s", result->gsm_mb_per_s);
    paste(setup, "dma_latency_ns", result->dma_latency_ns);
    return 0;
}
