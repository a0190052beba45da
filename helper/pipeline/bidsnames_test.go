package pipeline

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hubscope/hubscope/helper/bids/derivatives"
	"github.com/hubscope/hubscope/ipc/settings"
)

// bidsNameRule is the BIDS entity rule written out independently of package derivatives:
// sub first, then the entities that are present in the specification's order, alphanumeric
// labels, an alphanumeric suffix and a lower-case extension.
var bidsNameRule = regexp.MustCompile(`^sub-[a-zA-Z0-9]+` +
	`(_ses-[a-zA-Z0-9]+)?(_task-[a-zA-Z0-9]+)?(_acq-[a-zA-Z0-9]+)?(_ce-[a-zA-Z0-9]+)?(_rec-[a-zA-Z0-9]+)?` +
	`(_dir-[a-zA-Z0-9]+)?(_run-[a-zA-Z0-9]+)?(_echo-[a-zA-Z0-9]+)?(_part-[a-zA-Z0-9]+)?(_space-[a-zA-Z0-9]+)?` +
	`(_res-[a-zA-Z0-9]+)?(_den-[a-zA-Z0-9]+)?(_desc-[a-zA-Z0-9]+)?_[a-zA-Z0-9]+\.[a-z][a-z.]*$`)

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
	cfg := Defaults()
	cfg.Scan, cfg.Mask, cfg.Out, cfg.Backend, cfg.Metrics = named, maskPath, filepath.Join(t.TempDir(), "b"), "cpu", settings.MetricsBasic
	cfg.BIDSNames = true
	res, err := Run(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}

	var desc struct {
		DatasetType string
		BIDSVersion string
		GeneratedBy []struct{ Name, Version string }
	}
	readJSON(t, filepath.Join(res.Dir, "dataset_description.json"), &desc)
	if desc.DatasetType != "derivative" || desc.BIDSVersion == "" || len(desc.GeneratedBy) != 1 || desc.GeneratedBy[0].Name != "HubScope" || desc.GeneratedBy[0].Version == "" {
		t.Errorf("dataset_description.json: %+v", desc)
	}

	funcDir := filepath.Join(res.Dir, "sub-01", "ses-2", "func")
	ents, err := os.ReadDir(funcDir)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, e := range ents {
		name := e.Name()
		seen[name] = true
		if !bidsNameRule.MatchString(name) {
			t.Errorf("%s breaks the BIDS entity rules", name)
		}
		if err := derivatives.CheckName(name); err != nil {
			t.Error(err)
		}
		if !strings.HasPrefix(name, prefix+"_") {
			t.Errorf("%s does not carry the input's entities %s", name, prefix)
		}
		if strings.HasSuffix(name, ".json") {
			continue
		}
		var side struct {
			Description, Units, SoftwareVersion string
			Threshold                           map[string]any
		}
		readJSON(t, filepath.Join(funcDir, name[:strings.IndexByte(name, '.')]+".json"), &side)
		if side.Description == "" || side.Units == "" || side.SoftwareVersion == "" || side.Threshold[settings.KeyMode] != settings.ModeDensity || side.Threshold[settings.KeyDensity] == nil {
			t.Errorf("%s: sidecar %+v", name, side)
		}
	}
	// The copies are the bundle's files byte for byte.
	for bids, orig := range map[string]string{
		prefix + "_desc-degree_map.nii.gz":        "degree.nii.gz",
		prefix + "_desc-withinModuleZ_map.nii.gz": "within_module_z.nii.gz",
		prefix + "_desc-modules_map.nii.gz":       "modules.nii.gz",
		prefix + "_relmat.npz":                    "network.npz",
	} {
		if !seen[bids] {
			t.Errorf("%s not written", bids)
			continue
		}
		x, _ := os.ReadFile(filepath.Join(funcDir, bids))
		y, _ := os.ReadFile(filepath.Join(res.Dir, orig))
		if len(x) == 0 || !bytes.Equal(x, y) {
			t.Errorf("%s differs from %s", bids, orig)
		}
	}

	// A scan without a BIDS name is refused before any bundle exists.
	cfg.Scan, cfg.Out = scanPath, filepath.Join(t.TempDir(), "refused")
	if _, err := Run(context.Background(), cfg, nil); err == nil || !strings.Contains(err.Error(), "--bids-names") || !strings.Contains(err.Error(), filepath.Base(scanPath)) {
		t.Errorf("a scan without a BIDS name: %v", err)
	}
	if _, err := os.Stat(cfg.Out); err == nil {
		t.Error("the refused run left a bundle")
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
