package pipeline

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hubscope/hubscope/assets"
	"github.com/hubscope/hubscope/helper/atlas"
	"github.com/hubscope/hubscope/helper/nifti"
	"github.com/hubscope/hubscope/helper/scan"
	"github.com/hubscope/hubscope/internal/shareddata"
	"github.com/hubscope/hubscope/ipc/schema"
	"github.com/hubscope/hubscope/ipc/settings"
)

// TestHubNamesByDefault: without --atlas the embedded AAL names the hubs of a scan in MNI space
// (the phantom: our writer's "aligned" code on the MNI152 grid at 10 mm), and a scan in scanner
// space (Haxby's, code 1, not registered) or an "aligned" scan that does not lie on the MNI
// brain (nipy's) gets no atlas_label column and one line saying why.
func TestHubNamesByDefault(t *testing.T) {
	scanPath, maskPath, _ := phantom(t, 10)
	haxby := shareddata.Path(t, "haxby2001_run001_bold_25mm.nii.gz")
	nipy := shareddata.Path(t, "nipy_functional.nii.gz")
	aal, err := atlas.LoadFS(assets.Atlas, assets.AtlasImage, assets.AtlasNames)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, scan, mask string
		named            bool
		why              string
	}{
		{"mni phantom", scanPath, maskPath, true, ""},
		{"scanner space", haxby, "", false, "scanner space (code 1) and was not registered"},
		{"aligned, not MNI", nipy, "", false, "an aligned space (code 2) but the mask does not lie on the MNI brain"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := rawDefaults()
			cfg.Scan, cfg.Mask, cfg.Out, cfg.Backend, cfg.Metrics = c.scan, c.mask, filepath.Join(t.TempDir(), "b"), "cpu", settings.MetricsNone
			res, err := Run(context.Background(), cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(filepath.Join(res.Dir, "hubs.tsv"))
			if err != nil {
				t.Fatal(err)
			}
			var m schema.Metrics
			mb, err := os.ReadFile(filepath.Join(res.Dir, "metrics.json"))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(mb, &m); err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSpace(string(b)), "\n")
			head := strings.Split(lines[0], "\t")
			hasLabel := head[len(head)-1] == "atlas_label"
			if !c.named {
				if hasLabel || m.Hubs.Atlas != "" || m.Hubs.Regions != nil {
					t.Fatalf("hubs named (header %v, atlas %q) for a scan not in MNI space", head, m.Hubs.Atlas)
				}
				if !strings.HasPrefix(m.Hubs.Unnamed, "not named by region: ") || !strings.Contains(m.Hubs.Unnamed, c.why) {
					t.Fatalf("unnamed = %q, want a line saying %q", m.Hubs.Unnamed, c.why)
				}
				return
			}
			if !hasLabel || m.Hubs.Atlas != AALName || m.Hubs.Unnamed != "" {
				t.Fatalf("hubs.tsv header %v, atlas %q, unnamed %q: want the embedded AAL's labels", head, m.Hubs.Atlas, m.Hubs.Unnamed)
			}
			col := map[string]int{}
			for i, h := range head {
				col[h] = i
			}
			count := map[string]int{}
			labelled := 0
			for _, l := range lines[1:] {
				f := strings.Split(l, "\t")
				var x [3]float64
				for d, name := range []string{"x_mm", "y_mm", "z_mm"} {
					if x[d], err = strconv.ParseFloat(f[col[name]], 64); err != nil {
						t.Fatal(err)
					}
				}
				_, want := aal.Region(x)
				if got := f[col["atlas_label"]]; got != want {
					t.Fatalf("hub at %v labelled %q, the AAL says %q", x, got, want)
				}
				if want != "" {
					labelled++
					count[want]++
				}
			}
			if n := len(lines) - 1; n == 0 || labelled*4 < n {
				t.Fatalf("%d of %d hubs named by the AAL; want at least a quarter", labelled, n)
			}
			if len(m.Hubs.Regions) == 0 {
				t.Fatal("metrics.json hubs.regions empty")
			}
			for i, r := range m.Hubs.Regions {
				if count[r.Name] != r.Hubs {
					t.Errorf("hubs.regions[%d] %s: %d hubs, hubs.tsv has %d", i, r.Name, r.Hubs, count[r.Name])
				}
				if i > 0 && r.Hubs > m.Hubs.Regions[i-1].Hubs {
					t.Errorf("hubs.regions not in decreasing order: %v", m.Hubs.Regions)
				}
			}
			for name, k := range count {
				if k > m.Hubs.Regions[0].Hubs {
					t.Errorf("%s holds %d hubs, more than the first region listed %v", name, k, m.Hubs.Regions[0])
				}
			}
		})
	}
}

