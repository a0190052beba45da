// popc_tile.cuh: the exact integer dot product of Kendall sign vectors stored as bit-planes,
// shared by both Kendall kernels (edges, histogram) so the two passes agree bit for bit.
//
// A sign vector z_i ∈ {−1, 0, +1}^M (M = L(L−1)/2 pairs k < q) is two planes of M bits,
// P_i (z = +1) and N_i (z = −1). Since a bit is never set in both planes,
//   z_i·z_j = popc(P_i&P_j) + popc(N_i&N_j) − popc(P_i&N_j) − popc(N_i&P_j)
//           = popc((P_i&P_j) | (N_i&N_j)) − popc((P_i&N_j) | (N_i&P_j)),
// two popcounts per 32-bit word instead of four.
//
// Tile: 64 rows × 64 columns per CTA of 256 threads, each thread a 4×4 micro-tile (rows
// 4ty..4ty+3, columns 4tx..4tx+3; tx = tid mod 16, ty = tid / 16); 16 words per step through
// double-buffered shared memory. Planes are row-major with ldw words per row (a multiple of
// 16, zero-padded) and at least 63 zero rows past the last series.
#ifndef HUBSCOPE_POPC_TILE_CUH
#define HUBSCOPE_POPC_TILE_CUH

#define PC_TM 64
#define PC_TK 16
#define PC_PAD 4
#define PC_THREADS 256

struct PopcShared {
    unsigned int pa[2][PC_TK][PC_TM + PC_PAD];
    unsigned int na[2][PC_TK][PC_TM + PC_PAD];
    unsigned int pb[2][PC_TK][PC_TM + PC_PAD];
    unsigned int nb[2][PC_TK][PC_TM + PC_PAD];
};

__device__ __forceinline__ void pc_store(unsigned int (&dst)[PC_TK][PC_TM + PC_PAD], int lr, int lk, uint4 v) {
    dst[lk + 0][lr] = v.x;
    dst[lk + 1][lr] = v.y;
    dst[lk + 2][lr] = v.z;
    dst[lk + 3][lr] = v.w;
}

// popc_tile computes dot[m][n] = z_{r0+4ty+m} · z_{c0+4tx+n} exactly.
__device__ __forceinline__ void popc_tile(const unsigned int* __restrict__ P, const unsigned int* __restrict__ N,
                                          long long ldw, long long r0, long long c0, PopcShared& s, int (&dot)[4][4]) {
    const int tid = threadIdx.x;
    const int lr = tid >> 2;        // tile row this thread loads (0..63)
    const int lk = (tid & 3) * 4;   // its uint4's offset along the words
    const long long ao = (r0 + lr) * ldw + lk, bo = (c0 + lr) * ldw + lk;
#pragma unroll
    for (int m = 0; m < 4; ++m)
#pragma unroll
        for (int n = 0; n < 4; ++n) dot[m][n] = 0;

    uint4 pa = __ldg(reinterpret_cast<const uint4*>(P + ao)), na = __ldg(reinterpret_cast<const uint4*>(N + ao));
    uint4 pb = __ldg(reinterpret_cast<const uint4*>(P + bo)), nb = __ldg(reinterpret_cast<const uint4*>(N + bo));
    pc_store(s.pa[0], lr, lk, pa);
    pc_store(s.na[0], lr, lk, na);
    pc_store(s.pb[0], lr, lk, pb);
    pc_store(s.nb[0], lr, lk, nb);
    __syncthreads();

    const int ty4 = (tid >> 4) * 4, tx4 = (tid & 15) * 4;
    int buf = 0;
    for (long long w0 = 0; w0 < ldw; w0 += PC_TK) {
        const bool more = w0 + PC_TK < ldw;
        if (more) {
            pa = __ldg(reinterpret_cast<const uint4*>(P + ao + w0 + PC_TK));
            na = __ldg(reinterpret_cast<const uint4*>(N + ao + w0 + PC_TK));
            pb = __ldg(reinterpret_cast<const uint4*>(P + bo + w0 + PC_TK));
            nb = __ldg(reinterpret_cast<const uint4*>(N + bo + w0 + PC_TK));
        }
#pragma unroll
        for (int kk = 0; kk < PC_TK; ++kk) {
            const uint4 p4 = *reinterpret_cast<const uint4*>(&s.pa[buf][kk][ty4]);
            const uint4 n4 = *reinterpret_cast<const uint4*>(&s.na[buf][kk][ty4]);
            const uint4 q4 = *reinterpret_cast<const uint4*>(&s.pb[buf][kk][tx4]);
            const uint4 m4 = *reinterpret_cast<const uint4*>(&s.nb[buf][kk][tx4]);
            const unsigned int ap[4] = {p4.x, p4.y, p4.z, p4.w}, an[4] = {n4.x, n4.y, n4.z, n4.w};
            const unsigned int bp[4] = {q4.x, q4.y, q4.z, q4.w}, bn[4] = {m4.x, m4.y, m4.z, m4.w};
#pragma unroll
            for (int m = 0; m < 4; ++m)
#pragma unroll
                for (int n = 0; n < 4; ++n)
                    dot[m][n] += __popc((ap[m] & bp[n]) | (an[m] & bn[n])) - __popc((ap[m] & bn[n]) | (an[m] & bp[n]));
        }
        if (more) {
            pc_store(s.pa[buf ^ 1], lr, lk, pa);
            pc_store(s.na[buf ^ 1], lr, lk, na);
            pc_store(s.pb[buf ^ 1], lr, lk, pb);
            pc_store(s.nb[buf ^ 1], lr, lk, nb);
            __syncthreads();
            buf ^= 1;
        }
    }
}

