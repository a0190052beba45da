//go:build !unix

package community

func processCPUSeconds() float64 { return 0 }
