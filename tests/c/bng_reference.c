#include "bng_reference.h"

#include <math.h>
#include <stdlib.h>

#define U_F32 (1.0 / 16777216.0)        /* 2^-24 */
#define U_F16_ROUND (1.0 / 2048.0)      /* 2^-11: final rounding to binary16 */
#define F16_MIN_NORMAL (1.0 / 16384.0)  /* 2^-14 */
#define F32_MIN_NORMAL 1.1754943508222875e-38  /* 2^-126 */

size_t bng_reference_doubles(size_t batch, size_t channel)
{
    return 2 * batch * channel + 4 * channel;
}

bng_reference bng_reference_in(double *block, size_t batch, size_t channel)
{
    bng_reference r;
    r.dx = block;
    r.dx_bound = r.dx + batch * channel;
    r.dbias = r.dx_bound + batch * channel;
    r.dscale = r.dbias + channel;
    r.dbias_bound = r.dscale + channel;
    r.dscale_bound = r.dbias_bound + channel;
    return r;
}

bng_reference bng_reference_alloc(size_t batch, size_t channel)
{
    const size_t doubles = bng_reference_doubles(batch, channel);
    double *block = malloc((doubles ? doubles : 1) * sizeof *block);
    if (!block)
        abort();
    return bng_reference_in(block, batch, channel);
}

void bng_reference_free(bng_reference *r)
{
    free(r->dx);
}

/* The final rounding to the output type: relative and absolute for half; for float32,
 * the absolute term of a result below the normal range (its rounding error is of the
 * order of the smallest normal float whatever the sums' size). */
static double output_rounding(double bound, double ref, int half)
{
    return half ? bound + U_F16_ROUND * fabs(ref) + F16_MIN_NORMAL : bound + F32_MIN_NORMAL;
}

/* Row by row, so that the data streams through the cache once per pass (channel by
 * channel, every element would be a stride of `channel` apart); each channel's sums
 * still add its rows in order. The first pass keeps sum |dy| and sum |dy * xhat| in the
 * bound arrays, which the end turns into the bounds. */
void bng_reference_eval(size_t batch, size_t channel, int is_train,
                        const double *x, const double *dy, const double *mean,
                        const double *invar, const double *scale, int half_output,
                        bng_reference *out)
{
    const double m = (double)batch;
    const double K = 16.0 + 4.0 * sqrt(m);
    double *const abs_dy = out->dbias_bound, *const abs_dy_xhat = out->dscale_bound;
    size_t b, c;

    for (c = 0; c < channel; c++)
        out->dbias[c] = out->dscale[c] = abs_dy[c] = abs_dy_xhat[c] = 0.0;
    for (b = 0; b < batch; b++) {
        for (c = 0; c < channel; c++) {
            const double g = dy[b * channel + c];
            const double xhat = (x[b * channel + c] - mean[c]) * invar[c];
            out->dbias[c] += g;
            out->dscale[c] += g * xhat;
            abs_dy[c] += fabs(g);
            abs_dy_xhat[c] += fabs(g * xhat);
        }
    }
    for (b = 0; b < batch; b++) {
        for (c = 0; c < channel; c++) {
            const size_t i = b * channel + c;
            const double g = dy[i];
            const double xhat = (x[i] - mean[c]) * invar[c];
            const double dbias = out->dbias[c], dscale = out->dscale[c];
            double dx, bound;

            if (is_train)
                dx = scale[c] * invar[c] / m * (m * g - dbias - xhat * dscale);
            else
                dx = scale[c] * invar[c] * g;
            bound = K * U_F32 * fabs(scale[c] * invar[c])
                    * (fabs(g) + abs_dy[c] / m + fabs(xhat) * abs_dy_xhat[c] / m);
            /* A NaN or Inf elsewhere in the channel makes the sums, and so the bound,
             * non-finite; an element whose reference is still finite keeps its own term. */
            if (!isfinite(bound))
                bound = K * U_F32 * fabs(scale[c] * invar[c] * g);
            out->dx[i] = dx;
            out->dx_bound[i] = output_rounding(bound, dx, half_output & BNG_REF_HALF_DX);
        }
    }
    for (c = 0; c < channel; c++) {
        out->dbias_bound[c] = output_rounding(K * U_F32 * abs_dy[c], out->dbias[c],
                                              half_output & BNG_REF_HALF_STATS);
        out->dscale_bound[c] = output_rounding(K * U_F32 * abs_dy_xhat[c], out->dscale[c],
                                               half_output & BNG_REF_HALF_STATS);
    }
}
