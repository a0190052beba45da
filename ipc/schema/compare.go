package schema

// ComparisonFile is a two-group comparison's record in its folder (Comparison), beside
// compare_global.tsv, compare_nodes.tsv and the t_/p_/q_<map>.nii.gz maps.
const ComparisonFile = "compare.json"

// Comparison is compare.json (hubscope-helper compare): which cohort was compared, how, and
// one of the compared runs' bundles whose grid the maps lie on (the app draws them over its
// anatomy and names regions with its atlas).
type Comparison struct {
	// Deriv is the cohort's derivatives folder (absolute).
	Deriv       string    `json:"deriv"`
	GroupColumn string    `json:"group_column"`
	Groups      [2]string `json:"groups"` // A, then B: t > 0 where A's mean is the larger
	N           [2]int    `json:"subjects"`
	Covariates  []string  `json:"covariates,omitempty"`
	// Alpha is the false discovery rate at which compare_nodes.tsv lists nodes.
	Alpha        float64 `json:"alpha"`
	Permutations int     `json:"permutations"`
	// Maps are the nodal maps compared (degree, …): each has t_, p_ and q_<map>.nii.gz.
	Maps []string `json:"maps"`
	// Nodes are the voxels that are nodes in every compared run (the maps' support);
	// Significant counts, per map, the nodes with q ≤ Alpha.
	Nodes       int            `json:"nodes"`
	Significant map[string]int `json:"significant"`
	// ReferenceBundle is the first compared run's bundle (absolute): the maps' grid.
	ReferenceBundle string `json:"reference_bundle"`
}
