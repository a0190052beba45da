package pipeline

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/hubscope/hubscope/helper/bids"
	"github.com/hubscope/hubscope/helper/confounds"
	"github.com/hubscope/hubscope/helper/denoise"
	"github.com/hubscope/hubscope/helper/scan"
	"github.com/hubscope/hubscope/ipc/schema"
	"github.com/hubscope/hubscope/ipc/settings"
)

// Cleaning presets (--denoise).
const (
	CleanAuto      = settings.DenoiseAuto      // fMRIPrep's "simple" when a confounds file is found, else RawRecipe
	CleanSimple    = settings.DenoiseSimple    // load_confounds_strategy("simple") + signal.clean(detrend, zscore_sample)
	CleanScrubbing = settings.DenoiseScrubbing // likewise with "scrubbing"
	CleanCompcor   = settings.DenoiseCompcor   // likewise with "compcor"
	CleanNone      = settings.DenoiseNone      // the series as loaded (explicit options below still apply)
)

// CleanConfig chooses how the series are cleaned before correlation (helper/denoise,
// helper/confounds). Explicit options add to the preset. A run's comes from its settings
// (settings.Cleaning) through Config.clean.
type CleanConfig struct {
	Denoise   string  `json:"denoise"`             // auto | simple | scrubbing | compcor | none
	Confounds string  `json:"confounds,omitempty"` // confounds table; "" = found beside an fMRIPrep image
	TR        float64 `json:"tr,omitempty"`        // seconds; 0 = the JSON sidecar's or the header's
	Detrend   bool    `json:"detrend,omitempty"`
	// Band is the band-pass in Hz (Band[0] = high-pass edge, Band[1] = low-pass edge; 0 =
	// that edge absent).
	Band            [2]float64 `json:"band,omitempty"`
	DropVolumes     int        `json:"drop_volumes,omitempty"`
	FD              float64    `json:"fd_mm,omitempty"`            // scrub volumes with framewise displacement above
	DVARS           float64    `json:"std_dvars,omitempty"`        // scrub volumes with standardised DVARS above
	GlobalSignal    bool       `json:"global_signal,omitempty"`    // regress the global signal too
	ConfoundColumns []string   `json:"confound_columns,omitempty"` // these columns of the table instead of a preset

	// motionTable is the realignment's qc/motion.tsv when the run realigned the scan: auto's
	// raw recipe then regresses the 24 motion parameters too, and --fd can censor.
	motionTable string
}

// RawRecipe is auto's cleaning for a scan without a confounds table (ALGORITHMS' recipe for
// raw scans, Wang et al.'s band): detrend, Butterworth 0.01–0.08 Hz, 5 tCompCor components.
const rawCompCor = 5

var rawBand = [2]float64{0.01, 0.08}

// CleanReport is what the cleaning did (metrics.json "denoise").
type CleanReport struct {
	schema.Denoise

	// For qc/ (cleanqc.go): the carpet's voxels before cleaning, DVARS before, the kept
	// volumes, the table's traces.
	carpetRaw    []float32
	dvarsBefore  []float64
	kept         []int
	fd, stdDVARS []float64
	fdThreshold  float64
}

// CleanFrom is the cleaning the settings choose (settings.Cleaning; its Validate has
// checked the band's syntax).
func CleanFrom(s settings.Cleaning) CleanConfig {
	band, _ := s.BandEdges()
	return CleanConfig{Denoise: s.Denoise, Confounds: s.Confounds, TR: s.TR, Detrend: s.Detrend, Band: band,
		DropVolumes: s.DropVolumes, FD: s.FD, DVARS: s.DVARS, GlobalSignal: s.GlobalSignal, ConfoundColumns: s.Columns()}
}

// clean is the run's cleaning: its settings', with the realignment's motion table.
func (c Config) clean() CleanConfig {
	cc := CleanFrom(c.Cleaning)
	cc.motionTable = c.motionTable
	return cc
}

func (c CleanConfig) active() bool {
	return (c.Denoise != "" && c.Denoise != CleanNone) || c.Detrend || c.Band != [2]float64{} || c.DropVolumes > 0 ||
		c.FD > 0 || c.DVARS > 0 || c.GlobalSignal || len(c.ConfoundColumns) > 0 || c.Confounds != ""
}

