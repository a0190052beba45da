package pipeline

import (
	"fmt"

	"github.com/hubscope/hubscope/helper/backend/cpu"
	"github.com/hubscope/hubscope/helper/backend/cuda"
	"github.com/hubscope/hubscope/helper/fc"
	"github.com/hubscope/hubscope/helper/progress"
)

// OpenBackend returns the backend the name asks for. "auto" tries CUDA and falls back to the
// CPU with a note saying why; "cuda" fails with the driver's reason when no GPU works.
func OpenBackend(name string, rep progress.Reporter) (fc.Backend, error) {
	b, note, err := openBackend(name)
	if note != "" {
		progress.OrDiscard(rep).Note(note)
	}
	return b, err
}

// openBackend is OpenBackend with the fallback's line returned instead of reported.
func openBackend(name string) (fc.Backend, string, error) {
	switch name {
	case "cpu":
		return cpu.New(cpu.Options{}), "", nil
	case "cuda", "auto":
		b, err := cuda.New(cuda.Options{})
		if err == nil {
			return b, "", nil
		}
		if name == "cuda" {
			return nil, "", err
		}
		return cpu.New(cpu.Options{}), fmt.Sprintf("using the CPU backend (%v)", err), nil
	}
	return nil, "", fmt.Errorf("unknown backend %q (want auto, cpu or cuda)", name)
}

// backendOpening is a backend being opened while the scan loads: CUDA's initialisation and
// the embedded kernels' module load take about 0.3–0.9 s on an H200 host, which W7's
// end-to-end time paid after the read (BENCHMARKS.md, W7). The CUDA backend runs every
// device call on its own locked OS thread, so opening it from another goroutine is safe.
type backendOpening struct {
	done  chan struct{}
	be    fc.Backend
	note  string
	err   error
	taken bool
}

func startBackend(name string) *backendOpening {
	return startOpening(func() (fc.Backend, string, error) { return openBackend(name) })
}

func startOpening(open func() (fc.Backend, string, error)) *backendOpening {
	o := &backendOpening{done: make(chan struct{})}
	go func() {
		defer close(o.done)
		o.be, o.note, o.err = open()
	}()
	return o
}

// take waits for the backend and hands it to the caller, who closes it; the fallback's line
// reaches rep now, where the run used to open the backend.
func (o *backendOpening) take(rep progress.Reporter) (fc.Backend, error) {
	<-o.done
	o.taken = true
	if o.note != "" {
		progress.OrDiscard(rep).Note(o.note)
	}
	return o.be, o.err
}

// discard closes the backend of a run that ended before taking it (bad input, cancellation),
// once its opening has finished, so that no device context outlives the run.
func (o *backendOpening) discard() {
	if o.taken {
		return
	}
	<-o.done
	if o.be != nil {
		o.be.Close()
	}
}
