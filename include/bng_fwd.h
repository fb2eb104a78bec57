/* SPDX-License-Identifier: Apache-2.0 */
/* Copyright 2026 the batchnormgrad authors */
/* Owns: the training forward's call as its rooms pass it (bng_fwd_params.c checks a
 * block into it, bng_fwd_entry.c runs it, bng_fwd_nhwc_direct.c computes _p's on the
 * caller's memory, bng_fwd_nhwc_staged.c _s's through the cores' private memory, and a
 * split target's _p through its workspace) and
 * the per-channel steps both computations share (bng_fwd_steps.c). May include: the
 * target's headers, bng_params.h and bng_job.h. Compiled only for a target whose
 * targets.yaml lists forward (generator/plan.py's rooms); internal to the library:
 * callers need only batch_norm_fwd.h.
 *
 * The statistics of a chunk of channels (docs/design.md, "Training forward"): every
 * value is taken as its deviation from the channel's shift, its value in the call's
 * first row, so that the sums stay of the data's spread where its mean is far larger.
 * A row group's mean and sum of squared deviations (M2) come from the fwd_stats
 * ukernel, blocks merged in order; the groups merge in group order into the chunk's,
 * each merge by Chan's formula:
 *   delta = mean_b - mean_a;  mean = mean_a + delta * w_new;
 *   M2 = M2_a + (M2_b + delta * delta * w_cross),
 *   w_new = n_b / (n_a + n_b), w_cross = n_a * w_new (floats),
 * the first taken as it is. The groups are the backward's (bng_group_rows): they depend
 * on batch alone, and so do the bits. _s splits the rows between the cores as the
 * backward's _s does (bng_stage_slice), each core's groups' statistics go to the shared
 * scratch, and every core merges all groups in group order: _p's bits on any core mask.
 */
#ifndef BNG_FWD_H
#define BNG_FWD_H

#include <stddef.h>
#include "batch_norm_fwd.h"
#include "bng_kernels.h"
#include "bng_job.h"

/* Flags of the vendor's inference calls (bng_fwd_entry_inference), beyond the block's
 * BNG_FWD_* and refused in a block: no offset (bias 0, fp_batchnorm_s), no saved
 * statistics (the calls have no mean or invar to write). */
#define BNG_FWD_NO_BIAS (1LL << 16)
#define BNG_FWD_NO_SAVE (1LL << 17)

/* One checked call of the forward. */
typedef struct {
    size_t batch, channel;
    int nchw;               /* BNG_FWD_NCHW: x[batch][channel][spatial] */
    size_t spatial;         /* NCHW: H*W, the elements of a plane (1 otherwise) */
    float eps, momentum;
    int fix_gamma;          /* BNG_FWD_FIX_GAMMA: scale taken as 1, not read */
    int global_stats;       /* BNG_FWD_GLOBAL_STATS: normalize with the moving statistics */
    int torch;              /* BNG_FWD_TORCH: PyTorch's moving update, unbiased variance */
    int keep_moving;        /* BNG_FWD_KEEP_MOVING: moving statistics untouched */
    int partials_out;       /* BNG_FWD_PARTIALS_OUT: the statistics to `partials`, no more */
    int partials_in;        /* BNG_FWD_PARTIALS_IN: the statistics from `partials` */
    int relu;               /* BNG_FWD_RELU: y = max(0, ...) as stored */
    void *relu_bits;        /* BNG_FWD_RELU_BITS: the keep bits out; else NULL */
    size_t count;           /* the values a channel's statistics cover: batch (NCHW: batch
                               * spatial), or the partials' rows */
    float *partials;
    void *mean, *invar;     /* out: the saved statistics (NULL: BNG_FWD_NO_SAVE) */
    const void *scale, *bias;        /* bias NULL: BNG_FWD_NO_BIAS */
    void *moving_mean, *moving_var;
} bng_fwd_call;

