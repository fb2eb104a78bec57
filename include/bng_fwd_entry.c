/* SPDX-License-Identifier: Apache-2.0 */
/* Copyright 2026 the batchnormgrad authors */
/* Owns: the training forward's entry point (fp_/hp_batch_norm_forward_p's body): check
 * the call (bng_fwd_params.c), run it (bng_fwd_nhwc_direct.c), report the status. May
 * call: bng_fwd.h. Compiled only for a target with the forward extension.
 */
#include <stddef.h>
#include "batch_norm_fwd.h"
#include "bng_fwd.h"

void bng_fwd_entry_private(const bng_fwd_config *config, void *x, void *y, long long *params)
{
    bng_fwd_call call;
    int status;

    if (params == NULL)
        return;     /* nowhere to report: touch nothing */
    status = bng_fwd_params_check(config, params, x, y, &call);
    if (status == BNG_OK)
        bng_fwd_nhwc_p_run(config, &call, x, y);
    params[BNG_PARAM_STATUS] = status;
}
