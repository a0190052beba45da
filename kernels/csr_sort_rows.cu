// csr_sort_rows: sorts every row of a CSR adjacency in increasing order (graph.Graph's
// invariant), a row per block by bitonic sort in shared memory (Batcher 1968), padded to a
// power of two with INT_MAX. Rows must hold at most 8192 entries (the caller checks the
// maximum degree).
//
// Launch: any grid (blocks stride over the rows), block 512.
extern "C" __global__ void __launch_bounds__(512)
csr_sort_rows(const long long* __restrict__ off, int* __restrict__ adj, long long n) {
    __shared__ int s[8192];
    for (long long r = blockIdx.x; r < n; r += gridDim.x) {
        const long long b = off[r];
        const int deg = (int)(off[r + 1] - b);
        if (deg < 2) continue;  // uniform across the block
        int p = 2;
        while (p < deg) p <<= 1;
        for (int k = threadIdx.x; k < p; k += 512) s[k] = k < deg ? adj[b + k] : 0x7fffffff;
        __syncthreads();
        for (int k = 2; k <= p; k <<= 1) {
            for (int j = k >> 1; j > 0; j >>= 1) {
                for (int i = threadIdx.x; i < p; i += 512) {
                    const int x = i ^ j;
                    if (x > i) {
                        const int a = s[i], c = s[x];
                        if ((a > c) == ((i & k) == 0)) {
                            s[i] = c;
                            s[x] = a;
                        }
                    }
                }
                __syncthreads();
            }
        }
        for (int k = threadIdx.x; k < deg; k += 512) adj[b + k] = s[k];
        __syncthreads();
    }
}
