/* make bench: times one target's library against the naive loop, oneDNN (f32, when
 * libdnnl-dev is installed) and a traffic-only roofline loop, all in this process,
 * interleaved (one call of each contender per round) and reported as the median. With
 * the target's extensions (batch_norm_grad_ext.h) also: the vendor's inference call
 * (is_train = 0) against dx-only, reduce + apply on one device and ext accumulating dx
 * (BNG_FLAG_ACCUMULATE_DX, _p and _s) against the vendor's call, each summed up in a line that names
 * the ISA the library was built for. With
 * relu as well: the fused ReLU backward (ext with BNG_FLAG_RELU, from y and from the
 * forward's keep bits with BNG_FLAG_RELU_BITS) against a separate ReLU backward pass in
 * C followed by the vendor's call, and against oneDNN's batch-norm backward with
 * fuse_norm_relu (f32, which reads its forward's mask), summed up the same way.
 * With forward: the training forward (fp_batch_norm_forward_p, f32 NHWC, and NCHW on
 * the NCHW shapes where the target has nchw, the moving statistics updated) against
 * oneDNN's forward training with scale and shift (which updates none), and with the
 * fused ReLU and its bits against oneDNN's with fuse_norm_relu, oneDNN checked to agree
 * first, and the geometric means over oneDNN at the DRAM shapes.
 * With nchw: f32 NCHW shapes (batch x channel x spatial), ext _p with BNG_FLAG_NCHW
 * against oneDNN's NCHW batch-norm backward and (x86) a one-pass roofline (x and dy
 * read once, dx streamed: the least traffic there is), and the geometric mean over
 * oneDNN at the DRAM shapes (arrays of 8 MiB or more).
 *
 *   bench [--backend NAME] [--shapes 4096x64,...] [--nchw-shapes 16x256x3136,...]
 *         [--seconds S] [--csv FILE]
 *
 * Built per target and vector backend by the Makefile (-Igenerated/<target>).
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "batch_norm_grad.h"
#include "bng_kernels.h"
#include "bng_entry.h"
#if BNG_HAS_REDUCE && BNG_HAS_APPLY && BNG_HAS_DX_ONLY
#include "batch_norm_grad_ext.h"
#define BNG_BENCH_EXT 1
#if BNG_HAS_EXT && BNG_HAS_RELU
#define BNG_BENCH_RELU 1
#endif
#if BNG_HAS_EXT && BNG_HAS_NCHW
#define BNG_BENCH_NCHW 1
#endif
#endif
#if BNG_HAS_FORWARD
#include "batch_norm_fwd.h"
#define BNG_BENCH_FWD 1
#if BNG_HAS_NCHW
#define BNG_BENCH_FWD_NCHW 1
#endif
#endif
#ifdef BNG_BENCH_DNNL
#include <oneapi/dnnl/dnnl.h>
#endif

#define MAX_CONTENDERS 16
#define MAX_ROUNDS 400

typedef struct {
    size_t batch, channel;
    size_t spatial;                     /* NCHW: H*W; 1 for the NHWC shapes */
    int nchw;                           /* x[batch][channel][spatial] */
    size_t elem;                        /* bytes per data element */
    void *x, *dy, *dx;
    void *mean, *invar, *scale, *dbias, *dscale;
    long long params[BNG_PARAMS_LEN];
    int mask;                           /* _s: every host core the target has */
#ifdef BNG_BENCH_EXT
    long long infer_params[BNG_PARAMS_LEN];     /* the vendor's call with is_train = 0 */
    long long ext_params[BNG_EXT_PARAMS_LEN];   /* reduce, apply and dx-only */
    long long acc_params[BNG_EXT_PARAMS_LEN];   /* ext with BNG_FLAG_ACCUMULATE_DX */
    long long acc_s_status;                     /* ... its _s's last status */
    float *sums;                                /* one device's partial sums */
#endif
#ifdef BNG_BENCH_RELU
    /* The relu pair's own statistics (with oneDNN: its forward's, of which y is the
     * output), so that all three compute the same thing. */
    void *y, *dy_masked;                        /* the forward output; the separate pass's dy */
    void *relu_mean, *relu_invar, *relu_dbias, *relu_dscale;
    long long relu_params[BNG_EXT_PARAMS_LEN];  /* ext with BNG_FLAG_RELU and y */
    long long apart_params[BNG_PARAMS_LEN];     /* the vendor's call on dy_masked */
    void *keep_bits;                            /* y's keep bits, the forward's format */
    long long bits_params[BNG_EXT_PARAMS_LEN];  /* ext with BNG_FLAG_RELU_BITS and those */
#endif
#ifdef BNG_BENCH_DNNL
    dnnl_primitive_t dnnl_bwd;
    dnnl_stream_t dnnl_stream;
    int dnnl_nargs;
    dnnl_exec_arg_t dnnl_args[9];
    float *dnnl_dx;                     /* oneDNN's dx, compared with ours once */
    void *dnnl_buffers[4];              /* variance, diff scale, diff shift, shift */
    char dnnl_impl[128];
    dnnl_memory_t dnnl_memory[9];
#ifdef BNG_BENCH_RELU
    dnnl_primitive_t dnnl_relu_bwd;             /* fuse_norm_relu */
    int dnnl_relu_nargs;
    dnnl_exec_arg_t dnnl_relu_args[10];
    dnnl_memory_t dnnl_relu_memory[10];
    float *dnnl_relu_dx, *dnnl_relu_buffers[4]; /* dscale, dbias, shift (zero), variance */
#endif
#endif
#ifdef BNG_BENCH_FWD
    /* The training forward: x in, y out (dx's buffer), its per-channel arrays */
    void *bias, *moving_mean, *moving_var;
    long long fwd_params[BNG_FWD_PARAMS_LEN];
    /* the fused ReLU forward: the same call with BNG_FWD_RELU and its bits */
    void *relu_bits;
    long long fwd_relu_params[BNG_FWD_PARAMS_LEN];
#ifdef BNG_BENCH_DNNL
    dnnl_primitive_t dnnl_fwd, dnnl_fwd_relu;   /* the second with fuse_norm_relu */
    dnnl_exec_arg_t dnnl_fwd_args[7];           /* and its workspace, the seventh */
    dnnl_memory_t dnnl_fwd_memory[7];
    float *dnnl_y, *dnnl_fwd_mean, *dnnl_fwd_variance;
#endif
#endif
} problem;

typedef struct {
    const char *name;
    void (*run)(problem *p);
} contender;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void *alloc(size_t bytes)
{
    void *p = aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (!p) {
        fprintf(stderr, "bench: out of memory\n");
        exit(1);
    }
    return p;
}

/* A goal's verdict beside its figure. */
static const char *verdict(int met)
{
    return met ? "met" : "MISSED";
}

/* A shape whose x, dy and dx (as float32) do not fit the caches: where the goals that
 * say "at DRAM shapes" are judged. */
static int is_dram_shape(size_t elements)
{
    return elements * 4 >= (size_t)8 << 20;
}

/* The ISA the library and this program were compiled for (-march): every figure is
 * for it. */
static const char *isa(void)
{
#if defined(__AVX512F__)
    return "x86-64 AVX-512F";
#elif defined(__AVX2__)
    return "x86-64 AVX2";
#elif defined(__AVX__)
    return "x86-64 AVX";
#elif defined(__x86_64__)
    return "x86-64 SSE2";
#elif defined(__aarch64__)
    return "AArch64";
#else
    return "scalar C";
#endif
}

/* A section's summary: oneDNN's time over ours as a geometric mean over its `dram` DRAM
 * shapes (log_sum the sum of the ratios' logs), against the section's goal; nothing
 * without DRAM shapes or oneDNN. */
static void dram_geomean_line(const char *backend, const char *what, double log_sum, int dram,
                              double goal)
{
    if (dram)
        printf("  %s %s f32 %s on %s: oneDNN's time over ours, geometric mean at %d DRAM "
               "shape%s: %.2fx (goal %.1fx: %s)\n", BNG_TARGET_NAME, backend, what, isa(), dram,
               dram > 1 ? "s" : "", exp(log_sum / dram), goal, verdict(exp(log_sum / dram) >= goal));
}

/* ---- the contenders ---- */

static void run_p_f32(problem *p) { fp_batch_norm_grad_p(p->x, p->dy, p->dx, p->params); }

static void run_generic_f32(problem *p)
{
    bng_stats s = {p->mean, p->invar, p->scale, p->dbias, p->dscale};
    if (bng_entry_private_kernel(&bng_f32_config, &bng_f32_generic_kernel, p->batch, p->channel, 1, p->x, p->dy, p->dx, &s) != BNG_OK)
        abort();     /* a split target's HAL had no workspace: nothing was computed */
}

static void run_s_f32(problem *p)
{
    memcpy(BNG_SHARED_PARAMS, p->params, sizeof p->params);
    fp_batch_norm_grad_s(p->x, p->dy, p->dx, p->mask);
}

/* What a user would write first: the contract's formulas (docs/contract.md), sums in arrays. */
static void run_naive_f32(problem *p)
{
    const float *x = p->x, *dy = p->dy, *mean = p->mean, *invar = p->invar, *scale = p->scale;
    float *dx = p->dx, *dbias = p->dbias, *dscale = p->dscale;
    const size_t C = p->channel;
    const float m = (float)p->batch;
    size_t b, c;
    for (c = 0; c < C; c++)
        dbias[c] = dscale[c] = 0.0f;
    for (b = 0; b < p->batch; b++)
        for (c = 0; c < C; c++) {
            const float xhat = (x[b * C + c] - mean[c]) * invar[c];
            dbias[c] += dy[b * C + c];
            dscale[c] += dy[b * C + c] * xhat;
        }
    for (b = 0; b < p->batch; b++)
        for (c = 0; c < C; c++) {
            const float xhat = (x[b * C + c] - mean[c]) * invar[c];
            dx[b * C + c] = scale[c] * invar[c] / m * (m * dy[b * C + c] - dbias[c] - xhat * dscale[c]);
        }
}

