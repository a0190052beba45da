package main

import (
	"strings"
	"testing"

	"github.com/hubscope/hubscope/helper/graph"
	"github.com/hubscope/hubscope/helper/pipeline"
	"github.com/hubscope/hubscope/ipc/schema"
)

// TestSummaryWords checks the summary's wording of the degree fits, the modules and the
// small-network warnings on hand-made results, each case against the words it must and must
// not contain.
func TestSummaryWords(t *testing.T) {
	fit := func(plAlpha, tpAlpha, lambda, p, r float64) *graph.DegreeDistribution {
		return &graph.DegreeDistribution{
			PowerLaw:  graph.PowerLawFit{Alpha: plAlpha, Xmin: 10, NTail: 300},
			Truncated: graph.TruncatedPowerLawFit{Alpha: tpAlpha, Lambda: lambda, Xmin: 10},
			PValue:    p, LogLikelihoodRatio: r,
		}
	}
	z := 12.5
	cases := []struct {
		name      string
		lines     []string
		want, not []string
	}{
		{"cut-off wins", degreeWords(fit(2.4, 1.8, 0.01, 0.0003, -6.4), 500, ""),
			[]string{"α = 2.40", "cut-off k_c ≈ 100", "a truncated power law fits better than a pure power law (likelihood ratio test, p = 0.0003)"}, []string{"no fit", "α = -"}},
		{"peaked degrees", degreeWords(fit(3.24, -3.07, 1/6.0, 0.00035, -6.4), 60, ""),
			[]string{"no power-law fit", "α = -3.07", "peak near k ≈ 18", "the pure power law is rejected", "no heavy tail"}, []string{"fits better"}},
		{"no cut-off", degreeWords(fit(4.03, 4.03, 1e-9, 1, 0), 400, ""),
			[]string{"coincides with the pure power law", "equally good", "p = 1"}, []string{"fits better"}},
		{"power law at its limit", degreeWords(fit(20, 1.5, 0.1, 0.01, -3), 40, ""),
			[]string{"pure power law: no fit", "faster than any power law"}, []string{"α = 20"}},
		{"undefined", degreeWords(nil, 3, "every connected node has the same degree, so there is no tail to fit"),
			[]string{"power-law fits undefined (every connected node has the same degree"}, []string{"graph:"}},
		{"modules", []string{moduleWords(pipeline.ModuleInfo{Method: "Leiden", Q: 0.61, Sizes: []int{900, 800, 7, 2, 1, 1, 1}, QZScore: &z})},
			[]string{"Leiden: 4 modules of ≥ 2 nodes (and 3 nodes on their own)", "Q 0.6100", "z 12.5"}, nil},
		{"one node on its own", []string{moduleWords(pipeline.ModuleInfo{Method: "Leiden", Q: 0.4, Sizes: []int{900, 1}})},
			[]string{"Leiden: 1 module of ≥ 2 nodes (and 1 node on its own)"}, []string{"1 nodes", "1 modules"}},
		{"z undefined", []string{moduleWords(pipeline.ModuleInfo{Method: "Leiden", Q: 0.5, Sizes: []int{2, 2}, QZScoreUndefined: "all 15 random networks reached the same Q = 0.5"})},
			[]string{"2 modules of ≥ 2 nodes, modularity Q 0.5000; its z-score is undefined (all 15 random networks"}, []string{"community:", "on their own"}},
		{"small network", networkWarnings(&pipeline.Metrics{Metrics: schema.Metrics{Scan: pipeline.ScanInfo{Nodes: 99, MaskRule: "automatic"}, Network: pipeline.NetworkInfo{Isolated: 64}}}),
			[]string{"only 99 nodes", "--mask", "64 of the 99 nodes have no edge", "--density"}, nil},
		{"region network", networkWarnings(&pipeline.Metrics{Metrics: schema.Metrics{Scan: pipeline.ScanInfo{Nodes: 90}, Network: pipeline.NetworkInfo{Isolated: 2}}}),
			nil, []string{"only", "no edge"}},
		{"large network", networkWarnings(&pipeline.Metrics{Metrics: schema.Metrics{Scan: pipeline.ScanInfo{Nodes: 8000, MaskRule: "automatic"}, Network: pipeline.NetworkInfo{Isolated: 11}}}),
			nil, []string{"only", "no edge"}},
	}
	for _, c := range cases {
		text := strings.Join(c.lines, "\n")
		for _, w := range c.want {
			if !strings.Contains(text, w) {
				t.Errorf("%s: %q lacks %q", c.name, text, w)
			}
		}
		for _, w := range c.not {
			if strings.Contains(text, w) {
				t.Errorf("%s: %q has %q", c.name, text, w)
			}
		}
	}
}
