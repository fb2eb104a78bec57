/* SPDX-License-Identifier: Apache-2.0 */
/* Copyright 2026 the batchnormgrad authors */
/* Owns: NCHW's fused ReLU backward (BNG_FLAG_RELU with BNG_FLAG_NCHW): a staged tile's
 * words of its planes' keep bits (BNG_FLAG_RELU_BITS), fetched by DMA, and its dy
 * masked by them; on a unified target the calls of the plane kernels' ReLU ukernels
 * (_p on the caller's arrays). May call: the HAL's DMA (a tile's words), a kernel's
 * plane ReLU ukernels, on a split target the keep words' turn (bng_vec.h) and
 * bng_relu.c's mask of a vector by its words. Compiled only for a target that lists
 * relu and nchw. A staged plane's mask by y is NHWC's (bng_relu_mask_tile: a tile's
 * rows are planes there), in bng_relu.c.
 *
 * A plane's bits run along its values (element i's in bit i % W of word i / W, W the
 * element's bits), so a vector's mask is a word's bits spread across its lanes. On a
 * unified target each lane gathers its own word and bit, a vector at a time as
 * bng_relu.c's steps go (a register of GCC vector lanes, or a step of plain C), the
 * piece's last elements one at a time. On a split target the words lie in vector
 * memory, where scalar code may not read them: each vector of them is turned in the
 * register (bng_vec.h, "Keep bits"), and dy masked a vector at a time as an NHWC row is
 * by its words.
 */
#include <stdint.h>
#include "bng_relu.h"
#include "bng_steps_vec.h"

/* NCHW: a tile's words of its planes' keep bits, a tile row's after another: on a
 * unified target packed, on a split one whole vectors apart (BNG_V words), each row's
 * last vector zeroed first, so that the turn (below) moves no bit the DMA did not
 * write. */
static size_t bng_relu_plane_words_pitch(size_t n, size_t element)
{
    const size_t row_words = BNG_KEEP_WORDS(n, element);
    return BNG_SPLIT_MEMORY ? (row_words + BNG_V - 1) / BNG_V * BNG_V : row_words;
}

void bng_relu_fetch_plane_bits(const bng_staged_job *job, BNG_VMEM unsigned char *bits,
                               const bng_tile *tile, size_t word, size_t plane_words)
{
    const size_t element = job->dtype->element_bytes, n = tile->row_bytes / element;
    const size_t pitch = bng_relu_plane_words_pitch(n, element) * element;
#if BNG_SPLIT_MEMORY
    size_t r;

    for (r = 0; r < tile->rows; r++) {
        BNG_VMEM unsigned char *last = bits + (r + 1) * pitch - BNG_V * element;
        if (element == sizeof(float))
            BNG_VKEEPS(BNG_V, store_f32)((BNG_VMEM float *)last, BNG_VKEEPS(BNG_V, zero_f32)());
        else
            BNG_VKEEPS(BNG_V, store_f16)((BNG_VMEM half *)last, BNG_VKEEPS(BNG_V, zero_f16)());
    }
#endif
    bng_hal_dma_wait(bng_hal_dma_get(bits, bng_shared_at((const BNG_SHARED void *)job->call.y,
                                                         word, element),
                                     tile->rows, BNG_KEEP_WORDS(n, element) * element,
                                     job->call.channel * plane_words * element, pitch));
}

#if !BNG_SPLIT_MEMORY
/* ---- unified memory: the plane kernels' ReLU ukernels, and the mask in plain C or GCC
 * vectors ---- */

void bng_relu_plane_reduce(const bng_nchw_kernel *kernel, int from_bits, size_t n, const void *x,
                           const void *dy, const void *y, float mean, float *lane_dy,
                           float *lane_dyxm)
{
    if (from_bits)
        kernel->reduce_keeps(n, x, dy, y, mean, lane_dy, lane_dyxm);
    else
        kernel->reduce_relu(n, x, dy, y, mean, lane_dy, lane_dyxm);
}

void bng_relu_plane_dx(const bng_nchw_kernel *kernel, int from_bits, int is_train, size_t n,
                       const void *x, const void *dy, const void *y, void *dx, float mean,
                       float gain, float dy_mean, float slope, int stream)
{
    if (from_bits && is_train)
        kernel->dx_train_keeps(n, x, dy, y, dx, mean, gain, dy_mean, slope, stream);
    else if (from_bits)
        kernel->dx_infer_keeps(n, dy, y, dx, gain, stream);
    else if (is_train)
        kernel->dx_train_relu(n, x, dy, y, dx, mean, gain, dy_mean, slope, stream);
    else
        kernel->dx_infer_relu(n, dy, y, dx, gain, stream);
}

/* Element i of d masked by a plane's words from a word boundary: kept where bit i % W
 * of word i / W is set (W the element's bits), else +0. */
#define BNG_RELU_BY_PLANE_BIT(type, d, bits, i)                                            \
    ((type)((d)[i] & (0u - ((unsigned)((bits)[(i) / (8 * sizeof(type))]                    \
                                       >> ((i) % (8 * sizeof(type)))) & 1u))))

/* out = d masked by a plane's words from a word boundary, as many whole vectors of a
 * piece's first elements as there are (how many elements that is, returned): on the
 * gnu backend each lane's word and bit gathered, then a shift, and 1, negate, and; on
 * the others BNG_RELU_STEP_BYTES of plain C at a time. */
