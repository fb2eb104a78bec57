/* Bit-identity sweep (make bit-sweep): one line per case with a hash of every output
 * byte (dx, dbias, dscale) of _p and of _s with three core masks (the last in place),
 * for every specialized channel count of the target and some off the plan, four
 * batches, training and inference, centred and large-mean data; then, where the target
 * has the extensions, every call of batch_norm_grad_ext.h (ext with and without
 * ACCUMULATE, reduce's partial sums, apply on them, dx-only) in each layout and fusion
 * the target has (NHWC, NCHW over spatial extents on and off its plan, 31 and 63
 * among them so that a plane's last values take every vector step, each with and
 * without the fused ReLU; the fused ReLU from the keep bits too, on the seeds of its
 * lines from y, whose hashes its lines repeat); and where the target has the
 * training forward, its _p and _s (y, the saved and moving statistics, the ReLU's
 * bits) in each layout the target has,
 * plain and with the fused ReLU and its bits, over channel counts and spatial extents
 * whose tails take every vector step. Only the public ABI is called, so a refactor of
 * anything behind it can be checked: record before, compare after (diff the files). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "batch_norm_grad.h"
#include "bng_kernels.h"
#if BNG_HAS_EXTENSIONS
#include "batch_norm_grad_ext.h"
#endif
#if BNG_HAS_FORWARD
#include "batch_norm_fwd.h"
#endif

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    size_t i;
    for (i = 0; i < n; i++) { h ^= b[i]; h *= 1099511628211ull; }
    return h;
}

static unsigned st;
static float rnd(void)
{
    st ^= st << 13; st ^= st >> 17; st ^= st << 5;
    return (float)((st >> 8) / 16777216.0 * 4.0 - 2.0);
}

#define CASE(T, S, SSET, FROM, API)                                                        \
static void API##_case(size_t batch, size_t channel, int train, int large, unsigned seed) \
{                                                                                         \
    size_t n = batch * channel, i, m;                                                     \
    T *x = malloc(n * sizeof(T)), *dy = malloc(n * sizeof(T)), *dx = malloc(n * sizeof(T)); \
    T *x2 = malloc(n * sizeof(T)), *dy2 = malloc(n * sizeof(T));                          \
    S stats[5][4096 + 8];                                                                  \
    long long params[12] = {0};                                                           \
    const int masks[] = {0x1, 0x5, -1};                                                   \
    uint64_t h;                                                                           \
    st = seed * 2654435761u + 7u;                                                         \
    for (i = 0; i < n; i++) {                                                             \
        x[i] = FROM((large ? 1000.0f : 0.0f) + rnd());                                    \
        dy[i] = FROM(rnd() * (i % 7 == 0 ? 1e-6f : 1.0f));                                \
    }                                                                                     \
    for (i = 0; i < channel; i++) {                                                       \
        SSET(&stats[0][i], (large ? 1000.0f : 0.0f) + rnd() * 0.1f);                         \
        SSET(&stats[1][i], 1.0f + rnd() * 0.2f);                                             \
        SSET(&stats[2][i], rnd());                                                           \
    }                                                                                     \
    for (i = 0; i < 5; i++) params[i] = (long long)(intptr_t)stats[i];                      \
    params[5] = (long long)batch; params[6] = (long long)channel; params[7] = train;     \
    memset(dx, 0, n * sizeof(T));                                                         \
    API##_batch_norm_grad_p(x, dy, dx, params);                                           \
    h = fnv(1469598103934665603ull, dx, n * sizeof(T));                                   \
    h = fnv(h, stats[3], channel * sizeof(S)); h = fnv(h, stats[4], channel * sizeof(S));     \
    printf("%s_p %zux%zu train=%d large=%d status=%lld %016llx\n", #API, batch, channel, train, large, params[8], (unsigned long long)h); \
    for (m = 0; m < 3; m++) {                                                             \
        memcpy(x2, x, n * sizeof(T)); memcpy(dy2, dy, n * sizeof(T));                     \
        memset(dx, 0, n * sizeof(T)); memset(stats[3], 0, sizeof stats[3]); memset(stats[4], 0, sizeof stats[4]); \
        memcpy(BNG_SHARED_PARAMS, params, sizeof params);                                 \
        API##_batch_norm_grad_s(x2, dy2, m == 2 ? dy2 : dx, masks[m]);                    \
        h = fnv(1469598103934665603ull, m == 2 ? dy2 : dx, n * sizeof(T));                \
        h = fnv(h, stats[3], channel * sizeof(S)); h = fnv(h, stats[4], channel * sizeof(S)); \
        printf("%s_s%d %zux%zu train=%d large=%d status=%lld %016llx\n", #API, (int)m, batch, channel, train, large, BNG_SHARED_PARAMS[8], (unsigned long long)h); \
    }                                                                                     \
    free(x); free(dy); free(dx); free(x2); free(dy2);                                     \
}

#define ID(v) (v)
static void fset(float *p, float v) { *p = v; }
CASE(float, float, fset, ID, fp)
#if BNG_HAS_F16
#define HF(v) bng_half_from_float(v)
static void hset(bng_hp_stats_t *p, float v)
{
    if (sizeof *p == 2) { half h = bng_half_from_float(v); memcpy(p, &h, 2); } else memcpy(p, &v, 4);
}
CASE(half, bng_hp_stats_t, hset, HF, hp)
#endif

#define AS_ELEMENT(c) c,

#if BNG_HAS_EXTENSIONS
/* The extended calls on one shape and one set of layout flags (0, BNG_FLAG_RELU,
 * BNG_FLAG_NCHW, both): each op the target has through _p (out of place, and in place
 * over dy) and _s with the three masks (the last in place), a line each. */
