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
	rep = progress.OrDiscard(rep)
	switch name {
	case "cpu":
		return cpu.New(cpu.Options{}), nil
	case "cuda", "auto":
		b, err := cuda.New(cuda.Options{})
		if err == nil {
			return b, nil
		}
		if name == "cuda" {
			return nil, err
		}
		rep.Note(fmt.Sprintf("using the CPU backend (%v)", err))
		return cpu.New(cpu.Options{}), nil
	}
	return nil, fmt.Errorf("unknown backend %q (want auto, cpu or cuda)", name)
}
