/* SPDX-License-Identifier: Apache-2.0 */
/* Copyright 2026 the batchnormgrad authors */
/* Owns: the fused ReLU backward (BNG_FLAG_RELU): the mask of dy by the forward output y
 * on staged tiles of either layout, the mask as bits between an NHWC tile's passes, an
 * NHWC tile's words of the forward's keep bits (BNG_FLAG_RELU_BITS) and the mask by
 * them, and the calls of the kernels' NHWC ReLU ukernels. NCHW's keep bits and plane
 * ukernels are bng_nchw_relu.c's. May call: the HAL's DMA (a tile of y, of words), the
 * ReLU predicate (bng_vec.h), a kernel's ReLU ukernels, on a split target the vector
 * operations' masked loads (bng_vec.h). Compiled only for a target that lists relu.
 *
 * The mask (BNG_RELU_KEEPS, include/bng_vec.h) works on the elements' bits, so that the
 * sums and dx are, bit for bit, the unfused call's on the masked dy: the separate pass
 * the fused call equals. An NHWC _p call runs the kernels' ReLU ukernels on the caller's
 * arrays, which load dy masked by y (_load_relu) where the others load dy; the staged
 * tiles of _s (NCHW's planes too) are masked in place by these steps before the
 * ordinary ukernels run: the mask by y, the mask as bits (a bit per element, which NHWC
 * _s keeps between its passes) and the mask by those bits, or by the forward's. Each
 * goes over a row a vector at a time, the row's last elements one at a time. On the gnu
 * backend a vector is one register of GCC vector lanes (BNG_RELU_VECTOR_BYTES), masks
 * made from sign bits (BNG_RELU_KEEPS_V: a compiler without vector compares for the part
 * lowers a compare lane by lane); on the others it is a step of BNG_RELU_STEP_BYTES
 * (bng_relu.h) in plain C.
 */
#include <stdint.h>
#include "bng_relu.h"
#include "bng_steps_vec.h"

/* ---- a staged tile's y, and its words of the forward's keep bits, by DMA (both kinds of
 * memory) ---- */

void bng_relu_fetch_y(const bng_staged_job *job, BNG_VMEM unsigned char *y, const bng_tile *tile)
{
    const size_t element = job->dtype->element_bytes;

    bng_hal_dma_wait(bng_hal_dma_get(y, bng_shared_at((const BNG_SHARED void *)job->call.y,
                                                      tile->at, element),
                                     tile->rows, tile->row_bytes, tile->stride, tile->pitch));
}

/* The words of a tile's rows lie a word row per BNG_KEEP_ROWS(element) rows of the
 * caller's, channel elements apart, from the tile's first row's (a multiple of
 * BNG_BLOCK_ROWS, and so of a word's rows) at its chunk's first channel. */
typedef char bng_blocks_are_whole_words[BNG_BLOCK_ROWS % BNG_KEEP_ROWS(sizeof(float)) == 0 ? 1 : -1];
static void bng_relu_fetch_bits(const bng_staged_job *job, BNG_VMEM unsigned char *bits,
                                const bng_tile *tile)
{
    const size_t element = job->dtype->element_bytes, channel = job->call.channel;
    const size_t word_rows = BNG_KEEP_ROWS(element);
    const size_t at = tile->first / word_rows * channel + (tile->at - tile->first * channel);

    bng_hal_dma_wait(bng_hal_dma_get(bits, bng_shared_at((const BNG_SHARED void *)job->call.y,
                                                         at, element),
                                     (tile->rows + word_rows - 1) / word_rows, tile->row_bytes,
                                     tile->stride, tile->pitch));
}

#if !BNG_SPLIT_MEMORY
/* ---- unified memory: the steps on the elements' bits, in plain C or GCC vectors ---- */

/* The vector part of the steps on one element type (uint32_t for floats, uint16_t
 * for halves; `magnitude` its bits but the sign, Inf's bits `inf`): each returns how
 * many of the row's first elements it did, whole vectors.
 *   mask:    out = dy masked by y
 *   bits:    out = the mask of `rows` rows of y (rows y_stride apart), row r's in bit r
 *   by_bits: out = d where bit `shift` of b is set, else +0 */
