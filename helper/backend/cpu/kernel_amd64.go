//go:build amd64 && !purego

package cpu

import "golang.org/x/sys/cpu"

// useAVX2 selects the assembly micro-kernel: it needs AVX2 (256-bit lanes) and FMA3, and the
// OS saving the ymm registers (x/sys/cpu folds OSXSAVE into HasAVX).
var useAVX2 = cpu.X86.HasAVX && cpu.X86.HasAVX2 && cpu.X86.HasFMA

var kernelName = func() string {
	if useAVX2 {
		return "AVX2/FMA 6×16"
	}
	return "portable Go 6×16"
}()

// kernelAVX2 is the register-blocked micro-kernel (kernel_amd64.s): 12 ymm accumulators hold
// the 6×16 tile; per k it loads two 8-wide rows of the b panel, broadcasts each of the 6 a
// values and issues 12 fused multiply-adds. l ≥ 1.
//
//go:noescape
func kernelAVX2(l int, a, b *float32, c *[mr * nr]float32)

// kernelAVX2Mask is kernelAVX2 with the epilogue's first step fused in: with abs the tile
// holds |v|; bit 16·r+q of (m0 for rows 0–3, m1 for rows 4–5) says tile value ≥ t.
//
//go:noescape
func kernelAVX2Mask(l int, a, b *float32, c *[mr * nr]float32, t float32, abs bool) (m0, m1 uint64)

// kernelMask computes the tile like kernel, takes |v| if abs, and returns the ≥ t masks.
func kernelMask(l int, a, b []float32, c *[mr * nr]float32, t float32, abs bool) (m0, m1 uint64) {
	if useAVX2 {
		_, _ = a[l*mr-1], b[l*nr-1]
		return kernelAVX2Mask(l, &a[0], &b[0], c, t, abs)
	}
	kernelGo(l, a, b, c)
	return tileMask(c, t, abs)
}

// kernel computes the mr×nr tile c[r][q] = Σ_k a[k][r]·b[k][q] over packed panels.
func kernel(l int, a, b []float32, c *[mr * nr]float32) {
	if useAVX2 {
		_, _ = a[l*mr-1], b[l*nr-1] // the assembly reads exactly these ranges
		kernelAVX2(l, &a[0], &b[0], c)
		return
	}
	kernelGo(l, a, b, c)
}

// fmaPeakAVX2 runs n iterations of 12 independent ymm FMAs (kernel_amd64.s).
//
//go:noescape
func fmaPeakAVX2(n int)

// fmaPeak runs n·192 flop of register-only FMAs, or reports false without AVX2/FMA.
func fmaPeak(n int) bool {
	if !useAVX2 {
		return false
	}
	fmaPeakAVX2(n)
	return true
}
