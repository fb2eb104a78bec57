/* SPDX-License-Identifier: Apache-2.0 */
/* Copyright 2026 the batchnormgrad authors */
/* The calibration program (bng_calibrate.c): freestanding C that firmware runs on the
 * part, through its HAL (include/bng_hal.h) and a clock it supplies, to measure the DMA
 * figures make model predicts from (targets.yaml part:). Like the HAL conformance
 * check beside it, it needs only bng_hal.h and the target's bng_kernels.h.
 *
 * bng_calibrate(setup, result) measures, with bng_hal_parallel calls on 1, 2, 4, ...
 * and all cores, the bandwidth of DMA gets (shared memory -> a core's private memory)
 * and puts (the reverse) between private memory and DDR, and between private memory
 * and GSM, one row per transfer, at BNG_CALIBRATE_SIZES transfer sizes, each core
 * keeping BNG_MAX_OUTSTANDING_DMA transfers in flight as the driver does; and the
 * latency of one small transfer, issued and waited alone on one core. It prints each
 * measurement as a comment line, then the targets.yaml lines to paste into the
 * target's part: section (ddr_mb_per_s, gsm_mb_per_s, dma_latency_ns), and returns 0;
 * or, when the HAL refused a call, prints why and returns -1.
 *
 * setup:
 *   ddr, gsm   BNG_CALIBRATE_BYTES each, 64-byte aligned, in DDR and in the cluster's
 *              GSM, where the DMA reaches (gsm may be NULL: GSM is then not measured);
 *              their contents are overwritten
 *   clock      returns a counter that advances ticks_per_second times a second, the
 *              same on every core (e.g. get_clk() with the core clock); read on the
 *              lowest selected core only, between two barriers
 *   print      receives each line of output, without its newline (may be NULL)
 *   sync       as in bng_hal_conformance.h: where every core of the group calls the
 *              entry point (bng_hal_parallel may return BNG_HAL_IDLE), every core calls
 *              bng_calibrate and sync must synchronize the whole group; it is called
 *              between two calls (NULL otherwise). Give print to one core only.
 *   ctx        passed to clock, print and sync
 * The figures: each bandwidth is the mean of gets and puts at the largest size, with
 * the core count that moved the most; the latency is DDR's (GSM's is printed too).
 */
#ifndef BNG_CALIBRATE_H
#define BNG_CALIBRATE_H

#include "bng_hal.h"
#include "bng_kernels.h"

/* Transfer sizes measured, in bytes; the largest fits four times in private memory. */
#define BNG_CALIBRATE_SIZES {256u, 4096u, 65536u}
#define BNG_CALIBRATE_LARGEST 65536u
/* Bytes each core moves per measurement; each core's part of a buffer. */
#define BNG_CALIBRATE_CORE_BYTES (512u * 1024u)
#define BNG_CALIBRATE_SLICE_BYTES (4u * BNG_CALIBRATE_LARGEST)
/* A buffer: every core's slice, then the results (64 bytes). */
#define BNG_CALIBRATE_BYTES ((unsigned long)BNG_TARGET_CORES * BNG_CALIBRATE_SLICE_BYTES + 64u)

typedef unsigned long long (*bng_calibrate_clock)(void *ctx);
typedef void (*bng_calibrate_print)(void *ctx, const char *line);
typedef void (*bng_calibrate_sync)(void *ctx);

typedef struct {
    BNG_SHARED void *ddr;
    BNG_SHARED void *gsm;
    bng_calibrate_clock clock;
    unsigned long long ticks_per_second;
    bng_calibrate_print print;
    bng_calibrate_sync sync;
    void *ctx;
} bng_calibrate_setup;

/* What it printed to paste: MB is 10^6 bytes; 0 where not measured. */
typedef struct {
    unsigned long ddr_mb_per_s, gsm_mb_per_s, dma_latency_ns, gsm_latency_ns;
} bng_calibrate_result;

int bng_calibrate(const bng_calibrate_setup *setup, bng_calibrate_result *result);

#endif
