/* Data and the reference check shared by the manual's two examples. */
#ifndef BNG_EXAMPLE_H
#define BNG_EXAMPLE_H

/* Deterministic x and dy, with mean and invar computed from x, and a scale ramp. */
void bng_example_fill(int batch, int channel, float *x, float *dy, float *mean,
                      float *invar, float *scale);
/* Print the outcome; 0 when every output is within the contract's bound (docs/contract.md section 9). */
int bng_example_check(const char *label, int batch, int channel, int is_train,
                      const float *x, const float *dy, const float *mean, const float *invar,
                      const float *scale, const float *dx, const float *dbias,
                      const float *dscale);

#endif
