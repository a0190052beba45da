// split_f16x3: the fp16 split of the group mean's normalised series (group_f16x3_tile.cuh),
// done once in Prepare: x = 2^12·u, hi = fp16(x) (round to nearest even), lo = fp16(x − hi);
// x − hi is exact in fp32, so x = hi + lo up to lo's own rounding (≤ 2^−11·|x − hi| ≤
// 2^−22·|x|). Row r's ld floats of u become ldh halves in each plane (ldh ≥ ld, a multiple
// of 16; the tail past ld is zero, as u's padding past L is). Rows are node-major,
// subject-minor: row r is node r / S of subject r mod S.
//
// When fo > 0 each plane also gets its fragment-ordered copy fo halves further on
// (group_f16x3_tile.cuh, afrag): node n = 16G + 8u + g (u ∈ {0, 1}, g < 8), subject s, step
// qs = c / 16 of its row and physical half p = 4t + pp of the step go to
//   G·16·S·ldh + (s·ldh/16 + qs)·256 + (4g + t)·8 + 4·(pp / 2) + 2u + pp mod 2.
//
// Launch: grid ceil(rows·ldh/256), block 256: one thread per half of the rows × ldh planes.
#include <cuda_fp16.h>

#include "common.cuh"

extern "C" __global__ void __launch_bounds__(256)
split_f16x3(const float* __restrict__ u, long long ld, long long rows, long long ldh, long long S,
            unsigned short* __restrict__ hi, unsigned short* __restrict__ lo, long long fo) {
    const long long k = (long long)blockIdx.x * 256 + threadIdx.x;
    if (k >= rows * ldh) return;
    const long long r = k / ldh, c = k - r * ldh;
    const float x = c < ld ? u[r * ld + c] * 4096.0f : 0.0f;
    const __half h = __float2half_rn(x);
    const unsigned short hb = __half_as_ushort(h);
    const unsigned short lb = __half_as_ushort(__float2half_rn(x - __half2float(h)));
    hi[k] = hb;
    lo[k] = lb;
    if (fo > 0) {
        const long long n = r / S, s = r - n * S;
        const long long G = n >> 4, uu = (n >> 3) & 1, g = n & 7;
        const long long qs = c >> 4, p = c & 15, t = p >> 2, pp = p & 3;
        const long long o = G * 16 * S * ldh + (s * (ldh >> 4) + qs) * 256 + (4 * g + t) * 8 + 4 * (pp >> 1) + 2 * uu + (pp & 1);
        hi[fo + o] = hb;
        lo[fo + o] = lb;
    }
}