#ifdef BNG_BENCH_EXT
static void run_infer_f32(problem *p) { fp_batch_norm_grad_p(p->x, p->dy, p->dx, p->infer_params); }
static void run_dx_only_f32(problem *p) { fp_batch_norm_grad_dx_p(p->dy, p->dx, p->ext_params); }
static void run_reduce_apply_f32(problem *p)
{
    fp_batch_norm_grad_reduce_p(p->x, p->dy, p->ext_params);
    fp_batch_norm_grad_apply_p(p->x, p->dy, p->dx, p->ext_params);
}
#if BNG_HAS_EXT
static void run_accumulate_dx_f32(problem *p) { fp_batch_norm_grad_ext_p(p->x, p->dy, p->dx, p->acc_params); }
static void run_accumulate_dx_s_f32(problem *p)
{
    memcpy(BNG_SHARED_PARAMS, p->acc_params, sizeof p->acc_params);
    fp_batch_norm_grad_ext_s(p->x, p->dy, p->dx, p->mask);
    p->acc_s_status = BNG_SHARED_PARAMS[BNG_PARAM_STATUS];
}
#endif
#endif

#if BNG_HAS_F16
static void run_p_f16(problem *p) { hp_batch_norm_grad_p(p->x, p->dy, p->dx, p->params); }
#ifdef BNG_BENCH_EXT
static void run_infer_f16(problem *p) { hp_batch_norm_grad_p(p->x, p->dy, p->dx, p->infer_params); }
static void run_dx_only_f16(problem *p) { hp_batch_norm_grad_dx_p(p->dy, p->dx, p->ext_params); }
#if BNG_HAS_EXT
static void run_accumulate_dx_f16(problem *p) { hp_batch_norm_grad_ext_p(p->x, p->dy, p->dx, p->acc_params); }
static void run_accumulate_dx_s_f16(problem *p)
{
    memcpy(BNG_SHARED_PARAMS, p->acc_params, sizeof p->acc_params);
    hp_batch_norm_grad_ext_s(p->x, p->dy, p->dx, p->mask);
    p->acc_s_status = BNG_SHARED_PARAMS[BNG_PARAM_STATUS];
}
#endif
static void run_reduce_apply_f16(problem *p)
{
    hp_batch_norm_grad_reduce_p(p->x, p->dy, p->ext_params);
    hp_batch_norm_grad_apply_p(p->x, p->dy, p->dx, p->ext_params);
}
#endif

static void run_generic_f16(problem *p)
{
    bng_stats s = {p->mean, p->invar, p->scale, p->dbias, p->dscale};
    if (bng_entry_private_kernel(&bng_f16_config, &bng_f16_generic_kernel, p->batch, p->channel, 1, p->x, p->dy, p->dx, &s) != BNG_OK)
        abort();     /* a split target's HAL had no workspace: nothing was computed */
}

static void run_s_f16(problem *p)
{
    memcpy(BNG_SHARED_PARAMS, p->params, sizeof p->params);
    hp_batch_norm_grad_s(p->x, p->dy, p->dx, p->mask);
}

#define STAT(a, c) ((float)(sizeof(bng_hp_stats_t) == 2 ? bng_half_to_float(((const half *)(a))[c]) : ((const float *)(a))[c]))

static void run_naive_f16(problem *p)
{
    const half *x = p->x, *dy = p->dy;
    half *dx = p->dx;
    const size_t C = p->channel;
    const float m = (float)p->batch;
    float *dbias = calloc(C, sizeof(float)), *dscale = calloc(C, sizeof(float));
    size_t b, c;
    for (b = 0; b < p->batch; b++)
        for (c = 0; c < C; c++) {
            const float xhat = (bng_half_to_float(x[b * C + c]) - STAT(p->mean, c)) * STAT(p->invar, c);
            dbias[c] += bng_half_to_float(dy[b * C + c]);
            dscale[c] += bng_half_to_float(dy[b * C + c]) * xhat;
        }
    for (b = 0; b < p->batch; b++)
        for (c = 0; c < C; c++) {
            const float xhat = (bng_half_to_float(x[b * C + c]) - STAT(p->mean, c)) * STAT(p->invar, c);
            dx[b * C + c] = bng_half_from_float(STAT(p->scale, c) * STAT(p->invar, c) / m
                * (m * bng_half_to_float(dy[b * C + c]) - dbias[c] - xhat * dscale[c]));
        }
    free(dbias);
    free(dscale);
}
#endif

#ifdef BNG_BENCH_RELU
/* The separate ReLU backward pass a framework runs before an unfused batch-norm
 * backward (PyTorch's threshold_backward): dy where y > 0 (or NaN), else +0, in
 * vectors as a framework's kernel runs it: steps of RELU_STEP elements in straight-line
 * code, which the bench's flags vectorize (a plain loop GCC's -O2 leaves scalar, and
 * its branch on random signs would make the pass look slower than it is). Half
 * compares its bits (the same rule). */
#define RELU_STEP 32
static void relu_backward_f32(const float *dy, const float *y, float *out, size_t n)
{
    size_t i = 0, k;
    for (; i + RELU_STEP <= n; i += RELU_STEP) {
        float d[RELU_STEP], m[RELU_STEP];
        for (k = 0; k < RELU_STEP; k++) {
            d[k] = dy[i + k];
            m[k] = y[i + k];
        }
        for (k = 0; k < RELU_STEP; k++)
            out[i + k] = m[k] <= 0.0f ? 0.0f : d[k];
    }
    for (; i < n; i++)
        out[i] = y[i] <= 0.0f ? 0.0f : dy[i];
}

#if BNG_HAS_F16
static uint16_t relu_backward_half(uint16_t dy, uint16_t y)
{
    const unsigned not_positive = (y == 0) | ((unsigned)(y >> 15) & ((y & 0x7fffu) <= 0x7c00u));
    return (uint16_t)(dy & (not_positive - 1u));
}

static void relu_backward_f16(const uint16_t *dy, const uint16_t *y, uint16_t *out, size_t n)
{
    size_t i = 0, k;
    for (; i + RELU_STEP <= n; i += RELU_STEP) {
        uint16_t d[RELU_STEP], m[RELU_STEP];
        for (k = 0; k < RELU_STEP; k++) {
            d[k] = dy[i + k];
            m[k] = y[i + k];
        }
        for (k = 0; k < RELU_STEP; k++)
            out[i + k] = relu_backward_half(d[k], m[k]);
    }
    for (; i < n; i++)
        out[i] = relu_backward_half(dy[i], y[i]);
}
#endif

/* y's keep bits as the training forward writes them (batch_norm_fwd.h): row r's of
 * channel c in bit r % W of word r / W * channel + c, W the element's bits; a row keeps
 * where the separate pass above keeps its dy. Made after oneDNN's forward wrote y. */
static void pack_keep_bits(problem *p)
{
    const size_t w = 8 * p->elem, words = (p->batch + w - 1) / w;
    size_t g, c, i;

    for (g = 0; g < words; g++)
        for (c = 0; c < p->channel; c++) {
            uint32_t word = 0;
            for (i = 0; i < w && g * w + i < p->batch; i++) {
                const size_t at = (g * w + i) * p->channel + c;
#if BNG_HAS_F16
                const uint16_t one = 0x3c00u;
                const int keeps = p->elem == 2 ? relu_backward_half(one, ((const uint16_t *)p->y)[at]) != 0
                                               : !(((const float *)p->y)[at] <= 0.0f);
#else
                const int keeps = !(((const float *)p->y)[at] <= 0.0f);
#endif
                word |= (uint32_t)keeps << i;
            }
            if (p->elem == 2) {
                const uint16_t half_word = (uint16_t)word;
                memcpy((char *)p->keep_bits + (g * p->channel + c) * 2, &half_word, 2);
            } else {
                memcpy((char *)p->keep_bits + (g * p->channel + c) * 4, &word, 4);
            }
        }
}

static void run_relu_fused_f32(problem *p) { fp_batch_norm_grad_ext_p(p->x, p->dy, p->dx, p->relu_params); }
static void run_relu_bits_f32(problem *p) { fp_batch_norm_grad_ext_p(p->x, p->dy, p->dx, p->bits_params); }
static void run_relu_apart_f32(problem *p)
{
    relu_backward_f32(p->dy, p->y, p->dy_masked, p->batch * p->channel);
    fp_batch_norm_grad_p(p->x, p->dy_masked, p->dx, p->apart_params);
}
#if BNG_HAS_F16
static void run_relu_fused_f16(problem *p) { hp_batch_norm_grad_ext_p(p->x, p->dy, p->dx, p->relu_params); }
static void run_relu_bits_f16(problem *p) { hp_batch_norm_grad_ext_p(p->x, p->dy, p->dx, p->bits_params); }
static void run_relu_apart_f16(problem *p)
{
    relu_backward_f16(p->dy, p->y, p->dy_masked, p->batch * p->channel);
    hp_batch_norm_grad_p(p->x, p->dy_masked, p->dx, p->apart_params);
}
#endif
#endif

/* The memory traffic of a batchnormgrad and nothing else: x and dy read twice, dx
 * written once with plain stores, 64-byte vectors. The OR keeps the reads alive. */
/* The roofline's vector: the host's natural width (a wider GCC vector splits badly). */
#if defined(__AVX512F__)
#define ROOF_BYTES 64
#elif defined(__AVX__)
#define ROOF_BYTES 32
#else
#define ROOF_BYTES 16
#endif
typedef uint32_t roof_vector __attribute__((vector_size(ROOF_BYTES)));
static volatile uint32_t sink;

