package dicom

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/hubscope/hubscope/helper/dicom/dicomtest"
)

// firstFile is the first volume of a shipped series.
func firstFile(t *testing.T, data, dir string) string {
	t.Helper()
	fs, _ := filepath.Glob(filepath.Join(data, dir, "MR.*"))
	if len(fs) == 0 {
		t.Fatalf("no files in %s", dir)
	}
	return fs[0]
}

// prepareErr runs Prepare on path expecting an error containing every want, on one line
// for a plain error, with nothing left in the temporary folder.
func prepareErr(t *testing.T, path string, opt Options, want ...string) error {
	t.Helper()
	tmp := t.TempDir()
	opt.TempDir = tmp
	p, err := Prepare(t.Context(), path, opt)
	if err == nil {
		p.Remove()
		t.Fatalf("%s: no error, want %q", path, want)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%s: error %q lacks %q", path, err, w)
		}
	}
	empty(t, tmp)
	return err
}

func TestLongSeriesConverts(t *testing.T) {
	data := dicomData(t)
	needTool(t)
	dir := t.TempDir()
	files, err := dicomtest.Series(firstFile(t, data, "ax_asc_35sl"), dir, 12, 3, 0.02, 1)
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	p, err := Prepare(t.Context(), dir, Options{MinVolumes: 3, TempDir: tmp})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Remove()
	if p.Volumes != 12 || p.Series.Volumes != 12 || p.Series.Number != 6 || p.TR != 3 || len(p.SliceTiming) != 35 {
		t.Errorf("converted %d volumes (listed %d), series %d, TR %g, %d slice times", p.Volumes, p.Series.Volumes, p.Series.Number, p.TR, len(p.SliceTiming))
	}
	if !strings.Contains(p.Reason, "most volumes (12)") {
		t.Errorf("reason %q", p.Reason)
	}
	grepIdentity(t, tmp, p.Series.Identities())

	// A volume lost on the way: refused, naming the gap.
	os.Remove(files[4])
	prepareErr(t, dir, Options{}, dir, `series 6 "ax_asc_35sl"`, "1 volume missing", "lack 5")
}

func TestMixedSeries(t *testing.T) {
	data := dicomData(t)
	dir := t.TempDir()
	copyDir(t, filepath.Join(data, "ax_asc_35sl"), filepath.Join(dir, "a"))
	copyDir(t, filepath.Join(data, "sag_int_36sl"), filepath.Join(dir, "b"))
	err := prepareErr(t, dir, Options{}, "mixed series: 2 EPI time series have 2 volumes each (series 6, 21); choose one with --series N (here: series 6 \"ax_asc_35sl\" (EPI, 2 volumes), series 21 \"sag_int_36sl\" (EPI, 2 volumes))")
	if !strings.Contains(err.Error(), "sag_int_36sl") || !strings.Contains(err.Error(), "ax_asc_35sl") {
		t.Errorf("listing missing from %q", err)
	}
	prepareErr(t, dir, Options{Series: 7}, "no series 7 here")
	needTool(t)
	p, err := Prepare(t.Context(), dir, Options{Series: 21, TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Remove()
	got, _ := os.ReadFile(p.NIfTI)
	want, _ := os.ReadFile(filepath.Join(data, "ref", "sag_int_36sl_21.nii"))
	if !bytes.Equal(got, want) || p.Reason != "chosen with --series" {
		t.Errorf("--series 21: %d bytes, reason %q", len(got), p.Reason)
	}
}

func TestBadInput(t *testing.T) {
	data := dicomData(t)
	src := firstFile(t, data, "ax_asc_35sl")
	raw, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("no DICOM", func(t *testing.T) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("hello"), 0o644)
		os.WriteFile(filepath.Join(dir, "scan.nii"), make([]byte, 400), 0o644)
		prepareErr(t, dir, Options{}, dir, "no DICOM images found (2 file(s) looked at)")
		prepareErr(t, t.TempDir(), Options{}, "no DICOM images found (0 file(s)")
	})
	t.Run("structural only", func(t *testing.T) {
		dir := t.TempDir()
		b, err := dicomtest.Rewrite(raw, map[uint32][]byte{
			dicomtest.ScanningSequence: []byte("GR"), dicomtest.SequenceName: []byte("*fl3d1"),
			dicomtest.SeriesDesc: []byte("t1_mprage"), dicomtest.SeriesNumber: []byte("2"),
			dicomtest.SeriesUID: []byte("1.2.3.4.5"),
		})
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, "t1.dcm"), b, 0o644)
		prepareErr(t, dir, Options{}, "no functional time series here", "only series 2 \"t1_mprage\" (1 volume)")
	})
	t.Run("too few volumes", func(t *testing.T) {
		needTool(t)
		prepareErr(t, filepath.Join(data, "ax_asc_35sl"), Options{MinVolumes: 3}, `series 6 "ax_asc_35sl": 2 volumes; a network needs at least 3`)
	})
	t.Run("corrupt", func(t *testing.T) {
		dir := t.TempDir()
		bad := filepath.Join(dir, "IM_0002")
		copyDir(t, filepath.Join(data, "ax_asc_35sl"), dir)
		os.WriteFile(bad, raw[:len(raw)-5000], 0o644) // cut inside the pixel data
		prepareErr(t, dir, Options{}, bad, "not a readable DICOM file: pixel data of")
		os.WriteFile(bad, raw[:2000], 0o644) // cut inside the header
		prepareErr(t, dir, Options{}, bad, "not a readable DICOM file")
		junk := append([]byte(nil), raw...)
		copy(junk[132+200:], bytes.Repeat([]byte{0xFF}, 64))
		os.WriteFile(bad, junk, 0o644)
		prepareErr(t, dir, Options{}, bad, "not a readable DICOM file")
	})
	t.Run("missing path", func(t *testing.T) {
		prepareErr(t, filepath.Join(t.TempDir(), "gone"), Options{}, "no such file")
	})
}

