/* BNG_TEST_FTZ=1 in the environment: run with the FPU flushing subnormals as the DSP's
 * does (x86 MXCSR flush-to-zero 0x8000 and denormals-are-zero 0x40; threads started
 * later inherit it). Returns 1 when set. Where the mode cannot be set (not x86, built
 * by tcc, or under valgrind, which ignores it) the program says so and exits
 * successfully. */
#ifndef BNG_FTZ_H
#define BNG_FTZ_H

#include <stdio.h>
#include <stdlib.h>

static int bng_test_enable_ftz(void)
{
    if (!getenv("BNG_TEST_FTZ"))
        return 0;
#if (defined(__x86_64__) || defined(__i386__)) && !defined(__TINYC__)
    {
        unsigned csr;   /* stmxcsr/ldmxcsr, not xmmintrin.h (tcc has neither) */
        __asm__ __volatile__("stmxcsr %0" : "=m"(csr));
        csr |= 0x8040u;
        __asm__ __volatile__("ldmxcsr %0" : : "m"(csr));
        __asm__ __volatile__("stmxcsr %0" : "=m"(csr));
        if ((csr & 0x8040u) != 0x8040u) {   /* e.g. under valgrind, which ignores them */
            printf("FPU mode: flush-to-zero did not take (MXCSR %#x): skipped\n", csr);
            exit(EXIT_SUCCESS);
        }
        printf("FPU mode: flush-to-zero and denormals-are-zero (MXCSR %#x)\n", csr);
    }
    return 1;
#else
    printf("FPU mode: flush-to-zero requested, but not on x86 with gcc or clang: skipped\n");
    exit(EXIT_SUCCESS);
    return 0;
#endif
}

#endif
