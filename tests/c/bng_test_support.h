/* Test support shared by the Check suites: storage-type adapters, guarded buffers,
 * deterministic data, and the comparison against the float64 reference.
 */
#ifndef BNG_TEST_SUPPORT_H
#define BNG_TEST_SUPPORT_H

#include <check.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "batch_norm_grad.h"
#include "bng_f16.h"
#include "bng_kernels.h"
#include "bng_reference.h"

/* One storage type as the tests see it: elements are read and written as double
 * (bng_get, bng_set: below). */
typedef struct {
    const char *name;                    /* "f32", "f16 (stats f16)", ... */
    size_t size, stats_size;             /* bytes per data / per-channel element */
    void (*entry_p)(void *x, void *dy, void *dx, long long *params);
    void (*entry_s)(void *x, void *dy, void *dx, int core_mask);
    /* Run through the private driver: with the generic kernel when `generic` is
     * nonzero, else with the kernel the table registers for `channel`. */
    void (*run_kernel)(int generic, size_t batch, size_t channel, int is_train,
                       void *x, void *dy, void *dx, long long *params);
    /* The kernel tables: the extended calls' (bng_<dtype>_config) and the vendor's
     * calls' (bng_<dtype>_base_config). */
    const bng_dtype_config *config, *base_config;
    const bng_kernel *generic;
    const size_t *specialized;           /* the plan's channel counts (bng_kernels.h) */
    size_t n_specialized, lanes, generic_chunk;
    double precision;                    /* 2^-(mantissa bits) of the storage type */
    double min_normal;                   /* smallest normal value of the storage type */
    int half_output;                     /* BNG_REF_HALF_* bits */
    double overflow_dx, overflow_stats;  /* |ref| at or above which the output is Inf */
    /* The entry points of batch_norm_grad_ext.h, NULL where the target has none. */
    void (*reduce_p)(void *x, void *dy, long long *params);
    void (*reduce_s)(void *x, void *dy, int core_mask);
    void (*apply_p)(void *x, void *dy, void *dx, long long *params);
    void (*apply_s)(void *x, void *dy, void *dx, int core_mask);
    void (*dx_p)(void *dy, void *dx, long long *params);
    void (*dx_s)(void *dy, void *dx, int core_mask);
    void (*ext_p)(void *x, void *dy, void *dx, long long *params);
    void (*ext_s)(void *x, void *dy, void *dx, int core_mask);
    /* The explicit-argument calls of batchnormgrad.h, on the arrays of a block's slots
     * 0-4 and its batch, channel and is_train as int. */
    void (*explicit_p)(void *x, void *dy, void *dx, const long long *params);
    void (*explicit_s)(void *x, void *dy, void *dx, const long long *params, int core_mask);
    /* The training forward (batch_norm_fwd.h), its config and generic kernel (NULL
     * where the target has no forward: const void * then, as bng_fwd_config is). */
    void (*forward_p)(void *x, void *y, long long *params);
    void (*forward_s)(void *x, void *y, int core_mask);
    /* The vendor's inference calls (batch_norm_fwd.h), their arrays as void pointers. */
    void (*batchnorm_s)(void *input, void *output, float *mean, float *variance, int unit,
                        int channel, float epsilon, int core_mask);
    void (*fusedbatchnorm_s)(const void *input, const void *scale, const void *offset,
                             const void *mean, const void *variance, float epsilon, int channel,
                             int unit, int core_mask, void *output);
    const void *fwd_config;
} bng_dtype;

/* Element i of an array of `bytes`-sized elements (4: float, 2: half) as double, and
 * := v, rounded to the type (to nearest even). Inline, for the loops over every element
 * of a case (a call an element through the storage type's table was a fifth of a
 * suite's time). Half by F16C's conversions on x86 (one instruction each, exact; the
 * compiler's own conversion of _Float16 can be a library call: GCC 12 on x86 without
 * AVX512-FP16, __extendhfdf2), spelled as the builtins <immintrin.h>'s _cvtsh_ss and
 * _cvtss_sh wrap (GCC's and clang's alike) without that header, whose parse cost more
 * than a suite file's compile (include/bng_vec_gnu.h does the same); elsewhere by
 * bng_f16.h's. double -> float -> half rounds twice: test data only needs some
 * representable value. An element's bytes are read and written as memcpy would
 * (BNG_ELEMENT_GET, _SET): under GCC's ThreadSanitizer a memcpy of 4 bytes is a call to
 * the runtime's range check (__tsan_read_range; so is an access of an unaligned type),
 * an access of an aliasing type one check of its size (__tsan_read4): a suite's arrays
 * hold their elements aligned. */
