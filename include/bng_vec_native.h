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
#define BNG_NATIVE_VECTOR(N)                                                         \
    typedef bng_native_f32 bng_f32x##N;                                              \
    static inline bng_f32x##N bng_f32x##N##_zero(void) { return BNG_NATIVE_BROADCAST(0.0f); } \
    static inline bng_f32x##N bng_f32x##N##_ld_f32(const float *p) { return BNG_NATIVE_LOAD(p); } \
    static inline void bng_f32x##N##_st_f32(float *p, bng_f32x##N v) { BNG_NATIVE_STORE(p, v); } \
    static inline bng_f32x##N bng_f32x##N##_add(bng_f32x##N a, bng_f32x##N b) { return BNG_NATIVE_ADD(a, b); } \
    static inline bng_f32x##N bng_f32x##N##_sub(bng_f32x##N a, bng_f32x##N b) { return BNG_NATIVE_SUB(a, b); } \
    static inline bng_f32x##N bng_f32x##N##_mul(bng_f32x##N a, bng_f32x##N b) { return BNG_NATIVE_MUL(a, b); } \
    static inline bng_f32x##N bng_f32x##N##_div(bng_f32x##N a, bng_f32x##N b) { return BNG_NATIVE_DIV(a, b); } \
    static inline bng_f32x##N bng_f32x##N##_broadcast(float s) { return BNG_NATIVE_BROADCAST(s); } \
    static inline bng_f32x##N bng_f32x##N##_ld_f16(const half *p) { return BNG_NATIVE_LOAD_F16(p); } \
    static inline void bng_f32x##N##_st_f16(half *p, bng_f32x##N v) { BNG_NATIVE_STORE_F16(p, v); }
/* A width is native when it is the target's f32 width. */
#define BNG_IS_NATIVE(N) (BNG_NATIVE_LANES == N)

#endif /* BNG_VEC_NATIVE_H */
