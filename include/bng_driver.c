/* The driver of every entry point, written once for all storage types: parameter
 * checks, the row-group split, the fold of row groups, finalize, and the two memory
 * drivers around one compute core (the kernel's row ukernels). _p works on the
 * caller's memory directly; _s stages tiles between shared and private memory by DMA
 * on the cores of core_mask (include/bng_hal.h). A storage type enters only through
 * its bng_dtype_config: element sizes, the kernel table, the per-channel conversions.
 *
 * Built once per target, beside the target's generated sources (-Igenerated/<t>): it
 * takes the target's constants from bng_kernels.h.
 */
#include <stddef.h>
#include <stdint.h>
#include "batch_norm_grad.h"
#include "bng_kernels.h"
#include "bng_hal.h"

#define BNG_ALL_CORES ((1u << BNG_TARGET_CORES) - 1u)

/* _p writes dx this large or larger with streaming stores where the vector backend has
 * them (x86 hosts): it would not stay in the caches, and a streaming store does not
 * read each line first (half of dx's traffic). The _s tiles are private: never. */
#ifndef BNG_STREAM_DX_BYTES
#define BNG_STREAM_DX_BYTES ((size_t)8 << 20)
#endif

/* Shared scratch of the _s entry points: per row group, the partial sums of dy and
 * dy*(x - mean), in two slots that alternate between chunks. Host builds emulate it,
 * and the parameter block, with arrays. Either way it is a BNG_SHARED float pointer,
 * and every pointer derived from it keeps the qualifier (an address-space qualifier
 * may not be dropped: clang rejects the conversion). */
#ifdef BNG_HOST
long long bng_host_shared_params[BNG_PARAMS_LEN];   /* BNG_SHARED_PARAMS on a host */
static float bng_host_scratch[BNG_SCRATCH_FLOATS];
#define BNG_SHARED_SCRATCH ((BNG_SHARED float *)bng_host_scratch)
#else
#define BNG_SHARED_SCRATCH ((BNG_SHARED float *)BNG_SHARED_SCRATCH_ADDRESS)
#endif

typedef struct {
    size_t batch, channel;
    int is_train;
} bng_shape;

/* batch * channel elements of 2^element_shift bytes fit BNG_ADDRESS_MAX. No 64-bit
 * division (a runtime-library call on 32-bit cores): 32x32-bit products only. */
static int bng_fits(unsigned long long batch, unsigned long long channel, unsigned element_shift)
{
    const unsigned long long address_max = BNG_ADDRESS_MAX < SIZE_MAX ? BNG_ADDRESS_MAX : SIZE_MAX;
    const unsigned long long limit = address_max >> element_shift;
    const unsigned long long low = 0xffffffffull;
    unsigned long long big = batch > channel ? batch : channel;
    unsigned long long small = batch > channel ? channel : batch;
    unsigned long long high_part, low_part;

    if (big > limit)
        return 0;                  /* both are at least 1 */
    if (big <= low)
        return big * small <= limit;
    if (small > low)
        return 0;                  /* the product passes 2^64 */
    high_part = (big >> 32) * small;
    low_part = (big & low) * small;
    if (high_part > low)
        return 0;
    high_part <<= 32;
    return low_part <= limit && high_part <= limit - low_part;
}

static unsigned bng_log2(size_t power_of_two)
{
    unsigned shift = 0;
    while ((size_t)1 << shift < power_of_two)
        shift++;
    return shift;
}

/* One array of the call: where it starts and how many bytes it spans. */
typedef struct {
    uintptr_t start, bytes;
} bng_span;

static int bng_overlap(bng_span a, bng_span b)
{
    return a.start < b.start + b.bytes && b.start < a.start + a.bytes;
}

static int bng_same(bng_span a, bng_span b)
{
    return a.start == b.start && a.bytes == b.bytes;
}

/* The arrays of a call, in the order of bng_check_overlap's table. */
enum { BNG_X, BNG_DY, BNG_DX, BNG_MEAN, BNG_INVAR, BNG_SCALE, BNG_DBIAS, BNG_DSCALE, BNG_ARRAYS };

/* The aliasing contract: an output may share memory with an input only as the very
 * same array (dx with x or dy; dbias and dscale with mean, invar or scale), where every
 * chunk reads what it needs before it writes; any other overlap of an output with
 * another array would give wrong results, and is refused before anything is written.
 * Inputs may overlap each other: they are only read. */
