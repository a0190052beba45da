package daemon

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"runtime"
	"strconv"
	"strings"

	"github.com/hubscope/hubscope/helper/backend/cuda"
	"github.com/hubscope/hubscope/ipc"
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
	desc, err := cuda.Available()
	if err != nil {
		if name == "cuda" {
			if errors.Is(err, cuda.ErrNoCUDA) {
				return "", nil, fmt.Errorf("backend cuda: this helper was built without CUDA (build with -tags cuda)")
			}
			return "", nil, fmt.Errorf("backend cuda: %w", err)
		}
		return "cpu", nil, nil
	}
	return "cuda", parseGPU(desc), nil
}

// gpuDesc parses cuda.Available's description: "NAME, compute capability X.Y, M GiB, S SMs,
// CUDA driver A.B".
var gpuDesc = regexp.MustCompile(`^(.*), compute capability ([0-9.]+), ([0-9.]+) GiB, [0-9]+ SMs, CUDA driver ([0-9.]+)$`)

func parseGPU(desc string) *ipc.GPU {
	m := gpuDesc.FindStringSubmatch(desc)
	if m == nil {
		return &ipc.GPU{Name: desc}
	}
	gib, _ := strconv.ParseFloat(m[3], 64)
	return &ipc.GPU{Name: m[1], ComputeCapability: m[2], MemoryBytes: uint64(gib * (1 << 30)), Driver: m[4]}
}

// Info describes the helper, its machine and its queue.
func (d *Daemon) Info(ctx context.Context) (ipc.Info, error) {
	in := ipc.Info{App: ipc.AppName, Version: ipc.Version, API: ipc.Prefix, Backend: d.backend, GPU: d.gpu,
		CPU: cpuModel(), Cores: runtime.NumCPU(), FreeMemoryBytes: memAvailable(),
		Transport: string(ipc.TransportFrom(ctx)), MaxUploadBytes: d.opt.MaxUpload}
	d.mu.Lock()
	in.ActiveJobs = len(d.queue) + d.activeRunning()
	d.mu.Unlock()
	return in, nil
}

// cpuModel is /proc/cpuinfo's first "model name" (runtime.GOARCH where there is none).
func cpuModel() string {
	if v := procField("/proc/cpuinfo", "model name"); v != "" {
		return v
	}
	return runtime.GOARCH
}

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
