package pipeline

import (
	"context"
	"fmt"
	"github.com/hubscope/hubscope/helper/realign"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/hubscope/hubscope/helper/atlas"
	"github.com/hubscope/hubscope/helper/bundle"
	"github.com/hubscope/hubscope/helper/fc"
	"github.com/hubscope/hubscope/helper/graph"
	"github.com/hubscope/hubscope/helper/graph/community"
	"github.com/hubscope/hubscope/helper/internal/trace"
	"github.com/hubscope/hubscope/helper/network"
	"github.com/hubscope/hubscope/helper/nifti"
	"github.com/hubscope/hubscope/helper/norm"
	"github.com/hubscope/hubscope/helper/progress"
	"github.com/hubscope/hubscope/helper/scan"
	"github.com/hubscope/hubscope/helper/sweep"
	"github.com/hubscope/hubscope/ipc/schema"
	"github.com/hubscope/hubscope/ipc/settings"
)

// Metrics is metrics.json (schema.Metrics) with what a run keeps beside it: the cleaning
// report (metrics.json's "denoise"), the sweep and the normative comparison (files of their
// own) and the per-node results the bundle's tables need.
type Metrics struct {
	schema.Metrics
	// Sweep is the threshold sweep, when one was asked for (written as sweep.json).
	Sweep *sweep.Result `json:"-"`
	// Norm is the comparison with a normative cohort (norm_comparison.json in the bundle).
	Norm *norm.Result `json:"-"`

	// Per-node results the bundle's tables need; not part of metrics.json.
	undefined  map[string]string // reasons found while measuring (explainUndefined adds them)
	membership []int             // Leiden module of every node (nil without modules)
	degree     []int
	strength   []float64
	hubZ       []float64
	hubs       []int
	degreeFits func(io.Writer) error
}

// ScanInfo is schema.ScanInfo (the bundle's file schemas live in package schema).
type ScanInfo = schema.ScanInfo

// NetworkInfo is schema.NetworkInfo (the bundle's file schemas live in package schema).
type NetworkInfo = schema.NetworkInfo

// HubInfo is schema.HubInfo (the bundle's file schemas live in package schema).
type HubInfo = schema.HubInfo

// ModuleInfo is schema.ModuleInfo (the bundle's file schemas live in package schema).
type ModuleInfo = schema.ModuleInfo

// BasicGlobal is schema.BasicGlobal (the bundle's file schemas live in package schema).
type BasicGlobal = schema.BasicGlobal

func ptr[T any](v T) *T { return &v }

