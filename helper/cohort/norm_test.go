package cohort

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hubscope/hubscope/helper/nifti"
	"github.com/hubscope/hubscope/helper/pipeline"
	"github.com/hubscope/hubscope/helper/synth"
	"github.com/hubscope/hubscope/ipc/schema"
	"github.com/hubscope/hubscope/ipc/settings"
)

// synth --subjects 20 --lesion: the patient's lost hubs recover the lesion (recall and
// precision ≥ 0.8); a run with other settings is refused with the differences named.
func TestNormRecoversLesion(t *testing.T) {
	n := 20
	if testing.Short() || raceEnabled {
		n = 12
	}
	bids, deriv, lesion := lesionCohort(t, n, 1, 14, 100)
	normDir := filepath.Join(t.TempDir(), "norm")
	info, err := BuildNorm(NormOptions{Deriv: deriv, Out: normDir, GroupColumn: "diagnosis", Group: "control"})
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Subjects) != n || info.Hubs == 0 {
		t.Fatalf("norm of %d runs, %d hubs", len(info.Subjects), info.Hubs)
	}
	cfg := pipeline.Defaults()
	cfg.Backend, cfg.Metrics = "cpu", settings.MetricsNone
	cfg.Mask = filepath.Join(bids, "truth", "modules.nii.gz")
	cfg.Scan = synth.CohortScan(bids, "patient01")
	cfg.Out = filepath.Join(t.TempDir(), "patient")
	cfg.Norm = normDir
	// The norm records its cohort's cleaning (none, see the cohort helper); a run with the
	// default (auto) is refused, naming the difference.
	if _, err := pipeline.Run(context.Background(), cfg, nil); err == nil || !strings.Contains(err.Error(), "denoise: none → auto") {
		t.Fatalf("a run cleaned otherwise than its norm: %v", err)
	}
	cfg.Denoise = pipeline.CleanNone
	res, err := pipeline.Run(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	h, lost, err := nifti.ReadImage(filepath.Join(res.Dir, "hubs_lost.nii.gz"))
	if err != nil {
		t.Fatal(err)
	}
	hit, found := 0, 0
	for f, v := range lost {
		if v == 0 {
			continue
		}
		found++
		if lesion[[3]int{f % h.Nx(), f / h.Nx() % h.Ny(), f / (h.Nx() * h.Ny())}] {
			hit++
		}
	}
	recall, precision := float64(hit)/float64(len(lesion)), float64(hit)/float64(max(found, 1))
	t.Logf("%d cohort hubs; %d lost, %d of the %d lesioned: recall %.2f, precision %.2f; %d clusters", info.Hubs, found, hit, len(lesion), recall, precision, len(res.Metrics.Norm.Clusters))
	if recall < 0.8 || precision < 0.8 {
		t.Errorf("lost hubs: recall %.2f, precision %.2f (want ≥ 0.8 each)", recall, precision)
	}
	// Every cohort hub is a node of the patient's run here (one mask): cohort_hubs.nii.gz holds
	// all of them, and every hub lost is one.
	_, ch, err := nifti.ReadImage(filepath.Join(res.Dir, "cohort_hubs.nii.gz"))
	if err != nil {
		t.Fatal(err)
	}
	cohortHubs, lostNotCohort := 0, 0
	for f, v := range ch {
		if v != 0 {
			cohortHubs++
		}
		if lost[f] != 0 && v == 0 {
			lostNotCohort++
		}
	}
	if cohortHubs != info.Hubs || lostNotCohort != 0 {
		t.Errorf("cohort_hubs.nii.gz: %d cohort hubs (the norm has %d); %d hubs lost are not among them", cohortHubs, info.Hubs, lostNotCohort)
	}
	for _, f := range []string{"z_degree.nii.gz", "z_strength.nii.gz", "hubs_gained.nii.gz", "norm_clusters.tsv", schema.NormFile} {
		if _, err := os.Stat(filepath.Join(res.Dir, f)); err != nil {
			t.Error(err)
		}
	}
	// Other settings are refused before any work, naming the differences.
	other := cfg
	other.Out, other.Density, other.HubSD, other.Backend, other.Metrics = filepath.Join(t.TempDir(), "other"), 0.02, 1.5, "auto", settings.MetricsBasic
	_, err = pipeline.Run(context.Background(), other, nil)
	if err == nil || !strings.Contains(err.Error(), "density: 0.01 → 0.02") || !strings.Contains(err.Error(), "hub_sd: 1 → 1.5") ||
		strings.Contains(err.Error(), "backend") || strings.Contains(err.Error(), "metrics") {
		t.Errorf("other settings: %v", err)
	}
	// Too few runs, and runs made with mixed settings, are refused.
	if _, err := BuildNorm(NormOptions{Deriv: deriv, Out: t.TempDir(), GroupColumn: "diagnosis", Group: "patient"}); err == nil || !strings.Contains(err.Error(), "at least 3") {
		t.Errorf("one-run norm: %v", err)
	}
}

// A cohort analysed with a sweep gives a norm per threshold: the patient's lost hubs at every
// threshold.
func TestNormPerThreshold(t *testing.T) {
	bids, deriv, lesion := lesionCohort(t, 8, 1, 14, 100, "density=0.01,0.02,0.04")
	normDir := filepath.Join(t.TempDir(), "norm")
	info, err := BuildNorm(NormOptions{Deriv: deriv, Out: normDir, GroupColumn: "diagnosis", Group: "control"})
	if err != nil {
		t.Fatal(err)
	}
	if len(info.ThresholdHubs) != 3 {
		t.Fatalf("threshold hubs %v", info.ThresholdHubs)
	}
	cfg := pipeline.Defaults()
	cfg.Backend, cfg.Metrics, cfg.Sweep = "cpu", settings.MetricsNone, "density=0.01,0.02,0.04"
	cfg.Mask = filepath.Join(bids, "truth", "modules.nii.gz")
	cfg.Scan, cfg.Out, cfg.Norm = synth.CohortScan(bids, "patient01"), filepath.Join(t.TempDir(), "patient"), normDir
	cfg.Denoise = pipeline.CleanNone // as the cohort's (compare_test.go)
	res, err := pipeline.Run(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	th := res.Metrics.Norm.Thresholds
	if len(th) != 3 {
		t.Fatalf("thresholds %+v", th)
	}
	for _, x := range th {
		t.Logf("%s: %d of %d cohort hubs lost (%d lesioned)", x.Map, x.Lost, x.CohortHubs, len(lesion))
		if x.Lost < len(lesion)*8/10 {
			t.Errorf("%s: %d hubs lost, lesion has %d", x.Map, x.Lost, len(lesion))
		}
	}
	if _, err := os.Stat(filepath.Join(res.Dir, "z_sweep_degree_0.02.nii.gz")); err != nil {
		t.Error(err)
	}
	// The same cohort without the sweep's third threshold is another setting.
	cfg.Sweep, cfg.Out = "density=0.01,0.02", filepath.Join(t.TempDir(), "p2")
	if _, err := pipeline.Run(context.Background(), cfg, nil); err == nil || !strings.Contains(err.Error(), "sweep: density=0.01:0.02:0.04 → density=0.01,0.02") && !strings.Contains(err.Error(), "sweep: density=0.01,0.02,0.04 → density=0.01,0.02") {
		t.Errorf("other sweep: %v", err)
	}
}
