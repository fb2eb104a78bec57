/* SPDX-License-Identifier: Apache-2.0 */
/* Copyright 2026 the batchnormgrad authors */
/* A tracing implementation of include/bng_hal.h for the host (bng_hal_trace.c): not for
 * firmware. It runs the shipped driver as the host HAL does (a thread per selected
 * core, a private arena per core) and records, per core, every DMA transfer (rows, row
 * bytes, which memory on each side), every wait, every barrier and every kernel call;
 * make model replays the record against the part's figures (generator/costmodel/).
 *
 * The record is text, one event a line, written when each bng_hal_parallel returns:
 *   parallel <mask>                                   a parallel region starts
 *   <core> get <handle> <from> <to> <rows> <row_bytes>
 *   <core> put <handle> <from> <to> <rows> <row_bytes>
 *   <core> wait <handle>                               (waits on BNG_HAL_DMA_DONE are not
 *                                                       recorded: they cost nothing)
 *   <core> barrier
 *   <core> kernel <table entry> <op> <rows> <channels>  op: reduce, dx_train, dx_infer;
 *                                                       relu_mask, relu_bits,
 *                                                       relu_by_bits (BNG_FLAG_RELU: the
 *                                                       driver masks a tile's dy by y,
 *                                                       keeps its mask as bits, masks
 *                                                       it by the bits; the entry is
 *                                                       the call's row kernel);
 *                                                       the training forward's
 *                                                       fwd_stats, fwd_norm,
 *                                                       fwd_norm_relu (fwd_nchw_* in
 *                                                       NCHW); an NCHW ukernel set's entry
 *                                                       (bng_f32_nchw_kernel__...): rows are
 *                                                       planes, channels the elements
 *                                                       of each (relu_mask's: the
 *                                                       padded plane on a split
 *                                                       target); else channels a row's
 *                                                       as the call runs over it (the
 *                                                       padded row on a split target)
 *   <core> keep <rows> <am_rows> <gsm_rows>           a chunk of a call that reads its
 *                                                       rows twice: of the core's rows,
 *                                                       how many stay in its private
 *                                                       memory and in GSM between passes
 *   done                                              the region returned
 * each core's events in its program order, the cores in order; handles count from 1
 * per core and region. A memory is am (a core's private memory, as the HAL hands it
 * out), ddr (a region the caller declared so: its arrays) or gsm (any other shared
 * address: the driver's scratch, parameter block and GSM rows, which targets.yaml
 * places in the cluster's shared memory).
 *
 * With copying off the transfers move no data, so that x, dy and dx need not exist:
 * the trace program passes addresses of memory that may not be touched, and a call of
 * any size costs the kernels' work on the private tiles only. The driver reaches _s's
 * arrays by DMA alone, so the schedule is the same either way.
 */
#ifndef BNG_HAL_TRACE_H
#define BNG_HAL_TRACE_H

#include <stddef.h>
#include <stdio.h>

/* Where the record goes (NULL: nowhere) and whether transfers copy data. */
void bng_hal_trace_start(FILE *out, int copy);
/* Declare [start, start + bytes) to be in `level` ("ddr" or "gsm"); at most 16
 * regions, until bng_hal_trace_forget. */
void bng_hal_trace_region(const void *start, size_t bytes, const char *level);
void bng_hal_trace_forget(void);
/* The kernel hook's target: one kernel call on the calling core (calls outside a
 * core's body, _p's, are not recorded). */
void bng_hal_trace_kernel(const char *entry, const char *op, size_t rows, size_t channels);
/* The keep hook's target: where the calling core keeps its rows between the passes. */
void bng_hal_trace_keep(size_t rows, size_t am_rows, size_t gsm_rows);

/* The driver's hook at each kernel call site (include/bng_steps.h defines it to nothing
 * unless this header is included first, as the trace build does with -include). */
#define BNG_TRACE_KERNEL(kernel, op, rows, channels) \
    bng_hal_trace_kernel((kernel)->name, op, rows, channels)
#define BNG_TRACE_KEEP(rows, am_rows, gsm_rows) bng_hal_trace_keep(rows, am_rows, gsm_rows)

#endif
