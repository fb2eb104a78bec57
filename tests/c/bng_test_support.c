#include "bng_test_support.h"
#include "bng_dtypes.h"
#include "batchnormgrad.h"
#include "bng_ftz.h"

#if BNG_TEST_LAUNCH_SPMD || BNG_TEST_LAUNCH_FANOUT
#include "hthread_launch.h"
#include "hthread_mock.h"
#endif
#if BNG_TEST_LAUNCH_SPMD
#include "hthread_device.h"
#endif
#if !(BNG_TEST_LAUNCH_SPMD || BNG_TEST_LAUNCH_FANOUT)
#include "host/bng_hal_host.h"
#endif

#include <check.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define SENTINEL 0x5EB7E11E5EB7E11ELL

/* ---- what uninstrumented code tells ThreadSanitizer ---- */

/* The runtime's range checks, weak: present only in a program linked with it (tcc
 * makes no weak references). (GCC's builtins' types.) */
#if defined(__GNUC__) && !defined(__TINYC__)
void __tsan_read_range(void *addr, long size) __attribute__((weak));
void __tsan_write_range(void *addr, long size) __attribute__((weak));

void bng_test_seen_write(const void *p, size_t bytes)
{
    if (__tsan_write_range)
        __tsan_write_range((void *)(uintptr_t)p, (long)bytes);
}

void bng_test_seen_read(const void *p, size_t bytes)
{
    if (__tsan_read_range)
        __tsan_read_range((void *)(uintptr_t)p, (long)bytes);
}
#else
void bng_test_seen_write(const void *p, size_t bytes)
{
    (void)p, (void)bytes;
}

void bng_test_seen_read(const void *p, size_t bytes)
{
    (void)p, (void)bytes;
}
#endif

/* ---- the harness's heap ---- */

/* Under AddressSanitizer and ThreadSanitizer a freed block of KEPT_MIN_BYTES or more is
 * kept for the next allocations. Their allocators map a block that large on its own and
 * unmap it at free, so that each case's buffers, and the shadow the runtime sets for
 * them, were faulted in afresh page by page (mt7004's suite under ThreadSanitizer: 4.5
 * million page faults; this and the DMA engine's kept snapshots took it from 116 s to
 * 66 s). glibc keeps such blocks itself after bng_test_init's mallopt, and valgrind's
 * allocator reuses them: there nothing is kept, and bng_test_free is free.
 * A kept block is handed out for a size it holds, the smallest that does; at most
 * KEPT_BLOCKS and KEPT_BYTES are kept, the oldest freed first. Under AddressSanitizer a
 * kept block, and a block's bytes past the size asked for, are poisoned: a read past a
 * buffer's end or of a freed one is still an error, and freeing a block twice fails the
 * case. Under ThreadSanitizer a block's shadow keeps its last accesses, each ordered
 * before the harness's next use of the block by the return of the call that made it;
 * keep() writes the block's first KiB (KEPT_MARK_BYTES) where free was, and a kept block
 * handed out is told written whole, as malloc's new block is (the harness's next use
 * may be uninstrumented code, bng_test_data.c): a core's access to a freed buffer that
 * its call's return does not order before the free is still a race reported (a probe's
 * late read checked it). (The suites allocate on their own thread; the lock is for one
 * that would not.) */
#define KEPT_BLOCKS 64
#define KEPT_MIN_BYTES ((size_t)64 << 10)
#define KEPT_BYTES ((size_t)256 << 20)
#define KEPT_MARK_BYTES ((size_t)1 << 10)
#if defined(__GNUC__) && !defined(__TINYC__)   /* weak references (tcc makes none) */
/* The sanitizer runtime's, weak: under make test-c SANITIZE=address the harness is
 * compiled without the sanitizer (mk/test.mk) and linked with its runtime. */