func (c CleanConfig) validate() error {
	switch c.Denoise {
	case "", CleanAuto, CleanSimple, CleanScrubbing, CleanCompcor, CleanNone:
	default:
		return fmt.Errorf("unknown --denoise %q (auto, simple, scrubbing, compcor or none)", c.Denoise)
	}
	if c.Band[0] < 0 || c.Band[1] < 0 || (c.Band[0] > 0 && c.Band[1] > 0 && c.Band[0] >= c.Band[1]) {
		return fmt.Errorf("--band %g %g: want 0 ≤ LOW < HIGH in Hz (0 leaves that edge open)", c.Band[0], c.Band[1])
	}
	if c.DropVolumes < 0 || c.FD < 0 || c.DVARS < 0 || c.TR < 0 {
		return fmt.Errorf("--drop-volumes, --fd, --dvars and --tr must not be negative")
	}
	return nil
}

// clean applies the configured cleaning to the scan's series in place (Data, L) and
// reports what it did; nil when nothing was asked for.
func clean(cfg CleanConfig, scanPath string, s *scan.Scan) (*CleanReport, error) {
	if !cfg.active() {
		return nil, nil
	}
	mode := cfg.Denoise
	if mode == "" {
		mode = CleanNone
	}
	rep := &CleanReport{Denoise: schema.Denoise{VolumesIn: s.L}}
	// Confounds table: named, or beside an fMRIPrep image.
	file := cfg.Confounds
	if file == "" && mode != CleanNone {
		var err error
		if file, err = bids.Confounds(scanPath); err != nil {
			return nil, err
		}
	}
	var tab *confounds.Table
	if file != "" {
		var err error
		if tab, err = confounds.Read(file); err != nil {
			return nil, err
		}
		if tab.Rows() != s.L {
			return nil, fmt.Errorf("%s: %d rows of confounds but the scan has %d volumes", file, tab.Rows(), s.L)
		}
		rep.ConfoundsFile = file
		rep.fd, rep.stdDVARS = tab.Col("framewise_displacement"), tab.Col("std_dvars")
	}
	preset := mode
	if mode == CleanAuto {
		preset = CleanSimple
		if tab == nil {
			preset = "raw"
		}
	}
	if tab == nil && (preset == CleanSimple || preset == CleanScrubbing || preset == CleanCompcor) {
		return nil, fmt.Errorf("%s: --denoise %s needs fMRIPrep's confounds table (none found beside the scan: give --confounds FILE)", scanPath, mode)
	}
	var motion *confounds.Table
	if cfg.motionTable != "" && tab == nil {
		var err error
		if motion, err = confounds.ReadPlain(cfg.motionTable); err != nil {
			return nil, err
		}
		rep.fd = motion.Col("framewise_displacement")
	}
	if tab == nil && motion == nil && (cfg.FD > 0 || cfg.DVARS > 0 || len(cfg.ConfoundColumns) > 0) {
		return nil, fmt.Errorf("%s: --fd, --dvars and --confound-columns need a confounds table (--confounds FILE)", scanPath)
	}
	o := denoise.Options{Drop: cfg.DropVolumes, Detrend: true, Standardize: denoise.ZScoreSample, StandardizeConfounds: true}
	band := cfg.Band
	var names []string
	var cols [][]float64
	var mask []int
	switch {
	case len(cfg.ConfoundColumns) > 0:
		src := tab
		if src == nil {
			src = motion // the realignment's table (checked above: one of them is there)
		}
		var missing []string
		for _, n := range cfg.ConfoundColumns {
			c := src.Col(n)
			if c == nil {
				missing = append(missing, n)
				continue
			}
			c = slices.Clone(c)
			if math.IsNaN(c[0]) && len(c) > 1 {
				c[0] = c[1]
			}
			names, cols = append(names, n), append(cols, c)
		}
		if len(missing) > 0 {
			return nil, fmt.Errorf("%s: no column %s", file, strings.Join(missing, ", "))
		}
		rep.Strategy = "the confounds " + strings.Join(names, ", ")
	case preset == CleanSimple || preset == CleanScrubbing || preset == CleanCompcor:
		st, _ := confounds.Preset(preset)
		if cfg.GlobalSignal {
			st = st.WithGlobalSignal("basic")
		}
		if cfg.FD > 0 || cfg.DVARS > 0 {
			if !slices.Contains(st.Components, "scrub") {
				st.Components = append(st.Components, "scrub")
				st.Scrub, st.FD, st.DVARS = 5, 0.5, 1.5
			}
			if cfg.FD > 0 {
				st.FD = cfg.FD
			}
			if cfg.DVARS > 0 {
				st.DVARS = cfg.DVARS
			}
		}
		if slices.Contains(st.Components, "scrub") {
			rep.fdThreshold = st.FD
		}
		sel, err := tab.Select(st)
		if err != nil {
			return nil, err
		}
		names, cols, mask = sel.Names, sel.Cols, sel.SampleMask
		rep.Strategy = fmt.Sprintf("fMRIPrep confounds, nilearn's %q strategy", preset)
		if mode == CleanAuto {
			rep.Strategy = "auto: " + rep.Strategy + " (a confounds table was found)"
		}
	case preset == "raw":
		// auto on a raw scan degrades rather than fails: no band-pass where the TR is unknown
		// or the scan too short for the filter (an explicit --band still insists), fewer
		// tCompCor components where the top 2 % holds fewer series.
		var skipped string
		if band == [2]float64{} {
			band = rawBand
			if _, _, err := repetitionTime(cfg, scanPath, s); err != nil {
				band, skipped = [2]float64{}, "no band-pass (the TR is unknown: give --tr)"
			} else if s.L-cfg.DropVolumes <= 3*(2*denoise.DefaultOrder+1) {
				band, skipped = [2]float64{}, fmt.Sprintf("no band-pass (%s too few for the filter)", Count(s.L-cfg.DropVolumes, "volume"))
			}
		}
		tc, err := confounds.HighVarianceConfounds(s.Data, s.N, s.L, rawCompCor, 2)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", scanPath, err)
		}
		for j, c := range tc {
			names, cols = append(names, fmt.Sprintf("t_comp_cor_%02d", j)), append(cols, c)
		}
		withMotion := ""
		if motion != nil {
			// The realignment's six parameters with derivatives and squares (Friston 24), as
			// fMRIPrep's table would give them to load_confounds(motion="full").
			st := confounds.Strategy{Components: []string{"motion"}, Motion: "full", Demean: true}
			if cfg.FD > 0 {
				st.Components, st.Scrub, st.FD, st.DVARS = append(st.Components, "scrub"), 5, cfg.FD, math.Inf(1)
				rep.fdThreshold = cfg.FD
			}
			// A short scan takes the 6 parameters alone, or none, rather than failing: auto
			// keeps at least 2 more volumes than regressors, as the cleaning requires.
			for _, expansion := range []string{"full", "basic", ""} {
				if expansion == "" {
					withMotion = ", no motion parameters (too few volumes for them)"
					break
				}
				st.Motion = expansion
				sel, err := motion.WithExpansions().Select(st)
				if err != nil {
					return nil, err
				}
				kept := s.L - cfg.DropVolumes
				if sel.SampleMask != nil {
					kept = 0
					for _, v := range sel.SampleMask {
						if v >= cfg.DropVolumes {
							kept++
						}
					}
				}
				if len(cols)+len(sel.Cols)+2 > kept {
					continue
				}
				names, cols, mask = append(names, sel.Names...), append(cols, sel.Cols...), sel.SampleMask
				withMotion = fmt.Sprintf(", %s from the realignment", Count(len(sel.Names), "motion parameter"))
				break
			}
		}
		if band != [2]float64{} {
			rep.Strategy = fmt.Sprintf("auto: no confounds table, so detrend, band-pass %g–%g Hz and %s from the scan%s", band[0], band[1], Count(len(tc), "tCompCor component"), withMotion)
		} else {
			rep.Strategy = fmt.Sprintf("auto: no confounds table, so detrend and %s from the scan%s; %s", Count(len(tc), "tCompCor component"), withMotion, skipped)
		}
	default: // none with explicit options
		o.Detrend = cfg.Detrend
		rep.Strategy = "explicit options only"
	}
	if preset != CleanSimple && preset != CleanScrubbing && preset != CleanCompcor && tab != nil && (cfg.FD > 0 || cfg.DVARS > 0) {
		// Censoring asked for without a preset: nilearn's scrub on the table's traces.
		st := confounds.Strategy{Components: []string{"scrub"}, Scrub: 5, FD: math.Inf(1), DVARS: math.Inf(1)}
		if cfg.FD > 0 {
			st.FD, rep.fdThreshold = cfg.FD, cfg.FD
		}
		if cfg.DVARS > 0 {
			st.DVARS = cfg.DVARS
		}
		sel, err := tab.Select(st)
		if err != nil {
			return nil, err
		}
		mask = sel.SampleMask
	}
	if cfg.GlobalSignal && (tab == nil || len(cfg.ConfoundColumns) > 0) {
		names, cols = append(names, "global_signal (from the scan)"), append(cols, confounds.Global(s.Data, s.N, s.L))
	}
	if band != [2]float64{} {
		tr, src, err := repetitionTime(cfg, scanPath, s)
		if err != nil {
			return nil, err
		}
		o.Filter, o.HighPass, o.LowPass, o.TR = denoise.FilterButterworth, band[0], band[1], tr
		rep.TR, rep.TRSource = tr, src
	}
	p, err := denoise.Compile(s.L, cols, mask, o)
	if err != nil {
		return nil, fmt.Errorf("%s: cleaning: %w", scanPath, err)
	}
	// Share of variance removed, on the detrended input (what correlation would have seen).
	before := detrendedVariance(s.Data, s.N, s.L)
	out := make([]float32, s.N*p.Out)
	p.Apply(out, s.Data, s.N)
	rep.Options, rep.Confounds, rep.ConfoundRank = schema.CleanOptions(o), names, p.ConfoundRank
	rep.VolumesKept = p.Out
	kept := map[int]bool{}
	for _, k := range p.Kept {
		kept[k] = true
	}
	rep.Censored = []int{} // the dropped first volumes are not censoring: DFC's axis starts after them
	rep.Dropped = o.Drop
	for i := o.Drop; i < s.L; i++ {
		if !kept[i] {
			rep.Censored = append(rep.Censored, i)
		}
	}
	if o.Standardize != "" && before > 0 {
		rep.VarianceRemoved = residualShare(s.Data, out, s.N, s.L, p)
	}
	rep.kept = p.Kept
	rep.carpetRaw = carpetRows(s.Data, s.N, s.L)
	rep.dvarsBefore = dvarsPercent(s.Data, s.N, s.L)
	s.Data, s.L = out, p.Out
	return rep, nil
}

