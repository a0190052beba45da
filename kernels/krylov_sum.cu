// krylov_sum: out[i] = Σ_c partial[i·chunks + c] in increasing c (krylov_dots' second step);
// with accumulate, coef[i] += out[i] as well (the Gram–Schmidt coefficients of both passes).
//
// Launch: grid ceil(count/256), block 256.
extern "C" __global__ void __launch_bounds__(256)
krylov_sum(const double* __restrict__ partial, long long chunks, long long count, double* __restrict__ out,
           double* __restrict__ coef) {
    const long long i = (long long)blockIdx.x * 256 + threadIdx.x;
    if (i >= count) return;
    double s = 0;
    for (long long c = 0; c < chunks; c++) s += partial[i * chunks + c];
    out[i] = s;
    if (coef) coef[i] += s;
}
