package app

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/data/binding"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/widget"

	"github.com/hubscope/hubscope/ipc/settings"
)

// Choices offered in the settings, in the clinician's words, with the helper's names.
var (
	measureChoices = []choice{{"Pearson correlation", "pearson"}, {"Spearman rank correlation", "spearman"}, {"Kendall τ-b", "kendall"}}
	modeChoices    = []choice{{"Strongest links (density %)", "density"}, {"Correlation at least (r)", "r"}, {"Significant links (α)", "alpha"}, {"Strongest links per voxel (k)", "knn"}}
	metricsChoices = []choice{{"Full (path lengths, small-world, modules)", "full"}, {"Basic (clustering, modules)", "basic"}, {"Degree and hubs only", "none"}}
	corrChoices    = []choice{{"False discovery rate", "fdr"}, {"Bonferroni", "bonferroni"}}
	// What the network's nodes are (settings.Regions): voxels, the embedded AAL's regions, or
	// (desktop only: the browser names no files on the helper's disk) an atlas file's regions.
	nodeChoices = []choice{{"Voxels", settings.NodesVoxels}, {"Atlas regions (AAL)", settings.AtlasAAL}, {"Atlas regions (label image file)", "file"}}
	nodeNotes   = map[string]string{
		settings.NodesVoxels: "Every brain voxel is a node: a voxel-wise network of thousands of nodes.",
		settings.AtlasAAL:    "Each region's mean cleaned signal is a node (an ROI-to-ROI network, as nilearn's NiftiLabelsMasker); AAL needs a scan in MNI space.",
		"file":               "Each region of your label image (on the scan's space) is a node, its mean cleaned signal (an ROI-to-ROI network).",
	}
	// The cleaning presets (settings.DenoiseStrategies).
	cleaningChoices = []choice{{"Automatic", settings.DenoiseAuto}, {"Simple", settings.DenoiseSimple},
		{"Scrubbing", settings.DenoiseScrubbing}, {"CompCor", settings.DenoiseCompcor}, {"None", settings.DenoiseNone}}
	// What each preset does, in one line (README.md, "Cleaning"; nilearn's load_confounds_strategy).
	cleaningNotes = map[string]string{
		settings.DenoiseAuto:      "fMRIPrep's Simple strategy when the scan has a confounds table; else slow drifts, the 0.01–0.08 Hz band and 5 tCompCor components.",
		settings.DenoiseSimple:    "Head motion, white-matter and CSF signals and slow drifts regressed out (fMRIPrep confounds).",
		settings.DenoiseScrubbing: "As Simple with 24 motion terms, and high-motion volumes left out.",
		settings.DenoiseCompcor:   "Head motion and anatomical CompCor components regressed out.",
		settings.DenoiseNone:      "The series as they are: drifts and motion stay in the correlations.",
	}
)

// Defaults shown in the settings: the standard analysis of the field (Pearson, 1 % density,
// automatic mask, full metrics against 15 random networks).
const (
	defaultDensityPercent = "1"
	defaultR              = "0.3"
	defaultAlpha          = "0.05"
	defaultK              = "10"
	defaultRandom         = "15"
)

type choice struct{ Label, Value string }

func labels(cs []choice) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Label
	}
	return out
}

func valueOf(cs []choice, label string) string {
	for _, c := range cs {
		if c.Label == label {
			return c.Value
		}
	}
	return ""
}

// SettingsForm is the analysis settings: a plain-language summary of the defaults, and an
// Advanced section. Entries are bound to string bindings (the view model); every change is
// validated and the problem, if any, said in words.
type SettingsForm struct {
	Measure    *widget.Select
	Abs        *widget.Check
	Mode       *widget.Select
	Value      *widget.Entry
	Correction *widget.Select
	Metrics    *widget.Select
	Random     *widget.Entry
	DFCWindow  *widget.Entry
	DFCStep    *widget.Entry
	// Cleaning is the denoising preset; Realign and Register switch head-motion realignment and
	// registration to MNI space on for raw scans (off: the scan as given).
	Cleaning *widget.Select
	// CleaningNote says what the chosen preset does.
	CleaningNote *widget.Label
	Realign      *widget.Check
	Register     *widget.Check
	// Sweep is a threshold sweep ("r=0.3:0.6:0.05"; empty: none): one network at the loosest
	// threshold, measured at every threshold of the sweep (the Sweep tab shows the curves).
	Sweep *widget.Entry
	// Norm is the normative folder every scan is compared with (none: not compared).
	Norm *NormChoice
	// Nodes chooses voxel or region (ROI-to-ROI) networks; NodesNote says what that means and
	// Atlas is the label image file of the third choice (desktop only).
	Nodes     *widget.Select
	NodesNote *widget.Label
	Atlas     *AtlasChoice
	// Problem says what is wrong with the current settings ("" when they are valid).
	Problem *widget.Label
	// Summary describes the chosen analysis in one line.
	Summary *widget.Label

	value, random, window, step, sweep binding.String
	valueLabel                         *widget.Label
	// OnChanged is called after every change, with the validation result.
	OnChanged func(ok bool)
}

