// components_hook: the connected components of one row panel's kept edges merged into the
// union–find forest parent[] (ECL-CC, Jaiganesh & Burtscher 2018): for every edge (i, j) of
// row r = i − i0 (keys[start[r] .. start[r] + deg[r]), j in the key's high 32 bits) the
// roots of i and j are found with path halving and the larger root is hooked under the
// smaller by compare-and-swap; a failed swap returns the root's new, smaller parent and the
// hook is retried from there. parent[v] ≤ v holds throughout, so no cycle can form, and the
// forest's components are the graph's whatever the order of the hooks. Path-halving writes
// race benignly (each writes a node of the same tree, never larger than the one it
// replaces); parent is read through volatile so a thread sees the other threads' hooks.
//
// Launch: grid ceil(h/8), block 256 (one warp per row, a lane per edge). parent must hold a
// forest over all n nodes (components_init, then any number of components_hook launches);
// components_flatten then makes every entry its root.
__device__ __forceinline__ unsigned int cc_root(volatile unsigned int* parent, unsigned int v) {
    unsigned int cur = parent[v];
    if (cur != v) {
        unsigned int prev = v, next;
        while (cur > (next = parent[cur])) {
            parent[prev] = next;  // path halving
            prev = cur;
            cur = next;
        }
    }
    return cur;
}

extern "C" __global__ void __launch_bounds__(256)
components_hook(const unsigned long long* __restrict__ keys, const unsigned int* __restrict__ start,
                const unsigned int* __restrict__ deg, long long h, long long i0, unsigned int* parent) {
    const long long r = (long long)blockIdx.x * 8 + (threadIdx.x >> 5);
    const int lane = threadIdx.x & 31;
    if (r >= h) return;
    volatile unsigned int* vp = parent;
    const unsigned long long* row = keys + start[r];
    const unsigned int d = deg[r];
    const unsigned int i = (unsigned int)(i0 + r);
    for (unsigned int q = lane; q < d; q += 32) {
        const unsigned int j = (unsigned int)(row[q] >> 32);
        unsigned int a = cc_root(vp, i), b = cc_root(vp, j);
        while (a != b) {
            const unsigned int hi = a > b ? a : b, lo = a > b ? b : a;
            const unsigned int got = atomicCAS(parent + hi, hi, lo);
            if (got == hi) break;  // hooked
            // hi was hooked meanwhile under got < hi: continue from the new parent
            if (a == hi) a = cc_root(vp, got); else b = cc_root(vp, got);
        }
    }
}
