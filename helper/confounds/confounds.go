// Package confounds reads fMRIPrep's confounds tables (*_desc-confounds_timeseries.tsv and
// the older *_desc-confounds_regressors.tsv, with their JSON sidecars) and selects
// regressors and a sample mask the way nilearn 0.10.4's interfaces.fmriprep.load_confounds
// and load_confounds_strategy do. For scans without such a table, Global and
// HighVarianceConfounds compute what the scan itself gives (global signal, tCompCor).
package confounds

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Table is one confounds file: named columns of equal length (NaN where the file says n/a)
// and the sidecar's per-column metadata (nil without a sidecar).
type Table struct {
	Path  string
	Names []string
	Cols  [][]float64
	Meta  map[string]map[string]any
	index map[string]int
}

// Rows is the number of volumes the table describes.
func (t *Table) Rows() int {
	if len(t.Cols) == 0 {
		return 0
	}
	return len(t.Cols[0])
}

// Col returns the named column, or nil.
func (t *Table) Col(name string) []float64 {
	if i, ok := t.index[name]; ok {
		return t.Cols[i]
	}
	return nil
}

// missingCell is what pandas' read_csv reads as NaN by default (fMRIPrep writes n/a).
func missingCell(s string) bool {
	switch s {
	case "", "n/a", "N/A", "NA", "NaN", "nan", "-NaN", "-nan", "null", "NULL", "#N/A", "<NA>", "None":
		return true
	}
	return false
}