// NewSettingsForm returns the form with clinician-friendly defaults.
func NewSettingsForm() *SettingsForm {
	f := &SettingsForm{
		value: binding.NewString(), random: binding.NewString(), window: binding.NewString(), step: binding.NewString(), sweep: binding.NewString(),
		Problem: widget.NewLabel(""), Summary: widget.NewLabel(""), valueLabel: widget.NewLabel("Density (%)"),
	}
	f.Problem.Importance = widget.DangerImportance
	f.Problem.Wrapping = fyne.TextWrapWord
	f.Summary.Wrapping = fyne.TextWrapWord
	f.value.Set(defaultDensityPercent)
	f.random.Set(defaultRandom)
	changed := func() { f.validate() }
	f.Measure = widget.NewSelect(labels(measureChoices), func(string) { changed() })
	f.Abs = widget.NewCheck("Use the strength of negative correlations too (|r|)", func(bool) { changed() })
	f.Correction = widget.NewSelect(labels(corrChoices), func(string) { changed() })
	f.Correction.SetSelected(corrChoices[0].Label)
	f.Mode = widget.NewSelect(labels(modeChoices), func(string) { f.modeChanged() })
	f.Metrics = widget.NewSelect(labels(metricsChoices), func(string) { changed() })
	f.CleaningNote = widget.NewLabel("")
	f.CleaningNote.Wrapping = fyne.TextWrapWord
	f.Cleaning = widget.NewSelect(labels(cleaningChoices), func(l string) {
		f.CleaningNote.SetText(cleaningNotes[valueOf(cleaningChoices, l)])
		changed()
	})
	f.Realign = widget.NewCheck("Realign (raw scan)", func(bool) { changed() })
	f.Register = widget.NewCheck("Register to MNI", func(bool) { changed() })
	f.Value = widget.NewEntryWithData(f.value)
	f.Random = widget.NewEntryWithData(f.random)
	f.DFCWindow = widget.NewEntryWithData(f.window)
	f.DFCWindow.SetPlaceHolder("off")
	f.DFCStep = widget.NewEntryWithData(f.step)
	f.DFCStep.SetPlaceHolder("1")
	f.Sweep = widget.NewEntryWithData(f.sweep)
	f.Sweep.SetPlaceHolder("off (e.g. r=0.3:0.6:0.05)")
	f.Norm = newNormChoice()
	f.Atlas = newAtlasChoice(changed)
	f.NodesNote = widget.NewLabel("")
	f.NodesNote.Wrapping = fyne.TextWrapWord
	nodes := nodeChoices
	if runtime.GOOS == "js" {
		nodes = nodes[:2] // no atlas file over the web transport
	}
	f.Nodes = widget.NewSelect(labels(nodes), func(l string) {
		v := valueOf(nodeChoices, l)
		f.NodesNote.SetText(nodeNotes[v])
		if v == "file" {
			f.Atlas.Choose.Enable()
		} else {
			f.Atlas.Choose.Disable()
		}
		changed()
	})
	for _, b := range []binding.String{f.value, f.random, f.window, f.step, f.sweep} {
		b.AddListener(binding.NewDataListener(changed))
	}
	f.Measure.SetSelected(measureChoices[0].Label)
	f.Metrics.SetSelected(metricsChoices[0].Label)
	f.Cleaning.SetSelected(cleaningChoices[0].Label)
	f.Nodes.SetSelected(nodeChoices[0].Label)
	f.Mode.SetSelected(modeChoices[0].Label)
	return f
}

// modeChanged puts the new threshold mode's usual value in the entry.
func (f *SettingsForm) modeChanged() {
	def := map[string]string{"density": defaultDensityPercent, "r": defaultR, "alpha": defaultAlpha, "knn": defaultK}
	lab := map[string]string{"density": "Density (%)", "r": "Correlation r at least", "alpha": "Significance α", "knn": "Links per voxel k"}
	m := valueOf(modeChoices, f.Mode.Selected)
	f.valueLabel.SetText(lab[m])
	if m == "alpha" {
		f.Correction.Enable()
	} else {
		f.Correction.Disable()
	}
	f.value.Set(def[m]) // the listener validates
	f.validate()
}