/* The roofline: traffic only, what the operator must move (x and dy read twice, dx
 * written once), in vectors of the host's width built with the bench's flags. Two ways to write dx:
 * plain stores, and (x86) streaming stores that skip reading dx's lines first; the
 * column uses the faster, and the table says which. */
static void roofline_read(problem *p)
{
    const size_t n = p->batch * p->channel * p->elem / ROOF_BYTES;
    const unsigned char *x = p->x, *dy = p->dy;
    roof_vector acc = {0}, a, b;
    size_t i;
    for (i = 0; i < n; i++) {
        memcpy(&a, x + ROOF_BYTES * i, ROOF_BYTES);
        memcpy(&b, dy + ROOF_BYTES * i, ROOF_BYTES);
        acc |= a | b;
    }
    sink = acc[0];
}

static void run_roofline(problem *p)
{
    const size_t n = p->batch * p->channel * p->elem / ROOF_BYTES;
    const unsigned char *x = p->x, *dy = p->dy;
    unsigned char *dx = p->dx;
    roof_vector a, b;
    size_t i;
    roofline_read(p);
    for (i = 0; i < n; i++) {
        memcpy(&a, x + ROOF_BYTES * i, ROOF_BYTES);
        memcpy(&b, dy + ROOF_BYTES * i, ROOF_BYTES);
        a |= b;
        memcpy(dx + ROOF_BYTES * i, &a, ROOF_BYTES);
    }
}

#if defined(__x86_64__) && defined(__AVX__)
#include <immintrin.h>
#define BNG_BENCH_STREAMING 1
/* One pass of `bytes` (whole 64-byte lines of it): x and dy read, dx written with
 * streaming stores. */
static void roofline_stream(const unsigned char *x, const unsigned char *dy, unsigned char *dx,
                            size_t bytes)
{
    const size_t n = bytes / 64;
    size_t i;
    for (i = 0; i < n; i++) {
#ifdef __AVX512F__
        const __m512i v = _mm512_or_si512(_mm512_loadu_si512(x + 64 * i), _mm512_loadu_si512(dy + 64 * i));
        _mm512_stream_si512((void *)(dx + 64 * i), v);
#else
        const __m256 lo = _mm256_or_ps(_mm256_loadu_ps((const float *)(const void *)(x + 64 * i)),
                                       _mm256_loadu_ps((const float *)(const void *)(dy + 64 * i)));
        const __m256 hi = _mm256_or_ps(_mm256_loadu_ps((const float *)(const void *)(x + 64 * i + 32)),
                                       _mm256_loadu_ps((const float *)(const void *)(dy + 64 * i + 32)));
        _mm256_stream_ps((float *)(void *)(dx + 64 * i), lo);
        _mm256_stream_ps((float *)(void *)(dx + 64 * i + 32), hi);
#endif
    }
    _mm_sfence();
}

static void run_roofline_streaming(problem *p)
{
    roofline_read(p);
    roofline_stream(p->x, p->dy, p->dx, p->batch * p->channel * p->elem);
}
#endif

#ifdef BNG_BENCH_DNNL
/* A peer's dx against ours (float32): further apart than 1e-3 anywhere, the two do not
 * compute the same thing and timing them side by side would mean nothing. */
static void check_peer_dx(const void *ours, const float *theirs, size_t n, const char *what)
{
    double worst = 0;
    size_t c;

    for (c = 0; c < n; c++) {
        const double d = fabs((double)((const float *)ours)[c] - theirs[c]);
        if (d > worst)
            worst = d;
    }
    if (worst > 1e-3) {
        fprintf(stderr, "bench: %s differs from ours by %g: not timing the same thing\n", what, worst);
        exit(1);
    }
}

static void run_dnnl(problem *p)
{
    dnnl_primitive_execute(p->dnnl_bwd, p->dnnl_stream, p->dnnl_nargs, p->dnnl_args);
    dnnl_stream_wait(p->dnnl_stream);
}

#define DNNL_OK(call) do { if ((call) != dnnl_success) { fprintf(stderr, "bench: %s failed\n", #call); exit(1); } } while (0)

#ifdef BNG_BENCH_RELU
static void run_dnnl_relu(problem *p)
{
    dnnl_primitive_execute(p->dnnl_relu_bwd, p->dnnl_stream, p->dnnl_relu_nargs, p->dnnl_relu_args);
    dnnl_stream_wait(p->dnnl_stream);
}

/* oneDNN batch-norm with fuse_norm_relu (oneDNN 2.x: dnnl_fuse_norm_relu): its forward
 * training pass on x gives the mean, the variance, y (its output) and the workspace (the
 * ReLU mask) that its backward reads in place of y; the relu pair takes the same mean,
 * invar = 1/sqrt(variance) and y. Run after dnnl_setup (its stream). */
static void dnnl_relu_setup(problem *p, dnnl_engine_t engine)
{
    dnnl_memory_desc_t data, stat;
    dnnl_batch_normalization_desc_t fwd_d, bwd_d;
    dnnl_primitive_desc_t fwd_pd, bwd_pd;
    dnnl_primitive_t fwd;
    const dnnl_memory_desc_t *workspace;
    const dnnl_dims_t dims = {(dnnl_dim_t)p->batch, (dnnl_dim_t)p->channel, 1, 1};
    const dnnl_dims_t cdims = {(dnnl_dim_t)p->channel};
    const unsigned flags = dnnl_use_scale | dnnl_use_shift | dnnl_fuse_norm_relu;
    dnnl_memory_t *mem = p->dnnl_relu_memory;
    float *mean = p->relu_mean, *invar = p->relu_invar, *variance;
    dnnl_exec_arg_t fwd_args[7];
    size_t c;
    int i;

    for (i = 0; i < 4; i++)
        p->dnnl_relu_buffers[i] = calloc(p->channel, sizeof(float));
    variance = p->dnnl_relu_buffers[3];
    p->dnnl_relu_dx = alloc(p->batch * p->channel * sizeof(float));
    DNNL_OK(dnnl_memory_desc_init_by_tag(&data, 4, dims, dnnl_f32, dnnl_nhwc));
    DNNL_OK(dnnl_memory_desc_init_by_tag(&stat, 1, cdims, dnnl_f32, dnnl_x));
    DNNL_OK(dnnl_batch_normalization_forward_desc_init(&fwd_d, dnnl_forward_training, &data, 0.0f, flags));
    DNNL_OK(dnnl_primitive_desc_create(&fwd_pd, &fwd_d, NULL, engine, NULL));
    workspace = dnnl_primitive_desc_query_md(fwd_pd, dnnl_query_workspace_md, 0);
    DNNL_OK(dnnl_batch_normalization_backward_desc_init(&bwd_d, dnnl_backward, &data, &data, 0.0f, flags));
    DNNL_OK(dnnl_primitive_desc_create(&bwd_pd, &bwd_d, NULL, engine, fwd_pd));
    DNNL_OK(dnnl_primitive_create(&fwd, fwd_pd));
    DNNL_OK(dnnl_primitive_create(&p->dnnl_relu_bwd, bwd_pd));
    {
        /* src, mean, variance, diff_dst, scale, shift, workspace, dst (y), diff_src,
         * diff_scale, diff_shift: the backward's ten and the forward's dst */
        static const int args[10] = {DNNL_ARG_SRC, DNNL_ARG_MEAN, DNNL_ARG_VARIANCE, DNNL_ARG_DIFF_DST,
                                     DNNL_ARG_SCALE, DNNL_ARG_SHIFT, DNNL_ARG_WORKSPACE, DNNL_ARG_DIFF_SRC,
                                     DNNL_ARG_DIFF_SCALE, DNNL_ARG_DIFF_SHIFT};
        void *ptrs[10] = {p->x, mean, variance, p->dy, p->scale, p->dnnl_relu_buffers[2],
                          DNNL_MEMORY_ALLOCATE, p->dnnl_relu_dx, p->dnnl_relu_buffers[0],
                          p->dnnl_relu_buffers[1]};
        dnnl_memory_t y;
        for (i = 0; i < 10; i++) {
            const int rows = i == 0 || i == 3 || i == 7;
            DNNL_OK(dnnl_memory_create(&mem[i], i == 6 ? workspace : rows ? &data : &stat, engine, ptrs[i]));
            p->dnnl_relu_args[i].arg = args[i];
            p->dnnl_relu_args[i].memory = mem[i];
        }
        p->dnnl_relu_nargs = 10;
        DNNL_OK(dnnl_memory_create(&y, &data, engine, p->y));
        fwd_args[0] = p->dnnl_relu_args[0];
        fwd_args[1] = p->dnnl_relu_args[1];
        fwd_args[2] = p->dnnl_relu_args[2];
        fwd_args[3] = p->dnnl_relu_args[4];
        fwd_args[4] = p->dnnl_relu_args[5];
        fwd_args[5] = p->dnnl_relu_args[6];
        fwd_args[6].arg = DNNL_ARG_DST;
        fwd_args[6].memory = y;
        DNNL_OK(dnnl_primitive_execute(fwd, p->dnnl_stream, 7, fwd_args));
        DNNL_OK(dnnl_stream_wait(p->dnnl_stream));
        dnnl_memory_destroy(y);
    }
    for (c = 0; c < p->channel; c++)
        invar[c] = 1.0f / sqrtf(variance[c]);
    dnnl_primitive_destroy(fwd);
    dnnl_primitive_desc_destroy(bwd_pd);
    dnnl_primitive_desc_destroy(fwd_pd);
}
#endif

/* oneDNN batch-norm backward, f32, nhwc (N = batch, H = W = 1) or nchw (H = spatial,
 * W = 1), scale and shift gradients, one thread (OMP_NUM_THREADS=1). Returns its
 * implementation's name. */
