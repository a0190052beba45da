// Package cuda is HubScope's GPU backend: an fc.Backend that prepares the series (normalized
// rows, average ranks, Kendall sign bit-planes) on an NVIDIA GPU and processes block pairs
// with fused kernels, so only the surviving edges (or a histogram) of a block ever leave the
// device (docs/algorithms.md, "Block-wise construction"; Zhao et al. Algorithm 1).
//
// Built with -tags cuda it uses the CUDA driver API through gorgonia.org/cu and the kernels
// embedded in package kernels; it needs the NVIDIA driver (libcuda.so.1) at run time and
// nothing else: no CUDA runtime, no cuBLAS. Built without the tag, New and Available report
// that the binary has no CUDA support, so callers fall back to the CPU backend.
//
// A CUDA context belongs to one OS thread: every driver call runs on one goroutine locked to
// its thread, which executes closures sent to it.
//
// Limits of the cuda build: gorgonia.org/cu v0.9.6 calls cuInit in its package init and exits
// the process when it fails (driver present, no GPU), and the binary links libcuda.so.1, so a
// -tags cuda helper starts only where the NVIDIA driver is installed; on such machines New and
// Available report a missing or too old GPU as an error wrapping ErrNoDevice.
package cuda

import "errors"

var (
	// ErrNoCUDA is returned by New, Available and Devices in a binary built without -tags cuda.
	ErrNoCUDA = errors.New("cuda backend: this binary was built without CUDA support (rebuild with -tags cuda)")
	// ErrNoDevice is returned (wrapped) when the driver reports no usable GPU.
	ErrNoDevice = errors.New("cuda backend: no usable CUDA device")
)

// Options configure the CUDA backend.
type Options struct {
	// Device is the CUDA device ordinal (0 = first GPU).
	Device int
	// BlockRows overrides the block height chosen from free device memory (0 = automatic).
	// It is rounded up to a multiple of 128.
	BlockRows int
	// EdgeCapacity is the initial number of edges each of the two in-flight blocks can return
	// without a retry (0 = automatic). A block with more survivors is recomputed once with a
	// buffer large enough, which then stays allocated for the following blocks.
	EdgeCapacity int
	// MaxEdgeCapacity bounds that buffer (0 = 1<<27 edges, 1.5 GiB on the device and as much
	// pinned host memory per in-flight block). A block with more survivors is processed in
	// halves of its rows, gathered in host memory and handed over as the one planned block;
	// a device out of memory for the buffer is handled the same way.
	MaxEdgeCapacity int
	// TF32x3 computes Pearson/Spearman products on the tensor cores with the error-compensated
	// 3×TF32 split (kernels/tf32x3_tile.cuh: hi·hi + hi·lo + lo·hi, each 8-wide k step summed
	// by the tensor cores and added to an fp32 accumulator with round-to-nearest) instead of
	// the default fp32 SIMT product. It is more accurate (kernels/NOTES.md: 7.6e−7 against
	// 2.1e−6 on L = 1500) but, at this tile shape, 5–10 % slower on an H200, so it is opt-in.
	// Plain TF32 without compensation is never used.
	TF32x3 bool
	// KendallSIMT computes Kendall dot products with SIMT popcounts instead of the tensor
	// cores' single-bit mma (same integers; for comparison and for debugging).
	KendallSIMT bool
	// NoRowEmission turns off fc.RowEmitter (device-side CSR order per row panel), so the
	// driver assembles blocks on the host as for any backend (for comparison and debugging).
	NoRowEmission bool
	// RowStageCapacity is the initial number of kept edges a row panel can stage without a
	// retry (0 = 1<<24). A panel with more is recomputed once with room, which then stays.
	RowStageCapacity int
	// Subjects > 1 makes the backend the group mean Fisher z of that many subjects, the
	// device counterpart of helper/group.FisherZ: Prepare takes the subjects' series
	// concatenated along time (N × S·L, subject s in columns [s·L, (s+1)·L) of every row),
	// every subject's rows are normalised on the device and stay resident there, and each
	// block pair's value is tanh((1/S) Σ_s atanh r_s), summed over the subjects inside one
	// kernel (kernels/group_tile.cuh). Kendall's τ is refused, as on the CPU. Blocks take the
	// block path (no row emission). Its products run on the tensor cores with an
	// error-compensated fp16 split (kernels/group_f16x3_tile.cuh: 2¹²·u = hi + lo in halves,
	// hi·hi + hi·lo + lo·hi per 16-wide k step, summed in fp32), all subjects in one stream.
	Subjects int
	// GroupProduct picks the group mean's tile product (kernels/group_tile.cuh); the zero
	// value is GroupTensorCores.
	GroupProduct GroupProduct
}

// GroupProduct is the group mean's tile product (Options.GroupProduct).
type GroupProduct int

const (
	// GroupTensorCores: the 3×FP16 stream with its row operand read from fragment-ordered
	// copies of the planes (the default; the planes take 4 bytes per value twice over), on
	// 256 × 128 tiles with the running sums in shared memory where the device allows a
	// kernel 224 KiB of it (sm_90), else on GroupTensorCores128's tiles.
	GroupTensorCores GroupProduct = iota
	// GroupTensorCoresPlain: the same products from the plain planes only (half the device
	// memory, slower: register moves to assemble each row fragment).
	GroupTensorCoresPlain
	// GroupTensorCoresAtanh: GroupTensorCoresPlain on 128 × 128 tiles, folding each
	// subject's r with atanhf instead of the multi-function unit's lg2 (for comparison).
	GroupTensorCoresAtanh
	// GroupSIMT: the fp32 SIMT tile per subject (3×TF32 with Options.TF32x3).
	GroupSIMT
	// GroupTensorCores128: GroupTensorCores on 128 × 128 tiles with the running sums in
	// registers (the same values bit for bit; for comparison).
	GroupTensorCores128
)
