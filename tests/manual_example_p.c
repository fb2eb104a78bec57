/* The vendor manual's private-storage example (FT78NE, batch 4, channel 32), with
 * arrays in place of its fixed L2 addresses, checked against the float64 reference.
 * Built with only -Iinclude -Igenerated/ft78ne and build/ft78ne/libbatchnormgrad.a,
 * as the README tells a caller to.
 */
#include <stdio.h>
#include <stdint.h>
#include <math.h>
#include "batch_norm_grad.h"
#include "bng_reference.h"

#define BATCH 4
#define CHANNEL 32

static float x_mem[BATCH * CHANNEL], dy_mem[BATCH * CHANNEL], dx_mem[BATCH * CHANNEL];
static float mean_mem[CHANNEL], invar_mem[CHANNEL], scale_mem[CHANNEL];
static float dbias_mem[CHANNEL], dscale_mem[CHANNEL];

int main(void)
{
    float *x = x_mem;            /* forward input x in L2 space */
    float *dy = dy_mem;          /* upstream gradient dy */
    float *mean = mean_mem;      /* forward mean */
    float *invar = invar_mem;    /* forward inverse variance */
    float *scale = scale_mem;    /* forward scale (gamma) */
    float *dx = dx_mem;          /* output gradient dx */
    float *dbias = dbias_mem;    /* output gradient dbias */
    float *dscale = dscale_mem;  /* output gradient dscale */
    int batch = BATCH;
    int channel = CHANNEL;
    int is_train = 1;
    long long params[12];
    double xd[BATCH * CHANNEL], dyd[BATCH * CHANNEL], meand[CHANNEL], invard[CHANNEL],
           scaled[CHANNEL];
    bng_reference ref;
    int b, c, bad = 0;

    for (c = 0; c < CHANNEL; c++) {
        double sum = 0, sq = 0;
        for (b = 0; b < BATCH; b++) {
            x[b * CHANNEL + c] = (float)(0.25 * c - 1.5 * b + 0.125 * ((b * 7 + c * 3) % 5));
            dy[b * CHANNEL + c] = (float)(0.5 - 0.0625 * ((b * 11 + c * 5) % 9));
            sum += x[b * CHANNEL + c];
        }
        mean[c] = (float)(sum / BATCH);
        for (b = 0; b < BATCH; b++)
            sq += (x[b * CHANNEL + c] - mean[c]) * (x[b * CHANNEL + c] - mean[c]);
        invar[c] = (float)(1.0 / sqrt(sq / BATCH + 1e-5));
        scale[c] = (float)(1.0 + 0.03125 * c);
    }

    params[0] = (long long)(intptr_t)mean;
    params[1] = (long long)(intptr_t)invar;
    params[2] = (long long)(intptr_t)scale;
    params[3] = (long long)(intptr_t)dbias;
    params[4] = (long long)(intptr_t)dscale;
    params[5] = (long long)batch;
    params[6] = (long long)channel;
    params[7] = (long long)is_train;

    fp_batch_norm_grad_p(x, dy, dx, params);

    if (params[8] != BNG_OK) {
        printf("manual example (private storage): status %lld\n", params[8]);
        return 1;
    }
    for (b = 0; b < BATCH * CHANNEL; b++) {
        xd[b] = x[b];
        dyd[b] = dy[b];
    }
    for (c = 0; c < CHANNEL; c++) {
        meand[c] = mean[c];
        invard[c] = invar[c];
        scaled[c] = scale[c];
    }
    ref = bng_reference_alloc(BATCH, CHANNEL);
    bng_reference_eval(BATCH, CHANNEL, is_train, xd, dyd, meand, invard, scaled, 0, &ref);
    for (c = 0; c < CHANNEL; c++) {
        bad += fabs(dbias[c] - ref.dbias[c]) > ref.dbias_bound[c];
        bad += fabs(dscale[c] - ref.dscale[c]) > ref.dscale_bound[c];
    }
    for (b = 0; b < BATCH * CHANNEL; b++)
        bad += fabs(dx[b] - ref.dx[b]) > ref.dx_bound[b];
    printf("manual example (private storage, batch 4, channel 32): %s; dbias[0] %.7g "
           "(reference %.7g), dx[0] %.7g (reference %.7g)\n", bad ? "WRONG" : "matches the reference",
           dbias[0], ref.dbias[0], dx[0], ref.dx[0]);
    bng_reference_free(&ref);
    return bad != 0;
}
