package bundle

import (
	"archive/zip"
	"bufio"
	"compress/flate"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/hubscope/hubscope/helper/network"
	"github.com/hubscope/hubscope/helper/npy"
)

// network.npz is what scipy.sparse.save_npz writes for a csr_matrix (scipy/sparse/_matrix_io.py):
// a zip of indices.npy, indptr.npy, format.npy (0-d b'csr', dtype '|S3'), shape.npy (int64
// [N, N]) and data.npy, in that order. scipy stores index arrays as int32 while the shape and
// the number of stored values fit in int32 and as int64 otherwise (sparse's get_index_dtype), and
// load_npz casts whatever it finds to that; we write the same signed types, never our uint32 /
// uint64 ones, so the file is what scipy itself would have written and loads without a cast.

// zipDeflateRatio bounds how far deflate can expand: one 258-byte match per ~2 bits gives at
// most ~1032:1, so a member claiming more is corrupt or hostile and must not size an allocation.
const zipDeflateRatio = 1032

// useInt64Index reports whether scipy would store this matrix's indices as int64.
func useInt64Index(n int, nnz int64) bool {
	return int64(n) > math.MaxInt32 || nnz > math.MaxInt32
}

// writeNPZ streams nw into w as a scipy CSR .npz; compress selects deflate (numpy's
// savez_compressed) over stored members (numpy's savez). No array is copied whole: values are
// converted to the on-disk types in small chunks.
func writeNPZ(w io.Writer, nw *network.Network, compress bool) error {
	return writeNPZWith(w, nw, compress, useInt64Index(nw.N, nw.Edges()))
}

// writeNPZWith writes int64 index arrays when wide is set, int32 otherwise (the caller has
// checked that they fit).
func writeNPZWith(w io.Writer, nw *network.Network, compress, wide bool) error {
	zw := zip.NewWriter(w)
	// Level 1: the arrays are mostly incompressible float32 weights and near-random column
	// indices, where higher levels cost several times the time for a few percent.
	zw.RegisterCompressor(zip.Deflate, func(out io.Writer) (io.WriteCloser, error) {
		return flate.NewWriter(out, flate.BestSpeed)
	})
	method := zip.Store
	if compress {
		method = zip.Deflate
	}
	member := func(name, descr string, shape []int64, body func(io.Writer) error) error {
		f, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: method, Modified: time.Now()})
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if _, err := f.Write(npy.EncodeHeader(descr, shape)); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if err := body(f); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		return nil
	}
	n, nnz := nw.N, nw.Edges()
	idx := "<i4"
	if wide {
		idx = "<i8"
	}
	if err := member("indices.npy", idx, []int64{nnz}, func(w io.Writer) error {
		return writeIndices(w, nw.Indices[:nnz], wide)
	}); err != nil {
		return err
	}
	if err := member("indptr.npy", idx, []int64{int64(n) + 1}, func(w io.Writer) error {
		return writeIndices(w, nw.Indptr[:n+1], wide)
	}); err != nil {
		return err
	}
	if err := member("format.npy", "|S3", nil, func(w io.Writer) error {
		_, err := io.WriteString(w, "csr")
		return err
	}); err != nil {
		return err
	}
	if err := member("shape.npy", "<i8", []int64{2}, func(w io.Writer) error {
		var b [16]byte
		binary.LittleEndian.PutUint64(b[:8], uint64(n))
		binary.LittleEndian.PutUint64(b[8:], uint64(n))
		_, err := w.Write(b[:])
		return err
	}); err != nil {
		return err
	}
	if err := member("data.npy", "<f4", []int64{nnz}, func(w io.Writer) error {
		return writeFloat32s(w, nw.Weights[:nnz])
	}); err != nil {
		return err
	}
	return zw.Close()
}

const chunkElems = 1 << 14

// writeIndices streams an index array as little-endian int64 (wide) or int32; narrow output
// is only asked for when every value is below 2³¹ (useInt64Index).
func writeIndices[T uint32 | uint64](w io.Writer, src []T, wide bool) error {
	size := 4
	if wide {
		size = 8
	}
	buf := make([]byte, chunkElems*size)
	for len(src) > 0 {
		c := min(len(src), chunkElems)
		for i, v := range src[:c] {
			if wide {
				binary.LittleEndian.PutUint64(buf[8*i:], uint64(v))
			} else {
				binary.LittleEndian.PutUint32(buf[4*i:], uint32(v))
			}
		}
		if _, err := w.Write(buf[:c*size]); err != nil {
			return err
		}
		src = src[c:]
	}
	return nil
}

