package scan

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/hubscope/hubscope/helper/progress"
)

// A plain time-series matrix (ROI-level networks) has one row per region (or voxel) and one
// column per time point. Text files (.csv, .tsv, .txt) are split at tabs, else commas, else
// runs of white space, decided by the first data line; '#' starts a comment line. A first row
// with a non-numeric entry after its first column is a header of names and is skipped. When
// the first column of the first data row is not a number, the first column holds the region
// labels (Scan.Labels) on every row. A .npy file holds a 2D array of float32, float64 or
// (u)int8–64, in C or Fortran order.

// loadText reads a CSV/TSV/whitespace matrix.
func loadText(ctx context.Context, path string, rep progress.Reporter) (*Scan, error) {
	f, err := openInput(path)
	if err != nil {
		return nil, err // *fs.PathError: "open PATH: …"
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err // *fs.PathError: "open PATH: …"
	}
	rep.Start("load", st.Size())
	hr := newHashingReader(f)
	cr := &countingReader{r: hr, rep: rep}
	rows, err := newRowReader(bufio.NewReaderSize(cr, 1<<16))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}

	var (
		data      []float32
		labels    []string
		hasLabels bool
		L         = -1
		nrows     int
		first     = true
	)
	for {
		fields, line, err := rows.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: line %d: %w", path, line, err)
		}
		if nrows%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("load %s: %w", path, err)
			}
		}
		if first {
			first = false
			if isHeader(fields) {
				continue
			}
		}
		if L < 0 { // first data row: is there a label column?
			hasLabels = !looksNumeric(fields[0])
			L = len(fields)
			if hasLabels {
				L--
			}
			if L < 1 {
				return nil, fmt.Errorf("%s: line %d: no values after the label", path, line)
			}
		}
		vals := fields
		if hasLabels {
			labels = append(labels, strings.TrimSpace(fields[0]))
			vals = fields[1:]
		}
		if len(vals) != L {
			return nil, fmt.Errorf("%s: line %d: %d values where the first row has %d", path, line, len(vals), L)
		}
		for c, s := range vals {
			v, err := parseValue(s)
			if err != nil {
				col := c + 1
				if hasLabels {
					col++
				}
				return nil, fmt.Errorf("%s: line %d, column %d: %w", path, line, col, err)
			}
			data = append(data, v)
		}
		nrows++
	}
	if nrows == 0 {
		return nil, fmt.Errorf("%s: no data rows", path)
	}
	d, err := hr.finish(path)
	if err != nil {
		return nil, err
	}
	s := &Scan{Data: data, N: nrows, L: L, Source: path, TRSource: matrixTR, Labels: labels, BytesRead: cr.n, Passes: 1, Inputs: []FileDigest{d}}
	s.Affine = identityAffine()
	return finishMatrix(s, rep)
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

// countingReader counts the bytes read and reports them as progress units.
type countingReader struct {
	r   io.Reader
	n   int64
	rep progress.Reporter
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if n > 0 {
		c.rep.Add(int64(n))
	}
	return n, err
}

// npyMagic opens every .npy file (NumPy format NEP 1).
const npyMagic = "\x93NUMPY"

// npyHeader is the parsed dictionary of a .npy header.
type npyHeader struct {
	kind     byte // 'f', 'i', 'u'
	size     int  // bytes per element
	order    binary.ByteOrder
	fortran  bool
	shape    []int
	dataFrom int64 // offset of the data
}

// loadNpy reads a 2D .npy array (rows = regions, columns = time).
func loadNpy(ctx context.Context, path string, rep progress.Reporter) (*Scan, error) {
	f, err := openInput(path)
	if err != nil {
		return nil, err // *fs.PathError: "open PATH: …"
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err // *fs.PathError: "open PATH: …"
	}
	hr := newHashingReader(f)
	br := bufio.NewReaderSize(hr, 1<<16)
	h, err := readNpyHeader(br)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(h.shape) != 2 {
		return nil, fmt.Errorf("%s: array of %d dimensions %v; a 2D regions × time matrix is needed", path, len(h.shape), h.shape)
	}
	R, C := h.shape[0], h.shape[1]
	if R < 1 || C < 1 {
		return nil, fmt.Errorf("%s: empty array of shape (%d, %d)", path, R, C)
	}
	// Check the claimed size against the file before allocating anything from it.
	if int64(R) > math.MaxInt64/int64(C)/int64(h.size) {
		return nil, fmt.Errorf("%s: shape (%d, %d) is too large", path, R, C)
	}
	need := int64(R) * int64(C) * int64(h.size)
	if have := st.Size() - h.dataFrom; have < need {
		return nil, fmt.Errorf("%s: truncated: shape (%d, %d) needs %d bytes of data, the file has %d", path, R, C, need, have)
	}
	rep.Start("load", need)
	data := make([]float32, R*C)
	decode := npyDecoder(h)
	buf := make([]byte, (1<<16)/h.size*h.size)
	for e := 0; e < R*C; {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("load %s: %w", path, err)
		}
		chunk := min(len(buf)/h.size, R*C-e)
		b := buf[:chunk*h.size]
		if _, err := io.ReadFull(br, b); err != nil {
			return nil, fmt.Errorf("%s: reading data: %w", path, err)
		}
		for q := 0; q < chunk; q, e = q+1, e+1 {
			v := decode(b[q*h.size:])
			if h.fortran { // element e is (r, c) with r fastest
				data[(e%R)*C+e/R] = v
			} else {
				data[e] = v
			}
		}
		rep.Add(int64(len(b)))
	}
	d, err := hr.finish(path) // trailing bytes after the array are hashed too
	if err != nil {
		return nil, err
	}
	s := &Scan{Data: data, N: R, L: C, Source: path, TRSource: matrixTR, BytesRead: need, Passes: 1, Inputs: []FileDigest{d}}
	s.Affine = identityAffine()
	return finishMatrix(s, rep)
}