// number reads a decimal typed the clinician's way: "1", "0.5", "0,5", "1 %".
func number(s string) (float64, bool) {
	s = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "%"))
	s = strings.ReplaceAll(s, ",", ".")
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, false
	}
	return v, true
}

func whole(s string) (int, bool) {
	v, err := strconv.Atoi(strings.TrimSpace(s))
	return v, err == nil
}

// Settings returns the request's settings, or the first problem with them in words.
func (f *SettingsForm) Settings() (settings.Settings, error) {
	s := settings.Defaults()
	s.Density = 0
	s.Measure = valueOf(measureChoices, f.Measure.Selected)
	s.Abs = f.Abs.Checked
	s.Mode = valueOf(modeChoices, f.Mode.Selected)
	s.Metrics = valueOf(metricsChoices, f.Metrics.Selected)
	if f.Cleaning != nil {
		s.Denoise = valueOf(cleaningChoices, f.Cleaning.Selected)
		s.Realign, s.Register = onOff(f.Realign.Checked), onOff(f.Register.Checked)
	}
	if f.Nodes != nil {
		switch v := valueOf(nodeChoices, f.Nodes.Selected); v {
		case settings.AtlasAAL:
			s.Nodes, s.Atlas = settings.NodesRegions, settings.AtlasAAL
		case "file":
			if f.Atlas.Path == "" {
				return s, errors.New("Choose the atlas's label image (a .nii or .nii.gz of region numbers on the scan's space), or another kind of network nodes.")
			}
			s.Nodes, s.Atlas = settings.NodesRegions, f.Atlas.Path
		}
	}
	val, _ := f.value.Get()
	switch s.Mode {
	case "density":
		d, ok := number(val)
		if !ok || d <= 0 || d > 100 {
			return s, fmt.Errorf("The density must be a percentage above 0 and at most 100, for example 1 to keep the strongest 1 %% of all voxel pairs (you typed %q).", val)
		}
		s.Density = d / 100
	case "r":
		r, ok := number(val)
		if !ok || r <= -1 || r >= 1 {
			return s, fmt.Errorf("The correlation threshold must be a number between -1 and 1, for example 0.3 (you typed %q).", val)
		}
		s.R = r
	case "alpha":
		a, ok := number(val)
		if !ok || a <= 0 || a >= 1 {
			return s, fmt.Errorf("The significance level α must be between 0 and 1, for example 0.05 (you typed %q).", val)
		}
		s.Alpha = a
		s.Correction = valueOf(corrChoices, f.Correction.Selected)
	case "knn":
		k, ok := whole(val)
		if !ok || k < 1 || k > 1000 {
			return s, fmt.Errorf("The number of links per voxel must be a whole number from 1 to 1000, for example 10 (you typed %q).", val)
		}
		s.K = k
	default:
		return s, errors.New("Choose how links are kept.")
	}
	if s.Metrics == "full" {
		rs, _ := f.random.Get()
		n, ok := whole(rs)
		if !ok || n < 0 || n > 1000 {
			return s, fmt.Errorf("The number of random networks must be a whole number from 0 to 1000; 15 is usual, 0 skips γ, λ, σ and the z-score of Q (you typed %q).", rs)
		}
		s.Random = n
	} else {
		s.Random = 0 // only full metrics use random networks
	}
	ws, _ := f.window.Get()
	ss, _ := f.step.Get()
	if strings.TrimSpace(ws) != "" && strings.TrimSpace(ws) != "0" {
		w, ok := whole(ws)
		if !ok || w < 10 {
			return s, fmt.Errorf("The dynamic-connectivity window must be a whole number of volumes, at least 10 (or empty for no dynamic analysis; you typed %q).", ws)
		}
		step := 1
		if strings.TrimSpace(ss) != "" {
			st, ok := whole(ss)
			if !ok || st < 1 || st > w {
				return s, fmt.Errorf("The window step must be a whole number of volumes from 1 to the window length %d (you typed %q).", w, ss)
			}
			step = st
		}
		s.DFCWindow, s.DFCStep = w, step
	} else if strings.TrimSpace(ss) != "" {
		return s, errors.New("A window step needs a window length; leave both empty for no dynamic analysis.")
	}
	sw, _ := f.sweep.Get()
	if p := sweepProblem(sw); p != "" {
		return s, errors.New(p)
	}
	if s.Sweep = strings.ReplaceAll(strings.TrimSpace(sw), " ", ""); s.Sweep != "" && (s.Mode == settings.ModeAlpha || s.Mode == settings.ModeKNN) {
		return s, errors.New("A threshold sweep replaces the threshold: choose strongest links (density) or correlation (r) as the way links are kept.")
	}
	if s.Sweep != "" {
		s.Density, s.R = 0, 0 // the sweep's loosest threshold is the network's; the helper refuses both
	}
	return s, nil
}