#ifndef BNG_FLAG_RELU
#define BNG_FLAG_RELU 0
#endif
#ifndef BNG_FLAG_NCHW
#define BNG_FLAG_NCHW 0
#endif
#ifndef BNG_FLAG_RELU_BITS
#define BNG_FLAG_RELU_BITS 0
#endif

/* Whether a stored y (its bits u, `sign` its sign bit, `inf` Inf's bits) keeps dy: above
 * 0 or NaN (the contract's rule, on the bits). */
static unsigned keeps_of(unsigned long u, unsigned long sign, unsigned long inf)
{
    return u != 0 && (!(u & sign) || (u & ~sign) > inf);
}

/* y's keep bits in the training forward's format (batch_norm_fwd.h), for a call with
 * BNG_FLAG_RELU_BITS: NHWC rows of `channel`, T's words of 8 * sizeof(T) rows (NCHW: a
 * plane of `spatial` values is a run of `spatial` rows of one channel, its words its
 * own). */
#define PACK_BITS(T, U, SIGN, INF)                                                         \
static T *pack_bits_##T(const T *y, size_t batch, size_t channel, size_t spatial, int nchw) \
{                                                                                          \
    const size_t w = 8 * sizeof(T), planes = nchw ? batch * channel : 1;                   \
    const size_t rows = nchw ? spatial : batch, cols = nchw ? 1 : channel;                 \
    const size_t words = (rows + w - 1) / w;                                               \
    T *bits = malloc(planes * words * cols * sizeof(T) + 1);                               \
    size_t p, g, c, i;                                                                     \
    for (p = 0; p < planes; p++)                                                           \
        for (g = 0; g < words; g++)                                                        \
            for (c = 0; c < cols; c++) {                                                   \
                U word = 0, e;                                                             \
                for (i = 0; i < w && g * w + i < rows; i++) {                              \
                    memcpy(&e, y + (p * rows + g * w + i) * cols + c, sizeof e);           \
                    word |= (U)(keeps_of(e, SIGN, INF) << i);                              \
                }                                                                          \
                memcpy(bits + (p * words + g) * cols + c, &word, sizeof word);             \
            }                                                                              \
    return bits;                                                                           \
}
PACK_BITS(float, uint32_t, 0x80000000ul, 0x7f800000ul)
#if BNG_HAS_F16
PACK_BITS(half, uint16_t, 0x8000ul, 0x7c00ul)
#endif
static void ext_block(long long *p, void *stats[5], size_t batch, size_t channel, int train,
                      float *sums, int flags, size_t spatial, const void *y)
{
    int i;
    memset(p, 0, BNG_EXT_PARAMS_LEN * sizeof *p);
    for (i = 0; i < 5; i++) p[i] = (long long)(intptr_t)stats[i];
    p[5] = (long long)batch; p[6] = (long long)channel; p[7] = train;
    p[BNG_PARAM_SUMS] = (long long)(intptr_t)sums;
    p[BNG_PARAM_FLAGS] = flags;
#if BNG_HAS_NCHW
    if (flags & BNG_FLAG_NCHW) p[BNG_PARAM_SPATIAL] = (long long)spatial;
#endif
#if BNG_HAS_RELU
    if (flags & BNG_FLAG_RELU) p[BNG_PARAM_Y] = (long long)(intptr_t)y;
#endif
    (void)spatial; (void)y;
}