// npyDecoder returns the conversion of one stored element to float32.
func npyDecoder(h npyHeader) func([]byte) float32 {
	o := h.order
	switch h.kind {
	case 'f':
		if h.size == 4 {
			return func(b []byte) float32 { return math.Float32frombits(o.Uint32(b)) }
		}
		return func(b []byte) float32 { return float32(math.Float64frombits(o.Uint64(b))) }
	case 'i':
		switch h.size {
		case 1:
			return func(b []byte) float32 { return float32(int8(b[0])) }
		case 2:
			return func(b []byte) float32 { return float32(int16(o.Uint16(b))) }
		case 4:
			return func(b []byte) float32 { return float32(int32(o.Uint32(b))) }
		}
		return func(b []byte) float32 { return float32(int64(o.Uint64(b))) }
	default: // 'u'
		switch h.size {
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

// readNpyHeader parses the magic, version, header length and the header dictionary
// {'descr': '<f4', 'fortran_order': False, 'shape': (R, C), }.
func readNpyHeader(r io.Reader) (npyHeader, error) {
	var h npyHeader
	pre := make([]byte, 8)
	if _, err := io.ReadFull(r, pre); err != nil {
		return h, fmt.Errorf("not a .npy file: %w", err)
	}
	if string(pre[:6]) != npyMagic {
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
		h.dataFrom = 10 + int64(hlen)
	case 2, 3:
		b := make([]byte, 4)
		if _, err := io.ReadFull(r, b); err != nil {
			return h, fmt.Errorf("truncated .npy header: %w", err)
		}
		hlen = int(binary.LittleEndian.Uint32(b))
		h.dataFrom = 12 + int64(hlen)
	default:
		return h, fmt.Errorf("unsupported .npy format version %d.%d", major, pre[7])
	}
	if hlen > 1<<20 {
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
		return h, errors.New(".npy header: 'descr' is missing or not a simple type (structured arrays are not matrices)")
	}
	if err := h.setDescr(descr); err != nil {
		return h, err
	}
	fo, ok := dict["fortran_order"].(bool)
	if !ok {
		return h, errors.New(".npy header: 'fortran_order' is missing")
	}
	h.fortran = fo
	shape, ok := dict["shape"].([]int)
	if !ok {
		return h, errors.New(".npy header: 'shape' is missing")
	}
	h.shape = shape
	return h, nil
}

func (h *npyHeader) setDescr(d string) error {
	if len(d) < 3 {
		return fmt.Errorf(".npy dtype %q is not supported", d)
	}
	switch d[0] {
	case '<', '|', '=': // '=' is native: little-endian on every platform HubScope ships for
		h.order = binary.LittleEndian
	case '>':
		h.order = binary.BigEndian
	default:
		return fmt.Errorf(".npy dtype %q is not supported", d)
	}
	size, err := strconv.Atoi(d[2:])
	if err != nil {
		return fmt.Errorf(".npy dtype %q is not supported", d)
	}
	h.kind, h.size = d[1], size
	switch {
	case h.kind == 'f' && (size == 4 || size == 8):
	case (h.kind == 'i' || h.kind == 'u') && (size == 1 || size == 2 || size == 4 || size == 8):
	default:
		return fmt.Errorf(".npy dtype %q is not supported (float32/64 or integers are)", d)
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

func (p *pyLex) tuple() ([]int, error) {
	p.eat('(')
	var out []int
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
		n, err := strconv.Atoi(p.s[p.i:j])
		if err != nil {
			return nil, fmt.Errorf("shape entry %q: %w", p.s[p.i:j], err)
		}
		p.i = j
		out = append(out, n)
		if !p.eat(',') && p.peek() != ')' {
			return nil, errors.New("expected ',' or ')' in 'shape'")
		}
	}
}

func identityAffine() [4][4]float64 {
	return [4][4]float64{{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}, {0, 0, 0, 1}}
}

// finishMatrix checks L, drops bad series (with their labels) and reports.
func finishMatrix(s *Scan, rep progress.Reporter) (*Scan, error) {
	if s.L < 3 {
		return nil, fmt.Errorf("%s: %d time points (columns); at least 3 are needed for a correlation", s.Source, s.L)
	}
	s.Dropped.MaskVoxels = s.N
	kept, st := dropBadSeries(s.Data, s.N, s.L)
	s.Dropped.ZeroVariance, s.Dropped.NonFinite = st.ZeroVariance, st.NonFinite
	if len(kept) == 0 {
		return nil, fmt.Errorf("%s: every one of the %d series is constant or has NaN/Inf values", s.Source, s.N)
	}
	if s.Labels != nil {
		for w, v := range kept {
			s.Labels[w] = s.Labels[v]
		}
		s.Labels = s.Labels[:len(kept)]
	}
	s.N = len(kept)
	s.Data = s.Data[:s.N*s.L]
	noteDropped(rep, s.Source, "rows", s.Dropped)
	return s, nil
}

// matrixTR is the TR statement of a plain regions × time matrix, which has no header.
const matrixTR = "TR unknown (a time-series matrix carries no timing)"
