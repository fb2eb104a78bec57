/* The order of the checks, as batch_norm_grad.h states it
 * (BNG_STATUS_CHECK_ORDER): every pair of checks broken at once reports the first.
 */
#include <check.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bng_dtypes.h"
#include "bng_suites.h"

/* The arguments of one explicit call, and whether the HAL refuses its memory. */
typedef struct {
    char *x, *dy, *dx;
    int mask, refuse;
} explicit_call;

/* Make the call fail check `status` (and k's parameters with it). */
static void break_check(bng_case *k, explicit_call *call, int status)
{
    switch (status) {
    case BNG_ENULL: call->x = NULL; break;
    case BNG_EALIGN: call->dy += 1; break;
    case BNG_EBATCH: k->params[BNG_PARAM_BATCH] = 0; break;
    case BNG_ECHANNEL: k->params[BNG_PARAM_CHANNEL] = 0; break;
    case BNG_ERANGE:
        k->params[BNG_PARAM_BATCH] = INT_MAX;
        k->params[BNG_PARAM_CHANNEL] = INT_MAX;
        break;
    case BNG_EOVERLAP: k->params[BNG_PARAM_DBIAS] = k->params[BNG_PARAM_DSCALE]; break;
    case BNG_ECOREMASK: call->mask = 0; break;
    case BNG_ENOMEM: call->refuse = 1; break;
    default: ck_abort_msg("status %d: the suite has no way to cause it", status);
    }
}

/* What break_check changes for `status`, a bit each: x, dy, batch, channel, dbias,
 * mask, the HAL. Two checks whose breaks share one cannot both fail in one call. */
static unsigned check_inputs(int status)
{
    switch (status) {
    case BNG_ENULL: return 1u;
    case BNG_EALIGN: return 2u;
    case BNG_EBATCH: return 4u;
    case BNG_ECHANNEL: return 8u;
    case BNG_ERANGE: return 4u | 8u;
    case BNG_EOVERLAP: return 16u;
    case BNG_ECOREMASK: return 32u;
    default: return 64u;    /* BNG_ENOMEM */
    }
}

/* Whether a call of this kind can fail check `status` here. */
static int check_reachable(const bng_dtype *t, int shared, int status)
{
    switch (status) {
    case BNG_ERANGE:        /* INT_MAX rows of INT_MAX channels beyond the address space */
        return ldexp((double)INT_MAX * (double)INT_MAX * (double)t->size, -BNG_ADDRESS_BITS) >= 1.0;
    case BNG_ECOREMASK: return shared;
    case BNG_ENOMEM: return shared && bng_test_hal_refuse(0, 0);
    default: return 1;
    }
}

/* BNG_STATUS_CHECK_ORDER, the header's list, against the code: for every pair of the
 * statuses this kind of call can give whose breaks touch different inputs, a call that
 * fails both checks gets the one listed first, with nothing written. (ERANGE needs a
 * batch and a channel of at least 1: its place beside EBATCH and ECHANNEL is not one a
 * call can see.) */
static void status_order(const bng_dtype *t, int shared)
{
    const int stated[] = {BNG_STATUS_CHECK_ORDER};
    const size_t count = sizeof stated / sizeof stated[0];
    int order[sizeof stated / sizeof stated[0]];
    long long params[BNG_CASE_PARAMS];
    size_t n = 0, i, j;
    bng_case k;

    for (i = 0; i < count; i++)
        if (check_reachable(t, shared, stated[i]))
            order[n++] = stated[i];
    bng_case_init(&k, t, 4, t->specialized[0], 1, BNG_DATA_RANDOM, 1);
    memcpy(params, k.params, sizeof params);
    for (i = 0; i < n; i++)
        for (j = i + 1; j < n; j++) {
            explicit_call call = {k.x.p, k.dy.p, k.dx.p, FULL_MASK, 0};
            char what[64];

            if (check_inputs(order[i]) & check_inputs(order[j]))
                continue;
            break_check(&k, &call, order[i]);
            break_check(&k, &call, order[j]);
            bng_test_hal_refuse(call.refuse, 0);
            snprintf(what, sizeof what, "status %d and %d", order[i], order[j]);
            bng_expect_refused(&k, BNG_CASE_EXPLICIT, shared, call.x, call.dy, call.dx, call.mask, order[i], what);
            bng_test_hal_refuse(0, 0);
            memcpy(k.params, params, sizeof params);
        }
    bng_case_free(&k);
}

START_TEST(test_status_order_is_the_headers)
{
    status_order(T, 0);
}
END_TEST

START_TEST(test_shared_status_order_is_the_headers)
{
    status_order(T, 1);
}
END_TEST

void bng_status_order_add_tests(Suite *s)
{
    const bng_test_case cases[] = {
        {"status_order", test_status_order_is_the_headers, "private"},
        {"shared_status_order", test_shared_status_order_is_the_headers, "shared"},
    };
    bng_add_cases(s, cases, sizeof cases / sizeof cases[0]);
}
