// sliding_triangles: t[c·n + v] = the triangles through node v in window c's network, from its
// strict-upper-triangle CSR with sorted rows (sliding_sort's idx at base[c], row starts ptr).
// Warp i takes row i; lane q takes i's neighbours j in turn and merges the part of row i after
// j with row j (all above j), so each triangle i < j < k is found once, from i at (j, k), and
// adds one to each corner — the count helper/dfc's windowScratch.meanClustering makes on the
// host, integers, so C_p from them is the host's to the last bit. t is zeroed first.
//
// Launch: grid (blocks, count), block 256 (8 warps); warps stride over the rows.
extern "C" __global__ void __launch_bounds__(256)
sliding_triangles(const unsigned long long* __restrict__ ptr, long long n, const unsigned int* __restrict__ idx,
                  const unsigned long long* __restrict__ base, unsigned int* __restrict__ t) {
    const long long c = blockIdx.y;
    const unsigned long long* p = ptr + c * (n + 1);
    const unsigned int* ix = idx + base[c];
    unsigned int* tc = t + c * n;
    const int lane = threadIdx.x & 31;
    for (long long i = (long long)blockIdx.x * 8 + (threadIdx.x >> 5); i < n; i += (long long)gridDim.x * 8) {
        const long long ie = (long long)p[i + 1];
        unsigned int mine = 0;
        for (long long q = (long long)p[i] + lane; q < ie; q += 32) {
            const unsigned int j = ix[q];
            long long a = q + 1, b = (long long)p[j];
            const long long be = (long long)p[j + 1];
            unsigned int found = 0;
            while (a < ie && b < be) {
                const unsigned int x = ix[a], y = ix[b];
                if (x < y) {
                    a++;
                } else if (x > y) {
                    b++;
                } else {
                    atomicAdd(tc + x, 1u);
                    found++;
                    a++;
                    b++;
                }
            }
            if (found) atomicAdd(tc + j, found);
            mine += found;
        }
#pragma unroll
        for (int s = 16; s > 0; s >>= 1) mine += __shfl_xor_sync(0xffffffffu, mine, s);
        if (lane == 0 && mine) atomicAdd(tc + i, mine);
    }
}
