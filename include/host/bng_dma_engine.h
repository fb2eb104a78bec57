/* SPDX-License-Identifier: Apache-2.0 */
/* Copyright 2026 the batchnormgrad authors */
/* The host's model of a DSP's DMA engine, shared by the host HAL (bng_hal_host.c) and
 * the mock of the vendor runtime (hthread_mock.c): not for firmware.
 *
 * A transfer completes only when waited for, when its core completes its puts (a
 * barrier), or at a random later transfer of the same core; until then its
 * destination holds a NaN pattern (all-ones bytes, NaN as float and as half). Its
 * source must not change while it is in flight; a core may have at most
 * BNG_DMA_MAX_OUTSTANDING; none may be outstanding when the core's work returns; the
 * private side must lie in the core's arena. Any misuse aborts with the call's name.
 * Checking is on unless BNG_HAL_HOST=fast is in the environment (then a transfer is a
 * synchronous copy).
 */
#ifndef BNG_DMA_ENGINE_H
#define BNG_DMA_ENGINE_H

#include <stddef.h>

#define BNG_DMA_MAX_OUTSTANDING 4
#define BNG_DMA_POISON 0xFF

/* Reads BNG_HAL_HOST once, allocates `cores` arenas of `arena_bytes`, and when
 * `extra_arena_bytes` is not 0 one more engine (number `cores`) with an arena of that
 * size: the host HAL's stand-in for the calling core in _p on a split target. */
void bng_dma_engine_init(unsigned cores, size_t arena_bytes, size_t extra_arena_bytes);
unsigned char *bng_dma_engine_arena(unsigned core);
/* Start of a core's work in a call: poison its arena, seed its timing. */
void bng_dma_engine_begin(unsigned core, unsigned call);
/* End of a core's work: abort if a transfer is outstanding. */
void bng_dma_engine_end(unsigned core);
/* A transfer of `rows` rows of `row_bytes`; `private_side` is dst (a get) or src (a
 * put), checked against the core's arena. Returns a handle > 0, or 0 when done. */
int bng_dma_engine_issue(unsigned core, const char *call, void *dst, size_t dst_stride,
                         const void *src, size_t src_stride, size_t rows, size_t row_bytes,
                         const void *private_side);
void bng_dma_engine_wait(unsigned core, int handle);
/* Complete the core's puts (what a barrier promises). */
void bng_dma_engine_complete_puts(unsigned core);
void bng_dma_engine_fail(const char *call, const char *what, int core);

#endif
