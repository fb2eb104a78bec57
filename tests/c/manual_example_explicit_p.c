/* The private-storage example of the vendor's function-library page "Batchnormgrad"
 * (ft_dsp.gitlink.net, functionlib/dsplib/batchnormgrad; FT78NE, batch 4, channel 32):
 * the explicit-argument call, run on a host and checked against the float64
 * reference. Built with -DBNG_HOST -Iinclude -Igenerated/ft78ne and
 * build/ft78ne/libbatchnormgrad.a.
 *
 * The stored copy of the page ends before its private-storage section: this program
 * is its shared-storage example (manual_example_explicit_s.c) written the way the
 * library's other pages write their private-storage examples (the same arguments
 * without core_mask, the arrays in the core's L2 space) and the manual's earlier
 * private-storage example of the same operation (batch 4, channel 32). Its fixed L2
 * addresses are arrays here, and its main is renamed (a #define) so that this
 * program's main can fill the arrays first and check them after (docs/contract.md
 * section 14).
 */
#include <stdlib.h>
#include "bng_example.h"

#define BATCH 4
#define CHANNEL 32
#define LABEL "the function-library page's example (private storage, batch 4, channel 32)"

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
    float *x = x_mem;                        // forward input x 在L2空间
    float *dy = dy_mem;                      // upstream gradient dy
    float *mean = mean_mem;                  // forward mean
    float *invar = invar_mem;                // forward inverse variance
    float *scale = scale_mem;                // forward scale (gamma)

    float *dx = dx_mem;                      // output gradient dx
    float *dbias = dbias_mem;                // output gradient dbias
    float *dscale = dscale_mem;              // output gradient dscale

    int batch = 4;
    int channel = 32;
    int is_train = true;

    fp_batchnormgrad_p(x, dy, mean, invar, scale, batch, channel, is_train, dx, dbias, dscale);
    return 0;
}
/* ---- end of the page's program ---- */
#undef main

int main(void)
{
    char *args[] = {"manual_example_explicit_p", NULL};

    bng_example_fill(BATCH, CHANNEL, x_mem, dy_mem, mean_mem, invar_mem, scale_mem);
    if (page_example_main(1, args) != 0 || bng_last_status() != BNG_OK) {
        printf("%s: last status %d\n", LABEL, bng_last_status());
        return EXIT_FAILURE;
    }
    return bng_example_check(LABEL, BATCH, CHANNEL, 1, x_mem, dy_mem, mean_mem, invar_mem,
                             scale_mem, dx_mem, dbias_mem, dscale_mem);
}
