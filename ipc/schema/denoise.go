package schema

// DenoiseQCFile is the cleaning's quality report in the bundle (DenoiseQC).
const DenoiseQCFile = "qc/denoise.json"

// Denoise is metrics.json's "denoise": what the cleaning of the series did (docs/denoise.md);
// absent when the series were used as loaded.
type Denoise struct {
	Strategy      string   `json:"strategy"` // in words
	ConfoundsFile string   `json:"confounds_file,omitempty"`
	Confounds     []string `json:"confounds,omitempty"`
	// ConfoundRank is the number of independent confound directions regressed out.
	ConfoundRank int          `json:"confound_rank"`
	TR           float64      `json:"tr_seconds,omitempty"` // stated when the cleaning needed it (a band-pass)
	TRSource     string       `json:"tr_source,omitempty"`
	Options      CleanOptions `json:"options"`
	VolumesIn    int          `json:"volumes_in"`
	VolumesKept  int          `json:"volumes_kept"`
	Dropped      int          `json:"dropped_volumes"`  // the first volumes, left out
	Censored     []int        `json:"censored_volumes"` // volumes left out after them (original indices)
	// VarianceRemoved is the share of the detrended series' variance the cleaning removed.
	VarianceRemoved float64 `json:"variance_removed"`
}

// CleanOptions are nilearn's signal.clean arguments as the cleaning used them (the engine's
// denoise.Options, field for field, names in nilearn's words where they exist).
type CleanOptions struct {
	Drop         int     `json:"drop_volumes,omitempty"`
	Detrend      bool    `json:"detrend"`
	DetrendOrder int     `json:"detrend_order,omitempty"`
	Filter       string  `json:"filter,omitempty"` // "", "butterworth" or "cosine"
	HighPass     float64 `json:"high_pass,omitempty"`
	LowPass      float64 `json:"low_pass,omitempty"`
	Order        int     `json:"butterworth_order,omitempty"`
	TR           float64 `json:"t_r,omitempty"`
	// Standardize is "", "zscore", "zscore_sample" or "psc".
	Standardize          string `json:"standardize,omitempty"`
	StandardizeConfounds bool   `json:"standardize_confounds"`
}

// DenoiseQC is qc/denoise.json: the Denoise report with the per-volume traces the Quality tab
// and the report plot and check (Power et al. 2014).
type DenoiseQC struct {
	Denoise
	// FD is the framewise displacement (mm) and StdDVARS the standardised DVARS from the
	// confounds table, when it has them; null where the table says n/a.
	FD       []*float64 `json:"framewise_displacement,omitempty"`
	StdDVARS []*float64 `json:"std_dvars,omitempty"`
	// DVARSBefore is the RMS over voxels of the volume-to-volume change, % of the voxel's mean;
	// DVARSAfter the same on the cleaned (z-scored) series, in SD units.
	DVARSBefore []float64 `json:"dvars_before"`
	DVARSAfter  []float64 `json:"dvars_after"`
}
