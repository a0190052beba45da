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
