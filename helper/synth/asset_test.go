package synth

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/hubscope/hubscope/helper/nifti"
)

// demoMaskSource is where the embedded demo mask is regenerated from:
//
//	HUBSCOPE_REGENERATE_ASSETS=1 go test ./helper/synth -run TestDemoMaskAsset
var demoMaskSource = mni2mm

// TestDemoMaskAsset checks that the embedded demo mask is the MNI152 2 mm mask resampled to
// 4 mm by ResampleMask (when the 2 mm mask is at hand), and regenerates it on request.
func TestDemoMaskAsset(t *testing.T) {
	if _, err := os.Stat(demoMaskSource); err != nil {
		t.Skipf("source mask not present: %v", err)
	}
	src, srcAffine, err := ReadMask(demoMaskSource, 0)
	if err != nil {
		t.Fatal(err)
	}
	want, wantAffine := ResampleMask(src, srcAffine, 4)
	if os.Getenv("HUBSCOPE_REGENERATE_ASSETS") == "1" {
		vals := make([]float32, len(want.In))
		for i, in := range want.In {
			if in {
				vals[i] = 1
			}
		}
		path := filepath.Join("..", "..", "assets", DemoMaskAsset)
		h := nifti.NewHeader(want.Dims[:], nifti.Uint8, wantAffine, 0)
		h.Descrip = "MNI152 brain mask 4mm (HubScope synth)"
		if err := nifti.WriteImage(path, h, vals); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s: %v grid, %d voxels", path, want.Dims, want.Count())
	}
	got, gotAffine, err := DemoMask()
	if err != nil {
		t.Fatal(err)
	}
	if got.Dims != want.Dims || !slices.Equal(got.In, want.In) {
		t.Fatalf("embedded demo mask (%v, %d voxels) differs from ResampleMask(%s, 4 mm) (%v, %d voxels); regenerate with HUBSCOPE_REGENERATE_ASSETS=1",
			got.Dims, got.Count(), demoMaskSource, want.Dims, want.Count())
	}
	for r := range 3 {
		for c := range 4 {
			if d := gotAffine[r][c] - wantAffine[r][c]; d > 1e-4 || d < -1e-4 {
				t.Fatalf("embedded demo affine %v, want %v", gotAffine, wantAffine)
			}
		}
	}
}
