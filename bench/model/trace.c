/* make model's trace program: runs the shipped driver's _s entry points under the
 * tracing HAL (include/host/bng_hal_trace.h) and writes the record of each call to
 * stdout, for generator/costmodel/ to replay against the part's figures.
 *
 *   trace [--copy] CALL...      CALL: f32:4096x64:0xff (dtype, batch x channel, core
 *                               mask), with :infer for is_train = 0
 *
 * Each call's record is framed by "call <dtype> <batch>x<channel> mask <mask> train
 * <0|1>" and "end". Without --copy the transfers move no data and x, dy, dx and the
 * per-channel arrays lie in memory that may not be touched (mapped without access): the
 * driver reaches them by DMA only, so a call of any size traces in the time its kernels
 * take on the private tiles. With --copy the arrays are real and filled, the transfers
 * copy, and each call's outputs are checked against _p's, bit for bit (the trace HAL is
 * then a HAL like any other): "end identical", or exit status 1.
 *
 * Built per target against a library whose driver was compiled with -include
 * bng_hal_trace.h (the kernel hook), linked with bng_hal_trace.c.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "batch_norm_grad.h"
#include "bng_hal_trace.h"
#include "bng_kernels.h"

#if defined(BNG_HAS_F16) && BNG_HAS_F16
#define HAS_HP 1
#else
#define HAS_HP 0
#endif

typedef struct {
    int half;                   /* hp_ (else fp_) */
    long long batch, channel;
    unsigned mask;
    int is_train;
} call;

/* The arrays of one call, in the order of the parameter block where they are in it. */
enum { X, DY, DX, MEAN, INVAR, SCALE, DBIAS, DSCALE, ARRAYS };

typedef struct {
    unsigned char *at[ARRAYS];
    size_t bytes[ARRAYS];
    unsigned char *block;       /* all of them */
    size_t block_bytes;
} arrays;

static void usage(void)
{
    fprintf(stderr, "usage: trace [--copy] DTYPE:BATCHxCHANNEL:MASK[:infer] ...\n");
    exit(2);
}

static int parse_call(const char *text, call *c)
{
    char dtype[8], mode[8] = "";
    int n = 0;

    if (sscanf(text, "%7[a-z0-9]:%lldx%lld:%x%n", dtype, &c->batch, &c->channel, &c->mask, &n) != 4)
        return 0;
    if (text[n] == ':' && sscanf(text + n + 1, "%7s", mode) != 1)
        return 0;
    c->is_train = strcmp(mode, "infer") != 0;
    c->half = strcmp(dtype, "f16") == 0;
    return (c->half ? HAS_HP : strcmp(dtype, "f32") == 0) && c->batch > 0 && c->channel > 0
           && (mode[0] == '\0' || !c->is_train);
}

static size_t element_bytes(const call *c)
{
#if HAS_HP
    return c->half ? sizeof(half) : sizeof(float);
#else
    (void)c;
    return sizeof(float);
#endif
}

static size_t stats_bytes(const call *c)
{
#if HAS_HP
    return c->half ? sizeof(bng_hp_stats_t) : sizeof(float);
#else
    (void)c;
    return sizeof(float);
#endif
}

static size_t round_up(size_t n)
{
    return (n + 63) / 64 * 64;
}

/* One block for every array of the call: readable and filled (copy), or reserved
 * without access (the driver must not touch it). */