#if BNG_VEC_BACKEND == BNG_VEC_GNU
typedef uint32_t bng_relu_u32 __attribute__((vector_size(BNG_RELU_VECTOR_BYTES)));
typedef int32_t bng_relu_s32 __attribute__((vector_size(BNG_RELU_VECTOR_BYTES)));
typedef uint16_t bng_relu_u16 __attribute__((vector_size(BNG_RELU_VECTOR_BYTES)));
typedef int16_t bng_relu_s16 __attribute__((vector_size(BNG_RELU_VECTOR_BYTES)));
#define BNG_RELU_VECTOR_STEPS(type, U, S, magnitude, inf)                                  \
    static size_t bng_relu_mask_vectors_##type(size_t channels, const type *dy,          \
                                               const type *y, type *out)                 \
    {                                                                                     \
        const size_t lanes = BNG_RELU_VECTOR_BYTES / sizeof(type);                        \
        size_t c;                                                                         \
        for (c = 0; c + lanes <= channels; c += lanes) {                                  \
            U d, m;                                                                       \
            __builtin_memcpy(&d, dy + c, sizeof d);                                       \
            __builtin_memcpy(&m, y + c, sizeof m);                                        \
            d &= BNG_RELU_KEEPS_V(U, S, m, magnitude, inf, 8 * sizeof(type) - 1);         \
            __builtin_memcpy(out + c, &d, sizeof d);                                      \
        }                                                                                 \
        return c;                                                                         \
    }                                                                                     \
    static size_t bng_relu_bits_vectors_##type(size_t channels, size_t rows, const type *y, \
                                               size_t y_stride, type *out)               \
    {                                                                                     \
        const size_t lanes = BNG_RELU_VECTOR_BYTES / sizeof(type);                        \
        size_t c, r;                                                                      \
        for (c = 0; c + lanes <= channels; c += lanes) {                                  \
            U b = {0}, m;                                                                 \
            for (r = 0; r < rows; r++) {                                                  \
                __builtin_memcpy(&m, y + r * y_stride + c, sizeof m);                     \
                b |= (BNG_RELU_KEEPS_V(U, S, m, magnitude, inf, 8 * sizeof(type) - 1) & 1u) << r; \
            }                                                                             \
            __builtin_memcpy(out + c, &b, sizeof b);                                      \
        }                                                                                 \
        return c;                                                                         \
    }                                                                                     \
    static size_t bng_relu_by_bits_vectors_##type(size_t channels, const type *d,        \
                                                  const type *b, unsigned shift, type *o) \
    {                                                                                     \
        const size_t lanes = BNG_RELU_VECTOR_BYTES / sizeof(type);                        \
        size_t c;                                                                         \
        for (c = 0; c + lanes <= channels; c += lanes) {                                  \
            U v, w;                                                                       \
            __builtin_memcpy(&v, d + c, sizeof v);                                        \
            __builtin_memcpy(&w, b + c, sizeof w);                                        \
            v &= 0 - ((w >> shift) & 1u);                                                 \
            __builtin_memcpy(o + c, &v, sizeof v);                                        \
        }                                                                                 \
        return c;                                                                         \
    }
