// correlation_rows: one block pair of Pearson/Spearman correlations whose surviving pairs go
// to a row panel in row order (fc.RowEmitter): r_ij from the same tile product as
// correlation_edges and correlation_histogram (correlation_tile.cuh, use_tc as there;
// bit-identical values); pairs with r (|r| when abs) passing the threshold are kept in rows
// when v ≥ split (rows_tile.cuh: tile-ordered chunks plus the panel tables) and appended to
// held otherwise (warp-aggregated, any order). split = −∞ (keep every passing pair) takes an
// epilogue without the held list's 64 warp ballots a thread.
//
// Launch: grid (ceil((j1−j0)/128), ceil((i1−i0)/128)), block 256, static shared memory
// 48 KiB (the tile's stages, then the epilogue's 2.6 KiB bitmap and row starts in their
// place). The block's rows are the panel's rows [i0, i1); tc0 is the panel tile column of
// the block's first tile. count[0] (stage) and count[1] (held) and the cnt table must be zero
// before the panel's first block; both counters may end above their capacities.
#include "common.cuh"
#include "rows_tile.cuh"
#include "correlation_tile.cuh"

extern "C" __global__ void __launch_bounds__(CT_THREADS, 2)
correlation_rows(const float* __restrict__ U, const float* __restrict__ Lo, long long ld, long long K, long long use_tc,
                 long long i0, long long i1, long long j0, long long j1,
                 double threshold, long long flags, double split,
                 unsigned char* __restrict__ cnt, unsigned int* __restrict__ off, long long ldt, long long tc0,
                 unsigned long long* __restrict__ stage, unsigned long long* __restrict__ count, unsigned long long capacity,
                 Edge* __restrict__ held, unsigned long long held_capacity) {
    const BlockPair bp = {i0, i1, j0, j1};
    const long long r0 = i0 + (long long)blockIdx.y * CT_TM;
    const long long c0 = j0 + (long long)blockIdx.x * CT_TM;
    if (tile_below_diagonal(bp, r0, c0, CT_TM)) return;
    // The tile's operand stages and the epilogue's bitmap share shared memory (the 3×TF32
    // stages alone take the 48 KiB of static shared memory).
    __shared__ union {
        CorrShared tile;
        RowsShared<CT_TM> rows;
    } sh;
    CorrShared& s = sh.tile;
    RowsShared<CT_TM>& rs = sh.rows;
    float acc[8][8];
    corr_tile(U, Lo, ld, K, use_tc != 0, r0, c0, s, acc);
    __syncthreads();  // every read of the operand stages is done
    rows_clear(rs);
    __syncthreads();
    // Two CTAs per SM need ≤ 128 registers a thread: the epilogue keeps only the accumulators
    // and one bit per kept pair (kept, bit 8m + n) across the chunk reservation.
    unsigned long long kept = 0;
    if (split != -INFINITY) {  // a boundary (NaN: none kept): pairs below split are held
#pragma unroll
        for (int m = 0; m < 8; ++m) {
            const long long i = r0 + corr_row(use_tc != 0, m);
#pragma unroll
            for (int n = 0; n < 8; ++n) {
                const long long j = c0 + corr_col(use_tc != 0, n);
                const float v = connection_value(acc[m][n], flags);
                const bool pass = pair_counts(bp, i, j) && passes_threshold(v, threshold, flags);
                const bool keep = pass && (double)v >= split;
                if (keep) {
                    rows_mark(rs, corr_row(use_tc != 0, m), corr_col(use_tc != 0, n));
                    kept |= 1ULL << (8 * m + n);
                }
                append_edge(pass && !keep, (unsigned int)i, (unsigned int)j, v, held, count + 1, held_capacity);
            }
        }
    } else {  // every passing pair is kept (one-pass density, strength): no held list, no ballots
#pragma unroll
        for (int m = 0; m < 8; ++m) {
            const long long i = r0 + corr_row(use_tc != 0, m);
#pragma unroll
            for (int n = 0; n < 8; ++n) {
                const long long j = c0 + corr_col(use_tc != 0, n);
                if (pair_counts(bp, i, j) && passes_threshold(connection_value(acc[m][n], flags), threshold, flags)) {
                    rows_mark(rs, corr_row(use_tc != 0, m), corr_col(use_tc != 0, n));
                    kept |= 1ULL << (8 * m + n);
                }
            }
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
                rows_write(rs, capacity, stage, corr_row(use_tc != 0, m), corr_col(use_tc != 0, n), (unsigned int)(c0 + corr_col(use_tc != 0, n)),
                           connection_value(acc[m][n], flags));
        }
    }
}
