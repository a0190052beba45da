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
