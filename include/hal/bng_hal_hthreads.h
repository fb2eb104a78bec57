/* What firmware calls besides the entry points when it vendors the reference HAL for
 * hthreads (bng_hal_hthreads.c) in the fan-out launch model: every core of the group
 * other than the one that calls _s runs bng_hal_hthreads_worker() and stays there
 * until bng_hal_hthreads_stop_workers(). */
#ifndef BNG_HAL_HTHREADS_H
#define BNG_HAL_HTHREADS_H

void bng_hal_hthreads_worker(void);
void bng_hal_hthreads_stop_workers(void);

#endif
