// Package sweep analyses one network over a range of thresholds, as the field reports its
// measures (Wang et al. 2009: six r thresholds 0.45 … 0.70; GRETNA, Wang et al. 2015: a range
// of sparsities and the area under each measure's curve). The networks of a sweep are nested: the driver builds the loosest one in
// a single correlation pass and every tighter network is a filter of its edges, so a sweep of
// any length costs one pass over the blocks. At each threshold it measures the network, it
// integrates every measure's curve by the trapezoid rule (GRETNA's area under the curve) and it
// counts, per node, the share of thresholds at which the node is a hub.
package sweep

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/hubscope/hubscope/helper/fc"
	"github.com/hubscope/hubscope/helper/network"
)

// Kinds of sweep.
const (
	KindR       = "r"       // strength thresholds: keep pairs with value > t
	KindDensity = "density" // exact densities: keep the round(d·N(N−1)/2) strongest pairs
)

// MaxThresholds bounds a sweep's length (each threshold costs a full set of measures).
const MaxThresholds = 200

// Spec is a parsed --sweep value: the kind and its thresholds in increasing order.
type Spec struct {
	Kind   string    `json:"kind"`
	Values []float64 `json:"values"`
}

// Parse reads "r=LO:HI:STEP", "density=LO:HI:STEP" or a list "r=0.45,0.5,0.6". Ranges include
// both ends (HI is kept when it lies within 1e-9·STEP of a step, as 0.45:0.70:0.05 must give
// six values despite binary rounding); values are rounded to 12 significant digits so that
// 0.45+5·0.05 prints as 0.7.
func Parse(s string) (Spec, error) {
	kind, rest, ok := strings.Cut(strings.TrimSpace(s), "=")
	if !ok {
		return Spec{}, fmt.Errorf("sweep %q: want KIND=LO:HI:STEP or KIND=V1,V2,… with KIND r or density", s)
	}
	kind = strings.ToLower(strings.TrimSpace(kind))
	if kind != KindR && kind != KindDensity {
		return Spec{}, fmt.Errorf("sweep %q: unknown kind %q (want r or density)", s, kind)
	}
	var vals []float64
	if strings.Contains(rest, ":") {
		parts := strings.Split(rest, ":")
		if len(parts) != 3 {
			return Spec{}, fmt.Errorf("sweep %q: a range is LO:HI:STEP", s)
		}
		var f [3]float64
		for i, p := range parts {
			v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return Spec{}, fmt.Errorf("sweep %q: %q is not a number", s, p)
			}
			f[i] = v
		}
		lo, hi, step := f[0], f[1], f[2]
		if !(step > 0) || hi < lo {
			return Spec{}, fmt.Errorf("sweep %q: want LO ≤ HI and STEP > 0", s)
		}
		n := math.Floor((hi-lo)/step + 1e-9)
		if n+1 > MaxThresholds {
			return Spec{}, fmt.Errorf("sweep %q: %g thresholds; at most %d", s, n+1, MaxThresholds)
		}
		for i := 0; i <= int(n); i++ {
			vals = append(vals, round12(lo+float64(i)*step))
		}
	} else {
		for _, p := range strings.Split(rest, ",") {
			v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return Spec{}, fmt.Errorf("sweep %q: %q is not a number", s, p)
			}
			vals = append(vals, v)
		}
		if len(vals) > MaxThresholds {
			return Spec{}, fmt.Errorf("sweep %q: %d thresholds; at most %d", s, len(vals), MaxThresholds)
		}
	}
	sort.Float64s(vals)
	for i := 1; i < len(vals); i++ {
		if vals[i] == vals[i-1] {
			return Spec{}, fmt.Errorf("sweep %q: threshold %g given twice", s, vals[i])
		}
	}
	if len(vals) < 2 {
		return Spec{}, fmt.Errorf("sweep %q: a sweep needs at least two thresholds", s)
	}
	for _, v := range vals {
		switch {
		case kind == KindR && !(v > -1 && v < 1):
			return Spec{}, fmt.Errorf("sweep %q: r threshold %g outside (-1, 1)", s, v)
		case kind == KindDensity && !(v > 0 && v <= 1):
			return Spec{}, fmt.Errorf("sweep %q: density %g outside (0, 1]", s, v)
		}
	}
	return Spec{Kind: kind, Values: vals}, nil
}

