//go:build unix

package community

import "syscall"

// processCPUSeconds is the user+system CPU time of this process, so that benchmarks on the
// shared development machine can be compared by work done, not by wall time alone.
func processCPUSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
}
