// Package synth generates phantom resting-state scans with a known network: BOLD-like 4D data on
// a brain mask whose voxels form M spatially contiguous modules, each driven by its own
// band-limited signal, plus planted hub voxels that mix the signals of several modules. The ground
// truth (module of every voxel, hub voxels and the modules each one couples) comes with the data,
// so the connectivity engine and the graph analytics can be tested for recovery, and benchmarks can
// run on any number of voxels up to the 1 mm grey-matter grid (≈10⁶ voxels), streamed to disk one
// volume at a time.
//
// # Signal model
//
// For node v of module m(v), at time point t (sampled every TR seconds):
//
//	x_v(t) = B · (1 + a · (Σ_m c_vm · s_m(t) + σ_v · e_v(t)))
//
// where B is the baseline intensity (Params.Baseline, 1000), a the relative fluctuation amplitude
// (Params.Amplitude, 2 %), s_m the module signals, e_v AR(1) noise and Σ_m c_vm² + σ_v² = 1, so the
// fluctuation term has unit variance and x_v ≈ B ± a·B.
//
//   - Module signals s_m: random-phase sums of sinusoids on the frequencies k/(L·TR) that fall in the
//     band [Params.LowHz, Params.HighHz] (0.01–0.1 Hz), with Gaussian cosine and sine coefficients —
//     the same process as white noise filtered to the band in the frequency domain — then
//     orthonormalised by Gram–Schmidt (which keeps them in the band) and scaled to unit variance.
//     Their sample cross-correlations are therefore exactly zero, not merely zero in expectation;
//     with only ≈2·0.09·L·TR degrees of freedom in the band, independent draws would otherwise
//     correlate by ±0.1 or more and blur the planted modules.
//   - Ordinary voxels: c_vm = √ρ for their own module only, σ_v = √(1−ρ), with
//     ρ = Params.ModuleCorrelation. Two voxels of one module correlate at ρ in expectation, two of
//     different modules at 0.
//   - Hub voxels couple a set S of 2–3 modules (their own and others): c_vm = √(f/|S|) for m ∈ S,
//     σ_v = √(1−f), f = Params.HubSignalFraction. A hub correlates with an ordinary voxel of a module
//     in S at √(f·ρ/|S|) in expectation. For degree-based hub detection this must exceed what the
//     ordinary voxels with the largest degree reach, about ρ plus a sampling margin, so f/|S| must be
//     clearly above ρ: the defaults (ρ = 0.2, f = 0.95, |S| ≤ 3, hub–voxel r ≈ 0.25–0.31) give the
//     hubs 5–10× the mean degree at density 1 % while every ordinary voxel stays far below.
//   - Noise e_v: stationary AR(1), e(t) = φ·e(t−1) + √(1−φ²)·ξ(t), ξ ~ N(0,1), e(0) ~ N(0,1),
//     φ = Params.AR (0.3), unit variance.
//
// Modules are spatial parcels: k-means on the voxels' world coordinates, seeded by farthest-point
// sampling, so each module is a compact, contiguous region as a resting-state network would be.
//
// # Recovery
//
// At density 1 % (the k = 0.01·N(N−1)/2 strongest Pearson pairs) the defaults give, on the
// embedded MNI mask resampled to 8 mm (3,735 voxels; DemoMask then ResampleMask(…, 8)), the
// smallest grid the tests check: all 40 planted hubs are the 40 highest-degree nodes (weakest hub
// 298 edges, strongest ordinary voxel 212, mean degree 37) and igraph's Louvain finds the planted
// modules with NMI 0.96 (L = 100–200, 7 or 10 modules: recall 1.0, NMI 0.92–0.98). On the 4 mm
// demo mask itself (28,971 voxels): recall 1.0, NMI 0.995. On smaller grids (mean degree below
// ~30) isolated voxels start to pull the NMI down; use a higher density there.
//
// # Determinism
//
// Every random number comes from math/rand/v2's PCG seeded with Params.Seed, on separate streams for
// the parcellation, the module signals, the hubs and the noise, drawn in a fixed order (noise: time
// point by time point, nodes in increasing flat index i + Nx·(j + Ny·k)); no result depends on map
// iteration order. Generate and Write share one generator, so they produce the same series. The
// products whose rounding matters are wrapped in explicit float64 conversions so that no compiler
// fuses them into FMA instructions; the standard library's math.Cos and the normal sampler are
// pure Go, so runs on amd64 are bit-identical, and other architectures agree to the last bits.
package synth

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/hubscope/hubscope/helper/nifti"
	"github.com/hubscope/hubscope/helper/scan"
)

