// csr_products: y = (A + diag·I) x for the binary symmetric adjacency A in CSR (graph.Graph's
// Offsets/Adj), one thread per row. Each y_i starts from diag·x_i and adds x_j in adjacency
// order, the order graph.CPU.Products (diag 0) and graph.EigenvectorCentrality (diag 1) use,
// so the device's sums are the host's bit for bit (no multiply, so nothing to contract).
//
// Launch: grid ceil(n/256), block 256.
extern "C" __global__ void __launch_bounds__(256)
csr_products(const long long* __restrict__ off, const int* __restrict__ adj, const double* __restrict__ x,
             double* __restrict__ y, long long n, long long diag) {
    const long long i = (long long)blockIdx.x * 256 + threadIdx.x;
    if (i >= n) return;
    double s = diag ? x[i] : 0.0;
    for (long long p = off[i], e = off[i + 1]; p < e; p++) s += x[adj[p]];
    y[i] = s;
}
