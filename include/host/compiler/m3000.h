/* Host emulation of the MT-3000 compiler's vector spellings (compiler/m3000.h), as the
 * native backend's defaults use them: lvector, vec_ld, vec_st, vec_svbcast, vec_add,
 * vec_sub, vec_muli. Over GCC vectors, one IEEE operation per lane, so the native
 * backend gives the bits of the others. Not for firmware: firmware includes the vendor's
 * header. The host's lvector float holds the target's BNG_F32_LANES floats (the DSP's
 * holds 32) and needs only element alignment.
 */
#ifndef BNG_HOST_M3000_H
#define BNG_HOST_M3000_H

#ifndef BNG_F32_LANES
#error "include bng_kernels.h first: the emulated lvector float holds BNG_F32_LANES floats"
#endif

#define lvector __attribute__((vector_size(4 * BNG_F32_LANES), aligned(4)))
typedef lvector float bng_host_lvector_float;

static inline bng_host_lvector_float bng_host_vec_ld(int offset, const bng_host_lvector_float *p)
{
    bng_host_lvector_float v;
    __builtin_memcpy(&v, (const char *)p + offset, sizeof v);
    return v;
}

static inline void bng_host_vec_st(bng_host_lvector_float v, int offset, bng_host_lvector_float *p)
{
    __builtin_memcpy((char *)p + offset, &v, sizeof v);
}

static inline bng_host_lvector_float vec_svbcast(float scalar)
{
    bng_host_lvector_float v;
    int i;
    for (i = 0; i < BNG_F32_LANES; i++)
        v[i] = scalar;
    return v;
}

static inline bng_host_lvector_float vec_add(bng_host_lvector_float a, bng_host_lvector_float b)
{
    return a + b;
}

static inline bng_host_lvector_float vec_sub(bng_host_lvector_float a, bng_host_lvector_float b)
{
    return a - b;
}

static inline bng_host_lvector_float vec_muli(bng_host_lvector_float a, bng_host_lvector_float b)
{
    return a * b;
}

#define vec_ld(offset, p) bng_host_vec_ld((offset), (p))
#define vec_st(v, offset, p) bng_host_vec_st((v), (offset), (p))

#endif
