package cpu

import (
	"testing"

	"github.com/hubscope/hubscope/helper/fc"
	"github.com/hubscope/hubscope/helper/fc/fctest"
)

func TestConformance(t *testing.T) {
	fctest.Run(t, func(t *testing.T) fc.Backend { return New(Options{}) })
}

func TestConformanceOneWorker(t *testing.T) {
	fctest.Run(t, func(t *testing.T) fc.Backend { return New(Options{Workers: 1}) })
}