func round12(v float64) float64 {
	f, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 12, 64), 64)
	return f
}

// String is the canonical form, a list (parsing it gives the same Spec).
func (s Spec) String() string {
	p := make([]string, len(s.Values))
	for i, v := range s.Values {
		p[i] = strconv.FormatFloat(v, 'g', -1, 64)
	}
	return s.Kind + "=" + strings.Join(p, ",")
}

// Loosest is the threshold whose network holds every other one: the smallest r, the largest
// density.
func (s Spec) Loosest() float64 {
	if s.Kind == KindR {
		return s.Values[0]
	}
	return s.Values[len(s.Values)-1]
}

// FC sets cfg's threshold to the loosest network of the sweep (the one correlation pass).
func (s Spec) FC(cfg *fc.Config) {
	if s.Kind == KindR {
		cfg.Mode, cfg.Threshold = fc.Strength, s.Loosest()
	} else {
		cfg.Mode, cfg.Density = fc.Density, s.Loosest()
	}
}

// Filter returns the network at threshold t of kind from loose, the loosest network of the
// sweep (built by fc.Build with Spec.FC). For r it keeps the edges fc's strength mode keeps,
// value > t compared as fc.Op.Keep does; for density the k = round(t·N(N−1)/2) strongest edges
// ordered as fc's density mode orders them (value descending, then the smaller (i, j)), so
// the result equals building the network at t alone. It also returns the weakest kept value.
func Filter(loose *network.Network, kind string, t float64) (*network.Network, float64, error) {
	n := loose.N
	switch kind {
	case KindR:
		op := fc.Op{Kind: fc.OpEdges, Threshold: t}
		nw := &network.Network{N: n, Indptr: make([]uint64, n+1)}
		weakest := math.Inf(1)
		for i := 0; i < n; i++ {
			cols, ws := loose.Row(i)
			for p, w := range ws {
				if op.Keep(w) {
					nw.Indices = append(nw.Indices, cols[p])
					nw.Weights = append(nw.Weights, w)
					weakest = math.Min(weakest, float64(w))
				}
			}
			nw.Indptr[i+1] = uint64(len(nw.Indices))
		}
		return nw, weakest, nil
	case KindDensity:
		return filterDensity(loose, DensityRanks(loose), t)
	}
	return nil, 0, errors.New("sweep: unknown kind " + kind)
}

// DensityRanks ranks the loose network's edges as fc's density mode orders pairs: value
// descending, then the smaller (i, j) (edges are stored in (i, j) order, so a stable sort by
// value alone breaks the ties). rank[p] is edge p's position; a density keeps ranks < k.
func DensityRanks(loose *network.Network) []int64 {
	e := loose.Edges()
	order := make([]int64, e)
	for p := range order {
		order[p] = int64(p)
	}
	w := loose.Weights
	slices.SortStableFunc(order, func(a, b int64) int {
		switch {
		case w[a] > w[b]:
			return -1
		case w[a] < w[b]:
			return 1
		}
		return 0
	})
	rank := make([]int64, e)
	for r, p := range order {
		rank[p] = int64(r)
	}
	return rank
}

// filterDensity keeps the k = round(t·N(N−1)/2) edges of rank < k.
func filterDensity(loose *network.Network, rank []int64, t float64) (*network.Network, float64, error) {
	n := loose.N
	k := int64(math.Round(t * float64(n) * float64(n-1) / 2))
	if e := loose.Edges(); k > e {
		return nil, 0, fmt.Errorf("sweep: density %g needs %d edges but the loosest network holds %d", t, k, e)
	}
	nw := &network.Network{N: n, Indptr: make([]uint64, n+1), Indices: make([]uint32, 0, k), Weights: make([]float32, 0, k)}
	weakest, weakRank := math.Inf(1), int64(-1)
	for i := 0; i < n; i++ {
		for p := loose.Indptr[i]; p < loose.Indptr[i+1]; p++ {
			if rank[p] < k {
				nw.Indices = append(nw.Indices, loose.Indices[p])
				nw.Weights = append(nw.Weights, loose.Weights[p])
				if rank[p] > weakRank {
					weakRank, weakest = rank[p], float64(loose.Weights[p])
				}
			}
		}
		nw.Indptr[i+1] = uint64(len(nw.Indices))
	}
	return nw, weakest, nil
}
