package main

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

	"github.com/hubscope/hubscope/helper/pipeline"
	"github.com/hubscope/hubscope/internal/shareddata"
)

// runHelper runs the helper's command line in-process and returns its exit code, standard
// output and standard error.
func runHelper(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := realMain(context.Background(), args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// TestDemoProvesItself runs `run --demo` (on the 8 mm grid and basic metrics, to stay quick
// under -race: 3,735 voxels) and checks that the bundle holds the phantom, its mask and its
// truth, that provenance.json and metrics.json name files that exist, and that the summary's
// truth check finds the planted modules (NMI ≥ 0.9) and hubs (recall ≥ 0.8).
func TestDemoProvesItself(t *testing.T) {
	old := pipeline.DemoVoxelMM
	pipeline.DemoVoxelMM = 8
	defer func() { pipeline.DemoVoxelMM = old }()
	dir := filepath.Join(t.TempDir(), "demo")
	code, out, errOut := runHelper(t, "run", "--demo", "--out", dir, "--metrics", "basic", "--backend", "cpu")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	t.Log("\n" + out)
	for _, f := range []string{pipeline.DemoScanFile, pipeline.DemoMaskFile, pipeline.DemoTruthModulesFile, pipeline.DemoTruthHubsFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("bundle lacks %s: %v", f, err)
		}
	}
	var prov struct {
		Input      struct{ Path string }
		Parameters struct{ Scan, Mask string }
	}
	readJSON(t, filepath.Join(dir, "provenance.json"), &prov)
	for _, p := range []string{prov.Input.Path, prov.Parameters.Scan, prov.Parameters.Mask} {
		if _, err := os.Stat(p); p == "" || err != nil {
			t.Errorf("provenance.json names %q, which does not exist (%v)", p, err)
		}
	}
	var met struct {
		Scan struct{ Path string }
		Demo struct {
			TruthModules string `json:"truth_modules"`
			TruthHubs    string `json:"truth_hubs"`
		} `json:"demo_truth_check"`
	}
	readJSON(t, filepath.Join(dir, "metrics.json"), &met)
	for _, p := range []string{met.Scan.Path, filepath.Join(dir, met.Demo.TruthModules), filepath.Join(dir, met.Demo.TruthHubs)} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("metrics.json names %q, which does not exist (%v)", p, err)
		}
	}
	// The summary ends with the truth check, in words.
	tail := out[strings.LastIndex(out, "results "):]
	nmi := summaryNumber(t, tail, `agreement NMI ([0-9.]+)`)
	top := summaryNumber(t, tail, `highest-degree voxels \(recall ([0-9.]+)\)`)
	rule := summaryNumber(t, tail, `planted hubs among them \(recall ([0-9.]+)\)`)
	if nmi < 0.9 || top < 0.8 || rule < 0.8 {
		t.Errorf("truth check: NMI %.3f (want ≥ 0.9), hub recall %.2f in the top degrees and %.2f under the rule (want ≥ 0.8)", nmi, top, rule)
	}
	if !strings.Contains(out, "mask        the embedded MNI152 brain mask") {
		t.Errorf("the summary does not say the demo used the embedded mask")
	}
}

func summaryNumber(t *testing.T, text, pattern string) float64 {
	t.Helper()
	m := regexp.MustCompile(pattern).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("summary lacks %q:\n%s", pattern, text)
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// sharedData is the folder of shipped test scans: $HUBSCOPE_DATA, else ../shared/data beside
// the repository (internal/shareddata); the test is skipped without it (failed under
// HUBSCOPE_STRICT=1).
func sharedData(t *testing.T, files ...string) string {
	t.Helper()
	dirs := []string{shareddata.Dir()}
	for _, d := range dirs {
		if d == "" {
			continue
		}
		ok := true
		for _, f := range files {
			if _, err := os.Stat(filepath.Join(d, f)); err != nil {
				ok = false
			}
		}
		if ok {
			return d
		}
	}
	if os.Getenv("HUBSCOPE_STRICT") != "" {
		t.Fatalf("shipped scans %v not found (set HUBSCOPE_DATA)", files)
	}
	t.Skipf("shipped scans %v not found (set HUBSCOPE_DATA)", files)
	return ""
}

// TestRunShippedScansWithoutMask runs README's first example, `run SCAN --out DIR` with no
// mask, on each shipped 4D scan: nilearn's compute_epi_mask finds 0, 0 and 18 voxels on them
// (cropped or already masked images). Each run must succeed and name the mask rule it used;
// the 2.5 mm Haxby run must give more nodes than 18 or warn in words that the network is small.
func TestRunShippedScansWithoutMask(t *testing.T) {
	files := []string{"nipy_functional.nii.gz", "haxby2001_slice_bold.nii.gz", "haxby2001_run001_bold_25mm.nii.gz"}
	data := sharedData(t, files...)
	for _, f := range files {
		t.Run(f, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			code, stdout, stderr := runHelper(t, "run", filepath.Join(data, f), "--out", out, "--metrics", "basic", "--backend", "cpu")
			if code != 0 {
				t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
			}
			t.Log("\n" + stdout)
			m := regexp.MustCompile(`(?m)^mask +automatic: (.+), (\d+) voxels$`).FindStringSubmatch(stdout)
			if m == nil {
				t.Fatalf("no summary line names the automatic mask's rule:\n%s", stdout)
			}
			if !strings.Contains(stderr, "mask: automatic: ") {
				t.Errorf("no note names the mask rule while loading:\n%s", stderr)
			}
			nodes := int(summaryNumber(t, stdout, `(?m)^nodes +(\d+) ×`))
			if strings.Contains(f, "25mm") && nodes <= 18 && !strings.Contains(stdout, "warning     only") {
				t.Errorf("%d nodes and no warning about the small network", nodes)
			}
		})
	}
}
