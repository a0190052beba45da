package cohort

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/hubscope/hubscope/helper/bids/derivatives"
	"github.com/hubscope/hubscope/helper/nifti"
	"github.com/hubscope/hubscope/helper/stats"
	"github.com/hubscope/hubscope/ipc/schema"
)

// Table is a measures.tsv read back.
type Table struct {
	Path    string
	Columns []string
	Rows    []map[string]string
}

// ReadTable reads DERIV/measures.tsv.
func ReadTable(deriv string) (*Table, error) {
	path := filepath.Join(deriv, TableFile)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w (run the cohort command first)", path, err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	t := &Table{Path: path, Columns: strings.Split(lines[0], "\t")}
	if len(t.Columns) < 2 || t.Columns[0] != "participant_id" || t.Columns[1] != "run" {
		return nil, fmt.Errorf("%s: not a HubScope measures table (want participant_id, run, … columns)", path)
	}
	for n, l := range lines[1:] {
		f := strings.Split(l, "\t")
		if len(f) != len(t.Columns) {
			return nil, fmt.Errorf("%s line %d: %d fields, the header has %d", path, n+2, len(f), len(t.Columns))
		}
		row := map[string]string{}
		for i, c := range t.Columns {
			row[c] = f[i]
		}
		t.Rows = append(t.Rows, row)
	}
	return t, nil
}

// Nodal holds nodal maps of several runs on their common nodes.
type Nodal struct {
	Dims   [3]int
	Affine [4][4]float64
	IJK    [][3]int
	// Values[map][node][subject]
	Values map[string][][]float64
}

// LoadNodal reads the named maps (degree, strength, …) of every run's bundle on the voxels
// that are nodes in all of them; runs on different grids are refused with their names. Each
// bundle must still be as its completion marker records it (VerifyBundle): a map truncated or
// edited after the cohort step is refused, naming the run and the file, never counted.
func LoadNodal(deriv string, runs []string, names []string) (*Nodal, error) {
	nd := &Nodal{Values: map[string][][]float64{}}
	var common map[[3]int]int
	vols := map[string][][]float32{}
	var first string
	for _, id := range runs {
		r, err := derivatives.ParseID(id)
		if err != nil {
			return nil, err
		}
		if why, ok := VerifyBundle(deriv, r); !ok {
			return nil, fmt.Errorf("%s: %s; run the cohort command again to analyse it anew", id, why)
		}
		dir := BundleDir(deriv, r)
		ijk, err := readNodes(filepath.Join(dir, "nodes.tsv"))
		if err != nil {
			return nil, err
		}
		set := map[[3]int]int{}
		for _, v := range ijk {
			set[v] = 1
		}
		if common == nil {
			common = set
		} else {
			for v := range common {
				if set[v] == 0 {
					delete(common, v)
				}
			}
		}
		for _, name := range names {
			h, vol, err := nifti.ReadImage(filepath.Join(dir, name+".nii.gz"))
			if err != nil {
				return nil, err
			}
			dims := [3]int{h.Nx(), h.Ny(), h.Nz()}
			if first == "" {
				first, nd.Dims, nd.Affine = id, dims, h.Affine()
			} else if dims != nd.Dims {
				return nil, fmt.Errorf("%s's maps are on a %d×%d×%d grid, %s's on %d×%d×%d: compare needs one grid (analyse in a common space)", id, dims[0], dims[1], dims[2], first, nd.Dims[0], nd.Dims[1], nd.Dims[2])
			}
			vols[name] = append(vols[name], vol)
		}
	}
	for v := range common {
		nd.IJK = append(nd.IJK, v)
	}
	sort.Slice(nd.IJK, func(a, b int) bool {
		x, y := nd.IJK[a], nd.IJK[b]
		return x[2] < y[2] || x[2] == y[2] && (x[1] < y[1] || x[1] == y[1] && x[0] < y[0])
	})
	for _, name := range names {
		rows := make([][]float64, len(nd.IJK))
		for k, v := range nd.IJK {
			f := v[0] + nd.Dims[0]*(v[1]+nd.Dims[1]*v[2])
			rows[k] = make([]float64, len(runs))
			for s := range runs {
				rows[k][s] = float64(vols[name][s][f])
			}
		}
		nd.Values[name] = rows
	}
	return nd, nil
}