// Params are the phantom's parameters. DefaultParams documents the defaults.
type Params struct {
	Modules  int            // number of planted modules M (default 7)
	Hubs     int            // number of planted hub voxels (default 40)
	TR       float64        // repetition time in seconds (default 2)
	Length   int            // number of volumes L (default 200)
	Seed     int64          // random seed (default 1)
	DataType nifti.DataType // stored datatype for Write: nifti.Int16 (default) or nifti.Float32

	LowHz, HighHz float64 // band of the module signals in Hz (default 0.01–0.1)
	AR            float64 // AR(1) coefficient φ of the noise (default 0.3)

	// ModuleCorrelation ρ is the expected correlation between two ordinary voxels of one module:
	// the share of an ordinary voxel's fluctuation variance carried by its module signal
	// (default 0.2).
	ModuleCorrelation float64
	// HubSignalFraction f is the share of a hub's fluctuation variance carried by the module
	// signals it mixes, split equally among them (default 0.95).
	HubSignalFraction float64
	// HubModulesMin and HubModulesMax bound the number of modules a hub couples (its own and
	// others), drawn uniformly per hub (defaults 2 and 3).
	HubModulesMin, HubModulesMax int

	Baseline  float64 // mean intensity B (default 1000)
	Amplitude float64 // standard deviation of the fluctuation relative to B (default 0.02)

	// Cohort phantoms (cohort.go). SubjectSeed, when non-zero, draws the module signals and the
	// noise from it instead of Seed: an individual subject on the layout (parcels, hubs) that
	// Seed plants. LesionModule, when non-zero, turns the planted hubs whose own module is
	// LesionModule into ordinary voxels of it: a patient who lost the hubs of one region.
	SubjectSeed  int64
	LesionModule int

	// CoreCorrelation ρ_core, when non-zero, grades every module from a core to its border
	// (graded.go): an ordinary voxel v shares ρ_v = ρ + (ρ_core − ρ)·(1 − u_v)^CoreExponent of
	// its variance with its module signal, u_v the share of its module's voxels nearer the
	// module's centroid. Two voxels of one module then correlate at √(ρ_u·ρ_v), from ρ at the
	// borders to ρ_core between the cores. Zero (the default) keeps every module uniform at ρ.
	// DefaultCohortParams sets 0.95 and 16.
	CoreCorrelation float64
	CoreExponent    float64
}

// DefaultParams returns the parameters of the standard phantom: 7 modules, 40 hubs, TR 2 s,
// 200 volumes, seed 1, int16, band 0.01–0.1 Hz, AR(1) φ = 0.3, within-module correlation 0.2,
// hubs coupling 2–3 modules with 95 % of their variance, intensity 1000 ± 2 %.
func DefaultParams() Params {
	return Params{
		Modules:           7,
		Hubs:              40,
		TR:                2,
		Length:            200,
		Seed:              1,
		DataType:          nifti.Int16,
		LowHz:             0.01,
		HighHz:            0.1,
		AR:                0.3,
		ModuleCorrelation: 0.2,
		HubSignalFraction: 0.95,
		HubModulesMin:     2,
		HubModulesMax:     3,
		Baseline:          1000,
		Amplitude:         0.02,
	}
}

// DefaultCohortParams returns the parameters of a phantom cohort's subjects (synth --subjects):
// DefaultParams with modules graded to cores (CoreCorrelation 0.95, CoreExponent 16), so that
// a group's mean network at r̄ 0.45–0.70 has the sparsity of Wang et al.'s 197-subject mean
// (graded.go, docs/algorithms.md).
func DefaultCohortParams() Params {
	p := DefaultParams()
	p.CoreCorrelation, p.CoreExponent = 0.95, 16
	return p
}

