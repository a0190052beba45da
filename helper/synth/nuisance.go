package synth

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/hubscope/hubscope/helper/progress"
	"github.com/hubscope/hubscope/helper/scan"
)

// Nuisance is what `synth --nuisance` adds on top of the phantom's signal model, the things
// that dominate raw voxel-wise correlation in a real scan (Power et al. 2014, NeuroImage
// 84:320; Birn 2012, NeuroImage 62:864): per-voxel scanner drifts (linear and slow cosines
// below 1/128 Hz), six head-motion parameters (smooth random walks) with their temporal
// derivatives entering every voxel with its own weights, and two physiological signals
// (AR(1), φ = 0.9) seen as "csf" and "white_matter" that every voxel shares with positive
// weights — a global signal. Scale is the nuisance's standard deviation relative to the
// fluctuation's (unit) one. Every nuisance series goes to an fMRIPrep-style confounds table,
// so fMRIPrep's "simple" strategy spans the nuisance exactly.
type Nuisance struct {
	Scale float64
}

// DefaultNuisance is twice the fluctuation's standard deviation.
var DefaultNuisance = Nuisance{Scale: 2}

const streamNuisance = 141

// nuisanceModel holds the nuisance sources (unit variance, zero mean) and every node's
// weights on them.
type nuisanceModel struct {
	l       int
	sources [][]float64 // motion 6, motion derivatives 6, csf, white_matter, linear, cosines
	motion  [6][]float64
	csf, wm []float64
	cosines [][]float64 // DCT-II with the nilearn/fMRIPrep normalisation √(2/L)
	weights []float64   // node × source
}

func newNuisanceModel(n int, p Params, nu Nuisance) (*nuisanceModel, error) {
	if !(nu.Scale >= 0) || math.IsInf(nu.Scale, 0) {
		return nil, fmt.Errorf("synth: nuisance scale %g must be a non-negative number", nu.Scale)
	}
	L := p.Length
	rng := newRand(p.individualSeed(), streamNuisance)
	unit := func(s []float64) []float64 {
		m := 0.0
		for _, v := range s {
			m += v
		}
		m /= float64(len(s))
		ss := 0.0
		for i := range s {
			s[i] -= m
			ss += s[i] * s[i]
		}
		sd := math.Sqrt(ss / float64(len(s)))
		if sd > 0 {
			for i := range s {
				s[i] /= sd
			}
		}
		return s
	}
	m := &nuisanceModel{l: L}
	for j := range m.motion {
		walk := make([]float64, L)
		v := 0.0
		for t := range walk {
			v += rng.NormFloat64()
			walk[t] = v
		}
		sm := make([]float64, L) // a 5-volume moving average: head motion is smooth
		for t := range sm {
			c := 0
			for k := max(0, t-2); k <= min(L-1, t+2); k++ {
				sm[t] += walk[k]
				c++
			}
			sm[t] /= float64(c)
		}
		m.motion[j] = unit(sm)
	}
	ar := func() []float64 {
		s := make([]float64, L)
		e := rng.NormFloat64()
		for t := range s {
			e = 0.9*e + math.Sqrt(1-0.81)*rng.NormFloat64()
			s[t] = e
		}
		return unit(s)
	}
	m.csf, m.wm = ar(), ar()
	for j := 0; j < 6; j++ {
		m.sources = append(m.sources, m.motion[j])
	}
	for j := 0; j < 6; j++ {
		d := make([]float64, L)
		for t := 1; t < L; t++ {
			d[t] = m.motion[j][t] - m.motion[j][t-1]
		}
		d[0] = d[min(1, L-1)] // the table's first derivative row is n/a, read as the second's
		m.sources = append(m.sources, unit(d))
	}
	m.sources = append(m.sources, m.csf, m.wm)
	lin := make([]float64, L)
	for t := range lin {
		lin[t] = float64(t)
	}
	m.sources = append(m.sources, unit(lin))
	// Cosine drifts below 1/128 Hz, fMRIPrep's high-pass basis.
	order := int(math.Floor(2 * float64(L) * p.TR / 128))
	for k := 1; k <= order && k < L; k++ {
		c := make([]float64, L)
		for t := range c {
			c[t] = math.Sqrt(2/float64(L)) * math.Cos(math.Pi/float64(L)*(float64(t)+0.5)*float64(k))
		}
		m.cosines = append(m.cosines, c)
		m.sources = append(m.sources, unit(append([]float64(nil), c...)))
	}
	ns := len(m.sources)
	m.weights = make([]float64, n*ns)
	for v := 0; v < n; v++ {
		w := m.weights[v*ns : (v+1)*ns]
		for s := range w {
			w[s] = rng.NormFloat64()
		}
		w[12] = 2 + 0.5*rng.NormFloat64() // csf: shared, same sign everywhere (global)
		w[13] = 1 + 0.5*rng.NormFloat64() // white matter
		ss := 0.0
		for _, x := range w {
			ss += x * x
		}
		f := nu.Scale / math.Sqrt(ss)
		for s := range w {
			w[s] *= f
		}
	}
	return m, nil
}

