// group_wide_tile.cuh: the group-mean Fisher z tile of group_f16x3_tile.cuh (the same
// error-compensated fp16 split, the same m16n8k16 products and fold) on a 256 × 128 tile with
// the running sums z in shared memory, so each warp's accumulators cover 64 × 64 pairs
// instead of 64 × 32 (units 5 and 6 of group_tile.cuh; 5 is the default).
//
// Why: at 64 × 32 per warp and z in registers, the 8 warps of a CTA (z and the accumulators
// take 128 of the 255 registers) spend more time on a k step's barrier, shared loads and
// their latency than on its 48 mma per warp (kernels/NOTES.md). Here z (128 KiB, one float per
// pair) waits in shared memory and is touched once per subject, which frees 64 registers per
// thread for accumulators: 64 × 64 per warp (4 × 8 m16n8 tiles, 128 accumulators), 256 × 128
// per CTA of 8 warps in 4 (rows) × 2 (columns), twice the mma per barrier and per byte
// loaded. The stages hold GW_SUB = 2 16-half steps each and there are GW_STAGES = 2 of them
// (one barrier per 192 mma per warp): 96 KiB of stages + 128 KiB of z = 224 KiB of dynamic
// shared memory (sm_90 allows 227), one CTA per multiprocessor. On an H200 (W8) three or four
// stages of one step were 5 % slower (kernels/NOTES.md).
//
// As in group_f16x3_tile.cuh, the row operand comes from the fragment-ordered copies of the
// planes (a lane's 16 bytes are the four A registers of an m16 tile in order: one 128-bit
// shared load) and the column operand from the plain planes (a lane's 8 bytes of a row are
// the two B registers of an n8 tile in order). Tiles whose first row is not a multiple of 16
// read the plain planes for both (frag = false): the same registers in the same order, so the
// same values bit for bit.
//
// Every pair's arithmetic is group_f16x3_tile.cuh's (fresh fragment per 16-sample step, small
// terms first, one fp32 add; hx_fold per subject; tanh in float64 at the end), so its values
// equal unit 4's bit for bit; it is the same function of rows i and j wherever the pair sits
// in the tile, so every pass of a threshold agrees bit for bit.
#ifndef HUBSCOPE_GROUP_WIDE_TILE_CUH
#define HUBSCOPE_GROUP_WIDE_TILE_CUH

#include "group_f16x3_tile.cuh"

#define GW_TM 256  // tile rows
#define GW_TN 128  // tile columns
#define GW_SLOTS 128  // pairs per thread
#define GW_STAGES 2   // copy stages
#define GW_SUB 2      // 16-half steps per stage

// GroupWideShared: STAGES copy stages of SUB 16-half steps each, of the row planes (a) and the
// column planes (b), hi then lo, and z as [slot][thread] (conflict-free: a warp's 32 lanes
// touch 32 consecutive words).
template <int STAGES, int SUB>
struct __align__(16) GroupWideShared {
    unsigned short a[STAGES][SUB][2][GW_TM * HX_TK];  // [stage][step][hi/lo][row·16 + k] or [group·256 + lane·8 + e]
    unsigned short b[STAGES][SUB][2][GW_TN * HX_TK];  // [stage][step][hi/lo][column·16 + k]
    float z[GW_SLOTS][256];
};

// gw_row / gw_col: the tile-local row and column of the calling thread's slot k =
// (mi·8 + ni)·4 + e, the m16n8 C layout of m16 tile mi and n8 tile ni of warp
// (wm, wn) = (warp mod 4, warp / 4).
__device__ __forceinline__ int gw_row(int k) {
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    return (warp & 3) * 64 + (k >> 5) * 16 + ((k >> 1) & 1) * 8 + (lane >> 2);
}
__device__ __forceinline__ int gw_col(int k) {
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    return (warp >> 2) * 64 + ((k >> 2) & 7) * 8 + 2 * (lane & 3) + (k & 1);
}

// gw_copy_stage starts the cp.async copies of stage number q (steps q·SUB … q·SUB + SUB − 1,
// those below steps) of the four planes into buffer st: the row operand's 256 nodes (16
// fragment-ordered groups, or plain rows) and the column operand's 128 plain rows.
template <int STAGES, int SUB, bool frag>
__device__ __forceinline__ void gw_copy_stage(GroupWideShared<STAGES, SUB>& s, int st, long long q, long long steps,
                                              const unsigned short* __restrict__ Hi,
                                              const unsigned short* __restrict__ Lo, long long fo,
                                              long long stream, long long r0, long long c0) {
    const int tid = threadIdx.x;
#pragma unroll
    for (int u = 0; u < SUB; ++u) {
        const long long qs = q * SUB + u;  // the step
        if (qs >= steps) break;
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            const int ch = tid + 256 * h;  // row operand chunk 0..511 of a plane
            long long src;
            if (frag) {
                src = fo + (r0 / 16 + (ch >> 5)) * 16 * stream + qs * 256 + (ch & 31) * 8;
            } else {
                src = (r0 + (ch >> 1)) * stream + qs * HX_TK + (ch & 1) * 8;
            }
            cp_async16(reinterpret_cast<float*>(&s.a[st][u][0][ch * 8]), reinterpret_cast<const float*>(Hi + src));
            cp_async16(reinterpret_cast<float*>(&s.a[st][u][1][ch * 8]), reinterpret_cast<const float*>(Lo + src));
        }
        const long long src = (c0 + (tid >> 1)) * stream + qs * HX_TK + (tid & 1) * 8;
        cp_async16(reinterpret_cast<float*>(&s.b[st][u][0][tid * 8]), reinterpret_cast<const float*>(Hi + src));
        cp_async16(reinterpret_cast<float*>(&s.b[st][u][1][tid * 8]), reinterpret_cast<const float*>(Lo + src));
    }
}

