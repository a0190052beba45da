// msbfs_level: one level d of a batch of up to 64·W breadth-first searches (MS-BFS, Then et al.
// 2014; see graph.ShortestPaths). Bottom-up (pushed = 0; Beamer et al. 2012, in MS-BFS form,
// Then et al. §4.2): every node u still missing some active search ORs the visit masks (the
// searches that reached a node at level d−1) of its neighbours, stopping once nothing active
// is missing. After a top-down step (pushed = 1, msbfs_push) next[u] already holds the
// searches pushed to u and no row is read. Either way the searches new at u, next[u] =
// acc & ~seen[u], are the pairs (source, u) at distance d; seen[u] takes them at once (only u's
// warp touches seen[u]); bottom-up writes next for every node (0 where nothing is new), so it
// becomes the next level's visit as it stands.
//
// active[k] has a bit for every search of word k whose frontier was not empty after level
// d−1 (the OR of that level's new masks; the sources' own bits before level 1): a search whose
// frontier emptied — a source in a small component, or one whose eccentricity was reached —
// can reach nobody, so a node holding every active search is complete for this level even if
// it never gets the others. The new masks of this level are ORed into activeNext (zeroed by
// the caller). stats (zeroed by the caller) receives [0] the new (source, node) pairs, [1] the
// nodes with a new search (the next frontier, n_f), [2] the sum of their degrees (its edges,
// m_f) and [3] the sum of the degrees of the nodes still missing an active search (the
// unexplored edges, m_u): the host's direction choice for the next level (Beamer et al.'s
// heuristic, docs/algorithms.md "Graph analytics on the GPU"). counts, when not null, gets the
// number per source of the batch (the sampled estimator's per-source sums, msbfs_fold).
//
// Masks are W words per node, node-major; W divides 32. A warp takes one node: lane l reads
// word l % W of the neighbour in edge slot l / W, so each neighbour's masks are one coalesced
// read.
//
// Launch: any grid (warps stride over the nodes), block 256; counts holds 64·W entries.
extern "C" __global__ void __launch_bounds__(256)
msbfs_level(const long long* __restrict__ off, const int* __restrict__ adj, long long n, long long w,
            const unsigned long long* __restrict__ visit, unsigned long long* __restrict__ next,
            unsigned long long* __restrict__ seen, const unsigned long long* __restrict__ active,
            unsigned long long* activeNext, unsigned long long* stats, unsigned int* counts, long long pushed) {
    __shared__ unsigned int perSource[1024];
    __shared__ unsigned long long blockStats[4];
    __shared__ unsigned long long blockActive[16];
    const int W = (int)w;
    if (counts) {
        for (int k = threadIdx.x; k < 64 * W; k += 256) perSource[k] = 0;
    }
    if (threadIdx.x < 4) blockStats[threadIdx.x] = 0;
    if (threadIdx.x < 16) blockActive[threadIdx.x] = 0;
    __syncthreads();
    const int lane = threadIdx.x & 31;
    const int word = lane % W, slot = lane / W, slots = 32 / W;
    const unsigned long long act = active[word];
    unsigned long long found = 0, frontier = 0, frontierEdges = 0, unexplored = 0, grown = 0;
    const long long warps = (long long)gridDim.x * 8;
    for (long long u = (long long)blockIdx.x * 8 + (threadIdx.x >> 5); u < n; u += warps) {
        const unsigned long long su = seen[u * W + word];
        const long long b = off[u], e = off[u + 1];
        unsigned long long acc = 0;
        if (pushed) {
            acc = next[u * W + word];
        } else if (!__all_sync(0xffffffffu, (su & act) == act)) {
            for (long long p0 = b; p0 < e; p0 += slots) {
                const long long p = p0 + slot;
                if (p < e) acc |= visit[(long long)adj[p] * W + word];
                for (int s = W; s < 32; s <<= 1) acc |= __shfl_xor_sync(0xffffffffu, acc, s);
                if (__all_sync(0xffffffffu, ((acc | su) & act) == act)) break;
            }
        }
        const unsigned long long nw = acc & ~su;
        const bool isNew = __any_sync(0xffffffffu, nw != 0);
        const bool missing = __any_sync(0xffffffffu, ((su | nw) & act) != act);
        if (lane == 0) {
            if (isNew) {
                frontier++;
                frontierEdges += (unsigned long long)(e - b);
            }
            if (missing) unexplored += (unsigned long long)(e - b);
        }
        if (slot == 0) {
            if (!pushed) next[u * W + word] = nw;
            if (nw) {
                seen[u * W + word] = su | nw;
                found += __popcll(nw);
                grown |= nw;
                if (counts) {
                    for (unsigned long long x = nw; x; x &= x - 1) atomicAdd(perSource + word * 64 + (__ffsll((long long)x) - 1), 1u);
                }
            }
        }
    }
    for (int s = 16; s > 0; s >>= 1) found += __shfl_xor_sync(0xffffffffu, found, s);
    if (lane == 0) {
        if (found) atomicAdd(&blockStats[0], found);
        if (frontier) {
            atomicAdd(&blockStats[1], frontier);
            atomicAdd(&blockStats[2], frontierEdges);
        }
        if (unexplored) atomicAdd(&blockStats[3], unexplored);
    }
    if (slot == 0 && grown) atomicOr(&blockActive[word], grown);
    __syncthreads();
    if (threadIdx.x < 4 && blockStats[threadIdx.x]) atomicAdd(stats + threadIdx.x, blockStats[threadIdx.x]);
    if (threadIdx.x < W && blockActive[threadIdx.x]) atomicOr(activeNext + threadIdx.x, blockActive[threadIdx.x]);
    if (counts) {
        for (int k = threadIdx.x; k < 64 * W; k += 256) {
            if (perSource[k]) atomicAdd(counts + k, perSource[k]);
        }
    }
}
