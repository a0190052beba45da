// Package register puts a scan in MNI space: a 12-parameter affine registration of the scan's
// mean EPI to the MNI152 brain template the helper embeds (assets/template), maximising the
// mutual information of the two images' intensities (Maes et al. 1997; Viola & Wells 1997) over
// the template's brain and the background around it, coarse to fine (8, 4, then 2 mm), in
// stages of growing freedom (rigid, then per-axis scaling, then shears) as FSL's FLIRT and
// dipy's AffineRegistration do. The
// result maps scan world coordinates (mm) to MNI coordinates, so hubs get MNI positions and
// atlas labels.
package register

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"

	"github.com/hubscope/hubscope/assets"
	"github.com/hubscope/hubscope/helper/nifti"
	"github.com/hubscope/hubscope/helper/realign"
	"github.com/hubscope/hubscope/ipc/schema"
)

// Image is a 3D volume on a grid with its voxel→world affine.
type Image struct {
	Dims   [3]int
	Affine realign.Affine
	Data   []float32
}

// Template reads the embedded MNI152 brain template: the ICBM 2009a T1 brain on the 2 mm MNI
// grid (the one the app shows behind its slices; see assets/template/LICENSE-MNI152-ICBM2009a.txt),
// whose levels are 8, 4 and 2 mm (levelsFor).
func Template() (Image, error) {
	// Read in place: a copy in a temporary folder was left behind when the process was
	// killed during the read.
	name := assets.DisplayTemplateImage
	if raceBuild {
		name = assets.TemplateImage
	}
	h, data, err := nifti.ReadImageFS(assets.Template, name)
	if err != nil {
		return Image{}, fmt.Errorf("embedded MNI template: %w", err)
	}
	return Image{Dims: [3]int{h.Nx(), h.Ny(), h.Nz()}, Affine: h.Affine(), Data: data}, nil
}

// Result is an affine registration to the MNI152 template (qc/registration.json's result,
// schema.RegistrationResult).
type Result = schema.RegistrationResult

// Plausibility limits: an adult brain differs from the MNI152 brain by well under ±30 % in
// any direction (Fonov et al. 2011), shears by well under 0.2.
const (
	minZoom, maxZoom = 0.7, 1.4
	maxShear         = 0.2
)

// bins of the joint histogram.
const bins = 32

// level is one resolution: the template's brain samples (world positions, bin) and the scan
// smoothed to match.
type level struct {
	pts  [][3]float64 // template brain voxels, MNI mm
	tbin []int32
	scan []float32 // smoothed scan
	lo   float64   // scan intensity range mapped to bins 1..bins−1 (bin 0: background)
	hi   float64
}

