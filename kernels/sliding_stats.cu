// sliding_stats: the per-row quantities of the incremental sliding-window test
// (docs/algorithms.md, "Dynamic connectivity"), for windows c = 0 … count−1 of a chunk, window
// c covering the columns [(first+c)·step, (first+c)·step + w) of the centred series xc
// (float64, column-major: xc[t·n + i]). Per row i and window c, by two passes over the window:
//
//     a = Σ_t x_it / √w,   d = D_i = √(Σ_t (x_it − m_i)²),   b = θ·D_i,
//
// written at [c·n + i]; a row whose w values are all equal (constant in the window, exactly:
// centring keeps distinct float32 values distinct) gets d = b = +Inf, so the test
// c_ij > b_i·d_j never passes for it (+Inf or NaN on the right).
//
// Launch: grid (ceil(n/256), count), block 256: one thread per row and window (a warp reads
// 32 consecutive rows of a column: coalesced).
extern "C" __global__ void __launch_bounds__(256)
sliding_stats(const double* __restrict__ xc, long long n, long long w, long long step, long long first, long long count,
              double theta, double* __restrict__ a, double* __restrict__ d, double* __restrict__ b) {
    const long long i = (long long)blockIdx.x * 256 + threadIdx.x;
    if (i >= n) return;
    const double rw = rsqrt((double)w);
    {
        const long long c = blockIdx.y;
        const long long s0 = (first + c) * step;
        const double v0 = xc[s0 * n + i];
        double sum = 0;
        bool constant = true;
        for (long long t = s0; t < s0 + w; t++) {
            const double v = xc[t * n + i];
            sum += v;
            constant = constant && v == v0;
        }
        const long long p = c * n + i;
        if (constant) {
            a[p] = 0;
            d[p] = __longlong_as_double(0x7ff0000000000000LL);
            b[p] = d[p];
            return;
        }
        const double m = sum / (double)w;
        double ss = 0;
        for (long long t = s0; t < s0 + w; t++) {
            const double e = xc[t * n + i] - m;
            ss = fma(e, e, ss);
        }
        a[p] = sum * rw;
        d[p] = sqrt(ss);
        b[p] = theta * d[p];
    }
}