static void place(const call *c, int copy, arrays *a)
{
    size_t i, at = 0;

    for (i = 0; i < ARRAYS; i++) {
        const size_t per_channel = i <= DX ? (size_t)c->batch * element_bytes(c) : stats_bytes(c);
        a->bytes[i] = (size_t)c->channel * per_channel;
        at += round_up(a->bytes[i]);
    }
    a->block_bytes = at;
    a->block = mmap(NULL, at, copy ? PROT_READ | PROT_WRITE : PROT_NONE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (a->block == MAP_FAILED) {
        perror("trace: mmap");
        exit(2);
    }
    for (i = 0, at = 0; i < ARRAYS; i++) {
        a->at[i] = a->block + at;
        at += round_up(a->bytes[i]);
    }
}

/* Element k of an array of x/dy/dx's type (is_data) or of the per-channel type. */
static void put_value(const call *c, unsigned char *base, size_t k, float v, int is_data)
{
#if HAS_HP
    if ((is_data ? element_bytes(c) : stats_bytes(c)) == sizeof(half)) {
        ((half *)(void *)base)[k] = bng_half_from_float(v);
        return;
    }
#else
    (void)c, (void)is_data;
#endif
    ((float *)(void *)base)[k] = v;
}

/* Deterministic inputs: small values that half holds. */
static void fill(const call *c, arrays *a)
{
    size_t k, n = (size_t)(c->batch * c->channel);

    for (k = 0; k < n; k++) {
        put_value(c, a->at[X], k, (float)((int)(k * 37 % 101) - 50) / 64.0f, 1);
        put_value(c, a->at[DY], k, (float)((int)(k * 53 % 89) - 44) / 128.0f, 1);
    }
    for (k = 0; k < (size_t)c->channel; k++) {
        put_value(c, a->at[MEAN], k, (float)(k % 7) / 16.0f, 0);
        put_value(c, a->at[INVAR], k, 1.0f + (float)(k % 5) / 8.0f, 0);
        put_value(c, a->at[SCALE], k, 0.5f + (float)(k % 3) / 4.0f, 0);
    }
}

static void set_params(long long *params, const call *c, const arrays *a)
{
    int i;

    for (i = 0; i < BNG_PARAMS_LEN; i++)
        params[i] = 0;
    for (i = MEAN; i <= DSCALE; i++)
        params[BNG_PARAM_MEAN + i - MEAN] = (long long)(intptr_t)a->at[i];
    params[BNG_PARAM_BATCH] = c->batch;
    params[BNG_PARAM_CHANNEL] = c->channel;
    params[BNG_PARAM_IS_TRAIN] = c->is_train;
}

/* Array i of a call as its C type. */
#define AS(type, a, i) ((type *)(void *)(a)->at[i])

static void call_s(const call *c, const arrays *a)
{
    set_params(BNG_SHARED_PARAMS, c, a);
#if HAS_HP
    if (c->half) {
        hp_batch_norm_grad_s(AS(half, a, X), AS(half, a, DY), AS(half, a, DX), (int)c->mask);
        return;
    }
#endif
    fp_batch_norm_grad_s(AS(float, a, X), AS(float, a, DY), AS(float, a, DX), (int)c->mask);
}

/* _p on copies of the inputs; 1 when dx, dbias and dscale are _s's bits. */
static int same_as_p(const call *c, const arrays *s)
{
    long long params[BNG_PARAMS_LEN];
    arrays p;
    int i, same;

    place(c, 1, &p);
    memcpy(p.block, s->block, s->block_bytes);
    for (i = DX; i <= DSCALE; i++)
        if (i == DX || i >= DBIAS)
            memset(p.at[i], 0xff, p.bytes[i]);      /* outputs: nothing of _s's left */
    set_params(params, c, &p);
#if HAS_HP
    if (c->half)
        hp_batch_norm_grad_p(AS(half, &p, X), AS(half, &p, DY), AS(half, &p, DX), params);
    else
#endif
        fp_batch_norm_grad_p(AS(float, &p, X), AS(float, &p, DY), AS(float, &p, DX), params);
    same = params[BNG_PARAM_STATUS] == BNG_OK;
    for (i = 0; i < ARRAYS; i++)
        same = same && memcmp(p.at[i], s->at[i], s->bytes[i]) == 0;
    munmap(p.block, p.block_bytes);
    return same;
}

/* One call traced; 0 on success. */
static int trace_call(const call *c, int copy)
{
    arrays a;
    unsigned i;
    int ok = 1;

    place(c, copy, &a);
    if (copy)
        fill(c, &a);
    bng_hal_trace_forget();
    for (i = 0; i < ARRAYS; i++)
        bng_hal_trace_region(a.at[i], a.bytes[i], "ddr");
    printf("call %s %lldx%lld mask %#x train %d\n", c->half ? "f16" : "f32", c->batch, c->channel,
           c->mask, c->is_train);
    call_s(c, &a);
    if (BNG_SHARED_PARAMS[BNG_PARAM_STATUS] != BNG_OK) {
        fprintf(stderr, "trace: status %lld\n", BNG_SHARED_PARAMS[BNG_PARAM_STATUS]);
        ok = 0;
    } else if (copy)
        ok = same_as_p(c, &a);
    printf("end%s\n", copy ? (ok ? " identical" : " different") : "");
    munmap(a.block, a.block_bytes);
    return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
    int i = 1, copy = 0, failed = 0;

    if (i < argc && strcmp(argv[i], "--copy") == 0) {
        copy = 1;
        i++;
    }
    if (i == argc)
        usage();
    bng_hal_trace_start(stdout, copy);
    for (; i < argc; i++) {
        call c;
        if (!parse_call(argv[i], &c)) {
            fprintf(stderr, "trace: not a call: %s\n", argv[i]);
            usage();
        }
        failed |= trace_call(&c, copy);
    }
    return failed;
}