func writeFloat32s(w io.Writer, src []float32) error {
	buf := make([]byte, chunkElems*4)
	for len(src) > 0 {
		c := min(len(src), chunkElems)
		for i, v := range src[:c] {
			binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(v))
		}
		if _, err := w.Write(buf[:c*4]); err != nil {
			return err
		}
		src = src[c:]
	}
	return nil
}

// ReadNetwork reads a CSR .npz as scipy.sparse.save_npz writes it (ours, or scipy's own from
// any scipy ≥ 1.0, compressed or not) into a Network. The matrix must be square and hold the
// strict upper triangle with sorted rows, as HubScope's networks do; for a symmetric matrix A
// save scipy.sparse.triu(A, k=1).tocsr() (after A.sort_indices()). int32/int64/uint32/uint64
// index arrays are accepted; float64 data are rounded to float32.
func ReadNetwork(path string) (*network.Network, error) {
	zr, err := zip.OpenReader(path)
	if err != nil {
		return nil, fmt.Errorf("read network %s: %w", path, err)
	}
	defer zr.Close()
	nw, err := readNPZ(&zr.Reader)
	if err != nil {
		return nil, fmt.Errorf("read network %s: %w", path, err)
	}
	return nw, nil
}

func readNPZ(zr *zip.Reader) (*network.Network, error) {
	members := map[string]*zip.File{}
	for _, f := range zr.File {
		members[f.Name] = f
	}
	for _, name := range []string{"format.npy", "shape.npy", "indptr.npy", "indices.npy", "data.npy"} {
		if members[name] == nil {
			if name == "format.npy" {
				return nil, errors.New("not a scipy sparse matrix (no format.npy; was it written by scipy.sparse.save_npz?)")
			}
			return nil, fmt.Errorf("no %s member", name)
		}
	}

	// format: 0-d bytes '|S3' (scipy's own) or str '<U3'.
	var format string
	if err := readMember(members["format.npy"], func(h npy.Header, r io.Reader) error {
		if len(h.Shape) != 0 {
			return fmt.Errorf("format is not a 0-d array (shape %v)", h.Shape)
		}
		var size int
		var utf32 bool
		switch {
		case len(h.Descr) > 2 && h.Descr[:2] == "|S":
			_, err := fmt.Sscanf(h.Descr[2:], "%d", &size)
			if err != nil {
				return fmt.Errorf("format has dtype %q", h.Descr)
			}
		case len(h.Descr) > 2 && h.Descr[:2] == "<U":
			if _, err := fmt.Sscanf(h.Descr[2:], "%d", &size); err != nil {
				return fmt.Errorf("format has dtype %q", h.Descr)
			}
			size, utf32 = size*4, true
		default:
			return fmt.Errorf("format has dtype %q, want a string", h.Descr)
		}
		if size > 64 {
			return fmt.Errorf("format string of %d bytes is implausible", size)
		}
		b := make([]byte, size)
		if _, err := io.ReadFull(r, b); err != nil {
			return fmt.Errorf("format: %w", err)
		}
		for i := 0; i < len(b); {
			c := b[i]
			if utf32 {
				c = byte(binary.LittleEndian.Uint32(b[i:]))
				i += 4
			} else {
				i++
			}
			if c == 0 {
				break
			}
			format += string(rune(c))
		}
		return nil
	}); err != nil {
		return nil, err
	}
	if format != "csr" {
		return nil, fmt.Errorf("holds a %q sparse matrix; HubScope reads CSR (save matrix.tocsr())", format)
	}

	var shape []int64
	if err := readMember(members["shape.npy"], func(h npy.Header, r io.Reader) error {
		if len(h.Shape) != 1 || h.Shape[0] != 2 {
			return fmt.Errorf("shape.npy has shape %v, want (2,)", h.Shape)
		}
		v, err := readInts(r, h.Descr, 2)
		shape = v
		return err
	}); err != nil {
		return nil, err
	}
	if shape[0] != shape[1] || shape[0] < 0 {
		return nil, fmt.Errorf("matrix is %d×%d, a network needs a square matrix", shape[0], shape[1])
	}
	if shape[0] >= math.MaxUint32 {
		return nil, fmt.Errorf("%d nodes exceed the 2³²−1 a network can index", shape[0])
	}
	n := int(shape[0])

	nw := &network.Network{N: n}
	if err := readMember(members["indptr.npy"], func(h npy.Header, r io.Reader) error {
		if len(h.Shape) != 1 || h.Shape[0] != int64(n)+1 {
			return fmt.Errorf("indptr has shape %v for %d rows, want (%d,)", h.Shape, n, n+1)
		}
		nw.Indptr = make([]uint64, n+1)
		return decodeInts(r, h.Descr, n+1, func(start int, vals []int64) error {
			for k, v := range vals {
				if v < 0 {
					return fmt.Errorf("indptr[%d] = %d is negative", start+k, v)
				}
				nw.Indptr[start+k] = uint64(v)
			}
			return nil
		})
	}); err != nil {
		return nil, err
	}
	nnz := nw.Indptr[n]
	if err := readMember(members["indices.npy"], func(h npy.Header, r io.Reader) error {
		if len(h.Shape) != 1 || uint64(h.Shape[0]) != nnz {
			return fmt.Errorf("indices has shape %v, indptr claims %d stored values", h.Shape, nnz)
		}
		nw.Indices = make([]uint32, nnz)
		return decodeInts(r, h.Descr, int(nnz), func(start int, vals []int64) error {
			for k, v := range vals {
				if v < 0 || v >= int64(n) {
					return fmt.Errorf("indices[%d] = %d outside 0…%d", start+k, v, n-1)
				}
				nw.Indices[start+k] = uint32(v)
			}
			return nil
		})
	}); err != nil {
		return nil, err
	}
	if err := readMember(members["data.npy"], func(h npy.Header, r io.Reader) error {
		if len(h.Shape) != 1 || uint64(h.Shape[0]) != nnz {
			return fmt.Errorf("data has shape %v, indptr claims %d stored values", h.Shape, nnz)
		}
		nw.Weights = make([]float32, nnz)
		return decodeFloats(r, h.Descr, nw.Weights)
	}); err != nil {
		return nil, err
	}
	if up, ok := upperOfSymmetric(nw); ok {
		nw = up // network.npz written with run --symmetric-npz
	}
	if err := nw.Validate(); err != nil {
		return nil, fmt.Errorf("not a HubScope network (strict upper triangle, sorted rows, finite weights; save scipy.sparse.triu(A, k=1).tocsr() after A.sort_indices()): %w", err)
	}
	return nw, nil
}