func TestNoTool(t *testing.T) {
	data := dicomData(t)
	t.Setenv("PATH", t.TempDir())
	_, err := FindTool(t.Context())
	if !errors.Is(err, ErrNoTool) || !strings.Contains(err.Error(), "apt-get install dcm2niix") {
		t.Fatalf("FindTool without dcm2niix: %v", err)
	}
	prepareErr(t, filepath.Join(data, "ax_asc_35sl"), Options{}, "dcm2niix is needed")
}

// TestImplicitVR: a file in implicit VR little endian (and one without the preamble) lists
// like its explicit twin.
func TestImplicitVR(t *testing.T) {
	els := []dicomtest.Element{
		{Tag: 0x00080008, VR: "CS", Value: []byte(`ORIGINAL\PRIMARY\M\ND`)},
		{Tag: 0x00080060, VR: "CS", Value: []byte("MR")},
		{Tag: 0x0008103E, VR: "LO", Value: []byte("rest_bold")},
		{Tag: 0x00100010, VR: "PN", Value: []byte("Doe^Jane")},
		{Tag: 0x00180020, VR: "CS", Value: []byte("EP")},
		{Tag: 0x00180080, VR: "DS", Value: []byte("2000")},
		{Tag: 0x0020000E, VR: "UI", Value: []byte("1.2.3.9")},
		{Tag: 0x00200011, VR: "IS", Value: []byte("4")},
		{Tag: 0x00200013, VR: "IS", Value: []byte("1")},
		{Tag: 0x00200032, VR: "DS", Value: []byte(`0\0\0`)},
		{Tag: 0x00280010, VR: "US", Value: []byte{4, 0}},
		{Tag: 0x00280011, VR: "US", Value: []byte{6, 0}},
		{Tag: 0x7FE00010, VR: "OW", Value: make([]byte, 48)},
	}
	for _, explicit := range []bool{true, false} {
		ts := "1.2.840.10008.1.2.1"
		if !explicit {
			ts = "1.2.840.10008.1.2"
		}
		b := dicomtest.Build("1.2.840.10008.5.1.4.1.1.4", ts, explicit, els)
		variants := [][]byte{b}
		if !explicit {
			meta := 132 + 12 + int(b[140]) // preamble, group length element, its value
			variants = append(variants, b[meta:])
		}
		for i, v := range variants {
			h, err := ReadHeader(bytes.NewReader(v), int64(len(v)))
			if err != nil {
				t.Fatalf("explicit %v variant %d: %v", explicit, i, err)
			}
			if h.Description != "rest_bold" || h.SeriesNumber != 4 || h.TR != 2000 || h.Rows != 4 || h.Columns != 6 || !h.HasPixels ||
				h.PixelBytes != 48 || h.Identity.PatientName != "Doe^Jane" || strings.Join(h.ImageType, "/") != "ORIGINAL/PRIMARY/M/ND" {
				t.Errorf("explicit %v variant %d: %+v", explicit, i, h)
			}
		}
	}
	if got := (Identity{PatientName: "Doe^Jane", BirthDate: "19800707"}).Values(); strings.Join(got, "|") != "Doe^Jane|Doe Jane|Doe|Jane|19800707|1980-07-07" {
		t.Errorf("identity values %q", got)
	}
}

