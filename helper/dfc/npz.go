package dfc

import (
	"archive/zip"
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/gonum/mat"

	"github.com/hubscope/hubscope/helper/network"
)

// The per-window files are written here rather than through bundle.Writer.WriteNetwork, which
// only writes the bundle's one network.npz; package bundle keeps its encoder unexported. The
// format is the same (scipy.sparse.save_npz of a csr_matrix: indices, indptr, format, shape,
// data, stored members, int32 indices unless N or E exceed int32), and the tests read these
// files back with bundle.ReadNetwork and scipy.

// WriteNetworkNPZ writes nw as a scipy CSR .npz (strict upper triangle; symmetric = A + A.T).
func WriteNetworkNPZ(out io.Writer, nw *network.Network) error {
	if err := nw.Validate(); err != nil {
		return err
	}
	zw := zip.NewWriter(out)
	n, e := nw.N, nw.Edges()
	wide := int64(n) > math.MaxInt32 || e > math.MaxInt32
	idx := "<i4"
	if wide {
		idx = "<i8"
	}
	member := func(name, descr string, shape []int64, body func(*bufio.Writer) error) error {
		f, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Store, Modified: time.Now()})
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		bw := bufio.NewWriterSize(f, 1<<16)
		bw.Write(npyHeader(descr, shape))
		if err := body(bw); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if err := bw.Flush(); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		return nil
	}
	putIndex := func(bw *bufio.Writer, v uint64) {
		var b [8]byte
		if wide {
			binary.LittleEndian.PutUint64(b[:], v)
			bw.Write(b[:8])
		} else {
			binary.LittleEndian.PutUint32(b[:], uint32(v))
			bw.Write(b[:4])
		}
	}
	if err := member("indices.npy", idx, []int64{e}, func(bw *bufio.Writer) error {
		for _, j := range nw.Indices[:e] {
			putIndex(bw, uint64(j))
		}
		return nil
	}); err != nil {
		return err
	}
	if err := member("indptr.npy", idx, []int64{int64(n) + 1}, func(bw *bufio.Writer) error {
		for _, p := range nw.Indptr[:n+1] {
			putIndex(bw, p)
		}
		return nil
	}); err != nil {
		return err
	}
	if err := member("format.npy", "|S3", nil, func(bw *bufio.Writer) error {
		_, err := bw.WriteString("csr")
		return err
	}); err != nil {
		return err
	}
	if err := member("shape.npy", "<i8", []int64{2}, func(bw *bufio.Writer) error {
		putIndex64(bw, uint64(n))
		putIndex64(bw, uint64(n))
		return nil
	}); err != nil {
		return err
	}
	if err := member("data.npy", "<f4", []int64{e}, func(bw *bufio.Writer) error {
		var b [4]byte
		for _, v := range nw.Weights[:e] {
			binary.LittleEndian.PutUint32(b[:], math.Float32bits(v))
			bw.Write(b[:])
		}
		return nil
	}); err != nil {
		return err
	}
	return zw.Close()
}

func putIndex64(bw *bufio.Writer, v uint64) {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	bw.Write(b[:])
}

// WriteFactorNPY writes the N×l factor F as a float32 .npy (C order): numpy.load gives F with
// the window matrix S ≈ F @ F.T.
func WriteFactorNPY(out io.Writer, f *mat.Dense) error {
	r, c := f.Dims()
	bw := bufio.NewWriterSize(out, 1<<16)
	bw.Write(npyHeader("<f4", []int64{int64(r), int64(c)}))
	raw := f.RawMatrix()
	var b [4]byte
	for i := 0; i < r; i++ {
		for _, v := range raw.Data[i*raw.Stride : i*raw.Stride+c] {
			binary.LittleEndian.PutUint32(b[:], math.Float32bits(float32(v)))
			bw.Write(b[:])
		}
	}
	return bw.Flush()
}

// npyHeader is a version 1.0 .npy header: magic, version, header length, the dict literal,
// padded with spaces and ended by '\n' so that the data start on a 64-byte boundary
// (numpy/lib/format.py).
func npyHeader(descr string, shape []int64) []byte {
	dims := make([]string, len(shape))
	for i, d := range shape {
		dims[i] = strconv.FormatInt(d, 10)
	}
	shp := "(" + strings.Join(dims, ", ") + ")"
	if len(shape) == 1 {
		shp = "(" + dims[0] + ",)"
	}
	dict := "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shp + ", }"
	pad := 64 - (6+2+2+len(dict)+1)%64
	if pad == 64 {
		pad = 0
	}
	h := make([]byte, 0, 10+len(dict)+pad+1)
	h = append(h, "\x93NUMPY\x01\x00"...)
	h = binary.LittleEndian.AppendUint16(h, uint16(len(dict)+pad+1))
	h = append(h, dict...)
	h = append(h, strings.Repeat(" ", pad)...)
	return append(h, '\n')
}
