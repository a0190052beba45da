// bmma_tile.cuh: the Kendall sign-vector dot products on the tensor cores' single-bit path,
// mma.sync.m16n8k256.b1.and.popc (sm_80+): D = popc(A_row & B_col) + C over 256-bit slices,
// exact integer arithmetic. Measured on an H200: about 10¹⁶ bit-operations/s against
// 1.3·10¹⁴ for SIMT popcounts.
//
// With P/N the +1/−1 bit-planes (popc_tile.cuh), the dot product is
//   z_i·z_j = pc(P_i&P_j) + pc(N_i&N_j) − pc(P_i&N_j) − pc(N_i&P_j)   (four AND-popc products),
// and for rows without ties (N = ¬P on the M valid bits, p_i = pc(P_i) positives)
//   z_i·z_j = M − 2·pc(P_i ^ P_j) = M − 2p_i − 2p_j + 4·pc(P_i&P_j)   (one product).
//
// Tile: 64 rows × 64 columns per CTA of 256 threads = 8 warps in 4 (rows) × 2 (columns);
// a warp owns 16 rows × 32 columns = four m16n8 tiles. Lane (g = lane/4, t = lane%4) holds
// the accumulators of rows 16w_r + g (+8) and columns 32w_c + 8q + 2t (+1), q = 0..3
// (the mma C layout). A and B fragments take words t and t+4 of each 8-word (256-bit) slice
// of a row, the same for both operands, so the K order inside a slice cancels out.
// Planes: row-major, ldw words per row (a multiple of 16) and ≥ 63 zero rows past the end.
#ifndef HUBSCOPE_BMMA_TILE_CUH
#define HUBSCOPE_BMMA_TILE_CUH

#define BM_TM 64
#define BM_TK 8       // words (256 bits) per step
#define BM_STRIDE 12  // words per shared row: 8 + 4 of padding, conflict-free fragment reads

struct BmmaShared {
    unsigned int p[2][2][BM_TM * BM_STRIDE];  // [buffer][A, B]
    unsigned int n[2][2][BM_TM * BM_STRIDE];
};

__device__ __forceinline__ void bmma(int (&d)[4], unsigned a0, unsigned a1, unsigned a2, unsigned a3, unsigned b0, unsigned b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.and.popc "
        "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
        : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

// bmma_row / bmma_col: tile-local row and column of accumulator (q, c) of this thread.
__device__ __forceinline__ int bmma_row(int q, int c) {
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    (void)q;
    return (warp >> 1) * 16 + (lane >> 2) + 8 * (c >> 1);
}
__device__ __forceinline__ int bmma_col(int q, int c) {
    const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
    return (warp & 1) * 32 + q * 8 + 2 * (lane & 3) + (c & 1);
}

// bmma_tile computes dot[q][c] = z_{r0+row(q,c)} · z_{c0+col(q,c)} exactly. tie_free (uniform
// across the CTA) selects the one-product form, which needs positives[] (p_i) and pairs (M).
__device__ __forceinline__ void bmma_tile(const unsigned int* __restrict__ P, const unsigned int* __restrict__ N,
                                          const long long* __restrict__ positives, long long ldw, long long pairs,
                                          long long r0, long long c0, bool tie_free, BmmaShared& s, int (&dot)[4][4]) {
    const int tid = threadIdx.x;
    const int side = tid >> 7;            // 0: loads rows of A (r0…), 1: of B (c0…)
    const int lrow = (tid & 127) >> 1;    // 0..63
    const int lw = (tid & 1) * 4;         // word offset of its uint4 in the 8-word slice
    const long long src = ((side ? c0 : r0) + lrow) * ldw + lw;
    const int dst = lrow * BM_STRIDE + lw;
    const int warp = tid >> 5, lane = tid & 31, g = lane >> 2, t = lane & 3;
    const int arow = (warp >> 1) * 16 + g;   // A fragment rows arow, arow + 8
    const int bcol = (warp & 1) * 32 + g;    // B fragment rows (columns of the tile) bcol + 8q

    int conc[4][4], disc[4][4];
#pragma unroll
    for (int q = 0; q < 4; ++q)
#pragma unroll
        for (int c = 0; c < 4; ++c) conc[q][c] = disc[q][c] = 0;

    uint4 pv = __ldg(reinterpret_cast<const uint4*>(P + src));
    uint4 nv = tie_free ? make_uint4(0, 0, 0, 0) : __ldg(reinterpret_cast<const uint4*>(N + src));
    *reinterpret_cast<uint4*>(&s.p[0][side][dst]) = pv;
    if (!tie_free) *reinterpret_cast<uint4*>(&s.n[0][side][dst]) = nv;
    __syncthreads();
    int buf = 0;
    for (long long w0 = 0; w0 < ldw; w0 += BM_TK) {
        const bool more = w0 + BM_TK < ldw;
        if (more) {
            pv = __ldg(reinterpret_cast<const uint4*>(P + src + w0 + BM_TK));
            if (!tie_free) nv = __ldg(reinterpret_cast<const uint4*>(N + src + w0 + BM_TK));
        }
        const unsigned int* sa = s.p[buf][0];
        const unsigned int* sb = s.p[buf][1];
        const unsigned a0 = sa[arow * BM_STRIDE + t], a1 = sa[(arow + 8) * BM_STRIDE + t];
        const unsigned a2 = sa[arow * BM_STRIDE + t + 4], a3 = sa[(arow + 8) * BM_STRIDE + t + 4];
        if (tie_free) {
#pragma unroll
            for (int q = 0; q < 4; ++q) {
                const int br = (bcol + 8 * q) * BM_STRIDE;
                bmma(conc[q], a0, a1, a2, a3, sb[br + t], sb[br + t + 4]);
            }
        } else {
            const unsigned int* na = s.n[buf][0];
            const unsigned int* nb = s.n[buf][1];
            const unsigned e0 = na[arow * BM_STRIDE + t], e1 = na[(arow + 8) * BM_STRIDE + t];
            const unsigned e2 = na[arow * BM_STRIDE + t + 4], e3 = na[(arow + 8) * BM_STRIDE + t + 4];
#pragma unroll
            for (int q = 0; q < 4; ++q) {
                const int br = (bcol + 8 * q) * BM_STRIDE;
                const unsigned pb0 = sb[br + t], pb1 = sb[br + t + 4], nb0 = nb[br + t], nb1 = nb[br + t + 4];
                bmma(conc[q], a0, a1, a2, a3, pb0, pb1);  // P_i & P_j
                bmma(conc[q], e0, e1, e2, e3, nb0, nb1);  // N_i & N_j
                bmma(disc[q], a0, a1, a2, a3, nb0, nb1);  // P_i & N_j
                bmma(disc[q], e0, e1, e2, e3, pb0, pb1);  // N_i & P_j
            }
        }
        if (more) {
            // The other buffer was last read in the previous step, finished before its barrier.
            *reinterpret_cast<uint4*>(&s.p[buf ^ 1][side][dst]) = pv;
            if (!tie_free) *reinterpret_cast<uint4*>(&s.n[buf ^ 1][side][dst]) = nv;
            __syncthreads();
            buf ^= 1;
        }
    }
#pragma unroll
    for (int q = 0; q < 4; ++q)
#pragma unroll
        for (int c = 0; c < 4; ++c) {
            if (tie_free) {
                const long long i = r0 + bmma_row(q, c), j = c0 + bmma_col(q, c);
                dot[q][c] = (int)(pairs - 2 * positives[i] - 2 * positives[j]) + 4 * conc[q][c];
            } else {
                dot[q][c] = conc[q][c] - disc[q][c];
            }
        }
}

#endif