size_t __sanitizer_get_allocated_size(const volatile void *p) __attribute__((weak));
void __asan_poison_memory_region(void const volatile *addr, size_t size) __attribute__((weak));
void __asan_unpoison_memory_region(void const volatile *addr, size_t size) __attribute__((weak));
#define KEEPS_BLOCKS 1

static struct { void *p; size_t bytes; } kept[KEPT_BLOCKS];
static size_t kept_count, kept_bytes;   /* kept[0] the oldest */
static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;

static void poison(void *p, size_t bytes)
{
    if (__asan_poison_memory_region)
        __asan_poison_memory_region(p, bytes);
}

static void unpoison(void *p, size_t bytes)
{
    if (__asan_unpoison_memory_region)
        __asan_unpoison_memory_region(p, bytes);
}

/* Kept block i out of the list (the caller holds the lock). */
static void *unlist(size_t i)
{
    void *p = kept[i].p;
    kept_bytes -= kept[i].bytes;
    memmove(&kept[i], &kept[i + 1], (kept_count - i - 1) * sizeof kept[0]);
    kept_count--;
    return p;
}

/* The smallest kept block of `bytes` or more, out of the list, or NULL. */
static void *take_kept(size_t bytes)
{
    size_t i, best = KEPT_BLOCKS;
    void *p = NULL;

    pthread_mutex_lock(&kept_lock);
    for (i = 0; i < kept_count; i++)
        if (kept[i].bytes >= bytes && (best == KEPT_BLOCKS || kept[i].bytes < kept[best].bytes))
            best = i;
    if (best != KEPT_BLOCKS)
        p = unlist(best);
    pthread_mutex_unlock(&kept_lock);
    return p;
}

/* Keep p, of `bytes` (at most KEPT_BYTES): the oldest blocks freed to make room. */
static void keep(void *p, size_t bytes)
{
    size_t i;

    pthread_mutex_lock(&kept_lock);
    for (i = 0; i < kept_count; i++)
        if (kept[i].p == p) {
            pthread_mutex_unlock(&kept_lock);
            ck_abort_msg("bng_test_free: a block freed twice");
        }
    while (kept_count == KEPT_BLOCKS || kept_bytes + bytes > KEPT_BYTES) {
        const size_t oldest_bytes = kept[0].bytes;
        void *oldest = unlist(0);
        unpoison(oldest, oldest_bytes);
        free(oldest);
    }
    memset(p, BNG_GUARD_BYTE, KEPT_MARK_BYTES);
    poison(p, bytes);
    kept[kept_count].p = p;
    kept[kept_count].bytes = bytes;
    kept_count++;
    kept_bytes += bytes;
    pthread_mutex_unlock(&kept_lock);
}
#endif

void *bng_test_alloc(size_t bytes)
{
    void *p;

#if defined(KEEPS_BLOCKS)
    if (__sanitizer_get_allocated_size && bytes >= KEPT_MIN_BYTES && (p = take_kept(bytes))) {
        unpoison(p, bytes);
        bng_test_seen_write(p, bytes);
        return p;
    }
#endif
    p = malloc(bytes ? bytes : 1);
    if (p == NULL)      /* not ck_assert: a passing one costs a system call (its mark point) */
        ck_abort_msg("bng_test_alloc: no memory for %zu bytes", bytes);
    return p;
}

void bng_test_free(void *p)
{
#if defined(KEEPS_BLOCKS)
    const size_t bytes = p && __sanitizer_get_allocated_size ? __sanitizer_get_allocated_size(p) : 0;
    if (bytes >= KEPT_MIN_BYTES && bytes <= KEPT_BYTES) {
        keep(p, bytes);
        return;
    }
#endif
    free(p);
}

bng_buffer bng_buffer_new(size_t bytes)
{
    bng_buffer b;
    b.raw = bng_test_alloc(bytes + 2 * BNG_GUARD);
    /* the guards only: bng_case_init writes every payload */
    memset(b.raw, BNG_GUARD_BYTE, BNG_GUARD);
    memset(b.raw + BNG_GUARD + bytes, BNG_GUARD_BYTE, BNG_GUARD);
    b.p = b.raw + BNG_GUARD;
    b.bytes = bytes;
    return b;
}