static const char *dnnl_setup(problem *p, dnnl_engine_t engine, float *variance, float *dx_out,
                              float *dbias_out, float *dscale_out)
{
    dnnl_memory_desc_t data, stat;
    dnnl_batch_normalization_desc_t fwd_d, bwd_d;
    dnnl_primitive_desc_t fwd_pd, bwd_pd;
    const dnnl_dims_t dims = {(dnnl_dim_t)p->batch, (dnnl_dim_t)p->channel, (dnnl_dim_t)p->spatial, 1};
    const dnnl_dims_t cdims = {(dnnl_dim_t)p->channel};
    const unsigned flags = dnnl_use_scale | dnnl_use_shift;
    const char *impl;
    dnnl_memory_t *mem = p->dnnl_memory;
    /* The backward primitive asks for the shift too, though its result does not use it. */
    void *ptrs[9] = {p->x, p->mean, variance, p->dy, p->scale, dx_out, dscale_out, dbias_out,
                     calloc(p->channel, sizeof(float))};
    const int args[9] = {DNNL_ARG_SRC, DNNL_ARG_MEAN, DNNL_ARG_VARIANCE, DNNL_ARG_DIFF_DST,
                         DNNL_ARG_SCALE, DNNL_ARG_DIFF_SRC, DNNL_ARG_DIFF_SCALE, DNNL_ARG_DIFF_SHIFT,
                         DNNL_ARG_SHIFT};
    int i;

    DNNL_OK(dnnl_memory_desc_init_by_tag(&data, 4, dims, dnnl_f32, p->nchw ? dnnl_nchw : dnnl_nhwc));
    DNNL_OK(dnnl_memory_desc_init_by_tag(&stat, 1, cdims, dnnl_f32, dnnl_x));
    DNNL_OK(dnnl_batch_normalization_forward_desc_init(&fwd_d, dnnl_forward_training, &data, 0.0f, flags));
    DNNL_OK(dnnl_primitive_desc_create(&fwd_pd, &fwd_d, NULL, engine, NULL));
    DNNL_OK(dnnl_batch_normalization_backward_desc_init(&bwd_d, dnnl_backward, &data, &data, 0.0f, flags));
    DNNL_OK(dnnl_primitive_desc_create(&bwd_pd, &bwd_d, NULL, engine, fwd_pd));
    DNNL_OK(dnnl_primitive_desc_query(bwd_pd, dnnl_query_impl_info_str, 0, &impl));
    DNNL_OK(dnnl_primitive_create(&p->dnnl_bwd, bwd_pd));
    p->dnnl_buffers[0] = variance;
    p->dnnl_buffers[1] = dscale_out;
    p->dnnl_buffers[2] = dbias_out;
    p->dnnl_buffers[3] = ptrs[8];
    DNNL_OK(dnnl_stream_create(&p->dnnl_stream, engine, dnnl_stream_default_flags));
    for (i = 0; i < 9; i++) {
        DNNL_OK(dnnl_memory_create(&mem[i], i == 0 || i == 3 || i == 5 ? &data : &stat, engine, ptrs[i]));
        p->dnnl_args[i].arg = args[i];
        p->dnnl_args[i].memory = mem[i];
    }
    p->dnnl_nargs = 9;
    DNNL_OK(dnnl_primitive_execute(p->dnnl_bwd, p->dnnl_stream, p->dnnl_nargs, p->dnnl_args));
    DNNL_OK(dnnl_stream_wait(p->dnnl_stream));
    /* impl lives in the primitive descriptor: copy it before the descriptors go. */
    snprintf(p->dnnl_impl, sizeof p->dnnl_impl, "%s", impl);
    dnnl_primitive_desc_destroy(bwd_pd);
    dnnl_primitive_desc_destroy(fwd_pd);
    return p->dnnl_impl;
}
#endif

/* ---- measurement ---- */

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Rounds of one call per contender (a batch of calls for tiny shapes), each after an
 * untimed call of the same contender, until the time budget is spent; the median per
 * contender. */
static void measure(problem *p, const contender *v, int nv, double seconds, double *median)
{
    static double samples[MAX_CONTENDERS][MAX_ROUNDS];
    double warm = 0, start;
    int i, inner = 1, rounds = 0, r, k;

    for (i = 0; i < nv; i++) {
        const double t0 = now();
        v[i].run(p);
        warm += now() - t0;
    }
    while (warm * inner < 2e-4 && inner < 1 << 20)     /* samples of at least ~0.2 ms */
        inner *= 2;
    start = now();
    while (rounds < MAX_ROUNDS && (rounds < 5 || now() - start < seconds)) {
        for (i = 0; i < nv; i++) {
            double t0;
            v[i].run(p);    /* untimed: the caches as this contender leaves them, not the last */
            t0 = now();
            for (k = 0; k < inner; k++)
                v[i].run(p);
            samples[i][rounds] = (now() - t0) / inner;
        }
        rounds++;
    }
    for (i = 0; i < nv; i++) {
        qsort(samples[i], (size_t)rounds, sizeof(double), cmp_double);
        r = rounds / 2;
        median[i] = rounds % 2 ? samples[i][r] : (samples[i][r - 1] + samples[i][r]) / 2;
    }
}

static unsigned state = 12345;
static float uniform(float lo, float hi)
{
    state = state * 1664525u + 1013904223u;
    return lo + (hi - lo) * (float)(state >> 8) / 16777216.0f;
}

static int host_cores(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n > BNG_TARGET_CORES)
        n = BNG_TARGET_CORES;
    return n < 1 ? 1 : (int)n;
}

#ifdef BNG_BENCH_DNNL
static dnnl_engine_t engine;
static void destroy_engine(void)
{
    dnnl_engine_destroy(engine);
}
#endif

#ifdef BNG_BENCH_RELU
/* The fused ReLU from the forward's keep bits (contender relu_at + 2) against the
 * separate pass (relu_at + 1) and oneDNN's fuse_norm_relu, which reads its forward's
 * mask too: the goals at the DRAM shapes. */
static void relu_bits_line(const char *dtype, const char *backend, size_t batch, size_t channel,
                           const double *median, int relu_at, int dnnl_relu_at)
{
    const double apart = median[relu_at + 1] / median[relu_at + 2];
    const int dram = is_dram_shape(batch * channel);
    char vs_dnnl[96] = "";

    if (dnnl_relu_at >= 0) {
        const double ratio = median[dnnl_relu_at] / median[relu_at + 2];
        snprintf(vs_dnnl, sizeof vs_dnnl, "; %.2fx as fast as oneDNN fuse_norm_relu (goal 1.15x: %s)",
                 ratio, dram ? verdict(ratio >= 1.15) : "not judged");
    }
    printf("  %s %s %s %zux%zu on %s: fused ReLU from the keep bits %.2fx as fast as the "
           "separate pass + the vendor's call (goal 1.35x at DRAM shapes: %s), %.2fx as fast as "
           "from y%s\n", BNG_TARGET_NAME, backend, dtype, batch, channel, isa(), apart,
           dram ? verdict(apart >= 1.35) : "not a DRAM shape, not judged",
           median[relu_at] / median[relu_at + 2], vs_dnnl);
}
#endif

