// Package report reads a finished analysis (its metrics.json and hub table) the way a clinician
// reads it, and writes the one-page HTML report that can be attached to a record: scan,
// settings, global measures against random networks, modules, hubs with atlas regions, and the
// figures embedded as PNG data URIs so the file stands alone. It has no Fyne imports.
package report

import (
	"encoding/json"
	"fmt"
)

// Metrics is the part of a bundle's metrics.json (written by the helper's pipeline) that the
// app shows. Fields absent from a run (basic metrics, no random networks) stay nil.
type Metrics struct {
	Scan struct {
		Path         string  `json:"path"`
		MaskRule     string  `json:"mask_rule"` // how the nodes were chosen (the helper's scan.MaskRule*)
		Nodes        int     `json:"nodes"`
		TimePoints   int     `json:"time_points"`
		TR           float64 `json:"tr_seconds"`
		Grid         [3]int  `json:"grid"`
		MaskVoxels   int     `json:"mask_voxels"`
		ZeroVariance int     `json:"dropped_zero_variance"`
		NonFinite    int     `json:"dropped_non_finite"`
	} `json:"scan"`
	Network struct {
		Measure          string  `json:"measure"`
		Abs              bool    `json:"abs"`
		Mode             string  `json:"threshold_mode"`
		Correction       string  `json:"correction"`
		Threshold        float64 `json:"threshold"`
		Edges            int64   `json:"edges"`
		Density          float64 `json:"density"`
		MeanDegree       float64 `json:"mean_degree"`
		Isolated         int     `json:"isolated_nodes"`
		LargestComponent int     `json:"largest_component"`
		Backend          string  `json:"backend"`
		Device           string  `json:"device"`
	} `json:"network"`
	Hubs struct {
		Rule   string  `json:"rule"`
		Cutoff float64 `json:"degree_cutoff"`
		Count  int     `json:"count"`
	} `json:"hubs"`
	Global *struct {
		ClusteringCoefficient    float64  `json:"clustering_coefficient"`
		CharacteristicPathLength float64  `json:"characteristic_path_length"`
		GlobalEfficiency         float64  `json:"global_efficiency"`
		LocalEfficiency          *float64 `json:"local_efficiency"`
		Assortativity            *float64 `json:"assortativity"`
		Diameter                 int      `json:"diameter"`
		SmallWorld               *struct {
			Gamma          float64 `json:"gamma"`
			Lambda         float64 `json:"lambda"`
			Sigma          float64 `json:"sigma"`
			SigmaSD        float64 `json:"sigma_sd"`
			RandomNetworks int     `json:"random_networks"`
			// The random networks' L_p estimated from sampled BFS sources, with the
			// standard error that carries into λ.
			Estimated bool    `json:"random_path_length_estimated"`
			Sources   int     `json:"random_path_length_sources"`
			LambdaSE  float64 `json:"lambda_se"`
		} `json:"small_world"`
		DegreeDistribution *struct {
			PowerLaw struct {
				Alpha float64 `json:"alpha"`
				Xmin  int     `json:"xmin"`
			} `json:"power_law"`
		} `json:"degree_distribution"`
	} `json:"global"`
	GlobalBasic *struct {
		ClusteringCoefficient float64  `json:"clustering_coefficient"`
		Assortativity         *float64 `json:"assortativity"`
	} `json:"global_basic"`
	Modules []struct {
		Method  string   `json:"method"`
		Q       float64  `json:"q"`
		Count   int      `json:"count"`
		Modules int      `json:"modules_of_two_or_more"`
		Single  int      `json:"single_node_modules"`
		Sizes   []int    `json:"sizes"`
		QZScore *float64 `json:"q_z_score"`
	} `json:"modules"`
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
		if sw.Estimated {
			add("λ (normalised path length)", fmt.Sprintf("%.3f ± %.1g (estimate)", sw.Lambda, sw.LambdaSE),
				fmt.Sprintf("L_p / L_p of the random networks, theirs estimated from %d sampled sources each (± one standard error); ≈ 1: as short as chance", sw.Sources))
		} else {
			add("λ (normalised path length)", f3(sw.Lambda), "L_p / L_p of the random networks; ≈ 1: as short as chance")
		}
		add("σ (small-worldness)", fmt.Sprintf("%.3f ± %.3f", sw.Sigma, sw.SigmaSD), "γ / λ; > 1: small-world organisation")
	}
	if len(m.Modules) > 0 {
		mod := m.Modules[0]
		count := fmt.Sprintf("%d modules of ≥ 2 nodes", mod.Modules)
		if mod.Single > 0 {
			count += fmt.Sprintf(" (and %d nodes on their own)", mod.Single)
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
			add("Power-law exponent α", fmt.Sprintf("%.2f (degree ≥ %d)", dd.PowerLaw.Alpha, dd.PowerLaw.Xmin), "tail of the degree distribution (Clauset et al. 2009)")
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
