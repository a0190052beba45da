package schema

// DFCSummary is the sliding-window analysis of a job.
type DFCSummary struct {
	Window  int         `json:"window"` // volumes per window
	Step    int         `json:"step"`   // volumes between window starts
	TR      float64     `json:"tr_seconds"`
	Windows []DFCWindow `json:"windows"`
}

// DFCWindow holds one window's global measures (density, mean_degree, clustering,
// efficiency, modularity, … as computed) keyed by their names in metrics.json.
type DFCWindow struct {
	Index    int                `json:"index"`
	Start    int                `json:"start"` // first volume of the window
	Edges    int64              `json:"edges"`
	Measures map[string]float64 `json:"measures"`
	// Undefined names the measures the window has no value for (left out of Measures, as
	// JSON has no NaN or Inf) and why, e.g. "threshold": "no pair of nodes is kept …".
	Undefined map[string]string `json:"undefined,omitempty"`
}
