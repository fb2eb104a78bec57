/* Bit-identity sweep (make bit-sweep): one line per case with a hash of every output
 * byte (dx, dbias, dscale) of _p and of _s with three core masks (the last in place),
 * for every specialized channel count of the target and some off the plan, four
 * batches, training and inference, centred and large-mean data. Only the public ABI is
 * called, so a refactor of anything behind it can be checked: record before, compare
 * after (diff the files). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "batch_norm_grad.h"
#include "bng_kernels.h"

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
    return 0;
}
