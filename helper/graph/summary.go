package graph

import (
	"context"
	"errors"
	"math"
	"sync"

	"github.com/hubscope/hubscope/helper/internal/trace"
	"github.com/hubscope/hubscope/helper/progress"
	"github.com/hubscope/hubscope/ipc/schema"
)

// Global is schema.Global (the bundle's file schemas live in package schema).
type Global = schema.Global

// GlobalOptions chooses the optional, costlier parts of GlobalMeasures.
type GlobalOptions struct {
	LocalEfficiency    bool               // mean local efficiency (O(Σ k_i · E_i))
	SmallWorld         *SmallWorldOptions // nil: no random networks
	DegreeDistribution bool               // log-binned histogram and power-law fits
	PowerLaw           PowerLawOptions
	// Clustering, when set, holds every node's C_i as ClusteringCoefficients (or NodalMeasures)
	// already computed them; C_p is their mean and the triangles are not counted again.
	Clustering []float64
	// WeightedClustering, likewise, holds every node's Onnela clustering when already computed.
	WeightedClustering []float64
	// Accelerator runs the triangle counts and the exact searches, and the random networks
	// unless SmallWorld names its own (nil: CPU).
	Accelerator Accelerator
}

// GlobalMeasures computes the Global summary of g. Progress goes through rep stage by stage;
// ctx cancels any stage.
func GlobalMeasures(ctx context.Context, g *Graph, opt GlobalOptions, rep progress.Reporter) (Global, error) {
	rep = progress.OrDiscard(rep)
	var s Global
	if g == nil {
		return s, errors.New("graph: global measures of a nil graph")
	}
	s.Nodes, s.Edges, s.Density = g.N, g.Edges(), g.Density()
	deg := Degrees(g)
	s.MeanDegree, s.DegreeSD, s.MaxDegree = DegreeMoments(deg)
	for _, k := range deg {
		if k == 0 {
			s.IsolatedNodes++
		}
	}
	s.HubCount = len(Hubs(deg))
	if g.N > 0 {
		s.MeanStrength = mean(Strengths(g))
	}
	s.Components, s.LargestComponentSize, s.LargestComponentShare = LargestComponent(g)

	rep.Start("clustering", int64(g.N))
	var cp float64
	if opt.Clustering != nil {
		if len(opt.Clustering) != g.N {
			return s, errors.New("graph: global measures: clustering given for a different number of nodes")
		}
		cp = mean(opt.Clustering)
	} else {
		var err error
		t, err := accelOr(opt.Accelerator).Triangles(ctx, g)
		if err != nil {
			return s, err
		}
		cp = meanClusteringFromTriangles(g, t)
	}
	s.ClusteringCoefficient = cp
	if g.Weights != nil && g.N > 0 {
		wc := opt.WeightedClustering
		if len(wc) != g.N {
			var err error
			if wc, err = WeightedClusteringCoefficients(ctx, g); err != nil {
				return s, err
			}
		}
		m := mean(wc)
		s.WeightedClusteringCoefficient = &m
	}
	rep.Add(int64(g.N))

	// With an Accelerator the exact searches run alongside the random networks (both mostly
	// on the device; the random networks' host work overlaps); on the CPU they come first.
	var ps PathStats
	var psErr error
	var searching sync.WaitGroup
	searching.Add(1)
	search := func() {
		defer searching.Done()
		defer trace.Span("exact shortest paths")()
		if opt.Accelerator == nil {
			ps, psErr = ShortestPaths(ctx, g, rep)
		} else {
			ps, psErr = opt.Accelerator.ShortestPaths(ctx, g)
		}
	}
	if opt.Accelerator == nil {
		search()
		if psErr != nil {
			return s, psErr
		}
	} else {
		go search()
		defer searching.Wait()
	}
	paths := func() (float64, error) {
		searching.Wait()
		return ps.CharacteristicPathLength, psErr
	}

	if opt.LocalEfficiency && g.N > 0 {
		le, err := LocalEfficienciesWith(ctx, opt.Accelerator, g, rep)
		if err != nil {
			return s, err
		}
		m := mean(le)
		s.LocalEfficiency = &m
	}
	if r, ok := DegreeAssortativity(g); ok {
		s.Assortativity = &r
	}
	// The degree fits need only the degrees: they run alongside the random networks.
	var dd DegreeDistribution
	var ddErr error
	var fitting sync.WaitGroup
	fitting.Add(1)
	go func() {
		defer fitting.Done()
		if opt.DegreeDistribution {
			dd, ddErr = FitDegreeDistribution(deg, opt.PowerLaw)
		}
	}()
	defer fitting.Wait()
	if opt.SmallWorld != nil {
		swo := *opt.SmallWorld
		if swo.Accelerator == nil {
			swo.Accelerator = opt.Accelerator
		}
		sw, err := smallWorld(ctx, g, swo, rep, &measured{cp, paths})
		if err != nil {
			return s, err
		}
		s.SmallWorld = &sw
	}
	if _, err := paths(); err != nil {
		return s, err
	}
	s.CharacteristicPathLength, s.GlobalEfficiency = ps.CharacteristicPathLength, ps.GlobalEfficiency
	s.ConnectedPairs, s.Diameter = ps.ConnectedPairs, ps.Diameter
	fitting.Wait()
	if opt.DegreeDistribution {
		err := ddErr
		var fe *FitError
		if errors.As(err, &fe) {
			// Too few distinct degrees for a fit is a property of the graph, not a failure.
			s.DegreeDistributionUndefined = fe.Why
		} else if err != nil {
			return s, err
		} else {
			s.DegreeDistribution = &dd
		}
	}
	return s, nil
}