// repetitionTime: --tr, else the BIDS sidecar's RepetitionTime, else the header's; a
// missing or implausible value stops with a line naming --tr.
func repetitionTime(cfg CleanConfig, scanPath string, s *scan.Scan) (float64, string, error) {
	tr, src := cfg.TR, "--tr"
	if tr == 0 {
		side, file, err := bids.RepetitionTime(scanPath)
		if err != nil {
			return 0, "", err
		}
		tr, src = side, "RepetitionTime in "+file
	}
	if tr == 0 {
		tr, src = s.TR, s.TRSource
	}
	if !(tr >= 0.1 && tr <= 30) {
		why := fmt.Sprintf("TR %g s (%s) is implausible", tr, src)
		if tr == 0 {
			why = "the scan's TR is unknown (" + src + ")"
		}
		return 0, "", fmt.Errorf("%s: band-pass filtering needs the repetition time but %s: give it with --tr SECONDS", scanPath, why)
	}
	return tr, src, nil
}

func detrendedVariance(x []float32, n, t int) float64 {
	total := 0.0
	for i := 0; i < n; i++ {
		row := x[i*t : (i+1)*t]
		m := 0.0
		for _, v := range row {
			m += float64(v)
		}
		m /= float64(t)
		for _, v := range row {
			total += (float64(v) - m) * (float64(v) - m)
		}
	}
	return total
}

