package daemon

import (
	"archive/zip"
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hubscope/hubscope/helper/dicom"
	"github.com/hubscope/hubscope/helper/dicom/dicomtest"
	"github.com/hubscope/hubscope/helper/nifti"
	"github.com/hubscope/hubscope/ipc"
)

// dicomFixture writes a 12-volume DICOM series made from the shipped Siemens mosaic into a
// folder named after the patient (to see the name redacted), and a small box mask on its grid;
// skipped without the data or dcm2niix (failed under HUBSCOPE_STRICT).
func dicomFixture(t *testing.T) (folder, mask string) {
	t.Helper()
	data := dicomtest.Converted(t, dicom.FindTool)
	first, _ := filepath.Glob(filepath.Join(data, "ax_asc_35sl", "MR.*"))
	folder = filepath.Join(t.TempDir(), "stc_test_exam") // the test DICOM's PatientName
	os.Mkdir(folder, 0o755)
	if _, err := dicomtest.Series(first[0], folder, 12, 3, 0.05, 3); err != nil {
		t.Fatal(err)
	}
	ref, err := nifti.Open(filepath.Join(data, "ref", "ax_asc_35sl_6.nii"))
	if err != nil {
		t.Fatal(err)
	}
	h := nifti.NewHeader([]int{64, 64, 35}, nifti.Uint8, ref.Header.Affine(), 0)
	ref.Close()
	box := make([]float32, 64*64*35)
	for k := 14; k < 20; k++ {
		for j := 26; j < 38; j++ {
			for i := 26; i < 38; i++ {
				box[i+64*(j+64*k)] = 1
			}
		}
	}
	mask = filepath.Join(t.TempDir(), "box.nii.gz")
	if err := nifti.WriteImage(mask, h, box); err != nil {
		t.Fatal(err)
	}
	return folder, mask
}

// TestDICOMJobs: the daemon takes a DICOM folder by path (Unix socket) and a .zip upload
// (browser build), lists series for the app's chooser, and refuses bad DICOM at submission.
func TestDICOMJobs(t *testing.T) {
	folder, mask := dicomFixture(t)
	d := newDaemon(t, filepath.Join(t.TempDir(), "results"))

	lst, err := d.ListSeries(unix, ipc.SeriesRequest{Path: folder})
	if err != nil || len(lst.Series) != 1 || lst.Chosen != 6 || lst.Series[0].Volumes != 12 || !lst.Series[0].TimeSeries ||
		!strings.Contains(lst.Reason, "most volumes (12)") {
		t.Fatalf("ListSeries: %+v %v", lst, err)
	}
	web := ipc.ContextWithTransport(t.Context(), ipc.TransportWeb)
	if _, err := d.ListSeries(web, ipc.SeriesRequest{Path: folder}); err == nil {
		t.Error("ListSeries over the web transport named a path")
	}

	job, err := d.Submit(unix, ipc.JobRequest{Scan: folder, Mask: mask, Settings: settingsOf(`{"metrics": "none"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if job.Name != "[identity removed]_exam" {
		t.Errorf("job name %q: the patient's name is not removed", job.Name)
	}
	if evs := follow(t, d, job.ID); evs[len(evs)-1].Job.State != ipc.JobDone {
		t.Fatalf("folder job ended %s: %s", evs[len(evs)-1].Job.State, evs[len(evs)-1].Job.Error)
	}
	files, err := d.Files(unix, job.ID)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		names = append(names, f.Name)
	}
	if !strings.Contains(strings.Join(names, " "), "input/series_6.nii") {
		t.Errorf("bundle files %v lack input/series_6.nii", names)
	}

	// The browser build uploads a .zip of the folder; the helper converts it.
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	ents, _ := os.ReadDir(folder)
	for _, e := range ents {
		b, _ := os.ReadFile(filepath.Join(folder, e.Name()))
		w, _ := zw.Create("exam/" + e.Name())
		w.Write(b)
	}
	zw.Close()
	up, err := d.Upload(web, "exam.zip", bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	mup, err := d.Upload(web, "box.nii.gz", mustOpen(t, mask))
	if err != nil {
		t.Fatal(err)
	}
	job, err = d.Submit(web, ipc.JobRequest{ScanUpload: up.ID, MaskUpload: mup.ID, Settings: settingsOf(`{"metrics": "none", "dicom_series": 6}`)})
	if err != nil {
		t.Fatal(err)
	}
	if evs := follow(t, d, job.ID); evs[len(evs)-1].Job.State != ipc.JobDone {
		t.Fatalf("zip job ended %s: %s", evs[len(evs)-1].Job.State, evs[len(evs)-1].Job.Error)
	}
	if left, _ := filepath.Glob(filepath.Join(d.jobDir(job.ID), "input", "*.zip")); len(left) != 0 {
		t.Errorf("the uploaded DICOM is kept after the job: %v", left)
	}
	if _, err := d.Upload(web, "notes.zip", strings.NewReader("hello, not a zip")); err == nil || !strings.Contains(err.Error(), "not a zip archive") {
		t.Errorf("non-zip upload: %v", err)
	}

	// Nothing the daemon wrote — job records, bundles, logs — holds the patient's name (the
	// folder's name included) or any other identity value of the files.
	checked := 0
	filepath.WalkDir(d.dir, func(p string, de fs.DirEntry, err error) error {
		if err != nil || de.IsDir() {
			return err
		}
		checked++
		b, _ := os.ReadFile(p)
		for _, v := range []string{"stc_test", "crlab", "19800707", "1980-07-07", "Medical Center Dr"} {
			if bytes.Contains(b, []byte(v)) {
				t.Errorf("%s holds identity value %q", p, v)
			}
		}
		return nil
	})
	if checked < 10 {
		t.Errorf("only %d files under the results directory", checked)
	}

	// Bad DICOM fails at submission, by name, with nothing queued.
	os.Remove(filepath.Join(folder, "IM_0005"))
	if _, err := d.Submit(unix, ipc.JobRequest{Scan: folder}); err == nil || !strings.Contains(err.Error(), "1 volume missing") || strings.Contains(err.Error(), "stc_test") {
		t.Errorf("missing volume: %v", err)
	}
	if _, err := d.Submit(unix, ipc.JobRequest{Scan: folder, Settings: settingsOf(`{"dicom_series": 9}`)}); err == nil || !strings.Contains(err.Error(), "no series 9 here") || strings.Contains(err.Error(), "stc_test") {
		t.Errorf("--series 9: %v", err)
	}
}

func mustOpen(t *testing.T, p string) *os.File {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}
