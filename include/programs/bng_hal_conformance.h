/* SPDX-License-Identifier: Apache-2.0 */
/* Copyright 2026 the batchnormgrad authors */
/* A conformance check of an implementation of include/bng_hal.h (bng_hal_conformance.c):
 * freestanding C that needs only bng_hal.h (and the target's bng_kernels.h for its core
 * count and private memory size), so that firmware can run it on the part against its
 * own HAL or the vendored reference one.
 *
 * bng_hal_conformance(shared, seed, report, sync, ctx) runs a few bng_hal_parallel calls
 * (all cores, one core, alternate cores) whose bodies check, on every selected core:
 *   - the argument reaches every core (arg' holds what arg held);
 *   - bng_hal_private: non-NULL, at least BNG_PRIVATE_BYTES, 64-byte aligned, the same
 *     on a second call, all of it writable;
 *   - DMA puts visible to the other cores after bng_hal_barrier() with no wait by the
 *     putting core before it;
 *   - 2-D gets and puts (a row stride other than the row size), one-row transfers
 *     (stride 0), zero-row transfers (nothing written), 4 transfers outstanding at once
 *     waited in any order, waiting twice, waiting on BNG_HAL_DMA_DONE;
 *   - a private row pitch wider than the row (the padding bytes left alone);
 *   - body run exactly once on every selected core and on no other;
 *   - on a split target (BNG_SPLIT_MEMORY), after the calls: bng_hal_p_workspace's
 *     size and alignment, and the transfers _p makes with it: within the core's vector
 *     memory into and out of padded rows (the padding never copied out), and one float
 *     between vector and scalar memory.
 * On a split target the checks never touch vector memory with scalar code: they work
 * on a copy in scalar memory (the stack, 4 KiB) moved by DMA.
 * shared: BNG_HAL_CONFORMANCE_SHARED_BYTES of shared memory the HAL's DMA reaches
 * (64-byte aligned); its contents are overwritten. seed: any number, different for
 * each run into the same buffer. report(ctx, check, core) is called for each failure
 * (may be NULL). sync(ctx), when the HAL is one where every core of the group calls the
 * entry point (bng_hal_parallel may return BNG_HAL_IDLE), must synchronize the whole
 * group; it is called between two calls (NULL otherwise). Returns the number of
 * failures seen by this core (0: conformant as far as these checks go). In that kind of
 * HAL every core of the group calls it; each selected core checks and reports.
 */
#ifndef BNG_HAL_CONFORMANCE_H
#define BNG_HAL_CONFORMANCE_H

#include "bng_hal.h"
#include "bng_kernels.h"

#define BNG_HAL_CONFORMANCE_SHARED_BYTES (512u + BNG_TARGET_CORES * 640u)

typedef void (*bng_hal_conformance_report)(void *ctx, const char *check, unsigned core);
typedef void (*bng_hal_conformance_sync)(void *ctx);

int bng_hal_conformance(BNG_SHARED void *shared, unsigned seed, bng_hal_conformance_report report,
                        bng_hal_conformance_sync sync, void *ctx);

#endif
