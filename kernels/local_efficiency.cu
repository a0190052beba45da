// local_efficiency: the pairs at each distance inside node neighbourhoods, for every node's
// local efficiency E_loc,i = Σ_{j≠h ∈ N_i} 1/d_jh / (k_i (k_i − 1)), d_jh the distance within the
// subgraph induced by i's neighbours N_i (Latora & Marchiori 2001; graph.LocalEfficiencies), for
// a simple graph in CSR with sorted rows. Work items (node i, rows [r0, r1) of N_i) are taken
// by the blocks in turn (an atomic counter over items listed by decreasing degree, so a hub's
// rows spread over many blocks and start first). A block builds N_i's induced subgraph as a
// k × k bit matrix A (row j: the neighbours of N_i's j-th node among N_i, by binary search in
// the sorted N_i), then runs the searches from its rows level by level: frontier row s of the
// next level is the OR of A's rows over the frontier of s, less what s has seen. It adds the
// pairs found at distance d to counts[coff[i] + d] (integers). The host sums count_d / d in
// increasing d and divides by k(k − 1), as graph.LocalEfficiencies does, so the values are
// the host's bit for bit.
//
// items[t] = {i, r0, r1, 0}, r1 − r0 ≤ 64; scratch holds maxDeg·W + 3·64·W words per block
// (W = ceil(maxDeg/64)); *next starts at 0.
//
// Launch: any grid, block 256.
extern "C" __global__ void __launch_bounds__(256)
local_efficiency(const long long* __restrict__ off, const int* __restrict__ adj, const int4* __restrict__ items,
                 long long nItems, unsigned int* next, unsigned long long* __restrict__ scratch, long long maxDeg,
                 const long long* __restrict__ coff, unsigned long long* counts) {
    __shared__ unsigned long long found;
    __shared__ long long item;
    const long long maxWords = (maxDeg + 63) / 64;
    unsigned long long* A = scratch + (long long)blockIdx.x * (maxDeg + 3 * 64) * maxWords;
    unsigned long long* seen = A + maxDeg * maxWords;
    unsigned long long* front = seen + 64 * maxWords;
    unsigned long long* nxt = front + 64 * maxWords;
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    for (;;) {
        if (threadIdx.x == 0) item = atomicAdd(next, 1u);
        __syncthreads();
        const long long t = item;
        if (t >= nItems) break;  // uniform across the block
        const int4 it = items[t];
        const int i = it.x, r0 = it.y, rows = it.z - it.y;
        const long long b = off[i];
        const int k = (int)(off[i + 1] - b);
        const int kw = (k + 63) / 64;
        for (int c = threadIdx.x; c < k * kw; c += 256) A[c] = 0;
        for (int c = threadIdx.x; c < rows * kw; c += 256) {
            const int s = r0 + c / kw, w = c % kw;
            const unsigned long long self = (s >> 6) == w ? 1ULL << (s & 63) : 0;
            seen[c] = self;
            front[c] = self;
        }
        __syncthreads();
        // A: warp per row j, lanes over the neighbours of N_i's j-th node.
        for (int j = warp; j < k; j += 8) {
            const int v = adj[b + j];
            for (long long p = off[v] + lane, e = off[v + 1]; p < e; p += 32) {
                const int u = adj[p];
                int lo = 0, hi = k;
                while (lo < hi) {
                    const int mid = (lo + hi) >> 1;
                    if (adj[b + mid] < u) lo = mid + 1; else hi = mid;
                }
                if (lo < k && adj[b + lo] == u) atomicOr(A + (long long)j * kw + (lo >> 6), 1ULL << (lo & 63));
            }
        }
        __syncthreads();
        unsigned long long* f = front;
        unsigned long long* g = nxt;
        for (int d = 1;; d++) {
            if (threadIdx.x == 0) found = 0;
            __syncthreads();
            unsigned long long mine = 0;
            for (int c = threadIdx.x; c < rows * kw; c += 256) {
                const int q = c / kw, w = c - q * kw;
                const unsigned long long* fs = f + (long long)q * kw;
                unsigned long long acc = 0;
                for (int x = 0; x < kw; x++) {
                    for (unsigned long long bitsLeft = fs[x]; bitsLeft; bitsLeft &= bitsLeft - 1) {
                        const int h = x * 64 + (__ffsll((long long)bitsLeft) - 1);
                        acc |= A[(long long)h * kw + w];
                    }
                }
                const unsigned long long nw = acc & ~seen[c];
                g[c] = nw;
                seen[c] |= nw;
                mine += __popcll(nw);
            }
            if (mine) atomicAdd(&found, mine);
            __syncthreads();
            const unsigned long long fd = found;
            if (fd == 0) break;  // uniform
            if (threadIdx.x == 0) atomicAdd(counts + coff[i] + d, fd);
            unsigned long long* tmp = f;
            f = g;
            g = tmp;
            __syncthreads();
        }
        __syncthreads();
    }
}
