/* make model's trace program: runs the shipped driver's _s entry points under the
 * tracing HAL (include/host/bng_hal_trace.h) and writes the record of each call to
 * stdout, for generator/costmodel/ to replay against the part's figures.
 *
 *   trace [--copy] CALL...      CALL: f32:4096x64:0xff (dtype, batch x channel, core
 *                               mask), with :infer for is_train = 0, :relu for the
 *                               fused ReLU backward (:relu:bits from the forward's keep
 *                               bits) and :acc adding into dx (BNG_FLAG_ACCUMULATE_DX,
 *                               after the others); f32:16x64x3136:0xff is NCHW
 *                               (batch x channel x spatial); :fwd the training
 *                               forward's _s (batch_norm_fwd.h: the batch statistics,
 *                               y, the saved and moving statistics) on x's shape
 *                               (NHWC, or NCHW with BNG_FWD_NCHW), and :fwd:relu with
 *                               its fused ReLU and keep bits
 *
 * A plain call is the vendor's _s; a ReLU, NCHW or accumulating call is the ext _s
 * (batch_norm_grad_ext.h) with BNG_FLAG_RELU (y, the forward output, beside x and dy;
 * with BNG_FLAG_RELU_BITS its keep bits instead), BNG_FLAG_NCHW (the spatial extent in
 * BNG_PARAM_SPATIAL) or BNG_FLAG_ACCUMULATE_DX (dx read as well as written). Each
 * call's record is framed by
 * "call <dtype> <batch>x<channel>[x<spatial>] mask <mask> train <0|1>[ relu[ bits]][ acc][ fwd]"
 * and "end". Without --copy the transfers move no data and x, dy, y, dx and the
 * per-channel arrays lie in memory that may not be touched (mapped without access): the
 * driver reaches them by DMA only, so a call of any size traces in the time its kernels
 * take on the private tiles. With --copy the arrays are real and filled, the transfers
 * copy, and each call's outputs are checked against those of _p (ext _p for an ext
 * call), bit for bit (the trace HAL is then a HAL like any other): "end identical", or
 * exit status 1.
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

#if BNG_HAS_EXT
#include "batch_norm_grad_ext.h"
#define PARAMS_LEN BNG_EXT_PARAMS_LEN
#else
#define PARAMS_LEN BNG_PARAMS_LEN
#endif
#define HAS_RELU (BNG_HAS_EXT && BNG_HAS_RELU)
#define HAS_NCHW (BNG_HAS_EXT && BNG_HAS_NCHW)
#if defined(BNG_HAS_FORWARD) && BNG_HAS_FORWARD
#define HAS_FWD 1
#include "batch_norm_fwd.h"
#else
#define HAS_FWD 0
#endif
/* the forward in NCHW: a target with forward and nchw (BNG_FWD_NCHW) */
#define HAS_FWD_NCHW (HAS_FWD && HAS_NCHW)

#if defined(BNG_HAS_F16) && BNG_HAS_F16
#define HAS_HP 1
#else
#define HAS_HP 0
#endif

typedef struct {
    int half;                   /* hp_ (else fp_) */
    long long batch, channel;
    long long spatial;          /* NCHW's extent; 0: NHWC, the vendor's layout */
    unsigned mask;
    int is_train;
    int relu;                   /* BNG_FLAG_RELU */
    int bits;                   /* BNG_FLAG_RELU_BITS as well: the forward's keep bits */
    int accumulate_dx;          /* BNG_FLAG_ACCUMULATE_DX: dx += the gradient */
    int forward;                /* the training forward's _s */
} call;

/* The arrays of one call, in the order of the parameter block where they are in it
 * (y: none, 0 bytes, without ReLU; the keep bits with :bits). The forward's: x, y in DX's place, no dy; mean,
 * invar, scale, then bias, the moving mean and the moving variance in DBIAS's, DSCALE's
 * and MVAR's places. */
enum { X, DY, DX, MEAN, INVAR, SCALE, DBIAS, DSCALE, Y, MVAR, ARRAYS };

typedef struct {
    unsigned char *at[ARRAYS];
    size_t bytes[ARRAYS];
    unsigned char *block;       /* all of them */
    size_t block_bytes;
} arrays;

static void usage(void)
{
    fprintf(stderr, "usage: trace [--copy] DTYPE:BATCHxCHANNEL[xSPATIAL]:MASK[:infer][:relu[:bits]]"
                    "[:acc] ..., DTYPE:BATCHxCHANNEL[xSPATIAL]:MASK:fwd[:relu] ...\n");
    exit(2);
}

