/* What the training forward's suites share (suite_forward.c defines it;
 * suite_forward_nchw.c runs NCHW on it): one call's arrays between guards and its
 * block, the data, the float64 reference with the contract's bound, the _s launch, the
 * checks of bits and refusals. Only where the target has the forward.
 */
#ifndef BNG_FORWARD_CASE_H
#define BNG_FORWARD_CASE_H

#include <stddef.h>
#include "bng_fwd.h"
#include "bng_dtypes.h"

#define U32 (1.0 / 16777216.0)     /* float32's unit roundoff */

/* One forward call's arrays, each between guards, and its block. */
typedef struct {
    const bng_dtype *t;
    size_t batch, channel;
    bng_buffer x, y, mean, invar, scale, bias, moving_mean, moving_var;
    bng_buffer bits;        /* the ReLU's keep bits (slot 11), written only with RELU_BITS */
    long long params[BNG_FWD_PARAMS_LEN];
    size_t merges;          /* the synchronized forward's: merges beyond one call's chain */
    double chain;           /* K of the bound where not NHWC's from batch (NCHW's); 0: NHWC */
} fwd_case;

enum { DATA_RANDOM, DATA_LARGE_MEAN };
#define FWD_BUFFERS 9
#define FWD_FLAG_SETS 8

/* The flag sets the suites run each case with. */
extern const long long fwd_flag_sets[FWD_FLAG_SETS];

/* x per channel around its own mean (DATA_LARGE_MEAN: 10^4 times its spread for float,
 * 10^2 for half), scale, bias, moving statistics; the outputs marked, the reserved
 * slots sentinels (0x5EED0000 + slot). */
void fwd_init(fwd_case *k, const bng_dtype *t, size_t batch, size_t channel, int data,
              long long flags, unsigned seed);
void fwd_buffers(fwd_case *k, bng_buffer **out);
void fwd_free(fwd_case *k);
/* A copy of k's arrays as they are now, its block pointing at them. */
void fwd_copy(fwd_case *to, fwd_case *from);
/* The forward with the generic kernel whatever the count (NHWC). */
void fwd_run_generic(const bng_fwd_config *config, void *x, void *y, long long *params);
double slot_float(long long slot);
/* Whether y's element i, as stored, lets dy through in the backward's ReLU. */
int fwd_keeps(const bng_dtype *t, const void *y, size_t i);
/* k's outputs (NHWC rows) against float64 on x_before and the moving statistics before,
 * under the contract's bound; the guards, the bits (NHWC's layout), the slots. */
void fwd_check(const fwd_case *k, const double *x_before, const double *mm_before,
               const double *mv_before, const char *what);
/* _s on the cores of core_mask, k's block through BNG_SHARED_PARAMS. */
void fwd_run_shared_on(fwd_case *k, void *x, void *y, int core_mask);
/* A refused call (_p, or _s on core_mask with `shared`) writes its status alone. */
void fwd_expect_refused_by(fwd_case *k, void *x, void *y, int shared, int core_mask,
                           long long expected, const char *what);
/* Every output of b (y at b_y) has the bits of a's (y at a_y). */
void fwd_expect_same_outputs(const fwd_case *a, const void *a_y, const fwd_case *b,
                             const void *b_y, const char *what);
/* The arrays k's flags leave unread, NULL in its block. */
void fwd_null_unread(fwd_case *k);

#endif /* BNG_FORWARD_CASE_H */
