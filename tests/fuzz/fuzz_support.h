/* What the libFuzzer harnesses share (fuzz_params.c, fuzz_forward.c): the input as a
 * stream of bytes, a shape drawn from it (small, or hostile), and buffers between guard
 * bytes. Test code, a header of static functions. */
#ifndef FUZZ_SUPPORT_H
#define FUZZ_SUPPORT_H

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define GUARD 32

typedef struct {
    const uint8_t *p;
    size_t n;
} bytes;

static unsigned take(bytes *b)
{
    unsigned v = 0;
    if (b->n) {
        v = *b->p++;
        b->n--;
    }
    return v;
}

/* A small value, or a hostile one. */
static long long shape(bytes *b, long long small_max)
{
    static const long long hostile[] = {0, -1, -300, LLONG_MIN, LLONG_MAX, 1ll << 40,
                                        (1ll << 31) + 1, 1ll << 62};
    const unsigned kind = take(b), raw = take(b);
    if (kind < 224)
        return 1 + (long long)(raw % (unsigned)small_max);
    return hostile[kind % (sizeof hostile / sizeof hostile[0])];
}

static unsigned char *guarded(size_t bytes_n)
{
    unsigned char *raw = malloc(bytes_n + 2 * GUARD);
    if (!raw)
        abort();
    memset(raw, 0xA5, bytes_n + 2 * GUARD);
    return raw + GUARD;
}

static void check_guards(const unsigned char *p, size_t bytes_n)
{
    size_t i;
    for (i = 0; i < GUARD; i++)
        if (p[-1 - (long)i] != 0xA5 || p[bytes_n + i] != 0xA5)
            abort();
}

#endif