static int bng_check_overlap(const bng_dtype_config *dtype, const long long *params,
                             const void *x, const void *dy, const void *dx,
                             const bng_shape *shape)
{
    static const int outputs[] = {BNG_DX, BNG_DBIAS, BNG_DSCALE};
    const uintptr_t data = (uintptr_t)(shape->batch * shape->channel * dtype->element_bytes);
    const uintptr_t stats = (uintptr_t)(shape->channel * dtype->stats_bytes);
    bng_span span[BNG_ARRAYS];
    int i, other;

    span[BNG_X].start = (uintptr_t)x;
    span[BNG_DY].start = (uintptr_t)dy;
    span[BNG_DX].start = (uintptr_t)dx;
    span[BNG_X].bytes = span[BNG_DY].bytes = span[BNG_DX].bytes = data;
    for (other = BNG_MEAN; other < BNG_ARRAYS; other++) {
        span[other].start = (uintptr_t)params[BNG_PARAM_MEAN + other - BNG_MEAN];
        span[other].bytes = stats;
    }
    for (i = 0; i < 3; i++) {
        const int out = outputs[i];
        for (other = 0; other < BNG_ARRAYS; other++) {
            const int may_be_same = out == BNG_DX ? other <= BNG_DY
                                                  : other >= BNG_MEAN && other <= BNG_SCALE;
            if (other != out && bng_overlap(span[out], span[other])
                && !(may_be_same && bng_same(span[out], span[other])))
                return BNG_EOVERLAP;
        }
    }
    return BNG_OK;
}

/* Validate the parameter block and the data pointers: BNG_OK or the error status. */
static int bng_read_params(const bng_dtype_config *dtype, const long long *params,
                           const void *x, const void *dy, const void *dx, bng_shape *shape)
{
    int slot;

    if (x == NULL || dy == NULL || dx == NULL)
        return BNG_ENULL;
    for (slot = BNG_PARAM_MEAN; slot <= BNG_PARAM_DSCALE; slot++)
        if (params[slot] == 0)
            return BNG_ENULL;
    /* Each pointer aligned to its element type: the kernels load whole elements (and a
     * DSP may trap on a misaligned one). */
    if (((uintptr_t)x | (uintptr_t)dy | (uintptr_t)dx) & (dtype->element_bytes - 1))
        return BNG_EALIGN;
    for (slot = BNG_PARAM_MEAN; slot <= BNG_PARAM_DSCALE; slot++)
        if ((unsigned long long)params[slot] & (dtype->stats_bytes - 1))
            return BNG_EALIGN;
    if (params[BNG_PARAM_BATCH] < 1)
        return BNG_EBATCH;
    if (params[BNG_PARAM_CHANNEL] < 1)
        return BNG_ECHANNEL;
    if (!bng_fits((unsigned long long)params[BNG_PARAM_BATCH],
                  (unsigned long long)params[BNG_PARAM_CHANNEL], bng_log2(dtype->element_bytes)))
        return BNG_ERANGE;
    shape->batch = (size_t)params[BNG_PARAM_BATCH];
    shape->channel = (size_t)params[BNG_PARAM_CHANNEL];
    shape->is_train = params[BNG_PARAM_IS_TRAIN] != 0;
    return bng_check_overlap(dtype, params, x, dy, dx, shape);
}

bng_stats bng_stats_from_params(const long long *params)
{
    bng_stats stats;

    stats.mean = (const void *)(intptr_t)params[BNG_PARAM_MEAN];
    stats.invar = (const void *)(intptr_t)params[BNG_PARAM_INVAR];
    stats.scale = (const void *)(intptr_t)params[BNG_PARAM_SCALE];
    stats.dbias = (void *)(intptr_t)params[BNG_PARAM_DBIAS];
    stats.dscale = (void *)(intptr_t)params[BNG_PARAM_DSCALE];
    return stats;
}

/* Element `index` of an array of `bytes`-sized elements. */
static const void *bng_at(const void *base, size_t index, size_t bytes)
{
    return (const unsigned char *)base + index * bytes;
}

static void *bng_at_mut(void *base, size_t index, size_t bytes)
{
    return (unsigned char *)base + index * bytes;
}

