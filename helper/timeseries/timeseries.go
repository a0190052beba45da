// Package timeseries reads regional time-series matrices — one row per region (or voxel),
// one column per time point, as atlas tools export them (nilearn's NiftiLabelsMasker, CONN,
// DPABI) — for region-level networks. Text files (.csv, .tsv, .txt) are split at tabs, else
// commas, else runs of white space, decided by the first data line; '#' starts a comment
// line. A first row with a non-numeric entry after its first column is a header of names and
// is skipped. When the first column of the first data row is not a number, the first column
// holds the region labels on every row. A .npy file holds a 2D array of float32, float64 or
// (u)int8–64, in C or Fortran order. Package scan turns a Matrix into a scan.
package timeseries

import (
	"bufio"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/hubscope/hubscope/helper/npy"
	"github.com/hubscope/hubscope/helper/progress"
)

// A Matrix is a regions × time matrix as read: Rows series of Cols time points, row-major.
type Matrix struct {
	Data       []float32
	Rows, Cols int
	Labels     []string // a label per row, when the file has a label column
	DataBytes  int64    // bytes of values read (a .npy file's data; 0 for text)
}

// ReadText reads a CSV/TSV/whitespace matrix. Errors name the line (and column); ctx is
// checked every 1,024 rows.
func ReadText(ctx context.Context, r io.Reader) (*Matrix, error) {
	rows, err := newRowReader(bufio.NewReaderSize(r, 1<<16))
	if err != nil {
		return nil, err
	}
	var (
		m         Matrix
		hasLabels bool
		first     = true
	)
	m.Cols = -1
	for {
		fields, line, err := rows.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		if m.Rows%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		if first {
			first = false
			if isHeader(fields) {
				continue
			}
		}
		if m.Cols < 0 { // first data row: is there a label column?
			hasLabels = !looksNumeric(fields[0])
			m.Cols = len(fields)
			if hasLabels {
				m.Cols--
			}
			if m.Cols < 1 {
				return nil, fmt.Errorf("line %d: no values after the label", line)
			}
		}
		vals := fields
		if hasLabels {
			m.Labels = append(m.Labels, strings.TrimSpace(fields[0]))
			vals = fields[1:]
		}
		if len(vals) != m.Cols {
			return nil, fmt.Errorf("line %d: %d values where the first row has %d", line, len(vals), m.Cols)
		}
		for c, s := range vals {
			v, err := parseValue(s)
			if err != nil {
				col := c + 1
				if hasLabels {
					col++
				}
				return nil, fmt.Errorf("line %d, column %d: %w", line, col, err)
			}
			m.Data = append(m.Data, v)
		}
		m.Rows++
	}
	if m.Rows == 0 {
		return nil, errors.New("no data rows")
	}
	return &m, nil
}

// ReadNPY reads a 2D .npy array (rows = regions, columns = time) from r, a file of size
// bytes: the claimed shape is checked against the size before anything is allocated from it.
// Progress: stage "load", one unit per data byte; ctx is checked between 64 KiB chunks.
func ReadNPY(ctx context.Context, r io.Reader, size int64, rep progress.Reporter) (*Matrix, error) {
	rep = progress.OrDiscard(rep)
	br := bufio.NewReaderSize(r, 1<<16)
	h, err := npy.ReadHeader(br)
	if err != nil {
		return nil, err
	}
	num, err := npy.ParseNumber(h.Descr)
	if err != nil {
		return nil, err
	}
	if len(h.Shape) != 2 {
		return nil, fmt.Errorf("array of %d dimensions %v; a 2D regions × time matrix is needed", len(h.Shape), h.Shape)
	}
	R64, C64 := h.Shape[0], h.Shape[1]
	if R64 < 1 || C64 < 1 {
		return nil, fmt.Errorf("empty array of shape (%d, %d)", R64, C64)
	}
	if R64 > math.MaxInt32 || C64 > math.MaxInt32 || R64 > math.MaxInt64/C64/int64(num.Size) {
		return nil, fmt.Errorf("shape (%d, %d) is too large", R64, C64)
	}
	need := R64 * C64 * int64(num.Size)
	if have := size - h.Len; have < need {
		return nil, fmt.Errorf("truncated: shape (%d, %d) needs %d bytes of data, the file has %d", R64, C64, need, have)
	}
	R, C := int(R64), int(C64)
	rep.Start("load", need)
	data := make([]float32, R*C)
	decode := num.Decoder()
	sz := num.Size
	buf := make([]byte, (1<<16)/sz*sz)
	for e := 0; e < R*C; {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		chunk := min(len(buf)/sz, R*C-e)
		b := buf[:chunk*sz]
		if _, err := io.ReadFull(br, b); err != nil {
			return nil, fmt.Errorf("reading data: %w", err)
		}
		for q := 0; q < chunk; q, e = q+1, e+1 {
			v := decode(b[q*sz:])
			if h.Fortran { // element e is (r, c) with r fastest
				data[(e%R)*C+e/R] = v
			} else {
				data[e] = v
			}
		}
		rep.Add(int64(len(b)))
	}
	return &Matrix{Data: data, Rows: R, Cols: C, DataBytes: need}, nil
}

