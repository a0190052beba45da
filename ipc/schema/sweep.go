package schema

// SweepFile is a threshold sweep's results in the bundle (Sweep).
const SweepFile = "sweep.json"

// Sweep is sweep.json: the network measured at every threshold of a sweep (run --sweep; one
// correlation pass at the loosest threshold, every tighter network a filter of its edges).
type Sweep struct {
	Spec   SweepSpec    `json:"sweep"`
	HubSD  float64      `json:"hub_rule_sd"`
	Points []SweepPoint `json:"thresholds"`
	// AUC is each measure's area under its curve over the thresholds (trapezoid rule, the
	// thresholds in increasing order as the x axis, as GRETNA integrates over sparsity); a
	// measure undefined at any threshold, or not measured, has none.
	AUC map[string]float64 `json:"auc"`
	// SmallWorld says how γ, λ and σ were measured at each threshold (the full metrics'
	// random-network settings); absent when they were not.
	SmallWorld *SweepSmallWorld `json:"small_world,omitempty"`
}

// SweepSmallWorld is the random-network set-up of a sweep's small-world measures: at every
// threshold RandomNetworks degree-preserving random networks of that threshold's network
// (SwapsPerEdge accepted swaps per edge, PCG streams of Seed), their L_p from PathSources
// sampled BFS sources (-1: every node), as in metrics.json's small_world.
type SweepSmallWorld struct {
	RandomNetworks int     `json:"random_networks"`
	SwapsPerEdge   float64 `json:"swaps_per_edge"`
	PathSources    int     `json:"path_sources"`
	Seed           uint64  `json:"seed"`
}

// SweepSpec is the sweep's kind ("r" or "density") and its thresholds in increasing order.
type SweepSpec struct {
	Kind   string    `json:"kind"`
	Values []float64 `json:"values"`
}

// SweepPoint is the network at one threshold of a sweep and its measures. Path measures are
// over connected pairs (L_p) and all pairs (E_glob), as in metrics.json.
type SweepPoint struct {
	Threshold             float64  `json:"threshold"`
	WeakestValue          *float64 `json:"weakest_value"` // null for an empty network
	Edges                 int64    `json:"edges"`
	Density               float64  `json:"density"`
	MeanDegree            float64  `json:"mean_degree"`
	IsolatedNodes         int      `json:"isolated_nodes"`
	Components            int      `json:"components"`
	LargestComponentShare float64  `json:"largest_component_share"`
	Hubs                  int      `json:"hubs"`
	ClusteringCoefficient float64  `json:"clustering_coefficient"`
	CharacteristicPath    float64  `json:"characteristic_path_length"`
	GlobalEfficiency      float64  `json:"global_efficiency"`
	MeanLocalEfficiency   *float64 `json:"local_efficiency,omitempty"`
	Assortativity         *float64 `json:"assortativity"`
	// Modularity is the Leiden Q of the threshold's network, found as the full metrics find
	// metrics.json's first modules row; absent when not measured or the network has no edges.
	Modularity *float64 `json:"modularity,omitempty"`
	// Gamma, Lambda and Sigma are the small-world measures against the random networks of
	// Sweep.SmallWorld (γ = C_p/C_p,rand, λ = L_p/L_p,rand, σ = γ/λ); absent when not
	// measured or undefined (fewer than 2 edges, no triangles or paths in the random networks).
	Gamma  *float64 `json:"gamma,omitempty"`
	Lambda *float64 `json:"lambda,omitempty"`
	Sigma  *float64 `json:"sigma,omitempty"`
}

// SweepMeasures are a point's measures in sweep.tsv's column order (after the threshold),
// keyed as in the JSON and the AUC, with their value (false: undefined or not measured).
var SweepMeasures = []struct {
	Key string
	Get func(*SweepPoint) (float64, bool)
}{
	{"edges", func(p *SweepPoint) (float64, bool) { return float64(p.Edges), true }},
	{"density", func(p *SweepPoint) (float64, bool) { return p.Density, true }},
	{"mean_degree", func(p *SweepPoint) (float64, bool) { return p.MeanDegree, true }},
	{"isolated_nodes", func(p *SweepPoint) (float64, bool) { return float64(p.IsolatedNodes), true }},
	{"components", func(p *SweepPoint) (float64, bool) { return float64(p.Components), true }},
	{"largest_component_share", func(p *SweepPoint) (float64, bool) { return p.LargestComponentShare, true }},
	{"hubs", func(p *SweepPoint) (float64, bool) { return float64(p.Hubs), true }},
	{"clustering_coefficient", func(p *SweepPoint) (float64, bool) { return p.ClusteringCoefficient, true }},
	{"characteristic_path_length", func(p *SweepPoint) (float64, bool) { return p.CharacteristicPath, true }},
	{"global_efficiency", func(p *SweepPoint) (float64, bool) { return p.GlobalEfficiency, true }},
	{"local_efficiency", func(p *SweepPoint) (float64, bool) { return deref(p.MeanLocalEfficiency) }},
	{"assortativity", func(p *SweepPoint) (float64, bool) { return deref(p.Assortativity) }},
	{"modularity", func(p *SweepPoint) (float64, bool) { return deref(p.Modularity) }},
	{"gamma", func(p *SweepPoint) (float64, bool) { return deref(p.Gamma) }},
	{"lambda", func(p *SweepPoint) (float64, bool) { return deref(p.Lambda) }},
	{"sigma", func(p *SweepPoint) (float64, bool) { return deref(p.Sigma) }},
}

func deref(v *float64) (float64, bool) {
	if v == nil {
		return 0, false
	}
	return *v, true
}

// Measure returns the measure of p keyed key (SweepMeasures); false when it is undefined, not
// measured or not a sweep measure.
func (p *SweepPoint) Measure(key string) (float64, bool) {
	for _, m := range SweepMeasures {
		if m.Key == key {
			return m.Get(p)
		}
	}
	return 0, false
}
