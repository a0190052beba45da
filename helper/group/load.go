package group

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/hubscope/hubscope/helper/fc"
	"github.com/hubscope/hubscope/helper/progress"
	"github.com/hubscope/hubscope/helper/scan"
)

// Mask rules for subjects whose masks differ.
const (
	MaskIntersect = "intersect" // voxels usable in every subject's automatic mask
	MaskUnion     = "union"     // voxels in any subject's automatic mask, then usable in all
	MaskFile      = "mask"      // one mask file for every subject
)

// Subject is one scan of the cohort.
type Subject struct {
	Label string // "sub-01" or the file's name
	Path  string
}

// Options say how the subjects' voxels are matched.
type Options struct {
	MaskRule string // intersect (default), union or mask
	MaskPath string // with MaskRule mask
	// Clean, when set, cleans each subject's series in place right after it is read (on the
	// loading goroutines), before its voxels are copied into the cohort's matrix.
	Clean func(Subject, *scan.Scan) error
	// Truncate lets subjects of different lengths (after any resampling to the common TR) in:
	// every subject's first volumes, as many as the shortest has, are used. Without it they
	// are refused, named with their lengths.
	Truncate bool

	// how forces one of the loader's ways (tests compare them); 0 chooses (Load).
	how loadWay
}

// loadWay is how Load reads the subjects.
type loadWay int

const (
	wayAuto    loadWay = iota
	wayStream          // loadStreaming
	wayKeep            // loadSurveyed, keeping each subject's series from the survey
	wayTwoPass         // loadSurveyed decoding every file twice, as the loader did before
)

// streamFrom is the cohort size, in subjects per loading goroutine, from which Load streams
// the subjects into the matrix instead of keeping their series from a survey. Streaming holds
// per goroutine one subject's stored volumes and series (int16 on an MNI grid: about 3.7 times
// one subject's share of the matrix) and the matrix over the first subject's nodes (a few per
// cent more than the common ones); keeping holds every subject's int16 series (0.55 times the
// matrix, freed as the matrix fills) plus one subject's series per goroutine. Measured peaks
// (3 mm phantoms, 2 goroutines): 12 subjects 1.97–2.05× the matrix streaming, 1.75–1.98×
// keeping; 48 subjects 1.36× streaming, 1.48× keeping.
const streamFrom = 8

// Cohort is the subjects' series on one grid, ready for a group-mean network.
type Cohort struct {
	Subjects []Subject
	S, L     int // subjects, time points per subject
	// Scan describes the common nodes (IJK, grid, affine, TR, mask, N) for the bundle's maps;
	// its Data is nil and its L is the per-subject length.
	Scan *scan.Scan
	// X is N × S·L: node v's series of subject s at X[v·S·L + s·L : v·S·L + (s+1)·L].
	X []float32
	// Notes say what the mask rule (and any resampling or truncation) did, in words (for the
	// summary and provenance).
	Notes  []string
	Inputs []scan.FileDigest
}

// workers is how many subjects are read at once: one per core (reading is inflate-bound).
func workers(n int) int { return max(1, min(runtime.GOMAXPROCS(0), n)) }

