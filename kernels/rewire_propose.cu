#include "graph_common.cuh"

// rewire_propose: the proposals of one round of degree-preserving rewiring by parallel double
// edge swaps with conflict detection (Maslov & Sneppen 2002; docs/algorithms.md, "Random
// networks on the GPU"). A keyed Feistel permutation of the edge indices [0, m) (four rounds
// on 2·half bits, cycle-walking into [0, m)) pairs edges π(2t) and π(2t+1), so no edge is in
// two proposals of a round. Proposal t swaps (a,b), (c,d) — the second oriented by a random
// bit — into (a,d), (c,b). It is refused at once when that makes a self-loop or twice the same
// edge, or when a new edge is already in the network (its table slot holds EDGE_OLD);
// otherwise it claims both new edges' slots with atomicMin of t. rewire_accept then keeps a
// proposal only if it holds both claims, so two proposals never add the same edge and the
// outcome does not depend on the threads' timing: the same key gives the same network.
//
// scratch[t] receives {π(2t), π(2t+1) | flip << 31, slot of (a,d), slot of (c,b)}, the slots
// 0xffffffff when refused.
//
// Launch: grid ceil(pairs/256), block 256; pairs ≤ m/2, m < 2³¹.
__device__ __forceinline__ unsigned int feistel(unsigned int x, int half, unsigned long long key) {
    const unsigned int mask = (1u << half) - 1;
    unsigned int l = x >> half, r = x & mask;
    for (int k = 0; k < 4; k++) {
        const unsigned int f = (unsigned int)mix64(key + 0x9e3779b97f4a7c15ULL * (unsigned long long)(k + 1) + r) & mask;
        const unsigned int t = l ^ f;
        l = r;
        r = t;
    }
    return (l << half) | r;
}

__device__ __forceinline__ unsigned int permute(unsigned int x, unsigned int m, int half, unsigned long long key) {
    do {
        x = feistel(x, half, key);
    } while (x >= m);
    return x;
}

// claim returns the slot of key, its value lowered to t, or 0xffffffff when the key is an edge
// of the network already.
__device__ __forceinline__ unsigned int claim(unsigned long long key, unsigned int t, unsigned long long* keys,
                                              unsigned int* vals, unsigned long long mask) {
    for (unsigned long long h = mix64(key) & mask;; h = (h + 1) & mask) {
        const unsigned long long prev = atomicCAS(keys + h, EDGE_EMPTY, key);
        if (prev == EDGE_EMPTY) {
            atomicMin(vals + h, t);
            return (unsigned int)h;
        }
        if (prev == key) {
            // EDGE_OLD values were written by rewire_table before this kernel; a claimed
            // slot's value only ever decreases from EDGE_FREE, never reaching EDGE_OLD.
            if (((volatile unsigned int*)vals)[h] == EDGE_OLD) return 0xffffffffu;
            atomicMin(vals + h, t);
            return (unsigned int)h;
        }
    }
}

extern "C" __global__ void __launch_bounds__(256)
rewire_propose(const unsigned int* __restrict__ eu, const unsigned int* __restrict__ ev, long long m, long long pairs,
               unsigned long long* keys, unsigned int* vals, long long mask, long long half,
               unsigned long long key, uint4* __restrict__ scratch) {
    const long long t = (long long)blockIdx.x * 256 + threadIdx.x;
    if (t >= pairs) return;
    const unsigned int i = permute((unsigned int)(2 * t), (unsigned int)m, (int)half, key);
    const unsigned int j = permute((unsigned int)(2 * t + 1), (unsigned int)m, (int)half, key);
    const unsigned int flip = (unsigned int)(mix64(~key ^ (unsigned long long)t) >> 63);
    const unsigned int a = eu[i], b = ev[i];
    unsigned int c = eu[j], d = ev[j];
    if (flip) {
        const unsigned int x = c;
        c = d;
        d = x;
    }
    unsigned int s1 = 0xffffffffu, s2 = 0xffffffffu;
    if (a != d && c != b) {
        const unsigned long long k1 = edge_key(a, d), k2 = edge_key(c, b);
        if (k1 != k2) {
            s1 = claim(k1, (unsigned int)t, keys, vals, (unsigned long long)mask);
            if (s1 != 0xffffffffu) {
                s2 = claim(k2, (unsigned int)t, keys, vals, (unsigned long long)mask);
                if (s2 == 0xffffffffu) s1 = 0xffffffffu;
            }
        }
    }
    scratch[t] = make_uint4(i, j | (flip << 31), s1, s2);
}
