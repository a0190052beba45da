package pipeline

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/hubscope/hubscope/helper/bundle"
	"github.com/hubscope/hubscope/helper/nifti"
	"github.com/hubscope/hubscope/helper/scan"
	"github.com/hubscope/hubscope/ipc/settings"
)

// TestKeepSeries checks the bundle's series.npy against the scan loaded directly (same rows as
// nodes.tsv, same values) and mean.nii.gz against the temporal mean computed from the whole
// image, and that neither file is written without KeepSeries.
func TestKeepSeries(t *testing.T) {
	scanPath, maskPath, _ := phantom(t, 12)
	for _, keep := range []bool{true, false} {
		cfg := rawDefaults() // compared with the scan as loaded
		cfg.Scan, cfg.Mask, cfg.Backend, cfg.Metrics = scanPath, maskPath, "cpu", settings.MetricsNone
		cfg.Out = filepath.Join(t.TempDir(), "b")
		cfg.KeepSeries = keep
		res, err := Run(context.Background(), cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !keep {
			for _, f := range []string{bundle.SeriesFile, bundle.MeanFile} {
				if _, err := os.Stat(filepath.Join(res.Dir, f)); err == nil {
					t.Fatalf("%s written without KeepSeries", f)
				}
			}
			continue
		}
		s, err := scan.Load(context.Background(), scanPath, scan.Options{MaskPath: maskPath}, nil)
		if err != nil {
			t.Fatal(err)
		}
		r, err := bundle.OpenSeries(filepath.Join(res.Dir, bundle.SeriesFile))
		if err != nil {
			t.Fatal(err)
		}
		got, err := r.ReadAll()
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		if r.N != s.N || r.L != s.L {
			t.Fatalf("series %d×%d, want %d×%d", r.N, r.L, s.N, s.L)
		}
		for i, x := range got {
			if x != s.Data[i] {
				t.Fatalf("series value %d: %g, want %g", i, x, s.Data[i])
			}
		}

		h, all, err := nifti.ReadImage(scanPath)
		if err != nil {
			t.Fatal(err)
		}
		_, mean, err := nifti.ReadImage(filepath.Join(res.Dir, bundle.MeanFile))
		if err != nil {
			t.Fatal(err)
		}
		nv, L := h.VoxelsPerVolume(), h.Volumes()
		if len(mean) != nv {
			t.Fatalf("mean.nii.gz has %d voxels, the scan's grid %d", len(mean), nv)
		}
		for f := 0; f < nv; f++ {
			var sum float64
			for tt := 0; tt < L; tt++ {
				sum += float64(all[tt*nv+f])
			}
			if want := sum / float64(L); math.Abs(float64(mean[f])-want) > 1e-4*math.Max(1, math.Abs(want)) {
				t.Fatalf("mean at voxel %d: %g, want %g", f, mean[f], want)
			}
		}
	}
}
