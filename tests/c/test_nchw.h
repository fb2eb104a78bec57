/* The NCHW (channel axis 1, BNG_FLAG_NCHW) cases of the Check suite (test_nchw.c):
 * added to a suite where the target has the nchw extension, none elsewhere. */
#ifndef TEST_NCHW_H
#define TEST_NCHW_H

#include <check.h>

void bng_nchw_add_tests(Suite *s);

#endif
