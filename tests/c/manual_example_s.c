/* The vendor manual's shared-storage example (FT78NE, batch 4, channel 64,
 * core_mask 0xff), with arrays in place of its fixed shared-memory addresses and the
 * parameter block in BNG_SHARED_PARAMS, checked against the float64 reference.
 * Built with -DBNG_HOST -Iinclude -Igenerated/ft78ne and build/ft78ne/libbatchnormgrad.a.
 */
#include <stdio.h>
#include <stdint.h>
#include <batchnormgrad.h>     /* the manual's own line */
#include "bng_example.h"

#define BATCH 4
#define LABEL "manual example (shared storage, batch 4, channel 64, core_mask 0xff)"
#define CHANNEL 64

static float x_mem[BATCH * CHANNEL], dy_mem[BATCH * CHANNEL], dx_mem[BATCH * CHANNEL];
static float mean_mem[CHANNEL], invar_mem[CHANNEL], scale_mem[CHANNEL];
static float dbias_mem[CHANNEL], dscale_mem[CHANNEL];

int main(void)
{
    float *x = x_mem;            /* forward input x */
    float *dy = dy_mem;          /* upstream gradient dy */
    float *mean = mean_mem;      /* forward mean */
    float *invar = invar_mem;    /* forward inverse variance */
    float *scale = scale_mem;    /* forward scale (gamma) */
    float *dx = dx_mem;          /* output gradient dx */
    float *dbias = dbias_mem;    /* output gradient dbias */
    float *dscale = dscale_mem;  /* output gradient dscale */
    int batch = BATCH;
    int channel = CHANNEL;
    int is_train = true;         /* as the manual writes it */
    int core_mask = 0xff;
    long long *params = BNG_SHARED_PARAMS;

    bng_example_fill(batch, channel, x, dy, mean, invar, scale);
    params[0] = (long long)(intptr_t)mean;
    params[1] = (long long)(intptr_t)invar;
    params[2] = (long long)(intptr_t)scale;
    params[3] = (long long)(intptr_t)dbias;
    params[4] = (long long)(intptr_t)dscale;
    params[5] = (long long)batch;
    params[6] = (long long)channel;
    params[7] = (long long)is_train;
    fp_batch_norm_grad_s(x, dy, dx, core_mask);

    if (params[8] != BNG_OK) {
        printf("manual example (shared storage): status %lld\n", params[8]);
        return 1;
    }
    return bng_example_check(LABEL, batch, channel, is_train, x, dy, mean, invar, scale,
                             dx, dbias, dscale);
}
