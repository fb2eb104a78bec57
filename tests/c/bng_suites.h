/* The suites of test_bng, a file each, and what their cases share beside the support
 * library (bng_test_support.h): the storage type a looped case runs on, the sizes of
 * the largest sweeps. Each suite adds its cases with
 * bng_add_cases; test_bng.c's main runs them all, and make chooses by tag.
 */
#ifndef BNG_SUITES_H
#define BNG_SUITES_H

#include <check.h>
#include <stdint.h>
#include "bng_dtypes.h"

/* The storage type of a case looped over bng_dtypes (bng_add_cases). */
#define T (bng_dtypes[_i])
/* The largest byte address of the target's data on this host (bng_params.c's limit). */
#define ADDRESS_MAX (BNG_ADDRESS_MAX < SIZE_MAX ? (size_t)BNG_ADDRESS_MAX : SIZE_MAX)
/* At the quick size (bng_test_quick) the largest sweeps shrink; every path they cover
 * still runs (several row groups, streaming tiles, half-range sums). */
#define LARGE_BATCH ((size_t)(bng_test_quick() ? 2600 : 20000))
#define SHARED_MAX_ELEMENTS ((size_t)(bng_test_quick() ? 200000 : 2000000))
/* The target has batch_norm_grad_ext.h's calls. */
#define EXT_OPS_PRESENT(t) (bng_dtype_has(t, BNG_OP_REDUCE))

/* NCHW's extents a case walks (suite_nchw.c, with nchw): each specialized one, and off
 * the plan 1, below, at and above a vector, two blocks and a tail; out holds
 * NCHW_MAX_EXTENTS. */
#if BNG_HAS_NCHW
#define NCHW_IGNORE_EXTENT(s) + 1
#define NCHW_MAX_EXTENTS (5 + 0 BNG_NCHW_SPATIAL(NCHW_IGNORE_EXTENT))
size_t bng_nchw_extents(const bng_dtype *t, size_t *out);
#endif

void bng_private_add_tests(Suite *s);       /* suite_private.c */
void bng_shared_add_tests(Suite *s);        /* suite_shared.c */
void bng_aliasing_add_tests(Suite *s);      /* suite_aliasing.c */
void bng_ext_add_tests(Suite *s);           /* suite_ext.c */
void bng_accumulate_dx_add_tests(Suite *s); /* suite_accumulate_dx.c */
void bng_explicit_add_tests(Suite *s);      /* suite_explicit.c */
void bng_status_order_add_tests(Suite *s);  /* suite_status_order.c */
void bng_relu_add_tests(Suite *s);          /* suite_relu.c */
void bng_nchw_add_tests(Suite *s);          /* suite_nchw.c: none without nchw */
void bng_ukernel_add_tests(Suite *s);       /* suite_ukernels.c */
void bng_forward_add_tests(Suite *s);       /* suite_forward.c: none without forward */
void bng_forward_nchw_add_tests(Suite *s);  /* suite_forward_nchw.c: none without forward
                                               and nchw */

#endif
