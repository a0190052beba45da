//go:build unix

package render

import (
	"syscall"
	"time"
)

// processCPU is the user + system CPU time the test process has used, which unlike wall time
// does not grow when other work shares the cores.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