// add adds volume t's nuisance (in units of the fluctuation) to every node's fluctuation,
// given the intensities vals = B·(1 + a·fluct).
func (m *nuisanceModel) add(p Params, t int, vals []float64) {
	ns := len(m.sources)
	for v := range vals {
		w := m.weights[v*ns : (v+1)*ns]
		s := 0.0
		for k, src := range m.sources {
			s += w[k] * src[t]
		}
		vals[v] += p.Baseline * p.Amplitude * s
	}
}

// ConfoundsPath is where WriteNuisance puts the confounds table for the scan out: fMRIPrep's
// name when out is named like fMRIPrep's preprocessed BOLD (so `run` finds it), else
// <base>_desc-confounds_timeseries.tsv.
func ConfoundsPath(out string) string {
	base := strings.TrimSuffix(strings.TrimSuffix(out, ".gz"), ".nii")
	if b, ok := strings.CutSuffix(base, "_desc-preproc_bold"); ok {
		dir, name := filepath.Split(b)
		var keep []string
		for _, e := range strings.Split(name, "_") {
			if !strings.HasPrefix(e, "space-") && !strings.HasPrefix(e, "res-") {
				keep = append(keep, e)
			}
		}
		return filepath.Join(dir, strings.Join(keep, "_")+"_desc-confounds_timeseries.tsv")
	}
	return base + "_desc-confounds_timeseries.tsv"
}

// WriteNuisance is Write with the nuisance added, and the confounds table (motion in mm and
// radians with derivatives and squares, csf, white_matter and global_signal with theirs,
// cosines, framewise displacement, standardised DVARS) at ConfoundsPath(out). The truth is
// that of the same phantom without nuisance.
func WriteNuisance(ctx context.Context, mask scan.Mask, affine [4][4]float64, p Params, nu Nuisance, out string, rep progress.Reporter) (*Truth, error) {
	rep = progress.OrDiscard(rep)
	g, w, err := create(mask, affine, p, out)
	if err != nil {
		return nil, err
	}
	nm, err := newNuisanceModel(len(g.nodes), p, nu)
	if err != nil {
		w.Abort()
		return nil, err
	}
	vals := make([]float64, len(g.nodes))
	prev := make([]float64, len(g.nodes))
	global := make([]float64, p.Length)
	dvars := make([]float64, p.Length)
	err = writeVolumes(ctx, w, out, p.Length, len(mask.In), rep, func(t int, vol []float32) {
		g.next(vals)
		nm.add(p, t, vals)
		ss := 0.0
		for v, f := range g.nodes {
			vol[f] = float32(vals[v])
			global[t] += vals[v]
			if t > 0 {
				ss += (vals[v] - prev[v]) * (vals[v] - prev[v])
			}
		}
		global[t] /= float64(len(g.nodes))
		dvars[t] = math.Sqrt(ss / float64(len(g.nodes)))
		copy(prev, vals)
	})
	if err != nil {
		return nil, err
	}
	modPath, hubPath := TruthPaths(out)
	if err := writeTruth(g, mask, affine, modPath, hubPath); err != nil {
		os.Remove(out)
		return nil, err
	}
	cpath := ConfoundsPath(out)
	if err := nm.writeTable(cpath, global, dvars); err != nil {
		os.Remove(out)
		os.Remove(modPath)
		os.Remove(hubPath)
		return nil, err
	}
	rep.Note(fmt.Sprintf("phantom %s with nuisance (×%g the fluctuation): %d voxels, %d modules, %d hubs, %d volumes; confounds in %s",
		filepath.Base(out), nu.Scale, len(g.nodes), p.Modules, len(g.truth.Hubs), p.Length, filepath.Base(cpath)))
	return g.truth, nil
}