#if defined(__F16C__)
typedef short bng_f16c_halves __attribute__((vector_size(16)));
typedef float bng_f16c_floats __attribute__((vector_size(16)));
#endif
#if defined(__SANITIZE_THREAD__)
typedef float bng_element_float __attribute__((may_alias));
typedef uint16_t bng_element_bits __attribute__((may_alias));
#define BNG_ELEMENT_GET(type, v, base, i) ((v) = ((const bng_element_##type *)(base))[i])
#define BNG_ELEMENT_SET(type, base, i, v) (((bng_element_##type *)(base))[i] = (v))
#else
#define BNG_ELEMENT_GET(type, v, base, i) \
    memcpy(&(v), (const unsigned char *)(base) + (i) * sizeof(v), sizeof(v))
#define BNG_ELEMENT_SET(type, base, i, v) \
    memcpy((unsigned char *)(base) + (i) * sizeof(v), &(v), sizeof(v))
#endif
static inline double bng_value_get(size_t bytes, const void *base, size_t i)
{
    if (bytes == sizeof(float)) {
        float f;
        BNG_ELEMENT_GET(float, f, base, i);
        return f;
    } else {
#if defined(__F16C__)
        uint16_t bits;
        BNG_ELEMENT_GET(bits, bits, base, i);
        {
            const bng_f16c_halves h = {(short)bits};
            return __builtin_ia32_vcvtph2ps(h)[0];
        }
#else
        return bng_half_to_float(((const half *)base)[i]);
#endif
    }
}

static inline void bng_value_set(size_t bytes, void *base, size_t i, double v)
{
    if (bytes == sizeof(float)) {
        const float f = (float)v;
        BNG_ELEMENT_SET(float, base, i, f);
    } else {
#if defined(__F16C__)
        const bng_f16c_floats f = {(float)v};
        const uint16_t bits = (uint16_t)__builtin_ia32_vcvtps2ph(f, 0)[0];    /* to nearest even */
        BNG_ELEMENT_SET(bits, base, i, bits);
#else
        ((half *)base)[i] = bng_half_from_float((float)v);
#endif
    }
}

/* A data element (x, dy, dx, y) of t's type, and a per-channel one (its stats type). */
static inline double bng_get(const bng_dtype *t, const void *base, size_t i)
{
    return bng_value_get(t->size, base, i);
}

static inline void bng_set(const bng_dtype *t, void *base, size_t i, double v)
{
    bng_value_set(t->size, base, i, v);
}

static inline double bng_stats_get(const bng_dtype *t, const void *base, size_t i)
{
    return bng_value_get(t->stats_size, base, i);
}

static inline void bng_stats_set(const bng_dtype *t, void *base, size_t i, double v)
{
    bng_value_set(t->stats_size, base, i, v);
}

/* The extended parameter block's slots (batch_norm_grad_ext.h); a case's block has
 * them all, and the vendor's calls see its first BNG_PARAMS_LEN. */
#define BNG_CASE_PARAMS 16
#define BNG_CASE_SUMS 12
#define BNG_CASE_FLAGS 13
#define BNG_CASE_EFLAGS (-9)      /* the status of an unknown flag bit */
#define BNG_CASE_ACCUMULATE 1     /* BNG_FLAG_ACCUMULATE */
#define BNG_CASE_NCHW 2           /* BNG_FLAG_NCHW, with the extent in BNG_CASE_SPATIAL */
#define BNG_CASE_RELU 4           /* BNG_FLAG_RELU, with y in BNG_CASE_Y */
#define BNG_CASE_RELU_BITS 8      /* BNG_FLAG_RELU_BITS: the forward's bits in BNG_CASE_Y */
#define BNG_CASE_ACCUMULATE_DX 16 /* BNG_FLAG_ACCUMULATE_DX */
#define BNG_CASE_SPATIAL 14
#define BNG_CASE_Y 15

#define BNG_GUARD 64
#define BNG_GUARD_BYTE 0xA5

typedef struct {
    unsigned char *raw;
    void *p;
    size_t bytes;
} bng_buffer;

