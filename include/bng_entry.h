/* SPDX-License-Identifier: Apache-2.0 */
/* Copyright 2026 the batchnormgrad authors */
/* The driver's entry points (include/bng_entry.c), which the generated wrappers, the
 * tests and the bench call: each checks its call and hands it to its layout's runner
 * (the rooms of generator/plan.py's DRIVER_ROOMS). Nothing else includes this header:
 * the rooms and the generated kernels share only bng_ukernel.h. Internal to the library: callers
 * need only batch_norm_grad.h.
 */
#ifndef BNG_ENTRY_H
#define BNG_ENTRY_H

#include <stddef.h>
#include "bng_kernels.h"
#include "bng_status.h"

/* The ABI entry points' bodies: check the parameter block, write the status. */
void bng_entry_private(const bng_dtype_config *dtype, void *x, void *dy, void *dx,
                       long long *params);
void bng_entry_shared(const bng_dtype_config *dtype, void *x, void *dy, void *dx,
                      int core_mask);

/* The explicit-argument calls of batchnormgrad.h (the vendor's call, its arrays and
 * shape as arguments): checked and run as the vendor's call given the block
 * bng_params_block builds from them, the same bits, in the caller's frame (never
 * BNG_SHARED_PARAMS). The status is the calling core's last status,
 * bng_last_status() (bng_status.c): BNG_OK before its first call; on a core outside core_mask
 * that the SPMD launch model made call _s, BNG_STATUS_NOT_SELECTED when the call passed
 * the checks (the selected cores have the outcome), else the checks' error. */
void bng_entry_private_args(const bng_dtype_config *dtype, void *x, void *dy, void *dx,
                            const bng_stats *stats, int batch, int channel, int is_train);
void bng_entry_shared_args(const bng_dtype_config *dtype, void *x, void *dy, void *dx,
                           const bng_stats *stats, int batch, int channel, int is_train,
                           int core_mask);

/* The entry points of batch_norm_grad_ext.h: `op` one of BNG_OP_REDUCE, BNG_OP_APPLY,
 * BNG_OP_DX, BNG_OP_EXT (bng_ukernel.h). */
void bng_entry_ext_private(const bng_dtype_config *dtype, int op, void *x, void *dy,
                           void *dx, long long *params);
void bng_entry_ext_shared(const bng_dtype_config *dtype, int op, void *x, void *dy,
                          void *dx, int core_mask);

/* _p's work (the vendor's call) on a shape the caller has checked, with the kernel it
 * names: for the tests and the bench, which run the generic kernel on a count that has
 * a specialized one. BNG_OK, or on a split target BNG_ENOMEM when the HAL had no
 * workspace (nothing written). */
int bng_entry_private_kernel(const bng_dtype_config *dtype, const bng_kernel *kernel,
                             size_t batch, size_t channel, int is_train,
                             const void *x, const void *dy, void *dx, const bng_stats *stats);

#endif /* BNG_ENTRY_H */