// TestPickRule: the BOLD rule on listings without files.
func TestPickRule(t *testing.T) {
	epi := func(n, vols int, guess ...string) *Series {
		return &Series{Number: n, Description: "s", Volumes: vols, EPI: true, BidsGuess: guess}
	}
	cases := []struct {
		series []*Series
		want   int
		reason string
	}{
		{[]*Series{epi(1, 1), epi(2, 200), epi(3, 150)}, 2, "most volumes (200)"},
		{[]*Series{{Number: 1, Volumes: 300}, epi(2, 10)}, 2, "most volumes (10)"},          // not EPI
		{[]*Series{{Number: 1, Volumes: 300, EPI: true, derived: true}, epi(2, 10)}, 2, ""}, // MoCo
		{[]*Series{{Number: 1, Volumes: 300, EPI: true, diffuse: true}, epi(2, 10)}, 2, ""}, // DWI
		{[]*Series{epi(1, 300, "func", "_sbref"), epi(2, 200, "func", "_task-rest_bold")}, 2, "BidsGuess"},
		{[]*Series{epi(1, 300, "dwi", "_dwi"), epi(2, 200)}, 1, "most volumes (300)"}, // no bold guess: volumes decide
	}
	for i, c := range cases {
		l := &Listing{Series: c.series, Studies: 1}
		s, reason, err := l.Pick(0)
		if err != nil || s.Number != c.want || !strings.Contains(reason, c.reason) {
			t.Errorf("case %d: got %v %q %v, want series %d", i, s, reason, err, c.want)
		}
	}
	l := &Listing{Series: []*Series{epi(1, 100), epi(2, 100)}, Studies: 2}
	if _, _, err := l.Pick(0); err == nil || !strings.Contains(err.Error(), "mixes 2 studies") {
		t.Errorf("two studies: %v", err)
	}
	l.Studies = 1
	if _, _, err := l.Pick(0); err == nil || !strings.Contains(err.Error(), "mixed series") {
		t.Errorf("tie: %v", err)
	}
	if s, _, err := l.Pick(2); err != nil || s.Number != 2 {
		t.Errorf("--series 2: %v %v", s, err)
	}
}