void bng_buffer_free(bng_buffer *b)
{
    bng_test_free(b->raw);
    b->raw = NULL;
    b->p = NULL;
}

int bng_buffer_guards_intact(const bng_buffer *b)
{
    size_t i;
    for (i = 0; i < BNG_GUARD; i++)
        if (b->raw[i] != BNG_GUARD_BYTE || b->raw[BNG_GUARD + b->bytes + i] != BNG_GUARD_BYTE)
            return 0;
    return 1;
}

int bng_bytes_are_marked(const void *p, size_t bytes)
{
    const unsigned char *b = p;
    size_t i;
    for (i = 0; i < bytes; i++)
        if (b[i] != BNG_OUTPUT_MARK)
            return 0;
    return 1;
}

int bng_buffer_is_marked(const bng_buffer *b)
{
    return bng_bytes_are_marked(b->p, b->bytes);
}

/* A case's buffers and block for its shape, every output marked and the inputs not
 * yet written. */
static void case_alloc(bng_case *k, const bng_dtype *t, size_t batch, size_t channel,
                       int is_train)
{
    memset(k, 0, sizeof *k);
    k->t = t;
    k->batch = batch;
    k->channel = channel;
    k->is_train = is_train;
    k->x = bng_buffer_new(batch * channel * t->size);
    k->dy = bng_buffer_new(batch * channel * t->size);
    k->dx = bng_buffer_new(batch * channel * t->size);
    k->mean = bng_buffer_new(channel * t->stats_size);
    k->invar = bng_buffer_new(channel * t->stats_size);
    k->scale = bng_buffer_new(channel * t->stats_size);
    k->dbias = bng_buffer_new(channel * t->stats_size);
    k->dscale = bng_buffer_new(channel * t->stats_size);
    k->sums = bng_buffer_new((2 * channel + BNG_SUMS_COUNT_LIMBS) * sizeof(float));
    memset(k->sums.p, BNG_OUTPUT_MARK, k->sums.bytes);
    k->params[BNG_PARAM_MEAN] = (long long)(intptr_t)k->mean.p;
    k->params[BNG_PARAM_INVAR] = (long long)(intptr_t)k->invar.p;
    k->params[BNG_PARAM_SCALE] = (long long)(intptr_t)k->scale.p;
    k->params[BNG_PARAM_DBIAS] = (long long)(intptr_t)k->dbias.p;
    k->params[BNG_PARAM_DSCALE] = (long long)(intptr_t)k->dscale.p;
    k->params[BNG_PARAM_BATCH] = (long long)batch;
    k->params[BNG_PARAM_CHANNEL] = (long long)channel;
    k->params[BNG_PARAM_IS_TRAIN] = is_train;
    k->params[BNG_PARAM_STATUS] = SENTINEL;
    k->params[9] = k->params[10] = k->params[11] = SENTINEL;
    k->params[BNG_CASE_SUMS] = (long long)(intptr_t)k->sums.p;
    k->params[BNG_CASE_FLAGS] = 0;
    k->params[14] = k->params[15] = SENTINEL;
    bng_case_mark_outputs(k);
}

void bng_case_init(bng_case *k, const bng_dtype *t, size_t batch, size_t channel,
                   int is_train, enum bng_data data, unsigned seed)
{
    case_alloc(k, t, batch, channel, is_train);
    bng_case_draw(k, data, seed);
}

void bng_case_init_like(bng_case *k, const bng_case *from)
{
    case_alloc(k, from->t, from->batch, from->channel, from->is_train);
    memcpy(k->x.p, from->x.p, k->x.bytes);
    memcpy(k->dy.p, from->dy.p, k->dy.bytes);
    memcpy(k->mean.p, from->mean.p, k->mean.bytes);
    memcpy(k->invar.p, from->invar.p, k->invar.bytes);
    memcpy(k->scale.p, from->scale.p, k->scale.bytes);
}

