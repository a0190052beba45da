// correlation_edges: one block pair of Pearson/Spearman correlations with the threshold and
// compaction fused into the product's epilogue (ALGORITHMS.md §2, Zhao et al. Algorithm 1):
// r_ij = u_i·u_j of normalized series; the pairs with r (or |r|) > t (≥ t when inclusive)
// are appended to out with their value (|r| when abs: fc.Op.Value); the block's values never
// reach global memory.
//
// Launch: grid (ceil((j1−j0)/128), ceil((i1−i0)/128)), block 256, static shared memory
// (sizeof(SgemmShared) = 16.5 KiB). *count must be zero before the launch; afterwards it holds
// the number of surviving pairs, which may exceed capacity: then only the first capacity were
// written and the host retries the block with a larger buffer.
#include "common.cuh"
#include "sgemm_tile.cuh"

extern "C" __global__ void __launch_bounds__(SG_THREADS)
correlation_edges(const float* __restrict__ U, long long ld, long long K,
                  long long i0, long long i1, long long j0, long long j1,
                  double threshold, long long flags,
                  Edge* __restrict__ out, unsigned long long* __restrict__ count, unsigned long long capacity) {
    const BlockPair bp = {i0, i1, j0, j1};
    const long long r0 = i0 + (long long)blockIdx.y * SG_TM;
    const long long c0 = j0 + (long long)blockIdx.x * SG_TM;
    if (tile_below_diagonal(bp, r0, c0, SG_TM)) return;
    __shared__ SgemmShared s;
    float acc[8][8];
    sgemm_tile(U, ld, K, r0, c0, s, acc);
#pragma unroll
    for (int m = 0; m < 8; ++m) {
        const long long i = r0 + sg_row(m);
#pragma unroll
        for (int n = 0; n < 8; ++n) {
            const long long j = c0 + sg_col(n);
            const float v = connection_value(acc[m][n], flags);
            const bool pass = pair_counts(bp, i, j) && passes_threshold(v, threshold, flags);
            append_edge(pass, (unsigned int)i, (unsigned int)j, v, out, count, capacity);
        }
    }
}
