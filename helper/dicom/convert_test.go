package dicom

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFindToolBesideProgram: a dcm2niix in the program's folder (a packaged app ships it) is
// taken before the one on PATH; a broken one is said in words; versions since v1.0.20230411
// guess BIDS names.
func TestFindToolBesideProgram(t *testing.T) {
	dir := t.TempDir()
	fake := filepath.Join(dir, ToolName)
	os.WriteFile(fake, []byte("#!/bin/sh\necho \"Chris Rorden's dcm2niiX version v1.0.20241211 (test)\"\necho v1.0.20241211\nexit 3\n"), 0o755)
	t.Setenv("PATH", t.TempDir())
	tool, err := findTool(t.Context(), dir)
	if err != nil || tool.Path != fake || tool.Version != "v1.0.20241211" || !tool.Guesses() {
		t.Fatalf("beside the program: %+v %v", tool, err)
	}
	if (&Tool{Version: "v1.0.20220720"}).Guesses() {
		t.Error("v1.0.20220720 does not write BidsGuess")
	}
	os.WriteFile(fake, []byte("#!/bin/sh\necho 'error while loading shared libraries: libturbojpeg.so.0'\nexit 127\n"), 0o755)
	if _, err := findTool(t.Context(), dir); err == nil || !strings.Contains(err.Error(), "does not run (error while loading shared libraries") {
		t.Errorf("broken dcm2niix: %v", err)
	}
	if _, err := findTool(t.Context(), t.TempDir()); err != ErrNoTool {
		t.Errorf("none: %v", err)
	}
}

// TestAnonymise: every identity key goes, whatever dcm2niix left in; the rest keeps its order
// and values; TR and slice times are read.
func TestAnonymise(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "in.json")
	os.WriteFile(src, []byte(`{
	"Modality": "MR",
	"InstitutionAddress": "Main St 1,Springfield",
	"PatientName": "Doe^Jane",
	"PatientID": "ID12345",
	"PatientBirthDate": "1980-07-07",
	"PatientPosition": "HFS",
	"SeriesDescription": "rest",
	"RepetitionTime": 2.5,
	"SliceTiming": [
		0,
		1.25	],
	"AcquisitionDateTime": "2014-03-10T13:49:35"
}`), 0o644)
	c := &Conversion{Series: &Series{Number: 3}, Sidecar: filepath.Join(dir, "out.json")}
	if err := c.anonymise(src); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(c.Sidecar)
	want := "{\n\t\"Modality\": \"MR\",\n\t\"PatientPosition\": \"HFS\",\n\t\"SeriesDescription\": \"rest\",\n\t\"RepetitionTime\": 2.5,\n\t\"SliceTiming\": [0,1.25]\n}\n"
	if string(got) != want {
		t.Errorf("sidecar\n%s\nwant\n%s", got, want)
	}
	if c.TR != 2.5 || len(c.SliceTiming) != 2 || strings.Join(c.Removed, ",") != "InstitutionAddress,PatientName,PatientID,PatientBirthDate,AcquisitionDateTime" {
		t.Errorf("TR %g, slice times %v, removed %v", c.TR, c.SliceTiming, c.Removed)
	}
}

// TestPrivacyCheck: were an identity value to survive in the sidecar (a key HubScope does not
// know, say), the conversion is refused.
func TestPrivacyCheck(t *testing.T) {
	data := dicomData(t)
	dir := t.TempDir()
	b, _ := os.ReadFile(filepath.Join(data, "ref", "ax_asc_35sl_6.nii"))
	nii := filepath.Join(dir, "s.nii")
	os.WriteFile(nii, b, 0o644)
	side := filepath.Join(dir, "s.json")
	s := &Series{Number: 6, Description: "rest", identity: []Identity{{PatientName: "Doe^Jane", PatientID: "ID12345", BirthDate: "19800707"}}}
	c := &Conversion{Series: s, NIfTI: nii, Sidecar: side}
	os.WriteFile(side, []byte(`{"Modality": "MR"}`), 0o644)
	if err := c.checkPrivacy(); err != nil {
		t.Fatalf("clean files refused: %v", err)
	}
	for _, leak := range []string{`{"OperatorsName": "Doe Jane"}`, `{"Comment": "born 1980-07-07"}`, `{"OtherID": "ID12345"}`} {
		os.WriteFile(side, []byte(leak), 0o644)
		if err := c.checkPrivacy(); err == nil || !strings.Contains(err.Error(), "still hold the patient's or institution's identity") {
			t.Errorf("%s: %v", leak, err)
		}
	}
}

func TestUseTR(t *testing.T) {
	for _, c := range []struct {
		header, side, want float64
		from               string
	}{
		{2, 2, 2, "NIfTI header"},
		{0, 2.5, 2.5, "BIDS sidecar"},
		{2500, 2.5, 2.5, "BIDS sidecar"}, // milliseconds written as seconds
		{0, 0, 0, "unknown"},
	} {
		tr, from := (&Conversion{HeaderTR: c.header, TR: c.side}).UseTR()
		if tr != c.want || !strings.HasPrefix(from, c.from) {
			t.Errorf("header %g, sidecar %g: %g from %q", c.header, c.side, tr, from)
		}
	}
}

// TestIdentityWords: name parts and IDs are matched as whole words, so that a patient called
// Tim or Wei does not make dcm2niix's "Time=…" or a "Weighted" comment look like a leak.
func TestIdentityWords(t *testing.T) {
	vals := Identity{PatientName: "Tim^Wei", PatientID: "1349", BirthDate: "19800707"}.Values()
	for text, want := range map[string]string{
		"TE=30;Time=134935.305;phase=1":      "TE=30;Time=134935.305;phase=1",
		"T2 Weighted":                        "T2 Weighted",
		"scan of Tim Wei, id 1349.":          "scan of [identity removed], id [identity removed].",
		"Tim^Wei born 1980-07-07 (19800707)": "[identity removed] born [identity removed] ([identity removed])",
		"Wei":                                "[identity removed]",
		"/data/Tim_Wei_exam/DICOMDIR":        "/data/[identity removed]_[identity removed]_exam/DICOMDIR",
	} {
		if got := redact(text, vals); got != want {
			t.Errorf("redact(%q) = %q, want %q", text, got, want)
		}
	}
}
