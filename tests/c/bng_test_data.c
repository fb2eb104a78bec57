/* The harness's data and checks: a case's inputs drawn from its seed, and its outputs
 * checked against the float64 reference within the contract's bound (bng_test_support.h
 * declares them). Apart from bng_test_support.c because under ThreadSanitizer this file
 * is compiled without it (mk/test.mk: the uninstrumented build's object): its loops
 * over every element, on the caller's thread before a call and after its return, were
 * half a suite's time there. What they do to the library's buffers is told to the
 * runtime as whole ranges at the points they do it (bng_test_seen_write, _read): a
 * core's access to them that the call's start and return do not order is reported as
 * before. */
#include "bng_test_support.h"

#include <check.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- the cases' data ---- */

/* xorshift32: deterministic data from a seed. */
static unsigned xorshift32(unsigned s)
{
    s ^= s << 13;
    s ^= s >> 17;
    s ^= s << 5;
    return s;
}

double bng_uniform(unsigned *state, double lo, double hi)
{
    *state = xorshift32(*state);
    return lo + (hi - lo) * ((*state >> 8) / 16777216.0);
}

/* xorshift32 is linear over GF(2): n steps are a 32x32 bit matrix, held as the
 * images of the 32 unit states, and jumping ahead is applying it. */
typedef struct {
    unsigned column[32];
} xorshift_jump;

static unsigned jump_apply(const xorshift_jump *j, unsigned s)
{
    unsigned out = 0;
    int bit;
    for (bit = 0; bit < 32; bit++)
        if (s >> bit & 1u)
            out ^= j->column[bit];
    return out;
}

/* The jump of `steps` steps, by squaring. */
static xorshift_jump jump_of(size_t steps)
{
    xorshift_jump result, power, next;
    int bit;

    for (bit = 0; bit < 32; bit++) {
        result.column[bit] = 1u << bit;
        power.column[bit] = xorshift32(1u << bit);
    }
    for (; steps; steps >>= 1) {
        if (steps & 1) {
            for (bit = 0; bit < 32; bit++)
                next.column[bit] = jump_apply(&power, result.column[bit]);
            result = next;
        }
        for (bit = 0; bit < 32; bit++)
            next.column[bit] = jump_apply(&power, power.column[bit]);
        power = next;
    }
    return result;
}

/* n doubles (a case may have no channels). */
static double *doubles(size_t n)
{
    return bng_test_alloc(n * sizeof(double));
}

/* A channel's data: the seed's one stream gives each channel in turn its center and
 * spread, then its x and dy row by row, then its scale. */
typedef struct {
    double center, spread, dy_scale;
    unsigned rows_state;        /* the stream where the channel's rows begin */
} channel_draws;

/* Each channel's draws but its rows, and where in the stream its rows begin (the
 * generator jumped past them), so that the rows can be drawn row by row: channel by
 * channel, each element would be a stride of `channel` from the last, a cache miss. */
static channel_draws *draw_channels(const bng_dtype *t, size_t batch, size_t channel,
                                    enum bng_data data, unsigned seed, double *scale)
{
    channel_draws *d = bng_test_alloc(channel * sizeof *d);
    const xorshift_jump past_rows = jump_of(2 * batch);
    unsigned state = seed * 2654435761u + 12345u;
    size_t c;

    for (c = 0; c < channel; c++) {
        /* A large mean against a small spread (16 ulps of the mean) is what exposes
         * sum(dy*x) - mean*sum(dy) and dx = A*dy + B*x + D: both cancel there. */
        d[c].center = data == BNG_DATA_LARGE_MEAN
            ? (t->precision < 1e-5 ? 1000.0 : 100.0) * (1 + c % 7)
            : bng_uniform(&state, -2.0, 2.0);
        d[c].spread = data == BNG_DATA_LARGE_MEAN
            ? 16.0 * d[c].center * t->precision : bng_uniform(&state, 0.25, 3.0);
        d[c].dy_scale = 0.5 + (double)(c % 4);
        d[c].rows_state = state;
        state = jump_apply(&past_rows, state);
        scale[c] = bng_uniform(&state, 0.5, 2.0) * (c % 3 == 1 ? -1.0 : 1.0);
    }
    return d;
}

