package pipeline

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/hubscope/hubscope/helper/bundle"
)

// Why measures have no value on degenerate networks (no edges, one edge, a star, a complete or
// a disconnected graph), following the conventions of the Brain Connectivity Toolbox (Rubinov &
// Sporns 2010, NeuroImage 52:1059) and igraph (Csárdi & Nepusz 2006): a measure defined as a
// mean over an empty set, or as a ratio
// whose denominator vanishes, is undefined — written as null with one of these reasons —
// never 0 by fiat and never a number JSON cannot hold.
var undefinedReasons = []struct {
	path   *regexp.Regexp
	reason string
}{
	{regexp.MustCompile(`^network\.threshold$`), "no pair of nodes is kept, so no value separates kept from dropped pairs"},
	{regexp.MustCompile(`^global\.characteristic_path_length$`), "no two nodes are connected: L_p is the mean distance over connected pairs (igraph unconn=True; the Brain Connectivity Toolbox's charpath gives Inf)"},
	{regexp.MustCompile(`^(global|global_basic)\.assortativity$`), "Newman's degree assortativity divides by the variance of the degrees at the edges' ends, which is 0 here (no edges, or every edge joins nodes of equal degree, as in a complete graph or a ring)"},
	{regexp.MustCompile(`^global\.small_world\.gamma$`), "the random networks' mean clustering is 0, so γ = C_p / C_p,rand has no value"},
	{regexp.MustCompile(`^global\.small_world\.lambda$`), "the network's or the random networks' path length is undefined (no connected pairs), so λ = L_p / L_p,rand has no value"},
	{regexp.MustCompile(`^global\.small_world\.sigma$`), "σ = γ / λ needs both γ and λ"},
	{regexp.MustCompile(`^modules\[\d+\]\.q$`), "modularity divides by twice the number of edges, 0 here"},
	{regexp.MustCompile(`^modules\[\d+\]\.(q_z_score|random_q_sd)$`), "the random networks' Q has no spread to measure Q against"},
}

// explainUndefined fills m.Undefined: a reason for every non-finite number of metrics.json
// (written as null) and for the measures the code already knows to be undefined.
func explainUndefined(m *Metrics) error {
	_, nf, err := bundle.MarshalFinite(m)
	if err != nil {
		return err
	}
	und := map[string]string{}
	for k, v := range m.undefined {
		und[k] = v
	}
	for _, n := range nf {
		und[n.Path] = reasonFor(n.Path, fmt.Sprintf("not a finite number (%v)", n.Value))
	}
	if g := m.Global; g != nil {
		if g.Assortativity == nil {
			und["global.assortativity"] = reasonFor("global.assortativity", "")
		}
		if g.DegreeDistribution == nil && g.DegreeDistributionUndefined != "" {
			und["global.degree_distribution"] = g.DegreeDistributionUndefined
		}
	}
	if b := m.GlobalBasic; b != nil && b.Assortativity == nil {
		und["global_basic.assortativity"] = reasonFor("global_basic.assortativity", "")
	}
	for i, mod := range m.Modules {
		if mod.QZScoreUndefined != "" {
			und[fmt.Sprintf("modules[%d].q_z_score", i)] = mod.QZScoreUndefined
		}
	}
	if len(und) > 0 {
		m.Undefined = und
	}
	return nil
}

func reasonFor(path, fallback string) string {
	for _, r := range undefinedReasons {
		if r.path.MatchString(path) {
			return r.reason
		}
	}
	return fallback
}

// writeMetrics writes metrics.json with its undefined measures explained.
func writeMetrics(w *bundle.Writer, m *Metrics) error {
	if err := explainUndefined(m); err != nil {
		return err
	}
	return w.WriteJSON("metrics.json", m)
}

// UndefinedText is how the summary shows a measure without a value: "undefined (why)".
func (m *Metrics) UndefinedText(path string) string {
	why := m.Undefined[path]
	if why == "" {
		return "undefined"
	}
	return "undefined (" + strings.TrimSuffix(why, ".") + ")"
}

// why records the reason a measure is left out.
func (m *Metrics) why(path, reason string) {
	if m.undefined == nil {
		m.undefined = map[string]string{}
	}
	m.undefined[path] = reason
}
