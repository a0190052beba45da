package daemon

import (
	"bytes"
	"context"
	"crypto/sha256"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hubscope/hubscope/helper/nifti"
	"github.com/hubscope/hubscope/ipc"
)

// snapshot records every file under root (path → size and content hash), to prove that
// requests wrote nothing outside the results directory.
func snapshot(t *testing.T, root, skip string) map[string][32]byte {
	t.Helper()
	out := map[string][32]byte{}
	filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == skip {
			return filepath.SkipDir
		}
		if e.Type().IsRegular() {
			b, _ := os.ReadFile(p)
			out[p] = sha256.Sum256(b)
		} else if !e.IsDir() {
			out[p] = sha256.Sum256([]byte(e.Type().String()))
		}
		return nil
	})
	return out
}

// TestFilesConfined runs a job, then asks for bundle files by hostile names and through
// symbolic links planted inside the bundle (to a file and a directory outside it): every one is
// refused and left out of the listing, while real files download intact; and no request,
// downloads and views included, wrote anything outside the results directory.
func TestFilesConfined(t *testing.T) {
	scanPath, maskPath := phantom(t, 12)
	top := t.TempDir()
	results := filepath.Join(top, "results")
	secret := filepath.Join(top, "secret.txt")
	os.WriteFile(secret, []byte("not yours"), 0o600)
	os.Mkdir(filepath.Join(top, "private"), 0o700)
	os.WriteFile(filepath.Join(top, "private", "notes.txt"), []byte("private"), 0o600)

	d := newDaemon(t, results)
	before := snapshot(t, top, results)
	job, err := d.Submit(unix, ipc.JobRequest{Scan: scanPath, Mask: maskPath, Settings: settingsOf(`{"metrics": "none"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if ev := follow(t, d, job.ID); ev[len(ev)-1].Job.State != ipc.JobDone {
		t.Fatalf("job ended %s", ev[len(ev)-1].Job.State)
	}
	bundleDir := filepath.Join(results, job.ID, "bundle")
	if err := os.Symlink(secret, filepath.Join(bundleDir, "leak.txt")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(top, "private"), filepath.Join(bundleDir, "dir")); err != nil {
		t.Fatal(err)
	}

	files, err := d.Files(unix, job.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.Contains(f.Name, "leak") || strings.HasPrefix(f.Name, "dir/") {
			t.Fatalf("listing shows the planted link %s", f.Name)
		}
	}
	rc, fi, err := d.OpenFile(unix, job.ID, "metrics.json")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(rc)
	rc.Close()
	want, _ := os.ReadFile(filepath.Join(bundleDir, "metrics.json"))
	if !bytes.Equal(got, want) || fi.Size != int64(len(want)) {
		t.Fatal("metrics.json downloaded differs from the file")
	}
	for _, name := range []string{"leak.txt", "dir/notes.txt", "../job.json", "../../secret.txt", "/etc/passwd",
		secret, "a/../../job.json", "./metrics.json", "", "dir", "nodes.tsv/..", `..\job.json`, "metrics.json\x00"} {
		rc, _, err := d.OpenFile(unix, job.ID, name)
		if err == nil {
			rc.Close()
			t.Errorf("OpenFile(%q) allowed", name)
			continue
		}
		var e *ipc.Error
		if !ipc.IsCode(err, ipc.CodeBadRequest) && !ipc.IsCode(err, ipc.CodeForbidden) && !ipc.IsCode(err, ipc.CodeNotFound) {
			t.Errorf("OpenFile(%q): %v is not a client error (%T)", name, err, e)
		}
	}
	if _, _, err := d.OpenFile(unix, "20250101T000000000000-0000000000000000", "metrics.json"); !ipc.IsCode(err, ipc.CodeNotFound) {
		t.Errorf("unknown job: %v", err)
	}
	if _, _, err := d.OpenFile(unix, "../"+job.ID, "metrics.json"); !ipc.IsCode(err, ipc.CodeNotFound) {
		t.Errorf("job ID with a path: %v", err)
	}

	// Views and uploads write only inside the results directory.
	if _, err := d.Summary(unix, job.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := d.SeedMap(unix, job.ID, [3]int{-1, 0, 0}); !ipc.IsCode(err, ipc.CodeBadRequest) {
		t.Errorf("seed outside the grid: %v", err)
	}
	if _, err := d.Volume(unix, job.ID, "../job"); !ipc.IsCode(err, ipc.CodeNotFound) {
		t.Errorf("volume with a path: %v", err)
	}
	if _, err := d.Upload(unix, "../../evil.nii", strings.NewReader("x")); !ipc.IsCode(err, ipc.CodeBadRequest) {
		t.Errorf("upload with a path: %v", err)
	}
	after := snapshot(t, top, results)
	for p := range after {
		if before[p] != after[p] {
			t.Errorf("%s changed or appeared outside the results directory", p)
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			t.Errorf("%s vanished", p)
		}
	}
}

// TestUploadAndSubmit uploads the phantom and its mask as the browser build would, submits
// them by ID over the web transport and runs the job; bad uploads are refused by name, an
// oversize one as too large, and neither leaves a file behind.
func TestUploadAndSubmit(t *testing.T) {
	scanPath, maskPath := phantom(t, 12)
	results := filepath.Join(t.TempDir(), "results")
	fi, _ := os.Stat(scanPath)
	d, err := New(Options{ResultsDir: results, Backend: "cpu", MaxUpload: fi.Size() + 10})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close(context.Background())
	web := ipc.ContextWithTransport(context.Background(), ipc.TransportWeb)
	upload := func(path, name string) ipc.Upload {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		up, err := d.Upload(web, name, f)
		if err != nil {
			t.Fatal(err)
		}
		return up
	}
	scanUp := upload(scanPath, "patient scan.nii.gz")
	maskUp := upload(maskPath, "mask.nii.gz")
	if scanUp.Size != fi.Size() || scanUp.Name != "patient scan.nii.gz" {
		t.Fatalf("upload %+v", scanUp)
	}
	job, err := d.Submit(web, ipc.JobRequest{ScanUpload: scanUp.ID, MaskUpload: maskUp.ID, Settings: settingsOf(`{"metrics": "none"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if job.Name != "patient scan.nii.gz" {
		t.Fatalf("job name %q", job.Name)
	}
	if ev := follow(t, d, job.ID); ev[len(ev)-1].Job.State != ipc.JobDone {
		t.Fatalf("job ended %s: %s", ev[len(ev)-1].Job.State, ev[len(ev)-1].Job.Error)
	}
	for _, f := range []string{"input/scan.nii.gz", "input/mask.nii.gz", "bundle/series.npy"} {
		if _, err := os.Stat(filepath.Join(results, job.ID, f)); err != nil {
			t.Errorf("job directory: %v", err)
		}
	}
	if _, err := d.Submit(web, ipc.JobRequest{ScanUpload: scanUp.ID}); !ipc.IsCode(err, ipc.CodeBadRequest) {
		t.Errorf("an upload used twice: %v", err)
	}

	// A text file named .nii, a .nii.gz that is not gzip, a wrong extension, an oversize body.
	big := bytes.Repeat([]byte{0}, int(fi.Size()+11))
	raw, _ := os.ReadFile(scanPath)
	for _, c := range []struct {
		name string
		body []byte
		code string
	}{
		{"notes.nii", []byte("hello, this is not an image"), ipc.CodeBadRequest},
		{"scan.nii.gz", []byte("plain text"), ipc.CodeBadRequest},
		{"scan.dcm", raw, ipc.CodeBadRequest},
		{"huge.nii.gz", append(append([]byte(nil), raw...), big...), ipc.CodeTooLarge},
	} {
		if _, err := d.Upload(web, c.name, bytes.NewReader(c.body)); !ipc.IsCode(err, c.code) || !strings.Contains(err.Error(), c.name) {
			t.Errorf("upload %s: %v, want %s naming the file", c.name, err, c.code)
		}
	}
	entries, _ := os.ReadDir(filepath.Join(results, "uploads"))
	if len(entries) != 0 {
		t.Errorf("refused uploads left %v", entries)
	}
	// A 3D upload is accepted as a file but refused as a scan, by its name.
	h, data, _ := nifti.ReadImage(maskPath)
	three := filepath.Join(t.TempDir(), "t1.nii")
	nifti.WriteImage(three, h, data)
	up := upload(three, "t1.nii")
	if _, err := d.Submit(web, ipc.JobRequest{ScanUpload: up.ID}); !ipc.IsCode(err, ipc.CodeBadRequest) || !strings.Contains(err.Error(), "t1.nii") {
		t.Errorf("3D scan: %v", err)
	}
}

// TestSlowSubscriber subscribes to a job and reads nothing until it has ended: the stream then
// holds a bounded number of events and still ends with the terminal one; a subscriber whose
// context ends gets its channel closed.
func TestSlowSubscriber(t *testing.T) {
	scanPath, maskPath := phantom(t, 12)
	d := newDaemon(t, filepath.Join(t.TempDir(), "results"))
	d.opt.EventInterval = time.Millisecond // many progress events for the idle reader
	job, err := d.Submit(unix, ipc.JobRequest{Scan: scanPath, Mask: maskPath, Settings: basic})
	if err != nil {
		t.Fatal(err)
	}
	slow, err := d.Events(context.Background(), job.ID)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	gone, err := d.Events(ctx, job.ID)
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	for range gone {
	}
	all := follow(t, d, job.ID) // a reader that keeps up, to know when the job ended
	var got []ipc.Event
	for ev := range slow {
		got = append(got, ev)
	}
	last := got[len(got)-1]
	if !last.Job.State.Terminal() || last.Seq != all[len(all)-1].Seq {
		t.Fatalf("slow reader's last event: %s seq %d, want the terminal seq %d", last.Job.State, last.Seq, all[len(all)-1].Seq)
	}
	if len(got) > subscriberBuffer+maxPending+2 {
		t.Fatalf("slow reader got %d events: progress was not coalesced", len(got))
	}
	t.Logf("slow reader: %d events (a fast one %d)", len(got), len(all))
	// A stream opened after the end yields the terminal event alone.
	again := follow(t, d, job.ID)
	if len(again) != 1 || again[0].Seq != last.Seq {
		t.Fatalf("stream of a finished job: %d events", len(again))
	}
}
