//go:build !unix

package render

import "time"

// processCPU is not measured here; benchmarks then report no CPU time.
func processCPU() time.Duration { return 0 }
