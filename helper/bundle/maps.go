package bundle

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"strings"

	"github.com/hubscope/hubscope/helper/nifti"
	"github.com/hubscope/hubscope/helper/scan"
)

// ErrNoGrid is returned (wrapped) by the map writers for scans without a voxel grid: plain
// time-series matrices, whose nodes are regions with no voxel of their own.
var ErrNoGrid = errors.New("the scan has no voxel grid (plain time-series matrix); nodal maps need an image input")

// WriteNodeMap writes a 3D NIfTI-1 map (name ends in .nii.gz or .nii) on the scan's grid with
// its affine: node v's value at voxel IJK[v], 0 outside the nodes. Integer datatypes (Uint8 for
// the hub mask, Int16/Int32 for degrees and module numbers) must receive integral values within
// their range, so that nothing is silently rounded or clamped; Float32 takes any value, NaN
// included (viewers show it as empty).
func (w *Writer) WriteNodeMap(name string, s *scan.Scan, values []float32, dt nifti.DataType) error {
	return w.writeNodeMap(name, s, values, dt, 0)
}

// IntentLabel is NIFTI_INTENT_LABEL (nifti1.h): the values are indices of a label table, so
// viewers (FSLeyes, MRIcroGL, NiiVue) colour them as categories and nibabel reports the intent.
const IntentLabel = 1002

// WriteLabelMap is WriteNodeMap for an integer label image (modules.nii.gz): intent code
// NIFTI_INTENT_LABEL, with the labels' names and colours in a BIDS-style _dseg.tsv beside it.
func (w *Writer) WriteLabelMap(name string, s *scan.Scan, values []float32, dt nifti.DataType) error {
	if dt == nifti.Float32 || dt == nifti.Float64 {
		return w.fail(fmt.Errorf("bundle %s: write %s: a label image needs an integer datatype", w.dir, name))
	}
	return w.writeNodeMap(name, s, values, dt, IntentLabel)
}

func (w *Writer) writeNodeMap(name string, s *scan.Scan, values []float32, dt nifti.DataType, intent int32) error {
	if err := checkMapInput(name, s, dt); err != nil {
		return w.fail(fmt.Errorf("bundle %s: write %s: %w", w.dir, name, err))
	}
	if len(values) != s.N {
		return w.fail(fmt.Errorf("bundle %s: write %s: %d values for %d nodes", w.dir, name, len(values), s.N))
	}
	if err := checkValues(values, dt); err != nil {
		return w.fail(fmt.Errorf("bundle %s: write %s: %w", w.dir, name, err))
	}
	p, err := w.newPath(name)
	if err != nil {
		return w.fail(err)
	}
	vol := make([]float32, s.Dims[0]*s.Dims[1]*s.Dims[2])
	scatter(vol, s, values)
	h := nifti.NewHeader(s.Dims[:], dt, s.Affine, 0)
	h.IntentCode = intent
	if err := nifti.WriteImage(p, h, vol); err != nil {
		return w.fail(fmt.Errorf("bundle %s: write %s: %w", w.dir, name, err))
	}
	return nil
}

