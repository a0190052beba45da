package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hubscope/hubscope/helper/atlas"
	"github.com/hubscope/hubscope/helper/backend/cuda"
	"github.com/hubscope/hubscope/helper/bids"
	"github.com/hubscope/hubscope/helper/bids/derivatives"
	"github.com/hubscope/hubscope/helper/bundle"
	"github.com/hubscope/hubscope/helper/dicom"
	"github.com/hubscope/hubscope/helper/fc"
	"github.com/hubscope/hubscope/helper/graph"
	"github.com/hubscope/hubscope/helper/group"
	"github.com/hubscope/hubscope/helper/network"
	"github.com/hubscope/hubscope/helper/nifti"
	"github.com/hubscope/hubscope/helper/norm"
	"github.com/hubscope/hubscope/helper/progress"
	"github.com/hubscope/hubscope/helper/scan"
	"github.com/hubscope/hubscope/helper/sweep"
	"github.com/hubscope/hubscope/ipc/schema"
	"github.com/hubscope/hubscope/ipc/settings"
)

// Result is what a finished analysis reports: where the bundle is and what it found.
type Result struct {
	Dir     string
	Metrics *Metrics
	Timings []bundle.StageTiming
	// Notes are what the run wants said in the summary (a group's mask rule).
	Notes []string
	// InputChecks are the TR statement and the scan header's warnings, as provenance.json
	// records them.
	InputChecks *bundle.InputChecks
}