// popc_tile_no_ties is popc_tile for rows without ties (n_i = M: every pair k < q of the
// series differs, the rule for continuous data). Then N_i is the complement of P_i on the M
// valid bits, and
//   z_i·z_j = M − 2·popc(P_i ^ P_j)
// (agreeing pairs +1, disagreeing −1; padding bits are 0 in both planes), one popcount per
// word and half the shared-memory traffic. Same tile shape; only the P planes are read.
__device__ __forceinline__ void popc_tile_no_ties(const unsigned int* __restrict__ P, long long ldw, long long pairs,
                                                  long long r0, long long c0, PopcShared& s, int (&dot)[4][4]) {
    const int tid = threadIdx.x;
    const int lr = tid >> 2;
    const int lk = (tid & 3) * 4;
    const long long ao = (r0 + lr) * ldw + lk, bo = (c0 + lr) * ldw + lk;
    int differ[4][4];
#pragma unroll
    for (int m = 0; m < 4; ++m)
#pragma unroll
        for (int n = 0; n < 4; ++n) differ[m][n] = 0;
    uint4 pa = __ldg(reinterpret_cast<const uint4*>(P + ao));
    uint4 pb = __ldg(reinterpret_cast<const uint4*>(P + bo));
    pc_store(s.pa[0], lr, lk, pa);
    pc_store(s.pb[0], lr, lk, pb);
    __syncthreads();
    const int ty4 = (tid >> 4) * 4, tx4 = (tid & 15) * 4;
    int buf = 0;
    for (long long w0 = 0; w0 < ldw; w0 += PC_TK) {
        const bool more = w0 + PC_TK < ldw;
        if (more) {
            pa = __ldg(reinterpret_cast<const uint4*>(P + ao + w0 + PC_TK));
            pb = __ldg(reinterpret_cast<const uint4*>(P + bo + w0 + PC_TK));
        }
#pragma unroll
        for (int kk = 0; kk < PC_TK; ++kk) {
            const uint4 p4 = *reinterpret_cast<const uint4*>(&s.pa[buf][kk][ty4]);
            const uint4 q4 = *reinterpret_cast<const uint4*>(&s.pb[buf][kk][tx4]);
            const unsigned int ap[4] = {p4.x, p4.y, p4.z, p4.w}, bp[4] = {q4.x, q4.y, q4.z, q4.w};
#pragma unroll
            for (int m = 0; m < 4; ++m)
#pragma unroll
                for (int n = 0; n < 4; ++n) differ[m][n] += __popc(ap[m] ^ bp[n]);
        }
        if (more) {
            pc_store(s.pa[buf ^ 1], lr, lk, pa);
            pc_store(s.pb[buf ^ 1], lr, lk, pb);
            __syncthreads();
            buf ^= 1;
        }
    }
#pragma unroll
    for (int m = 0; m < 4; ++m)
#pragma unroll
        for (int n = 0; n < 4; ++n) dot[m][n] = (int)pairs - 2 * differ[m][n];
}

// kendall_tau is fc.KendallTau: float32(float64(dot) / sqrt(float64(n_i)·float64(n_j))), every
// step rounded to nearest in float64 so the value is bit-identical to the Go formula.
__device__ __forceinline__ float kendall_tau(int dot, long long ni, long long nj) {
    if (ni == 0 || nj == 0) return 0.0f;
    return __double2float_rn(__ddiv_rn((double)dot, __dsqrt_rn(__dmul_rn((double)ni, (double)nj))));
}

#endif