BNG_RELU_VECTOR_STEPS(uint32_t, bng_relu_u32, bng_relu_s32, 0x7fffffffu, 0x7f800000u)
BNG_RELU_VECTOR_STEPS(uint16_t, bng_relu_u16, bng_relu_s16, 0x7fffu, 0x7c00u)
#else
#define BNG_RELU_VECTOR_STEPS(type, magnitude, inf)                                        \
    static size_t bng_relu_mask_vectors_##type(size_t channels, const type *dy,          \
                                               const type *y, type *out)                 \
    {                                                                                     \
        enum { step = BNG_RELU_STEP_BYTES / sizeof(type) };                               \
        size_t c, k;                                                                      \
        for (c = 0; c + step <= channels; c += step) {                                    \
            type d[step], m[step];                                                        \
            for (k = 0; k < step; k++) {                                                  \
                d[k] = dy[c + k];                                                         \
                m[k] = y[c + k];                                                          \
            }                                                                             \
            for (k = 0; k < step; k++)                                                    \
                out[c + k] = (type)(d[k] & (0u - BNG_RELU_KEEPS((unsigned)m[k], (magnitude) + 1u, inf))); \
        }                                                                                 \
        return c;                                                                         \
    }                                                                                     \
    static size_t bng_relu_bits_vectors_##type(size_t channels, size_t rows, const type *y, \
                                               size_t y_stride, type *out)               \
    {                                                                                     \
        enum { step = BNG_RELU_STEP_BYTES / sizeof(type) };                               \
        size_t c, r, k;                                                                   \
        for (c = 0; c + step <= channels; c += step) {                                    \
            type b[step] = {0};                                                           \
            for (r = 0; r < rows; r++)                                                    \
                for (k = 0; k < step; k++)                                                \
                    b[k] |= (type)(BNG_RELU_KEEPS((unsigned)y[r * y_stride + c + k],      \
                                                  (magnitude) + 1u, inf) << r);           \
            for (k = 0; k < step; k++)                                                    \
                out[c + k] = b[k];                                                        \
        }                                                                                 \
        return c;                                                                         \
    }                                                                                     \
    static size_t bng_relu_by_bits_vectors_##type(size_t channels, const type *d,        \
                                                  const type *b, unsigned shift, type *o) \
    {                                                                                     \
        enum { step = BNG_RELU_STEP_BYTES / sizeof(type) };                               \
        size_t c, k;                                                                      \
        for (c = 0; c + step <= channels; c += step) {                                    \
            type v[step], w[step];                                                        \
            for (k = 0; k < step; k++) {                                                  \
                v[k] = d[c + k];                                                          \
                w[k] = b[c + k];                                                          \
            }                                                                             \
            for (k = 0; k < step; k++)                                                    \
                o[c + k] = (type)(v[k] & (0u - ((unsigned)(w[k] >> shift) & 1u)));        \
        }                                                                                 \
        return c;                                                                         \
    }
BNG_RELU_VECTOR_STEPS(uint32_t, 0x7fffffffu, 0x7f800000u)
BNG_RELU_VECTOR_STEPS(uint16_t, 0x7fffu, 0x7c00u)
#endif

/* The steps on one element type, the vectors above and then the row's last
 * elements one at a time. bits: bit i of word c of part j is row j * width + i of the
 * `rows` rows (width the element's bits). */
