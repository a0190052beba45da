package daemon

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hubscope/hubscope/helper/nifti"
	"github.com/hubscope/hubscope/helper/norm"
	"github.com/hubscope/hubscope/helper/pipeline"
	"github.com/hubscope/hubscope/ipc"
)

// TestSubmitWithNorm: a job submitted with a normative folder is compared with it. The folder
// is built from the phantom's own degree map (three "subjects" at degree − 1, degree, degree +
// 1: SD 1), except that the cohort's mean is 5 higher at the strongest hub, so the run's
// z_degree there is −5 and it is a hub lost. The summary offers the z-maps, hubs_lost and
// hubs_gained and the cohort's hubs (cohort_hubs: the folder's hubs.nii.gz at the run's
// nodes) as volumes (the hub maps as labels) and norm_clusters.tsv as a file. A folder
// without norm.json, a relative path and a web request naming one are refused at submission.
func TestSubmitWithNorm(t *testing.T) {
	scanPath, maskPath := phantom(t, 12)
	d := newDaemon(t, filepath.Join(t.TempDir(), "results"))
	set := settingsOf(`{"metrics": "none", "denoise": "none"}`)
	first, err := d.Submit(unix, ipc.JobRequest{Scan: scanPath, Mask: maskPath, Settings: set})
	if err != nil {
		t.Fatal(err)
	}
	if evs := follow(t, d, first.ID); evs[len(evs)-1].Job.State != ipc.JobDone {
		t.Fatalf("first job: %s", evs[len(evs)-1].Job.Error)
	}
	sum, err := d.Summary(unix, first.ID)
	if err != nil {
		t.Fatal(err)
	}
	h, deg, err := nifti.ReadImage(filepath.Join(sum.Bundle, "degree.nii.gz"))
	if err != nil {
		t.Fatal(err)
	}
	v, _, err := d.view(first.ID)
	if err != nil {
		t.Fatal(err)
	}
	hub := sum.Hubs[0].Voxel
	in := norm.Input{Dims: v.dims, Affine: h.Affine(), Values: map[string][][]float64{}, Subjects: []string{"a", "b", "c"}, HubSD: 1}
	for _, p := range v.ijk {
		vox := [3]int{int(p[0]), int(p[1]), int(p[2])}
		k := float64(deg[v.flat(p)])
		if vox == hub {
			k += 5
		}
		in.IJK = append(in.IJK, vox)
		in.Values["degree"] = append(in.Values["degree"], []float64{k - 1, k, k + 1})
	}
	cfg, err := d.config(*set)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Mask = maskPath
	in.Settings = pipeline.NodalSettings(cfg.BundleSettings())
	dir := filepath.Join(t.TempDir(), "norm")
	if _, err := norm.Build(dir, in); err != nil {
		t.Fatal(err)
	}

	for _, bad := range []string{"norm", t.TempDir(), scanPath} {
		if _, err := d.Submit(unix, ipc.JobRequest{Scan: scanPath, Mask: maskPath, Settings: set, Norm: bad}); !ipc.IsCode(err, ipc.CodeBadRequest) {
			t.Fatalf("normative folder %q accepted: %v", bad, err)
		}
	}
	web := ipc.ContextWithTransport(context.Background(), ipc.TransportWeb)
	if _, err := d.Submit(web, ipc.JobRequest{ScanUpload: "x", Norm: dir}); !ipc.IsCode(err, ipc.CodeForbidden) {
		t.Fatalf("a web request naming a normative folder: %v", err)
	}

	job, err := d.Submit(unix, ipc.JobRequest{Scan: scanPath, Mask: maskPath, Settings: set, Norm: dir})
	if err != nil {
		t.Fatal(err)
	}
	if evs := follow(t, d, job.ID); evs[len(evs)-1].Job.State != ipc.JobDone {
		t.Fatalf("job with the norm: %s", evs[len(evs)-1].Job.Error)
	}
	sum, err = d.Summary(unix, job.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"z_degree", "hubs_lost", "hubs_gained", "cohort_hubs"} {
		if !slices.Contains(sum.Volumes, name) {
			t.Fatalf("volumes %v lack %s", sum.Volumes, name)
		}
	}
	if !slices.ContainsFunc(sum.Files, func(f ipc.FileInfo) bool { return f.Name == "norm_clusters.tsv" }) {
		t.Fatal("norm_clusters.tsv is not among the files")
	}
	z, err := d.Volume(unix, job.ID, "z_degree")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(z.Header.Description, "z against the normative cohort: degree") {
		t.Fatalf("z_degree described as %q", z.Header.Description)
	}
	if got := z.At(hub[0], hub[1], hub[2]); got > -4.99 || got < -5.01 {
		t.Fatalf("z_degree at the hub %v: %g, want −5", hub, got)
	}
	lost, err := d.Volume(unix, job.ID, "hubs_lost")
	if err != nil {
		t.Fatal(err)
	}
	if !lost.Header.Categorical || lost.At(hub[0], hub[1], hub[2]) != 1 || !strings.Contains(lost.Header.Description, "lost") {
		t.Fatalf("hubs_lost: categorical %v, %g at the hub, %q", lost.Header.Categorical, lost.At(hub[0], hub[1], hub[2]), lost.Header.Description)
	}
	// The cohort's hubs (the normative folder's hubs.nii.gz) at the run's nodes, as labels.
	cohortHubs, err := d.Volume(unix, job.ID, "cohort_hubs")
	if err != nil {
		t.Fatal(err)
	}
	_, ref, err := nifti.ReadImage(filepath.Join(dir, "hubs.nii.gz"))
	if err != nil {
		t.Fatal(err)
	}
	count := 0
	for _, p := range v.ijk {
		f := v.flat(p)
		if cohortHubs.Data[f] != ref[f] {
			t.Fatalf("cohort_hubs at %v: %g, the normative folder's hubs.nii.gz %g", p, cohortHubs.Data[f], ref[f])
		}
		count += int(ref[f])
	}
	if !cohortHubs.Header.Categorical || count == 0 || cohortHubs.At(hub[0], hub[1], hub[2]) != 1 || !strings.Contains(cohortHubs.Header.Description, "normative cohort") {
		t.Fatalf("cohort_hubs: categorical %v, %d cohort hubs, %g at the hub lost, %q", cohortHubs.Header.Categorical, count, cohortHubs.At(hub[0], hub[1], hub[2]), cohortHubs.Header.Description)
	}
	b, err := os.ReadFile(filepath.Join(sum.Bundle, "norm_clusters.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	peak := strconv.Itoa(hub[0]) + "\t" + strconv.Itoa(hub[1]) + "\t" + strconv.Itoa(hub[2])
	if !strings.Contains(string(b), "below") || !strings.Contains(string(b), peak) {
		t.Fatalf("norm_clusters.tsv lacks the hub's cluster at %v:\n%s", hub, b)
	}
}
