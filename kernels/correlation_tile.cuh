// correlation_tile.cuh: the Pearson/Spearman tile the four correlation kernels share, so the
// passes of a threshold compute bit-identical values: the error-compensated 3×TF32 tensor-core
// product (tf32x3_tile.cuh, use_tc ≠ 0, planes Hi = tf32(u) and Lo = tf32(u − Hi)) or the fp32
// SIMT product (sgemm_tile.cuh, use_tc = 0, U = u; Lo unused). Both tiles are 128 × 128 with
// 256 threads and 8 × 8 accumulators per thread; corr_row / corr_col place them.
#ifndef HUBSCOPE_CORRELATION_TILE_CUH
#define HUBSCOPE_CORRELATION_TILE_CUH

#include "sgemm_tile.cuh"
#include "tf32x3_tile.cuh"

#define CT_TM 128
#define CT_THREADS 256

union CorrShared {
    SgemmShared simt;
    Tf32x3Shared tc;
};

// corr_tile computes acc[m][n] for the pair (r0 + corr_row(m), c0 + corr_col(n)); it passes
// at least one __syncthreads after its start (K ≥ 8).
__device__ __forceinline__ void corr_tile(const float* __restrict__ U, const float* __restrict__ Lo, long long ld,
                                          long long K, bool use_tc, long long r0, long long c0, CorrShared& s,
                                          float (&acc)[8][8]) {
    if (use_tc) {
        tf32x3_tile(U, Lo, ld, K, r0, c0, s.tc, acc);
    } else {
        sgemm_tile(U, ld, K, r0, c0, s.simt, acc);
    }
}

__device__ __forceinline__ int corr_row(bool use_tc, int m) { return use_tc ? tc_row(m) : sg_row(m); }
__device__ __forceinline__ int corr_col(bool use_tc, int n) { return use_tc ? tc_col(n) : sg_col(n); }

#endif
