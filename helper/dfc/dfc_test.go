package dfc

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/hubscope/hubscope/helper/backend/cpu"
	"github.com/hubscope/hubscope/helper/fc"
	"github.com/hubscope/hubscope/helper/network"
	"github.com/hubscope/hubscope/helper/progress"
)

func TestNewPlan(t *testing.T) {
	for _, c := range []struct {
		t, w, s int
		starts  []int
	}{
		{257, 150, 1, nil}, // 108 windows, checked by count below
		{10, 10, 1, []int{0}},
		{10, 3, 3, []int{0, 3, 6}},
		{11, 3, 3, []int{0, 3, 6}}, // volume 10 does not fill a window
		{12, 3, 3, []int{0, 3, 6, 9}},
		{20, 5, 7, []int{0, 7, 14}},
		{20, 5, 100, []int{0}},
	} {
		p, err := NewPlan(c.t, c.w, c.s)
		if err != nil {
			t.Fatalf("NewPlan(%d, %d, %d): %v", c.t, c.w, c.s, err)
		}
		if want := (c.t-c.w)/c.s + 1; p.Count() != want {
			t.Errorf("NewPlan(%d, %d, %d): %d windows, want %d", c.t, c.w, c.s, p.Count(), want)
		}
		if c.starts != nil && !slices.Equal(p.Starts, c.starts) {
			t.Errorf("NewPlan(%d, %d, %d): starts %v, want %v", c.t, c.w, c.s, p.Starts, c.starts)
		}
		last := p.Starts[p.Count()-1]
		if last+c.w > c.t || last+c.s+c.w <= c.t {
			t.Errorf("NewPlan(%d, %d, %d): last window at %d is not the last that fits", c.t, c.w, c.s, last)
		}
	}
	if p, _ := NewPlan(257, 150, 1); p.Count() != 108 {
		t.Errorf("GPU-DFC's T=257, w=150, s=1 gives %d windows, want 108", p.Count())
	}
	for _, c := range []struct {
		t, w, s int
		word    string
	}{{100, 2, 1, "window 2"}, {100, 101, 1, "window 101"}, {100, 10, 0, "step 0"}, {100, 10, -1, "step -1"}} {
		if _, err := NewPlan(c.t, c.w, c.s); err == nil || !strings.Contains(err.Error(), c.word) {
			t.Errorf("NewPlan(%d, %d, %d) = %v, want an error naming %q", c.t, c.w, c.s, err, c.word)
		}
	}
}

// randomSeries is N×T standard normal data with a shared component in the first half of the
// nodes, so that every threshold mode finds edges.
func randomSeries(n, t int, seed uint64) []float32 {
	x := fc.BenchData(n, t, seed)
	common := fc.BenchData(1, t, seed+1)
	for i := 0; i < n/2; i++ {
		for k := 0; k < t; k++ {
			x[i*t+k] += 0.6 * common[k]
		}
	}
	return x
}

func window(x []float32, n, t, start, w int) []float32 {
	out := make([]float32, n*w)
	for i := 0; i < n; i++ {
		copy(out[i*w:], x[i*t+start:i*t+start+w])
	}
	return out
}

func cloneNetwork(nw *network.Network) *network.Network {
	return &network.Network{N: nw.N, Indptr: slices.Clone(nw.Indptr), Indices: slices.Clone(nw.Indices), Weights: slices.Clone(nw.Weights)}
}

func sameNetwork(t *testing.T, what string, got, want *network.Network) {
	t.Helper()
	if got.N != want.N || !slices.Equal(got.Indptr, want.Indptr) || !slices.Equal(got.Indices, want.Indices) || !slices.Equal(got.Weights, want.Weights) {
		t.Fatalf("%s: network differs from fc.Build on the sliced series (%d vs %d edges)", what, got.Edges(), want.Edges())
	}
}

