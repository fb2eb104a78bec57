/* SPDX-License-Identifier: Apache-2.0 */
/* Copyright 2026 the batchnormgrad authors */
/* Every assumption the reference HAL (bng_hal_hthreads.c) makes about the vendor's
 * device runtime, in one place for a firmware team to check against its part's headers
 * and change. The defaults follow public MT-3000 hthreads code (repositories named
 * below, each a third party's, none NUDT's own documentation); nothing here is a fact
 * about FT78NE or MT7004.
 */
#ifndef BNG_HAL_HTHREADS_CONFIG_H
#define BNG_HAL_HTHREADS_CONFIG_H

/* The runtime's device header: get_thread_id, core_barrier, group_barrier,
 * vector_malloc, vector_free, dma_p2p, dma_wait, and the __gsm__ section attribute.
 * Public kernels include it as "hthread_device.h" next to <compiler/m3000.h> (e.g.
 * ydyhello/studydemo daxpy_mt3000/daxpy_l4.dev.c). */
#ifndef BNG_HTHREADS_HEADER
#define BNG_HTHREADS_HEADER <hthread_device.h>
#endif

/* Launch model (README, "The HAL on the DSP"):
 *   BNG_LAUNCH_SPMD (default): every core of the group calls _s itself with the same
 *     arguments, as hthreads runs a __global__ function on every thread of a group
 *     (hthread_group_create / hthread_group_exec on the host; public examples:
 *     ydyhello/studydemo daxpy_mt3000/daxpy.hos.c with daxpy_l4.dev.c,
 *     357877200/PolyBenchMT-vec tests/2MM/2mm.hos.c). The cores of core_mask do the
 *     work and write the status; the others return at once and write nothing (they
 *     must synchronize with the group before they read the status or the results, and
 *     the whole group must synchronize between two _s calls).
 *   BNG_LAUNCH_FANOUT: one core calls _s (as the vendor manual's example does from
 *     main); every other core of the group runs bng_hal_hthreads_worker() and waits
 *     there for work. Workers may start before or after the caller's first _s: the
 *     caller's first call (or bng_hal_hthreads_stop_workers) initializes the mailbox
 *     and meets every worker at a group barrier before it posts anything. */
#define BNG_LAUNCH_FANOUT 1
#define BNG_LAUNCH_SPMD 2
#ifndef BNG_HTHREADS_LAUNCH
#define BNG_HTHREADS_LAUNCH BNG_LAUNCH_SPMD
#endif

/* A core's index in the group, 0 .. cores-1: bit i of core_mask selects thread i. */
#define BNG_HTHREADS_CORE() ((unsigned)get_thread_id())

/* Barriers: no fixed ids. The firmware creates two barriers on the host
 * (hthread_barrier_create), passes their ids to the kernel as arguments, and calls
 * bng_hal_hthreads_init(barrier_id, done_barrier_id) on every core of the group before
 * the first _s, as public kernels take their barrier id as a kernel argument
 * (VVinstonSmith/BLAS-for-multi-core-DSP: dgemm_release_V1.1/host_code/dgemm_demo.c
 * creates them, sgemm_release_V1.3.2/device_code/sgemm_launcher.c receives b_id).
 * barrier_id serves the cores of a call (core_barrier(id, n) is assumed to release once
 * n cores have arrived); done_barrier_id ends a call (SPMD: core_barrier of the
 * selected cores; fan-out: group_barrier, the caller and every worker). Ids are below
 * BNG_HTHREADS_BARRIER_IDS (the pool the runtime shares with the firmware). */
#ifndef BNG_HTHREADS_BARRIER_IDS
#define BNG_HTHREADS_BARRIER_IDS 16
#endif

/* dma_p2p's row step is the gap between rows, not the row pitch: public code passes
 * (width - chunk_width) * element for a strided side and 0 for packed rows
 * (ydyhello/studydemo daxpy_mt3000/dma_p2p_example.c). A one-row transfer is issued
 * with step 0 on both sides, and a zero-row transfer is not issued at all. If your
 * part's step is the pitch, define it as (stride). */
#ifndef BNG_HTHREADS_ROW_STEP
#define BNG_HTHREADS_ROW_STEP(stride, row_bytes) ((int)((stride) - (row_bytes)))
#endif
/* A channel number dma_p2p returned may be waited for again (dma_wait returns at once
 * when it completed); channel numbers are below 0x7fffffff. dma_p2p takes plain
 * pointers: a BNG_SHARED pointer is converted to one here (check that your runtime
 * takes the shared-memory address unchanged). */
