package daemon

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hubscope/hubscope/helper/bundle"
	"github.com/hubscope/hubscope/helper/nifti"
	"github.com/hubscope/hubscope/helper/scan"
	"github.com/hubscope/hubscope/ipc"
)

// fakeFinishedJob writes a finished job with n nodes × l time points on the 2 mm MNI grid
// (91×109×91) straight into a results directory: what a daemon finds after a real run, made
// without running the pipeline (for views at sizes the tests cannot afford to analyse).
func fakeFinishedJob(tb testing.TB, results string, n, l int) string {
	tb.Helper()
	s := &scan.Scan{N: n, L: l, Dims: [3]int{91, 109, 91}, TR: 2,
		Affine: [4][4]float64{{-2, 0, 0, 90}, {0, 2, 0, -126}, {0, 0, 2, -72}, {0, 0, 0, 1}}}
	grid := s.Dims[0] * s.Dims[1] * s.Dims[2]
	rng := rand.New(rand.NewPCG(1, 2))
	in := make([]bool, grid)
	for _, f := range rng.Perm(grid)[:n] {
		in[f] = true
	}
	for f, ok := range in {
		if ok {
			s.IJK = append(s.IJK, [3]int32{int32(f % 91), int32(f / 91 % 109), int32(f / (91 * 109))})
		}
	}
	s.Data = make([]float32, n*l)
	for i := range s.Data {
		s.Data[i] = float32(rng.NormFloat64())
	}
	now := time.Now().UTC()
	id := newID(now)
	dir := filepath.Join(results, id)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		tb.Fatal(err)
	}
	w, err := bundle.Create(filepath.Join(dir, "bundle"), false)
	if err != nil {
		tb.Fatal(err)
	}
	deg := make([]float32, n)
	w.WriteNodes(s)
	w.WriteNodeMap("degree.nii.gz", s, deg, nifti.Int32)
	w.WriteSeries(s)
	w.WriteJSON("metrics.json", map[string]any{"scan": map[string]any{"nodes": n, "tr_seconds": 2}})
	if _, err := w.Commit(); err != nil {
		tb.Fatal(err)
	}
	r := record{Job: ipc.Job{ID: id, Name: "fake", State: ipc.JobDone, Submitted: now, Finished: &now}, Class: "cpu"}
	b, _ := json.Marshal(r)
	if err := os.WriteFile(filepath.Join(dir, "job.json"), b, 0o600); err != nil {
		tb.Fatal(err)
	}
	return id
}

// BenchmarkSeedMap60k times the seed-map request for 60,000 voxels × 200 time points on the
// 2 mm MNI grid once the job's normalised series are in memory (every click after the first):
// correlation with every node plus the full-grid volume. The goal is ≤ 100 ms.
func BenchmarkSeedMap60k(b *testing.B) { benchSeedMap(b, 60000) }

// BenchmarkSeedMap58523 is the size (58,523 nodes, a 3 mm grey-matter mask's).
func BenchmarkSeedMap58523(b *testing.B) { benchSeedMap(b, 58523) }

func benchSeedMap(b *testing.B, n int) {
	results := filepath.Join(b.TempDir(), "results")
	id := fakeFinishedJob(b, results, n, 200)
	d := newDaemon(b, results)
	first, err := d.SeedMap(context.Background(), id, [3]int{45, 54, 45})
	if ipc.IsCode(err, ipc.CodeNotFound) { // the centre voxel is not a node: take node 0's voxel
		v, _, _ := d.view(id)
		p := v.ijk[0]
		first, err = d.SeedMap(context.Background(), id, [3]int{int(p[0]), int(p[1]), int(p[2])})
	}
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("first seed map (reads series.npy): %.1f ms", first.Header.Millis)
	v, _, _ := d.view(id)
	b.ResetTimer()
	var millis float64
	for i := 0; b.Loop(); i++ {
		p := v.ijk[(i*7919)%len(v.ijk)]
		vol, err := d.SeedMap(context.Background(), id, [3]int{int(p[0]), int(p[1]), int(p[2])})
		if err != nil {
			b.Fatal(err)
		}
		millis = vol.Header.Millis
	}
	b.ReportMetric(millis, "helper-ms")
}

// TestSeedPrefetch: asking for a job's summary (the app opening its result) reads its series
// for seed maps in the background, so the first click finds them in memory; a click while
// the read is under way waits for that read instead of starting another.
func TestSeedPrefetch(t *testing.T) {
	results := filepath.Join(t.TempDir(), "results")
	id := fakeFinishedJob(t, results, 2000, 50)
	d := newDaemon(t, results)
	d.Summary(context.Background(), id) // the fake bundle has no hub table: only the prefetch matters
	e := d.series.entry(id, func() *seedEntry { t.Fatal("the summary started no prefetch"); return nil })
	select {
	case <-e.ready:
	case <-time.After(30 * time.Second):
		t.Fatal("the prefetch did not finish in 30 s")
	}
	if e.err != nil || e.m == nil || e.m.n != 2000 {
		t.Fatalf("prefetched %+v, %v", e.m, e.err)
	}
	v, _, _ := d.view(id)
	p := v.ijk[0]
	if _, err := d.SeedMap(context.Background(), id, [3]int{int(p[0]), int(p[1]), int(p[2])}); err != nil {
		t.Fatal(err)
	}
	if got := d.series.entry(id, newSeedEntry); got != e {
		t.Error("the seed map loaded the series again")
	}
}

// TestSeedMapLarge checks a 60,000-node seed map against a direct computation at a few nodes
// (the seed map of the end-to-end test covers every node of a small job).
func TestSeedMapLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 48 MB series")
	}
	results := filepath.Join(t.TempDir(), "results")
	id := fakeFinishedJob(t, results, 60000, 200)
	d := newDaemon(t, results)
	v, _, err := d.view(id)
	if err != nil {
		t.Fatal(err)
	}
	r, _ := bundle.OpenSeries(filepath.Join(v.dir, bundle.SeriesFile))
	defer r.Close()
	seedNode := 12345
	p := v.ijk[seedNode]
	vol, err := d.SeedMap(context.Background(), id, [3]int{int(p[0]), int(p[1]), int(p[2])})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("60,000 nodes: %.1f ms (first map, series read from disk)", vol.Header.Millis)
	a, b := make([]float32, 200), make([]float32, 200)
	r.Row(seedNode, a)
	for _, n := range []int{0, 1, seedNode, 59999} {
		r.Row(n, b)
		q := v.ijk[n]
		got := vol.At(int(q[0]), int(q[1]), int(q[2]))
		var ma, mb float64
		for k := range a {
			ma, mb = ma+float64(a[k])/200, mb+float64(b[k])/200
		}
		var sab, saa, sbb float64
		for k := range a {
			x, y := float64(a[k])-ma, float64(b[k])-mb
			sab, saa, sbb = sab+x*y, saa+x*x, sbb+y*y
		}
		if want := sab / math.Sqrt(saa*sbb); math.Abs(float64(got)-want) > 1e-5 {
			t.Fatalf("node %d: r = %g, direct %g", n, got, want)
		}
	}
}