// DegreeMoments returns the mean, the population SD (the hub rule's σ) and the maximum of
// the degrees.
func DegreeMoments(deg []int) (m, sd float64, kmax int) {
	if len(deg) == 0 {
		return 0, 0, 0
	}
	var s float64
	for _, k := range deg {
		s += float64(k)
		kmax = max(kmax, k)
	}
	m = s / float64(len(deg))
	var ss float64
	for _, k := range deg {
		ss += (float64(k) - m) * (float64(k) - m)
	}
	return m, math.Sqrt(ss / float64(len(deg))), kmax
}

// DegreeZScores returns (k_i − ⟨k⟩)/σ_k with the population SD; all zeros when σ_k = 0.
func DegreeZScores(deg []int) []float64 {
	m, sd, _ := DegreeMoments(deg)
	z := make([]float64, len(deg))
	if sd == 0 {
		return z
	}
	for i, k := range deg {
		z[i] = (float64(k) - m) / sd
	}
	return z
}

// Hubs returns the hub nodes, degree > mean + 1 SD (Wang et al. 2013; population SD), in
// increasing node order.
func Hubs(deg []int) []int32 {
	m, sd, _ := DegreeMoments(deg)
	var h []int32
	for i, k := range deg {
		if float64(k) > m+sd {
			h = append(h, int32(i))
		}
	}
	return h
}

// Nodal gathers per-node measures, each indexed by node (nil when not asked for).
type Nodal struct {
	Degree                []int
	DegreeZ               []float64
	Strength              []float64
	Clustering            []float64
	WeightedClustering    []float64 // Onnela; nil for binary graphs
	LocalEfficiency       []float64
	Betweenness           []float64 // igraph convention: each unordered pair once
	EigenvectorCentrality []float64 // max-normalised (igraph scale=True)
}

// NodalOptions selects the costly nodal measures.
type NodalOptions struct {
	LocalEfficiency bool
	Betweenness     bool // O(N·E)
	Eigenvector     bool
	// Accelerator counts the triangles behind the clustering coefficients and, when it is a
	// LocalEfficiencyAccelerator or a PowerIterator, computes the local efficiencies or runs
	// the eigenvector centrality's power iteration (nil: CPU).
	Accelerator Accelerator
}

// NodalMeasures computes per-node measures; the cheap ones always, the others as asked.
func NodalMeasures(ctx context.Context, g *Graph, opt NodalOptions, rep progress.Reporter) (Nodal, error) {
	rep = progress.OrDiscard(rep)
	var nd Nodal
	if g == nil {
		return nd, errors.New("graph: nodal measures of a nil graph")
	}
	var err error
	nd.Degree = Degrees(g)
	nd.DegreeZ = DegreeZScores(nd.Degree)
	nd.Strength = Strengths(g)
	switch {
	case opt.Accelerator == nil && g.Weights != nil:
		// Both clusterings from one listing of the triangles (docs/algorithms.md, "Weighted clustering").
		nd.Clustering, nd.WeightedClustering, err = clusteringBoth(ctx, g)
	case opt.Accelerator == nil:
		nd.Clustering, err = ClusteringCoefficients(ctx, g)
	default:
		nd.Clustering, err = clusteringWith(ctx, opt.Accelerator, g)
	}
	if err != nil {
		return nd, err
	}
	if g.Weights != nil && nd.WeightedClustering == nil {
		if nd.WeightedClustering, err = WeightedClusteringCoefficients(ctx, g); err != nil {
			return nd, err
		}
	}
	if opt.LocalEfficiency {
		if nd.LocalEfficiency, err = LocalEfficienciesWith(ctx, opt.Accelerator, g, rep); err != nil {
			return nd, err
		}
	}
	if opt.Betweenness {
		if nd.Betweenness, err = Betweenness(ctx, g, rep); err != nil {
			return nd, err
		}
	}
	if opt.Eigenvector {
		nd.EigenvectorCentrality, _, err = EigenvectorCentrality(ctx, g, EigenvectorOptions{Accelerator: opt.Accelerator})
		switch {
		case errors.Is(err, ErrNotConverged):
			// The last iterate still ranks nodes usefully; say how far it is from converged.
			rep.Note("eigenvector centrality: " + err.Error())
		case err != nil:
			return nd, err
		}
	}
	return nd, nil
}