// computeMetrics measures the network. Results first: stage receives the hub table's data and
// each group of nodal maps as soon as they are computed (before the costly global measures
// and random networks); the maps returned are those not staged yet.
func computeMetrics(ctx context.Context, cfg Config, s *scan.Scan, nw *network.Network, fr *fc.Report, acc graph.Accelerator, rep progress.Reporter,
	stage func(*Metrics, []nodeMap) error) (*Metrics, []nodeMap, error) {
	// The local efficiency, the module searches and the global measures run side by side below:
	// their Start and Note calls reach the caller's reporter one at a time.
	rep = progress.Serialize(rep)
	trace.Printf("metrics start")
	g := graph.FromNetwork(nw)
	m := &Metrics{Metrics: schema.Metrics{
		Scan: ScanInfo{Path: s.Source, MaskRule: s.MaskRule, Nodes: s.N, TimePoints: s.L, TR: s.TR, Grid: s.Dims,
			MaskVoxels: s.Dropped.MaskVoxels, ZeroVariance: s.Dropped.ZeroVariance, NonFinite: s.Dropped.NonFinite},
		Network: NetworkInfo{Measure: fr.Measure.String(), Abs: fr.Abs, Mode: fr.Mode.String(),
			Threshold: fr.Threshold, ThresholdInclusive: fr.ThresholdInclusive, Edges: fr.Edges,
			Density: fr.Density, Isolated: fr.Isolated, LargestComponent: fr.LargestComponent,
			Backend: fr.Backend},
	}}
	if fr.Backend == "cuda" {
		m.Network.Device = fr.Device
	}
	if fr.Mode == fc.Significance {
		m.Network.Correction = fr.Correction.String()
	}
	m.degree = graph.Degrees(g)
	m.strength = graph.Strengths(g)
	m.Network.MeanDegree = 2 * float64(nw.Edges()) / float64(s.N)
	m.hubs, m.hubZ, m.Hubs = hubsByDegree(m.degree, cfg.HubSD)
	maps := []nodeMap{
		{"degree", toF32(m.degree), nifti.Int32},
		{"strength", f64to32(m.strength), nifti.Float32},
		{"hubs", hubMask(s.N, m.hubs), nifti.Uint8},
		{"hub_z", f64to32(m.hubZ), nifti.Float32},
	}
	if cfg.Metrics == settings.MetricsNone {
		return m, maps, nil
	}
	if err := stage(m, maps); err != nil {
		return nil, nil, err
	}
	maps = nil

	full := cfg.Metrics == settings.MetricsFull
	if g.Edges() == 0 {
		// Still a result: the measures that have a value without edges (C_p = 0 by igraph's
		// mode="zero", every node its own component, E_glob = 0) are written, the rest are
		// null or absent with their reason (explainUndefined).
		rep.Note("the network has no edges: modules, path length, assortativity and small-world measures are undefined")
		m.why("modules", "the network has no edges: modularity divides by twice the number of edges")
		if !full {
			b := &BasicGlobal{}
			b.Components, b.LargestComponentSize, b.LargestComponentShare = graph.LargestComponent(g)
			m.GlobalBasic = b
			return m, maps, nil
		}
		gl, err := graph.GlobalMeasures(ctx, g, graph.GlobalOptions{}, rep)
		if err != nil {
			return nil, nil, err
		}
		// L_p is a mean over connected pairs; there are none (igraph gives NaN, the Brain
		// Connectivity Toolbox Inf): null with its reason, not 0.
		gl.CharacteristicPathLength = math.NaN()
		m.Global = &gl
		m.why("global.small_world", "the network has no edges: there is nothing to rewire into random networks")
		m.why("global.degree_distribution", "the network has no edges: every degree is 0")
		return m, maps, nil
	}
	// The global measures and the random-network baselines need only the graph. With a device
	// accelerator they start first and run alongside everything else: their rewiring and
	// searches on the device, their Leiden and the degree fits on host cores. On the CPU alone
	// they follow the modules, whose maps are staged first, and reuse the nodal clustering.
	var nd graph.Nodal
	var global func() (graph.Global, []float64, error)
	if full {
		if cfg.Random > 0 && g.Edges() < 2 {
			m.why("global.small_world", fmt.Sprintf("a degree-preserving random network needs at least 2 edges to swap; this network has %d", g.Edges()))
		}
		global = func() (graph.Global, []float64, error) { return globalMeasures(ctx, cfg, g, nd, acc, rep) }
		if acc != nil {
			var stop func()
			global, stop = background(ctx, func(ctx context.Context) (graph.Global, []float64, error) {
				defer trace.Span("global measures and random networks")()
				lane, end := progress.Lane(rep) // its stages shown beside the others'
				gl, q, err := globalMeasures(ctx, cfg, g, graph.Nodal{}, acc, lane)
				end(err) // a failed stage is shown failed, not complete
				return gl, q, err
			})
			defer stop()
		}
	}
	// The observed network's Leiden needs only the graph too. With a device it is the longest
	// chain on host cores (the random networks' Leiden runs beside it, one per core), so it
	// starts now, before the nodal measures, instead of queueing behind them; its maps are
	// staged after the nodal ones all the same. On the CPU alone it keeps its place below.
	observedLeiden := func() (*community.Modules, []float64, error) {
		mod, err := community.LeidenModules(ctx, g, leidenOptions(cfg), rep)
		return mod, nil, err
	}
	if acc != nil {
		var stop func()
		observedLeiden, stop = background(ctx, func(ctx context.Context) (*community.Modules, []float64, error) {
			defer trace.Span("observed network: Leiden")()
			lane, end := progress.Lane(rep)
			mod, err := community.LeidenModules(ctx, g, leidenOptions(cfg), lane)
			end(err)
			return mod, nil, err
		})
		defer stop()
	}
	rep.Start("nodal measures", 0)
	endNodal := trace.Span("nodal measures")
	// Local efficiency, by far the costliest nodal measure, is not part of this first group: the
	// clustering and eigenvector maps are staged without waiting for it (docs/algorithms.md,
	// "Results first").
	nd, err := graph.NodalMeasures(ctx, g, graph.NodalOptions{Eigenvector: full, Betweenness: cfg.Betweenness, Accelerator: acc}, rep)
	endNodal()
	if err != nil {
		return nil, nil, err
	}
	maps = append(maps, nodeMap{"clustering", f64to32(nd.Clustering), nifti.Float32})
	for _, opt := range []struct {
		name string
		v    []float64
	}{{"eigenvector", nd.EigenvectorCentrality}, {"betweenness", nd.Betweenness}} {
		if opt.v != nil {
			maps = append(maps, nodeMap{opt.name, f64to32(opt.v), nifti.Float32})
		}
	}
	// Stage calls are serialised: on the CPU the local efficiency is computed beside the
	// modules and the global measures and stages its map itself when done.
	var stageMu sync.Mutex
	stageNow := func(maps []nodeMap) error {
		stageMu.Lock()
		defer stageMu.Unlock()
		return stage(m, maps)
	}
	if err := stageNow(maps); err != nil {
		return nil, nil, err
	}
	maps = nil
	var (
		leff     []float64
		leffErr  error
		leffDone chan struct{}
	)
	if full {
		// The modules (one core), the exact paths and the random networks (all cores) and the
		// local efficiency (all cores) keep both cores of a desktop busy together; run alone,
		// the one-core stages would leave one idle. With a device it runs there meanwhile.
		lctx, cancel := context.WithCancel(ctx)
		leffDone = make(chan struct{})
		defer func() { cancel(); <-leffDone }() // never outlives the run, also on errors
		go func() {
			defer close(leffDone)
			defer trace.Span("local efficiency")()
			if leff, leffErr = graph.LocalEfficienciesWith(lctx, acc, g, nil); leffErr == nil {
				leffErr = stageNow([]nodeMap{{"efficiency", f64to32(leff), nifti.Float32}})
			}
			if leffErr == nil {
				rep.Note("local efficiency: map staged (computed beside the modules and the global measures)")
			}
		}()
	}

	// Modules: Leiden is the default finder (higher Q); the leading-eigenvector method of the
	// papers also runs in full mode so that both Q values can be compared. With a device
	// accelerator the two run at once (Leiden on the host, the eigenvector solves on the device).
	var leadingEigenvector func() (*community.Modules, []float64, error)
	if full {
		leo := community.LeadingEigenvectorOptions{Seed: cfg.Seed}
		if kd, ok := acc.(community.KrylovDevice); ok {
			leo.Krylov = kd // the Lanczos solves of large groups on the device
		}
		leadingEigenvector = func() (*community.Modules, []float64, error) {
			le, err := community.LeadingEigenvectorModules(ctx, g, leo, rep)
			return le, nil, err
		}
		if acc != nil {
			var stop func()
			leadingEigenvector, stop = background(ctx, func(ctx context.Context) (*community.Modules, []float64, error) {
				defer trace.Span("leading-eigenvector modules")()
				lane, end := progress.Lane(rep)
				le, err := community.LeadingEigenvectorModules(ctx, g, leo, lane)
				end(err)
				return le, nil, err
			})
			defer stop()
		}
	}
	leiden, _, err := observedLeiden()
	if err != nil {
		return nil, nil, err
	}
	m.Modules = append(m.Modules, moduleInfo(leiden))
	m.membership = leiden.Membership
	labels := make([]float32, s.N)
	for v, c := range leiden.Membership {
		labels[v] = float32(c + 1) // 1 = largest module; 0 stays background
	}
	labelType := nifti.Int16
	if len(leiden.Sizes) > math.MaxInt16 {
		labelType = nifti.Int32 // more modules (single nodes, mostly) than int16 can number
	}
	maps = append(maps, nodeMap{"modules", labels, labelType})
	pc, err := community.ParticipationCoefficient(g, leiden.Membership, false)
	if err != nil {
		return nil, nil, err
	}
	wz, err := community.WithinModuleDegreeZScore(g, leiden.Membership, false)
	if err != nil {
		return nil, nil, err
	}
	maps = append(maps, nodeMap{"participation", f64to32(pc), nifti.Float32},
		nodeMap{"within_module_z", f64to32(wz), nifti.Float32})
	if err := stageNow(maps); err != nil {
		return nil, nil, err
	}
	maps = nil
	if full {
		// The leading-eigenvector modules only add a row to metrics.json's modules: the maps
		// above need not wait for them.
		le, _, err := leadingEigenvector()
		if err != nil {
			return nil, nil, err
		}
		m.Modules = append(m.Modules, moduleInfo(le))
	}
	if full && leffDone != nil {
		rep.Note("network, hubs and nodal maps are staged in the bundle (local efficiency follows); the global measures and the random-network baselines follow")
	} else if full {
		rep.Note("network, hubs and nodal maps are staged in the bundle; the global measures and the random-network baselines follow")
	}
	if !full {
		b := &BasicGlobal{ClusteringCoefficient: graph.Mean(nd.Clustering)}
		b.Components, b.LargestComponentSize, b.LargestComponentShare = graph.LargestComponent(g)
		if r, ok := graph.DegreeAssortativity(g); ok {
			b.Assortativity = ptr(r)
		}
		m.GlobalBasic = b
		return m, maps, nil
	}
	gl, randomQ, err := global()
	if err != nil {
		return nil, nil, err
	}
	if leffDone != nil {
		<-leffDone
		if leffErr != nil {
			return nil, nil, leffErr
		}
	}
	if leff != nil {
		gl.LocalEfficiency = ptr(graph.Mean(leff))
	}
	m.Global = &gl
	if len(randomQ) > 1 {
		if mu, sd, z, err := community.ModularityZScore(leiden.Q, randomQ); err == nil {
			m.Modules[0].RandomQMean, m.Modules[0].RandomQSD, m.Modules[0].QZScore = ptr(mu), ptr(sd), ptr(z)
		} else if lo, hi := slices.Min(randomQ), slices.Max(randomQ); hi-lo <= 1e-12*math.Abs(mu) {
			m.Modules[0].RandomQMean = ptr(mu)
			m.Modules[0].QZScoreUndefined = fmt.Sprintf("all %d random networks reached the same Q = %.4g, so there is no spread to measure Q against", len(randomQ), mu)
		} else {
			m.Modules[0].QZScoreUndefined = strings.TrimPrefix(err.Error(), "community: ")
		}
	}
	if dd := gl.DegreeDistribution; dd != nil {
		m.degreeFits = func(w io.Writer) error {
			return bundle.PlotDegreeDistribution(w, m.degree, degreeCurves(dd, m.degree))
		}
	}
	return m, maps, nil
}