// TestExplicitAtlasPlacement: a user's --atlas names hubs only where the scan lies in the
// atlas' space. An MNI atlas over a scanner-space scan that was not registered, or over a scan
// whose registration was refused as implausible, names no hub: the network stands, and the
// summary's line and a note say why; an atlas on the scan's own space is read at its voxels.
func TestExplicitAtlasPlacement(t *testing.T) {
	haxby := shareddata.Path(t, "haxby2001_run001_bold_25mm.nii.gz")
	h, _, err := nifti.ReadImage(haxby)
	if err != nil {
		t.Fatal(err)
	}
	// A subject-space parcellation on Haxby's own grid and codes: left and right halves.
	own := filepath.Join(t.TempDir(), "halves.nii.gz")
	ah := nifti.NewHeader([]int{h.Nx(), h.Ny(), h.Nz()}, nifti.Float32, h.Affine(), 0)
	ah.SformCode, ah.QformCode = h.SformCode, h.QformCode
	labels := make([]float32, h.Nx()*h.Ny()*h.Nz())
	for f := range labels {
		labels[f] = float32(1 + (f%h.Nx())*2/h.Nx())
	}
	if err := nifti.WriteImage(own, ah, labels); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(strings.TrimSuffix(own, ".gz")+".txt", []byte("1 first_half\n2 second_half\n"), 0o644)
	for _, c := range []struct {
		name, atlas string
		why         string // "" = named
	}{
		{"MNI atlas, scanner-space scan", AtlasAAL, "is in MNI152 space (code 4) but the scan " + haxby + " is in scanner space (code 1) and was not registered to MNI"},
		{"atlas on the scan's own space", own, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := rawDefaults()
			cfg.Scan, cfg.Atlas, cfg.Out, cfg.Backend, cfg.Metrics = haxby, c.atlas, filepath.Join(t.TempDir(), "b"), "cpu", settings.MetricsNone
			rec := &noteRecorder{}
			res, err := Run(context.Background(), cfg, rec)
			if err != nil {
				t.Fatal(err)
			}
			var m schema.Metrics
			readJSON(t, filepath.Join(res.Dir, "metrics.json"), &m)
			b, _ := os.ReadFile(filepath.Join(res.Dir, "hubs.tsv"))
			named := strings.Contains(strings.SplitN(string(b), "\n", 2)[0], "atlas_label")
			if c.why == "" {
				if !named || m.Hubs.Unnamed != "" || !strings.Contains(string(b), "_half") {
					t.Fatalf("own-space atlas: named %v, unnamed %q", named, m.Hubs.Unnamed)
				}
				return
			}
			if named || m.Hubs.Atlas != "" || !strings.Contains(m.Hubs.Unnamed, c.why) {
				t.Fatalf("named %v, atlas %q, unnamed %q; want no names and %q", named, m.Hubs.Atlas, m.Hubs.Unnamed, c.why)
			}
			said := 0
			for _, n := range rec.notes {
				if strings.HasPrefix(n, "hub names: ") && strings.Contains(n, c.why) {
					said++
				}
			}
			if said != 1 {
				t.Errorf("%d notes say why, want 1: %q", said, rec.notes)
			}
		})
	}
	// The rule itself, with a registration asked for and refused (toMNI nil): a standard-space
	// atlas is refused unless the scan's header names its space; a subject-space one is read.
	dir := t.TempDir()
	scanOf := func(code int32) string {
		p := filepath.Join(dir, "s"+strconv.Itoa(int(code))+".nii")
		sh := nifti.NewHeader([]int{2, 2, 2, 3}, nifti.Float32, h.Affine(), 2)
		sh.SformCode, sh.QformCode = code, 0
		if err := nifti.WriteImage(p, sh, make([]float32, 24)); err != nil {
			t.Fatal(err)
		}
		return p
	}
	s := &scan.Scan{IJK: [][3]int32{{0, 0, 0}}}
	id := [4][4]float64{{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}, {0, 0, 0, 1}}
	for _, c := range []struct {
		register        string
		scanCode, space int32
		toMNI           bool
		refused         string
	}{
		{RealignOn, 2, 4, false, "was refused as implausible"},
		{RealignAuto, 1, 3, false, "was refused as implausible"},
		{RealignOn, 2, 5, false, "was refused as implausible"},
		{RealignOn, 5, 5, false, ""}, // the scan says it is in the atlas' template space
		{RealignOn, 2, 4, true, ""},  // registered: labels at ToMNI·x
		{RealignOn, 2, 2, false, ""}, // a subject-space atlas
		{RealignOn, 4, 4, false, ""}, // MNI by its header: nothing was registered or refused
		{RealignOff, 1, 4, false, "was not registered to MNI"},
		{RealignOff, 2, 4, false, ""},
	} {
		cfg := Defaults()
		cfg.Scan, cfg.Register = scanOf(c.scanCode), c.register
		var to *[4][4]float64
		if c.toMNI {
			to = &id
		}
		got := atlasMisplaced(cfg, s, &atlas.Atlas{Path: "atlas.nii", Space: c.space}, to)
		if (c.refused == "") != (got == "") || !strings.Contains(got, c.refused) {
			t.Errorf("%+v: %q", c, got)
		}
	}
}
