// average_ranks: Spearman's series preparation, the average rank of every time point with
// ties sharing their mean rank (Zhao et al.; docs/algorithms.md, "Connectivity measures"):
//   rank_ik = Less_ik + (1 + Equal_ik)/2,
// Less_ik = #{q : x_iq < x_ik}, Equal_ik = #{q : x_iq = x_ik} (itself included). A per-element
// count, no sort: O(L²) comparisons per row from shared memory. Ranks are exact in float32
// (multiples of 1/2 below 2²³). normalize_rows then turns them into Pearson form.
//
// Launch: grid n (one CTA per row), block 128, dynamic shared memory roundup(l, 4)·4 bytes:
// nvcc vectorizes the inner loop's shared loads to 16 bytes, which may read up to three
// floats past l (compute-sanitizer memcheck saw it at l = 37); their values are never used.
#include "common.cuh"

extern "C" __global__ void __launch_bounds__(128)
average_ranks(const float* __restrict__ x, long long n, long long l, float* __restrict__ ranks) {
    extern __shared__ float row_values[];
    const long long row = blockIdx.x;
    if (row >= n) return;
    const float* xr = x + row * l;
    for (long long k = threadIdx.x; k < l; k += blockDim.x) row_values[k] = xr[k];
    __syncthreads();
    for (long long k = threadIdx.x; k < l; k += blockDim.x) {
        const float v = row_values[k];
        unsigned int less = 0, equal = 0;
        for (long long q = 0; q < l; ++q) {
            const float w = row_values[q];
            less += (w < v);
            equal += (w == v);
        }
        ranks[row * l + k] = (float)less + (1.0f + (float)equal) * 0.5f;
    }
}