#define EXT_CASE(T, S, SSET, FROM, API)                                                    \
static void API##_ext_case(size_t batch, size_t channel, size_t spatial, int flags,       \
                           unsigned seed)                                                  \
{                                                                                          \
    const size_t n = batch * channel * spatial;                                            \
    T *x = malloc(n * sizeof(T)), *dy = malloc(n * sizeof(T)), *dx = malloc(n * sizeof(T)); \
    T *y = malloc(n * sizeof(T)), *x2 = malloc(n * sizeof(T)), *dy2 = malloc(n * sizeof(T)); \
    T *bits;                                                                               \
    S stats[5][4096 + 8], old[2][4096 + 8];                                                \
    float sums[2 * 4096 + 8], global[2 * 4096 + 8];                                       \
    void *sp[5];                                                                           \
    long long params[BNG_EXT_PARAMS_LEN];                                                  \
    const int masks[] = {0x1, 0x5, -1};                                                    \
    size_t i, m, o, acc;                                                                   \
    st = seed * 2654435761u + 11u;                                                         \
    for (i = 0; i < n; i++) {                                                              \
        const float r = rnd();                                                             \
        x[i] = FROM(rnd());                                                                \
        dy[i] = FROM(rnd() * (i % 7 == 0 ? 1e-6f : 1.0f));                                 \
        y[i] = FROM(i % 11 == 0 ? 0.0f : i % 13 == 0 ? -0.0f : r);                         \
    }                                                                                      \
    for (i = 0; i < channel; i++) {                                                        \
        SSET(&stats[0][i], rnd() * 0.1f);                                                  \
        SSET(&stats[1][i], 1.0f + rnd() * 0.2f);                                           \
        SSET(&stats[2][i], rnd());                                                         \
        SSET(&old[0][i], rnd());                                                           \
        SSET(&old[1][i], rnd());                                                           \
    }                                                                                      \
    for (i = 0; i < 5; i++) sp[i] = stats[i];                                              \
    /* with RELU_BITS the slot holds y's bits */                                           \
    bits = flags & BNG_FLAG_RELU_BITS                                                      \
           ? pack_bits_##T(y, batch, channel, spatial, (flags & BNG_FLAG_NCHW) != 0) : y;  \
    /* the global sums apply reads: reduce's of the whole batch */                         \
    ext_block(params, sp, batch, channel, 1, global, flags, spatial, bits);                \
    if (BNG_HAS_REDUCE) API##_batch_norm_grad_reduce_p(x, dy, params);                     \
    else memset(global, 0, sizeof global);                                                 \
    for (o = 0; o < 4; o++) {                                                              \
        static const char *const names[] = {"ext", "reduce", "apply", "dx"};              \
        static const int has[] = {BNG_HAS_EXT, BNG_HAS_REDUCE, BNG_HAS_APPLY, BNG_HAS_DX_ONLY}; \
        if (!has[o]) continue;                                                             \
        for (acc = 0; acc < ((o == 0 || o == 2) ? 2u : 1u); acc++)                         \
            for (m = 0; m < 5; m++) {                                                      \
                /* m: 0 _p, 1 _p in place over dy, 2.. _s with masks[m - 2] */             \
                const int in_place = m == 1 || m == 4;                                     \
                T *out = in_place ? dy2 : dx;                                              \
                uint64_t h = 1469598103934665603ull;                                       \
                memcpy(x2, x, n * sizeof(T)); memcpy(dy2, dy, n * sizeof(T));              \
                memset(dx, 0, n * sizeof(T));                                              \
                memcpy(stats[3], old[0], sizeof stats[3]); memcpy(stats[4], old[1], sizeof stats[4]); \
                memcpy(sums, global, sizeof sums);                                         \
                ext_block(params, sp, batch, channel, 1, sums,                             \
                          flags | (acc ? BNG_FLAG_ACCUMULATE : 0), spatial, bits);         \
                if (m >= 2) memcpy(BNG_SHARED_PARAMS, params, sizeof params);              \
                switch (o * 2 + (m >= 2)) {                                                \
                case 0: API##_batch_norm_grad_ext_p(x2, dy2, out, params); break;          \
                case 1: API##_batch_norm_grad_ext_s(x2, dy2, out, masks[m - 2]); break;    \
                case 2: API##_batch_norm_grad_reduce_p(x2, dy2, params); break;            \
                case 3: API##_batch_norm_grad_reduce_s(x2, dy2, masks[m - 2]); break;      \
                case 4: API##_batch_norm_grad_apply_p(x2, dy2, out, params); break;        \
                case 5: API##_batch_norm_grad_apply_s(x2, dy2, out, masks[m - 2]); break;  \
                case 6: API##_batch_norm_grad_dx_p(dy2, out, params); break;               \
                default: API##_batch_norm_grad_dx_s(dy2, out, masks[m - 2]); break;        \
                }                                                                          \
                if (o == 1) {                                                              \
                    h = fnv(h, sums, BNG_SUMS_FLOATS(channel) * sizeof(float));            \
                } else {                                                                   \
                    h = fnv(h, out, n * sizeof(T));                                        \
                    if (o != 3) {                                                          \
                        h = fnv(h, stats[3], channel * sizeof(S));                         \
                        h = fnv(h, stats[4], channel * sizeof(S));                         \
                    }                                                                      \
                }                                                                          \
                printf("%s_%s%s%s %zux%zux%zu flags=%d status=%lld %016llx\n", #API,      \
                       names[o], m >= 2 ? "_s" : "_p", in_place ? "_inplace" : "", batch,  \
                       channel, spatial, flags | (acc ? BNG_FLAG_ACCUMULATE : 0),           \
                       m >= 2 ? BNG_SHARED_PARAMS[8] : params[8], (unsigned long long)h);  \
                if (o == 1 && in_place) break;    /* reduce writes no dx */                \
            }                                                                              \
    }                                                                                      \
    if (bits != y) free(bits);                                                             \
    free(x); free(dy); free(dx); free(y); free(x2); free(dy2);                             \
}
EXT_CASE(float, float, fset, ID, fp)
#if BNG_HAS_F16
EXT_CASE(half, bng_hp_stats_t, hset, HF, hp)
#endif

