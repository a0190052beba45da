// Package dicomtest writes DICOM files for tests: a real file with some elements replaced
// (Rewrite), and a longer time series made from one real Siemens mosaic volume (Series).
// It handles explicit VR little endian files only — what the shipped real series use.
package dicomtest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/hubscope/hubscope/internal/shareddata"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Tags the writer edits.
const (
	MediaSOPInstance = 0x00020003
	AcquisitionTime  = 0x00080032
	ContentTime      = 0x00080033
	SOPInstance      = 0x00080018
	SeriesDesc       = 0x0008103E
	SeriesUID        = 0x0020000E
	SeriesNumber     = 0x00200011
	Acquisition      = 0x00200012
	Instance         = 0x00200013
	ScanningSequence = 0x00180020
	SequenceName     = 0x00180024
	ImageType        = 0x00080008
	PixelData        = 0x7FE00010
)

type element struct {
	tag        uint32
	start, end int // whole element, header included
	vr         string
	hdr        int // header bytes
}

// elements splits an explicit-VR-little-endian file (with preamble) into its top-level
// elements; sequences of undefined length are walked to find their end.
func elements(b []byte) ([]element, error) {
	if len(b) < 132 || string(b[128:132]) != "DICM" {
		return nil, errors.New("dicomtest: no DICM preamble")
	}
	var out []element
	off := 132
	for off < len(b) {
		e, err := next(b, off)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
		off = e.end
	}
	return out, nil
}

func next(b []byte, off int) (element, error) {
	if off+8 > len(b) {
		return element{}, fmt.Errorf("dicomtest: truncated at %d", off)
	}
	g, el := binary.LittleEndian.Uint16(b[off:]), binary.LittleEndian.Uint16(b[off+2:])
	tag := uint32(g)<<16 | uint32(el)
	if g == 0xFFFE { // item or delimiter
		l := binary.LittleEndian.Uint32(b[off+4:])
		e := element{tag: tag, start: off, hdr: 8}
		if l == 0xFFFFFFFF {
			end, err := undefined(b, off+8, 0xFFFEE00D)
			e.end = end
			return e, err
		}
		e.end = off + 8 + int(l)
		return e, nil
	}
	vr := string(b[off+4 : off+6])
	e := element{tag: tag, start: off, vr: vr}
	var l uint32
	switch vr {
	case "OB", "OD", "OF", "OL", "OV", "OW", "SQ", "SV", "UC", "UN", "UR", "UT", "UV":
		l, e.hdr = binary.LittleEndian.Uint32(b[off+8:]), 12
	default:
		l, e.hdr = uint32(binary.LittleEndian.Uint16(b[off+6:])), 8
	}
	if l == 0xFFFFFFFF {
		end, err := undefined(b, off+e.hdr, 0xFFFEE0DD)
		e.end = end
		return e, err
	}
	e.end = off + e.hdr + int(l)
	if e.end > len(b) {
		return e, fmt.Errorf("dicomtest: element (%04X,%04X) runs past the end", g, el)
	}
	return e, nil
}

// undefined finds the end of an undefined-length sequence or item (after its delimiter).
func undefined(b []byte, off int, delim uint32) (int, error) {
	for off+8 <= len(b) {
		tag := uint32(binary.LittleEndian.Uint16(b[off:]))<<16 | uint32(binary.LittleEndian.Uint16(b[off+2:]))
		if tag == delim {
			return off + 8, nil
		}
		e, err := next(b, off)
		if err != nil {
			return 0, err
		}
		off = e.end
	}
	return 0, errors.New("dicomtest: no delimiter")
}

