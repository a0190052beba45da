// Package npy reads and writes NumPy's .npy array format (numpy/lib/format.py, NEP 1): the
// magic "\x93NUMPY", a version byte pair, a little-endian header length (uint16 in version
// 1.0, uint32 in 2.0 and 3.0), then an ASCII Python dict literal {'descr': …,
// 'fortran_order': …, 'shape': …} padded with spaces and a final '\n' so that the data start
// on a 64-byte boundary; the data follow, in C order unless fortran_order. The bundle's
// arrays (series.npy, the members of network.npz) and the time-series matrices a user
// gives are all read and written here.
package npy

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

const (
	// Magic opens every .npy file.
	Magic = "\x93NUMPY"
	// Align is numpy.lib.format.ARRAY_ALIGN: the data start on a multiple of it.
	Align = 64
	// growDigits is numpy.lib.format.GROWTH_AXIS_MAX_DIGITS: spare room numpy leaves in the
	// header for the first axis to grow.
	growDigits = 21
	// maxHeader bounds the header dict read; numpy itself refuses headers over 10,000 bytes
	// by default (max_header_size).
	maxHeader = 1 << 16
)

// Header is the parsed header of one .npy array.
type Header struct {
	Descr   string  // numpy dtype string, e.g. "<i4", "<f4", "|S3"
	Fortran bool    // data in Fortran (column-major) order
	Shape   []int64 // () for a 0-d array
	Len     int64   // bytes before the data: magic, version, length and dict
}

// Count is the number of elements (1 for a 0-d array), or −1 when the product overflows
// (with 8-byte elements).
func (h Header) Count() int64 {
	n := int64(1)
	for _, d := range h.Shape {
		if d != 0 && n > math.MaxInt64/8/d {
			return -1
		}
		n *= d
	}
	return n
}

// EncodeHeader returns the version 1.0 header of a C-ordered array exactly as numpy ≥ 1.24's
// _write_array_header writes it (same key order, spare growth space and padding), so that
// arrays written with it are byte-identical to np.save's.
func EncodeHeader(descr string, shape []int64) []byte {
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
		dict += strings.Repeat(" ", growDigits-len(strconv.FormatInt(shape[0], 10)))
	}
	hlen := len(dict) + 1 // the final '\n'
	// numpy pads with ARRAY_ALIGN − (prefix + hlen) mod ARRAY_ALIGN spaces, a full 64 when
	// already aligned; that quirk is kept for byte equality.
	pad := Align - (len(Magic)+2+2+hlen)%Align
	out := make([]byte, 0, len(Magic)+4+hlen+pad)
	out = append(out, Magic...)
	out = append(out, 1, 0)
	out = binary.LittleEndian.AppendUint16(out, uint16(hlen+pad))
	out = append(out, dict...)
	for i := 0; i < pad; i++ {
		out = append(out, ' ')
	}
	return append(out, '\n')
}

// ReadHeader reads and parses a header (versions 1.0, 2.0 and 3.0), leaving r at the first
// data byte.
func ReadHeader(r io.Reader) (Header, error) {
	var h Header
	pre := make([]byte, 8)
	if _, err := io.ReadFull(r, pre); err != nil {
		return h, fmt.Errorf("not a .npy file: %w", err)
	}
	if string(pre[:6]) != Magic {
		return h, errors.New("not a .npy file: bad magic string")
	}
	var hlen int
	switch major := pre[6]; major {
	case 1:
		b := make([]byte, 2)
		if _, err := io.ReadFull(r, b); err != nil {
			return h, fmt.Errorf("truncated .npy header: %w", err)
		}
		hlen = int(binary.LittleEndian.Uint16(b))
		h.Len = 10 + int64(hlen)
	case 2, 3:
		b := make([]byte, 4)
		if _, err := io.ReadFull(r, b); err != nil {
			return h, fmt.Errorf("truncated .npy header: %w", err)
		}
		hlen = int(binary.LittleEndian.Uint32(b))
		h.Len = 12 + int64(hlen)
	default:
		return h, fmt.Errorf("unsupported .npy format version %d.%d", major, pre[7])
	}
	if hlen > maxHeader {
		return h, fmt.Errorf(".npy header of %d bytes is implausibly long", hlen)
	}
	hb := make([]byte, hlen)
	if _, err := io.ReadFull(r, hb); err != nil {
		return h, fmt.Errorf("truncated .npy header: %w", err)
	}
	dict, err := parsePyDict(string(hb))
	if err != nil {
		return h, fmt.Errorf(".npy header %q: %w", strings.TrimSpace(string(hb)), err)
	}
	descr, ok := dict["descr"].(string)
	if !ok {
		return h, errors.New(".npy header: 'descr' is missing or not a simple type (structured arrays are not supported)")
	}
	h.Descr = descr
	fo, ok := dict["fortran_order"].(bool)
	if !ok {
		return h, errors.New(".npy header: 'fortran_order' is missing")
	}
	h.Fortran = fo
	shape, ok := dict["shape"].([]int64)
	if !ok {
		return h, errors.New(".npy header: 'shape' is missing")
	}
	h.Shape = shape
	return h, nil
}

// A Number is a numeric dtype: its kind ('f' float, 'i' signed, 'u' unsigned integer), its
// size in bytes and its byte order.
type Number struct {
	Kind  byte
	Size  int
	Order binary.ByteOrder
}

