// split_tf32: the 3×TF32 split of the normalized series (tf32x3_tile.cuh), done once in
// Prepare: hi = tf32(u) (round to nearest, ties away: cvt.rna.tf32.f32), lo = tf32(u − hi);
// u − hi is exact in fp32, so u = hi + lo up to lo's own rounding (≤ 2⁻²²·|u|). hi overwrites
// u in place; padding zeros stay zeros.
//
// Launch: grid ceil(count/256), block 256: one thread per float of the count = rows·ld plane.
#include "common.cuh"

__device__ __forceinline__ float to_tf32(float x) {
    unsigned int r;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
    return __uint_as_float(r);
}

extern "C" __global__ void __launch_bounds__(256)
split_tf32(float* __restrict__ u, float* __restrict__ lo, long long count) {
    const long long k = (long long)blockIdx.x * 256 + threadIdx.x;
    if (k >= count) return;
    const float x = u[k];
    const float hi = to_tf32(x);
    u[k] = hi;
    lo[k] = to_tf32(x - hi);
}
