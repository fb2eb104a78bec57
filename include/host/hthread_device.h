/* SPDX-License-Identifier: Apache-2.0 */
/* Copyright 2026 the batchnormgrad authors */
/* Host mock of the hthreads device runtime's header (MT-3000 hthread_device.h): the
 * functions the reference HAL (include/hal/bng_hal_hthreads.c) calls, with the public
 * header's signatures, implemented in hthread_mock.c on the host's DMA engine model.
 * Not for firmware: firmware includes the vendor's own header. */
#ifndef HTHREAD_DEVICE_H_
#define HTHREAD_DEVICE_H_

#include <stdbool.h>

#define __gsm__    /* one address space on the host */

int get_thread_id(void);
void group_barrier(unsigned id);
void core_barrier(unsigned int id, unsigned int num);
void *vector_malloc(unsigned int bytes);
void vector_free(void *ptr);
unsigned int dma_p2p(void *src, unsigned long src_row_num, unsigned int src_row_size, int src_row_step,
                     void *dst, unsigned long dst_row_num, unsigned int dst_row_size, int dst_row_step,
                     bool row_syn, unsigned int synmask);
void dma_wait(unsigned int ch);

/* Not in the vendor's header: the mock's idle between polls (BNG_HTHREADS_IDLE). */
void hthread_mock_idle(void);
/* BNG_HTHREADS_CONTRACT_BREACH on the host: the message on stderr, then abort. */
void hthread_mock_breach(const char *what);

#endif
