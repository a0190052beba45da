package report

import (
	"encoding/json"
	"fmt"

	"github.com/hubscope/hubscope/ipc/schema"
)

// NormFile is the bundle's comparison with a normative cohort, written when the scan was run
// against one (run --norm; docs/bundle.md).
const NormFile = schema.NormFile

// NormComparison is norm_comparison.json (schema.NormComparison; norm.json in older bundles), which the report prints: how many nodes
// were compared with the cohort, the |z| cut, the cohort's hubs lost and the hubs gained, and
// the clusters of nodes whose degree differs from the cohort's (z = (x − mean) / SD per voxel).
type NormComparison struct{ schema.NormComparison }

// NormCluster is one cluster of nodes with |degree z| above the cut, all of one sign.
type NormCluster = schema.NormCluster

// ParseNorm decodes the bundle's comparison (NormFile).
func ParseNorm(b []byte) (*NormComparison, error) {
	var n NormComparison
	if err := json.Unmarshal(b, &n.NormComparison); err != nil {
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
		fmt.Sprintf("Voxels compared with the cohort: %d (z = (patient - cohort mean) / cohort SD, per voxel)", n.Compared),
		fmt.Sprintf("Hubs lost: %d of the cohort's %d hubs have degree z < -%g", n.LostCount, n.CohortHubs, n.ZCut),
		fmt.Sprintf("Hubs gained: %d of the patient's hubs are no cohort hub and have degree z > %g", n.GainedCount, n.ZCut),
		fmt.Sprintf("Clusters of voxels with |degree z| > %g: %d", n.ZCut, len(n.Clusters)),
	}
}
