package synth

import (
	"math"
	"slices"
	"testing"

	"github.com/hubscope/hubscope/helper/scan"
	"github.com/hubscope/hubscope/internal/shareddata"
	"path/filepath"
)

var mni2mm = filepath.Join(shareddata.Dir(), "MNI152_T1_2mm_brain_mask.nii")

// testMask returns the MNI152 brain mask resampled to voxelMM, from the shared data when present,
// else from the embedded 4 mm demo mask.
func testMask(t testing.TB, voxelMM float64) (scan.Mask, [4][4]float64) {
	t.Helper()
	m, a, err := DemoMask()
	if err != nil {
		t.Fatal(err)
	}
	if voxelMM == 4 {
		return m, a
	}
	r, ra := ResampleMask(m, a, voxelMM)
	return r, ra
}

// normalized returns the series as float64 rows with zero mean and unit norm, so that the
// Pearson correlation of rows i and j is their dot product (docs/algorithms.md, "Connectivity measures").
func normalized(s *scan.Scan) [][]float64 {
	out := make([][]float64, s.N)
	for v := range s.N {
		x := s.Series(v)
		row := make([]float64, s.L)
		mean := 0.0
		for _, y := range x {
			mean += float64(y)
		}
		mean /= float64(s.L)
		ss := 0.0
		for t, y := range x {
			row[t] = float64(y) - mean
			ss += row[t] * row[t]
		}
		norm := math.Sqrt(ss)
		for t := range row {
			row[t] /= norm
		}
		out[v] = row
	}
	return out
}

// densityDegrees thresholds the full correlation matrix at the given density (the k strongest
// pairs, k = round(d·N(N−1)/2)) and returns every node's degree. O(N²·L): small N only.
func densityDegrees(p [][]float64, density float64) []int {
	n := len(p)
	vals := make([]float32, 0, n*(n-1)/2)
	for i := range n {
		for j := i + 1; j < n; j++ {
			vals = append(vals, float32(dotF(p[i], p[j])))
		}
	}
	k := int(math.Round(density * float64(len(vals))))
	sorted := slices.Clone(vals)
	slices.Sort(sorted)
	thr := sorted[len(sorted)-k]
	deg := make([]int, n)
	idx := 0
	for i := range n {
		for j := i + 1; j < n; j++ {
			if vals[idx] >= thr {
				deg[i]++
				deg[j]++
			}
			idx++
		}
	}
	return deg
}

func dotF(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}
