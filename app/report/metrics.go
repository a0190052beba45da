// Package report reads a finished analysis (its metrics.json and hub table) the way a clinician
// reads it, and writes the one-page HTML report that can be attached to a record: scan,
// settings, global measures against random networks, modules, hubs with atlas regions, and the
// figures embedded as PNG data URIs so the file stands alone. It has no Fyne imports.
package report

import (
	"encoding/json"
	"fmt"
	"github.com/hubscope/hubscope/ipc/schema"
)

// Metrics is a bundle's metrics.json (schema.Metrics, the type the helper writes) with the
// ways the app presents it. Fields absent from a run (basic metrics, no random networks) are
// nil.
type Metrics struct {
	schema.Metrics
}

// ParseMetrics decodes metrics.json (ipc.Summary.Metrics).
func ParseMetrics(b []byte) (*Metrics, error) {
	if len(b) == 0 {
		return nil, fmt.Errorf("metrics.json: empty")
	}
	var m Metrics
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("metrics.json: %w", err)
	}
	return &m, nil
}

// moduleCounts gives the modules of ≥ 2 nodes and the single-node modules as metrics.json
// states them; a bundle written before those two keys existed has only the sizes, so they are
// counted from there (the helper counts the same way) instead of reading as 0 modules. Both
// keys 0 beside sizes can only be such a bundle: a partition has at least one module.
func moduleCounts(multi, single int, sizes []int) (int, int) {
	if multi+single > 0 || len(sizes) == 0 {
		return multi, single
	}
	var m, s int
	for _, n := range sizes {
		if n >= 2 {
			m++
		} else {
			s++
		}
	}
	return m, s
}

// Measure is one global measure as shown to a reader: its name, value, and what it means.
type Measure struct {
	Name, Value, Meaning string
}

// GlobalMeasures lists the global measures a run produced, the random-network ratios first
// (γ = C_p/C_p,rand, λ = L_p/L_p,rand, σ = γ/λ; Humphries et al. 2008) since they are what a
// small-world statement rests on, then modularity Q and its z-score against the same random
// networks.
func (m *Metrics) GlobalMeasures() []Measure {
	var out []Measure
	add := func(name, value, meaning string) { out = append(out, Measure{name, value, meaning}) }
	if g := m.Global; g != nil && g.SmallWorld != nil {
		sw := g.SmallWorld
		add("γ (normalised clustering)", f3(sw.Gamma), fmt.Sprintf("C_p / C_p of %d random networks; > 1: more clustered than chance", sw.RandomNetworks))
		if sw.RandomPathLengthEstimated {
			add("λ (normalised path length)", fmt.Sprintf("%.3f ± %.1g (estimate)", sw.Lambda, sw.LambdaSE),
				fmt.Sprintf("L_p / L_p of the random networks, theirs estimated from %d sampled sources each (± one standard error); near 1: as short as chance", sw.RandomPathSources))
		} else {
			add("λ (normalised path length)", f3(sw.Lambda), "L_p / L_p of the random networks; near 1: as short as chance")
		}
		add("σ (small-worldness)", fmt.Sprintf("%.3f ± %.3f", sw.Sigma, sw.SigmaSD), "γ / λ; > 1: small-world organisation")
	}
	if len(m.Modules) > 0 {
		mod := m.Modules[0]
		multi, single := moduleCounts(mod.Modules, mod.SingleNodes, mod.Sizes)
		count := fmt.Sprintf("%d modules of at least 2 nodes", multi)
		if single == 1 {
			count += " (and 1 node on its own)"
		} else if single > 1 {
			count += fmt.Sprintf(" (and %d nodes on their own)", single)
		}
		add("Q (modularity, "+mod.Method+")", f3(mod.Q), count)
		if mod.QZScore != nil {
			add("Q z-score", fmt.Sprintf("%.1f", *mod.QZScore), "Q against the random networks' Q, in SDs")
		}
	}
	if g := m.Global; g != nil {
		add("C_p (clustering coefficient)", f3(g.ClusteringCoefficient), "mean over all voxels")
		if m.Network.Edges == 0 {
			// metrics.json writes L_p as null here (no connected pair; see its "undefined").
			add("L_p (characteristic path length)", "undefined", "no two voxels are connected: L_p is a mean over connected pairs")
		} else {
			add("L_p (characteristic path length)", f3(g.CharacteristicPathLength), "mean shortest path over connected pairs, in links")
		}
		add("E_glob (global efficiency)", f3(g.GlobalEfficiency), "mean inverse shortest path")
		if g.LocalEfficiency != nil {
			add("E_loc (local efficiency)", f3(*g.LocalEfficiency), "mean over all voxels")
		}
		if g.Assortativity != nil {
			add("Assortativity", f3(*g.Assortativity), "degree correlation of linked voxels")
		}
		if dd := g.DegreeDistribution; dd != nil {
			add("Power-law exponent α", fmt.Sprintf("%.2f (degree >= %d)", dd.PowerLaw.Alpha, dd.PowerLaw.Xmin), "tail of the degree distribution (Clauset et al. 2009)")
		}
	} else if b := m.GlobalBasic; b != nil {
		add("C_p (clustering coefficient)", f3(b.ClusteringCoefficient), "mean over all voxels")
		if b.Assortativity != nil {
			add("Assortativity", f3(*b.Assortativity), "degree correlation of linked voxels")
		}
	}
	add("Edges", fmt.Sprintf("%d", m.Network.Edges), fmt.Sprintf("density %.3g %%, mean degree %.1f", 100*m.Network.Density, m.Network.MeanDegree))
	add("Hubs", fmt.Sprintf("%d", m.Hubs.Count), m.Hubs.Rule)
	return out
}

// ModuleSizes returns the sizes of the reported modules (the first method's, largest first;
// module 1 is the largest, as in the modules map).
func (m *Metrics) ModuleSizes() []int {
	if len(m.Modules) == 0 {
		return nil
	}
	return m.Modules[0].Sizes
}

func f3(v float64) string { return fmt.Sprintf("%.3f", v) }

// thresholdWords is the threshold line of the report. A network that keeps no pair has no
// threshold value (metrics.json writes null, with the reason in "undefined"), which must not
// read as a threshold of 0.
func (m *Metrics) thresholdWords() string {
	if m.Network.Edges == 0 {
		return fmt.Sprintf("%s: undefined (no pair of voxels is kept); 0 links", m.Network.Measure)
	}
	return fmt.Sprintf("%s %.4g; %d links, density %.3g %%", m.Network.Measure, m.Network.Threshold, m.Network.Edges, 100*m.Network.Density)
}
