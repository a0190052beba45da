package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hubscope/hubscope/helper/bundle"
	"github.com/hubscope/hubscope/helper/nifti"
	"github.com/hubscope/hubscope/helper/synth"
	"github.com/hubscope/hubscope/ipc"
	"github.com/hubscope/hubscope/ipc/settings"
)

// helperEnv makes the test binary run as hubscope-helper itself (see TestMain), so that tests
// can start a real helper process and kill it.
const helperEnv = "HUBSCOPE_TEST_RUN_HELPER"

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

// phantomScan writes the demo phantom at voxelMM with its truth module map as mask.
func phantomScan(t *testing.T, voxelMM float64) (string, string) {
	t.Helper()
	m, a, err := synth.DemoMask()
	if err != nil {
		t.Fatal(err)
	}
	m, a = synth.ResampleMask(m, a, voxelMM)
	p := filepath.Join(t.TempDir(), fmt.Sprintf("phantom_%gmm.nii.gz", voxelMM))
	if _, err := synth.Write(context.Background(), m, a, synth.DefaultParams(), p, nil); err != nil {
		t.Fatal(err)
	}
	mask, _ := synth.TruthPaths(p)
	return p, mask
}

// syncBuffer is a goroutine-safe output buffer.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// serving runs cmdServe in this process until stop is called; stop returns its error.
type serving struct {
	out, log *syncBuffer
	stop     func() error
}

