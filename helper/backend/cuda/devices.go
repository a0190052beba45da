package cuda

import "fmt"

// minComputeMajor is the oldest architecture the embedded fatbin has code for (sm_80 cubin
// and compute_80 PTX).
const minComputeMajor = 8

// DeviceInfo describes one GPU as the CUDA driver reports it (Devices).
type DeviceInfo struct {
	// Ordinal is the device's CUDA ordinal (Options.Device).
	Ordinal int
	// Name is the driver's device name ("NVIDIA H100 80GB HBM3").
	Name string
	// ComputeMajor and ComputeMinor are the compute capability (9 and 0 for an H100).
	ComputeMajor, ComputeMinor int
	// MemoryBytes is the device's total memory.
	MemoryBytes uint64
	// Multiprocessors is the number of SMs.
	Multiprocessors int
	// Driver is the CUDA driver API version as MAJOR.MINOR ("13.0").
	Driver string
}

// ComputeCapability is "MAJOR.MINOR" ("9.0").
func (d DeviceInfo) ComputeCapability() string {
	return fmt.Sprintf("%d.%d", d.ComputeMajor, d.ComputeMinor)
}

// Usable reports whether the backend's kernels can run on the device: nil, or an error
// wrapping ErrNoDevice that says why not.
func (d DeviceInfo) Usable() error {
	if d.ComputeMajor < minComputeMajor {
		return fmt.Errorf("%w: %s: compute capability %s is below the %d.0 the kernels are built for",
			ErrNoDevice, d.Name, d.ComputeCapability(), minComputeMajor)
	}
	return nil
}

// String is Available's description: "NVIDIA H100 80GB HBM3, compute capability 9.0,
// 79.1 GiB, 132 SMs, CUDA driver 13.0".
func (d DeviceInfo) String() string {
	return fmt.Sprintf("%s, compute capability %s, %.1f GiB, %d SMs, CUDA driver %s",
		d.Name, d.ComputeCapability(), float64(d.MemoryBytes)/(1<<30), d.Multiprocessors, d.Driver)
}
