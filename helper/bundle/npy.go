package bundle

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// The .npy format (numpy/lib/format.py, "NEP 1"): the magic "\x93NUMPY", a version byte pair,
// a little-endian header length (uint16 in version 1.0, uint32 in 2.0 and 3.0), then an ASCII
// Python dict literal {'descr': …, 'fortran_order': …, 'shape': …} padded with spaces and a
// final '\n' so that the data start on a 64-byte boundary; the data follow in C order.

const (
	npyMagic      = "\x93NUMPY"
	npyAlign      = 64 // numpy.lib.format.ARRAY_ALIGN
	npyGrowDigits = 21 // numpy.lib.format.GROWTH_AXIS_MAX_DIGITS: spare room numpy leaves in the header
)

// npyHeader is the parsed header dict of one .npy member.
type npyHeader struct {
	Descr   string  // numpy dtype string, e.g. "<i4", "<f4", "|S3"
	Shape   []int64 // () for a 0-d array
	fortran bool
}

// count is the number of elements (1 for a 0-d array), or −1 when the product overflows.
func (h npyHeader) count() int64 {
	n := int64(1)
	for _, d := range h.Shape {
		if d != 0 && n > math.MaxInt64/8/d {
			return -1
		}
		n *= d
	}
	return n
}

// encodeNpyHeader returns the version 1.0 header bytes exactly as numpy ≥ 1.24's
// _write_array_header writes them (same key order, spare growth space and padding), so that
// our members are byte-identical to np.save's.
func encodeNpyHeader(descr string, shape []int64) []byte {
	var shp string
	switch len(shape) {
	case 0:
		shp = "()"
	case 1:
		shp = "(" + strconv.FormatInt(shape[0], 10) + ",)"
	default:
		parts := make([]string, len(shape))
		for i, d := range shape {
			parts[i] = strconv.FormatInt(d, 10)
		}
		shp = "(" + strings.Join(parts, ", ") + ")"
	}
	dict := "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shp + ", }"
	if len(shape) > 0 {
		dict += strings.Repeat(" ", npyGrowDigits-len(strconv.FormatInt(shape[0], 10)))
	}
	hlen := len(dict) + 1 // the final '\n'
	// numpy pads with ARRAY_ALIGN − (prefix + hlen) mod ARRAY_ALIGN spaces, a full 64 when
	// already aligned; we keep that quirk for byte equality.
	pad := npyAlign - (len(npyMagic)+2+2+hlen)%npyAlign
	out := make([]byte, 0, len(npyMagic)+4+hlen+pad)
	out = append(out, npyMagic...)
	out = append(out, 1, 0)
	out = binary.LittleEndian.AppendUint16(out, uint16(hlen+pad))
	out = append(out, dict...)
	for i := 0; i < pad; i++ {
		out = append(out, ' ')
	}
	return append(out, '\n')
}

var (
	npyDescrRe   = regexp.MustCompile(`'descr'\s*:\s*'([^']*)'`)
	npyFortranRe = regexp.MustCompile(`'fortran_order'\s*:\s*(True|False)`)
	npyShapeRe   = regexp.MustCompile(`'shape'\s*:\s*\(([^)]*)\)`)
)

// maxNpyHeader bounds the header we are willing to read; numpy itself refuses headers over
// 10,000 bytes by default (max_header_size).
const maxNpyHeader = 1 << 16

// readNpyHeader reads and parses a .npy header (versions 1.0, 2.0 and 3.0) and returns it with
// its length in bytes, leaving r at the first data byte.
func readNpyHeader(r io.Reader) (npyHeader, int64, error) {
	var pre [8]byte
	if _, err := io.ReadFull(r, pre[:]); err != nil {
		return npyHeader{}, 0, fmt.Errorf("truncated .npy header: %w", err)
	}
	if string(pre[:6]) != npyMagic {
		return npyHeader{}, 0, errors.New("not a .npy array (bad magic)")
	}
	var hlen int64
	prefix := int64(8)
	switch pre[6] {
	case 1:
		var b [2]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return npyHeader{}, 0, fmt.Errorf("truncated .npy header: %w", err)
		}
		hlen, prefix = int64(binary.LittleEndian.Uint16(b[:])), prefix+2
	case 2, 3:
		var b [4]byte
		if _, err := io.ReadFull(r, b[:]); err != nil {
			return npyHeader{}, 0, fmt.Errorf("truncated .npy header: %w", err)
		}
		hlen, prefix = int64(binary.LittleEndian.Uint32(b[:])), prefix+4
	default:
		return npyHeader{}, 0, fmt.Errorf("unsupported .npy version %d.%d", pre[6], pre[7])
	}
	if hlen > maxNpyHeader {
		return npyHeader{}, 0, fmt.Errorf(".npy header of %d bytes is implausibly long", hlen)
	}
	buf := make([]byte, hlen)
	if _, err := io.ReadFull(r, buf); err != nil {
		return npyHeader{}, 0, fmt.Errorf("truncated .npy header: %w", err)
	}
	dict := string(buf)
	m := npyDescrRe.FindStringSubmatch(dict)
	if m == nil {
		return npyHeader{}, 0, fmt.Errorf(".npy header has no plain 'descr' (structured or object arrays are not supported): %q", strings.TrimSpace(dict))
	}
	h := npyHeader{Descr: m[1]}
	if f := npyFortranRe.FindStringSubmatch(dict); f == nil {
		return npyHeader{}, 0, fmt.Errorf(".npy header has no 'fortran_order': %q", strings.TrimSpace(dict))
	} else if f[1] == "True" {
		// Only 1-d arrays appear in a sparse .npz, where Fortran and C order coincide.
		h.fortran = true
	}
	s := npyShapeRe.FindStringSubmatch(dict)
	if s == nil {
		return npyHeader{}, 0, fmt.Errorf(".npy header has no 'shape': %q", strings.TrimSpace(dict))
	}
	for _, f := range strings.Split(s[1], ",") {
		f = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(f), "L"))
		if f == "" {
			continue
		}
		d, err := strconv.ParseInt(f, 10, 64)
		if err != nil || d < 0 {
			return npyHeader{}, 0, fmt.Errorf(".npy header has a bad shape %q", s[1])
		}
		h.Shape = append(h.Shape, d)
	}
	return h, prefix + hlen, nil
}

// EncodeMatrixNPY writes a rows×cols matrix to out as numpy's np.save writes a C-ordered '<f4'
// array; row(i, dst) fills dst (length cols) with row i.
func EncodeMatrixNPY(out io.Writer, rows, cols int, row func(i int, dst []float32)) error {
	if rows < 0 || cols < 0 {
		return fmt.Errorf("npy: %d×%d matrix", rows, cols)
	}
	if _, err := out.Write(encodeNpyHeader("<f4", []int64{int64(rows), int64(cols)})); err != nil {
		return err
	}
	buf := make([]float32, cols)
	for i := 0; i < rows; i++ {
		row(i, buf)
		if err := writeFloat32s(out, buf); err != nil {
			return err
		}
	}
	return nil
}