int bng_relu_keeps(const bng_dtype *t, const void *y, size_t i)
{
    const uint32_t sign = t->size == 2 ? 0x8000u : 0x80000000u;
    const uint32_t inf = t->size == 2 ? 0x7c00u : 0x7f800000u;
    uint32_t bits;
    if (t->size == 2) {
        uint16_t h;
        memcpy(&h, (const unsigned char *)y + i * 2, 2);
        bits = h;
    } else {
        memcpy(&bits, (const unsigned char *)y + i * 4, 4);
    }
    return (bits & ~sign) > inf || (bits != 0 && (bits & sign) == 0);
}

void bng_relu_backward(const bng_dtype *t, void *dy, const void *y, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++)
        if (!bng_relu_keeps(t, y, i))
            bng_set(t, dy, i, 0.0);
}

unsigned long bng_keep_padding(const bng_dtype *t, size_t rows, size_t g)
{
    const size_t w = 8 * t->size;
    return (g + 1) * w > rows ? ((0xfffffffful << (rows - g * w)) & ((1ul << (w - 1)) * 2 - 1))
                              : 0;
}

unsigned long bng_keep_word(const bng_dtype *t, const void *y, size_t rows, size_t y_stride,
                            size_t g, size_t c)
{
    const size_t w = 8 * t->size;
    unsigned long word = 0;
    size_t i;
    for (i = 0; i < w && g * w + i < rows; i++)
        if (bng_relu_keeps(t, y, (g * w + i) * y_stride + c))
            word |= 1ul << i;
    return word;
}

bng_buffer bng_keep_bits(const bng_dtype *t, const void *y, size_t rows, size_t channels,
                         size_t y_stride, size_t keeps_stride)
{
    const size_t w = 8 * t->size, words = (rows + w - 1) / w;
    bng_buffer b = bng_buffer_new(words * keeps_stride * t->size);
    size_t g, c;

    memset(b.p, BNG_OUTPUT_MARK, b.bytes);
    for (g = 0; g < words; g++)
        for (c = 0; c < channels; c++) {
            const unsigned long word = bng_keep_word(t, y, rows, y_stride, g, c)
                                       | bng_keep_padding(t, rows, g);
            bng_set_bits(t, b.p, g * keeps_stride + c, (uint32_t)word, (uint16_t)word);
        }
    return b;
}

bng_buffer bng_keep_plane_bits(const bng_dtype *t, const void *y, size_t planes, size_t spatial)
{
    const size_t rows = 8 * t->size, words = (spatial + rows - 1) / rows;
    bng_buffer b = bng_buffer_new(planes * words * t->size);
    size_t p, g;

    for (p = 0; p < planes; p++)
        for (g = 0; g < words; g++) {
            const unsigned long word = bng_keep_word(t, (const unsigned char *)y
                                                        + p * spatial * t->size, spatial, 1, g, 0)
                                       | bng_keep_padding(t, spatial, g);
            bng_set_bits(t, b.p, p * words + g, (uint32_t)word, (uint16_t)word);
        }
    return b;
}

void bng_case_mark_outputs(bng_case *k)
{
    memset(k->dx.p, BNG_OUTPUT_MARK, k->dx.bytes);
    memset(k->dbias.p, BNG_OUTPUT_MARK, k->dbias.bytes);
    memset(k->dscale.p, BNG_OUTPUT_MARK, k->dscale.bytes);
}

int bng_case_outputs_marked(const bng_case *k)
{
    return bng_buffer_is_marked(&k->dx) && bng_buffer_is_marked(&k->dbias)
        && bng_buffer_is_marked(&k->dscale);
}

int bng_dtype_has(const bng_dtype *t, int op)
{
    switch (op) {
    case BNG_OP_FULL: return 1;
    case BNG_OP_EXT: return t->ext_p != NULL;
    case BNG_OP_REDUCE: return t->reduce_p != NULL;
    case BNG_OP_APPLY: return t->apply_p != NULL;
    default: return t->dx_p != NULL;
    }
}

