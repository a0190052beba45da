// normalize_rows: Pearson's series preparation (docs/algorithms.md, "Connectivity measures"),
//   u_ik = (x_ik − mean_i) / ‖x_i − mean_i‖₂,
// with the mean and the norm accumulated in float64 and the result rounded once to float32,
// so that r_ij = u_i·u_j. Spearman runs it on the average ranks. A zero-variance row (which
// fc.Backend.Prepare excludes) gives zeros rather than NaN. Columns l..ld−1 are written 0.
//
// Launch: grid ceil(n/8), block 256: one warp per row, lanes strided over time points; the
// reductions are warp shuffles in a fixed order, so the result is deterministic.
#include "common.cuh"

__device__ __forceinline__ double warp_sum(double v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

extern "C" __global__ void __launch_bounds__(256)
normalize_rows(const float* __restrict__ x, long long n, long long l, float* __restrict__ u, long long ld) {
    const long long row = (long long)blockIdx.x * 8 + (threadIdx.x >> 5);
    const int lane = threadIdx.x & 31;
    if (row >= n) return;
    const float* xr = x + row * l;
    double s = 0.0;
    for (long long k = lane; k < l; k += 32) s += (double)xr[k];
    const double mean = warp_sum(s) / (double)l;
    double ss = 0.0;
    for (long long k = lane; k < l; k += 32) {
        const double d = (double)xr[k] - mean;
        ss += d * d;
    }
    ss = warp_sum(ss);
    const double inv = ss > 0.0 ? 1.0 / sqrt(ss) : 0.0;
    float* ur = u + row * ld;
    for (long long k = lane; k < ld; k += 32) ur[k] = k < l ? (float)(((double)xr[k] - mean) * inv) : 0.0f;
}
