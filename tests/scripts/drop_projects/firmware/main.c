/* A firmware image's use of a vendored drop: the vendor manual's private-storage call
 * (batch 4, channel 32) and a shared-storage call on every core. Built, linked and
 * sized for bare metal by tests/scripts/drop_builds.sh, and by make report (its image
 * row, for each compiler); never run. */
#include <stdint.h>
#include "batchnormgrad.h"

#define BATCH 4
#define CHANNEL 32

static float x[BATCH * CHANNEL], dy[BATCH * CHANNEL], dx[BATCH * CHANNEL];
static float mean[CHANNEL], invar[CHANNEL], scale[CHANNEL], dbias[CHANNEL], dscale[CHANNEL];

int main(void)
{
    long long params[12];

    params[0] = (long long)(intptr_t)mean;   params[1] = (long long)(intptr_t)invar;
    params[2] = (long long)(intptr_t)scale;  params[3] = (long long)(intptr_t)dbias;
    params[4] = (long long)(intptr_t)dscale;
    params[5] = BATCH;  params[6] = CHANNEL;  params[7] = 1;
    fp_batch_norm_grad_p(x, dy, dx, params);
    fp_batch_norm_grad_s(x, dy, dx, 0xff);
    return params[8] == BNG_OK ? 0 : 1;
}
