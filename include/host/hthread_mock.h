/* SPDX-License-Identifier: Apache-2.0 */
/* Copyright 2026 the batchnormgrad authors */
/* Control of the host mock of the hthreads runtime (hthread_mock.c), for the tests
 * that run the reference HAL, and the host-side calls the mock stands in for. Not for
 * firmware. */
#ifndef HTHREAD_MOCK_H
#define HTHREAD_MOCK_H

/* Fan-out: the calling thread becomes core 0; cores 1 .. BNG_TARGET_CORES-1 start on
 * threads of their own running worker(), late: core k after k * 2 ms
 * (HTHREAD_MOCK_WORKER_DELAY_NS), so that the caller's first call is posted first. */
void hthread_mock_start_workers(void (*worker)(void));
/* SPMD: run fn(arg) on BNG_TARGET_CORES threads, cores 0 .. n-1, and wait for all. */
void hthread_mock_spmd(void (*fn)(void *), void *arg);
/* SPMD: between launches the calling thread plays core 0, as code a kernel runs on one
 * core would (the suite's _p calls, which on a split target take their workspace from
 * the core's vector memory). Never while a launch runs. */
void hthread_mock_adopt_core_0(void);

/* What every core runs before its work (the firmware's launcher): by default
 * bng_hal_hthreads_init with the two barriers the mock created at start-up; NULL
 * restores the default. */
typedef void (*hthread_mock_prologue)(unsigned core);
void hthread_mock_set_prologue(hthread_mock_prologue fn);
/* vector_malloc returns NULL on the cores of core_mask (0: on none). */
void hthread_mock_fail_vector_malloc(unsigned core_mask);

/* The host runtime's barrier pool (hthread_host.h): ids 0-15, shared with the
 * firmware; core_barrier and group_barrier trap on an id not created. */
int hthread_barrier_create(int cluster_id);

#endif