// Every window's network is fc.Build's on that window's series, sliced and normalised on their
// own: the same edges with the same weights, in every threshold mode.
func TestWindowsEqualBuildOnSlices(t *testing.T) {
	const n, T, w, s = 240, 70, 24, 9
	x := randomSeries(n, T, 7)
	be := cpu.New(cpu.Options{})
	defer be.Close()
	for _, cfg := range []fc.Config{
		{Measure: fc.Pearson, Mode: fc.Strength, Threshold: 0.3},
		{Measure: fc.Pearson, Mode: fc.Density, Density: 0.03, Abs: true},
		{Measure: fc.Spearman, Mode: fc.NearestNeighbours, K: 3},
		{Measure: fc.Kendall, Mode: fc.Significance, Alpha: 0.05, Correction: fc.FDR},
	} {
		cfg.BlockRows = 64 // several blocks per window
		var got []*network.Network
		res, err := Run(context.Background(), be, x, n, T, Options{Window: w, Step: s, FC: cfg, Modularity: true}, nil, func(win *Window) error {
			got = append(got, cloneNetwork(win.Network))
			return nil
		})
		if err != nil {
			t.Fatalf("%s/%s: %v", cfg.Measure, cfg.Mode, err)
		}
		if len(got) != (T-w)/s+1 || len(res.Windows) != len(got) {
			t.Fatalf("%s/%s: %d windows, want %d", cfg.Measure, cfg.Mode, len(got), (T-w)/s+1)
		}
		edges := int64(0)
		for k, win := range res.Windows {
			want, rpt, err := fc.Build(context.Background(), be, window(x, n, T, k*s, w), n, w, cfg, progress.Discard)
			if err != nil {
				t.Fatal(err)
			}
			sameNetwork(t, cfg.Measure.String()+"/"+cfg.Mode.String(), got[k], want)
			if win.Start != k*s || win.Index != k || win.Measures.Edges != want.Edges() || win.Measures.Threshold != rpt.Threshold {
				t.Errorf("window %d: start %d, edges %d, threshold %g; want %d, %d, %g", k, win.Start, win.Measures.Edges, win.Measures.Threshold, k*s, want.Edges(), rpt.Threshold)
			}
			deg := Degrees(want)
			if !slices.Equal(win.Degree, deg) {
				t.Errorf("window %d: degrees differ from the network's", k)
			}
			if win.Measures.Modularity == nil && want.Edges() > 0 {
				t.Errorf("window %d: no modularity though asked for", k)
			}
			edges += want.Edges()
		}
		if edges == 0 {
			t.Fatalf("%s/%s: no edges in any window: the comparison proves nothing", cfg.Measure, cfg.Mode)
		}
	}
}

// Degrees count each edge at both ends; the variability is the population SD over windows.
func TestDegreesAndVariability(t *testing.T) {
	nw := &network.Network{N: 4, Indptr: []uint64{0, 2, 3, 3, 3}, Indices: []uint32{1, 3, 2}, Weights: []float32{1, 1, 1}}
	if got := Degrees(nw); !slices.Equal(got, []int32{2, 2, 1, 1}) {
		t.Fatalf("Degrees = %v, want [2 2 1 1]", got)
	}
	ws := []Window{{Degree: []int32{2, 0, 1}}, {Degree: []int32{4, 0, 1}}, {Degree: []int32{0, 0, 1}}}
	mean, sd, cv := variability(ws, 3)
	// node 0: 2, 4, 0 → mean 2, population SD √(8/3)
	if mean[0] != 2 || math.Abs(sd[0]-math.Sqrt(8.0/3)) > 1e-15 || math.Abs(cv[0]-math.Sqrt(8.0/3)/2) > 1e-15 {
		t.Errorf("node 0: mean %g, SD %g, CV %g", mean[0], sd[0], cv[0])
	}
	if !math.IsNaN(cv[1]) || sd[1] != 0 {
		t.Errorf("never-connected node: SD %g, CV %g; want 0 and NaN", sd[1], cv[1])
	}
	if sd[2] != 0 || cv[2] != 0 {
		t.Errorf("constant degree: SD %g, CV %g; want 0, 0", sd[2], cv[2])
	}
}