// Load builds the cohort decoding each file once (loadSurveyed's union of masks reads a
// subject again only for voxels outside its own mask). Each subject is taken with its own
// mask (the automatic EPI mask, or the mask file; the union of the masks for rule union),
// cleaned (Options.Clean), and resampled when its TR differs; its common nodes' series go
// straight into the cohort's N × S·L matrix. Differing grids are refused, naming the
// subjects; differing TRs are resampled to the group's longest TR and differing lengths
// refused or, with Options.Truncate, cut to the shortest (timing). Two ways:
//
//   - loadStreaming (rules intersect and mask, from streamFrom subjects per core): headers
//     first, then every subject decoded, cleaned and copied into the matrix as it is read,
//     one per core; peak memory the matrix over the first subject's nodes plus one subject's
//     stored volumes and series per core.
//   - loadSurveyed (rule union, and smaller cohorts): survey every subject keeping its own
//     mask's series in the file's stored type (int16: half the size of float32), settle the
//     common nodes, then take each subject's scan from its kept series; peak memory the
//     matrix plus the kept series (bounded to keptShare of the matrix: a subject beyond it is
//     read again instead) plus one subject's series per core.
func Load(ctx context.Context, subjects []Subject, opt Options, rep progress.Reporter) (*Cohort, error) {
	rep = progress.OrDiscard(rep)
	if len(subjects) < 2 {
		return nil, fmt.Errorf("group: %d subject(s): a group network needs at least 2", len(subjects))
	}
	switch opt.MaskRule {
	case "":
		opt.MaskRule = MaskIntersect
	case MaskIntersect, MaskUnion:
	case MaskFile:
		if opt.MaskPath == "" {
			return nil, fmt.Errorf("group: --mask-rule mask needs a mask file")
		}
	default:
		return nil, fmt.Errorf("group: unknown mask rule %q (want intersect, union or mask FILE)", opt.MaskRule)
	}
	if opt.MaskPath != "" {
		opt.MaskRule = MaskFile
	}
	// Each subject's decoding, cleaning and series are garbage once it is in X (or kept), and X
	// (and any kept series) are most of the live heap: at Go's default GOGC of 100 the heap
	// may grow to twice them before a collection returns that garbage (measured: peak RSS 2.4×
	// the cohort's series, 3.0× with kept series). The loader collects after a subject
	// whenever a twentieth of the live heap has been allocated since the last collection (gc),
	// instead of setting GOGC for the whole process (a daemon runs other jobs beside a load).
	gc := newCollector()
	if opt.how == wayAuto {
		opt.how = wayKeep
		if opt.MaskRule != MaskUnion && len(subjects) >= streamFrom*workers(len(subjects)) {
			opt.how = wayStream
		}
	}
	if opt.how == wayStream && opt.MaskRule != MaskUnion {
		return loadStreaming(ctx, subjects, opt, gc, rep)
	}
	return loadSurveyed(ctx, subjects, opt, gc, rep)
}

