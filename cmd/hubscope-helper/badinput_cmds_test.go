package main

import (
	"archive/zip"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hubscope/hubscope/helper/bundle"
	"github.com/hubscope/hubscope/helper/nifti"
)

// TestBadInputOtherCommands is the bad-input corpus for what the later features read: region
// atlases and their names (--nodes regions), normative folders (--norm), realignment, DICOM
// input, BIDS datasets (cohort), derivatives folders (compare, norm build) and group scans.
// Each case ends with exit code 1, exactly one error line that names the file and says the
// problem, and nothing at --out that looks like a finished result.
func TestBadInputOtherCommands(t *testing.T) {
	dir := t.TempDir()
	at := func(name string) string { return filepath.Join(dir, name) }
	write := func(name string, b []byte) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(at(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(at(name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	image := func(name string, dims []int, dt nifti.DataType, aff [4][4]float64, vals func(i int) float32) {
		t.Helper()
		h := nifti.NewHeader(dims, dt, aff, 0)
		n := 1
		for _, d := range dims {
			n *= d
		}
		data := make([]float32, n)
		for i := range data {
			data[i] = vals(i)
		}
		if err := nifti.WriteImage(at(name), h, data); err != nil {
			t.Fatal(err)
		}
	}
	aff := [4][4]float64{{3, 0, 0, -9}, {0, 3, 0, -7}, {0, 0, 3, -5}, {0, 0, 0, 1}}
	far := aff
	far[0][3] = 300 // another space: no label lands inside the scan
	halves := func(i int) float32 { return float32(1 + i%6/3) }
	write("good.nii", goodScan(t))
	write("garbage.nii.gz", []byte("not an image\n"))
	write("series.npy", []byte("not a matrix either\n"))
	image("atlas.nii.gz", []int{6, 5, 4}, nifti.Int16, aff, halves)
	image("atlas_4d.nii.gz", []int{6, 5, 4, 2}, nifti.Int16, aff, halves)
	image("atlas_empty.nii.gz", []int{6, 5, 4}, nifti.Int16, aff, func(int) float32 { return 0 })
	image("atlas_space.nii.gz", []int{6, 5, 4}, nifti.Int16, far, halves)
	atlas, _ := os.ReadFile(at("atlas.nii.gz"))
	write("atlas_truncated.nii.gz", atlas[:len(atlas)/2])
	write("names_mismatch.txt", []byte("1 Left\n7 Nowhere\n"))
	image("three_d.nii", []int{6, 5, 4}, nifti.Float32, aff, func(i int) float32 { return float32(i) })
	os.Mkdir(at("norm_empty"), 0o755)
	write("norm_corrupt/norm.json", []byte(`{"settings": `))
	os.Mkdir(at("deriv_empty"), 0o755)
	write("deriv_badtable/measures.tsv", []byte("a\tb\n1\t2\n"))
	os.Mkdir(at("bids_empty"), 0o755)
	write("bids_badlabel/sub-a;b/func/sub-a;b_task-rest_bold.nii.gz", atlas)
	write("corrupt.zip", bytes.Repeat([]byte("PK\x03\x04garbage"), 10))
	var zb bytes.Buffer
	zw := zip.NewWriter(&zb)
	f, _ := zw.Create("notes.txt")
	f.Write([]byte("not DICOM"))
	zw.Close()
	write("no_dicom.zip", zb.Bytes())
	write("notdicom/a.txt", []byte("hello"))
	write("text.dcm", bytes.Repeat([]byte("not dicom at all\n"), 20))

	run := []string{"run", at("good.nii")}
	cases := []struct {
		name   string
		args   []string
		file   string // named in the error line
		phrase string
	}{
		{"atlas 4D", append(run, "--nodes", "regions", "--atlas", at("atlas_4d.nii.gz")), "atlas_4d.nii.gz", "2 volumes, want a 3D label image"},
		{"atlas empty", append(run, "--nodes", "regions", "--atlas", at("atlas_empty.nii.gz")), "atlas_empty.nii.gz", "0 of its labels cover voxels inside the scan"},
		{"atlas another space", append(run, "--nodes", "regions", "--atlas", at("atlas_space.nii.gz")), "atlas_space.nii.gz", "is the atlas in the scan's space?"},
		{"atlas truncated", append(run, "--nodes", "regions", "--atlas", at("atlas_truncated.nii.gz")), "atlas_truncated.nii.gz", "truncated"},
		{"atlas names mismatch", append(run, "--nodes", "regions", "--atlas", at("atlas.nii.gz"), "--atlas-names", at("names_mismatch.txt")), "names_mismatch.txt", "names for labels the image does not hold: 7"},
		{"norm folder empty", append(run, "--norm", at("norm_empty")), "norm_empty", "no such file or directory (build it with: norm build"},
		{"norm.json corrupt", append(run, "--norm", at("norm_corrupt")), "norm_corrupt/norm.json", "unexpected end of JSON input"},
		{"realign a 3D image", []string{"run", at("three_d.nii"), "--realign", "on"}, "three_d.nii", "realignment needs a 4D series"},
		{"DICOM zip corrupt", []string{"run", at("corrupt.zip")}, "corrupt.zip", "not a readable zip archive"},
		{"DICOM zip without DICOM", []string{"run", at("no_dicom.zip")}, "no_dicom.zip", "no DICOM images found"},
		{"DICOM folder without DICOM", []string{"run", at("notdicom")}, "notdicom", "no DICOM images found (1 file(s) looked at)"},
		{"DICOM file not DICOM", []string{"run", at("text.dcm")}, "text.dcm", "no DICOM images found"},
		{"cohort without runs", []string{"cohort", at("bids_empty")}, "bids_empty", "no sub-*/func/*_bold.nii[.gz] runs"},
		{"cohort label with shell characters", []string{"cohort", at("bids_badlabel")}, "sub-a;b", `subject label "a;b": only letters and digits`},
		{"compare without a table", []string{"compare", at("deriv_empty"), "--group-column", "diagnosis"}, "deriv_empty/measures.tsv", "run the cohort command first"},
		{"compare on a foreign table", []string{"compare", at("deriv_badtable"), "--group-column", "diagnosis"}, "deriv_badtable/measures.tsv", "not a HubScope measures table"},
		{"norm build on a foreign table", []string{"norm", "build", at("deriv_badtable")}, "deriv_badtable/measures.tsv", "not a HubScope measures table"},
		{"group with a 3D scan", []string{"group", at("good.nii"), at("three_d.nii")}, "three_d.nii", "3D image"},
		{"group with a corrupt scan", []string{"group", at("good.nii"), at("garbage.nii.gz")}, "garbage.nii.gz", "not gzip data"},
		{"group with a missing scan", []string{"group", at("good.nii"), at("missing.nii")}, "missing.nii", "no such file"},
		{"group with a time-series matrix", []string{"group", at("good.nii"), at("series.npy")}, "series.npy", "not a time-series matrix"},
		{"group with an unknown mask rule", []string{"group", at("good.nii"), at("good.nii"), "--mask-rule", "foo"}, `"foo"`, "unknown mask rule"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			args := append(append([]string(nil), c.args...), "--out", out)
			if c.args[0] == "run" || c.args[0] == "group" {
				args = append(args, "--backend", "cpu", "--metrics", "none", "--denoise", "none")
			}
			code, stdout, stderr := runHelper(t, args...)
			if code != 1 {
				t.Fatalf("exit code %d, want 1\nstdout %s\nstderr %s", code, stdout, stderr)
			}
			var errLines []string
			for _, l := range strings.Split(stderr, "\n") {
				if strings.HasPrefix(l, "hubscope-helper") {
					errLines = append(errLines, l)
				}
			}
			if len(errLines) != 1 || !strings.Contains(errLines[0], c.file) || !strings.Contains(errLines[0], c.phrase) {
				t.Fatalf("error lines %q: want one naming %s and saying %q", errLines, c.file, c.phrase)
			}
			// Each said once: no "group: group:", no file named twice.
			if w := strings.Fields(errLines[0]); len(w) > 2 && w[1] == w[2] {
				t.Errorf("error line %q repeats %q", errLines[0], w[1])
			}
			if c.args[0] == "group" || c.args[0] == "cohort" {
				if n := strings.Count(errLines[0], filepath.Base(c.file)); n != 1 {
					t.Errorf("error line %q names %s %d times, want once", errLines[0], filepath.Base(c.file), n)
				}
			}
			for _, done := range []string{bundle.Marker, "norm.json", "measures.tsv", "compare"} {
				if _, err := os.Stat(filepath.Join(out, done)); err == nil {
					t.Errorf("%s left in the output folder", done)
				}
			}
		})
	}
}