// gw_cp_async_wait waits until at most STAGES − 2 copy groups are pending.
template <int STAGES>
__device__ __forceinline__ void gw_cp_async_wait() {
    asm volatile("cp.async.wait_group %0;" ::"n"(STAGES - 2) : "memory");
}

// gw_step adds one 16-half step of buffer st, step u, to the accumulators. fold (the first step
// of a subject, defer only; a template parameter, so that each body is one basic block the
// compiler can interleave): first fold the previous subject's r in acc into z, tile by tile as
// its fresh fragments are ready, then start acc at them (0 + d = d), so the fold's
// multi-function-unit work overlaps this step's mma instead of following the barrier.
template <int STAGES, int SUB, bool frag, bool fold>
__device__ __forceinline__ void gw_step(GroupWideShared<STAGES, SUB>& s, int st, int u, float (&acc)[4][8][4],
                                        float clamp) {
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    const int wm = warp & 3, wn = warp >> 2;
    // Row operand: the warp's four m16 tiles, hi and lo.
    uint2 ah0[4], ah8[4], al0[4], al8[4];
#pragma unroll
    for (int mi = 0; mi < 4; ++mi) {
        if (frag) {
            const int at = (wm * 4 + mi) * 256 + lane * 8;
            const uint4 h = *reinterpret_cast<const uint4*>(&s.a[st][u][0][at]);
            const uint4 l = *reinterpret_cast<const uint4*>(&s.a[st][u][1][at]);
            ah0[mi] = make_uint2(h.x, h.z);
            ah8[mi] = make_uint2(h.y, h.w);
            al0[mi] = make_uint2(l.x, l.z);
            al8[mi] = make_uint2(l.y, l.w);
        } else {
            const int at = (wm * 64 + mi * 16 + g) * HX_TK + 4 * t;
            ah0[mi] = *reinterpret_cast<const uint2*>(&s.a[st][u][0][at]);
            ah8[mi] = *reinterpret_cast<const uint2*>(&s.a[st][u][0][at + 8 * HX_TK]);
            al0[mi] = *reinterpret_cast<const uint2*>(&s.a[st][u][1][at]);
            al8[mi] = *reinterpret_cast<const uint2*>(&s.a[st][u][1][at + 8 * HX_TK]);
        }
    }
    // Column operand in pairs of n8 tiles (16 columns).
#pragma unroll
    for (int p = 0; p < 4; ++p) {
        // Plain rows: column g's halves 4t … 4t+3 are its two B registers in order (one
        // 64-bit load; from the fragment-ordered copy they would need register moves).
        uint2 bh[2], bl[2];
        const int at = (wn * 64 + p * 16 + g) * HX_TK + 4 * t;
        bh[0] = *reinterpret_cast<const uint2*>(&s.b[st][u][0][at]);
        bh[1] = *reinterpret_cast<const uint2*>(&s.b[st][u][0][at + 8 * HX_TK]);
        bl[0] = *reinterpret_cast<const uint2*>(&s.b[st][u][1][at]);
        bl[1] = *reinterpret_cast<const uint2*>(&s.b[st][u][1][at + 8 * HX_TK]);
        // Eight independent tiles: each term for all eight before the next term.
        float d[4][2][4];
#pragma unroll
        for (int mi = 0; mi < 4; ++mi)
#pragma unroll
            for (int nn = 0; nn < 2; ++nn) {
                d[mi][nn][0] = d[mi][nn][1] = d[mi][nn][2] = d[mi][nn][3] = 0.0f;
                mma_f16(d[mi][nn], al0[mi], al8[mi], bh[nn]);
            }
#pragma unroll
        for (int mi = 0; mi < 4; ++mi)
#pragma unroll
            for (int nn = 0; nn < 2; ++nn) mma_f16(d[mi][nn], ah0[mi], ah8[mi], bl[nn]);
#pragma unroll
        for (int mi = 0; mi < 4; ++mi)
#pragma unroll
            for (int nn = 0; nn < 2; ++nn) mma_f16(d[mi][nn], ah0[mi], ah8[mi], bh[nn]);
        if (fold) {
#pragma unroll
            for (int mi = 0; mi < 4; ++mi)
#pragma unroll
                for (int nn = 0; nn < 2; ++nn)
#pragma unroll
                    for (int e = 0; e < 4; ++e) {
                        const int k = (mi * 8 + 2 * p + nn) * 4 + e;
                        s.z[k][threadIdx.x] = hx_fold<false>(s.z[k][threadIdx.x], acc[mi][2 * p + nn][e], clamp);
                        acc[mi][2 * p + nn][e] = d[mi][nn][e];
                    }
        } else {
#pragma unroll
            for (int mi = 0; mi < 4; ++mi)
#pragma unroll
                for (int nn = 0; nn < 2; ++nn)
#pragma unroll
                    for (int e = 0; e < 4; ++e) acc[mi][2 * p + nn][e] += d[mi][nn][e];
        }
    }
}

