package schema

// The head-motion and registration reports in the bundle's qc/ folder.
const (
	MotionFile       = "qc/motion.json"
	RegistrationFile = "qc/registration.json"
)

// Motion is qc/motion.json: what realignment (run --realign; docs/algorithms.md) found and did.
type Motion struct {
	Realigned     bool   `json:"realigned"`
	Reason        string `json:"reason"`
	Volumes       int    `json:"volumes"`
	Passes        int    `json:"passes"`
	Interpolation string `json:"reslice_interpolation"`
	// Framewise displacement (Power et al. 2012): mean and largest, and the volumes over 0.5 mm.
	MeanFD           float64 `json:"mean_fd_mm"`
	MaxFD            float64 `json:"max_fd_mm"`
	VolumesOverFD05  int     `json:"volumes_fd_over_0_5mm"`
	MaxTranslationMM float64 `json:"max_abs_translation_mm"`
	MaxRotationDeg   float64 `json:"max_abs_rotation_deg"`
	UncoveredVoxels  int     `json:"voxels_outside_some_volume"`
	// Auto's screen (--realign auto): the largest displacement from the first volume that the
	// coarse first look found, and the threshold it was held against (mm).
	ScreenMaxDisplacementMM float64 `json:"auto_screen_max_displacement_mm,omitempty"`
	ScreenThresholdMM       float64 `json:"auto_screen_threshold_mm,omitempty"`
}

// Registration is qc/registration.json: whether and how the scan was put in MNI space (run
// --register).
type Registration struct {
	Estimated bool                `json:"estimated"`
	Reason    string              `json:"reason"`
	Seconds   float64             `json:"seconds,omitempty"`
	Result    *RegistrationResult `json:"result,omitempty"`
	// LabelsUseIt says whether the hubs' atlas labels were looked up through the affine.
	LabelsUseIt bool `json:"atlas_labels_use_it"`
}

// RegistrationResult is an affine registration of the scan's mean EPI to the MNI152 template.
type RegistrationResult struct {
	// ToMNI maps scan world coordinates (mm) to MNI coordinates: x_MNI = ToMNI · x_scan.
	ToMNI [4][4]float64 `json:"scan_to_mni"`
	// Params: translations (mm), rotations (rad), zooms, shears of the template→scan map about
	// the template's brain centre, after the centre-of-mass start.
	Params [12]float64 `json:"params"`
	// MI is the mutual information (nats) reached at the finest level.
	MI float64 `json:"mutual_information"`
	// Zooms are the scales of ToMNI's linear part along its singular directions, Shear the
	// largest off-diagonal of its upper-triangular factor: the plausibility checks' inputs.
	Zooms [3]float64 `json:"zooms"`
	Shear float64    `json:"max_shear"`
	// Plausible is false when the scaling or shear is beyond what a head can need (Problem says
	// which): the network stands, but atlas labels must not be trusted.
	Plausible bool   `json:"plausible"`
	Problem   string `json:"problem,omitempty"`
}
