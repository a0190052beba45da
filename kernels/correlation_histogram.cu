// correlation_histogram: one block pair of Pearson/Spearman correlations counted into a
// histogram (pass 1 of the density threshold, ALGORITHMS.md §3): for every counted pair,
// hist[bin_of(r or |r|)] += 1 with fc.Op.BinOf's formula. 10⁶ bins do not fit in shared
// memory, so the counts go straight to a 64-bit device histogram with global atomics (exact;
// see count_bin for the two clamped end bins).
//
// Launch: grid (ceil((j1−j0)/128), ceil((i1−i0)/128)), block 256, static shared memory
// 16.5 KiB. hist (bins counters) must be zero before the launch.
#include "common.cuh"
#include "sgemm_tile.cuh"

extern "C" __global__ void __launch_bounds__(SG_THREADS)
correlation_histogram(const float* __restrict__ U, long long ld, long long K,
                      long long i0, long long i1, long long j0, long long j1,
                      double lo, double hi, long long bins, long long flags,
                      unsigned long long* __restrict__ hist) {
    const BlockPair bp = {i0, i1, j0, j1};
    const long long r0 = i0 + (long long)blockIdx.y * SG_TM;
    const long long c0 = j0 + (long long)blockIdx.x * SG_TM;
    if (tile_below_diagonal(bp, r0, c0, SG_TM)) return;
    __shared__ SgemmShared s;
    float acc[8][8];
    sgemm_tile(U, ld, K, r0, c0, s, acc);
    unsigned int low = 0, high = 0;
    const double scale = bin_scale(lo, hi, bins);
#pragma unroll
    for (int m = 0; m < 8; ++m) {
        const long long i = r0 + sg_row(m);
#pragma unroll
        for (int n = 0; n < 8; ++n) {
            const long long j = c0 + sg_col(n);
            if (pair_counts(bp, i, j)) {
                const long long b = bin_of(connection_value(acc[m][n], flags), lo, hi, bins, scale);
                count_bin(hist, b, bins, low, high);
            }
        }
    }
    flush_edge_bins(hist, bins, low, high);
}
