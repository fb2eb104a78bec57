/* The training forward (batch_norm_fwd.h, docs/contract.md section 15): y, the saved
 * and the moving statistics against a float64 reference under the contract's bound, on
 * every specialized count and off the plan, on data whose mean is 10^4 times its
 * spread; the generic kernel's bits and in place; each flag; every refusal writes the
 * status alone. No cases on a target without the forward.
 */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bng_dtypes.h"
#include "bng_suites.h"

#if BNG_HAS_FORWARD
#include "batch_norm_fwd.h"
#include "batchnormgrad.h"     /* bng_last_status */
#include "bng_fwd.h"

#include "bng_forward_case.h"

/* k's block points at k's per-channel arrays. */
static void fwd_point_block(fwd_case *k)
{
    k->params[BNG_PARAM_MEAN] = (long long)(intptr_t)k->mean.p;
    k->params[BNG_PARAM_INVAR] = (long long)(intptr_t)k->invar.p;
    k->params[BNG_PARAM_SCALE] = (long long)(intptr_t)k->scale.p;
    k->params[BNG_FWD_PARAM_BIAS] = (long long)(intptr_t)k->bias.p;
    k->params[BNG_FWD_PARAM_MOVING_MEAN] = (long long)(intptr_t)k->moving_mean.p;
    k->params[BNG_FWD_PARAM_MOVING_VAR] = (long long)(intptr_t)k->moving_var.p;
    k->params[BNG_FWD_PARAM_RELU_BITS] = (long long)(intptr_t)k->bits.p;
}

/* x per channel around its own mean (DATA_LARGE_MEAN: 10^4 times its spread for float,
 * 10^2 for half, whose 11 bits hold no more), scale, bias, moving statistics. */
void fwd_init(fwd_case *k, const bng_dtype *t, size_t batch, size_t channel, int data,
                     long long flags, unsigned seed)
{
    const size_t n = batch * channel;
    const double ratio = t->size == sizeof(float) ? 1e4 : 1e2;
    unsigned state = seed * 2654435761u + 1u;
    size_t r, c;
    int i;

    k->t = t;
    k->batch = batch;
    k->channel = channel;
    k->merges = 0;
    k->chain = 0;
    k->x = bng_buffer_new(n * t->size);
    k->y = bng_buffer_new(n * t->size);
    k->mean = bng_buffer_new(channel * t->stats_size);
    k->invar = bng_buffer_new(channel * t->stats_size);
    k->scale = bng_buffer_new(channel * t->stats_size);
    k->bias = bng_buffer_new(channel * t->stats_size);
    k->moving_mean = bng_buffer_new(channel * t->stats_size);
    k->moving_var = bng_buffer_new(channel * t->stats_size);
    k->bits = bng_buffer_new(BNG_FWD_RELU_BITS_ELEMENTS(batch, channel, t->size) * t->size);
    for (c = 0; c < channel; c++) {
        const double spread = bng_uniform(&state, 0.5, 2.0);
        const double center = data == DATA_LARGE_MEAN ? ratio * spread * (c % 2 ? -1 : 1)
                                                     : bng_uniform(&state, -2.0, 2.0);
        for (r = 0; r < batch; r++)
            bng_set(t, k->x.p, r * channel + c, center + spread * bng_uniform(&state, -1.7, 1.7));
        bng_stats_set(t, k->scale.p, c, bng_uniform(&state, -1.5, 1.5));
        bng_stats_set(t, k->bias.p, c, bng_uniform(&state, -1.0, 1.0));
        bng_stats_set(t, k->moving_mean.p, c, bng_uniform(&state, -1.0, 1.0));
        bng_stats_set(t, k->moving_var.p, c, bng_uniform(&state, 0.5, 2.0));
    }
    memset(k->y.p, BNG_OUTPUT_MARK, k->y.bytes);
    memset(k->mean.p, BNG_OUTPUT_MARK, k->mean.bytes);
    memset(k->invar.p, BNG_OUTPUT_MARK, k->invar.bytes);
    memset(k->bits.p, BNG_OUTPUT_MARK, k->bits.bytes);
    for (i = 0; i < BNG_FWD_PARAMS_LEN; i++)
        k->params[i] = 0x5EED0000 + i;      /* reserved slots: sentinels, never written */
    fwd_point_block(k);
    k->params[BNG_PARAM_BATCH] = (long long)batch;
    k->params[BNG_PARAM_CHANNEL] = (long long)channel;
    k->params[BNG_PARAM_STATUS] = 12345;
    k->params[BNG_FWD_PARAM_EPS] = bng_fwd_float(1e-3f);
    k->params[BNG_FWD_PARAM_MOMENTUM] = bng_fwd_float(0.9f);
    k->params[BNG_PARAM_FLAGS] = flags;
}

/* k's buffers, in the struct's order. */
void fwd_buffers(fwd_case *k, bng_buffer **out)
{
    out[0] = &k->x;
    out[1] = &k->y;
    out[2] = &k->mean;
    out[3] = &k->invar;
    out[4] = &k->scale;
    out[5] = &k->bias;
    out[6] = &k->moving_mean;
    out[7] = &k->moving_var;
    out[8] = &k->bits;
}

void fwd_free(fwd_case *k)
{
    bng_buffer *b[FWD_BUFFERS];
    size_t i;

    fwd_buffers(k, b);
    for (i = 0; i < FWD_BUFFERS; i++)
        bng_buffer_free(b[i]);
}

/* A copy of k's inputs and outputs as they are now, in buffers of its own, its block
 * pointing at them. */
void fwd_copy(fwd_case *to, fwd_case *from)
{
    bng_buffer *src[FWD_BUFFERS], *dst[FWD_BUFFERS];
    size_t i;

    *to = *from;
    fwd_buffers(from, src);
    fwd_buffers(to, dst);
    for (i = 0; i < FWD_BUFFERS; i++) {
        *dst[i] = bng_buffer_new(src[i]->bytes);
        memcpy(dst[i]->p, src[i]->p, src[i]->bytes);
    }
    fwd_point_block(to);
}

/* The library's row groups (bng_steps.h), which the bound counts. */
size_t bng_group_rows(size_t batch);

/* The forward with t's generic kernel whatever the count (the driver's entry point on
 * a config whose table has only that kernel). */
static const bng_fwd_kernel *fwd_generic_kernel;
static const bng_fwd_kernel *fwd_generic_for(size_t channel)
{
    (void)channel;
    return fwd_generic_kernel;
}

void fwd_run_generic(const bng_fwd_config *config, void *x, void *y, long long *params)
{
    bng_fwd_config generic = *config;

    fwd_generic_kernel = config->kernel_for_channels(0);     /* no count 0: the generic one */
    generic.kernel_for_channels = fwd_generic_for;
    bng_fwd_entry_private(&generic, x, y, params);
}

static void fwd_run(fwd_case *k, void *y)
{
    k->t->forward_p(k->x.p, y, k->params);
}

