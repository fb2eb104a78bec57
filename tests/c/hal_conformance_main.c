/* Host driver of include/programs/bng_hal_conformance.c (make hal-conformance): runs it
 * against the HAL linked in: the host HAL (default), or the hthreads HAL on the runtime
 * mock in the fan-out (BNG_TEST_LAUNCH_FANOUT) or SPMD (BNG_TEST_LAUNCH_SPMD) launch
 * model. Exit status 0 when every check passed on every run.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "bng_hal_conformance.h"

#if BNG_TEST_LAUNCH_FANOUT || BNG_TEST_LAUNCH_SPMD
#include "bng_hal_hthreads.h"
#include "hthread_device.h"
#include "hthread_launch.h"
#endif

#define RUNS 4

static pthread_mutex_t print_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned char *shared;

static void report(void *ctx, const char *check, unsigned core)
{
    (void)ctx;
    pthread_mutex_lock(&print_lock);
    fprintf(stderr, "hal-conformance: FAIL: %s (core %u)\n", check, core);
    pthread_mutex_unlock(&print_lock);
}

#if BNG_TEST_LAUNCH_SPMD
static pthread_barrier_t group;
static int failures_of[BNG_TARGET_CORES];

static void group_sync(void *ctx)
{
    (void)ctx;
    pthread_barrier_wait(&group);
}

/* Every core of the group runs the check, as it would call _s. */
static void on_every_core(void *p)
{
    const unsigned seed = *(const unsigned *)p;
    failures_of[get_thread_id()] = bng_hal_conformance(shared, seed, report, group_sync, NULL);
}
#endif

int main(void)
{
    int failures = 0;
    unsigned run;

    if (!(shared = aligned_alloc(64, (BNG_HAL_CONFORMANCE_SHARED_BYTES + 63) / 64 * 64)))
        return 2;
#if BNG_TEST_LAUNCH_FANOUT
    hthread_launch_fanout();
#elif BNG_TEST_LAUNCH_SPMD
    pthread_barrier_init(&group, NULL, BNG_TARGET_CORES);
#endif
    for (run = 1; run <= RUNS; run++) {
#if BNG_TEST_LAUNCH_SPMD
        unsigned core;
        hthread_launch_spmd(on_every_core, &run);
        for (core = 0; core < BNG_TARGET_CORES; core++)
            failures += failures_of[core];
#else
        failures += bng_hal_conformance(shared, run, report, NULL, NULL);
#endif
    }
#if BNG_TEST_LAUNCH_FANOUT
    bng_hal_hthreads_stop_workers();
#endif
    printf("hal-conformance: %s: %s, %u cores, %d runs: %s\n", BNG_TARGET_NAME,
#if BNG_TEST_LAUNCH_FANOUT
           "hthreads HAL (fan-out) on the runtime mock",
#elif BNG_TEST_LAUNCH_SPMD
           "hthreads HAL (SPMD) on the runtime mock",
#else
           "host HAL",
#endif
           (unsigned)BNG_TARGET_CORES, RUNS, failures ? "FAILED" : "conformant");
    free(shared);
    return failures ? 1 : 0;
}