/* Rows per group (the last may be shorter): a multiple of BNG_BLOCK_ROWS. */
static size_t bng_group_rows(size_t batch)
{
    size_t groups = (batch + BNG_MIN_GROUP_ROWS - 1) / BNG_MIN_GROUP_ROWS;
    size_t rows;

    if (groups > BNG_MAX_GROUPS)
        groups = BNG_MAX_GROUPS;
    rows = (batch + groups - 1) / groups;
    return (rows + BNG_BLOCK_ROWS - 1) / BNG_BLOCK_ROWS * BNG_BLOCK_ROWS;
}

static size_t bng_min(size_t a, size_t b)
{
    return a < b ? a : b;
}

static void bng_zero(size_t n, float *a)
{
    size_t i;
    for (i = 0; i < n; i++)
        a[i] = 0.0f;
}

/* Fold one row group's partial sums into the total, in group order. */
static void bng_fold(size_t channels, float *sum_dy, float *sum_dyxm,
                     const float *part_dy, const float *part_dyxm)
{
    size_t c;
    for (c = 0; c < channels; c++) {
        sum_dy[c] += part_dy[c];
        sum_dyxm[c] += part_dyxm[c];
    }
}

static unsigned bng_popcount(unsigned v)
{
    unsigned n = 0;
    for (; v; v &= v - 1)
        n++;
    return n;
}

/* Channels one pass handles: a specialized count, or the generic chunk. */
static size_t bng_chunk(const bng_dtype_config *dtype, const bng_kernel *kernel)
{
    return kernel->channels ? kernel->channels : dtype->generic_chunk;
}

static void bng_stats_to_float(const bng_dtype_config *dtype, size_t channels,
                               const void *in, float *out)
{
    size_t c;
    for (c = 0; c < channels; c++)
        out[c] = dtype->stats_load(in, c);
}

/* Per-channel results of the sums: dbias and dscale, and the dx coefficients
 * dx = gain * ((dy - dy_mean) - (x - mean) * slope). dx uses the float sums, never
 * the rounded outputs. */
static void bng_finalize(const bng_dtype_config *dtype, size_t channels, size_t batch,
                         const void *invar, const void *scale,
                         const float *sum_dy, const float *sum_dyxm, void *dbias, void *dscale,
                         float *gain, float *dy_mean, float *slope)
{
    const float m = (float)batch;
    size_t c;

    /* dbias and dscale may be the very array of invar or scale: each channel's inputs
     * are read before its outputs are written. */
    for (c = 0; c < channels; c++) {
        const float invar_c = dtype->stats_load(invar, c);
        const float scale_c = dtype->stats_load(scale, c);
        const float dscale_c = invar_c * sum_dyxm[c];

        gain[c] = scale_c * invar_c;
        dy_mean[c] = sum_dy[c] / m;
        slope[c] = invar_c * dscale_c / m;
        dtype->stats_store(dbias, c, sum_dy[c]);
        dtype->stats_store(dscale, c, dscale_c);
    }
}

/* ---- private storage: the caller's memory, one core ---- */

