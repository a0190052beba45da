package bundle

import (
	"fmt"
	"io"
	"os"

	"github.com/hubscope/hubscope/helper/nifti"
	"github.com/hubscope/hubscope/helper/npy"
	"github.com/hubscope/hubscope/helper/scan"
)

// Names of the bundle files that keep the scan itself for the app's views (written when the
// analysis is asked to keep the series).
const (
	// SeriesFile holds the cleaned N×L float32 series, one row per node in the order of
	// nodes.tsv (numpy.load gives an (N, L) array): seed maps and the voxel time-series plot.
	SeriesFile = "series.npy"
	// MeanFile is the temporal mean of the scan on its full grid: the slice views' background.
	MeanFile = "mean.nii.gz"
)

// WriteSeries writes series.npy: the scan's N×L float32 matrix as numpy's np.save writes a
// C-ordered (N, L) '<f4' array, so row v is node v's series.
func (w *Writer) WriteSeries(s *scan.Scan) error {
	if s == nil {
		return w.fail(fmt.Errorf("bundle %s: write %s: no scan", w.dir, SeriesFile))
	}
	if s.N < 1 || s.L < 1 || len(s.Data) != s.N*s.L {
		return w.fail(fmt.Errorf("bundle %s: write %s: %d values for %d×%d series", w.dir, SeriesFile, len(s.Data), s.N, s.L))
	}
	hdr := npy.EncodeHeader("<f4", []int64{int64(s.N), int64(s.L)})
	return w.WriteFile(SeriesFile, func(out io.Writer) error {
		if _, err := out.Write(hdr); err != nil {
			return err
		}
		return writeFloat32s(out, s.Data)
	})
}

// WriteGridImage writes a 3D float32 NIfTI-1 image that covers the scan's whole grid (one value
// per grid voxel, i fastest, as Scan.Mean), with the scan's affine: e.g. mean.nii.gz.
func (w *Writer) WriteGridImage(name string, s *scan.Scan, vol []float32) error {
	if err := checkMapInput(name, s, nifti.Float32); err != nil {
		return w.fail(fmt.Errorf("bundle %s: write %s: %w", w.dir, name, err))
	}
	if n := s.Dims[0] * s.Dims[1] * s.Dims[2]; len(vol) != n {
		return w.fail(fmt.Errorf("bundle %s: write %s: %d values for the %d×%d×%d grid", w.dir, name, len(vol), s.Dims[0], s.Dims[1], s.Dims[2]))
	}
	p, err := w.newPath(name)
	if err != nil {
		return w.fail(err)
	}
	if err := nifti.WriteImage(p, nifti.NewHeader(s.Dims[:], nifti.Float32, s.Affine, 0), vol); err != nil {
		return w.fail(fmt.Errorf("bundle %s: write %s: %w", w.dir, name, err))
	}
	return nil
}

// SeriesReader reads rows of a series.npy without loading the whole matrix.
type SeriesReader struct {
	Path string
	N, L int
	f    *os.File
	off  int64 // first data byte
}

// OpenSeries opens a series.npy: a C-ordered 2-D little-endian float32 array, whose file
// length must match its header exactly.
func OpenSeries(path string) (*SeriesReader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	h, err := npy.ReadHeader(f)
	off := h.Len
	if err == nil && (h.Descr != "<f4" || h.Fortran || len(h.Shape) != 2) {
		err = fmt.Errorf("want a C-ordered 2-D '<f4' array, found %q with shape %v (Fortran order %v)", h.Descr, h.Shape, h.Fortran)
	}
	var st os.FileInfo
	if err == nil {
		st, err = f.Stat()
	}
	if err == nil {
		if n := h.Count(); n < 0 || off+4*n != st.Size() {
			err = fmt.Errorf("header says %v float32 values after %d bytes, the file has %d bytes", h.Shape, off, st.Size())
		}
	}
	if err == nil && (h.Shape[0] < 1 || h.Shape[1] < 1) {
		err = fmt.Errorf("empty series (shape %v)", h.Shape)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("series %s: %w", path, err)
	}
	return &SeriesReader{Path: path, N: int(h.Shape[0]), L: int(h.Shape[1]), f: f, off: off}, nil
}

// Row reads node v's series into dst (length L).
func (r *SeriesReader) Row(v int, dst []float32) error {
	if v < 0 || v >= r.N || len(dst) != r.L {
		return fmt.Errorf("series %s: row %d of %d into %d values (want %d)", r.Path, v, r.N, len(dst), r.L)
	}
	sr := io.NewSectionReader(r.f, r.off+int64(v)*int64(r.L)*4, int64(r.L)*4)
	if err := decodeFloats(sr, "<f4", dst); err != nil {
		return fmt.Errorf("series %s: row %d: %w", r.Path, v, err)
	}
	return nil
}

// ReadAll reads the whole N×L matrix, row-major.
func (r *SeriesReader) ReadAll() ([]float32, error) {
	out := make([]float32, r.N*r.L)
	sr := io.NewSectionReader(r.f, r.off, int64(len(out))*4)
	if err := decodeFloats(sr, "<f4", out); err != nil {
		return nil, fmt.Errorf("series %s: %w", r.Path, err)
	}
	return out, nil
}

// Close closes the file.
func (r *SeriesReader) Close() error { return r.f.Close() }
