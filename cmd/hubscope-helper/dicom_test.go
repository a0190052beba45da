package main

import (
	"archive/zip"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hubscope/hubscope/helper/dicom"
	"github.com/hubscope/hubscope/helper/dicom/dicomtest"
)

// TestRunDICOMTooShort: run on each shipped DICOM folder, and on a zip of one, converts and
// stops with the too-few-volumes line (the pipeline's real minimum for run's settings): exit 1,
// one line, no bundle, no temporary folder.
func TestRunDICOMTooShort(t *testing.T) {
	data := dicomtest.Converted(t, dicom.FindTool)
	zipped := filepath.Join(t.TempDir(), "export.zip")
	f, _ := os.Create(zipped)
	zw := zip.NewWriter(f)
	files, _ := filepath.Glob(filepath.Join(data, "mb_jpeg_lossless", "*.dcm"))
	for _, p := range files {
		b, _ := os.ReadFile(p)
		w, _ := zw.Create("DICOM/" + filepath.Base(p))
		w.Write(b)
	}
	zw.Close()
	f.Close()
	for _, c := range []struct{ in, series string }{
		{filepath.Join(data, "ax_asc_35sl"), `series 6 "ax_asc_35sl"`},
		{filepath.Join(data, "sag_int_36sl"), `series 21 "sag_int_36sl"`},
		{filepath.Join(data, "mb_jpeg_lossless"), `series 25 "fMRI_MB_asc"`},
		{zipped, `series 25 "fMRI_MB_asc"`},
	} {
		tmp := t.TempDir()
		t.Setenv("TMPDIR", tmp)
		out := filepath.Join(t.TempDir(), "b")
		var stdout, stderr bytes.Buffer
		code := realMain(t.Context(), []string{"run", c.in, "--out", out}, &stdout, &stderr)
		lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
		// run cleans by default (auto: 5 tCompCor components on a converted scan), so 7.
		want := "hubscope-helper run: " + c.in + ": " + c.series + ": 2 volumes; a network needs at least 7 (the cleaning regresses out 5 confounds beside a constant and a trend; 3 with --denoise none)"
		if code != 1 || lines[len(lines)-1] != want {
			t.Errorf("%s: exit %d, last line %q, want %q", c.in, code, lines[len(lines)-1], want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%s: a bundle was left", c.in)
		}
		noIdentity(t, data, stdout.String()+stderr.String())
		if left, _ := os.ReadDir(tmp); len(left) != 0 {
			t.Errorf("%s: %d entries left in the temporary folder", c.in, len(left))
		}
	}
}

func TestSeriesCommand(t *testing.T) {
	data := dicomtest.Converted(t, dicom.FindTool)
	var stdout, stderr bytes.Buffer
	if code := realMain(t.Context(), []string{"series", filepath.Join(data, "sag_int_36sl")}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "run would analyse series 21 \"sag_int_36sl\": the EPI time series with the most volumes (2)") ||
		!strings.Contains(stdout.String(), "64×64×36") {
		t.Errorf("series output:\n%s", stdout.String())
	}
	noIdentity(t, data, stdout.String()+stderr.String())
	stdout.Reset()
	stderr.Reset()
	code := realMain(t.Context(), []string{"series", data}, &stdout, &stderr)
	if code != 1 || !strings.Contains(stderr.String(), "mixed series: 3 EPI time series have 2 volumes each (series 6, 21, 25)") {
		t.Errorf("whole folder: exit %d, %s", code, stderr.String())
	}
}

// noIdentity fails if text holds the patient's or institution's identity as the shipped
// DICOM files hold it.
func noIdentity(t *testing.T, data, text string) {
	t.Helper()
	src, err := dicom.Open(filepath.Join(data, "ax_asc_35sl"), "")
	if err != nil {
		t.Fatal(err)
	}
	lst, err := dicom.List(t.Context(), src)
	if err != nil {
		t.Fatal(err)
	}
	ids := lst.Series[0].Identities()
	if len(ids) == 0 || len(ids[0].Values()) < 4 {
		t.Fatalf("identity values %+v", ids)
	}
	for _, v := range ids[0].Values() {
		if strings.Contains(text, v) {
			t.Errorf("output holds identity value %q:\n%s", v, text)
		}
	}
}
