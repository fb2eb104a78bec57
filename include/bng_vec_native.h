/* SPDX-License-Identifier: Apache-2.0 */
/* Copyright 2026 the batchnormgrad authors */
#ifndef BNG_VEC_NATIVE_H
#define BNG_VEC_NATIVE_H

#ifndef BNG_VEC_H
#error "bng_vec_native.h is part of bng_vec.h: include that"
#endif

/* The target's own vector type at BNG_F32_LANES (bng_kernels.h) lanes, through the
 * spellings of bng_native.h; half memory through its half spellings when targets.yaml
 * gives them, else lane by lane (bng_half_lane_to_float, bng_vec_portable.h). Loads
 * and stores are handed element-aligned pointers: the spelled load must accept them. _div and _broadcast serve
 * the split driver's per-channel steps (include/bng_steps.c bng_step_finalize: a broadcast
 * batch count divides each sum); tests/c/test_native_spelling.c checks both spellings
 * for any float. */
#include "bng_native.h"
#define BNG_NATIVE_LANES BNG_F32_LANES
#ifdef BNG_NATIVE_HALF_LOAD
#define BNG_NATIVE_LOAD_F16(p) BNG_NATIVE_HALF_LOAD(p)
#else
static inline bng_native_f32 bng_native_load_f16(const half *p)
{
    float lanes[BNG_NATIVE_LANES];
    int i;
    for (i = 0; i < BNG_NATIVE_LANES; i++) {
        uint16_t lane;
        memcpy(&lane, p + i, 2);
        lanes[i] = bng_half_lane_to_float(lane);
    }
    return BNG_NATIVE_LOAD(lanes);
}
#define BNG_NATIVE_LOAD_F16(p) bng_native_load_f16(p)
#endif
#ifdef BNG_NATIVE_HALF_STORE
#define BNG_NATIVE_STORE_F16(p, v) BNG_NATIVE_HALF_STORE(p, v)
#else
static inline void bng_native_store_f16(half *p, bng_native_f32 v)
{
    float lanes[BNG_NATIVE_LANES];
    int i;
    BNG_NATIVE_STORE(lanes, v);
    for (i = 0; i < BNG_NATIVE_LANES; i++) {
        const uint16_t lane = (uint16_t)bng_float_lane_to_half(lanes[i]);
        memcpy(p + i, &lane, 2);
    }
}
#define BNG_NATIVE_STORE_F16(p, v) bng_native_store_f16(p, v)
#endif
/* A width is native when it is the target's f32 width. */
#define BNG_IS_NATIVE(N) (BNG_NATIVE_LANES == N)

#endif /* BNG_VEC_NATIVE_H */

/* One width's operations, written out (BNG_N lanes; BNG_H, half of them, for a width
 * made of two halves): bng_vec.h includes this file again for every width and part
 * (BNG_VEC_OPS), so that each operation is a function here, whose lines a debugger
 * steps through. Its names are pasted: BNG_OPN(add) is
 * bng_f32x16_add at 16 lanes. */
#if defined(BNG_VEC_OPS) && BNG_VEC_OPS == BNG_VEC_OPS_NATIVE_VECTOR
typedef bng_native_f32 BNG_F32XN;
static inline BNG_F32XN BNG_OPN(zero)(void) { return BNG_NATIVE_BROADCAST(0.0f); }
static inline BNG_F32XN BNG_OPN(ld_f32)(const float *p) { return BNG_NATIVE_LOAD(p); }
static inline void BNG_OPN(st_f32)(float *p, BNG_F32XN v) { BNG_NATIVE_STORE(p, v); }
static inline BNG_F32XN BNG_OPN(add)(BNG_F32XN a, BNG_F32XN b) { return BNG_NATIVE_ADD(a, b); }
static inline BNG_F32XN BNG_OPN(sub)(BNG_F32XN a, BNG_F32XN b) { return BNG_NATIVE_SUB(a, b); }
static inline BNG_F32XN BNG_OPN(mul)(BNG_F32XN a, BNG_F32XN b) { return BNG_NATIVE_MUL(a, b); }
static inline BNG_F32XN BNG_OPN(div)(BNG_F32XN a, BNG_F32XN b) { return BNG_NATIVE_DIV(a, b); }
static inline BNG_F32XN BNG_OPN(broadcast)(float s) { return BNG_NATIVE_BROADCAST(s); }
static inline BNG_F32XN BNG_OPN(ld_f16)(const half *p) { return BNG_NATIVE_LOAD_F16(p); }
static inline void BNG_OPN(st_f16)(half *p, BNG_F32XN v) { BNG_NATIVE_STORE_F16(p, v); }
#endif
