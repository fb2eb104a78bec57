/* SPDX-License-Identifier: Apache-2.0 */
/* Copyright 2026 the batchnormgrad authors */
/* Control of the host mock of the hthreads runtime (hthread_mock.c): what the vendor's
 * runtime does when the host starts a group of cores, and the tests' levers on it. The
 * mock is the runtime only: it knows nothing of the HAL above it. What the firmware's
 * launcher does with it (barrier ids, bng_hal_hthreads_init, workers) is in
 * hthread_launch.h. Not for firmware. */
#ifndef HTHREAD_MOCK_H
#define HTHREAD_MOCK_H

/* The host runtime's barrier pool (hthread_host.h): ids 0-15, shared with the
 * firmware; core_barrier and group_barrier trap on an id not created. */
int hthread_barrier_create(int cluster_id);

/* SPMD (hthread_group_exec, then hthread_group_wait): run fn(arg) on cores 0 .. n-1
 * (BNG_TARGET_CORES threads, started at the first launch of the process and kept; a
 * fork()ed child starts its own), and wait for all. One launch at a time, from the
 * host's side: a launch from a core of the group aborts with the mock's message. */
void hthread_mock_run_group(void (*fn)(void *), void *arg);
/* Fan-out: cores 1 .. BNG_TARGET_CORES-1 start on threads of their own running
 * core_main(), late: core k after k * 2 ms (HTHREAD_MOCK_CORE_DELAY_NS), so that what the
 * calling thread (core 0, hthread_mock_adopt_core_0) does first happens before they
 * run. The threads end when core_main returns. */
void hthread_mock_start_other_cores(void (*core_main)(void));
/* The calling thread plays core 0 from now on: the caller of the fan-out model, or in
 * SPMD between launches code a kernel runs on one core (the suite's _p calls, which on
 * a split target take their workspace from the core's vector memory). Never while a
 * group launch runs. */
void hthread_mock_adopt_core_0(void);

/* vector_malloc returns NULL on the cores of core_mask (0: on none). */
void hthread_mock_fail_vector_malloc(unsigned core_mask);

#endif
