/* Every assumption the reference HAL (bng_hal_hthreads.c) makes about the vendor's
 * device runtime, in one place for a firmware team to check against its part's headers
 * and change. The defaults follow the public MT-3000 hthreads material
 * (hthread_device.h); nothing here is a fact about FT78NE or MT7004.
 */
#ifndef BNG_HAL_HTHREADS_CONFIG_H
#define BNG_HAL_HTHREADS_CONFIG_H

/* The runtime's device header: get_thread_id, core_barrier, vector_malloc, dma_p2p,
 * dma_wait, and the __gsm__ section attribute. */
#ifndef BNG_HTHREADS_HEADER
#define BNG_HTHREADS_HEADER <hthread_device.h>
#endif

/* Launch model (README, "The HAL on the DSP"):
 *   BNG_LAUNCH_FANOUT: one core calls _s (as the vendor manual's example does from
 *     main); every other core of the group runs bng_hal_hthreads_worker() and waits
 *     there for work.
 *   BNG_LAUNCH_SPMD: every core of the group calls _s itself with the same arguments
 *     (hthreads runs a __global__ function on every core); the cores of core_mask do the
 *     work, the others return at once (status written, results not yet complete: they
 *     must synchronize with the group before they read them). */
#define BNG_LAUNCH_FANOUT 1
#define BNG_LAUNCH_SPMD 2
#ifndef BNG_HTHREADS_LAUNCH
#define BNG_HTHREADS_LAUNCH BNG_LAUNCH_FANOUT
#endif

/* A core's index in the group, 0 .. cores-1: bit i of core_mask selects thread i. */
#define BNG_HTHREADS_CORE() ((unsigned)get_thread_id())

/* Hardware barrier ids (core_barrier takes 0-15): one for the cores of a call
 * (core_barrier(id, n) is assumed to release once n cores have arrived), one for the
 * end of a call (SPMD: core_barrier of the selected cores; fan-out: group_barrier, the
 * caller and every worker of the group). Keep both free of other users while _s runs. */
#ifndef BNG_HTHREADS_BARRIER_ID
#define BNG_HTHREADS_BARRIER_ID 14
#endif
#ifndef BNG_HTHREADS_DONE_BARRIER_ID
#define BNG_HTHREADS_DONE_BARRIER_ID 15
#endif

/* dma_p2p's row step is taken as the gap between rows (the public examples pass 0 for
 * contiguous rows), not the row pitch. If your part's step is the pitch, define it as
 * (stride). */
#ifndef BNG_HTHREADS_ROW_STEP
#define BNG_HTHREADS_ROW_STEP(stride, row_bytes) ((int)((stride) - (row_bytes)))
#endif
/* A channel number dma_p2p returned may be waited for again (dma_wait returns at once
 * when it completed); channel numbers are below 0x7fffffff. */

/* Private memory: one vector_malloc of BNG_PRIVATE_BYTES per core (array memory, AM),
 * made on the core's first call and kept; it must succeed. */

/* Fan-out mailbox: a structure in global shared memory (GSM) that every core reads
 * with acquire loads and the caller writes with release stores; GCC's __atomic
 * builtins (GCC 4.7 and later) are assumed to order them on the DSP. */
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
/* The largest argument bng_hal_parallel copies into the mailbox. */
#define BNG_HTHREADS_MAX_ARG 256

#endif /* BNG_HAL_HTHREADS_CONFIG_H */