// TestSingleSliceSeries: classic one-slice-a-file series (implicit VR, as many vendors write
// them) count volumes per slice position and refuse a missing image.
func TestSingleSliceSeries(t *testing.T) {
	dir := t.TempDir()
	write := func(inst int, z string) {
		b := dicomtest.Build("1.2.840.10008.5.1.4.1.1.4", "1.2.840.10008.1.2", false, []dicomtest.Element{
			{Tag: 0x00080060, VR: "CS", Value: []byte("MR")},
			{Tag: 0x0008103E, VR: "LO", Value: []byte("rest")},
			{Tag: 0x00180020, VR: "CS", Value: []byte(`GR\EP`)},
			{Tag: 0x00180080, VR: "DS", Value: []byte("2500")},
			{Tag: 0x0020000E, VR: "UI", Value: []byte("1.2.3.7")},
			{Tag: 0x00200011, VR: "IS", Value: []byte("3")},
			{Tag: 0x00200013, VR: "IS", Value: []byte(strconv.Itoa(inst))},
			{Tag: 0x00200032, VR: "DS", Value: []byte(`0\0\` + z)},
			{Tag: 0x00280010, VR: "US", Value: []byte{8, 0}},
			{Tag: 0x00280011, VR: "US", Value: []byte{8, 0}},
			{Tag: 0x7FE00010, VR: "OW", Value: make([]byte, 128)},
		})
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("IM%03d", inst)), b, 0o644)
	}
	for v := 0; v < 4; v++ {
		for k, z := range []string{"0", "3.5", "7"} {
			write(1+3*v+k, z)
		}
	}
	list := func() *Series {
		src, err := Open(dir, "")
		if err != nil {
			t.Fatal(err)
		}
		lst, err := List(t.Context(), src)
		if err != nil || len(lst.Series) != 1 {
			t.Fatalf("%v %+v", err, lst)
		}
		return lst.Series[0]
	}
	s := list()
	if s.Volumes != 4 || s.Slices != 3 || s.Matrix != [3]int{8, 8, 3} || s.TR != 2.5 || !s.TimeSeries() || s.Problem != "" {
		t.Fatalf("listed %+v", s)
	}
	os.Remove(filepath.Join(dir, "IM005"))
	if s := list(); s.Problem != "slice positions hold between 3 and 4 images: 1 image missing" {
		t.Errorf("missing slice: %q", s.Problem)
	}
}

// TestMessages: dcm2niix's warnings and errors reach the user in words, without the staging
// folder's paths and without identity.
func TestMessages(t *testing.T) {
	s := &Series{Number: 6, Description: "rest", identity: []Identity{{PatientName: "Doe^Jane", PatientID: "ID12345"}}}
	out := "Chris Rorden's dcm2niiX version v1.0.20220720\nFound 12 DICOM file(s)\n" +
		"Warning: Missing images? Expected 36 images, but instance number is 37 (/tmp/stage/in/000012.dcm)\n" +
		"Error: Unable to decompress image for Doe^Jane\nConvert 12 DICOM as /tmp/stage/out/series_6 (64x64x35x12)\n"
	m := messages(out, "/tmp/stage", s, identityValues(s))
	if len(m.warnings) != 1 || m.warnings[0] != "Warning: Missing images? Expected 36 images, but instance number is 37 (000012.dcm)" {
		t.Errorf("warnings %q", m.warnings)
	}
	if len(m.errors) != 1 || m.errors[0] != "Error: Unable to decompress image for [identity removed]" {
		t.Errorf("errors %q", m.errors)
	}
}

// TestBidsGuessDecides: where the installed dcm2niix guesses BIDS names, its guess narrows
// the EPI time series before the volume count does (here a tie the count alone would refuse).
// The dcm2niix is a stand-in script: it guesses "bold" for the series described rest_bold,
// and converts nothing, so the run stops after the pick, naming the series it picked.
func TestBidsGuessDecides(t *testing.T) {
	data := dicomData(t)
	raw, err := os.ReadFile(firstFile(t, data, "ax_asc_35sl"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, s := range []struct{ number, desc, uid string }{{"6", "rest_bold", "1.2.3.6"}, {"7", "other_epi", "1.2.3.7"}} {
		for v := 1; v <= 2; v++ {
			b, err := dicomtest.Rewrite(raw, map[uint32][]byte{
				dicomtest.SeriesNumber: []byte(s.number), dicomtest.SeriesDesc: []byte(s.desc), dicomtest.SeriesUID: []byte(s.uid),
				dicomtest.Instance: []byte(strconv.Itoa(v)),
			})
			if err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(dir, s.desc+strconv.Itoa(v)), b, 0o644)
		}
	}
	if _, err := FindTool(t.Context()); err == nil { // the real dcm2niix (no BidsGuess in Debian 12's): a tie
		prepareErr(t, dir, Options{}, "mixed series: 2 EPI time series have 2 volumes each (series 6, 7)")
	}
	bin := t.TempDir()
	script := `#!/bin/sh
case "$1" in --version) echo "Chris Rorden's dcm2niiX version v1.0.20241211"; exit 3;; esac
while [ $# -gt 1 ]; do case "$1" in -f) f=$2; shift;; -o) o=$2; shift;; -b) b=$2; shift;; esac; shift; done
if [ "$b" = o ]; then
  if grep -q rest_bold "$1"/*; then g='["func","_task-rest_bold"]'; else g='["func","_sbref"]'; fi
  echo "{\"BidsGuess\": $g}" > "$o/$f.json"
fi
exit 0
`
	os.WriteFile(filepath.Join(bin, ToolName), []byte(script), 0o755)
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	prepareErr(t, dir, Options{}, `series 6 "rest_bold": dcm2niix wrote no image`)
}
