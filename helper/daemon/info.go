package daemon

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/hubscope/hubscope/helper/backend/cuda"
	"github.com/hubscope/hubscope/ipc"
	"github.com/hubscope/hubscope/ipc/schema"
)

// resolveBackend decides what "auto" means on this machine: cuda when a device works, else
// cpu. Backend "cuda" without a working device is an error that says why.
func resolveBackend(name string) (string, *ipc.GPU, error) {
	switch name {
	case "cpu":
		return "cpu", nil, nil
	case "auto", "cuda":
	default:
		return "", nil, fmt.Errorf("unknown backend %q (want auto, cpu or cuda)", name)
	}
	devs, err := cuda.Devices()
	return chooseBackend(name, devs, err)
}

// chooseBackend is resolveBackend's decision for "auto" or "cuda" from what cuda.Devices
// answered. Jobs run on the first GPU (the CUDA backend's default device), so that one must
// be usable.
func chooseBackend(name string, devs []cuda.DeviceInfo, err error) (string, *ipc.GPU, error) {
	if err == nil && len(devs) == 0 {
		err = fmt.Errorf("%w: the NVIDIA driver reports no GPU", cuda.ErrNoDevice)
	}
	if err == nil {
		err = devs[0].Usable()
	}
	if err != nil {
		if name == "cuda" {
			if errors.Is(err, cuda.ErrNoCUDA) {
				return "", nil, fmt.Errorf("backend cuda: this helper was built without CUDA (build with -tags cuda)")
			}
			return "", nil, fmt.Errorf("backend cuda: %w", err)
		}
		return "cpu", nil, nil
	}
	return "cuda", gpuInfo(devs[0]), nil
}

// gpuInfo is the Info's description of a GPU.
func gpuInfo(d cuda.DeviceInfo) *ipc.GPU {
	return &ipc.GPU{Name: d.Name, ComputeCapability: d.ComputeCapability(), MemoryBytes: d.MemoryBytes, Driver: d.Driver}
}

// Info describes the helper, its machine and its queue. It takes no lock (the queue's length
// is an atomic counter) and reads one small /proc file: it is the call an app polls to know
// the helper is alive, and must answer at once while jobs start, end and stream.
func (d *Daemon) Info(ctx context.Context) (ipc.Info, error) {
	return ipc.Info{App: schema.AppName, Version: schema.Version, API: ipc.Prefix, Backend: d.backend, GPU: d.gpu,
		CPU: cpuModel(), Cores: runtime.NumCPU(), FreeMemoryBytes: memAvailable(),
		Transport: string(ipc.TransportFrom(ctx)), MaxUploadBytes: d.opt.MaxUpload,
		ActiveJobs: int(d.active.Load())}, nil
}

// cpuModel is /proc/cpuinfo's first "model name" (runtime.GOARCH where there is none), read
// once: /proc/cpuinfo is a few kilobytes per core to format and scan.
var cpuModel = sync.OnceValue(func() string {
	if v := procField("/proc/cpuinfo", "model name"); v != "" {
		return v
	}
	return runtime.GOARCH
})

// memAvailable is /proc/meminfo's MemAvailable in bytes (0 when unknown).
func memAvailable() uint64 {
	v := procField("/proc/meminfo", "MemAvailable")
	kb, err := strconv.ParseUint(strings.TrimSuffix(v, " kB"), 10, 64)
	if err != nil {
		return 0
	}
	return kb << 10
}

// procField returns the value of the first "key : value" line of a /proc file.
func procField(path, key string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
