/* A firmware image's use of a vendored drop's training forward: a private-storage call
 * (batch 4, channel 32, MXNet's training step) and a shared-storage call on every core.
 * Linked and sized for bare metal by make report (its forward image row, for each
 * compiler); never run. */
#include <stdint.h>
#include "batch_norm_fwd.h"

#define BATCH 4
#define CHANNEL 32

static float x[BATCH * CHANNEL], y[BATCH * CHANNEL];
static float mean[CHANNEL], invar[CHANNEL], scale[CHANNEL], bias[CHANNEL];
static float moving_mean[CHANNEL], moving_var[CHANNEL];

int main(void)
{
    long long params[BNG_FWD_PARAMS_LEN] = {0};

    params[BNG_PARAM_MEAN] = (long long)(intptr_t)mean;
    params[BNG_PARAM_INVAR] = (long long)(intptr_t)invar;
    params[BNG_PARAM_SCALE] = (long long)(intptr_t)scale;
    params[BNG_FWD_PARAM_BIAS] = (long long)(intptr_t)bias;
    params[BNG_FWD_PARAM_MOVING_MEAN] = (long long)(intptr_t)moving_mean;
    params[BNG_FWD_PARAM_MOVING_VAR] = (long long)(intptr_t)moving_var;
    params[BNG_PARAM_BATCH] = BATCH;
    params[BNG_PARAM_CHANNEL] = CHANNEL;
    params[BNG_FWD_PARAM_EPS] = bng_fwd_float(1e-3f);
    params[BNG_FWD_PARAM_MOMENTUM] = bng_fwd_float(0.9f);
    fp_batch_norm_forward_p(x, y, params);
    fp_batch_norm_forward_s(x, y, 0xff);
    return params[BNG_PARAM_STATUS] == BNG_OK ? 0 : 1;
}
