package schema

// NormReferenceFile is the description of a normative folder (`norm build DERIV --out NORM`,
// or the group step of `cohort --slurm --norm-out NORM`): NormReference, beside the folder's mean_<map>.nii.gz, sd_<map>.nii.gz,
// hubs.nii.gz and nodes.nii.gz. A bundle's comparison with such a folder had the same name
// before it became NormFile (NormFileOld), but lives in the bundle, not the normative folder.
const NormReferenceFile = "norm.json"

// NormReference is a normative folder's norm.json: the cohort's subjects, the common grid
// (dimensions and affine) and its nodes, the nodal maps whose per-voxel mean and SD the folder
// holds, the hub rule applied to the cohort's mean degree and its hub count, and the settings
// the cohort was analysed with (flat JSON keys), which a compared run must share.
type NormReference struct {
	Software string        `json:"software"`
	Version  string        `json:"version"`
	Subjects []string      `json:"subjects"`
	Dims     [3]int        `json:"grid"`
	Affine   [4][4]float64 `json:"affine"`
	Nodes    int           `json:"nodes"`
	Maps     []string      `json:"maps"`
	HubRule  string        `json:"hub_rule"`
	Hubs     int           `json:"hubs"`
	// ThresholdHubs counts the cohort hubs of every threshold of a sweep (degree map name →
	// hubs), when the cohort was analysed with one.
	ThresholdHubs map[string]int `json:"threshold_hubs,omitempty"`
	Settings      map[string]any `json:"settings"`
}
