// Package scratch makes the helper's temporary files and folders in the system's temporary
// folder (TMPDIR), each named after the process that made it, and removes those of helpers
// killed without cleanup (kill -9): every os.MkdirTemp and os.CreateTemp of the helper in
// TMPDIR goes through here, and every helper command sweeps at start-up.
package scratch

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/hubscope/hubscope/helper/internal/owned"
)

// tempPrefix starts the name of every temporary file and folder the helper makes in the
// system's temporary folder (TMPDIR): "hubscope-WHAT-PID-RANDOM", so that Sweep can
// tell a killed run's leftover from one still in use and from anything of other programs.
const tempPrefix = "hubscope-"

// MkdirTemp creates a private temporary folder in dir ("" = the system's temporary folder)
// named hubscope-WHAT-PID-RANDOM, PID being this process's. kill -9 runs no cleanup, so a
// killed run leaves it; the next helper's Sweep removes it.
func MkdirTemp(dir, what string) (string, error) {
	return os.MkdirTemp(dir, tempPrefix+what+"-"+strconv.Itoa(os.Getpid())+"-*")
}

// CreateTemp creates a temporary file in dir ("" = the system's temporary folder) named
// hubscope-WHAT-PID-RANDOM then ext (".py", say), as MkdirTemp does for a folder.
func CreateTemp(dir, what, ext string) (*os.File, error) {
	return os.CreateTemp(dir, tempPrefix+what+"-"+strconv.Itoa(os.Getpid())+"-*"+ext)
}

// tempPID is the PID in a MkdirTemp or CreateTemp name (hubscope-WHAT-PID-RANDOM[.ext]),
// or 0 where the name is not one: WHAT non-empty, PID and RANDOM all digits.
func tempPID(name string) int {
	rest, ok := strings.CutPrefix(name, tempPrefix)
	if !ok {
		return 0
	}
	parts := strings.Split(rest, "-")
	if len(parts) < 3 || parts[0] == "" {
		return 0
	}
	random, _, _ := strings.Cut(parts[len(parts)-1], ".")
	if !digits(random) || !digits(parts[len(parts)-2]) {
		return 0
	}
	pid, err := strconv.Atoi(parts[len(parts)-2])
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}

func digits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// Sweep removes from dir ("" = the system's temporary folder) the MkdirTemp and
// CreateTemp leftovers of helpers that no longer run: entries named hubscope-WHAT-PID-RANDOM
// whose PID is dead on this host and that belong to this user. Nothing else is touched:
// another user's entries, a live process's, names without a PID (other programs', or older
// helpers'). Where processes cannot be told apart (no Unix signal 0, e.g. Windows) nothing
// is removed. A PID reused by a new process keeps its folder until that process ends — the
// safe side. Failures are ignored: a leftover is only untidy.
func Sweep(dir string) {
	if !canSweep {
		return
	}
	if dir == "" {
		dir = os.TempDir()
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	self := os.Getpid()
	for _, e := range ents {
		pid := tempPID(e.Name())
		if pid == 0 || pid == self || owned.Alive(pid) {
			continue
		}
		p := filepath.Join(dir, e.Name())
		fi, err := os.Lstat(p)
		if err != nil || !ownedByMe(fi) {
			continue
		}
		os.RemoveAll(p)
	}
}

// CreateBeside creates the temporary file for path in path's folder, to be renamed over
// path when complete, named after this process (.BASE.PID-RANDOM.tmp), and first removes
// such files of processes no longer running that a kill -9 left beside path.
func CreateBeside(path string) (*os.File, error) {
	dir, base := filepath.Dir(path), filepath.Base(path)
	owned.Sweep(dir, base)
	return os.CreateTemp(dir, owned.Pattern(base))
}
