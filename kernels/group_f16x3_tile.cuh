// group_f16x3_tile.cuh: the group-mean Fisher z tile on the tensor cores with an
// error-compensated fp16 split (the 3×TF32 scheme of tf32x3_tile.cuh, Ootomo & Yokota 2022,
// with fp16 operands: the same 11-bit significands at twice the mma rate):
//   2^24·r_ij = Σ_k x_ik·x_jk ≈ Σ_k (hi_ik·hi_jk + hi_ik·lo_jk + lo_ik·hi_jk),
// x = 2^12·u, hi = fp16(x), lo = fp16(x − hi) (split_f16x3 writes both planes once, in
// Prepare). The scale keeps x·hi products and the lo plane in fp16's normal range (|x| ≤ 2^12
// for a unit-norm row; lo is normal down to |u| ≈ 6e−5 and, below, its absolute error 2^−25
// is 2^−37 in u); 2^−24 undoes it exactly. The dropped lo·lo term is below 2^−22·|x_ik·x_jk|.
// Each 16-wide k step goes through mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 into a
// fresh fragment, small terms first (t = lo·hi + hi·lo + hi·hi), and is added to the fp32
// accumulator with a round-to-nearest add: the tensor cores' own accumulation truncates, so
// only 16-term sums (|t| ≪ |r|) go through it, as in tf32x3_tile.cuh.
//
// One stream over all subjects: node i's prepared halves are contiguous over its subjects
// (node-major, subject-minor rows of ldh halves, ldh a multiple of 16, zero-padded past L),
// so the tile runs ONE software pipeline over k = 0 … S·ldh − 1 and, after the last step of
// each subject, folds that subject's r into the running sum and clears the accumulator; the
// copies of the next subject's first steps are already in flight while it does (group_tile
// with the SIMT product drains and restarts its pipeline per subject).
//
// Fisher z fold: z_s = atanh(r) = ½·ln((1 + r)/(1 − r)); the kernel sums
// log2(1 + r) − log2(1 − r) with the multi-function unit's lg2 (absolute error ≤ 2^−22 on
// [0.5, 2], the value of CUDA's __log2f) and scales by ½·ln 2 / S once at the end: two MUFU operations per
// pair and subject instead of atanhf's ~25 instructions (precise = false). With precise = true
// it sums atanhf as group_tile.cuh does (for comparison). |r| is clamped to GROUP_ZCLAMP first.
//
// Tile: 128 × 128 per CTA of 256 threads = 8 warps in 2 (rows) × 4 (columns); warp (wm, wn)
// owns rows 64wm … 64wm+63 and columns 32wn … 32wn+31, 4 × 4 m16n8 tiles, and a lane's
// acc[m][n] is the pair (tc_row(m), tc_col(n)) of tf32x3_tile.cuh (the m16n8 C layout is the
// same). Fragments take physical halves 4t … 4t+3 of each 16-half row slice as the mma's
// k = 2t, 2t+1, 2t+8, 2t+9 for both operands (one 64-bit shared load per row and plane;
// conflict-free per half-warp with 32-byte rows), which pairs u_ik with u_jk unchanged.
// Loads go global → shared by cp.async through three 16 KiB stages (48 KiB static; six stages
// in dynamic shared memory were measured no faster: kernels/NOTES.md).
//
// Fragment-ordered row operand (afrag): the mma wants a lane's four A registers as row g
// (k 2t, 2t+1), row g+8 (same k), row g (2t+8, 2t+9), row g+8 (same), consecutive; from the
// plain planes that is two 64-bit loads and four register moves per plane and m16 tile (the
// moves were a third of the loop's instructions). split_f16x3 therefore also writes a copy of
// each plane in which every 16-node group's 16-half step is 512 bytes ordered by lane: lane
// (g, t)'s 16 bytes at (4g + t)·16 hold node g's physical halves 4t, 4t+1, node g+8's 4t, 4t+1,
// node g's 4t+2, 4t+3, node g+8's 4t+2, 4t+3 (the k pairing of the plain planes), groups
// contiguous over the whole stream (group G at G·16·S·ldh halves, step q at q·256 within it).
// One conflict-free 128-bit shared load then yields the four registers in order. The column
// operand keeps the plain planes (its two registers are one 64-bit load already).
//
// Every pair's value is the same function of rows i and j whatever the tile position (the
// same fragment arithmetic, steps in increasing k), so both passes of a density threshold
// agree bit for bit.
#ifndef HUBSCOPE_GROUP_F16X3_TILE_CUH
#define HUBSCOPE_GROUP_F16X3_TILE_CUH

