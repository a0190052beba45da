package nifti

import (
	"bufio"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/hubscope/hubscope/helper/internal/diskfault"
	"github.com/hubscope/hubscope/helper/internal/owned"
)

// Writer writes a single-file NIfTI-1 image volume by volume.
type Writer struct {
	path    string
	tmp     diskfault.File
	tmpPath string
	bw      *bufio.Writer
	gz      gzipWriter
	h       Header
	volumes int
	written int
	chunk   []byte
	slope   float64
	inter   float64
	scaled  bool
	err     error
	done    bool
}

// NewHeader returns a little-endian NIfTI-1 header for an image of the given dimensions
// (1 to 7 of them: x, y, z, t, …) and datatype, with sform = qform = affine, units mm and s,
// scl_slope 1 and scl_inter 0, PixDim[1..3] the column norms of the affine and PixDim[4] = tr.
// The qform takes the affine's rotation (its orthogonal polar factor when the affine shears,
// as nibabel's set_qform does) and qfac = −1 when the affine flips handedness. QformCode is
// XformScannerAnat and SformCode XformAlignedAnat, the codes nibabel and FSL use for images
// in their scan's own space.
func NewHeader(dims []int, dt DataType, affine [4][4]float64, tr float64) Header {
	h := Header{
		Version:      1,
		DataType:     dt,
		VoxOffset:    nifti1DataOffset,
		SclSlope:     1,
		XYZTUnits:    UnitsMM | UnitsSec,
		QformCode:    XformScannerAnat,
		SformCode:    XformAlignedAnat,
		LittleEndian: true,
		Descrip:      "HubScope",
	}
	h.Dim[0] = int64(len(dims))
	for i := 1; i < 8; i++ {
		h.Dim[i] = 1
		if i <= len(dims) {
			h.Dim[i] = int64(dims[i-1])
		}
	}
	h.SRowX, h.SRowY, h.SRowZ = affine[0], affine[1], affine[2]
	h.setQform(affine)
	if len(dims) >= 4 {
		h.PixDim[4] = tr
	}
	for i := 5; i < 8; i++ {
		h.PixDim[i] = 1
	}
	return h
}

// setQform stores the affine as quaternion, qfac, voxel sizes and offsets following
// nibabel's Nifti1Header.set_qform: zooms are the column norms of the 3×3 part, R = M·diag(1/z),
// qfac = sign(det R) with R's third column negated when negative, R replaced by its nearest
// rotation (the orthogonal polar factor, which nibabel takes from the SVD as P·Qᵀ), and the
// unit quaternion with non-negative real part.
func (h *Header) setQform(a [4][4]float64) {
	var r [3][3]float64
	for j := 0; j < 3; j++ {
		z := math.Sqrt(a[0][j]*a[0][j] + a[1][j]*a[1][j] + a[2][j]*a[2][j])
		h.PixDim[j+1] = z
		for i := 0; i < 3; i++ {
			if z > 0 {
				r[i][j] = a[i][j] / z
			} else if i == j {
				r[i][j] = 1 // a degenerate axis: keep it unrotated
			}
		}
	}
	h.PixDim[0] = 1
	if det3(r) < 0 {
		h.PixDim[0] = -1
		for i := 0; i < 3; i++ {
			r[i][2] = -r[i][2]
		}
	}
	r = polarRotation(r)
	_, x, y, z := mat2quat(r)
	h.QuaternB, h.QuaternC, h.QuaternD = x, y, z
	h.QOffsetX, h.QOffsetY, h.QOffsetZ = a[0][3], a[1][3], a[2][3]
}

func det3(m [3][3]float64) float64 {
	return m[0][0]*(m[1][1]*m[2][2]-m[1][2]*m[2][1]) -
		m[0][1]*(m[1][0]*m[2][2]-m[1][2]*m[2][0]) +
		m[0][2]*(m[1][0]*m[2][1]-m[1][1]*m[2][0])
}