// gw_fold_all folds the r in acc into z and clears acc.
__device__ __forceinline__ void gw_fold_all(float (*z)[256], float (&acc)[4][8][4], float clamp) {
#pragma unroll
    for (int mi = 0; mi < 4; ++mi)
#pragma unroll
        for (int ni = 0; ni < 8; ++ni)
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const int k = (mi * 8 + ni) * 4 + e;
                z[k][threadIdx.x] = hx_fold<false>(z[k][threadIdx.x], acc[mi][ni][e], clamp);
                acc[mi][ni][e] = 0.0f;
            }
}

// group_wide_tile leaves r̄ for the pair (r0 + gw_row(k), c0 + gw_col(k)) in s.z[k][threadIdx.x]:
// tanh of the mean over the S subjects of atanh(clamp(r^s)). Hi/Lo, ldh, fo as for
// group_f16x3_tile; ≥ 256 zero node rows past the end. frag: the row operand from the
// fragment-ordered copies (r0 a multiple of 16).
template <int STAGES, int SUB, bool frag, bool defer>
__device__ __forceinline__ void group_wide_tile(const unsigned short* __restrict__ Hi,
                                                const unsigned short* __restrict__ Lo, long long ldh,
                                                long long fo, long long S, long long r0, long long c0,
                                                float clamp, GroupWideShared<STAGES, SUB>& s) {
    const int tid = threadIdx.x;
    const long long stream = S * ldh;
    const long long steps = stream / HX_TK, per = ldh / HX_TK;
    const long long stages = (steps + SUB - 1) / SUB;
#pragma unroll
    for (int k = 0; k < GW_SLOTS; ++k) s.z[k][tid] = 0.0f;
    float acc[4][8][4];
#pragma unroll
    for (int mi = 0; mi < 4; ++mi)
#pragma unroll
        for (int ni = 0; ni < 8; ++ni)
#pragma unroll
            for (int e = 0; e < 4; ++e) acc[mi][ni][e] = 0.0f;

    // Stages 0 … STAGES − 2 are in flight before the loop; every thread commits exactly one
    // group per stage (empty past the end), so waiting for all but the newest STAGES − 2
    // groups is waiting for the current stage.
#pragma unroll
    for (int q = 0; q < STAGES - 1; ++q) {
        if (q < stages) gw_copy_stage<STAGES, SUB, frag>(s, q, q, steps, Hi, Lo, fo, stream, r0, c0);
        cp_async_commit();
    }
    int buf = 0;
    long long left = per;  // steps until the current subject's last
    bool pending = false;  // defer: acc holds a finished subject's r, not yet folded
    for (long long q = 0; q < stages; ++q) {
        // This thread's copies of stage q are done; the barrier makes everyone's visible and
        // ends every read of the buffer stage q − 1 used, which stage q + STAGES − 1 overwrites.
        gw_cp_async_wait<STAGES>();
        __syncthreads();
        {
            const long long qn = q + STAGES - 1;
            const int nb = buf == 0 ? STAGES - 1 : buf - 1;  // (buf + STAGES − 1) mod STAGES
            if (qn < stages) gw_copy_stage<STAGES, SUB, frag>(s, nb, qn, steps, Hi, Lo, fo, stream, r0, c0);
            cp_async_commit();
        }
#pragma unroll
        for (int u = 0; u < SUB; ++u) {
            if (SUB > 1 && q * SUB + u >= steps) break;
            if (defer && pending) {
                gw_step<STAGES, SUB, frag, true>(s, buf, u, acc, clamp);
            } else {
                gw_step<STAGES, SUB, frag, false>(s, buf, u, acc, clamp);
            }
            pending = false;
            if (--left == 0) {  // the subject's last step: fold its r into z (defer: in the next step)
                left = per;
                if (defer) {
                    pending = true;
                } else {
                    gw_fold_all(s.z, acc, clamp);
                }
            }
        }
        buf = buf == STAGES - 1 ? 0 : buf + 1;
    }
    if (pending) gw_fold_all(s.z, acc, clamp);  // the last subject
    // Mean Fisher z = ½·ln 2 · Σ (log2(1 + r) − log2(1 − r)) / S, then r̄ = tanh.
    const double scale = 0.34657359027997264 / (double)S;
#pragma unroll 4
    for (int k = 0; k < GW_SLOTS; ++k) s.z[k][tid] = (float)tanh((double)s.z[k][tid] * scale);
}

#endif
