/* SPDX-License-Identifier: Apache-2.0 */
/* Copyright 2026 the batchnormgrad authors */
/* Owns: how the entry points report a call's status (bng_status.c), shared by the
 * backward's (bng_entry.c) and the training forward's (bng_fwd_entry.c), so that either
 * links without the other: the _s status store, what bng_hal_parallel's answer makes of
 * a call, and the calling core's last status of the calls without a status slot. May
 * include: batch_norm_grad.h; included by the entry points only. Internal to the
 * library.
 */
#ifndef BNG_STATUS_H
#define BNG_STATUS_H

#include "batch_norm_grad.h"   /* BNG_SHARED */

/* A core outside core_mask that the SPMD launch model made call _s, when the call passed
 * the checks: it took no part, the selected cores have the outcome (bng_last_status()'s
 * BNG_NOT_SELECTED). */
#define BNG_STATUS_NOT_SELECTED 1

/* The status of an _s call into its block in shared memory. In the SPMD launch model
 * every core of the group that computes it writes the same value there, at the same
 * time: harmless on the part, a race by the letter of C11, which ThreadSanitizer is told
 * to accept for this one store (tests/tsan.supp). */
void bng_status_report(BNG_SHARED long long *shared_params, int status);
/* What bng_hal_parallel's answer makes of an _s call: BNG_OK, BNG_STATUS_NOT_SELECTED
 * (BNG_HAL_IDLE), else BNG_ENOMEM. */
int bng_status_of_hal(int hal);
/* The calling core's last status of a call without a status slot (the explicit-argument
 * calls, the forward's vendor calls), which bng_last_status() (batchnormgrad.h) reads:
 * BNG_OK before the first. */
void bng_status_keep(int status);

#endif /* BNG_STATUS_H */
