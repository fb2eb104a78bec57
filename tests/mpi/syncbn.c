/* Synchronized batch norm, backward, over MPI (make syncbn NP=4; make test runs 1, 2
 * and 3 ranks): one step of batch_norm_grad_ext.h's three calls across processes,
 * each rank holding a different number of rows of one global batch.
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
} dtype;

static void f32_set(void *a, size_t i, double v) { ((float *)a)[i] = (float)v; }
static double f32_get(const void *a, size_t i) { return ((const float *)a)[i]; }
static void fp_vendor_p(void *x, void *dy, void *dx, long long *p) { fp_batch_norm_grad_p(x, dy, dx, p); }
static void fp_reduce_p(void *x, void *dy, long long *p) { fp_batch_norm_grad_reduce_p(x, dy, p); }
static void fp_apply_p(void *x, void *dy, void *dx, long long *p) { fp_batch_norm_grad_apply_p(x, dy, dx, p); }
static void fp_reduce_s(void *x, void *dy, int m) { fp_batch_norm_grad_reduce_s(x, dy, m); }
static void fp_apply_s(void *x, void *dy, void *dx, int m) { fp_batch_norm_grad_apply_s(x, dy, dx, m); }
static const dtype f32 = {"fp32", 4, 4, 0, f32_set, f32_get, f32_set, f32_get,
                          fp_vendor_p, fp_reduce_p, fp_apply_p, fp_reduce_s, fp_apply_s};

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
                          hp_vendor_p, hp_reduce_p, hp_apply_p, hp_reduce_s, hp_apply_s};
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

/* Rank 0 collects every rank's rows of dx; every rank's dbias and dscale must be the
 * same bits as rank 0's. */
static void collect(const problem *p, unsigned char *dx, const unsigned char *dbias, const unsigned char *dscale)
{
    const size_t C = p->channel, row_bytes = C * p->t->size, stats_bytes = C * p->t->stats_size;
    int *counts = alloc((size_t)ranks * sizeof(int)), *displs = alloc((size_t)ranks * sizeof(int));
    unsigned char *stats = alloc((size_t)ranks * 2 * stats_bytes), *mine = alloc(2 * stats_bytes);
    size_t first, rows;
    int q, same = 1;

    for (q = 0; q < ranks; q++) {
        rows_of(p->batch, q, &first, &rows);
        counts[q] = (int)(rows * row_bytes);
        displs[q] = (int)(first * row_bytes);
    }
    MPI_Gatherv(rank == 0 ? MPI_IN_PLACE : dx + displs[rank], counts[rank], MPI_BYTE,
                dx, counts, displs, MPI_BYTE, 0, MPI_COMM_WORLD);
    memcpy(mine, dbias, stats_bytes);
    memcpy(mine + stats_bytes, dscale, stats_bytes);
    MPI_Gather(mine, (int)(2 * stats_bytes), MPI_BYTE, stats, (int)(2 * stats_bytes), MPI_BYTE, 0, MPI_COMM_WORLD);
    for (q = 1; rank == 0 && q < ranks; q++)
        same &= memcmp(stats, stats + (size_t)q * 2 * stats_bytes, 2 * stats_bytes) == 0;
    if (!same)
        fail("the ranks' dbias or dscale differ");
    free(counts);
    free(displs);
    free(stats);
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
        ok &= run_case(&f32, batch, channels[i], repeat, (unsigned)i + 1);
#if BNG_HAS_F16
        ok &= run_case(&f16, batch, channels[i], repeat, (unsigned)i + 11);
#endif
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return ok ? 0 : 1;
}
