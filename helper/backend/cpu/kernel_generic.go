//go:build !amd64 || purego

package cpu

const kernelName = "portable Go 6×16"

// kernel computes the mr×nr tile c[r][q] = Σ_k a[k][r]·b[k][q] over packed panels a (k-major,
// mr per k) and b (k-major, nr per k).
func kernel(l int, a, b []float32, c *[mr * nr]float32) {
	kernelGo(l, a, b, c)
}

// kernelMask computes the tile like kernel, takes |v| if abs, and returns the ≥ t masks.
func kernelMask(l int, a, b []float32, c *[mr * nr]float32, t float32, abs bool) (m0, m1 uint64) {
	kernelGo(l, a, b, c)
	return tileMask(c, t, abs)
}

// fmaPeak has no portable equivalent.
func fmaPeak(n int) bool { return false }
