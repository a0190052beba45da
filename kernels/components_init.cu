// components_init: every node its own component before components_hook, parent[v] = v
// (ECL-CC, Jaiganesh & Burtscher 2018, with the invariant parent[v] ≤ v throughout).
//
// Launch: grid ceil(n/256), block 256.
extern "C" __global__ void __launch_bounds__(256)
components_init(unsigned int* __restrict__ parent, long long n) {
    const long long v = (long long)blockIdx.x * 256 + threadIdx.x;
    if (v < n) parent[v] = (unsigned int)v;
}
