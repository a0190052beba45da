// group_edges: one block pair of the group-mean Fisher z network (group_tile.cuh) with the
// threshold and compaction fused into the epilogue, as correlation_edges does for one scan:
// pairs with r̄ (or |r̄|) > t (≥ t when inclusive) are appended to out with their value.
//
// Launch: grid (ceil((j1−j0)/128), ceil((i1−i0)/TM)), block 256, dynamic shared memory
// sizeof(GroupShared) with TM = 128 (units 0–4), sizeof(GroupWideShared<GW_STAGES, GW_SUB>) with
// TM = 256 (units 5–7). ld is one subject's row length (a multiple of 8; of 16 halves for
// units 2–7), K its time points (units 4, 5, 7: the offset of the fragment-ordered planes), S the subjects, unit the product
// (group_tile.cuh).
// *count must be zero before the launch; afterwards it holds the number of surviving pairs,
// which may exceed capacity (then the host retries, as for correlation_edges).
#include "common.cuh"
#include "group_tile.cuh"

extern "C" __global__ void __launch_bounds__(CT_THREADS, 1)
group_edges(const float* __restrict__ U, const float* __restrict__ Lo, long long ld, long long K, long long unit,
            long long S, long long i0, long long i1, long long j0, long long j1, double threshold, long long flags,
            Edge* __restrict__ out, unsigned long long* __restrict__ count, unsigned long long capacity) {
    const BlockPair bp = {i0, i1, j0, j1};
    extern __shared__ __align__(16) unsigned char group_smem[];
    if (unit >= GROUP_UNIT_WIDE) {
        const long long r0 = i0 + (long long)blockIdx.y * GW_TM, c0 = j0 + (long long)blockIdx.x * GW_TN;
        if (tile_below_diagonal(bp, r0, c0, GW_TN)) return;
        const float* rbar = group_wide(U, Lo, ld, K, unit, S, r0, c0, group_smem);
#pragma unroll 4
        for (int k = 0; k < GW_SLOTS; ++k) {
            const long long i = r0 + gw_row(k), j = c0 + gw_col(k);
            const float v = connection_value(rbar[k * 256 + threadIdx.x], flags);
            const bool pass = pair_counts(bp, i, j) && passes_threshold(v, threshold, flags);
            append_edge(pass, (unsigned int)i, (unsigned int)j, v, out, count, capacity);
        }
        return;
    }
    long long r0, c0;
    group_tile_origin(i0, j0, r0, c0);
    if (tile_below_diagonal(bp, r0, c0, CT_TM)) return;
    GroupShared& s = *reinterpret_cast<GroupShared*>(group_smem);
    float acc[8][8];
    group_tile(U, Lo, ld, K, unit, S, r0, c0, s, acc);
#pragma unroll
    for (int m = 0; m < 8; ++m) {
        const long long i = r0 + group_row(unit, m);
#pragma unroll
        for (int n = 0; n < 8; ++n) {
            const long long j = c0 + group_col(unit, n);
            const float v = connection_value(acc[m][n], flags);
            const bool pass = pair_counts(bp, i, j) && passes_threshold(v, threshold, flags);
            append_edge(pass, (unsigned int)i, (unsigned int)j, v, out, count, capacity);
        }
    }
}
