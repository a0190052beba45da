// Package norm compares one person's network with a normative cohort's: per voxel the
// cohort's mean and SD of degree and other nodal measures (built by Build from the cohort's
// bundles, made with one set of settings), the person's z-maps, the cohort hubs the person
// lost (z < −2 at a cohort hub) or gained, and clusters of abnormal voxels.
package norm

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hubscope/hubscope/helper/nifti"
	"github.com/hubscope/hubscope/helper/sweep"
	"github.com/hubscope/hubscope/ipc/schema"
)

// Flatten turns a settings value into a flat map of its JSON keys ("group.mean": "r").
func Flatten(v any) map[string]any {
	b, _ := json.Marshal(v)
	var m any
	json.Unmarshal(b, &m)
	flat := map[string]any{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		if mm, ok := v.(map[string]any); ok {
			for k, x := range mm {
				walk(prefix+k+".", x)
			}
			return
		}
		flat[strings.TrimSuffix(prefix, ".")] = v
	}
	walk("", m)
	return flat
}

// Diff names the settings that differ, "key: a → b", sorted.
func Diff(a, b map[string]any) []string {
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	show := func(v any, ok bool) string {
		if !ok || v == nil {
			return "(unset)"
		}
		return fmt.Sprint(v)
	}
	var d []string
	for k := range keys {
		x, okx := a[k]
		y, oky := b[k]
		if show(x, okx) != show(y, oky) {
			d = append(d, fmt.Sprintf("%s: %s → %s", k, show(x, okx), show(y, oky)))
		}
	}
	sort.Strings(d)
	return d
}

// Info is the normative folder's norm.json (schema.NormReference).
type Info = schema.NormReference

// Input is the cohort's nodal maps on common nodes.
type Input struct {
	Dims     [3]int
	Affine   [4][4]float64
	IJK      [][3]int
	Values   map[string][][]float64 // map → node → subject
	Subjects []string
	Settings map[string]any
	HubSD    float64
	Software string
	Version  string
}

// MinSubjects is the smallest normative cohort Build accepts.
const MinSubjects = 3