/* A chunk's float arrays (the caller's stack in a unified target's _p, a core's private
 * memory in _s and a split target's _p): the statistics, then y's coefficients. */
typedef struct {
    BNG_VMEM float *shift;             /* the value every deviation is taken from */
    BNG_VMEM float *mean;              /* the chunk's mean of x - shift */
    BNG_VMEM float *m2;                /* its sum of squared deviations (M2) */
    BNG_VMEM float *part_mean, *part_m2;    /* a row group's */
    BNG_VMEM float *gain, *bias;       /* y = ((x - shift) - mean) * gain + bias */
} bng_fwd_arrays;
#define BNG_FWD_FLOAT_ARRAYS 7

/* A chunk's per-channel arrays of the call's stats type, from its first channel: the
 * caller's (a unified target's _p) or a core's copies (staged). */
typedef struct {
    const BNG_VMEM void *scale, *bias;
    BNG_VMEM void *mean, *invar;       /* out */
    BNG_VMEM void *moving_mean, *moving_var;
} bng_fwd_chunk_stats;
#define BNG_FWD_STATS_ARRAYS 6

/* The partials buffer's arrays of a call (BNG_FWD_PARTIALS_FLOATS): its shifts, means,
 * M2s, and its count limbs. */
enum { BNG_FWD_PARTIAL_SHIFT, BNG_FWD_PARTIAL_MEAN, BNG_FWD_PARTIAL_M2, BNG_FWD_PARTIAL_COUNT };
/* The count's two limbs, low + high * 2^24 (batch_norm_fwd.h): limb i at limbs + i *
 * BNG_V, a whole vector each (packed on a unified target). */
void bng_fwd_step_count(size_t rows, BNG_VMEM float *limbs);

/* Channels a pass of the forward handles: the kernel's count, or the generic chunk. */
size_t bng_fwd_chunk_channels(const bng_fwd_config *config, const bng_fwd_kernel *kernel);
/* The per-channel steps of a chunk of n channels (bng_fwd_steps.c).
 * shift := a row's n values (element_bytes each: the call's first row). */
void bng_fwd_step_shift(size_t element_bytes, size_t n, const BNG_VMEM void *row,
                        BNG_VMEM float *shift);
/* Merge a row group's mean and M2 of `rows` rows (part_mean, part_m2) into a's mean
 * and m2, `done` rows before it (the first taken as it is, none changing nothing). */
void bng_fwd_step_merge(size_t n, size_t done, size_t rows, const BNG_VMEM float *part_mean,
                        const BNG_VMEM float *part_m2, const bng_fwd_arrays *a);
#if !BNG_SPLIT_MEMORY
/* The direct _p's steps, on the caller's memory (a unified target's). */
float *bng_fwd_partial(const bng_fwd_call *call, int array, size_t first);
/* An array from element `first` (NULL stays NULL: an array a flag leaves unread). */
void *bng_fwd_from(const void *array, size_t first, size_t element);
/* _p: the caller's per-channel arrays from channel `first`; those a flag leaves unread
 * are NULL, and stay so. */
void bng_fwd_step_point(const bng_fwd_call *call, size_t first, size_t stat_bytes,
                        bng_fwd_chunk_stats *stats);
/* n channels' statistics (shift, mean, M2) from channel `first` to the partials
 * buffer's three arrays (PARTIALS_OUT, with the count at channel 0) or from them
 * (PARTIALS_IN), on the caller's memory (a unified target's _p). */
void bng_fwd_step_partials(const bng_fwd_call *call, size_t first, size_t n,
                           const bng_fwd_arrays *a, int out);
#endif
/* GLOBAL_STATS: shift := the moving mean, mean := 0, m2 := the moving variance. */
void bng_fwd_step_global(const bng_dtype_config *sizes, size_t n, const bng_fwd_chunk_stats *stats,
                         const bng_fwd_arrays *a);
/* The chunk's results from its statistics: the variance (M2 / count, or the moving
 * variance), invar, y's gain and bias, the saved mean and invar, and in training the
 * moving statistics updated. */
