// sgemm_tile.cuh: the fp32 SIMT tile product r_ij = Σ_k u_ik·u_jk of normalized series, the
// arithmetic both correlation kernels (edges, histogram) share so that the two passes of a
// density threshold compute bit-identical values.
//
// Tile: 128 rows × 128 columns per CTA of 256 threads; each thread owns an 8×8 micro-tile,
// rows {4ty..4ty+3, 64+4ty..64+4ty+3} and columns {4tx..4tx+3, 64+4tx..64+4tx+3} with
// tx = tid mod 16, ty = tid / 16. K advances 8 at a time through double-buffered shared
// memory (one barrier per step). Each sum runs k = 0, 1, …, K−1 in one fmaf chain, whatever
// the tile's position, so r_ij depends only on rows i and j (and r_ij = r_ji bit for bit).
//
// Layout: U is row-major with leading dimension ld (a multiple of 8 floats, zero-padded past
// L) and at least 127 zero rows past the last series, so tiles never read out of bounds.
#ifndef HUBSCOPE_SGEMM_TILE_CUH
#define HUBSCOPE_SGEMM_TILE_CUH

#define SG_TM 128
#define SG_TK 8
#define SG_PAD 4
#define SG_THREADS 256

struct SgemmShared {
    float a[2][SG_TK][SG_TM + SG_PAD];
    float b[2][SG_TK][SG_TM + SG_PAD];
};

// sg_row / sg_col map micro-tile index m in 0..7 to the tile-local row / column.
__device__ __forceinline__ int sg_row(int m) { return (m < 4) ? ((threadIdx.x >> 4) * 4 + m) : (64 + (threadIdx.x >> 4) * 4 + m - 4); }
__device__ __forceinline__ int sg_col(int m) { return (m < 4) ? ((threadIdx.x & 15) * 4 + m) : (64 + (threadIdx.x & 15) * 4 + m - 4); }

__device__ __forceinline__ void sg_store(SgemmShared& s, int buf, int lr, int lk, float4 a, float4 b) {
    s.a[buf][lk + 0][lr] = a.x;
    s.a[buf][lk + 1][lr] = a.y;
    s.a[buf][lk + 2][lr] = a.z;
    s.a[buf][lk + 3][lr] = a.w;
    s.b[buf][lk + 0][lr] = b.x;
    s.b[buf][lk + 1][lr] = b.y;
    s.b[buf][lk + 2][lr] = b.z;
    s.b[buf][lk + 3][lr] = b.w;
}

// sgemm_tile computes acc[m][n] = Σ_k U[r0+row(m)][k]·U[c0+col(n)][k] for k < K.
__device__ __forceinline__ void sgemm_tile(const float* __restrict__ U, long long ld, long long K,
                                           long long r0, long long c0, SgemmShared& s, float (&acc)[8][8]) {
    const int tid = threadIdx.x;
    const int lr = tid >> 1;        // tile row this thread loads (0..127)
    const int lk = (tid & 1) * 4;   // its float4's offset along k
    const float* a_src = U + (r0 + lr) * ld + lk;
    const float* b_src = U + (c0 + lr) * ld + lk;
#pragma unroll
    for (int m = 0; m < 8; ++m)
#pragma unroll
        for (int n = 0; n < 8; ++n) acc[m][n] = 0.0f;

    float4 a_reg = __ldg(reinterpret_cast<const float4*>(a_src));
    float4 b_reg = __ldg(reinterpret_cast<const float4*>(b_src));
    sg_store(s, 0, lr, lk, a_reg, b_reg);
    __syncthreads();

    const int ty4 = (tid >> 4) * 4, tx4 = (tid & 15) * 4;
    int buf = 0;
    for (long long k0 = 0; k0 < K; k0 += SG_TK) {
        const bool more = k0 + SG_TK < K;
        if (more) {  // prefetch the next step into registers while this one computes
            a_reg = __ldg(reinterpret_cast<const float4*>(a_src + k0 + SG_TK));
            b_reg = __ldg(reinterpret_cast<const float4*>(b_src + k0 + SG_TK));
        }
#pragma unroll
        for (int kk = 0; kk < SG_TK; ++kk) {
            const float4 a0 = *reinterpret_cast<const float4*>(&s.a[buf][kk][ty4]);
            const float4 a1 = *reinterpret_cast<const float4*>(&s.a[buf][kk][64 + ty4]);
            const float4 b0 = *reinterpret_cast<const float4*>(&s.b[buf][kk][tx4]);
            const float4 b1 = *reinterpret_cast<const float4*>(&s.b[buf][kk][64 + tx4]);
            const float a[8] = {a0.x, a0.y, a0.z, a0.w, a1.x, a1.y, a1.z, a1.w};
            const float b[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
            for (int m = 0; m < 8; ++m)
#pragma unroll
                for (int n = 0; n < 8; ++n) acc[m][n] = fmaf(a[m], b[n], acc[m][n]);
        }
        if (more) {
            // The other buffer was last read in the previous step, which every thread finished
            // before the barrier that ended it.
            sg_store(s, buf ^ 1, lr, lk, a_reg, b_reg);
            __syncthreads();
            buf ^= 1;
        }
    }
}

#endif
