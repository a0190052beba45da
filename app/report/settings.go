package report

import (
	"fmt"

	"github.com/hubscope/hubscope/ipc/settings"
)

// Setting is one analysis choice in words.
type Setting struct{ Name, Value string }

// DescribeSettings says what an analysis was asked to do (its settings as the job ran them).
func DescribeSettings(s settings.Settings, mask string) []Setting {
	measure := map[string]string{settings.Pearson: "Pearson correlation", settings.Spearman: "Spearman rank correlation", settings.Kendall: "Kendall τ-b"}[s.Measure]
	if measure == "" {
		measure = s.Measure
	}
	if s.Abs {
		measure += " (absolute value)"
	}
	var threshold string
	switch s.Mode {
	case settings.ModeDensity:
		threshold = fmt.Sprintf("strongest %g %% of all voxel pairs (exact density)", 100*s.Density)
	case settings.ModeR:
		threshold = fmt.Sprintf("correlation >= %g", s.R)
	case settings.ModeAlpha:
		corr := map[string]string{settings.FDR: "false discovery rate", settings.Bonferroni: "Bonferroni", "": "Bonferroni"}[s.Correction]
		threshold = fmt.Sprintf("significant at α = %g (%s correction)", s.Alpha, corr)
	case settings.ModeKNN:
		threshold = fmt.Sprintf("each voxel's %d strongest links", s.K)
	default:
		threshold = s.Mode
	}
	metrics := map[string]string{settings.MetricsFull: "full", settings.MetricsBasic: "basic (no path lengths, no random networks)", settings.MetricsNone: "degree and hubs only"}[s.Metrics]
	if mask == "" {
		mask = "automatic brain mask (EPI intensity)"
	}
	out := []Setting{
		{"Connectivity", measure},
		{"Links kept", threshold},
		{"Brain mask", mask},
		{"Measures", metrics},
		{"Hub rule", fmt.Sprintf("degree > mean + %g SD", s.HubSD)},
	}
	if s.Metrics == settings.MetricsFull {
		out = append(out, Setting{"Random networks", fmt.Sprintf("%d (degree-preserving rewiring)", s.Random)})
	}
	if s.DFCWindow > 0 {
		out = append(out, Setting{"Dynamic connectivity", fmt.Sprintf("windows of %d volumes every %d volumes", s.DFCWindow, s.DFCStep)})
	}
	return out
}