static void ext_shape(size_t batch, size_t channel, size_t spatial, int flags, unsigned seed)
{
    if (batch * channel * spatial > 600000 || channel > 4096)
        return;
    fp_ext_case(batch, channel, spatial, flags, seed);
#if BNG_HAS_F16
    hp_ext_case(batch, channel, spatial, flags, seed);
#endif
}

static void ext_sweep(const size_t *planned, size_t n_planned)
{
    const size_t batches[] = {1, 37, 300, 2049};
    /* (RELU_BITS last, on RELU's seeds: its lines hash as RELU's, its flags aside) */
    const int layouts[] = {0, BNG_FLAG_RELU, BNG_FLAG_NCHW, BNG_FLAG_NCHW | BNG_FLAG_RELU,
                           BNG_FLAG_RELU | BNG_FLAG_RELU_BITS,
                           BNG_FLAG_NCHW | BNG_FLAG_RELU | BNG_FLAG_RELU_BITS};
#ifdef BNG_NCHW_SPATIAL
    /* (a case's seed is its extent's index: extents added go last, so that the earlier
     * lines of a sweep stay comparable with one recorded before) */
    const size_t spatials[] = { BNG_NCHW_SPATIAL(AS_ELEMENT) 1, 7, 50, 257, 3137, 31, 63 };
#else
    const size_t spatials[] = {1};
#endif
    const size_t nchw_channels[] = {1, 3, 16, 64};
    size_t c, b, l, s;

    for (l = 0; l < sizeof layouts / sizeof layouts[0]; l++) {
        const int flags = layouts[l], from_bits = l >= 4, nchw = l == 2 || l == 3 || l == 5;
        const size_t seeds = l == 4 ? 1 : l == 5 ? 3 : l;    /* from the bits: y's seeds */
        if ((flags & BNG_FLAG_RELU && !BNG_HAS_RELU) || (nchw && !BNG_HAS_NCHW)
            || (from_bits && !BNG_HAS_RELU))
            continue;
        if (!(flags & BNG_FLAG_NCHW)) {
            for (c = 0; c < n_planned; c++)
                for (b = 0; b < 4; b++)
                    ext_shape(batches[b], planned[c], 1, flags, (unsigned)(c * 10 + b + seeds * 1000));
            continue;
        }
        for (c = 0; c < 4; c++)
            for (b = 0; b < 3; b++)
                for (s = 0; s < sizeof spatials / sizeof spatials[0]; s++)
                    ext_shape(batches[b] % 41, nchw_channels[c], spatials[s], flags,
                              (unsigned)(c * 100 + b * 10 + s + seeds * 1000));
    }
}
#endif