void bng_case_draw(bng_case *k, enum bng_data data, unsigned seed)
{
    const bng_dtype *t = k->t;
    const size_t batch = k->batch, channel = k->channel;
    double *const scale = doubles(channel), *const sum = doubles(channel), *const sq = doubles(channel);
    channel_draws *const d = draw_channels(t, batch, channel, data, seed, scale);
    size_t b, c;

    for (c = 0; c < channel; c++)
        sum[c] = sq[c] = 0.0;
    for (b = 0; b < batch; b++)
        for (c = 0; c < channel; c++) {
            const size_t i = b * channel + c;
            bng_set(t, k->x.p, i, d[c].center + d[c].spread * bng_uniform(&d[c].rows_state, -1.7, 1.7));
            bng_set(t, k->dy.p, i, d[c].dy_scale * bng_uniform(&d[c].rows_state, -1.0, 1.0));
            sum[c] += bng_get(t, k->x.p, i);
        }
    for (b = 0; b < batch; b++)
        for (c = 0; c < channel; c++) {
            const double dev = bng_get(t, k->x.p, b * channel + c) - sum[c] / (double)batch;
            sq[c] += dev * dev;
        }
    for (c = 0; c < channel; c++) {
        const double mean = sum[c] / (double)batch, var = sq[c] / (double)batch;
        bng_stats_set(t, k->mean.p, c, mean);
        bng_stats_set(t, k->invar.p, c, 1.0 / sqrt(var + 1e-5));
        bng_stats_set(t, k->scale.p, c, scale[c]);
    }
    bng_test_seen_write(k->x.p, k->x.bytes);
    bng_test_seen_write(k->dy.p, k->dy.bytes);
    bng_test_seen_write(k->mean.p, k->mean.bytes);
    bng_test_seen_write(k->invar.p, k->invar.bytes);
    bng_test_seen_write(k->scale.p, k->scale.bytes);
    bng_test_free(d);
    bng_test_free(scale);
    bng_test_free(sum);
    bng_test_free(sq);
}

/* ---- error ratios, for the closing summary ---- */

#define MAX_TYPES 8
static struct {
    const char *name;
    double dx, dbias, dscale;
} ratios[MAX_TYPES];

static double *ratio_slot(const char *type, const char *what)
{
    int i;
    for (i = 0; i < MAX_TYPES && ratios[i].name; i++)
        if (strcmp(ratios[i].name, type) == 0)
            break;
    if (i == MAX_TYPES)     /* not ck_assert: that costs a system call per element */
        ck_abort_msg("more than %d storage types", MAX_TYPES);
    ratios[i].name = type;
    return what[1] == 'x' ? &ratios[i].dx : what[1] == 'b' ? &ratios[i].dbias : &ratios[i].dscale;
}

void bng_report_error_ratios(void)
{
    int i;
    for (i = 0; i < MAX_TYPES && ratios[i].name; i++)
        printf("max |error| / bound, %s: dx %.4f, dbias %.4f, dscale %.4f\n",
               ratios[i].name, ratios[i].dx, ratios[i].dbias, ratios[i].dscale);
}

/* One output element against its reference; `worst` is the output's slot of ratios
 * (looked up once per output: a lookup per element was a tenth of a suite's time). */