#ifndef BNG_HTHREADS_RUNTIME_POINTER
#define BNG_HTHREADS_RUNTIME_POINTER(p) ((void *)(p))
#endif

/* Private memory: each selected core asks vector_malloc for BNG_HTHREADS_AM_BYTES of
 * its array memory (AM) at the start of every bng_hal_parallel, checks the result (NULL,
 * or not 64-byte aligned, counts as a failure: the call returns BNG_HAL_ENOMEM and _s
 * BNG_ENOMEM, no core runs the kernels), and gives it back with vector_free before the
 * call ends, as public kernels do (ydyhello/studydemo daxpy_mt3000/daxpy_l4.dev.c,
 * 357877200/PolyBenchMT-vec operators/LU/lu.dev.c: vector_malloc, NULL check,
 * vector_free). It must be at least BNG_PRIVATE_BYTES (targets.yaml
 * memory.private_bytes), which the kernels' tile plan assumes. The AM also holds what
 * the runtime keeps there: asking for all of it fails on a real part, so set
 * private_bytes in targets.yaml to what your runtime can give a kernel (the shipped
 * targets ask for 768,000 bytes of the 786,432-byte AM, an assumption to check). */
#ifndef BNG_HTHREADS_AM_BYTES
#define BNG_HTHREADS_AM_BYTES BNG_PRIVATE_BYTES
#endif

/* Split targets (targets.yaml memory.spaces kind: split) only, assumed and to check:
 * - _p's workspace is vector_malloc(BNG_P_WORKSPACE_BYTES) on the calling core,
 *   outside any bng_hal_parallel, beside the AM the caller's arrays occupy, and
 *   vector_free'd before _p returns (bng_hal_p_workspace).
 * - dma_p2p moves data within one core's AM (the caller's rows into padded tile rows,
 *   _p) and between AM and SM (_p's partial-sums buffer of the extensions), at any
 *   byte row pitch and any row length, 4 bytes included. Public hthreads code moves
 *   data with dma_p2p into a scalar_malloc buffer (SM), but aligns the address down to
 *   32 bytes and rounds the length up to 64 (a software-cache header's CACHEb_RD_K
 *   macro): if the part's DMA has such rules, transfers that break them must be split
 *   or widened here, in bng_transfer. */

/* Shared state of the HAL (the fan-out mailbox, each core's private-memory vote): in
 * global shared memory (GSM), as public kernels place shared arrays
 * (VVinstonSmith/BLAS-for-multi-core-DSP sgemm_release_V1.3.2/device_code/sgemm_kernel.c:
 * __gsm__ float gsm_mem[...]). The .gsm section is not zeroed at load: the HAL writes
 * every field before any core reads it. Cores read it with acquire loads and write it
 * with release stores; GCC's __atomic builtins (GCC 4.7 and later) are assumed to order
 * them on the DSP. */
#ifndef BNG_HTHREADS_GSM
#define BNG_HTHREADS_GSM __gsm__
#endif
#define BNG_HTHREADS_LOAD(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define BNG_HTHREADS_STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
/* What a fan-out worker does between two polls of the mailbox: nothing on the DSP
 * (a core has nothing else to do); the host mock sleeps, its cores being threads. */
#ifndef BNG_HTHREADS_IDLE
#define BNG_HTHREADS_IDLE() ((void)0)
#endif
/* A misuse the HAL cannot survive: a breach of include/bng_hal.h's contract by its
 * caller (a fifth outstanding put: the HAL stops rather than lose track of a transfer),
 * or bng_hal_hthreads_worker in an SPMD build (start-up code written for fan-out, whose
 * caller would wait forever). The default spins on the message, where a debugger finds
 * it; firmware may define its own trap or log (the host mock prints the message and
 * aborts). */
#ifndef BNG_HTHREADS_CONTRACT_BREACH
#define BNG_HTHREADS_CONTRACT_BREACH(what) \
    do { volatile const char *const bng_why_ = (what); for (;;) (void)*bng_why_; } while (0)
#endif
/* The largest argument bng_hal_parallel copies into the mailbox. */
#define BNG_HTHREADS_MAX_ARG 256

#endif /* BNG_HAL_HTHREADS_CONFIG_H */