// Run performs one analysis and commits its bundle to cfg.Out. On error or cancellation
// nothing is left at cfg.Out (the partial bundle is removed).
func Run(ctx context.Context, cfg Config, rep progress.Reporter) (_ *Result, err error) {
	rep = progress.OrDiscard(rep)
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	fcc := fcConfig(cfg.Settings)
	// 0. DICOM input (a folder, .zip or DICOMDIR): its series converted by dcm2niix into a
	// private temporary folder first (dicom.go); the run analyses the converted NIfTI.
	given := cfg.Scan
	dcm, err := prepareDICOM(ctx, cfg, rep)
	if err != nil {
		return nil, err
	}
	if dcm != nil {
		defer dcm.Remove()
		defer func() { err = dicomError(err, dcm) }() // the DICOM, not the temporary NIfTI, in messages
		rep = dicomNotes{rep, dcm}
		cfg.Scan = dcm.NIfTI
	}
	if cfg.Group != nil || cfg.Demo {
		// A group-mean network (group.go): the subjects' files are checked as they load;
		// the demo writes its phantom into the bundle below.
	} else if _, err := os.Stat(cfg.Scan); err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.Scan, unwrapPathError(err))
	}
	var bidsEnts []derivatives.Entity
	if cfg.BIDSNames { // the input's BIDS name, checked before any work
		if bidsEnts, err = bidsEntities(cfg, given); err != nil {
			return nil, err
		}
	}
	if !cfg.Demo {
		if err := checkDFCLength(cfg, -1); err != nil { // from the header, before any long work
			return nil, err
		}
	}
	r := &runner{cfg: cfg, rep: rep, start: time.Now()}
	if dcm != nil { // provenance names what was given, without identity; input/ holds the NIfTI
		r.cfg.Scan, r.dicom = dcm.Redact(given), dcm
	}

	// Create the bundle first: an existing output directory is refused before any work.
	w, err := bundle.Create(cfg.Out, cfg.Overwrite)
	if err != nil {
		return nil, err
	}
	committed := false
	defer func() {
		if !committed {
			w.Abort()
		}
	}()

	// The demo's phantom, mask and truth are written into the bundle itself; the analysis
	// reads them there, and metrics and provenance name their final paths.
	var truth *demoTruth
	if cfg.Demo {
		if cfg.Scan, cfg.Mask, truth, err = writeDemo(ctx, w, rep); err != nil {
			return nil, err
		}
		if cfg.Confounds == "" && cfg.Denoise != "" && cfg.Denoise != CleanNone {
			cfg.Confounds = w.Path(DemoConfoundsFile) // the phantom's nuisance table
		}
		if err := checkDFCLength(cfg, -1); err != nil {
			return nil, err
		}
	}

	// The atlas is read before any long work so that a bad one fails at once.
	var atl *atlas.Atlas
	if cfg.Atlas != "" {
		if atl, err = loadAtlas(cfg.Atlas, cfg.AtlasNames); err != nil {
			return nil, err
		}
		if cfg.Nodes == NodesRegions {
			if err := atl.CheckNames(cfg.AtlasNames); err != nil {
				return nil, err
			}
		}
	}

	// A normative folder is read and its settings checked before any long work.
	var nm *norm.Norm
	if cfg.Norm != "" {
		if nm, err = norm.Load(cfg.Norm); err != nil {
			return nil, err
		}
		nm.Info.Settings = NodalSettings(nm.Info.Settings)
		if err := nm.CheckSettings(NodalSettings(cfg.BundleSettings())); err != nil {
			return nil, err
		}
	}

	// An fMRIPrep image brings its brain mask (found by BIDS naming) when none is given.
	if cfg.Mask == "" && cfg.Group == nil && !cfg.Demo && bids.IsPreprocBold(cfg.Scan) {
		if m := bids.Mask(cfg.Scan); m != "" {
			cfg.Mask, r.cfg.Mask = m, m
			rep.Note("mask: fMRIPrep's brain mask " + m)
		}
	}

	// The backend opens while the scan loads (backend.go: CUDA's start-up overlaps the read).
	opening := startBackend(cfg.Backend)
	defer opening.discard()

	// 1. Scan → masked series.
	t0 := time.Now()
	var s *scan.Scan
	var coh *group.Cohort
	if cfg.Group != nil {
		coh, err = loadGroup(ctx, cfg, rep)
		if coh != nil {
			s = coh.Scan
		}
	} else {
		// 1a. Head-motion realignment (realign.go): the loader reads the realigned series.
		loadPath := cfg.Scan
		var mr *MotionReport
		ok, why := realignWanted(cfg)
		if ok {
			var cleanup func()
			if loadPath, mr, cleanup, err = realignScan(ctx, cfg, w, rep); err != nil {
				return nil, err
			}
			defer cleanup()
			if mr.Reason == "" {
				mr.Reason = why
			}
		}
		if mr != nil && !mr.Realigned {
			// --realign auto's first look found too little motion to resample (realign.go).
			loadPath = cfg.Scan
			if err := w.WriteJSON(schema.MotionFile, mr); err != nil {
				return nil, err
			}
			rep.Note(mr.Reason)
			r.stage("realign", t0)
			t0 = time.Now()
		} else if mr != nil {
			cfg.motionTable = w.Path("qc/motion.tsv") // auto's raw recipe regresses it
			if err := w.WriteJSON(schema.MotionFile, mr); err != nil {
				return nil, err
			}
			rep.Note(fmt.Sprintf("realigned (%s): mean FD %.3f mm, max %.3f mm, %d volume(s) over 0.5 mm; largest motion %.2f mm / %.2f° (qc/motion.tsv)",
				mr.Reason, mr.MeanFD, mr.MaxFD, mr.VolumesOverFD05, mr.MaxTranslationMM, mr.MaxRotationDeg))
			// FD scrubbing and motion regressors (--fd, --confound-columns) of a raw scan read
			// the motion just estimated: the same table, fMRIPrep's names.
			// (auto's raw recipe reads it itself, through Config.motionTable).
			if cfg.Confounds == "" && (cfg.Denoise == "" || cfg.Denoise == CleanNone) &&
				(cfg.FD > 0 || cfg.ConfoundColumns != "") {
				cfg.Confounds = filepath.Join(filepath.Dir(loadPath), "motion.tsv")
				rep.Note("cleaning: confounds from the realignment's motion table (qc/motion.tsv)")
			}
			r.stage("realign", t0)
			t0 = time.Now()
		} else if why != "" {
			rep.Note("not realigned: " + why)
		}
		sopt := scan.Options{MaskPath: cfg.Mask, Mean: cfg.KeepSeries || registerWanted(cfg), TimeAxis: cfg.TimeAxis, Index: cfg.Index}
		if loadPath != cfg.Scan {
			// The realigned series is 4D already: realignScan took the time axis and entries.
			sopt.TimeAxis, sopt.Index = 0, nil
		}
		s, err = scan.Load(ctx, loadPath, sopt, rep)
		if err == nil && loadPath != cfg.Scan {
			// Provenance names the scan given; its digest is the given file's.
			s.Source = cfg.Scan
			for i := range s.Inputs {
				if s.Inputs[i].Path == loadPath {
					if d, derr := scan.Digest(ctx, cfg.Scan); derr == nil {
						s.Inputs[i] = d
					}
				}
			}
		}
	}
	if err != nil {
		return nil, err
	}
	if dcm != nil {
		dicomTR(s, dcm, rep)
		s.Source = r.cfg.Scan
	}
	r.stage("load", t0)
	loadSecs := time.Since(t0).Seconds() // the read alone: registration and cleaning come next
	if cfg.Demo {
		final := map[string]string{cfg.Scan: finalPath(w, DemoScanFile), cfg.Mask: finalPath(w, DemoMaskFile)}
		s.Source = final[cfg.Scan]
		for i, d := range s.Inputs {
			if p, ok := final[d.Path]; ok {
				s.Inputs[i].Path = p
			}
		}
		r.cfg.Scan, r.cfg.Mask = final[cfg.Scan], final[cfg.Mask]
		if cfg.Confounds != "" {
			r.cfg.Confounds = finalPath(w, DemoConfoundsFile)
		}
	}
	if err := checkDFCLength(cfg, s.L); err != nil {
		return nil, err
	}
	if s.N < 2 {
		return nil, fmt.Errorf("%s: only %d usable node(s) after masking: a network needs at least 2", cfg.Scan, s.N)
	}
	// 1a'. Registration to MNI (register.go): the hubs' atlas labels look up ToMNI·x.
	var toMNI *[4][4]float64
	if coh == nil {
		t1 := time.Now()
		if toMNI, err = registerScan(ctx, cfg, s, w, rep); err != nil {
			return nil, err
		}
		if registerWanted(cfg) {
			r.stage("register", t1)
		}
	}
	// 1b. Cleaning (clean.go): the series every later stage sees.
	var crep *CleanReport
	if coh == nil {
		t1 := time.Now()
		if crep, err = clean(cfg.clean(), cfg.Scan, s); err != nil {
			return nil, err
		}
		if crep != nil {
			r.stage("denoise", t1)
			rep.Note(fmt.Sprintf("cleaning: %s; %d of %d volumes kept", crep.Strategy, crep.VolumesKept, crep.VolumesIn))
		}
	}
	// 1c. Region nodes (roi.go): the cleaned voxel series averaged within each atlas region.
	var regionPos [][3]float64
	if cfg.Nodes == NodesRegions {
		if err := checkAtlasSpace(cfg, s, atl, toMNI); err != nil {
			return nil, err
		}
		if s, regionPos, err = regionSeries(s, atl, toMNI, rep); err != nil {
			return nil, err
		}
	}
	// Hub names: --atlas, else the embedded AAL when the scan lies in MNI space (hubnames.go).
	atlasName, unnamed := cfg.Atlas, ""
	if atl == nil && coh == nil {
		var aal *atlas.Atlas
		if aal, unnamed, err = defaultHubAtlas(cfg, s, toMNI); err != nil {
			return nil, err
		}
		if aal != nil {
			atl, atlasName = aal, AALName
		}
	} else if strings.EqualFold(cfg.Atlas, AtlasAAL) {
		atlasName = AALName
	}
	// A user's atlas that cannot be placed on the scan names no hub (roi.go, atlasMisplaced):
	// the network stands, the labels are refused with the reason.
	if atl != nil && cfg.Atlas != "" && cfg.Nodes != NodesRegions && coh == nil {
		if why := atlasMisplaced(cfg, s, atl, toMNI); why != "" {
			atl, atlasName, unnamed = nil, "", "not named by region: "+why
			rep.Note("hub names: " + why + "; the hubs are not named")
		}
	}
	// The windows' axis: the cleaned series, or with censoring the volumes after the dropped
	// ones, censored or not (dfc.go).
	if err := checkDFCLength(cfg, dfcAxis(crep, s.L)); err != nil {
		return nil, err
	}
	if note := loadRate(s, loadSecs); note != "" {
		rep.Note(note)
	}

	// 2. Network.
	be, err := opening.take(rep)
	if err != nil {
		return nil, err
	}
	defer be.Close()
	t0 = time.Now()
	var nw *network.Network
	var fcrep *fc.Report
	if coh != nil {
		nw, fcrep, err = group.Network(ctx, coh, cfg.Group.Mean, fcc, be, rep)
	} else {
		nw, fcrep, err = fc.Build(ctx, be, s.Data, s.N, s.L, fcc, rep)
	}
	if err != nil {
		return nil, err
	}
	r.stage("network", t0)

	// Results first: the network, the node table, the hub table and every nodal map are
	// staged in the bundle as soon as they exist, before the costly random-network baselines;
	// the bundle appears at cfg.Out only when it is complete (Commit).
	t0 = time.Now()
	w.SymmetricNetwork = cfg.SymmetricNPZ
	if err := w.WriteNetwork(nw); err != nil {
		return nil, err
	}
	if err := w.WriteNodes(s); err != nil {
		return nil, err
	}
	if crep != nil {
		if err := writeCleanQC(w, crep, s.Data, s.N); err != nil {
			return nil, err
		}
	}
	hubsStaged := false
	var staged []nodeMap // every map staged so far
	stage := func(m *Metrics, maps []nodeMap) error {
		staged = append(staged, maps...)
		if !hubsStaged {
			if s.IJK != nil {
				m.Hubs.Atlas, m.Hubs.Unnamed = atlasName, unnamed
			}
			if err := writeHubTable(w, s, m, atl, toMNI); err != nil {
				return err
			}
			hubsStaged = true
		}
		if s.IJK == nil {
			return nil
		}
		for _, mp := range maps {
			if err := ctx.Err(); err != nil {
				return err
			}
			if mp.name == "modules" {
				if err := writeModules(w, s, mp.values, mp.dtype); err != nil {
					return err
				}
				continue
			}
			if err := w.WriteNodeMap(mp.name+".nii.gz", s, mp.values, mp.dtype); err != nil {
				return err
			}
		}
		return nil
	}
	r.stage("write network", t0)

	// 3. Metrics.
	t0 = time.Now()
	// The backend's graph analytics when it has them (CUDA), else the CPU's.
	var acc graph.Accelerator
	if ga, ok := be.(cuda.GraphAccelerator); ok {
		acc = ga.GraphAccelerator(rep)
	}
	m, maps, err := computeMetrics(ctx, cfg, s, nw, fcrep, acc, rep, stage)
	if err != nil {
		return nil, err
	}
	if crep != nil {
		m.Denoise = &crep.Denoise
	}
	if truth != nil {
		if m.Demo, err = checkTruth(s, m, truth); err != nil {
			return nil, err
		}
	}
	r.stage("metrics", t0)
	if err := writeExports(w, cfg, s, nw, m, atl, toMNI, regionPos, rep); err != nil {
		return nil, err
	}

	// 3a. Threshold sweep: every tighter network is a filter of the one just built.
	var sw *sweep.Result
	if cfg.Sweep != "" {
		t0 = time.Now()
		sp, _ := sweep.Parse(cfg.Sweep) // Validate parsed it
		so := sweepOptions(cfg, acc)
		// The loosest threshold's network is nw: its Q and random networks are the metrics'.
		so.Loosest = &sweep.Known{}
		if len(m.Modules) > 0 {
			so.Loosest.Modularity = &m.Modules[0].Q
		}
		if m.Global != nil {
			so.Loosest.SmallWorld = m.Global.SmallWorld
		}
		if sw, err = sweep.Analyse(ctx, nw, sp, so, rep); err != nil {
			return nil, err
		}
		m.Sweep = sw
		r.stage("sweep", t0)
	}

	// 3b. Against the normative cohort: z-maps, hubs lost and gained, abnormal clusters.
	var nres *norm.Result
	if nm != nil {
		if nres, err = compareWithNorm(nm, s, m, append(staged[:len(staged):len(staged)], maps...), atl); err != nil {
			return nil, err
		}
		m.Norm = nres
	}

	// 3c. Dynamic connectivity, when windows were asked for: written into the bundle's dfc/.
	if cfg.DFCWindow > 0 {
		t0 = time.Now()
		notes, err := runDFC(ctx, cfg, be, s, crep, fcc, w, fcrep.Notes, rep)
		if err != nil {
			return nil, err
		}
		fcrep.Notes = append(fcrep.Notes, notes...) // provenance.json lists the report's notes
		r.stage("dynamic connectivity", t0)
	}

	// 4. Bundle.
	t0 = time.Now()
	rep.Start("write bundle", int64(len(maps)+4))
	rep.Add(2) // network and nodes: staged before the metrics
	if cfg.KeepSeries {
		if err := w.WriteSeries(s); err != nil {
			return nil, err
		}
		if s.Mean != nil {
			if err := w.WriteGridImage(bundle.MeanFile, s, s.Mean); err != nil {
				return nil, err
			}
		}
	}
	if sw != nil {
		if err := writeSweep(w, s, sw); err != nil {
			return nil, err
		}
	}
	if nres != nil {
		if err := writeNorm(w, s, nres); err != nil {
			return nil, err
		}
	}
	if coh != nil {
		if err := w.WriteJSON(schema.GroupFile, groupInfo(cfg, coh)); err != nil {
			return nil, err
		}
		fcrep.Notes = append(fcrep.Notes, coh.Notes...)
	}
	if dcm != nil {
		if r.conversion, err = writeDICOMInput(w, dcm); err != nil {
			return nil, err
		}
	}
	if err := stage(m, maps); err != nil { // the hub table, if no map was staged yet, and the rest
		return nil, err
	}
	rep.Add(int64(len(maps)))
	if m.degreeFits != nil {
		if err := w.WriteFile("degree_distribution.png", m.degreeFits); err != nil {
			return nil, err
		}
	}
	rep.Add(1)
	if err := writeMetrics(w, m); err != nil {
		return nil, err
	}
	r.stage("write bundle", t0)
	engine, device := be.Name(), be.Device()
	if coh != nil && cfg.Group.Mean != group.MeanR { // the mean Fisher z ran on its own engine
		engine, device = fcrep.Backend, fcrep.Device
	}
	if cfg.BIDSNames {
		if err := writeBIDSNames(w, cfg, bidsEnts, given, staged, s); err != nil {
			return nil, err
		}
	}
	prov, err := r.provenance(engine, device, fcrep, s.Inputs)
	if err != nil {
		return nil, err
	}
	prov.InputChecks = inputChecks(s)
	if err := w.WriteJSON("provenance.json", prov); err != nil {
		return nil, err
	}
	rep.Add(1)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	dir, err := w.Commit()
	if err != nil {
		return nil, err
	}
	committed = true
	res := &Result{Dir: dir, Metrics: m, Timings: r.timings, InputChecks: prov.InputChecks}
	if coh != nil {
		res.Notes = coh.Notes
	}
	return res, nil
}

