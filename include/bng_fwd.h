/* SPDX-License-Identifier: Apache-2.0 */
/* Copyright 2026 the batchnormgrad authors */
/* Owns: the training forward's call as its rooms pass it (bng_fwd_params.c checks a
 * block into it, bng_fwd_entry.c runs it, bng_fwd_nhwc_direct.c computes it). May
 * include: the target's headers and bng_params.h. Compiled only for a target whose
 * targets.yaml lists forward (generator/plan.py's rooms); internal to the library:
 * callers need only batch_norm_fwd.h.
 *
 * The statistics of a chunk of channels (docs/design.md, "Training forward"): every
 * value is taken as its deviation from the channel's shift, its value in the call's
 * first row, so that the sums stay of the data's spread where its mean is far larger.
 * A row group's mean and sum of squared deviations (M2) come from the fwd_stats
 * ukernel, blocks merged in order; the groups merge in group order into the chunk's,
 * each merge by Chan's formula:
 *   delta = mean_b - mean_a;  mean = mean_a + delta * w_new;
 *   M2 = M2_a + (M2_b + delta * delta * w_cross),
 *   w_new = n_b / (n_a + n_b), w_cross = n_a * w_new (floats),
 * the first taken as it is. The groups are the backward's (bng_group_rows): they depend
 * on batch alone.
 */
#ifndef BNG_FWD_H
#define BNG_FWD_H

#include <stddef.h>
#include "bng_kernels.h"

/* One checked call of the forward. */
typedef struct {
    size_t batch, channel;
    float eps, momentum;
    int fix_gamma;          /* BNG_FWD_FIX_GAMMA: scale taken as 1, not read */
    int global_stats;       /* BNG_FWD_GLOBAL_STATS: normalize with the moving statistics */
    int torch;              /* BNG_FWD_TORCH: PyTorch's moving update, unbiased variance */
    int keep_moving;        /* BNG_FWD_KEEP_MOVING: moving statistics untouched */
    void *mean, *invar;     /* out: the saved statistics */
    const void *scale, *bias;
    void *moving_mean, *moving_var;
} bng_fwd_call;

/* The block and the data pointers of a call -> BNG_OK and the call, or the first error
 * in the contract's order (docs/contract.md section 15). Reads the block, writes
 * nothing but the call. */
int bng_fwd_params_check(const bng_fwd_config *config, const long long *params, const void *x,
                         const void *y, bng_fwd_call *call);
/* The entry point of fp_/hp_batch_norm_forward_p: check, run, the status in the block. */
void bng_fwd_entry_private(const bng_fwd_config *config, void *x, void *y, long long *params);
/* A checked call on the caller's memory, on the calling core. */
void bng_fwd_nhwc_p_run(const bng_fwd_config *config, const bng_fwd_call *call, const void *x,
                        void *y);

#endif /* BNG_FWD_H */
