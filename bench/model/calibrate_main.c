/* The calibration program (include/programs/bng_calibrate.c) on a host, against the host HAL
 * linked in: proof that it runs and prints lines the loader reads back
 * (tests/model/test_calibrate.py). Its figures mean nothing here: the host HAL's DMA
 * is a copy by the core itself. On the part, firmware calls bng_calibrate the same way
 * with its HAL, a DDR and a GSM buffer, and its clock (e.g. get_clk()).
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bng_calibrate.h"

static unsigned long long nanoseconds(void *ctx)
{
    struct timespec now;

    (void)ctx;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (unsigned long long)now.tv_sec * 1000000000ull + (unsigned long long)now.tv_nsec;
}

static void print_line(void *ctx, const char *line)
{
    (void)ctx;
    puts(line);
}

int main(void)
{
    const size_t bytes = (BNG_CALIBRATE_BYTES + 63) / 64 * 64;
    bng_calibrate_setup setup;
    bng_calibrate_result result;
    int status;

    setup.ddr = aligned_alloc(64, bytes);
    setup.gsm = aligned_alloc(64, bytes);
    if (!setup.ddr || !setup.gsm)
        return 2;
    setup.clock = nanoseconds;
    setup.ticks_per_second = 1000000000ull;
    setup.print = print_line;
    setup.sync = NULL;
    setup.ctx = NULL;
    status = bng_calibrate(&setup, &result);
    free(setup.ddr);
    free(setup.gsm);
    return status == 0 ? 0 : 1;
}
