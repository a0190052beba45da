// check_series: the validity test of fc.CheckSeries on the device, so that Prepare need not
// scan N·L values on one host core: a series is unusable when it holds a non-finite value or
// is constant (zero variance: Pearson's normalisation would divide by zero). bad counts the
// unusable rows; when it is non-zero the host runs fc.CheckSeries for the exact error.
//
// Launch: grid ceil(n/8), block 256: one warp per row, lanes strided over time points, warp
// votes for the verdict.
#include "common.cuh"

extern "C" __global__ void __launch_bounds__(256)
check_series(const float* __restrict__ x, long long n, long long l, unsigned long long* __restrict__ bad) {
    const long long row = (long long)blockIdx.x * 8 + (threadIdx.x >> 5);
    if (row >= n) return;
    const float* xr = x + row * l;
    const float first = xr[0];
    bool finite = true, constant = true;
    for (long long k = threadIdx.x & 31; k < l; k += 32) {
        const float v = xr[k];
        finite = finite && isfinite(v);
        constant = constant && (v == first);
    }
    const bool ok = __all_sync(0xffffffffu, finite) && !__all_sync(0xffffffffu, constant);
    if ((threadIdx.x & 31) == 0 && !ok) atomicAdd(bad, 1ULL);
}
