/* SPDX-License-Identifier: Apache-2.0 */
/* Copyright 2026 the batchnormgrad authors */
/* Owns: a checked call as the driver's rooms run it (the staged job) and the runners
 * each room exports to the entry points. May include: the target's headers, bng_params.h,
 * bng_hal.h; every room includes it, and it includes no room.
 *
 * The rooms, a file each, are listed once: generator/plan.py's DRIVER_ROOMS, which says
 * which targets compile each (docs/design.md's map says what each holds, by the naming
 * rule there; a test holds the map to the list). A target without nchw or relu
 * compiles none of their rooms. The entry points and the NHWC rooms reach them only
 * through the storage type's config (bng_dtype_config.nchw, .relu; NULL there, and in
 * the vendor's calls' config), never by name: a firmware image that links only the
 * vendor's calls links none of their code. BNG_IS_NCHW and BNG_RELU are constant 0 on a
 * target without the extension.
 */
#ifndef BNG_JOB_H
#define BNG_JOB_H

#include <stddef.h>
#include "batch_norm_grad.h"
#include "bng_kernels.h"
#include "bng_params.h"
#include "bng_hal.h"

#define BNG_ALL_CORES ((1u << BNG_TARGET_CORES) - 1u)

/* The per-channel arrays of a staged call, where the DMA's "shared" side reads and
 * writes them. */
typedef struct {
    const BNG_SHARED void *mean, *invar, *scale;
    BNG_SHARED void *dbias, *dscale;
} bng_shared_stats;

/* A staged call: _s on the cores of `mask`, and on a split target _p on the calling
 * core alone (`alone`: the "shared" arrays are the caller's in its vector memory, which
 * the DMA moves; the sums stay in scalar memory; its one core folds its row groups
 * itself, with no barrier and no shared scratch; its private memory is the workspace
 * the HAL gave _p). The ABI's pointers take the BNG_SHARED qualifier once, in
 * bng_job_init, and keep it through the HAL. */
typedef struct {
    const bng_dtype_config *dtype;
    const bng_kernel *kernel;
    bng_call call;
    unsigned mask;
    const BNG_SHARED void *x, *dy;
    BNG_SHARED void *dx;
    bng_shared_stats stats;
    BNG_SHARED float *sums;     /* reduce: out; apply: in */
    int alone;
    BNG_VMEM unsigned char *workspace;
    size_t workspace_bytes;
} bng_staged_job;
/* _p staged on the calling core: only a split target has it (0 elsewhere, so that the
 * compiler drops its code). */
#define BNG_ALONE(job) (BNG_SPLIT_MEMORY && (job)->alone)

/* A staged job's storage type, kernel and arrays, on the cores of `mask`: the ABI's
 * pointers qualified BNG_SHARED here, once. */
static inline void bng_job_init(bng_staged_job *job, const bng_dtype_config *dtype,
                                const bng_kernel *kernel, const bng_call *call, unsigned mask,
                                const void *x, const void *dy, void *dx, const bng_stats *stats,
                                float *sums)
{
    job->dtype = dtype;
    job->kernel = kernel;
    job->call = *call;
    job->mask = mask;
    job->x = (const BNG_SHARED void *)x;
    job->dy = (const BNG_SHARED void *)dy;
    job->dx = (BNG_SHARED void *)dx;
    job->stats.mean = (const BNG_SHARED void *)stats->mean;
    job->stats.invar = (const BNG_SHARED void *)stats->invar;
    job->stats.scale = (const BNG_SHARED void *)stats->scale;
    job->stats.dbias = (BNG_SHARED void *)stats->dbias;
    job->stats.dscale = (BNG_SHARED void *)stats->dscale;
    job->sums = (BNG_SHARED float *)sums;
    job->alone = 0;
    job->workspace = NULL;
    job->workspace_bytes = 0;
}

/* The runners. _p (BNG_OK, or on a split target BNG_ENOMEM when the HAL had no
 * workspace: nothing written), `sums` the partial-sums buffer (reduce: written, apply:
 * read) or NULL; _s's body, one core's part (bng_hal_parallel's body, arg the job). */
int bng_nhwc_p_run(const bng_dtype_config *dtype, const bng_kernel *kernel, const bng_call *call,
                   const void *x, const void *dy, void *dx, const bng_stats *stats, float *sums);
void bng_nhwc_s_core(unsigned core, void *job);
/* NCHW's two runners, as NHWC's above (bng_nchw_direct.c, bng_nchw_staged.c), which
 * the entry points reach through the storage type's config: bng_dtype_config.nchw,
 * pointing at bng_nchw_driver. */
struct bng_nchw_driver {
    int (*p_run)(const bng_dtype_config *dtype, const bng_call *call, const void *x,
                 const void *dy, void *dx, const bng_stats *stats, float *sums);
    void (*s_core)(unsigned core, void *job);
};

#endif /* BNG_JOB_H */
