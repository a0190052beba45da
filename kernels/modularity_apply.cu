// modularity_apply: y = B^(G) x for Newman's generalized modularity matrix of a group G
// (Newman 2006, eq. 6; community's groupModularityMatrix.apply):
//
//	y_i = Σ_{j∈G} A_ij x_j − k_i (kᵀx)/2m − (Σ_{l∈G} B_il) x_i,
//
// over the group's own CSR (local indices; weights w, or null for a binary graph), with kx =
// kᵀx already on the device (krylov_dots/krylov_sum of k and x). One thread per row.
//
// Launch: grid ceil(n/256), block 256.
extern "C" __global__ void __launch_bounds__(256)
modularity_apply(const long long* __restrict__ off, const int* __restrict__ adj, const double* __restrict__ w,
                 const double* __restrict__ k, const double* __restrict__ rowSum, const double* __restrict__ kx,
                 double twoM, const double* __restrict__ x, double* __restrict__ y, long long n) {
    const long long i = (long long)blockIdx.x * 256 + threadIdx.x;
    if (i >= n) return;
    double ax = 0;
    if (w) {
        for (long long p = off[i], e = off[i + 1]; p < e; p++) ax = fma(w[p], x[adj[p]], ax);
    } else {
        for (long long p = off[i], e = off[i + 1]; p < e; p++) ax += x[adj[p]];
    }
    y[i] = ax - k[i] * (kx[0] / twoM) - rowSum[i] * x[i];
}
