// rows_tile.cuh: the row-ordered epilogue of the edge kernels that feed a row panel (the
// device half of fc.RowEmitter). A CTA's kept pairs are written to one contiguous chunk of
// the panel's stage, grouped by tile row and in increasing column within a row, as keys
// (uint64(j) << 32 | float32 bits of w: the packed form fc's assembler uses). Per tile row r
// the CTA records in the panel's tables how many pairs it kept (cnt, ≤ TM) and where they
// start (off), so panel_gather can concatenate the tiles of a panel row in column order with
// no sort: a row's edges come out ordered by j because tiles are visited in column order.
//
// The order inside the chunk is derived from a shared bitmap of the tile (bit c of row r set
// when pair (r, c) is kept), so it does not depend on which thread holds which pair: rank of
// (r, c) = start[r] + popcount of row r's bits left of c.
#ifndef HUBSCOPE_ROWS_TILE_CUH
#define HUBSCOPE_ROWS_TILE_CUH

#include "common.cuh"

// RowTables are a panel's per-(row, tile column) records, row-major with ldt columns.
struct RowTables {
    unsigned char* cnt;  // kept pairs of the row in the tile (0 where the tile kept none: cleared before the pass)
    unsigned int* off;   // their first position in the stage (valid where cnt > 0)
    long long ldt;
};

template <int TM>
struct RowsShared {
    unsigned int bits[TM][TM / 32];
    unsigned int start[TM];
    unsigned int warp_sum[TM / 32];
    unsigned long long base;
    unsigned int total;
};

// rows_clear zeroes the bitmap; it must be followed by a __syncthreads before rows_mark
// (the tile products end with one).
template <int TM>
__device__ __forceinline__ void rows_clear(RowsShared<TM>& s) {
    for (int w = threadIdx.x; w < TM * TM / 32; w += blockDim.x) (&s.bits[0][0])[w] = 0u;
}

// rows_mark records that tile pair (r, c) is kept.
template <int TM>
__device__ __forceinline__ void rows_mark(RowsShared<TM>& s, int r, int c) {
    atomicOr(&s.bits[r][c >> 5], 1u << (c & 31));
}

// rows_reserve (after a __syncthreads following the marks; every thread calls it) counts the
// kept pairs per row, reserves the tile's chunk with one atomic on *count, and writes the
// tables for the rows h0 + r < h (panel-relative row h0 + r) where the row kept a pair. When
// the chunk does not fit capacity nothing is written (the count still grows: the host
// retries the panel with a larger stage). Returns with s.base and s.start valid.
template <int TM>
__device__ __forceinline__ void rows_reserve(RowsShared<TM>& s, unsigned long long* __restrict__ count,
                                             unsigned long long capacity, RowTables t, long long h0, long long h,
                                             long long tc) {
    const int tid = threadIdx.x;
    unsigned int n = 0;
    if (tid < TM) {
#pragma unroll
        for (int w = 0; w < TM / 32; ++w) n += __popc(s.bits[tid][w]);
        // inclusive warp scan
        unsigned int x = n;
#pragma unroll
        for (int d = 1; d < 32; d <<= 1) {
            const unsigned int y = __shfl_up_sync(0xffffffffu, x, d);
            if ((tid & 31) >= d) x += y;
        }
        if ((tid & 31) == 31) s.warp_sum[tid >> 5] = x;
        s.start[tid] = x - n;
    }
    __syncthreads();
    if (tid < TM) {
        unsigned int before = 0;
#pragma unroll
        for (int w = 0; w < TM / 32; ++w)
            if (w < (tid >> 5)) before += s.warp_sum[w];
        s.start[tid] += before;
        if (tid == TM - 1) {
            const unsigned int total = s.start[tid] + n;
            s.total = total;
            s.base = total ? atomicAdd(count, (unsigned long long)total) : 0ULL;
        }
    }
    __syncthreads();
    if (tid < TM && n > 0 && s.base + s.total <= capacity && h0 + tid < h) {
        const long long at = (h0 + tid) * t.ldt + tc;
        t.cnt[at] = (unsigned char)n;
        t.off[at] = (unsigned int)(s.base + s.start[tid]);
    }
}

// rows_write stores kept pair (r, c) = (i, j) with value w at its rank in the chunk.
template <int TM>
__device__ __forceinline__ void rows_write(const RowsShared<TM>& s, unsigned long long capacity,
                                           unsigned long long* __restrict__ stage, int r, int c, unsigned int j, float w) {
    if (s.base + s.total > capacity) return;
    unsigned int rank = s.start[r];
#pragma unroll
    for (int x = 0; x < TM / 32; ++x)
        if (x < (c >> 5)) rank += __popc(s.bits[r][x]);
    rank += __popc(s.bits[r][c >> 5] & ((1u << (c & 31)) - 1u));
    stage[s.base + rank] = ((unsigned long long)j << 32) | (unsigned long long)__float_as_uint(w);
}

#endif