// ToMNI registers the mean EPI (brain-masked: voxels outside its brain should be 0) to the
// template. ctx is checked between cost evaluations.
func ToMNI(ctx context.Context, epi Image, tpl Image) (*Result, error) {
	if len(epi.Data) != epi.Dims[0]*epi.Dims[1]*epi.Dims[2] {
		return nil, errors.New("register: image size does not match its grid")
	}
	invScan, ok := realign.Inverse(epi.Affine)
	if !ok {
		return nil, errors.New("register: the scan's affine is singular")
	}
	// Centres of mass, for the start and as the centre of the parameters.
	tc, tok := centreOfMass(tpl)
	sc, sok := centreOfMass(epi)
	if !tok || !sok {
		return nil, errors.New("register: an image is empty")
	}
	levels := []*level{}
	for _, ls := range levelsFor(tpl) {
		// The levels' smoothing takes a few tenths of a second each: check between them, so a
		// cancel lands within a second (TestCancel).
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		lv, err := makeLevel(tpl, epi, ls)
		if err != nil {
			return nil, err
		}
		levels = append(levels, lv)
	}
	p := [12]float64{sc[0] - tc[0], sc[1] - tc[1], sc[2] - tc[2], 0, 0, 0, 1, 1, 1, 0, 0, 0}
	cost := func(lv *level, q [12]float64) float64 {
		m := realign.Mul(invScan, paramMatrix(q, tc))
		return -mutualInformation(lv, m, epi.Dims)
	}
	// A coarse grid over the rotations first (10° steps; ±40° of pitch, ±20° of roll and yaw:
	// how far a head in the scanner is tilted from MNI's axes): compass search from the centre-
	// of-mass start alone stalls in a local optimum for a tilted slab.
	start := p
	bestStart := cost(levels[0], p)
	for rx := -40.0; rx <= 40; rx += 10 {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		for ry := -20.0; ry <= 20; ry += 10 {
			for rz := -20.0; rz <= 20; rz += 10 {
				q := start
				q[3], q[4], q[5] = rx*math.Pi/180, ry*math.Pi/180, rz*math.Pi/180
				if c := cost(levels[0], q); c < bestStart {
					bestStart, p = c, q
				}
			}
		}
	}
	type stage struct {
		lv    *level
		free  int
		steps float64 // the compass search's first steps, relative to its defaults
	}
	stages := []stage{{levels[0], 6, 1}, {levels[0], 9, 1}, {levels[0], 12, 1}, {levels[1], 12, 1}}
	if len(levels) > 2 {
		// The 2 mm level refines the 4 mm optimum: short first steps (a quarter), so the search
		// does not re-explore what the coarser levels settled at 8× the samples' cost.
		stages = append(stages, stage{levels[2], 12, 0.25})
	}
	var best float64
	for _, st := range stages {
		var err error
		if p, best, err = patternSearch(ctx, func(q [12]float64) float64 { return cost(st.lv, q) }, p, st.free, st.steps); err != nil {
			return nil, err
		}
	}
	m := paramMatrix(p, tc) // MNI → scan world
	to, ok := realign.Inverse(m)
	if !ok {
		return nil, errors.New("register: the registration collapsed (singular affine)")
	}
	r := &Result{ToMNI: to, Params: p, MI: -best}
	r.Zooms, r.Shear = zoomsShear(to)
	r.Plausible = true
	for _, z := range r.Zooms {
		if z < minZoom || z > maxZoom {
			r.Plausible, r.Problem = false, fmt.Sprintf("implausible scaling %.2f × %.2f × %.2f (want %.1f–%.1f)", r.Zooms[0], r.Zooms[1], r.Zooms[2], minZoom, maxZoom)
		}
	}
	if r.Plausible && r.Shear > maxShear {
		r.Plausible, r.Problem = false, fmt.Sprintf("implausible shear %.2f (want ≤ %.1f)", r.Shear, maxShear)
	}
	return r, nil
}

// paramMatrix is the template→scan world map x ↦ c + t + R·Z·S·(x − c) with R = Rx·Ry·Rz, Z the
// zooms and S the unit upper-triangular shear (xy, xz, yz).
func paramMatrix(q [12]float64, c [3]float64) realign.Affine {
	r := realign.Rotation(q[3], q[4], q[5])
	zs := [3][3]float64{{q[6], q[6] * q[9], q[6] * q[10]}, {0, q[7], q[7] * q[11]}, {0, 0, q[8]}}
	var l [3][3]float64
	for i := 0; i < 3; i++ {
		for j := 0; j < 3; j++ {
			for k := 0; k < 3; k++ {
				l[i][j] += r[i][k] * zs[k][j]
			}
		}
	}
	return realign.Centred(l, [3]float64{q[0], q[1], q[2]}, c)
}

