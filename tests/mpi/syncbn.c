/* Synchronized batch norm over MPI (make syncbn NP=4; make test runs 1, 2 and 3 ranks),
 * each rank holding a different number of rows of one global batch: the training
 * forward's step (batch_norm_fwd.h, where the target has it; below) and the backward's,
 * one step of batch_norm_grad_ext.h's three calls across processes.
 *
 *   1. reduce (_p, then _s on the emulated cluster): this rank's rows -> partial sums;
 *   2. MPI_Allgather of every rank's buffer, then each rank adds them in rank order,
 *      starting from rank 0's buffer: the same bits on every rank and on every run,
 *      whatever the timing (MPI_Allreduce would leave the order to Open MPI);
 *   3. apply: the global buffer -> dbias, dscale (global; not all-reduced again) and dx
 *      of this rank's rows.
 *
 * Checked, per storage type and channel count (a specialized one, one the generic
 * kernel runs): dx, dbias and dscale against a float64 evaluation of the whole batch,
 * as error / bound ratios (docs/contract.md section 9 with the whole batch's m; the
 * contract allows K + ranks); every rank's dbias and dscale the same bits; _s the same
 * bits as _p; with one rank, the vendor's call bit for bit; and the step repeated with
 * ranks delayed at random before the gather, the same bits every time (a hash is
 * printed, for comparing whole runs).
 *
 *   syncbn [--batch B] [--repeat N]
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "batch_norm_grad.h"
#include "batch_norm_grad_ext.h"
#include "bng_kernels.h"
#include "bng_reference.h"
#if BNG_HAS_FORWARD
#include "batch_norm_fwd.h"
#endif

static int rank, ranks;

static void fail(const char *what)
{
    fprintf(stderr, "syncbn: rank %d: %s\n", rank, what);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static void *alloc(size_t bytes)
{
    void *p = calloc(bytes ? bytes : 1, 1);
    if (!p)
        fail("out of memory");
    return p;
}

/* One storage type: element sizes, conversions, the entry points. */
typedef struct {
    const char *name;
    size_t size, stats_size;
    int half_output;                    /* bng_reference.h's BNG_REF_HALF_* */
    void (*set)(void *a, size_t i, double v);
    double (*get)(const void *a, size_t i);
    void (*stats_set)(void *a, size_t i, double v);
    double (*stats_get)(const void *a, size_t i);
    void (*vendor_p)(void *x, void *dy, void *dx, long long *params);
    void (*reduce_p)(void *x, void *dy, long long *params);
    void (*apply_p)(void *x, void *dy, void *dx, long long *params);
    void (*reduce_s)(void *x, void *dy, int mask);
    void (*apply_s)(void *x, void *dy, void *dx, int mask);
    void (*forward_p)(void *x, void *y, long long *params);
    void (*forward_s)(void *x, void *y, int mask);
} dtype;

#if BNG_HAS_FORWARD
static void fp_forward_p(void *x, void *y, long long *p) { fp_batch_norm_forward_p(x, y, p); }
static void fp_forward_s(void *x, void *y, int m) { fp_batch_norm_forward_s(x, y, m); }
#define FP_FORWARD , fp_forward_p, fp_forward_s
#if BNG_HAS_F16
static void hp_forward_p(void *x, void *y, long long *p) { hp_batch_norm_forward_p(x, y, p); }
static void hp_forward_s(void *x, void *y, int m) { hp_batch_norm_forward_s(x, y, m); }
#define HP_FORWARD , hp_forward_p, hp_forward_s
#endif
#else
#define FP_FORWARD , NULL, NULL
#define HP_FORWARD , NULL, NULL
#endif

static void f32_set(void *a, size_t i, double v) { ((float *)a)[i] = (float)v; }
static double f32_get(const void *a, size_t i) { return ((const float *)a)[i]; }
static void fp_vendor_p(void *x, void *dy, void *dx, long long *p) { fp_batch_norm_grad_p(x, dy, dx, p); }
static void fp_reduce_p(void *x, void *dy, long long *p) { fp_batch_norm_grad_reduce_p(x, dy, p); }
static void fp_apply_p(void *x, void *dy, void *dx, long long *p) { fp_batch_norm_grad_apply_p(x, dy, dx, p); }
static void fp_reduce_s(void *x, void *dy, int m) { fp_batch_norm_grad_reduce_s(x, dy, m); }
static void fp_apply_s(void *x, void *dy, void *dx, int m) { fp_batch_norm_grad_apply_s(x, dy, dx, m); }
static const dtype f32 = {"fp32", 4, 4, 0, f32_set, f32_get, f32_set, f32_get,
                          fp_vendor_p, fp_reduce_p, fp_apply_p, fp_reduce_s, fp_apply_s FP_FORWARD};