/* The words after the mask, each once: infer, relu, bits after relu, acc (the
 * backward's, where the target has the extended calls); or fwd, with relu or not (the
 * forward's fused ReLU and its bits), in NCHW only where the target has the forward in
 * NCHW (forward and nchw both). 1 when they are. */
static int parse_modes(const char *rest, call *c)
{
    char word[8];
    int n = 0;

    while (*rest == ':') {
        if (sscanf(rest, ":%7[a-z]%n", word, &n) != 1)
            return 0;
        rest += n;
        if (strcmp(word, "infer") == 0 && c->is_train)
            c->is_train = 0;
        else if (strcmp(word, "relu") == 0 && !c->relu)
            c->relu = 1;
        else if (strcmp(word, "bits") == 0 && c->relu && !c->bits)
            c->bits = 1;
        else if (strcmp(word, "acc") == 0 && BNG_HAS_EXT && !c->accumulate_dx)
            c->accumulate_dx = 1;
        else if (strcmp(word, "fwd") == 0 && HAS_FWD && !c->forward)
            c->forward = 1;
        else
            return 0;
    }
    /* the backward's ReLU needs the relu extension, the forward's its own */
    return *rest == '\0' && !(c->forward && (!c->is_train || (c->spatial && !HAS_FWD_NCHW)))
           && !(c->relu && !c->forward && !HAS_RELU) && !(c->bits && c->forward)
           && !(c->accumulate_dx && c->forward);
}

static int parse_call(const char *text, call *c)
{
    char dtype[8];
    int n = 0;

    memset(c, 0, sizeof *c);
    c->is_train = 1;
    if (sscanf(text, "%7[a-z0-9]:%lldx%lld%n", dtype, &c->batch, &c->channel, &n) != 3)
        return 0;
    text += n;
    if (*text == 'x') {
        if (!HAS_NCHW || sscanf(text, "x%lld%n", &c->spatial, &n) != 1 || c->spatial <= 0)
            return 0;
        text += n;
    }
    if (sscanf(text, ":%x%n", &c->mask, &n) != 1 || !parse_modes(text + n, c))
        return 0;
    c->half = strcmp(dtype, "f16") == 0;
    return (c->half ? HAS_HP : strcmp(dtype, "f32") == 0) && c->batch > 0 && c->channel > 0;
}

