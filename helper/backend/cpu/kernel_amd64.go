//go:build amd64 && !purego

package cpu

var kernelName = "portable Go 6×16"

func kernel(l int, a, b []float32, c *[mr * nr]float32) {
	kernelGo(l, a, b, c)
}
