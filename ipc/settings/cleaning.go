package settings

import (
	"math"
	"strconv"
	"strings"
)

// Cleaning strategies (Cleaning.Denoise, --denoise; helper/denoise, helper/confounds).
const (
	DenoiseAuto      = "auto"      // fMRIPrep's "simple" when a confounds table is found, else detrend + band-pass 0.01–0.08 Hz + 5 tCompCor
	DenoiseSimple    = "simple"    // nilearn's load_confounds_strategy("simple") + signal.clean
	DenoiseScrubbing = "scrubbing" // likewise with "scrubbing"
	DenoiseCompcor   = "compcor"   // likewise with "compcor"
	DenoiseNone      = "none"      // the series as loaded (explicit options still apply)
)

// DenoiseStrategies are the choices, in the order help texts list them.
var DenoiseStrategies = []string{DenoiseAuto, DenoiseSimple, DenoiseScrubbing, DenoiseCompcor, DenoiseNone}

// Cleaning is the cleaning of the series before correlation (docs/denoise.md): a strategy and
// explicit options that add to it. The pipeline turns it into its CleanConfig.
type Cleaning struct {
	Denoise   string  `json:"denoise"`             // one of DenoiseStrategies ("" is none)
	Confounds string  `json:"confounds,omitempty"` // confounds table; "" = found beside an fMRIPrep image
	TR        float64 `json:"tr,omitempty"`        // seconds; 0 = the BIDS sidecar's or the header's
	Detrend   bool    `json:"detrend,omitempty"`
	// Band is the band-pass "LOW,HIGH" in Hz (0 leaves that edge open; "" none beyond the
	// strategy's). BandEdges parses it.
	Band         string  `json:"band,omitempty"`
	DropVolumes  int     `json:"drop_volumes,omitempty"`
	FD           float64 `json:"fd_mm,omitempty"`         // censor volumes with framewise displacement above (mm)
	DVARS        float64 `json:"std_dvars,omitempty"`     // censor volumes with standardised DVARS above
	GlobalSignal bool    `json:"global_signal,omitempty"` // regress the global signal too
	// ConfoundColumns are columns of the confounds table, "a,b,c", regressed instead of a
	// preset's. Columns splits them.
	ConfoundColumns string `json:"confound_columns,omitempty"`
}

func (g *Cleaning) fields() []Field {
	return []Field{
		{"denoise", "denoise", "STRATEGY", "cleaning before correlation: auto (fMRIPrep's simple strategy when a confounds table is found, else detrend + band-pass 0.01–0.08 Hz + 5 tCompCor), simple, scrubbing, compcor or none", &g.Denoise},
		{"confounds", "confounds", "FILE", "confounds table (fMRIPrep TSV) for the scan (default: found beside a *_desc-preproc_bold.nii.gz)", &g.Confounds},
		{"tr", "tr", "SECONDS", "repetition time (default: the BIDS sidecar's RepetitionTime, else the header's)", &g.TR},
		{"detrend", "detrend", "", "remove mean and linear trend (on with every preset)", &g.Detrend},
		{"band", "band", "LOW,HIGH", "band-pass in Hz, e.g. 0.01,0.08 (0 leaves an edge open)", &g.Band},
		{"drop_volumes", "drop-volumes", "N", "drop the first N volumes (non-steady state; Wang et al. dropped 10)", &g.DropVolumes},
		{"fd_mm", "fd", "MM", "censor volumes with framewise displacement above MM (and segments shorter than 5)", &g.FD},
		{"std_dvars", "dvars", "Z", "censor volumes with standardised DVARS above Z", &g.DVARS},
		{"global_signal", "global-signal", "", "regress the global signal too", &g.GlobalSignal},
		{"confound_columns", "confound-columns", "COLUMNS", "regress these columns of the confounds table (a,b,c) instead of a preset", &g.ConfoundColumns},
	}
}

func (g *Cleaning) defaults() { g.Denoise = DenoiseAuto }

func (g *Cleaning) validate(s *Settings) error {
	if g.Denoise != "" {
		if err := s.oneOf("denoise", "cleaning strategy", g.Denoise, DenoiseStrategies); err != nil {
			return err
		}
	}
	if _, err := g.BandEdges(); err != nil {
		return s.Errorf("band", "%q: %v", g.Band, err)
	}
	const none = "%g: want a finite value ≥ 0 (0: none)"
	if err := s.inRange(
		rule{"tr", g.TR, g.TR >= 0, none},
		rule{"drop_volumes", float64(g.DropVolumes), g.DropVolumes >= 0, none},
		rule{"fd_mm", g.FD, g.FD >= 0, none},
		rule{"std_dvars", g.DVARS, g.DVARS >= 0, none},
	); err != nil {
		return err
	}
	for _, c := range g.Columns() {
		if c == "" {
			return s.Errorf("confound_columns", "%q has an empty column name: want a,b,c", g.ConfoundColumns)
		}
	}
	return nil
}

// BandEdges parses Band: [0, 0] when it is empty.
func (g *Cleaning) BandEdges() ([2]float64, error) {
	var b [2]float64
	if g.Band == "" {
		return b, nil
	}
	lo, hi, ok := strings.Cut(strings.ReplaceAll(strings.TrimSpace(g.Band), " ", ","), ",")
	var e1, e2 error
	if ok {
		b[0], e1 = strconv.ParseFloat(strings.TrimSpace(lo), 64)
		b[1], e2 = strconv.ParseFloat(strings.TrimSpace(hi), 64)
	}
	if !ok || e1 != nil || e2 != nil {
		return b, &bandError{"want LOW,HIGH in Hz, e.g. 0.01,0.08"}
	}
	if b[0] < 0 || b[1] < 0 || math.IsNaN(b[0]) || math.IsNaN(b[1]) || (b[0] > 0 && b[1] > 0 && b[0] >= b[1]) {
		return b, &bandError{"want 0 ≤ LOW < HIGH in Hz (0 leaves that edge open)"}
	}
	return b, nil
}

type bandError struct{ s string }

func (e *bandError) Error() string { return e.s }

// Columns splits ConfoundColumns at commas (nil when it is empty).
func (g *Cleaning) Columns() []string {
	if g.ConfoundColumns == "" {
		return nil
	}
	cols := strings.Split(g.ConfoundColumns, ",")
	for i := range cols {
		cols[i] = strings.TrimSpace(cols[i])
	}
	return cols
}