/* Elements of x (dy, dx, y). */
static size_t data_elements(const call *c)
{
    return (size_t)c->batch * (size_t)c->channel * (size_t)(c->spatial ? c->spatial : 1);
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

/* The forward's ReLU bits: elements of x's type (batch_norm_fwd.h's count, which the
 * backward from them reads: a word per channel for every 8 * element rows, in NCHW per
 * plane for every 8 * element of its values). */
static size_t relu_bits_elements(const call *c)
{
    if (c->bits) {
        const size_t rows = 8 * element_bytes(c);
        return c->spatial ? (size_t)c->batch * (size_t)c->channel
                            * (((size_t)c->spatial + rows - 1) / rows)
                          : ((size_t)c->batch + rows - 1) / rows * (size_t)c->channel;
    }
#if HAS_FWD_NCHW
    if (c->spatial)
        return BNG_FWD_RELU_BITS_ELEMENTS_NCHW((size_t)c->batch, (size_t)c->channel,
                                               (size_t)c->spatial, element_bytes(c));
#endif
#if HAS_FWD
    return BNG_FWD_RELU_BITS_ELEMENTS((size_t)c->batch, (size_t)c->channel, element_bytes(c));
#else
    (void)c;
    return 0;
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
        const int is_data = i == X || i == DX || (i == DY && !c->forward)
                            || (i == Y && c->relu && !c->forward && !c->bits);
        const int none = i == Y || (i == DY && c->forward) || (i == MVAR && !c->forward);
        /* the forward's ReLU: its bits where the backward's has y (and the backward's
         * from those bits) */
        const int bits = i == Y && c->relu && (c->forward || c->bits);
        a->bytes[i] = is_data ? data_elements(c) * element_bytes(c)
                      : bits ? relu_bits_elements(c) * element_bytes(c)
                      : none ? 0 : (size_t)c->channel * stats_bytes(c);
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

/* Deterministic inputs: small values that half holds; y negative, zero and positive;
 * the old dx, adding into it. */
static void fill(const call *c, arrays *a)
{
    size_t k, n = data_elements(c);

    for (k = 0; k < n; k++) {
        put_value(c, a->at[X], k, (float)((int)(k * 37 % 101) - 50) / 64.0f, 1);
        if (!c->forward)
            put_value(c, a->at[DY], k, (float)((int)(k * 53 % 89) - 44) / 128.0f, 1);
        if (c->relu && !c->forward && !c->bits)
            put_value(c, a->at[Y], k, (float)((int)(k * 29 % 83) - 41) / 32.0f, 1);
        if (c->accumulate_dx)
            put_value(c, a->at[DX], k, (float)((int)(k * 17 % 79) - 39) / 16.0f, 1);
    }
    for (k = 0; c->bits && k < a->bytes[Y]; k++)      /* keep bits: any pattern is one */
        a->at[Y][k] = (unsigned char)(k * 151 % 256);
    for (k = 0; k < (size_t)c->channel; k++) {
        put_value(c, a->at[MEAN], k, (float)(k % 7) / 16.0f, 0);
        put_value(c, a->at[INVAR], k, 1.0f + (float)(k % 5) / 8.0f, 0);
        put_value(c, a->at[SCALE], k, 0.5f + (float)(k % 3) / 4.0f, 0);
        if (c->forward) {
            put_value(c, a->at[DBIAS], k, (float)(k % 4) / 8.0f, 0);        /* bias */
            put_value(c, a->at[DSCALE], k, (float)(k % 6) / 16.0f, 0);      /* moving mean */
            put_value(c, a->at[MVAR], k, 0.5f + (float)(k % 5) / 4.0f, 0);  /* moving var */
        }
    }
}

#if HAS_FWD
/* The forward's block: MXNet's training step, eps 1e-3, momentum 0.9. */
static void set_fwd_params(long long *params, const call *c, const arrays *a)
{
    int i;

    for (i = 0; i < BNG_FWD_PARAMS_LEN; i++)
        params[i] = 0;
    params[BNG_PARAM_MEAN] = (long long)(intptr_t)a->at[MEAN];
    params[BNG_PARAM_INVAR] = (long long)(intptr_t)a->at[INVAR];
    params[BNG_PARAM_SCALE] = (long long)(intptr_t)a->at[SCALE];
    params[BNG_FWD_PARAM_BIAS] = (long long)(intptr_t)a->at[DBIAS];
    params[BNG_FWD_PARAM_MOVING_MEAN] = (long long)(intptr_t)a->at[DSCALE];
    params[BNG_FWD_PARAM_MOVING_VAR] = (long long)(intptr_t)a->at[MVAR];
    params[BNG_PARAM_BATCH] = c->batch;
    params[BNG_PARAM_CHANNEL] = c->channel;
    params[BNG_FWD_PARAM_EPS] = bng_fwd_float(1e-3f);
    params[BNG_FWD_PARAM_MOMENTUM] = bng_fwd_float(0.9f);
    if (c->relu) {
        params[BNG_PARAM_FLAGS] |= BNG_FWD_RELU | BNG_FWD_RELU_BITS;
        params[BNG_FWD_PARAM_RELU_BITS] = (long long)(intptr_t)a->at[Y];
    }
#if HAS_FWD_NCHW
    if (c->spatial) {
        params[BNG_PARAM_FLAGS] |= BNG_FWD_NCHW;
        params[BNG_FWD_PARAM_SPATIAL] = c->spatial;
    }
#endif
}
#endif

static void set_params(long long *params, const call *c, const arrays *a)
{
    int i;

#if HAS_FWD
    if (c->forward) {
        set_fwd_params(params, c, a);
        return;
    }
#endif
    for (i = 0; i < PARAMS_LEN; i++)
        params[i] = 0;
    for (i = MEAN; i <= DSCALE; i++)
        params[BNG_PARAM_MEAN + i - MEAN] = (long long)(intptr_t)a->at[i];
    params[BNG_PARAM_BATCH] = c->batch;
    params[BNG_PARAM_CHANNEL] = c->channel;
    params[BNG_PARAM_IS_TRAIN] = c->is_train;
#if HAS_RELU
    if (c->relu) {
        params[BNG_PARAM_FLAGS] |= BNG_FLAG_RELU | (c->bits ? BNG_FLAG_RELU_BITS : 0);
        params[BNG_PARAM_Y] = (long long)(intptr_t)a->at[Y];
    }
#endif
#if HAS_NCHW
    if (c->spatial) {
        params[BNG_PARAM_FLAGS] |= BNG_FLAG_NCHW;
        params[BNG_PARAM_SPATIAL] = c->spatial;
    }
#endif
#if BNG_HAS_EXT
    if (c->accumulate_dx)
        params[BNG_PARAM_FLAGS] |= BNG_FLAG_ACCUMULATE_DX;
#endif
}

/* Array i of a call as its C type. */
#define AS(type, a, i) ((type *)(void *)(a)->at[i])

/* A call the vendor's entry points cannot make (ReLU, NCHW, adding into dx) goes to
 * the ext ones. */
#if BNG_HAS_EXT
static int extended(const call *c)
{
    return c->relu || c->spatial || c->accumulate_dx;
}
#define ENTRY(family, kind, c) \
    (extended(c) ? family##_batch_norm_grad_ext_##kind : family##_batch_norm_grad_##kind)
#else
#define ENTRY(family, kind, c) family##_batch_norm_grad_##kind
#endif

static void call_s(const call *c, const arrays *a)
{
    set_params(BNG_SHARED_PARAMS, c, a);
#if HAS_FWD
    if (c->forward) {
#if HAS_HP
        if (c->half) {
            hp_batch_norm_forward_s(AS(half, a, X), AS(half, a, DX), (int)c->mask);
            return;
        }
#endif
        fp_batch_norm_forward_s(AS(float, a, X), AS(float, a, DX), (int)c->mask);
        return;
    }
#endif
#if HAS_HP
    if (c->half) {
        ENTRY(hp, s, c)(AS(half, a, X), AS(half, a, DY), AS(half, a, DX), (int)c->mask);
        return;
    }
#endif
    ENTRY(fp, s, c)(AS(float, a, X), AS(float, a, DY), AS(float, a, DX), (int)c->mask);
}

/* _p on copies of the inputs as they were before _s (`initial`, the block's bytes); 1
 * when every array is _s's bits. */
static int same_as_p(const call *c, const arrays *s, const unsigned char *initial)
{
    long long params[16];       /* the extended block's and the forward's, the longest */
    arrays p;
    int i, same;

    place(c, 1, &p);
    memcpy(p.block, initial, s->block_bytes);
    for (i = DX; i <= DSCALE; i++)
        if ((i == DX && !c->accumulate_dx) || (i != DX && (c->forward ? i <= INVAR : i >= DBIAS)))
            memset(p.at[i], 0xff, p.bytes[i]);      /* outputs: nothing of _s's left */
    if (c->forward)
        memset(p.at[Y], 0xff, p.bytes[Y]);          /* the ReLU's bits, if any */
    set_params(params, c, &p);
#if HAS_FWD
    if (c->forward) {
#if HAS_HP
        if (c->half)
            hp_batch_norm_forward_p(AS(half, &p, X), AS(half, &p, DX), params);
        else
#endif
            fp_batch_norm_forward_p(AS(float, &p, X), AS(float, &p, DX), params);
    } else
#endif
#if HAS_HP
    if (c->half)
        ENTRY(hp, p, c)(AS(half, &p, X), AS(half, &p, DY), AS(half, &p, DX), params);
    else
#endif
        ENTRY(fp, p, c)(AS(float, &p, X), AS(float, &p, DY), AS(float, &p, DX), params);
    same = params[BNG_PARAM_STATUS] == BNG_OK;
    for (i = 0; i < ARRAYS; i++)
        same = same && memcmp(p.at[i], s->at[i], s->bytes[i]) == 0;
    munmap(p.block, p.block_bytes);
    return same;
}

/* One call traced; 0 on success. */
static int trace_call(const call *c, int copy)
{
    unsigned char *initial = NULL;
    arrays a;
    unsigned i;
    int ok = 1;

    place(c, copy, &a);
    if (copy) {
        fill(c, &a);
        initial = malloc(a.block_bytes);
        if (initial == NULL) {
            perror("trace: malloc");
            exit(2);
        }
        memcpy(initial, a.block, a.block_bytes);
    }
    bng_hal_trace_forget();
    for (i = 0; i < ARRAYS; i++)
        bng_hal_trace_region(a.at[i], a.bytes[i], "ddr");
    printf("call %s %lldx%lld", c->half ? "f16" : "f32", c->batch, c->channel);
    if (c->spatial)
        printf("x%lld", c->spatial);
    printf(" mask %#x train %d%s%s%s%s\n", c->mask, c->is_train, c->relu ? " relu" : "",
           c->bits ? " bits" : "", c->accumulate_dx ? " acc" : "", c->forward ? " fwd" : "");
    call_s(c, &a);
    if (BNG_SHARED_PARAMS[BNG_PARAM_STATUS] != BNG_OK) {
        fprintf(stderr, "trace: status %lld\n", BNG_SHARED_PARAMS[BNG_PARAM_STATUS]);
        ok = 0;
    } else if (copy)
        ok = same_as_p(c, &a, initial);
    printf("end%s\n", copy ? (ok ? " identical" : " different") : "");
    free(initial);
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
