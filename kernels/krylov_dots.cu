// krylov_dots: partial dot products of the Lanczos basis vectors with the work vector for the
// leading-eigenvector method on the device (community's Lanczos solve, classical Gram–Schmidt
// run twice): block (c, i) sums v_i[k]·w[k] over its chunk k ∈ [2048c, 2048(c+1)) ∩ [0, n) by
// a fixed tree and writes partial[i·chunks + c]; krylov_sum adds the partials in order, so the
// dot products do not depend on the schedule. basis holds vector i at basis + i·n.
//
// Launch: grid chunks × count, block 256; chunks = ceil(n/2048).
extern "C" __global__ void __launch_bounds__(256)
krylov_dots(const double* __restrict__ basis, long long n, const double* __restrict__ w, double* __restrict__ partial,
            long long chunks) {
    __shared__ double s[256];
    const long long i = blockIdx.y, c = blockIdx.x;
    const double* v = basis + i * n;
    const long long lo = c * 2048, hi = min(lo + 2048, n);
    double acc = 0;
    for (long long k = lo + threadIdx.x; k < hi; k += 256) acc = fma(v[k], w[k], acc);
    s[threadIdx.x] = acc;
    __syncthreads();
    for (int h = 128; h > 0; h >>= 1) {
        if (threadIdx.x < h) s[threadIdx.x] += s[threadIdx.x + h];
        __syncthreads();
    }
    if (threadIdx.x == 0) partial[i * chunks + c] = s[0];
}
