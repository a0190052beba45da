// common.cuh: definitions every HubScope kernel shares: the edge record, the block-pair
// geometry (which pairs of a block count), the histogram bin formula and the warp-aggregated
// append of surviving edges. Included by the kernels; not a kernel itself.
//
// Every kernel parameter is 64 bits wide (pointers, long long, double): the Go launcher
// (gorgonia.org/cu Function.Launch) copies each parameter as 8 bytes.
#ifndef HUBSCOPE_COMMON_CUH
#define HUBSCOPE_COMMON_CUH

// Edge is fc.Edge byte for byte (uint32 I, uint32 J, float32 W; 12 bytes), so the host copies
// the device's edge list straight into the slice it hands to the sink.
struct Edge {
    unsigned int i, j;
    float w;
};

// Op flags, mirrored in helper/backend/cuda (opAbs, opInclusive).
#define OP_ABS 1LL
#define OP_INCLUSIVE 2LL

// BlockPair is the rectangle rows [i0,i1) × columns [j0,j1). A pair (i, j) of it counts when
// both are inside and, where the rectangle reaches the diagonal (j0 < i1), j > i: the strict
// upper triangle that fc.Block promises to the sink.
struct BlockPair {
    long long i0, i1, j0, j1;
};

__device__ __forceinline__ bool pair_counts(const BlockPair& b, long long i, long long j) {
    return i < b.i1 && j < b.j1 && (b.j0 >= b.i1 || j > i);
}

// tile_below_diagonal says that a tile of rows [r0, r0+tm) and columns [c0, c0+tn) holds no
// pair with j > i, so the whole CTA can leave before loading anything.
__device__ __forceinline__ bool tile_below_diagonal(const BlockPair& b, long long r0, long long c0, int tn) {
    return b.j0 < b.i1 && c0 + tn - 1 <= r0;
}

// connection_value applies fc.Op.Abs: the value that is thresholded, binned and emitted.
__device__ __forceinline__ float connection_value(float v, long long flags) {
    return (flags & OP_ABS) ? fabsf(v) : v;
}

// passes_threshold is fc.Op for OpEdges, compared in float64 exactly as the Go code does:
// float64(v) > Threshold, or ≥ when Inclusive.
__device__ __forceinline__ bool passes_threshold(float v, double threshold, long long flags) {
    double x = (double)v;
    return (flags & OP_INCLUSIVE) ? (x >= threshold) : (x > threshold);
}

// bin_of is fc.Op.BinOf: b = int((x − Lo)/(Hi − Lo)·Bins) clamped to [0, Bins−1], every step
// rounded to nearest in float64 (no contraction into an FMA) so a value lands in the bin the
// Go code would choose. scale = Bins/(Hi − Lo) gives a fast estimate t' = (x − Lo)·scale:
// t' and the exact t are both within two roundings (≤ 4.5e−16·|t|) of the real quotient, so
// when t' lies farther than 1e−9·(|t'| + 1) from every integer they share their integer part
// and the division is skipped; otherwise the exact formula decides.
__device__ __forceinline__ long long bin_of(float v, double lo, double hi, long long bins, double scale) {
    const double d = __dsub_rn((double)v, lo);
    const double tf = __dmul_rn(d, scale);
    const double fl = floor(tf);
    const double margin = 1e-9 * (fabs(tf) + 1.0);
    double t;
    if (tf - fl > margin && fl + 1.0 - tf > margin) {
        t = fl;  // same integer part as the exact t
    } else {
        t = __dmul_rn(__ddiv_rn(d, __dsub_rn(hi, lo)), (double)bins);
    }
    if (!(t >= 0.0)) return 0;  // Go: int(t) < 0 → 0; int(t) == 0 for t in (−1, 0)
    if (t >= (double)bins) return bins - 1;
    return (long long)t;        // truncation toward zero, as Go's int(float64)
}

// bin_scale is the bin_of fast path's Bins/(Hi − Lo).
__device__ __forceinline__ double bin_scale(double lo, double hi, long long bins) { return (double)bins / (hi - lo); }

// count_bin adds one value to bin b. The end bins collect every value clamped below Lo or
// above Hi: when the driver narrows the range to the top of the distribution, nearly all of a
// block's pairs land in bin 0, and one global atomic each would serialize on one address. So
// the end bins are counted in registers (low, high) and added once per warp by
// flush_edge_bins; interior bins, where values spread out, take a global atomic each.
__device__ __forceinline__ void count_bin(unsigned long long* __restrict__ hist, long long b, long long bins,
                                          unsigned int& low, unsigned int& high) {
    if (b == 0) {
        ++low;
    } else if (b == bins - 1) {
        ++high;
    } else {
        atomicAdd(&hist[b], 1ULL);
    }
}

// flush_edge_bins adds the warp's register counts of the end bins; every lane must call it.
__device__ __forceinline__ void flush_edge_bins(unsigned long long* __restrict__ hist, long long bins,
                                                unsigned int low, unsigned int high) {
    low = __reduce_add_sync(0xffffffffu, low);
    high = __reduce_add_sync(0xffffffffu, high);
    if ((threadIdx.x & 31) == 0) {
        if (low) atomicAdd(&hist[0], (unsigned long long)low);
        if (high) atomicAdd(&hist[bins - 1], (unsigned long long)high);
    }
}

// append_edge appends (i, j, w) for the lanes whose pass is true with one atomic per warp:
// the lowest passing lane reserves popc(ballot) slots and the others take consecutive ones by
// their rank among the passing lanes. The counter keeps counting past capacity so the host
// learns how large a buffer the retry needs. Every lane of the warp must call it.
__device__ __forceinline__ void append_edge(bool pass, unsigned int i, unsigned int j, float w,
                                            Edge* __restrict__ out, unsigned long long* __restrict__ count,
                                            unsigned long long capacity) {
    unsigned int mask = __ballot_sync(0xffffffffu, pass);
    if (mask == 0) return;
    int lane = threadIdx.x & 31;
    int leader = __ffs(mask) - 1;
    unsigned long long base = 0;
    if (lane == leader) base = atomicAdd(count, (unsigned long long)__popc(mask));
    base = __shfl_sync(0xffffffffu, base, leader);
    if (pass) {
        unsigned long long pos = base + __popc(mask & ((1u << lane) - 1u));
        if (pos < capacity) {
            Edge e;
            e.i = i;
            e.j = j;
            e.w = w;
            out[pos] = e;
        }
    }
}

#endif