void bng_fwd_step_finalize(const bng_dtype_config *sizes, const bng_fwd_call *call, size_t n,
                           const bng_fwd_arrays *a, const bng_fwd_chunk_stats *stats);

/* The block and the data pointers of a call -> BNG_OK and the call, or the first error
 * in the contract's order (docs/contract.md section 15). Reads the block, writes
 * nothing but the call. `allowed`: the flags the caller may set (BNG_FWD_FLAGS, the
 * block's; with BNG_FWD_NO_BIAS and BNG_FWD_NO_SAVE, the vendor's calls'). */
/* BNG_FWD_NCHW where the target's forward has it (BNG_HAS_FWD_NCHW: batch_norm_fwd.h
 * defines it only there): the flag, its slot, and the ReLU bits' words of a plane. */
#if BNG_HAS_FWD_NCHW
#define BNG_FWD_NCHW_FLAG BNG_FWD_NCHW
#define BNG_FWD_SLOT_SPATIAL BNG_FWD_PARAM_SPATIAL
#define BNG_FWD_PLANE_WORDS(spatial, element_bytes) BNG_FWD_RELU_PLANE_WORDS(spatial, element_bytes)
#else
#define BNG_FWD_NCHW_FLAG 0
#define BNG_FWD_SLOT_SPATIAL 14    /* never read: no call has the flag */
#define BNG_FWD_PLANE_WORDS(spatial, element_bytes) ((void)(spatial), (void)(element_bytes), (size_t)0)
#endif
#define BNG_FWD_FLAGS (BNG_FWD_FIX_GAMMA | BNG_FWD_GLOBAL_STATS | BNG_FWD_TORCH | BNG_FWD_KEEP_MOVING \
                       | BNG_FWD_PARTIALS_OUT | BNG_FWD_PARTIALS_IN | BNG_FWD_RELU | BNG_FWD_RELU_BITS \
                       | BNG_FWD_NCHW_FLAG)
int bng_fwd_params_check(const bng_fwd_config *config, const long long *params, const void *x,
                         const void *y, long long allowed, bng_fwd_call *call);
/* The entry point of fp_/hp_batch_norm_forward_p: check, run, the status in the block. */
void bng_fwd_entry_private(const bng_fwd_config *config, void *x, void *y, long long *params);
/* The vendor's inference calls (fp_/hp_batchnorm_s, fp_/hp_fusedbatchnorm_s): the
 * forward with BNG_FWD_GLOBAL_STATS and `flags` (batchnorm_s's BNG_FWD_FIX_GAMMA and
 * BNG_FWD_NO_BIAS: it has no scale or offset) on the cores of core_mask, from
 * arguments (a block in the caller's frame, never BNG_SHARED_PARAMS); nothing saved.
 * The status is the calling core's last (bng_status_keep), as the explicit-argument
 * calls'. */
void bng_fwd_entry_inference(const bng_fwd_config *config, long long flags, const void *input,
                             void *output, const void *scale, const void *offset,
                             const void *mean, const void *variance, int unit, int channel,
                             float epsilon, int core_mask);
/* The entry point of fp_/hp_batch_norm_forward_s: the block at BNG_SHARED_PARAMS read
 * once, check, run on the cores of core_mask, the status back there (SPMD: on every
 * selected core). */
void bng_fwd_entry_shared(const bng_fwd_config *config, void *x, void *y, int core_mask);
/* A checked call of _p, on the calling core: on the caller's memory (NHWC:
 * bng_fwd_nhwc_direct.c; NCHW, with nchw: bng_fwd_nchw_direct.c) or, on a split target,
 * staged through the workspace the HAL gives _p (bng_fwd_nhwc_staged.c,
 * bng_fwd_nchw_staged.c: BNG_ENOMEM where it has none, nothing written). */
int bng_fwd_nhwc_p_run(const bng_fwd_config *config, const bng_fwd_call *call, const void *x,
                       void *y);
