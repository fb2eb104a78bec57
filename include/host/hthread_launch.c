/* SPDX-License-Identifier: Apache-2.0 */
/* Copyright 2026 the batchnormgrad authors */
/* The host's stand-in for a firmware's launcher of the reference hthreads HAL
 * (hthread_launch.h), on the runtime mock: it calls the mock (to create barriers and
 * start cores) and the HAL (bng_hal_hthreads_init, the fan-out worker); neither calls
 * it. Not for firmware.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "bng_hal_hthreads.h"
#include "hthread_launch.h"
#include "hthread_mock.h"

static pthread_once_t ids_once = PTHREAD_ONCE_INIT;
static int barrier_id, done_barrier_id;

/* The two ids the library gets, created once on the host side, as a firmware's host
 * code creates them and passes them to its kernel as arguments. */
static void create_ids(void)
{
    barrier_id = hthread_barrier_create(0);
    done_barrier_id = hthread_barrier_create(0);
}

/* What every core runs before its work. */
static void init_this_core(void)
{
    if (bng_hal_hthreads_init((unsigned)barrier_id, (unsigned)done_barrier_id) != 0) {
        fprintf(stderr, "hthread_launch: bng_hal_hthreads_init refused barrier ids %d and %d "
                "(the runtime's pool is full?)\n", barrier_id, done_barrier_id);
        abort();
    }
}

static void worker_core(void)
{
    init_this_core();
    bng_hal_hthreads_worker();
}

void hthread_launch_fanout(void)
{
    pthread_once(&ids_once, create_ids);
    hthread_mock_adopt_core_0();
    init_this_core();
    hthread_mock_start_other_cores(worker_core);
}

typedef struct {
    void (*fn)(void *);
    void *arg;
} spmd_call;

static void spmd_core(void *p)
{
    const spmd_call *call = p;
    init_this_core();
    call->fn(call->arg);
}

void hthread_launch_spmd(void (*fn)(void *), void *arg)
{
    spmd_call call;

    pthread_once(&ids_once, create_ids);
    call.fn = fn;
    call.arg = arg;
    hthread_mock_run_group(spmd_core, &call);
}
