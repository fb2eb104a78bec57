/* The shared-storage example of the vendor's function-library page "Batchnormgrad"
 * (ft_dsp.gitlink.net, functionlib/dsplib/batchnormgrad; FT78NE, batch 4, channel 64,
 * core_mask 0xff): the explicit-argument call, run on a host and checked against the
 * float64 reference. Built with -DBNG_HOST -Iinclude -Igenerated/ft78ne and
 * build/ft78ne/libbatchnormgrad.a.
 *
 * The page's program is below as it stands, but for two things: its fixed DDR
 * addresses (x 0xA0000000, dy 0xB0000000, mean 0xC0000000, invar 0xD0000000, scale
 * 0xE0000000) are arrays here, and its main is renamed (a #define) so that this
 * program's main can fill the arrays first and check them after. The stored copy of
 * the page shows the program to its tenth line; from there on (the outputs, the shape,
 * the call on its line 20, which the page emphasises) it is written from the page's
 * declaration of the call and the manual's earlier example of the same operation
 * (docs/contract.md section 14).
 */
#include <stdlib.h>
#include "bng_example.h"

#define BATCH 4
#define CHANNEL 64
#define LABEL "the function-library page's example (shared storage, batch 4, channel 64, core_mask 0xff)"

static float x_mem[BATCH * CHANNEL], dy_mem[BATCH * CHANNEL], dx_mem[BATCH * CHANNEL];
static float mean_mem[CHANNEL], invar_mem[CHANNEL], scale_mem[CHANNEL];
static float dbias_mem[CHANNEL], dscale_mem[CHANNEL];

/* The page's main takes argc and argv and uses neither. */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#define main page_example_main
/* ---- the page's program ---- */
//FT78NE示例
#include <stdio.h>
#include <batchnormgrad.h>
int main(int argc, char* argv[]) {
    float *x = x_mem;                        // forward input x
    float *dy = dy_mem;                      // upstream gradient dy
    float *mean = mean_mem;                  // forward mean
    float *invar = invar_mem;                // forward inverse variance
    float *scale = scale_mem;                // forward scale (gamma)

    float *dx = dx_mem;                      // output gradient dx
    float *dbias = dbias_mem;                // output gradient dbias
    float *dscale = dscale_mem;              // output gradient dscale

    int batch = 4;
    int channel = 64;
    int is_train = true;
    int core_mask = 0xff;

    fp_batchnormgrad_s(x, dy, mean, invar, scale, batch, channel, is_train, dx, dbias, dscale, core_mask);
    return 0;
}
/* ---- end of the page's program ---- */
#undef main

int main(void)
{
    char *args[] = {"manual_example_explicit_s", NULL};

    bng_example_fill(BATCH, CHANNEL, x_mem, dy_mem, mean_mem, invar_mem, scale_mem);
    if (page_example_main(1, args) != 0 || bng_last_status() != BNG_OK) {
        printf("%s: last status %d\n", LABEL, bng_last_status());
        return EXIT_FAILURE;
    }
    return bng_example_check(LABEL, BATCH, CHANNEL, 1, x_mem, dy_mem, mean_mem, invar_mem,
                             scale_mem, dx_mem, dbias_mem, dscale_mem);
}
