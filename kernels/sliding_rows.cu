// sliding_rows: the first step of sorting every window of a chunk of sliding windows into its
// strict-upper-triangle CSR network on the device (docs/algorithms.md, "Dynamic
// connectivity", per-window measures). Window c's edges are sliding_edges' out[c·capacity …]
// (counts[c] of them, I < J); each adds one to its row's count, stored at ptr[c·(n+1) + I + 1]
// (sliding_scan turns the counts into row ends), and one to each endpoint's degree deg[c·n + ·].
// ptr and deg are zeroed first. The counts are integers, so the order of the atomics does not
// matter: the host's counting sort (helper/dfc, windowScratch.csr) gives the same numbers.
//
// Launch: grid (blocks, count), block 256; blocks stride over the window's edges.
#include "common.cuh"

extern "C" __global__ void __launch_bounds__(256)
sliding_rows(const Edge* __restrict__ out, const unsigned long long* __restrict__ counts, long long capacity, long long n,
             unsigned long long* __restrict__ ptr, unsigned int* __restrict__ deg) {
    const long long c = blockIdx.y;
    const long long m = (long long)counts[c];
    const Edge* e = out + c * capacity;
    unsigned long long* p = ptr + c * (n + 1) + 1;
    unsigned int* dg = deg + c * n;
    for (long long q = (long long)blockIdx.x * 256 + threadIdx.x; q < m; q += (long long)gridDim.x * 256) {
        const Edge x = e[q];
        atomicAdd(p + x.i, 1ULL);
        atomicAdd(dg + x.i, 1u);
        atomicAdd(dg + x.j, 1u);
    }
}