/* The float a slot holds (the inverse of bng_fwd_float). */
double slot_float(long long slot)
{
    const uint32_t bits = (uint32_t)slot;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

/* A channel with a NaN or an infinity among its x (fwd_sums found one): its mean,
 * invar and every y are not finite (the contract's special values). */
static void fwd_check_special(const fwd_case *k, size_t c, const char *what)
{
    const bng_dtype *t = k->t;
    size_t r;

    if (isfinite(bng_stats_get(t, k->mean.p, c)) && isfinite(bng_stats_get(t, k->invar.p, c)))
        ck_abort_msg("%s %s: channel %zu has a non-finite x but finite statistics", t->name, what, c);
    for (r = 0; r < k->batch; r++)
        if (isfinite(bng_get(t, k->y.p, r * k->channel + c)))
            ck_abort_msg("%s %s: channel %zu has a non-finite x but a finite y[%zu]", t->name, what, c, r);
}

/* Whether y's element i, as stored, lets dy through in the backward's ReLU (y above 0
 * or NaN): spelled here on the element's bits apart from the library's macro. */
int fwd_keeps(const bng_dtype *t, const void *y, size_t i)
{
    const unsigned char *at = (const unsigned char *)y + i * t->size;

    if (t->size == sizeof(uint32_t)) {
        uint32_t u;
        memcpy(&u, at, sizeof u);
        return (u >> 31) == 0 ? u != 0 : (u & 0x7fffffffu) > 0x7f800000u;
    } else {
        uint16_t h;
        memcpy(&h, at, sizeof h);
        return (h >> 15) == 0 ? h != 0 : (h & 0x7fffu) > 0x7c00u;
    }
}

/* Bit r % rows_per_word of the bits array's word (r / rows_per_word, c), rows_per_word
 * 8 bits to an element of x's size (the contract's layout, spelled here). */
static int fwd_bit(const fwd_case *k, size_t r, size_t c)
{
    const size_t rows_per_word = 8 * k->t->size;
    const unsigned char *at = (const unsigned char *)k->bits.p + ((r / rows_per_word) * k->channel + c) * k->t->size;
    uint32_t word = 0;
    uint16_t half;

    if (k->t->size == sizeof word) {
        memcpy(&word, at, sizeof word);
    } else {
        memcpy(&half, at, sizeof half);
        word = half;
    }
    return (int)((word >> (r % rows_per_word)) & 1u);
}

/* With RELU_BITS every row's bit is its y's keep and a last word's missing rows' bits
 * are 0; without it the bits array is as it was (never written). */
static void fwd_check_bits(const fwd_case *k, const void *y, const char *what)
{
    const size_t rows_per_word = 8 * k->t->size;
    const size_t rows = (k->batch + rows_per_word - 1) / rows_per_word * rows_per_word;
    size_t r, c, i;

    if (!(k->params[BNG_PARAM_FLAGS] & BNG_FWD_RELU_BITS)) {
        for (i = 0; i < k->bits.bytes; i++)
            if (((const unsigned char *)k->bits.p)[i] != BNG_OUTPUT_MARK)
                ck_abort_msg("%s %s: the ReLU's bits written without RELU_BITS", k->t->name, what);
        return;
    }
    for (r = 0; r < rows; r++)
        for (c = 0; c < k->channel; c++)
            if (fwd_bit(k, r, c) != (r < k->batch && fwd_keeps(k->t, y, r * k->channel + c)))
                ck_abort_msg("%s %zux%zu %s: ReLU bit of y[%zu][%zu] is %d", k->t->name, k->batch,
                             k->channel, what, r, c, fwd_bit(k, r, c));
}

/* A channel's float64 reference: its batch mean and variance, the largest deviation
 * from the shift (the channel's first value), whether an x is not finite; then what y's
 * reference and bound take (fwd_check_channel). */
typedef struct {
    double mu, v, range, invstd, gamma, beta, b_dev, b_inv;
    int special;
} fwd_channel_ref;

/* Every channel's sums, a row at a time (the rows are contiguous: a column-strided loop
 * is most of a suite's time at the wide shapes), each channel's terms in row order. */
static void fwd_sums(const fwd_case *k, const double *x_before, fwd_channel_ref *ref)
{
    const size_t batch = k->batch, channel = k->channel;
    size_t r, c;

    for (r = 0; r < batch; r++)
        for (c = 0; c < channel; c++) {
            const double x = x_before[r * channel + c];
            ref[c].special |= !isfinite(x);
            ref[c].mu += x;
        }
    for (c = 0; c < channel; c++)
        ref[c].mu /= (double)batch;
    for (r = 0; r < batch; r++)
        for (c = 0; c < channel; c++) {
            const double x = x_before[r * channel + c];
            const double d = x - ref[c].mu, e = fabs(x - x_before[c]);
            ref[c].v += d * d;
            ref[c].range = e > ref[c].range ? e : ref[c].range;
        }
    for (c = 0; c < channel; c++)
        ref[c].v /= (double)batch;
}

/* The bound (docs/contract.md section 15) takes K float32 roundings on the longest
 * chain, R the range and sigma^2 the variance. */
static double fwd_chain(const fwd_case *k)
{
    const size_t batch = k->batch, group = bng_group_rows(batch);
    return k->chain != 0 ? k->chain
           : 2.0 * (32 + (group + 31) / 32 + (batch + group - 1) / group + k->merges) + 16;
}

/* Channel c's mean, invar and moving statistics against the reference; fills in what
 * its y's check takes. */
static void fwd_check_channel(const fwd_case *k, fwd_channel_ref *ref, size_t c, double mm,
                              double mv, const char *what)
{
    const bng_dtype *t = k->t;
    const long long flags = k->params[BNG_PARAM_FLAGS];
    const int fix_gamma = (flags & BNG_FWD_FIX_GAMMA) != 0, global = (flags & BNG_FWD_GLOBAL_STATS) != 0;
    const int torch = (flags & BNG_FWD_TORCH) != 0, keep = (flags & BNG_FWD_KEEP_MOVING) != 0;
    const double eps = slot_float(k->params[BNG_FWD_PARAM_EPS]);
    const double mo = slot_float(k->params[BNG_FWD_PARAM_MOMENTUM]);
    const size_t batch = k->batch, channel = k->channel;
    const double K = fwd_chain(k), stat_u = t->stats_size == sizeof(float) ? U32 : 1.0 / 2048;
    const double mu = global ? mm : ref->mu, v = global ? mv : ref->v;
    const double b_dev = global ? 0 : K * U32 * ref->range;
    const double b_mean = global ? 0 : U32 * fabs(mu) + b_dev;
    const double b_var = global ? 0 : K * U32 * v + b_dev * b_dev + U32 * v;
    const double invstd = 1.0 / sqrt(v + eps), b_inv = invstd * (b_var / (v + eps) / 2 + 4 * U32);
    const double mean = bng_stats_get(t, k->mean.p, c), inv = bng_stats_get(t, k->invar.p, c);
    const int update = !global && !keep;
    const double take = torch ? mo : 1 - mo, kept = torch ? 1 - mo : mo;
    const double bv = torch ? ref->v * (double)batch / (double)(batch - 1) : ref->v;
    const double ref_mm = update ? mm * kept + ref->mu * take : mm;
    const double ref_mv = update ? mv * kept + bv * take : mv;
    const double got_mm = bng_stats_get(t, k->moving_mean.p, c);
    const double got_mv = bng_stats_get(t, k->moving_var.p, c);
    const double bound_mm = update ? take * b_mean + 4 * U32 * (fabs(mm) + fabs(ref->mu)) + stat_u * fabs(ref_mm) : 0;
    const double unbias = torch ? (double)batch / (double)(batch - 1) : 1;
    const double bound_mv = update ? take * b_var * unbias + 4 * U32 * (mv + bv) + stat_u * ref_mv : 0;

    if (!(fabs(mean - mu) <= b_mean + stat_u * fabs(mu) + 1e-300))
        ck_abort_msg("%s %zux%zu %s: channel %zu mean %.9g, reference %.9g", t->name, batch,
                     channel, what, c, mean, mu);
    if (!(fabs(inv - invstd) <= b_inv + stat_u * invstd))
        ck_abort_msg("%s %zux%zu %s: channel %zu invar %.9g, reference %.9g", t->name, batch,
                     channel, what, c, inv, invstd);
    if (!(fabs(got_mm - ref_mm) <= bound_mm) || !(fabs(got_mv - ref_mv) <= bound_mv))
        ck_abort_msg("%s %zux%zu %s: channel %zu moving mean %.9g (reference %.9g), var %.9g "
                     "(reference %.9g)", t->name, batch, channel, what, c, got_mm, ref_mm,
                     got_mv, ref_mv);
    ref->mu = mu;
    ref->invstd = invstd;
    ref->gamma = fix_gamma ? 1.0 : bng_stats_get(t, k->scale.p, c);
    ref->beta = bng_stats_get(t, k->bias.p, c);
    ref->b_dev = b_dev;
    ref->b_inv = b_inv;
}

/* Every y against its channel's reference, a row at a time. With RELU: +0 where the
 * reference is within the bound of 0 or below; else above 0 and the reference's. */
static void fwd_check_y(const fwd_case *k, const double *x_before, const fwd_channel_ref *ref,
                        int skip_special, const char *what)
{
    const bng_dtype *t = k->t;
    const int relu = (k->params[BNG_PARAM_FLAGS] & BNG_FWD_RELU) != 0;
    const size_t batch = k->batch, channel = k->channel;
    const double out_u = t->precision / 2;
    size_t r, c;

    for (r = 0; r < batch; r++)
        for (c = 0; c < channel; c++) {
            const fwd_channel_ref *f = &ref[c];
            const size_t i = r * channel + c;
            double dev, y_ref, bound, got;
            if (skip_special && f->special)
                continue;
            dev = x_before[i] - f->mu;
            y_ref = dev * f->invstd * f->gamma + f->beta;
            /* no u |mu| term: y is formed from the deviations, not the rounded mean */
            bound = fabs(f->gamma) * (f->b_dev * f->invstd + fabs(dev) * f->b_inv)
                    + 4 * U32 * (fabs(f->gamma * dev * f->invstd) + fabs(f->beta))
                    + out_u * (fabs(y_ref) + t->min_normal);   /* subnormal y too */
            got = bng_get(t, k->y.p, i);
            if (relu && got == 0 && !signbit(got) && y_ref <= bound)
                continue;
            if (!(fabs(got - y_ref) <= bound) || (relu && !(got > 0)))
                ck_abort_msg("%s %zux%zu %s: y[%zu][%zu] = %.9g, reference %.9g, bound %.3g", t->name,
                             batch, channel, what, r, c, got, y_ref, bound);
        }
}

/* The call's every output against the float64 reference, with the contract's bound. */
void fwd_check(const fwd_case *k, const double *x_before, const double *mm_before,
                      const double *mv_before, const char *what)
{
    const bng_dtype *t = k->t;
    const int global = (k->params[BNG_PARAM_FLAGS] & BNG_FWD_GLOBAL_STATS) != 0;
    const size_t batch = k->batch, channel = k->channel;
    fwd_channel_ref *ref = calloc(channel ? channel : 1, sizeof *ref);
    size_t r, c;

    if (ref == NULL)
        ck_abort_msg("fwd_check: out of memory");
    if (k->params[BNG_PARAM_STATUS] != BNG_OK)
        ck_abort_msg("%s %zux%zu %s: status %lld", t->name, batch, channel, what,
                     k->params[BNG_PARAM_STATUS]);
    fwd_sums(k, x_before, ref);
    for (c = 0; c < channel; c++) {
        if (!global && ref[c].special)
            fwd_check_special(k, c, what);
        else
            fwd_check_channel(k, &ref[c], c, mm_before[c], mv_before[c], what);
    }
    fwd_check_y(k, x_before, ref, !global, what);
    free(ref);
    {
        bng_buffer *b[FWD_BUFFERS];
        fwd_buffers((fwd_case *)k, b);
        for (r = 0; r < FWD_BUFFERS; r++)
            if (!bng_buffer_guards_intact(b[r]))
                ck_abort_msg("%s %zux%zu %s: a guard byte was written", t->name, batch, channel, what);
    }
    fwd_check_bits(k, k->y.p, what);
    if (k->params[BNG_FWD_PARAM_RELU_BITS] != (long long)(intptr_t)k->bits.p)
        ck_abort_msg("%s %s: slot 11 (the ReLU's bits) was written", t->name, what);
    for (c = 0; c < BNG_FWD_PARAMS_LEN; c++)
        if ((c == 12 || c == 14 || c == 15) && k->params[c] != 0x5EED0000 + (long long)c)
            ck_abort_msg("%s %s: slot %zu (reserved, or the partials') was written", t->name, what, c);
}

/* Run k (y apart, or over x with in_place) and check it against the reference. */
static void fwd_run_checked(fwd_case *k, int in_place, const char *what)
{
    const bng_dtype *t = k->t;
    const size_t n = k->batch * k->channel;
    double *x = bng_test_alloc(n * sizeof *x), *mm = bng_test_alloc(k->channel * sizeof *mm);
    double *mv = bng_test_alloc(k->channel * sizeof *mv);
    size_t i;

    for (i = 0; i < n; i++)
        x[i] = bng_get(t, k->x.p, i);
    for (i = 0; i < k->channel; i++) {
        mm[i] = bng_stats_get(t, k->moving_mean.p, i);
        mv[i] = bng_stats_get(t, k->moving_var.p, i);
    }
    if (in_place) {
        fwd_run(k, k->x.p);
        memcpy(k->y.p, k->x.p, k->y.bytes);
    } else {
        fwd_run(k, k->y.p);
    }
    fwd_check(k, x, mm, mv, what);
    bng_test_free(x);
    bng_test_free(mm);
    bng_test_free(mv);
}

/* The channel counts of t: every specialized one and some off the plan. */
static size_t fwd_channels(const bng_dtype *t, size_t *out)
{
    size_t n = 0, i;
    for (i = 0; i < t->n_specialized; i++)
        out[n++] = t->specialized[i];
    return n + bng_off_plan_channels(t, out + n);
}

const long long fwd_flag_sets[FWD_FLAG_SETS] = {
    0, BNG_FWD_TORCH, BNG_FWD_FIX_GAMMA, BNG_FWD_GLOBAL_STATS, BNG_FWD_KEEP_MOVING,
    BNG_FWD_FIX_GAMMA | BNG_FWD_TORCH, BNG_FWD_RELU | BNG_FWD_RELU_BITS,
    BNG_FWD_GLOBAL_STATS | BNG_FWD_RELU,
};

START_TEST(test_forward_within_bound)
{
    const size_t batches[] = {1, 33, 2, 300};      /* the quick size: the first two */
    const size_t n_batches = bng_test_quick() ? 2 : sizeof batches / sizeof batches[0];
    size_t channels[64], n = fwd_channels(T, channels), b, c, f;

    if (T->forward_p == NULL)
        return;
    for (c = 0; c < n; c++)
        for (b = 0; b < n_batches; b++)
            for (f = 0; f < sizeof fwd_flag_sets / sizeof fwd_flag_sets[0]; f++) {
                fwd_case k;
                if (batches[b] == 1 && (fwd_flag_sets[f] & BNG_FWD_TORCH))
                    continue;      /* refused: below */
                fwd_init(&k, T, batches[b], channels[c], DATA_RANDOM, fwd_flag_sets[f],
                         (unsigned)(c * 131 + b * 7 + f));
                /* off the plan (the generic kernel, chunk after chunk), y over x */
                fwd_run_checked(&k, c >= T->n_specialized && f == 0, "random");
                fwd_free(&k);
            }
}
END_TEST

/* benchdnn's hard case for the statistics: a mean far above the spread (E[x^2] - E[x]^2
 * would lose every digit), over several row groups. */
START_TEST(test_forward_large_mean)
{
    size_t channels[64], n = fwd_channels(T, channels), c;

    if (T->forward_p == NULL)
        return;
    for (c = 0; c < n; c += 2) {
        fwd_case k;
        fwd_init(&k, T, LARGE_BATCH, channels[c], DATA_LARGE_MEAN, 0, (unsigned)c + 99u);
        fwd_run_checked(&k, 0, "large mean");
        fwd_free(&k);
    }
}
END_TEST

/* The generic kernel and in place (y over x) give the specialized kernel's bits. */
START_TEST(test_forward_generic_and_in_place_same_bits)
{
    size_t i;

    if (T->forward_p == NULL)
        return;
    for (i = 0; i < T->n_specialized; i++) {
        fwd_case a, b, c;
        /* every other count with the ReLU and its bits (333 rows: a partial last word) */
        fwd_init(&a, T, 333, T->specialized[i], DATA_LARGE_MEAN,
                 i % 2 ? BNG_FWD_RELU | BNG_FWD_RELU_BITS : 0, (unsigned)i);
        fwd_copy(&b, &a);
        fwd_copy(&c, &a);
        fwd_run(&a, a.y.p);
        fwd_run_generic(T->fwd_config, b.x.p, b.y.p, b.params);
        fwd_run(&c, c.x.p);
        ck_assert_int_eq(a.params[BNG_PARAM_STATUS], BNG_OK);
        bng_expect_same(a.y.p, b.y.p, a.y.bytes, T->name, "forward y, generic kernel");
        bng_expect_same(a.mean.p, b.mean.p, a.mean.bytes, T->name, "forward mean, generic kernel");
        bng_expect_same(a.invar.p, b.invar.p, a.invar.bytes, T->name, "forward invar, generic kernel");
        bng_expect_same(a.moving_var.p, b.moving_var.p, a.moving_var.bytes, T->name, "forward moving var, generic");
        bng_expect_same(a.moving_mean.p, b.moving_mean.p, a.moving_mean.bytes, T->name, "forward moving mean, generic");
        bng_expect_same(a.mean.p, c.mean.p, a.mean.bytes, T->name, "forward mean in place");
        bng_expect_same(a.invar.p, c.invar.p, a.invar.bytes, T->name, "forward invar in place");
        bng_expect_same(a.y.p, c.x.p, a.y.bytes, T->name, "forward y in place");
        bng_expect_same(a.moving_mean.p, c.moving_mean.p, a.moving_mean.bytes, T->name, "forward moving mean in place");
        bng_expect_same(a.bits.p, b.bits.p, a.bits.bytes, T->name, "forward ReLU bits, generic kernel");
        bng_expect_same(a.bits.p, c.bits.p, a.bits.bytes, T->name, "forward ReLU bits in place");
        fwd_free(&a);
        fwd_free(&b);
        fwd_free(&c);
    }
}
END_TEST

/* The ReLU is the backward's mask on the plain call's y, bit for bit: y is that y where
 * it lets dy through (above 0 or NaN as stored) and +0 elsewhere, the bits are its keeps,
 * the statistics are the plain call's; RELU alone writes no bits. On every count, at a
 * word's rows, a partial last word and several groups; data about 0 (half of y masked). */
START_TEST(test_forward_relu_is_the_mask)
{
    const size_t batches[] = {1, 32, 300};
    size_t channels[64], n = fwd_channels(T, channels), b, c, i;

    if (T->forward_p == NULL)
        return;
    for (c = 0; c < n; c++)
        for (b = 0; b < sizeof batches / sizeof batches[0]; b++) {
            const long long flags = b == 1 ? BNG_FWD_RELU : BNG_FWD_RELU | BNG_FWD_RELU_BITS;
            fwd_case plain, relu;
            fwd_init(&plain, T, batches[b], channels[c], DATA_RANDOM, 0, (unsigned)(c * 3 + b));
            fwd_copy(&relu, &plain);
            relu.params[BNG_PARAM_FLAGS] = flags;
            fwd_run_checked(&plain, 0, "plain, for the ReLU");
            fwd_run(&relu, relu.y.p);
            ck_assert_int_eq(relu.params[BNG_PARAM_STATUS], BNG_OK);
            for (i = 0; i < batches[b] * channels[c]; i++) {
                const unsigned char zero[4] = {0, 0, 0, 0};
                const void *want = fwd_keeps(T, plain.y.p, i) ? (const void *)((const char *)plain.y.p + i * T->size)
                                                              : (const void *)zero;
                if (memcmp((const char *)relu.y.p + i * T->size, want, T->size) != 0)
                    ck_abort_msg("%s %zux%zu: ReLU y[%zu] is not the plain y masked", T->name,
                                 batches[b], channels[c], i);
            }
            fwd_check_bits(&relu, plain.y.p, "ReLU bits against the plain y");
            bng_expect_same(plain.mean.p, relu.mean.p, plain.mean.bytes, T->name, "ReLU mean");
            bng_expect_same(plain.invar.p, relu.invar.p, plain.invar.bytes, T->name, "ReLU invar");
            bng_expect_same(plain.moving_mean.p, relu.moving_mean.p, plain.moving_mean.bytes,
                            T->name, "ReLU moving mean");
            bng_expect_same(plain.moving_var.p, relu.moving_var.p, plain.moving_var.bytes,
                            T->name, "ReLU moving var");
            fwd_free(&plain);
            fwd_free(&relu);
        }
}
END_TEST

/* A NaN and an infinity in two channels leave the others exact to the bound. */
START_TEST(test_forward_special_values)
{
    fwd_case k;

    if (T->forward_p == NULL)
        return;
    fwd_init(&k, T, 70, 24, DATA_RANDOM, 0, 5u);
    bng_set(T, k.x.p, 3 * 24 + 0, NAN);
    bng_set(T, k.x.p, 40 * 24 + 1, INFINITY);
    bng_set(T, k.x.p, 0 * 24 + 2, -INFINITY);     /* the shift itself */
    fwd_run_checked(&k, 0, "NaN and infinities");
    fwd_free(&k);
}
END_TEST

/* ---- _s: the block through BNG_SHARED_PARAMS, all 16 slots, and back ---- */

typedef struct {
    const fwd_case *k;
    void *x, *y;
    int core_mask;
} fwd_shared_call;

static void fwd_call_shared(void *p)
{
    const fwd_shared_call *c = p;
    c->k->t->forward_s(c->x, c->y, c->core_mask);
}

void fwd_run_shared_on(fwd_case *k, void *x, void *y, int core_mask)
{
    fwd_shared_call c;

    c.k = k;
    c.x = x;
    c.y = y;
    c.core_mask = core_mask;
    memcpy(BNG_SHARED_PARAMS, k->params, sizeof k->params);
    bng_test_on_cores(fwd_call_shared, &c);
    memcpy(k->params, BNG_SHARED_PARAMS, sizeof k->params);
}

/* _p (core_mask -1) or _s on the cores of core_mask. */
static void fwd_call(fwd_case *k, void *x, void *y, int shared, int core_mask)
{
    if (shared)
        fwd_run_shared_on(k, x, y, core_mask);
    else
        k->t->forward_p(x, y, k->params);
}

/* A refused call (_p, or _s on core_mask with `shared`) writes its status and nothing
 * else: every output keeps its bytes, every other slot its value. */
void fwd_expect_refused_by(fwd_case *k, void *x, void *y, int shared, int core_mask,
                                  long long expected, const char *what)
{
    fwd_case before;
    bng_buffer *now[FWD_BUFFERS], *then[FWD_BUFFERS];
    size_t i;
    long long status;

    long long params[BNG_FWD_PARAMS_LEN];

    memcpy(params, k->params, sizeof params);
    fwd_copy(&before, k);
    fwd_call(k, x, y, shared, core_mask);
    status = k->params[BNG_PARAM_STATUS];
    if (status != expected)
        ck_abort_msg("%s forward %s: status %lld, expected %lld", k->t->name, what, status, expected);
    fwd_buffers(k, now);
    fwd_buffers(&before, then);
    for (i = 0; i < FWD_BUFFERS; i++)
        if (memcmp(now[i]->p, then[i]->p, now[i]->bytes) != 0 || !bng_buffer_guards_intact(now[i]))
            ck_abort_msg("%s forward %s: array %zu was written", k->t->name, what, i);
    for (i = 0; i < BNG_FWD_PARAMS_LEN; i++)
        if (i != BNG_PARAM_STATUS && k->params[i] != params[i])
            ck_abort_msg("%s forward %s: slot %zu was written", k->t->name, what, i);
    k->params[BNG_PARAM_STATUS] = 12345;
    fwd_free(&before);
}

static void fwd_expect_refused(fwd_case *k, void *x, void *y, long long expected, const char *what)
{
    fwd_expect_refused_by(k, x, y, 0, -1, expected, what);
}

/* The library's square root (bng_steps.c, without libm) is sqrtf's, bit for bit: on
 * every 4099th float (65537th at the quick size) and the ends (every one of the 2^31 non-negative finite floats was
 * checked once, 65 s). */
float bng_sqrtf(float v);
START_TEST(test_forward_sqrt_is_ieee)
{
    const uint32_t ends[] = {0, 1, 2, 0x7fffff, 0x800000, 0x800001, 0x3f800000, 0x3f800001,
                             0x7f7fffff, 0x7f800000};
    const size_t n_ends = sizeof ends / sizeof ends[0];
    uint32_t bits;
    size_t i;

    volatile float least = 1e-45f;
    const int flushes = least * 1.0f == 0.0f;    /* the suite's FTZ mode: sqrtf takes a subnormal as 0 */

    if (_i != 0)
        return;                         /* one storage type's run is enough */
    const uint32_t stride = bng_test_quick() ? 65537u : 4099u;   /* quick: 1 in 16 of them */

    for (i = 0; i < n_ends + 0x7f800000u / stride; i++) {
        float v, want, got;
        bits = i < n_ends ? ends[i] : (uint32_t)((i - n_ends) * stride);
        if (flushes && bits < 0x800000u)
            continue;
        memcpy(&v, &bits, sizeof v);
        want = sqrtf(v);
        got = bng_sqrtf(v);
        if (memcmp(&want, &got, sizeof want) != 0)
            ck_abort_msg("bng_sqrtf(%a) = %a, sqrtf %a", (double)v, (double)got, (double)want);
        /* its negative: no root, a NaN (of either sign, as sqrtf's is), -0 its own */
        v = -v;
        got = bng_sqrtf(v);
        if (bits == 0 ? memcmp(&got, &v, sizeof v) != 0 : !isnan(got))
            ck_abort_msg("bng_sqrtf(%a) = %a, not NaN", (double)v, (double)got);
    }
}
END_TEST

START_TEST(test_forward_refusals)
{
    const int slots[] = {BNG_PARAM_MEAN, BNG_PARAM_INVAR, BNG_PARAM_SCALE, BNG_FWD_PARAM_BIAS,
                         BNG_FWD_PARAM_MOVING_MEAN, BNG_FWD_PARAM_MOVING_VAR};
    const float bad_eps[] = {0.0f, -1.0f, NAN, INFINITY};
    const float bad_momentum[] = {NAN, -0.25f, 1.5f};
    fwd_case k;
    size_t i;
    long long saved;

    if (T->forward_p == NULL)
        return;
    fwd_init(&k, T, 40, 20, DATA_RANDOM, 0, 7u);
    T->forward_p(k.x.p, k.y.p, NULL);        /* no block: nowhere to report, nothing written */
    if (!bng_bytes_are_marked(k.y.p, k.y.bytes) || !bng_bytes_are_marked(k.mean.p, k.mean.bytes))
        ck_abort_msg("%s forward with no block wrote an output", T->name);
    fwd_expect_refused(&k, NULL, k.y.p, BNG_ENULL, "x NULL");
    fwd_expect_refused(&k, k.x.p, NULL, BNG_ENULL, "y NULL");
    for (i = 0; i < sizeof slots / sizeof slots[0]; i++) {
        saved = k.params[slots[i]];
        k.params[slots[i]] = 0;
        fwd_expect_refused(&k, k.x.p, k.y.p, BNG_ENULL, "an array NULL");
        k.params[slots[i]] = saved + 1;
        fwd_expect_refused(&k, k.x.p, k.y.p, BNG_EALIGN, "an array misaligned");
        k.params[slots[i]] = saved;
    }
    fwd_expect_refused(&k, (char *)k.x.p + 1, k.y.p, BNG_EALIGN, "x misaligned");
    k.params[BNG_PARAM_BATCH] = 0;
    fwd_expect_refused(&k, k.x.p, k.y.p, BNG_EBATCH, "batch 0");
    k.params[BNG_PARAM_BATCH] = 1;
    k.params[BNG_PARAM_FLAGS] = BNG_FWD_TORCH;
    fwd_expect_refused(&k, k.x.p, k.y.p, BNG_EBATCH, "one row, PyTorch's unbiased variance");
    k.params[BNG_PARAM_BATCH] = 40;
    k.params[BNG_PARAM_FLAGS] = 0;
    k.params[BNG_PARAM_CHANNEL] = 0;
    fwd_expect_refused(&k, k.x.p, k.y.p, BNG_ECHANNEL, "channel 0");
    k.params[BNG_PARAM_CHANNEL] = 20;
    k.params[BNG_PARAM_BATCH] = (long long)(ADDRESS_MAX / 4);
    fwd_expect_refused(&k, k.x.p, k.y.p, BNG_ERANGE, "past the address space");
    k.params[BNG_PARAM_BATCH] = 40;
    k.params[BNG_PARAM_FLAGS] = 1;       /* the backward's ACCUMULATE: not the forward's */
    fwd_expect_refused(&k, k.x.p, k.y.p, BNG_EFLAGS, "an unknown flag");
#if !BNG_HAS_FWD_NCHW
    /* BNG_FWD_NCHW's bit, where the forward has no NCHW (a target without nchw) */
    k.params[BNG_PARAM_FLAGS] = 2;
    fwd_expect_refused(&k, k.x.p, k.y.p, BNG_EFLAGS, "NCHW, which this target's forward has not");
#endif
    k.params[BNG_PARAM_FLAGS] = BNG_FWD_GLOBAL_STATS | BNG_FWD_KEEP_MOVING;
    fwd_expect_refused(&k, k.x.p, k.y.p, BNG_EFLAGS, "the moving statistics used and not read");
    /* the vendor calls' own bits are unknown in a block: a NULL array still comes first */
    for (i = 16; i <= 17; i++) {
        k.params[BNG_PARAM_FLAGS] = 1LL << i;
        saved = k.params[BNG_PARAM_MEAN];
        k.params[BNG_PARAM_MEAN] = 0;
        fwd_expect_refused(&k, k.x.p, k.y.p, BNG_ENULL, "mean NULL, an unknown bit set");
        k.params[BNG_PARAM_MEAN] = saved;
        saved = k.params[BNG_FWD_PARAM_BIAS];
        k.params[BNG_FWD_PARAM_BIAS] = 0;
        fwd_expect_refused(&k, k.x.p, k.y.p, BNG_ENULL, "bias NULL, an unknown bit set");
        k.params[BNG_FWD_PARAM_BIAS] = saved;
        fwd_expect_refused(&k, k.x.p, k.y.p, BNG_EFLAGS, "an unknown bit");
    }
    k.params[BNG_PARAM_FLAGS] = 0;
    for (i = 0; i < sizeof bad_eps / sizeof bad_eps[0]; i++) {
        k.params[BNG_FWD_PARAM_EPS] = bng_fwd_float(bad_eps[i]);
        fwd_expect_refused(&k, k.x.p, k.y.p, BNG_EVALUE, "eps not finite and positive");
    }
    k.params[BNG_FWD_PARAM_EPS] = bng_fwd_float(1e-5f);
    for (i = 0; i < sizeof bad_momentum / sizeof bad_momentum[0]; i++) {
        k.params[BNG_FWD_PARAM_MOMENTUM] = bng_fwd_float(bad_momentum[i]);
        fwd_expect_refused(&k, k.x.p, k.y.p, BNG_EVALUE, "momentum outside [0, 1]");
    }
    k.params[BNG_FWD_PARAM_MOMENTUM] = bng_fwd_float(0.1f);
    /* the ReLU's bits: only with the ReLU, which needs a y; the array as any output */
    k.params[BNG_PARAM_FLAGS] = BNG_FWD_RELU_BITS;
    fwd_expect_refused(&k, k.x.p, k.y.p, BNG_EFLAGS, "RELU_BITS without RELU");
    k.params[BNG_PARAM_FLAGS] = BNG_FWD_RELU | BNG_FWD_PARTIALS_OUT;
    fwd_expect_refused(&k, k.x.p, k.y.p, BNG_EFLAGS, "RELU with PARTIALS_OUT");
    k.params[BNG_PARAM_FLAGS] = BNG_FWD_RELU | BNG_FWD_RELU_BITS;
    saved = k.params[BNG_FWD_PARAM_RELU_BITS];
    k.params[BNG_FWD_PARAM_RELU_BITS] = 0;
    fwd_expect_refused(&k, k.x.p, k.y.p, BNG_ENULL, "the ReLU's bits NULL");
    k.params[BNG_FWD_PARAM_RELU_BITS] = saved + 1;
    fwd_expect_refused(&k, k.x.p, k.y.p, BNG_EALIGN, "the ReLU's bits misaligned");
    k.params[BNG_FWD_PARAM_RELU_BITS] = (long long)(intptr_t)((char *)k.y.p + k.y.bytes - T->size);
    fwd_expect_refused(&k, k.x.p, k.y.p, BNG_EOVERLAP, "the ReLU's bits over y's end");
    k.params[BNG_FWD_PARAM_RELU_BITS] = (long long)(intptr_t)k.x.p;
    fwd_expect_refused(&k, k.x.p, k.y.p, BNG_EOVERLAP, "the ReLU's bits over x");
    k.params[BNG_FWD_PARAM_RELU_BITS] = k.params[BNG_PARAM_MEAN];
    fwd_expect_refused(&k, k.x.p, k.y.p, BNG_EOVERLAP, "the ReLU's bits over the mean");
    k.params[BNG_FWD_PARAM_RELU_BITS] = saved;
    k.params[BNG_PARAM_FLAGS] = 0;
    fwd_expect_refused(&k, k.x.p, (char *)k.x.p + T->size, BNG_EOVERLAP, "y overlapping x");
    saved = k.params[BNG_PARAM_INVAR];
    k.params[BNG_PARAM_INVAR] = k.params[BNG_PARAM_MEAN];
    fwd_expect_refused(&k, k.x.p, k.y.p, BNG_EOVERLAP, "invar the mean's array");
    k.params[BNG_PARAM_INVAR] = k.params[BNG_PARAM_SCALE];
    fwd_expect_refused(&k, k.x.p, k.y.p, BNG_EOVERLAP, "invar the scale's array");
    k.params[BNG_PARAM_INVAR] = saved;
    saved = k.params[BNG_FWD_PARAM_MOVING_VAR];
    k.params[BNG_FWD_PARAM_MOVING_VAR] = k.params[BNG_FWD_PARAM_BIAS];
    fwd_expect_refused(&k, k.x.p, k.y.p, BNG_EOVERLAP, "the moving variance the bias's array");
    k.params[BNG_FWD_PARAM_MOVING_VAR] = saved;
    /* what a flag leaves unread is not judged: a fixed gamma's NULL scale runs */
    k.params[BNG_PARAM_SCALE] = 0;
    k.params[BNG_PARAM_FLAGS] = BNG_FWD_FIX_GAMMA;
    fwd_run_checked(&k, 0, "fix_gamma, scale NULL");
    fwd_free(&k);
}
END_TEST

/* Every output of b (y at b_y) has the bits of a's (y at a_y). */
void fwd_expect_same_outputs(const fwd_case *a, const void *a_y, const fwd_case *b,
                                    const void *b_y, const char *what)
{
    char shape[96];

    snprintf(shape, sizeof shape, "%s forward %zux%zu flags %lld", a->t->name, a->batch,
             a->channel, a->params[BNG_PARAM_FLAGS]);
    if (b->params[BNG_PARAM_STATUS] != a->params[BNG_PARAM_STATUS])
        ck_abort_msg("%s %s: status %lld, _p's %lld", shape, what, b->params[BNG_PARAM_STATUS],
                     a->params[BNG_PARAM_STATUS]);
    bng_expect_same(a_y, b_y, a->y.bytes, shape, what);
    bng_expect_same(a->mean.p, b->mean.p, a->mean.bytes, shape, what);
    bng_expect_same(a->invar.p, b->invar.p, a->invar.bytes, shape, what);
    bng_expect_same(a->moving_mean.p, b->moving_mean.p, a->moving_mean.bytes, shape, what);
    bng_expect_same(a->moving_var.p, b->moving_var.p, a->moving_var.bytes, shape, what);
    bng_expect_same(a->bits.p, b->bits.p, a->bits.bytes, shape, what);
}


/* The arrays k's flags leave unread, NULL in its block (the contract lets them be). */
void fwd_null_unread(fwd_case *k)
{
    if (k->params[BNG_PARAM_FLAGS] & BNG_FWD_FIX_GAMMA)
        k->params[BNG_PARAM_SCALE] = 0;
    if (k->params[BNG_PARAM_FLAGS] & BNG_FWD_KEEP_MOVING)
        k->params[BNG_FWD_PARAM_MOVING_MEAN] = k->params[BNG_FWD_PARAM_MOVING_VAR] = 0;
}

/* _s gives _p's bits on every core mask: each case on the full mask and half the
 * others (consecutive cases take every mask between them), each flag set in turn, the
 * arrays it leaves unread NULL; x kept, the reserved slots untouched. */
static void fwd_expect_shared_matches_private(const bng_dtype *t, size_t batch, size_t channel,
                                              long long flags, unsigned seed)
{
    fwd_case orig, ref;
    size_t m, slot;

    fwd_init(&orig, t, batch, channel, DATA_LARGE_MEAN, flags, seed);
    fwd_copy(&ref, &orig);
    fwd_null_unread(&ref);
    fwd_run(&ref, ref.y.p);
    ck_assert_int_eq(ref.params[BNG_PARAM_STATUS], BNG_OK);
    for (m = 0; m < bng_test_mask_count; m++) {
        fwd_case k;
        char what[48];
        if ((bng_test_masks[m] & FULL_MASK) == 0 || (bng_test_masks[m] != FULL_MASK && (m + seed) % 2 != 0))
            continue;
        fwd_copy(&k, &orig);
        fwd_null_unread(&k);
        fwd_run_shared_on(&k, k.x.p, k.y.p, bng_test_masks[m]);
        snprintf(what, sizeof what, "_s on mask %#x against _p", (unsigned)bng_test_masks[m]);
        fwd_expect_same_outputs(&ref, ref.y.p, &k, k.y.p, what);
        bng_expect_same(orig.x.p, k.x.p, k.x.bytes, t->name, "forward _s's x");
        if (k.params[BNG_FWD_PARAM_RELU_BITS] != (long long)(intptr_t)k.bits.p)
            ck_abort_msg("%s forward _s wrote slot 11", t->name);
        for (slot = 12; slot < BNG_FWD_PARAMS_LEN; slot++)
            if (slot != BNG_PARAM_FLAGS && k.params[slot] != 0x5EED0000 + (long long)slot)
                ck_abort_msg("%s forward _s wrote reserved slot %zu", t->name, slot);
        fwd_free(&k);
    }
    fwd_free(&orig);
    fwd_free(&ref);
}

START_TEST(test_forward_shared_matches_private)
{
    /* one row, fewer groups than cores, a few groups per core, 64 groups, and
     * LARGE_BATCH: tiles streamed through private memory where the slice does not fit */
    size_t batches[] = {1, 33, 300, 2049, 0};
    size_t channels[64], n = fwd_channels(T, channels), b, c;
    unsigned seed = 0;

    if (T->forward_s == NULL)
        return;
    batches[4] = LARGE_BATCH;
    for (b = 0; b < sizeof batches / sizeof batches[0]; b++)
        for (c = 0; c < n; c++, seed++) {
            long long flags = fwd_flag_sets[seed % FWD_FLAG_SETS];
            if (batches[b] * channels[c] > SHARED_MAX_ELEMENTS)
                continue;
            if (batches[b] == 1 && (flags & BNG_FWD_TORCH))
                flags = 0;          /* refused with one row (test_forward_refusals) */
            fwd_expect_shared_matches_private(T, batches[b], channels[c], flags, seed);
        }
    /* the ReLU's bits from streamed tiles, and from the rows kept in GSM: a specialized
     * count and the generic kernel at LARGE_BATCH */
    for (b = 0; b < 2; b++) {
        c = b == 0 ? 0 : n - 1;
        if (LARGE_BATCH * channels[c] <= SHARED_MAX_ELEMENTS)
            fwd_expect_shared_matches_private(T, LARGE_BATCH, channels[c],
                                              BNG_FWD_RELU | BNG_FWD_RELU_BITS, seed++);
    }
}
END_TEST

/* y over x on the cores gives _p's y out of place, and the same statistics. */
START_TEST(test_forward_shared_in_place)
{
    const size_t channels[] = {T->specialized[0], T->lanes + 1};
    const int masks[] = {FULL_MASK, 0x5};
    const long long flags[] = {0, BNG_FWD_GLOBAL_STATS, BNG_FWD_RELU | BNG_FWD_RELU_BITS,
                               BNG_FWD_GLOBAL_STATS | BNG_FWD_RELU};
    size_t c, m;

    if (T->forward_s == NULL)
        return;
    for (c = 0; c < 2; c++)
        for (m = 0; m < 4; m++) {
            fwd_case ref, k;
            fwd_init(&ref, T, 3000, channels[c], DATA_LARGE_MEAN, flags[m], (unsigned)(c * 4 + m));
            fwd_copy(&k, &ref);
            fwd_run(&ref, ref.y.p);
            fwd_run_shared_on(&k, k.x.p, k.x.p, masks[m % 2]);
            fwd_expect_same_outputs(&ref, ref.y.p, &k, k.x.p, "_s in place against _p");
            fwd_free(&ref);
            fwd_free(&k);
        }
}
END_TEST

/* _s's refusals: its checks in _p's order, then core_mask; each the status alone. A
 * core's private memory not to be had (the hthreads HAL): BNG_ENOMEM, nothing written;
 * a host HAL that breaks its promise of private memory: nothing written; on a split
 * target, _p's workspace short: BNG_ENOMEM, nothing written. */
START_TEST(test_forward_shared_refusals)
{
    fwd_case k;
    long long saved;

    if (T->forward_s == NULL)
        return;
    fwd_init(&k, T, 40, 20, DATA_RANDOM, 0, 9u);
    fwd_expect_refused_by(&k, k.x.p, k.y.p, 1, 0, BNG_ECOREMASK, "core_mask 0");
    if (BNG_TARGET_CORES < 31)
        fwd_expect_refused_by(&k, k.x.p, k.y.p, 1, (int)(1u << BNG_TARGET_CORES), BNG_ECOREMASK,
                              "only a core beyond the cluster");
    fwd_expect_refused_by(&k, NULL, k.y.p, 1, 0, BNG_ENULL, "x NULL, before core_mask");
    saved = k.params[BNG_FWD_PARAM_MOVING_VAR];
    k.params[BNG_FWD_PARAM_MOVING_VAR] = k.params[BNG_PARAM_MEAN];
    fwd_expect_refused_by(&k, k.x.p, k.y.p, 1, FULL_MASK, BNG_EOVERLAP, "the moving variance the mean's");
    k.params[BNG_FWD_PARAM_MOVING_VAR] = saved;
    k.params[BNG_FWD_PARAM_EPS] = bng_fwd_float(-1.0f);
    fwd_expect_refused_by(&k, k.x.p, k.y.p, 1, FULL_MASK, BNG_EVALUE, "eps negative");
    k.params[BNG_FWD_PARAM_EPS] = bng_fwd_float(1e-3f);
    if (bng_test_fail_private_memory(1u << (BNG_TARGET_CORES / 2))) {
        fwd_expect_refused_by(&k, k.x.p, k.y.p, 1, FULL_MASK, BNG_ENOMEM,
                              "a selected core without private memory");
        bng_test_fail_private_memory(0);
    }
    if (bng_test_hal_refuse(1, 0)) {
        fwd_case before;
        fwd_copy(&before, &k);
        fwd_run_shared_on(&k, k.x.p, k.y.p, FULL_MASK);
        bng_test_hal_refuse(0, 0);
        if (memcmp(k.y.p, before.y.p, k.y.bytes) || memcmp(k.mean.p, before.mean.p, k.mean.bytes)
            || memcmp(k.moving_var.p, before.moving_var.p, k.moving_var.bytes))
            ck_abort_msg("%s forward _s without private memory wrote an output", T->name);
        fwd_free(&before);
    }
#if BNG_SPLIT_MEMORY
    /* a split target's _p, staged, given a workspace short of BNG_P_WORKSPACE_BYTES:
     * BNG_ENOMEM, nothing else written */
    if (bng_test_hal_refuse(0, 1)) {
        fwd_expect_refused(&k, k.x.p, k.y.p, BNG_ENOMEM, "_p with a short workspace");
        bng_test_hal_refuse(0, 0);
    }
#endif
    fwd_run_shared_on(&k, k.x.p, k.y.p, FULL_MASK);
    {
        fwd_case check;
        fwd_init(&check, T, 40, 20, DATA_RANDOM, 0, 9u);
        fwd_run_checked(&check, 0, "after the refusals");
        /* k is as it was made (the refused calls wrote nothing): _p's bits */
        fwd_expect_same_outputs(&check, check.y.p, &k, k.y.p, "_s after its refusals");
        fwd_free(&check);
    }
    fwd_free(&k);
}
END_TEST

/* ---- the synchronized forward: PARTIALS_OUT, the header's merge, PARTIALS_IN ---- */

/* A partials buffer for `channel` channels, between guards, marked. */
static bng_buffer fwd_partials_new(size_t channel)
{
    bng_buffer b = bng_buffer_new(BNG_FWD_PARTIALS_FLOATS(channel) * sizeof(float));
    memset(b.p, BNG_OUTPUT_MARK, b.bytes);
    return b;
}

/* k's call with `flags` added and the partials at `partials`: _p, or _s on core_mask. */
static void fwd_run_partials(fwd_case *k, long long flags, bng_buffer *partials, int shared,
                             int core_mask)
{
    const long long saved = k->params[BNG_PARAM_FLAGS];

    k->params[BNG_PARAM_FLAGS] = saved | flags;
    k->params[BNG_FWD_PARAM_PARTIALS] = (long long)(intptr_t)partials->p;
    fwd_call(k, k->x.p, k->y.p, shared, core_mask);
    k->params[BNG_PARAM_FLAGS] = saved;
    k->params[BNG_FWD_PARAM_PARTIALS] = 0x5EED0000 + BNG_FWD_PARAM_PARTIALS;
    if (k->params[BNG_PARAM_STATUS] != BNG_OK)
        ck_abort_msg("%s forward with partials flags %lld: status %lld", k->t->name, flags,
                     k->params[BNG_PARAM_STATUS]);
}

/* One device: PARTIALS_OUT then PARTIALS_IN on its own buffer gives the one call's bits
 * (_p and _s); PARTIALS_OUT writes the buffer alone, and y may be NULL. */
START_TEST(test_forward_partials_one_device)
{
    size_t channels[64], n = fwd_channels(T, channels), c;

    if (T->forward_s == NULL)
        return;
    for (c = 0; c < n; c++) {
        /* 0, TORCH, FIX_GAMMA, and every fourth count the ReLU and its bits (on PARTIALS_IN:
         * PARTIALS_OUT writes no y, and refuses them) */
        const long long relu = BNG_FWD_RELU | BNG_FWD_RELU_BITS;
        const long long flags = c % 4 == 3 ? relu : fwd_flag_sets[c % 3];
        const int shared = c % 2;
        fwd_case ref, k, untouched;
        bng_buffer partials = fwd_partials_new(channels[c]);

        fwd_init(&ref, T, 70 + 300 * (c % 2), channels[c], DATA_LARGE_MEAN, flags, (unsigned)c);
        fwd_copy(&k, &ref);
        fwd_run(&ref, ref.y.p);
        fwd_copy(&untouched, &k);
        k.params[BNG_PARAM_FLAGS] = (flags & ~relu) | BNG_FWD_PARTIALS_OUT;
        k.params[BNG_FWD_PARAM_PARTIALS] = (long long)(intptr_t)partials.p;
        fwd_call(&k, k.x.p, NULL, shared, FULL_MASK);
        ck_assert_int_eq(k.params[BNG_PARAM_STATUS], BNG_OK);
        k.params[BNG_PARAM_FLAGS] = flags;
        untouched.params[BNG_PARAM_STATUS] = BNG_OK;
        fwd_expect_same_outputs(&untouched, untouched.y.p, &k, k.y.p, "PARTIALS_OUT wrote an output");
        ck_assert_int_eq(bng_fwd_partials_rows(partials.p, (long long)channels[c]), (long long)ref.batch);
        fwd_run_partials(&k, BNG_FWD_PARTIALS_IN, &partials, shared, FULL_MASK);
        fwd_expect_same_outputs(&ref, ref.y.p, &k, k.y.p, "PARTIALS_OUT then _IN against one call");
        if (!bng_buffer_guards_intact(&partials))
            ck_abort_msg("%s: the partials buffer's guards", T->name);
        bng_buffer_free(&partials);
        fwd_free(&ref);
        fwd_free(&k);
        fwd_free(&untouched);
    }
}
END_TEST

#define FWD_DEVICES 3
/* One batch over three devices of uneven rows: each one's PARTIALS_OUT (_p on the
 * first, _s on the others, _s's buffer the bits of _p's), the buffers merged in device
 * order from the first's (bng_fwd_partials_merge), each one's PARTIALS_IN: every
 * device's saved and moving statistics the same bits, and the whole batch's y and
 * statistics within the contract's bound against float64 (its chain longer by the
 * devices' merges and their own groups). */
START_TEST(test_forward_partials_devices)
{
    const size_t rows[FWD_DEVICES] = {LARGE_BATCH / 2 + 17, 33, LARGE_BATCH / 3};
    size_t channels[3], n = bng_ext_channels(T, channels), c;     /* one of each kernel kind */

    if (T->forward_s == NULL)
        return;
    for (c = 0; c < n; c++) {
        const size_t channel = channels[c], batch = rows[0] + rows[1] + rows[2];
        const long long flags = c % 2 ? BNG_FWD_TORCH : 0;
        fwd_case whole, part[FWD_DEVICES];
        bng_buffer partials[FWD_DEVICES], shared_out = fwd_partials_new(channel);
        double *x = bng_test_alloc(batch * channel * sizeof *x), mm[1024], mv[1024];
        size_t d, r, i, first = 0;

        ck_assert_uint_le(channel, 1024);
        fwd_init(&whole, T, batch, channel, DATA_LARGE_MEAN, flags, (unsigned)c + 7u);
        for (i = 0; i < batch * channel; i++)
            x[i] = bng_get(T, whole.x.p, i);
        for (i = 0; i < channel; i++) {
            mm[i] = bng_stats_get(T, whole.moving_mean.p, i);
            mv[i] = bng_stats_get(T, whole.moving_var.p, i);
        }
        for (d = 0; d < FWD_DEVICES; d++) {
            fwd_init(&part[d], T, rows[d], channel, DATA_RANDOM, flags, 1u);
            for (r = 0; r < rows[d]; r++)
                memcpy((char *)part[d].x.p + r * channel * T->size,
                       (char *)whole.x.p + (first + r) * channel * T->size, channel * T->size);
            memcpy(part[d].scale.p, whole.scale.p, whole.scale.bytes);
            memcpy(part[d].bias.p, whole.bias.p, whole.bias.bytes);
            memcpy(part[d].moving_mean.p, whole.moving_mean.p, whole.moving_mean.bytes);
            memcpy(part[d].moving_var.p, whole.moving_var.p, whole.moving_var.bytes);
            partials[d] = fwd_partials_new(channel);
            fwd_run_partials(&part[d], BNG_FWD_PARTIALS_OUT, &partials[d], 0, -1);
            if (d > 0) {
                fwd_run_partials(&part[d], BNG_FWD_PARTIALS_OUT, &shared_out, 1, d == 1 ? FULL_MASK : 0x5);
                bng_expect_same(partials[d].p, shared_out.p, partials[d].bytes, T->name,
                                "PARTIALS_OUT, _s against _p");
            }
            first += rows[d];
        }
        for (d = 1; d < FWD_DEVICES; d++)
            bng_fwd_partials_merge(partials[0].p, partials[d].p, (long long)channel);
        for (d = 0; d < FWD_DEVICES; d++) {
            fwd_run_partials(&part[d], BNG_FWD_PARTIALS_IN, &partials[0], d == 2, FULL_MASK);
            if (d > 0) {
                bng_expect_same(part[0].mean.p, part[d].mean.p, part[0].mean.bytes, T->name,
                                "the saved mean of every device");
                bng_expect_same(part[0].invar.p, part[d].invar.p, part[0].invar.bytes, T->name,
                                "the saved invar of every device");
                bng_expect_same(part[0].moving_var.p, part[d].moving_var.p, part[0].moving_var.bytes,
                                T->name, "the moving variance of every device");
            }
        }
        /* the whole batch's outputs from the devices' */
        for (first = 0, d = 0; d < FWD_DEVICES; first += rows[d], d++)
            memcpy((char *)whole.y.p + first * channel * T->size, part[d].y.p, part[d].y.bytes);
        memcpy(whole.mean.p, part[0].mean.p, whole.mean.bytes);
        memcpy(whole.invar.p, part[0].invar.p, whole.invar.bytes);
        memcpy(whole.moving_mean.p, part[0].moving_mean.p, whole.moving_mean.bytes);
        memcpy(whole.moving_var.p, part[0].moving_var.p, whole.moving_var.bytes);
        whole.params[BNG_PARAM_STATUS] = BNG_OK;
        whole.merges = 64 + FWD_DEVICES;      /* a device's own groups, and the merges */
        fwd_check(&whole, x, mm, mv, "three devices");
        for (d = 0; d < FWD_DEVICES; d++) {
            bng_buffer_free(&partials[d]);
            fwd_free(&part[d]);
        }
        bng_buffer_free(&shared_out);
        fwd_free(&whole);
        bng_test_free(x);
    }
}
END_TEST

/* The partials' refusals, each the status alone. */
START_TEST(test_forward_partials_refusals)
{
    fwd_case k;
    bng_buffer partials;
    float *p;

    if (T->forward_s == NULL)
        return;
    fwd_init(&k, T, 40, 20, DATA_RANDOM, 0, 5u);
    partials = fwd_partials_new(20);
    p = partials.p;
    k.params[BNG_FWD_PARAM_PARTIALS] = (long long)(intptr_t)partials.p;
    k.params[BNG_PARAM_FLAGS] = BNG_FWD_PARTIALS_OUT | BNG_FWD_GLOBAL_STATS;
    fwd_expect_refused(&k, k.x.p, k.y.p, BNG_EFLAGS, "PARTIALS_OUT with GLOBAL_STATS");
    k.params[BNG_PARAM_FLAGS] = BNG_FWD_PARTIALS_OUT | BNG_FWD_PARTIALS_IN;
    fwd_expect_refused(&k, k.x.p, k.y.p, BNG_EFLAGS, "PARTIALS_OUT with PARTIALS_IN");
    k.params[BNG_PARAM_FLAGS] = BNG_FWD_PARTIALS_IN | BNG_FWD_GLOBAL_STATS;
    fwd_expect_refused(&k, k.x.p, k.y.p, BNG_EFLAGS, "PARTIALS_IN with GLOBAL_STATS");
    k.params[BNG_PARAM_FLAGS] = BNG_FWD_PARTIALS_OUT;
    k.params[BNG_FWD_PARAM_PARTIALS] = 0;
    fwd_expect_refused(&k, k.x.p, NULL, BNG_ENULL, "PARTIALS_OUT, the buffer NULL");
    k.params[BNG_FWD_PARAM_PARTIALS] = (long long)(intptr_t)partials.p + 2;
    fwd_expect_refused(&k, k.x.p, NULL, BNG_EALIGN, "PARTIALS_OUT, the buffer misaligned");
    k.params[BNG_FWD_PARAM_PARTIALS] = (long long)(intptr_t)k.x.p + 4 * T->size;
    fwd_expect_refused(&k, k.x.p, NULL, BNG_EOVERLAP, "PARTIALS_OUT, the buffer over x");
    k.params[BNG_FWD_PARAM_PARTIALS] = (long long)(intptr_t)partials.p;
    fwd_run_partials(&k, 0, &partials, 0, -1);      /* flags already PARTIALS_OUT */
    k.params[BNG_FWD_PARAM_PARTIALS] = (long long)(intptr_t)partials.p;
    k.params[BNG_PARAM_FLAGS] = BNG_FWD_PARTIALS_IN;
    fwd_expect_refused(&k, k.x.p, partials.p, BNG_EOVERLAP, "PARTIALS_IN, y over the buffer");
    p[3 * 20] = 0.5f;
    fwd_expect_refused(&k, k.x.p, k.y.p, BNG_EVALUE, "PARTIALS_IN, a count not an integer");
    p[3 * 20] = NAN;
    fwd_expect_refused(&k, k.x.p, k.y.p, BNG_EVALUE, "PARTIALS_IN, a count NaN");
    p[3 * 20] = 0.0f;
    p[3 * 20 + 1] = 0.0f;
    fwd_expect_refused(&k, k.x.p, k.y.p, BNG_EVALUE, "PARTIALS_IN, no rows");
    p[3 * 20] = 1.0f;
    k.params[BNG_PARAM_FLAGS] = BNG_FWD_PARTIALS_IN | BNG_FWD_TORCH;
    fwd_expect_refused(&k, k.x.p, k.y.p, BNG_EVALUE, "PARTIALS_IN, one row, PyTorch's variance");
    k.params[BNG_PARAM_FLAGS] = BNG_FWD_PARTIALS_OUT | BNG_FWD_TORCH;
    k.params[BNG_PARAM_BATCH] = 1;           /* no moving update: one row is fine */
    fwd_call(&k, k.x.p, NULL, 0, -1);
    ck_assert_int_eq(k.params[BNG_PARAM_STATUS], BNG_OK);
    ck_assert_int_eq(bng_fwd_partials_rows(p, 20), 1);
    bng_buffer_free(&partials);
    fwd_free(&k);
}
END_TEST

/* ---- the vendor's inference calls (fp_/hp_batchnorm_s, fp_/hp_fusedbatchnorm_s) ---- */

/* One call of either, as firmware makes it (on every core in the SPMD launch model),
 * and each core's bng_last_status(). */
typedef struct {
    const bng_dtype *t;
    int fused;
    const void *input, *scale, *offset, *mean, *variance;
    void *output;
    int unit, channel, core_mask;
    float epsilon;
    int status[BNG_TARGET_CORES];
    int called[BNG_TARGET_CORES];  /* the cores that made it: each writes its own */
} fwd_vendor_call;

static void fwd_vendor_on_core(void *p)
{
    fwd_vendor_call *v = p;
    const unsigned core = bng_test_core();

    if (v->fused)
        v->t->fusedbatchnorm_s(v->input, v->scale, v->offset, v->mean, v->variance, v->epsilon,
                               v->channel, v->unit, v->core_mask, v->output);
    else
        v->t->batchnorm_s((void *)v->input, v->output, (float *)v->mean, (float *)v->variance,
                          v->unit, v->channel, v->epsilon, v->core_mask);
    v->status[core] = bng_last_status();
    v->called[core] = 1;
}

/* The call's status: the one every core that took part reported (BNG_NOT_SELECTED on a
 * core outside the mask that the SPMD launch model made call it). */
static int fwd_vendor_run(fwd_vendor_call *v)
{
    unsigned core;
    int status = BNG_NOT_SELECTED;

    memset(v->called, 0, sizeof v->called);
    bng_test_on_cores(fwd_vendor_on_core, v);
    for (core = 0; core < BNG_TARGET_CORES; core++) {
        if (!v->called[core] || v->status[core] == BNG_NOT_SELECTED)
            continue;
        if (status != BNG_NOT_SELECTED && v->status[core] != status)
            ck_abort_msg("%s vendor call: cores report %d and %d", v->t->name, status, v->status[core]);
        status = v->status[core];
    }
    return status;
}

/* A per-channel array of k's, as the vendor's call takes it: float (batchnorm's mean and
 * variance) or the data's type (fusedbatchnorm's arrays); k's own array is given the
 * values that type holds, so that both calls read the same numbers. */
static bng_buffer fwd_vendor_array(fwd_case *k, bng_buffer *array, int as_float)
{
    const bng_dtype *t = k->t;
    bng_buffer out = bng_buffer_new(k->channel * (as_float ? sizeof(float) : t->size));
    size_t c;

    for (c = 0; c < k->channel; c++) {
        if (as_float)
            ((float *)out.p)[c] = (float)bng_stats_get(t, array->p, c);
        else
            bng_set(t, out.p, c, bng_stats_get(t, array->p, c));
        bng_stats_set(t, array->p, c, as_float ? ((float *)out.p)[c] : bng_get(t, out.p, c));
    }
    return out;
}

/* Each call gives the training forward's y with GLOBAL_STATS on the same arrays, bit for
 * bit (batchnorm: with FIX_GAMMA and a bias of 0), and writes only output. */
static void fwd_expect_vendor_matches(const bng_dtype *t, size_t unit, size_t channel, int fused,
                                      int core_mask, unsigned seed)
{
    const long long flags = BNG_FWD_GLOBAL_STATS | (fused ? 0 : BNG_FWD_FIX_GAMMA);
    fwd_case ref, k;
    bng_buffer scale, offset, mean, variance, x_before;
    fwd_vendor_call v;
    size_t c;

    fwd_init(&ref, t, unit, channel, DATA_RANDOM, flags, seed);
    if (!fused)
        for (c = 0; c < channel; c++)
            bng_stats_set(t, ref.bias.p, c, 0.0);
    scale = fwd_vendor_array(&ref, &ref.scale, 0);
    offset = fwd_vendor_array(&ref, &ref.bias, 0);
    mean = fwd_vendor_array(&ref, &ref.moving_mean, !fused);
    variance = fwd_vendor_array(&ref, &ref.moving_var, !fused);
    fwd_copy(&k, &ref);
    fwd_run(&ref, ref.y.p);
    ck_assert_int_eq(ref.params[BNG_PARAM_STATUS], BNG_OK);
    x_before = bng_buffer_new(k.x.bytes);
    memcpy(x_before.p, k.x.p, k.x.bytes);
    memset(&v, 0, sizeof v);
    v.t = t;
    v.fused = fused;
    v.input = k.x.p;
    v.scale = scale.p;
    v.offset = offset.p;
    v.mean = mean.p;
    v.variance = variance.p;
    v.output = k.y.p;
    v.unit = (int)unit;
    v.channel = (int)channel;
    v.core_mask = core_mask;
    v.epsilon = (float)slot_float(ref.params[BNG_FWD_PARAM_EPS]);
    if (fwd_vendor_run(&v) != BNG_OK)
        ck_abort_msg("%s %s_s %zux%zu: status %d", t->name, fused ? "fusedbatchnorm" : "batchnorm",
                     unit, channel, v.status[0]);
    bng_expect_same(ref.y.p, k.y.p, k.y.bytes, t->name,
                    fused ? "fusedbatchnorm_s against the forward with GLOBAL_STATS"
                          : "batchnorm_s against the forward with GLOBAL_STATS and FIX_GAMMA");
    bng_expect_same(x_before.p, k.x.p, k.x.bytes, t->name, "the vendor call's input");
    if (!bng_buffer_guards_intact(&k.y))
        ck_abort_msg("%s vendor call wrote outside its output", t->name);
    {
        /* its per-channel arrays are only read: still what the forward read */
        bng_buffer again[4];
        const bng_buffer *given[4] = {&scale, &offset, &mean, &variance};
        again[0] = fwd_vendor_array(&ref, &ref.scale, 0);
        again[1] = fwd_vendor_array(&ref, &ref.bias, 0);
        again[2] = fwd_vendor_array(&k, &k.moving_mean, !fused);
        again[3] = fwd_vendor_array(&k, &k.moving_var, !fused);
        for (c = 0; c < 4; c++) {
            if (c >= 2 || fused)
                bng_expect_same(again[c].p, given[c]->p, given[c]->bytes, t->name,
                                "a vendor call's per-channel array");
            if (!bng_buffer_guards_intact(given[c]))
                ck_abort_msg("%s vendor call wrote past a per-channel array", t->name);
            bng_buffer_free(&again[c]);
        }
    }
    bng_buffer_free(&scale);
    bng_buffer_free(&offset);
    bng_buffer_free(&mean);
    bng_buffer_free(&variance);
    bng_buffer_free(&x_before);
    fwd_free(&ref);
    fwd_free(&k);
}

START_TEST(test_forward_vendor_inference_calls)
{
    size_t channels[64], n = fwd_channels(T, channels), c;
    const size_t units[] = {1, 300};

    if (T->batchnorm_s == NULL)
        return;
    for (c = 0; c < n; c++) {
        fwd_expect_vendor_matches(T, units[c % 2], channels[c], 1, FULL_MASK, (unsigned)c);
        fwd_expect_vendor_matches(T, units[(c + 1) % 2], channels[c], 0, c % 2 ? 0x5 : FULL_MASK,
                                  (unsigned)c + 50u);
    }
}
END_TEST

/* Their refusals: the status, nothing written. */
START_TEST(test_forward_vendor_refusals)
{
    fwd_case k;
    fwd_vendor_call v;
    bng_buffer mean, variance;
    size_t i;

    if (T->batchnorm_s == NULL)
        return;
    fwd_init(&k, T, 40, 20, DATA_RANDOM, 0, 3u);
    mean = fwd_vendor_array(&k, &k.moving_mean, 1);
    variance = fwd_vendor_array(&k, &k.moving_var, 1);
    memset(&v, 0, sizeof v);
    v.t = T;
    v.input = k.x.p;
    v.mean = mean.p;
    v.variance = variance.p;
    v.output = k.y.p;
    v.unit = 40;
    v.channel = 20;
    v.epsilon = 1e-5f;
    v.core_mask = FULL_MASK;
    for (i = 0; i < 7; i++) {
        const int expected[] = {BNG_ENULL, BNG_EBATCH, BNG_EVALUE, BNG_ECOREMASK, BNG_EOVERLAP,
                                BNG_ENULL, BNG_ENULL};
        fwd_vendor_call w = v;
        if (i >= 5) {       /* fusedbatchnorm_s reads scale and offset: NULL is refused */
            w.fused = 1;
            w.scale = i == 5 ? NULL : k.scale.p;
            w.offset = i == 6 ? NULL : k.bias.p;
            w.mean = k.moving_mean.p;
            w.variance = k.moving_var.p;
        }
        if (i == 0)
            w.input = NULL;
        else if (i == 1)
            w.unit = 0;
        else if (i == 2)
            w.epsilon = 0.0f;
        else if (i == 3)
            w.core_mask = 0;
        else
            w.output = (char *)k.x.p + T->size;
        if (fwd_vendor_run(&w) != expected[i] || !bng_bytes_are_marked(k.y.p, k.y.bytes))
            ck_abort_msg("%s vendor call refusal %zu: status %d, or its output written", T->name, i,
                         w.status[0]);
    }
    bng_buffer_free(&mean);
    bng_buffer_free(&variance);
    fwd_free(&k);
}
END_TEST
#endif

void bng_forward_add_tests(Suite *s)
{
#if BNG_HAS_FORWARD
    const bng_test_case cases[] = {
        {"forward_within_bound", test_forward_within_bound, "private"},
        {"forward_large_mean", test_forward_large_mean, "private"},
        {"forward_same_bits", test_forward_generic_and_in_place_same_bits, "private"},
        {"forward_refusals", test_forward_refusals, "private"},
        {"forward_sqrt", test_forward_sqrt_is_ieee, "private"},
        {"forward_special_values", test_forward_special_values, "private"},
        {"forward_relu_is_the_mask", test_forward_relu_is_the_mask, "private"},
        {"forward_shared_matches_private", test_forward_shared_matches_private, "shared forward"},
        {"forward_shared_in_place", test_forward_shared_in_place, "shared forward"},
        {"forward_shared_refusals", test_forward_shared_refusals, "shared forward"},
        {"forward_partials_one_device", test_forward_partials_one_device, "shared forward"},
        {"forward_partials_devices", test_forward_partials_devices, "shared forward"},
        {"forward_partials_refusals", test_forward_partials_refusals, "private"},
        {"forward_vendor_calls", test_forward_vendor_inference_calls, "shared forward"},
        {"forward_vendor_refusals", test_forward_vendor_refusals, "shared forward"},
    };
    bng_add_cases(s, cases, sizeof cases / sizeof cases[0]);
#else
    (void)s;
#endif
}