// background starts f on its own goroutine: wait returns its results once it has ended;
// stop cancels it and waits (defer stop, so that f has ended whenever the caller returns).
func background[A, B any](ctx context.Context, f func(context.Context) (A, B, error)) (wait func() (A, B, error), stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	var a A
	var b B
	var err error
	go func() {
		defer close(done)
		a, b, err = f(ctx)
	}()
	wait = func() (A, B, error) {
		<-done
		return a, b, err
	}
	stop = func() {
		cancel()
		<-done
	}
	return wait, stop
}

// globalMeasures computes the global measures of the full metrics: C_p, L_p, E_glob, the
// degree fits and, when asked, the random networks with each one's Leiden Q (for
// modularity's z-score, with the same Leiden set-up as the network's).
func globalMeasures(ctx context.Context, cfg Config, g *graph.Graph, nd graph.Nodal, acc graph.Accelerator, rep progress.Reporter) (graph.Global, []float64, error) {
	gopt := graph.GlobalOptions{DegreeDistribution: true, Clustering: nd.Clustering, WeightedClustering: nd.WeightedClustering,
		Accelerator: acc}
	var randomQ []float64
	if cfg.Random > 0 && g.Edges() >= 2 {
		randomQ = make([]float64, cfg.Random)
		gopt.SmallWorld = &graph.SmallWorldOptions{Random: cfg.Random, Seed: cfg.Seed, PathSources: pathSources(cfg),
			SwapsPerEdge: cfg.SwapsPerEdge,
			PerRandom: func(k int, r *graph.Graph) error {
				mod, err := community.LeidenModules(ctx, r, leidenOptions(cfg), nil)
				if err != nil {
					return err
				}
				randomQ[k] = mod.Q
				return nil
			}}
	}
	gl, err := graph.GlobalMeasures(ctx, g, gopt, rep)
	return gl, randomQ, err
}

