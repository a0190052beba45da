// kendall_signs: Kendall's series preparation (docs/algorithms.md, "Connectivity measures"): the sign vector
//   z_i = ( sign(x_ik − x_iq) )_{k<q},  pairs ordered k = 0, q = 1..L−1; k = 1, q = 2..L−1; …
// of length M = L(L−1)/2, stored as two bit-planes (bit p of P_i: z = +1, of N_i: z = −1;
// a tie sets neither), n_i = #{p : z_ip ≠ 0}, the pairs not tied in series i, and
// p_i = #{p : z_ip = +1} (the tie-free tensor-core form needs it). Words
// ldw·32 ≥ M past the end are zero, so they add nothing to a dot product.
//
// Launch: grid n (one CTA per row), block 256, dynamic shared memory l·4 bytes; thread t
// builds words t, t+256, …, decoding the first pair of each word from its index.
#include "common.cuh"

// pair_start(k) is the index of pair (k, k+1): the number of pairs whose first element is < k.
__device__ __forceinline__ long long pair_start(long long k, long long l) { return k * (2 * l - k - 1) / 2; }

extern "C" __global__ void __launch_bounds__(256)
kendall_signs(const float* __restrict__ x, long long n, long long l,
              unsigned int* __restrict__ P, unsigned int* __restrict__ N, long long ldw,
              long long* __restrict__ nonzero, long long* __restrict__ positives) {
    extern __shared__ float row_values[];
    __shared__ unsigned long long row_nonzero, row_positive;
    const long long row = blockIdx.x;
    if (row >= n) return;
    if (threadIdx.x == 0) row_nonzero = row_positive = 0;
    for (long long k = threadIdx.x; k < l; k += blockDim.x) row_values[k] = x[row * l + k];
    __syncthreads();
    const long long M = l * (l - 1) / 2;
    unsigned long long mine = 0, mine_positive = 0;
    for (long long w = threadIdx.x; w < ldw; w += blockDim.x) {
        unsigned int pw = 0, nw = 0;
        long long p = w * 32;
        if (p < M) {
            // Largest k with pair_start(k) ≤ p: the float64 root of the quadratic, then exact fix-up.
            const double b = 2.0 * (double)l - 1.0;
            long long k = (long long)((b - sqrt(b * b - 8.0 * (double)p)) / 2.0);
            if (k < 0) k = 0;
            if (k > l - 2) k = l - 2;
            while (k > 0 && pair_start(k, l) > p) --k;
            while (k < l - 2 && pair_start(k + 1, l) <= p) ++k;
            long long q = k + 1 + (p - pair_start(k, l));
            for (int bit = 0; bit < 32 && p < M; ++bit, ++p) {
                const float a = row_values[k], c = row_values[q];
                pw |= (unsigned int)(a > c) << bit;
                nw |= (unsigned int)(a < c) << bit;
                if (++q == l) {
                    ++k;
                    q = k + 1;
                }
            }
        }
        P[row * ldw + w] = pw;
        N[row * ldw + w] = nw;
        mine += __popc(pw | nw);
        mine_positive += __popc(pw);
    }
    atomicAdd(&row_nonzero, mine);
    atomicAdd(&row_positive, mine_positive);
    __syncthreads();
    if (threadIdx.x == 0) {
        nonzero[row] = (long long)row_nonzero;
        positives[row] = (long long)row_positive;
    }
}