#if BNG_HAS_F16
static void f16_set(void *a, size_t i, double v) { ((half *)a)[i] = bng_half_from_float((float)v); }
static double f16_get(const void *a, size_t i) { return bng_half_to_float(((const half *)a)[i]); }
#define STATS_HALF (sizeof(bng_hp_stats_t) == sizeof(half))
static void hs_set(void *a, size_t i, double v) { if (STATS_HALF) f16_set(a, i, v); else f32_set(a, i, v); }
static double hs_get(const void *a, size_t i) { return STATS_HALF ? f16_get(a, i) : f32_get(a, i); }
static void hp_vendor_p(void *x, void *dy, void *dx, long long *p) { hp_batch_norm_grad_p(x, dy, dx, p); }
static void hp_reduce_p(void *x, void *dy, long long *p) { hp_batch_norm_grad_reduce_p(x, dy, p); }
static void hp_apply_p(void *x, void *dy, void *dx, long long *p) { hp_batch_norm_grad_apply_p(x, dy, dx, p); }
static void hp_reduce_s(void *x, void *dy, int m) { hp_batch_norm_grad_reduce_s(x, dy, m); }
static void hp_apply_s(void *x, void *dy, void *dx, int m) { hp_batch_norm_grad_apply_s(x, dy, dx, m); }
static const dtype f16 = {"fp16", 2, sizeof(bng_hp_stats_t),
                          BNG_REF_HALF_DX | (STATS_HALF ? BNG_REF_HALF_STATS : 0),
                          f16_set, f16_get, hs_set, hs_get,
                          hp_vendor_p, hp_reduce_p, hp_apply_p, hp_reduce_s, hp_apply_s HP_FORWARD};
#endif

/* The same global batch on every rank, from a seed (xorshift32). */
static unsigned state;
static double uniform(double lo, double hi)
{
    state ^= state << 13;
    state ^= state >> 17;
    state ^= state << 5;
    return lo + (hi - lo) * ((state >> 8) / 16777216.0);
}

typedef struct {
    const dtype *t;
    size_t batch, channel;
    unsigned char *x, *dy, *mean, *invar, *scale;
} problem;

static void problem_init(problem *p, const dtype *t, size_t batch, size_t channel, unsigned seed)
{
    size_t b, c;
    p->t = t;
    p->batch = batch;
    p->channel = channel;
    p->x = alloc(batch * channel * t->size);
    p->dy = alloc(batch * channel * t->size);
    p->mean = alloc(channel * t->stats_size);
    p->invar = alloc(channel * t->stats_size);
    p->scale = alloc(channel * t->stats_size);
    state = seed * 2654435761u + 1u;
    for (c = 0; c < channel; c++) {
        const double center = uniform(-2, 2), spread = uniform(0.25, 3);
        double sum = 0, sq = 0;
        for (b = 0; b < batch; b++) {
            t->set(p->x, b * channel + c, center + spread * uniform(-1.7, 1.7));
            t->set(p->dy, b * channel + c, (0.5 + (double)(c % 4)) * uniform(-1, 1));
            sum += t->get(p->x, b * channel + c);
        }
        for (b = 0; b < batch; b++) {
            const double d = t->get(p->x, b * channel + c) - sum / (double)batch;
            sq += d * d;
        }
        t->stats_set(p->mean, c, sum / (double)batch);
        t->stats_set(p->invar, c, 1.0 / sqrt(sq / (double)batch + 1e-5));
        t->stats_set(p->scale, c, uniform(0.5, 2) * (c % 3 == 1 ? -1 : 1));
    }
}

static void problem_free(problem *p)
{
    free(p->x);
    free(p->dy);
    free(p->mean);
    free(p->invar);
    free(p->scale);
}