static void bench_shape(const char *dtype, const char *backend, size_t batch, size_t channel,
                        double seconds, FILE *csv)
{
    const int f16 = strcmp(dtype, "f16") == 0;
    problem p;
    contender v[MAX_CONTENDERS];
    double median[MAX_CONTENDERS];
    int nv = 0, i, dnnl_at = -1, roof_at, infer_at = -1, relu_at = -1, dnnl_relu_at = -1;
    int acc_at = -1, s_at = -1;
#ifdef BNG_BENCH_DNNL
    const char *impl = NULL;
#endif
    size_t n = batch * channel, c, stats_size = sizeof(float);
    char specialized[64];

    memset(&p, 0, sizeof p);
    p.batch = batch;
    p.channel = channel;
    p.spatial = 1;
    p.elem = f16 ? 2 : 4;
#if BNG_HAS_F16
    if (f16)
        stats_size = sizeof(bng_hp_stats_t);
#endif
    p.x = alloc(n * p.elem);
    p.dy = alloc(n * p.elem);
    p.dx = alloc(n * p.elem);
    p.mean = alloc(channel * stats_size);
    p.invar = alloc(channel * stats_size);
    p.scale = alloc(channel * stats_size);
    p.dbias = alloc(channel * stats_size);
    p.dscale = alloc(channel * stats_size);
    for (c = 0; c < n; c++) {
        const float xv = uniform(-2, 2), gv = uniform(-1, 1);
        if (f16) {
#if BNG_HAS_F16
            ((half *)p.x)[c] = bng_half_from_float(xv);
            ((half *)p.dy)[c] = bng_half_from_float(gv);
#endif
        } else {
            ((float *)p.x)[c] = xv;
            ((float *)p.dy)[c] = gv;
        }
    }
    for (c = 0; c < channel; c++) {
        const float s[3] = {uniform(-0.1f, 0.1f), uniform(0.5f, 1.5f), uniform(0.5f, 2.0f)};
        void *arrays[3] = {p.mean, p.invar, p.scale};
        for (i = 0; i < 3; i++) {
#if BNG_HAS_F16
            if (f16 && stats_size == 2) {
                ((half *)arrays[i])[c] = bng_half_from_float(s[i]);
                continue;
            }
#endif
            ((float *)arrays[i])[c] = s[i];
        }
    }
    p.params[BNG_PARAM_MEAN] = (long long)(intptr_t)p.mean;
    p.params[BNG_PARAM_INVAR] = (long long)(intptr_t)p.invar;
    p.params[BNG_PARAM_SCALE] = (long long)(intptr_t)p.scale;
    p.params[BNG_PARAM_DBIAS] = (long long)(intptr_t)p.dbias;
    p.params[BNG_PARAM_DSCALE] = (long long)(intptr_t)p.dscale;
    p.params[BNG_PARAM_BATCH] = (long long)batch;
    p.params[BNG_PARAM_CHANNEL] = (long long)channel;
    p.params[BNG_PARAM_IS_TRAIN] = 1;
    p.mask = (1 << host_cores()) - 1;
#ifdef BNG_BENCH_EXT
    memcpy(p.infer_params, p.params, sizeof p.params);
    p.infer_params[BNG_PARAM_IS_TRAIN] = 0;
    p.sums = alloc(BNG_SUMS_FLOATS(channel) * sizeof(float));
    memset(p.ext_params, 0, sizeof p.ext_params);
    memcpy(p.ext_params, p.params, sizeof p.params);
    p.ext_params[BNG_PARAM_SUMS] = (long long)(intptr_t)p.sums;
    memcpy(p.acc_params, p.ext_params, sizeof p.ext_params);
    p.acc_params[BNG_PARAM_FLAGS] = BNG_FLAG_ACCUMULATE_DX;
#endif
#ifdef BNG_BENCH_RELU
    p.y = alloc(n * p.elem);
    p.dy_masked = alloc(n * p.elem);
    p.relu_mean = alloc(channel * stats_size);
    p.relu_invar = alloc(channel * stats_size);
    p.relu_dbias = alloc(channel * stats_size);
    p.relu_dscale = alloc(channel * stats_size);
    memcpy(p.y, p.x, n * p.elem);       /* a forward output with about half of it below 0 */
    memcpy(p.relu_mean, p.mean, channel * stats_size);
    memcpy(p.relu_invar, p.invar, channel * stats_size);
    memcpy(p.apart_params, p.params, sizeof p.params);
    p.apart_params[BNG_PARAM_MEAN] = (long long)(intptr_t)p.relu_mean;
    p.apart_params[BNG_PARAM_INVAR] = (long long)(intptr_t)p.relu_invar;
    p.apart_params[BNG_PARAM_DBIAS] = (long long)(intptr_t)p.relu_dbias;
    p.apart_params[BNG_PARAM_DSCALE] = (long long)(intptr_t)p.relu_dscale;
    memcpy(p.relu_params, p.ext_params, sizeof p.ext_params);
    memcpy(p.relu_params, p.apart_params, sizeof p.apart_params);
    p.relu_params[BNG_PARAM_FLAGS] = BNG_FLAG_RELU;
    p.relu_params[BNG_PARAM_Y] = (long long)(intptr_t)p.y;
    p.keep_bits = alloc((batch + 8 * p.elem - 1) / (8 * p.elem) * channel * p.elem);
    memcpy(p.bits_params, p.relu_params, sizeof p.relu_params);
    p.bits_params[BNG_PARAM_FLAGS] = BNG_FLAG_RELU | BNG_FLAG_RELU_BITS;
    p.bits_params[BNG_PARAM_RELU_BITS] = (long long)(intptr_t)p.keep_bits;
#endif

    if (f16) {
#if BNG_HAS_F16
        snprintf(specialized, sizeof specialized, "%s _p", bng_f16_config.kernel_for_channels(channel)->channels ? "specialized" : "generic (no spec.)");
        v[nv++] = (contender){specialized, run_p_f16};
        v[nv++] = (contender){"generic _p", run_generic_f16};
        s_at = nv;
        v[nv++] = (contender){"_s all cores", run_s_f16};
        v[nv++] = (contender){"naive loop", run_naive_f16};
#ifdef BNG_BENCH_EXT
        infer_at = nv;
        v[nv++] = (contender){"_p is_train=0", run_infer_f16};
        v[nv++] = (contender){"dx-only _p", run_dx_only_f16};
        v[nv++] = (contender){"reduce+apply _p, 1 device", run_reduce_apply_f16};
#if BNG_HAS_EXT
        acc_at = nv;
        v[nv++] = (contender){"ext _p, dx accumulate", run_accumulate_dx_f16};
        v[nv++] = (contender){"ext _s all cores, dx accumulate", run_accumulate_dx_s_f16};
#endif
#endif
#ifdef BNG_BENCH_RELU
        relu_at = nv;
        v[nv++] = (contender){"relu fused ext _p", run_relu_fused_f16};
        v[nv++] = (contender){"relu pass + _p", run_relu_apart_f16};
        v[nv++] = (contender){"relu fused ext _p, bits", run_relu_bits_f16};
#endif
#endif
    } else {
        snprintf(specialized, sizeof specialized, "%s _p", bng_f32_config.kernel_for_channels(channel)->channels ? "specialized" : "generic (no spec.)");
        v[nv++] = (contender){specialized, run_p_f32};
        v[nv++] = (contender){"generic _p", run_generic_f32};
        s_at = nv;
        v[nv++] = (contender){"_s all cores", run_s_f32};
        v[nv++] = (contender){"naive loop", run_naive_f32};
#ifdef BNG_BENCH_EXT
        infer_at = nv;
        v[nv++] = (contender){"_p is_train=0", run_infer_f32};
        v[nv++] = (contender){"dx-only _p", run_dx_only_f32};
        v[nv++] = (contender){"reduce+apply _p, 1 device", run_reduce_apply_f32};
#if BNG_HAS_EXT
        acc_at = nv;
        v[nv++] = (contender){"ext _p, dx accumulate", run_accumulate_dx_f32};
        v[nv++] = (contender){"ext _s all cores, dx accumulate", run_accumulate_dx_s_f32};
#endif
#endif
#ifdef BNG_BENCH_RELU
        relu_at = nv;
        v[nv++] = (contender){"relu fused ext _p", run_relu_fused_f32};
        v[nv++] = (contender){"relu pass + _p", run_relu_apart_f32};
        v[nv++] = (contender){"relu fused ext _p, bits", run_relu_bits_f32};
#endif
#ifdef BNG_BENCH_DNNL
        {
            float *variance = alloc(channel * sizeof(float));
            for (c = 0; c < channel; c++)
                variance[c] = 1.0f / (((float *)p.invar)[c] * ((float *)p.invar)[c]);
            if (!engine) {
                DNNL_OK(dnnl_engine_create(&engine, dnnl_cpu, 0));
                atexit(destroy_engine);
            }
            /* oneDNN writes its own outputs, so that ours stay untouched. */
            p.dnnl_dx = alloc(n * 4);
            impl = dnnl_setup(&p, engine, variance, p.dnnl_dx, alloc(channel * 4), alloc(channel * 4));
            dnnl_at = nv;
            v[nv++] = (contender){"oneDNN", run_dnnl};
#ifdef BNG_BENCH_RELU
            dnnl_relu_setup(&p, engine);
            dnnl_relu_at = nv;
            v[nv++] = (contender){"oneDNN fuse_norm_relu", run_dnnl_relu};
#endif
        }
#endif
    }
    roof_at = nv;
    v[nv++] = (contender){"roofline (plain stores)", run_roofline};
#ifdef BNG_BENCH_STREAMING
    v[nv++] = (contender){"roofline (streaming)", run_roofline_streaming};
#endif
#ifdef BNG_BENCH_RELU
    pack_keep_bits(&p);     /* y is final here (oneDNN's forward wrote it) */
#endif

    measure(&p, v, nv, seconds, median);
    if (roof_at + 1 < nv && median[roof_at + 1] < median[roof_at])
        roof_at++;      /* the faster of the two is the bound */
#ifdef BNG_BENCH_DNNL
    if (dnnl_at >= 0) {
        /* The roofline ran last and scribbled over dx: recompute ours, compare. */
        run_p_f32(&p);
        run_dnnl(&p);
        check_peer_dx(p.dx, p.dnnl_dx, n, "oneDNN's dx");
        if (batch * channel >= 262144 && strcmp(backend, "gnu") == 0)
            printf("  (oneDNN implementation: %s)\n", impl);
    }
#ifdef BNG_BENCH_RELU
    if (dnnl_relu_at >= 0) {
        /* oneDNN's fused dx against ours, on the same y, mean and variance */
        run_relu_fused_f32(&p);
        run_dnnl_relu(&p);
        check_peer_dx(p.dx, p.dnnl_relu_dx, n, "oneDNN's fused ReLU dx");
    }
#endif
#endif
#ifdef BNG_BENCH_RELU
    if (relu_at >= 0) {
        /* the fused call, from y and from the bits, and the separate pass give the same
         * bits (the Check suite's claim, on this shape) */
        void *fused = alloc(n * p.elem);
        v[relu_at].run(&p);
        memcpy(fused, p.dx, n * p.elem);
        for (i = 1; i <= 2; i++) {
            v[relu_at + i].run(&p);
            if (memcmp(fused, p.dx, n * p.elem)) {
                fprintf(stderr, "bench: the fused ReLU call differs from %s\n", v[relu_at + i].name);
                exit(1);
            }
        }
        free(fused);
    }
#endif
    for (i = 0; i < nv; i++) {
        const double gbps = 5.0 * (double)(n * p.elem) / median[i] / 1e9;
        char vs_dnnl[16] = "-";
        if (dnnl_at >= 0)
            snprintf(vs_dnnl, sizeof vs_dnnl, "%.2fx", median[dnnl_at] / median[i]);
        printf("%-7s %-9s %-4s %8zux%-5zu %-26s %11.1f %8.1f %9s %8.0f%%\n", BNG_TARGET_NAME,
               backend, dtype, batch, channel, v[i].name, median[i] * 1e6, gbps, vs_dnnl,
               100.0 * median[roof_at] / median[i]);
        if (csv)
            fprintf(csv, "%s,%s,%s,%zu,%zu,%s,%.3f,%.2f,%s,%.3f\n", BNG_TARGET_NAME, backend, dtype,
                    batch, channel, v[i].name, median[i] * 1e6, gbps,
                    dnnl_at >= 0 ? vs_dnnl : "", median[roof_at] / median[i]);
    }
    /* The extensions against today's calls (contender 0 is the vendor's _p). */
    if (infer_at >= 0) {
        const double dx_only = median[infer_at] / median[infer_at + 1];
        const double reduce_apply = median[infer_at + 2] / median[0] - 1.0;
        printf("  %s %s %s %zux%zu on %s: dx-only %.2fx as fast as the inference call (goal 1.6x: "
               "%s); reduce + apply %+.1f%% against the vendor's call (goal within 10%%: %s)\n",
               BNG_TARGET_NAME, backend, dtype, batch, channel, isa(), dx_only,
               verdict(dx_only >= 1.6), 100.0 * reduce_apply, verdict(reduce_apply <= 0.10));
    }
    if (acc_at >= 0) {
        /* the same call adding into dx: one stream more (dx read, and written plainly);
         * _s against the vendor's _s, through the host's DMA engine */
        const double accumulate = median[acc_at] / median[0];
        const double accumulate_s = median[acc_at + 1] / median[s_at];
        const int dram = is_dram_shape(batch * channel);
        printf("  %s %s %s %zux%zu on %s: ext accumulating dx takes %.2fx the vendor's call's "
               "time in _p, %.2fx in _s all cores (goal within 1.25x at DRAM shapes: %s, %s)\n",
               BNG_TARGET_NAME, backend, dtype, batch, channel, isa(), accumulate, accumulate_s,
               dram ? verdict(accumulate <= 1.25) : "not a DRAM shape, not judged",
               dram ? verdict(accumulate_s <= 1.25) : "not a DRAM shape, not judged");
    }
    if (relu_at >= 0) {
        const double fused = median[relu_at + 1] / median[relu_at];
        const int dram = is_dram_shape(batch * channel);
        char vs_dnnl_relu[80] = "";
        if (dnnl_relu_at >= 0)
            snprintf(vs_dnnl_relu, sizeof vs_dnnl_relu,
                     "; %.2fx as fast as oneDNN fuse_norm_relu (goal: ahead, %s)",
                     median[dnnl_relu_at] / median[relu_at],
                     verdict(median[dnnl_relu_at] >= median[relu_at]));
        printf("  %s %s %s %zux%zu on %s: fused ReLU %.2fx as fast as the separate ReLU pass + the "
               "vendor's call (goal 1.25x at DRAM shapes: %s)%s\n", BNG_TARGET_NAME, backend, dtype,
               batch, channel, isa(), fused,
               dram ? verdict(fused >= 1.25) : "not a DRAM shape, not judged", vs_dnnl_relu);
#ifdef BNG_BENCH_RELU
        relu_bits_line(dtype, backend, batch, channel, median, relu_at, dnnl_relu_at);
#endif
    }
    if (p.params[BNG_PARAM_STATUS] != BNG_OK) {
        fprintf(stderr, "bench: status %lld\n", p.params[BNG_PARAM_STATUS]);
        exit(1);
    }
#ifdef BNG_BENCH_RELU
    if (p.relu_params[BNG_PARAM_STATUS] != BNG_OK || p.apart_params[BNG_PARAM_STATUS] != BNG_OK) {
        fprintf(stderr, "bench: relu status %lld / %lld\n", p.relu_params[BNG_PARAM_STATUS],
                p.apart_params[BNG_PARAM_STATUS]);
        exit(1);
    }
    free(p.y);
    free(p.dy_masked);
    free(p.relu_mean);
    free(p.relu_invar);
    free(p.relu_dbias);
    free(p.relu_dscale);
    free(p.keep_bits);
    if (p.bits_params[BNG_PARAM_STATUS] != BNG_OK) {
        fprintf(stderr, "bench: relu bits status %lld\n", p.bits_params[BNG_PARAM_STATUS]);
        exit(1);
    }
#endif
#ifdef BNG_BENCH_EXT
    if (p.infer_params[BNG_PARAM_STATUS] != BNG_OK || p.ext_params[BNG_PARAM_STATUS] != BNG_OK
        || (acc_at >= 0 && (p.acc_params[BNG_PARAM_STATUS] != BNG_OK
                            || p.acc_s_status != BNG_OK))) {
        fprintf(stderr, "bench: status %lld / %lld / %lld / %lld (inference, ext, accumulating "
                "dx _p, _s)\n", p.infer_params[BNG_PARAM_STATUS], p.ext_params[BNG_PARAM_STATUS],
                p.acc_params[BNG_PARAM_STATUS], p.acc_s_status);
        exit(1);
    }
    free(p.sums);
#endif
#ifdef BNG_BENCH_DNNL
    if (dnnl_at >= 0) {
        dnnl_primitive_destroy(p.dnnl_bwd);
        dnnl_stream_destroy(p.dnnl_stream);
        for (i = 0; i < 9; i++)
            dnnl_memory_destroy(p.dnnl_memory[i]);
        for (i = 0; i < 4; i++)
            free(p.dnnl_buffers[i]);
        free(p.dnnl_dx);
    }
#ifdef BNG_BENCH_RELU
    if (dnnl_relu_at >= 0) {
        dnnl_primitive_destroy(p.dnnl_relu_bwd);
        for (i = 0; i < 10; i++)
            dnnl_memory_destroy(p.dnnl_relu_memory[i]);
        for (i = 0; i < 4; i++)
            free(p.dnnl_relu_buffers[i]);
        free(p.dnnl_relu_dx);
    }
#endif
#endif
    free(p.x);
    free(p.dy);
    free(p.dx);
    free(p.mean);
    free(p.invar);
    free(p.scale);
    free(p.dbias);
    free(p.dscale);
}