// zoomsShear returns the singular values of a's linear part (sorted descending) and the largest
// |shear| of its QR-style decomposition L = Q·U (U upper triangular, shears U_ij/U_ii).
func zoomsShear(a realign.Affine) ([3]float64, float64) {
	// Gram–Schmidt on the columns gives U; the singular values come from LᵀL's eigenvalues.
	var cols [3][3]float64
	for j := 0; j < 3; j++ {
		for i := 0; i < 3; i++ {
			cols[j][i] = a[i][j]
		}
	}
	var u [3][3]float64
	var q [3][3]float64
	for j := 0; j < 3; j++ {
		v := cols[j]
		for k := 0; k < j; k++ {
			d := q[k][0]*cols[j][0] + q[k][1]*cols[j][1] + q[k][2]*cols[j][2]
			u[k][j] = d
			for i := 0; i < 3; i++ {
				v[i] -= d * q[k][i]
			}
		}
		n := math.Sqrt(v[0]*v[0] + v[1]*v[1] + v[2]*v[2])
		u[j][j] = n
		for i := 0; i < 3; i++ {
			q[j][i] = v[i] / n
		}
	}
	var shear float64
	for i := 0; i < 3; i++ {
		for j := i + 1; j < 3; j++ {
			shear = math.Max(shear, math.Abs(u[i][j]/u[i][i]))
		}
	}
	// Zooms: |U_ii| (the scale along each successive axis once the shear is factored out).
	return [3]float64{u[0][0], u[1][1], u[2][2]}, shear
}

func centreOfMass(im Image) ([3]float64, bool) {
	var s float64
	var c [3]float64
	f := 0
	for k := 0; k < im.Dims[2]; k++ {
		for j := 0; j < im.Dims[1]; j++ {
			for i := 0; i < im.Dims[0]; i++ {
				v := float64(im.Data[f])
				f++
				if v <= 0 {
					continue
				}
				x := realign.Apply(im.Affine, [3]float64{float64(i), float64(j), float64(k)})
				for a := 0; a < 3; a++ {
					c[a] += v * x[a]
				}
				s += v
			}
		}
	}
	if s == 0 {
		return c, false
	}
	for a := range c {
		c[a] /= s
	}
	return c, true
}

// makeLevel samples the template's brain every step voxels and smooths the scan for the level.
// levelSpec is one resolution of the cost: the template sampled every sampleMM (every other
// such sample, in a checkerboard, when half), both images smoothed by fwhm.
type levelSpec struct {
	sampleMM, fwhm float64
	half           bool
}

// levelsFor: 8 and 4 mm samples with 8 and 4 mm smoothing, then, on a template of 2 mm or finer,
// 2 mm samples at 4 mm smoothing (half of them: the same cost at a quarter of the full level's
// price; docs/realign.md).
func levelsFor(tpl Image) []levelSpec {
	ls := []levelSpec{{8, 8, false}, {4, 4, false}}
	if voxelSize(tpl.Affine)[0] <= 2.01 {
		ls = append(ls, levelSpec{2, 4, true})
	}
	return ls
}