/* One _s call of `op` on this core. */
static void call_shared(const bng_dtype *t, int op, void *x, void *dy, void *dx, int core_mask)
{
    switch (op) {
    case BNG_OP_FULL: t->entry_s(x, dy, dx, core_mask); break;
    case BNG_OP_EXT: t->ext_s(x, dy, dx, core_mask); break;
    case BNG_OP_REDUCE: t->reduce_s(x, dy, core_mask); break;
    case BNG_OP_APPLY: t->apply_s(x, dy, dx, core_mask); break;
    default: t->dx_s(dy, dx, core_mask); break;
    }
}

void bng_test_on_cores(void (*call)(void *arg), void *arg)
{
#if BNG_TEST_LAUNCH_SPMD
    hthread_launch_spmd(call, arg);
#else
    call(arg);
#endif
}

unsigned bng_test_core(void)
{
#if BNG_TEST_LAUNCH_SPMD
    return (unsigned)get_thread_id();
#else
    return 0;
#endif
}

typedef struct {
    const bng_dtype *t;
    int op;
    void *x, *dy, *dx;
    int core_mask;
} shared_call;

static void call_shared_with(void *p)
{
    const shared_call *c = p;
    call_shared(c->t, c->op, c->x, c->dy, c->dx, c->core_mask);
}

/* The _s block is BNG_SHARED_PARAMS_SLOTS long (12, 16 with extensions). */
static void run_shared(bng_case *k, int op, void *x, void *dy, void *dx, int core_mask)
{
    shared_call c;

    c.t = k->t;
    c.op = op;
    c.x = x;
    c.dy = dy;
    c.dx = dx;
    c.core_mask = core_mask;
    memcpy(BNG_SHARED_PARAMS, k->params, BNG_SHARED_PARAMS_SLOTS * sizeof k->params[0]);
    bng_test_on_cores(call_shared_with, &c);
    memcpy(k->params, BNG_SHARED_PARAMS, BNG_SHARED_PARAMS_SLOTS * sizeof k->params[0]);
}

int bng_test_hal_refuse(int private_memory, int workspace)
{
#if BNG_TEST_LAUNCH_SPMD || BNG_TEST_LAUNCH_FANOUT
    (void)private_memory;
    (void)workspace;
    return 0;
#else
    bng_hal_host_refuse(private_memory, workspace);
    return 1;
#endif
}

int bng_test_fail_private_memory(unsigned cores)
{
#if BNG_TEST_LAUNCH_SPMD || BNG_TEST_LAUNCH_FANOUT
    hthread_mock_fail_vector_malloc(cores);
    return 1;
#else
    (void)cores;
    return 0;
#endif
}

void bng_case_run_shared(bng_case *k, void *x, void *dy, void *dx, int core_mask)
{
    run_shared(k, BNG_OP_FULL, x, dy, dx, core_mask);
}

/* ---- the explicit-argument calls (batchnormgrad.h) ---- */

/* One explicit-argument call on this core, after a refused one (batch 0, or channel 0
 * when the call's batch is below 1 and might be refused for it) that leaves another
 * status: the status the call left. */
static int call_explicit(const bng_dtype *t, int shared, void *x, void *dy, void *dx,
                         const long long *params, int core_mask)
{
    static double decoy[4];
    long long refused[BNG_PARAMS_LEN];
    int slot;

    for (slot = BNG_PARAM_MEAN; slot <= BNG_PARAM_DSCALE; slot++)
        refused[slot] = (long long)(intptr_t)decoy;
    refused[BNG_PARAM_BATCH] = params[BNG_PARAM_BATCH] < 1;
    refused[BNG_PARAM_CHANNEL] = params[BNG_PARAM_BATCH] < 1 ? 0 : 1;
    refused[BNG_PARAM_IS_TRAIN] = 1;
    t->explicit_p(decoy, decoy, decoy, refused);
    if (shared)
        t->explicit_s(x, dy, dx, params, core_mask);
    else
        t->explicit_p(x, dy, dx, params);
    return bng_last_status();
}