typedef struct {
    const bng_dtype *t;
    size_t batch, channel;
    int is_train;
    bng_buffer x, dy, dx, mean, invar, scale, dbias, dscale;
    bng_buffer sums;       /* the partial-sums buffer (2 * channel + the count's limbs floats) */
    long long params[BNG_CASE_PARAMS];
} bng_case;

enum bng_data { BNG_DATA_RANDOM, BNG_DATA_LARGE_MEAN };

/* Element i of t's type set to the bits given (f32's, or f16's where t is half): values
 * a double would round to otherwise in the suite's flush-to-zero mode (subnormals), or
 * NaNs of a given payload. */
void bng_set_bits(const bng_dtype *t, void *base, size_t i, uint32_t f32, uint16_t f16);
/* A number in [lo, hi) from the suite's deterministic stream (xorshift32), advancing
 * *state. */
double bng_uniform(unsigned *state, double lo, double hi);

void bng_case_init(bng_case *k, const bng_dtype *t, size_t batch, size_t channel,
                   int is_train, enum bng_data data, unsigned seed);
/* bng_case_init's data (bng_test_data.c), into a case of its shape: x and dy drawn row
 * by row from the seed, and each channel's mean and biased variance of the stored x
 * (its rows summed in order), its inverse deviation and its scale. */
void bng_case_draw(bng_case *k, enum bng_data data, unsigned seed);
/* A case with the shape and inputs `from` has now (what bng_case_init with its
 * arguments gave it, unless a call has since written them), in buffers of its own. */
void bng_case_init_like(bng_case *k, const bng_case *from);
void bng_case_free(bng_case *k);
/* The byte outputs are filled with before a call, to see what the call wrote. */
#define BNG_OUTPUT_MARK 0x3C
/* Fill the outputs (dx, dbias, dscale) with the mark. */
void bng_case_mark_outputs(bng_case *k);
/* The harness's heap: every array and buffer a suite allocates is one of these (not
 * bng_reference.c's, which links into programs of its own). Under the sanitizers
 * bng_test_free keeps a large block for a later bng_test_alloc that fits it; an access
 * past the size asked for, or to a kept block, is still caught under AddressSanitizer
 * (see bng_test_support.c). bng_test_alloc never returns NULL (the case fails). */
void *bng_test_alloc(size_t bytes);
void bng_test_free(void *p);
/* A buffer of `bytes` between guards of BNG_GUARD bytes of BNG_GUARD_BYTE (its payload
 * unwritten), and its end. */
bng_buffer bng_buffer_new(size_t bytes);
void bng_buffer_free(bng_buffer *b);
int bng_buffer_guards_intact(const bng_buffer *b);
/* 1 when each of the bytes at p still is the mark. */
int bng_bytes_are_marked(const void *p, size_t bytes);
/* 1 when every byte of b's payload still is the mark. */
int bng_buffer_is_marked(const bng_buffer *b);
/* 1 when none of k's outputs (dx, dbias, dscale) was written since they were marked. */
int bng_case_outputs_marked(const bng_case *k);
/* Make the build's HAL fail as one that cannot keep bng_hal.h's promises (private_memory:
 * no private memory on any core; workspace: _p's workspace one byte short), or restore it
 * (0, 0): 1 when it did, on the host HAL (include/host/bng_hal_host.h); 0 on the
 * hthreads HAL, whose refusals test_hthreads_launch.c makes through its mock. */
int bng_test_hal_refuse(int private_memory, int workspace);
/* Make the runtime mock's vector_malloc fail on the cores of `cores` (0: none), as a
 * part whose private memory is taken: bng_hal_parallel then returns BNG_HAL_ENOMEM and
 * _s BNG_ENOMEM. 1 when it did, on the hthreads HAL; 0 on the host HAL. */
int bng_test_fail_private_memory(unsigned cores);
/* Call the shared-storage entry point with k->params as BNG_SHARED_PARAMS, and copy
 * the block back (status and reserved slots included). Built with
 * BNG_TEST_LAUNCH_SPMD (the reference hthreads HAL, SPMD model), every core calls it. */
void bng_case_run_shared(bng_case *k, void *x, void *dy, void *dx, int core_mask);
/* call(arg), an _s call as firmware makes it: on every core of the group in the SPMD
 * launch model (the reference HAL for hthreads), else once on this core. */