int bng_fwd_nchw_p_run(const bng_fwd_config *config, const bng_fwd_call *call, const void *x,
                       void *y);

/* _s's call as the HAL copies it to the cores of `mask` (no larger than a HAL's
 * mailbox holds: bng_hal_hthreads.c's BNG_HTHREADS_MAX_ARG), from which each core
 * builds its own staged job; and its body, one core's part (bng_fwd_nhwc_staged.c). */
typedef struct {
    const bng_fwd_config *config;
    bng_fwd_call call;
    unsigned mask;
    const void *x;
    void *y;
} bng_fwd_launch;
void bng_fwd_nhwc_s_core(unsigned core, void *launch);
/* NCHW's (bng_fwd_nchw_staged.c, with nchw). */
void bng_fwd_nchw_s_core(unsigned core, void *launch);

/* ---- what the staged runs share (bng_fwd_staging.c) ---- */

/* A core's staged job, which it builds from the launch: the staging's (x; y where the
 * backward's job has dx; no dy) and the forward's call. The ABI's pointers take the
 * BNG_SHARED qualifier here, once. */
typedef struct {
    bng_staged_job base;
    const bng_fwd_config *config;
    const bng_fwd_kernel *kernel;            /* NHWC's, for the call's channel count */
    const bng_fwd_nchw_kernel *nchw_kernel;  /* NCHW's (NULL without nchw) */
    bng_fwd_call call;
    const BNG_SHARED void *scale, *bias;
    BNG_SHARED void *mean, *invar, *moving_mean, *moving_var;
    BNG_SHARED float *partials;
    BNG_SHARED void *relu_bits;
} bng_fwd_job;
void bng_fwd_job_init(bng_fwd_job *job, const bng_fwd_launch *launch);

/* A core's copies of n channels from `first` in its private memory: the statistics'
 * float arrays and the per-channel arrays of the stats type, scale and bias where the
 * inputs arrive. */
typedef struct {
    const bng_fwd_job *job;
    size_t first, n;
    bng_fwd_arrays a;
    bng_fwd_chunk_stats stats;
    BNG_VMEM void *scale, *bias;
} bng_fwd_copies;
/* The copies' arrays of `elements` each (BNG_FWD_FLOAT_ARRAYS floats, then
 * BNG_FWD_STATS_ARRAYS of the stats type), taken from *next (bng_take). */
void bng_fwd_take_copies(bng_fwd_copies *k, BNG_VMEM unsigned char **next, size_t elements);
/* Every copy's padding lanes, from the chunk's last channel up to whole vectors
 * (BNG_PADDED: none on a unified target): zero, before the chunk's inputs arrive (the
 * first vector zeroed holds its last channels too). bng_fwd_steps.c, a room that
 * computes with vectors. */
void bng_fwd_step_pad(const bng_fwd_copies *k);
/* The per-channel inputs the call reads into the copies; the saved statistics and the
 * moving ones the call writes out of them; the statistics (shift, mean, M2) from the
 * partials buffer (out 0) or to it (out 1, and with channel 0 the count, its limbs
 * made in `limbs`, two vectors of BNG_V floats of private memory). Each waits for its
 * transfers. */
void bng_fwd_stage_in(const bng_fwd_copies *k);
void bng_fwd_stage_out(const bng_fwd_copies *k);
void bng_fwd_stage_partials(const bng_fwd_copies *k, int out, BNG_VMEM float *limbs);
#if BNG_SPLIT_MEMORY
/* A split target's _p: the call staged like _s on the calling core alone (rank 0 of
 * one), `run` its core's part, through the workspace the HAL gives _p
 * (bng_stage_alone); BNG_ENOMEM, nothing written, without one. */
int bng_fwd_stage_p_run(const bng_fwd_config *config, const bng_fwd_call *call, const void *x,
                        void *y, void (*run)(const bng_fwd_job *job, unsigned core));
#endif

#endif /* BNG_FWD_H */