#if BNG_HAS_FORWARD
/* The fused ReLU and NCHW where the target lists relu and nchw beside forward. */
#if defined(BNG_HAS_RELU) && BNG_HAS_RELU
#define FWD_SWEEP_RELU 1
#else
#define FWD_SWEEP_RELU 0
#endif
#if defined(BNG_HAS_FWD_NCHW) && BNG_HAS_FWD_NCHW
#define FWD_SWEEP_NCHW 1
#else
#define FWD_SWEEP_NCHW 0
#endif
/* NCHW's flag, its bits' length and its slot (none without the forward's NCHW: a split
 * target's) */
#if FWD_SWEEP_NCHW
#define FWD_NCHW BNG_FWD_NCHW
#define FWD_BITS_NCHW(batch, channel, spatial, bytes) \
    BNG_FWD_RELU_BITS_ELEMENTS_NCHW(batch, channel, spatial, bytes)
#define FWD_SET_SPATIAL(params, spatial) ((params)[BNG_FWD_PARAM_SPATIAL] = (long long)(spatial))
#else
#define FWD_NCHW 0
#define FWD_BITS_NCHW(batch, channel, spatial, bytes) ((size_t)0)
#define FWD_SET_SPATIAL(params, spatial) ((void)(spatial))
#endif

/* The training forward on one shape and flags (0, BNG_FWD_RELU | BNG_FWD_RELU_BITS, each
 * with and without BNG_FWD_NCHW): _p out of place and in place (y over x), _s with the
 * three masks (the last in place), a line each, hashing y, the saved mean and invar,
 * the moving mean and variance, and the bits. */
