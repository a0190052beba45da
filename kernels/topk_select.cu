// topk_select: the K best pairs of every line (row or column) of a dense block of values
// (correlation_values / kendall_values), for the k-nearest-neighbour threshold (fc.OpTopK).
// "Best" orders by value descending, then partner index ascending; NaN marks pairs the block
// does not count. Round r finds, by a block-wide reduction, the best element strictly after
// round r−1's winner in that order, so K rounds give the top K with no sorting and no scratch.
//
// Line t's element e is V[t·line_stride + e·elem_stride] (rows: line_stride = ldv,
// elem_stride = 1; columns: the reverse); it is the pair (row0 + t, col0 + e) for rows and
// (row0 + e, col0 + t) for columns (by_column = 1). Winners are appended to out; a pair may
// come from both its row and its column, and the host keeps it once.
//
// Launch: grid lines, block 256.
#include "common.cuh"

struct Cand {
    float v;
    long long e;  // −1: none
};

// better says a precedes b: larger value, then smaller index.
__device__ __forceinline__ bool better(const Cand& a, const Cand& b) {
    if (a.e < 0) return false;
    if (b.e < 0) return true;
    return a.v > b.v || (a.v == b.v && a.e < b.e);
}

extern "C" __global__ void __launch_bounds__(256)
topk_select(const float* __restrict__ V, long long line_stride, long long elem_stride, long long length,
            long long k, long long row0, long long col0, long long by_column,
            Edge* __restrict__ out, unsigned long long* __restrict__ count, unsigned long long capacity) {
    __shared__ Cand warp_best[8];
    const long long t = blockIdx.x;
    const float* line = V + t * line_stride;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    Cand prev = {0.0f, -1};
    for (long long r = 0; r < k; ++r) {
        Cand best = {0.0f, -1};
        for (long long e = threadIdx.x; e < length; e += blockDim.x) {
            const float v = line[e * elem_stride];
            if (isnan(v)) continue;
            const Cand c = {v, e};
            if (prev.e >= 0 && !better(prev, c)) continue;  // already taken in an earlier round
            if (better(c, best)) best = c;
        }
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) {
            Cand other;
            other.v = __shfl_xor_sync(0xffffffffu, best.v, o);
            other.e = __shfl_xor_sync(0xffffffffu, best.e, o);
            if (better(other, best)) best = other;
        }
        if (lane == 0) warp_best[warp] = best;
        __syncthreads();
        if (threadIdx.x == 0) {
            for (int w = 1; w < 8; ++w)
                if (better(warp_best[w], best)) best = warp_best[w];
            warp_best[0] = best;
        }
        __syncthreads();
        best = warp_best[0];
        __syncthreads();  // warp_best is rewritten next round
        if (best.e < 0) break;  // fewer than k counted pairs in this line
        if (threadIdx.x == 0) {
            const unsigned long long pos = atomicAdd(count, 1ULL);
            if (pos < capacity) {
                Edge ed;
                ed.i = (unsigned int)(by_column ? row0 + best.e : row0 + t);
                ed.j = (unsigned int)(by_column ? col0 + t : col0 + best.e);
                ed.w = best.v;
                out[pos] = ed;
            }
        }
        prev = best;
    }
}