// inputChecks writes out the scan's TR statement and header warnings for provenance.json.
func inputChecks(s *scan.Scan) *bundle.InputChecks {
	c := &bundle.InputChecks{TR: s.TRSource, Warnings: []bundle.HeaderWarning{}}
	for _, w := range s.Warnings {
		c.Warnings = append(c.Warnings, bundle.HeaderWarning{File: s.Source, Level: w.Level, Field: w.Field, Problem: w.Problem, Fix: w.Fix, Source: w.Source})
	}
	return c
}

type runner struct {
	cfg     Config
	rep     progress.Reporter
	start   time.Time
	timings []bundle.StageTiming

	dicom      *dicom.Prepared    // a DICOM input's conversion (nil for NIfTI input)
	conversion *bundle.Conversion // its record, once input/ is written
}

// loadRate is the note on the load's speed: the image data decoded (every pass) over the
// load's own time. It used to divide by the time since the load began at the point the note
// was made — after registration, cleaning and region averaging — so a 1452-volume scan whose
// cleaning took seconds "loaded at 1 MB/s". Below a millisecond the timer's resolution and
// the scheduler make any rate meaningless, so none is given then.
func loadRate(s *scan.Scan, secs float64) string {
	if s.BytesRead <= 0 || !(secs >= 1e-3) {
		return ""
	}
	return fmt.Sprintf("loaded %d nodes × %d time points (%.0f MB/s)", s.N, s.L, float64(s.BytesRead)/1e6/secs)
}

