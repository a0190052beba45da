// sliding_scatter: every edge of window c takes the next free entry of its row in the
// window's CSR (cursor: a copy of sliding_scan's row starts, ptr[c·(n+1) + I]), as the key
// (J << 32 | bits of W) in keys[c·capacity + entry]. Rows come out in the atomics' order;
// sliding_sort orders them by J (unique within a row, so the key orders by J alone).
//
// Launch: grid (blocks, count), block 256; blocks stride over the window's edges.
#include "common.cuh"

extern "C" __global__ void __launch_bounds__(256)
sliding_scatter(const Edge* __restrict__ out, const unsigned long long* __restrict__ counts, long long capacity, long long n,
                unsigned long long* __restrict__ cursor, unsigned long long* __restrict__ keys) {
    const long long c = blockIdx.y;
    const long long m = (long long)counts[c];
    const Edge* e = out + c * capacity;
    unsigned long long* cur = cursor + c * (n + 1);
    unsigned long long* k = keys + c * capacity;
    for (long long q = (long long)blockIdx.x * 256 + threadIdx.x; q < m; q += (long long)gridDim.x * 256) {
        const Edge x = e[q];
        k[atomicAdd(cur + x.i, 1ULL)] = (unsigned long long)x.j << 32 | __float_as_uint(x.w);
    }
}
