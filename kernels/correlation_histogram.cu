// correlation_histogram: one block pair of Pearson/Spearman correlations counted into a
// histogram (pass 1 of the density threshold, docs/algorithms.md, "Thresholds"): r_ij from the tile product
// correlation_edges and correlation_rows use (correlation_tile.cuh; use_tc as there), and for
// every counted pair hist[bin_of(r or |r|)] += 1 with fc.Op.BinOf's formula. 10⁶ bins do not fit in shared
// memory, so the counts go straight to a 64-bit device histogram with global atomics (exact;
// see count_bin for the two clamped end bins).
//
// Launch: grid (ceil((j1−j0)/128), ceil((i1−i0)/128)), block 256, static shared memory
// 48 KiB. hist (bins counters) must be zero before the launch.
#include "common.cuh"
#include "correlation_tile.cuh"

extern "C" __global__ void __launch_bounds__(CT_THREADS, 2)
correlation_histogram(const float* __restrict__ U, const float* __restrict__ Lo, long long ld, long long K, long long use_tc,
                      long long i0, long long i1, long long j0, long long j1,
                      double lo, double hi, long long bins, long long flags,
                      unsigned long long* __restrict__ hist) {
    const BlockPair bp = {i0, i1, j0, j1};
    const long long r0 = i0 + (long long)blockIdx.y * CT_TM;
    const long long c0 = j0 + (long long)blockIdx.x * CT_TM;
    if (tile_below_diagonal(bp, r0, c0, CT_TM)) return;
    __shared__ CorrShared s;
    float acc[8][8];
    corr_tile(U, Lo, ld, K, use_tc != 0, r0, c0, s, acc);
    unsigned int low = 0, high = 0;
    const double scale = bin_scale(lo, hi, bins);
#pragma unroll
    for (int m = 0; m < 8; ++m) {
        const long long i = r0 + corr_row(use_tc != 0, m);
#pragma unroll
        for (int n = 0; n < 8; ++n) {
            const long long j = c0 + corr_col(use_tc != 0, n);
            if (pair_counts(bp, i, j)) {
                const long long b = bin_of(connection_value(acc[m][n], flags), lo, hi, bins, scale);
                count_bin(hist, b, bins, low, high);
            }
        }
    }
    flush_edge_bins(hist, bins, low, high);
}
