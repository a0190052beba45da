package report

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/hubscope/hubscope/app/report/pdftest"
	"github.com/hubscope/hubscope/ipc/settings"
)

func TestInvocationCommand(t *testing.T) {
	prov := []byte(`{"parameters": {"scan": "/data/sub 01's scan.nii.gz", "out": "res", "mask": "m.nii", "overwrite": false,
		"measure": "spearman", "threshold_mode": "r", "r": 0.4, "random": 15, "global_signal": true, "denoise": "auto"}}`)
	in, err := ParseInvocation(prov)
	if err != nil {
		t.Fatal(err)
	}
	got := in.Command()
	want := `hubscope-helper run '/data/sub 01'\''s scan.nii.gz' --out res --mask m.nii --measure spearman --r 0.4 --global-signal`
	if got != want {
		t.Errorf("command\n got %s\nwant %s", got, want)
	}
	// Every flag printed is one the settings table defines, and reading them back gives the
	// same settings.
	if in.Settings.Measure != settings.Spearman || in.Settings.Mode != settings.ModeR || !in.Settings.GlobalSignal {
		t.Errorf("settings read back: %+v", in.Settings)
	}
	if _, err := ParseInvocation([]byte(`{"parameters": {"out": "x"}}`)); !errors.Is(err, ErrNotARun) {
		t.Errorf("provenance without a scan: %v, want ErrNotARun", err)
	}
}

func TestReportNormAndQC(t *testing.T) {
	n, err := ParseNorm([]byte(`{"z_cut": 2, "nodes_compared": 8000, "hubs_lost": 12, "hubs_gained": 3, "cohort_hubs": 700,
		"clusters": [{"sign": -1, "voxels": 40, "peak_z": -4.25, "peak_mm": [-30, 20, 10], "region": "Frontal_Mid_L"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	qc, err := Assess([]byte(`{"strategy": "simple", "tr_seconds": 2, "volumes_in": 100, "volumes_kept": 90, "censored_volumes": [1,2],
		"variance_removed": 0.5, "framewise_displacement": [null, 0.9, 0.8]}`), 0)
	if err != nil {
		t.Fatal(err)
	}
	r := Report{Summary: sampleSummary(), Norm: n, QC: qc, Command: "hubscope-helper run s.nii.gz --out o"}
	var h bytes.Buffer
	if err := Write(&h, r); err != nil {
		t.Fatal(err)
	}
	var p bytes.Buffer
	if err := WritePDF(&p, r); err != nil {
		t.Fatal(err)
	}
	text, _ := pdftest.Read(t, p.Bytes())
	for _, want := range []string{"Hubs lost: 12 of the cohort's 700 hubs", "below the cohort", "-4.25", "Frontal_Mid_L",
		"mean framewise displacement 0.850 mm", "Mean head motion 0.85 mm per volume is above 0.55 mm", "hubscope-helper run s.nii.gz --out o"} {
		if !strings.Contains(text, want) {
			t.Errorf("the PDF lacks %q", want)
		}
		if !strings.Contains(h.String(), strings.ReplaceAll(want, "'", "&#39;")) {
			t.Errorf("the HTML page lacks %q", want)
		}
	}
	// A patient far from a small cohort has hundreds of clusters: the ten largest are listed
	// and the PDF keeps to its three pages.
	many := `{"z_cut": 2, "nodes_compared": 8000, "hubs_lost": 1, "hubs_gained": 400, "cohort_hubs": 700, "clusters": [`
	for i := range 300 {
		if i > 0 {
			many += ","
		}
		many += fmt.Sprintf(`{"sign": 1, "voxels": %d, "peak_z": 3, "peak_mm": [0, 0, 0]}`, i+1)
	}
	if r.Norm, err = ParseNorm([]byte(many + "]}")); err != nil {
		t.Fatal(err)
	}
	p.Reset()
	if err := WritePDF(&p, r); err != nil {
		t.Fatalf("300 clusters: %v", err)
	}
	if text, _ := pdftest.Read(t, p.Bytes()); !strings.Contains(text, "The 10 largest clusters are listed; norm_clusters.tsv holds all 300.") {
		t.Error("the PDF does not say that it lists the 10 largest clusters")
	}
	if _, err := ParseNorm([]byte(`{"z_cut": 0}`)); err == nil {
		t.Error("a norm.json without a cut was accepted")
	}
}
