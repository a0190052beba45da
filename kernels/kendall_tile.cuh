// kendall_tile.cuh: the Kendall block-pair tile the three Kendall kernels share. Per CTA it
// picks the exact dot-product form: the tie-free form when every row and column of the tile
// that the block counts has n = M (uniform across the CTA through __syncthreads_and), the
// general one otherwise; and the unit: tensor cores (bmma_tile.cuh, use_mma ≠ 0) or SIMT
// popcounts (popc_tile.cuh). All four give the same integers.
#ifndef HUBSCOPE_KENDALL_TILE_CUH
#define HUBSCOPE_KENDALL_TILE_CUH

#include "bmma_tile.cuh"
#include "popc_tile.cuh"

union KendallShared {
    PopcShared popc;
    BmmaShared bmma;
};

// kendall_tile computes dot[m][n] for the pair (r0 + kendall_row(m, n), c0 + kendall_col(m, n)).
__device__ __forceinline__ void kendall_tile(const unsigned int* __restrict__ P, const unsigned int* __restrict__ N,
                                             const long long* __restrict__ nonzero, const long long* __restrict__ positives,
                                             long long ldw, long long pairs, bool use_mma,
                                             long long i1, long long j1, long long r0, long long c0,
                                             KendallShared& s, int (&dot)[4][4]) {
    const int t = threadIdx.x;
    bool tie_free = true;
    if (t < PC_TM) {
        const long long r = r0 + t;
        tie_free = r >= i1 || nonzero[r] == pairs;
    } else if (t < 2 * PC_TM) {
        const long long c = c0 + t - PC_TM;
        tie_free = c >= j1 || nonzero[c] == pairs;
    }
    tie_free = __syncthreads_and(tie_free);
    if (use_mma) {
        bmma_tile(P, N, positives, ldw, pairs, r0, c0, tie_free, s.bmma, dot);
    } else if (tie_free) {
        popc_tile_no_ties(P, ldw, pairs, r0, c0, s.popc, dot);
    } else {
        popc_tile(P, N, ldw, r0, c0, s.popc, dot);
    }
}

__device__ __forceinline__ int kendall_row(bool use_mma, int m, int n) {
    return use_mma ? bmma_row(m, n) : (threadIdx.x >> 4) * 4 + m;
}
__device__ __forceinline__ int kendall_col(bool use_mma, int m, int n) {
    return use_mma ? bmma_col(m, n) : (threadIdx.x & 15) * 4 + n;
}

#endif