// Truth is the planted structure of a phantom.
type Truth struct {
	// Modules is the module (1..M) of every node, in node order (increasing flat index).
	Modules []int32
	// Hubs are the hub nodes in increasing order; HubModules[h] lists the modules (1..M,
	// increasing) that hub Hubs[h] couples, its own module among them.
	Hubs       []int
	HubModules [][]int
	// Signals are the unit-variance module signals s_m (row m−1 is module m), L values each.
	Signals [][]float64
	// Lesioned are the planted hubs that Params.LesionModule turned into ordinary voxels.
	Lesioned []int
}

// Validate reports the first problem with the parameters for a mask of n voxels.
func (p Params) Validate(n int) error {
	switch {
	case p.LowHz == 0 && p.HighHz == 0 && p.Baseline == 0 && p.Amplitude == 0:
		return errors.New("synth: band, baseline and amplitude are all zero: start from DefaultParams() and change what you need")
	case p.Modules < 1:
		return fmt.Errorf("synth: %d modules: need at least 1", p.Modules)
	case p.Hubs < 0:
		return fmt.Errorf("synth: %d hubs: cannot be negative", p.Hubs)
	case p.Length < 3:
		return fmt.Errorf("synth: length %d volumes: need at least 3", p.Length)
	case !(p.TR > 0) || math.IsInf(p.TR, 0):
		return fmt.Errorf("synth: TR %g s: must be positive", p.TR)
	case !(p.LowHz > 0) || !(p.HighHz > p.LowHz):
		return fmt.Errorf("synth: band %g–%g Hz: need 0 < low < high", p.LowHz, p.HighHz)
	case p.HighHz > 1/(2*p.TR):
		return fmt.Errorf("synth: band %g–%g Hz: above the Nyquist frequency %.4g Hz of TR %g s", p.LowHz, p.HighHz, 1/(2*p.TR), p.TR)
	case !(p.AR >= 0 && p.AR < 1):
		return fmt.Errorf("synth: AR coefficient %g: need 0 ≤ φ < 1", p.AR)
	case !(p.ModuleCorrelation > 0 && p.ModuleCorrelation <= 1):
		return fmt.Errorf("synth: module correlation %g: need 0 < ρ ≤ 1", p.ModuleCorrelation)
	case !(p.HubSignalFraction > 0 && p.HubSignalFraction <= 1):
		return fmt.Errorf("synth: hub signal fraction %g: need 0 < f ≤ 1", p.HubSignalFraction)
	case p.Hubs > 0 && (p.HubModulesMin < 1 || p.HubModulesMax < p.HubModulesMin || p.HubModulesMax > p.Modules):
		return fmt.Errorf("synth: hubs coupling %d–%d modules: need 1 ≤ min ≤ max ≤ %d modules", p.HubModulesMin, p.HubModulesMax, p.Modules)
	case !(p.Baseline > 0) || math.IsInf(p.Baseline, 0):
		return fmt.Errorf("synth: baseline %g: must be positive", p.Baseline)
	case !(p.Amplitude > 0 && p.Amplitude < 0.2):
		return fmt.Errorf("synth: amplitude %g: need 0 < a < 0.2 (relative to the baseline)", p.Amplitude)
	case p.DataType != nifti.Int16 && p.DataType != nifti.Float32:
		return fmt.Errorf("synth: datatype %v: only int16 and float32 are written", p.DataType)
	case p.DataType == nifti.Int16 && p.Baseline*(1+8*p.Amplitude) > math.MaxInt16:
		return fmt.Errorf("synth: baseline %g with amplitude %g does not fit int16", p.Baseline, p.Amplitude)
	case p.CoreCorrelation != 0 && !(p.CoreCorrelation >= p.ModuleCorrelation && p.CoreCorrelation <= 1):
		return fmt.Errorf("synth: core correlation %g: need ρ = %g ≤ ρ_core ≤ 1 (or 0 for uniform modules)", p.CoreCorrelation, p.ModuleCorrelation)
	case p.CoreCorrelation != 0 && !(p.CoreExponent > 0 && p.CoreExponent <= 1000):
		return fmt.Errorf("synth: core exponent %g: need 0 < k ≤ 1000", p.CoreExponent)
	case p.LesionModule < 0 || p.LesionModule > p.Modules:
		return fmt.Errorf("synth: lesion module %d: want 1..%d (or 0 for none)", p.LesionModule, p.Modules)
	case n < p.Modules:
		return fmt.Errorf("synth: mask of %d voxels is smaller than %d modules", n, p.Modules)
	case n < p.Modules+p.Hubs:
		return fmt.Errorf("synth: mask of %d voxels cannot hold %d modules and %d hubs", n, p.Modules, p.Hubs)
	}
	if d := bandDimension(p); d < p.Modules {
		return fmt.Errorf("synth: band %g–%g Hz over %d volumes at TR %g s has only %d independent directions; cannot plant %d uncorrelated module signals (lengthen the scan or widen the band)",
			p.LowHz, p.HighHz, p.Length, p.TR, d, p.Modules)
	}
	return nil
}