// writeTable writes the fMRIPrep-style confounds table. Standardised DVARS is DVARS over its
// median (fMRIPrep divides by the value expected from the data's autocorrelation; the median
// stands in for it here).
func (m *nuisanceModel) writeTable(path string, global, dvars []float64) error {
	L := m.l
	cols := map[string][]float64{}
	expand := func(name string, s []float64) {
		d := make([]float64, L)
		d[0] = math.NaN()
		for t := 1; t < L; t++ {
			d[t] = s[t] - s[t-1]
		}
		sq, dsq := make([]float64, L), make([]float64, L)
		for t := range s {
			sq[t] = s[t] * s[t]
			dsq[t] = d[t] * d[t]
		}
		cols[name], cols[name+"_derivative1"], cols[name+"_power2"], cols[name+"_derivative1_power2"] = s, d, sq, dsq
	}
	names := []string{"trans_x", "trans_y", "trans_z", "rot_x", "rot_y", "rot_z"}
	fd := make([]float64, L)
	fd[0] = math.NaN()
	for j, n := range names {
		s := make([]float64, L)
		scale := 0.2 // mm
		if j >= 3 {
			scale = 0.002 // radians
		}
		for t := range s {
			s[t] = scale * m.motion[j][t]
		}
		expand(n, s)
		for t := 1; t < L; t++ {
			f := math.Abs(s[t] - s[t-1])
			if j >= 3 {
				f *= 50 // Power et al.: rotations on a 50 mm sphere
			}
			fd[t] += f
		}
	}
	expand("csf", m.csf)
	expand("white_matter", m.wm)
	expand("global_signal", global)
	cols["framewise_displacement"] = fd
	med := append([]float64(nil), dvars[1:]...)
	sort.Float64s(med)
	std := make([]float64, L)
	std[0] = math.NaN()
	for t := 1; t < L; t++ {
		std[t] = dvars[t] / med[len(med)/2]
	}
	cols["std_dvars"] = std
	for k, c := range m.cosines {
		cols[fmt.Sprintf("cosine%02d", k)] = c
	}
	var header []string
	for _, n := range append(names, "csf", "white_matter", "global_signal") {
		header = append(header, n, n+"_derivative1", n+"_power2", n+"_derivative1_power2")
	}
	header = append(header, "framewise_displacement", "std_dvars")
	for k := range m.cosines {
		header = append(header, fmt.Sprintf("cosine%02d", k))
	}
	var b strings.Builder
	b.WriteString(strings.Join(header, "\t") + "\n")
	for t := 0; t < L; t++ {
		for i, n := range header {
			if i > 0 {
				b.WriteByte('\t')
			}
			v := cols[n][t]
			if math.IsNaN(v) {
				b.WriteString("n/a")
			} else {
				b.WriteString(strconv.FormatFloat(v, 'g', 17, 64))
			}
		}
		b.WriteByte('\n')
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