func (r *runner) stage(name string, since time.Time) {
	r.timings = append(r.timings, bundle.StageTiming{Stage: name, Seconds: time.Since(since).Seconds()})
}

// describeInput hashes an input file that the load did not digest; tests replace it to
// check that the load's digests are used.
var describeInput = bundle.DescribeInput

// inputOf is the provenance of an input file: the digest the load computed while reading it
// (scan.Scan.Inputs), or, where it has none, a fresh read of the file.
func inputOf(path string, digests []scan.FileDigest) (bundle.Input, error) {
	for _, d := range digests {
		if d.Path == path {
			return bundle.Input{Path: d.Path, Bytes: d.Bytes, SHA256: d.SHA256}, nil
		}
	}
	return describeInput(path)
}

// provenance describes the run; engine and device name what built the network; digests are
// the scan's Inputs, so the input files are not read again.
func (r *runner) provenance(engine, device string, fcrep *fc.Report, digests []scan.FileDigest) (*bundle.Provenance, error) {
	scanPath := r.cfg.Scan
	if r.cfg.Group != nil && len(digests) > 0 { // the first subject; Subjects lists them all
		scanPath = digests[0].Path
	}
	var subjects []schema.GroupSubject
	if r.cfg.Group != nil {
		for _, sub := range r.cfg.Group.Subjects {
			in, err := inputOf(sub.Path, digests)
			if err != nil {
				return nil, err
			}
			subjects = append(subjects, schema.GroupSubject{Label: sub.Label, Path: in.Path, Bytes: in.Bytes, SHA256: in.SHA256})
		}
	}
	if r.dicom != nil {
		scanPath = r.dicom.NIfTI // digested while loading
	}
	in, err := inputOf(scanPath, digests)
	if err != nil {
		return nil, err
	}
	if r.conversion != nil {
		in.Path = r.conversion.NIfTI // inside the bundle; the temporary copy is gone
	}
	p := &bundle.Provenance{
		Software:   schema.AppName,
		Version:    schema.Version,
		Created:    time.Now().UTC().Truncate(time.Second),
		Input:      in,
		Subjects:   subjects,
		Parameters: r.cfg,
		Backend:    engine,
		Host:       bundle.ThisHost(),
		Timings:    append(r.timings, bundle.StageTiming{Stage: "total", Seconds: time.Since(r.start).Seconds()}),
		Notes:      fcrep.Notes,
	}
	if engine == "cuda" {
		p.Device = device
	}
	p.Conversion = r.conversion
	if r.cfg.Mask != "" {
		mi, err := inputOf(r.cfg.Mask, digests)
		if err != nil {
			return nil, err
		}
		p.Notes = append(p.Notes, fmt.Sprintf("mask %s sha256 %s", mi.Path, mi.SHA256))
	}
	return p, nil
}

