package sweep

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/hubscope/hubscope/helper/graph"
	"github.com/hubscope/hubscope/helper/graph/community"
	"github.com/hubscope/hubscope/helper/network"
	"github.com/hubscope/hubscope/helper/progress"
	"github.com/hubscope/hubscope/ipc/schema"
)

// Point is the network at one threshold of a sweep and its measures (schema.SweepPoint).
type Point = schema.SweepPoint

// Measures are the columns of sweep.tsv after the threshold, in order, with their Point field
// (schema.SweepMeasures).
var Measures = schema.SweepMeasures

// Result is a whole sweep: sweep.json in the bundle (schema.Sweep), with the per-node results
// the bundle's maps need.
type Result struct {
	schema.Sweep
	// HubStability is, per node, the share of the thresholds at which it is a hub
	// (degree > mean + HubSD·SD of that threshold's network); hub_stability.nii.gz.
	HubStability []float32 `json:"-"`
	// Degrees holds every threshold's degrees (Points order) for per-threshold nodal tables.
	Degrees [][]int `json:"-"`
}

// Options choose the costlier measures.
type Options struct {
	HubSD           float64 // hub rule: degree > mean + HubSD·SD (Wang et al.: 1)
	Clustering      bool    // mean clustering coefficient (triangle counts)
	Paths           bool    // characteristic path length and global efficiency (BFS from every node)
	LocalEfficiency bool    // mean local efficiency
	// Modules, when set, finds each threshold's modules by Leiden with these options (the
	// full metrics' own, so that a threshold's Q equals metrics.json's Q of that network).
	Modules *community.LeidenOptions
	// SmallWorld, when set, compares each threshold's network with its own degree-preserving
	// random networks for γ, λ and σ (the full metrics' random-network settings: their count,
	// swaps, seed and path sample). It needs Clustering and Paths (C_p and the exact L_p);
	// its Accelerator, when nil, is Options.Accelerator. Costly: Random networks per threshold.
	SmallWorld *graph.SmallWorldOptions
	// Accelerator counts the triangles and runs the searches (nil: CPU).
	Accelerator graph.Accelerator
	// Loosest, when set, holds Q and the small-world comparison the full metrics have already
	// made of the loosest network (the bundle's own, built with the same settings): they are
	// taken for the loosest threshold instead of being searched and rewired again.
	Loosest *Known
}

// Known are measures of the sweep's loosest network taken elsewhere (nil: not taken).
type Known struct {
	Modularity *float64
	SmallWorld *graph.SmallWorldResult
}

