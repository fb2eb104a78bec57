/* SPDX-License-Identifier: Apache-2.0 */
/* Copyright 2026 the batchnormgrad authors */
/* The host HAL's one hook for tests (include/host/bng_hal_host.c): not for firmware.
 * It makes the HAL fail the way the driver's defensive paths expect of a HAL that cannot
 * keep bng_hal.h's promises, so that the tests see the driver's answer:
 * private_memory != 0, bng_hal_private gives NULL (and 0 bytes) on every core, what
 * bng_hal.h tells a HAL to return when it cannot honour the call; workspace != 0,
 * bng_hal_p_workspace gives a block one byte short of BNG_P_WORKSPACE_BYTES, a HAL that
 * broke its contract (split targets). Set between calls, from the calling thread;
 * bng_hal_host_refuse(0, 0) restores the HAL. */
#ifndef BNG_HAL_HOST_H
#define BNG_HAL_HOST_H

void bng_hal_host_refuse(int private_memory, int workspace);

#endif /* BNG_HAL_HOST_H */
