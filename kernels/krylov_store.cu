// krylov_store: v = w / div, or v = w when div is 0 (a fresh direction, already of unit
// length): the next Lanczos basis vector.
//
// Launch: grid ceil(n/256), block 256.
extern "C" __global__ void __launch_bounds__(256)
krylov_store(const double* __restrict__ w, long long n, double div, double* __restrict__ v) {
    const long long k = (long long)blockIdx.x * 256 + threadIdx.x;
    if (k >= n) return;
    v[k] = div == 0 ? w[k] : w[k] / div;
}