// loadStreaming is Load for the rules intersect and mask, whose common nodes are a subset of
// every subject's own nodes (its mask's voxels with usable series), so of the first
// subject's: X is made with the first subject's nodes as rows, and every subject is decoded
// once (scan.SurveyKeep), taken with its own mask, cleaned, resampled and copied into those
// rows as soon as it is read, one subject per core; once all are in, the rows of the common
// nodes are moved up in place and the rest cut off. Peak memory: X over the first subject's
// nodes (the common ones and a few per cent more) plus one subject's stored volumes and
// series per core. The headers are checked first (grids, TRs, lengths), as the survey did.
func loadStreaming(ctx context.Context, subjects []Subject, opt Options, gc *collector, rep progress.Reporter) (*Cohort, error) {
	S := len(subjects)
	hdrs := make([]*scan.Survey, S)
	errs := make([]error, S)
	forEach(S, func(i int) {
		if errs[i] = notImage(subjects[i]); errs[i] == nil {
			hdrs[i], errs[i] = scan.SurveyHeader(subjects[i].Path)
		}
	})
	if err := subjectError(subjects, errs); err != nil {
		return nil, err
	}
	if err := sameGrid(subjects, hdrs); err != nil {
		return nil, err
	}
	tp, err := planTiming(subjects, hdrs, opt.Truncate)
	if err != nil {
		return nil, err
	}
	c := &Cohort{Subjects: subjects, S: S}
	svs := make([]*scan.Survey, S)
	inputs := make([][]scan.FileDigest, S)
	var rows []int               // X's rows until all are in: the first subject's nodes (grid indices)
	ready := make(chan struct{}) // closed once rows and X are made, or the first subject failed
	var once sync.Once
	scratch := scratchPool(S)
	var mu sync.Mutex
	rep.Start("loading subjects", int64(S))
	forEach(S, func(i int) {
		if i == 0 {
			defer once.Do(func() { close(ready) })
		}
		sub := subjects[i]
		sc := <-scratch
		sv, s, err := scan.SurveyRead(ctx, sub.Path, opt.MaskPath, sc)
		scratch <- sc
		if err == nil && opt.Clean != nil {
			err = opt.Clean(sub, s)
		}
		if err != nil {
			errs[i] = err
			return
		}
		svs[i] = sv
		w := tp.matrix[i] // nil: the subject's TR is the common one
		if w != nil && w.cols != s.L {
			w = newResampler(s.L, sv.TR, tp.tr) // cleaning removed volumes
		}
		lr := s.L
		if w != nil {
			lr = w.rows
		}
		if i == 0 {
			// The common length: the plan's, less what cleaning removed from this subject.
			c.L = tp.length - (tp.lengths[0] - lr)
			if c.L < scan.MinTimePoints {
				errs[i] = fmt.Errorf("%d volumes left after cleaning%s: a correlation needs at least %d", lr, tp.resampledWords(i), scan.MinTimePoints)
				return
			}
			rows = make([]int, s.N)
			for v, p := range s.IJK {
				rows[v] = int(p[0]) + s.Dims[0]*(int(p[1])+s.Dims[1]*int(p[2]))
			}
			c.X = make([]float32, len(rows)*S*c.L)
			once.Do(func() { close(ready) })
		} else {
			select {
			case <-ready:
			case <-ctx.Done():
				errs[i] = fmt.Errorf("load %s: %w", sub.Path, ctx.Err())
				return
			}
			if c.X == nil {
				return // the first subject failed: its error is the one reported
			}
		}
		L := c.L
		if lr < L || (lr > L && !opt.Truncate) {
			errs[i] = fmt.Errorf("%d volumes after cleaning%s, where the cohort has %d (scrubbing removed different numbers of volumes)", lr, tp.resampledWords(i), L)
			return
		}
		copyRows(c.X, s, rows, i, S, L, w)
		inputs[i] = s.Inputs
		s = nil
		gc.check()
		mu.Lock()
		rep.Add(1)
		mu.Unlock()
	})
	if err := subjectError(subjects, errs); err != nil {
		return nil, err
	}
	nodes, common, _, anyMask, notes := commonNodes(svs, opt)
	c.Notes = append(notes, tp.notes...)
	if len(nodes) < 2 {
		return nil, fmt.Errorf("group: only %d voxel(s) usable in all %d subjects (mask rule %s): a network needs at least 2", len(nodes), S, opt.MaskRule)
	}
	// Compact: node v's row moves up from its row among the first subject's nodes (both lists
	// increase, so a row only ever moves to a lower place, over rows already moved).
	SL := S * c.L
	j := 0
	for v, f := range nodes {
		for j < len(rows) && rows[j] < f {
			j++
		}
		if j == len(rows) || rows[j] != f {
			return nil, fmt.Errorf("group: voxel %d is usable in every subject but not a node of %s", f, subjects[0].Label)
		}
		if j != v {
			copy(c.X[v*SL:(v+1)*SL], c.X[j*SL:(j+1)*SL])
		}
	}
	c.X = c.X[: len(nodes)*SL : len(nodes)*SL]
	for _, in := range inputs {
		c.Inputs = append(c.Inputs, in...)
	}
	finishCohort(c, subjects, svs, nodes, common, anyMask, tp)
	return c, nil
}

// copyRows copies subject i's series (resampled by w when not nil) into the rows of x (row r
// is grid voxel rows[r]) that are nodes of s: its first l values at x[r·S·l + i·l].
func copyRows(x []float32, s *scan.Scan, rows []int, i, S, l int, w *resampler) {
	SL := S * l
	d := s.Dims
	var tmp []float32
	if w != nil {
		tmp = make([]float32, s.L)
	}
	for r, f := range rows {
		src, ok := s.NodeAt(f%d[0], f/d[0]%d[1], f/(d[0]*d[1]))
		if !ok {
			continue // not a node of this subject, so not a common node
		}
		row := s.Data[src*s.L : (src+1)*s.L]
		dst := x[r*SL+i*l : r*SL+(i+1)*l]
		if w != nil {
			copy(tmp, row)
			w.apply(dst, tmp)
		} else {
			copy(dst, row[:l])
		}
	}
}

