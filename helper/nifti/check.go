package nifti

import (
	"fmt"
	"math"
)

// Levels of a header Warning, on nibabel's scale (nibabel.batteryrunners.Report, whose levels
// are Python's logging levels): 20 is information, 30 a problem a reader can work around,
// 35 a value that is probably wrong, 40 a value the analysis cannot trust.
const (
	LevelInfo    = 20
	LevelWarning = 30
	LevelSerious = 35
	LevelError   = 40
)

// Warning is one header oddity that the reader works around rather than refuses: what is
// wrong (Problem), what the reader does about it (Fix), the header field concerned and how
// serious it is (Level, nibabel's scale). Where nibabel's header check reports the same
// problem, Problem and Fix are nibabel's own wording and Level its level, so the two can be
// compared (Source "nibabel"); checks nibabel does not make have Source "hubscope".
type Warning struct {
	Level   int    `json:"level"`
	Field   string `json:"field"`
	Problem string `json:"problem"`
	Fix     string `json:"fix"`
	Source  string `json:"source"`
}

func (w Warning) String() string {
	if w.Fix == "" {
		return fmt.Sprintf("%s: %s", w.Field, w.Problem)
	}
	return fmt.Sprintf("%s: %s (%s)", w.Field, w.Problem, w.Fix)
}

// Thresholds of the TR check. Whole-brain EPI is acquired with TRs from about 0.1 s (fast
// multiband and MR encephalography) to about 20 s (sparse-sampling designs); a value outside
// is more likely a unit error or a placeholder than an acquisition.
const (
	minPlausibleTR = 0.1
	maxPlausibleTR = 20
)

// sformQformTolerance is how far (in mm, at any corner of the grid) the sform and the qform
// may place a voxel before they count as disagreeing: the qform is stored as float32
// quaternions, which alone moves a 256 mm grid's corners by a few hundredths of a mm.
const sformQformTolerance = 0.1

// Check reports the oddities of a header that passed Validate: nibabel's own header checks
// (Nifti1Header._chk_qfac, AnalyzeHeader._chk_pixdims, _chk_qform_code, _chk_sform_code and
// the SPM-compatibility check of vox_offset) with nibabel's levels and messages, and the
// checks a time-series analysis needs beyond them: non-finite voxel sizes, sform and qform
// that disagree, a time unit that is unset or not a time, and a TR that is missing or
// implausible. Each Warning says what the reader does instead (the Fix); nothing is refused
// here — Validate refuses what cannot be read.
func (h *Header) Check() []Warning {
	var ws []Warning
	add := func(level int, field, problem, fix, source string) {
		ws = append(ws, Warning{Level: level, Field: field, Problem: problem, Fix: fix, Source: source})
	}
	// nibabel Nifti1Header._chk_qfac.
	if q := h.PixDim[0]; q != 1 && q != -1 {
		add(LevelInfo, "pixdim[0]", "pixdim[0] (qfac) should be 1 (default) or -1", "setting qfac to 1", "nibabel")
	}
	// nibabel AnalyzeHeader._chk_pixdims: zero and negative voxel sizes in one report, at
	// the level of the worse.
	var zero, neg, nonFinite bool
	for _, v := range h.PixDim[1:4] {
		switch {
		case math.IsNaN(v) || math.IsInf(v, 0):
			nonFinite = true
		case v == 0:
			zero = true
		case v < 0:
			neg = true
		}
	}
	if zero || neg {
		var level int
		var problem, fix string
		if zero {
			level, problem, fix = LevelWarning, "pixdim[1,2,3] should be non-zero", "setting 0 dims to 1"
		}
		if neg {
			level = LevelSerious
			problem, fix = join(problem, "pixdim[1,2,3] should be positive"), join(fix, "setting to abs of pixdim values")
		}
		add(level, "pixdim[1,2,3]", problem, fix, "nibabel")
	}
	if nonFinite {
		add(LevelWarning, "pixdim[1,2,3]", fmt.Sprintf("voxel size %g × %g × %g is not finite", h.PixDim[1], h.PixDim[2], h.PixDim[3]),
			"setting non-finite dims to 1", "hubscope")
	}
	// nibabel Nifti1Header._chk_qform_code / _chk_sform_code: codes outside 0–4 (nibabel
	// knows NIFTI_XFORM_TEMPLATE_OTHER = 5 as well).
	if c := h.QformCode; c < 0 || c > XformTemplateOther {
		add(LevelWarning, "qform_code", fmt.Sprintf("qform_code %d not valid", c), "setting to 0", "nibabel")
	}
	if c := h.SformCode; c < 0 || c > XformTemplateOther {
		add(LevelWarning, "sform_code", fmt.Sprintf("sform_code %d not valid", c), "setting to 0", "nibabel")
	}
	// nibabel Nifti1Header._chk_offset (an offset of 0, as pairs may have, is not checked).
	if h.VoxOffset != 0 && h.VoxOffset%16 != 0 {
		add(LevelWarning, "vox_offset", fmt.Sprintf("vox offset (=%d) not divisible by 16, not SPM compatible", h.VoxOffset), "leaving at current value", "nibabel")
	}
	if validXformCode(h.SformCode) && validXformCode(h.QformCode) {
		if d := affineDistance(h.SformAffine(), h.QformAffine(), h.Nx(), h.Ny(), h.Nz()); d > sformQformTolerance || math.IsNaN(d) {
			add(LevelWarning, "sform/qform", fmt.Sprintf("sform and qform place the grid up to %.3g mm apart", d),
				"using the sform (nibabel's precedence)", "hubscope")
		}
	}
	ws = append(ws, h.timeChecks()...)
	return ws
}

