package pipeline

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/hubscope/hubscope/helper/bundle"
	"github.com/hubscope/hubscope/helper/internal/diskfault"
	"github.com/hubscope/hubscope/ipc/settings"
)

// TestDiskFaultsDuringBundleWrite makes the disk fail at every point of a bundle's write —
// at a stride of the operations (open, write, sync, chmod, mkdir, rename) and of the bytes,
// with ENOSPC (disk full), EROFS (read-only) and EIO — while the run replaces an earlier
// bundle. Each failing run must report the disk's error, leave the earlier bundle exactly as
// it was, and leave no partial directory or temporary file; a final run without faults
// replaces the bundle cleanly.
func TestDiskFaultsDuringBundleWrite(t *testing.T) {
	scanPath, maskPath, _ := phantom(t, 12)
	parent := t.TempDir()
	out := filepath.Join(parent, "b")
	cfg := Defaults()
	cfg.Scan, cfg.Mask, cfg.Out, cfg.Backend, cfg.Metrics = scanPath, maskPath, out, "cpu", settings.MetricsBasic
	cfg.KeepSeries, cfg.Overwrite = true, true
	if testing.Short() || raceEnabled {
		cfg.Metrics = settings.MetricsNone // fewer maps, the same writer paths
	}
	if _, err := Run(context.Background(), cfg, nil); err != nil {
		t.Fatal(err)
	}
	var before map[string][]byte

	// A first pass counts what a whole run does to the disk.
	count := &diskfault.Fault{Err: syscall.EIO, AtOp: -1, AfterBytes: -1}
	restore := diskfault.Inject(count)
	_, err := Run(context.Background(), cfg, nil)
	restore()
	if err != nil {
		t.Fatal(err)
	}
	before = snapshot(t, out) // the counting run rewrote the bundle (new timestamps)
	totalBytes, totalOps := count.Counts()
	t.Logf("one bundle: %d disk operations, %d bytes", totalOps, totalBytes)

	errs := []error{syscall.ENOSPC, syscall.EROFS, syscall.EIO}
	opStride, byteSteps := int64(1), int64(24)
	if testing.Short() || raceEnabled {
		opStride, byteSteps = 11, 4
	}
	var faults []*diskfault.Fault
	for k := int64(0); k < totalOps; k += opStride {
		faults = append(faults, &diskfault.Fault{Err: errs[k%3], AtOp: k, AfterBytes: -1})
	}
	for i := int64(0); i < byteSteps; i++ {
		faults = append(faults, &diskfault.Fault{Err: errs[i%3], AtOp: -1, AfterBytes: totalBytes * i / byteSteps})
	}
	survived := 0
	for _, f := range faults {
		restore := diskfault.Inject(f)
		_, err := Run(context.Background(), cfg, nil)
		restore()
		if !f.Tripped() {
			continue
		}
		where := "op " + itoa(f.AtOp) + ", bytes " + itoa(f.AfterBytes)
		if err == nil && f.AtOp == totalOps-1 {
			// The last operation is the fsync of the parent directory after the rename that
			// published the bundle (complete, every file already flushed): the run stands.
			if after := snapshot(t, out); len(after) != len(before) {
				t.Fatalf("%s: published bundle has %d files, want %d", where, len(after), len(before))
			}
			before = snapshot(t, out)
			continue
		}
		if err == nil {
			t.Fatalf("%s: the disk failed with %v but the run reported success", where, f.Err)
		}
		if !errors.Is(err, f.Err) {
			t.Errorf("%s: error %q does not carry the disk's %v", where, err, f.Err)
		}
		if !strings.Contains(err.Error(), out) {
			t.Errorf("%s: error %q does not name the bundle", where, err)
		}
		if after := snapshot(t, out); !equalSnapshots(before, after) {
			t.Fatalf("%s: the earlier bundle changed: %v", where, diffSnapshots(before, after))
		}
		if ents, _ := os.ReadDir(parent); len(ents) != 1 {
			var names []string
			for _, e := range ents {
				names = append(names, e.Name())
			}
			t.Fatalf("%s: left %v beside the bundle", where, names)
		}
		survived++
	}
	t.Logf("%d faults injected, %d tripped and survived", len(faults), survived)
	if survived < len(faults)/2 {
		t.Fatalf("only %d of %d faults fired", survived, len(faults))
	}
	if _, err := Run(context.Background(), cfg, nil); err != nil {
		t.Fatalf("clean rerun: %v", err)
	}
	if after := snapshot(t, out); len(after) != len(before) {
		t.Fatalf("clean rerun wrote %d files, the first run %d", len(after), len(before))
	}
}

// snapshot reads every file of a bundle.
func snapshot(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		files[strings.TrimPrefix(p, dir)] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := files["/"+bundle.Marker]; !ok {
		t.Fatalf("%s is not a complete bundle: no marker", dir)
	}
	return files
}

func equalSnapshots(a, b map[string][]byte) bool { return len(diffSnapshots(a, b)) == 0 }

func diffSnapshots(a, b map[string][]byte) []string {
	var d []string
	for k, v := range a {
		if w, ok := b[k]; !ok || !bytes.Equal(v, w) {
			d = append(d, k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			d = append(d, "+"+k)
		}
	}
	return d
}

func itoa(n int64) string {
	if n < 0 {
		return "-"
	}
	return strconv.FormatInt(n, 10)
}