// pathSources is the random networks' BFS sample: graph's default, or every node (-1) with
// --exact-baselines.
func pathSources(cfg Config) int {
	if cfg.ExactBaselines {
		return -1
	}
	return 0
}

// leidenOptions is the one Leiden set-up for the network and its random baselines, so that Q's
// z-score compares like with like. Two repetitions of the whole algorithm: on the phantom and
// on real networks a third never raised Q, while on random networks, where Q creeps up by
// ~1 % over twenty repetitions, it costs six times as much.
func leidenOptions(cfg Config) community.LeidenOptions {
	return community.LeidenOptions{Seed: cfg.Seed, MaxIterations: 2}
}

// degreeCurves turns the fitted laws into P(k) over all nodes: each law is a distribution of
// the tail k ≥ k_min, so its mass is scaled by the tail's share of the nodes. Normalisations
// are summed numerically well past the observed range (enough for a drawing).
func degreeCurves(dd *graph.DegreeDistribution, degree []int) []bundle.Curve {
	kmax := 0
	for _, k := range degree {
		kmax = max(kmax, k)
	}
	share := float64(dd.PowerLaw.NTail) / float64(len(degree))
	law := func(xmin int, f func(k float64) float64) func(float64) float64 {
		var z float64
		for k := xmin; k <= 4*kmax+1000; k++ {
			z += f(float64(k))
		}
		return func(k float64) float64 {
			if k < float64(xmin) || z == 0 {
				return math.NaN()
			}
			return share * f(k) / z
		}
	}
	pl, tp := dd.PowerLaw, dd.Truncated
	plCurve := bundle.Curve{Label: fmt.Sprintf("power law, α = %.2f (k ≥ %d)", pl.Alpha, pl.Xmin),
		F: law(pl.Xmin, func(k float64) float64 { return math.Pow(k, -pl.Alpha) })}
	tpCurve := bundle.Curve{Label: truncatedLabel(tp, kmax),
		F: law(tp.Xmin, func(k float64) float64 { return math.Pow(k, -tp.Alpha) * math.Exp(-tp.Lambda*k) })}
	// Fits that describe nothing are named, not drawn (graph's NoFit); a truncated law with
	// no cut-off within the degrees is the power law itself, drawn once and said so.
	switch {
	case pl.NoFit() && tp.NoFit():
		return []bundle.Curve{{Label: "power law: no fit (exponent at its search limit)"}, {Label: "truncated power law: no power-law fit (negative exponent)"}}
	case pl.NoFit():
		return []bundle.Curve{tpCurve, {Label: "power law: no fit (exponent at its search limit)"}}
	case tp.NoFit():
		return []bundle.Curve{plCurve, {Label: fmt.Sprintf("truncated power law: no power-law fit (exponent %.2f < 0: a peaked distribution)", tp.Alpha)}}
	case tp.NoCutOff(kmax):
		plCurve.Label = fmt.Sprintf("power law, α = %.2f (k ≥ %d); the truncated power law coincides (no cut-off within the degrees)", pl.Alpha, pl.Xmin)
		return []bundle.Curve{plCurve}
	}
	return []bundle.Curve{plCurve, tpCurve}
}

