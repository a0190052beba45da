// msbfs_sources: marks the sources of one multi-source BFS batch (graph.ShortestPaths' MS-BFS,
// Then et al. PVLDB 8(4) 2014): source k of the batch sets bit k%64 of word k/64 of its node's
// W-word masks seen and visit (W words per node, node-major), which the caller has zeroed.
//
// Launch: grid ceil(s/256), block 256.
extern "C" __global__ void __launch_bounds__(256)
msbfs_sources(const int* __restrict__ sources, long long s, long long w, unsigned long long* seen,
              unsigned long long* visit) {
    const long long k = (long long)blockIdx.x * 256 + threadIdx.x;
    if (k >= s) return;
    const long long at = (long long)sources[k] * w + (k >> 6);
    const unsigned long long bit = 1ULL << (k & 63);
    atomicOr(seen + at, bit);
    atomicOr(visit + at, bit);
}
