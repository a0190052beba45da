package ipc

import (
	"os"
	"os/exec"
	"testing"
)

// The browser build uses this package's client, so the package must compile for
// js/wasm (net/http uses the browser's fetch there).
func TestBuildsForWasm(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles the package for js/wasm; skipped with -short")
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	cmd := exec.Command(gobin, "build", "-o", os.DevNull, ".")
	cmd.Env = append(os.Environ(), "GOOS=js", "GOARCH=wasm", "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("GOOS=js GOARCH=wasm go build ./ipc: %v\n%s", err, out)
	}
}
