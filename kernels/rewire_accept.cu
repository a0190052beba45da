// rewire_accept: the second half of a rewiring round (rewire_propose): proposal t is carried
// out when it holds the claims of both its new edges (their slots' values equal t, the smallest
// proposal index that asked for each edge); it rewrites its own two entries of the edge list,
// which no other proposal of the round reads, and counts one accepted swap.
//
// Launch: grid ceil(pairs/256), block 256.
extern "C" __global__ void __launch_bounds__(256)
rewire_accept(unsigned int* __restrict__ eu, unsigned int* __restrict__ ev, long long pairs,
              const unsigned int* __restrict__ vals, const uint4* __restrict__ scratch,
              unsigned long long* accepted) {
    const long long t = (long long)blockIdx.x * 256 + threadIdx.x;
    if (t >= pairs) return;
    const uint4 p = scratch[t];
    if (p.z == 0xffffffffu || vals[p.z] != (unsigned int)t || vals[p.w] != (unsigned int)t) return;
    const unsigned int i = p.x, j = p.y & 0x7fffffffu;
    const unsigned int a = eu[i], b = ev[i];
    unsigned int c = eu[j], d = ev[j];
    if (p.y >> 31) {
        const unsigned int x = c;
        c = d;
        d = x;
    }
    eu[i] = a;
    ev[i] = d;
    eu[j] = c;
    ev[j] = b;
    atomicAdd(accepted, 1ULL);
}
