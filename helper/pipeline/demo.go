package pipeline

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/hubscope/hubscope/helper/bundle"
	"github.com/hubscope/hubscope/helper/graph/community"
	"github.com/hubscope/hubscope/helper/nifti"
	"github.com/hubscope/hubscope/helper/progress"
	"github.com/hubscope/hubscope/helper/scan"
	"github.com/hubscope/hubscope/helper/synth"
	"github.com/hubscope/hubscope/ipc/schema"
)

// The demo (Config.Demo) analyses the built-in phantom and keeps it, with its mask and its
// ground truth, in the bundle's DemoDir, so that every path in metrics.json and
// provenance.json names a file that exists and the result can be checked against the truth.
const (
	DemoDir              = "demo"
	DemoScanFile         = "demo/phantom.nii.gz"
	DemoMaskFile         = "demo/mask.nii.gz"
	DemoTruthModulesFile = "demo/phantom_truth_modules.nii.gz"
	DemoTruthHubsFile    = "demo/phantom_truth_hubs.tsv"
	// DemoConfoundsFile is the phantom's nuisance as an fMRIPrep-style confounds table
	// (synth.WriteNuisance): the demo phantom carries drifts, motion effects and a global
	// signal, as a real scan does, and --denoise auto cleans them with it.
	DemoConfoundsFile = "demo/phantom_desc-confounds_timeseries.tsv"
)

// DemoVoxelMM is the demo phantom's grid: the embedded MNI152 brain mask resampled to 6 mm
// (8,778 voxels), small enough that the full default analysis, 15 random networks included,
// takes seconds to a minute on a laptop. Tests shrink the grid by raising it.
var DemoVoxelMM = 6.0

// TruthCheck is schema.TruthCheck (the bundle's file schemas live in package schema).
type TruthCheck = schema.TruthCheck

// demoTruth is the planted structure on the phantom's grid (flat voxel index → truth).
type demoTruth struct {
	modules map[int32]int // module 1..M of every phantom voxel
	hubs    []int32       // flat index of every planted hub
	planted int           // number of planted modules
}

// writeDemo writes the phantom, the mask it was built on and its ground truth into the bundle
// (DemoDir) and returns the temporary paths of the scan and the mask, which Run analyses.
func writeDemo(ctx context.Context, w *bundle.Writer, rep progress.Reporter) (scanPath, maskPath string, truth *demoTruth, err error) {
	m, affine, err := synth.DemoMask()
	if err != nil {
		return "", "", nil, err
	}
	m, affine = synth.ResampleMask(m, affine, DemoVoxelMM)
	maskPath, scanPath = w.Path(DemoMaskFile), w.Path(DemoScanFile)
	if maskPath == "" || scanPath == "" {
		return "", "", nil, fmt.Errorf("bundle %s: cannot create %s", w.Dir(), DemoDir)
	}
	in := make([]float32, len(m.In))
	for f, v := range m.In {
		if v {
			in[f] = 1
		}
	}
	d := m.Dims
	if err := nifti.WriteImage(maskPath, nifti.NewHeader([]int{d[0], d[1], d[2]}, nifti.Uint8, affine, 0), in); err != nil {
		return "", "", nil, err
	}
	p := synth.DefaultParams()
	p.HighHz = 0.08 // the resting-state band the default cleaning keeps
	tr, err := synth.WriteNuisance(ctx, m, affine, p, synth.DefaultNuisance, scanPath, rep)
	if err != nil {
		return "", "", nil, err
	}
	if synth.ConfoundsPath(scanPath) != w.Path(DemoConfoundsFile) {
		return "", "", nil, fmt.Errorf("demo: confounds written to %s, not where the bundle lists them", synth.ConfoundsPath(scanPath))
	}
	// synth.Write puts the truth beside the scan under these names.
	if mods, hubs := synth.TruthPaths(scanPath); mods != w.Path(DemoTruthModulesFile) || hubs != w.Path(DemoTruthHubsFile) {
		return "", "", nil, fmt.Errorf("demo: truth written to %s and %s, not where the bundle lists it", mods, hubs)
	}
	truth = &demoTruth{modules: map[int32]int{}, planted: p.Modules}
	var flat []int32 // the phantom's node v is the v-th voxel of the mask in flat order
	for f, v := range m.In {
		if v {
			flat = append(flat, int32(f))
		}
	}
	for v, mod := range tr.Modules {
		truth.modules[flat[v]] = int(mod)
	}
	for _, h := range tr.Hubs {
		truth.hubs = append(truth.hubs, flat[h])
	}
	return scanPath, maskPath, truth, nil
}

// checkTruth compares the analysis of the demo phantom with its planted structure. It works
// through voxel positions, so it holds for any phantom whose truth demoTruth describes,
// whichever voxels the load dropped.
func checkTruth(s *scan.Scan, m *Metrics, truth *demoTruth) (*TruthCheck, error) {
	tc := &TruthCheck{TruthModules: DemoTruthModulesFile, TruthHubs: DemoTruthHubsFile,
		PlantedModules: truth.planted, PlantedHubs: len(truth.hubs)}
	nodeOf := map[int32]int{}
	nx, ny := int32(s.Dims[0]), int32(s.Dims[1])
	for v, p := range s.IJK {
		nodeOf[p[0]+nx*(p[1]+ny*p[2])] = v
	}
	if m.membership != nil {
		planted := make([]int, s.N)
		for v, p := range s.IJK {
			planted[v] = truth.modules[p[0]+nx*(p[1]+ny*p[2])] // 0: not a phantom voxel
		}
		nmi, err := community.NormalizedMutualInformation(planted, m.membership)
		if err != nil {
			return nil, fmt.Errorf("demo truth check: %w", err)
		}
		sizes := map[int]int{}
		for _, c := range m.membership {
			sizes[c]++
		}
		found, single := 0, 0
		for _, n := range sizes {
			if n >= 2 {
				found++
			} else {
				single++
			}
		}
		tc.NMI, tc.FoundModules, tc.FoundSingletons = ptr(nmi), ptr(found), ptr(single)
	}
	order := make([]int, s.N)
	for v := range order {
		order[v] = v
	}
	slices.SortStableFunc(order, func(a, b int) int { return m.degree[b] - m.degree[a] })
	top := map[int]bool{}
	for _, v := range order[:min(len(truth.hubs), len(order))] {
		top[v] = true
	}
	flagged := map[int]bool{}
	for _, v := range m.hubs {
		flagged[v] = true
	}
	tc.RuleHubs = len(m.hubs)
	for _, f := range truth.hubs {
		v, ok := nodeOf[f]
		if !ok {
			continue // dropped by the load: counts as missed
		}
		if top[v] {
			tc.TopDegreeHits++
		}
		if flagged[v] {
			tc.RuleHits++
		}
	}
	if n := len(truth.hubs); n > 0 {
		tc.TopDegreeRecall = float64(tc.TopDegreeHits) / float64(n)
		tc.RuleRecall = float64(tc.RuleHits) / float64(n)
	}
	return tc, nil
}

// finalPath is where a file of the bundle will be once it is committed.
func finalPath(w *bundle.Writer, name string) string {
	return filepath.Join(w.Dir(), filepath.FromSlash(name))
}