#define BNG_RELU_STEPS(type, magnitude, inf)                                               \
    static void bng_relu_mask_##type(size_t channels, const type *dy, const type *y,      \
                                     type *out)                                           \
    {                                                                                     \
        size_t c;                                                                         \
        for (c = bng_relu_mask_vectors_##type(channels, dy, y, out); c < channels; c++)   \
            out[c] = (type)(dy[c] & (0u - BNG_RELU_KEEPS((unsigned)y[c], (magnitude) + 1u, inf))); \
    }                                                                                     \
    static void bng_relu_bits_##type(size_t rows, size_t channels, const type *y,         \
                                     size_t y_stride, type *out)                          \
    {                                                                                     \
        const size_t width = 8 * sizeof(type);                                            \
        size_t first, c, r;                                                               \
        for (first = 0; first < rows; first += width, out += channels) {                  \
            const size_t n = bng_min(rows, first + width) - first;                        \
            const type *part = y + first * y_stride;                                      \
            for (c = bng_relu_bits_vectors_##type(channels, n, part, y_stride, out);      \
                 c < channels; c++)                                                       \
                for (out[c] = 0, r = 0; r < n; r++)                                       \
                    out[c] |= (type)(BNG_RELU_KEEPS((unsigned)part[r * y_stride + c],     \
                                                    (magnitude) + 1u, inf) << r);         \
        }                                                                                 \
    }                                                                                     \
    static void bng_relu_by_bits_##type(size_t rows, size_t channels, const type *dy,     \
                                        size_t dy_stride, const type *bits, type *out,    \
                                        size_t out_stride)                                \
    {                                                                                     \
        const size_t width = 8 * sizeof(type);                                            \
        size_t r, c;                                                                      \
        for (r = 0; r < rows; r++) {                                                      \
            const type *d = dy + r * dy_stride, *b = bits + r / width * channels;         \
            const unsigned shift = (unsigned)(r % width);                                 \
            type *o = out + r * out_stride;                                               \
            for (c = bng_relu_by_bits_vectors_##type(channels, d, b, shift, o); c < channels; c++) \
                o[c] = (type)(d[c] & (0u - ((unsigned)(b[c] >> shift) & 1u)));            \
        }                                                                                 \
    }
BNG_RELU_STEPS(uint32_t, 0x7fffffffu, 0x7f800000u)
BNG_RELU_STEPS(uint16_t, 0x7fffu, 0x7c00u)

/* `rows` rows of `channels` elements: out = dy masked by y, each array's rows `stride`
 * elements apart (its own stride each). out may be dy (in place). Rows that follow
 * each other in all three are one run. */
static void bng_relu_mask(size_t element, size_t rows, size_t channels,
                          const void *dy, size_t dy_stride, const void *y, size_t y_stride,
                          void *out, size_t out_stride)
{
    size_t r;

    if (dy_stride == channels && y_stride == channels && out_stride == channels) {
        channels *= rows;
        rows = 1;
    }
    for (r = 0; r < rows; r++) {
        if (element == sizeof(uint32_t))
            bng_relu_mask_uint32_t(channels, (const uint32_t *)dy + r * dy_stride,
                                   (const uint32_t *)y + r * y_stride,
                                   (uint32_t *)out + r * out_stride);
        else
            bng_relu_mask_uint16_t(channels, (const uint16_t *)dy + r * dy_stride,
                                   (const uint16_t *)y + r * y_stride,
                                   (uint16_t *)out + r * out_stride);
    }
}

/* The mask of a block of rows as bits, in words of the element's size (a float's 32
 * bits, a half's 16): rows of `channels` words, row j's word c holding, in bit i,
 * whether y lets dy through at row j * 32 + i (floats) or j * 16 + i (halves) of the
 * block, channel c. A block of 32 rows is one row of float words, two of half words. */
typedef char bng_relu_block_fits_bits[BNG_BLOCK_ROWS <= 32 ? 1 : -1];

static void bng_relu_bits(size_t element, size_t rows, size_t channels, const void *y,
                          size_t y_stride, void *bits)
{
    if (element == sizeof(uint32_t))
        bng_relu_bits_uint32_t(rows, channels, y, y_stride, bits);
    else
        bng_relu_bits_uint16_t(rows, channels, y, y_stride, bits);
}

/* out = dy masked by a block's bits (bng_relu_bits): dy where its bit is set, else +0.
 * out may be dy. */
static void bng_relu_mask_by_bits(size_t element, size_t rows, size_t channels,
                                  const void *dy, size_t dy_stride, const void *bits,
                                  void *out, size_t out_stride)
{
    if (element == sizeof(uint32_t))
        bng_relu_by_bits_uint32_t(rows, channels, dy, dy_stride, bits, out, out_stride);
    else
        bng_relu_by_bits_uint16_t(rows, channels, dy, dy_stride, bits, out, out_stride);
}

void bng_relu_mask_tile(size_t element, const bng_tile *tile, const unsigned char *y)
{
    const size_t stride = tile->pitch / element;

    bng_relu_mask(element, tile->rows, tile->row_bytes / element, tile->dy, stride, y, stride,
                  tile->dy, stride);
}

static void bng_relu_tile_bits(size_t element, const bng_tile *tile, const unsigned char *y,
                               unsigned char *bits)
{
    const size_t stride = tile->pitch / element, channels = tile->row_bytes / element;
    const size_t block_bytes = BNG_RELU_BITS_BLOCK_BYTES(tile->pitch, element);
    size_t r;

    for (r = 0; r < tile->rows; r += BNG_BLOCK_ROWS)
        bng_relu_bits(element, bng_min(BNG_BLOCK_ROWS, tile->rows - r), channels,
                      y + r * tile->pitch, stride, bits + r / BNG_BLOCK_ROWS * block_bytes);
}

static void bng_relu_tile_by_bits(size_t element, const bng_tile *tile, const unsigned char *bits)
{
    const size_t stride = tile->pitch / element, channels = tile->row_bytes / element;
    const size_t block_bytes = BNG_RELU_BITS_BLOCK_BYTES(tile->pitch, element);
    size_t r;

    for (r = 0; r < tile->rows; r += BNG_BLOCK_ROWS)
        bng_relu_mask_by_bits(element, bng_min(BNG_BLOCK_ROWS, tile->rows - r), channels,
                              tile->dy + r * tile->pitch, stride,
                              bits + r / BNG_BLOCK_ROWS * block_bytes, tile->dy + r * tile->pitch,
                              stride);
}

static void bng_relu_rows_reduce(const bng_kernel *kernel, size_t rows, size_t channels,
                                 size_t stride, const void *x, const void *dy, const void *y,
                                 const float *mean, float *part_dy, float *part_dyxm,
                                 void *keeps, size_t keeps_stride)
{
    kernel->reduce_relu(rows, channels, stride, x, dy, y, mean, part_dy, part_dyxm, keeps,
                        keeps_stride);
}

static void bng_relu_rows_dx(const bng_kernel *kernel, int is_train, size_t rows,
                             size_t channels, size_t stride, const void *x, const void *dy,
                             const void *y, void *dx, const float *mean, const float *gain,
                             const float *dy_mean, const float *slope, int stream)
{
    if (is_train)
        kernel->dx_train_relu(rows, channels, stride, x, dy, y, dx, mean, gain, dy_mean, slope,
                              stream);
    else
        kernel->dx_infer_relu(rows, channels, stride, dy, y, dx, gain, stream);
}

static void bng_relu_rows_reduce_keeps(const bng_kernel *kernel, size_t rows, size_t channels,
                                       size_t stride, const void *x, const void *dy,
                                       const void *keeps, size_t keeps_stride, const float *mean,
                                       float *part_dy, float *part_dyxm)
{
    kernel->reduce_keeps(rows, channels, stride, x, dy, keeps, keeps_stride, mean, part_dy,
                         part_dyxm);
}

static void bng_relu_rows_dx_keeps(const bng_kernel *kernel, int is_train, size_t rows,
                                   size_t channels, size_t stride, const void *x, const void *dy,
                                   const void *keeps, size_t keeps_stride, void *dx,
                                   const float *mean, const float *gain, const float *dy_mean,
                                   const float *slope, int stream)
{
    if (is_train)
        kernel->dx_train_keeps(rows, channels, stride, x, dy, keeps, keeps_stride, dx, mean, gain,
                               dy_mean, slope, stream);
    else
        kernel->dx_infer_keeps(rows, channels, stride, dy, keeps, keeps_stride, dx, gain, stream);
}

/* What the extended calls' config points at (bng_dtype_config.relu). */
const struct bng_relu_driver bng_relu_driver = {
    bng_relu_fetch_y, bng_relu_fetch_bits, bng_relu_mask_tile, bng_relu_tile_bits,
    bng_relu_tile_by_bits, bng_relu_rows_reduce, bng_relu_rows_dx, bng_relu_rows_reduce_keeps,
    bng_relu_rows_dx_keeps,
};

#else /* BNG_SPLIT_MEMORY */
/* ---- a split target: a staged tile lies in vector memory, which scalar code may not
 * touch. The steps are the kernels' own masked loads (bng_vec.h: the same predicate on
 * the stored bits), a vector of BNG_V lanes at a time over whole padded rows (their
 * padding lanes masked too, and never put out; NCHW's planes by their bits up to the
 * vector that holds a row's last value), stored back as dy's type: a masked
 * value is dy or +0, which the type holds exactly (a half sNaN comes back quiet, as the
 * kernels' half loads would make it). No _p: a split target stages it
 * (bng_stage_p_run). ---- */

typedef char bng_relu_rows_are_whole_vectors[BNG_PAD_LANES % BNG_V == 0 ? 1 : -1];
#define bng_relu_vload_f32 BNG_VOP(BNG_V, load_relu_f32)
#define bng_relu_vload_f16 BNG_VOP(BNG_V, load_relu_f16)
#define bng_relu_vmark_f32 BNG_VOP(BNG_V, load_relu_mark_f32)
#define bng_relu_vmark_f16 BNG_VOP(BNG_V, load_relu_mark_f16)
#define bng_relu_vkeeps_f32 BNG_VOP(BNG_V, load_relu_keeps_f32)
#define bng_relu_vkeeps_f16 BNG_VOP(BNG_V, load_relu_keeps_f16)

void bng_relu_mask_tile(size_t element, const bng_tile *tile, const BNG_VMEM unsigned char *y)
{
    const size_t values = tile->rows * (tile->pitch / element);     /* rows a pitch apart */
    size_t at;

    for (at = 0; at < values; at += BNG_V) {
        if (element == sizeof(float)) {
            BNG_VMEM float *dy = (BNG_VMEM float *)tile->dy + at;
            bng_vstore(dy, bng_relu_vload_f32(dy, (const BNG_VMEM float *)y + at));
        } else {
            BNG_VMEM half *dy = (BNG_VMEM half *)tile->dy + at;
            bng_vstore_f16(dy, bng_relu_vload_f16(dy, (const BNG_VMEM half *)y + at));
        }
    }
}

/* The mask of a word's rows (`rows` of them, a row `row_values` apart) at `at` as bits:
 * the word at `word`, row r's in bit r; the masked loads' values unused (dy is masked
 * already). Elements of C type `type`, the operations' suffix `t` (f32, f16). */
#define BNG_RELU_WORD_BITS(t, type)                                                        \
    static void bng_relu_word_bits_##t(const bng_tile *tile, const BNG_VMEM unsigned char *y, \
                                       size_t at, size_t rows, size_t row_values,         \
                                       BNG_VMEM unsigned char *word)                      \
    {                                                                                     \
        BNG_VKEEPS(BNG_V, t) k = BNG_VKEEPS(BNG_V, zero_##t)();                           \
        size_t r;                                                                         \
        for (r = 0; r < rows; r++)                                                        \
            (void)bng_relu_vmark_##t((const BNG_VMEM type *)tile->dy + at + r * row_values, \
                                     (const BNG_VMEM type *)y + at + r * row_values, &k,  \
                                     (unsigned)r);                                        \
        BNG_VKEEPS(BNG_V, store_##t)((BNG_VMEM type *)word, k);                           \
    }
BNG_RELU_WORD_BITS(f32, float)
BNG_RELU_WORD_BITS(f16, half)

/* The tile's mask as bits, in the layout of the unified target's (and of the _keeps
 * ukernels' words): a word row per BNG_KEEP_ROWS(element) rows, a pitch apart. */
static void bng_relu_tile_bits(size_t element, const bng_tile *tile, const BNG_VMEM unsigned char *y,
                               BNG_VMEM unsigned char *bits)
{
    const size_t row_values = tile->pitch / element, word_rows = BNG_KEEP_ROWS(element);
    size_t first, c;

    for (first = 0; first < tile->rows; first += word_rows)
        for (c = 0; c < row_values; c += BNG_V) {
            const size_t at = first * row_values + c, rows = bng_min(word_rows, tile->rows - first);
            BNG_VMEM unsigned char *word = bits + (first / word_rows * row_values + c) * element;
            if (element == sizeof(float))
                bng_relu_word_bits_f32(tile, y, at, rows, row_values, word);
            else
                bng_relu_word_bits_f16(tile, y, at, rows, row_values, word);
        }
}

void bng_relu_vector_by_bits(size_t element, const bng_tile *tile, size_t at,
                             const BNG_VMEM unsigned char *words, size_t word, unsigned bit)
{
    if (element == sizeof(float)) {
        BNG_VMEM float *dy = (BNG_VMEM float *)tile->dy + at;
        bng_vstore(dy, bng_relu_vkeeps_f32(dy, (const BNG_VMEM float *)words + word, bit));
    } else {
        BNG_VMEM half *dy = (BNG_VMEM half *)tile->dy + at;
        bng_vstore_f16(dy, bng_relu_vkeeps_f16(dy, (const BNG_VMEM half *)words + word, bit));
    }
}

static void bng_relu_tile_by_bits(size_t element, const bng_tile *tile,
                                  const BNG_VMEM unsigned char *bits)
{
    const size_t row_values = tile->pitch / element, word_rows = BNG_KEEP_ROWS(element);
    size_t r, c;

    for (r = 0; r < tile->rows; r++)
        for (c = 0; c < row_values; c += BNG_V)
            bng_relu_vector_by_bits(element, tile, r * row_values + c, bits,
                                    r / word_rows * row_values + c, (unsigned)(r % word_rows));
}

/* What the extended calls' config points at: the staged steps only. */
const struct bng_relu_driver bng_relu_driver = {
    bng_relu_fetch_y, bng_relu_fetch_bits, bng_relu_mask_tile, bng_relu_tile_bits,
    bng_relu_tile_by_bits, NULL, NULL, NULL, NULL,
};
#endif