#include "tf32x3_tile.cuh"

#define HX_TM 128
#define HX_TK 16  // halves per k step: one m16n8k16
// 2^−24: undoes the split's 2^12 scale on both operands.
#define HX_UNSCALE 5.9604644775390625e-8f

// Three stages of the four planes' 128 × 16-half slices (16 KiB a stage). In afrag mode the
// a planes hold 8 fragment-ordered 512-byte group steps instead of 128 plain rows.
#define HX_STAGES 3
struct __align__(16) F16x3Shared {
    unsigned short ahi[HX_STAGES][HX_TM * HX_TK];  // [stage][row·16 + k], or [group·256 + lane·8 + e]
    unsigned short alo[HX_STAGES][HX_TM * HX_TK];
    unsigned short bhi[HX_STAGES][HX_TM * HX_TK];  // [stage][row·16 + k]
    unsigned short blo[HX_STAGES][HX_TM * HX_TK];
};

// mma_f16 is d = a·b + d for one m16n8k16 tile. a_g holds row g's halves (k 2t, 2t+1) in .x
// and (2t+8, 2t+9) in .y, a_g8 the same of row g + 8; b holds column g's (2t, 2t+1) and
// (2t+8, 2t+9).
__device__ __forceinline__ void mma_f16(float (&d)[4], const uint2 a_g, const uint2 a_g8, const uint2 b) {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
        "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a_g.x), "r"(a_g8.x), "r"(a_g.y), "r"(a_g8.y), "r"(b.x), "r"(b.y));
}

// hx_lg2 is the multi-function unit's log2 alone. The fold's arguments are ≥ 1 − clamp, normal
// floats, where __log2f's rescaling of subnormal arguments (a compare, a multiply and an add
// around MUFU.LG2: four instructions instead of one) never applies: the same value bit for bit.
__device__ __forceinline__ float hx_lg2(float x) {
    float y;
    asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}

// hx_fold adds subject's Fisher z term for r = acc·2^−24 to z (see the header).
// The clamp is applied to acc at ±clamp·2^24 (exact: a power of two), so 1 ± r is one fma of
// acc·2^−24 (exact) and 1: the same rounding as 1.0f ± r, one instruction less.
template <bool precise>
__device__ __forceinline__ float hx_fold(float z, float acc, float clamp) {
    if (precise) return z + atanhf(fminf(fmaxf(acc * HX_UNSCALE, -clamp), clamp));
    const float c = clamp * 16777216.0f;
    const float a = fminf(fmaxf(acc, -c), c);
    return z + (hx_lg2(fmaf(a, HX_UNSCALE, 1.0f)) - hx_lg2(fmaf(-a, HX_UNSCALE, 1.0f)));
}

