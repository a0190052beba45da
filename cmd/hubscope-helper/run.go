package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"errors"
	"github.com/hubscope/hubscope/helper/bids"
	"github.com/hubscope/hubscope/helper/bundle"
	"github.com/hubscope/hubscope/helper/pipeline"
	"github.com/hubscope/hubscope/helper/progress"
)

func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg := pipeline.Defaults()
	fs := newFlags("run", "run SCAN --out DIR [flags]   (or: run --demo --out DIR)", stdout, stderr)
	demo := fs.Bool("demo", false, "analyse the built-in phantom (7 planted modules, 40 hubs) instead of a scan")
	fs.StringVar(&cfg.Out, "out", "", "results bundle `DIR` (written complete or not at all)")
	fs.BoolVar(&cfg.Overwrite, "overwrite", false, "replace an existing results bundle at --out")
	fs.StringVar(&cfg.Mask, "mask", "", "brain mask `FILE` on the scan's grid (default: automatic EPI mask)")
	fs.IntVar(&cfg.TimeAxis, "time-axis", 0, "the NIfTI `AXIS` (4 to 7) holding the time series, for 5D+ images (default 4); every other extra axis longer than 1 needs an --index")
	fs.Var((*axisIndex)(&cfg.Index), "index", "with a 5D+ image, the entry to read of another extra axis, `AXIS=I` counted from 0 (repeat or comma-separate: --time-axis 5 --index 4=1 reads the second of axis 4's entries, e.g. the second echo of x×y×z×2×60)")
	fs.StringVar(&cfg.Norm, "norm", "", "compare with a normative folder `DIR` (norm build): z-maps, hubs lost and gained, abnormal clusters; the run must use the cohort's settings")
	cfg.Settings.AddFlags(fs.FlagSet)
	fs.BoolVar(&cfg.KeepSeries, "keep-series", false, "also keep the cleaned series (series.npy) and the mean image (mean.nii.gz) for seed maps and slice views")
	fs.StringVar(&cfg.Export, "export", "", "files for other tools: auto, the default (network.graphml and network.gexf up to 100,000 edges, BrainNet Viewer's hubs.node always), none, or a comma `LIST` of graphml, gexf, brainnet (written whatever the size)")
	fs.BoolVar(&cfg.SymmetricNPZ, "symmetric-npz", false, "write network.npz as the whole symmetric matrix (both (i, j) and (j, i)) instead of its upper triangle; network.json says which")
	fs.StringVar(&cfg.AtlasNames, "atlas-names", "", "the same as --atlas-labels (region names `FILE`)")
	var ent bids.Entities // with a BIDS derivatives folder as the scan: which run
	fs.StringVar(&ent.Participant, "participant", "", "with an fMRIPrep derivatives folder: the participant `LABEL` (sub-LABEL)")
	fs.StringVar(&ent.Session, "session", "", "with a derivatives folder: the session `LABEL`")
	fs.StringVar(&ent.Task, "task", "", "with a derivatives folder: the task `LABEL`")
	fs.StringVar(&ent.Run, "run", "", "with a derivatives folder: the run `INDEX`")
	fs.StringVar(&ent.Space, "space", "", "with a derivatives folder: the output `SPACE` (e.g. MNI152NLin2009cAsym)")
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if err := cfg.Settings.Resolve(cfg.Settings.Given(fs.FlagSet)); err != nil {
		return settingUsage(stderr, "run", err)
	}

	switch {
	case *demo && len(pos) == 0:
		cfg.Demo = true // the phantom, its mask and truth go into the bundle's demo/
	case !*demo && len(pos) == 1:
		cfg.Scan = pos[0]
		if ent != (bids.Entities{}) {
			if cfg.Scan, err = bids.FindPreproc(pos[0], ent); err != nil {
				return err
			}
		}
	default:
		fmt.Fprintln(stderr, "run: give exactly one scan (or --demo)")
		fs.Usage()
		return errUsage
	}
	if cfg.Out == "" {
		fmt.Fprintln(stderr, "run: --out DIR is required")
		return errUsage
	}

	if err := cfg.Settings.Validate(); err != nil {
		return settingUsage(stderr, "run", err)
	}
	disp := progress.NewDisplay(stderr)
	res, err := pipeline.Run(ctx, cfg, disp)
	disp.Close(err == nil)
	if errors.Is(err, bundle.ErrExists) {
		return fmt.Errorf("%w (--overwrite replaces an earlier bundle)", err)
	}
	if err != nil {
		return err
	}
	printSummary(stdout, res)
	return nil
}

