// csr_scatter: the adjacency lists of an undirected edge list (eu[t], ev[t]) whose degrees are
// known: cursor (unsigned 64-bit) starts as a copy of the CSR offsets and each edge takes the
// next free entry of both its endpoints' rows. Rows come out unsorted; csr_sort_rows sorts them.
//
// Launch: grid ceil(m/256), block 256.
extern "C" __global__ void __launch_bounds__(256)
csr_scatter(const unsigned int* __restrict__ eu, const unsigned int* __restrict__ ev, long long m,
            unsigned long long* cursor, int* __restrict__ adj) {
    const long long t = (long long)blockIdx.x * 256 + threadIdx.x;
    if (t >= m) return;
    const unsigned int a = eu[t], b = ev[t];
    adj[atomicAdd(cursor + a, 1ULL)] = (int)b;
    adj[atomicAdd(cursor + b, 1ULL)] = (int)a;
}
