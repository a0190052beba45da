package normview

import (
	"context"
	"errors"
	"io"
	"math"
	"strings"
	"testing"

	"github.com/hubscope/hubscope/ipc"
	"github.com/hubscope/hubscope/ipc/schema"
)

func volume(name string, dims [3]int, aff [4][4]float64, f func(v [3]int) float32) *ipc.Volume {
	vol := &ipc.Volume{Header: ipc.VolumeHeader{Name: name, Dims: dims, Affine: aff}, Data: make([]float32, dims[0]*dims[1]*dims[2])}
	for k := range dims[2] {
		for j := range dims[1] {
			for i := range dims[0] {
				vol.Data[i+dims[0]*(j+dims[1]*k)] = f([3]int{i, j, k})
			}
		}
	}
	return vol
}

// Rows: hubs lost by most negative z, hubs gained by largest z, then clusters (largest
// first); MNI positions through the registration; regions from the atlas volume; hub rows capped.
func TestRows(t *testing.T) {
	dims := [3]int{10, 10, 10}
	aff := [4][4]float64{{2, 0, 0, -10}, {0, 2, 0, -10}, {0, 0, 2, -10}, {0, 0, 0, 1}}
	lostAt := map[[3]int]bool{{1, 1, 1}: true, {2, 2, 2}: true}
	gainedAt := [3]int{7, 7, 7}
	zOf := map[[3]int]float32{{1, 1, 1}: -2.5, {2, 2, 2}: -4, {7, 7, 7}: 3}
	nan := float32(math.NaN())
	lost := volume("hubs_lost", dims, aff, func(v [3]int) float32 {
		if v[0] == 9 {
			return nan // outside the mask
		}
		if lostAt[v] {
			return 1
		}
		return 0
	})
	gained := volume("hubs_gained", dims, aff, func(v [3]int) float32 {
		if v == gainedAt {
			return 1
		}
		return 0
	})
	z := volume("z_degree", dims, aff, func(v [3]int) float32 { return zOf[v] })
	atlas := volume("atlas", dims, aff, func(v [3]int) float32 {
		if v[0] < 5 {
			return 7
		}
		return 0
	})
	to := [4][4]float64{{1, 0, 0, 100}, {0, 1, 0, 0}, {0, 0, 1, 0}, {0, 0, 0, 1}}
	s := ipc.Summary{ScanToMNI: &to, Atlas: &ipc.AtlasInfo{Labels: map[int]string{7: "Precuneus_L"}}}
	rep := &Report{schema.NormComparison{ZCut: 2, Clusters: []Cluster{{Sign: -1, Voxels: 3, PeakZ: -4, Peak: [3]int{2, 2, 2}}, {Sign: 1, Voxels: 9, PeakZ: 3.5, Peak: [3]int{7, 7, 7}}}}}
	rows := Rows(s, rep, lost, gained, z, atlas)
	kinds := []string{}
	for _, r := range rows {
		kinds = append(kinds, r.Kind)
	}
	want := []string{KindLost, KindLost, KindGained, KindClusterAbove, KindClusterBelow}
	if strings.Join(kinds, ",") != strings.Join(want, ",") {
		t.Fatalf("rows %v, want %v", kinds, want)
	}
	if r := rows[0]; r.Voxel != [3]int{2, 2, 2} || r.Z != -4 || r.Region != "Precuneus_L" || r.MNI != [3]float64{94, -6, -6} || !r.InMNI {
		t.Fatalf("first hub lost %+v", r)
	}
	if r := rows[2]; r.Voxel != gainedAt || r.Z != 3 || r.Region != "outside the atlas" {
		t.Fatalf("hub gained %+v", r)
	}
	if c := rows[1].Cells(); strings.Join(c, "|") != "hub lost|-2.50|92|-8|-8|Precuneus_L|1" {
		t.Fatalf("cells %q", c)
	}
	// Without an atlas or a registration: scan coordinates, no region.
	rows = Rows(ipc.Summary{}, nil, lost, nil, nil, nil)
	if len(rows) != 2 || rows[0].InMNI || rows[0].Region != "" || !math.IsNaN(rows[0].Z) || rows[0].Cells()[1] != "—" || rows[0].Cells()[5] != "—" {
		t.Fatalf("rows without atlas or z: %+v", rows)
	}
	many := volume("hubs_lost", dims, aff, func([3]int) float32 { return 1 })
	if n := len(Rows(ipc.Summary{}, nil, many, nil, nil, nil)); n != MaxRows {
		t.Fatalf("%d hub rows, want the cap %d", n, MaxRows)
	}
	lines := (&Report{schema.NormComparison{ZCut: 2, LostCount: 600, CohortHubs: 700}}).Lines(MaxRows)
	if !strings.Contains(strings.Join(lines, " "), "the first 500 of the 600 hubs lost or gained") {
		t.Fatalf("lines %q", lines)
	}
}

// fileService serves one bundle's text files by name.
type fileService map[string]string

func (f fileService) Volume(context.Context, string, string) (*ipc.Volume, error) {
	return nil, errors.New("no volumes")
}

func (f fileService) OpenFile(_ context.Context, _, name string) (io.ReadCloser, ipc.FileInfo, error) {
	b, ok := f[name]
	if !ok {
		return nil, ipc.FileInfo{}, errors.New(name + ": not in the bundle")
	}
	return io.NopCloser(strings.NewReader(b)), ipc.FileInfo{Name: name, Size: int64(len(b))}, nil
}

// TestReadsOldAndNewComparison: the comparison is norm_comparison.json, and a bundle written
// before the rename, whose comparison is norm.json, still opens in the Norm tab.
func TestReadsOldAndNewComparison(t *testing.T) {
	const doc = `{"z_cut": 2, "nodes_compared": 50, "clusters": [], "hubs_lost": 3, "hubs_gained": 1, "cohort_hubs": 9}`
	for _, name := range []string{schema.NormFile, "norm.json"} {
		s := ipc.Summary{Job: ipc.Job{ID: "j"}, Volumes: []string{VolumeLost, VolumeZDegree}, Files: []ipc.FileInfo{{Name: "metrics.json"}, {Name: name}}}
		if !Has(s) {
			t.Errorf("%s: the bundle has no comparison, says Has", name)
		}
		rep, err := readReport(context.Background(), fileService{name: doc}, s)
		if err != nil || rep.LostCount != 3 || rep.Compared != 50 {
			t.Errorf("%s: %+v, %v", name, rep, err)
		}
	}
	if schema.NormFile == schema.NormReferenceFile {
		t.Errorf("a bundle's comparison and a normative folder's description share the name %s", schema.NormFile)
	}
	if Has(ipc.Summary{Volumes: []string{VolumeLost, VolumeZDegree}, Files: []ipc.FileInfo{{Name: "metrics.json"}}}) {
		t.Error("a bundle without a comparison file has one, says Has")
	}
}