// polarRotation returns the orthogonal factor U of the polar decomposition R = U·P (equal to
// P·Qᵀ of the SVD R = P·S·Qᵀ) by Higham's Newton iteration U ← (U + U⁻ᵀ)/2, which converges
// quadratically for non-singular R; an exact rotation is a fixed point.
func polarRotation(r [3][3]float64) [3][3]float64 {
	u := r
	for iter := 0; iter < 100; iter++ {
		d := det3(u)
		if d == 0 || math.IsNaN(d) {
			return [3][3]float64{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}
		}
		// U⁻ᵀ = cofactor(U)/det(U).
		var next [3][3]float64
		var change float64
		for i := 0; i < 3; i++ {
			for j := 0; j < 3; j++ {
				i1, i2 := (i+1)%3, (i+2)%3
				j1, j2 := (j+1)%3, (j+2)%3
				cof := u[i1][j1]*u[i2][j2] - u[i1][j2]*u[i2][j1]
				next[i][j] = (u[i][j] + cof/d) / 2
				change = max(change, math.Abs(next[i][j]-u[i][j]))
			}
		}
		u = next
		if change < 1e-15 {
			break
		}
	}
	return u
}

// mat2quat is the unit quaternion (w, x, y, z), w ≥ 0, of a rotation matrix (Shepperd's
// method: divide by the largest of the four squared components for stability).
func mat2quat(m [3][3]float64) (w, x, y, z float64) {
	switch tr := m[0][0] + m[1][1] + m[2][2]; {
	case tr > 0:
		s := 2 * math.Sqrt(tr+1)
		w, x, y, z = s/4, (m[2][1]-m[1][2])/s, (m[0][2]-m[2][0])/s, (m[1][0]-m[0][1])/s
	case m[0][0] > m[1][1] && m[0][0] > m[2][2]:
		s := 2 * math.Sqrt(1+m[0][0]-m[1][1]-m[2][2])
		w, x, y, z = (m[2][1]-m[1][2])/s, s/4, (m[0][1]+m[1][0])/s, (m[0][2]+m[2][0])/s
	case m[1][1] > m[2][2]:
		s := 2 * math.Sqrt(1+m[1][1]-m[0][0]-m[2][2])
		w, x, y, z = (m[0][2]-m[2][0])/s, (m[0][1]+m[1][0])/s, s/4, (m[1][2]+m[2][1])/s
	default:
		s := 2 * math.Sqrt(1+m[2][2]-m[0][0]-m[1][1])
		w, x, y, z = (m[1][0]-m[0][1])/s, (m[0][2]+m[2][0])/s, (m[1][2]+m[2][1])/s, s/4
	}
	if w < 0 {
		w, x, y, z = -w, -x, -y, -z
	}
	return w, x, y, z
}