void bng_run_private(const bng_dtype_config *dtype, const bng_kernel *kernel,
                     size_t batch, size_t channel, int is_train,
                     const void *x, const void *dy, void *dx, const bng_stats *stats)
{
    const size_t chunk = bng_chunk(dtype, kernel), group_rows = bng_group_rows(batch);
    const size_t element = dtype->element_bytes, stat = dtype->stats_bytes;
    float mean[BNG_MAX_CHUNK], sum_dy[BNG_MAX_CHUNK], sum_dyxm[BNG_MAX_CHUNK];
    float part_dy[BNG_MAX_CHUNK], part_dyxm[BNG_MAX_CHUNK];
    float gain[BNG_MAX_CHUNK], dy_mean[BNG_MAX_CHUNK], slope[BNG_MAX_CHUNK];
    const int stream = batch * channel * element >= BNG_STREAM_DX_BYTES;
    size_t first;

    /* Chunks are independent: each is reduced, finalized and written in turn. */
    for (first = 0; first < channel; first += chunk) {
        const size_t channels = bng_min(chunk, channel - first);
        size_t row;

        bng_stats_to_float(dtype, channels, bng_at(stats->mean, first, stat), mean);
        bng_zero(channels, sum_dy);
        bng_zero(channels, sum_dyxm);
        for (row = 0; row < batch; row += group_rows) {
            bng_zero(channels, part_dy);
            bng_zero(channels, part_dyxm);
            kernel->reduce(bng_min(group_rows, batch - row), channels, channel,
                           bng_at(x, row * channel + first, element),
                           bng_at(dy, row * channel + first, element),
                           mean, part_dy, part_dyxm);
            bng_fold(channels, sum_dy, sum_dyxm, part_dy, part_dyxm);
        }
        bng_finalize(dtype, channels, batch, bng_at(stats->invar, first, stat),
                     bng_at(stats->scale, first, stat), sum_dy, sum_dyxm,
                     bng_at_mut(stats->dbias, first, stat), bng_at_mut(stats->dscale, first, stat),
                     gain, dy_mean, slope);
        if (is_train)
            kernel->dx_train(batch, channels, channel, bng_at(x, first, element),
                             bng_at(dy, first, element), bng_at_mut(dx, first, element),
                             mean, gain, dy_mean, slope, stream);
        else
            kernel->dx_infer(batch, channels, channel, bng_at(dy, first, element),
                             bng_at_mut(dx, first, element), gain, stream);
    }
}

void bng_entry_private(const bng_dtype_config *dtype, void *x, void *dy, void *dx,
                       long long *params)
{
    bng_shape shape;
    int status;

    if (params == NULL)
        return;     /* nowhere to report: touch nothing */
    status = bng_read_params(dtype, params, x, dy, dx, &shape);
    if (status == BNG_OK) {
        const bng_stats stats = bng_stats_from_params(params);

        bng_run_private(dtype, dtype->kernel_for_channels(shape.channel), shape.batch,
                        shape.channel, shape.is_train, x, dy, dx, &stats);
    }
    params[BNG_PARAM_STATUS] = status;
}

/* ---- shared storage: tiles staged by DMA, the cores of core_mask ---- */

/* The per-channel arrays of an _s call, in shared memory. */
typedef struct {
    const BNG_SHARED void *mean, *invar, *scale;
    BNG_SHARED void *dbias, *dscale;
} bng_shared_stats;

typedef struct {
    const bng_dtype_config *dtype;
    const bng_kernel *kernel;
    bng_shape shape;
    unsigned mask;
    const BNG_SHARED void *x, *dy;
    BNG_SHARED void *dx;
    bng_shared_stats stats;
} bng_shared_job;

/* Element `index` of a shared array of `bytes`-sized elements. */
static const BNG_SHARED void *bng_shared_at(const BNG_SHARED void *base, size_t index, size_t bytes)
{
    return (const BNG_SHARED unsigned char *)base + index * bytes;
}

static BNG_SHARED void *bng_shared_at_mut(BNG_SHARED void *base, size_t index, size_t bytes)
{
    return (BNG_SHARED unsigned char *)base + index * bytes;
}

