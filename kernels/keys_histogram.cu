// keys_histogram: the one-pass density mode's histogram (fc.SelectableRows.Histogram): the
// values of a row panel's kept edges, stored as keys j << 32 | float32 bits of the value
// (panel_gather's output), counted with fc.Op.BinOf's formula, hist[bin_of(v)] += 1 — the
// same bins correlation_histogram would give those pairs. The values are already the op's
// (|r| under Abs), so no connection_value here.
//
// Launch: grid min(ceil(count/256), 8192), block 256, grid-stride over the keys. hist (bins
// counters) holds the counts of earlier panels; it is zeroed once before the first.
#include "common.cuh"

extern "C" __global__ void __launch_bounds__(256)
keys_histogram(const unsigned long long* __restrict__ keys, long long count, double lo, double hi, long long bins,
               unsigned long long* __restrict__ hist) {
    unsigned int low = 0, high = 0;
    const double scale = bin_scale(lo, hi, bins);
    for (long long x = (long long)blockIdx.x * 256 + threadIdx.x; x < count; x += (long long)gridDim.x * 256) {
        const float v = __uint_as_float((unsigned int)keys[x]);
        count_bin(hist, bin_of(v, lo, hi, bins, scale), bins, low, high);
    }
    flush_edge_bins(hist, bins, low, high);
}
