package schema

// NormFile is the comparison with a normative cohort in the bundle (NormComparison). Bundles
// written before 0.1.0's successor name it NormFileOld, the name of a normative folder's own
// description (NormReference); readers look for both (NormFileIn).
const (
	NormFile    = "norm_comparison.json"
	NormFileOld = "norm.json"
)

// NormFileIn is the name of the bundle's comparison among a bundle's file names: NormFile,
// or NormFileOld in an older bundle; "" without one.
func NormFileIn(names []string) string {
	old := ""
	for _, n := range names {
		switch n {
		case NormFile:
			return n
		case NormFileOld:
			old = n
		}
	}
	return old
}

// NormComparison is norm_comparison.json (run --norm): the scan's nodal maps against a normative
// cohort's per-voxel mean and SD, z = (x − mean) / SD at every node of the scan that is a node
// of the cohort (SD > 0).
type NormComparison struct {
	ZCut     float64 `json:"z_cut"`
	Compared int     `json:"nodes_compared"`
	// Clusters are the face-connected sets of nodes with |degree z| > ZCut, one sign each.
	Clusters []NormCluster `json:"clusters"`
	// LostCount is the cohort hubs with degree z < −ZCut; GainedCount the scan's hubs that are
	// no cohort hub and have degree z > ZCut; CohortHubs the cohort's hub count.
	LostCount   int `json:"hubs_lost"`
	GainedCount int `json:"hubs_gained"`
	CohortHubs  int `json:"cohort_hubs"`
	// Thresholds are the hubs lost at every threshold of a sweep (cohort and run both swept).
	Thresholds []NormThresholdLoss `json:"thresholds,omitempty"`
}

// NormCluster is one cluster of nodes with |degree z| above the cut, all of one sign.
type NormCluster struct {
	Sign   int        `json:"sign"` // −1 below the cohort, +1 above
	Voxels int        `json:"voxels"`
	PeakZ  float64    `json:"peak_z"`
	Peak   [3]int     `json:"peak_ijk"`
	PeakMM [3]float64 `json:"peak_mm"`
	Region string     `json:"region,omitempty"`
}

// Direction says in words on which side of the cohort the cluster lies.
func (c NormCluster) Direction() string {
	if c.Sign > 0 {
		return "above the cohort"
	}
	return "below the cohort"
}

// NormThresholdLoss is one sweep threshold's comparison: the degree map at that threshold,
// the cohort's hubs there and how many of them the scan lost.
type NormThresholdLoss struct {
	Map        string `json:"map"`
	CohortHubs int    `json:"cohort_hubs"`
	Lost       int    `json:"hubs_lost"`
}
