// Package owned names temporary files after the process that writes them, so that the next
// writer of the same file can tell the leftover of a killed process (kill -9 runs no
// cleanup) from a file another process is still writing, and remove it.
package owned

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
)

// Alive reports whether a process with this id runs on this host. Where it cannot tell
// (Windows, which offers no signal 0), an existing handle counts as alive.
func Alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	if runtime.GOOS == "windows" {
		p.Release()
		return true
	}
	err = p.Signal(syscall.Signal(0))
	return err == nil || errors.Is(err, syscall.EPERM)
}

// Pattern is the os.CreateTemp pattern of this process's temporary file for base, written
// beside it and renamed over it when complete: ".BASE.PID-*.tmp".
func Pattern(base string) string { return "." + base + "." + strconv.Itoa(os.Getpid()) + "-*.tmp" }

// Sweep removes the temporary files for base in dir that a process no longer running left
// (".BASE.PID-RANDOM.tmp" whose PID is dead on this host). A writer on another host sharing
// the folder is taken for this host's: its rename would then fail with an error, never leave
// a half-written file under the final name. Failures are ignored: a leftover is only untidy.
func Sweep(dir, base string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	prefix := "." + base + "."
	for _, e := range ents {
		name := e.Name()
		if e.IsDir() || !strings.HasPrefix(name, prefix) || !strings.HasSuffix(name, ".tmp") {
			continue
		}
		digits, _, ok := strings.Cut(name[len(prefix):], "-")
		pid, err := strconv.Atoi(digits)
		if !ok || err != nil || pid <= 0 || Alive(pid) {
			continue
		}
		os.Remove(filepath.Join(dir, name))
	}
}
