//go:build cuda

package cuda

import (
	"context"
	"fmt"
	"math"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/hubscope/hubscope/helper/bundle"
	"github.com/hubscope/hubscope/helper/graph"
)

// bfsConfig is one way of running the device's MS-BFS levels.
type bfsConfig struct {
	name        string
	direction   int
	alpha, beta int64
	fixedMask   bool
}

var bfsConfigs = []bfsConfig{
	{name: "auto"},
	{name: "top-down", direction: topDownOnly},
	{name: "bottom-up", direction: bottomUpOnly},
	{name: "alternating", direction: alternating},
	{name: "bottom-up, every search active (before)", direction: bottomUpOnly, fixedMask: true},
	{name: "auto α=2 β=4", alpha: 2, beta: 4},
	{name: "auto α=50 β=100", alpha: 50, beta: 100},
}

func (a *graphAccel) setBFS(c bfsConfig) {
	a.bfsDirection, a.bfsAlpha, a.bfsBeta, a.fixedMask = c.direction, c.alpha, c.beta, c.fixedMask
}

// TestGraphAcceleratorBFSDirections: top-down, bottom-up, alternating and the heuristic's mix
// (with its own and other thresholds), with and without the active-search mask, all give the
// CPU's exact path statistics and its sampled estimate, on graphs with isolated nodes, small
// components, chains and a hub; and the heuristic does run both kinds of step.
func TestGraphAcceleratorBFSDirections(t *testing.T) {
	accel, _ := newGraphAccel(t)
	a := accel.(*graphAccel)
	defer a.setBFS(bfsConfig{})
	ctx := context.Background()
	var autoSteps [2]int // the heuristic's top-down and bottom-up levels over all graphs
	for name, g := range testGraphs(t) {
		t.Run(name, func(t *testing.T) {
			pc, err := graph.ShortestPaths(ctx, g, nil)
			if err != nil {
				t.Fatal(err)
			}
			ec, err := graph.SampledShortestPaths(ctx, g, 700, 3, 4)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range bfsConfigs {
				a.setBFS(c)
				var steps [2]int
				a.trace = func(_ int, topDown bool, _ []uint64) {
					if topDown {
						steps[0]++
					} else {
						steps[1]++
					}
				}
				pg, err := a.ShortestPaths(ctx, g)
				a.trace = nil
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(pg, pc) {
					t.Errorf("%s: path statistics:\n GPU %+v\n CPU %+v", c.name, pg, pc)
				}
				if c.name == "auto" {
					t.Logf("auto: %d top-down and %d bottom-up levels", steps[0], steps[1])
					autoSteps[0] += steps[0]
					autoSteps[1] += steps[1]
				}
				eg, err := a.SampledShortestPaths(ctx, g, 700, 3, 4)
				if err != nil {
					t.Fatal(err)
				}
				if eg.CharacteristicPathLength != ec.CharacteristicPathLength || eg.CharacteristicPathLengthSE != ec.CharacteristicPathLengthSE ||
					eg.Sources != ec.Sources || eg.Exact != ec.Exact ||
					math.Abs(eg.GlobalEfficiency-ec.GlobalEfficiency) > 1e-12*ec.GlobalEfficiency ||
					math.Abs(eg.GlobalEfficiencySE-ec.GlobalEfficiencySE) > 1e-9*ec.GlobalEfficiencySE+1e-15 {
					t.Errorf("%s: sampled estimate\n GPU %+v\n CPU %+v", c.name, eg, ec)
				}
			}
		})
	}
	if autoSteps[0] == 0 || autoSteps[1] == 0 {
		t.Errorf("the heuristic ran %d top-down and %d bottom-up levels over all graphs; it should use both", autoSteps[0], autoSteps[1])
	}
}

