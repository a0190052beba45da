// Package kernels holds HubScope's CUDA kernels: the CUDA C sources (*.cu, one job each,
// sharing common.cuh and the tile products sgemm_tile.cuh, tf32x3_tile.cuh, popc_tile.cuh and bmma_tile.cuh, group_tile.cuh and group_f16x3_tile.cuh for the
// group mean, and graph_common.cuh for the graph analytics) and the fatbin
// nvcc compiled from them, embedded so that the helper built with -tags cuda needs only the
// NVIDIA driver at run time (the CUDA backend loads it with cuModuleLoadData).
//
// This package is plain Go with no build tag: CI, which has no nvcc, checks through
// kernels_test.go that the committed fatbin was generated from the committed sources.
package kernels

import _ "embed"

//go:generate bash generate.sh

// Fatbin is the compiled module: cubin for sm_80, sm_86, sm_89 and sm_90 and PTX for
// compute_80 (the driver JIT-compiles it on newer architectures).
//
//go:embed hubscope.fatbin
var Fatbin []byte

// Names of the kernels in Fatbin, one per .cu file of the same name.
const (
	NormalizeRows        = "normalize_rows"
	AverageRanks         = "average_ranks"
	KendallSigns         = "kendall_signs"
	CorrelationEdges     = "correlation_edges"
	CorrelationHistogram = "correlation_histogram"
	KendallEdges         = "kendall_edges"
	KendallHistogram     = "kendall_histogram"
	CorrelationValues    = "correlation_values"
	KendallValues        = "kendall_values"
	TopKSelect           = "topk_select"
	CheckSeries          = "check_series"
	CorrelationRows      = "correlation_rows"
	PanelDegrees         = "panel_degrees"
	PanelScan            = "panel_scan"
	PanelGather          = "panel_gather"
	KeysHistogram        = "keys_histogram"
	PanelTrim            = "panel_trim"
	PanelCompact         = "panel_compact"
	ComponentsInit       = "components_init"
	ComponentsHook       = "components_hook"
	ComponentsFlatten    = "components_flatten"
	SplitTF32            = "split_tf32"
	SplitF16x3           = "split_f16x3"
	GroupEdges           = "group_edges"
	GroupHistogram       = "group_histogram"
	GroupValues          = "group_values"
	// Graph analytics (helper/backend/cuda's graph.Accelerator).
	CSRProducts    = "csr_products"
	TriangleCounts = "triangle_counts"
	MSBFSSources   = "msbfs_sources"
	MSBFSLevel     = "msbfs_level"
	MSBFSPush      = "msbfs_push"
	MSBFSFold      = "msbfs_fold"
	RewireTable    = "rewire_table"
	RewirePropose  = "rewire_propose"
	RewireAccept   = "rewire_accept"
	CSRScatter     = "csr_scatter"
	CSRSortRows    = "csr_sort_rows"
	// The leading-eigenvector method's Lanczos solves (community.KrylovDevice).
	KrylovDots      = "krylov_dots"
	KrylovSum       = "krylov_sum"
	KrylovCombine   = "krylov_combine"
	KrylovStore     = "krylov_store"
	ModularityApply = "modularity_apply"
	LocalEfficiency = "local_efficiency"
	EigenMax        = "eigen_max"
	EigenScale      = "eigen_scale"
	// Incremental sliding windows (fc.Sliding on the CUDA backend).
	SlidingStats = "sliding_stats"
	SlidingEdges = "sliding_edges"
	// Each window's CSR network, degrees and triangles on the device (fc.SlidingCSR).
	SlidingRows      = "sliding_rows"
	SlidingScan      = "sliding_scan"
	SlidingScatter   = "sliding_scatter"
	SlidingSort      = "sliding_sort"
	SlidingTriangles = "sliding_triangles"
)
