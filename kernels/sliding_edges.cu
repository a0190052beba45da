// sliding_edges: the edges of every window of a chunk of sliding windows by rank-2s updates
// of the windows' cross-products (docs/algorithms.md, "Dynamic connectivity"). xc is the
// centred series (float64, column-major: xc[t·n + i]); window c = 0 … count−1 covers columns
// [s0 + c·step, s0 + c·step + w), s0 = first·step; a, d, b are sliding_stats' per-row values.
//
// A CTA owns a 64×64 tile of pairs (rows i0 + [0,64), columns j0 + [0,64), j0 ≥ i0; tiles
// below the diagonal leave at once) and keeps its cross-products S_ij in float64 registers,
// 4×4 per thread (rows ty + 16u, columns tx + 16v: a warp's shared-memory reads of a staged
// column are consecutive doubles, free of bank conflicts), while it sweeps every window of
// the chunk:
//
//     S_ij  = Σ_{t ∈ window 0} x_it x_jt                            (re-basing, once per chunk)
//     S_ij += x_{i,t+w} x_{j,t+w} − x_{i,t} x_{j,t}                  (per entering/leaving pair)
//     c_ij  = S_ij − a_i a_j,  keep when c_ij > b_i d_j  (|c_ij| with abs),  r_ij = c_ij/(d_i d_j)
//
// so memory traffic is the series' columns (staged through shared memory 8 at a time) and the
// emitted edges. Window c's edges go to out[c·capacity …] with counts[c] counting past
// capacity (the host retries with a larger one). Only pairs j > i, both < n, count.
//
// Launch: grid (tiles, rows) with tiles = ceil(n/64), CTA tile row blockIdx.y + tileRow0;
// block 256; static shared memory 36 KiB.
#include "common.cuh"

#define SL_T 64  // tile edge
#define SL_P 8   // columns (or column pairs, or windows' statistics) staged per batch

