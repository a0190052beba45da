// Package diskfault is the one door through which the result writers (helper/bundle and
// helper/nifti's writer) create, fill, flush and rename files, so that tests can make the
// disk fail in the middle of a bundle: after N bytes, or from the k-th operation on, with
// ENOSPC (disk full), EROFS (read-only file system), EIO or any other error. Without an
// injected fault every call is the os package's, at the cost of one atomic load.
package diskfault

import (
	"fmt"
	"io/fs"
	"os"
	"sync"
	"sync/atomic"
)

// File is what the writers need of an open file.
type File interface {
	Write(p []byte) (int, error)
	Close() error
	Name() string
	Sync() error
	Chmod(mode fs.FileMode) error
}

// Fault describes a failing disk. Once it trips, every later operation fails too (a full or
// read-only disk stays so), except Close, which still releases the descriptor.
type Fault struct {
	// Err is the error the disk returns, e.g. syscall.ENOSPC, syscall.EROFS, syscall.EIO.
	Err error
	// AfterBytes trips the fault once this many bytes have been written in total (the write
	// that crosses it is short); negative: never by bytes.
	AfterBytes int64
	// AtOp trips the fault at the operation with this index (0 = the first open, write,
	// sync, chmod, mkdir or rename after Inject); negative: never by count.
	AtOp int64

	mu      sync.Mutex
	written int64
	ops     int64
	tripped bool
}

// Counts reports how many bytes were written and operations made since Inject, for a first
// pass that learns the size of a bundle before a sweep.
func (f *Fault) Counts() (bytes, ops int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.written, f.ops
}

// Tripped reports whether the fault has fired.
func (f *Fault) Tripped() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.tripped
}

// op counts one operation and reports the error it gets.
func (f *Fault) op(what, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.count() {
		return &fs.PathError{Op: what, Path: name, Err: f.Err}
	}
	return nil
}

// count counts one operation (writes included) and reports whether the fault has fired, firing
// it at operation AtOp; f.mu must be held.
func (f *Fault) count() bool {
	if f.AtOp >= 0 && f.ops == f.AtOp {
		f.tripped = true
	}
	f.ops++
	return f.tripped
}

// write grants n bytes, or fewer and the error once the byte budget runs out.
func (f *Fault) write(n int) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.count() {
		return 0, f.Err
	}
	if f.AfterBytes >= 0 && f.written+int64(n) > f.AfterBytes {
		ok := int(f.AfterBytes - f.written)
		f.written += int64(ok)
		f.tripped = true
		return ok, f.Err
	}
	f.written += int64(n)
	return n, nil
}

var current atomic.Pointer[Fault]

// Inject makes every later operation go through f until the returned function is called.
// Only tests call it; faults are global, so tests that inject must not run in parallel.
func Inject(f *Fault) (restore func()) {
	if f.Err == nil {
		panic("diskfault: a Fault needs an Err")
	}
	if !current.CompareAndSwap(nil, f) {
		panic("diskfault: a fault is already injected")
	}
	return func() { current.CompareAndSwap(f, nil) }
}

type faultyFile struct {
	f     *os.File
	fault *Fault
}

func (w *faultyFile) Write(p []byte) (int, error) {
	n, err := w.fault.write(len(p))
	if n > 0 {
		if m, werr := w.f.Write(p[:n]); werr != nil {
			return m, werr
		}
	}
	if err != nil {
		return n, &fs.PathError{Op: "write", Path: w.f.Name(), Err: err}
	}
	return n, nil
}

func (w *faultyFile) Close() error {
	err := w.fault.op("close", w.f.Name())
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	return err
}

func (w *faultyFile) Name() string { return w.f.Name() }

func (w *faultyFile) Sync() error {
	if err := w.fault.op("sync", w.f.Name()); err != nil {
		return err
	}
	return w.f.Sync()
}

func (w *faultyFile) Chmod(mode fs.FileMode) error {
	if err := w.fault.op("chmod", w.f.Name()); err != nil {
		return err
	}
	return w.f.Chmod(mode)
}

func wrap(f *os.File, err error, fault *Fault) (File, error) {
	if err != nil {
		return nil, err
	}
	return &faultyFile{f: f, fault: fault}, nil
}

// OpenFile is os.OpenFile for writing.
func OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	fault := current.Load()
	if fault == nil {
		return os.OpenFile(name, flag, perm)
	}
	if err := fault.op("open", name); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(name, flag, perm)
	return wrap(f, err, fault)
}

// CreateTemp is os.CreateTemp.
func CreateTemp(dir, pattern string) (File, error) {
	fault := current.Load()
	if fault == nil {
		return os.CreateTemp(dir, pattern)
	}
	if err := fault.op("open", dir); err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(dir, pattern)
	return wrap(f, err, fault)
}

// WriteFile is os.WriteFile, through OpenFile.
func WriteFile(name string, data []byte, perm fs.FileMode) error {
	f, err := OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// MkdirAll is os.MkdirAll.
func MkdirAll(path string, perm fs.FileMode) error {
	if fault := current.Load(); fault != nil {
		if err := fault.op("mkdir", path); err != nil {
			return err
		}
	}
	return os.MkdirAll(path, perm)
}

// MkdirTemp is os.MkdirTemp.
func MkdirTemp(dir, pattern string) (string, error) {
	if fault := current.Load(); fault != nil {
		if err := fault.op("mkdir", dir); err != nil {
			return "", err
		}
	}
	return os.MkdirTemp(dir, pattern)
}

// Rename is os.Rename.
func Rename(oldpath, newpath string) error {
	if fault := current.Load(); fault != nil {
		if err := fault.op("rename", oldpath); err != nil {
			return &os.LinkError{Op: "rename", Old: oldpath, New: newpath, Err: fault.Err}
		}
	}
	return os.Rename(oldpath, newpath)
}

// SyncPath fsyncs a file or directory by name (opened read-only, as fsync needs no write
// access).
func SyncPath(path string) error {
	if fault := current.Load(); fault != nil {
		if err := fault.op("sync", path); err != nil {
			return err
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("sync %s: %w", path, err)
	}
	return nil
}