// Rewrite returns the file with the given elements' values replaced (text values are padded
// to an even length with a space, UIDs with a NUL; a nil value removes the element), and the
// file meta information's group length recomputed.
func Rewrite(b []byte, edits map[uint32][]byte) ([]byte, error) {
	els, err := elements(b)
	if err != nil {
		return nil, err
	}
	out := append([]byte(nil), b[:132]...)
	groupLenAt := -1
	metaEnd := 0
	for _, e := range els {
		v, ok := edits[e.tag]
		if !ok {
			if e.tag == 0x00020000 {
				groupLenAt = len(out) + 8
			}
			out = append(out, b[e.start:e.end]...)
		} else if v != nil {
			if len(v)%2 == 1 {
				pad := byte(' ')
				if e.vr == "UI" || e.vr == "OB" {
					pad = 0
				}
				v = append(append([]byte(nil), v...), pad)
			}
			h := append([]byte(nil), b[e.start:e.start+e.hdr]...)
			if e.hdr == 12 {
				binary.LittleEndian.PutUint32(h[8:], uint32(len(v)))
			} else {
				if len(v) > 0xFFFF {
					return nil, fmt.Errorf("dicomtest: value of %d bytes too long for VR %s", len(v), e.vr)
				}
				binary.LittleEndian.PutUint16(h[6:], uint16(len(v)))
			}
			out = append(append(out, h...), v...)
		}
		if e.tag>>16 == 0x0002 {
			metaEnd = len(out)
		}
	}
	if groupLenAt >= 0 {
		binary.LittleEndian.PutUint32(out[groupLenAt:], uint32(metaEnd-(groupLenAt+4)))
	}
	return out, nil
}

// Value returns an element's value as written (nil when absent).
func Value(b []byte, tag uint32) []byte {
	els, err := elements(b)
	if err != nil {
		return nil
	}
	for _, e := range els {
		if e.tag == tag {
			return b[e.start+e.hdr : e.end]
		}
	}
	return nil
}

// Series writes volumes files into dir, volume v (1-based) made from the real mosaic file src:
// a new SOP instance UID, instance and acquisition number v, acquisition and content times
// TR seconds apart, and the pixel values times (1 + noise) with independent Gaussian noise
// of the given relative SD per voxel and volume (seeded), so every brain voxel has its own
// series. It returns the files written, in volume order.
func Series(src, dir string, volumes int, tr, noise float64, seed uint64) ([]string, error) {
	b, err := os.ReadFile(src)
	if err != nil {
		return nil, err
	}
	px := Value(b, PixelData)
	if len(px) == 0 || len(px)%2 != 0 {
		return nil, errors.New("dicomtest: no uncompressed 16-bit pixel data")
	}
	uid := string(trimUID(Value(b, SOPInstance)))
	t0 := 13*3600 + 49*60 + 35.0
	rng := rand.New(rand.NewPCG(seed, 1))
	var files []string
	for v := 1; v <= volumes; v++ {
		npx := make([]byte, len(px))
		for i := 0; i < len(px); i += 2 {
			x := float64(binary.LittleEndian.Uint16(px[i:]))
			if x > 0 {
				x *= 1 + noise*rng.NormFloat64()
			}
			binary.LittleEndian.PutUint16(npx[i:], uint16(min(max(x, 0), 65535)))
		}
		t := t0 + float64(v-1)*tr
		tm := fmt.Sprintf("%02d%02d%09.6f", int(t)/3600, int(t)/60%60, t-float64(int(t)/60*60))
		newUID := []byte(uid + "." + strconv.Itoa(v))
		out, err := Rewrite(b, map[uint32][]byte{
			MediaSOPInstance: newUID, SOPInstance: newUID,
			Instance: []byte(strconv.Itoa(v)), Acquisition: []byte(strconv.Itoa(v)),
			AcquisitionTime: []byte(tm), ContentTime: []byte(tm),
			PixelData: npx,
		})
		if err != nil {
			return nil, err
		}
		p := filepath.Join(dir, fmt.Sprintf("IM_%04d", v))
		if err := os.WriteFile(p, out, 0o644); err != nil {
			return nil, err
		}
		files = append(files, p)
	}
	sort.Strings(files)
	return files, nil
}

func trimUID(v []byte) []byte {
	for len(v) > 0 && (v[len(v)-1] == 0 || v[len(v)-1] == ' ') {
		v = v[:len(v)-1]
	}
	return v
}

