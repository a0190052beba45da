package diskfault

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestFaultByBytes: the write that crosses the budget is short and carries the error; the
// fault stays (a full disk stays full); Close still releases the file; restore ends it.
func TestFaultByBytes(t *testing.T) {
	dir := t.TempDir()
	f := &Fault{Err: syscall.ENOSPC, AtOp: -1, AfterBytes: 5}
	restore := Inject(f)
	w, err := OpenFile(filepath.Join(dir, "a"), os.O_WRONLY|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := w.Write([]byte("abc")); n != 3 || err != nil {
		t.Fatalf("first write %d, %v", n, err)
	}
	if n, err := w.Write([]byte("defg")); n != 2 || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("crossing write %d, %v", n, err)
	}
	if err := w.Sync(); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("sync after the fault: %v", err)
	}
	w.Close()
	if err := WriteFile(filepath.Join(dir, "b"), []byte("x"), 0o644); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("open after the fault: %v", err)
	}
	restore()
	if b, _ := os.ReadFile(filepath.Join(dir, "a")); string(b) != "abcde" {
		t.Fatalf("file holds %q, want the 5 bytes the disk took", b)
	}
	if err := WriteFile(filepath.Join(dir, "b"), []byte("x"), 0o644); err != nil {
		t.Fatalf("after restore: %v", err)
	}
}

// TestFaultByOp: the k-th operation fails and every later one; Counts counts them.
func TestFaultByOp(t *testing.T) {
	dir := t.TempDir()
	f := &Fault{Err: syscall.EROFS, AtOp: 2, AfterBytes: -1}
	restore := Inject(f)
	defer restore()
	if err := MkdirAll(filepath.Join(dir, "d"), 0o755); err != nil { // op 0
		t.Fatal(err)
	}
	if err := Rename(filepath.Join(dir, "d"), filepath.Join(dir, "e")); err != nil { // op 1
		t.Fatal(err)
	}
	if err := SyncPath(filepath.Join(dir, "e")); !errors.Is(err, syscall.EROFS) { // op 2
		t.Fatalf("op 2: %v", err)
	}
	if _, err := MkdirTemp(dir, "x"); !errors.Is(err, syscall.EROFS) {
		t.Fatalf("op 3: %v", err)
	}
	if _, ops := f.Counts(); ops != 4 || !f.Tripped() {
		t.Fatalf("ops %d, tripped %v", ops, f.Tripped())
	}
}
