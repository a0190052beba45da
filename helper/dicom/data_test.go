package dicom

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/hubscope/hubscope/helper/dicom/dicomtest"
)

// dicomData is the folder of real scanner DICOM (dicomtest.Data).
func dicomData(t testing.TB) string { return dicomtest.Data(t) }

// needTool returns dcm2niix (dicomtest.Tool).
func needTool(t testing.TB) *Tool { return dicomtest.Tool(t, FindTool) }

// realSeries are the shipped series: folder, series number, description, reference name.
var realSeries = []struct {
	dir, desc, ref string
	number, slices int
	matrix         [3]int
}{
	{"ax_asc_35sl", "ax_asc_35sl", "ax_asc_35sl_6", 6, 35, [3]int{64, 64, 35}},
	{"sag_int_36sl", "sag_int_36sl", "sag_int_36sl_21", 21, 36, [3]int{64, 64, 36}},
	{"mb_jpeg_lossless", "fMRI_MB_asc", "fMRI_MB_asc_25", 25, 36, [3]int{86, 86, 36}},
}

func TestListRealSeries(t *testing.T) {
	data := dicomData(t)
	for _, rs := range realSeries {
		src, err := Open(filepath.Join(data, rs.dir), "")
		if err != nil {
			t.Fatal(err)
		}
		lst, err := List(t.Context(), src)
		if err != nil {
			t.Fatal(err)
		}
		if len(lst.Series) != 1 {
			t.Fatalf("%s: %d series", rs.dir, len(lst.Series))
		}
		s := lst.Series[0]
		t.Logf("%s\n%s", rs.dir, lst.Table())
		if s.Number != rs.number || s.Description != rs.desc || s.Volumes != 2 || s.Matrix != rs.matrix || s.TR != 3 && rs.number != 25 || !s.EPI || s.Modality != "MR" || s.Problem != "" {
			t.Errorf("%s: got %+v", rs.dir, s)
		}
		ids := s.Identities()
		if len(ids) != 1 || ids[0].PatientName != "stc_test" || ids[0].PatientID != "crlab" || ids[0].BirthDate != "19800707" || ids[0].InstitutionAddress == "" {
			t.Errorf("%s: identity %+v", rs.dir, ids)
		}
	}
}

// refSidecar reads RepetitionTime and SliceTiming of a reference sidecar.
func refSidecar(t *testing.T, path string) (tr float64, st []float64) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		RepetitionTime float64
		SliceTiming    []float64
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	return v.RepetitionTime, v.SliceTiming
}

// TestConvertMatchesReference: each shipped series converts to a NIfTI byte-identical to
// dcm2niix's reference, with the reference's RepetitionTime and SliceTiming, and neither
// file holds the patient's or institution's identity.
func TestConvertMatchesReference(t *testing.T) {
	data := dicomData(t)
	needTool(t)
	for _, rs := range realSeries {
		t.Run(rs.dir, func(t *testing.T) {
			tmp := t.TempDir()
			p, err := Prepare(t.Context(), filepath.Join(data, rs.dir), Options{TempDir: tmp})
			if err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(p.NIfTI)
			if err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile(filepath.Join(data, "ref", rs.ref+".nii"))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s: converted NIfTI (%d bytes) differs from ref/%s.nii (%d bytes)", rs.dir, len(got), rs.ref, len(want))
			}
			tr, st := refSidecar(t, filepath.Join(data, "ref", rs.ref+".json"))
			gtr, gst := refSidecar(t, p.Sidecar)
			if gtr != tr || p.TR != tr || !slices.Equal(gst, p.SliceTiming) || len(st) != rs.slices || len(gst) != len(st) {
				t.Fatalf("%s: TR %g/%g, SliceTiming %v, want %g, %v", rs.dir, gtr, p.TR, gst, tr, st)
			}
			if !slices.Equal(gst, st) {
				// The reference's dcm2niix (v1.0.20241127) reads ax_asc_35sl's slice
				// times from its second volume, older releases (Debian 12's v1.0.20220720)
				// from the first, which Siemens records one 2.5 ms clock tick early on
				// 34 of 35 slices (dcm2niix issue 875; docs/dicom.md). Anything else fails.
				d := 0.0
				for i := range st {
					d = max(d, math.Abs(gst[i]-st[i]))
				}
				if rs.dir != "ax_asc_35sl" || p.Tool.Version >= refVersion || d > 0.0025+1e-9 {
					t.Errorf("%s: SliceTiming differs from the reference by up to %g s (dcm2niix %s): %v, want %v", rs.dir, d, p.Tool.Version, gst, st)
				} else {
					t.Logf("%s: SliceTiming within %g s of the reference (dcm2niix %s reads the first volume's times)", rs.dir, d, p.Tool.Version)
				}
			}
			if htr, used := p.UseTR(); htr != tr || used != "NIfTI header" {
				t.Errorf("%s: TR %g from %s", rs.dir, htr, used)
			}
			if p.Volumes != 2 || p.Series.Number != rs.number {
				t.Errorf("%s: %d volumes, series %d", rs.dir, p.Volumes, p.Series.Number)
			}
			grepIdentity(t, tmp, p.Series.Identities())
			p.Remove()
			if left, _ := os.ReadDir(tmp); len(left) != 0 {
				t.Errorf("Remove left %d entries in the temporary folder", len(left))
			}
		})
	}
}

// refVersion made ref/ (its sidecars' ConversionSoftwareVersion).
const refVersion = "v1.0.20241127"

// grepIdentity fails if any file under root holds one of the identity values (in any of
// the forms Identity.Values lists).
func grepIdentity(t *testing.T, root string, ids []Identity) {
	t.Helper()
	var vals []string
	for _, id := range ids {
		vals = append(vals, id.Values()...)
	}
	if len(vals) < 4 {
		t.Fatalf("only %d identity values to look for: %q", len(vals), vals)
	}
	n := 0
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		n++
		b, err := os.ReadFile(p)
		if err != nil {
			t.Error(err)
			return nil
		}
		for _, v := range vals {
			if bytes.Contains(b, []byte(v)) {
				t.Errorf("%s holds identity value %q", p, v)
			}
		}
		return nil
	})
	if n == 0 {
		t.Errorf("no files under %s to check", root)
	}
}

// TestFolderNamedLikeNIfTI: a folder called scan.nii.gz holding DICOM is read as a DICOM
// series folder and a line says so (TestBadInputCorpus covers one that holds no DICOM).
func TestFolderNamedLikeNIfTI(t *testing.T) {
	data := dicomData(t)
	needTool(t)
	dir := filepath.Join(t.TempDir(), "scan.nii.gz")
	os.Mkdir(dir, 0o755)
	files, _ := filepath.Glob(filepath.Join(data, "ax_asc_35sl", "*"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, filepath.Base(f)), b, 0o600)
	}
	var notes []string
	p, err := Prepare(t.Context(), dir, Options{TempDir: t.TempDir(), Note: func(s string) { notes = append(notes, s) }})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Remove()
	want := dir + " is a folder named like a NIfTI file; it holds DICOM images, so it is read as a DICOM series folder"
	if !slices.Contains(notes, want) {
		t.Errorf("notes %q lack %q", notes, want)
	}
}
