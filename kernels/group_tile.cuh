// group_tile.cuh: the group-mean Fisher z tile the three group kernels share (group_edges,
// group_histogram, group_values), so every pass of a threshold computes bit-identical values:
//   r̄_ij = tanh( (1/S) Σ_s atanh(clamp(r_ij^s)) ),
// with r_ij^s = u_i^s·u_j^s the tile product of subject s's normalised series, |r| clamped to 1 − 1e−7 as
// helper/group.ZClamp does (two identical voxels would give an infinite z). Subjects are the
// inner loop: the tile's running Σ atanh stays in registers across all S products, so no S × N
// × N intermediate ever reaches device memory (row panel outer, subjects inner, as helper/group's
// CPU engine blocks it; its package comment gives the two means).
//
// Product units (the kernels' unit operand): 0 fp32 SIMT and 1 3×TF32 (correlation_tile.cuh,
// one tile product per subject, below); 2, 3, 4 the error-compensated fp16 tensor-core stream
// over all subjects (group_f16x3_tile.cuh: planes of halves, not floats): 4
// reads its row operand from the fragment-ordered copy of the planes K halves past them, 2
// reads both operands from the plain planes, 3 is 2 folding with atanhf instead of the
// multi-function unit's lg2 (for comparison). Units 5–7 are the same stream on 256 × 128 tiles
// with the running sums in shared memory (group_wide_tile.cuh), 5 and 7 reading the row
// operand from the fragment-ordered copies, 6 from the plain planes (for both, where a tile
// does not start at a multiple of 16: the same values bit for bit); 7 folds each subject
// during the next subject's first step (defer). Units 0–4 take
// sizeof(GroupShared) bytes of dynamic shared memory, 5–7
// sizeof(GroupWideShared<GW_STAGES, GW_SUB>).
//
// Layout: the prepared series are node-major, subject-minor: subject s's row i starts at
// U + (i·S + s)·ld (normalize_rows over the N·S rows of the input N × S·L matrix read as
// N·S rows of L), so subject s is the matrix U + s·ld with leading dimension S·ld, and at
// least 128 zero node rows follow the last node (256 for units 5–7). Lo (3×TF32 only) has
// the same layout.
//
// Registers: 64 product accumulators and 64 running sums per thread (units 0–4) or 128
// accumulators (5–7), so the kernels run one CTA of 256 threads per multiprocessor
// (__launch_bounds__(256, 1)).
#ifndef HUBSCOPE_GROUP_TILE_CUH
#define HUBSCOPE_GROUP_TILE_CUH

#include "correlation_tile.cuh"
#include "group_f16x3_tile.cuh"
#include "group_wide_tile.cuh"

// GROUP_ZCLAMP is helper/group.ZClamp (1 − 1e−7) rounded to float32.
#define GROUP_ZCLAMP 0.9999999f

union GroupShared {
    CorrShared corr;
    F16x3Shared hx;
};

// group_tile_origin places the CTA's tile at (r0, c0), as every 128 × 128 correlation kernel
// does. (A grid order in bands of 8 or 16 tile rows, so that resident CTAs share row and
// column panels in the L2, did not change the fp16 stream's time: kernels/NOTES.md.)
__device__ __forceinline__ void group_tile_origin(long long i0, long long j0, long long& r0, long long& c0) {
    r0 = i0 + (long long)blockIdx.y * CT_TM;
    c0 = j0 + (long long)blockIdx.x * CT_TM;
}

// group_row / group_col place acc[m][n] in the tile for product unit `unit`.
__device__ __forceinline__ int group_row(long long unit, int m) { return corr_row(unit != 0, m); }
__device__ __forceinline__ int group_col(long long unit, int n) { return corr_col(unit != 0, n); }

