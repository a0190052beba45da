package daemon

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"encoding/json"
	"github.com/hubscope/hubscope/helper/bundle"
	"github.com/hubscope/hubscope/helper/nifti"
	"github.com/hubscope/hubscope/helper/synth"
	"github.com/hubscope/hubscope/ipc"
	"github.com/hubscope/hubscope/ipc/settings"
)

// unix is a request context as the Unix-socket transport sets it (paths allowed).
var unix = ipc.ContextWithTransport(context.Background(), ipc.TransportUnix)

// phantoms are written once per test binary: the demo phantom (embedded MNI152 mask, 7
// modules, 40 hubs) resampled to a voxel size, with its truth module map as the mask.
var phantoms = struct {
	sync.Mutex
	dir   string
	paths map[float64][2]string
}{paths: map[float64][2]string{}}

func TestMain(m *testing.M) {
	if childMain() || loadClientMain() {
		return
	}
	dir, err := os.MkdirTemp("", "hubscope-daemon-test-")
	if err != nil {
		panic(err)
	}
	phantoms.dir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func phantom(t testing.TB, voxelMM float64) (scanPath, maskPath string) {
	t.Helper()
	phantoms.Lock()
	defer phantoms.Unlock()
	if p, ok := phantoms.paths[voxelMM]; ok {
		return p[0], p[1]
	}
	p, err := writePhantom(phantoms.dir, voxelMM)
	if err != nil {
		t.Fatal(err)
	}
	phantoms.paths[voxelMM] = p
	return p[0], p[1]
}

func writePhantom(dir string, voxelMM float64) ([2]string, error) {
	m, a, err := synth.DemoMask()
	if err != nil {
		return [2]string{}, err
	}
	m, a = synth.ResampleMask(m, a, voxelMM)
	scanPath := filepath.Join(dir, fmt.Sprintf("phantom_%gmm.nii.gz", voxelMM))
	if _, err := synth.Write(context.Background(), m, a, synth.DefaultParams(), scanPath, nil); err != nil {
		return [2]string{}, err
	}
	maskPath, _ := synth.TruthPaths(scanPath)
	return [2]string{scanPath, maskPath}, nil
}

func newDaemon(t testing.TB, dir string) *Daemon {
	t.Helper()
	d, err := New(Options{ResultsDir: dir, Backend: "cpu"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close(context.Background()) })
	return d
}

// follow reads a job's events to the end and returns them.
func follow(t testing.TB, d *Daemon, id string) []ipc.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ch, err := d.Events(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	var evs []ipc.Event
	for ev := range ch {
		evs = append(evs, ev)
	}
	if len(evs) == 0 || !evs[len(evs)-1].Job.State.Terminal() {
		t.Fatalf("job %s: event stream ended without a terminal event (%d events)", id, len(evs))
	}
	return evs
}

var basic = settingsOf(`{"metrics": "basic"}`)

// TestEndToEnd submits the phantom, follows its events to completion, checks the summary
// (hubs with regions, modules, roles), the degree volume against the bundle's degree.nii.gz,
// the seed map against a direct Pearson computation and the series against series.npy; then
// cancels a second, longer job mid-run, restarts the daemon on the same results directory and
// finds both jobs.
func TestEndToEnd(t *testing.T) {
	scanPath, maskPath := phantom(t, 12)
	results := filepath.Join(t.TempDir(), "results")
	d := newDaemon(t, results)
	job, err := d.Submit(unix, ipc.JobRequest{Scan: scanPath, Mask: maskPath, Settings: basic})
	if err != nil {
		t.Fatal(err)
	}
	if job.State != ipc.JobQueued && job.State != ipc.JobRunning {
		t.Fatalf("submitted job is %s", job.State)
	}
	if job.Name != filepath.Base(scanPath) {
		t.Fatalf("job name %q, want the scan's base name", job.Name)
	}
	evs := follow(t, d, job.ID)
	last := evs[len(evs)-1]
	if last.Job.State != ipc.JobDone {
		t.Fatalf("job ended %s: %s", last.Job.State, last.Job.Error)
	}
	checkEvents(t, evs)

	sum, err := d.Summary(unix, job.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Hubs) == 0 || sum.Atlas == nil || len(sum.Atlas.Labels) != 116 {
		t.Fatalf("summary: %d hubs, atlas %v", len(sum.Hubs), sum.Atlas != nil)
	}
	named := 0
	for _, h := range sum.Hubs {
		if h.Module < 1 || h.Participation == nil || h.Degree < 1 {
			t.Fatalf("hub %+v lacks its module, participation or degree", h)
		}
		p := *h.Participation
		want := map[bool]string{true: "provincial", false: map[bool]string{true: "connector", false: "kinless"}[p <= 0.75]}[p <= 0.30]
		if h.Role != want {
			t.Fatalf("hub %d: P = %g, role %q, want %q", h.Node, p, h.Role, want)
		}
		if h.Region != "" {
			named++
		}
	}
	if named < len(sum.Hubs)/2 {
		t.Fatalf("only %d of %d hubs have an AAL region", named, len(sum.Hubs))
	}
	for _, v := range []string{"degree", "strength", "hubs", "hub_z", "modules", "participation", "clustering", "mean", "mask", "atlas", VolumeTemplate} {
		if !slices.Contains(sum.Volumes, v) {
			t.Fatalf("volumes %v lack %s", sum.Volumes, v)
		}
	}
	if !slices.ContainsFunc(sum.Files, func(f ipc.FileInfo) bool { return f.Name == bundle.SeriesFile }) {
		t.Fatalf("files %v lack %s", sum.Files, bundle.SeriesFile)
	}

	// Degree volume = degree.nii.gz inside the mask, NaN outside.
	deg, err := d.Volume(unix, job.ID, "degree")
	if err != nil {
		t.Fatal(err)
	}
	_, want, err := nifti.ReadImage(filepath.Join(sum.Bundle, "degree.nii.gz"))
	if err != nil {
		t.Fatal(err)
	}
	mask, err := d.Volume(unix, job.ID, "mask")
	if err != nil {
		t.Fatal(err)
	}
	inside := 0
	for f, x := range deg.Data {
		if mask.Data[f] == 1 {
			inside++
			if x != want[f] {
				t.Fatalf("degree voxel %d: %g, bundle %g", f, x, want[f])
			}
		} else if !math.IsNaN(float64(x)) {
			t.Fatalf("degree voxel %d outside the mask holds %g, want NaN", f, x)
		}
	}
	if inside == 0 || deg.Header.Max < 1 {
		t.Fatalf("degree volume: %d voxels inside, max %g", inside, deg.Header.Max)
	}

	// Seed map at the strongest hub = Pearson r computed directly from series.npy.
	seed := sum.Hubs[0].Voxel
	sm, err := d.SeedMap(unix, job.ID, seed)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("seed map: %.2f ms for %d nodes", sm.Header.Millis, inside)
	if r := sm.At(seed[0], seed[1], seed[2]); math.Abs(float64(r)-1) > 1e-5 {
		t.Fatalf("r at the seed = %g, want 1", r)
	}
	sr, err := bundle.OpenSeries(filepath.Join(sum.Bundle, bundle.SeriesFile))
	if err != nil {
		t.Fatal(err)
	}
	x, err := sr.ReadAll()
	sr.Close()
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := readTSV(filepath.Join(sum.Bundle, "nodes.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	L := sr.L
	pearson := func(a, b []float32) float64 {
		var ma, mb float64
		for k := range a {
			ma += float64(a[k])
			mb += float64(b[k])
		}
		ma, mb = ma/float64(L), mb/float64(L)
		var sab, saa, sbb float64
		for k := range a {
			da, db := float64(a[k])-ma, float64(b[k])-mb
			sab, saa, sbb = sab+da*db, saa+da*da, sbb+db*db
		}
		return sab / math.Sqrt(saa*sbb)
	}
	s0 := sum.Hubs[0].Node
	for v := 0; v < sr.N; v++ {
		var ijk [3]int
		fmt.Sscan(nodes.get(v, "i")+" "+nodes.get(v, "j")+" "+nodes.get(v, "k"), &ijk[0], &ijk[1], &ijk[2])
		want := pearson(x[s0*L:(s0+1)*L], x[v*L:(v+1)*L])
		if got := sm.At(ijk[0], ijk[1], ijk[2]); math.Abs(float64(got)-want) > 1e-5 {
			t.Fatalf("seed map at node %d: %g, direct %g", v, got, want)
		}
	}
	ser, err := d.Series(unix, job.ID, seed)
	if err != nil {
		t.Fatal(err)
	}
	if ser.Node != s0 || ser.TR != 2 || !slices.Equal(ser.Values, x[s0*L:(s0+1)*L]) {
		t.Fatalf("series of voxel %v: node %d TR %g, want node %d, TR 2 and series.npy's row", seed, ser.Node, ser.TR, s0)
	}

	// A longer job (6 mm, full metrics against 15 random networks), cancelled mid-run.
	big, bigMask := phantom(t, 6)
	job2, err := d.Submit(unix, ipc.JobRequest{Scan: big, Mask: bigMask, Name: "second"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ch, err := d.Events(ctx, job2.ID)
	if err != nil {
		t.Fatal(err)
	}
	for ev := range ch {
		if ev.Job.State == ipc.JobRunning && ev.Job.Stage != "" {
			break
		}
		if ev.Job.State.Terminal() {
			t.Fatalf("second job ended %s before it could be cancelled", ev.Job.State)
		}
	}
	t0 := time.Now()
	if _, err := d.Cancel(unix, job2.ID); err != nil {
		t.Fatal(err)
	}
	var end ipc.Event
	for ev := range ch {
		end = ev
	}
	cancel()
	t.Logf("cancel → terminal event: %v", time.Since(t0))
	if end.Job.State != ipc.JobCancelled {
		t.Fatalf("cancelled job ended %s", end.Job.State)
	}
	if entries, _ := os.ReadDir(filepath.Join(results, job2.ID)); len(entries) != 1 || entries[0].Name() != "job.json" {
		t.Fatalf("cancelled job left %v", entries)
	}

	// Restart on the same results directory.
	if err := d.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	d2 := newDaemon(t, results)
	jobs, err := d2.Jobs(unix)
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 2 || jobs[0].ID != job2.ID || jobs[0].State != ipc.JobCancelled || jobs[1].ID != job.ID || jobs[1].State != ipc.JobDone {
		t.Fatalf("after restart: %+v", jobs)
	}
	if _, err := d2.Summary(unix, job.ID); err != nil {
		t.Fatalf("summary after restart: %v", err)
	}
}

// checkEvents checks sequence numbers and the event period while running. The period is read
// from the events' own publication times, with a bound four times the protocol's 250 ms so
// that a loaded machine does not fail the test; the figure is logged.
func checkEvents(t *testing.T, evs []ipc.Event) {
	t.Helper()
	var worst time.Duration
	running := 0
	for i := 1; i < len(evs); i++ {
		if evs[i].Seq < evs[i-1].Seq {
			t.Fatalf("event %d: seq %d after %d", i, evs[i].Seq, evs[i-1].Seq)
		}
		if evs[i-1].Job.State == ipc.JobRunning {
			running++
			worst = max(worst, evs[i].Time.Sub(evs[i-1].Time))
		}
	}
	t.Logf("%d events, %d while running, longest gap while running %v", len(evs), running, worst)
	if running == 0 {
		t.Fatal("no event while the job ran")
	}
	if worst > time.Second {
		t.Fatalf("longest gap between events while running: %v (protocol: 250 ms)", worst)
	}
}

// TestSubmitRefusals checks that bad requests are refused with the right code and a message
// naming the setting or file, and leave no job directory behind.
func TestSubmitRefusals(t *testing.T) {
	scanPath, maskPath := phantom(t, 12)
	results := filepath.Join(t.TempDir(), "results")
	d := newDaemon(t, results)
	three := filepath.Join(t.TempDir(), "anatomy.nii.gz")
	h, data, err := nifti.ReadImage(maskPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := nifti.WriteImage(three, h, data); err != nil {
		t.Fatal(err)
	}
	web := ipc.ContextWithTransport(context.Background(), ipc.TransportWeb)
	for _, c := range []struct {
		name string
		ctx  context.Context
		req  ipc.JobRequest
		// settings, as a client's JSON; "" = the defaults. Some are refused while the
		// request is decoded, as the server decodes it.
		settings string
		code     string
		want     string
	}{
		{"measure", unix, ipc.JobRequest{Scan: scanPath}, `{"measure": "cosine"}`, ipc.CodeBadRequest, "measure"},
		{"density", unix, ipc.JobRequest{Scan: scanPath}, `{"density": 2}`, ipc.CodeBadRequest, "density"},
		{"two thresholds", unix, ipc.JobRequest{Scan: scanPath}, `{"density": 0.1, "r": 0.5}`, ipc.CodeBadRequest, "threshold_mode"},
		{"r with density mode", unix, ipc.JobRequest{Scan: scanPath}, `{"threshold_mode": "density", "r": 0.5}`, ipc.CodeBadRequest, "r:"},
		{"metrics", unix, ipc.JobRequest{Scan: scanPath}, `{"metrics": "most"}`, ipc.CodeBadRequest, "metrics"},
		{"random", unix, ipc.JobRequest{Scan: scanPath}, `{"random": -1}`, ipc.CodeBadRequest, "random"},
		{"backend", unix, ipc.JobRequest{Scan: scanPath}, `{"backend": "tpu"}`, ipc.CodeBadRequest, "backend"},
		{"no scan", unix, ipc.JobRequest{}, "", ipc.CodeBadRequest, "scan"},
		{"relative path", unix, ipc.JobRequest{Scan: "phantom.nii.gz"}, "", ipc.CodeBadRequest, "absolute"},
		{"missing file", unix, ipc.JobRequest{Scan: "/nonexistent/x.nii.gz"}, "", ipc.CodeBadRequest, "x.nii.gz"},
		{"3D scan", unix, ipc.JobRequest{Scan: three}, "", ipc.CodeBadRequest, "anatomy.nii.gz"},
		{"path over web", web, ipc.JobRequest{Scan: scanPath}, "", ipc.CodeForbidden, "upload"},
		{"mask path over web", web, ipc.JobRequest{ScanUpload: strings.Repeat("a", 32), Mask: maskPath}, "", ipc.CodeForbidden, "upload"},
		{"no transport", context.Background(), ipc.JobRequest{Scan: scanPath}, "", ipc.CodeForbidden, "upload"},
		{"unknown upload", web, ipc.JobRequest{ScanUpload: strings.Repeat("b", 32)}, "", ipc.CodeBadRequest, "upload"},
		{"upload ID with a path", web, ipc.JobRequest{ScanUpload: "../../etc/passwd"}, "", ipc.CodeBadRequest, "upload"},
	} {
		t.Run(c.name, func(t *testing.T) {
			req := c.req
			if c.settings != "" {
				req.Settings = new(settings.Settings)
				if err := json.Unmarshal([]byte(c.settings), req.Settings); err != nil {
					if err := ipc.BadSettings(err); !strings.Contains(err.Error(), c.want) {
						t.Fatalf("decoding %s: %v, want an error naming %q", c.settings, err, c.want)
					}
					return
				}
			}
			_, err := d.Submit(c.ctx, req)
			if !ipc.IsCode(err, c.code) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want %s naming %q", err, c.code, c.want)
			}
		})
	}
	entries, _ := os.ReadDir(results)
	for _, e := range entries {
		if e.Name() != "uploads" {
			t.Fatalf("refused submissions left %s", e.Name())
		}
	}
}

// TestDynamicConnectivity runs a job with sliding windows: the summary carries dfc/summary.json
// and every window's degree map is a volume equal to that frame of dfc/degree.nii.gz inside
// the mask; a window too short is refused naming dfc_window.
func TestDynamicConnectivity(t *testing.T) {
	scanPath, maskPath := phantom(t, 12)
	d := newDaemon(t, filepath.Join(t.TempDir(), "results"))
	if _, err := d.Submit(unix, ipc.JobRequest{Scan: scanPath, Settings: settingsOf(`{"dfc_window": 1}`)}); !ipc.IsCode(err, ipc.CodeBadRequest) || !strings.Contains(err.Error(), "dfc_window") {
		t.Fatalf("window of 1 volume: %v", err)
	}
	job, err := d.Submit(unix, ipc.JobRequest{Scan: scanPath, Mask: maskPath,
		Settings: settingsOf(`{"metrics": "none", "dfc_window": 60, "dfc_step": 50}`)})
	if err != nil {
		t.Fatal(err)
	}
	if evs := follow(t, d, job.ID); evs[len(evs)-1].Job.State != ipc.JobDone {
		t.Fatalf("job ended %s: %s", evs[len(evs)-1].Job.State, evs[len(evs)-1].Job.Error)
	}
	sum, err := d.Summary(unix, job.ID)
	if err != nil {
		t.Fatal(err)
	}
	if sum.DFC == nil || sum.DFC.Window != 60 || sum.DFC.Step != 50 || len(sum.DFC.Windows) != 3 {
		t.Fatalf("DFC summary %+v", sum.DFC)
	}
	for w := range sum.DFC.Windows {
		name := fmt.Sprintf("dfc_degree@%d", w)
		if !slices.Contains(sum.Volumes, name) {
			t.Fatalf("volumes %v lack %s", sum.Volumes, name)
		}
		vol, err := d.Volume(unix, job.ID, name)
		if err != nil {
			t.Fatal(err)
		}
		want, err := readFrame(filepath.Join(sum.Bundle, "dfc", "degree.nii.gz"), w, len(vol.Data))
		if err != nil {
			t.Fatal(err)
		}
		for f, x := range vol.Data {
			if !math.IsNaN(float64(x)) && x != want[f] {
				t.Fatalf("%s voxel %d: %g, file %g", name, f, x, want[f])
			}
		}
	}
	if _, err := d.Volume(unix, job.ID, "dfc_degree@3"); !ipc.IsCode(err, ipc.CodeNotFound) {
		t.Fatalf("window past the last: %v", err)
	}
}

// TestNotMNI moves the phantom 80 mm to the side (its header still says "aligned"): the grid no
// longer covers the atlas, so no atlas volume and no regions are given.
func TestNotMNI(t *testing.T) {
	m, a, err := synth.DemoMask()
	if err != nil {
		t.Fatal(err)
	}
	m, a = synth.ResampleMask(m, a, 12)
	a[0][3] += 80
	scanPath := filepath.Join(t.TempDir(), "shifted.nii.gz")
	if _, err := synth.Write(context.Background(), m, a, synth.DefaultParams(), scanPath, nil); err != nil {
		t.Fatal(err)
	}
	maskPath, _ := synth.TruthPaths(scanPath)
	d := newDaemon(t, filepath.Join(t.TempDir(), "results"))
	job, err := d.Submit(unix, ipc.JobRequest{Scan: scanPath, Mask: maskPath, Settings: settingsOf(`{"metrics": "none"}`)})
	if err != nil {
		t.Fatal(err)
	}
	follow(t, d, job.ID)
	sum, err := d.Summary(unix, job.ID)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Atlas != nil || slices.Contains(sum.Volumes, "atlas") {
		t.Fatal("atlas offered for a scan outside MNI space")
	}
	for _, h := range sum.Hubs {
		if h.Region != "" {
			t.Fatalf("hub %d named %q outside MNI space", h.Node, h.Region)
		}
	}
	if _, err := d.Volume(unix, job.ID, "atlas"); !ipc.IsCode(err, ipc.CodeNotFound) {
		t.Fatalf("atlas volume: %v", err)
	}
	if _, err := d.Volume(unix, job.ID, VolumeTemplate); slices.Contains(sum.Volumes, VolumeTemplate) || !ipc.IsCode(err, ipc.CodeNotFound) {
		t.Fatalf("template offered for a scan outside MNI space: %v", err)
	}
}

// settingsOf decodes settings as a client sends them (the keys left out take the defaults).
func settingsOf(js string) *settings.Settings {
	s := new(settings.Settings)
	if err := json.Unmarshal([]byte(js), s); err != nil {
		panic(err)
	}
	return s
}

// TestSummaryInputChecks: a scan whose header has no time unit is analysed, and the summary
// carries provenance.json's input checks — the TR with its source and the header warning —
// for the app to show.
func TestSummaryInputChecks(t *testing.T) {
	scanPath, maskPath := phantom(t, 12)
	h, data, err := nifti.ReadImage(scanPath)
	if err != nil {
		t.Fatal(err)
	}
	h.XYZTUnits = nifti.UnitsMM // the time unit unset
	odd := filepath.Join(t.TempDir(), "no_time_unit.nii.gz")
	if err := nifti.WriteImage(odd, h, data); err != nil {
		t.Fatal(err)
	}
	d := newDaemon(t, filepath.Join(t.TempDir(), "results"))
	job, err := d.Submit(unix, ipc.JobRequest{Scan: odd, Mask: maskPath, Settings: settingsOf(`{"metrics": "none"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if evs := follow(t, d, job.ID); evs[len(evs)-1].Job.State != ipc.JobDone {
		t.Fatalf("job ended %s: %s", evs[len(evs)-1].Job.State, evs[len(evs)-1].Job.Error)
	}
	sum, err := d.Summary(unix, job.ID)
	if err != nil {
		t.Fatal(err)
	}
	c := sum.InputChecks
	if c == nil || !strings.Contains(c.TR, "time unit unset: assumed seconds") || len(c.Warnings) == 0 {
		t.Fatalf("input checks %+v: want the TR's source and the time-unit warning", c)
	}
	if w := c.Warnings[0]; w.Field != "xyzt_units" || !strings.Contains(w.String(), "xyzt_units: time unit unset (") {
		t.Errorf("warning %+v (%s)", w, w)
	}
}