// readMember opens one .npy member, parses its header, checks that the member's declared size
// matches the header before anything is allocated from it, and hands the data to fn.
func readMember(f *zip.File, fn func(npy.Header, io.Reader) error) error {
	if f.Method == zip.Deflate && f.UncompressedSize64 > f.CompressedSize64*zipDeflateRatio+1024 {
		return fmt.Errorf("%s: claims %d bytes from %d compressed, more than deflate can produce", f.Name, f.UncompressedSize64, f.CompressedSize64)
	}
	rc, err := f.Open()
	if err != nil {
		return fmt.Errorf("%s: %w", f.Name, err)
	}
	defer rc.Close()
	br := bufio.NewReaderSize(rc, 1<<16)
	h, err := npy.ReadHeader(br)
	hlen := h.Len
	if err != nil {
		return fmt.Errorf("%s: %w", f.Name, err)
	}
	if h.Fortran && len(h.Shape) > 1 {
		return fmt.Errorf("%s: Fortran-ordered arrays are not supported", f.Name)
	}
	size, err := dtypeSize(h.Descr)
	if err != nil {
		return fmt.Errorf("%s: %w", f.Name, err)
	}
	if want := uint64(hlen) + uint64(h.Count())*uint64(size); h.Count() < 0 || f.UncompressedSize64 != want {
		return fmt.Errorf("%s: member holds %d bytes, its header (dtype %s, shape %v) needs %d", f.Name, f.UncompressedSize64, h.Descr, h.Shape, want)
	}
	if err := fn(h, br); err != nil {
		return fmt.Errorf("%s: %w", f.Name, err)
	}
	return nil
}

func dtypeSize(descr string) (int, error) {
	switch descr {
	case "<i4", "<u4", "<f4":
		return 4, nil
	case "<i8", "<u8", "<f8":
		return 8, nil
	}
	var n int
	if len(descr) > 2 && descr[:2] == "|S" {
		if _, err := fmt.Sscanf(descr[2:], "%d", &n); err == nil && n >= 0 {
			return n, nil
		}
	}
	if len(descr) > 2 && descr[:2] == "<U" {
		if _, err := fmt.Sscanf(descr[2:], "%d", &n); err == nil && n >= 0 {
			return 4 * n, nil
		}
	}
	if len(descr) > 0 && descr[0] == '>' {
		return 0, fmt.Errorf("big-endian dtype %q is not supported (save with a little-endian array)", descr)
	}
	return 0, fmt.Errorf("unsupported dtype %q", descr)
}

func readInts(r io.Reader, descr string, n int) ([]int64, error) {
	out := make([]int64, 0, n)
	err := decodeInts(r, descr, n, func(_ int, vals []int64) error { out = append(out, vals...); return nil })
	return out, err
}

