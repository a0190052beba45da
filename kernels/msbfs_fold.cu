// msbfs_fold: after level d of an MS-BFS batch, adds each source's count of nodes first
// reached at distance d to its sums (graph's sourceSums: nodes reached, the sum of their
// distances, the sum of their inverse distances, the last as counts[k]/d in increasing d) and
// clears the count for the next level.
//
// Launch: grid ceil(s/256), block 256.
extern "C" __global__ void __launch_bounds__(256)
msbfs_fold(unsigned int* __restrict__ counts, long long s, long long d, unsigned long long* __restrict__ reached,
           unsigned long long* __restrict__ dist, double* __restrict__ inv) {
    const long long k = (long long)blockIdx.x * 256 + threadIdx.x;
    if (k >= s) return;
    const unsigned int c = counts[k];
    if (!c) return;
    counts[k] = 0;
    reached[k] += c;
    dist[k] += (unsigned long long)c * (unsigned long long)d;
    inv[k] += (double)c / (double)d;
}
