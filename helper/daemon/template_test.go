package daemon

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/hubscope/hubscope/helper/pipeline"
	"github.com/hubscope/hubscope/helper/register"
)

// TestResampleTemplate checks the trilinear resampling of the display template: on the
// template's own grid it returns the template; on a grid shifted half a voxel along x, the
// mean of the two neighbours; on a grid twice as coarse, every second voxel.
func TestResampleTemplate(t *testing.T) {
	tpl, err := readDisplayTemplate()
	if err != nil {
		t.Fatal(err)
	}
	if tpl.dims != [3]int{91, 109, 91} || tpl.affine[0][0] != 2 {
		t.Fatalf("display template: %v grid, affine %v", tpl.dims, tpl.affine)
	}
	at := func(i, j, k int) float32 { return tpl.data[i+tpl.dims[0]*(j+tpl.dims[1]*k)] }
	same, err := resampleTemplate(tpl, tpl.dims, tpl.affine)
	if err != nil {
		t.Fatal(err)
	}
	brain := 0
	for f, x := range same {
		if x != tpl.data[f] {
			t.Fatalf("own grid, voxel %d: %g, template %g", f, x, tpl.data[f])
		}
		if x > 0 {
			brain++
		}
	}
	if brain < 100_000 {
		t.Fatalf("the display template has %d brain voxels", brain)
	}
	half := tpl.affine
	half[0][3] += 1 // 1 mm = half a voxel towards +x
	dims := [3]int{tpl.dims[0] - 1, tpl.dims[1], tpl.dims[2]}
	shifted, err := resampleTemplate(tpl, dims, half)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range [][3]int{{45, 60, 40}, {30, 70, 50}, {60, 40, 30}} {
		got := shifted[p[0]+dims[0]*(p[1]+dims[1]*p[2])]
		want := (at(p[0], p[1], p[2]) + at(p[0]+1, p[1], p[2])) / 2
		if math.Abs(float64(got-want)) > 1e-4 {
			t.Fatalf("half-voxel shift at %v: %g, want %g", p, got, want)
		}
	}
	coarse := tpl.affine
	for r := range 3 {
		coarse[r][r] = 4
	}
	cd := [3]int{46, 55, 46}
	c, err := resampleTemplate(tpl, cd, coarse)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c[20+cd[0]*(25+cd[1]*20)], at(40, 50, 40); got != want {
		t.Fatalf("4 mm grid voxel (20, 25, 20): %g, want the template's (40, 50, 40) %g", got, want)
	}
}

// TestRegisteredTemplate: a scan 80 mm to the side of MNI space whose registration undoes the
// shift gets the template as the unshifted grid would, the atlas through the same map, and
// ScanToMNI; an implausible registration gives neither.
func TestRegisteredTemplate(t *testing.T) {
	d := &Daemon{uploads: t.TempDir()}
	base := [4][4]float64{{4, 0, 0, -90}, {0, 4, 0, -126}, {0, 0, 4, -72}, {0, 0, 0, 1}}
	shifted := base
	shifted[0][3] += 80
	dims := [3]int{46, 55, 46}
	write := func(plausible bool) string {
		dir := t.TempDir()
		if err := os.Mkdir(filepath.Join(dir, "qc"), 0o755); err != nil {
			t.Fatal(err)
		}
		to := [4][4]float64{{1, 0, 0, -80}, {0, 1, 0, 0}, {0, 0, 1, 0}, {0, 0, 0, 1}}
		rr := pipeline.RegistrationReport{Estimated: true, Result: &register.Result{ToMNI: to, Plausible: plausible}, LabelsUseIt: plausible}
		b, _ := json.Marshal(rr)
		if err := os.WriteFile(filepath.Join(dir, "qc", "registration.json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	v := &bundleView{dir: write(true), dims: dims, affine: shifted}
	if err := d.registeredSpace(v, record{}); err != nil {
		t.Fatal(err)
	}
	if !v.registered || v.toMNI == nil || v.atlasGrid == nil || v.scanToMNI == nil {
		t.Fatalf("registered scan: registered %v, toMNI %v, atlas %v", v.registered, v.toMNI != nil, v.atlasGrid != nil)
	}
	tpl, err := d.displayTemplate()
	if err != nil {
		t.Fatal(err)
	}
	got, err := resampleTemplate(tpl, dims, *v.toMNI)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := resampleTemplate(tpl, dims, base)
	for f := range want {
		if math.Abs(float64(got[f]-want[f])) > 1e-3 {
			t.Fatalf("voxel %d: %g through the registration, %g on the MNI grid", f, got[f], want[f])
		}
	}
	a, _ := d.aal()
	wantAtlas, _ := a.atlas.Resample(dims, base)
	for f := range wantAtlas {
		if v.atlasGrid[f] != wantAtlas[f] {
			t.Fatalf("atlas voxel %d: %g, want %g", f, v.atlasGrid[f], wantAtlas[f])
		}
	}
	if x := apply(*v.scanToMNI, [3]float64{10, 0, 0}); x != [3]float64{-70, 0, 0} {
		t.Fatalf("scan (10, 0, 0) mm maps to %v in MNI", x)
	}
	v = &bundleView{dir: write(false), dims: dims, affine: shifted}
	if err := d.registeredSpace(v, record{}); err != nil {
		t.Fatal(err)
	}
	if v.toMNI != nil || v.atlasGrid != nil || v.registered {
		t.Fatal("an implausible registration gave the scan a template or atlas")
	}
}