// Build writes the normative folder dir: mean_<map>.nii.gz and sd_<map>.nii.gz (sample SD) per
// voxel, hubs.nii.gz (cohort hubs: mean degree > mean + HubSD·SD of the mean-degree map, the
// hub rule of Wang et al. applied to the cohort's mean), nodes.nii.gz and norm.json.
func Build(dir string, in Input) (*Info, error) {
	if len(in.Subjects) < MinSubjects {
		return nil, fmt.Errorf("norm: %d subjects; a normative cohort needs at least %d", len(in.Subjects), MinSubjects)
	}
	if _, ok := in.Values["degree"]; !ok {
		return nil, fmt.Errorf("norm: the cohort's degree maps are needed")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	info := &Info{Software: in.Software, Version: in.Version, Subjects: in.Subjects, Dims: in.Dims, Affine: in.Affine,
		Nodes: len(in.IJK), Settings: in.Settings, HubRule: fmt.Sprintf("cohort mean degree > mean + %g SD", in.HubSD)}
	grid := in.Dims[0] * in.Dims[1] * in.Dims[2]
	flat := func(v [3]int) int { return v[0] + in.Dims[0]*(v[1]+in.Dims[1]*v[2]) }
	hdr := nifti.NewHeader([]int{in.Dims[0], in.Dims[1], in.Dims[2]}, nifti.Float32, in.Affine, 0)
	var names []string
	for name := range in.Values {
		names = append(names, name)
	}
	sort.Strings(names)
	info.Maps = names
	for _, name := range names {
		mean, sd := make([]float32, grid), make([]float32, grid)
		for k, v := range in.IJK {
			m, s := meanSD(in.Values[name][k], 1)
			mean[flat(v)], sd[flat(v)] = float32(m), float32(s)
		}
		if err := nifti.WriteImage(filepath.Join(dir, "mean_"+name+".nii.gz"), hdr, mean); err != nil {
			return nil, err
		}
		if err := nifti.WriteImage(filepath.Join(dir, "sd_"+name+".nii.gz"), hdr, sd); err != nil {
			return nil, err
		}
	}
	nodes := make([]float32, grid)
	for _, v := range in.IJK {
		nodes[flat(v)] = 1
	}
	for _, name := range names {
		if !isDegreeMap(name) {
			continue
		}
		md := make([]float64, len(in.IJK))
		for k := range in.IJK {
			md[k], _ = meanSD(in.Values[name][k], 1)
		}
		mu, sd := meanSD(md, 0)
		hubs, count := make([]float32, grid), 0
		for k, v := range in.IJK {
			if md[k] > mu+in.HubSD*sd {
				hubs[flat(v)] = 1
				count++
			}
		}
		if err := nifti.WriteImage(filepath.Join(dir, hubFile(name)), hdr, hubs); err != nil {
			return nil, err
		}
		if name == "degree" {
			info.Hubs = count
		} else {
			if info.ThresholdHubs == nil {
				info.ThresholdHubs = map[string]int{}
			}
			info.ThresholdHubs[name] = count
		}
	}
	if err := nifti.WriteImage(filepath.Join(dir, "nodes.nii.gz"), hdr, nodes); err != nil {
		return nil, err
	}
	b, _ := json.MarshalIndent(info, "", "  ")
	return info, os.WriteFile(filepath.Join(dir, schema.NormReferenceFile), append(b, '\n'), 0o644)
}

// isDegreeMap is true for the degree map and every sweep threshold's degree map: the maps
// that carry a hub rule.
func isDegreeMap(name string) bool {
	return name == "degree" || strings.HasPrefix(name, sweep.DegreeMapPrefix)
}

// hubFile is the cohort hub map of a degree map: hubs.nii.gz, or hubs_<map>.nii.gz.
func hubFile(name string) string {
	if name == "degree" {
		return "hubs.nii.gz"
	}
	return "hubs_" + name + ".nii.gz"
}

// meanSD is x's mean and SD with ddof degrees of freedom removed: 1 for the sample SD of a
// normative model, 0 for the population SD of the hub rule (as graph.DegreeMoments).
func meanSD(x []float64, ddof int) (m, sd float64) {
	for _, v := range x {
		m += v
	}
	m /= float64(len(x))
	for _, v := range x {
		sd += (v - m) * (v - m)
	}
	return m, math.Sqrt(sd / float64(len(x)-ddof))
}

// Norm is a normative folder read back.
type Norm struct {
	Dir   string
	Info  Info
	Mean  map[string][]float32 // grid-sized
	SD    map[string][]float32
	Hub   []bool
	Nodes []bool
	// ThresholdHub holds the cohort hubs of every sweep threshold's degree map.
	ThresholdHub map[string][]bool
}

// Load reads a normative folder.
func Load(dir string) (*Norm, error) {
	b, err := os.ReadFile(filepath.Join(dir, schema.NormReferenceFile))
	if err != nil {
		return nil, fmt.Errorf("normative folder %s: %w (build it with: norm build DERIV --out %s)", dir, err, dir)
	}
	n := &Norm{Dir: dir, Mean: map[string][]float32{}, SD: map[string][]float32{}}
	if err := json.Unmarshal(b, &n.Info); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, schema.NormReferenceFile), err)
	}
	read := func(name string) ([]float32, error) {
		_, v, err := nifti.ReadImage(filepath.Join(dir, name))
		if err == nil && len(v) != n.Info.Dims[0]*n.Info.Dims[1]*n.Info.Dims[2] {
			err = fmt.Errorf("%s: %d voxels, norm.json says %v", filepath.Join(dir, name), len(v), n.Info.Dims)
		}
		return v, err
	}
	for _, m := range n.Info.Maps {
		if n.Mean[m], err = read("mean_" + m + ".nii.gz"); err != nil {
			return nil, err
		}
		if n.SD[m], err = read("sd_" + m + ".nii.gz"); err != nil {
			return nil, err
		}
	}
	h, err := read("hubs.nii.gz")
	if err != nil {
		return nil, err
	}
	n.ThresholdHub = map[string][]bool{}
	for name := range n.Info.ThresholdHubs {
		th, err := read(hubFile(name))
		if err != nil {
			return nil, err
		}
		n.ThresholdHub[name] = make([]bool, len(th))
		for i, v := range th {
			n.ThresholdHub[name][i] = v != 0
		}
	}
	nd, err := read("nodes.nii.gz")
	if err != nil {
		return nil, err
	}
	n.Hub, n.Nodes = make([]bool, len(h)), make([]bool, len(nd))
	for i := range h {
		n.Hub[i], n.Nodes[i] = h[i] != 0, nd[i] != 0
	}
	return n, nil
}