#define FWD_CASE(T, S, SSET, FROM, API, BYTES)                                             \
static void API##_fwd_case(size_t batch, size_t channel, size_t spatial, int flags,       \
                           unsigned seed)                                                  \
{                                                                                          \
    const size_t n = batch * channel * spatial;                                            \
    const size_t words = (flags & FWD_NCHW)                                                \
        ? FWD_BITS_NCHW(batch, channel, spatial, BYTES)                                    \
        : BNG_FWD_RELU_BITS_ELEMENTS(batch, channel, BYTES);                               \
    T *x = malloc(n * sizeof(T)), *x2 = malloc(n * sizeof(T)), *y = malloc(n * sizeof(T)); \
    T *bits = malloc((words + 1) * sizeof(T));                                             \
    S stats[6][4096 + 8];                                                                  \
    long long params[BNG_FWD_PARAMS_LEN];                                                  \
    const int masks[] = {0x1, 0x5, -1};                                                    \
    size_t i, m;                                                                           \
    st = seed * 2654435761u + 13u;                                                         \
    for (i = 0; i < n; i++)                                                                \
        x[i] = FROM((i % 5 == 0 ? 300.0f : 0.0f) + rnd());                                 \
    for (i = 0; i < channel; i++) {                                                        \
        SSET(&stats[2][i], 1.0f + rnd() * 0.2f);                                           \
        SSET(&stats[3][i], rnd() * 0.5f);                                                  \
        SSET(&stats[4][i], rnd());                                                         \
        SSET(&stats[5][i], 1.0f + rnd() * 0.5f);                                           \
    }                                                                                      \
    for (m = 0; m < 5; m++) {                                                              \
        /* m: 0 _p, 1 _p in place over x, 2.. _s with masks[m - 2] */                      \
        const int in_place = m == 1 || m == 4;                                             \
        T *out = in_place ? x2 : y;                                                        \
        S moving[2][4096 + 8];                                                             \
        uint64_t h;                                                                        \
        memcpy(x2, x, n * sizeof(T));                                                      \
        memset(y, 0, n * sizeof(T));                                                       \
        memset(bits, 0, (words + 1) * sizeof(T));                                          \
        memset(stats[0], 0, sizeof stats[0]); memset(stats[1], 0, sizeof stats[1]);        \
        memcpy(moving[0], stats[4], sizeof moving[0]);                                     \
        memcpy(moving[1], stats[5], sizeof moving[1]);                                     \
        memset(params, 0, sizeof params);                                                  \
        params[0] = (long long)(intptr_t)stats[0]; params[1] = (long long)(intptr_t)stats[1]; \
        params[2] = (long long)(intptr_t)stats[2]; params[3] = (long long)(intptr_t)stats[3]; \
        params[BNG_FWD_PARAM_MOVING_MEAN] = (long long)(intptr_t)moving[0];                \
        params[BNG_FWD_PARAM_MOVING_VAR] = (long long)(intptr_t)moving[1];                 \
        params[5] = (long long)batch; params[6] = (long long)channel;                      \
        params[BNG_FWD_PARAM_EPS] = bng_fwd_float(1e-3f);                                  \
        params[BNG_FWD_PARAM_MOMENTUM] = bng_fwd_float(0.9f);                              \
        params[BNG_FWD_PARAM_RELU_BITS] = (long long)(intptr_t)bits;                       \
        params[BNG_PARAM_FLAGS] = flags;                                                   \
        FWD_SET_SPATIAL(params, spatial);                                                  \
        if (m < 2) {                                                                       \
            API##_batch_norm_forward_p(x2, out, params);                                   \
        } else {                                                                           \
            memcpy(BNG_SHARED_PARAMS, params, sizeof params);                              \
            API##_batch_norm_forward_s(x2, out, masks[m - 2]);                             \
            params[8] = BNG_SHARED_PARAMS[8];                                              \
        }                                                                                  \
        h = fnv(1469598103934665603ull, out, n * sizeof(T));                               \
        for (i = 0; i < 2; i++) {                                                          \
            h = fnv(h, stats[i], channel * sizeof(S));                                     \
            h = fnv(h, moving[i], channel * sizeof(S));                                    \
        }                                                                                  \
        h = fnv(h, bits, (words + 1) * sizeof(T));                                         \
        printf("%s_forward%s%s %zux%zux%zu flags=%d status=%lld %016llx\n", #API,           \
               m >= 2 ? "_s" : "_p", in_place ? "_inplace" : "", batch, channel, spatial,  \
               flags, params[8], (unsigned long long)h);                                   \
    }                                                                                      \
    free(x); free(x2); free(y); free(bits);                                                \
}
FWD_CASE(float, float, fset, ID, fp, 4)
#if BNG_HAS_F16
FWD_CASE(half, bng_hp_stats_t, hset, HF, hp, 2)
#endif