func join(a, b string) string {
	if a == "" {
		return b
	}
	return a + " and " + b
}

// timeChecks are the warnings about the time axis of a 4D image.
func (h *Header) timeChecks() []Warning {
	if h.Dim[0] < 4 || h.Dim[4] < 2 {
		return nil
	}
	t := h.PixDim[4]
	unit := h.XYZTUnits & 0x38
	w := func(level int, field, problem, fix string) []Warning {
		return []Warning{{Level: level, Field: field, Problem: problem, Fix: fix, Source: "hubscope"}}
	}
	switch {
	case !(t > 0) || !finite(t):
		return w(LevelWarning, "pixdim[4]", fmt.Sprintf("time step pixdim[4] = %g is not a positive number", t), "TR unknown: frequencies and time-based outputs are not available")
	case unit == UnitsHz || unit == UnitsPPM || unit == UnitsRads:
		return w(LevelWarning, "xyzt_units", fmt.Sprintf("axis 4 is in %s, not a time unit", timeUnitName(unit)), "TR unknown")
	}
	tr := h.TR()
	var ws []Warning
	if unit == UnitsUnknown {
		fix := fmt.Sprintf("taking pixdim[4] = %g as seconds (TR %g s is a guess)", t, tr)
		if t >= 100 {
			fix = fmt.Sprintf("taking pixdim[4] = %g as seconds (TR %g s is a guess; it looks like milliseconds)", t, tr)
		}
		ws = w(LevelWarning, "xyzt_units", "time unit unset", fix)
	}
	if tr < minPlausibleTR || tr > maxPlausibleTR {
		ws = append(ws, w(LevelWarning, "pixdim[4]", fmt.Sprintf("TR %g s is outside the usual %g–%g s of fMRI", tr, minPlausibleTR, float64(maxPlausibleTR)),
			"used as given; check the header's time unit")...)
	}
	return ws
}

// TRSource says in words where the TR comes from, for the summary and provenance: the value
// and unit found in the header, or why the TR is unknown.
func (h *Header) TRSource() string {
	if h.Dim[0] < 4 || h.Dim[4] < 2 {
		return "TR unknown (not a time series along axis 4)"
	}
	t := h.PixDim[4]
	unit := h.XYZTUnits & 0x38
	tr := h.TR()
	switch {
	case tr == 0 && (!(t > 0) || !finite(t)):
		return fmt.Sprintf("TR unknown (header pixdim[4] = %g)", t)
	case tr == 0:
		return fmt.Sprintf("TR unknown (axis 4 is in %s)", timeUnitName(unit))
	case unit == UnitsUnknown:
		return fmt.Sprintf("TR %g s (header pixdim[4] = %g, time unit unset: assumed seconds)", tr, t)
	}
	return fmt.Sprintf("TR %g s (header pixdim[4] = %g %s)", tr, t, timeUnitName(unit))
}

func timeUnitName(u uint8) string {
	switch u {
	case UnitsSec:
		return "s"
	case UnitsMsec:
		return "ms"
	case UnitsUsec:
		return "µs"
	case UnitsHz:
		return "Hz"
	case UnitsPPM:
		return "ppm"
	case UnitsRads:
		return "rad/s"
	}
	return "unknown units"
}

// affineDistance is the largest distance, in mm, between where two affines place the eight
// corner voxels of an nx×ny×nz grid (an affine's error is largest at a corner).
func affineDistance(a, b [4][4]float64, nx, ny, nz int) float64 {
	var worst float64
	for _, i := range []float64{0, float64(nx - 1)} {
		for _, j := range []float64{0, float64(ny - 1)} {
			for _, k := range []float64{0, float64(nz - 1)} {
				var d2 float64
				for r := 0; r < 3; r++ {
					d := (a[r][0]-b[r][0])*i + (a[r][1]-b[r][1])*j + (a[r][2]-b[r][2])*k + (a[r][3] - b[r][3])
					d2 += d * d
				}
				if d := math.Sqrt(d2); d > worst || math.IsNaN(d) {
					worst = d
				}
			}
		}
	}
	return worst
}