// Read reads a tab-separated confounds table with a header row, and its JSON sidecar (the
// same name ending .json) when present. Bad content is refused with one line naming the
// file and the place.
func Read(path string) (*Table, error) {
	t, err := ReadPlain(path)
	if err != nil {
		return nil, err
	}
	js := strings.TrimSuffix(path, ".tsv") + ".json"
	if b, err := os.ReadFile(js); err == nil {
		if err := json.Unmarshal(b, &t.Meta); err != nil {
			return nil, fmt.Errorf("%s: %v", js, err)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	return t, nil
}

// ReadPlain reads the table alone, for tables whose .json beside them is no column sidecar
// (the realignment's qc/motion.tsv beside its summary qc/motion.json).
func ReadPlain(path string) (*Table, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	t := &Table{Path: path, index: map[string]int{}}
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimRight(sc.Text(), "\r")
		if line == 1 {
			t.Names = strings.Split(text, "\t")
			if _, err := strconv.ParseFloat(strings.TrimSpace(t.Names[0]), 64); err == nil {
				return nil, fmt.Errorf("%s: the confounds file has no header row (fMRIPrep ≥ 1.2 writes one)", path)
			}
			for i, n := range t.Names {
				n = strings.TrimSpace(n)
				t.Names[i] = n
				if n != strings.ToLower(n) && n != strings.ToUpper(n) && !strings.Contains(n, "_") {
					return nil, fmt.Errorf("%s: column %q is in camel case, from fMRIPrep 1.0/1.1; only fMRIPrep ≥ 1.2 files are read", path, n)
				}
				if _, dup := t.index[n]; dup {
					return nil, fmt.Errorf("%s: column %q appears twice", path, n)
				}
				t.index[n] = i
			}
			t.Cols = make([][]float64, len(t.Names))
			continue
		}
		if strings.TrimSpace(text) == "" {
			continue
		}
		cells := strings.Split(text, "\t")
		if len(cells) != len(t.Names) {
			return nil, fmt.Errorf("%s: line %d has %d cells but the header names %d columns", path, line, len(cells), len(t.Names))
		}
		for i, c := range cells {
			c = strings.TrimSpace(c)
			v := math.NaN()
			if !missingCell(c) {
				if v, err = strconv.ParseFloat(c, 64); err != nil {
					return nil, fmt.Errorf("%s: line %d, column %q: %q is not a number", path, line, t.Names[i], c)
				}
			}
			t.Cols[i] = append(t.Cols[i], v)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if line == 0 {
		return nil, fmt.Errorf("%s: the confounds file is empty", path)
	}
	if t.Rows() == 0 {
		return nil, fmt.Errorf("%s: the confounds file has a header but no rows", path)
	}
	return t, nil
}

// Strategy is load_confounds' arguments. Components name the noise components in order:
// motion, high_pass, wm_csf, global_signal, compcor, scrub (non-steady-state volumes are
// always looked for).
type Strategy struct {
	Components   []string `json:"strategy"`
	Motion       string   `json:"motion,omitempty"`        // basic (6) | power2 (12) | derivatives (12) | full (24)
	WMCSF        string   `json:"wm_csf,omitempty"`        // basic | power2 | derivatives | full
	GlobalSignal string   `json:"global_signal,omitempty"` // basic | power2 | derivatives | full
	Compcor      string   `json:"compcor,omitempty"`       // anat_combined | anat_separated | temporal | temporal_anat_combined | temporal_anat_separated
	NCompcor     int      `json:"n_compcor,omitempty"`     // 0 = all components fMRIPrep kept
	Scrub        int      `json:"scrub,omitempty"`         // segments shorter than this are censored too
	FD           float64  `json:"fd_threshold,omitempty"`  // mm
	DVARS        float64  `json:"std_dvars_threshold,omitempty"`
	Demean       bool     `json:"demean"`
}

// Presets are load_confounds_strategy's (nilearn 0.10.4 values: the scrubbing preset keeps
// nilearn's FD > 0.2 mm and standardised DVARS > 3; fMRIPrep's own defaults, 0.5 and 1.5,
// are what nilearn 0.13 switches to and what --fd/--dvars can set).
func Preset(name string) (Strategy, error) {
	switch name {
	case "simple":
		return Strategy{Components: []string{"high_pass", "motion", "wm_csf"}, Motion: "full", WMCSF: "basic", Demean: true}, nil
	case "scrubbing":
		return Strategy{Components: []string{"high_pass", "motion", "wm_csf", "scrub"}, Motion: "full", WMCSF: "full",
			Scrub: 5, FD: 0.2, DVARS: 3, Demean: true}, nil
	case "compcor":
		return Strategy{Components: []string{"high_pass", "motion", "compcor"}, Motion: "full", Compcor: "anat_combined", Demean: true}, nil
	}
	return Strategy{}, fmt.Errorf("unknown confounds preset %q (simple, scrubbing or compcor)", name)
}

// WithGlobalSignal adds the global signal at the given expansion (load_confounds_strategy's
// global_signal argument).
func (s Strategy) WithGlobalSignal(model string) Strategy {
	s.Components = append(slices.Clone(s.Components), "global_signal")
	s.GlobalSignal = model
	return s
}

var suffixes = map[string][]string{
	"basic":       nil,
	"derivatives": {"derivative1"},
	"power2":      {"power2"},
	// Go map order is random; nilearn iterates a Python set here, but the output columns are
	// sorted by name in the end, so only membership matters.
	"full": {"derivative1", "power2", "derivative1_power2"},
}

func addSuffix(params []string, model string) ([]string, error) {
	suf, ok := suffixes[model]
	if !ok {
		return nil, fmt.Errorf("unknown expansion %q (basic, power2, derivatives or full)", model)
	}
	out := slices.Clone(params)
	for _, p := range params {
		for _, s := range suf {
			out = append(out, p+"_"+s)
		}
	}
	return out, nil
}

// Selection is load_confounds' output: the regressors (sorted by name, as nilearn returns
// them) and the sample mask (the volumes kept; nil = all).
type Selection struct {
	Names      []string
	Cols       [][]float64
	SampleMask []int
}

// Select applies the strategy to the table like load_confounds (one file): columns named
// by the components, outlier columns (motion_outlier_*, non_steady_state*) turned into the
// sample mask, n/a in the first row replaced by the second row's value, columns demeaned
// (over the kept volumes when there is a mask). Missing columns are named in one error.
func (t *Table) Select(s Strategy) (*Selection, error) {
	for _, c := range s.Components {
		switch c {
		case "motion", "high_pass", "wm_csf", "global_signal", "compcor", "scrub", "non_steady_state":
		default:
			return nil, fmt.Errorf("%q is not a confounds component (motion, high_pass, wm_csf, global_signal, compcor, scrub)", c)
		}
	}
	if slices.Contains(s.Components, "compcor") && !slices.Contains(s.Components, "high_pass") {
		return nil, errors.New("compcor needs high_pass in the strategy (fMRIPrep's CompCor is computed after its cosine high-pass)")
	}
	var picked []string
	extra := map[string][]float64{} // computed columns (motion outliers)
	var missingCols, missingKeys []string
	want := func(key string, params []string) {
		var gone []string
		for _, p := range params {
			if t.Col(p) == nil {
				gone = append(gone, p)
			}
		}
		switch {
		case len(gone) == len(params):
			missingKeys = append(missingKeys, key)
		case len(gone) > 0:
			missingCols = append(missingCols, gone...)
		default:
			picked = append(picked, params...)
		}
	}
	contains := func(key string) []string {
		var out []string
		for _, n := range t.Names {
			if strings.Contains(n, key) {
				out = append(out, n)
			}
		}
		return out
	}
	picked = append(picked, contains("non_steady_state")...)
	for _, c := range s.Components {
		switch c {
		case "motion":
			p, err := addSuffix([]string{"trans_x", "trans_y", "trans_z", "rot_x", "rot_y", "rot_z"}, s.Motion)
			if err != nil {
				return nil, fmt.Errorf("motion: %w", err)
			}
			want("motion", p)
		case "high_pass":
			picked = append(picked, contains("cosine")...)
		case "wm_csf":
			p, err := addSuffix([]string{"csf", "white_matter"}, s.WMCSF)
			if err != nil {
				return nil, fmt.Errorf("wm_csf: %w", err)
			}
			want("wm_csf", p)
		case "global_signal":
			p, err := addSuffix([]string{"global_signal"}, s.GlobalSignal)
			if err != nil {
				return nil, fmt.Errorf("global_signal: %w", err)
			}
			want("global_signal", p)
		case "compcor":
			cols, err := t.compcorColumns(s.Compcor, s.NCompcor)
			if err != nil {
				return nil, err
			}
			want("compcor", cols)
		case "scrub":
			for i, name := range t.scrub(s) {
				picked = append(picked, name)
				extra[name] = outlierColumn(t.Rows(), i)
			}
		}
	}
	if len(missingCols)+len(missingKeys) > 0 {
		return nil, fmt.Errorf("%s: missing confounds %s (try another strategy)", t.Path, strings.Join(append(missingCols, missingKeys...), ", "))
	}
	col := func(name string) []float64 {
		if c, ok := extra[name]; ok {
			return c
		}
		return t.Col(name)
	}
	// Outliers → sample mask; the rest sorted by name (nilearn's sorted(set(...))).
	seen := map[string]bool{}
	var outliers, names []string
	for _, n := range picked {
		if seen[n] {
			continue
		}
		seen[n] = true
		if strings.Contains(n, "motion_outlier") || strings.Contains(n, "non_steady_state") {
			outliers = append(outliers, n)
		} else {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	sel := &Selection{Names: names}
	if len(outliers) > 0 {
		bad := make([]bool, t.Rows())
		for _, n := range outliers {
			for i, v := range col(n) {
				if v != 0 { // NaN counts too: pandas' sum skips it, so only non-zero flags
					if !math.IsNaN(v) {
						bad[i] = true
					}
				}
			}
		}
		sel.SampleMask = []int{}
		for i, b := range bad {
			if !b {
				sel.SampleMask = append(sel.SampleMask, i)
			}
		}
		if len(sel.SampleMask) == 0 {
			return nil, fmt.Errorf("%s: every volume is censored (%d flagged as outliers or non-steady state)", t.Path, len(bad))
		}
	}
	for _, n := range names {
		c := slices.Clone(col(n))
		if len(c) > 1 && math.IsNaN(c[0]) {
			c[0] = c[1]
		}
		if s.Demean {
			rows := sel.SampleMask
			m, cnt := 0.0, 0
			if rows == nil {
				for _, v := range c {
					m += v
				}
				cnt = len(c)
			} else {
				for _, r := range rows {
					m += c[r]
				}
				cnt = len(rows)
			}
			if cnt > 0 {
				m /= float64(cnt)
			}
			for i := range c {
				c[i] -= m
			}
		}
		for i, v := range c {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, fmt.Errorf("%s: column %q has n/a at volume %d (only the first volume may be n/a)", t.Path, n, i)
			}
		}
		sel.Cols = append(sel.Cols, c)
	}
	return sel, nil
}

func outlierColumn(n, i int) []float64 {
	c := make([]float64, n)
	c[i] = 1
	return c
}

// scrub returns the volumes flagged by framewise displacement > FD or standardised DVARS >
// DVARS, with segments of fewer than Scrub volumes between flags (and at the ends) flagged
// too (nilearn's optimize_scrub, after Power et al. 2014), as motion_outlier_<k> names.
func (t *Table) scrub(s Strategy) map[int]string {
	n := t.Rows()
	fd, dv := t.Col("framewise_displacement"), t.Col("std_dvars")
	var idx []int
	for i := 0; i < n; i++ {
		if (fd != nil && fd[i] > s.FD) || (dv != nil && dv[i] > s.DVARS) {
			idx = append(idx, i)
		}
	}
	if s.Scrub > 0 && len(idx) > 0 {
		set := map[int]bool{}
		for _, i := range idx {
			set[i] = true
		}
		if idx[0] < s.Scrub {
			for i := 0; i < idx[0]; i++ {
				set[i] = true
			}
		}
		last := idx[len(idx)-1]
		if n-(last+1) < s.Scrub {
			for i := last; i < n; i++ {
				set[i] = true
			}
		}
		// Gaps between consecutive flags of the list extended at the ends, as nilearn does.
		ext := sortedKeys(set)
		for k := 0; k+1 < len(ext); k++ {
			if d := ext[k+1] - ext[k]; d > 1 && d < s.Scrub+1 {
				for i := ext[k] + 1; i < ext[k+1]; i++ {
					set[i] = true
				}
			}
		}
		idx = sortedKeys(set)
	}
	out := map[int]string{}
	for k, i := range idx {
		out[i] = fmt.Sprintf("motion_outlier_%d", k)
	}
	return out
}

func sortedKeys(m map[int]bool) []int {
	out := make([]int, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Ints(out)
	return out
}

// compcorColumns is nilearn's find_compcor: for each prefix of the method, the names
// <p>_comp_cor_00… (as many as the sidecar lists), anatomical ones filtered by the sidecar's
// Mask, the first n of each group when n > 0.
func (t *Table) compcorColumns(method string, n int) ([]string, error) {
	prefixes := map[string][]string{
		"temporal_anat_combined":  {"t", "a"},
		"temporal_anat_separated": {"t", "a", "w", "c"},
		"temporal":                {"t"},
		"anat_combined":           {"a"},
		"anat_separated":          {"a", "w", "c"},
	}[method]
	if prefixes == nil {
		return nil, fmt.Errorf("unknown compcor method %q (anat_combined, anat_separated, temporal, temporal_anat_combined, temporal_anat_separated)", method)
	}
	var masks []string
	switch {
	case strings.HasSuffix(method, "combined"):
		masks = []string{"combined"}
	case strings.HasSuffix(method, "separated"):
		masks = []string{"WM", "CSF"}
	}
	first := func(c []string) []string {
		if n > 0 && n < len(c) {
			return c[:n]
		}
		return c
	}
	var out []string
	for _, p := range prefixes {
		count := 0
		for k := range t.Meta {
			if strings.Contains(k, p+"_comp_cor") {
				count++
			}
		}
		if t.Meta == nil {
			return nil, fmt.Errorf("%s: CompCor needs the JSON sidecar (fMRIPrep ≥ 1.4), which is missing", t.Path)
		}
		var names []string
		for i := 0; i < count; i++ {
			names = append(names, fmt.Sprintf("%s_comp_cor_%02d", p, i))
		}
		if p != "a" {
			out = append(out, first(names)...)
			continue
		}
		for _, m := range masks {
			var cols []string
			for _, nm := range names {
				meta, ok := t.Meta[nm]
				if !ok {
					return nil, fmt.Errorf("%s: the sidecar does not describe %s", t.Path, nm)
				}
				if mk, _ := meta["Mask"].(string); mk == m {
					cols = append(cols, nm)
				}
			}
			out = append(out, first(cols)...)
		}
	}
	return out, nil
}

// WithExpansions returns the table with the derivative1, power2 and derivative1_power2
// columns fMRIPrep writes, added for every column that lacks them (backward differences, the
// first row n/a), so that a plain six-parameter motion table (the realignment's) serves
// load_confounds' motion expansions.
func (t *Table) WithExpansions() *Table {
	out := &Table{Path: t.Path, Meta: t.Meta, index: map[string]int{}}
	add := func(name string, c []float64) {
		if _, ok := out.index[name]; ok {
			return
		}
		out.index[name] = len(out.Names)
		out.Names, out.Cols = append(out.Names, name), append(out.Cols, c)
	}
	for i, n := range t.Names {
		add(n, t.Cols[i])
	}
	for i, n := range t.Names {
		if strings.Contains(n, "derivative") || strings.Contains(n, "power") || n == "framewise_displacement" {
			continue
		}
		c := t.Cols[i]
		d, sq, dsq := make([]float64, len(c)), make([]float64, len(c)), make([]float64, len(c))
		for k := range c {
			d[k] = math.NaN()
			if k > 0 {
				d[k] = c[k] - c[k-1]
			}
			sq[k], dsq[k] = c[k]*c[k], d[k]*d[k]
		}
		add(n+"_derivative1", d)
		add(n+"_power2", sq)
		add(n+"_derivative1_power2", dsq)
	}
	return out
}
