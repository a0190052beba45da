// tf32x3_tile.cuh: the error-compensated tensor-core tile product of normalized series
// (Ootomo & Yokota 2022, "Recovering single precision accuracy from Tensor Cores while
// surpassing the FP32 theoretical peak performance"): with u = u_hi + u_lo, u_hi = tf32(u),
// u_lo = tf32(u − u_hi) (split_tf32 writes both planes once, in Prepare),
//   r_ij = Σ_k u_ik·u_jk ≈ Σ_k (hi_ik·hi_jk + hi_ik·lo_jk + lo_ik·hi_jk)
// on mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 (sm_80+). The dropped lo·lo term is
// below 2⁻²²·|u_ik·u_jk|. Each 8-wide k step is summed by the tensor cores into a fresh
// fragment, small terms first (t = lo·hi + hi·lo + hi·hi), and added to the fp32 accumulator
// with an ordinary round-to-nearest add: the tensor cores' own accumulation truncates, so
// only sums of eight products (|t| ≪ |r|) go through it, and the long sum over k rounds as
// the SIMT product's does.
//
// Tile: 128 rows × 128 columns per CTA of 256 threads = 8 warps in 2 (rows) × 4 (columns);
// warp (wm, wn) owns rows 64wm … 64wm+63 and columns 32wn … 32wn+31: 4 × 4 m16n8 tiles.
// Lane (g = lane/4, t = lane%4) holds accumulator acc[m][n], m, n in 0..7, of tile-local row
//   64wm + 16(m/2) + 8(m%2) + g   and column   32wn + 8(n/2) + 2t + n%2
// (the mma C layout: tile (m/2, n/2) holds {acc[m][n], acc[m][n+1], acc[m+1][n], acc[m+1][n+1]}).
// The fragments take physical k positions 2t and 2t+1 of each 8-float slice as the mma's k = t
// and k = t + 4, the same for both operands, so one 64-bit shared load gives a thread both
// of its values (conflict-free per half-warp with 8-float rows) and the pairing of u_ik with
// u_jk is unchanged. Loads go global → shared by cp.async through three stages (a step's
// products are short against an L2 round trip, so two loads are in flight while one step
// computes), one barrier per step.
//
// Every pair's value is the same function of rows i and j whatever the tile position (the
// same fragment arithmetic, k steps in increasing order), so both passes of a density
// threshold agree bit for bit. Layout as sgemm_tile.cuh: row-major planes with leading
// dimension ld (a multiple of 8, zero-padded) and ≥ 127 zero rows past the last series.
#ifndef HUBSCOPE_TF32X3_TILE_CUH
#define HUBSCOPE_TF32X3_TILE_CUH

#define TC_TM 128
#define TC_TK 8
#define TC_THREADS 256

#define TC_STAGES 3

// 48 KiB: the static limit, so the row kernel's epilogue tables share it (correlation_rows.cu).
struct Tf32x3Shared {
    float ahi[TC_STAGES][TC_TM * TC_TK];  // [stage][row·8 + k]
    float alo[TC_STAGES][TC_TM * TC_TK];
    float bhi[TC_STAGES][TC_TM * TC_TK];
    float blo[TC_STAGES][TC_TM * TC_TK];
};

__device__ __forceinline__ int tc_row(int m) {
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    return (warp >> 2) * 64 + (m >> 1) * 16 + (m & 1) * 8 + (lane >> 2);
}
__device__ __forceinline__ int tc_col(int n) {
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    return (warp & 3) * 32 + (n >> 1) * 8 + 2 * (lane & 3) + (n & 1);
}

// mma_tf32 is d = a·b + d for one m16n8k8 tile (operands in tf32 bit patterns).
// a_g holds A(row g, k = t), A(g, t + 4); a_g8 the same of row g + 8; b holds B(t, g), B(t + 4, g).
__device__ __forceinline__ void mma_tf32(float (&d)[4], const float2 a_g, const float2 a_g8, const float2 b) {
    asm(
        "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
        "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(__float_as_uint(a_g.x)), "r"(__float_as_uint(a_g8.x)), "r"(__float_as_uint(a_g.y)),
          "r"(__float_as_uint(a_g8.y)), "r"(__float_as_uint(b.x)), "r"(__float_as_uint(b.y)));
}

// cp_async16 copies 16 bytes global → shared without passing through registers.
__device__ __forceinline__ void cp_async16(float* dst, const float* src) {
    const unsigned int d = (unsigned int)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(d), "l"(src));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;"); }
// cp_async_wait_older waits for every group but the newest one.
__device__ __forceinline__ void cp_async_wait_older() { asm volatile("cp.async.wait_group 1;" ::: "memory"); }

