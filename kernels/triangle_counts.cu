// triangle_counts: t[v] += the number of triangles through v, for a simple undirected graph
// in CSR with sorted rows (graph.Graph). Warp u takes node u; lane q takes u's neighbours
// v > u in turn and intersects the parts of N(u) and N(v) above v by a merge, so each triangle
// u < v < w is found once, by warp u at the pair (v, w), and adds one to each corner. The
// counts are integers: the host's graph.Triangles gives the same numbers.
//
// Launch: grid ceil(n/8), block 256; t (n unsigned 64-bit counters) zeroed first.
extern "C" __global__ void __launch_bounds__(256)
triangle_counts(const long long* __restrict__ off, const int* __restrict__ adj, long long n,
                unsigned long long* __restrict__ t) {
    const long long u = (long long)blockIdx.x * 8 + (threadIdx.x >> 5);
    const int lane = threadIdx.x & 31;
    if (u >= n) return;
    const long long ub = off[u], ue = off[u + 1];
    // first neighbour above u
    long long lo = ub, hi = ue;
    while (lo < hi) {
        const long long mid = (lo + hi) >> 1;
        if (adj[mid] <= u) lo = mid + 1; else hi = mid;
    }
    unsigned long long mine = 0;
    for (long long q = lo + lane; q < ue; q += 32) {
        const int v = adj[q];
        // N(v) above v
        long long a = off[v], b = off[v + 1];
        while (a < b) {
            const long long mid = (a + b) >> 1;
            if (adj[mid] <= v) a = mid + 1; else b = mid;
        }
        const long long ve = off[v + 1];
        long long i = q + 1, j = a;
        unsigned long long c = 0;
        while (i < ue && j < ve) {
            const int x = adj[i], y = adj[j];
            if (x < y) {
                i++;
            } else if (x > y) {
                j++;
            } else {
                atomicAdd(t + x, 1ULL);
                c++;
                i++;
                j++;
            }
        }
        if (c) atomicAdd(t + v, c);
        mine += c;
    }
    for (int s = 16; s > 0; s >>= 1) mine += __shfl_xor_sync(0xffffffffu, mine, s);
    if (lane == 0 && mine) atomicAdd(t + u, mine);
}