// group_tile leaves r̄ for the pair (r0 + group_row(m), c0 + group_col(n)) in acc[m][n].
// Units 2 and 3 read U and Lo as planes of halves with ld halves per subject row.
__device__ __forceinline__ void group_tile(const float* __restrict__ U, const float* __restrict__ Lo, long long ld,
                                           long long K, long long unit, long long S, long long r0, long long c0,
                                           GroupShared& sh, float (&acc)[8][8]) {
    if (unit >= 2) {
        const unsigned short* hi = reinterpret_cast<const unsigned short*>(U);
        const unsigned short* lo = reinterpret_cast<const unsigned short*>(Lo);
        if (unit == 4) {
            group_f16x3_tile<false, true>(hi, lo, ld, K, S, r0, c0, GROUP_ZCLAMP, sh.hx, acc);
        } else if (unit == 2) {
            group_f16x3_tile<false, false>(hi, lo, ld, K, S, r0, c0, GROUP_ZCLAMP, sh.hx, acc);
        } else {
            group_f16x3_tile<true, false>(hi, lo, ld, K, S, r0, c0, GROUP_ZCLAMP, sh.hx, acc);
        }
        return;
    }
    const bool use_tc = unit != 0;
    CorrShared& s = sh.corr;
    float z[8][8];
#pragma unroll
    for (int m = 0; m < 8; ++m)
#pragma unroll
        for (int n = 0; n < 8; ++n) z[m][n] = 0.0f;
    for (long long k = 0; k < S; ++k) {
        // The previous subject's last shared-memory reads are done before this subject's
        // first stores.
        if (k > 0) __syncthreads();
        corr_tile(U + k * ld, use_tc ? Lo + k * ld : Lo, S * ld, K, use_tc, r0, c0, s, acc);
#pragma unroll
        for (int m = 0; m < 8; ++m)
#pragma unroll
            for (int n = 0; n < 8; ++n) z[m][n] += atanhf(fminf(fmaxf(acc[m][n], -GROUP_ZCLAMP), GROUP_ZCLAMP));
    }
    const double sd = (double)S;
#pragma unroll
    for (int m = 0; m < 8; ++m)
#pragma unroll
        for (int n = 0; n < 8; ++n) acc[m][n] = (float)tanh((double)z[m][n] / sd);
}

#define GROUP_UNIT_WIDE 5  // the first group_wide_tile.cuh unit

// group_wide_run instantiates group_wide_tile for one buffer shape.
template <int STAGES, int SUB, bool defer>
__device__ __forceinline__ const float* group_wide_run(const unsigned short* hi, const unsigned short* lo, long long ld,
                                                       long long K, bool frag, long long S, long long r0,
                                                       long long c0, unsigned char* smem) {
    GroupWideShared<STAGES, SUB>& s = *reinterpret_cast<GroupWideShared<STAGES, SUB>*>(smem);
    if (frag) {
        group_wide_tile<STAGES, SUB, true, defer>(hi, lo, ld, K, S, r0, c0, GROUP_ZCLAMP, s);
    } else {
        group_wide_tile<STAGES, SUB, false, defer>(hi, lo, ld, K, S, r0, c0, GROUP_ZCLAMP, s);
    }
    return &s.z[0][0];
}

// group_wide runs units 5–7 on the tile at (r0, c0) = (i0 + 256·blockIdx.y,
// j0 + 128·blockIdx.x) in the dynamic shared memory smem and returns the r̄ slots
// (group_wide_tile.cuh: slot k of thread x at [k·256 + x]).
__device__ __forceinline__ const float* group_wide(const float* __restrict__ U, const float* __restrict__ Lo,
                                                   long long ld, long long K, long long unit, long long S,
                                                   long long r0, long long c0, unsigned char* smem) {
    const unsigned short* hi = reinterpret_cast<const unsigned short*>(U);
    const unsigned short* lo = reinterpret_cast<const unsigned short*>(Lo);
    if (unit == 7) {
        GroupWideShared<GW_STAGES, GW_SUB>& s = *reinterpret_cast<GroupWideShared<GW_STAGES, GW_SUB>*>(smem);
        group_wide_tile<GW_STAGES, GW_SUB, true, true>(hi, lo, ld, K, S, r0, c0, GROUP_ZCLAMP, s);
        return &s.z[0][0];
    }
    return group_wide_run<GW_STAGES, GW_SUB, false>(hi, lo, ld, K, unit == 5, S, r0, c0, smem);
}

#endif
