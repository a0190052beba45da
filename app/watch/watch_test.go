//go:build !js

package watch

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestClassify(t *testing.T) {
	for name, want := range map[string]Kind{
		"sub-01_bold.nii": Scan, "/a/B.NII.GZ": Scan, "x.nii.gz.part": Partial, "x.nii.crdownload": Partial,
		".x.nii.gz.Ab12Cd": Partial, "~$x.nii": Partial, "x.nii~": Partial, "notes.txt": Other, "x.img": Other, "nii": Other,
		"exam.ZIP": Archive, "exam.zip.part": Partial,
	} {
		if got := Classify(name); got != want {
			t.Errorf("Classify(%q) = %v, want %v", name, got, want)
		}
	}
}

// The settle rule on a fake clock: a file is ready only after Settle with no size change.
func TestTrackerSettles(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "scan.nii.gz")
	write := func(n int) {
		if err := os.WriteFile(p, make([]byte, n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tr := newTracker(time.Second)
	t0 := time.Unix(1000, 0)
	write(10)
	if msg := tr.saw(p, t0); msg != "" {
		t.Fatalf("scan noted: %q", msg)
	}
	at := func(d time.Duration) []string {
		r, _ := tr.check(t0.Add(d))
		return r
	}
	if r := at(0); r != nil {
		t.Fatalf("ready at once: %v", r)
	}
	if r := at(900 * time.Millisecond); r != nil {
		t.Fatalf("ready before the settle time: %v", r)
	}
	write(20) // still growing: the clock starts again
	if r := at(1500 * time.Millisecond); r != nil {
		t.Fatalf("ready while growing: %v", r)
	}
	if r := at(2400 * time.Millisecond); r != nil {
		t.Fatalf("ready 0.9 s after the last change: %v", r)
	}
	if r := at(2600 * time.Millisecond); len(r) != 1 || r[0] != p {
		t.Fatalf("not ready 1.1 s after the last change: %v", r)
	}
	// Written again later: seen before, not queued twice, said once.
	write(30)
	if msg := tr.saw(p, t0.Add(3*time.Second)); !strings.Contains(msg, "not queued again") {
		t.Fatalf("re-written scan: note %q", msg)
	}
	if msg := tr.saw(p, t0.Add(3*time.Second)); msg != "" {
		t.Fatalf("second note %q", msg)
	}
	if r := at(10 * time.Second); r != nil {
		t.Fatalf("queued twice: %v", r)
	}
}

func TestTrackerIgnores(t *testing.T) {
	dir := t.TempDir()
	tr := newTracker(time.Second)
	t0 := time.Unix(1000, 0)
	for _, c := range []struct{ name, want string }{
		{"report.pdf", "not a NIfTI scan"},
		{"scan.nii.gz.part", "partial or temporary"},
	} {
		p := filepath.Join(dir, c.name)
		os.WriteFile(p, []byte("x"), 0o644)
		if msg := tr.saw(p, t0); !strings.Contains(msg, c.want) || !strings.Contains(msg, c.name) {
			t.Errorf("%s: note %q, want %q", c.name, msg, c.want)
		}
		if msg := tr.saw(p, t0); msg != "" {
			t.Errorf("%s noted twice: %q", c.name, msg)
		}
	}
	empty := filepath.Join(dir, "empty.nii")
	os.WriteFile(empty, nil, 0o644)
	tr.saw(empty, t0)
	tr.check(t0)
	r, notes := tr.check(t0.Add(2 * time.Second))
	if len(r) != 0 || len(notes) != 1 || !strings.Contains(notes[0], "empty") {
		t.Fatalf("empty file: ready %v, notes %v", r, notes)
	}
	gone := filepath.Join(dir, "gone.nii")
	os.WriteFile(gone, []byte("x"), 0o644)
	tr.saw(gone, t0)
	os.Remove(gone)
	if r, _ := tr.check(t0.Add(5 * time.Second)); len(r) != 0 {
		t.Fatalf("removed file queued: %v", r)
	}
}

type recorder struct {
	mu     sync.Mutex
	queued []string
	notes  []string
	got    chan struct{}
}

func (r *recorder) queue(p string) {
	r.mu.Lock()
	r.queued = append(r.queued, p)
	r.mu.Unlock()
	r.got <- struct{}{}
}

func (r *recorder) note(m string) {
	r.mu.Lock()
	r.notes = append(r.notes, m)
	r.mu.Unlock()
}

func (r *recorder) wait(t *testing.T, what string) {
	t.Helper()
	select {
	case <-r.got:
	case <-time.After(20 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}

// The real watcher on a temp dir: files arriving while watching, a partial file renamed into
// place, a non-NIfTI file, and a scan present before the watch started.
func TestFolderQueuesArrivals(t *testing.T) {
	dir := t.TempDir()
	before := filepath.Join(dir, "old.nii")
	os.WriteFile(before, []byte("old"), 0o644)
	r := &recorder{got: make(chan struct{}, 10)}
	f, err := Start(context.Background(), dir, Options{Settle: 150 * time.Millisecond}, r.queue, r.note)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Stop()

	a := filepath.Join(dir, "a.nii.gz")
	if err := os.WriteFile(a, []byte("first part"), 0o644); err != nil {
		t.Fatal(err)
	}
	r.wait(t, "a.nii.gz")
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x"), 0o644)
	part := filepath.Join(dir, "b.nii.part")
	os.WriteFile(part, []byte("partial"), 0o644)
	b := filepath.Join(dir, "b.nii")
	if err := os.Rename(part, b); err != nil {
		t.Fatal(err)
	}
	r.wait(t, "b.nii")
	f.Stop()

	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.queued) != 2 || r.queued[0] != a || r.queued[1] != b {
		t.Fatalf("queued %v", r.queued)
	}
	all := strings.Join(r.notes, "\n")
	for _, want := range []string{"1 scan(s) already in", "notes.txt is not a NIfTI scan", "b.nii.part is a partial"} {
		if !strings.Contains(all, want) {
			t.Errorf("notes lack %q:\n%s", want, all)
		}
	}
}

func TestStartRejectsMissingFolder(t *testing.T) {
	_, err := Start(context.Background(), filepath.Join(t.TempDir(), "absent"), Options{}, func(string) {}, func(string) {})
	if err == nil || !strings.Contains(err.Error(), "absent") {
		t.Fatalf("err %v", err)
	}
}

// A .zip (a DICOM export) arriving is queued like a scan once it settles; the helper converts it.
func TestTrackerQueuesDICOMZip(t *testing.T) {
	p := filepath.Join(t.TempDir(), "exam.zip")
	if err := os.WriteFile(p, []byte("PK\x03\x04"), 0o644); err != nil {
		t.Fatal(err)
	}
	tr := newTracker(time.Second)
	t0 := time.Unix(1000, 0)
	if msg := tr.saw(p, t0); msg != "" {
		t.Fatalf("zip noted: %q", msg)
	}
	tr.check(t0)
	if r, _ := tr.check(t0.Add(2 * time.Second)); len(r) != 1 || r[0] != p {
		t.Fatalf("zip not queued: %v", r)
	}
}
