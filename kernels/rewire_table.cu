#include "graph_common.cuh"

// rewire_table: inserts the network's m edges (eu[t], ev[t]) into the open-addressing edge
// table of one round of the parallel Maslov–Sneppen rewiring (rewire_propose): keys zeroed to
// EDGE_EMPTY and vals to EDGE_FREE by the caller; each edge's slot (linear probing from
// mix64(key)) gets its key and the value EDGE_OLD. The edges are distinct, so each takes its
// own slot.
//
// Launch: grid ceil(m/256), block 256; the table (mask + 1 slots, a power of two) at least
// twice as large as the keys it will hold.
extern "C" __global__ void __launch_bounds__(256)
rewire_table(const unsigned int* __restrict__ eu, const unsigned int* __restrict__ ev, long long m,
             unsigned long long* keys, unsigned int* vals, long long mask) {
    const long long t = (long long)blockIdx.x * 256 + threadIdx.x;
    if (t >= m) return;
    const unsigned long long key = edge_key(eu[t], ev[t]);
    for (unsigned long long h = mix64(key) & (unsigned long long)mask;; h = (h + 1) & (unsigned long long)mask) {
        const unsigned long long prev = atomicCAS(keys + h, EDGE_EMPTY, key);
        if (prev == EDGE_EMPTY || prev == key) {
            vals[h] = EDGE_OLD;
            return;
        }
    }
}