#if BNG_VEC_BACKEND == BNG_VEC_GNU
#define BNG_RELU_PLANE_VECTORS(type)                                                       \
    static size_t bng_relu_plane_by_bits_vectors_##type(size_t n, const type *d,          \
                                                        const type *bits, type *out)      \
    {                                                                                     \
        typedef type U __attribute__((vector_size(BNG_RELU_VECTOR_BYTES)));               \
        const size_t lanes = BNG_RELU_VECTOR_BYTES / sizeof(type), w = 8 * sizeof(type);  \
        size_t c, k;                                                                      \
        for (c = 0; c + lanes <= n; c += lanes) {                                         \
            U v, part, at;                                                                \
            __builtin_memcpy(&v, d + c, sizeof v);                                        \
            for (k = 0; k < lanes; k++) {                                                 \
                part[k] = bits[(c + k) / w];                                              \
                at[k] = (type)((c + k) % w);                                              \
            }                                                                             \
            v &= 0 - ((part >> at) & 1u);                                                 \
            __builtin_memcpy(out + c, &v, sizeof v);                                      \
        }                                                                                 \
        return c;                                                                         \
    }
#else
#define BNG_RELU_PLANE_VECTORS(type)                                                       \
    static size_t bng_relu_plane_by_bits_vectors_##type(size_t n, const type *d,          \
                                                        const type *bits, type *o)        \
    {                                                                                     \
        enum { step = BNG_RELU_STEP_BYTES / sizeof(type) };                               \
        size_t c, k;                                                                      \
        for (c = 0; c + step <= n; c += step)                                             \
            for (k = 0; k < step; k++)                                                    \
                o[c + k] = BNG_RELU_BY_PLANE_BIT(type, d, bits, c + k);                   \
        return c;                                                                         \
    }
#endif
BNG_RELU_PLANE_VECTORS(uint32_t)
BNG_RELU_PLANE_VECTORS(uint16_t)

/* A piece of `n` elements of a plane, from a word boundary, masked by its words: element
 * i where bit i % W of word i / W is set (W the element's bits), out may be d; the
 * vectors above, then the last elements one at a time. */
#define BNG_RELU_PLANE_STEP(type)                                                          \
    static void bng_relu_plane_by_bits_##type(size_t n, const type *d, const type *bits,  \
                                              type *out)                                  \
    {                                                                                     \
        size_t i;                                                                         \
        for (i = bng_relu_plane_by_bits_vectors_##type(n, d, bits, out); i < n; i++)      \
            out[i] = BNG_RELU_BY_PLANE_BIT(type, d, bits, i);                             \
    }
BNG_RELU_PLANE_STEP(uint32_t)
BNG_RELU_PLANE_STEP(uint16_t)

void bng_relu_mask_planes_by_bits(size_t element, const bng_tile *tile, unsigned char *bits)
{
    const size_t n = tile->row_bytes / element, pitch = bng_relu_plane_words_pitch(n, element);
    size_t p;

    for (p = 0; p < tile->rows; p++) {
        void *dy = tile->dy + p * tile->pitch;
        const void *words = bits + p * pitch * element;
        if (element == sizeof(uint32_t))
            bng_relu_plane_by_bits_uint32_t(n, dy, words, dy);
        else
            bng_relu_plane_by_bits_uint16_t(n, dy, words, dy);
    }
}

#else /* BNG_SPLIT_MEMORY */
/* NCHW's planes by their keep bits (fetched by bng_relu_fetch_plane_bits): each vector
 * of a tile row's words turned in place (bng_vec.h, "Keep bits": lane j then holds the
 * bits of lane j of the w vectors of BNG_V elements the words cover, w the element's
 * bits), then the row's vectors masked by them as bng_relu.c's NHWC rows by theirs,
 * vector v by the bit of its place among the w at its word vector. The row's vectors up
 * to the one that holds its last value (whole ones: its padding lanes masked too, by
 * bits past the plane's that are not read, never put out; the padding's later vectors
 * are left as they are, which a half kernel of twice BNG_V lanes reads and never puts
 * out either). */
void bng_relu_mask_planes_by_bits(size_t element, const bng_tile *tile,
                                  BNG_VMEM unsigned char *bits)
{
    const size_t n = tile->row_bytes / element, row_values = tile->pitch / element;
    const size_t pitch = bng_relu_plane_words_pitch(n, element), w = 8 * element;
    size_t p, v;

    for (p = 0; p < tile->rows; p++) {
        BNG_VMEM unsigned char *words = bits + p * pitch * element;
        for (v = 0; v < pitch; v += BNG_V) {
            if (element == sizeof(float))
                BNG_VKEEPS(BNG_V, turn_f32)((BNG_VMEM float *)words + v);
            else
                BNG_VKEEPS(BNG_V, turn_f16)((BNG_VMEM half *)words + v);
        }
        for (v = 0; v * BNG_V < n; v++)
            bng_relu_vector_by_bits(element, tile, p * row_values + v * BNG_V, words,
                                    BNG_TURNED_WORD(v, BNG_V, w),
                                    (unsigned)BNG_TURNED_VECTOR_BIT(v, BNG_V, w));
    }
}
#endif
