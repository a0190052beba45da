package cpu

import (
	"runtime"
	"sync"
)

// MulRows computes dst[i] = m·x[i] for the n rows x[i] (length l, row-major in x) with the
// lo×l row-major matrix m; dst is n×lo row-major. It runs the network's register-blocked
// micro-kernel (6 rows of x against 16 rows of m per tile, float32 accumulation over k in
// order) over all cores, so applying one linear operator to every voxel's series (the
// denoising step) costs O(n·l·lo) at the kernel's rate.
func MulRows(dst, x []float32, n, l int, m []float32, lo int) {
	if n == 0 || lo == 0 {
		return
	}
	if l == 0 {
		clear(dst[:n*lo])
		return
	}
	// m packed in nr-row panels, k-major: pb[panel][k][q] = m[panel·nr+q][k] (zero past lo).
	nb := (lo + nr - 1) / nr
	pb := make([]float32, nb*l*nr)
	for p := 0; p < nb; p++ {
		panel := pb[p*l*nr : (p+1)*l*nr]
		for q := 0; q < nr && p*nr+q < lo; q++ {
			row := m[(p*nr+q)*l : (p*nr+q+1)*l]
			for k, v := range row {
				panel[k*nr+q] = v
			}
		}
	}
	na := (n + mr - 1) / mr
	workers := min(runtime.GOMAXPROCS(0), na)
	var next int
	var mu sync.Mutex
	var wg sync.WaitGroup
	const chunk = 16 // row panels a worker takes at a time
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pa := make([]float32, l*mr)
			var c [mr * nr]float32
			for {
				mu.Lock()
				a0 := next
				next += chunk
				mu.Unlock()
				if a0 >= na {
					return
				}
				for a := a0; a < min(a0+chunk, na); a++ {
					i0 := a * mr
					rows := min(mr, n-i0)
					if rows < mr {
						clear(pa)
					}
					for r := 0; r < rows; r++ {
						for k, v := range x[(i0+r)*l : (i0+r+1)*l] {
							pa[k*mr+r] = v
						}
					}
					for p := 0; p < nb; p++ {
						kernel(l, pa, pb[p*l*nr:(p+1)*l*nr], &c)
						cols := min(nr, lo-p*nr)
						for r := 0; r < rows; r++ {
							copy(dst[(i0+r)*lo+p*nr:(i0+r)*lo+p*nr+cols], c[r*nr:r*nr+cols])
						}
					}
				}
			}
		}()
	}
	wg.Wait()
}