void bng_test_on_cores(void (*call)(void *arg), void *arg);
/* The calling core's number inside bng_test_on_cores's call (0 where one call is made). */
unsigned bng_test_core(void);
/* Call the entry point of `op` (BNG_OP_FULL: the vendor's; BNG_OP_EXT, _REDUCE,
 * _APPLY, _DX: batch_norm_grad_ext.h's) with k->params, _p or _s (core_mask), on the
 * given data pointers (dx-only passes dy and dx, reduce x and dy). */
void bng_case_call(bng_case *k, int op, int shared, void *x, void *dy, void *dx, int core_mask);
/* Call the explicit-argument call of k's type (batchnormgrad.h) on the arrays and
 * shape of k->params, _p or _s (`shared`, core_mask), and put the status it leaves,
 * bng_last_status(), in k->params[BNG_PARAM_STATUS]. First a refused call on the same
 * core leaves another status, so that a call that does not record its own is caught.
 * BNG_SHARED_PARAMS must be untouched (the explicit calls never use it). Built with
 * BNG_TEST_LAUNCH_SPMD every core calls _s, and each must report: the selected cores
 * the same status, the others BNG_NOT_SELECTED, or every core the checks' error. */
void bng_case_run_explicit(bng_case *k, int shared, void *x, void *dy, void *dx, int core_mask);
/* A call a check refuses: `op` is BNG_OP_FULL (the vendor's call), another BNG_OP_*
 * (batch_norm_grad_ext.h's) or BNG_CASE_EXPLICIT (batchnormgrad.h's explicit-argument
 * call), _p or _s (`shared`, core_mask `mask`), on the given data pointers. The status
 * `expected` is written and nothing else: k's dx, dbias and dscale keep the mark, its
 * sums buffer its bytes, every other slot of the block its value, every guard intact. */
#define BNG_CASE_EXPLICIT (-1)
void bng_expect_refused(bng_case *k, int op, int shared, void *x, void *dy, void *dx, int mask,
                        long long expected, const char *what);
/* Two buffers of the same size hold the same bytes. */
void bng_expect_same_bytes(const bng_buffer *a, const bng_buffer *b, const char *what);
/* Two cases' outputs (dx, dbias, dscale) hold the same bytes. */
void bng_expect_same_outputs(const bng_case *a, const bng_case *b);
/* `bytes` at a and b are the same; else ck_abort_msg with `what` and, when `shape` is
 * not NULL, it (the case's shape). */
void bng_expect_same(const void *a, const void *b, size_t bytes, const char *shape,
                     const char *what);
/* Channel counts off t's plan (served by the generic kernel): 1, 3, lanes - 1,
 * lanes + 1, and odd ones that span several generic chunks; at most 8, into out. */
size_t bng_off_plan_channels(const bng_dtype *t, size_t *out);
/* Every core of the cluster, as a core_mask. */
#define FULL_MASK ((int)((1u << BNG_TARGET_CORES) - 1u))
/* The core masks every _s comparison runs with: single low and high cores, pairs, a
 * sparse mask, the full cluster, all bits, and bits beyond the core count (ignored). */
extern const int bng_test_masks[];
extern const size_t bng_test_mask_count;
/* Channel counts every extension test walks: a specialized one, one off the plan
 * within a chunk, one spanning chunks (3, into out). */
size_t bng_ext_channels(const bng_dtype *t, size_t *out);
/* k's sums buffer as a valid one for apply: sums of 0.5 and a count of `count` rows. */
void bng_case_valid_sums(bng_case *k, size_t count);
/* 1 when the target has the entry points of `op`. */
int bng_dtype_has(const bng_dtype *t, int op);
/* Whether element i of y (t's type) keeps its dy under PyTorch's threshold_backward:
 * y > 0 or NaN (NaN <= 0 is false), compared on the stored bits as the contract says,
 * so that a positive subnormal y keeps dy whatever the FPU's mode (the suite's ftz
 * mode would take it for 0 in a float compare). */
int bng_relu_keeps(const bng_dtype *t, const void *y, size_t i);
/* ReLU backward, the separate pass a call with BNG_FLAG_RELU equals: over n elements
 * of t's type, dy = +0 in place where y does not keep it (bng_relu_keeps); a kept dy
 * keeps its bits. */
