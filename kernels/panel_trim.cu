// panel_trim: the one-pass density mode's trim of one row panel (fc.SelectableRows.Trim),
// counting step. Row r's kept edges are keys[start[r] .. start[r] + deg[r]) (j << 32 |
// float32 bits of v, panel_gather's layout). Each is classified against the driver's bin
// cuts: v ≥ keep stays in the row (kept[r] counts them; NaN keep keeps none), hold ≤ v < keep
// is the boundary bin and is appended to held as the Edge (i0 + r, j, v), v < hold is the
// surplus the sampled bound let through and is dropped. The keys are not moved here:
// panel_compact does that once the new row starts are known.
//
// Launch: grid ceil(h/8), block 256 (one warp per row, 32 keys at a time). held_count keeps
// counting past held_cap so the host learns the room a retry needs.
#include "common.cuh"

extern "C" __global__ void __launch_bounds__(256)
panel_trim(const unsigned long long* __restrict__ keys, const unsigned int* __restrict__ start,
           const unsigned int* __restrict__ deg, long long h, long long i0, double hold, double keep,
           unsigned int* __restrict__ kept, Edge* __restrict__ held, unsigned long long* __restrict__ held_count,
           unsigned long long held_cap) {
    const long long r = (long long)blockIdx.x * 8 + (threadIdx.x >> 5);
    const int lane = threadIdx.x & 31;
    if (r >= h) return;
    const float fh = (float)hold, fk = (float)keep;  // both are float32 values: exact
    const unsigned long long* row = keys + start[r];
    const unsigned int d = deg[r];
    unsigned int c = 0;
    for (unsigned int q0 = 0; q0 < d; q0 += 32) {
        const unsigned int q = q0 + lane;
        bool stay = false, bound = false;
        unsigned long long key = 0;
        if (q < d) {
            key = row[q];
            const float v = __uint_as_float((unsigned int)key);
            stay = v >= fk;
            bound = !stay && v >= fh;
        }
        c += __popc(__ballot_sync(0xffffffffu, stay));
        append_edge(bound, (unsigned int)(i0 + r), (unsigned int)(key >> 32), __uint_as_float((unsigned int)key),
                    held, held_count, held_cap);
    }
    if (lane == 0) kept[r] = c;
}