// decodeInts reads n integers of dtype descr and hands them to put in chunks, as int64, with
// the index of each chunk's first value.
func decodeInts(r io.Reader, descr string, n int, put func(start int, vals []int64) error) error {
	size, err := dtypeSize(descr)
	if err != nil {
		return err
	}
	switch descr {
	case "<i4", "<u4", "<i8", "<u8":
	default:
		return fmt.Errorf("dtype %q where integers are needed", descr)
	}
	buf := make([]byte, chunkElems*size)
	vals := make([]int64, chunkElems)
	for i := 0; i < n; {
		c := min(n-i, chunkElems)
		if _, err := io.ReadFull(r, buf[:c*size]); err != nil {
			return fmt.Errorf("truncated data after %d of %d values: %w", i, n, err)
		}
		switch descr {
		case "<i4":
			for k := range c {
				vals[k] = int64(int32(binary.LittleEndian.Uint32(buf[4*k:])))
			}
		case "<u4":
			for k := range c {
				vals[k] = int64(binary.LittleEndian.Uint32(buf[4*k:]))
			}
		case "<i8":
			for k := range c {
				vals[k] = int64(binary.LittleEndian.Uint64(buf[8*k:]))
			}
		case "<u8":
			for k := range c {
				v := binary.LittleEndian.Uint64(buf[8*k:])
				if v > math.MaxInt64 {
					return fmt.Errorf("element %d: value %d is out of range", i+k, v)
				}
				vals[k] = int64(v)
			}
		}
		if err := put(i, vals[:c]); err != nil {
			return err
		}
		i += c
	}
	return nil
}

func decodeFloats(r io.Reader, descr string, dst []float32) error {
	var size int
	switch descr {
	case "<f4":
		size = 4
	case "<f8":
		size = 8
	default:
		return fmt.Errorf("dtype %q where float32 or float64 weights are needed", descr)
	}
	buf := make([]byte, chunkElems*size)
	for i := 0; i < len(dst); {
		c := min(len(dst)-i, chunkElems)
		if _, err := io.ReadFull(r, buf[:c*size]); err != nil {
			return fmt.Errorf("truncated data after %d of %d values: %w", i, len(dst), err)
		}
		for k := 0; k < c; k++ {
			if size == 4 {
				dst[i+k] = math.Float32frombits(binary.LittleEndian.Uint32(buf[4*k:]))
			} else {
				dst[i+k] = float32(math.Float64frombits(binary.LittleEndian.Uint64(buf[8*k:])))
			}
		}
		i += c
	}
	return nil
}

// EncodeNetworkNPZ writes nw to out as a scipy CSR .npz (stored members), byte-compatible with
// scipy.sparse.save_npz(compressed=False): for files outside the bundle's one network.npz, such
// as the per-window networks of a dynamic analysis.
func EncodeNetworkNPZ(out io.Writer, nw *network.Network) error {
	if err := nw.Validate(); err != nil {
		return err
	}
	return writeNPZ(out, nw, false)
}

// upperOfSymmetric returns the strict upper triangle of a CSR matrix that stores both (i, j) and
// (j, i) (run --symmetric-npz): ok is false unless some entry lies below the diagonal, none on
// it, and the two triangles hold as many entries each with the same weight sum (a full check
// of Aᵀ = A would need a transpose; these catch a triangle that is missing or different).
func upperOfSymmetric(nw *network.Network) (*network.Network, bool) {
	if len(nw.Indptr) != nw.N+1 {
		return nil, false
	}
	var lower, upper int64
	var lsum, usum float64
	for i := 0; i < nw.N; i++ {
		a, b := nw.Indptr[i], nw.Indptr[i+1]
		if b < a || b > uint64(len(nw.Indices)) || b > uint64(len(nw.Weights)) {
			return nil, false
		}
		for p := a; p < b; p++ {
			switch j := int(nw.Indices[p]); {
			case j < i:
				lower++
				lsum += float64(nw.Weights[p])
			case j == i:
				return nil, false
			default:
				upper++
				usum += float64(nw.Weights[p])
			}
		}
	}
	if lower == 0 || lower != upper || math.Abs(lsum-usum) > 1e-6*(math.Abs(lsum)+1) {
		return nil, false
	}
	out := &network.Network{N: nw.N, Indptr: make([]uint64, nw.N+1), Indices: make([]uint32, 0, upper), Weights: make([]float32, 0, upper)}
	for i := 0; i < nw.N; i++ {
		for p := nw.Indptr[i]; p < nw.Indptr[i+1]; p++ {
			if int(nw.Indices[p]) > i {
				out.Indices = append(out.Indices, nw.Indices[p])
				out.Weights = append(out.Weights, nw.Weights[p])
			}
		}
		out.Indptr[i+1] = uint64(len(out.Indices))
	}
	return out, true
}
