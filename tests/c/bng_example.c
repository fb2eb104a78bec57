#include "bng_example.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "bng_reference.h"

void bng_example_fill(int batch, int channel, float *x, float *dy, float *mean,
                      float *invar, float *scale)
{
    int b, c;
    for (c = 0; c < channel; c++) {
        double sum = 0, sq = 0;
        for (b = 0; b < batch; b++) {
            x[b * channel + c] = (float)(0.25 * c - 1.5 * b + 0.125 * ((b * 7 + c * 3) % 5));
            dy[b * channel + c] = (float)(0.5 - 0.0625 * ((b * 11 + c * 5) % 9));
            sum += x[b * channel + c];
        }
        mean[c] = (float)(sum / batch);
        for (b = 0; b < batch; b++)
            sq += (x[b * channel + c] - mean[c]) * (x[b * channel + c] - mean[c]);
        invar[c] = (float)(1.0 / sqrt(sq / batch + 1e-5));
        scale[c] = (float)(1.0 + 0.03125 * c);
    }
}

static double *widen(const float *a, int n)
{
    double *d = malloc((size_t)n * sizeof(double));
    int i;
    if (!d)
        abort();
    for (i = 0; i < n; i++)
        d[i] = a[i];
    return d;
}

int bng_example_check(const char *label, int batch, int channel, int is_train,
                      const float *x, const float *dy, const float *mean, const float *invar,
                      const float *scale, const float *dx, const float *dbias,
                      const float *dscale)
{
    double *xd = widen(x, batch * channel), *dyd = widen(dy, batch * channel);
    double *meand = widen(mean, channel), *invard = widen(invar, channel);
    double *scaled = widen(scale, channel);
    bng_reference ref = bng_reference_alloc((size_t)batch, (size_t)channel);
    int i, bad = 0;

    bng_reference_eval((size_t)batch, (size_t)channel, is_train, xd, dyd, meand, invard,
                       scaled, 0, &ref);
    for (i = 0; i < channel; i++) {
        bad += !(fabs(dbias[i] - ref.dbias[i]) <= ref.dbias_bound[i]);
        bad += !(fabs(dscale[i] - ref.dscale[i]) <= ref.dscale_bound[i]);
    }
    for (i = 0; i < batch * channel; i++)
        bad += !(fabs(dx[i] - ref.dx[i]) <= ref.dx_bound[i]);
    printf("%s: %s; dbias[0] %.7g (reference %.7g), dx[0] %.7g (reference %.7g)\n", label,
           bad ? "WRONG" : "matches the reference", dbias[0], ref.dbias[0], dx[0], ref.dx[0]);
    bng_reference_free(&ref);
    free(xd);
    free(dyd);
    free(meand);
    free(invard);
    free(scaled);
    return bad != 0;
}