/* Rank r's rows: the batch split in proportion to r + 1 (every rank at least one). */
static void rows_of(size_t batch, int r, size_t *first, size_t *rows)
{
    const size_t weight = (size_t)ranks * (size_t)(ranks + 1) / 2;
    const size_t before = (size_t)r * (size_t)(r + 1) / 2, upto = before + (size_t)r + 1;
    const size_t spare = batch - (size_t)ranks;        /* one row each, the rest shared */
    *first = (size_t)r + spare * before / weight;
    *rows = 1 + spare * upto / weight - spare * before / weight;
}

static void fill_params(long long *params, const problem *p, void *dbias, void *dscale,
                        size_t rows, float *sums)
{
    memset(params, 0, BNG_EXT_PARAMS_LEN * sizeof *params);
    params[BNG_PARAM_MEAN] = (long long)(intptr_t)p->mean;
    params[BNG_PARAM_INVAR] = (long long)(intptr_t)p->invar;
    params[BNG_PARAM_SCALE] = (long long)(intptr_t)p->scale;
    params[BNG_PARAM_DBIAS] = (long long)(intptr_t)dbias;
    params[BNG_PARAM_DSCALE] = (long long)(intptr_t)dscale;
    params[BNG_PARAM_BATCH] = (long long)rows;
    params[BNG_PARAM_CHANNEL] = (long long)p->channel;
    params[BNG_PARAM_IS_TRAIN] = 1;
    params[BNG_PARAM_SUMS] = (long long)(intptr_t)sums;
    params[BNG_PARAM_FLAGS] = 0;
}

/* _s: the parameter block in (emulated) shared memory, the status back. */
static long long run_shared_reduce(const dtype *t, long long *params, void *x, void *dy)
{
    memcpy(BNG_SHARED_PARAMS, params, BNG_EXT_PARAMS_LEN * sizeof *params);
    t->reduce_s(x, dy, (1 << BNG_TARGET_CORES) - 1);
    return BNG_SHARED_PARAMS[BNG_PARAM_STATUS];
}

static long long run_shared_apply(const dtype *t, long long *params, void *x, void *dy, void *dx)
{
    memcpy(BNG_SHARED_PARAMS, params, BNG_EXT_PARAMS_LEN * sizeof *params);
    t->apply_s(x, dy, dx, (1 << BNG_TARGET_CORES) - 1);
    return BNG_SHARED_PARAMS[BNG_PARAM_STATUS];
}

/* One synchronized step on this rank's rows: dx of the rows, dbias and dscale.
 * `jitter`: delay this rank before the gather by a pseudo-random time. */
static void sync_step(const problem *p, int shared, unsigned jitter, unsigned char *dx,
                      unsigned char *dbias, unsigned char *dscale)
{
    const dtype *t = p->t;
    const size_t C = p->channel, floats = BNG_SUMS_FLOATS(C);
    float *mine = alloc(floats * sizeof(float)), *all = alloc((size_t)ranks * floats * sizeof(float));
    float *total = alloc(floats * sizeof(float));
    long long params[BNG_EXT_PARAMS_LEN], status;
    size_t first, rows, i;
    int q;

    rows_of(p->batch, rank, &first, &rows);
    fill_params(params, p, dbias, dscale, rows, mine);
    if (shared)
        status = run_shared_reduce(t, params, p->x + first * C * t->size, p->dy + first * C * t->size);
    else {
        t->reduce_p(p->x + first * C * t->size, p->dy + first * C * t->size, params);
        status = params[BNG_PARAM_STATUS];
    }
    if (status != BNG_OK)
        fail("reduce failed");
    if (jitter) {
        struct timespec delay = {0, (long)(jitter * 2654435761u % 3000000u)};
        nanosleep(&delay, NULL);
    }
    /* Every rank gets every buffer; every rank adds them in rank order. */
    MPI_Allgather(mine, (int)floats, MPI_FLOAT, all, (int)floats, MPI_FLOAT, MPI_COMM_WORLD);
    memcpy(total, all, floats * sizeof(float));
    for (q = 1; q < ranks; q++)
        for (i = 0; i < floats; i++)
            total[i] += all[(size_t)q * floats + i];
    fill_params(params, p, dbias, dscale, rows, total);
    if (shared)
        status = run_shared_apply(t, params, p->x + first * C * t->size, p->dy + first * C * t->size,
                                  dx + first * C * t->size);
    else {
        t->apply_p(p->x + first * C * t->size, p->dy + first * C * t->size, dx + first * C * t->size, params);
        status = params[BNG_PARAM_STATUS];
    }
    if (status != BNG_OK)
        fail("apply failed");
    free(mine);
    free(all);
    free(total);
}