// Analyse measures the sweep's networks, each a filter of loose (built at spec.Loosest()).
func Analyse(ctx context.Context, loose *network.Network, spec Spec, opt Options, rep progress.Reporter) (*Result, error) {
	rep = progress.OrDiscard(rep)
	res := &Result{Sweep: schema.Sweep{Spec: schema.SweepSpec(spec), HubSD: opt.HubSD}, HubStability: make([]float32, loose.N)}
	var swo graph.SmallWorldOptions
	if opt.SmallWorld != nil {
		if !opt.Clustering || !opt.Paths {
			return nil, errors.New("sweep: small-world measures need the clustering and the path measures")
		}
		swo = *opt.SmallWorld
		if swo.Accelerator == nil {
			swo.Accelerator = opt.Accelerator
		}
		// graph's defaults, said in sweep.json as used.
		if swo.Random <= 0 {
			swo.Random = 15
		}
		if swo.SwapsPerEdge <= 0 {
			swo.SwapsPerEdge = 10
		}
		if swo.PathSources == 0 {
			swo.PathSources = graph.DefaultPathSources
		}
		res.SmallWorld = &schema.SweepSmallWorld{RandomNetworks: swo.Random, SwapsPerEdge: swo.SwapsPerEdge,
			PathSources: max(swo.PathSources, -1), Seed: swo.Seed}
	}
	hubCount := make([]int, loose.N)
	var rank []int64
	for _, t := range spec.Values {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var nw *network.Network
		var weakest float64
		var err error
		if spec.Kind == KindDensity {
			if rank == nil {
				rank = DensityRanks(loose) // once for the whole sweep
			}
			nw, weakest, err = filterDensity(loose, rank, t)
		} else {
			nw, weakest, err = Filter(loose, spec.Kind, t)
		}
		if err != nil {
			return nil, err
		}
		g := graph.FromNetwork(nw)
		p := Point{Threshold: t, Edges: nw.Edges(), Density: nw.Density()}
		if !math.IsInf(weakest, 0) {
			p.WeakestValue = &weakest
		}
		deg := graph.Degrees(g)
		mu, sd, _ := graph.DegreeMoments(deg)
		p.MeanDegree = mu
		for i, k := range deg {
			if k == 0 {
				p.IsolatedNodes++
			}
			if float64(k) > mu+opt.HubSD*sd {
				p.Hubs++
				hubCount[i]++
			}
		}
		p.Components, _, p.LargestComponentShare = graph.LargestComponent(g)
		if opt.Clustering {
			if p.ClusteringCoefficient, err = graph.MeanClusteringWith(ctx, opt.Accelerator, g); err != nil {
				return nil, err
			}
		}
		if opt.Paths {
			ps, err := graph.ShortestPathsWith(ctx, opt.Accelerator, g, progress.Discard)
			if err != nil {
				return nil, err
			}
			p.CharacteristicPath, p.GlobalEfficiency = ps.CharacteristicPathLength, ps.GlobalEfficiency
		}
		if opt.LocalEfficiency {
			le, err := graph.LocalEfficienciesWith(ctx, opt.Accelerator, g, progress.Discard)
			if err != nil {
				return nil, err
			}
			v := graph.Mean(le)
			p.MeanLocalEfficiency = &v
		}
		if r, ok := graph.DegreeAssortativity(g); ok {
			p.Assortativity = &r
		}
		var known Known
		if opt.Loosest != nil && t == spec.Loosest() {
			known = *opt.Loosest
		}
		switch {
		case opt.Modules == nil || g.Edges() == 0: // Q divides by twice the number of edges
		case known.Modularity != nil:
			p.Modularity = known.Modularity
		default:
			mod, err := community.LeidenModules(ctx, g, *opt.Modules, nil)
			if err != nil {
				return nil, err
			}
			p.Modularity = &mod.Q
		}
		if opt.SmallWorld != nil && g.Edges() >= 2 && !math.IsNaN(p.CharacteristicPath) {
			sw := known.SmallWorld
			if sw == nil {
				r, err := graph.SmallWorldOf(ctx, g, p.ClusteringCoefficient, p.CharacteristicPath, swo, nil)
				if err != nil {
					return nil, err
				}
				sw = &r
			}
			// γ needs triangles in the random networks and λ paths in both; σ needs both.
			if sw.RandomClusteringMean > 0 {
				p.Gamma = &sw.Gamma
			}
			if sw.RandomPathLengthMean > 0 && sw.CharacteristicPathLength > 0 {
				p.Lambda = &sw.Lambda
				if p.Gamma != nil {
					p.Sigma = &sw.Sigma
				}
			}
		}
		res.Points = append(res.Points, p)
		res.Degrees = append(res.Degrees, deg)
		note := fmt.Sprintf("sweep %s %g: %d edges, density %.4g %%, %d hubs", spec.Kind, t, p.Edges, 100*p.Density, p.Hubs)
		if p.Modularity != nil {
			note += fmt.Sprintf(", Q %.4g", *p.Modularity)
		}
		if p.Sigma != nil {
			note += fmt.Sprintf(", σ %.4g", *p.Sigma)
		}
		rep.Note(note)
	}
	for i, c := range hubCount {
		res.HubStability[i] = float32(float64(c) / float64(len(spec.Values)))
	}
	res.AUC = map[string]float64{}
	for _, m := range Measures {
		if (m.Key == "characteristic_path_length" || m.Key == "global_efficiency") && !opt.Paths ||
			m.Key == "clustering_coefficient" && !opt.Clustering {
			continue
		}
		ys := make([]float64, len(res.Points))
		ok := true
		for i := range res.Points {
			ys[i], ok = m.Get(&res.Points[i])
			if !ok {
				break
			}
		}
		if ok {
			res.AUC[m.Key] = Trapezoid(spec.Values, ys)
		}
	}
	return res, nil
}

// DegreeMapPrefix starts the name of a threshold's degree map in a bundle (DegreeMap).
const DegreeMapPrefix = "sweep_degree_"

// DegreeMap names the degree map of threshold t: sweep_degree_<t> (t in shortest form).
func DegreeMap(t float64) string { return DegreeMapPrefix + strconv.FormatFloat(t, 'g', -1, 64) }

// Trapezoid is Σ (x_{i+1} − x_i)(y_i + y_{i+1})/2 over increasing x (numpy.trapezoid(y, x)).
func Trapezoid(x, y []float64) float64 {
	var s float64
	for i := 1; i < len(x); i++ {
		s += (x[i] - x[i-1]) * (y[i] + y[i-1]) / 2
	}
	return s
}
