// msbfs_level: one level d of a batch of up to 64·W breadth-first searches, bottom-up
// (direction-optimising BFS, Beamer et al. 2012, in MS-BFS form, Then et al. 2014 §4.2; see
// graph.ShortestPaths): every node u still missing some searches ORs the visit masks (the
// searches that reached a node at level d−1) of its neighbours, stopping once nothing is
// missing; the searches new at u, next[u] = acc & ~seen[u] & full, are the pairs (source, u)
// at distance d. seen[u] takes them at once (only u's warp touches seen[u]); next is written
// for every node (0 where nothing is new), so it becomes the next level's visit as it stands.
// total accumulates the number of new (source, node) pairs; counts, when not null, the number
// per source of the batch (the sampled estimator's per-source sums, msbfs_fold).
//
// Masks are W words per node, node-major; W divides 32. A warp takes one node: lane l reads
// word l % W of the neighbour in edge slot l / W, so each neighbour's masks are one coalesced
// read. full[k] has a bit for every source of word k.
//
// Launch: any grid (warps stride over the nodes), block 256; counts holds 64·W entries.
extern "C" __global__ void __launch_bounds__(256)
msbfs_level(const long long* __restrict__ off, const int* __restrict__ adj, long long n, long long w,
            const unsigned long long* __restrict__ visit, unsigned long long* __restrict__ next,
            unsigned long long* __restrict__ seen, const unsigned long long* __restrict__ full,
            unsigned long long* total, unsigned int* counts) {
    __shared__ unsigned int perSource[1024];
    __shared__ unsigned long long blockTotal;
    const int W = (int)w;
    if (counts) {
        for (int k = threadIdx.x; k < 64 * W; k += 256) perSource[k] = 0;
    }
    if (threadIdx.x == 0) blockTotal = 0;
    __syncthreads();
    const int lane = threadIdx.x & 31;
    const int word = lane % W, slot = lane / W, slots = 32 / W;
    const unsigned long long all = full[word];
    unsigned long long found = 0;
    const long long warps = (long long)gridDim.x * 8;
    for (long long u = (long long)blockIdx.x * 8 + (threadIdx.x >> 5); u < n; u += warps) {
        const unsigned long long su = seen[u * W + word];
        unsigned long long acc = 0;
        if (!__all_sync(0xffffffffu, su == all)) {
            const long long e = off[u + 1];
            for (long long p0 = off[u]; p0 < e; p0 += slots) {
                const long long p = p0 + slot;
                if (p < e) acc |= visit[(long long)adj[p] * W + word];
                for (int s = W; s < 32; s <<= 1) acc |= __shfl_xor_sync(0xffffffffu, acc, s);
                if (__all_sync(0xffffffffu, (acc | su) == all)) break;
            }
        }
        const unsigned long long nw = acc & ~su & all;
        if (slot == 0) {
            next[u * W + word] = nw;
            if (nw) {
                seen[u * W + word] = su | nw;
                found += __popcll(nw);
                if (counts) {
                    for (unsigned long long x = nw; x; x &= x - 1) atomicAdd(perSource + word * 64 + (__ffsll((long long)x) - 1), 1u);
                }
            }
        }
    }
    for (int s = 16; s > 0; s >>= 1) found += __shfl_xor_sync(0xffffffffu, found, s);
    if (lane == 0 && found) atomicAdd(&blockTotal, found);
    __syncthreads();
    if (threadIdx.x == 0 && blockTotal) atomicAdd(total, blockTotal);
    if (counts) {
        for (int k = threadIdx.x; k < 64 * W; k += 256) {
            if (perSource[k]) atomicAdd(counts + k, perSource[k]);
        }
    }
}