func makeLevel(tpl, epi Image, spec levelSpec) (*level, error) {
	lv := &level{}
	step := max(1, int(math.Round(spec.sampleMM/voxelSize(tpl.Affine)[0])))
	// Both images are smoothed by the same kernel, FWHM 4 mm × step. Smoothing only the scan
	// widened its brain's edge but not the template's and biased the zooms of a known affine by
	// ~1 % (2.47 mm at the brain's corners; symmetric: 1.50 mm). The template's samples are its
	// smoothed brain, the blurred rim around it (above 2 % of its maximum) and the background up
	// to backgroundMarginMM beyond, so the edge's fall-off and the outline are in the histogram
	// on both sides (docs/realign.md).
	fwhm := spec.fwhm
	tdata := realign.Smooth(tpl.Data, tpl.Dims, voxelSize(tpl.Affine), fwhm)
	var tmax float32
	for _, v := range tdata {
		tmax = max(tmax, v)
	}
	near := nearBrain(tdata, tpl.Dims, 0.02*tmax, int(math.Ceil(backgroundMarginMM/voxelSize(tpl.Affine)[0])))
	for k := 0; k < tpl.Dims[2]; k += step {
		for j := 0; j < tpl.Dims[1]; j += step {
			for i := 0; i < tpl.Dims[0]; i += step {
				v := tdata[i+tpl.Dims[0]*(j+tpl.Dims[1]*k)]
				if !near[i+tpl.Dims[0]*(j+tpl.Dims[1]*k)] || (spec.half && (i+j+k)/step%2 == 1) {
					continue
				}
				lv.pts = append(lv.pts, realign.Apply(tpl.Affine, [3]float64{float64(i), float64(j), float64(k)}))
				lv.tbin = append(lv.tbin, int32(min(bins-1, int(float64(v)/float64(tmax)*(bins-1))+0)))
			}
		}
	}
	if len(lv.pts) < 100 {
		return nil, errors.New("register: the template has no brain")
	}
	// Less than 4 mm at the fine level leaves a real slab EPI's noise in the cost (3 mm: 9.3 mm
	// from dipy's affine on ax_asc_35sl_6 instead of 4.1, and a shear of 0.15).
	lv.scan = realign.Smooth(epi.Data, epi.Dims, voxelSize(epi.Affine), fwhm)
	// Scan intensities of its brain (> 0) over their 1st–99th percentile range.
	var vals []float64
	for f, v := range epi.Data {
		if v > 0 {
			vals = append(vals, float64(lv.scan[f]))
		}
	}
	if len(vals) < 100 {
		return nil, errors.New("register: the scan has no brain")
	}
	lo, hi := percentile(vals, 0.01), percentile(vals, 0.99)
	if !(hi > lo) {
		return nil, errors.New("register: the scan's brain has no contrast")
	}
	lv.lo, lv.hi = lo, hi
	return lv, nil
}

// mutualInformation of the template's bins and the scan sampled at m·x (m: MNI → scan voxel),
// over the template brain samples inside the scan's field of view. The scan's bin 0 is its
// background (below lo/2: outside its brain mask), bins 1… its brain's intensities.
func mutualInformation(lv *level, m realign.Affine, dims [3]int) float64 {
	// The joint histogram is counted in parallel over parts of the samples (the 2 mm level has
	// ~10⁵ of them) and the parts' counts added: the same integers in any order.
	parts := 1
	if len(lv.pts) >= 20000 {
		parts = min(runtime.GOMAXPROCS(0), 8)
	}
	hists := make([][bins][bins]float64, parts)
	counts := make([]float64, parts)
	var wg sync.WaitGroup
	for w := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lo, hi := w*len(lv.pts)/parts, (w+1)*len(lv.pts)/parts
			joint := &hists[w]
			scale := float64(bins-2) / (lv.hi - lv.lo)
			for q := lo; q < hi; q++ {
				y := realign.Apply(m, lv.pts[q])
				v, ok := realign.TrilinearAt(lv.scan, dims, y[0], y[1], y[2])
				if !ok {
					continue
				}
				b := 0
				if v > lv.lo/2 {
					b = 1 + int(math.Max(0, math.Min(float64(bins-2), (v-lv.lo)*scale)))
					if b > bins-1 {
						b = bins - 1
					}
				}
				joint[lv.tbin[q]][b]++
				counts[w]++
			}
		}()
	}
	wg.Wait()
	joint := hists[0]
	n := counts[0]
	for w := 1; w < parts; w++ {
		n += counts[w]
		for i := range joint {
			for j := range joint[i] {
				joint[i][j] += hists[w][i][j]
			}
		}
	}
	if n < 0.25*float64(len(lv.pts)) {
		return -1 // too little overlap: worse than any real alignment
	}
	var pa, pb [bins]float64
	for i := range joint {
		for j := range joint[i] {
			pa[i] += joint[i][j]
			pb[j] += joint[i][j]
		}
	}
	var mi float64
	for i := range joint {
		for j := range joint[i] {
			if c := joint[i][j]; c > 0 {
				mi += c / n * math.Log(c*n/(pa[i]*pb[j]))
			}
		}
	}
	return mi
}