#if BNG_TEST_LAUNCH_SPMD
typedef struct {
    const bng_dtype *t;
    const long long *params;
    void *x, *dy, *dx;
    int core_mask;
    int status[BNG_TARGET_CORES];   /* what each core's bng_last_status() gave */
} explicit_call;

static void explicit_on_every_core(void *p)
{
    explicit_call *c = p;
    c->status[get_thread_id()] = call_explicit(c->t, 1, c->x, c->dy, c->dx, c->params, c->core_mask);
}

/* The status of an SPMD call from every core's: the lowest selected core's, which the
 * other selected cores must share; a core outside the mask has BNG_NOT_SELECTED when
 * the call passed the checks (it went to the HAL: BNG_OK or BNG_ENOMEM), else the
 * checks' error like every core. */
static int spmd_status(const int *status, int core_mask)
{
    const unsigned selected = (unsigned)core_mask & ((1u << BNG_TARGET_CORES) - 1u);
    unsigned core = 0;
    int first, passed;

    while (core + 1 < BNG_TARGET_CORES && !(selected >> core & 1u))
        core++;
    first = status[core];
    passed = first == BNG_OK || first == BNG_ENOMEM;
    for (core = 0; core < BNG_TARGET_CORES; core++) {
        const int expected = passed && !(selected >> core & 1u) ? BNG_NOT_SELECTED : first;
        if (status[core] != expected)
            ck_abort_msg("explicit _s, core_mask %#x: core %u's last status %d, expected %d",
                         (unsigned)core_mask, core, status[core], expected);
    }
    return first;
}
#endif

void bng_case_run_explicit(bng_case *k, int shared, void *x, void *dy, void *dx, int core_mask)
{
    int slot, status;

    for (slot = 0; slot < BNG_SHARED_PARAMS_SLOTS; slot++)
        BNG_SHARED_PARAMS[slot] = SENTINEL;
#if BNG_TEST_LAUNCH_SPMD
    if (shared) {
        explicit_call c;
        memset(&c, 0, sizeof c);
        c.t = k->t;
        c.params = k->params;
        c.x = x;
        c.dy = dy;
        c.dx = dx;
        c.core_mask = core_mask;
        hthread_launch_spmd(explicit_on_every_core, &c);
        status = spmd_status(c.status, core_mask);
    } else
#endif
        status = call_explicit(k->t, shared, x, dy, dx, k->params, core_mask);
    for (slot = 0; slot < BNG_SHARED_PARAMS_SLOTS; slot++)
        if (BNG_SHARED_PARAMS[slot] != SENTINEL)
            ck_abort_msg("%s: explicit %s wrote BNG_SHARED_PARAMS[%d]", k->t->name,
                         shared ? "_s" : "_p", slot);
    k->params[BNG_PARAM_STATUS] = status;
}

void bng_case_call(bng_case *k, int op, int shared, void *x, void *dy, void *dx, int core_mask)
{
    const bng_dtype *t = k->t;

    if (!bng_dtype_has(t, op))
        ck_abort_msg("%s: the target has no entry point for op %d", t->name, op);
    if (shared) {
        run_shared(k, op, x, dy, dx, core_mask);
        return;
    }
    switch (op) {
    case BNG_OP_FULL: t->entry_p(x, dy, dx, k->params); break;
    case BNG_OP_EXT: t->ext_p(x, dy, dx, k->params); break;
    case BNG_OP_REDUCE: t->reduce_p(x, dy, k->params); break;
    case BNG_OP_APPLY: t->apply_p(x, dy, dx, k->params); break;
    default: t->dx_p(dy, dx, k->params); break;
    }
}

int bng_test_quick(void)
{
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
    return 1;       /* 10x slower or more */
#else
    return getenv("BNG_TEST_QUICK") != NULL;
#endif
}

