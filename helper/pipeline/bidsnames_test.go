package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/hubscope/hubscope/helper/bids/derivatives"
	"github.com/hubscope/hubscope/helper/bundle"
	"github.com/hubscope/hubscope/ipc/settings"
)

// bidsNameRule is the BIDS entity rule written out independently of package derivatives:
// sub first, then the entities that are present in the specification's order, alphanumeric
// labels, an alphanumeric suffix and a lower-case extension.
var bidsNameRule = regexp.MustCompile(`^sub-[a-zA-Z0-9]+` +
	`(_ses-[a-zA-Z0-9]+)?(_task-[a-zA-Z0-9]+)?(_acq-[a-zA-Z0-9]+)?(_ce-[a-zA-Z0-9]+)?(_rec-[a-zA-Z0-9]+)?` +
	`(_dir-[a-zA-Z0-9]+)?(_run-[a-zA-Z0-9]+)?(_echo-[a-zA-Z0-9]+)?(_part-[a-zA-Z0-9]+)?(_space-[a-zA-Z0-9]+)?` +
	`(_res-[a-zA-Z0-9]+)?(_den-[a-zA-Z0-9]+)?(_desc-[a-zA-Z0-9]+)?_[a-zA-Z0-9]+\.[a-z][a-z.]*$`)

