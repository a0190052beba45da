//go:build !cuda

package cuda

import "github.com/hubscope/hubscope/helper/fc"

// New returns ErrNoCUDA: this build has no CUDA backend.
func New(Options) (fc.Backend, error) { return nil, ErrNoCUDA }

// Available returns ErrNoCUDA: this build has no CUDA backend.
func Available() (string, error) { return "", ErrNoCUDA }

// Devices returns ErrNoCUDA: this build has no CUDA backend.
func Devices() ([]DeviceInfo, error) { return nil, ErrNoCUDA }