// isHeader reports whether a first row is a header of names: an entry after the first
// column that is not a number (the first column may be a label column's title).
func isHeader(fields []string) bool {
	for _, s := range fields[1:] {
		if !looksNumeric(s) {
			return true
		}
	}
	return false
}

// looksNumeric reports whether s is written as a number (even one beyond float32's range,
// which parseValue then reports as such rather than mistaking it for a name).
func looksNumeric(s string) bool {
	_, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	var ne *strconv.NumError
	return err == nil || (errors.As(err, &ne) && ne.Err == strconv.ErrRange)
}

// parseValue parses one matrix entry as float32 (NaN and ±Inf are accepted here and dropped
// later with their series, as for voxels).
func parseValue(s string) (float32, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, errors.New("empty value")
	}
	v, err := strconv.ParseFloat(s, 32)
	if err != nil {
		var ne *strconv.NumError
		if errors.As(err, &ne) && ne.Err == strconv.ErrRange {
			return 0, fmt.Errorf("value %q is out of float32 range", s)
		}
		return 0, fmt.Errorf("%q is not a number", s)
	}
	return float32(v), nil
}

// rowReader yields the fields of each data line with its 1-based line number.
type rowReader struct {
	csv   *csv.Reader
	br    *bufio.Reader
	line  int
	first []string // first data line (whitespace mode), already split
	fline int
}

// newRowReader peeks at the first data line to choose the separator.
func newRowReader(br *bufio.Reader) (*rowReader, error) {
	rr := &rowReader{br: br}
	for {
		text, err := br.ReadString('\n')
		if text == "" && err != nil {
			if err == io.EOF {
				return rr, nil // empty file: next() reports EOF
			}
			return nil, err
		}
		rr.line++
		t := strings.TrimSpace(text)
		if t == "" || t[0] == '#' {
			if err == io.EOF {
				return rr, nil
			}
			continue
		}
		var sep rune
		switch {
		case strings.ContainsRune(t, '\t'):
			sep = '\t'
		case strings.ContainsRune(t, ','):
			sep = ','
		default:
			rr.first, rr.fline = strings.Fields(t), rr.line
			return rr, nil
		}
		// Hand the peeked line and the rest of the stream to encoding/csv (quotes, CRLF).
		rest := io.MultiReader(strings.NewReader(text), br)
		c := csv.NewReader(rest)
		c.Comma, c.Comment = sep, '#'
		c.FieldsPerRecord = -1
		c.TrimLeadingSpace = true
		c.ReuseRecord = true
		rr.csv = c
		rr.fline = rr.line // csv counts lines from the peeked one
		return rr, nil
	}
}

func (rr *rowReader) next() ([]string, int, error) {
	if rr.csv != nil {
		rec, err := rr.csv.Read()
		line := 0
		if err == nil {
			line, _ = rr.csv.FieldPos(0)
		} else {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				line, err = pe.Line, pe.Err
			}
		}
		return rec, line + rr.fline - 1, err
	}
	if rr.first != nil {
		f := rr.first
		rr.first = nil
		return f, rr.fline, nil
	}
	for {
		text, err := rr.br.ReadString('\n')
		if text == "" && err != nil {
			return nil, rr.line, err
		}
		rr.line++
		t := strings.TrimSpace(text)
		if t == "" || t[0] == '#' {
			continue
		}
		return strings.Fields(t), rr.line, nil
	}
}
