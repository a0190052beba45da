package atlas

import (
	"math"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/hubscope/hubscope/assets"
	"github.com/hubscope/hubscope/helper/scan"
)

// TestLoadFS reads the toy atlas from an in-memory file system and checks it against Load of
// the same files; a missing names file is an error naming it.
func TestLoadFS(t *testing.T) {
	dir := t.TempDir()
	p := writeToyAtlas(t, dir)
	names := []byte("2 Precentral_L 2001\n14 Cuneus_R 5002\n")
	os.WriteFile(filepath.Join(dir, "toy.nii.txt"), names, 0o644)
	img, _ := os.ReadFile(p)
	fsys := fstest.MapFS{"a/toy.nii.gz": {Data: img}, "a/toy.nii.txt": {Data: names}}
	got, err := LoadFS(fsys, "a/toy.nii.gz", "a/toy.nii.txt")
	if err != nil {
		t.Fatal(err)
	}
	want, err := Load(p, "")
	if err != nil {
		t.Fatal(err)
	}
	for x := -12.0; x <= 0; x += 0.7 {
		for y := -22.0; y <= -14; y += 0.9 {
			for z := 28.0; z <= 34; z += 1.1 {
				xyz := [3]float64{x, y, z}
				gi, gn := got.Region(xyz)
				wi, wn := want.Region(xyz)
				if gi != wi || gn != wn {
					t.Fatalf("Region(%v): LoadFS %d %q, Load %d %q", xyz, gi, gn, wi, wn)
				}
			}
		}
	}
	if _, err := LoadFS(fsys, "a/toy.nii.gz", "a/missing.txt"); err == nil {
		t.Fatal("missing names file accepted")
	}
}

// TestResampleMatchesRegion checks the resampled label grid against a direct Region lookup of
// every voxel centre, on a grid with its own voxel size, origin and a small rotation.
func TestResampleMatchesRegion(t *testing.T) {
	a, err := LoadFS(assets.Atlas, assets.AtlasImage, assets.AtlasNames)
	if err != nil {
		t.Fatal(err)
	}
	if a.Name(1) != "Precentral_L" {
		t.Fatalf("label 1 is %q, want Precentral_L", a.Name(1))
	}
	c, s := math.Cos(0.1), math.Sin(0.1)
	aff := [4][4]float64{{-6 * c, 6 * s, 0, 90}, {6 * s, 6 * c, 0, -126}, {0, 0, 6, -72}, {0, 0, 0, 1}}
	dims := [3]int{31, 37, 31}
	got, err := a.Resample(dims, aff)
	if err != nil {
		t.Fatal(err)
	}
	named := 0
	f := 0
	for k := 0; k < dims[2]; k++ {
		for j := 0; j < dims[1]; j++ {
			for i := 0; i < dims[0]; i++ {
				id, _ := a.Region(scan.VoxelToWorld(aff, [3]float64{float64(i), float64(j), float64(k)}))
				if int(got[f]) != id {
					t.Fatalf("voxel %d,%d,%d: resampled label %g, Region %d", i, j, k, got[f], id)
				}
				if id != 0 {
					named++
				}
				f++
			}
		}
	}
	if named < 1000 {
		t.Fatalf("only %d voxels of the MNI-box grid carry an AAL label", named)
	}
}
