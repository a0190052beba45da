package report

import (
	"encoding/json"
	"fmt"
)

// NormFile is the bundle's comparison with a normative cohort, written when the scan was run
// against one (run --norm; docs/bundle.md).
const NormFile = "norm.json"

// NormComparison is the part of norm.json the report prints: how many nodes were compared
// with the cohort, the |z| cut, the cohort's hubs lost and the hubs gained, and the clusters
// of nodes whose degree differs from the cohort's (z = (x − mean) / SD per voxel).
type NormComparison struct {
	ZCut        float64       `json:"z_cut"`
	Compared    int           `json:"nodes_compared"`
	LostCount   int           `json:"hubs_lost"`
	GainedCount int           `json:"hubs_gained"`
	CohortHubs  int           `json:"cohort_hubs"`
	Clusters    []NormCluster `json:"clusters"`
}

// NormCluster is one cluster of nodes with |degree z| above the cut, all of one sign.
type NormCluster struct {
	Sign   int        `json:"sign"` // −1 below the cohort, +1 above
	Voxels int        `json:"voxels"`
	PeakZ  float64    `json:"peak_z"`
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

// ParseNorm decodes norm.json.
func ParseNorm(b []byte) (*NormComparison, error) {
	var n NormComparison
	if err := json.Unmarshal(b, &n); err != nil {
		return nil, fmt.Errorf("%s: %w", NormFile, err)
	}
	if n.Compared < 0 || n.LostCount < 0 || n.GainedCount < 0 || n.ZCut <= 0 {
		return nil, fmt.Errorf("%s: %d nodes compared, %d hubs lost, %d gained at |z| > %g: not a comparison", NormFile, n.Compared, n.LostCount, n.GainedCount, n.ZCut)
	}
	return &n, nil
}

// Lines are the comparison in words, one fact a line.
func (n *NormComparison) Lines() []string {
	return []string{
		fmt.Sprintf("Voxels compared with the cohort: %d (z = (patient − cohort mean) / cohort SD, per voxel)", n.Compared),
		fmt.Sprintf("Hubs lost: %d of the cohort's %d hubs have degree z < −%g", n.LostCount, n.CohortHubs, n.ZCut),
		fmt.Sprintf("Hubs gained: %d of the patient's hubs are no cohort hub and have degree z > %g", n.GainedCount, n.ZCut),
		fmt.Sprintf("Clusters of voxels with |degree z| > %g: %d", n.ZCut, len(n.Clusters)),
	}
}
