/* SPDX-License-Identifier: Apache-2.0 */
/* Copyright 2026 the batchnormgrad authors */
/* Owns: the per-channel steps' vectors (bng_steps.h, "the per-channel steps"): the
 * vector type at BNG_V lanes, its operations, and the steps' loads and stores of the
 * call's arrays. May include: bng_steps.h and bng_vec.h; included by the rooms that
 * compute with vectors only (bng_steps.c, bng_fwd_steps.c, bng_nhwc_staged.c,
 * bng_nchw_steps.c, bng_relu.c, bng_nchw_relu.c). A room that does not include it
 * reaches neither the vector backend nor a half conversion: its object is the same
 * whatever the backend and the half type, and the suites' arithmetic flavours link the
 * gnu flavour's (mk/build.mk; the plan's list of the rooms that compute with vectors,
 * Room.vectors, is held to the rooms that reach bng_vec.h by the generator's
 * DriverLayersTest).
 */
#ifndef BNG_STEPS_VEC_H
#define BNG_STEPS_VEC_H

#include <stddef.h>
#include "bng_steps.h"
/* On a split target the kernels' backend; on a unified target one lane, the same
 * scalar code under any backend (plain C99 unless one is named). */
#ifndef BNG_VEC_BACKEND
#if BNG_SPLIT_MEMORY
#define BNG_VEC_BACKEND BNG_VECTOR_BACKEND
#else
#define BNG_VEC_BACKEND BNG_VEC_PORTABLE
#endif
#endif
#include "bng_vec.h"

#define BNG_VT2(n) bng_f32x##n
#define BNG_VT(n) BNG_VT2(n)
#define BNG_VOP2(n, op) bng_f32x##n##_##op
#define BNG_VOP(n, op) BNG_VOP2(n, op)
typedef BNG_VT(BNG_V) bng_vec;
#define bng_vload BNG_VOP(BNG_V, load_f32)
#define bng_vstore BNG_VOP(BNG_V, store_f32)
#define bng_vzero BNG_VOP(BNG_V, zero)
#define bng_vload_f16 BNG_VOP(BNG_V, load_f16)
#define bng_vstore_f16 BNG_VOP(BNG_V, store_f16)
#define bng_vadd BNG_VOP(BNG_V, add)
#define bng_vmul BNG_VOP(BNG_V, mul)
#define bng_vsub BNG_VOP(BNG_V, sub)
#define bng_vdiv BNG_VOP(BNG_V, div)
#define bng_vbroadcast BNG_VOP(BNG_V, broadcast)
/* The keep words' operations at a width (bng_vec.h, "Keep bits"): BNG_VKEEPS(BNG_V,
 * zero_f32) is bng_keeps32_zero_f32 at 32 lanes. */
#define BNG_VKEEPS2(n, what) bng_keeps##n##_##what
#define BNG_VKEEPS(n, what) BNG_VKEEPS2(n, what)

/* Element i (a multiple of BNG_V) of an array of float (bytes 4) or half (2), as floats. */
bng_vec bng_load_sized(size_t bytes, const BNG_VMEM void *array, size_t i);
/* Element i (a multiple of BNG_V) of a per-channel array of the call's stats type, as
 * floats; and := v. */
bng_vec bng_stats_load(const bng_dtype_config *dtype, const BNG_VMEM void *stats, size_t i);
void bng_stats_store(const bng_dtype_config *dtype, BNG_VMEM void *stats, size_t i, bng_vec v);

#endif /* BNG_STEPS_VEC_H */
