package graph

import (
	"context"
	"math"
	"slices"
	"testing"
)

// TestMSBFSDirectionsAgree: top-down, bottom-up and the automatic mix find the same distance
// counts, on graphs where the frontier is small (geometric), large (dense random) or split
// over components, and with batches of fewer than 64 sources.
func TestMSBFSDirectionsAgree(t *testing.T) {
	graphs := map[string]*Graph{
		"dense":      randomGraph(t, 300, 0.2, 0, 81),
		"sparse":     randomGraph(t, 500, 0.004, 5, 82),
		"geometric":  geometricGraph(t, 450, 0.07, 83),
		"tiny_batch": randomGraph(t, 37, 0.2, 2, 84),
	}
	for name, g := range graphs {
		var hists [3][]int64
		for mode := directionAuto; mode <= bottomUpOnly; mode++ {
			b := newMSBFS(g.N)
			b.direction = mode
			for lo := 0; lo < g.N; lo += 64 {
				b.sweep(g.Offsets, g.Adj, lo, min(lo+64, g.N))
			}
			hists[mode] = b.hist
			// The state must be clean after every sweep.
			for v := 0; v < g.N; v++ {
				if b.seen[v] != 0 || b.visit[v] != 0 || b.next[v] != 0 {
					t.Fatalf("%s mode %d: bit sets not cleared at node %d", name, mode, v)
				}
			}
		}
		if !slices.Equal(hists[0], hists[1]) || !slices.Equal(hists[0], hists[2]) {
			t.Errorf("%s: distance counts differ: auto %v, top-down %v, bottom-up %v", name, hists[0], hists[1], hists[2])
		}
		if len(hists[0]) < 2 {
			t.Errorf("%s: no pairs found", name)
		}
	}
}

// TestSampledShortestPaths: every node as a source gives ShortestPaths' numbers with SE 0, and
// over many independent samples the estimates scatter around the exact values as their stated
// standard errors say (z-scores with mean ≈ 0, SD ≈ 1, about 95 % within 2 SE) — on a
// geometric graph with several components, where sources differ most.
func TestSampledShortestPaths(t *testing.T) {
	ctx := context.Background()
	for _, g := range []*Graph{geometricGraph(t, 600, 0.08, 5), randomGraph(t, 500, 0.03, 3, 6)} {
		exact, err := ShortestPaths(ctx, g, nil)
		if err != nil {
			t.Fatal(err)
		}
		// Every node of the largest component as the "sample": the estimators give the exact values.
		label, sizes := Components(g)
		big := 0
		for c, sz := range sizes {
			if sz > sizes[big] {
				big = c
			}
		}
		var out, inL []int32
		for v := 0; v < g.N; v++ {
			if label[v] == int32(big) {
				inL = append(inL, int32(v))
			} else {
				out = append(out, int32(v))
			}
		}
		so, err := perSourceSums(ctx, g, out)
		if err != nil {
			t.Fatal(err)
		}
		si, err := perSourceSums(ctx, g, inL)
		if err != nil {
			t.Fatal(err)
		}
		all := estimateFromSources(so, si, nil, [2]float64{}, len(inL), g.N)
		if !close(all.CharacteristicPathLength, exact.CharacteristicPathLength, 1e-12) || !close(all.GlobalEfficiency, exact.GlobalEfficiency, 1e-12) ||
			all.CharacteristicPathLengthSE != 0 || all.GlobalEfficiencySE != 0 {
			t.Fatalf("every source: %+v, exact L_p %g E_glob %g", all, exact.CharacteristicPathLength, exact.GlobalEfficiency)
		}
		if e, _ := SampledShortestPaths(ctx, g, g.N, 1, 1); !e.Exact || e.CharacteristicPathLength != exact.CharacteristicPathLength {
			t.Fatalf("sources = N: %+v", e)
		}
		const reps = 300
		for _, which := range []string{"L_p", "E_glob"} {
			var zs []float64
			within2 := 0
			for r := 0; r < reps; r++ {
				e, err := SampledShortestPaths(ctx, g, 150, 9, uint64(r))
				if err != nil {
					t.Fatal(err)
				}
				if e.Exact {
					t.Fatalf("sampled estimate %+v", e)
				}
				est, se, want := e.CharacteristicPathLength, e.CharacteristicPathLengthSE, exact.CharacteristicPathLength
				if which == "E_glob" {
					est, se, want = e.GlobalEfficiency, e.GlobalEfficiencySE, exact.GlobalEfficiency
				}
				if se <= 0 {
					t.Fatalf("%s: standard error %g", which, se)
				}
				z := (est - want) / se
				zs = append(zs, z)
				if math.Abs(z) <= 2 {
					within2++
				}
			}
			m, sd := meanSD(zs)
			frac := float64(within2) / reps
			t.Logf("%s: z mean %.3f SD %.3f, %.1f %% within 2 SE", which, m, sd, 100*frac)
			if math.Abs(m) > 0.25 || sd < 0.8 || sd > 1.25 || frac < 0.9 {
				t.Errorf("%s: the stated standard errors do not describe the scatter: z mean %.3f, SD %.3f, %.1f %% within 2 SE", which, m, sd, 100*frac)
			}
		}
	}
}

