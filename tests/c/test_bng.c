/* Check suite for one target's library: both entry point families (_p and _s), every
 * storage type the target has, and the ukernels on their own. Built once per target
 * and build flavour; the kernel list comes from the plan via bng_kernels.h, never from
 * a copy kept here. The suites are a file each (bng_suites.h); make runs a flavour's
 * cases by tag.
 */
#include <check.h>

#include "bng_suites.h"

int main(void)
{
    Suite *s = suite_create("batchnormgrad " BNG_TARGET_NAME);

    bng_private_add_tests(s);
    bng_shared_add_tests(s);
    bng_aliasing_add_tests(s);
    bng_ext_add_tests(s);
    bng_accumulate_dx_add_tests(s);
    bng_explicit_add_tests(s);
    bng_status_order_add_tests(s);
    bng_relu_add_tests(s);
    bng_nchw_add_tests(s);
    bng_ukernel_add_tests(s);
    bng_forward_add_tests(s);
    bng_forward_nchw_add_tests(s);
    return bng_run_suite(s);
}
