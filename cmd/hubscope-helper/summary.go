package main

import (
	"fmt"
	"math"
	"strings"

	"github.com/hubscope/hubscope/helper/graph"
	"github.com/hubscope/hubscope/helper/pipeline"
	"github.com/hubscope/hubscope/helper/scan"
)

// The summary's wording: every line of `run`'s summary in words a researcher who is not a
// developer reads without the code. README's "Reading the results" explains each line.

// smallNetworkNodes is the network size under which the summary warns that its measures mean
// little: hubs (degree > mean + 1 SD) are then a handful of voxels, and modules, path lengths
// and small-world indices rest on too few nodes to compare with the literature's networks of
// thousands.
const smallNetworkNodes = 100

// maskWords describes how the nodes were chosen.
func maskWords(m *pipeline.Metrics) string {
	s := m.Scan
	switch {
	case s.MaskRule == "":
		return ""
	case m.Demo != nil:
		return fmt.Sprintf("the embedded MNI152 brain mask at the phantom's grid (%s), %d voxels", pipeline.DemoMaskFile, s.MaskVoxels)
	case s.MaskRule == scan.MaskRuleUser:
		return fmt.Sprintf("the mask file given, %d voxels", s.MaskVoxels)
	}
	return fmt.Sprintf("%s, %d voxels", s.MaskRule, s.MaskVoxels)
}

// networkWarnings are the summary's warnings about a network too small or too sparse for its
// measures to mean much, each naming what to do.
func networkWarnings(m *pipeline.Metrics) []string {
	var out []string
	n := m.Network
	nodes := m.Scan.Nodes
	// Voxel networks only: a region-level network (a time-series matrix) of a few dozen
	// regions is an ordinary atlas analysis.
	if nodes < smallNetworkNodes && m.Scan.MaskRule != "" {
		out = append(out, fmt.Sprintf("only %d nodes: too few for hubs, modules and small-world measures to mean much (voxel networks have thousands of nodes); give a brain mask (--mask) that covers the brain, or a scan with more voxels", nodes))
	}
	if nodes > 0 && 2*n.Isolated > nodes {
		out = append(out, fmt.Sprintf("%d of the %d nodes have no edge at all: the threshold keeps too few connections; lower it (a higher --density, e.g. 0.05, or a lower --r)", n.Isolated, nodes))
	}
	return out
}

// moduleWords is one module finder's result: modules that hold at least two nodes, nodes on
// their own apart, and Q against the random networks (or why that comparison is undefined).
func moduleWords(mod pipeline.ModuleInfo) string {
	groups, single := 0, 0
	for _, n := range mod.Sizes {
		if n >= 2 {
			groups++
		} else {
			single++
		}
	}
	line := fmt.Sprintf("%s: %d module%s of ≥ 2 nodes", mod.Method, groups, plural(groups))
	if single > 0 {
		line += " (and " + onTheirOwn(single) + ")"
	}
	line += fmt.Sprintf(", modularity Q %.4f", mod.Q)
	switch {
	case mod.QZScore != nil:
		line += fmt.Sprintf(" (z %.1f against random networks of the same degrees)", *mod.QZScore)
	case mod.QZScoreUndefined != "":
		line += fmt.Sprintf("; its z-score is undefined (%s)", mod.QZScoreUndefined)
	}
	return line
}

// powerLawFailed says why the pure power law's fit is no fit (graph.PowerLawFit.NoFit).
func powerLawFailed(pl graph.PowerLawFit) string {
	switch {
	case !pl.NoFit():
		return ""
	case pl.Alpha >= 10:
		return fmt.Sprintf("no fit: the exponent runs to the search limit of 20 — the degrees ≥ %d fall off faster than any power law", pl.Xmin)
	}
	return fmt.Sprintf("no fit: the exponent runs to its lower limit of 1 — the degrees ≥ %d do not fall off like a power law", pl.Xmin)
}

// truncatedFailed says why the truncated power law's fit describes no heavy tail
// (graph.TruncatedPowerLawFit.NoFit).
func truncatedFailed(tp graph.TruncatedPowerLawFit) string {
	if !tp.NoFit() {
		return ""
	}
	return fmt.Sprintf("no power-law fit: its best exponent is negative (α = %.2f with cut-off k_c ≈ %.0f), a curve that rises to a peak near k ≈ %.0f and falls after it — the degrees are peaked around a typical value, not heavy-tailed",
		tp.Alpha, 1/tp.Lambda, -tp.Alpha/tp.Lambda)
}

