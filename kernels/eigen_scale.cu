// eigen_scale: one step's normalisation in eigenvector centrality's power iteration
// (graph.EigenvectorCentrality): y_i ← y_i / m when m = *mbits > 0 (eigen_max), and *change =
// max_i |y_i − x_i| against the previous iterate x, by atomicMax on the bits of the
// non-negative differences (*change zeroed by the caller). Divisions round as the host's, so
// the iterates are the host's bit for bit.
//
// Launch: any grid (blocks stride over the entries), block 256.
extern "C" __global__ void __launch_bounds__(256)
eigen_scale(double* __restrict__ y, const double* __restrict__ x, long long n, const unsigned long long* mbits,
            unsigned long long* change) {
    __shared__ double s[256];
    const double m = __longlong_as_double((long long)*mbits);
    double c = 0;
    for (long long i = (long long)blockIdx.x * 256 + threadIdx.x; i < n; i += (long long)gridDim.x * 256) {
        double v = y[i];
        if (m > 0) {
            v = v / m;
            y[i] = v;
        }
        c = fmax(c, fabs(v - x[i]));
    }
    s[threadIdx.x] = c;
    __syncthreads();
    for (int h = 128; h > 0; h >>= 1) {
        if (threadIdx.x < h) s[threadIdx.x] = fmax(s[threadIdx.x], s[threadIdx.x + h]);
        __syncthreads();
    }
    if (threadIdx.x == 0) atomicMax(change, (unsigned long long)__double_as_longlong(s[0]));
}