func readNodes(path string) ([][3]int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	var out [][3]int
	for n, l := range lines[1:] {
		f := strings.Split(l, "\t")
		if len(f) < 4 {
			return nil, fmt.Errorf("%s line %d: want node, i, j, k", path, n+2)
		}
		var v [3]int
		for c := 0; c < 3; c++ {
			if v[c], err = strconv.Atoi(f[c+1]); err != nil {
				return nil, fmt.Errorf("%s line %d: %v", path, n+2, err)
			}
		}
		out = append(out, v)
	}
	return out, nil
}

// WriteMap writes one value per common node as a float32 NIfTI on the grid (fill elsewhere).
func (nd *Nodal) WriteMap(path string, v []float64, fill float32) error {
	vol := make([]float32, nd.Dims[0]*nd.Dims[1]*nd.Dims[2])
	for i := range vol {
		vol[i] = fill
	}
	for k, x := range nd.IJK {
		if !math.IsNaN(v[k]) {
			vol[x[0]+nd.Dims[0]*(x[1]+nd.Dims[1]*x[2])] = float32(v[k])
		}
	}
	return nifti.WriteImage(path, nifti.NewHeader([]int{nd.Dims[0], nd.Dims[1], nd.Dims[2]}, nifti.Float32, nd.Affine, 0), vol)
}

// CompareOptions describe a two-group comparison of a derivatives folder.
type CompareOptions struct {
	Deriv        string
	GroupColumn  string
	Groups       []string // the two levels, A then B (default: the column's two values, sorted)
	Covariates   []string
	Permutations int
	Seed         uint64
	Alpha        float64
	Maps         []string
	Out          string // default DERIV/compare
	// Atlas, when set, adds the network-based statistic at region scale (Zalesky et al. 2010)
	// on the region networks of the runs (RegionNetworks), primary threshold |t| > NBSThreshold
	// (default 3).
	Atlas, AtlasNames string
	NBSThreshold      float64
}

// GlobalTest is one global measure's comparison.
type GlobalTest struct {
	Measure      string
	MeanA, MeanB float64
	T, DF, P     float64
	PermP, Q     float64
}

// NodalTest summarises one nodal map's comparison.
type NodalTest struct {
	Map         string
	Nodes       int
	Significant int // q ≤ α
	Files       []string
}

// CompareResult is what Compare found and wrote.
type CompareResult struct {
	Groups [2]string
	N      [2]int
	Global []GlobalTest
	Nodal  []NodalTest
	Out    string
	Notes  []string
	NBS    []stats.NBSComponent // with an atlas
}

// MinPerGroup is the smallest group Compare accepts.
const MinPerGroup = 3

