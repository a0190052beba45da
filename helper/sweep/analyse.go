package sweep

import (
	"context"
	"fmt"
	"math"
	"strconv"

	"github.com/hubscope/hubscope/helper/graph"
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
	// Accelerator counts the triangles and runs the searches (nil: CPU).
	Accelerator graph.Accelerator
}

// Analyse measures the sweep's networks, each a filter of loose (built at spec.Loosest()).
func Analyse(ctx context.Context, loose *network.Network, spec Spec, opt Options, rep progress.Reporter) (*Result, error) {
	rep = progress.OrDiscard(rep)
	res := &Result{Sweep: schema.Sweep{Spec: schema.SweepSpec(spec), HubSD: opt.HubSD}, HubStability: make([]float32, loose.N)}
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
		res.Points = append(res.Points, p)
		res.Degrees = append(res.Degrees, deg)
		rep.Note(fmt.Sprintf("sweep %s %g: %d edges, density %.4g %%, %d hubs", spec.Kind, t, p.Edges, 100*p.Density, p.Hubs))
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
