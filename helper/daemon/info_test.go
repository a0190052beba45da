package daemon

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/hubscope/hubscope/helper/backend/cuda"
	"github.com/hubscope/hubscope/ipc"
)

func TestGPUInfo(t *testing.T) {
	h100 := cuda.DeviceInfo{Name: "NVIDIA H100 80GB HBM3", ComputeMajor: 9, ComputeMinor: 0,
		MemoryBytes: 84_929_216_512, Multiprocessors: 132, Driver: "13.0"}
	want := ipc.GPU{Name: "NVIDIA H100 80GB HBM3", ComputeCapability: "9.0", MemoryBytes: 84_929_216_512, Driver: "13.0"}
	if got := gpuInfo(h100); got == nil || *got != want {
		t.Fatalf("gpuInfo = %+v, want %+v", got, want)
	}

	old := cuda.DeviceInfo{Name: "Tesla T4", ComputeMajor: 7, ComputeMinor: 5, MemoryBytes: 15 << 30, Driver: "12.2"}
	noDevice := fmt.Errorf("%w: the NVIDIA driver reports no GPU", cuda.ErrNoDevice)
	for _, c := range []struct {
		what, name  string
		devs        []cuda.DeviceInfo
		err         error
		wantBackend string
		wantGPU     *ipc.GPU
		wantErr     string // "" = none
	}{
		{"auto, H100", "auto", []cuda.DeviceInfo{h100}, nil, "cuda", &want, ""},
		{"cuda, H100 first of two", "cuda", []cuda.DeviceInfo{h100, old}, nil, "cuda", &want, ""},
		{"auto, first GPU too old", "auto", []cuda.DeviceInfo{old, h100}, nil, "cpu", nil, ""},
		{"cuda, first GPU too old", "cuda", []cuda.DeviceInfo{old}, nil, "", nil, "compute capability 7.5 is below"},
		{"auto, no GPU", "auto", nil, noDevice, "cpu", nil, ""},
		{"cuda, no GPU", "cuda", nil, noDevice, "", nil, "reports no GPU"},
		{"cuda, empty list", "cuda", []cuda.DeviceInfo{}, nil, "", nil, "reports no GPU"},
		{"auto, built without CUDA", "auto", nil, cuda.ErrNoCUDA, "cpu", nil, ""},
		{"cuda, built without CUDA", "cuda", nil, cuda.ErrNoCUDA, "", nil, "built without CUDA"},
	} {
		backend, gpu, err := chooseBackend(c.name, c.devs, c.err)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%s: error %v, want one saying %q", c.what, err, c.wantErr)
			}
			if c.wantErr != "built without CUDA" && !errors.Is(err, cuda.ErrNoDevice) {
				t.Errorf("%s: error %v does not wrap ErrNoDevice", c.what, err)
			}
			continue
		}
		if err != nil || backend != c.wantBackend || (gpu == nil) != (c.wantGPU == nil) || (gpu != nil && *gpu != *c.wantGPU) {
			t.Errorf("%s: %q %+v %v, want %q %+v", c.what, backend, gpu, err, c.wantBackend, c.wantGPU)
		}
	}

	// This build (no cuda tag) has no devices; auto falls back to the CPU.
	if _, err := cuda.Devices(); !errors.Is(err, cuda.ErrNoCUDA) {
		t.Logf("cuda.Devices answered %v: a CUDA build; the fallback is not checked", err)
		return
	}
	if backend, gpu, err := resolveBackend("auto"); err != nil || backend != "cpu" || gpu != nil {
		t.Fatalf("resolveBackend(auto) without CUDA: %q %+v %v", backend, gpu, err)
	}
}
