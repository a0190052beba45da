// sliding_scan: every window's row counts (sliding_rows, ptr[c·(n+1) + 1 + r]) become its CSR
// row ends in place — an inclusive prefix sum, so ptr[c·(n+1) + r] is where row r begins
// (ptr[c·(n+1)] stays 0) — and rowmax[c] the window's longest row, which bounds
// sliding_sort's work (the host leaves windows with longer rows to its own counting sort).
//
// Launch: grid count (a block per window), block 1024. As panel_scan: each thread scans a run
// of ceil(n/1024) consecutive rows, then the run totals are scanned across the block (warp
// shuffles, then the 32 warp totals).
extern "C" __global__ void __launch_bounds__(1024)
sliding_scan(unsigned long long* __restrict__ ptr, long long n, unsigned int* __restrict__ rowmax) {
    __shared__ unsigned long long warp_sum[32];
    __shared__ unsigned int warp_max[32];
    unsigned long long* p = ptr + (long long)blockIdx.x * (n + 1) + 1;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const long long per = (n + 1023) / 1024;
    const long long a = tid * per, e = min(n, a + per);
    unsigned long long run = 0;
    unsigned int most = 0;
    for (long long r = a; r < e; ++r) {
        run += p[r];
        most = max(most, (unsigned int)p[r]);
    }
    unsigned long long x = run;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        const unsigned long long y = __shfl_up_sync(0xffffffffu, x, d);
        if (lane >= d) x += y;
    }
#pragma unroll
    for (int d = 16; d > 0; d >>= 1) most = max(most, __shfl_xor_sync(0xffffffffu, most, d));
    if (lane == 31) warp_sum[warp] = x;
    if (lane == 0) warp_max[warp] = most;
    __syncthreads();
    if (warp == 0) {
        const unsigned long long w = warp_sum[lane];
        unsigned long long z = w;
#pragma unroll
        for (int d = 1; d < 32; d <<= 1) {
            const unsigned long long y = __shfl_up_sync(0xffffffffu, z, d);
            if (lane >= d) z += y;
        }
        warp_sum[lane] = z - w;
        unsigned int m = warp_max[lane];
#pragma unroll
        for (int d = 16; d > 0; d >>= 1) m = max(m, __shfl_xor_sync(0xffffffffu, m, d));
        if (lane == 0) rowmax[blockIdx.x] = m;
    }
    __syncthreads();
    unsigned long long at = warp_sum[warp] + x - run;
    for (long long r = a; r < e; ++r) {
        at += p[r];
        p[r] = at;
    }
}
