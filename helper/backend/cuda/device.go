//go:build cuda

package cuda

import (
	"fmt"

	"gorgonia.org/cu"
)

// minComputeMajor is the oldest architecture the embedded fatbin has code for (sm_80 cubin
// and compute_80 PTX).
const minComputeMajor = 8

// describeDevice returns "NVIDIA H100 80GB HBM3, compute capability 9.0, 79.1 GiB, 132 SMs,
// CUDA driver 13.0" and checks that the kernels can run on it.
func describeDevice(ordinal int) (string, error) {
	count, err := cu.NumDevices()
	if err != nil {
		return "", fmt.Errorf("%w: counting devices: %v", ErrNoDevice, err)
	}
	if count == 0 {
		return "", fmt.Errorf("%w: the NVIDIA driver reports no GPU", ErrNoDevice)
	}
	if ordinal < 0 || ordinal >= count {
		return "", fmt.Errorf("%w: device %d requested, the driver reports %d", ErrNoDevice, ordinal, count)
	}
	dev, err := cu.GetDevice(ordinal)
	if err != nil {
		return "", fmt.Errorf("%w: device %d: %v", ErrNoDevice, ordinal, err)
	}
	name, err := dev.Name()
	if err != nil {
		return "", fmt.Errorf("%w: device %d name: %v", ErrNoDevice, ordinal, err)
	}
	major, minor, err := dev.ComputeCapability()
	if err != nil {
		return "", fmt.Errorf("%w: device %d (%s) compute capability: %v", ErrNoDevice, ordinal, name, err)
	}
	total, err := dev.TotalMem()
	if err != nil {
		return "", fmt.Errorf("%w: device %d (%s) memory: %v", ErrNoDevice, ordinal, name, err)
	}
	sms, err := dev.Attribute(cu.MultiprocessorCount)
	if err != nil {
		return "", fmt.Errorf("%w: device %d (%s) multiprocessors: %v", ErrNoDevice, ordinal, name, err)
	}
	v := cu.Version()
	desc := fmt.Sprintf("%s, compute capability %d.%d, %.1f GiB, %d SMs, CUDA driver %d.%d",
		name, major, minor, float64(total)/(1<<30), sms, v/1000, (v%1000)/10)
	if major < minComputeMajor {
		return desc, fmt.Errorf("%w: %s: compute capability %d.%d is below the %d.0 the kernels are built for", ErrNoDevice, name, major, minor, minComputeMajor)
	}
	return desc, nil
}

// Available describes the first GPU (name, compute capability, memory, multiprocessors,
// driver version) or says why the CUDA backend cannot run on it; callers fall back to the
// CPU backend on error.
func Available() (string, error) { return describeDevice(0) }
