// panel_scan: exclusive prefix sum start[r] = Σ_{r' < r} deg[r'] of a row panel's degrees, so
// panel_gather knows where each row begins in the panel's edge list.
//
// Launch: grid 1, block 1024. Each thread scans a run of ceil(h/1024) consecutive rows, then
// the run totals are scanned across the block (warp shuffles, then the 32 warp totals).
extern "C" __global__ void __launch_bounds__(1024)
panel_scan(const unsigned int* __restrict__ deg, long long h, unsigned int* __restrict__ start) {
    __shared__ unsigned int warp_sum[32];
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    const long long per = (h + 1023) / 1024;
    const long long a = tid * per, e = min(h, a + per);
    unsigned int run = 0;
    for (long long r = a; r < e; ++r) run += deg[r];
    unsigned int x = run;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        const unsigned int y = __shfl_up_sync(0xffffffffu, x, d);
        if (lane >= d) x += y;
    }
    if (lane == 31) warp_sum[warp] = x;
    __syncthreads();
    if (warp == 0) {
        unsigned int w = warp_sum[lane], z = w;
#pragma unroll
        for (int d = 1; d < 32; d <<= 1) {
            const unsigned int y = __shfl_up_sync(0xffffffffu, z, d);
            if (lane >= d) z += y;
        }
        warp_sum[lane] = z - w;
    }
    __syncthreads();
    unsigned int at = warp_sum[warp] + x - run;
    for (long long r = a; r < e; ++r) {
        start[r] = at;
        at += deg[r];
    }
}
