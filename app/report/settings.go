package report

import (
	"fmt"

	"github.com/hubscope/hubscope/ipc"
)

// Setting is one analysis choice in words.
type Setting struct{ Name, Value string }

// Defaults the helper applies to zero-valued ipc.Settings (pipeline.Defaults).
const (
	DefaultDensity = 0.01
	DefaultRandom  = 15
	DefaultHubSD   = 1.0
)

// DescribeSettings says what an analysis was asked to do, with the helper's defaults written
// out where the request left them zero.
func DescribeSettings(s ipc.Settings, mask string) []Setting {
	measure := map[string]string{"": "Pearson correlation", "pearson": "Pearson correlation", "spearman": "Spearman rank correlation", "kendall": "Kendall τ-b"}[s.Measure]
	if measure == "" {
		measure = s.Measure
	}
	if s.Abs {
		measure += " (absolute value)"
	}
	var threshold string
	switch s.Mode {
	case "", "density":
		d := s.Density
		if d == 0 {
			d = DefaultDensity
		}
		threshold = fmt.Sprintf("strongest %g %% of all voxel pairs (exact density)", 100*d)
	case "r":
		threshold = fmt.Sprintf("correlation ≥ %g", s.R)
	case "alpha":
		corr := s.Correction
		if corr == "" {
			corr = "fdr"
		}
		threshold = fmt.Sprintf("significant at α = %g (%s correction)", s.Alpha, map[string]string{"fdr": "false discovery rate", "bonferroni": "Bonferroni"}[corr])
	case "knn":
		threshold = fmt.Sprintf("each voxel's %d strongest links", s.K)
	default:
		threshold = s.Mode
	}
	metrics := map[string]string{"": "full", "full": "full", "basic": "basic (no path lengths, no random networks)", "none": "degree and hubs only"}[s.Metrics]
	random := DefaultRandom
	if s.Random != nil {
		random = *s.Random
	}
	hubSD := s.HubSD
	if hubSD == 0 {
		hubSD = DefaultHubSD
	}
	if mask == "" {
		mask = "automatic brain mask (EPI intensity)"
	}
	out := []Setting{
		{"Connectivity", measure},
		{"Links kept", threshold},
		{"Brain mask", mask},
		{"Measures", metrics},
		{"Hub rule", fmt.Sprintf("degree > mean + %g SD", hubSD)},
	}
	if s.Metrics == "" || s.Metrics == "full" {
		out = append(out, Setting{"Random networks", fmt.Sprintf("%d (degree-preserving rewiring)", random)})
	}
	if s.DFCWindow > 0 {
		step := s.DFCStep
		if step == 0 {
			step = 1
		}
		out = append(out, Setting{"Dynamic connectivity", fmt.Sprintf("windows of %d volumes every %d volumes", s.DFCWindow, step)})
	}
	return out
}