#ifdef BNG_BENCH_NCHW
static void run_nchw_f32(problem *p) { fp_batch_norm_grad_ext_p(p->x, p->dy, p->dx, p->ext_params); }

#ifdef BNG_BENCH_STREAMING
/* NCHW's bound: x and dy read once, dx written once with streaming stores, what _p
 * moves when a channel's x and dy stay in the cache between its two passes. */
static void run_nchw_roofline(problem *p)
{
    roofline_stream(p->x, p->dy, p->dx, p->batch * p->channel * p->spatial * p->elem);
}
#endif

/* One NCHW shape, f32: ext _p with BNG_FLAG_NCHW against oneDNN's nchw backward (one
 * thread, this process) and the one-pass roofline; returns oneDNN's time over ours (0
 * without oneDNN). */
static double bench_nchw_shape(const char *backend, size_t batch, size_t channel, size_t spatial,
                               double seconds, FILE *csv)
{
    const size_t n = batch * channel * spatial;
    problem p;
    contender v[3];
    double median[3], ratio = 0;
    int nv = 0, i, dnnl_at = -1, roof_at = -1;
    size_t c;

    memset(&p, 0, sizeof p);
    p.batch = batch;
    p.channel = channel;
    p.spatial = spatial;
    p.nchw = 1;
    p.elem = 4;
    p.x = alloc(n * 4);
    p.dy = alloc(n * 4);
    p.dx = alloc(n * 4);
    p.mean = alloc(channel * 4);
    p.invar = alloc(channel * 4);
    p.scale = alloc(channel * 4);
    p.dbias = alloc(channel * 4);
    p.dscale = alloc(channel * 4);
    for (c = 0; c < n; c++) {
        ((float *)p.x)[c] = uniform(-2, 2);
        ((float *)p.dy)[c] = uniform(-1, 1);
    }
    for (c = 0; c < channel; c++) {
        ((float *)p.mean)[c] = uniform(-0.1f, 0.1f);
        ((float *)p.invar)[c] = uniform(0.5f, 1.5f);
        ((float *)p.scale)[c] = uniform(0.5f, 2.0f);
    }
    p.ext_params[BNG_PARAM_MEAN] = (long long)(intptr_t)p.mean;
    p.ext_params[BNG_PARAM_INVAR] = (long long)(intptr_t)p.invar;
    p.ext_params[BNG_PARAM_SCALE] = (long long)(intptr_t)p.scale;
    p.ext_params[BNG_PARAM_DBIAS] = (long long)(intptr_t)p.dbias;
    p.ext_params[BNG_PARAM_DSCALE] = (long long)(intptr_t)p.dscale;
    p.ext_params[BNG_PARAM_BATCH] = (long long)batch;
    p.ext_params[BNG_PARAM_CHANNEL] = (long long)channel;
    p.ext_params[BNG_PARAM_IS_TRAIN] = 1;
    p.ext_params[BNG_PARAM_FLAGS] = BNG_FLAG_NCHW;
    p.ext_params[BNG_PARAM_SPATIAL] = (long long)spatial;
    v[nv++] = (contender){bng_f32_config.nchw_kernel_for_spatial(spatial)->spatial
                          ? "NCHW ext _p (specialized)" : "NCHW ext _p (generic)", run_nchw_f32};
#ifdef BNG_BENCH_DNNL
    {
        float *variance = alloc(channel * sizeof(float));
        for (c = 0; c < channel; c++)
            variance[c] = 1.0f / (((float *)p.invar)[c] * ((float *)p.invar)[c]);
        if (!engine) {
            DNNL_OK(dnnl_engine_create(&engine, dnnl_cpu, 0));
            atexit(destroy_engine);
        }
        p.dnnl_dx = alloc(n * 4);
        dnnl_setup(&p, engine, variance, p.dnnl_dx, alloc(channel * 4), alloc(channel * 4));
        dnnl_at = nv;
        v[nv++] = (contender){"oneDNN nchw", run_dnnl};
    }
#endif
#ifdef BNG_BENCH_STREAMING
    roof_at = nv;
    v[nv++] = (contender){"roofline (one pass)", run_nchw_roofline};
#endif
    measure(&p, v, nv, seconds, median);
    if (p.ext_params[BNG_PARAM_STATUS] != BNG_OK) {
        fprintf(stderr, "bench: NCHW status %lld\n", p.ext_params[BNG_PARAM_STATUS]);
        exit(1);
    }
#ifdef BNG_BENCH_DNNL
    {
        run_nchw_f32(&p);     /* the roofline ran last and scribbled over dx */
        check_peer_dx(p.dx, p.dnnl_dx, n, "oneDNN's NCHW dx");
        ratio = median[dnnl_at] / median[0];
        dnnl_primitive_destroy(p.dnnl_bwd);
        dnnl_stream_destroy(p.dnnl_stream);
        for (i = 0; i < 9; i++)
            dnnl_memory_destroy(p.dnnl_memory[i]);
        for (i = 0; i < 4; i++)
            free(p.dnnl_buffers[i]);
        free(p.dnnl_dx);
    }
#endif
    for (i = 0; i < nv; i++) {
        char shape[48], vs_dnnl[16] = "-", roofline[16] = "-", roof_csv[16] = "";
        const double gbps = 5.0 * (double)(n * 4) / median[i] / 1e9;
        snprintf(shape, sizeof shape, "%zux%zux%zu", batch, channel, spatial);
        if (dnnl_at >= 0)
            snprintf(vs_dnnl, sizeof vs_dnnl, "%.2fx", median[dnnl_at] / median[i]);
        if (roof_at >= 0) {
            snprintf(roofline, sizeof roofline, "%.0f%%", 100.0 * median[roof_at] / median[i]);
            snprintf(roof_csv, sizeof roof_csv, "%.3f", median[roof_at] / median[i]);
        }
        printf("%-7s %-9s %-4s %14s %-26s %11.1f %8.1f %9s %9s\n", BNG_TARGET_NAME, backend, "f32",
               shape, v[i].name, median[i] * 1e6, gbps, vs_dnnl, roofline);
        if (csv)
            fprintf(csv, "%s,%s,f32,%zu,%zu,%s,%.3f,%.2f,%s,%s\n", BNG_TARGET_NAME, backend, batch,
                    channel * spatial, v[i].name, median[i] * 1e6, gbps,
                    dnnl_at >= 0 ? vs_dnnl : "", roof_csv);
    }
    free(p.x);
    free(p.dy);
    free(p.dx);
    free(p.mean);
    free(p.invar);
    free(p.scale);
    free(p.dbias);
    free(p.dscale);
    return ratio;
}

