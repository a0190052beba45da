// components_flatten: after the last components_hook, parent[v] := the root of v's tree (the
// smallest node of its component), so the host reads the component of every node directly.
// Roots do not change any more, so concurrent writes only shorten paths other threads walk.
//
// Launch: grid ceil(n/256), block 256.
extern "C" __global__ void __launch_bounds__(256)
components_flatten(unsigned int* parent, long long n) {
    const long long v = (long long)blockIdx.x * 256 + threadIdx.x;
    if (v >= n) return;
    volatile unsigned int* vp = parent;
    unsigned int cur = vp[v], next;
    while (cur > (next = vp[cur])) cur = next;
    vp[v] = cur;
}
