/* Control of the host mock of the hthreads runtime (hthread_mock.c), for the tests
 * that run the reference HAL. Not for firmware. */
#ifndef HTHREAD_MOCK_H
#define HTHREAD_MOCK_H

/* Fan-out: the calling thread becomes core 0; cores 1 .. BNG_TARGET_CORES-1 start on
 * threads of their own running worker(). */
void hthread_mock_start_workers(void (*worker)(void));
/* SPMD: run fn(arg) on BNG_TARGET_CORES threads, cores 0 .. n-1, and wait for all. */
void hthread_mock_spmd(void (*fn)(void *), void *arg);

#endif
