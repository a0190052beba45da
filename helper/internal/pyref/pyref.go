// Package pyref runs independent Python references (nibabel, scipy, igraph, networkx) from Go
// tests. When HUBSCOPE_STRICT=1 (set by `make test` and CI) a missing interpreter or module
// fails the test instead of skipping it, so a cross-check can never silently not run.
package pyref

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Python is the interpreter the references run under: $HUBSCOPE_PYTHON, else Debian's
// /usr/bin/python3 (where scripts/setup-deps.sh installs the python3-* packages), else the
// python3 on PATH.
func Python() string {
	if p := os.Getenv("HUBSCOPE_PYTHON"); p != "" {
		return p
	}
	if _, err := os.Stat("/usr/bin/python3"); err == nil {
		return "/usr/bin/python3"
	}
	return "python3"
}

// Strict reports whether missing references must fail tests.
func Strict() bool { return os.Getenv("HUBSCOPE_STRICT") == "1" }

// Require checks that python3 can import every module; otherwise it skips the test, or fails
// it in strict mode.
func Require(t testing.TB, modules ...string) {
	t.Helper()
	py, err := exec.LookPath(Python())
	if err == nil {
		var stderr bytes.Buffer
		cmd := exec.Command(py, "-c", "import "+strings.Join(modules, ", "))
		cmd.Stderr = &stderr
		if err = cmd.Run(); err != nil {
			err = &missing{msg: strings.TrimSpace(stderr.String())}
		}
	}
	if err == nil {
		return
	}
	if Strict() {
		t.Fatalf("python reference unavailable (%v); run scripts/setup-deps.sh test", err)
	}
	t.Skipf("python reference unavailable: %v", err)
}

type missing struct{ msg string }

func (m *missing) Error() string { return m.msg }

// Run executes a Python script (source text) with args and returns its stdout; stderr is
// reported on failure.
func Run(t testing.TB, script string, args ...string) []byte {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(Python(), append([]string{"-c", script}, args...)...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("python reference failed: %v\n%s", err, stderr.String())
	}
	return stdout.Bytes()
}

// Nilearn returns the directory holding nilearn 0.10.4's source (the peer the denoising
// code is checked against): $HUBSCOPE_NILEARN, else shared/peers/nilearn beside the
// repository (../shared from the checkout, the layout of every checkout and CI). Python must
// import it with numpy, scipy, sklearn and pandas; otherwise the test is skipped, or fails in
// strict mode.
func Nilearn(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("HUBSCOPE_NILEARN")
	if dir == "" {
		wd, _ := os.Getwd()
		for d := wd; d != "/" && d != "."; d = parent(d) {
			if _, err := os.Stat(d + "/go.mod"); err == nil {
				dir = parent(d) + "/shared/peers/nilearn"
				break
			}
		}
	}
	if _, err := os.Stat(dir + "/nilearn/signal.py"); err != nil {
		if Strict() {
			t.Fatalf("nilearn source not found at %q: set HUBSCOPE_NILEARN", dir)
		}
		t.Skipf("nilearn source not found at %q (HUBSCOPE_NILEARN)", dir)
	}
	Require(t, "numpy", "scipy", "sklearn", "pandas")
	return dir
}

func parent(d string) string {
	if i := strings.LastIndexByte(strings.TrimRight(d, "/"), '/'); i > 0 {
		return d[:i]
	}
	return "/"
}