func printSummary(w io.Writer, res *pipeline.Result) {
	m := res.Metrics
	s, n := m.Scan, m.Network
	fmt.Fprintf(w, "scan        %s\n", s.Path)
	if s.Grid != [3]int{} {
		fmt.Fprintf(w, "            %d×%d×%d grid, %d voxels in mask, %d dropped (%d zero variance, %d non-finite)\n",
			s.Grid[0], s.Grid[1], s.Grid[2], s.MaskVoxels, s.ZeroVariance+s.NonFinite, s.ZeroVariance, s.NonFinite)
	}
	tr := "TR unknown"
	if s.TR > 0 {
		tr = fmt.Sprintf("TR %g s", s.TR)
	}
	if c := res.InputChecks; c != nil && c.TR != "" {
		tr = c.TR
	}
	if mw := maskWords(m); mw != "" {
		fmt.Fprintf(w, "mask        %s\n", mw)
	}
	fmt.Fprintf(w, "nodes       %d × %d time points, %s\n", s.Nodes, s.TimePoints, tr)
	if d := m.Denoise; d != nil {
		fmt.Fprintf(w, "cleaning    %s; %d of %s kept, %s, %.0f %% of the variance removed\n",
			d.Strategy, d.VolumesKept, pipeline.Count(d.VolumesIn, "volume"), pipeline.Count(d.ConfoundRank, "confound direction"), 100*d.VarianceRemoved)
	}
	if c := res.InputChecks; c != nil {
		for _, h := range c.Warnings {
			fmt.Fprintf(w, "header      %s: %s (%s)\n", h.Field, h.Problem, h.Fix)
		}
	}
	thr := fmt.Sprintf("%s > %.6g", n.Measure, n.Threshold)
	if n.ThresholdInclusive {
		thr = fmt.Sprintf("%s ≥ %.6g", n.Measure, n.Threshold)
	}
	if n.Abs {
		thr = "|" + strings.Replace(thr, " ", "| ", 1)
	}
	if math.IsInf(n.Threshold, 0) || math.IsNaN(n.Threshold) {
		thr = "threshold " + m.UndefinedText("network.threshold")
	}
	fmt.Fprintf(w, "network     %s, %s: %d edges, density %.4g %%, mean degree %.1f\n", n.Mode, thr, n.Edges, 100*n.Density, n.MeanDegree)
	fmt.Fprintf(w, "            %d isolated nodes, largest component %d nodes; backend %s %s\n", n.Isolated, n.LargestComponent, n.Backend, n.Device)
	fmt.Fprintf(w, "hubs        %d nodes (%s: degree > %.1f; %s of the nodes)\n", m.Hubs.Count, m.Hubs.Rule, m.Hubs.Cutoff, percent(float64(m.Hubs.Count)/float64(max(1, s.Nodes))))
	if h := m.Hubs; h.Atlas != "" && m.Hubs.Count > 0 {
		where := make([]string, len(h.Regions))
		for i, r := range h.Regions {
			where[i] = fmt.Sprintf("%s (%d)", r.Name, r.Hubs)
		}
		line := "            regions in hubs.tsv from " + h.Atlas
		if len(where) > 0 {
			line += ": most in " + strings.Join(where, ", ")
		} else {
			line += ": none lies in a region"
		}
		fmt.Fprintln(w, line)
	} else if h.Unnamed != "" {
		fmt.Fprintf(w, "            %s\n", h.Unnamed)
	}
	if g := m.Global; g != nil {
		line := fmt.Sprintf("global      C_p %.4f", g.ClusteringCoefficient)
		if g.ConnectedPairs > 0 { // path measures ran (full metrics)
			line += fmt.Sprintf(", L_p %.4f, E_glob %.4f, diameter %d", g.CharacteristicPathLength, g.GlobalEfficiency, g.Diameter)
		} else if _, ok := m.Undefined["global.characteristic_path_length"]; ok {
			line += ", L_p " + m.UndefinedText("global.characteristic_path_length")
		}
		fmt.Fprintln(w, line+fmt.Sprintf("; %d component(s), largest holds %.1f %% of nodes", g.Components, 100*g.LargestComponentShare))
		if sw := g.SmallWorld; sw != nil {
			if sw.RandomPathLengthEstimated {
				fmt.Fprintf(w, "small-world γ %.3f, λ %.3f ± %.1g, σ %.3f ± %.1g (%d random networks; their L_p estimated from %d sampled sources each, ± one standard error)\n",
					sw.Gamma, sw.Lambda, sw.LambdaSE, sw.Sigma, sw.SigmaSE, sw.RandomNetworks, sw.RandomPathSources)
			} else {
				fmt.Fprintf(w, "small-world γ %.3f, λ %.3f, σ %.3f (%d random networks)\n", sw.Gamma, sw.Lambda, sw.Sigma, sw.RandomNetworks)
			}
		}
		if _, ok := m.Undefined["global.small_world"]; ok && g.SmallWorld == nil {
			fmt.Fprintf(w, "small-world %s\n", m.UndefinedText("global.small_world"))
		}
		printLines(w, "degrees", degreeWords(g.DegreeDistribution, g.MaxDegree, g.DegreeDistributionUndefined))
	}
	if b := m.GlobalBasic; b != nil {
		fmt.Fprintf(w, "global      C_p %.4f; %d component(s), largest holds %.1f %% of nodes\n", b.ClusteringCoefficient, b.Components, 100*b.LargestComponentShare)
	}
	for _, mod := range m.Modules {
		fmt.Fprintf(w, "modules     %s\n", moduleWords(mod))
	}
	if _, ok := m.Undefined["modules"]; ok && len(m.Modules) == 0 {
		fmt.Fprintf(w, "modules     %s\n", m.UndefinedText("modules"))
	}
	printLines(w, "warning", networkWarnings(m))
	if sw := m.Sweep; sw != nil {
		fmt.Fprintf(w, "sweep       %d %s thresholds %g … %g from one correlation pass (sweep.tsv, sweep.png, hub_stability.nii.gz)\n",
			len(sw.Points), sw.Spec.Kind, sw.Spec.Values[0], sw.Spec.Values[len(sw.Spec.Values)-1])
		for _, p := range sw.Points {
			more := ""
			if p.Modularity != nil {
				more += fmt.Sprintf(", Q %.4f", *p.Modularity)
			}
			if p.Sigma != nil {
				more += fmt.Sprintf(", σ %.3f", *p.Sigma)
			}
			fmt.Fprintf(w, "            %-8g %9d edges, density %.4g %%, C_p %.4f, %d hubs%s\n", p.Threshold, p.Edges, 100*p.Density, p.ClusteringCoefficient, p.Hubs, more)
		}
		if sm := sw.SmallWorld; sm != nil {
			fmt.Fprintf(w, "            σ at each threshold against its own %d random networks\n", sm.RandomNetworks)
		}
	}
	if nr := m.Norm; nr != nil {
		fmt.Fprintf(w, "norm        %d nodes compared; %d of %d cohort hubs lost (z < −%d), %d hubs gained; %d clusters of |z| > %d\n",
			nr.Compared, nr.LostCount, nr.CohortHubs, pipeline.NormZ, nr.GainedCount, len(nr.Clusters), pipeline.NormZ)
		for c, cl := range nr.Clusters[:min(5, len(nr.Clusters))] {
			where := ""
			if cl.Region != "" {
				where = ", " + cl.Region
			}
			fmt.Fprintf(w, "            cluster %d: %d voxels %s the cohort, peak z %.1f at (%.0f, %.0f, %.0f) mm%s\n", c+1, cl.Voxels,
				map[bool]string{true: "above", false: "below"}[cl.Sign > 0], cl.PeakZ, cl.PeakMM[0], cl.PeakMM[1], cl.PeakMM[2], where)
		}
	}
	for _, t := range res.Timings {
		fmt.Fprintf(w, "time        %-14s %.2f s\n", t.Stage, t.Seconds)
	}
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		fmt.Fprintf(w, "memory      peak RSS %.0f MB\n", float64(ru.Maxrss)/1024)
	}
	fmt.Fprintf(w, "results     %s\n", res.Dir)
	if tc := m.Demo; tc != nil {
		printLines(w, "truth check", truthWords(tc))
	}
}

// axisIndex is --index: AXIS=I pairs, comma-separated or repeated.
type axisIndex map[int]int

func (a *axisIndex) String() string {
	if a == nil || len(*a) == 0 {
		return ""
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(*a)) {
		parts = append(parts, fmt.Sprintf("%d=%d", k, (*a)[k]))
	}
	return strings.Join(parts, ",")
}

func (a *axisIndex) Set(v string) error {
	for _, part := range strings.Split(v, ",") {
		ks, is, ok := strings.Cut(strings.TrimSpace(part), "=")
		k, err1 := strconv.Atoi(ks)
		i, err2 := strconv.Atoi(is)
		if !ok || err1 != nil || err2 != nil || k < 4 || k > 7 || i < 0 {
			return fmt.Errorf("%q: want AXIS=I, AXIS one of 4 to 7 and I an entry counted from 0 (e.g. 4=1)", part)
		}
		if *a == nil {
			*a = map[int]int{}
		}
		if old, dup := (*a)[k]; dup && old != i {
			return fmt.Errorf("%q: axis %d already has entry %d", part, k, old)
		}
		(*a)[k] = i
	}
	return nil
}