void bng_relu_backward(const bng_dtype *t, void *dy, const void *y, size_t n);
/* The keep bits of y's `rows` rows (y_stride elements apart; bng_relu_keeps) in the
 * layout of the training forward's bits and of the _keeps ukernels' words: word g of
 * channel c holds row g * W + i's keep in bit i (W the element's bits), a last word's
 * missing rows 0. bng_keep_word gives one such word; bng_keep_bits them all, word g of
 * channel c at element g * keeps_stride + c of t's type (the elements past `channels`
 * in each word row marked), with a last word's missing rows' bits set, which no call
 * may read (bng_keep_padding: those bits of word g of `rows` rows). */
unsigned long bng_keep_padding(const bng_dtype *t, size_t rows, size_t g);
unsigned long bng_keep_word(const bng_dtype *t, const void *y, size_t rows, size_t y_stride,
                            size_t g, size_t c);
bng_buffer bng_keep_bits(const bng_dtype *t, const void *y, size_t rows, size_t channels,
                         size_t y_stride, size_t keeps_stride);
/* NCHW's keep bits of y (batch_norm_fwd.h's layout), `planes` planes of `spatial`
 * values: each plane's ceil(spatial / W) words in plane order, element s's keep in bit
 * s % W of the plane's word s / W, a plane's last word's missing values' bits set (no
 * call may read them). */
bng_buffer bng_keep_plane_bits(const bng_dtype *t, const void *y, size_t planes, size_t spatial);
/* Compare the outputs with the float64 reference under the contract's bound (docs/contract.md section 9);
 * ck_abort_msg on the first violation. */
void bng_case_check(const bng_case *k);
/* Check all guard bytes and that the reserved params[9..11] and [14..15] still hold
 * their sentinels (params[15] is y with BNG_FLAG_RELU set, params[14] the spatial
 * extent with BNG_FLAG_NCHW). */
void bng_case_check_guards(const bng_case *k);

/* 1 when a run is at the quick size: under a sanitizer, or when make asks it
 * (BNG_TEST_QUICK: under valgrind, in a mode or flavour that repeats code another run
 * covered at full size); a program's largest sweeps then shrink, and every path they
 * cover still runs. */
int bng_test_quick(void);
/* Under ThreadSanitizer, tell the runtime that this thread wrote (read) the bytes: what
 * the harness's uninstrumented code (bng_test_data.c) does to the library's buffers,
 * and a kept block handed out (bng_test_alloc); elsewhere nothing. */
void bng_test_seen_write(const void *p, size_t bytes);
void bng_test_seen_read(const void *p, size_t bytes);
/* 1 when the suite runs in flush-to-zero mode (bng_run_suite: BNG_TEST_FTZ). */
int bng_test_ftz(void);
/* The largest error seen as a fraction of the bound, per storage type and output
 * (bng_case_check's), printed (bng_run_suite, at its end). */
void bng_report_error_ratios(void);

/* Run a suite as every test program here does, and return the exit status: first the
 * FPU mode (BNG_TEST_FTZ=1: flush-to-zero, as on the DSP) and the cores a launch model
 * needs (BNG_TEST_LAUNCH_FANOUT: the reference HAL's workers); the tests in this process
 * (no fork: the largest error seen as a fraction of the bound, per storage type, is
 * gathered across tests and printed at the end), then Check's summary. */
int bng_run_suite(Suite *suite);

/* A case of a suite: its name, its test (looped over every storage type of the target:
 * bng_dtypes), its tags (make runs a HAL flavour's "shared" cases, an arithmetic
 * flavour's "private" ones, and every case on gnu; make dma-mutants runs the forward's
 * DMA-moving cases, tagged "forward" too, alone for a wait in the forward's rooms). */
typedef struct {
    const char *name;
    const TTest *test;
    const char *tags;
} bng_test_case;
/* Add n cases to a suite, each a test case of its own with the suites' timeout. */
void bng_add_cases(Suite *s, const bng_test_case *cases, size_t n);

/* A plane ukernel's coefficient (bng_ukernel.h, bng_nchw_coef): on a split target a
 * vector of it in every lane, in `room` (BNG_TEST_COEF_LANES floats, the widest vector
 * bng_vec.h has, as the driver's slots: bng_nchw_steps.h, which the tests do not
 * include); elsewhere the float. */
#define BNG_TEST_COEF_LANES 64
bng_nchw_coef bng_test_coef(float *room, float value);

#endif
