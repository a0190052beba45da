package cuda

import (
	"github.com/hubscope/hubscope/helper/graph"
	"github.com/hubscope/hubscope/helper/progress"
)

// GraphAccelerator is implemented by the CUDA backend (the fc.Backend New returns in a build
// with -tags cuda): its graph.Accelerator runs the graph analytics on the same device, notes
// going to rep. A build without the tag has no value implementing it, so callers keep the CPU.
type GraphAccelerator interface {
	GraphAccelerator(rep progress.Reporter) graph.Accelerator
}