// Compare tests group A against group B (Welch t and permutations) for every global measure of
// measures.tsv and every node of the nodal maps, Benjamini–Hochberg over nodes (and over the
// global measures), after regressing the covariates out when named; it writes
// compare_global.tsv, t/p/q maps and compare_nodes.tsv to opt.Out.
func Compare(ctx context.Context, opt CompareOptions) (*CompareResult, error) {
	tab, err := ReadTable(opt.Deriv)
	if err != nil {
		return nil, err
	}
	has := func(c string) bool {
		for _, x := range tab.Columns {
			if x == c {
				return true
			}
		}
		return false
	}
	if !has(opt.GroupColumn) {
		return nil, fmt.Errorf("%s has no column %q (the group column; it comes from participants.tsv)", tab.Path, opt.GroupColumn)
	}
	groups := opt.Groups
	if len(groups) == 0 {
		lv := map[string]bool{}
		for _, r := range tab.Rows {
			if v := r[opt.GroupColumn]; v != "" && v != "n/a" {
				lv[v] = true
			}
		}
		for v := range lv {
			groups = append(groups, v)
		}
		sort.Strings(groups)
		if len(groups) != 2 {
			return nil, fmt.Errorf("%s: column %s has %d values %v; name the two to compare with --groups A,B", tab.Path, opt.GroupColumn, len(groups), groups)
		}
	}
	if len(groups) != 2 || groups[0] == groups[1] {
		return nil, fmt.Errorf("--groups: want two different values, got %v", groups)
	}
	res := &CompareResult{Groups: [2]string{groups[0], groups[1]}}
	var sel []map[string]string
	var inA []bool
	for _, r := range tab.Rows {
		switch r[opt.GroupColumn] {
		case groups[0]:
			sel, inA = append(sel, r), append(inA, true)
			res.N[0]++
		case groups[1]:
			sel, inA = append(sel, r), append(inA, false)
			res.N[1]++
		}
	}
	for g := 0; g < 2; g++ {
		if res.N[g] < MinPerGroup {
			return nil, fmt.Errorf("%s: group %s=%s has %d run(s); at least %d per group", tab.Path, opt.GroupColumn, groups[g], res.N[g], MinPerGroup)
		}
	}
	X, err := covariates(tab, sel, opt.Covariates)
	if err != nil {
		return nil, err
	}
	if len(opt.Covariates) > 0 {
		res.Notes = append(res.Notes, "covariates regressed out first: "+strings.Join(opt.Covariates, ", "))
	}
	if opt.Out == "" {
		opt.Out = filepath.Join(opt.Deriv, "compare")
	}
	if opt.Alpha == 0 {
		opt.Alpha = 0.05
	}
	if err := os.MkdirAll(opt.Out, 0o755); err != nil {
		return nil, err
	}
	res.Out = opt.Out
	test := func(rows [][]float64) (t, df, p, pp []float64, err error) {
		resid := make([][]float64, len(rows))
		for k, y := range rows {
			if resid[k], err = stats.Residualize(y, X); err != nil {
				return
			}
		}
		t, df, p = make([]float64, len(rows)), make([]float64, len(rows)), make([]float64, len(rows))
		for k, y := range resid {
			var a, b []float64
			for s, v := range y {
				if inA[s] {
					a = append(a, v)
				} else {
					b = append(b, v)
				}
			}
			w, e := stats.WelchT(a, b)
			if e != nil {
				err = e
				return
			}
			t[k], df[k], p[k] = w.T, w.DF, w.P
		}
		if opt.Permutations > 0 {
			pp, err = stats.PermutationP(resid, inA, opt.Permutations, opt.Seed)
		}
		return
	}
	// Global measures: the table's measure columns (they hold a dot: network.edges, …).
	var names []string
	var rows [][]float64
	for _, c := range tab.Columns {
		if !strings.Contains(c, ".") {
			continue
		}
		y := make([]float64, len(sel))
		ok := true
		for s, r := range sel {
			v, err := strconv.ParseFloat(r[c], 64)
			if err != nil {
				ok = false
				break
			}
			y[s] = v
		}
		if ok {
			names, rows = append(names, c), append(rows, y)
		}
	}
	t, df, p, pp, err := test(rows)
	if err != nil {
		return nil, err
	}
	q := stats.BH(p)
	var gb strings.Builder
	gb.WriteString("measure\tmean_" + groups[0] + "\tmean_" + groups[1] + "\tt\tdf\tp\tp_permutation\tq_fdr\n")
	for k, name := range names {
		g := GlobalTest{Measure: name, T: t[k], DF: df[k], P: p[k], Q: q[k], PermP: math.NaN()}
		var a, b float64
		for s, v := range rows[k] {
			if inA[s] {
				a += v
			} else {
				b += v
			}
		}
		g.MeanA, g.MeanB = a/float64(res.N[0]), b/float64(res.N[1])
		if pp != nil {
			g.PermP = pp[k]
		}
		res.Global = append(res.Global, g)
		fmt.Fprintf(&gb, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", name, ff(g.MeanA), ff(g.MeanB), ff(g.T), ff(g.DF), ff(g.P), ff(g.PermP), ff(g.Q))
	}
	if err := os.WriteFile(filepath.Join(opt.Out, "compare_global.tsv"), []byte(gb.String()), 0o644); err != nil {
		return nil, err
	}
	// Nodal maps.
	var ids []string
	for _, r := range sel {
		ids = append(ids, r["run"])
	}
	mapNames := opt.Maps
	if len(mapNames) == 0 {
		mapNames = []string{"degree"}
	}
	nd, err := LoadNodal(opt.Deriv, ids, mapNames)
	if err != nil {
		return nil, err
	}
	var nb strings.Builder
	nb.WriteString("map\ti\tj\tk\tt\tp\tp_permutation\tq_fdr\n")
	for _, name := range mapNames {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		t, _, p, pp, err := test(nd.Values[name])
		if err != nil {
			return nil, err
		}
		q := stats.BH(p)
		nt := NodalTest{Map: name, Nodes: len(nd.IJK)}
		files := map[string][]float64{"t_" + name: t, "p_" + name: p, "q_" + name: q}
		if pp != nil {
			files["p_permutation_"+name] = pp
		}
		for f, v := range files {
			fill := float32(0)
			if !strings.HasPrefix(f, "t_") {
				fill = 1
			}
			path := filepath.Join(opt.Out, f+".nii.gz")
			if err := nd.WriteMap(path, v, fill); err != nil {
				return nil, err
			}
			nt.Files = append(nt.Files, path)
		}
		sort.Strings(nt.Files)
		for k, x := range nd.IJK {
			if q[k] <= opt.Alpha {
				nt.Significant++
				perm := math.NaN()
				if pp != nil {
					perm = pp[k]
				}
				fmt.Fprintf(&nb, "%s\t%d\t%d\t%d\t%s\t%s\t%s\t%s\n", name, x[0], x[1], x[2], ff(t[k]), ff(p[k]), ff(perm), ff(q[k]))
			}
		}
		res.Nodal = append(res.Nodal, nt)
	}
	if err := os.WriteFile(filepath.Join(opt.Out, "compare_nodes.tsv"), []byte(nb.String()), 0o644); err != nil {
		return nil, err
	}
	if err := writeComparison(opt, res, ids[0], len(nd.IJK)); err != nil {
		return nil, err
	}
	if opt.Atlas != "" {
		if len(opt.Covariates) > 0 {
			res.Notes = append(res.Notes, "the network-based statistic does not regress covariates")
		}
		if res.NBS, err = runNBS(opt, ids, inA, nd); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// writeComparison writes compare.json (schema.Comparison): what was compared, and the first
// compared run's bundle, whose grid the maps lie on, for the app to draw them over its anatomy.
func writeComparison(opt CompareOptions, res *CompareResult, firstRun string, nodes int) error {
	r, err := derivatives.ParseID(firstRun)
	if err != nil {
		return err
	}
	deriv, err := filepath.Abs(opt.Deriv)
	if err != nil {
		return err
	}
	c := schema.Comparison{Deriv: deriv, GroupColumn: opt.GroupColumn, Groups: res.Groups, N: res.N, Covariates: opt.Covariates,
		Alpha: opt.Alpha, Permutations: opt.Permutations, Nodes: nodes, Significant: map[string]int{},
		ReferenceBundle: BundleDir(deriv, r)}
	for _, nt := range res.Nodal {
		c.Maps = append(c.Maps, nt.Map)
		c.Significant[nt.Map] = nt.Significant
	}
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(opt.Out, schema.ComparisonFile), append(b, '\n'), 0o644)
}

func ff(v float64) string {
	if math.IsNaN(v) {
		return "n/a"
	}
	return strconv.FormatFloat(v, 'g', 10, 64)
}

// covariates builds the subjects × covariates matrix: numeric columns as they are, other
// columns as 0/1 indicators of every level but the first (sorted).
func covariates(tab *Table, sel []map[string]string, names []string) ([][]float64, error) {
	if len(names) == 0 {
		return nil, nil
	}
	X := make([][]float64, len(sel))
	for _, c := range names {
		found := false
		for _, x := range tab.Columns {
			found = found || x == c
		}
		if !found {
			return nil, fmt.Errorf("%s has no covariate column %q", tab.Path, c)
		}
		numeric := true
		levels := map[string]bool{}
		for _, r := range sel {
			v := r[c]
			if v == "" || v == "n/a" {
				return nil, fmt.Errorf("%s: %s has no value for covariate %s", tab.Path, r["participant_id"], c)
			}
			levels[v] = true
			if _, err := strconv.ParseFloat(v, 64); err != nil {
				numeric = false
			}
		}
		if numeric {
			for s, r := range sel {
				v, _ := strconv.ParseFloat(r[c], 64)
				X[s] = append(X[s], v)
			}
			continue
		}
		var lv []string
		for v := range levels {
			lv = append(lv, v)
		}
		sort.Strings(lv)
		for _, l := range lv[1:] {
			for s, r := range sel {
				X[s] = append(X[s], map[bool]float64{true: 1, false: 0}[r[c] == l])
			}
		}
	}
	return X, nil
}
