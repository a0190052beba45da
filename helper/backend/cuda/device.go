//go:build cuda

package cuda

import (
	"fmt"

	"gorgonia.org/cu"
)

// readDevice queries the driver about device ordinal (which the caller has checked exists).
func readDevice(ordinal int) (DeviceInfo, error) {
	dev, err := cu.GetDevice(ordinal)
	if err != nil {
		return DeviceInfo{}, fmt.Errorf("%w: device %d: %v", ErrNoDevice, ordinal, err)
	}
	name, err := dev.Name()
	if err != nil {
		return DeviceInfo{}, fmt.Errorf("%w: device %d name: %v", ErrNoDevice, ordinal, err)
	}
	major, minor, err := dev.ComputeCapability()
	if err != nil {
		return DeviceInfo{}, fmt.Errorf("%w: device %d (%s) compute capability: %v", ErrNoDevice, ordinal, name, err)
	}
	total, err := dev.TotalMem()
	if err != nil {
		return DeviceInfo{}, fmt.Errorf("%w: device %d (%s) memory: %v", ErrNoDevice, ordinal, name, err)
	}
	sms, err := dev.Attribute(cu.MultiprocessorCount)
	if err != nil {
		return DeviceInfo{}, fmt.Errorf("%w: device %d (%s) multiprocessors: %v", ErrNoDevice, ordinal, name, err)
	}
	v := cu.Version()
	return DeviceInfo{
		Ordinal:         ordinal,
		Name:            name,
		ComputeMajor:    major,
		ComputeMinor:    minor,
		MemoryBytes:     uint64(total),
		Multiprocessors: sms,
		Driver:          fmt.Sprintf("%d.%d", v/1000, (v%1000)/10),
	}, nil
}

// Devices describes every GPU the driver reports, in ordinal order, usable or not (see
// DeviceInfo.Usable). An error wraps ErrNoDevice; it is never nil with an empty list.
func Devices() ([]DeviceInfo, error) {
	if err := initError(); err != nil {
		return nil, err
	}
	count, err := cu.NumDevices()
	if err != nil {
		return nil, fmt.Errorf("%w: counting devices: %v", ErrNoDevice, err)
	}
	if count == 0 {
		return nil, fmt.Errorf("%w: the NVIDIA driver reports no GPU", ErrNoDevice)
	}
	devs := make([]DeviceInfo, 0, count)
	for i := 0; i < count; i++ {
		d, err := readDevice(i)
		if err != nil {
			return nil, err
		}
		devs = append(devs, d)
	}
	return devs, nil
}

// describeDevice returns "NVIDIA H100 80GB HBM3, compute capability 9.0, 79.1 GiB, 132 SMs,
// CUDA driver 13.0" and checks that the kernels can run on it.
func describeDevice(ordinal int) (string, error) {
	if err := initError(); err != nil {
		return "", err
	}
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
	d, err := readDevice(ordinal)
	if err != nil {
		return "", err
	}
	return d.String(), d.Usable()
}

// Available describes the first GPU (name, compute capability, memory, multiprocessors,
// driver version) or says why the CUDA backend cannot run on it; callers fall back to the
// CPU backend on error.
func Available() (string, error) { return describeDevice(0) }
