package schema

// DFCSummary is the sliding-window analysis of a job.
type DFCSummary struct {
	Window  int         `json:"window"` // volumes per window
	Step    int         `json:"step"`   // volumes between window starts
	TR      float64     `json:"tr_seconds"`
	Windows []DFCWindow `json:"windows"`
	// With censored volumes: windows lie on the original axis (after the dropped first
	// volumes); one with more than MaxCensored of its volumes censored is left out and listed
	// in Skipped, the others use their uncensored volumes.
	MaxCensored float64      `json:"max_censored,omitempty"`
	Skipped     []DFCSkipped `json:"skipped,omitempty"`
}

// DFCSkipped is a window left out for its censored volumes.
type DFCSkipped struct {
	Index    int `json:"index"`
	Start    int `json:"start"`    // first volume of the window
	Censored int `json:"censored"` // censored volumes in it
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
