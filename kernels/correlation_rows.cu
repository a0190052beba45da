// correlation_rows: one block pair of Pearson/Spearman correlations whose surviving pairs go
// to a row panel in row order (fc.RowEmitter): r_ij from the same tile product as
// correlation_edges and correlation_histogram (bit-identical values); pairs with r (|r| when
// abs) passing the threshold are kept in rows when v ≥ split (rows_tile.cuh: tile-ordered
// chunks plus the panel tables) and appended to held otherwise (warp-aggregated, any order).
//
// Launch: grid (ceil((j1−j0)/128), ceil((i1−i0)/128)), block 256, static shared memory
// 16.5 KiB + 2.7 KiB. The block's rows are the panel's rows [i0, i1); tc0 is the panel tile
// column of the block's first tile. count[0] (stage) and count[1] (held) and the cnt table
// must be zero before the panel's first block; both counters may end above their capacities.
#include "common.cuh"
#include "rows_tile.cuh"
#include "sgemm_tile.cuh"

extern "C" __global__ void __launch_bounds__(SG_THREADS, 2)
correlation_rows(const float* __restrict__ U, long long ld, long long K,
                 long long i0, long long i1, long long j0, long long j1,
                 double threshold, long long flags, double split,
                 unsigned char* __restrict__ cnt, unsigned int* __restrict__ off, long long ldt, long long tc0,
                 unsigned long long* __restrict__ stage, unsigned long long* __restrict__ count, unsigned long long capacity,
                 Edge* __restrict__ held, unsigned long long held_capacity) {
    const BlockPair bp = {i0, i1, j0, j1};
    const long long r0 = i0 + (long long)blockIdx.y * SG_TM;
    const long long c0 = j0 + (long long)blockIdx.x * SG_TM;
    if (tile_below_diagonal(bp, r0, c0, SG_TM)) return;
    __shared__ SgemmShared s;
    __shared__ RowsShared<SG_TM> rs;
    rows_clear(rs);
    float acc[8][8];
    sgemm_tile(U, ld, K, r0, c0, s, acc);  // ends after a __syncthreads: the bitmap is clear
    // Two CTAs per SM need ≤ 128 registers a thread: the epilogue keeps only the accumulators
    // and one bit per kept pair (kept, bit 8m + n) across the chunk reservation.
    unsigned long long kept = 0;
#pragma unroll
    for (int m = 0; m < 8; ++m) {
        const long long i = r0 + sg_row(m);
#pragma unroll
        for (int n = 0; n < 8; ++n) {
            const long long j = c0 + sg_col(n);
            const float v = connection_value(acc[m][n], flags);
            const bool pass = pair_counts(bp, i, j) && passes_threshold(v, threshold, flags);
            const bool keep = pass && (double)v >= split;
            if (keep) {
                rows_mark(rs, sg_row(m), sg_col(n));
                kept |= 1ULL << (8 * m + n);
            }
            append_edge(pass && !keep, (unsigned int)i, (unsigned int)j, v, held, count + 1, held_capacity);
        }
    }
    __syncthreads();
    const RowTables t = {cnt, off, ldt};
    rows_reserve(rs, count, capacity, t, r0 - i0, i1 - i0, tc0 + blockIdx.x);
    if (kept == 0) return;
#pragma unroll
    for (int m = 0; m < 8; ++m) {
#pragma unroll
        for (int n = 0; n < 8; ++n) {
            if ((kept >> (8 * m + n)) & 1ULL)
                rows_write(rs, capacity, stage, sg_row(m), sg_col(n), (unsigned int)(c0 + sg_col(n)),
                           connection_value(acc[m][n], flags));
        }
    }
}