// Element is one element for Build: tag, explicit VR and value.
type Element struct {
	Tag   uint32
	VR    string
	Value []byte
}

// Build writes a DICOM file: preamble, file meta information (explicit VR little endian,
// with the given media SOP class and transfer syntax) and the data set elements, encoded
// explicit (explicitLE) or implicit VR little endian. Sequences are not supported.
func Build(sopClass, transferSyntax string, explicitLE bool, els []Element) []byte {
	pad := func(v []byte, c byte) []byte {
		if len(v)%2 == 1 {
			return append(append([]byte(nil), v...), c)
		}
		return v
	}
	enc := func(dst []byte, e Element, explicit bool) []byte {
		c := byte(' ')
		if e.VR == "UI" || e.VR == "OB" || e.VR == "UN" {
			c = 0
		}
		v := pad(e.Value, c)
		dst = binary.LittleEndian.AppendUint16(dst, uint16(e.Tag>>16))
		dst = binary.LittleEndian.AppendUint16(dst, uint16(e.Tag))
		switch {
		case !explicit:
			dst = binary.LittleEndian.AppendUint32(dst, uint32(len(v)))
		case e.VR == "OB" || e.VR == "OW" || e.VR == "SQ" || e.VR == "UN" || e.VR == "UT":
			dst = append(dst, e.VR[0], e.VR[1], 0, 0)
			dst = binary.LittleEndian.AppendUint32(dst, uint32(len(v)))
		default:
			dst = append(dst, e.VR[0], e.VR[1])
			dst = binary.LittleEndian.AppendUint16(dst, uint16(len(v)))
		}
		return append(dst, v...)
	}
	var meta []byte
	meta = enc(meta, Element{0x00020001, "OB", []byte{0, 1}}, true)
	meta = enc(meta, Element{0x00020002, "UI", []byte(sopClass)}, true)
	meta = enc(meta, Element{0x00020010, "UI", []byte(transferSyntax)}, true)
	out := make([]byte, 128, 1024)
	out = append(out, "DICM"...)
	out = enc(out, Element{0x00020000, "UL", binary.LittleEndian.AppendUint32(nil, uint32(len(meta)))}, true)
	out = append(out, meta...)
	for _, e := range els {
		out = enc(out, e, explicitLE)
	}
	return out
}

// DICOMDIR returns a DICOMDIR referencing the given files (paths '/'-separated, relative to
// its folder), one IMAGE record each.
func DICOMDIR(refs []string) []byte {
	var seq []byte
	for _, r := range refs {
		id := []byte(strings.ReplaceAll(r, "/", `\`))
		if len(id)%2 == 1 {
			id = append(id, ' ')
		}
		var item []byte
		item = append(item, 0x04, 0x00, 0x30, 0x14, 'C', 'S', 6, 0)
		item = append(item, "IMAGE "...)
		item = append(item, 0x04, 0x00, 0x00, 0x15, 'C', 'S')
		item = binary.LittleEndian.AppendUint16(item, uint16(len(id)))
		item = append(item, id...)
		seq = append(seq, 0xFE, 0xFF, 0x00, 0xE0)
		seq = binary.LittleEndian.AppendUint32(seq, uint32(len(item)))
		seq = append(seq, item...)
	}
	b := Build("1.2.840.10008.1.3.10", "1.2.840.10008.1.2.1", true, nil)
	b = append(b, 0x04, 0x00, 0x20, 0x12, 'S', 'Q', 0, 0, 0xFF, 0xFF, 0xFF, 0xFF)
	b = append(b, seq...)
	return append(b, 0xFE, 0xFF, 0xDD, 0xE0, 0, 0, 0, 0)
}

// DataDir is the folder of real scanner DICOM shipped with the project's test data (dicom/
// under the shared data, internal/shareddata), or "" when it does not hold it.
func DataDir() string {
	d := filepath.Join(shareddata.Dir(), "dicom")
	if _, err := os.Stat(filepath.Join(d, "ax_asc_35sl")); err == nil {
		return d
	}
	return ""
}
