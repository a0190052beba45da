// group_values: one block pair of the group-mean Fisher z network (group_tile.cuh) written
// densely to device memory for topk_select (the k-nearest-neighbour mode), as
// correlation_values does for one scan: V[(i−i0)·ldv + (j−j0)] = r̄_ij (|r̄_ij| when abs), NaN
// for pairs the block does not count.
//
// Launch: grid (ceil((j1−j0)/128), ceil((i1−i0)/TM)), block 256, dynamic shared memory
// sizeof(GroupShared) with TM = 128 (units 0–4), sizeof(GroupWideShared<GW_STAGES, GW_SUB>) with
// TM = 256 (units 5–7).
// ldv ≥ j1 − j0.
#include "common.cuh"
#include "group_tile.cuh"

extern "C" __global__ void __launch_bounds__(CT_THREADS, 1)
group_values(const float* __restrict__ U, const float* __restrict__ Lo, long long ld, long long K, long long unit,
             long long S, long long i0, long long i1, long long j0, long long j1, long long flags,
             float* __restrict__ V, long long ldv) {
    const BlockPair bp = {i0, i1, j0, j1};
    extern __shared__ __align__(16) unsigned char group_smem[];
    if (unit >= GROUP_UNIT_WIDE) {
        const long long r0 = i0 + (long long)blockIdx.y * GW_TM, c0 = j0 + (long long)blockIdx.x * GW_TN;
        const float* rbar = group_wide(U, Lo, ld, K, unit, S, r0, c0, group_smem);
#pragma unroll 4
        for (int k = 0; k < GW_SLOTS; ++k) {
            const long long i = r0 + gw_row(k), j = c0 + gw_col(k);
            if (i < i1 && j < j1)
                V[(i - i0) * ldv + (j - j0)] =
                    pair_counts(bp, i, j) ? connection_value(rbar[k * 256 + threadIdx.x], flags) : __int_as_float(0x7fc00000);
        }
        return;
    }
    long long r0, c0;
    group_tile_origin(i0, j0, r0, c0);
    GroupShared& s = *reinterpret_cast<GroupShared*>(group_smem);
    float acc[8][8];
    group_tile(U, Lo, ld, K, unit, S, r0, c0, s, acc);
#pragma unroll
    for (int m = 0; m < 8; ++m) {
        const long long i = r0 + group_row(unit, m);
#pragma unroll
        for (int n = 0; n < 8; ++n) {
            const long long j = c0 + group_col(unit, n);
            if (i < i1 && j < j1)
                V[(i - i0) * ldv + (j - j0)] = pair_counts(bp, i, j) ? connection_value(acc[m][n], flags) : __int_as_float(0x7fc00000);
        }
    }
}