static int ftz_mode;

int bng_test_ftz(void)
{
    return ftz_mode;
}

static void bng_test_init(void)
{
#if defined(__GLIBC__)
    /* A case's buffers from the heap, kept after free for the next case's: glibc maps
     * a large block afresh each time, and the kernel's page faults and zeroing were a
     * tenth of the channel walk's time. */
    mallopt(M_MMAP_THRESHOLD, 512 << 20);
    mallopt(M_TRIM_THRESHOLD, 1024 << 20);
#endif
    ftz_mode = bng_test_enable_ftz();
#if BNG_TEST_LAUNCH_FANOUT
    hthread_launch_fanout();        /* this thread is core 0, the caller */
#elif BNG_TEST_LAUNCH_SPMD
    hthread_mock_adopt_core_0();    /* its _p calls run as core 0's between launches */
#endif
}

void bng_case_free(bng_case *k)
{
    bng_buffer *all[] = {&k->x, &k->dy, &k->dx, &k->mean, &k->invar, &k->scale,
                         &k->dbias, &k->dscale, &k->sums};
    size_t i;
    for (i = 0; i < sizeof all / sizeof all[0]; i++)
        bng_buffer_free(all[i]);
}

void bng_case_check_guards(const bng_case *k)
{
    const bng_buffer *all[] = {&k->x, &k->dy, &k->dx, &k->mean, &k->invar, &k->scale,
                               &k->dbias, &k->dscale, &k->sums};
    const char *names[] = {"x", "dy", "dx", "mean", "invar", "scale", "dbias", "dscale", "sums"};
    static const size_t reserved[] = {9, 10, 11, BNG_CASE_SPATIAL, BNG_CASE_Y};
    size_t i;
    for (i = 0; i < sizeof all / sizeof all[0]; i++)
        if (!bng_buffer_guards_intact(all[i]))
            ck_abort_msg("%s: guard bytes around %s were written", k->t->name, names[i]);
    for (i = 0; i < sizeof reserved / sizeof reserved[0]; i++)
        if (k->params[reserved[i]] != SENTINEL
            && !(reserved[i] == BNG_CASE_Y && (k->params[BNG_CASE_FLAGS] & BNG_CASE_RELU))
            && !(reserved[i] == BNG_CASE_SPATIAL && (k->params[BNG_CASE_FLAGS] & BNG_CASE_NCHW)))
            ck_abort_msg("%s: reserved params[%zu] was written", k->t->name, reserved[i]);
}

int bng_run_suite(Suite *suite)
{
    SRunner *sr = srunner_create(suite);
    int failed;

    bng_test_init();
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_SILENT);
    bng_report_error_ratios();
    srunner_print(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

void bng_add_cases(Suite *s, const bng_test_case *cases, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++) {
        TCase *tc = tcase_create(cases[i].name);
        tcase_set_tags(tc, cases[i].tags);
        tcase_set_timeout(tc, 120);
        tcase_add_loop_test(tc, cases[i].test, 0, bng_dtype_count);
        suite_add_tcase(s, tc);
    }
}

void bng_expect_refused(bng_case *k, int op, int shared, void *x, void *dy, void *dx, int mask,
                        long long expected, const char *what)
{
    const char *storage = shared ? "_s" : "_p";
    unsigned char *sums_before = bng_test_alloc(k->sums.bytes);
    long long params_before[BNG_CASE_PARAMS];
    size_t slot;

    bng_case_mark_outputs(k);
    memcpy(sums_before, k->sums.p, k->sums.bytes);
    k->params[BNG_PARAM_STATUS] = 0x77;
    memcpy(params_before, k->params, sizeof params_before);
    if (op == BNG_CASE_EXPLICIT)
        bng_case_run_explicit(k, shared, x, dy, dx, mask);
    else
        bng_case_call(k, op, shared, x, dy, dx, mask);
    if (k->params[BNG_PARAM_STATUS] != expected)
        ck_abort_msg("%s op %d %s %s: status %lld, expected %lld", k->t->name, op, storage, what,
                     k->params[BNG_PARAM_STATUS], expected);
    if (!bng_case_outputs_marked(k) || memcmp(sums_before, k->sums.p, k->sums.bytes) != 0)
        ck_abort_msg("%s op %d %s %s: an output was written", k->t->name, op, storage, what);
    for (slot = 0; slot < BNG_CASE_PARAMS; slot++)
        if (slot != BNG_PARAM_STATUS && k->params[slot] != params_before[slot])
            ck_abort_msg("%s op %d %s %s: params[%zu] was written", k->t->name, op, storage,
                         what, slot);
    bng_case_check_guards(k);
    bng_test_free(sums_before);
}

