// panel_degrees: the kept edges of each row of a row panel, deg[r] = Σ_tc cnt[r][tc] over the
// panel's ldt tile columns (rows_tile.cuh tables; columns past the last tile are zero).
//
// Launch: grid ceil(h/8), block 256 (one warp per row). ldt is a multiple of 4.
extern "C" __global__ void __launch_bounds__(256)
panel_degrees(const unsigned char* __restrict__ cnt, long long ldt, long long h, unsigned int* __restrict__ deg) {
    const long long r = (long long)blockIdx.x * 8 + (threadIdx.x >> 5);
    const int lane = threadIdx.x & 31;
    if (r >= h) return;
    const uchar4* row = reinterpret_cast<const uchar4*>(cnt + r * ldt);
    unsigned int sum = 0;
    for (long long q = lane; q < ldt / 4; q += 32) {
        const uchar4 c = row[q];
        sum += (unsigned int)c.x + c.y + c.z + c.w;
    }
    sum = __reduce_add_sync(0xffffffffu, sum);
    if (lane == 0) deg[r] = sum;
}