func onOff(on bool) string {
	if on {
		return settings.RealignOn
	}
	return settings.RealignOff
}

// validate shows the first problem, or the summary of the analysis.
func (f *SettingsForm) validate() {
	if f.Metrics == nil || f.Mode == nil || f.Measure == nil {
		return // still being built
	}
	if valueOf(metricsChoices, f.Metrics.Selected) == "full" {
		f.Random.Enable()
	} else {
		f.Random.Disable()
	}
	s, err := f.Settings()
	if err != nil {
		f.Problem.SetText(err.Error())
		f.Problem.Show()
	} else {
		f.Problem.SetText("")
		f.Problem.Hide()
		f.Summary.SetText(describe(s))
	}
	if f.OnChanged != nil {
		f.OnChanged(err == nil)
	}
}

// describe says in one line what will be computed.
func describe(s settings.Settings) string {
	measure := valueLabel(measureChoices, s.Measure)
	var keep string
	switch s.Mode {
	case "density":
		keep = fmt.Sprintf("the strongest %g %% of voxel pairs", 100*s.Density)
	case "r":
		keep = fmt.Sprintf("links with r of at least %g", s.R)
	case "alpha":
		keep = fmt.Sprintf("links significant at α = %g", s.Alpha)
	case "knn":
		keep = fmt.Sprintf("each voxel's %d strongest links", s.K)
	}
	out := measure + ", " + keep
	if s.Metrics == settings.MetricsFull && s.Random > 0 {
		out += fmt.Sprintf(", %d random networks", s.Random)
	}
	if s.DFCWindow > 0 {
		out += fmt.Sprintf(", dynamic windows of %d volumes", s.DFCWindow)
	}
	if s.Sweep != "" {
		out += ", thresholds swept over " + s.Sweep
	}
	if s.Nodes == settings.NodesRegions {
		if s.IsAAL() {
			out += ", nodes: the AAL atlas's regions"
		} else {
			out += ", nodes: the regions of " + filepath.Base(s.Atlas)
		}
	}
	return out + "."
}

func valueLabel(cs []choice, v string) string {
	for _, c := range cs {
		if c.Value == v {
			return c.Label
		}
	}
	return v
}

// Content is the settings panel: the summary, then the Advanced section folded away.
func (f *SettingsForm) Content() fyne.CanvasObject {
	form := container.New(layout.NewFormLayout(),
		widget.NewLabel("Connectivity"), f.Measure,
		widget.NewLabel(""), f.Abs,
		widget.NewLabel("Links kept"), f.Mode,
		f.valueLabel, f.Value,
		widget.NewLabel("Correction"), f.Correction,
		widget.NewLabel("Measures"), f.Metrics,
		widget.NewLabel("Cleaning"), f.Cleaning,
		widget.NewLabel(""), f.CleaningNote,
		widget.NewLabel("Head motion"), f.Realign,
		widget.NewLabel("Standard space"), f.Register,
		widget.NewLabel("Random networks"), f.Random,
		widget.NewLabel("Dynamic window (volumes)"), f.DFCWindow,
		widget.NewLabel("Window step (volumes)"), f.DFCStep,
		widget.NewLabel("Threshold sweep"), f.Sweep,
		widget.NewLabel("Network nodes"), f.Nodes,
		widget.NewLabel(""), f.NodesNote,
	)
	if runtime.GOOS != "js" {
		// The browser names no folders on the helper's disk (the web transport refuses them).
		form.Add(widget.NewLabel("Normative cohort"))
		form.Add(f.Norm.content())
		form.Add(widget.NewLabel("Atlas label image"))
		form.Add(f.Atlas.content())
	}
	adv := widget.NewAccordion(widget.NewAccordionItem("Advanced settings", form))
	return container.NewVBox(f.Summary, f.Problem, adv)
}