// residualShare is the mean over voxels of 1 − (variance kept)/(variance before), computed
// on the operator's output before standardisation (the plan's operator applied to the
// kept volumes, no z-scoring).
func residualShare(x, _ []float32, n, t int, p *denoise.Plan) float64 {
	m := p.Operator()
	sum, cnt := 0.0, 0
	step := max(1, n/2000) // a sample of voxels is enough for one figure
	y := make([]float64, p.Out)
	for i := 0; i < n; i += step {
		row := x[i*t : (i+1)*t]
		mean := 0.0
		for _, v := range row {
			mean += float64(v)
		}
		mean /= float64(t)
		vin := 0.0
		for _, v := range row {
			vin += (float64(v) - mean) * (float64(v) - mean)
		}
		vin /= float64(t)
		for r := range y {
			s := 0.0
			for k, v := range row {
				s += m[r*t+k] * (float64(v) - mean)
			}
			y[r] = s
		}
		ym, vout := 0.0, 0.0
		for _, v := range y {
			ym += v
		}
		ym /= float64(len(y))
		for _, v := range y {
			vout += (v - ym) * (v - ym)
		}
		vout /= float64(len(y))
		if vin > 0 {
			sum += 1 - vout/vin
			cnt++
		}
	}
	if cnt == 0 {
		return 0
	}
	return sum / float64(cnt)
}

// Count is n with its noun, singular for one: "1 tCompCor component", "5 tCompCor
// components", "0 volumes". The summary's lines count things this way.
func Count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
