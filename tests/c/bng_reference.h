/* Independent float64 evaluation of batchnormgrad (docs/contract.md section 1) and the accuracy
 * bound of its section 9, for the tests. Written from the contract's formulas, not from
 * the kernels: xhat and the sums are formed exactly as the contract states them.
 */
#ifndef BNG_REFERENCE_H
#define BNG_REFERENCE_H

#include <stddef.h>

typedef struct {
    double *dx, *dbias, *dscale;                 /* reference results */
    double *dx_bound, *dbias_bound, *dscale_bound; /* allowed |error| per element */
} bng_reference;

/* Inputs are the values as stored (already rounded), widened to double.
 * half_output adds the final binary16 rounding to the bounds of the outputs it names
 * (the others, float32, get the absolute term of a result below the normal range):
 * bit 0 dx, bit 1 dbias and dscale.
 */
void bng_reference_eval(size_t batch, size_t channel, int is_train,
                        const double *x, const double *dy, const double *mean,
                        const double *invar, const double *scale, int half_output,
                        bng_reference *out);

/* The arrays, in one block of bng_reference_doubles(batch, channel) doubles: the
 * caller's (bng_reference_in: the suites' come from their allocator, which keeps large
 * blocks under a sanitizer), or one of the heap's (bng_reference_alloc, freed by
 * bng_reference_free). bng_reference_eval writes every element. */
size_t bng_reference_doubles(size_t batch, size_t channel);
bng_reference bng_reference_in(double *block, size_t batch, size_t channel);
bng_reference bng_reference_alloc(size_t batch, size_t channel);
void bng_reference_free(bng_reference *r);

#define BNG_REF_HALF_DX 1
#define BNG_REF_HALF_STATS 2

#endif