// Random-number streams of the PCG (the second PCG word), one per purpose, so that, for example,
// asking for more hubs leaves the module signals unchanged.
const (
	streamParcels = 1 + iota
	streamSignals
	streamHubs
	streamNoise
)

func newRand(seed int64, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed), stream))
}

// generator produces the phantom's volumes in time order. Each node follows a "profile": its
// module's (one per module) or its own (one per hub), which fixes the noise-free signal
// Σ_m c_vm·s_m(t) and the noise scale σ_v.
type generator struct {
	p       Params
	nodes   []int     // flat grid index of every node, increasing
	profile []int32   // profile of every node
	profSig []float64 // profile × L: noise-free fluctuation Σ_m c_m·s_m(t)
	profSd  []float64 // noise scale σ of every profile
	ar      []float64 // AR(1) state e_v(t−1) of every node
	innov   float64   // √(1−φ²)
	noise   *rand.Rand
	t       int
	truth   *Truth
	ijk     [][3]int32
	// Graded modules (CoreCorrelation ≠ 0): every node's loading √ρ_v on its module signal
	// and its noise scale √(1−ρ_v) (hubs keep their profile), and the unit module signals
	// (module × L).
	load, loadSd []float64
	sig          []float64
}

// newGenerator plans the phantom on the mask: parcellation, module signals, hubs.
func newGenerator(mask scan.Mask, affine [4][4]float64, p Params) (*generator, error) {
	if err := checkMask(mask); err != nil {
		return nil, err
	}
	nodes := make([]int, 0, mask.Count())
	for f, in := range mask.In {
		if in {
			nodes = append(nodes, f)
		}
	}
	if err := p.Validate(len(nodes)); err != nil {
		return nil, err
	}
	ijk := make([][3]int32, len(nodes))
	nx, ny := mask.Dims[0], mask.Dims[1]
	for v, f := range nodes {
		ijk[v] = [3]int32{int32(f % nx), int32(f / nx % ny), int32(f / (nx * ny))}
	}
	labels := parcellate(ijk, affine, p.Modules, newRand(p.Seed, streamParcels))
	signals, err := moduleSignals(p, newRand(p.individualSeed(), streamSignals))
	if err != nil {
		return nil, err
	}
	hubs, hubModules := plantHubs(labels, p, newRand(p.Seed, streamHubs))
	hubs, hubModules, lesioned := lesionHubs(labels, hubs, hubModules, p.LesionModule)

	L, M := p.Length, p.Modules
	g := &generator{
		p:       p,
		nodes:   nodes,
		profile: make([]int32, len(nodes)),
		profSig: make([]float64, (M+len(hubs))*L),
		profSd:  make([]float64, M+len(hubs)),
		ar:      make([]float64, len(nodes)),
		innov:   math.Sqrt(1 - p.AR*p.AR),
		noise:   newRand(p.individualSeed(), streamNoise),
		ijk:     ijk,
	}
	cOrd := math.Sqrt(p.ModuleCorrelation)
	for m := 0; m < M; m++ {
		for t := 0; t < L; t++ {
			g.profSig[m*L+t] = float64(cOrd * signals[m][t])
		}
		g.profSd[m] = math.Sqrt(1 - p.ModuleCorrelation)
	}
	for v, lab := range labels {
		g.profile[v] = lab - 1
	}
	for h, node := range hubs {
		prof := M + h
		g.profile[node] = int32(prof)
		c := math.Sqrt(p.HubSignalFraction / float64(len(hubModules[h])))
		row := g.profSig[prof*L : (prof+1)*L]
		for _, m := range hubModules[h] {
			for t := range row {
				row[t] += float64(c * signals[m-1][t])
			}
		}
		g.profSd[prof] = math.Sqrt(1 - p.HubSignalFraction)
	}
	if p.CoreCorrelation != 0 {
		g.grade(labels, affine, signals)
	}
	g.truth = &Truth{Modules: labels, Hubs: hubs, HubModules: hubModules, Signals: signals, Lesioned: lesioned}
	return g, nil
}