// notImage refuses a plain time-series matrix as a subject (subjectError names the file).
func notImage(sub Subject) error {
	switch strings.ToLower(filepath.Ext(sub.Path)) {
	case ".npy", ".csv", ".tsv", ".txt":
		return fmt.Errorf("a group network needs images on one grid, not a time-series matrix")
	}
	return nil
}

// subjectError is the first subject's error, named with the subject.
func subjectError(subjects []Subject, errs []error) error {
	for i, err := range errs {
		if err != nil {
			return subjects[i].named(err)
		}
	}
	return nil
}

// named says which subject and file err is about, each once: a subject labelled with its
// file's name is named by its path alone, and a path the error already holds (the NIfTI
// reader's "open PATH: …") is not repeated.
func (sub Subject) named(err error) error {
	msg := err.Error()
	fileLabel := sub.Label == "" || sub.Label == filepath.Base(sub.Path) || sub.Label == sub.Path
	switch {
	case strings.HasPrefix(msg, sub.Label+":") || strings.HasPrefix(msg, sub.Label+" "):
		return err
	case strings.Contains(msg, sub.Path) && fileLabel:
		return err
	case strings.Contains(msg, sub.Path):
		return fmt.Errorf("%s: %w", sub.Label, err)
	case fileLabel:
		return fmt.Errorf("%s: %w", sub.Path, err)
	}
	return fmt.Errorf("%s (%s): %w", sub.Label, sub.Path, err)
}

// scratchPool holds one scan.Scratch per loading goroutine.
func scratchPool(n int) chan *scan.Scratch {
	scratch := make(chan *scan.Scratch, workers(n))
	for range cap(scratch) {
		scratch <- &scan.Scratch{}
	}
	return scratch
}

// commonNodes applies the mask rule to the subjects' surveys: the common nodes (grid indices,
// increasing), as a mask, the union of the masks (rule union), how many voxels are in any
// subject's mask, and the rule's note.
func commonNodes(svs []*scan.Survey, opt Options) (nodes []int, common scan.Mask, union *scan.Mask, anyMask int, notes []string) {
	// Common nodes: voxels usable (in the mask, finite, not constant) in every subject.
	dims := svs[0].Dims
	n0 := len(svs[0].Usable)
	count := make([]int, n0)
	usableAll := make([]bool, n0)
	for f := range usableAll {
		usableAll[f] = true
	}
	if opt.MaskRule == MaskUnion {
		union = &scan.Mask{Dims: dims, In: make([]bool, n0)}
	}
	for _, sv := range svs {
		for f, in := range sv.Mask.In {
			if in {
				count[f]++
				if union != nil {
					union.In[f] = true
				}
			}
			usableAll[f] = usableAll[f] && sv.Usable[f]
		}
	}
	common = scan.Mask{Dims: dims, In: make([]bool, n0)}
	for f, k := range count {
		if k > 0 {
			anyMask++
		}
		if usableAll[f] && (k == len(svs) || (union != nil && k > 0)) {
			common.In[f] = true
			nodes = append(nodes, f)
		}
	}
	switch opt.MaskRule {
	case MaskIntersect:
		notes = append(notes, fmt.Sprintf("mask rule intersect: %d voxels usable in all %d subjects' automatic masks (of %d in any)", len(nodes), len(svs), anyMask))
	case MaskFile:
		notes = append(notes, fmt.Sprintf("mask rule mask %s: %d voxels usable in all %d subjects (of %d in the mask)", opt.MaskPath, len(nodes), len(svs), anyMask))
	case MaskUnion:
		notes = append(notes, fmt.Sprintf("mask rule union: %d voxels in any subject's automatic mask", anyMask))
		if len(nodes) < anyMask {
			notes = append(notes, fmt.Sprintf("mask rule union: %d of %d voxels dropped, constant or non-finite in some subject", anyMask-len(nodes), anyMask))
		}
	}
	return nodes, common, union, anyMask, notes
}