/* Rank 0 collects every rank's rows (of `row_bytes` each) of `data` into its copy. */
static void gather_rows(size_t batch, size_t row_bytes, unsigned char *data)
{
    int *counts = alloc((size_t)ranks * sizeof(int)), *displs = alloc((size_t)ranks * sizeof(int));
    size_t first, rows;
    int q;

    for (q = 0; q < ranks; q++) {
        rows_of(batch, q, &first, &rows);
        counts[q] = (int)(rows * row_bytes);
        displs[q] = (int)(first * row_bytes);
    }
    MPI_Gatherv(rank == 0 ? MPI_IN_PLACE : data + displs[rank], counts[rank], MPI_BYTE,
                data, counts, displs, MPI_BYTE, 0, MPI_COMM_WORLD);
    free(counts);
    free(displs);
}

/* Every rank's `bytes` at `mine` must be the same bits as rank 0's. */
static void expect_same_on_every_rank(const void *mine, size_t bytes, const char *what)
{
    unsigned char *all = alloc((size_t)ranks * bytes);
    int q, same = 1;

    MPI_Gather(mine, (int)bytes, MPI_BYTE, all, (int)bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
    for (q = 1; rank == 0 && q < ranks; q++)
        same &= memcmp(all, all + (size_t)q * bytes, bytes) == 0;
    if (!same)
        fail(what);
    free(all);
}

/* Rank 0 collects every rank's rows of dx; every rank's dbias and dscale must be the
 * same bits as rank 0's. */
static void collect(const problem *p, unsigned char *dx, const unsigned char *dbias, const unsigned char *dscale)
{
    const size_t stats_bytes = p->channel * p->t->stats_size;
    unsigned char *mine = alloc(2 * stats_bytes);

    gather_rows(p->batch, p->channel * p->t->size, dx);
    memcpy(mine, dbias, stats_bytes);
    memcpy(mine + stats_bytes, dscale, stats_bytes);
    expect_same_on_every_rank(mine, 2 * stats_bytes, "the ranks' dbias or dscale differ");
    free(mine);
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    size_t i;
    for (i = 0; i < n; i++) {
        h ^= b[i];
        h *= 1099511628211ull;
    }
    return h;
}

/* The largest |error| / bound of dx, dbias and dscale against the float64 reference. */
static void ratios(const problem *p, const unsigned char *dx, const unsigned char *dbias,
                   const unsigned char *dscale, double out[3])
{
    const dtype *t = p->t;
    const size_t n = p->batch * p->channel, C = p->channel;
    double *x = alloc(n * sizeof(double)), *dy = alloc(n * sizeof(double));
    double *mean = alloc(C * sizeof(double)), *invar = alloc(C * sizeof(double)), *scale = alloc(C * sizeof(double));
    bng_reference r = bng_reference_alloc(p->batch, C);
    size_t i;

    for (i = 0; i < n; i++) {
        x[i] = t->get(p->x, i);
        dy[i] = t->get(p->dy, i);
    }
    for (i = 0; i < C; i++) {
        mean[i] = t->stats_get(p->mean, i);
        invar[i] = t->stats_get(p->invar, i);
        scale[i] = t->stats_get(p->scale, i);
    }
    bng_reference_eval(p->batch, C, 1, x, dy, mean, invar, scale, t->half_output, &r);
    out[0] = out[1] = out[2] = 0;
    for (i = 0; i < n; i++)
        out[0] = fmax(out[0], fabs(t->get(dx, i) - r.dx[i]) / r.dx_bound[i]);
    for (i = 0; i < C; i++) {
        out[1] = fmax(out[1], fabs(t->stats_get(dbias, i) - r.dbias[i]) / r.dbias_bound[i]);
        out[2] = fmax(out[2], fabs(t->stats_get(dscale, i) - r.dscale[i]) / r.dscale_bound[i]);
    }
    bng_reference_free(&r);
    free(x);
    free(dy);
    free(mean);
    free(invar);
    free(scale);
}

static int run_case(const dtype *t, size_t batch, size_t channel, int repeat, unsigned seed)
{
    problem p;
    const size_t data = batch * channel * t->size, stats = channel * t->stats_size;
    unsigned char *dx = alloc(data), *dbias = alloc(stats), *dscale = alloc(stats);
    unsigned char *dx_s = alloc(data), *dbias_s = alloc(stats), *dscale_s = alloc(stats);
    uint64_t hash = 0;
    int run, ok = 1;

    problem_init(&p, t, batch, channel, seed);
    for (run = 0; run < repeat; run++) {
        uint64_t h;
        sync_step(&p, 0, run ? (unsigned)(rank * 7919 + run * 104729) : 0, dx, dbias, dscale);
        sync_step(&p, 1, run ? (unsigned)(rank * 104729 + run * 7919) : 0, dx_s, dbias_s, dscale_s);
        collect(&p, dx, dbias, dscale);
        collect(&p, dx_s, dbias_s, dscale_s);
        if (rank != 0)
            continue;
        if (memcmp(dx, dx_s, data) || memcmp(dbias, dbias_s, stats) || memcmp(dscale, dscale_s, stats)) {
            fprintf(stderr, "syncbn: %s %zux%zu: _s differs from _p\n", t->name, batch, channel);
            ok = 0;
        }
        h = fnv(fnv(fnv(1469598103934665603ull, dx, data), dbias, stats), dscale, stats);
        if (run > 0 && h != hash) {
            fprintf(stderr, "syncbn: %s %zux%zu: run %d gave other bits than run 0\n", t->name, batch, channel, run);
            ok = 0;
        }
        hash = h;
    }
    if (rank == 0) {
        /* The single-process vendor call on the whole batch. */
        unsigned char *dx1 = alloc(data), *dbias1 = alloc(stats), *dscale1 = alloc(stats);
        long long params[BNG_EXT_PARAMS_LEN];
        double sync[3], single[3];
        const double K = 16.0 + 4.0 * sqrt((double)batch), allowed = (K + ranks) / K;
        char rows_text[256] = "";
        size_t first, rows;
        int q;

        fill_params(params, &p, dbias1, dscale1, batch, NULL);
        t->vendor_p(p.x, p.dy, dx1, params);
        if (params[BNG_PARAM_STATUS] != BNG_OK)
            fail("the vendor call failed");
        ratios(&p, dx, dbias, dscale, sync);
        ratios(&p, dx1, dbias1, dscale1, single);
        for (q = 0; q < ranks && strlen(rows_text) < sizeof rows_text - 16; q++) {
            rows_of(batch, q, &first, &rows);
            snprintf(rows_text + strlen(rows_text), sizeof rows_text - strlen(rows_text), "%s%zu",
                     q ? "+" : "", rows);
        }
        printf("syncbn: %d rank%s, %s, batch %zu = %s rows, %zu channels: |error|/bound dx %.4f dbias %.4f "
               "dscale %.4f (one process, the vendor's call: %.4f %.4f %.4f); %d runs bit-identical, "
               "_s = _p, every rank's dbias/dscale the same: hash %016llx\n",
               ranks, ranks > 1 ? "s" : "", t->name, batch, rows_text, channel, sync[0], sync[1], sync[2],
               single[0], single[1], single[2], repeat, (unsigned long long)hash);
        if (sync[0] > allowed || sync[1] > allowed || sync[2] > allowed) {
            fprintf(stderr, "syncbn: %s %zux%zu: beyond the bound (K + ranks: ratio %.4f allowed)\n",
                    t->name, batch, channel, allowed);
            ok = 0;
        }
        if (ranks == 1 && (memcmp(dx, dx1, data) || memcmp(dbias, dbias1, stats) || memcmp(dscale, dscale1, stats))) {
            fprintf(stderr, "syncbn: %s %zux%zu: one rank differs from the vendor's call\n", t->name, batch, channel);
            ok = 0;
        }
        free(dx1);
        free(dbias1);
        free(dscale1);
    }
    problem_free(&p);
    free(dx);
    free(dbias);
    free(dscale);
    free(dx_s);
    free(dbias_s);
    free(dscale_s);
    return ok;
}

#if BNG_HAS_FORWARD
/* ---- the forward: PARTIALS_OUT on each rank's rows, an all-gather merged in rank order
 * from rank 0's (bng_fwd_partials_merge), PARTIALS_IN on each rank's rows ---- */

/* One forward problem: x with each channel's mean 10^4 (half: 10^2) times its spread,
 * scale, bias and the moving statistics, the same on every rank. */
typedef struct {
    const dtype *t;
    size_t batch, channel;
    unsigned char *x, *scale, *bias, *moving_mean, *moving_var;
} fwd_problem;

static void fwd_problem_init(fwd_problem *p, const dtype *t, size_t batch, size_t channel, unsigned seed)
{
    const double ratio = t->size == 4 ? 1e4 : 1e2;
    size_t b, c;

    p->t = t;
    p->batch = batch;
    p->channel = channel;
    p->x = alloc(batch * channel * t->size);
    p->scale = alloc(channel * t->stats_size);
    p->bias = alloc(channel * t->stats_size);
    p->moving_mean = alloc(channel * t->stats_size);
    p->moving_var = alloc(channel * t->stats_size);
    state = seed * 2654435761u + 1u;
    for (c = 0; c < channel; c++) {
        const double spread = uniform(0.5, 2), center = ratio * spread * (c % 2 ? -1 : 1);
        for (b = 0; b < batch; b++)
            t->set(p->x, b * channel + c, center + spread * uniform(-1.7, 1.7));
        t->stats_set(p->scale, c, uniform(-1.5, 1.5));
        t->stats_set(p->bias, c, uniform(-1, 1));
        t->stats_set(p->moving_mean, c, uniform(-1, 1));
        t->stats_set(p->moving_var, c, uniform(0.5, 2));
    }
}

static void fwd_problem_free(fwd_problem *p)
{
    free(p->x);
    free(p->scale);
    free(p->bias);
    free(p->moving_mean);
    free(p->moving_var);
}

/* A rank's outputs: y of its rows, and its copies of the saved and moving statistics
 * (starting from the problem's moving ones). */
typedef struct {
    unsigned char *y, *stats;     /* stats: mean, invar, moving mean, moving variance */
} fwd_outputs;

static void fwd_block(long long *params, const fwd_problem *p, unsigned char *stats, size_t rows,
                      long long flags, float *partials)
{
    const size_t s = p->channel * p->t->stats_size;
    int i;

    for (i = 0; i < BNG_FWD_PARAMS_LEN; i++)
        params[i] = 0;
    params[BNG_PARAM_MEAN] = (long long)(intptr_t)stats;
    params[BNG_PARAM_INVAR] = (long long)(intptr_t)(stats + s);
    params[BNG_PARAM_SCALE] = (long long)(intptr_t)p->scale;
    params[BNG_FWD_PARAM_BIAS] = (long long)(intptr_t)p->bias;
    params[BNG_FWD_PARAM_MOVING_MEAN] = (long long)(intptr_t)(stats + 2 * s);
    params[BNG_FWD_PARAM_MOVING_VAR] = (long long)(intptr_t)(stats + 3 * s);
    params[BNG_PARAM_BATCH] = (long long)rows;
    params[BNG_PARAM_CHANNEL] = (long long)p->channel;
    params[BNG_FWD_PARAM_EPS] = bng_fwd_float(1e-3f);
    params[BNG_FWD_PARAM_MOMENTUM] = bng_fwd_float(0.9f);
    params[BNG_FWD_PARAM_PARTIALS] = (long long)(intptr_t)partials;
    params[BNG_PARAM_FLAGS] = flags;
}

static long long fwd_call(const dtype *t, long long *params, void *x, void *y, int shared)
{
    if (!shared) {
        t->forward_p(x, y, params);
        return params[BNG_PARAM_STATUS];
    }
    memcpy(BNG_SHARED_PARAMS, params, BNG_FWD_PARAMS_LEN * sizeof *params);
    t->forward_s(x, y, (1 << BNG_TARGET_CORES) - 1);
    return BNG_SHARED_PARAMS[BNG_PARAM_STATUS];
}

/* One synchronized forward on this rank's rows (y at its rows of out->y). */
static void fwd_sync_step(const fwd_problem *p, int shared, unsigned jitter, fwd_outputs *out)
{
    const dtype *t = p->t;
    const size_t C = p->channel, floats = BNG_FWD_PARTIALS_FLOATS(C), s = C * t->stats_size;
    float *mine = alloc(floats * sizeof(float)), *all = alloc((size_t)ranks * floats * sizeof(float));
    long long params[BNG_FWD_PARAMS_LEN];
    size_t first, rows;
    unsigned char *x;
    int q;

    rows_of(p->batch, rank, &first, &rows);
    x = p->x + first * C * t->size;
    memcpy(out->stats + 2 * s, p->moving_mean, s);
    memcpy(out->stats + 3 * s, p->moving_var, s);
    fwd_block(params, p, out->stats, rows, BNG_FWD_PARTIALS_OUT, mine);
    if (fwd_call(t, params, x, NULL, shared) != BNG_OK)
        fail("the forward's PARTIALS_OUT failed");
    if (jitter) {
        struct timespec delay = {0, (long)(jitter * 2654435761u % 3000000u)};
        nanosleep(&delay, NULL);
    }
    MPI_Allgather(mine, (int)floats, MPI_FLOAT, all, (int)floats, MPI_FLOAT, MPI_COMM_WORLD);
    for (q = 1; q < ranks; q++)
        bng_fwd_partials_merge(all, all + (size_t)q * floats, (long long)C);
    fwd_block(params, p, out->stats, rows, BNG_FWD_PARTIALS_IN, all);
    if (fwd_call(t, params, x, out->y + first * C * t->size, shared) != BNG_OK)
        fail("the forward's PARTIALS_IN failed");
    free(mine);
    free(all);
}

/* Rank 0 collects y; every rank's statistics must be the same bits as rank 0's. */
static void fwd_collect(const fwd_problem *p, fwd_outputs *out)
{
    gather_rows(p->batch, p->channel * p->t->size, out->y);
    expect_same_on_every_rank(out->stats, 4 * p->channel * p->t->stats_size,
                              "the ranks' saved or moving statistics differ");
}

/* The largest |error| / bound of y and of the saved mean against float64 on the whole
 * batch (docs/contract.md section 15, the synchronized forward's chain: K with the
 * ranks' merges and their own groups; R the largest distance of a value from any rank's
 * shift, its first row). */
static void fwd_ratios(const fwd_problem *p, const fwd_outputs *out, double ratio[2])
{
    const dtype *t = p->t;
    const size_t B = p->batch, C = p->channel;
    const double u = 1.0 / 16777216.0, out_u = t->size == 4 ? u : 1.0 / 2048;
    const double stat_u = t->stats_size == 4 ? u : 1.0 / 2048, eps = 1e-3f;
    const double K = 2.0 * (32 + 32 + 64 + 64 + ranks) + 16;
    size_t b, c, first, rows;
    int q;

    ratio[0] = ratio[1] = 0;
    for (c = 0; c < C; c++) {
        double mu = 0, v = 0, R = 0, invstd, e_var, e_inv, gamma, beta;
        for (b = 0; b < B; b++)
            mu += t->get(p->x, b * C + c);
        mu /= (double)B;
        for (b = 0; b < B; b++) {
            const double d = t->get(p->x, b * C + c) - mu;
            v += d * d;
            for (q = 0; q < ranks; q++) {
                rows_of(B, q, &first, &rows);
                R = fmax(R, fabs(t->get(p->x, b * C + c) - t->get(p->x, first * C + c)));
            }
        }
        v /= (double)B;
        invstd = 1.0 / sqrt(v + eps);
        e_var = (K + 1) * u * v + (K * u * R) * (K * u * R);
        e_inv = invstd * (e_var / (v + eps) / 2 + 4 * u);
        gamma = t->stats_get(p->scale, c);
        beta = t->stats_get(p->bias, c);
        ratio[1] = fmax(ratio[1], fabs(t->stats_get(out->stats, c) - mu)
                                  / (u * fabs(mu) + K * u * R + stat_u * fabs(mu) + 1e-300));
        for (b = 0; b < B; b++) {
            const double dev = t->get(p->x, b * C + c) - mu, ref = dev * invstd * gamma + beta;
            const double bound = fabs(gamma) * (fabs(dev) * e_inv + invstd * K * u * R)
                                 + 4 * u * (fabs(gamma * dev * invstd) + fabs(beta))
                                 + out_u * (fabs(ref) + 6.2e-5);
            ratio[0] = fmax(ratio[0], fabs(t->get(out->y, b * C + c) - ref) / bound);
        }
    }
}

static int run_forward_case(const dtype *t, size_t batch, size_t channel, int repeat, unsigned seed)
{
    fwd_problem p;
    const size_t data = batch * channel * t->size, stats = 4 * channel * t->stats_size;
    fwd_outputs o = {alloc(data), alloc(stats)}, o_s = {alloc(data), alloc(stats)};
    uint64_t hash = 0;
    int run, ok = 1;

    fwd_problem_init(&p, t, batch, channel, seed);
    for (run = 0; run < repeat; run++) {
        uint64_t h;
        fwd_sync_step(&p, 0, run ? (unsigned)(rank * 7919 + run * 104729) : 0, &o);
        fwd_sync_step(&p, 1, run ? (unsigned)(rank * 104729 + run * 7919) : 0, &o_s);
        fwd_collect(&p, &o);
        fwd_collect(&p, &o_s);
        if (rank != 0)
            continue;
        if (memcmp(o.y, o_s.y, data) || memcmp(o.stats, o_s.stats, stats)) {
            fprintf(stderr, "syncbn forward: %s %zux%zu: _s differs from _p\n", t->name, batch, channel);
            ok = 0;
        }
        h = fnv(fnv(1469598103934665603ull, o.y, data), o.stats, stats);
        if (run > 0 && h != hash) {
            fprintf(stderr, "syncbn forward: %s %zux%zu: run %d gave other bits than run 0\n", t->name,
                    batch, channel, run);
            ok = 0;
        }
        hash = h;
    }
    if (rank == 0) {
        /* One process, one call on the whole batch. */
        fwd_outputs one = {alloc(data), alloc(stats)};
        long long params[BNG_FWD_PARAMS_LEN];
        double ratio[2];

        memcpy(one.stats + 2 * channel * t->stats_size, p.moving_mean, channel * t->stats_size);
        memcpy(one.stats + 3 * channel * t->stats_size, p.moving_var, channel * t->stats_size);
        fwd_block(params, &p, one.stats, batch, 0, NULL);
        if (fwd_call(t, params, p.x, one.y, 0) != BNG_OK)
            fail("the forward on the whole batch failed");
        fwd_ratios(&p, &o, ratio);
        printf("syncbn forward: %d rank%s, %s, batch %zu, %zu channels, mean 1e%d spreads: |error|/bound "
               "y %.4f, saved mean %.4f; %d runs bit-identical, _s = _p, every rank's statistics the same: "
               "hash %016llx\n", ranks, ranks > 1 ? "s" : "", t->name, batch, channel,
               t->size == 4 ? 4 : 2, ratio[0], ratio[1], repeat, (unsigned long long)hash);
        if (ratio[0] > 1 || ratio[1] > 1) {
            fprintf(stderr, "syncbn forward: %s %zux%zu: beyond the bound\n", t->name, batch, channel);
            ok = 0;
        }
        if (ranks == 1 && (memcmp(o.y, one.y, data) || memcmp(o.stats, one.stats, stats))) {
            fprintf(stderr, "syncbn forward: %s %zux%zu: one rank differs from one call\n", t->name,
                    batch, channel);
            ok = 0;
        }
        free(one.y);
        free(one.stats);
    }
    fwd_problem_free(&p);
    free(o.y);
    free(o.stats);
    free(o_s.y);
    free(o_s.stats);
    return ok;
}
#endif

int main(int argc, char **argv)
{
    size_t batch = 5003;
    int repeat = 3, ok = 1, i;
    const size_t channels[] = {64, 100};     /* specialized, generic */

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    for (i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--batch"))
            batch = (size_t)strtoul(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--repeat"))
            repeat = atoi(argv[i + 1]);
    }
    if (batch < (size_t)ranks || repeat < 1)
        fail("usage: syncbn [--batch B (at least one row per rank)] [--repeat N]");
    for (i = 0; i < 2; i++) {
#if BNG_HAS_FORWARD
        ok &= run_forward_case(&f32, batch, channels[i], repeat, (unsigned)i + 21);
#if BNG_HAS_F16
        ok &= run_forward_case(&f16, batch, channels[i], repeat, (unsigned)i + 31);
#endif
#endif
        ok &= run_case(&f32, batch, channels[i], repeat, (unsigned)i + 1);
#if BNG_HAS_F16
        ok &= run_case(&f16, batch, channels[i], repeat, (unsigned)i + 11);
#endif
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return ok ? 0 : 1;
}
