/* SPDX-License-Identifier: Apache-2.0 */
/* Copyright 2026 the batchnormgrad authors */
/* Hardware abstraction for the shared-storage entry points (fp/hp_batch_norm_grad_s).
 *
 * Firmware implements these functions for its DSP cluster, or vendors the reference
 * implementation for NUDT's hthreads device runtime (include/hal/bng_hal_hthreads.c);
 * include/host/bng_hal_host.c emulates them on a host (a thread per core, a bounded
 * arena per core, DMA deferred and checked). The private-storage entry points (_p) use
 * none of them on a unified target; on a split target (targets.yaml memory.spaces) _p
 * stages the caller's arrays through a workspace of vector memory
 * (bng_hal_p_workspace) with the DMA functions, on the calling core. include/programs/bng_hal_conformance.c checks an implementation against
 * the contracts below.
 *
 * Shared memory: every pointer into shared memory (the caller's x, dy, dx, the
 * per-channel arrays, the driver's scratch) carries BNG_SHARED, the target's
 * address-space qualifier (targets.yaml memory.shared_qualifier, empty on most
 * targets); private memory pointers carry none.
 *
 * Contracts:
 * - bng_hal_parallel(mask, body, arg, arg_bytes): run body(core, arg') once on every
 *   core whose bit is set in mask (mask is never 0 and has no bit at or above the core
 *   count), and return when all have returned. arg points to arg_bytes bytes that
 *   every selected core must read: arg' is arg, or a copy the HAL made where every core
 *   can read it (the caller's stack may be private to its core). One call at a time per
 *   cluster. Before body runs anywhere, the HAL makes sure that every selected core has
 *   its private memory (and any other runtime resource the HAL needs for the call).
 *   Returns:
 *     BNG_HAL_OK      body ran on every selected core;
 *     BNG_HAL_ENOMEM  body ran on no core: some selected core's private memory (or a
 *                     resource the HAL needs) could not be had. Nothing was written to
 *                     shared memory on the caller's behalf;
 *     BNG_HAL_IDLE    (HALs where every core of the group calls the entry point, e.g.
 *                     the SPMD launch model) this core is not selected: it took no
 *                     part, and the selected cores report the outcome. The caller on
 *                     this core writes nothing.
 *   Every selected core that calls bng_hal_parallel gets the same answer.
 * - bng_hal_barrier(): called by every core inside body; returns on each once all cores
 *   of the current bng_hal_parallel have called it, with their DMA puts visible (the
 *   caller need not wait for its puts first).
 * - bng_hal_private(core, &bytes): inside body, the core's private (array) memory the
 *   library may use during body: at least BNG_PRIVATE_BYTES (targets.yaml
 *   memory.private_bytes), aligned to 64 bytes; *bytes receives its size. The same
 *   memory on every call within one body. Called inside body only, where it cannot fail:
 *   the HAL reserved it before body ran (or bng_hal_parallel returned BNG_HAL_ENOMEM
 *   and body did not run). A HAL that finds it cannot honour this returns NULL with
 *   *bytes = 0 (the driver then writes nothing and returns from body).
 * - bng_hal_dma_get(dst, src, rows, row_bytes, shared_stride, private_stride): copy rows
 *   rows of row_bytes from shared memory (rows shared_stride bytes apart) to private
 *   memory (rows private_stride bytes apart: row_bytes, packed, on a unified target; on a
 *   split target a row padded to whole vectors, so that the kernels never touch part
 *   of a vector, and the padding bytes of each private row are left as they are).
 *   On a split target (targets.yaml memory.spaces) private memory is the core's vector
 *   memory (AM), transfers of 4 bytes (one float) happen (the partial-sums count), and
 *   the "shared" side may also be the calling core's own vector memory (_p, which stages
 *   the caller's arrays through its workspace: see bng_hal_p_workspace).
 *   bng_hal_dma_put(dst, src, rows, row_bytes, shared_stride, private_stride): the
 *   reverse. Both may run asynchronously: the returned handle is passed to
 *   bng_hal_dma_wait, after which the transfer is complete. With one row the strides
 *   are not used (the driver passes 0); with zero rows nothing is copied. Waiting twice on a handle, or on
 *   BNG_HAL_DMA_DONE, returns at once. At most 4 transfers are outstanding at once per
 *   core (BNG_MAX_OUTSTANDING_DMA in bng_kernels.h, from generator/plan.py; the driver,
 *   the host DMA engine and the hthreads HAL assert that they agree).
 * - Split targets only (BNG_SPLIT_MEMORY): bng_hal_p_workspace(&bytes), called by _p
 *   outside any bng_hal_parallel call: a block of the calling core's vector memory of
 *   at least BNG_P_WORKSPACE_BYTES (targets.yaml memory.spaces.p_workspace_bytes),
 *   aligned to 64 bytes, *bytes its size; or NULL with *bytes = 0 when it cannot be had
 *   (the _p call then reports BNG_ENOMEM and writes nothing). The DMA functions work
 *   between it and the caller's arrays in the same core's vector memory, and between
 *   it and the extensions' partial-sums buffer or the forward's partials buffer, which
 *   _p keeps in scalar memory.
 *   bng_hal_p_workspace_release(block) gives it back before _p returns.
 */
#ifndef BNG_HAL_H
#define BNG_HAL_H

#include <stddef.h>

#include "batch_norm_grad.h"   /* BNG_SHARED */
#include "bng_kernels.h"       /* BNG_VMEM (bng_ukernel.h) */

typedef void (*bng_hal_body)(unsigned core, void *arg);
typedef int bng_hal_dma;
#define BNG_HAL_DMA_DONE 0

#define BNG_HAL_OK 0
#define BNG_HAL_IDLE 1
#define BNG_HAL_ENOMEM (-1)

int bng_hal_parallel(unsigned mask, bng_hal_body body, void *arg, size_t arg_bytes);
void bng_hal_barrier(void);
/* Private memory is vector memory (BNG_VMEM: on a split target the _s workspace and
 * tiles are in AM, which only vector loads and stores and DMA touch); the HAL, which
 * sparse does not check, takes and gives it as plain memory: these prototypes are the
 * one place where the DMA's pointers leave the annotation. */
BNG_VMEM void *bng_hal_private(unsigned core, size_t *bytes);
bng_hal_dma bng_hal_dma_get(BNG_VMEM void *dst, const BNG_SHARED void *src, size_t rows,
                            size_t row_bytes, size_t shared_stride, size_t private_stride);
bng_hal_dma bng_hal_dma_put(BNG_SHARED void *dst, const BNG_VMEM void *src, size_t rows,
                            size_t row_bytes, size_t shared_stride, size_t private_stride);
void bng_hal_dma_wait(bng_hal_dma handle);
#if BNG_SPLIT_MEMORY
BNG_VMEM void *bng_hal_p_workspace(size_t *bytes);
void bng_hal_p_workspace_release(BNG_VMEM void *block);
#endif

#endif /* BNG_HAL_H */
