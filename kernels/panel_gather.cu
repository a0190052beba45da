// panel_gather: a row panel's kept edges in CSR order. Row r's edges are the tiles' segments
// (rows_tile.cuh: cnt[r][tc] keys from stage[off[r][tc]]) concatenated in tile-column order,
// written from out[start[r]] on; tiles cover increasing column ranges and each segment is
// increasing, so every row comes out sorted by column.
//
// Launch: grid ceil(h/8), block 256 (one warp per row; lanes take 32 tile columns at a time,
// an exclusive warp scan of their counts gives each segment's place).
extern "C" __global__ void __launch_bounds__(256)
panel_gather(const unsigned char* __restrict__ cnt, const unsigned int* __restrict__ off, long long ldt, long long h,
             const unsigned int* __restrict__ start, const unsigned long long* __restrict__ stage,
             unsigned long long* __restrict__ out) {
    const long long r = (long long)blockIdx.x * 8 + (threadIdx.x >> 5);
    const int lane = threadIdx.x & 31;
    if (r >= h) return;
    unsigned long long at = start[r];
    for (long long t0 = 0; t0 < ldt; t0 += 32) {
        const long long tc = t0 + lane;
        const unsigned int c = tc < ldt ? cnt[r * ldt + tc] : 0u;
        if (__ballot_sync(0xffffffffu, c != 0) == 0) continue;
        unsigned int x = c;
#pragma unroll
        for (int d = 1; d < 32; d <<= 1) {
            const unsigned int y = __shfl_up_sync(0xffffffffu, x, d);
            if (lane >= d) x += y;
        }
        if (c) {
            const unsigned long long* src = stage + off[r * ldt + tc];
            unsigned long long* dst = out + at + (x - c);
            for (unsigned int k = 0; k < c; ++k) dst[k] = src[k];
        }
        at += __shfl_sync(0xffffffffu, x, 31);
    }
}