// CheckSettings refuses a run whose settings differ from the cohort's, naming the differences.
func (n *Norm) CheckSettings(settings map[string]any) error {
	if d := Diff(n.Info.Settings, settings); len(d) > 0 {
		return fmt.Errorf("normative folder %s was built with other settings than this run: %s (norm → this run)", n.Dir, strings.Join(d, "; "))
	}
	return nil
}

// CheckGrid refuses a scan on another grid than the norm's.
func (n *Norm) CheckGrid(dims [3]int, affine [4][4]float64) error {
	if dims != n.Info.Dims {
		return fmt.Errorf("normative folder %s is on a %d×%d×%d grid, this scan on %d×%d×%d: bring the scan to the cohort's space first", n.Dir,
			n.Info.Dims[0], n.Info.Dims[1], n.Info.Dims[2], dims[0], dims[1], dims[2])
	}
	for i := 0; i < 3; i++ {
		for j := 0; j < 4; j++ {
			if math.Abs(affine[i][j]-n.Info.Affine[i][j]) > 1e-3 {
				return fmt.Errorf("normative folder %s has another voxel-to-world affine than this scan", n.Dir)
			}
		}
	}
	return nil
}

// Cluster is a face-connected set of abnormal voxels (|z| > the cut, one sign).
type Cluster = schema.NormCluster

// Result is the comparison of one scan with the norm: norm.json (schema.NormComparison) and
// the per-node results the bundle's maps need.
type Result struct {
	schema.NormComparison
	Z      map[string][]float64 `json:"-"` // per scan node; NaN where not compared
	Lost   []int                `json:"-"` // scan nodes
	Gained []int                `json:"-"`
	// CohortHubNodes are the scan nodes that are hubs of the cohort (its hubs.nii.gz), for the
	// bundle's cohort_hubs.nii.gz: the app draws them beside the hubs lost and gained.
	CohortHubNodes []int `json:"-"`
}

// ThresholdLoss is one sweep threshold's comparison.
type ThresholdLoss = schema.NormThresholdLoss

