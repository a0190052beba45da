// eigen_max: *m = max_i y_i for a non-negative vector (the power iteration of eigenvector
// centrality, graph.EigenvectorCentrality's scaleMax): non-negative doubles order as their bit
// patterns, so the maximum is an atomicMax on the bits; *m zeroed by the caller. Exact, like
// any maximum.
//
// Launch: any grid (blocks stride over the entries), block 256.
extern "C" __global__ void __launch_bounds__(256)
eigen_max(const double* __restrict__ y, long long n, unsigned long long* m) {
    __shared__ double s[256];
    double v = 0;
    for (long long i = (long long)blockIdx.x * 256 + threadIdx.x; i < n; i += (long long)gridDim.x * 256) v = fmax(v, y[i]);
    s[threadIdx.x] = v;
    __syncthreads();
    for (int h = 128; h > 0; h >>= 1) {
        if (threadIdx.x < h) s[threadIdx.x] = fmax(s[threadIdx.x], s[threadIdx.x + h]);
        __syncthreads();
    }
    if (threadIdx.x == 0) atomicMax(m, (unsigned long long)__double_as_longlong(s[0]));
}