// finishCohort describes the common nodes in c.Scan.
func finishCohort(c *Cohort, subjects []Subject, svs []*scan.Survey, nodes []int, common scan.Mask, anyMask int, tp *timing) {
	dims := svs[0].Dims
	g := &scan.Scan{N: len(nodes), L: c.L, Dims: dims, Affine: svs[0].Affine, TR: tp.tr, Mask: common,
		Source: subjects[0].Path, IJK: make([][3]int32, len(nodes))}
	for v, f := range nodes {
		g.IJK[v] = [3]int32{int32(f % dims[0]), int32(f / dims[0] % dims[1]), int32(f / (dims[0] * dims[1]))}
	}
	g.Dropped.MaskVoxels = anyMask
	g.Inputs = c.Inputs
	c.Scan = g
}

// loadSurveyed is Load in two steps, for the rule union (whose nodes may lie outside a
// subject's own mask) and for cohorts of few subjects per core: survey every subject, keeping
// its own mask's series (or, wayTwoPass, nothing), then take every subject with the common
// mask.
func loadSurveyed(ctx context.Context, subjects []Subject, opt Options, gc *collector, rep progress.Reporter) (*Cohort, error) {
	svs, err := surveyAll(ctx, subjects, opt.MaskPath, opt.how != wayTwoPass, gc, rep)
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, sv := range svs {
			sv.Release()
		}
	}()
	// The survey's scratch volumes and garbage go back to the system before X is made.
	debug.FreeOSMemory()
	if err := sameGrid(subjects, svs); err != nil {
		return nil, err
	}
	tp, err := planTiming(subjects, svs, opt.Truncate)
	if err != nil {
		return nil, err
	}
	c := &Cohort{Subjects: subjects, S: len(subjects)}
	nodes, common, union, anyMask, notes := commonNodes(svs, opt)
	c.Notes = append(notes, tp.notes...)
	if len(nodes) < 2 {
		return nil, fmt.Errorf("group: only %d voxel(s) usable in all %d subjects (mask rule %s): a network needs at least 2", len(nodes), len(svs), opt.MaskRule)
	}
	boundKept(svs, len(nodes), tp.length)
	if err := loadInto(ctx, c, subjects, svs, union, nodes, tp, opt, gc, rep); err != nil {
		return nil, err
	}
	finishCohort(c, subjects, svs, nodes, common, anyMask, tp)
	return c, nil
}

// keptShare bounds the subjects' kept series to this share of the cohort's matrix, so that the
// peak (matrix + kept series + one subject per core) stays under twice the matrix: int16
// files keep about 0.55 of it; float32 files would keep 1.1, and their last subjects are read
// again instead.
const keptShare = 0.75

// boundKept releases the kept series of the last subjects while all of them exceed keptShare
// of the n × S·l float32 matrix.
func boundKept(svs []*scan.Survey, n, l int) {
	var total int64
	for _, sv := range svs {
		total += sv.KeptBytes()
	}
	limit := int64(keptShare * float64(n) * float64(len(svs)) * float64(l) * 4)
	for i := len(svs) - 1; i >= 0 && total > limit; i-- {
		total -= svs[i].KeptBytes()
		svs[i].Release()
	}
}