// hubsByDegree applies the hub rule of Wang et al.: degree > mean + k·SD (population SD over
// all nodes). It returns the hubs in decreasing degree, every node's degree z-score and the
// rule's summary.
func hubsByDegree(degree []int, k float64) ([]int, []float64, HubInfo) {
	mu, sd, _ := graph.DegreeMoments(degree)
	z := graph.DegreeZScores(degree)
	cut := mu + k*sd
	var hubs []int
	for v, d := range degree {
		if float64(d) > cut && sd > 0 {
			hubs = append(hubs, v)
		}
	}
	sort.SliceStable(hubs, func(a, b int) bool { return degree[hubs[a]] > degree[hubs[b]] })
	info := HubInfo{Rule: "degree > mean + " + strconv.FormatFloat(k, 'g', -1, 64) + " SD",
		Cutoff: cut, MeanDegree: mu, SDDegree: sd, Count: len(hubs)}
	return hubs, z, info
}

// writeHubTable writes hubs.tsv, naming each hub's atlas region when an atlas was given (and
// the scan has voxel positions); with toMNI (the scan's registration to MNI space) the atlas is
// read at toMNI·x instead of at the scan's own world coordinates x, and the table gains the
// hubs' MNI positions (x_mni, y_mni, z_mni).
func writeHubTable(w *bundle.Writer, s *scan.Scan, m *Metrics, atl *atlas.Atlas, toMNI *[4][4]float64) error {
	var names []string
	if atl != nil && s.IJK != nil {
		names = make([]string, len(m.hubs))
		for k, v := range m.hubs {
			x := s.World(v)
			if toMNI != nil {
				x = realign.Apply(*toMNI, x)
			}
			_, names[k] = atl.Region(x)
		}
		m.Hubs.Regions = topRegions(names, 5)
	}
	var mni [][3]float64
	if toMNI != nil && s.IJK != nil {
		mni = make([][3]float64, len(m.hubs))
		for k, v := range m.hubs {
			mni[k] = realign.Apply(*toMNI, s.World(v))
		}
	}
	if err := w.WriteHubTableMNI(s, m.hubs, m.degree, m.strength, m.hubZ, names, mni); err != nil {
		return err
	}
	if toMNI == nil || s.IJK == nil {
		return nil
	}
	// qc/hubs_mni.tsv: every hub's MNI position through the scan's registration (and its
	// region there when an atlas is given), in hubs.tsv's order.
	return w.WriteTSV("qc/hubs_mni.tsv", []string{"node", "x_mni", "y_mni", "z_mni", "region"}, func(emit func(fields ...string) error) error {
		for k, v := range m.hubs {
			x := realign.Apply(*toMNI, s.World(v))
			region := ""
			if names != nil {
				region = names[k]
			}
			if err := emit(strconv.Itoa(v), strconv.FormatFloat(x[0], 'f', 2, 64), strconv.FormatFloat(x[1], 'f', 2, 64), strconv.FormatFloat(x[2], 'f', 2, 64), region); err != nil {
				return err
			}
		}
		return nil
	})
}

