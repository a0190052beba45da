// sliding_sort: every row of every window's CSR (sliding_scatter's keys, unordered within a
// row) in increasing column order, written packed: window c's entries start at base[c] of idx
// (columns) and wts (weights), the layout the host reads the chunk in. A warp takes a row and
// each lane places its entries by rank — the number of the row's keys below its own (columns
// are unique within a row, so ranks are distinct) — which costs len² / 32 comparisons per row:
// the host keeps windows whose longest row (sliding_scan's rowmax) passes its bound.
//
// Launch: grid (blocks, count), block 256 (8 warps); warps stride over the rows.
extern "C" __global__ void __launch_bounds__(256)
sliding_sort(const unsigned long long* __restrict__ ptr, long long n, long long capacity,
             const unsigned long long* __restrict__ keys, const unsigned long long* __restrict__ base,
             unsigned int* __restrict__ idx, float* __restrict__ wts) {
    const long long c = blockIdx.y;
    const unsigned long long* p = ptr + c * (n + 1);
    const unsigned long long* k = keys + c * capacity;
    unsigned int* ix = idx + base[c];
    float* wt = wts + base[c];
    const int lane = threadIdx.x & 31;
    for (long long r = (long long)blockIdx.x * 8 + (threadIdx.x >> 5); r < n; r += (long long)gridDim.x * 8) {
        const long long lo = (long long)p[r], hi = (long long)p[r + 1];
        for (long long q = lo + lane; q < hi; q += 32) {
            const unsigned long long mine = k[q];
            long long rank = 0;
            for (long long s = lo; s < hi; s++) rank += k[s] < mine;
            ix[lo + rank] = (unsigned int)(mine >> 32);
            wt[lo + rank] = __uint_as_float((unsigned int)mine);
        }
    }
}
