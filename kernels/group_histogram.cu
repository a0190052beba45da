// group_histogram: one block pair of the group-mean Fisher z network (group_tile.cuh)
// counted into a histogram with fc.Op.BinOf's formula (pass 1 of a density threshold), as
// correlation_histogram does for one scan.
//
// Launch: grid (ceil((j1−j0)/128), ceil((i1−i0)/128)), block 256, static shared memory
// 48 KiB. hist (bins counters) must be zero before the launch.
#include "common.cuh"
#include "group_tile.cuh"

extern "C" __global__ void __launch_bounds__(CT_THREADS, 1)
group_histogram(const float* __restrict__ U, const float* __restrict__ Lo, long long ld, long long K, long long unit,
                long long S, long long i0, long long i1, long long j0, long long j1,
                double lo, double hi, long long bins, long long flags, unsigned long long* __restrict__ hist) {
    const BlockPair bp = {i0, i1, j0, j1};
    long long r0, c0;
    group_tile_origin(i0, j0, r0, c0);
    if (tile_below_diagonal(bp, r0, c0, CT_TM)) return;
    __shared__ GroupShared s;
    float acc[8][8];
    group_tile(U, Lo, ld, K, unit, S, r0, c0, s, acc);
    unsigned int low = 0, high = 0;
    const double scale = bin_scale(lo, hi, bins);
#pragma unroll
    for (int m = 0; m < 8; ++m) {
        const long long i = r0 + group_row(unit, m);
#pragma unroll
        for (int n = 0; n < 8; ++n) {
            const long long j = c0 + group_col(unit, n);
            if (pair_counts(bp, i, j)) {
                const long long b = bin_of(connection_value(acc[m][n], flags), lo, hi, bins, scale);
                count_bin(hist, b, bins, low, high);
            }
        }
    }
    flush_edge_bins(hist, bins, low, high);
}