// nodeMap is one NIfTI map of the bundle.
type nodeMap struct {
	name   string
	values []float32
	dtype  nifti.DataType
}

// writeSweep puts the sweep's table, JSON, curves and hub stability map in the bundle.
// sweepOptions measures every threshold as the metrics measure the network: clustering and
// Leiden's Q unless --metrics none; paths, local efficiency and, with --random networks, γ, λ
// and σ in full mode, with the metrics' own Leiden and random-network settings (so that a
// threshold's values equal the full metrics of the network built at that threshold alone).
func sweepOptions(cfg Config, acc graph.Accelerator) sweep.Options {
	full := cfg.Metrics == settings.MetricsFull
	o := sweep.Options{HubSD: cfg.HubSD, Paths: full, LocalEfficiency: full, Clustering: cfg.Metrics != settings.MetricsNone,
		Accelerator: acc}
	if cfg.Metrics != settings.MetricsNone {
		lo := leidenOptions(cfg)
		o.Modules = &lo
	}
	if full && cfg.Random > 0 {
		o.SmallWorld = &graph.SmallWorldOptions{Random: cfg.Random, Seed: cfg.Seed, PathSources: pathSources(cfg),
			SwapsPerEdge: cfg.SwapsPerEdge}
	}
	return o
}

func writeSweep(w *bundle.Writer, s *scan.Scan, sw *sweep.Result) error {
	if err := w.WriteTSV("sweep.tsv", sweep.TSVHeader(), sw.Rows); err != nil {
		return err
	}
	if err := w.WriteJSON(schema.SweepFile, &sw.Sweep); err != nil {
		return err
	}
	for _, format := range []string{"png", "svg"} {
		if err := w.WriteFile("sweep."+format, func(out io.Writer) error { return sw.Plot(out, format) }); err != nil {
			return err
		}
	}
	if s.IJK != nil {
		if err := w.WriteNodeMap("hub_stability.nii.gz", s, sw.HubStability, nifti.Float32); err != nil {
			return err
		}
		for i, deg := range sw.Degrees { // every threshold's degree, for normative comparisons per threshold
			if err := w.WriteNodeMap(sweep.DegreeMap(sw.Spec.Values[i])+".nii.gz", s, toF32(deg), nifti.Float32); err != nil {
				return err
			}
		}
	}
	return nil
}

func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// DeviceSummary describes the compute devices for `version` and `bench`.
func DeviceSummary() string {
	if d, err := cuda.Available(); err == nil {
		return "cuda: " + d
	} else if errors.Is(err, cuda.ErrNoCUDA) {
		return "cuda: not built in (build with -tags cuda)"
	} else {
		return "cuda: " + err.Error()
	}
}
