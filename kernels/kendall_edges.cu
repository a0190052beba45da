// kendall_edges: one block pair of Kendall τ-b with the threshold and compaction fused into
// the epilogue: τ_ij = (z_i·z_j)/sqrt(n_i n_j) from the exact integer dot product of the sign
// bit-planes (kendall_tile.cuh: tensor cores when use_mma, else SIMT popcounts; pairs = M =
// L(L−1)/2 selects the tie-free form), scaled once by fc.KendallTau's float64 formula; pairs
// with τ (or |τ|) > t (≥ t when inclusive) are appended to out with that value (fc.Op.Value).
//
// Launch: grid (ceil((j1−j0)/64), ceil((i1−i0)/64)), block 256, static shared memory
// (sizeof(KendallShared) = 34 KiB). *count must be zero before the launch; it may end above
// capacity (see correlation_edges).
#include "common.cuh"
#include "kendall_tile.cuh"

extern "C" __global__ void __launch_bounds__(PC_THREADS)
kendall_edges(const unsigned int* __restrict__ P, const unsigned int* __restrict__ N,
              const long long* __restrict__ nonzero, const long long* __restrict__ positives,
              long long ldw, long long pairs, long long use_mma,
              long long i0, long long i1, long long j0, long long j1,
              double threshold, long long flags,
              Edge* __restrict__ out, unsigned long long* __restrict__ count, unsigned long long capacity) {
    const BlockPair bp = {i0, i1, j0, j1};
    const long long r0 = i0 + (long long)blockIdx.y * PC_TM;
    const long long c0 = j0 + (long long)blockIdx.x * PC_TM;
    if (tile_below_diagonal(bp, r0, c0, PC_TM)) return;
    __shared__ KendallShared s;
    int dot[4][4];
    kendall_tile(P, N, nonzero, positives, ldw, pairs, use_mma != 0, i1, j1, r0, c0, s, dot);
#pragma unroll
    for (int m = 0; m < 4; ++m) {
#pragma unroll
        for (int n = 0; n < 4; ++n) {
            const long long i = r0 + kendall_row(use_mma != 0, m, n);
            const long long j = c0 + kendall_col(use_mma != 0, m, n);
            const bool counts = pair_counts(bp, i, j);
            // nonzero[] has padding entries past N, so reading it for uncounted pairs is safe.
            const float tau = counts ? kendall_tau(dot[m][n], nonzero[i], nonzero[j]) : 0.0f;
            const float v = connection_value(tau, flags);
            const bool pass = counts && passes_threshold(v, threshold, flags);
            append_edge(pass, (unsigned int)i, (unsigned int)j, v, out, count, capacity);
        }
    }
}
