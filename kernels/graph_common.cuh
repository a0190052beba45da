// graph_common.cuh: helpers shared by the graph-analytics kernels (csr_products,
// triangle_counts, msbfs_*, rewire_*, csr_*): the 64-bit mixer behind every hash and random
// draw, and the edge key of the rewiring's hash table. Included by the kernels; not a kernel.
#ifndef HUBSCOPE_GRAPH_COMMON_CUH
#define HUBSCOPE_GRAPH_COMMON_CUH

// EDGE_EMPTY marks a free slot of the rewiring's edge table; EDGE_OLD is the value of a slot
// holding an edge of the network before the round, EDGE_FREE that of a proposed edge nobody
// has claimed yet (claims are proposal indices, always smaller).
#define EDGE_EMPTY 0xffffffffffffffffULL
#define EDGE_OLD 0xfffffffeU
#define EDGE_FREE 0xffffffffU

// mix64 is SplitMix64's finaliser (Steele, Lea & Flood 2014): a bijection of 64-bit words whose
// output bits all depend on all input bits.
__device__ __forceinline__ unsigned long long mix64(unsigned long long z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

// edge_key packs an undirected edge as min << 32 | max.
__device__ __forceinline__ unsigned long long edge_key(unsigned int a, unsigned int b) {
    return a < b ? ((unsigned long long)a << 32 | b) : ((unsigned long long)b << 32 | a);
}

#endif
