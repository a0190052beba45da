package community

import (
	"fmt"
	"math"

	"github.com/hubscope/hubscope/helper/graph"
)

// ParticipationCoefficient returns, for every node,
//
//	P_i = 1 − Σ_s (k_is / k_i)²,
//
// where k_is is the number (weighted: total weight) of i's links to module s and k_i its degree
// (strength) (Guimerà & Amaral 2005, eq. 2). P_i is 0 for a node linked only inside its own
// module and for an isolated node (k_i = 0, the Brain Connectivity Toolbox's convention), and
// approaches 1 when its links spread evenly over many modules.
func ParticipationCoefficient(g *graph.Graph, membership []int, weighted bool) ([]float64, error) {
	if err := checkGraph(g, weighted); err != nil {
		return nil, err
	}
	labels, k, err := compactMembership(membership, g.N)
	if err != nil {
		return nil, err
	}
	p := make([]float64, g.N)
	perModule := make([]float64, k)
	touched := make([]int, 0, 64)
	for i := 0; i < g.N; i++ {
		var ki float64
		for q := g.Offsets[i]; q < g.Offsets[i+1]; q++ {
			s := labels[g.Adj[q]]
			if perModule[s] == 0 {
				touched = append(touched, s)
			}
			w := edgeWeight(g, q, weighted)
			perModule[s] += w
			ki += w
		}
		if ki > 0 {
			var sum float64
			for _, s := range touched {
				f := perModule[s] / ki
				sum += f * f
			}
			p[i] = 1 - sum
		}
		for _, s := range touched {
			perModule[s] = 0
		}
		touched = touched[:0]
	}
	return p, nil
}

// WithinModuleDegreeZScore returns, for every node,
//
//	z_i = (κ_i − mean_{j∈s_i} κ_j) / σ_{s_i},
//
// where κ_i is the number (weighted: total weight) of i's links inside its own module s_i and
// the mean and the population standard deviation (denominator |s_i|, as bctpy's
// module_degree_zscore) run over the nodes of s_i (Guimerà & Amaral 2005, eq. 1). A module whose
// nodes all have the same κ (σ = 0) gives z = 0 for its nodes.
func WithinModuleDegreeZScore(g *graph.Graph, membership []int, weighted bool) ([]float64, error) {
	if err := checkGraph(g, weighted); err != nil {
		return nil, err
	}
	labels, k, err := compactMembership(membership, g.N)
	if err != nil {
		return nil, err
	}
	kappa := make([]float64, g.N)
	sum := make([]float64, k)
	count := make([]float64, k)
	for i := 0; i < g.N; i++ {
		s := labels[i]
		var inside float64
		for q := g.Offsets[i]; q < g.Offsets[i+1]; q++ {
			if labels[g.Adj[q]] == s {
				inside += edgeWeight(g, q, weighted)
			}
		}
		kappa[i] = inside
		sum[s] += inside
		count[s]++
	}
	mean := make([]float64, k)
	for s := range mean {
		mean[s] = sum[s] / count[s]
	}
	ss := make([]float64, k)
	for i, x := range kappa {
		d := x - mean[labels[i]]
		ss[labels[i]] += d * d
	}
	z := make([]float64, g.N)
	for i, x := range kappa {
		s := labels[i]
		sd := math.Sqrt(ss[s] / count[s])
		if sd > 0 {
			z[i] = (x - mean[s]) / sd
		}
	}
	return z, nil
}

// Role is a node's place in the modular structure (Guimerà & Amaral 2005, Fig. 2).
type Role int

const (
	// UltraPeripheral non-hub: nearly all links inside its module (P ≤ 0.05).
	UltraPeripheral Role = iota + 1
	// Peripheral non-hub: most links inside its module (0.05 < P ≤ 0.62).
	Peripheral
	// NonHubConnector: many links to other modules (0.62 < P ≤ 0.80).
	NonHubConnector
	// NonHubKinless: links spread homogeneously over all modules (P > 0.80).
	NonHubKinless
	// ProvincialHub: hub with most links inside its module (P ≤ 0.30).
	ProvincialHub
	// ConnectorHub: hub with many links to other modules (0.30 < P ≤ 0.75).
	ConnectorHub
	// KinlessHub: hub with links spread over all modules (P > 0.75).
	KinlessHub
)

var roleNames = [...]string{"", "ultra-peripheral", "peripheral", "non-hub connector", "non-hub kinless",
	"provincial hub", "connector hub", "kinless hub"}

func (r Role) String() string {
	if r >= UltraPeripheral && r <= KinlessHub {
		return roleNames[r]
	}
	return fmt.Sprintf("Role(%d)", int(r))
}

// IsHub reports whether the role is one of the three hub roles.
func (r Role) IsHub() bool { return r >= ProvincialHub && r <= KinlessHub }

// RoleThresholds are the boundaries of the role map. DefaultRoleThresholds are Guimerà &
// Amaral's (2005): hubs have z ≥ 2.5; non-hubs split at P = 0.05, 0.62, 0.80; hubs at
// P = 0.30, 0.75.
type RoleThresholds struct {
	HubZ            float64
	UltraPeripheral float64
	Peripheral      float64
	NonHubConnector float64
	ProvincialHub   float64
	ConnectorHub    float64
}

// DefaultRoleThresholds are Guimerà & Amaral's published boundaries.
var DefaultRoleThresholds = RoleThresholds{HubZ: 2.5, UltraPeripheral: 0.05, Peripheral: 0.62,
	NonHubConnector: 0.80, ProvincialHub: 0.30, ConnectorHub: 0.75}

// ClassifyRoles assigns each node its role from its within-module degree z-score and
// participation coefficient. isHub, when not nil, replaces the z ≥ HubZ hub criterion with the
// pipeline's own hub definition (e.g. degree > mean + 1 SD, Wang et al. 2013); the P
// boundaries then still separate provincial, connector and kinless hubs.
func ClassifyRoles(z, p []float64, isHub []bool, t RoleThresholds) ([]Role, error) {
	if len(z) != len(p) {
		return nil, fmt.Errorf("community: %d z-scores but %d participation coefficients", len(z), len(p))
	}
	if isHub != nil && len(isHub) != len(p) {
		return nil, fmt.Errorf("community: hub flags for %d nodes but %d participation coefficients", len(isHub), len(p))
	}
	roles := make([]Role, len(p))
	for i := range p {
		hub := z[i] >= t.HubZ
		if isHub != nil {
			hub = isHub[i]
		}
		switch {
		case hub && p[i] <= t.ProvincialHub:
			roles[i] = ProvincialHub
		case hub && p[i] <= t.ConnectorHub:
			roles[i] = ConnectorHub
		case hub:
			roles[i] = KinlessHub
		case p[i] <= t.UltraPeripheral:
			roles[i] = UltraPeripheral
		case p[i] <= t.Peripheral:
			roles[i] = Peripheral
		case p[i] <= t.NonHubConnector:
			roles[i] = NonHubConnector
		default:
			roles[i] = NonHubKinless
		}
	}
	return roles, nil
}
