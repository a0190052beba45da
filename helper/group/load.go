package group

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"strings"
	"sync"

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
	// loading goroutines), before the subjects are compared: grids, TRs and lengths are
	// checked on the cleaned series.
	Clean func(Subject, *scan.Scan) error
}

// Cohort is the subjects' series on one grid, ready for a group-mean network.
type Cohort struct {
	Subjects []Subject
	S, L     int // subjects, time points per subject
	// Scan describes the common nodes (IJK, grid, affine, TR, mask, N) for the bundle's maps;
	// its Data is nil and its L is the per-subject length.
	Scan *scan.Scan
	// X is N × S·L: node v's series of subject s at X[v·S·L + s·L : v·S·L + (s+1)·L].
	X []float32
	// Notes say what the mask rule did, in words (for the summary and provenance).
	Notes  []string
	Inputs []scan.FileDigest
}

// Load reads the subjects (in parallel, GOMAXPROCS at a time), refuses differing grids,
// TRs and lengths naming the subjects, and matches their voxels by the mask rule.
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
	scans, err := loadAll(ctx, subjects, scan.Options{MaskPath: opt.MaskPath}, opt.Clean, rep)
	if err != nil {
		return nil, err
	}
	if err := sameGrid(subjects, scans); err != nil {
		return nil, err
	}
	c := &Cohort{Subjects: subjects, S: len(subjects), L: scans[0].L}
	if opt.MaskRule == MaskUnion {
		union := scan.Mask{Dims: scans[0].Dims, In: make([]bool, len(scans[0].Mask.In))}
		for _, s := range scans {
			for f, in := range s.Mask.In {
				union.In[f] = union.In[f] || in
			}
		}
		c.Notes = append(c.Notes, fmt.Sprintf("mask rule union: %d voxels in any subject's automatic mask", union.Count()))
		// The union is handed to the loader in memory: a copy in a temporary folder was left
		// behind when the process was killed meanwhile.
		if scans, err = loadAll(ctx, subjects, scan.Options{Mask: &union}, opt.Clean, rep); err != nil {
			return nil, err
		}
	}
	// Common nodes: voxels usable (in the mask, finite, not constant) in every subject.
	n0 := len(scans[0].Mask.In)
	count := make([]int, n0)
	for _, s := range scans {
		for f, in := range s.Mask.In {
			if in {
				count[f]++
			}
		}
	}
	common := scan.Mask{Dims: scans[0].Dims, In: make([]bool, n0)}
	var nodes []int
	anyMask := 0
	for f, k := range count {
		if k > 0 {
			anyMask++
		}
		if k == len(scans) {
			common.In[f] = true
			nodes = append(nodes, f)
		}
	}
	switch opt.MaskRule {
	case MaskIntersect:
		c.Notes = append(c.Notes, fmt.Sprintf("mask rule intersect: %d voxels usable in all %d subjects' automatic masks (of %d in any)", len(nodes), len(scans), anyMask))
	case MaskFile:
		c.Notes = append(c.Notes, fmt.Sprintf("mask rule mask %s: %d voxels usable in all %d subjects (of %d in the mask)", opt.MaskPath, len(nodes), len(scans), anyMask))
	case MaskUnion:
		if len(nodes) < anyMask {
			c.Notes = append(c.Notes, fmt.Sprintf("mask rule union: %d of %d voxels dropped, constant or non-finite in some subject", anyMask-len(nodes), anyMask))
		}
	}
	if len(nodes) < 2 {
		return nil, fmt.Errorf("group: only %d voxel(s) usable in all %d subjects (mask rule %s): a network needs at least 2", len(nodes), len(scans), opt.MaskRule)
	}
	n, S, L := len(nodes), c.S, c.L
	c.X = make([]float32, n*S*L)
	for s, sc := range scans {
		sc.IndexGrid()
		for v, f := range nodes {
			ijk := [3]int{f % common.Dims[0], f / common.Dims[0] % common.Dims[1], f / (common.Dims[0] * common.Dims[1])}
			src, _ := sc.NodeAt(ijk[0], ijk[1], ijk[2]) // in every subject's mask by construction
			copy(c.X[v*S*L+s*L:v*S*L+(s+1)*L], sc.Data[src*L:(src+1)*L])
		}
		c.Inputs = append(c.Inputs, sc.Inputs...)
	}
	g := &scan.Scan{N: n, L: L, Dims: scans[0].Dims, Affine: scans[0].Affine, TR: scans[0].TR, Mask: common,
		Source: subjects[0].Path, IJK: make([][3]int32, n)}
	for v, f := range nodes {
		g.IJK[v] = [3]int32{int32(f % common.Dims[0]), int32(f / common.Dims[0] % common.Dims[1]), int32(f / (common.Dims[0] * common.Dims[1]))}
	}
	g.Dropped.MaskVoxels = anyMask
	g.Inputs = c.Inputs
	c.Scan = g
	return c, nil
}

func loadAll(ctx context.Context, subjects []Subject, mask scan.Options, clean func(Subject, *scan.Scan) error, rep progress.Reporter) ([]*scan.Scan, error) {
	scans := make([]*scan.Scan, len(subjects))
	errs := make([]error, len(subjects))
	sem := make(chan struct{}, max(1, min(runtime.GOMAXPROCS(0), 8)))
	var wg sync.WaitGroup
	rep.Start("loading subjects", int64(len(subjects)))
	var mu sync.Mutex
	for i, sub := range subjects {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			scans[i], errs[i] = scan.Load(ctx, sub.Path, scan.Options{MaskPath: mask.MaskPath, Mask: mask.Mask}, nil)
			if errs[i] == nil && clean != nil {
				errs[i] = clean(sub, scans[i])
			}
			mu.Lock()
			rep.Add(1)
			mu.Unlock()
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("%s: %w", subjects[i].Label, err)
		}
		if scans[i].IJK == nil {
			return nil, fmt.Errorf("%s (%s): a group network needs images on one grid, not a time-series matrix", subjects[i].Label, subjects[i].Path)
		}
	}
	return scans, nil
}

// sameGrid refuses subjects whose grid, affine, TR or length differ from the first's.
func sameGrid(subjects []Subject, scans []*scan.Scan) error {
	a := scans[0]
	var bad []string
	for i, s := range scans[1:] {
		name := subjects[i+1].Label
		switch {
		case s.Dims != a.Dims:
			bad = append(bad, fmt.Sprintf("%s grid %d×%d×%d (%s has %d×%d×%d)", name, s.Dims[0], s.Dims[1], s.Dims[2], subjects[0].Label, a.Dims[0], a.Dims[1], a.Dims[2]))
		case !sameAffine(s.Affine, a.Affine):
			bad = append(bad, fmt.Sprintf("%s has another voxel-to-world affine than %s", name, subjects[0].Label))
		case s.L != a.L:
			bad = append(bad, fmt.Sprintf("%s %d volumes (%s has %d)", name, s.L, subjects[0].Label, a.L))
		case math.Abs(s.TR-a.TR) > 1e-6*math.Max(1, a.TR):
			bad = append(bad, fmt.Sprintf("%s TR %g s (%s has %g s)", name, s.TR, subjects[0].Label, a.TR))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("group: subjects differ: %s (resample them to one grid, TR and length first)", strings.Join(bad, "; "))
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
