// msbfs_push: the top-down step of one MS-BFS level (Then et al. 2014, Listing 2; chosen for
// the sparse first and last levels by Beamer et al.'s 2012 heuristic, docs/algorithms.md
// "Graph analytics on the GPU"): every frontier node v (visit[v] ≠ 0) pushes its searches to
// each neighbour u that has not seen them, atomicOr(next[u], visit[v] & ~seen[u]). next is
// zeroed by the caller and seen is not written here, so next[u] ends as exactly the searches
// new at u, whatever the order of the pushes; msbfs_level (pushed = 1) then settles them.
//
// Masks are W words per node, node-major; W divides 32. A warp takes one node: lane l holds
// word l % W of v's visit mask and handles edge slot l / W, so each neighbour's masks are one
// coalesced read. Nodes outside the frontier cost one read of their masks.
//
// Launch: any grid (warps stride over the nodes), block 256.
extern "C" __global__ void __launch_bounds__(256)
msbfs_push(const long long* __restrict__ off, const int* __restrict__ adj, long long n, long long w,
           const unsigned long long* __restrict__ visit, const unsigned long long* __restrict__ seen,
           unsigned long long* next) {
    const int W = (int)w;
    const int lane = threadIdx.x & 31;
    const int word = lane % W, slot = lane / W, slots = 32 / W;
    const long long warps = (long long)gridDim.x * 8;
    for (long long v = (long long)blockIdx.x * 8 + (threadIdx.x >> 5); v < n; v += warps) {
        const unsigned long long vis = visit[v * W + word];
        if (__all_sync(0xffffffffu, vis == 0)) continue;
        if (!vis) continue;
        const long long e = off[v + 1];
        for (long long p = off[v] + slot; p < e; p += slots) {
            const long long at = (long long)adj[p] * W + word;
            const unsigned long long nw = vis & ~seen[at];
            if (nw) atomicOr(next + at, nw);
        }
    }
}