/* NHWC over the planned channel counts; NCHW over extents whose last values take each
 * of the plane ukernels' steps at 4 to 64 lanes (1 to 63 past whole vectors). */
static void fwd_sweep(const size_t *planned, size_t n_planned)
{
    const size_t batches[] = {1, 37, 300};
    const size_t spatials[] = {1, 7, 17, 31, 48, 49, 63, 127, 196, 784};
    const size_t nchw_channels[] = {1, 3, 16};
    const int fusions[] = {0, BNG_FWD_RELU | BNG_FWD_RELU_BITS};
    size_t c, b, s, f;

    for (f = 0; f < 2; f++) {
        if (fusions[f] && !FWD_SWEEP_RELU)
            continue;
        for (c = 0; c < n_planned; c++)
            for (b = 0; b < 3; b++)
                if (planned[c] * batches[b] <= 600000 && planned[c] <= 4096) {
                    fp_fwd_case(batches[b], planned[c], 1, fusions[f], (unsigned)(c * 10 + b));
#if BNG_HAS_F16
                    hp_fwd_case(batches[b], planned[c], 1, fusions[f], (unsigned)(c * 10 + b));
#endif
                }
        if (!FWD_SWEEP_NCHW)
            continue;
        for (c = 0; c < 3; c++)
            for (b = 0; b < 2; b++)
                for (s = 0; s < sizeof spatials / sizeof spatials[0]; s++) {
                    const int flags = fusions[f] | FWD_NCHW;
                    const unsigned seed = (unsigned)(c * 100 + b * 10 + s + 7000);
                    fp_fwd_case(batches[b] % 41, nchw_channels[c], spatials[s], flags, seed);
#if BNG_HAS_F16
                    hp_fwd_case(batches[b] % 41, nchw_channels[c], spatials[s], flags, seed);
#endif
                }
    }
}
#endif

int main(void)
{
    const size_t planned[] = { BNG_F32_SPECIALIZED(AS_ELEMENT) 1, 3, 17, 33, 131, 1001 };
    const size_t batches[] = {1, 37, 300, 2049};
    size_t c, b;
    int train, large;
    for (c = 0; c < sizeof planned / sizeof planned[0]; c++)
        for (b = 0; b < 4; b++)
            for (train = 0; train <= 1; train++)
                for (large = 0; large <= 1; large++) {
                    const unsigned seed = (unsigned)(c * 100 + b * 10 + train * 2 + large);
                    if (planned[c] * batches[b] > 600000)
                        continue;
                    fp_case(batches[b], planned[c], train, large, seed);
#if BNG_HAS_F16
                    hp_case(batches[b], planned[c], train, large, seed);
#endif
                }
#if BNG_HAS_EXTENSIONS
    ext_sweep(planned, sizeof planned / sizeof planned[0]);
#endif
#if BNG_HAS_FORWARD
    fwd_sweep(planned, sizeof planned / sizeof planned[0]);
#endif
    return 0;
}
