// panel_compact: the one-pass density mode's trim of one row panel, moving step. Row r's
// keys[start[r] .. start[r] + deg[r]) that stay (value ≥ keep, the test panel_trim counted)
// are written in order to out[to[r] ..), to the exclusive prefix sum of panel_trim's counts:
// the rows stay sorted by column and the panel contiguous, as panel_gather left it.
//
// Launch: grid ceil(h/8), block 256 (one warp per row; a ballot and a popcount give each
// staying key its place among the 32).
extern "C" __global__ void __launch_bounds__(256)
panel_compact(const unsigned long long* __restrict__ keys, const unsigned int* __restrict__ start,
              const unsigned int* __restrict__ deg, long long h, double keep, const unsigned int* __restrict__ to,
              unsigned long long* __restrict__ out) {
    const long long r = (long long)blockIdx.x * 8 + (threadIdx.x >> 5);
    const int lane = threadIdx.x & 31;
    if (r >= h) return;
    const float fk = (float)keep;
    const unsigned long long* row = keys + start[r];
    unsigned long long* dst = out + to[r];
    const unsigned int d = deg[r];
    unsigned int at = 0;
    for (unsigned int q0 = 0; q0 < d; q0 += 32) {
        const unsigned int q = q0 + lane;
        unsigned long long key = 0;
        bool stay = false;
        if (q < d) {
            key = row[q];
            stay = __uint_as_float((unsigned int)key) >= fk;
        }
        const unsigned int m = __ballot_sync(0xffffffffu, stay);
        if (stay) dst[at + __popc(m & ((1u << lane) - 1u))] = key;
        at += __popc(m);
    }
}
