package graph

import (
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