// A row constant within one window (but not over the scan) is left out of that window's
// network, which is otherwise fc.Build's on the other rows, renumbered.
func TestConstantRowInWindow(t *testing.T) {
	const n, T, w = 60, 40, 10
	x := randomSeries(n, T, 3)
	for k := 0; k < w; k++ {
		x[5*T+k] = 7 // node 5 is constant in window 0 only
	}
	be := cpu.New(cpu.Options{})
	defer be.Close()
	cfg := fc.Config{Measure: fc.Pearson, Mode: fc.Strength, Threshold: 0.2}
	var first *network.Network
	res, err := Run(context.Background(), be, x, n, T, Options{Window: w, Step: w, FC: cfg}, nil, func(win *Window) error {
		if win.Index == 0 {
			first = cloneNetwork(win.Network)
		}
		return win.Network.Validate()
	})
	if err != nil {
		t.Fatal(err)
	}
	if c := res.Windows[0].Measures.Constant; c != 1 || res.Windows[0].Degree[5] != 0 || res.Windows[1].Measures.Constant != 0 {
		t.Fatalf("constant rows per window: %d, %d; degree of node 5 in window 0: %d", c, res.Windows[1].Measures.Constant, res.Windows[0].Degree[5])
	}
	var rows []float32
	win := window(x, n, T, 0, w)
	keep := []int32{}
	for i := 0; i < n; i++ {
		if i != 5 {
			keep = append(keep, int32(i))
			rows = append(rows, win[i*w:(i+1)*w]...)
		}
	}
	want, _, err := fc.Build(context.Background(), be, rows, n-1, w, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	sameNetwork(t, "window 0", first, expand(want, keep, n))
	if len(res.Notes) == 0 {
		t.Error("no note about the constant series")
	}
}

// Cancelling during the windows stops Run with the context's error.
func TestCancelBetweenWindows(t *testing.T) {
	const n, T = 200, 60
	x := randomSeries(n, T, 1)
	be := cpu.New(cpu.Options{})
	defer be.Close()
	ctx, cancel := context.WithCancel(context.Background())
	seen := 0
	_, err := Run(ctx, be, x, n, T, Options{Window: 20, Step: 1, FC: fc.Config{Mode: fc.Strength, Threshold: 0.3}}, nil, func(w *Window) error {
		seen++
		if w.Index == 2 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) || seen != 3 {
		t.Fatalf("Run after cancel at window 2: err %v after %d windows; want context.Canceled after 3", err, seen)
	}
}

func TestRunRefusesBadSettings(t *testing.T) {
	x := randomSeries(10, 30, 1)
	be := cpu.New(cpu.Options{})
	defer be.Close()
	for _, c := range []struct {
		opt  Options
		word string
	}{
		{Options{Window: 2, Step: 1}, "window 2"},
		{Options{Window: 31, Step: 1}, "window 31"},
		{Options{Window: 10, Step: 0}, "step 0"},
		{Options{Window: 10, Step: 1, Rank: 11}, "rank 11"},
		{Options{Window: 10, Step: 1, Rank: 2, FC: fc.Config{Measure: fc.Kendall}}, "kendall"},
	} {
		if _, err := Run(context.Background(), be, x, 10, 30, c.opt, nil, nil); err == nil || !strings.Contains(err.Error(), c.word) {
			t.Errorf("Run(%+v) = %v, want an error naming %q", c.opt, err, c.word)
		}
	}
}

// With censoring, windows lie on the original axis: a window with more than MaxCensored of
// its volumes censored is left out and listed, the others are the network of exactly their
// uncensored volumes (a reference built here column by column from the full series).
func TestCensoredWindows(t *testing.T) {
	const n, axis, w, s = 120, 80, 20, 6
	full := randomSeries(n, axis, 11)
	censored := map[int]bool{}
	for _, p := range []int{3, 21, 22, 23, 24, 25, 40, 41, 55, 61, 62, 63, 64, 65, 66, 67} {
		censored[p] = true
	}
	var kept []int
	for p := 0; p < axis; p++ {
		if !censored[p] {
			kept = append(kept, p)
		}
	}
	T := len(kept)
	x := make([]float32, n*T)
	for i := 0; i < n; i++ {
		for j, p := range kept {
			x[i*T+j] = full[i*axis+p]
		}
	}
	be := cpu.New(cpu.Options{})
	defer be.Close()
	cfg := fc.Config{Measure: fc.Pearson, Mode: fc.Density, Density: 0.05}
	got := map[int]*network.Network{}
	res, err := Run(context.Background(), be, x, n, T, Options{Window: w, Step: s, FC: cfg, Axis: axis, Kept: kept, MaxCensored: 0.2}, nil, func(win *Window) error {
		got[win.Index] = cloneNetwork(win.Network)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var wantSkipped []Skipped
	done := 0
	for k := 0; k*s+w <= axis; k++ {
		start := k * s
		var cols []int
		for p := start; p < start+w; p++ {
			if !censored[p] {
				cols = append(cols, p)
			}
		}
		if c := w - len(cols); c > 4 { // 20 % of 20 volumes
			wantSkipped = append(wantSkipped, Skipped{Index: k, Start: start, Censored: c})
			continue
		}
		ref := make([]float32, n*len(cols))
		for i := 0; i < n; i++ {
			for j, p := range cols {
				ref[i*len(cols)+j] = full[i*axis+p]
			}
		}
		want, _, err := fc.Build(context.Background(), be, ref, n, len(cols), cfg, progress.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if got[k] == nil {
			t.Fatalf("window %d (start %d, %d censored) missing", k, start, w-len(cols))
		}
		sameNetwork(t, fmt.Sprintf("window %d", k), got[k], want)
		done++
	}
	if !slices.Equal(res.Skipped, wantSkipped) || len(res.Windows) != done || len(wantSkipped) == 0 || done < 3 {
		t.Errorf("skipped %+v, %d windows; want %+v, %d", res.Skipped, len(res.Windows), wantSkipped, done)
	}
	for _, win := range res.Windows {
		if win.Start != win.Index*s {
			t.Errorf("window %d starts at %d, want %d on the original axis", win.Index, win.Start, win.Index*s)
		}
	}
	// Every window over the share: refused in one line.
	if _, err := Run(context.Background(), be, x, n, T, Options{Window: w, Step: s, FC: cfg, Axis: axis, Kept: kept, MaxCensored: 0}, nil, nil); err == nil || !strings.Contains(err.Error(), "every one of the") {
		t.Errorf("all windows censored: %v", err)
	}
}
