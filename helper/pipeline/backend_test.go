package pipeline

import (
	"strings"
	"testing"

	"github.com/hubscope/hubscope/helper/backend/cpu"
	"github.com/hubscope/hubscope/helper/fc"
	"github.com/hubscope/hubscope/helper/progress"
)

// closeCount is a backend that counts its Close calls.
type closeCount struct {
	fc.Backend
	closed int
}

func (c *closeCount) Close() error { c.closed++; return c.Backend.Close() }

// The backend opened beside the scan's loading: take hands it over with the fallback's line
// reported then (not from the opening goroutine) and discard leaves a taken backend to its
// taker; a run that fails before its network has it closed by discard, exactly once; an
// unknown name fails at take as OpenBackend does.
func TestBackendOpensBesideTheLoad(t *testing.T) {
	open := func(c *closeCount) func() (fc.Backend, string, error) {
		return func() (fc.Backend, string, error) { return c, "using the CPU backend (test)", nil }
	}
	taken := &closeCount{Backend: cpu.New(cpu.Options{})}
	o := startOpening(open(taken))
	rep := &noteLog{Reporter: progress.Discard}
	be, err := o.take(rep)
	if err != nil || be != taken {
		t.Fatalf("take: %v, %v", be, err)
	}
	o.discard()
	if taken.closed != 0 {
		t.Errorf("discard closed a backend the run had taken (%d Close calls)", taken.closed)
	}
	if len(rep.notes) != 1 || rep.notes[0] != "using the CPU backend (test)" {
		t.Errorf("notes %q, want the one fallback line at take", rep.notes)
	}
	left := &closeCount{Backend: cpu.New(cpu.Options{})}
	startOpening(open(left)).discard()
	if left.closed != 1 {
		t.Errorf("a backend never taken: %d Close calls, want 1", left.closed)
	}
	if _, err := startBackend("tpu").take(rep); err == nil || !strings.Contains(err.Error(), `unknown backend "tpu"`) {
		t.Errorf("unknown backend: %v", err)
	}
}