// WriteNodeSeries writes a 4D float32 NIfTI-1 image (e.g. a nodal measure per DFC window): frame
// t holds frames[t][v] at node v's voxel and 0 elsewhere. step is the time between frames in
// seconds (window step × TR; 0 when the frames are not a time axis), stored as pixdim[4].
// Frames are written one volume at a time.
func (w *Writer) WriteNodeSeries(name string, s *scan.Scan, frames [][]float32, step float64) error {
	if err := checkMapInput(name, s, nifti.Float32); err != nil {
		return w.fail(fmt.Errorf("bundle %s: write %s: %w", w.dir, name, err))
	}
	if len(frames) == 0 {
		return w.fail(fmt.Errorf("bundle %s: write %s: no frames", w.dir, name))
	}
	for t, f := range frames {
		if len(f) != s.N {
			return w.fail(fmt.Errorf("bundle %s: write %s: frame %d has %d values for %d nodes", w.dir, name, t, len(f), s.N))
		}
	}
	if step < 0 || math.IsNaN(step) || math.IsInf(step, 0) {
		return w.fail(fmt.Errorf("bundle %s: write %s: frame step %g s", w.dir, name, step))
	}
	p, err := w.newPath(name)
	if err != nil {
		return w.fail(err)
	}
	dims := []int{s.Dims[0], s.Dims[1], s.Dims[2], len(frames)}
	nw, err := nifti.Create(p, nifti.NewHeader(dims, nifti.Float32, s.Affine, step))
	if err != nil {
		return w.fail(fmt.Errorf("bundle %s: write %s: %w", w.dir, name, err))
	}
	// Voxels outside the nodes are never written, so one zeroed buffer serves every frame.
	vol := make([]float32, s.Dims[0]*s.Dims[1]*s.Dims[2])
	for _, f := range frames {
		scatter(vol, s, f)
		if err := nw.WriteVolume(vol); err != nil {
			nw.Abort()
			return w.fail(fmt.Errorf("bundle %s: write %s: %w", w.dir, name, err))
		}
	}
	if err := nw.Close(); err != nil {
		return w.fail(fmt.Errorf("bundle %s: write %s: %w", w.dir, name, err))
	}
	return nil
}

// newPath is prepare for writers that create the file themselves: the name must be new.
func (w *Writer) newPath(name string) (string, error) {
	p, err := w.prepare(name)
	if err != nil {
		return "", err
	}
	if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("bundle %s: write %s: already written", w.dir, name)
	}
	return p, nil
}

func checkMapInput(name string, s *scan.Scan, dt nifti.DataType) error {
	if !strings.HasSuffix(name, ".nii.gz") && !strings.HasSuffix(name, ".nii") {
		return errors.New("a map's name must end in .nii.gz or .nii")
	}
	if s == nil {
		return errors.New("no scan")
	}
	if s.IJK == nil || s.Dims[0] <= 0 || s.Dims[1] <= 0 || s.Dims[2] <= 0 {
		return ErrNoGrid
	}
	if len(s.IJK) != s.N {
		return fmt.Errorf("%d voxel positions for %d nodes", len(s.IJK), s.N)
	}
	for v, p := range s.IJK {
		for a := 0; a < 3; a++ {
			if p[a] < 0 || int(p[a]) >= s.Dims[a] {
				return fmt.Errorf("node %d at voxel %v lies outside the %v grid", v, p, s.Dims)
			}
		}
	}
	if _, _, ok := integerRange(dt); !ok && dt != nifti.Float32 && dt != nifti.Float64 {
		return fmt.Errorf("datatype %s cannot hold a map", dt)
	}
	return nil
}

// integerRange is the range of values an integer datatype holds exactly after a float32
// round trip (float32 is exact for integers up to 2²⁴, and our values come as float32).
func integerRange(dt nifti.DataType) (lo, hi float64, ok bool) {
	switch dt {
	case nifti.Uint8:
		return 0, math.MaxUint8, true
	case nifti.Int8:
		return math.MinInt8, math.MaxInt8, true
	case nifti.Int16:
		return math.MinInt16, math.MaxInt16, true
	case nifti.Uint16:
		return 0, math.MaxUint16, true
	case nifti.Int32, nifti.Int64:
		return -(1 << 24), 1 << 24, true
	case nifti.Uint32, nifti.Uint64:
		return 0, 1 << 24, true
	}
	return 0, 0, false
}

// checkValues refuses values an integer datatype would round or clamp.
func checkValues(values []float32, dt nifti.DataType) error {
	lo, hi, ok := integerRange(dt)
	if !ok {
		return nil
	}
	for v, x := range values {
		f := float64(x)
		if f != math.Trunc(f) || f < lo || f > hi { // NaN fails f == Trunc(f)
			return fmt.Errorf("node %d has value %g, which %s cannot hold exactly (use Float32)", v, x, dt)
		}
	}
	return nil
}

// scatter puts node values at their voxels (flat index i + Nx·(j + Ny·k), NIfTI's order).
func scatter(vol []float32, s *scan.Scan, values []float32) {
	nx, ny := s.Dims[0], s.Dims[1]
	for v, p := range s.IJK {
		vol[int(p[0])+nx*(int(p[1])+ny*int(p[2]))] = values[v]
	}
}
