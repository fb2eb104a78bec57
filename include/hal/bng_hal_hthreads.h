/* SPDX-License-Identifier: Apache-2.0 */
/* Copyright 2026 the batchnormgrad authors */
/* What firmware calls besides the entry points when it vendors the reference HAL for
 * hthreads (bng_hal_hthreads.c); bng_hal_hthreads_config.h describes the launch models.
 *
 * bng_hal_hthreads_init(barrier_id, done_barrier_id): on every core of the group, before
 *   its first _s (or bng_hal_hthreads_worker): the two barrier ids the firmware created
 *   for the library (hthread_barrier_create on the host, passed as kernel arguments).
 *   Returns 0, or -1 when an id is out of range or both are the same (then _s returns
 *   BNG_ENOMEM on this core). Calling it again (e.g. after stop_workers) starts afresh.
 * Fan-out only: every core of the group other than the one that calls _s runs
 *   bng_hal_hthreads_worker() and stays there until bng_hal_hthreads_stop_workers(),
 *   which the caller calls once it is done with _s. The workers may start before or
 *   after the caller's first _s. In an SPMD build stop_workers does nothing and the
 *   worker stops the core with a message (BNG_HTHREADS_CONTRACT_BREACH) that names the
 *   launch macro: start-up code written for fan-out would otherwise leave the _s caller
 *   waiting at its first barrier forever.
 */
#ifndef BNG_HAL_HTHREADS_H
#define BNG_HAL_HTHREADS_H

int bng_hal_hthreads_init(unsigned barrier_id, unsigned done_barrier_id);
void bng_hal_hthreads_worker(void);
void bng_hal_hthreads_stop_workers(void);

#endif