// TestBFSOnNetwork times the device's exact and sampled searches on the network.npz of a
// bundle named by $HUBSCOPE_BFS_NETWORK (W7's, BENCHMARKS.md) in every bfsConfig: the exact
// search from every node (3 runs, their median; every configuration must give the same
// statistics) with the heuristic's levels logged, and the sampled searches (1,024 sources, as
// graph.SmallWorld's) of three random networks made on the device.
func TestBFSOnNetwork(t *testing.T) {
	path := os.Getenv("HUBSCOPE_BFS_NETWORK")
	if path == "" {
		t.Skip("HUBSCOPE_BFS_NETWORK (a bundle's network.npz) not set")
	}
	nw, err := bundle.ReadNetwork(path)
	if err != nil {
		t.Fatal(err)
	}
	g := graph.FromNetwork(nw)
	accel, _ := newGraphAccel(t)
	a := accel.(*graphAccel)
	defer a.setBFS(bfsConfig{})
	ctx := context.Background()
	t.Logf("network: %d nodes, %d edges", g.N, g.Edges())
	median := func(run func() error) (time.Duration, error) {
		var ds []time.Duration
		for r := 0; r < 3; r++ {
			t0 := time.Now()
			if err := run(); err != nil {
				return 0, err
			}
			ds = append(ds, time.Since(t0))
		}
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		return ds[1], nil
	}
	var want graph.PathStats
	for i, c := range bfsConfigs {
		a.setBFS(c)
		var ps graph.PathStats
		d, err := median(func() error {
			var err error
			ps, err = a.ShortestPaths(ctx, g)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			want = ps
			t.Logf("L_p %.6f E_glob %.6f diameter %d", ps.CharacteristicPathLength, ps.GlobalEfficiency, ps.Diameter)
		} else if !reflect.DeepEqual(ps, want) {
			t.Errorf("%s: path statistics %+v, auto's %+v", c.name, ps, want)
		}
		t.Logf("exact search, %s: %.1f ms", c.name, d.Seconds()*1e3)
	}
	// The heuristic's choices in the first and the last batch.
	a.setBFS(bfsConfig{})
	var lines []string
	a.trace = func(level int, topDown bool, st []uint64) {
		dir := "bottom-up"
		if topDown {
			dir = "top-down"
		}
		lines = append(lines, fmt.Sprintf("level %d %s: new pairs %d, next frontier %d nodes, %d edges, unexplored %d edges", level, dir, st[0], st[1], st[2], st[3]))
	}
	if _, err := a.ShortestPaths(ctx, g); err != nil {
		t.Fatal(err)
	}
	a.trace = nil
	for i, l := range lines {
		if i < 14 || i >= len(lines)-14 {
			t.Log(l)
		}
	}
	var rs []*graph.Graph
	for k := 0; k < 3; k++ {
		r, _, err := a.Rewire(ctx, g, graph.RewireOptions{SwapsPerEdge: 5, Seed: 1, Stream: uint64(k)})
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	var first []graph.PathEstimate
	for _, c := range bfsConfigs {
		a.setBFS(c)
		var times []string
		var ests []graph.PathEstimate
		for _, r := range rs {
			var e graph.PathEstimate
			d, err := median(func() error {
				var err error
				e, err = a.SampledShortestPaths(ctx, r, graph.DefaultPathSources, 1, 2)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			ests = append(ests, e)
			times = append(times, fmt.Sprintf("%.1f", d.Seconds()*1e3))
		}
		if first == nil {
			first = ests
		}
		for k := range ests {
			if ests[k].CharacteristicPathLength != first[k].CharacteristicPathLength || ests[k].Sources != first[k].Sources {
				t.Errorf("%s: random network %d's estimate %+v, auto's %+v", c.name, k, ests[k], first[k])
			}
		}
		t.Logf("sampled searches, %s: %s ms (L_p %.5f ± %.5f, %d sources)", c.name, strings.Join(times, " / "), ests[0].CharacteristicPathLength, ests[0].CharacteristicPathLengthSE, ests[0].Sources)
	}
}
