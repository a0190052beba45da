package community

import (
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/hubscope/hubscope/helper/graph"
)

// RelabelBySize renumbers modules by decreasing size, 1 = largest, so that module maps stay
// stable between runs and methods (0 is left for the background of a map). Modules of equal
// size are ordered by their lowest node index. Negative labels (unassigned nodes) map to 0.
func RelabelBySize(membership []int) []int {
	type module struct{ size, first int }
	index := make(map[int]int)
	var mods []module
	for i, c := range membership {
		if c < 0 {
			continue
		}
		id, ok := index[c]
		if !ok {
			id = len(mods)
			index[c] = id
			mods = append(mods, module{first: i})
		}
		mods[id].size++
	}
	order := make([]int, len(mods))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		ma, mb := mods[order[a]], mods[order[b]]
		if ma.size != mb.size {
			return ma.size > mb.size
		}
		return ma.first < mb.first
	})
	rank := make([]int, len(mods))
	for r, id := range order {
		rank[id] = r + 1
	}
	out := make([]int, len(membership))
	for i, c := range membership {
		if c >= 0 {
			out[i] = rank[index[c]]
		}
	}
	return out
}

// Summarize describes an arbitrary partition of g as a Modules value (canonical labels, sizes
// in decreasing order, Q with the given options).
func Summarize(method string, g *graph.Graph, membership []int, opts ModularityOptions) (*Modules, error) {
	if err := checkGraph(g, opts.Weighted); err != nil {
		return nil, err
	}
	if _, _, err := compactMembership(membership, g.N); err != nil {
		return nil, err
	}
	return newModules(method, g, membership, opts)
}

// NormalizedMutualInformation compares two partitions of the same nodes:
//
//	NMI(X, Y) = 2 I(X; Y) / (H(X) + H(Y)),
//
// the arithmetic-mean normalisation of scikit-learn's normalized_mutual_info_score and igraph's
// compare_communities(method="nmi") (Danon et al. 2005). It is 1 for identical partitions (up to
// relabelling) and when both are a single module, and near 0 for independent ones.
func NormalizedMutualInformation(a, b []int) (float64, error) {
	if len(a) != len(b) {
		return 0, fmt.Errorf("community: NMI of partitions of different lengths %d and %d", len(a), len(b))
	}
	n := len(a)
	if n == 0 {
		return 0, errors.New("community: NMI of empty partitions")
	}
	la, ka, err := compactMembership(a, n)
	if err != nil {
		return 0, fmt.Errorf("first partition: %w", err)
	}
	lb, kb, err := compactMembership(b, n)
	if err != nil {
		return 0, fmt.Errorf("second partition: %w", err)
	}
	ca := make([]float64, ka)
	cb := make([]float64, kb)
	joint := make(map[[2]int]float64)
	for i := 0; i < n; i++ {
		ca[la[i]]++
		cb[lb[i]]++
		joint[[2]int{la[i], lb[i]}]++
	}
	N := float64(n)
	entropy := func(c []float64) float64 {
		var h float64
		for _, x := range c {
			if x > 0 {
				p := x / N
				h -= p * math.Log(p)
			}
		}
		return h
	}
	ha, hb := entropy(ca), entropy(cb)
	if ha == 0 && hb == 0 {
		return 1, nil
	}
	var mi float64
	for key, nab := range joint {
		// I = Σ p_ab log(p_ab / (p_a p_b)) = Σ (n_ab/N) log(N n_ab / (n_a n_b)).
		mi += nab / N * math.Log(N*nab/(ca[key[0]]*cb[key[1]]))
	}
	nmi := 2 * mi / (ha + hb)
	return math.Max(0, math.Min(1, nmi)), nil
}

// ModularityZScore compares an observed Q with the Q values of random networks (degree-
// preserving rewirings run through the same module finder):
//
//	z = (Q − mean(Q_rand)) / SD(Q_rand),
//
// with the sample standard deviation (denominator K − 1). It needs K ≥ 2 random values that
// are not all equal (to 1e-12 relative).
func ModularityZScore(observed float64, random []float64) (mean, sd, z float64, err error) {
	if len(random) < 2 {
		return 0, 0, 0, fmt.Errorf("community: modularity z-score needs at least 2 random networks, got %d", len(random))
	}
	for i, q := range random {
		if math.IsNaN(q) || math.IsInf(q, 0) {
			return 0, 0, 0, fmt.Errorf("community: Q of random network %d is %v", i, q)
		}
		mean += q
	}
	mean /= float64(len(random))
	var ss float64
	for _, q := range random {
		ss += (q - mean) * (q - mean)
	}
	sd = math.Sqrt(ss / float64(len(random)-1))
	// Equal values can leave a rounding-level spread; a z-score against it would be noise.
	if sd <= 1e-12*math.Abs(mean) {
		return mean, 0, 0, fmt.Errorf("community: the %d random networks all have Q = %v: z-score undefined", len(random), mean)
	}
	return mean, sd, (observed - mean) / sd, nil
}
