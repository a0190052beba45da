package cohort

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
	"github.com/hubscope/hubscope/helper/pipeline"
	"github.com/hubscope/hubscope/ipc/schema"
	"github.com/hubscope/hubscope/ipc/settings"
)

// derivName is the BIDS entity rule for a cohort's copies, written out apart from package
// derivatives: sub, optional ses, task, optional run, then desc, the suffix and the extension.
var derivName = regexp.MustCompile(`^sub-[a-zA-Z0-9]+(_ses-[a-zA-Z0-9]+)?_task-[a-zA-Z0-9]+(_run-[a-zA-Z0-9]+)?_desc-[a-zA-Z0-9]+_hubscope\.[a-z][a-z.]*$`)

// TestCohortBIDSNames: every file a cohort writes beside the run's bundle (maps, modules with
// their table, the network in every export format, the hub table and its BrainNet files)
// follows the BIDS entity rules, is listed by its stem's sidecar, and equals the bundle file.
func TestCohortBIDSNames(t *testing.T) {
	bids := phantomCohort(t, 1)
	cfg := pipeline.Defaults()
	cfg.Backend, cfg.Metrics, cfg.Denoise = "cpu", settings.MetricsBasic, pipeline.CleanNone
	opt := Options{BIDS: bids, Out: filepath.Join(t.TempDir(), "deriv"), Config: cfg, Jobs: 1}
	st, err := Run(context.Background(), opt, nil)
	if err != nil || Failed(st) != nil {
		t.Fatalf("%v %v", err, Failed(st))
	}
	funcDir := filepath.Join(opt.Out, "sub-01", "func")
	bundle := BundleDir(opt.Out, st[0].Run)
	ents, err := os.ReadDir(funcDir)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, e := range ents {
		name := e.Name()
		if e.IsDir() {
			if name != filepath.Base(bundle) {
				t.Errorf("unexpected folder %s", name)
			}
			continue
		}
		seen[name] = true
		if !derivName.MatchString(name) {
			t.Errorf("%s breaks the BIDS entity rules", name)
		}
		if err := derivatives.CheckName(name); err != nil {
			t.Error(err)
		}
		if strings.HasSuffix(name, ".json") {
			continue
		}
		dot := strings.IndexByte(name, '.')
		var side schema.CohortCopySidecar
		b, err := os.ReadFile(filepath.Join(funcDir, name[:dot]+".json"))
		if err != nil {
			t.Errorf("%s has no sidecar: %v", name, err)
			continue
		}
		if err := json.Unmarshal(b, &side); err != nil {
			t.Fatal(err)
		}
		src, ok := side.Files[name[dot:]]
		if side.Description == "" || !ok || len(side.Sources) != 1 || !strings.HasPrefix(side.Sources[0], "bids::") || len(side.Settings) == 0 {
			t.Errorf("%s: sidecar %+v does not list it", name, side)
			continue
		}
		x, _ := os.ReadFile(filepath.Join(funcDir, name))
		y, _ := os.ReadFile(filepath.Join(bundle, src))
		if len(x) == 0 || !bytes.Equal(x, y) {
			t.Errorf("%s differs from the bundle's %s", name, src)
		}
	}
	for _, want := range []string{"desc-degree_hubscope.nii.gz", "desc-modules_hubscope.nii.gz", "desc-modules_hubscope.tsv",
		"desc-network_hubscope.npz", "desc-network_hubscope.graphml", "desc-network_hubscope.gexf",
		"desc-hubtable_hubscope.tsv", "desc-hubtable_hubscope.node", "desc-hubtable_hubscope.edge", "desc-hublinks_hubscope.tsv"} {
		if !seen["sub-01_task-rest_"+want] {
			t.Errorf("sub-01_task-rest_%s not written", want)
		}
	}
}
