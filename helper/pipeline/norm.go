package pipeline

import (
	"fmt"
	"math"
	"strconv"

	"github.com/hubscope/hubscope/helper/atlas"
	"github.com/hubscope/hubscope/helper/bundle"
	"github.com/hubscope/hubscope/helper/nifti"
	"github.com/hubscope/hubscope/helper/norm"
	"github.com/hubscope/hubscope/helper/scan"
	"github.com/hubscope/hubscope/helper/sweep"
	"github.com/hubscope/hubscope/ipc/schema"
)

// NormZ is the |z| beyond which a voxel is abnormal, and a cohort hub with z below −NormZ lost.
const NormZ = 2

// compareWithNorm compares the run's nodal maps with the normative cohort's.
func compareWithNorm(nm *norm.Norm, s *scan.Scan, m *Metrics, maps []nodeMap, atl *atlas.Atlas) (*norm.Result, error) {
	if s.IJK == nil {
		return nil, fmt.Errorf("--norm compares voxel maps; %s is a time-series matrix", s.Source)
	}
	if err := nm.CheckGrid(s.Dims, s.Affine); err != nil {
		return nil, err
	}
	vals := map[string][]float64{}
	for _, mp := range maps {
		v := make([]float64, len(mp.values))
		for i, x := range mp.values {
			v[i] = float64(x)
		}
		vals[mp.name] = v
	}
	if sw := m.Sweep; sw != nil { // every threshold's degree, for a norm built from sweeps
		for i, deg := range sw.Degrees {
			v := make([]float64, len(deg))
			for k, d := range deg {
				v[k] = float64(d)
			}
			vals[sweep.DegreeMap(sw.Spec.Values[i])] = v
		}
	}
	isHub := make([]bool, s.N)
	for _, h := range m.hubs {
		isHub[h] = true
	}
	var region func([3]float64) string
	if atl != nil {
		region = func(xyz [3]float64) string {
			_, name := atl.Region(xyz)
			return name
		}
	}
	return nm.Compare(s.IJK, s.Affine, vals, isHub, NormZ, region)
}

// writeNorm adds z_<map>.nii.gz (0 where not compared), hubs_lost.nii.gz, hubs_gained.nii.gz,
// cohort_hubs.nii.gz (the cohort's hubs among the compared nodes), norm_clusters.tsv and
// norm_comparison.json to the bundle.
func writeNorm(w *bundle.Writer, s *scan.Scan, r *norm.Result) error {
	for name, z := range r.Z {
		v := make([]float32, len(z))
		for i, x := range z {
			if !math.IsNaN(x) {
				v[i] = float32(x)
			}
		}
		if err := w.WriteNodeMap("z_"+name+".nii.gz", s, v, nifti.Float32); err != nil {
			return err
		}
	}
	for name, nodes := range map[string][]int{"hubs_lost": r.Lost, "hubs_gained": r.Gained, "cohort_hubs": r.CohortHubNodes} {
		v := make([]float32, s.N)
		for _, k := range nodes {
			v[k] = 1
		}
		if err := w.WriteNodeMap(name+".nii.gz", s, v, nifti.Uint8); err != nil {
			return err
		}
	}
	f := func(x float64) string { return strconv.FormatFloat(x, 'f', 3, 64) }
	err := w.WriteTSV("norm_clusters.tsv", []string{"cluster", "sign", "voxels", "peak_z", "peak_i", "peak_j", "peak_k", "peak_x_mm", "peak_y_mm", "peak_z_mm", "region"},
		func(emit func(fields ...string) error) error {
			for c, cl := range r.Clusters {
				sign := "below"
				if cl.Sign > 0 {
					sign = "above"
				}
				region := cl.Region
				if region == "" {
					region = "n/a"
				}
				if err := emit(strconv.Itoa(c+1), sign, strconv.Itoa(cl.Voxels), f(cl.PeakZ), strconv.Itoa(cl.Peak[0]), strconv.Itoa(cl.Peak[1]), strconv.Itoa(cl.Peak[2]),
					f(cl.PeakMM[0]), f(cl.PeakMM[1]), f(cl.PeakMM[2]), region); err != nil {
					return err
				}
			}
			return nil
		})
	if err != nil {
		return err
	}
	return w.WriteJSON(schema.NormFile, &r.NormComparison)
}