static void expect_close(const bng_case *k, const char *what, double *worst, size_t i,
                         double got, double ref, double bound, double overflow_at, int ftz)
{
    if (isnan(ref)) {
        if (!isnan(got))
            ck_abort_msg("%s %zux%zu %s[%zu]: got %.9g, reference is NaN", k->t->name,
                         k->batch, k->channel, what, i, got);
    } else if (fabs(ref) >= overflow_at) {
        if (!isinf(got) || signbit(got) != signbit(ref))
            ck_abort_msg("%s %zux%zu %s[%zu]: got %.9g, reference %.9g overflows the type",
                         k->t->name, k->batch, k->channel, what, i, got, ref);
    } else {
        const double err = fabs(got - ref);
        /* A result the FPU flushes to zero is off by less than the smallest normal. */
        bound += ftz ? FLT_MIN : 0.0;
        if (!(err <= bound))
            ck_abort_msg("%s %zux%zu train=%d %s[%zu]: got %.9g, reference %.9g, "
                         "|error| %.3g > bound %.3g", k->t->name, k->batch, k->channel,
                         k->is_train, what, i, got, ref, err, bound);
        if (bound > 0 && err / bound > *worst)
            *worst = err / bound;
    }
}

/* An input as the kernels' float32 arithmetic reads it: in flush-to-zero mode a
 * float32 subnormal is zero (every half, subnormal or not, is a normal float). */
static double as_read(double v, int ftz)
{
    return ftz && fabs(v) < FLT_MIN ? 0.0 * v : v;
}

void bng_case_check(const bng_case *k)
{
    const bng_dtype *t = k->t;
    const size_t n = k->batch * k->channel;
    double *x = doubles(n), *dy = doubles(n);
    double *mean = doubles(k->channel), *invar = doubles(k->channel), *scale = doubles(k->channel);
    double *reference_block = doubles(bng_reference_doubles(k->batch, k->channel));
    bng_reference r = bng_reference_in(reference_block, k->batch, k->channel);
    double *const worst_dx = ratio_slot(t->name, "dx");
    double *const worst_dbias = ratio_slot(t->name, "dbias");
    double *const worst_dscale = ratio_slot(t->name, "dscale");
    const int ftz = bng_test_ftz();
    size_t i;

    bng_test_seen_read(&k->params[BNG_PARAM_STATUS], sizeof k->params[0]);
    ck_assert_int_eq(k->params[BNG_PARAM_STATUS], BNG_OK);
    bng_test_seen_read(k->x.p, k->x.bytes);
    bng_test_seen_read(k->dy.p, k->dy.bytes);
    bng_test_seen_read(k->mean.p, k->mean.bytes);
    bng_test_seen_read(k->invar.p, k->invar.bytes);
    bng_test_seen_read(k->scale.p, k->scale.bytes);
    bng_test_seen_read(k->dx.p, k->dx.bytes);
    bng_test_seen_read(k->dbias.p, k->dbias.bytes);
    bng_test_seen_read(k->dscale.p, k->dscale.bytes);
    for (i = 0; i < n; i++) {
        x[i] = as_read(bng_get(t, k->x.p, i), ftz);
        dy[i] = as_read(bng_get(t, k->dy.p, i), ftz);
    }
    for (i = 0; i < k->channel; i++) {
        mean[i] = as_read(bng_stats_get(t, k->mean.p, i), ftz);
        invar[i] = as_read(bng_stats_get(t, k->invar.p, i), ftz);
        scale[i] = as_read(bng_stats_get(t, k->scale.p, i), ftz);
    }
    bng_reference_eval(k->batch, k->channel, k->is_train, x, dy, mean, invar, scale,
                       t->half_output, &r);
    for (i = 0; i < k->channel; i++) {
        expect_close(k, "dbias", worst_dbias, i, bng_stats_get(t, k->dbias.p, i), r.dbias[i],
                     r.dbias_bound[i], t->overflow_stats, ftz);
        expect_close(k, "dscale", worst_dscale, i, bng_stats_get(t, k->dscale.p, i), r.dscale[i],
                     r.dscale_bound[i], t->overflow_stats, ftz);
    }
    for (i = 0; i < n; i++)
        expect_close(k, "dx", worst_dx, i, bng_get(t, k->dx.p, i), r.dx[i], r.dx_bound[i],
                     t->overflow_dx, ftz);
    bng_case_check_guards(k);
    bng_test_free(reference_block);
    bng_test_free(x);
    bng_test_free(dy);
    bng_test_free(mean);
    bng_test_free(invar);
    bng_test_free(scale);
}