// Compare computes z = (x − mean)/SD of every map the norm holds at every node of the scan
// that is a node of the norm (SD > 0); hubs lost are cohort hubs with degree z < −zCut, hubs
// gained are scan hubs (isHub) that are no cohort hub and have degree z > zCut; clusters
// group the nodes with |degree z| > zCut by sign and face adjacency; region names the peak.
func (n *Norm) Compare(ijk [][3]int32, affine [4][4]float64, maps map[string][]float64, isHub []bool, zCut float64, region func([3]float64) string) (*Result, error) {
	d := n.Info.Dims
	flat := func(v [3]int32) int { return int(v[0]) + d[0]*(int(v[1])+d[1]*int(v[2])) }
	res := &Result{NormComparison: schema.NormComparison{ZCut: zCut}, Z: map[string][]float64{}}
	for name, vals := range maps {
		mean, ok := n.Mean[name]
		if !ok {
			continue
		}
		sd := n.SD[name]
		z := make([]float64, len(ijk))
		for k, v := range ijk {
			f := flat(v)
			z[k] = math.NaN()
			if n.Nodes[f] && sd[f] > 0 {
				z[k] = (vals[k] - float64(mean[f])) / float64(sd[f])
			}
		}
		res.Z[name] = z
	}
	zd, ok := res.Z["degree"]
	if !ok {
		return nil, fmt.Errorf("norm: this run has no degree map to compare")
	}
	node := map[int]int{}
	for k, v := range ijk {
		if !math.IsNaN(zd[k]) {
			res.Compared++
			node[flat(v)] = k
		}
	}
	for f, h := range n.Hub {
		if h {
			res.CohortHubs++
			if k, ok := node[f]; ok {
				res.CohortHubNodes = append(res.CohortHubNodes, k)
				if zd[k] < -zCut {
					res.Lost = append(res.Lost, k)
				}
			}
		}
	}
	sort.Ints(res.Lost)
	sort.Ints(res.CohortHubNodes)
	var swept []string
	for name := range n.ThresholdHub {
		swept = append(swept, name)
	}
	sort.Strings(swept)
	for _, name := range swept {
		z, ok := res.Z[name]
		if !ok {
			continue // this run has no such threshold
		}
		tl := ThresholdLoss{Map: name}
		for f, h := range n.ThresholdHub[name] {
			if h {
				tl.CohortHubs++
				if k, ok := node[f]; ok && z[k] < -zCut {
					tl.Lost++
				}
			}
		}
		res.Thresholds = append(res.Thresholds, tl)
	}
	for k, v := range ijk {
		if isHub != nil && isHub[k] && !n.Hub[flat(v)] && zd[k] > zCut {
			res.Gained = append(res.Gained, k)
		}
	}
	res.LostCount, res.GainedCount = len(res.Lost), len(res.Gained)
	// Clusters: flood fill over face neighbours of the same sign.
	seen := map[int]bool{}
	for k := range ijk {
		if math.IsNaN(zd[k]) || math.Abs(zd[k]) <= zCut || seen[k] {
			continue
		}
		sign := 1
		if zd[k] < 0 {
			sign = -1
		}
		c := Cluster{Sign: sign}
		stack := []int{k}
		seen[k] = true
		for len(stack) > 0 {
			cur := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			c.Voxels++
			if math.Abs(zd[cur]) > math.Abs(c.PeakZ) {
				c.PeakZ = zd[cur]
				c.Peak = [3]int{int(ijk[cur][0]), int(ijk[cur][1]), int(ijk[cur][2])}
			}
			p := ijk[cur]
			for _, o := range [6][3]int32{{1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}, {0, 0, 1}, {0, 0, -1}} {
				q := [3]int32{p[0] + o[0], p[1] + o[1], p[2] + o[2]}
				if q[0] < 0 || q[1] < 0 || q[2] < 0 || int(q[0]) >= d[0] || int(q[1]) >= d[1] || int(q[2]) >= d[2] {
					continue
				}
				nk, ok := node[flat(q)]
				if !ok || seen[nk] || math.Abs(zd[nk]) <= zCut || (zd[nk] < 0) != (sign < 0) {
					continue
				}
				seen[nk] = true
				stack = append(stack, nk)
			}
		}
		for r := 0; r < 3; r++ {
			c.PeakMM[r] = affine[r][0]*float64(c.Peak[0]) + affine[r][1]*float64(c.Peak[1]) + affine[r][2]*float64(c.Peak[2]) + affine[r][3]
		}
		if region != nil {
			c.Region = region(c.PeakMM)
		}
		res.Clusters = append(res.Clusters, c)
	}
	sort.Slice(res.Clusters, func(a, b int) bool {
		if res.Clusters[a].Voxels != res.Clusters[b].Voxels {
			return res.Clusters[a].Voxels > res.Clusters[b].Voxels
		}
		return math.Abs(res.Clusters[a].PeakZ) > math.Abs(res.Clusters[b].PeakZ)
	})
	return res, nil
}
