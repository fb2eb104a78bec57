/* The vendor's function-library page "FusedBatchNorm": its shared-storage example (FT78NE,
 * channel 64, unit 1024, epsilon 1e-5, core_mask 0xff) with arrays in place of its
 * fixed DDR addresses, its values filled in, and the output checked against float64.
 * The page includes <stdio.h> alone; the declaration is batch_norm_fwd.h's. Built with
 * -DBNG_HOST -Iinclude -Igenerated/<first target> and its libbatchnormgrad.a, as the
 * backward's manual examples.
 */
#include <math.h>
#include <stdio.h>
#include "batch_norm_fwd.h"
#include "batchnormgrad.h"      /* bng_last_status */

#define CHANNEL 64
#define UNIT 1024

static float input_mem[UNIT * CHANNEL], output_mem[UNIT * CHANNEL];
static float scale_mem[CHANNEL], offset_mem[CHANNEL], mean_mem[CHANNEL], variance_mem[CHANNEL];

/* |output - reference| within 8 float32 roundings of the terms (docs/contract.md section
 * 15's bound with no batch statistics: K u R is 0). */
static int check(const float *input, const float *scale, const float *offset, const float *mean,
                 const float *variance, float epsilon, int channel, int unit, const float *output)
{
    const double u = 1.0 / 16777216.0;
    double worst = 0.0;
    int i, c;

    for (i = 0; i < unit; i++)
        for (c = 0; c < channel; c++) {
            const double invstd = 1.0 / sqrt((double)variance[c] + epsilon);
            const double dev = (double)input[i * channel + c] - mean[c];
            const double ref = dev * invstd * scale[c] + offset[c];
            const double bound = 8 * u * (fabs(dev * invstd * scale[c]) + fabs(offset[c])) + 1e-30;
            const double ratio = fabs(output[i * channel + c] - ref) / bound;
            worst = ratio > worst ? ratio : worst;
        }
    printf("the FusedBatchNorm page's example (shared storage, unit %d, channel %d): status %d, "
           "max |error| / bound %.3f\n", unit, channel, bng_last_status(), worst);
    return worst <= 1.0 && bng_last_status() == BNG_OK ? 0 : 1;
}

int main(void)
{
    const float *input = input_mem;
    const float *scale = scale_mem;
    const float *offset = offset_mem;
    const float *mean = mean_mem;
    const float *variance = variance_mem;
    float *output = output_mem;
    int channel = 64;
    int unit = 1024;
    float epsilon = 1e-5f;
    int core_mask = 0xff;
    int i, c;

    for (c = 0; c < CHANNEL; c++) {
        scale_mem[c] = 0.5f + 0.03125f * (float)c;
        offset_mem[c] = -1.0f + 0.0625f * (float)(c % 9);
        mean_mem[c] = 100.0f - 3.0f * (float)c;
        variance_mem[c] = 0.25f + 0.125f * (float)(c % 5);
    }
    for (i = 0; i < UNIT; i++)
        for (c = 0; c < CHANNEL; c++)
            input_mem[i * CHANNEL + c] = mean_mem[c] + (float)((i * 37 + c * 11) % 101 - 50) / 25.0f;
    fp_fusedbatchnorm_s(input, scale, offset, mean, variance,
                        epsilon, channel, unit, core_mask,
                        output);
    return check(input, scale, offset, mean, variance, epsilon, channel, unit, output);
}