/* A core's private memory: the workspace (BNG_WORKSPACE), then x and dy tile buffers. */
typedef float bng_work_float;
typedef unsigned char bng_work_stats;
#define BNG_WORK_FIELD(unused1, unused2, name, kind) bng_work_##kind *name;
#define BNG_WORK_TAKE(max_chunk, stats_bytes, name, kind) \
    p->name = bng_take(&next, (max_chunk) * BNG_WORK_ELEMENT_##kind(stats_bytes));
typedef struct {
    BNG_WORKSPACE(BNG_WORK_FIELD, 0, 0)
    unsigned char *x_tiles[2], *dy_tiles[2];
    size_t tile_rows;   /* rows per tile buffer; the whole slice when resident */
    int resident;       /* the core's rows of x and dy stay in private memory for pass 2 */
} bng_private;

/* Take bytes (rounded up to BNG_ALIGN) from a core's private memory. */
static void *bng_take(unsigned char **next, size_t bytes)
{
    void *p = *next;
    *next += BNG_ALIGN_UP(bytes);
    return p;
}

/* Lay out the core's private memory for chunks of `channels` and `slice_rows` rows:
 * resident when x and dy of the whole slice fit, else double-buffered tiles of a
 * multiple of BNG_BLOCK_ROWS rows (so that tiles never split a block). Returns 0 when
 * the HAL has no private memory for the core (include/bng_hal.h: it never happens
 * inside body unless the HAL cannot honour its contract, and then on every core):
 * the core then writes nothing and leaves. */
static int bng_layout(const bng_dtype_config *dtype, unsigned core, size_t channels,
                      size_t slice_rows, bng_private *p)
{
    const size_t row_bytes = channels * dtype->element_bytes;
    size_t bytes = 0, tile_bytes;
    unsigned char *base = bng_hal_private(core, &bytes), *next = base;

    if (base == NULL || bytes < BNG_PRIVATE_BYTES)
        return 0;
    BNG_WORKSPACE(BNG_WORK_TAKE, dtype->max_chunk, dtype->stats_bytes)
    /* targets.yaml is validated so that this leaves room for BNG_BLOCK_ROWS-row tiles. */
    tile_bytes = (bytes - (size_t)(next - base)) / 4 / BNG_ALIGN * BNG_ALIGN;
    p->resident = slice_rows * row_bytes <= 2 * tile_bytes;
    if (p->resident) {
        p->tile_rows = slice_rows;
        p->x_tiles[0] = p->x_tiles[1] = bng_take(&next, slice_rows * row_bytes);
        p->dy_tiles[0] = p->dy_tiles[1] = bng_take(&next, slice_rows * row_bytes);
    } else {
        p->tile_rows = tile_bytes / row_bytes / BNG_BLOCK_ROWS * BNG_BLOCK_ROWS;
        p->x_tiles[0] = bng_take(&next, tile_bytes);
        p->x_tiles[1] = bng_take(&next, tile_bytes);
        p->dy_tiles[0] = bng_take(&next, tile_bytes);
        p->dy_tiles[1] = bng_take(&next, tile_bytes);
    }
    return 1;
}

/* Rows of the tile starting at `row`: tiles never cross a row group, nor the slice. */
static size_t bng_tile(size_t row, size_t end, size_t group_rows, size_t tile_rows)
{
    const size_t group_end = (row / group_rows + 1) * group_rows;
    return bng_min(tile_rows, bng_min(group_end, end) - row);
}

/* Start the DMA of rows [row, row + n) of the chunk's x (when with_x) and dy into a
 * tile buffer: handles[0] for x, handles[1] for dy. */
static void bng_fetch(const bng_shared_job *job, size_t first, size_t channels, size_t row,
                      size_t n, int with_x, void *x_tile, void *dy_tile, bng_hal_dma handles[2])
{
    const size_t element = job->dtype->element_bytes, channel = job->shape.channel;
    const size_t at = row * channel + first;

    handles[0] = with_x ? bng_hal_dma_get(x_tile, bng_shared_at(job->x, at, element), n,
                                          channels * element, channel * element)
                        : BNG_HAL_DMA_DONE;
    handles[1] = bng_hal_dma_get(dy_tile, bng_shared_at(job->dy, at, element), n,
                                 channels * element, channel * element);
}

static void bng_shared_core(unsigned core, void *arg)
{
    const bng_shared_job *job = arg;
    const bng_dtype_config *dtype = job->dtype;
    const bng_kernel *kernel = job->kernel;
    const size_t batch = job->shape.batch, channel = job->shape.channel;
    const int is_train = job->shape.is_train;
    const size_t chunk = bng_chunk(dtype, kernel);
    const size_t element = dtype->element_bytes, stat = dtype->stats_bytes;
    const size_t max_chunk = dtype->max_chunk;
    const size_t group_rows = bng_group_rows(batch);
    const size_t groups = (batch + group_rows - 1) / group_rows;
    /* The k-th selected core takes the k-th contiguous run of groups. */
    const unsigned rank = bng_popcount(job->mask & ((1u << core) - 1u));
    const unsigned cores = bng_popcount(job->mask);
    const size_t begin = bng_min(groups * rank / cores * group_rows, batch);
    const size_t end = bng_min(groups * (rank + 1) / cores * group_rows, batch);
    bng_private p;
    size_t first, slot = 0;

    for (first = 0; first < channel; first += chunk, slot ^= 1) {
        const size_t channels = bng_min(chunk, channel - first);
        const size_t row_bytes = channels * element;
        BNG_SHARED float *scratch = BNG_SHARED_SCRATCH + slot * BNG_MAX_GROUPS * 2 * max_chunk;
        bng_hal_dma gets[2][2], puts[2] = {BNG_HAL_DMA_DONE, BNG_HAL_DMA_DONE};
        size_t g, row, t;

        if (!bng_layout(dtype, core, channels, end - begin, &p))
            return;
        bng_hal_dma_wait(bng_hal_dma_get(p.stats_mean, bng_shared_at(job->stats.mean, first, stat), 1, channels * stat, 0));
        bng_hal_dma_wait(bng_hal_dma_get(p.invar, bng_shared_at(job->stats.invar, first, stat), 1, channels * stat, 0));
        bng_hal_dma_wait(bng_hal_dma_get(p.scale, bng_shared_at(job->stats.scale, first, stat), 1, channels * stat, 0));
        bng_stats_to_float(dtype, channels, p.stats_mean, p.mean);

        /* Pass 1: this core's groups to their partial sums in the shared scratch; the
         * next tile arrives while this one is reduced. Resident, the slice fills one
         * buffer tile by tile. */
        if (begin < end)
            bng_fetch(job, first, channels, begin, bng_tile(begin, end, group_rows, p.tile_rows),
                      1, p.x_tiles[0], p.dy_tiles[0], gets[0]);
        for (row = begin, t = 0; row < end; t ^= 1) {
            const size_t n = bng_tile(row, end, group_rows, p.tile_rows), next = row + n;
            const size_t at = p.resident ? (row - begin) * row_bytes : 0;
            const size_t next_at = p.resident ? (next - begin) * row_bytes : 0;

            if (next < end)
                bng_fetch(job, first, channels, next, bng_tile(next, end, group_rows, p.tile_rows),
                          1, p.x_tiles[t ^ 1] + next_at, p.dy_tiles[t ^ 1] + next_at, gets[t ^ 1]);
            bng_hal_dma_wait(gets[t][0]);
            bng_hal_dma_wait(gets[t][1]);
            if (row % group_rows == 0) {
                bng_zero(channels, p.part_dy);
                bng_zero(channels, p.part_dyxm);
            }
            kernel->reduce(n, channels, channels, p.x_tiles[t] + at, p.dy_tiles[t] + at, p.mean,
                           p.part_dy, p.part_dyxm);
            if (next == end || next % group_rows == 0) {
                BNG_SHARED float *group = scratch + row / group_rows * 2 * max_chunk;
                bng_hal_dma_wait(bng_hal_dma_put(group, p.part_dy, 1, channels * sizeof(float), 0));
                bng_hal_dma_wait(bng_hal_dma_put(group + max_chunk, p.part_dyxm, 1, channels * sizeof(float), 0));
            }
            row = next;
        }
        bng_hal_barrier();

        /* Every core folds all groups in order (the same bits everywhere); one writes. */
        bng_zero(channels, p.sum_dy);
        bng_zero(channels, p.sum_dyxm);
        for (g = 0; g < groups; g++) {
            const BNG_SHARED float *group = scratch + g * 2 * max_chunk;
            bng_hal_dma_wait(bng_hal_dma_get(p.part_dy, group, 1, channels * sizeof(float), 0));
            bng_hal_dma_wait(bng_hal_dma_get(p.part_dyxm, group + max_chunk, 1, channels * sizeof(float), 0));
            bng_fold(channels, p.sum_dy, p.sum_dyxm, p.part_dy, p.part_dyxm);
        }
        bng_finalize(dtype, channels, batch, p.invar, p.scale, p.sum_dy, p.sum_dyxm,
                     p.dbias, p.dscale, p.gain, p.dy_mean, p.slope);
        if (rank == 0) {
            bng_hal_dma_wait(bng_hal_dma_put(bng_shared_at_mut(job->stats.dbias, first, stat), p.dbias, 1, channels * stat, 0));
            bng_hal_dma_wait(bng_hal_dma_put(bng_shared_at_mut(job->stats.dscale, first, stat), p.dscale, 1, channels * stat, 0));
        }

        /* Pass 2: dx for this core's rows, in place over the dy tile, put back while the
         * next tile arrives. A buffer is refilled only once its last put completed. */
        if (begin < end && !p.resident)
            bng_fetch(job, first, channels, begin, bng_tile(begin, end, group_rows, p.tile_rows),
                      is_train, p.x_tiles[0], p.dy_tiles[0], gets[0]);
        for (row = begin, t = 0; row < end; t ^= 1) {
            const size_t n = bng_tile(row, end, group_rows, p.tile_rows), next = row + n;
            const size_t at = p.resident ? (row - begin) * row_bytes : 0;
            unsigned char *x_tile = p.x_tiles[t] + at, *dy_tile = p.dy_tiles[t] + at;

            if (next < end && !p.resident) {
                bng_hal_dma_wait(puts[t ^ 1]);
                bng_fetch(job, first, channels, next, bng_tile(next, end, group_rows, p.tile_rows),
                          is_train, p.x_tiles[t ^ 1], p.dy_tiles[t ^ 1], gets[t ^ 1]);
            }
            if (!p.resident) {
                bng_hal_dma_wait(gets[t][0]);
                bng_hal_dma_wait(gets[t][1]);
            }
            if (is_train)
                kernel->dx_train(n, channels, channels, x_tile, dy_tile, dy_tile, p.mean, p.gain, p.dy_mean, p.slope, 0);
            else
                kernel->dx_infer(n, channels, channels, dy_tile, dy_tile, p.gain, 0);
            bng_hal_dma_wait(puts[t]);
            puts[t] = bng_hal_dma_put(bng_shared_at_mut(job->dx, row * channel + first, element), dy_tile, n,
                                      row_bytes, channel * element);
            row = next;
        }
        bng_hal_dma_wait(puts[0]);
        bng_hal_dma_wait(puts[1]);
    }
}

/* The parameter block lives in shared memory (BNG_SHARED_PARAMS, a BNG_SHARED pointer):
 * its input slots are read once into a plain copy, the status is written back. The
 * ABI's x, dy, dx and per-channel pointers point into shared memory: they take the
 * qualifier here, once, and keep it through the HAL. The status is written after
 * bng_hal_parallel returns, on every core that took part (SPMD: the selected ones);
 * BNG_ENOMEM when the HAL could not reserve a selected core's private memory, in which
 * case no output was touched. */
/* The status of an _s call. In the SPMD launch model every core of the group that
 * computes it writes the same value here, at the same time: harmless on the part, a
 * race by the letter of C11, which ThreadSanitizer is told to accept for this one store
 * (tests/tsan.supp). */
static void bng_report_status(BNG_SHARED long long *shared_params, int status)
{
    shared_params[BNG_PARAM_STATUS] = status;
}

void bng_entry_shared(const bng_dtype_config *dtype, void *x, void *dy, void *dx,
                      int core_mask)
{
    BNG_SHARED long long *shared_params = BNG_SHARED_PARAMS;
    long long params[BNG_PARAMS_LEN];
    bng_shared_job job;
    int status, slot;

    for (slot = 0; slot < BNG_PARAMS_LEN; slot++)     /* status and reserved slots: never read */
        params[slot] = slot < BNG_PARAM_STATUS ? shared_params[slot] : 0;
    status = bng_read_params(dtype, params, x, dy, dx, &job.shape);
    job.mask = (unsigned)core_mask & BNG_ALL_CORES;
    if (status == BNG_OK && job.mask == 0)
        status = BNG_ECOREMASK;
    if (status == BNG_OK) {
        const bng_stats stats = bng_stats_from_params(params);

        job.dtype = dtype;
        job.kernel = dtype->kernel_for_channels(job.shape.channel);
        job.x = (const BNG_SHARED void *)x;
        job.dy = (const BNG_SHARED void *)dy;
        job.dx = (BNG_SHARED void *)dx;
        job.stats.mean = (const BNG_SHARED void *)stats.mean;
        job.stats.invar = (const BNG_SHARED void *)stats.invar;
        job.stats.scale = (const BNG_SHARED void *)stats.scale;
        job.stats.dbias = (BNG_SHARED void *)stats.dbias;
        job.stats.dscale = (BNG_SHARED void *)stats.dscale;
        switch (bng_hal_parallel(job.mask, bng_shared_core, &job, sizeof job)) {
        case BNG_HAL_OK:
            break;
        case BNG_HAL_IDLE:
            return;             /* not selected (SPMD): the selected cores report */
        default:
            status = BNG_ENOMEM;
            break;
        }
    }
    bng_report_status(shared_params, status);
}