/* The NCHW shapes, and oneDNN's time over ours as a geometric mean over the DRAM ones
 * (arrays of 8 MiB or more). */
static void bench_nchw(const char *backend, const char *shapes, double seconds, FILE *csv)
{
    char *list = strdup(shapes), *tok;
    double log_sum = 0;
    int dram = 0;

    for (tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
        size_t batch, channel, spatial;
        double ratio;
        if (sscanf(tok, "%zux%zux%zu", &batch, &channel, &spatial) != 3) {
            fprintf(stderr, "bench: bad NCHW shape %s\n", tok);
            exit(2);
        }
        ratio = bench_nchw_shape(backend, batch, channel, spatial, seconds, csv);
        if (ratio > 0 && is_dram_shape(batch * channel * spatial)) {
            log_sum += log(ratio);
            dram++;
        }
    }
    dram_geomean_line(backend, "NCHW", log_sum, dram, 1.3);
    free(list);
}
#endif

#ifdef BNG_BENCH_FWD
static void run_fwd_f32(problem *p) { fp_batch_norm_forward_p(p->x, p->dx, p->fwd_params); }
static void run_fwd_relu_f32(problem *p) { fp_batch_norm_forward_p(p->x, p->dx, p->fwd_relu_params); }

#ifdef BNG_BENCH_DNNL
static void run_dnnl_fwd(problem *p)
{
    dnnl_primitive_execute(p->dnnl_fwd, p->dnnl_stream, 6, p->dnnl_fwd_args);
    dnnl_stream_wait(p->dnnl_stream);
}

static void run_dnnl_fwd_relu(problem *p)
{
    dnnl_primitive_execute(p->dnnl_fwd_relu, p->dnnl_stream, 7, p->dnnl_fwd_args);
    dnnl_stream_wait(p->dnnl_stream);
}

/* oneDNN's forward training, f32 nhwc (N = batch, H = W = 1) or nchw (H = spatial, W = 1),
 * scale and shift, epsilon as ours, one thread: y, the mean and the variance into
 * buffers of its own; and the same with fuse_norm_relu, whose workspace (its ReLU mask,
 * for its backward) is the seventh argument. */
static void dnnl_fwd_setup(problem *p, float eps)
{
    dnnl_memory_desc_t data, stat;
    dnnl_batch_normalization_desc_t fwd_d, relu_d;
    dnnl_primitive_desc_t fwd_pd, relu_pd;
    const dnnl_dims_t dims = {(dnnl_dim_t)p->batch, (dnnl_dim_t)p->channel, (dnnl_dim_t)p->spatial, 1};
    const dnnl_dims_t cdims = {(dnnl_dim_t)p->channel};
    const int args[6] = {DNNL_ARG_SRC, DNNL_ARG_DST, DNNL_ARG_MEAN, DNNL_ARG_VARIANCE,
                         DNNL_ARG_SCALE, DNNL_ARG_SHIFT};
    void *ptrs[6];
    int i;

    p->dnnl_y = alloc(p->batch * p->channel * p->spatial * sizeof(float));
    p->dnnl_fwd_mean = alloc(p->channel * sizeof(float));
    p->dnnl_fwd_variance = alloc(p->channel * sizeof(float));
    ptrs[0] = p->x;
    ptrs[1] = p->dnnl_y;
    ptrs[2] = p->dnnl_fwd_mean;
    ptrs[3] = p->dnnl_fwd_variance;
    ptrs[4] = p->scale;
    ptrs[5] = p->bias;
    if (!engine) {
        DNNL_OK(dnnl_engine_create(&engine, dnnl_cpu, 0));
        atexit(destroy_engine);
    }
    DNNL_OK(dnnl_memory_desc_init_by_tag(&data, 4, dims, dnnl_f32, p->nchw ? dnnl_nchw : dnnl_nhwc));
    DNNL_OK(dnnl_memory_desc_init_by_tag(&stat, 1, cdims, dnnl_f32, dnnl_x));
    DNNL_OK(dnnl_batch_normalization_forward_desc_init(&fwd_d, dnnl_forward_training, &data, eps,
                                                       dnnl_use_scale | dnnl_use_shift));
    DNNL_OK(dnnl_primitive_desc_create(&fwd_pd, &fwd_d, NULL, engine, NULL));
    DNNL_OK(dnnl_primitive_create(&p->dnnl_fwd, fwd_pd));
    DNNL_OK(dnnl_batch_normalization_forward_desc_init(&relu_d, dnnl_forward_training, &data, eps,
                                                       dnnl_use_scale | dnnl_use_shift | dnnl_fuse_norm_relu));
    DNNL_OK(dnnl_primitive_desc_create(&relu_pd, &relu_d, NULL, engine, NULL));
    DNNL_OK(dnnl_primitive_create(&p->dnnl_fwd_relu, relu_pd));
    DNNL_OK(dnnl_stream_create(&p->dnnl_stream, engine, dnnl_stream_default_flags));
    for (i = 0; i < 6; i++) {
        DNNL_OK(dnnl_memory_create(&p->dnnl_fwd_memory[i], i < 2 ? &data : &stat, engine, ptrs[i]));
        p->dnnl_fwd_args[i].arg = args[i];
        p->dnnl_fwd_args[i].memory = p->dnnl_fwd_memory[i];
    }
    DNNL_OK(dnnl_memory_create(&p->dnnl_fwd_memory[6],
                               dnnl_primitive_desc_query_md(relu_pd, dnnl_query_workspace_md, 0),
                               engine, DNNL_MEMORY_ALLOCATE));
    p->dnnl_fwd_args[6].arg = DNNL_ARG_WORKSPACE;
    p->dnnl_fwd_args[6].memory = p->dnnl_fwd_memory[6];
    dnnl_primitive_desc_destroy(fwd_pd);
    dnnl_primitive_desc_destroy(relu_pd);
}

/* oneDNN's y, mean and variance against ours (the variance as invar): they must agree
 * before they are timed side by side. */
static void dnnl_fwd_check(problem *p, float eps)
{
    size_t c;

    run_fwd_f32(p);
    run_dnnl_fwd(p);
    check_peer_dx(p->dx, p->dnnl_y, p->batch * p->channel * p->spatial, "oneDNN's forward y");
    check_peer_dx(p->mean, p->dnnl_fwd_mean, p->channel, "oneDNN's forward mean");
    for (c = 0; c < p->channel; c++)      /* its variance as our invar */
        p->dnnl_fwd_variance[c] = 1.0f / sqrtf(p->dnnl_fwd_variance[c] + eps);
    check_peer_dx(p->invar, p->dnnl_fwd_variance, p->channel, "oneDNN's forward variance");
    run_fwd_relu_f32(p);
    run_dnnl_fwd_relu(p);
    check_peer_dx(p->dx, p->dnnl_y, p->batch * p->channel * p->spatial,
                  "oneDNN's fuse_norm_relu forward y");
}

static void dnnl_fwd_free(problem *p)
{
    int i;
    dnnl_primitive_destroy(p->dnnl_fwd);
    dnnl_primitive_destroy(p->dnnl_fwd_relu);
    dnnl_stream_destroy(p->dnnl_stream);
    for (i = 0; i < 7; i++)
        dnnl_memory_destroy(p->dnnl_fwd_memory[i]);
    free(p->dnnl_y);
    free(p->dnnl_fwd_mean);
    free(p->dnnl_fwd_variance);
}
#endif

/* One shape, f32, NHWC (spatial 0) or NCHW: the training forward against oneDNN's, and
 * with the fused ReLU (y and its bits) against oneDNN's with fuse_norm_relu (y and its
 * workspace); ratio[0] and ratio[1] := oneDNN's time over ours (0 without oneDNN). GB/s
 * count three streams, x twice and y once: what ours moves when x does not stay in the
 * caches (the bits add a 32nd of y's). */