// surveyAll runs the first pass over every subject, one per core; keep keeps each subject's
// series (scan.SurveyKeep), else the survey reads without keeping (scan.SurveyScan).
func surveyAll(ctx context.Context, subjects []Subject, maskPath string, keep bool, gc *collector, rep progress.Reporter) ([]*scan.Survey, error) {
	svs := make([]*scan.Survey, len(subjects))
	errs := make([]error, len(subjects))
	rep.Start("surveying subjects", int64(len(subjects)))
	var mu sync.Mutex
	scratch := scratchPool(len(subjects))
	forEach(len(subjects), func(i int) {
		sub := subjects[i]
		switch errs[i] = notImage(sub); {
		case errs[i] != nil:
		case !keep:
			svs[i], errs[i] = scan.SurveyScan(ctx, sub.Path, maskPath)
		default:
			sc := <-scratch
			svs[i], errs[i] = scan.SurveyKeep(ctx, sub.Path, maskPath, sc)
			scratch <- sc
		}
		gc.check()
		mu.Lock()
		rep.Add(1)
		mu.Unlock()
	})
	if err := subjectError(subjects, errs); err != nil {
		return nil, err
	}
	return svs, nil
}

// forEach calls f(0…n−1), workers(n) at a time.
func forEach(n int, f func(i int)) {
	sem := make(chan struct{}, workers(n))
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			f(i)
		}()
	}
	wg.Wait()
}

// loadInto is the second pass: every subject read with its surveyed mask (or the union),
// cleaned, resampled to the common TR when needed, and its common nodes' first c.L values
// copied into c.X. X is allocated once the first subject's final length is known (cleaning may
// drop volumes, the same number in every subject unless it scrubs).
func loadInto(ctx context.Context, c *Cohort, subjects []Subject, svs []*scan.Survey, union *scan.Mask, nodes []int, tp *timing, opt Options, gc *collector, rep progress.Reporter) error {
	S, n := len(subjects), len(nodes)
	errs := make([]error, S)
	inputs := make([][]scan.FileDigest, S)
	lengths := make([]int, S)
	var mu sync.Mutex
	rep.Start("loading subjects", int64(S))
	forEach(S, func(i int) {
		sub, sv := subjects[i], svs[i]
		mask, rule := &sv.Mask, sv.MaskRule
		if union != nil {
			mask, rule = union, "union of the subjects' automatic masks"
		}
		s, err := sv.Load(ctx, mask, rule)
		sv.Release()
		if err == nil && opt.Clean != nil {
			err = opt.Clean(sub, s)
		}
		if err != nil {
			errs[i] = err
			return
		}
		w := tp.matrix[i] // nil: the subject's TR is the common one
		if w != nil && w.cols != s.L {
			w = newResampler(s.L, sv.TR, tp.tr) // cleaning removed volumes
		}
		lr := s.L
		if w != nil {
			lr = w.rows
		}
		lengths[i] = lr
		mu.Lock()
		if c.X == nil {
			// The common length: the plan's, less what cleaning removed from this subject.
			c.L = tp.length - (tp.lengths[i] - lr)
			if c.L < scan.MinTimePoints {
				mu.Unlock()
				errs[i] = fmt.Errorf("%d volumes left after cleaning%s: a correlation needs at least %d", lr, tp.resampledWords(i), scan.MinTimePoints)
				return
			}
			c.X = make([]float32, n*S*c.L)
		}
		L := c.L
		mu.Unlock()
		if lr < L || (lr > L && !opt.Truncate) {
			errs[i] = fmt.Errorf("%d volumes after cleaning%s, where the cohort has %d (scrubbing removed different numbers of volumes)", lr, tp.resampledWords(i), L)
			return
		}
		s.IndexGrid()
		SL := S * L
		tmp := make([]float32, s.L)
		for v, f := range nodes {
			d := svs[0].Dims
			src, ok := s.NodeAt(f%d[0], f/d[0]%d[1], f/(d[0]*d[1]))
			if !ok {
				errs[i] = fmt.Errorf("voxel %d is usable in the first pass but not in the second (did the file change?)", f)
				return
			}
			row := s.Data[src*s.L : (src+1)*s.L]
			dst := c.X[v*SL+i*L : v*SL+(i+1)*L]
			if w != nil {
				copy(tmp, row)
				w.apply(dst, tmp)
			} else {
				copy(dst, row[:L])
			}
		}
		inputs[i] = s.Inputs
		s = nil
		gc.check()
		mu.Lock()
		rep.Add(1)
		mu.Unlock()
	})
	if err := subjectError(subjects, errs); err != nil {
		return err
	}
	for _, in := range inputs {
		c.Inputs = append(c.Inputs, in...)
	}
	return nil
}

