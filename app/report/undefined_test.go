package report

import (
	"strings"
	"testing"
)

// TestUndefinedShownInWords: a network that keeps no pair (metrics.json's threshold and L_p
// null) reads "undefined", never a threshold or path length of 0.
func TestUndefinedShownInWords(t *testing.T) {
	m, err := ParseMetrics([]byte(`{"network": {"measure": "pearson", "threshold": null, "edges": 0},
		"global": {"clustering_coefficient": 0, "characteristic_path_length": null, "global_efficiency": 0},
		"undefined": {"network.threshold": "no pair of nodes is kept"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if w := m.thresholdWords(); !strings.Contains(w, "undefined") || strings.Contains(w, "pearson 0") {
		t.Errorf("threshold line %q", w)
	}
	for _, ms := range m.GlobalMeasures() {
		if strings.HasPrefix(ms.Name, "L_p") && ms.Value != "undefined" {
			t.Errorf("L_p shown as %q", ms.Value)
		}
	}
	m.Network.Edges, m.Network.Threshold = 10, 0.5
	if w := m.thresholdWords(); !strings.Contains(w, "pearson 0.5; 10 links") {
		t.Errorf("threshold line %q", w)
	}
}