extern "C" __global__ void __launch_bounds__(256)
sliding_edges(const double* __restrict__ xc, long long n, long long w, long long step, long long first, long long count,
              const double* __restrict__ a, const double* __restrict__ d, const double* __restrict__ b, long long flags,
              long long tileRow0, Edge* __restrict__ out, unsigned long long* __restrict__ counts, long long capacity) {
    const long long ti = blockIdx.y + tileRow0, tj = blockIdx.x;
    if (tj < ti) return;
    const long long i0 = ti * SL_T, j0 = tj * SL_T;
    __shared__ double sNew[2][SL_P][SL_T];  // [0] rows, [1] columns: entering volume (or re-basing column)
    __shared__ double sOld[2][SL_P][SL_T];  // leaving volume
    __shared__ double sA[2][SL_P][SL_T];    // a_i, a_j of the windows tested in the batch
    __shared__ double sB[SL_P][SL_T];       // b_i
    __shared__ double sD[2][SL_P][SL_T];    // d_i, d_j
    const int tid = threadIdx.x, tx = tid & 15, ty = tid >> 4;
    const bool abs = (flags & OP_ABS) != 0;
    const long long s0 = first * step;
    // The thread's pairs that count: j > i, j < n (i < n follows).
    unsigned int valid = 0;
#pragma unroll
    for (int u = 0; u < 4; u++)
#pragma unroll
        for (int v = 0; v < 4; v++) {
            const long long i = i0 + ty + 16 * u, j = j0 + tx + 16 * v;
            valid |= (unsigned int)(j > i && j < n) << (u * 4 + v);
        }
    double acc[4][4];
#pragma unroll
    for (int u = 0; u < 4; u++)
#pragma unroll
        for (int v = 0; v < 4; v++) acc[u][v] = 0;

    // Stages column t of xc (rows and columns of the tile) into dst[side][p].
    auto stageColumn = [&](double (*dst)[SL_P][SL_T], int p, long long t, int k) {
        const int side = k >> 6, r = k & 63;
        const long long g = (side ? j0 : i0) + r;
        dst[side][p][r] = g < n ? xc[t * n + g] : 0.0;
    };
    // Stages window c's statistics into slot p.
    auto stageStats = [&](int p, long long c, int k) {
        const int side = k >> 6, r = k & 63;
        const long long g = (side ? j0 : i0) + r;
        const long long q = c * n + g;
        sA[side][p][r] = g < n ? a[q] : 0.0;
        sD[side][p][r] = g < n ? d[q] : 1.0;
        if (!side) sB[p][r] = g < n ? b[q] : __longlong_as_double(0x7ff0000000000000LL);
    };
    // Tests window c from slot p and appends its edges.
    auto test = [&](long long c, int p) {
        unsigned int mask = 0;
        double cv[4][4];
#pragma unroll
        for (int u = 0; u < 4; u++) {
            const int ri = ty + 16 * u;
            const double ai = sA[0][p][ri], bi = sB[p][ri];
#pragma unroll
            for (int v = 0; v < 4; v++) {
                const int cj = tx + 16 * v;
                const double x = acc[u][v] - ai * sA[1][p][cj];
                cv[u][v] = x;
                const double lim = bi * sD[1][p][cj];
                mask |= (unsigned int)((abs ? fabs(x) : x) > lim) << (u * 4 + v);
            }
        }
        mask &= valid;
        if (!__any_sync(0xffffffffu, mask != 0)) return;
        Edge* o = out + c * capacity;
#pragma unroll
        for (int u = 0; u < 4; u++) {
            const int ri = ty + 16 * u;
#pragma unroll
            for (int v = 0; v < 4; v++) {
                const int cj = tx + 16 * v;
                const bool pass = (mask >> (u * 4 + v)) & 1u;
                double r = cv[u][v] / (sD[0][p][ri] * sD[1][p][cj]);
                if (abs) r = fabs(r);
                append_edge(pass, (unsigned int)(i0 + ri), (unsigned int)(j0 + cj), (float)r, o, &counts[c],
                            (unsigned long long)capacity);
            }
        }
    };
    auto rank1 = [&](int p) {
        double ru[4], cv[4];
#pragma unroll
        for (int u = 0; u < 4; u++) ru[u] = sNew[0][p][ty + 16 * u];
#pragma unroll
        for (int v = 0; v < 4; v++) cv[v] = sNew[1][p][tx + 16 * v];
#pragma unroll
        for (int u = 0; u < 4; u++)
#pragma unroll
            for (int v = 0; v < 4; v++) acc[u][v] = fma(ru[u], cv[v], acc[u][v]);
    };

    // Re-basing: S over window 0's columns, SL_P at a time.
    for (long long t0 = s0; t0 < s0 + w; t0 += SL_P) {
        const int np = (int)min((long long)SL_P, s0 + w - t0);
        for (int k = tid; k < SL_P * 2 * SL_T; k += 256) {
            const int p = k / (2 * SL_T);
            if (p < np) stageColumn(sNew, p, t0 + p, k % (2 * SL_T));
        }
        if (t0 == s0)
            for (int k = tid; k < 2 * SL_T; k += 256) stageStats(0, 0, k);
        __syncthreads();
        for (int p = 0; p < np; p++) rank1(p);
        __syncthreads();
    }
    // sA/sB/sD slot 0 still holds window 0's statistics (the loop above staged them first).
    test(0, 0);
    __syncthreads();

    // Updates: event e = 0 … (count−1)·step − 1 adds column s0 + w + e and removes column
    // s0 + e; after event e with (e+1) % step == 0, window (e+1)/step is complete.
    const long long events = (count - 1) * step;
    for (long long e0 = 0; e0 < events; e0 += SL_P) {
        const int np = (int)min((long long)SL_P, events - e0);
        const long long cLo = e0 / step + 1;                // first window that may complete here
        const long long cHi = (e0 + np) / step;             // last window completing here
        for (int k = tid; k < SL_P * 2 * SL_T; k += 256) {
            const int p = k / (2 * SL_T);
            if (p < np) {
                stageColumn(sNew, p, s0 + w + e0 + p, k % (2 * SL_T));
                stageColumn(sOld, p, s0 + e0 + p, k % (2 * SL_T));
            }
        }
        for (long long c = cLo; c <= cHi; c++)
            for (int k = tid; k < 2 * SL_T; k += 256) stageStats((int)(c - cLo), c, k);
        __syncthreads();
        // Events into the current window and the next window to complete, counted instead of
        // a 64-bit % and / per event.
        long long phase = e0 - (cLo - 1) * step, c = cLo;
        for (int p = 0; p < np; p++) {
            double rn[4], cn[4], ro[4], co[4];
#pragma unroll
            for (int u = 0; u < 4; u++) {
                rn[u] = sNew[0][p][ty + 16 * u];
                ro[u] = sOld[0][p][ty + 16 * u];
            }
#pragma unroll
            for (int v = 0; v < 4; v++) {
                cn[v] = sNew[1][p][tx + 16 * v];
                co[v] = sOld[1][p][tx + 16 * v];
            }
#pragma unroll
            for (int u = 0; u < 4; u++)
#pragma unroll
                for (int v = 0; v < 4; v++) acc[u][v] = fma(rn[u], cn[v], fma(-ro[u], co[v], acc[u][v]));
            if (++phase == step) {
                test(c, (int)(c - cLo));
                phase = 0;
                c++;
            }
        }
        __syncthreads();
    }
}
