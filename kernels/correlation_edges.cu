// correlation_edges: one block pair of Pearson/Spearman correlations with the threshold and
// compaction fused into the product's epilogue (docs/algorithms.md, "Block-wise construction"; Zhao et al. Algorithm 1):
// r_ij = u_i·u_j of normalized series (correlation_tile.cuh: 3×TF32 tensor cores when use_tc,
// planes U = tf32(u) and Lo; fp32 SIMT on U = u otherwise); the pairs with r (or |r|) > t (≥ t when inclusive)
// are appended to out with their value (|r| when abs: fc.Op.Value); the block's values never
// reach global memory.
//
// Launch: grid (ceil((j1−j0)/128), ceil((i1−i0)/128)), block 256, static shared memory
// (sizeof(CorrShared) = 48 KiB). *count must be zero before the launch; afterwards it holds
// the number of surviving pairs, which may exceed capacity: then only the first capacity were
// written and the host retries the block with a larger buffer.
#include "common.cuh"
#include "correlation_tile.cuh"

extern "C" __global__ void __launch_bounds__(CT_THREADS, 2)
correlation_edges(const float* __restrict__ U, const float* __restrict__ Lo, long long ld, long long K, long long use_tc,
                  long long i0, long long i1, long long j0, long long j1,
                  double threshold, long long flags,
                  Edge* __restrict__ out, unsigned long long* __restrict__ count, unsigned long long capacity) {
    const BlockPair bp = {i0, i1, j0, j1};
    const long long r0 = i0 + (long long)blockIdx.y * CT_TM;
    const long long c0 = j0 + (long long)blockIdx.x * CT_TM;
    if (tile_below_diagonal(bp, r0, c0, CT_TM)) return;
    __shared__ CorrShared s;
    float acc[8][8];
    corr_tile(U, Lo, ld, K, use_tc != 0, r0, c0, s, acc);
#pragma unroll
    for (int m = 0; m < 8; ++m) {
        const long long i = r0 + corr_row(use_tc != 0, m);
#pragma unroll
        for (int n = 0; n < 8; ++n) {
            const long long j = c0 + corr_col(use_tc != 0, n);
            const float v = connection_value(acc[m][n], flags);
            const bool pass = pair_counts(bp, i, j) && passes_threshold(v, threshold, flags);
            append_edge(pass, (unsigned int)i, (unsigned int)j, v, out, count, capacity);
        }
    }
}