// ParseNumber parses a numeric dtype string: float32/64 or (u)int8–64 in either byte order.
func ParseNumber(d string) (Number, error) {
	var n Number
	if len(d) < 3 {
		return n, fmt.Errorf(".npy dtype %q is not supported", d)
	}
	switch d[0] {
	case '<', '|', '=': // '=' is native: little-endian on every platform HubScope ships for
		n.Order = binary.LittleEndian
	case '>':
		n.Order = binary.BigEndian
	default:
		return n, fmt.Errorf(".npy dtype %q is not supported", d)
	}
	size, err := strconv.Atoi(d[2:])
	if err != nil {
		return n, fmt.Errorf(".npy dtype %q is not supported", d)
	}
	n.Kind, n.Size = d[1], size
	switch {
	case n.Kind == 'f' && (size == 4 || size == 8):
	case (n.Kind == 'i' || n.Kind == 'u') && (size == 1 || size == 2 || size == 4 || size == 8):
	default:
		return n, fmt.Errorf(".npy dtype %q is not supported (float32/64 or integers are)", d)
	}
	return n, nil
}

// Decoder returns the conversion of one stored element to float32.
func (n Number) Decoder() func([]byte) float32 {
	o := n.Order
	switch n.Kind {
	case 'f':
		if n.Size == 4 {
			return func(b []byte) float32 { return math.Float32frombits(o.Uint32(b)) }
		}
		return func(b []byte) float32 { return float32(math.Float64frombits(o.Uint64(b))) }
	case 'i':
		switch n.Size {
		case 1:
			return func(b []byte) float32 { return float32(int8(b[0])) }
		case 2:
			return func(b []byte) float32 { return float32(int16(o.Uint16(b))) }
		case 4:
			return func(b []byte) float32 { return float32(int32(o.Uint32(b))) }
		}
		return func(b []byte) float32 { return float32(int64(o.Uint64(b))) }
	default: // 'u'
		switch n.Size {
		case 1:
			return func(b []byte) float32 { return float32(b[0]) }
		case 2:
			return func(b []byte) float32 { return float32(o.Uint16(b)) }
		case 4:
			return func(b []byte) float32 { return float32(o.Uint32(b)) }
		}
		return func(b []byte) float32 { return float32(o.Uint64(b)) }
	}
}

// WriteMatrix writes a rows×cols matrix to out as np.save writes a C-ordered '<f4' array;
// row(i, dst) fills dst (length cols) with row i.
func WriteMatrix(out io.Writer, rows, cols int, row func(i int, dst []float32)) error {
	if rows < 0 || cols < 0 {
		return fmt.Errorf("npy: %d×%d matrix", rows, cols)
	}
	if _, err := out.Write(EncodeHeader("<f4", []int64{int64(rows), int64(cols)})); err != nil {
		return err
	}
	buf := make([]float32, cols)
	b := make([]byte, 4*cols)
	for i := 0; i < rows; i++ {
		row(i, buf)
		for k, v := range buf {
			binary.LittleEndian.PutUint32(b[4*k:], math.Float32bits(v))
		}
		if _, err := out.Write(b); err != nil {
			return err
		}
	}
	return nil
}

// parsePyDict parses the Python literal of a .npy header: a dict of string keys to strings,
// True/False, or tuples of integers. Values of other kinds (lists for structured dtypes) are
// rejected.
func parsePyDict(s string) (map[string]any, error) {
	p := &pyLex{s: s}
	if !p.eat('{') {
		return nil, errors.New("expected '{'")
	}
	out := map[string]any{}
	for {
		if p.eat('}') {
			return out, nil
		}
		key, err := p.str()
		if err != nil {
			return nil, err
		}
		if !p.eat(':') {
			return nil, fmt.Errorf("expected ':' after %q", key)
		}
		var v any
		switch c := p.peek(); {
		case c == '\'' || c == '"':
			v, err = p.str()
		case c == '(':
			v, err = p.tuple()
		case strings.HasPrefix(p.s[p.i:], "True"):
			p.i += 4
			v = true
		case strings.HasPrefix(p.s[p.i:], "False"):
			p.i += 5
			v = false
		default:
			err = fmt.Errorf("unsupported value for %q", key)
		}
		if err != nil {
			return nil, err
		}
		out[key] = v
		if !p.eat(',') && p.peek() != '}' {
			return nil, errors.New("expected ',' or '}'")
		}
	}
}

type pyLex struct {
	s string
	i int
}

func (p *pyLex) skip() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\n' || p.s[p.i] == '\t') {
		p.i++
	}
}

func (p *pyLex) peek() byte {
	p.skip()
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

func (p *pyLex) eat(c byte) bool {
	if p.peek() == c {
		p.i++
		return true
	}
	return false
}

func (p *pyLex) str() (string, error) {
	q := p.peek()
	if q != '\'' && q != '"' {
		return "", errors.New("expected a string")
	}
	end := strings.IndexByte(p.s[p.i+1:], q)
	if end < 0 {
		return "", errors.New("unterminated string")
	}
	v := p.s[p.i+1 : p.i+1+end]
	p.i += end + 2
	return v, nil
}

func (p *pyLex) tuple() ([]int64, error) {
	p.eat('(')
	var out []int64
	for {
		if p.eat(')') {
			return out, nil
		}
		p.skip()
		j := p.i
		for j < len(p.s) && p.s[j] >= '0' && p.s[j] <= '9' {
			j++
		}
		if j == p.i {
			return nil, errors.New("expected an integer in 'shape'")
		}
		n, err := strconv.ParseInt(p.s[p.i:j], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("shape entry %q: %w", p.s[p.i:j], err)
		}
		p.i = j
		if p.i < len(p.s) && p.s[p.i] == 'L' { // a Python 2 long, as old numpy wrote them
			p.i++
		}
		out = append(out, n)
		if !p.eat(',') && p.peek() != ')' {
			return nil, errors.New("expected ',' or ')' in 'shape'")
		}
	}
}