// pWords formats a p-value for reading.
func pWords(p float64) string {
	if p < 1e-4 {
		return "p < 0.0001"
	}
	return fmt.Sprintf("p = %.2g", p)
}

// degreeWords describes the degree distribution's fits: each law, and which one the
// likelihood ratio favours (Clauset, Shalizi & Newman 2009, §5: the power law is the truncated
// law at λ = 0, so the nested-model test applies).
func degreeWords(dd *graph.DegreeDistribution, kmax int, undefined string) []string {
	if dd == nil {
		if undefined == "" {
			return nil
		}
		return []string{fmt.Sprintf("power-law fits undefined (%s)", undefined)}
	}
	pl, tp := dd.PowerLaw, dd.Truncated
	plBad, tpBad := powerLawFailed(pl), truncatedFailed(tp)
	var out []string
	if plBad != "" {
		out = append(out, "pure power law: "+plBad)
	} else {
		out = append(out, fmt.Sprintf("pure power law P(k) ∝ k^−α: α = %.2f for the %d nodes of degree k ≥ %d", pl.Alpha, pl.NTail, pl.Xmin))
	}
	switch {
	case tpBad != "":
		out = append(out, "truncated power law: "+tpBad)
	case tp.NoCutOff(kmax):
		out = append(out, fmt.Sprintf("truncated power law P(k) ∝ k^−α e^(−k/k_c): α = %.2f with no cut-off within the degrees (it coincides with the pure power law)", tp.Alpha))
	default:
		out = append(out, fmt.Sprintf("truncated power law P(k) ∝ k^−α e^(−k/k_c): α = %.2f, cut-off k_c ≈ %.0f", tp.Alpha, 1/tp.Lambda))
	}
	p := pWords(dd.PValue)
	switch {
	case plBad != "" && tpBad != "":
		out = append(out, "neither law describes these degrees")
	case dd.PValue < 0.05 && dd.LogLikelihoodRatio < 0 && tpBad == "":
		out = append(out, fmt.Sprintf("a truncated power law fits better than a pure power law (likelihood ratio test, %s)", p))
	case dd.PValue < 0.05 && dd.LogLikelihoodRatio < 0:
		out = append(out, fmt.Sprintf("the pure power law is rejected (likelihood ratio test, %s), and the truncated law that beats it is no power law: the degrees have no heavy tail", p))
	default:
		out = append(out, fmt.Sprintf("the two fits are equally good (likelihood ratio test, %s): no evidence of a cut-off, the simpler pure power law suffices", p))
	}
	return out
}

// truthWords is the demo's truth check in two plain lines.
func truthWords(tc *pipeline.TruthCheck) []string {
	var out []string
	if tc.NMI != nil {
		out = append(out, fmt.Sprintf("planted %s, found %s of ≥ 2 nodes (and %s); agreement NMI %.3f (1 = identical)",
			pipeline.Count(tc.PlantedModules, "module"), pipeline.Count(*tc.FoundModules, "module"), onTheirOwn(*tc.FoundSingletons), *tc.NMI))
	}
	out = append(out, fmt.Sprintf("planted %d hubs: %d of them are among the %d highest-degree voxels (recall %.2f); the hub rule flags %d voxels, %d planted hubs among them (recall %.2f)",
		tc.PlantedHubs, tc.TopDegreeHits, tc.PlantedHubs, tc.TopDegreeRecall, tc.RuleHubs, tc.RuleHits, tc.RuleRecall))
	return out
}

// printLines prints lines under a label in the summary's two columns.
func printLines(w interface{ Write([]byte) (int, error) }, label string, lines []string) {
	for i, l := range lines {
		if i > 0 {
			label = ""
		}
		fmt.Fprintf(w, "%-11s %s\n", label, l)
	}
}

// onTheirOwn is "1 node on its own", "3 nodes on their own".
func onTheirOwn(n int) string {
	if n == 1 {
		return "1 node on its own"
	}
	return pipeline.Count(n, "node") + " on their own"
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// percent formats a share in per cent: one decimal, more only for shares under 0.1 %.
func percent(x float64) string {
	if x == 0 || math.Abs(x) >= 0.001 {
		return fmt.Sprintf("%.1f %%", 100*x)
	}
	return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.4f", 100*x), "0"), ".") + " %"
}
