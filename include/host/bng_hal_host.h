/* SPDX-License-Identifier: Apache-2.0 */
/* Copyright 2026 the batchnormgrad authors */
/* The host HAL's one hook for tests (include/host/bng_hal_host.c): not for firmware.
 * It makes the HAL refuse what bng_hal.h lets a HAL refuse, so that the tests see the
 * driver's answer: private_memory != 0, bng_hal_private gives NULL (and 0 bytes) on
 * every core; workspace != 0, bng_hal_p_workspace gives a block one byte short of
 * BNG_P_WORKSPACE_BYTES (split targets). Set between calls, from the calling thread;
 * bng_hal_host_refuse(0, 0) restores the HAL. */
#ifndef BNG_HAL_HOST_H
#define BNG_HAL_HOST_H

void bng_hal_host_refuse(int private_memory, int workspace);

#endif /* BNG_HAL_HOST_H */
