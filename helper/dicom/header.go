// Package dicom takes scans as they leave the scanner — a folder of DICOM files (searched
// recursively), a .zip export or a DICOMDIR — lists the series they hold, picks the BOLD time
// series, and converts it to NIfTI with dcm2niix, run as an external program (docs/dicom.md).
//
// HubScope does not decode DICOM images itself: every tool of the field converts with
// dcm2niix, which knows the vendors' mosaics, slice timing and compressed transfer syntaxes.
// This package reads only the few header elements the listing needs (series, image type,
// sequence, TR, matrix, instance numbers), with a small reader of the four uncompressed
// encodings (implicit and explicit VR little endian, explicit big endian, deflated); pixel
// data is never read. It reads the patient's identity too, only so that the conversion can
// check that none of it reaches what HubScope writes.
package dicom

import (
	"bufio"
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Transfer syntaxes whose data sets the reader walks (the pixel data may be compressed in
// any syntax: it is never read).
const (
	implicitLE       = "1.2.840.10008.1.2"
	explicitBE       = "1.2.840.10008.1.2.2"
	deflatedLE       = "1.2.840.10008.1.2.1.99"
	dicomdirSOPClass = "1.2.840.10008.1.3.10" // Media Storage Directory Storage
)

// Limits that keep a hostile file from making the reader allocate or walk without end.
const (
	maxValue   = 1 << 16 // longest element value kept (longer ones are skipped)
	maxDepth   = 8       // nested sequences
	maxHeader  = 64 << 20
	maxRecords = 1 << 20 // DICOMDIR file references
)

// Header is what the listing needs from one DICOM file.
type Header struct {
	TransferSyntax string
	SOPClass       string // media storage SOP class (DICOMDIR: dicomdirSOPClass)
	SOPInstance    string
	StudyUID       string
	SeriesUID      string
	SeriesNumber   int
	HasSeries      bool // SeriesNumber was present
	Description    string
	Protocol       string
	Modality       string
	ImageType      []string
	ScanningSeq    string  // (0018,0020): "EP" for echo-planar imaging
	SequenceName   string  // (0018,0024), e.g. Siemens "*epfid2d1_64"
	TR             float64 // RepetitionTime (0018,0080) in ms; 0 when absent
	Instance       int
	Acquisition    int
	Rows, Columns  int
	Frames         int    // NumberOfFrames (multi-frame files)
	Mosaic         int    // Siemens NumberOfImagesInMosaic (0019,100A)
	Position       string // ImagePositionPatient as written
	TemporalPos    int    // NumberOfTemporalPositions
	PixelBytes     int64  // defined length of the pixel data; -1 when encapsulated
	HasPixels      bool

	// Identity: read only to check that none of it is copied (never shown or written).
	Identity Identity

	// Files are a DICOMDIR's referenced files, relative to its folder ('/'-separated).
	Files []string

	path string // the file it was read from (set by List)
}

// Identity is the patient's and institution's identity as the file holds it.
type Identity struct {
	PatientName, PatientID, BirthDate, InstitutionAddress string
}

// Values lists the identity's non-empty values in the forms they may be copied in: as
// written, without DICOM's padding and component separators, and a birth date as BIDS
// writes dates (YYYY-MM-DD).
func (id Identity) Values() []string {
	var out []string
	add := func(s string) {
		s = strings.TrimSpace(strings.TrimRight(s, "\x00"))
		if len(s) < 3 { // too short to be told from chance bytes
			return
		}
		for _, v := range out {
			if v == s {
				return
			}
		}
		out = append(out, s)
	}
	add(id.PatientName)
	add(strings.TrimRight(strings.ReplaceAll(id.PatientName, "^", " "), " "))
	for _, part := range strings.Split(id.PatientName, "^") {
		add(part)
	}
	add(id.PatientID)
	add(id.BirthDate)
	if d := strings.TrimSpace(id.BirthDate); len(d) == 8 {
		add(d[:4] + "-" + d[4:6] + "-" + d[6:])
	}
	add(id.InstitutionAddress)
	return out
}

// ErrNotDICOM marks a file that is not DICOM at all (no preamble and no plausible first
// element): folders hold such files (notes, thumbnails) and the listing skips them.
var ErrNotDICOM = errors.New("not a DICOM file")

// CorruptError is a file that claims to be DICOM but cannot be read.
type CorruptError struct {
	Offset  int64
	Problem string
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("not a readable DICOM file: %s (at byte %d)", e.Problem, e.Offset)
}

// ReadHeader reads a DICOM file's header from r (size bytes long, or -1 when unknown) up to
// its pixel data. It returns ErrNotDICOM for a file that is not DICOM and *CorruptError for
// one that is but cannot be read.
func ReadHeader(r io.Reader, size int64) (*Header, error) {
	br := bufio.NewReaderSize(r, 32<<10)
	p := &parser{r: br, size: size, order: binary.LittleEndian, h: &Header{PixelBytes: -1}}
	pre, err := br.Peek(132)
	switch {
	case err == nil && string(pre[128:132]) == "DICM":
		p.skip(132)
		if err := p.meta(); err != nil {
			return nil, err
		}
	case len(pre) >= 8 && plausibleImplicit(pre):
		// No preamble (old ACR-NEMA style files): implicit VR little endian from byte 0.
		p.h.TransferSyntax = implicitLE
	default:
		return nil, ErrNotDICOM
	}
	ts := p.h.TransferSyntax
	p.implicit = ts == implicitLE
	if ts == explicitBE {
		p.order = binary.BigEndian
	}
	if ts == deflatedLE {
		p.r = bufio.NewReader(flate.NewReader(p.r))
		p.size = -1
	}
	if err := p.dataset(-1, 0); err != nil && !errors.Is(err, errStop) {
		return nil, err
	}
	return p.h, nil
}

// plausibleImplicit: the first element of a preamble-less file is a group 0008 element
// with a short even length.
func plausibleImplicit(b []byte) bool {
	g := binary.LittleEndian.Uint16(b)
	e := binary.LittleEndian.Uint16(b[2:])
	l := binary.LittleEndian.Uint32(b[4:])
	return g == 0x0008 && e < 0x0100 && l < 1024 && l%2 == 0
}

var errStop = errors.New("pixel data reached")

type parser struct {
	r        *bufio.Reader
	off      int64
	size     int64
	implicit bool
	order    binary.ByteOrder
	h        *Header
	inDir    bool // inside a DICOMDIR's directory record sequence
}

func (p *parser) corrupt(format string, args ...any) error {
	return &CorruptError{Offset: p.off, Problem: fmt.Sprintf(format, args...)}
}

func (p *parser) read(n int) ([]byte, error) {
	b := make([]byte, n)
	if _, err := io.ReadFull(p.r, b); err != nil {
		return nil, p.corrupt("file ends inside an element")
	}
	p.off += int64(n)
	return b, nil
}

func (p *parser) skip(n int64) error {
	if p.size >= 0 && p.off+n > p.size {
		return p.corrupt("an element of %d bytes runs past the end of the file (%d bytes)", n, p.size)
	}
	d, err := p.r.Discard(int(n))
	p.off += int64(d)
	if err != nil {
		return p.corrupt("file ends inside an element")
	}
	return nil
}

// meta reads the file meta information (group 0002), always explicit VR little endian.
func (p *parser) meta() error {
	p.order = binary.LittleEndian
	for {
		b, err := p.r.Peek(2)
		if err != nil || binary.LittleEndian.Uint16(b) != 0x0002 {
			break
		}
		tag, vr, n, err := p.element()
		if err != nil {
			return err
		}
		if n < 0 {
			return p.corrupt("undefined length in the file meta information")
		}
		v, err := p.value(vr, n)
		if err != nil {
			return err
		}
		switch tag {
		case 0x00020002:
			p.h.SOPClass = str(v)
		case 0x00020010:
			p.h.TransferSyntax = str(v)
		}
	}
	if p.h.TransferSyntax == "" {
		return p.corrupt("no transfer syntax in the file meta information")
	}
	return nil
}

// longVR are the explicit VRs with a 4-byte length after two reserved bytes.
func longVR(vr string) bool {
	switch vr {
	case "OB", "OD", "OF", "OL", "OV", "OW", "SQ", "SV", "UC", "UN", "UR", "UT", "UV":
		return true
	}
	return false
}

// element reads one element's tag, VR ("" when implicit or an item) and length (-1 undefined).
func (p *parser) element() (tag uint32, vr string, n int64, err error) {
	b, err := p.read(8)
	if err != nil {
		return 0, "", 0, err
	}
	g, e := p.order.Uint16(b), p.order.Uint16(b[2:])
	tag = uint32(g)<<16 | uint32(e)
	if g == 0xFFFE || p.implicit && g != 0x0002 { // items and delimiters carry no VR
		l := p.order.Uint32(b[4:])
		if l == 0xFFFFFFFF {
			return tag, "", -1, nil
		}
		return tag, "", int64(l), nil
	}
	vr = string(b[4:6])
	if vr[0] < 'A' || vr[0] > 'Z' || vr[1] < 'A' || vr[1] > 'Z' {
		return 0, "", 0, p.corrupt("element (%04X,%04X) has no value representation", g, e)
	}
	if longVR(vr) {
		l, err := p.read(4)
		if err != nil {
			return 0, "", 0, err
		}
		v := p.order.Uint32(l)
		if v == 0xFFFFFFFF {
			return tag, vr, -1, nil
		}
		return tag, vr, int64(v), nil
	}
	return tag, vr, int64(p.order.Uint16(b[6:])), nil
}

func (p *parser) value(vr string, n int64) ([]byte, error) {
	if n > maxValue {
		return nil, p.skip(n)
	}
	if p.size >= 0 && p.off+n > p.size {
		return nil, p.corrupt("an element of %d bytes runs past the end of the file (%d bytes)", n, p.size)
	}
	return p.read(int(n))
}

// knownSQ are the sequences this reader descends into when their VR is not written
// (implicit VR): the DICOMDIR's directory records.
func knownSQ(tag uint32) bool { return tag == 0x00041220 }

// dataset walks elements until end bytes have been read (end < 0: until the end of the
// data set or an item delimiter) at nesting depth.
func (p *parser) dataset(end int64, depth int) error {
	if depth > maxDepth {
		return p.corrupt("sequences nested more than %d deep", maxDepth)
	}
	for end < 0 || p.off < end {
		if depth == 0 && p.off > maxHeader {
			return p.corrupt("no pixel data within the first %d MiB", maxHeader>>20)
		}
		if _, err := p.r.Peek(1); err == io.EOF && end < 0 && depth == 0 {
			return nil // a file without pixel data (DICOMDIR, structured reports)
		}
		tag, vr, n, err := p.element()
		if err != nil {
			return err
		}
		switch tag {
		case 0xFFFEE00D: // item delimiter
			if depth == 0 {
				return p.corrupt("item delimiter outside a sequence")
			}
			return nil
		case 0xFFFEE0DD:
			return p.corrupt("sequence delimiter outside a sequence")
		}
		if depth == 0 && tag == 0x7FE00010 {
			p.h.HasPixels = true
			p.h.PixelBytes = n
			if n >= 0 && p.size >= 0 && p.off+n > p.size {
				return p.corrupt("pixel data of %d bytes, but the file ends %d bytes after it starts", n, p.size-p.off)
			}
			return errStop
		}
		if vr == "SQ" || n < 0 || (vr == "" && knownSQ(tag)) {
			if err := p.sequence(tag, n, depth); err != nil {
				return err
			}
			continue
		}
		if !p.wanted(tag, depth) {
			if err := p.skip(n); err != nil {
				return err
			}
			continue
		}
		v, err := p.value(vr, n)
		if err != nil {
			return err
		}
		p.set(tag, vr, v, depth)
	}
	if end >= 0 && p.off != end {
		return p.corrupt("an element runs past the end of its item")
	}
	return nil
}

// sequence walks a sequence's items (defined or undefined length).
func (p *parser) sequence(tag uint32, n int64, depth int) error {
	end := int64(-1)
	if n >= 0 {
		end = p.off + n
		if p.size >= 0 && end > p.size {
			return p.corrupt("a sequence of %d bytes runs past the end of the file", n)
		}
	}
	wasDir := p.inDir
	p.inDir = depth == 0 && tag == 0x00041220
	defer func() { p.inDir = wasDir }()
	for end < 0 || p.off < end {
		itag, _, in, err := p.element()
		if err != nil {
			return err
		}
		switch itag {
		case 0xFFFEE0DD:
			if end >= 0 {
				return p.corrupt("sequence delimiter in a sequence of defined length")
			}
			return nil
		case 0xFFFEE000:
		default:
			return p.corrupt("element (%04X,%04X) where a sequence item was expected", itag>>16, itag&0xFFFF)
		}
		iend := int64(-1)
		if in >= 0 {
			iend = p.off + in
		}
		if err := p.dataset(iend, depth+1); err != nil {
			return err
		}
	}
	if p.off != end {
		return p.corrupt("an item runs past the end of its sequence")
	}
	return nil
}

func (p *parser) wanted(tag uint32, depth int) bool {
	if depth > 0 {
		return p.inDir && depth == 1 && tag == 0x00041500
	}
	switch tag {
	case 0x00080008, 0x00080016, 0x00080018, 0x00080060, 0x0008103E, 0x00181030,
		0x00080081, 0x00100010, 0x00100020, 0x00100030,
		0x00180020, 0x00180024, 0x00180080,
		0x0020000D, 0x0020000E, 0x00200011, 0x00200012, 0x00200013, 0x00200032, 0x00200105,
		0x00280008, 0x00280010, 0x00280011, 0x0019100A:
		return true
	}
	return false
}

func (p *parser) set(tag uint32, vr string, v []byte, depth int) {
	h := p.h
	if depth == 1 {
		if tag == 0x00041500 && len(h.Files) < maxRecords {
			parts := strings.Split(str(v), `\`)
			h.Files = append(h.Files, strings.Join(parts, "/"))
		}
		return
	}
	switch tag {
	case 0x00080008:
		h.ImageType = strings.Split(str(v), `\`)
	case 0x00080016:
		if h.SOPClass == "" {
			h.SOPClass = str(v)
		}
	case 0x00080018:
		h.SOPInstance = str(v)
	case 0x00080060:
		h.Modality = str(v)
	case 0x0008103E:
		h.Description = str(v)
	case 0x00181030:
		h.Protocol = str(v)
	case 0x00080081:
		h.Identity.InstitutionAddress = str(v)
	case 0x00100010:
		h.Identity.PatientName = str(v)
	case 0x00100020:
		h.Identity.PatientID = str(v)
	case 0x00100030:
		h.Identity.BirthDate = str(v)
	case 0x00180020:
		h.ScanningSeq = str(v)
	case 0x00180024:
		h.SequenceName = str(v)
	case 0x00180080:
		h.TR, _ = strconv.ParseFloat(str(v), 64)
	case 0x0020000D:
		h.StudyUID = str(v)
	case 0x0020000E:
		h.SeriesUID = str(v)
	case 0x00200011:
		h.SeriesNumber, h.HasSeries = p.integer(vr, v)
	case 0x00200012:
		h.Acquisition, _ = p.integer(vr, v)
	case 0x00200013:
		h.Instance, _ = p.integer(vr, v)
	case 0x00200032:
		h.Position = str(v)
	case 0x00200105:
		h.TemporalPos, _ = p.integer(vr, v)
	case 0x00280008:
		h.Frames, _ = p.integer(vr, v)
	case 0x00280010:
		h.Rows, _ = p.us(vr, v)
	case 0x00280011:
		h.Columns, _ = p.us(vr, v)
	case 0x0019100A:
		h.Mosaic, _ = p.us(vr, v)
	}
}

// integer reads an IS (decimal string) value, or a binary one where a private or implicit
// element holds it as US/UL.
func (p *parser) integer(vr string, v []byte) (int, bool) {
	if vr == "IS" || vr == "" {
		if i, err := strconv.Atoi(str(v)); err == nil {
			return i, true
		}
		if vr == "IS" {
			return 0, false
		}
	}
	return p.us(vr, v)
}

// us reads an unsigned binary value of 2 or 4 bytes (US, UL, or an implicit/UN element).
func (p *parser) us(vr string, v []byte) (int, bool) {
	switch {
	case len(v) == 2:
		return int(p.order.Uint16(v)), true
	case len(v) == 4 && vr != "US":
		return int(p.order.Uint32(v)), true
	case len(v) >= 2 && vr == "US":
		return int(p.order.Uint16(v)), true
	}
	return 0, false
}

// str is a text value without DICOM's space/NUL padding.
func str(v []byte) string {
	return string(bytes.TrimSpace(bytes.TrimRight(v, "\x00")))
}