// next computes the next volume's intensities x_v(t) of all nodes into dst (len N).
func (g *generator) next(dst []float64) {
	p, L, t := g.p, g.p.Length, g.t
	phi, innov := p.AR, g.innov
	first := t == 0
	for v := range dst {
		xi := g.noise.NormFloat64()
		var e float64
		if first {
			e = xi // stationary start: e(0) ~ N(0, 1)
		} else {
			e = float64(phi*g.ar[v]) + float64(innov*xi)
		}
		g.ar[v] = e
		prof := g.profile[v]
		var fluct float64
		if g.load != nil && int(prof) < p.Modules {
			fluct = float64(g.load[v]*g.sig[int(prof)*L+t]) + float64(g.loadSd[v]*e)
		} else {
			fluct = g.profSig[int(prof)*L+t] + float64(g.profSd[prof]*e)
		}
		dst[v] = float64(p.Baseline * (1 + float64(p.Amplitude*fluct)))
	}
	g.t++
}

func checkMask(mask scan.Mask) error {
	d := mask.Dims
	if d[0] < 1 || d[1] < 1 || d[2] < 1 {
		return fmt.Errorf("synth: mask grid %d×%d×%d: every dimension must be at least 1", d[0], d[1], d[2])
	}
	if len(mask.In) != d[0]*d[1]*d[2] {
		return fmt.Errorf("synth: mask grid %d×%d×%d holds %d voxels, not %d", d[0], d[1], d[2], len(mask.In), d[0]*d[1]*d[2])
	}
	if mask.Count() == 0 {
		return errors.New("synth: mask is empty")
	}
	return nil
}

// Generate builds the phantom in memory: the scan (N×L float32, nodes in increasing flat index)
// and its ground truth. The series are those Write stores, before quantisation to the datatype.
func Generate(mask scan.Mask, affine [4][4]float64, p Params) (*scan.Scan, *Truth, error) {
	g, err := newGenerator(mask, affine, p)
	if err != nil {
		return nil, nil, err
	}
	n, L := len(g.nodes), p.Length
	data := make([]float32, n*L)
	// The generator runs time point by time point, but the scan is voxel-major: buffer a few
	// volumes and copy them out as contiguous runs of each series, instead of writing one value
	// per cache line per volume across the whole N×L matrix.
	const chunk = 16
	buf := make([]float32, chunk*n)
	vol := make([]float64, n)
	for t0 := 0; t0 < L; t0 += chunk {
		c := min(chunk, L-t0)
		for dt := range c {
			g.next(vol)
			row := buf[dt*n : (dt+1)*n]
			for v, x := range vol {
				row[v] = float32(x)
			}
		}
		for v := range n {
			dst := data[v*L+t0 : v*L+t0+c]
			for dt := range dst {
				dst[dt] = buf[dt*n+v]
			}
		}
	}
	s := &scan.Scan{
		Data:    data,
		N:       n,
		L:       L,
		IJK:     g.ijk,
		Dims:    mask.Dims,
		Affine:  affine,
		TR:      p.TR,
		Source:  fmt.Sprintf("synth: %d modules, %d hubs, seed %d", p.Modules, p.Hubs, p.Seed),
		Mask:    scan.Mask{Dims: mask.Dims, In: slices.Clone(mask.In)},
		Dropped: scan.DropStats{MaskVoxels: n},
	}
	return s, g.truth, nil
}
