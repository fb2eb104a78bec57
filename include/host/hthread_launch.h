/* SPDX-License-Identifier: Apache-2.0 */
/* Copyright 2026 the batchnormgrad authors */
/* The host's stand-in for a firmware's launcher of the reference hthreads HAL
 * (hthread_launch.c): what start-up code does around the library, on the runtime mock.
 * It creates the HAL's two barrier ids, hands them to every core with
 * bng_hal_hthreads_init, and starts the cores as the HAL's launch model
 * (BNG_HTHREADS_LAUNCH) needs. Host only: a firmware build has its own launcher and
 * takes none of include/host/ (docs/porting.md, "The reference HAL for hthreads"). */
#ifndef HTHREAD_LAUNCH_H
#define HTHREAD_LAUNCH_H

/* Fan-out (BNG_HTHREADS_LAUNCH=BNG_LAUNCH_FANOUT): the calling thread becomes core 0,
 * the one that calls _s; cores 1 .. n-1 start (late, as the mock starts them) and run
 * bng_hal_hthreads_worker() until core 0 calls bng_hal_hthreads_stop_workers(). Call
 * it before the first _s; again after stop_workers to start the workers afresh. */
void hthread_launch_fanout(void);
/* SPMD (BNG_LAUNCH_SPMD, the HAL's default): run fn(arg) on every core of the group,
 * where fn calls _s with the same arguments on each, and return once every core has
 * returned. */
void hthread_launch_spmd(void (*fn)(void *), void *arg);

#endif
