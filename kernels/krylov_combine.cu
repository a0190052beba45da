// krylov_combine: y = beta·y + alpha·Σ_{i<count} c[i]·v_i over the Lanczos basis (vector i at
// basis + i·n): the Gram–Schmidt update w −= V c (beta 1, alpha −1), and the Ritz vectors of a
// restart or of the result (beta 0, alpha 1). One thread per entry, i in increasing order.
//
// Launch: grid ceil(n/256), block 256.
extern "C" __global__ void __launch_bounds__(256)
krylov_combine(const double* __restrict__ basis, long long n, long long count, const double* __restrict__ c,
               double* __restrict__ y, double beta, double alpha) {
    const long long k = (long long)blockIdx.x * 256 + threadIdx.x;
    if (k >= n) return;
    double s = 0;
    for (long long i = 0; i < count; i++) s = fma(c[i], basis[i * n + k], s);
    y[k] = (beta == 0 ? 0.0 : beta * y[k]) + alpha * s;
}
