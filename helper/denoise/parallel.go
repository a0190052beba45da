package denoise

import (
	"runtime"
	"sync"
)

// parallel runs f over [0, n) in contiguous ranges, one per core.
func parallel(n int, f func(i0, i1 int)) {
	w := min(runtime.GOMAXPROCS(0), max(n/256, 1))
	var wg sync.WaitGroup
	for k := 0; k < w; k++ {
		i0, i1 := n*k/w, n*(k+1)/w
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(i0, i1)
		}()
	}
	wg.Wait()
}
