// group_tile.cuh: the group-mean Fisher z tile the three group kernels share (group_edges,
// group_histogram, group_values), so every pass of a threshold computes bit-identical values:
//   r̄_ij = tanh( (1/S) Σ_s atanh(clamp(r_ij^s)) ),
// with r_ij^s = u_i^s·u_j^s the tile product of subject s's normalised series
// (correlation_tile.cuh: fp32 SIMT, or 3×TF32 when use_tc), |r| clamped to 1 − 1e−7 as
// helper/group.ZClamp does (two identical voxels would give an infinite z). Subjects are the
// inner loop: the tile's running Σ atanh stays in registers across all S products, so no S × N
// × N intermediate ever reaches device memory (row panel outer, subjects inner, as helper/group's
// CPU engine blocks it; its package comment gives the two means).
//
// Layout: the prepared series are node-major, subject-minor: subject s's row i starts at
// U + (i·S + s)·ld (normalize_rows over the N·S rows of the input N × S·L matrix read as
// N·S rows of L), so subject s is the matrix U + s·ld with leading dimension S·ld, and at
// least 128 zero node rows follow the last node. Lo (3×TF32 only) has the same layout.
//
// Registers: 64 product accumulators and 64 running sums per thread, so the kernels run one
// CTA of 256 threads per multiprocessor (__launch_bounds__(256, 1)).
#ifndef HUBSCOPE_GROUP_TILE_CUH
#define HUBSCOPE_GROUP_TILE_CUH

#include "correlation_tile.cuh"

// GROUP_ZCLAMP is helper/group.ZClamp (1 − 1e−7) rounded to float32.
#define GROUP_ZCLAMP 0.9999999f

// group_tile leaves r̄ for the pair (r0 + corr_row(m), c0 + corr_col(n)) in acc[m][n].
__device__ __forceinline__ void group_tile(const float* __restrict__ U, const float* __restrict__ Lo, long long ld,
                                           long long K, bool use_tc, long long S, long long r0, long long c0,
                                           CorrShared& s, float (&acc)[8][8]) {
    float z[8][8];
#pragma unroll
    for (int m = 0; m < 8; ++m)
#pragma unroll
        for (int n = 0; n < 8; ++n) z[m][n] = 0.0f;
    for (long long k = 0; k < S; ++k) {
        // The previous subject's last shared-memory reads are done before this subject's
        // first stores.
        if (k > 0) __syncthreads();
        corr_tile(U + k * ld, use_tc ? Lo + k * ld : Lo, S * ld, K, use_tc, r0, c0, s, acc);
#pragma unroll
        for (int m = 0; m < 8; ++m)
#pragma unroll
            for (int n = 0; n < 8; ++n) z[m][n] += atanhf(fminf(fmaxf(acc[m][n], -GROUP_ZCLAMP), GROUP_ZCLAMP));
    }
    const double sd = (double)S;
#pragma unroll
    for (int m = 0; m < 8; ++m)
#pragma unroll
        for (int n = 0; n < 8; ++n) acc[m][n] = (float)tanh((double)z[m][n] / sd);
}

#endif
