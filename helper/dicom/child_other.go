//go:build !linux

package dicom

import "os/exec"

// runChild runs dcm2niix (only Linux can tie a child's life to its parent's).
func runChild(cmd *exec.Cmd) error { return cmd.Run() }