// tf32x3_tile computes acc[m][n] ≈ Σ_k u[r0+tc_row(m)][k]·u[c0+tc_col(n)][k] for k < K from
// the planes Hi and Lo (K ≥ 8: it passes at least one __syncthreads).
__device__ __forceinline__ void tf32x3_tile(const float* __restrict__ Hi, const float* __restrict__ Lo, long long ld,
                                            long long K, long long r0, long long c0, Tf32x3Shared& s,
                                            float (&acc)[8][8]) {
    const int tid = threadIdx.x;
    const int lr = tid >> 1;       // tile row this thread loads (0..127)
    const int lk = (tid & 1) * 4;  // its 16 bytes' offset along k
    const long long ga = (r0 + lr) * ld + lk, gb = (c0 + lr) * ld + lk;
    const int sd = lr * TC_TK + lk;
    const int warp = tid >> 5, lane = tid & 31, g = lane >> 2, t = lane & 3;
    const int arow = (warp >> 2) * 64 + g;  // A fragment rows arow + 16mi (+8)
    const int bcol = (warp & 3) * 32 + g;   // B fragment columns bcol + 8ni
#pragma unroll
    for (int m = 0; m < 8; ++m)
#pragma unroll
        for (int n = 0; n < 8; ++n) acc[m][n] = 0.0f;

    // Stage q of step k0 = 8q holds k0 … k0+7; steps 0 and 1 are in flight before the loop.
    // Every thread commits exactly one group per step (empty past the end), so "all but the
    // newest group" is always "everything up to the current step".
#pragma unroll
    for (int q = 0; q < 2; ++q) {
        if (q * TC_TK < K) {
            cp_async16(&s.ahi[q][sd], Hi + ga + q * TC_TK);
            cp_async16(&s.alo[q][sd], Lo + ga + q * TC_TK);
            cp_async16(&s.bhi[q][sd], Hi + gb + q * TC_TK);
            cp_async16(&s.blo[q][sd], Lo + gb + q * TC_TK);
        }
        cp_async_commit();
    }
    int buf = 0;
    for (long long k0 = 0; k0 < K; k0 += TC_TK) {
        // This thread's copies of step k0 are done; the barrier makes everyone's visible and
        // ends every read of the stage the previous step used, which the copies of step
        // k0 + 16 overwrite.
        cp_async_wait_older();
        __syncthreads();
        {
            const long long k2 = k0 + 2 * TC_TK;
            const int nb = buf == 0 ? 2 : buf - 1;  // (buf + 2) mod 3
            if (k2 < K) {
                cp_async16(&s.ahi[nb][sd], Hi + ga + k2);
                cp_async16(&s.alo[nb][sd], Lo + ga + k2);
                cp_async16(&s.bhi[nb][sd], Hi + gb + k2);
                cp_async16(&s.blo[nb][sd], Lo + gb + k2);
            }
            cp_async_commit();
        }
        float2 bh[4], bl[4];
#pragma unroll
        for (int ni = 0; ni < 4; ++ni) {
            const int at = (bcol + 8 * ni) * TC_TK + 2 * t;
            bh[ni] = *reinterpret_cast<const float2*>(&s.bhi[buf][at]);
            bl[ni] = *reinterpret_cast<const float2*>(&s.blo[buf][at]);
        }
#pragma unroll
        for (int mi = 0; mi < 4; ++mi) {
            const int at = (arow + 16 * mi) * TC_TK + 2 * t;
            const float2 ah01 = *reinterpret_cast<const float2*>(&s.ahi[buf][at]);
            const float2 ah23 = *reinterpret_cast<const float2*>(&s.ahi[buf][at + 8 * TC_TK]);
            const float2 al01 = *reinterpret_cast<const float2*>(&s.alo[buf][at]);
            const float2 al23 = *reinterpret_cast<const float2*>(&s.alo[buf][at + 8 * TC_TK]);
            // The four column tiles' sums are independent: issue each term for all four
            // before the next term, so four mma chains overlap their latency.
            float d[4][4];
#pragma unroll
            for (int ni = 0; ni < 4; ++ni) {
                d[ni][0] = d[ni][1] = d[ni][2] = d[ni][3] = 0.0f;
                mma_tf32(d[ni], al01, al23, bh[ni]);
            }
#pragma unroll
            for (int ni = 0; ni < 4; ++ni) mma_tf32(d[ni], ah01, ah23, bl[ni]);
#pragma unroll
            for (int ni = 0; ni < 4; ++ni) mma_tf32(d[ni], ah01, ah23, bh[ni]);
#pragma unroll
            for (int ni = 0; ni < 4; ++ni) {
                acc[2 * mi][2 * ni] += d[ni][0];
                acc[2 * mi][2 * ni + 1] += d[ni][1];
                acc[2 * mi + 1][2 * ni] += d[ni][2];
                acc[2 * mi + 1][2 * ni + 1] += d[ni][3];
            }
        }
        buf = buf == 2 ? 0 : buf + 1;
    }
}

#endif