void bng_expect_same(const void *a, const void *b, size_t bytes, const char *shape,
                     const char *what)
{
    if (memcmp(a, b, bytes) != 0)
        ck_abort_msg("%s%s%s differs", shape ? shape : "", shape ? ": " : "", what);
}

void bng_expect_same_bytes(const bng_buffer *a, const bng_buffer *b, const char *what)
{
    bng_expect_same(a->p, b->p, a->bytes, NULL, what);
}

void bng_expect_same_outputs(const bng_case *a, const bng_case *b)
{
    bng_expect_same_bytes(&a->dx, &b->dx, "dx");
    bng_expect_same_bytes(&a->dbias, &b->dbias, "dbias");
    bng_expect_same_bytes(&a->dscale, &b->dscale, "dscale");
}

static int in_plan(const bng_dtype *t, size_t channel)
{
    size_t i;
    for (i = 0; i < t->n_specialized; i++)
        if (t->specialized[i] == channel)
            return 1;
    return 0;
}

size_t bng_off_plan_channels(const bng_dtype *t, size_t *out)
{
    const size_t candidates[] = {1, 3, t->lanes - 1, t->lanes + 1, 2 * t->lanes + 5,
                                 t->generic_chunk + 7, 1001};
    size_t i, n = 0;
    for (i = 0; i < sizeof candidates / sizeof candidates[0]; i++)
        if (candidates[i] >= 1 && !in_plan(t, candidates[i]))
            out[n++] = candidates[i];
    return n;
}

const int bng_test_masks[] = {0x1, 0x2, 0x3, 0x5A, FULL_MASK, -1,
                              1 << (BNG_TARGET_CORES - 1),
                              (1 << (BNG_TARGET_CORES - 1)) | 0x40000000};
const size_t bng_test_mask_count = sizeof bng_test_masks / sizeof bng_test_masks[0];

size_t bng_ext_channels(const bng_dtype *t, size_t *out)
{
    out[0] = t->specialized[0];
    out[1] = t->lanes + 1;
    out[2] = t->generic_chunk + 7;
    return 3;
}

void bng_case_valid_sums(bng_case *k, size_t count)
{
    float *sums = k->sums.p;
    size_t i;
    for (i = 0; i < 2 * k->channel; i++)
        sums[i] = 0.5f;
    for (i = 0; i < BNG_SUMS_COUNT_LIMBS; i++, count >>= BNG_SUMS_LIMB_BITS)
        sums[2 * k->channel + i] = (float)(count & ((1u << BNG_SUMS_LIMB_BITS) - 1u));
}

void bng_set_bits(const bng_dtype *t, void *base, size_t i, uint32_t f32, uint16_t f16)
{
    if (t->size == 2)
        memcpy((unsigned char *)base + 2 * i, &f16, 2);
    else
        memcpy((unsigned char *)base + 4 * i, &f32, 4);
}

bng_nchw_coef bng_test_coef(float *room, float value)
{
#if BNG_SPLIT_MEMORY
    int i;
    for (i = 0; i < BNG_TEST_COEF_LANES; i++)
        room[i] = value;
    return room;
#else
    (void)room;
    return value;
#endif
}