func moduleInfo(mod *community.Modules) ModuleInfo {
	info := ModuleInfo{Method: mod.Method, Q: mod.Q, Count: mod.Count(), Sizes: mod.Sizes}
	for _, n := range mod.Sizes {
		if n >= 2 {
			info.Modules++
		} else {
			info.SingleNodes++
		}
	}
	return info
}

func toF32(x []int) []float32 {
	out := make([]float32, len(x))
	for i, v := range x {
		out[i] = float32(v)
	}
	return out
}

func f64to32(x []float64) []float32 {
	out := make([]float32, len(x))
	for i, v := range x {
		out[i] = float32(v)
	}
	return out
}

func hubMask(n int, hubs []int) []float32 {
	out := make([]float32, n)
	for _, h := range hubs {
		out[h] = 1
	}
	return out
}

func truncatedLabel(tp graph.TruncatedPowerLawFit, kmax int) string {
	if tp.NoCutOff(kmax) {
		return fmt.Sprintf("truncated power law, α = %.2f, no cut-off within the degrees", tp.Alpha)
	}
	return fmt.Sprintf("truncated power law, α = %.2f, cut-off k ≈ %.0f", tp.Alpha, 1/tp.Lambda)
}

// topRegions counts the hubs per region name ("" = outside every region, not counted) and
// returns the k regions holding the most, most first, ties by name.
func topRegions(names []string, k int) []schema.HubRegion {
	count := map[string]int{}
	for _, n := range names {
		if n != "" {
			count[n]++
		}
	}
	out := make([]schema.HubRegion, 0, len(count))
	for n, c := range count {
		out = append(out, schema.HubRegion{Name: n, Hubs: c})
	}
	sort.Slice(out, func(a, b int) bool {
		if out[a].Hubs != out[b].Hubs {
			return out[a].Hubs > out[b].Hubs
		}
		return out[a].Name < out[b].Name
	})
	return out[:min(k, len(out))]
}