// SmallWorld labels its random networks' L_p as estimates exactly when they are: a sample
// smaller than the component gives standard errors (and λ's), PathSources < 0 gives each
// random network's exact L_p (ShortestPaths of the same random network) and no estimate flag.
func TestSmallWorldSampledOrExact(t *testing.T) {
	ctx := context.Background()
	g := randomGraph(t, 400, 0.04, 0, 17)
	sampled, err := SmallWorld(ctx, g, SmallWorldOptions{Random: 3, Seed: 2, PathSources: 64}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !sampled.RandomPathLengthEstimated || sampled.RandomPathSources != 64 || sampled.LambdaSE <= 0 || sampled.SigmaSE <= 0 || sampled.RandomPathLengthMeanSE <= 0 {
		t.Fatalf("sampled: %+v", sampled)
	}
	exact, err := SmallWorld(ctx, g, SmallWorldOptions{Random: 3, Seed: 2, PathSources: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if exact.RandomPathLengthEstimated || exact.LambdaSE != 0 || exact.RandomPathLengthMeanSE != 0 {
		t.Fatalf("exact: %+v", exact)
	}
	for k := 0; k < 3; k++ {
		r, _, err := Rewire(ctx, g, RewireOptions{Seed: 2, Stream: uint64(k)}, nil)
		if err != nil {
			t.Fatal(err)
		}
		ps, err := ShortestPaths(ctx, r, nil)
		if err != nil {
			t.Fatal(err)
		}
		if exact.RandomPathLength[k] != ps.CharacteristicPathLength {
			t.Errorf("random network %d: L_p %g, its exact search %g", k, exact.RandomPathLength[k], ps.CharacteristicPathLength)
		}
		if d := math.Abs(sampled.RandomPathLength[k] - ps.CharacteristicPathLength); d > 4*sampled.RandomPathLengthSE[k] {
			t.Errorf("random network %d: estimate %g ± %g, exact %g", k, sampled.RandomPathLength[k], sampled.RandomPathLengthSE[k], ps.CharacteristicPathLength)
		}
	}
}

// TestMSBFS128AgreesWithMSBFS: the 128-source sweeps find msbfs's distance counts in every
// direction mode, with batches of 128, of 65–127 (two words, the second partial), of exactly
// 64 and of fewer, and leave their bit sets clean.
func TestMSBFS128AgreesWithMSBFS(t *testing.T) {
	graphs := map[string]*Graph{
		"dense":     randomGraph(t, 300, 0.2, 0, 81),
		"sparse":    randomGraph(t, 500, 0.004, 5, 82),
		"geometric": geometricGraph(t, 448, 0.07, 83),
		"small":     randomGraph(t, 37, 0.2, 2, 84),
		"one_word":  randomGraph(t, 64, 0.1, 1, 85),
	}
	for name, g := range graphs {
		want := newMSBFS(g.N)
		for lo := 0; lo < g.N; lo += 64 {
			want.sweep(g.Offsets, g.Adj, lo, min(lo+64, g.N))
		}
		for mode := directionAuto; mode <= bottomUpOnly; mode++ {
			b := newMSBFS128(g.N)
			b.direction = mode
			for lo := 0; lo < g.N; lo += 128 {
				b.sweep(g.Offsets, g.Adj, lo, min(lo+128, g.N))
			}
			if !slices.Equal(b.hist, want.hist) {
				t.Errorf("%s mode %d: 128-source counts %v, 64-source %v", name, mode, b.hist, want.hist)
			}
			for v := 0; v < g.N; v++ {
				if b.seen[v] != (pair128{}) || b.visit[v] != (pair128{}) || b.next[v] != (pair128{}) {
					t.Fatalf("%s mode %d: bit sets not cleared at node %d", name, mode, v)
				}
			}
		}
	}
}

// TestPerSourceSumsMatchPlainBFS: the sampled estimator's per-source sums (128 searches per
// sweep) equal those of one plain breadth-first search per source, bit for bit, for a shuffled
// list of 350 sources (batches of 128, 128 and 94, whose second word is partial) spread over
// components, isolated nodes included.
func TestPerSourceSumsMatchPlainBFS(t *testing.T) {
	ctx := context.Background()
	for name, g := range map[string]*Graph{
		"geometric": geometricGraph(t, 420, 0.07, 86),
		"sparse":    randomGraph(t, 400, 0.006, 9, 87),
	} {
		list := make([]int32, g.N)
		for i := range list {
			list[i] = int32((i*277 + 13) % g.N) // a permutation: 277 is prime to 420 and 400
		}
		list = list[:350]
		got, err := perSourceSums(ctx, g, list)
		if err != nil {
			t.Fatal(err)
		}
		dist := make([]int, g.N)
		for k, s := range list {
			for i := range dist {
				dist[i] = -1
			}
			dist[s] = 0
			queue := []int32{s}
			var want sourceSums
			far := 0
			for len(queue) > 0 {
				v := queue[0]
				queue = queue[1:]
				for _, u := range g.Neighbors(int(v)) {
					if dist[u] < 0 {
						dist[u] = dist[v] + 1
						far = max(far, dist[u])
						queue = append(queue, u)
					}
				}
			}
			// In increasing distance, as the sweeps add them.
			for d := 1; d <= far; d++ {
				for _, dv := range dist {
					if dv == d {
						want.reached++
						want.dist += int64(d)
						want.inv += 1 / float64(d)
					}
				}
			}
			if got[k] != want {
				t.Fatalf("%s: source %d (list position %d): sums %+v, plain BFS %+v", name, s, k, got[k], want)
			}
		}
	}
}
