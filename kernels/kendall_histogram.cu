// kendall_histogram: one block pair of Kendall τ-b counted into a 64-bit device histogram
// with fc.Op.BinOf's formula (pass 1 of the density threshold); τ as in kendall_edges.
// Counting as in correlation_histogram (count_bin).
//
// Launch: grid (ceil((j1−j0)/64), ceil((i1−i0)/64)), block 256, static shared memory 34 KiB (KendallShared).
// hist (bins counters) must be zero before the launch.
#include "common.cuh"
#include "kendall_tile.cuh"

extern "C" __global__ void __launch_bounds__(PC_THREADS)
kendall_histogram(const unsigned int* __restrict__ P, const unsigned int* __restrict__ N,
                  const long long* __restrict__ nonzero, const long long* __restrict__ positives,
              long long ldw, long long pairs, long long use_mma,
                  long long i0, long long i1, long long j0, long long j1,
                  double lo, double hi, long long bins, long long flags,
                  unsigned long long* __restrict__ hist) {
    const BlockPair bp = {i0, i1, j0, j1};
    const long long r0 = i0 + (long long)blockIdx.y * PC_TM;
    const long long c0 = j0 + (long long)blockIdx.x * PC_TM;
    if (tile_below_diagonal(bp, r0, c0, PC_TM)) return;
    __shared__ KendallShared s;
    int dot[4][4];
    kendall_tile(P, N, nonzero, positives, ldw, pairs, use_mma != 0, i1, j1, r0, c0, s, dot);
    unsigned int low = 0, high = 0;
    const double scale = bin_scale(lo, hi, bins);
#pragma unroll
    for (int m = 0; m < 4; ++m) {
#pragma unroll
        for (int n = 0; n < 4; ++n) {
            const long long i = r0 + kendall_row(use_mma != 0, m, n);
            const long long j = c0 + kendall_col(use_mma != 0, m, n);
            if (pair_counts(bp, i, j)) {
                const float tau = kendall_tau(dot[m][n], nonzero[i], nonzero[j]);
                count_bin(hist, bin_of(connection_value(tau, flags), lo, hi, bins, scale), bins, low, high);
            }
        }
    }
    flush_edge_bins(hist, bins, low, high);
}
