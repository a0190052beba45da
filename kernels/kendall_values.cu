// kendall_values: one block pair of Kendall τ-b (fc.KendallTau of the exact popcount dot
// product) written densely to device memory, V[(i−i0)·ldv + (j−j0)] = τ_ij (|τ_ij| when abs),
// NaN for pairs the block does not count; read by topk_select for the per-node top-K mode.
//
// Launch: grid (ceil((j1−j0)/64), ceil((i1−i0)/64)), block 256, static shared memory 34 KiB (KendallShared).
#include "common.cuh"
#include "kendall_tile.cuh"

extern "C" __global__ void __launch_bounds__(PC_THREADS)
kendall_values(const unsigned int* __restrict__ P, const unsigned int* __restrict__ N,
               const long long* __restrict__ nonzero, const long long* __restrict__ positives,
              long long ldw, long long pairs, long long use_mma,
               long long i0, long long i1, long long j0, long long j1, long long flags,
               float* __restrict__ V, long long ldv) {
    const BlockPair bp = {i0, i1, j0, j1};
    const long long r0 = i0 + (long long)blockIdx.y * PC_TM;
    const long long c0 = j0 + (long long)blockIdx.x * PC_TM;
    __shared__ KendallShared s;
    int dot[4][4];
    kendall_tile(P, N, nonzero, positives, ldw, pairs, use_mma != 0, i1, j1, r0, c0, s, dot);
#pragma unroll
    for (int m = 0; m < 4; ++m) {
#pragma unroll
        for (int n = 0; n < 4; ++n) {
            const long long i = r0 + kendall_row(use_mma != 0, m, n);
            const long long j = c0 + kendall_col(use_mma != 0, m, n);
            if (i < i1 && j < j1)
                V[(i - i0) * ldv + (j - j0)] = pair_counts(bp, i, j)
                    ? connection_value(kendall_tau(dot[m][n], nonzero[i], nonzero[j]), flags)
                    : __int_as_float(0x7fc00000);
        }
    }
}