// group_f16x3_tile leaves r̄ for the pair (r0 + tc_row(m), c0 + tc_col(n)) in out[m][n]:
// tanh of the mean over the S subjects of atanh(clamp(r^s)). Hi/Lo: the planes, node i's
// subject s at (i·S + s)·ldh halves; ldh a multiple of 16; ≥ 128 zero node rows past the end.
// afrag: the row operand comes from the fragment-ordered copies at Hi + fo and Lo + fo.
template <bool precise, bool afrag>
__device__ __forceinline__ void group_f16x3_tile(const unsigned short* __restrict__ Hi,
                                                 const unsigned short* __restrict__ Lo, long long ldh,
                                                 long long fo, long long S, long long r0, long long c0,
                                                 float clamp, F16x3Shared& s, float (&out)[8][8]) {
    const int tid = threadIdx.x;
    const int lr = tid >> 1;           // tile row this thread copies (0..127)
    const int lk = (tid & 1) * 8;      // its 16 bytes' offset along k, in halves
    const long long stream = S * ldh;  // a node's halves over all subjects
    // Row operand source: plain row lr, or (afrag) chunk tid of the 8 groups' 512-byte steps:
    // group r0/16 + tid/32, lane tid mod 32 (a group's stream is 16·stream halves, a step 256).
    const unsigned short* ahi_src = afrag ? Hi + fo + (r0 / 16 + (tid >> 5)) * 16 * stream + (tid & 31) * 8
                                          : Hi + (r0 + lr) * stream + lk;
    const unsigned short* alo_src = afrag ? Lo + fo + (r0 / 16 + (tid >> 5)) * 16 * stream + (tid & 31) * 8
                                          : Lo + (r0 + lr) * stream + lk;
    const long long astep = afrag ? 256 : HX_TK;  // halves per step in the row operand's source
    const long long gb = (c0 + lr) * stream + lk;
    const int sd = lr * HX_TK + lk;  // = 8·tid: the same shared offset in both layouts
    const int warp = tid >> 5, lane = tid & 31, g = lane >> 2, t = lane & 3;
    const int arow = (warp >> 2) * 64 + g;  // A fragment rows arow + 16mi (+8)
    const int bcol = (warp & 3) * 32 + g;   // B fragment columns bcol + 8ni
    float acc[8][8], z[8][8];
#pragma unroll
    for (int m = 0; m < 8; ++m)
#pragma unroll
        for (int n = 0; n < 8; ++n) acc[m][n] = z[m][n] = 0.0f;

    const long long steps = stream / HX_TK, per = ldh / HX_TK;
    // Stage q mod 3 of step q holds step q's halves; steps 0 and 1 are in flight before the
    // loop. Every thread commits exactly one group per step (empty past the end), so "all but
    // the newest group" is always "everything up to the current step".
#pragma unroll
    for (int q = 0; q < 2; ++q) {
        if (q < steps) {
            cp_async16(reinterpret_cast<float*>(&s.ahi[q][sd]), reinterpret_cast<const float*>(ahi_src + q * astep));
            cp_async16(reinterpret_cast<float*>(&s.alo[q][sd]), reinterpret_cast<const float*>(alo_src + q * astep));
            cp_async16(reinterpret_cast<float*>(&s.bhi[q][sd]), reinterpret_cast<const float*>(Hi + gb + q * HX_TK));
            cp_async16(reinterpret_cast<float*>(&s.blo[q][sd]), reinterpret_cast<const float*>(Lo + gb + q * HX_TK));
        }
        cp_async_commit();
    }
    int buf = 0;
    long long left = per;  // steps until the current subject's last
    for (long long q = 0; q < steps; ++q) {
        // This thread's copies of step q are done; the barrier makes everyone's visible and
        // ends every read of the stage step q − 1 used, which step q + 2's copies overwrite.
        cp_async_wait_older();
        __syncthreads();
        {
            const long long q2 = q + 2;
            const int nb = buf == 0 ? 2 : buf - 1;  // (buf + 2) mod 3
            if (q2 < steps) {
                const long long k2 = q2 * HX_TK;
                cp_async16(reinterpret_cast<float*>(&s.ahi[nb][sd]), reinterpret_cast<const float*>(ahi_src + q2 * astep));
                cp_async16(reinterpret_cast<float*>(&s.alo[nb][sd]), reinterpret_cast<const float*>(alo_src + q2 * astep));
                cp_async16(reinterpret_cast<float*>(&s.bhi[nb][sd]), reinterpret_cast<const float*>(Hi + gb + k2));
                cp_async16(reinterpret_cast<float*>(&s.blo[nb][sd]), reinterpret_cast<const float*>(Lo + gb + k2));
            }
            cp_async_commit();
        }
        uint2 bh[4], bl[4];
#pragma unroll
        for (int ni = 0; ni < 4; ++ni) {
            const int at = (bcol + 8 * ni) * HX_TK + 4 * t;
            bh[ni] = *reinterpret_cast<const uint2*>(&s.bhi[buf][at]);
            bl[ni] = *reinterpret_cast<const uint2*>(&s.blo[buf][at]);
        }
#pragma unroll
        for (int mi = 0; mi < 4; ++mi) {
            uint2 ah0, ah8, al0, al8;
            if (afrag) {
                // Group (warp / 4)·4 + mi of the tile, this lane's 16 bytes: a0 a1 a2 a3.
                const int at = ((warp >> 2) * 4 + mi) * 256 + lane * 8;
                const uint4 h = *reinterpret_cast<const uint4*>(&s.ahi[buf][at]);
                const uint4 l = *reinterpret_cast<const uint4*>(&s.alo[buf][at]);
                ah0 = make_uint2(h.x, h.z);
                ah8 = make_uint2(h.y, h.w);
                al0 = make_uint2(l.x, l.z);
                al8 = make_uint2(l.y, l.w);
            } else {
                const int at = (arow + 16 * mi) * HX_TK + 4 * t;
                ah0 = *reinterpret_cast<const uint2*>(&s.ahi[buf][at]);
                ah8 = *reinterpret_cast<const uint2*>(&s.ahi[buf][at + 8 * HX_TK]);
                al0 = *reinterpret_cast<const uint2*>(&s.alo[buf][at]);
                al8 = *reinterpret_cast<const uint2*>(&s.alo[buf][at + 8 * HX_TK]);
            }
            // Four independent column tiles: each term for all four before the next term.
            float d[4][4];
#pragma unroll
            for (int ni = 0; ni < 4; ++ni) {
                d[ni][0] = d[ni][1] = d[ni][2] = d[ni][3] = 0.0f;
                mma_f16(d[ni], al0, al8, bh[ni]);
            }
#pragma unroll
            for (int ni = 0; ni < 4; ++ni) mma_f16(d[ni], ah0, ah8, bl[ni]);
#pragma unroll
            for (int ni = 0; ni < 4; ++ni) mma_f16(d[ni], ah0, ah8, bh[ni]);
#pragma unroll
            for (int ni = 0; ni < 4; ++ni) {
                acc[2 * mi][2 * ni] += d[ni][0];
                acc[2 * mi][2 * ni + 1] += d[ni][1];
                acc[2 * mi + 1][2 * ni] += d[ni][2];
                acc[2 * mi + 1][2 * ni + 1] += d[ni][3];
            }
        }
        buf = buf == 2 ? 0 : buf + 1;
        if (--left == 0) {  // the subject's last step: fold its r into z
            left = per;
#pragma unroll
            for (int m = 0; m < 8; ++m)
#pragma unroll
                for (int n = 0; n < 8; ++n) {
                    z[m][n] = hx_fold<precise>(z[m][n], acc[m][n], clamp);
                    acc[m][n] = 0.0f;
                }
        }
    }
    // Mean Fisher z: Σ atanh / S, or ½·ln 2 · Σ (log2(1 + r) − log2(1 − r)) / S.
    const double scale = (precise ? 1.0 : 0.34657359027997264) / (double)S;
#pragma unroll
    for (int m = 0; m < 8; ++m)
#pragma unroll
        for (int n = 0; n < 8; ++n) out[m][n] = (float)tanh((double)z[m][n] * scale);
}

#endif
