package cpu

import (
	"sync"
	"time"
)

// PeakGFLOPS measures the fp32 FMA ceiling of the given number of workers (0: the backend
// default, GOMAXPROCS) by a register-only loop of independent 8-wide FMAs running for about
// d, so kernel rates can be quoted beside the machine's measured peak. It returns 0 where
// the AVX2/FMA kernel is not in use.
func PeakGFLOPS(workers int, d time.Duration) float64 {
	if workers <= 0 {
		workers = New(Options{}).workers
	}
	if !fmaPeak(1) {
		return 0
	}
	const iters = 1 << 20 // 2·10⁸ flop, ≈ a few ms per call
	var wg sync.WaitGroup
	var mu sync.Mutex
	var total float64
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			calls := 0
			t0 := time.Now()
			for time.Since(t0) < d {
				fmaPeak(iters)
				calls++
			}
			rate := float64(calls) * iters * 192 / time.Since(t0).Seconds() / 1e9
			mu.Lock()
			total += rate
			mu.Unlock()
		}()
	}
	wg.Wait()
	return total
}