func startServe(t *testing.T, args ...string) *serving {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s := &serving{out: &syncBuffer{}, log: &syncBuffer{}}
	done := make(chan error, 1)
	go func() { done <- cmdServe(ctx, args, s.out, s.log) }()
	var once sync.Once
	var err error
	s.stop = func() error {
		once.Do(func() { cancel(); err = <-done })
		return err
	}
	t.Cleanup(func() { s.stop() })
	// Wait for the helper to print where it listens (or to fail).
	for !strings.Contains(s.out.String(), "backend:") {
		select {
		case err := <-done:
			t.Fatalf("serve ended at start: %v\n%s", err, s.log.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	return s
}

func follow(t *testing.T, c *ipc.Client, id string) []ipc.Event {
	t.Helper()
	var evs []ipc.Event
	if err := c.Follow(context.Background(), id, func(ev ipc.Event) { evs = append(evs, ev) }); err != nil {
		t.Fatal(err)
	}
	return evs
}

// TestServeEndToEnd drives `serve` over its real Unix socket with ipc's client: the phantom's
// job followed to completion, its summary (hubs with AAL regions and modules), the degree
// volume against the bundle's degree.nii.gz, a seed map, a second job cancelled mid-run; then
// SIGINT's path (the context), a restart on the same results directory listing both jobs,
// the web transport's token URL refusing paths, and the idle exit.
func TestServeEndToEnd(t *testing.T) {
	scanPath, maskPath := phantomScan(t, 12)
	big, bigMask := phantomScan(t, 6)
	dir := t.TempDir()
	sock := filepath.Join(dir, "run", "helper.sock")
	results := filepath.Join(dir, "results")
	srv := startServe(t, "--socket", sock, "--results", results, "--backend", "cpu")
	c := ipc.NewUnixClient(sock)
	defer c.Close()
	ctx := context.Background()
	info, err := c.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.Backend != "cpu" || info.Cores < 1 || info.Transport != "unix" || info.CPU == "" {
		t.Fatalf("info %+v", info)
	}

	job, err := c.Submit(ctx, ipc.JobRequest{Scan: scanPath, Mask: maskPath, Settings: basicSettings()})
	if err != nil {
		t.Fatal(err)
	}
	evs := follow(t, c, job.ID)
	if st := evs[len(evs)-1].Job.State; st != ipc.JobDone {
		t.Fatalf("job ended %s: %s", st, evs[len(evs)-1].Job.Error)
	}
	sum, err := c.Summary(ctx, job.ID)
	if err != nil {
		t.Fatal(err)
	}
	regions, modules := 0, 0
	for _, h := range sum.Hubs {
		if h.Region != "" {
			regions++
		}
		if h.Module > 0 {
			modules++
		}
	}
	if len(sum.Hubs) == 0 || regions == 0 || modules != len(sum.Hubs) || sum.Atlas == nil {
		t.Fatalf("summary: %d hubs, %d with regions, %d with modules", len(sum.Hubs), regions, modules)
	}
	deg, err := c.Volume(ctx, job.ID, "degree")
	if err != nil {
		t.Fatal(err)
	}
	_, want, err := nifti.ReadImage(filepath.Join(sum.Bundle, "degree.nii.gz"))
	if err != nil {
		t.Fatal(err)
	}
	for f, x := range deg.Data {
		if !math.IsNaN(float64(x)) && x != want[f] {
			t.Fatalf("degree voxel %d: %g over the socket, %g in the bundle", f, x, want[f])
		}
	}
	sm, err := c.SeedMap(ctx, job.ID, sum.Hubs[0].Voxel)
	if err != nil {
		t.Fatal(err)
	}
	v := sum.Hubs[0].Voxel
	if r := sm.At(v[0], v[1], v[2]); math.Abs(float64(r)-1) > 1e-5 || sm.Header.Seed == nil {
		t.Fatalf("seed map: r = %g at the seed", r)
	}
	rc, _, err := c.OpenFile(ctx, job.ID, "hubs.tsv")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(rc)
	rc.Close()
	if wantTSV, _ := os.ReadFile(filepath.Join(sum.Bundle, "hubs.tsv")); !bytes.Equal(got, wantTSV) {
		t.Fatal("hubs.tsv downloaded differs from the bundle's")
	}
	if _, _, err := c.OpenFile(ctx, job.ID, "../job.json"); err == nil {
		t.Fatal("download of ../job.json allowed")
	}

	// The second job, cancelled once it runs; its client disconnecting first changes nothing.
	job2, err := c.Submit(ctx, ipc.JobRequest{Scan: big, Mask: bigMask})
	if err != nil {
		t.Fatal(err)
	}
	sctx, scancel := context.WithCancel(ctx)
	ch, err := c.Events(sctx, job2.ID)
	if err != nil {
		t.Fatal(err)
	}
	for ev := range ch {
		if ev.Job.State == ipc.JobRunning && ev.Job.Stage != "" {
			break
		}
	}
	scancel()
	if j, _ := c.Job(ctx, job2.ID); j.State != ipc.JobRunning {
		t.Fatalf("after its client left the job is %s", j.State)
	}
	t0 := time.Now()
	if _, err := c.Cancel(ctx, job2.ID); err != nil {
		t.Fatal(err)
	}
	evs = follow(t, c, job2.ID)
	t.Logf("cancel → terminal: %v", time.Since(t0))
	if st := evs[len(evs)-1].Job.State; st != ipc.JobCancelled {
		t.Fatalf("cancelled job ended %s", st)
	}
	if _, err := os.Stat(filepath.Join(results, job2.ID, "bundle")); err == nil {
		t.Fatal("cancelled job has a bundle")
	}

	if err := srv.stop(); err != nil {
		t.Fatalf("serve after SIGINT: %v", err)
	}
	if _, err := os.Stat(sock); err == nil {
		t.Fatal("socket left behind")
	}

	// Restart with the web transport and an idle exit.
	srv = startServe(t, "--socket", sock, "--results", results, "--web", "127.0.0.1:0", "--idle-exit", "300ms")
	jobs, err := c.Jobs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 2 || jobs[0].ID != job2.ID || jobs[1].ID != job.ID || jobs[0].State != ipc.JobCancelled || jobs[1].State != ipc.JobDone {
		t.Fatalf("after restart: %+v", jobs)
	}
	c.Close()
	var tokenURL string
	for _, line := range strings.Split(srv.out.String(), "\n") {
		if u, ok := strings.CutPrefix(line, "web: open "); ok {
			tokenURL = u
		}
	}
	base, token, ok := strings.Cut(tokenURL, "/?token=")
	if !ok || token == "" {
		t.Fatalf("no token URL in %q", srv.out.String())
	}
	wc := ipc.NewWebClient(base, token)
	if _, err := wc.Submit(ctx, ipc.JobRequest{Scan: scanPath}); !ipc.IsCode(err, ipc.CodeForbidden) && !ipc.IsCode(err, ipc.CodeBadRequest) {
		t.Fatalf("web submit naming a path: %v", err)
	}
	bad := ipc.NewWebClient(base, "wrong")
	if _, err := bad.Info(ctx); !ipc.IsCode(err, ipc.CodeUnauthorized) {
		t.Fatalf("wrong token: %v", err)
	}
	bad.Close()
	wc.Close()
	// No client, no job: the helper exits by itself.
	deadline := time.After(time.Minute)
	for !strings.Contains(srv.log.String(), "no client and no job") {
		select {
		case <-deadline:
			t.Fatalf("no idle exit:\n%s", srv.log.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
	if err := srv.stop(); err != nil {
		t.Fatal(err)
	}
}

// TestServeKilled kills a real helper process (SIGKILL) while its job runs; the next helper
// lists the job as interrupted and no bundle looks complete.
func TestServeKilled(t *testing.T) {
	big, bigMask := phantomScan(t, 6)
	dir := t.TempDir()
	sock := filepath.Join(dir, "run", "helper.sock")
	results := filepath.Join(dir, "results")
	cmd := exec.Command(os.Args[0], "serve", "--socket", sock, "--results", results, "--backend", "cpu")
	cmd.Env = append(os.Environ(), helperEnv+"=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	br := bufio.NewReader(out)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("helper process: %v", err)
		}
		if strings.HasPrefix(line, "backend:") {
			break
		}
	}
	go io.Copy(io.Discard, br)
	c := ipc.NewUnixClient(sock)
	defer c.Close()
	ctx := context.Background()
	job, err := c.Submit(ctx, ipc.JobRequest{Scan: big, Mask: bigMask})
	if err != nil {
		t.Fatal(err)
	}
	ch, err := c.Events(ctx, job.ID)
	if err != nil {
		t.Fatal(err)
	}
	for ev := range ch {
		if ev.Job.State == ipc.JobRunning && ev.Job.Stage != "" && ev.Job.Stage != "load" {
			break
		}
	}
	cmd.Process.Kill()
	cmd.Wait()

	srv := startServe(t, "--socket", sock, "--results", results, "--backend", "cpu")
	defer srv.stop()
	jobs, err := c.Jobs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 1 || jobs[0].State != ipc.JobInterrupted || jobs[0].Error == "" {
		t.Fatalf("after kill -9: %+v", jobs)
	}
	filepath.WalkDir(results, func(p string, e fs.DirEntry, err error) error {
		if err == nil && (e.Name() == bundle.Marker || e.Name() == "bundle" || strings.Contains(e.Name(), ".partial-")) {
			t.Errorf("after kill -9 %s remains", p)
		}
		return nil
	})
}

func TestParseBytes(t *testing.T) {
	for in, want := range map[string]int64{"4GiB": 4 << 30, "500MB": 500e6, "1048576": 1 << 20, "1.5 KiB": 1536} {
		if got, err := parseBytes(in); err != nil || got != want {
			t.Errorf("parseBytes(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "-1GiB", "lots", "0"} {
		if _, err := parseBytes(in); err == nil {
			t.Errorf("parseBytes(%q) accepted", in)
		}
	}
}

// basicSettings are the defaults with basic metrics (no path lengths, no random networks).
func basicSettings() *settings.Settings {
	s := settings.Defaults()
	s.Metrics = settings.MetricsBasic
	return &s
}