// TestBIDSNames: with --bids-names every file written under sub-*/ (maps, the modules
// segmentation and its table, the network in every export format, the node and hub tables with
// BrainNet's node files, the series) follows the BIDS entity rules, carries the input's
// entities, has a sidecar, and is the bundle's file byte for byte; a region network also gets
// its BrainNet .edge and .node and its region series as a TSV equal to series.npy.
func TestBIDSNames(t *testing.T) {
	scanPath, maskPath, _ := phantom(t, 13)
	b, err := os.ReadFile(scanPath)
	if err != nil {
		t.Fatal(err)
	}
	const prefix = "sub-01_ses-2_task-rest_run-1_space-MNI152NLin2009cAsym"
	named := filepath.Join(t.TempDir(), prefix+"_desc-preproc_bold.nii.gz")
	if err := os.WriteFile(named, b, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		regions bool
		copies  map[string]string // BIDS name (after the prefix) → bundle file
	}{
		{"voxels", false, map[string]string{
			"_desc-degree_map.nii.gz":        "degree.nii.gz",
			"_desc-withinModuleZ_map.nii.gz": "within_module_z.nii.gz",
			"_desc-modules_dseg.nii.gz":      "modules.nii.gz",
			"_desc-modules_dseg.tsv":         "modules_dseg.tsv",
			"_relmat.npz":                    "network.npz",
			"_relmat.graphml":                "network.graphml",
			"_relmat.gexf":                   "network.gexf",
			"_nodes.tsv":                     "nodes.tsv",
			"_desc-hubs_nodes.tsv":           "hubs.tsv",
			"_desc-hubs_nodes.node":          "hubs.node",
			"_desc-hubs_relmat.edge":         "hubs.edge",
			"_desc-hubs_relmat.tsv":          "hub_links.tsv",
			"_timeseries.npy":                "series.npy",
		}},
		{"regions", true, map[string]string{
			"_relmat.npz":           "network.npz",
			"_relmat.graphml":       "network.graphml",
			"_relmat.edge":          "network.edge",
			"_nodes.tsv":            "nodes.tsv",
			"_nodes.node":           "network.node",
			"_desc-hubs_nodes.node": "hubs.node",
			"_timeseries.npy":       "series.npy",
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := Defaults()
			cfg.Scan, cfg.Mask, cfg.Out, cfg.Backend, cfg.Metrics = named, maskPath, filepath.Join(t.TempDir(), "b"), "cpu", settings.MetricsBasic
			cfg.BIDSNames, cfg.KeepSeries = true, true
			if c.regions {
				cfg.Atlas, cfg.Nodes, cfg.Density = AtlasAAL, NodesRegions, 0.1
			}
			res, err := Run(context.Background(), cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			checkBIDSNames(t, res.Dir, prefix, c.copies)
			if c.regions {
				checkRegionSeriesTSV(t, res.Dir, filepath.Join(res.Dir, "sub-01", "ses-2", "func", prefix+"_timeseries.tsv"))
			}
		})
	}

	// A scan without a BIDS name is refused before any bundle exists.
	cfg := Defaults()
	cfg.Scan, cfg.Mask, cfg.Out, cfg.Backend, cfg.BIDSNames = scanPath, maskPath, filepath.Join(t.TempDir(), "refused"), "cpu", true
	if _, err := Run(context.Background(), cfg, nil); err == nil || !strings.Contains(err.Error(), "--bids-names") || !strings.Contains(err.Error(), filepath.Base(scanPath)) {
		t.Errorf("a scan without a BIDS name: %v", err)
	}
	if _, err := os.Stat(cfg.Out); err == nil {
		t.Error("the refused run left a bundle")
	}
}

// checkBIDSNames checks every file under the bundle's sub-*/ folders against the entity rules
// (bidsNameRule and derivatives.CheckName), the input's entities and its sidecar, and that the
// named copies exist and equal the bundle's files.
func checkBIDSNames(t *testing.T, dir, prefix string, copies map[string]string) {
	t.Helper()
	var desc struct {
		DatasetType string
		BIDSVersion string
		GeneratedBy []struct{ Name, Version string }
	}
	readJSON(t, filepath.Join(dir, "dataset_description.json"), &desc)
	if desc.DatasetType != "derivative" || desc.BIDSVersion == "" || len(desc.GeneratedBy) != 1 || desc.GeneratedBy[0].Name != "HubScope" || desc.GeneratedBy[0].Version == "" {
		t.Errorf("dataset_description.json: %+v", desc)
	}
	seen := map[string]string{} // name → path
	subs, _ := filepath.Glob(filepath.Join(dir, "sub-*"))
	if len(subs) != 1 {
		t.Fatalf("want one sub-* folder, got %v", subs)
	}
	err := filepath.WalkDir(subs[0], func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		name := d.Name()
		seen[name] = p
		if !bidsNameRule.MatchString(name) {
			t.Errorf("%s breaks the BIDS entity rules", name)
		}
		if err := derivatives.CheckName(name); err != nil {
			t.Error(err)
		}
		if !strings.HasPrefix(name, prefix+"_") {
			t.Errorf("%s does not carry the input's entities %s", name, prefix)
		}
		if rel, _ := filepath.Rel(dir, p); filepath.ToSlash(filepath.Dir(rel)) != "sub-01/ses-2/func" {
			t.Errorf("%s is not in sub-01/ses-2/func", rel)
		}
		if strings.HasSuffix(name, ".json") {
			return nil
		}
		var side struct {
			Description, Units, SoftwareVersion string
			Threshold                           map[string]any
			Files                               map[string]string
		}
		readJSON(t, filepath.Join(filepath.Dir(p), name[:strings.IndexByte(name, '.')]+".json"), &side)
		if side.Description == "" || side.Units == "" || side.SoftwareVersion == "" || side.Threshold[settings.KeyMode] != settings.ModeDensity || side.Threshold[settings.KeyDensity] == nil {
			t.Errorf("%s: sidecar %+v", name, side)
		}
		if _, ok := side.Files[name[strings.IndexByte(name, '.'):]]; !ok {
			t.Errorf("%s: its sidecar's Files %v do not list it", name, side.Files)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for bids, orig := range copies {
		p, ok := seen[prefix+bids]
		if !ok {
			t.Errorf("%s not written", prefix+bids)
			continue
		}
		x, _ := os.ReadFile(p)
		y, _ := os.ReadFile(filepath.Join(dir, orig))
		if len(x) == 0 || !bytes.Equal(x, y) {
			t.Errorf("%s differs from %s", prefix+bids, orig)
		}
	}
}

// checkRegionSeriesTSV: the region series TSV is series.npy transposed (time points × regions)
// with the regions' names from nodes.tsv as its header.
func checkRegionSeriesTSV(t *testing.T, dir, tsv string) {
	t.Helper()
	b, err := os.ReadFile(tsv)
	if err != nil {
		t.Fatal(err)
	}
	rows := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	nodes, err := os.ReadFile(filepath.Join(dir, "nodes.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	for i, l := range strings.Split(strings.TrimRight(string(nodes), "\n"), "\n") {
		f := strings.Split(l, "\t")
		if i > 0 {
			labels = append(labels, f[len(f)-1])
		}
	}
	if got := strings.Join(strings.Split(rows[0], "\t"), "|"); got != strings.Join(labels, "|") {
		t.Fatalf("%s header %q, want nodes.tsv's labels %q", tsv, got, strings.Join(labels, "|"))
	}
	series, n, l := readNPYFloat32(t, filepath.Join(dir, "series.npy"))
	if n != len(labels) || l != len(rows)-1 {
		t.Fatalf("series.npy %d×%d, TSV %d regions × %d time points", n, l, len(labels), len(rows)-1)
	}
	for tp, row := range rows[1:] {
		for r, f := range strings.Split(row, "\t") {
			v, err := strconv.ParseFloat(f, 32)
			if err != nil || float32(v) != series[r*l+tp] {
				t.Fatalf("time point %d region %d: TSV %q, series.npy %g", tp, r, f, series[r*l+tp])
			}
		}
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func readNPYFloat32(t *testing.T, path string) ([]float32, int, int) {
	t.Helper()
	r, err := bundle.OpenSeries(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	data, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return data, r.N, r.L
}