// sameGrid refuses subjects whose grid or affine differ from the first's (TRs and lengths are
// planTiming's).
func sameGrid(subjects []Subject, svs []*scan.Survey) error {
	a := svs[0]
	var bad []string
	for i, s := range svs[1:] {
		name := subjects[i+1].Label
		switch {
		case s.Dims != a.Dims:
			bad = append(bad, fmt.Sprintf("%s grid %d×%d×%d (%s has %d×%d×%d)", name, s.Dims[0], s.Dims[1], s.Dims[2], subjects[0].Label, a.Dims[0], a.Dims[1], a.Dims[2]))
		case !sameAffine(s.Affine, a.Affine):
			bad = append(bad, fmt.Sprintf("%s has another voxel-to-world affine than %s", name, subjects[0].Label))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("group: subjects differ: %s (resample them to one grid first)", strings.Join(bad, "; "))
	}
	return nil
}

func sameAffine(a, b [4][4]float64) bool {
	for i := 0; i < 3; i++ {
		for j := 0; j < 4; j++ {
			if math.Abs(a[i][j]-b[i][j]) > 1e-4 {
				return false
			}
		}
	}
	return true
}

// Concatenate normalises every subject's part of every row of x (N × S·L) in place (ranks
// first for Spearman), so that fc.Build's Pearson on x is the mean over subjects of r (or of
// Spearman's ρ): with unit parts the concatenated row has norm √S and the product of two rows
// divided by S is (1/S) Σ_s r_s.
func Concatenate(x []float32, n, s, l int, m fc.Measure) error {
	if m == fc.Kendall {
		return fmt.Errorf("group: the mean over subjects is defined for Pearson and Spearman, not Kendall's τ")
	}
	parallel(runtime.GOMAXPROCS(0), n, func(i0, i1 int) {
		var rk fc.Ranker
		tmp := make([]float32, l)
		for i := i0; i < i1; i++ {
			for k := 0; k < s; k++ {
				d := x[i*s*l+k*l : i*s*l+(k+1)*l]
				if m == fc.Spearman {
					rk.Ranks(tmp, d)
					fc.NormalizeRow(d, tmp)
				} else {
					fc.NormalizeRow(d, d)
				}
			}
		}
	})
	return nil
}

// collector runs a garbage collection once the bytes allocated since the last one reach a
// twentieth of the heap it left live (at least 32 MiB): GOGC=5's pace, but only at the loader's
// checkpoints and without changing the process's GOGC. One collection at a time; a
// goroutine that finds one running goes on.
type collector struct {
	busy   atomic.Bool
	allocs uint64 // allocated bytes at the end of the last collection
	live   uint64 // live heap bytes then
}

var gcMetrics = []string{"/gc/heap/allocs:bytes", "/gc/heap/live:bytes"}

func newCollector() *collector {
	c := &collector{}
	c.allocs, c.live = heapFigures()
	return c
}

func heapFigures() (allocs, live uint64) {
	m := make([]metrics.Sample, len(gcMetrics))
	for i, name := range gcMetrics {
		m[i].Name = name
	}
	metrics.Read(m)
	return m[0].Value.Uint64(), m[1].Value.Uint64()
}

func (c *collector) check() {
	if !c.busy.CompareAndSwap(false, true) {
		return
	}
	defer c.busy.Store(false)
	allocs, _ := heapFigures()
	if allocs-c.allocs < max(c.live/20, 32<<20) {
		return
	}
	runtime.GC()
	c.allocs, c.live = heapFigures()
}