static void bench_fwd_shape(const char *backend, size_t batch, size_t channel, size_t spatial,
                            double seconds, FILE *csv, double *ratio)
{
    const size_t n = batch * channel * (spatial ? spatial : 1);
    const float eps = 1e-5f;
    problem p;
    contender v[4];
    double median[4];
    int nv = 0, i, dnnl_at = -1;
    size_t c;

    memset(&p, 0, sizeof p);
    p.batch = batch;
    p.channel = channel;
    p.spatial = spatial ? spatial : 1;
    p.nchw = spatial != 0;
    p.elem = 4;
    p.x = alloc(n * 4);
    p.dx = alloc(n * 4);
    p.mean = alloc(channel * 4);
    p.invar = alloc(channel * 4);
    p.scale = alloc(channel * 4);
    p.bias = alloc(channel * 4);
    p.moving_mean = alloc(channel * 4);
    p.moving_var = alloc(channel * 4);
    for (c = 0; c < n; c++)
        ((float *)p.x)[c] = 3.0f + uniform(-2, 2);
    for (c = 0; c < channel; c++) {
        ((float *)p.scale)[c] = uniform(0.5f, 2.0f);
        ((float *)p.bias)[c] = uniform(-1, 1);
        ((float *)p.moving_mean)[c] = 0.0f;
        ((float *)p.moving_var)[c] = 1.0f;
    }
    p.fwd_params[BNG_PARAM_MEAN] = (long long)(intptr_t)p.mean;
    p.fwd_params[BNG_PARAM_INVAR] = (long long)(intptr_t)p.invar;
    p.fwd_params[BNG_PARAM_SCALE] = (long long)(intptr_t)p.scale;
    p.fwd_params[BNG_FWD_PARAM_BIAS] = (long long)(intptr_t)p.bias;
    p.fwd_params[BNG_FWD_PARAM_MOVING_MEAN] = (long long)(intptr_t)p.moving_mean;
    p.fwd_params[BNG_FWD_PARAM_MOVING_VAR] = (long long)(intptr_t)p.moving_var;
    p.fwd_params[BNG_PARAM_BATCH] = (long long)batch;
    p.fwd_params[BNG_PARAM_CHANNEL] = (long long)channel;
    p.fwd_params[BNG_FWD_PARAM_EPS] = bng_fwd_float(eps);
    p.fwd_params[BNG_FWD_PARAM_MOMENTUM] = bng_fwd_float(0.9f);
#ifdef BNG_BENCH_FWD_NCHW
    if (p.nchw) {
        p.fwd_params[BNG_PARAM_FLAGS] = BNG_FWD_NCHW;
        p.fwd_params[BNG_FWD_PARAM_SPATIAL] = (long long)spatial;
    }
    p.relu_bits = alloc((p.nchw ? BNG_FWD_RELU_BITS_ELEMENTS_NCHW(batch, channel, spatial, 4)
                                : BNG_FWD_RELU_BITS_ELEMENTS(batch, channel, 4)) * 4);
#else
    p.relu_bits = alloc(BNG_FWD_RELU_BITS_ELEMENTS(batch, channel, 4) * 4);
#endif
    memcpy(p.fwd_relu_params, p.fwd_params, sizeof p.fwd_params);
    p.fwd_relu_params[BNG_PARAM_FLAGS] |= BNG_FWD_RELU | BNG_FWD_RELU_BITS;
    p.fwd_relu_params[BNG_FWD_PARAM_RELU_BITS] = (long long)(intptr_t)p.relu_bits;
    for (c = 0; c < channel; c++)       /* half of y below 0: the ReLU masks half */
        ((float *)p.bias)[c] = 0.0f;
    v[nv++] = (contender){"forward _p", run_fwd_f32};
    v[nv++] = (contender){"forward _p relu+bits", run_fwd_relu_f32};
    ratio[0] = ratio[1] = 0;
#ifdef BNG_BENCH_DNNL
    dnnl_fwd_setup(&p, eps);
    dnnl_fwd_check(&p, eps);
    dnnl_at = nv;
    v[nv++] = (contender){"oneDNN forward", run_dnnl_fwd};
    v[nv++] = (contender){"oneDNN fuse_norm_relu", run_dnnl_fwd_relu};
#endif
    measure(&p, v, nv, seconds, median);
    if (p.fwd_params[BNG_PARAM_STATUS] != BNG_OK || p.fwd_relu_params[BNG_PARAM_STATUS] != BNG_OK) {
        fprintf(stderr, "bench: forward status %lld, with the ReLU %lld\n",
                p.fwd_params[BNG_PARAM_STATUS], p.fwd_relu_params[BNG_PARAM_STATUS]);
        exit(1);
    }
#ifdef BNG_BENCH_DNNL
    ratio[0] = median[dnnl_at] / median[0];
    ratio[1] = median[dnnl_at + 1] / median[1];
    dnnl_fwd_free(&p);
#endif
    for (i = 0; i < nv; i++) {
        char shape[48], vs_dnnl[16] = "-";
        const double gbps = 3.0 * (double)(n * 4) / median[i] / 1e9;
        /* each against its own kind: the plain pair, the fused pair */
        const int peer = dnnl_at + (i % 2);
        if (spatial)
            snprintf(shape, sizeof shape, "%zux%zux%zu", batch, channel, spatial);
        else
            snprintf(shape, sizeof shape, "%zux%zu", batch, channel);
        if (dnnl_at >= 0)
            snprintf(vs_dnnl, sizeof vs_dnnl, "%.2fx", median[peer] / median[i]);
        printf("%-7s %-9s %-4s %14s %-26s %11.1f %8.1f %9s %9s\n", BNG_TARGET_NAME, backend, "f32",
               shape, v[i].name, median[i] * 1e6, gbps, vs_dnnl, "-");
        if (csv)
            fprintf(csv, "%s,%s,f32,%zu,%zu,%s,%.3f,%.2f,%s,\n", BNG_TARGET_NAME, backend, batch,
                    channel * p.spatial, v[i].name, median[i] * 1e6, gbps, dnnl_at >= 0 ? vs_dnnl : "");
    }
    free(p.x);
    free(p.dx);
    free(p.mean);
    free(p.invar);
    free(p.scale);
    free(p.bias);
    free(p.moving_mean);
    free(p.moving_var);
    free(p.relu_bits);
}

/* The forward on the NHWC shapes (BxC) or the NCHW ones (BxCxS, `nchw`), and oneDNN's
 * time over ours as a geometric mean over the DRAM ones. */
static void bench_fwd(const char *backend, const char *shapes, int nchw, double seconds, FILE *csv)
{
    char *list = strdup(shapes), *tok;
    double log_sum[2] = {0, 0};
    int dram = 0;

    for (tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
        size_t batch, channel, spatial = 0;
        double ratio[2];
        if (nchw ? sscanf(tok, "%zux%zux%zu", &batch, &channel, &spatial) != 3
                 : sscanf(tok, "%zux%zu", &batch, &channel) != 2)
            continue;       /* main said so already */
        bench_fwd_shape(backend, batch, channel, spatial, seconds, csv, ratio);
        if (ratio[0] > 0 && is_dram_shape(batch * channel * (spatial ? spatial : 1))) {
            log_sum[0] += log(ratio[0]);
            log_sum[1] += log(ratio[1]);
            dram++;
        }
    }
    dram_geomean_line(backend, nchw ? "NCHW training forward" : "training forward", log_sum[0],
                      dram, 1.3);
    dram_geomean_line(backend, nchw ? "NCHW fused ReLU forward (y and bits; oneDNN fuse_norm_relu)"
                                    : "fused ReLU forward (y and bits; oneDNN fuse_norm_relu)",
                      log_sum[1], dram, 1.2);
    free(list);
}
#endif

int main(int argc, char **argv)
{
    const char *backend = "default", *shapes = "4x64,4096x64,2048x256,65536x64,16384x256,262144x64";
    /* ResNet-50's extents at batch 16, the first four DRAM shapes, and one in cache */
    const char *nchw_shapes = "16x64x12544,16x256x3136,16x512x784,16x1024x196,2x64x3136";
    const char *csv_path = NULL;
    double seconds = 1.0;
    FILE *csv = NULL;
    char *list, *tok;
    int i;

    for (i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--backend"))
            backend = argv[i + 1];
        else if (!strcmp(argv[i], "--shapes"))
            shapes = argv[i + 1];
        else if (!strcmp(argv[i], "--nchw-shapes"))
            nchw_shapes = argv[i + 1];
        else if (!strcmp(argv[i], "--seconds"))
            seconds = atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--csv"))
            csv_path = argv[i + 1];
        else {
            fprintf(stderr, "usage: bench [--backend NAME] [--shapes BxC,...] [--nchw-shapes BxCxS,...] "
                    "[--seconds S] [--csv FILE]\n");
            return 2;
        }
    }
    if (csv_path && !(csv = fopen(csv_path, "a"))) {
        perror(csv_path);
        return 1;
    }
    list = strdup(shapes);
    for (tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
        size_t batch, channel;
        if (sscanf(tok, "%zux%zu", &batch, &channel) != 2) {
            fprintf(stderr, "bench: bad shape %s\n", tok);
            return 2;
        }
        bench_shape("f32", backend, batch, channel, seconds, csv);
#if BNG_HAS_F16
        bench_shape("f16", backend, batch, channel, seconds, csv);
#endif
    }
    free(list);
#ifdef BNG_BENCH_FWD
    bench_fwd(backend, shapes, 0, seconds, csv);
#endif
#ifdef BNG_BENCH_FWD_NCHW
    if (*nchw_shapes)
        bench_fwd(backend, nchw_shapes, 1, seconds, csv);
#endif
#ifdef BNG_BENCH_NCHW
    if (*nchw_shapes)
        bench_nchw(backend, nchw_shapes, seconds, csv);
#else
    (void)nchw_shapes;
#endif
    if (csv)
        fclose(csv);
    return 0;
}