// Create starts writing a single-file NIfTI-1 image (vox_offset 352, no extensions, little
// endian), gzip-compressed when path ends in .gz. The data go to a temporary file in the same
// directory that a successful Close renames to path, so no half-written file ever carries the
// final name. h must pass Validate and fit NIfTI-1 (every dimension ≤ 32767, scaling within
// float32); Version, VoxOffset and LittleEndian are set by the writer. The header's scaling
// applies: values are stored as (v − SclInter)/SclSlope, so a header copied from a scaled
// int16 scan writes float maps through the same scaling unless SclSlope is reset to 1 (or 0).
// A Writer is not safe for concurrent use.
func Create(path string, h Header) (*Writer, error) {
	h.Version, h.VoxOffset, h.LittleEndian = 1, nifti1DataOffset, true
	if err := h.Validate(); err != nil {
		return nil, &FileError{"create", path, err}
	}
	hdr, err := encodeNifti1(&h)
	if err != nil {
		return nil, &FileError{"create", path, err}
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	// The temporary name carries this process's ID: a file a killed writer left is removed
	// by the next writer of the same path.
	owned.Sweep(dir, base)
	f, err := diskfault.CreateTemp(dir, owned.Pattern(base))
	if err != nil {
		return nil, &FileError{"create", path, err}
	}
	w := &Writer{path: path, tmp: f, tmpPath: f.Name(), h: h, volumes: h.Volumes()}
	w.bw = bufio.NewWriterSize(f, 256<<10)
	out := (interface{ Write([]byte) (int, error) })(w.bw)
	if strings.HasSuffix(strings.ToLower(path), ".gz") {
		w.gz = newGzipWriter(w.bw)
		out = w.gz
	}
	w.slope, w.inter, w.scaled = h.scaling()
	if _, err := out.Write(hdr); err != nil {
		w.Abort()
		return nil, &FileError{"write", path, err}
	}
	return w, nil
}

func (w *Writer) sink() interface{ Write([]byte) (int, error) } {
	if w.gz != nil {
		return w.gz
	}
	return w.bw
}

// WriteVolume converts one volume (len VoxelsPerVolume, in file order) to the header's datatype
// and appends it: x = (v − scl_inter)/scl_slope when the header scales, then for integer types
// rounding half away from zero and clamping to the type's range (NaN is stored as 0).
func (w *Writer) WriteVolume(v []float32) error {
	if w.err != nil {
		return w.err
	}
	if w.done {
		return &FileError{"write", w.path, errors.New("writer is closed")}
	}
	if n := w.h.VoxelsPerVolume(); len(v) != n {
		return &FileError{"write", w.path, fmt.Errorf("volume has %d values, the header's has %d", len(v), n)}
	}
	if w.written >= w.volumes {
		return &FileError{"write", w.path, fmt.Errorf("all %d volumes the header declares are already written", w.volumes)}
	}
	size := w.h.DataType.Size()
	if w.chunk == nil {
		n := min(chunkBytes, len(v)*size)
		w.chunk = make([]byte, n-n%size)
	}
	per := len(w.chunk) / size
	for done := 0; done < len(v); {
		n := min(per, len(v)-done)
		raw := w.chunk[:n*size]
		encode(raw, v[done:done+n], w.h.DataType, w.slope, w.inter, w.scaled)
		if !nativeLittle && size > 1 {
			swapBytes(raw, size)
		}
		if _, err := w.sink().Write(raw); err != nil {
			w.err = &FileError{"write", w.path, err}
			return w.err
		}
		done += n
	}
	w.written++
	return nil
}

// Close finishes the file and gives it its final name. It fails, and leaves nothing at path,
// if fewer volumes were written than the header declares or any write failed.
func (w *Writer) Close() error {
	if w.done {
		return w.err
	}
	if w.err == nil && w.written < w.volumes {
		w.err = &FileError{"write", w.path, fmt.Errorf("%w: wrote %d of the %d volumes the header declares", ErrTruncated, w.written, w.volumes)}
	}
	if w.err != nil {
		w.Abort()
		return w.err
	}
	err := func() error {
		if w.gz != nil {
			if err := w.gz.Close(); err != nil {
				return err
			}
		}
		if err := w.bw.Flush(); err != nil {
			return err
		}
		if err := w.tmp.Chmod(0o644); err != nil {
			return err
		}
		if err := w.tmp.Close(); err != nil {
			return err
		}
		return diskfault.Rename(w.tmpPath, w.path)
	}()
	w.done = true
	if err != nil {
		os.Remove(w.tmpPath)
		w.tmp.Close()
		w.err = &FileError{"write", w.path, err}
	}
	return w.err
}

// Abort discards the image: the temporary file is closed and removed. Safe after Close.
func (w *Writer) Abort() {
	if w.done {
		return
	}
	w.done = true
	w.tmp.Close()
	os.Remove(w.tmpPath)
	if w.err == nil {
		w.err = &FileError{"write", w.path, errors.New("aborted")}
	}
}

// WriteImage writes all volumes at once; data holds Volumes()·VoxelsPerVolume() values in
// file order.
func WriteImage(path string, h Header, data []float32) error {
	w, err := Create(path, h)
	if err != nil {
		return err
	}
	n := w.h.VoxelsPerVolume()
	if len(data) != n*w.volumes {
		w.Abort()
		return &FileError{"write", path, fmt.Errorf("image has %d values, the header declares %d volumes of %d", len(data), w.volumes, n)}
	}
	for v := 0; v < w.volumes; v++ {
		if err := w.WriteVolume(data[v*n : (v+1)*n]); err != nil {
			w.Abort()
			return err
		}
	}
	return w.Close()
}
