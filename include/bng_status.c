/* SPDX-License-Identifier: Apache-2.0 */
/* Copyright 2026 the batchnormgrad authors */
/* Owns: the entry points' status reporting (bng_status.h), the public bng_last_status()
 * (batchnormgrad.h), and on a host the parameter block of _s (BNG_SHARED_PARAMS). May
 * call: nothing of the library's but the HAL's answer codes (bng_hal.h).
 */
#include "batchnormgrad.h"     /* bng_last_status, BNG_NOT_SELECTED */
#include "bng_status.h"
#include "bng_hal.h"

#ifdef BNG_HOST
/* BNG_SHARED_PARAMS on a host, where the _s calls of both operators read their block
 * and report their status. */
long long bng_host_shared_params[BNG_SHARED_PARAMS_SLOTS];
#endif

void bng_status_report(BNG_SHARED long long *shared_params, int status)
{
    shared_params[BNG_PARAM_STATUS] = status;
}

int bng_status_of_hal(int hal)
{
    switch (hal) {
    case BNG_HAL_OK:
        return BNG_OK;
    case BNG_HAL_IDLE:
        return BNG_STATUS_NOT_SELECTED;
    default:
        return BNG_ENOMEM;
    }
}

/* BNG_CORE_LOCAL: the storage class of a variable of which every core has its own copy.
 * By default none, for firmware whose cores each have their own copy of the library's
 * static data (as when a core's data section lies in its private memory); firmware
 * whose cores share one copy defines it as its per-core storage. Host builds emulate
 * the cores with threads: thread-local there, but under tcc, which has no thread-local
 * storage and builds only with the host HAL, where the calling thread alone enters the
 * entry points. */
#ifndef BNG_CORE_LOCAL
#if defined(BNG_HOST) && !defined(__TINYC__)
#define BNG_CORE_LOCAL __thread
#else
#define BNG_CORE_LOCAL
#endif
#endif
static BNG_CORE_LOCAL int bng_kept_status = BNG_OK;

/* The public header's value (batchnormgrad.h) and the driver's agree. */
typedef char bng_not_selected_agrees[BNG_NOT_SELECTED == BNG_STATUS_NOT_SELECTED ? 1 : -1];

void bng_status_keep(int status)
{
    bng_kept_status = status;
}

/* batchnormgrad.h's: here, beside the status it reads, so that a firmware that calls
 * only the forward's vendor calls links nothing of the backward to read their status. */
int bng_last_status(void)
{
    return bng_kept_status;
}