// voxelSize is the length of each voxel axis in world space (mm).
func voxelSize(a realign.Affine) [3]float64 {
	var vs [3]float64
	for j := 0; j < 3; j++ {
		vs[j] = math.Sqrt(a[0][j]*a[0][j] + a[1][j]*a[1][j] + a[2][j]*a[2][j])
	}
	return vs
}

func percentile(v []float64, p float64) float64 {
	s := append([]float64(nil), v...)
	// partial selection would do; the scan's brain is small enough to sort.
	sortFloats(s)
	return s[int(p*float64(len(s)-1))]
}

// patternSearch minimises f over the first free parameters by compass search (Kolda, Lewis &
// Torczon 2003): try ± each step, keep improvements, halve the steps when none helps, stop
// when they are below the tolerances (0.05 mm, 0.0005 rad, 0.0005 zoom and shear).
func patternSearch(ctx context.Context, f func([12]float64) float64, p [12]float64, free int, scale float64) ([12]float64, float64, error) {
	step := [12]float64{4, 4, 4, 0.08, 0.08, 0.08, 0.08, 0.08, 0.08, 0.04, 0.04, 0.04}
	for k := range step {
		step[k] *= scale
	}
	tol := [12]float64{0.05, 0.05, 0.05, 5e-4, 5e-4, 5e-4, 5e-4, 5e-4, 5e-4, 5e-4, 5e-4, 5e-4}
	best := f(p)
	for iter := 0; iter < 2000; iter++ {
		if err := ctx.Err(); err != nil {
			return p, best, err
		}
		improved := false
		for k := 0; k < free; k++ {
			for _, sgn := range []float64{1, -1} {
				q := p
				q[k] += sgn * step[k]
				if c := f(q); c < best {
					best, p, improved = c, q, true
					// keep going in this direction while it helps
					for {
						q[k] += sgn * step[k]
						c := f(q)
						if c >= best {
							break
						}
						best, p = c, q
					}
					break
				}
			}
		}
		if !improved {
			done := true
			for k := 0; k < free; k++ {
				step[k] /= 2
				if step[k] >= tol[k] {
					done = false
				}
			}
			if done {
				break
			}
		}
	}
	return p, best, nil
}

// backgroundMarginMM: the cost samples the template's background up to this far beyond its
// brain (the smoothed brain above 2 % of its maximum). The scan is brain-masked, so the
// brain's outline is its strongest feature; samples of the brain alone leave the outline's
// outside half out of the histogram, and on the three real EPIs of the shared data the
// optimum then shrank the template about 2–5 % against the scan's brain: the overlap (Dice) of
// the scan's brain mask with the MNI brain mask was 0.873–0.913, with a 12 mm margin 0.918–0.934
// (dipy's MI over the whole template grid: 0.918–0.933), and the corners moved to within
// 1.3–5.6 mm of dipy's affine from 4.8–11.2 mm (docs/realign.md). 12 mm (3 template voxels)
// costs 2.2–2.9 CPU-s per scan; 24 mm or the whole grid moved the result by less than the
// variants differ among themselves (1.6–3.3 mm) at up to 4× the time.
const backgroundMarginMM = 12

// nearBrain marks the voxels within r voxels (a cube) of a voxel above thr.
func nearBrain(d []float32, dims [3]int, thr float32, r int) []bool {
	in := make([]bool, len(d))
	for f, v := range d {
		in[f] = v > thr
	}
	st := [3]int{1, dims[0], dims[0] * dims[1]}
	for a := 0; a < 3; a++ {
		out := make([]bool, len(in))
		for f := range in {
			if !in[f] {
				continue
			}
			pos := [3]int{f % dims[0], f / dims[0] % dims[1], f / (dims[0] * dims[1])}
			for o := -r; o <= r; o++ {
				if q := pos[a] + o; q >= 0 && q < dims[a] {
					out[f+o*st[a]] = true
				}
			}
		}
		in = out
	}
	return in
}
